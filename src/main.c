/* SPDX-License-Identifier: MIT */
/* tlbprof's entry point: measuring wires cli -> plan -> runner -> analysis -> report; subcommands live in cmd_*.c. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "judge/analysis.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "pmu/counters.h"
#include "machine/environment.h"
#include "parse.h"
#include "measure/plan.h"
#include "measure/region.h"
#include "report/report.h"
#include "measure/runner.h"
#include "machine/timing.h"
#include "version.h"

/* A signal handler can only reach file scope; this counter is all it touches. */
static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	if (stop_flag < 2)
		stop_flag = stop_flag + 1;
}

/*
 * SIGINT and SIGTERM set stop_flag, checked at the next safe point. Measuring
 * (reset_hand): a second signal acts as if none were caught and ends tlbprof.
 * tlbprof run: tlbprof must outlive its command to reap it and write the
 * report, so a second signal only raises stop_flag to 2 (the command is then
 * killed at once). SIGPIPE is ignored there: a benchmark that stops reading
 * its acks must not kill tlbprof (the command gets the default back at exec).
 */
static void install_signals(bool reset_hand)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = reset_hand ? SA_RESETHAND : 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!reset_hand)
		signal(SIGPIPE, SIG_IGN);
}

static int exit_status(const struct run_results *rr, const struct analysis *a, enum fail_on fail_on)
{
	if (rr->interrupted)
		return EXIT_INTERRUPTED;
	for (size_t i = 0; i < rr->n; i++)
		if (rr->phases[i].status == PHASE_FAILED && rr->phases[i].unavailable)
			return EXIT_UNAVAILABLE;
	return analysis_fails(a->verdict, fail_on) ? EXIT_CHECK_FAILED : EXIT_OK;
}

/*
 * Whether dTLB misses can be counted here: open the set once (disabled,
 * nothing counted) and look at the status. Decides the automatic controls.
 */
static bool tlb_counters_open(struct counter_set *cs)
{
	bool ok = false;

	if (!cs)
		return false;
	counter_set_open(cs);
	for (size_t i = 0; i < counter_set_size(cs); i++) {
		const struct counter_info *ci = counter_set_info(cs, i);
		if (ci->metric == METRIC_DTLB_LOAD_MISSES && (ci->status == COUNTER_OK || ci->status == COUNTER_MULTIPLEXED))
			ok = true;
	}
	counter_set_close(cs);
	return ok;
}

/*
 * A child process (--internal-child): run one phase of the same plan for the
 * parent and report on the pipe it was given. Prints nothing.
 */
static int run_child(const struct tlbprof_config *cfg)
{
	struct counter_set *counters = NULL;
	struct environment env;
	struct plan plan = { 0 };
	char msg[512];
	int rc;

	if (counter_set_new(&counters, tlbprof_events_dir(cfg), NULL, msg, sizeof(msg)) != 0)
		counters = NULL;
	environment_collect(&env);
	struct plan_context pctx = { .current_cpu = sched_getcpu(), .tlb = &env.tlb };
	struct run_context ctx = { .counters = counters, .stop = &stop_flag };
	rc = plan_build(cfg, &pctx, &plan) != 0 ? -ENOMEM : runner_run_child(&plan, (size_t)cfg->child_phase, &ctx, cfg->child_fd);
	plan_free(&plan);
	counter_set_delete(counters);
	return rc ? EXIT_UNAVAILABLE : EXIT_OK;
}

int main(int argc, char **argv)
{
	struct tlbprof_config cfg;
	struct environment env;
	struct timing_calibration clock;
	struct counter_set *counters = NULL;
	struct plan plan = { 0 };
	struct run_results results = { 0 };
	struct analysis analysis = { 0 };
	char msg[512];
	int status;

	switch (cli_parse(argc, argv, &cfg, msg, sizeof(msg))) {
	case CLI_RUN:
		break;
	case CLI_EXIT:
		return EXIT_OK;
	case CLI_USAGE:
		report_error(msg);
		return EXIT_USAGE;
	case CLI_NO_OUTPUT:
		report_error(msg);
		return EXIT_OUTPUT;
	}
	switch (cfg.command) {
	case COMMAND_MEASURE:
		break;
	case COMMAND_ANALYZE:
		return cmd_analyze(&cfg);
	case COMMAND_COMPARE:
		return cmd_compare(&cfg);
	case COMMAND_ENV:
		return cmd_env(&cfg);
	case COMMAND_EVENTS:
		return cmd_events(&cfg);
	case COMMAND_RUN:
		install_signals(false);
		return cmd_run(&cfg, &stop_flag);
	case COMMAND_PLOT:
		return cmd_plot(&cfg);
	}
	install_signals(true);
	if (cfg.child_phase >= 0)
		return run_child(&cfg);

	if (counter_set_new(&counters, tlbprof_events_dir(&cfg), NULL, msg, sizeof(msg)) != 0) {
		if (cfg.events_dir) {
			char line[640];
			snprintf(line, sizeof(line), "--events-dir '%s': %s", cfg.events_dir, msg);
			report_error(line);
			return EXIT_USAGE;
		}
		/* Measuring still works without counters; the report says none were available. */
		fprintf(stderr, "tlbprof: warning: no counters: %s\n", msg);
		counters = NULL;
	}
	environment_collect(&env);
	/* Calibrate on the CPU that will measure: cores of a hybrid CPU run at different clocks. */
	if (cfg.cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cfg.cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	timing_calibrate(&clock);

	bool controls = cfg.controls == CONTROLS_ALWAYS ||
			(cfg.controls == CONTROLS_AUTO && !tlb_counters_open(counters));
	struct plan_context pctx = {
		.with_controls = controls,
		.current_cpu = sched_getcpu(),
		.tlb = &env.tlb,
	};
	if (plan_build(&cfg, &pctx, &plan) != 0) {
		report_error("out of memory");
		status = EXIT_UNAVAILABLE;
		goto out;
	}
	/* Refuse up front a working set the machine cannot hold: never run into the OOM killer. */
	uint64_t avail = region_mem_available();
	for (size_t i = 0; avail && i < plan.n; i++) {
		const struct phase_spec *ph = &plan.phases[i];
		if (ph->page.kind != PAGE_HUGETLB && ph->size_bytes > avail) {
			char a[16], b[16];
			snprintf(msg, sizeof(msg), "--size '%s': %s needs %siB but MemAvailable is %siB; nothing was run",
				 format_size(ph->size_bytes, a, sizeof(a)), ph->name, a,
				 format_size(avail >> 20 << 20, b, sizeof(b)));
			report_error(msg);
			status = EXIT_UNAVAILABLE;
			goto out;
		}
	}
	/* The progress line only on a terminal: a log or a pipe gets nothing. */
	struct report_progress progress = { 0 };
	bool show_progress = !cfg.quiet && isatty(STDERR_FILENO);
	if (show_progress)
		report_progress_start(&progress, stderr);
	struct run_context ctx = {
		.clock = &clock,
		.counters = counters,
		.stop = &stop_flag,
		.progress = show_progress ? report_progress_phase : NULL,
		.progress_tick = show_progress ? report_progress_tick : NULL,
		.progress_arg = &progress,
		.argc = cfg.argc,
		.argv = cfg.argv,
	};
	if (runner_run(&plan, &ctx, &results) != 0 ||
	    analysis_run(results.phases, results.n, &env, &clock, &analysis) != 0) {
		report_error("out of memory");
		status = EXIT_UNAVAILABLE;
		goto out;
	}

	struct report_input in = {
		.cfg = &cfg,
		.env = &env,
		.clock = &clock,
		.counters = counters,
		.results = &results,
		.analysis = &analysis,
		.pmu_name = counters ? counter_set_pmu_name(counters) : "none",
	};
	status = exit_status(&results, &analysis, cfg.fail_on);
	if (report_emit(&in, &cfg) != 0)
		status = EXIT_OUTPUT;
out:
	analysis_free(&analysis);
	run_results_free(&results);
	plan_free(&plan);
	counter_set_delete(counters);
	return status;
}
