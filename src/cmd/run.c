/* SPDX-License-Identifier: MIT */
/* tlbprof run: someone else's benchmark under counters, phase markers and the same checks and report. */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "judge/analysis.h"
#include "cmd/commands.h"
#include "pmu/counters.h"
#include "pmu/elfinfo.h"
#include "machine/environment.h"
#include "report/report.h"
#include "target/target.h"
#include "machine/timing.h"

/* The exit status: the command's own when it failed, else tlbprof's. */
static int run_status(const struct target_result *tr, const struct run_results *rr, const struct analysis *a,
		      enum fail_on fail_on)
{
	if (rr->interrupted)
		return EXIT_INTERRUPTED;
	if (tr->term_signal)
		return 128 + tr->term_signal;
	if (tr->exited && tr->exit_code != 0)
		return tr->exit_code;
	return analysis_fails(a->verdict, fail_on) ? EXIT_CHECK_FAILED : EXIT_OK;
}

int cmd_run(const struct tlbprof_config *cfg, volatile sig_atomic_t *stop)
{
	struct counter_set *counters = NULL;
	struct environment env;
	struct timing_calibration clock;
	struct run_results results = { 0 };
	struct target_result tr = { 0 };
	struct analysis analysis = { 0 };
	struct elf_provenance binary;
	char msg[512], path[PATH_MAX], binary_error[128] = "";
	int status, rc;

	if (counter_set_new(&counters, tlbprof_events_dir(cfg), NULL, msg, sizeof(msg)) != 0) {
		if (cfg->events_dir) {
			char line[640];
			snprintf(line, sizeof(line), "--events-dir '%s': %s", cfg->events_dir, msg);
			report_error(line);
			return EXIT_USAGE;
		}
		fprintf(stderr, "tlbprof: warning: no counters: %s\n", msg);
		counters = NULL;
	}
	environment_collect(&env);
	if (cfg->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cfg->cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	timing_calibrate(&clock);
	(void)tlbprof_find_command(cfg->run_argv[0], path, sizeof(path));	/* cli checked it; "" if gone since */
	rc = elf_provenance_read(path, &binary);
	if (rc != 0)
		snprintf(binary_error, sizeof(binary_error), "%.80s: %s", *path ? path : cfg->run_argv[0],
			 rc == -EINVAL ? "not an ELF file (a script?)" : strerror(-rc));

	const char *tmpdir = getenv("TMPDIR");
	struct target_options opt = {
		.argv = cfg->run_argv,
		.cpu = cfg->cpu,
		.ctl_path = cfg->control_ctl_path,
		.ack_path = cfg->control_ack_path,
		.ctl_fd = cfg->control_ctl_fd,
		.ack_fd = cfg->control_ack_fd,
		.start_disabled = cfg->start_disabled,
		.tmpdir = tmpdir,
		.sample = cfg->sample != SAMPLE_NONE,
		.sample_top = 10,
	};
	struct counter_sample_event dtlb_event;
	char sample_why[320] = "";
	/* dTLB misses need the PMU map's precise event; without one, say why and run unsampled. */
	if (cfg->sample == SAMPLE_DTLB_MISSES) {
		if (!counters)
			snprintf(sample_why, sizeof(sample_why), "no counters: libpfm4 is not available");
		else if (counter_set_sample_event(counters, &dtlb_event, sample_why, sizeof(sample_why)) == 0)
			opt.sample_event = &dtlb_event;
		if (!opt.sample_event)
			opt.sample = false;
	}
	struct run_context ctx = { .clock = &clock, .counters = counters, .stop = stop };
	int elf_rc = rc;
	rc = target_run(&opt, &ctx, &results, &tr);
	if (rc == -ENOENT) {
		snprintf(msg, sizeof(msg), "run: cannot execute '%s': %s", cfg->run_argv[0], strerror(tr.exec_errno));
		report_error(msg);
		status = EXIT_USAGE;
		goto out;
	}
	if (rc != 0) {
		snprintf(msg, sizeof(msg), "run: cannot start '%s': %s", cfg->run_argv[0], strerror(-rc));
		report_error(msg);
		status = EXIT_UNAVAILABLE;
		goto out;
	}
	bool have_binary = elf_rc == 0 && !*binary_error;
	struct analysis_build build = {
		.binary = *path ? path : cfg->run_argv[0],
		.opt_level = have_binary ? binary.opt_level : "",
		.opt_levels = have_binary ? binary.opt_levels : "",
		.source = have_binary ? elf_opt_source_name(binary.opt_source) : "none",
		.defaulted = have_binary && binary.opt_level_defaulted,
		.unreadable = have_binary ? NULL : binary_error,
	};
	if (analysis_run(results.phases, results.n, &env, &clock, &analysis) != 0 ||
	    analysis_check_build(&analysis, results.phases, results.n, &build) != 0 ||
	    analysis_check_markers(&analysis, results.phases, results.n, tr.messages, tr.errors, tr.error_lines[0]) != 0) {
		report_error("out of memory");
		status = EXIT_UNAVAILABLE;
		goto out;
	}
	struct target_report target = {
		.argv = cfg->run_argv,
		.path = path,
		.result = &tr,
		.binary = have_binary ? &binary : NULL,
		.binary_error = binary_error,
	};
	struct report_input in = {
		.cfg = cfg,
		.env = &env,
		.clock = &clock,
		.counters = counters,
		.results = &results,
		.analysis = &analysis,
		.pmu_name = counters ? counter_set_pmu_name(counters) : "none",
		.target = &target,
	};
	status = run_status(&tr, &results, &analysis, cfg->fail_on);
	if (cfg->sample != SAMPLE_NONE)
		snprintf(tr.sample_requested, sizeof(tr.sample_requested), "%s",
			 cfg->sample == SAMPLE_DTLB_MISSES ? "dtlb-misses" : "page-faults");
	if (*sample_why && !*tr.sample_error)
		snprintf(tr.sample_error, sizeof(tr.sample_error), "%s", sample_why);
	if (cfg->sample != SAMPLE_NONE && !tr.sampled)
		fprintf(stderr, "tlbprof: warning: --sample %s: %s\n", tr.sample_requested, tr.sample_error);
	if (tr.term_signal)
		fprintf(stderr, "tlbprof: run: '%s' was killed by signal %d (%s)%s\n", cfg->run_argv[0], tr.term_signal,
			strsignal(tr.term_signal), tr.core_dumped ? ", core dumped" : "");
	else if (tr.exited && tr.exit_code)
		fprintf(stderr, "tlbprof: run: '%s' exited with status %d\n", cfg->run_argv[0], tr.exit_code);
	if (report_emit(&in, cfg) != 0)
		status = EXIT_OUTPUT;
out:
	analysis_free(&analysis);
	run_results_free(&results);
	target_result_free(&tr);
	counter_set_delete(counters);
	return status;
}
