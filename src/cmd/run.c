/* SPDX-License-Identifier: MIT */
/* tlbprof run [OPTIONS] [--] CMD: someone else's benchmark under counters, phase markers and the same checks. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/command.h"
#include "cmd/options.h"
#include "cmd/common.h"
#include "judge/analysis.h"
#include "pmu/elfinfo.h"
#include "report/report.h"
#include "target/target.h"



#define CONTROL_USAGE "use fifo:CTL[,ACK] or fd:CTL[,ACK]"

/* --control fifo:CTL[,ACK]: both must be FIFOs. */
static enum option_result control_fifo(const char *arg, struct run_options *o, char *msg, size_t len)
{
	const char *spec = arg + 5, *comma = strchr(spec, ',');
	size_t n = comma ? (size_t)(comma - spec) : strlen(spec);

	if (n == 0 || n >= sizeof(o->ctl_path) || (comma && (!comma[1] || strlen(comma + 1) >= sizeof(o->ack_path))))
		return option_error(msg, len, "--control '%s': " CONTROL_USAGE, arg);
	snprintf(o->ctl_path, sizeof(o->ctl_path), "%.*s", (int)n, spec);
	snprintf(o->ack_path, sizeof(o->ack_path), "%s", comma ? comma + 1 : "");
	for (int i = 0; i < (comma ? 2 : 1); i++) {
		const char *path = i ? o->ack_path : o->ctl_path;
		struct stat st;
		if (stat(path, &st) != 0 || !S_ISFIFO(st.st_mode))
			return option_error(msg, len, "--control '%s': '%s' is not a FIFO (make it with mkfifo)", arg, path);
	}
	return OPTION_OK;
}

/* --control fd:CTL[,ACK]: both must be open. */
static enum option_result control_fd(const char *arg, struct run_options *o, char *msg, size_t len)
{
	char *end;
	long ctl = strtol(arg + 3, &end, 10), ack = -1;

	if (end == arg + 3 || ctl < 0 || ctl > INT32_MAX || (*end && *end != ','))
		return option_error(msg, len, "--control '%s': " CONTROL_USAGE, arg);
	if (*end == ',') {
		const char *a = end + 1;
		ack = strtol(a, &end, 10);
		if (end == a || *end || ack < 0 || ack > INT32_MAX)
			return option_error(msg, len, "--control '%s': " CONTROL_USAGE, arg);
	}
	if (fcntl((int)ctl, F_GETFD) < 0 || (ack >= 0 && fcntl((int)ack, F_GETFD) < 0))
		return option_error(msg, len, "--control '%s': fd %ld is not open", arg,
				    fcntl((int)ctl, F_GETFD) < 0 ? ctl : ack);
	o->ctl_fd = (int)ctl;
	o->ack_fd = (int)ack;
	return OPTION_OK;
}

/* --control fifo:CTL[,ACK] or fd:CTL[,ACK], as perf stat spells it. */
static enum option_result set_control(const struct option_spec *spec, const char *arg, void *opts, char *msg,
				      size_t len)
{
	(void)spec;
	if (strncmp(arg, "fifo:", 5) == 0)
		return control_fifo(arg, opts, msg, len);
	if (strncmp(arg, "fd:", 3) == 0)
		return control_fd(arg, opts, msg, len);
	return option_error(msg, len, "--control '%s': " CONTROL_USAGE, arg);
}

static enum option_result set_delay(const struct option_spec *spec, const char *arg, void *opts, char *msg,
				    size_t len)
{
	(void)spec;
	if (strcmp(arg, "-1") != 0 && strcmp(arg, "0") != 0)
		return option_error(msg, len, "--delay '%s': use -1 (start disabled) or 0", arg);
	((struct run_options *)opts)->start_disabled = strcmp(arg, "-1") == 0;
	return OPTION_OK;
}

/* -p PID: a process that exists now (its own threads are counted, so it must be one tlbprof may trace). */
static enum option_result set_pid(const struct option_spec *spec, const char *arg, void *opts, char *msg, size_t len)
{
	char *end, path[64];
	long pid = strtol(arg, &end, 10);
	struct stat st;

	(void)spec;
	if (end == arg || *end || pid <= 0 || pid > INT32_MAX)
		return option_error(msg, len, "--pid '%s': not a process id", arg);
	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	if (stat(path, &st) != 0)
		return option_error(msg, len, "--pid '%s': no such process", arg);
	((struct run_options *)opts)->attach_pid = (int)pid;
	return OPTION_OK;
}

static const char *const sample_names[] = { "page-faults", "dtlb-misses", NULL };
static const int sample_values[] = { SAMPLE_PAGE_FAULTS, SAMPLE_DTLB_MISSES };
static const char *const delay_words[] = { "-1", "0", NULL };

static const struct option_spec run_specs[] = {
	{ .name = "control", .value = "fifo:CTL[,ACK] | fd:CTL[,ACK]",
	  .help = "also take perf stat control commands (enable, disable,\n"
		  "ping) on a FIFO or an inherited fd, answering ack on ACK\n",
	  .def_help = "markers only", .set = set_control },
	{ .name = "delay", .short_name = 'D', .value = "MS",
	  .help = "-1: start with counting disabled until 'enable', as\nperf stat -D -1; 0: count from exec", .def = "0",
	  .set = set_delay, .choices = delay_words, .complete = OPTION_COMPLETE_WORD },
	{ .name = "repeat", .short_name = 'r', .value = "N",
	  .help = "run CMD N times, as perf stat -r: each phase over all\nruns, with the spread between runs", .def = "1",
	  .set = option_set_count, .offset = offsetof(struct run_options, repeat), .min = 1, .max = TARGET_MAX_REPEATS },
	{ .name = "interval-print", .short_name = 'I', .value = "MS",
	  .help = "also the whole command's counts every MS milliseconds,\nas perf stat -I: a time series in the report, the\n"
		  "table and the plot, 10 to 3600000", .def_help = "none",
	  .set = option_set_count, .offset = offsetof(struct run_options, interval_ms), .min = 10, .max = 3600000 },
	{ .name = "pid", .short_name = 'p', .value = "PID",
	  .help = "count the running process PID instead, as perf stat -p:\nevery thread it has, until it exits, CMD (if "
		  "given:\na timer, such as sleep 5) exits, or Ctrl-C", .def_help = "none", .set = set_pid },
	{ .name = "per-thread", .help = "each thread's and child process's counts too, as perf stat\n"
		  "--per-thread (a started command's reported at each exit)",
	  .set = option_set_flag, .offset = offsetof(struct run_options, per_thread) },
	{ .name = "cpu", .value = "N", .help = "pin CMD (and tlbprof's clock calibration) to CPU N\n",
	  .def_help = "not pinned", .set = cli_set_cpu, .offset = offsetof(struct run_options, cpu) },
	{ .name = "sample", .value = "EVENT",
	  .help = "sample CMD's page-faults (every fault, works without a PMU)\n"
		  "or dtlb-misses (precise loads that missed the STLB, where\n"
		  "the PMU has them) with data address and instruction, and\n"
		  "report the top functions and memory regions",
	  .def_help = "none", .set = option_set_choice, .offset = offsetof(struct run_options, sample),
	  .choices = sample_names, .values = sample_values, .complete = OPTION_COMPLETE_WORD },
	CLI_OPTION_EVENT(struct run_options, events),
	CLI_OPTION_EVENTS_DIR(struct run_options, events_dir),
	CLI_OPTION_JSON(struct run_options, out, "write the JSON report to FILE, or stdout with -\n"),
	CLI_OPTION_FORMAT(struct run_options, out),
	CLI_OPTION_OUTPUT(struct run_options, out),
	CLI_OPTION_FAIL_ON(struct run_options, fail_on, CLI_FAIL_ON_HELP),
	CLI_OPTION_QUIET(struct run_options, out, "no table on stdout"),
	CLI_OPTION_HELP,
	{ 0 },
};

static void run_usage(FILE *f)
{
	fputs("Usage: tlbprof run [OPTIONS] [--] CMD [ARGS...]\n"
	      "       tlbprof run -p PID [OPTIONS] [-- CMD [ARGS...]]\n"
	      "Run CMD (no shell) under perf_event counters and report it like a workload:\n"
	      "each phase it marks with <tlbprof/marker.h> (or each enable..disable window of\n"
	      "perf stat's control protocol) is measured and checked; an unmarked command is\n"
	      "one phase. CMD's exit status is reported, and returned when it failed.\n"
	      "\n"
	      "Options:\n",
	      f);
	option_print_table(f, run_specs);
	fputs("\n"
	      "Exit status: CMD's own status when it failed (128+N when killed by signal N),\n"
	      "else 0 success, 1 a check failed, 2 usage error or CMD cannot be executed,\n"
	      "3 tlbprof could not set up, 4 output could not be written, 130 interrupted.\n"
	      "See tlbprof-run(1).\n",
	      f);
}

/*
 * -p attaches to a process tlbprof did not start: what needs its start (its
 * markers, perf control, a delay, pinning, sampling and watching from exec,
 * repeats, intervals read between its channel work) is refused by name.
 */
static enum option_result attach_conflicts(const struct run_options *o, char *msg, size_t len)
{
	const char *other = o->repeat > 1 ? "--repeat" : o->interval_ms ? "--interval-print" : o->sample ? "--sample"
			  : *o->ctl_path || o->ctl_fd >= 0 ? "--control" : o->start_disabled ? "--delay" : o->cpu >= 0
			  ? "--cpu" : NULL;

	if (!other)
		return OPTION_OK;
	return option_error(msg, len, "--pid %d: %s needs a command tlbprof starts, not a running process", o->attach_pid,
			    other);
}

static enum option_result run_parse(int argc, char **argv, void *options, char *msg, size_t len)
{
	struct run_options *o = options;
	struct option_parser p = {
		.command = "run",
		.tables = { { run_specs, o } },
		/* Stop at the first operand, so CMD's own options stay CMD's (as with perf stat). */
		.stop_at_operand = true,
		.usage = run_usage,
		.measuring_has = command_measure_has_option,
	};
	char found[4096];

	o->cpu = o->ctl_fd = o->ack_fd = -1;
	enum option_result r = option_parse(&p, argc, argv, msg, len);
	if (r != OPTION_OK)
		return r;
	if (o->attach_pid && (r = attach_conflicts(o, msg, len)) != OPTION_OK)
		return r;
	if (p.n_operands < 1 && o->attach_pid)
		return cli_check_outputs(&o->out, msg, len);
	if (p.n_operands < 1)
		return option_error(msg, len, "run: give the command to run (tlbprof run [OPTIONS] -- CMD [ARGS...])");
	if (!command_find_program(argv[p.optind], found, sizeof(found)))
		return option_error(msg, len, "run: '%s': command not found or not executable", argv[p.optind]);
	o->argv = argv + p.optind;	/* main's argv, which ends in NULL */
	const char *tmp = getenv("TMPDIR");
	struct stat st;
	/* The marker FIFOs' private directory goes into TMPDIR: a missing or read-only one is refused up front. */
	if (tmp && *tmp && (stat(tmp, &st) != 0 || !S_ISDIR(st.st_mode) || access(tmp, W_OK | X_OK) != 0))
		return option_error(msg, len, "run: TMPDIR '%s': not a writable directory (the marker FIFOs go there)",
				    tmp);
	return cli_check_outputs(&o->out, msg, len);
}

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

/* How the benchmark was built, as its ELF file says, for the build_optimised check. */
struct benchmark_binary {
	char path[PATH_MAX];
	struct elf_provenance elf;
	bool read;
	char error[128];	/* why it was not read ("" when it was) */
};

static void binary_read(const char *name, struct benchmark_binary *b)
{
	(void)command_find_program(name, b->path, sizeof(b->path));	/* parse checked it; "" if gone since */
	int rc = elf_provenance_read(b->path, &b->elf);
	b->read = rc == 0;
	b->error[0] = '\0';
	if (rc != 0)
		snprintf(b->error, sizeof(b->error), "%.80s: %s", *b->path ? b->path : name,
			 rc == -EINVAL ? "not an ELF file (a script?)" : strerror(-rc));
}

static struct analysis_build binary_build(const struct benchmark_binary *b, const char *name)
{
	return (struct analysis_build){
		.binary = *b->path ? b->path : name,
		.opt_level = b->read ? b->elf.opt_level : "",
		.opt_levels = b->read ? b->elf.opt_levels : "",
		.source = b->read ? elf_opt_source_name(b->elf.opt_source) : "none",
		.defaulted = b->read && b->elf.opt_level_defaulted,
		.unreadable = b->read ? NULL : b->error,
	};
}

/* --sample dtlb-misses needs the PMU map's precise event; without one, why goes to the report. */
static void sampling_options(const struct run_options *o, struct counter_set *counters, struct target_options *opt,
			     struct counter_sample_event *event, char *why, size_t why_len)
{
	opt->sample = o->sample != SAMPLE_NONE;
	opt->sample_top = 10;
	if (o->sample != SAMPLE_DTLB_MISSES)
		return;
	if (!counters)
		snprintf(why, why_len, "no counters: libpfm4 is not available");
	else if (counter_set_sample_event(counters, event, why, why_len) == 0)
		opt->sample_event = event;
	if (!opt->sample_event)
		opt->sample = false;
}

/* How the command ended, for command_exit: each run under -r. The signal's name is in a static buffer. */
static struct analysis_command_end command_end(const struct target_result *tr)
{
	struct analysis_command_end e = { .attached = tr->attached, .interrupted = tr->interrupted,
					  .runs = tr->n_repeats ? (unsigned)tr->n_repeats : 1, .exited = tr->exited,
					  .exit_code = tr->exit_code, .core_dumped = tr->core_dumped };

	for (size_t i = 0; i < tr->n_repeats; i++)
		e.failed += tr->repeats[i].term_signal || (tr->repeats[i].exited && tr->repeats[i].exit_code);
	if (!tr->n_repeats)
		e.failed = tr->term_signal || (tr->exited && tr->exit_code);
	e.signal = tr->term_signal ? report_signal_name(tr->term_signal) : NULL;
	return e;
}

/* What the command's end says on stderr besides the report: a failed sampling, a signal, a failing status. */
static void say_outcome(const struct run_options *o, struct target_result *tr, const char *sample_why)
{
	if (o->sample != SAMPLE_NONE)
		snprintf(tr->sample_requested, sizeof(tr->sample_requested), "%s",
			 o->sample == SAMPLE_DTLB_MISSES ? "dtlb-misses" : "page-faults");
	if (*sample_why && !*tr->sample_error)
		snprintf(tr->sample_error, sizeof(tr->sample_error), "%s", sample_why);
	char msg[PATH_MAX + 128];

	msg[0] = '\0';
	if (o->sample != SAMPLE_NONE && !tr->sampled) {
		snprintf(msg, sizeof(msg), "warning: --sample %s: %s", tr->sample_requested, tr->sample_error);
		report_error(msg);
	}
	if (tr->term_signal)
		snprintf(msg, sizeof(msg), "run: '%s' was killed by signal %d (%s)%s", o->argv[0], tr->term_signal,
			 strsignal(tr->term_signal), tr->core_dumped ? ", core dumped" : "");
	else if (tr->exited && tr->exit_code)
		snprintf(msg, sizeof(msg), "run: '%s' exited with status %d", o->argv[0], tr->exit_code);
	else
		return;
	report_error(msg);
}

/*
 * Start the command (program: argv[0] as found in PATH, "" when not) and follow it; on failure the one-line error
 * is printed and the exit status returned.
 */
static int start(const struct run_options *o, const char *program, struct measuring *m,
		 const struct command_context *ctx, struct run_results *results, struct target_result *tr, bool first,
		 char *sample_why, size_t why_len)
{
	struct counter_sample_event dtlb_event;
	struct target_options opt = {
		.argv = o->argv,
		.program = *program ? program : NULL,
		.cpu = o->cpu,
		.ctl_path = *o->ctl_path ? o->ctl_path : NULL,
		.ack_path = *o->ack_path ? o->ack_path : NULL,
		.ctl_fd = o->ctl_fd,
		.ack_fd = o->ack_fd,
		.start_disabled = o->start_disabled,
		.tmpdir = getenv("TMPDIR"),
		.stop_signal = ctx->stop_signal,
		.no_reference = !first,
		.interval_ms = first ? o->interval_ms : 0,
		.per_thread = first && o->per_thread,	/* run -r N: run 1's threads, as its watch and samples */
		.stdout_to_stderr = report_outputs_stdout(&o->out),
	};
	struct run_context rctx = { .clock = &m->clock, .counters = m->counters, .stop = ctx->stop };
	char msg[512];

	sampling_options(o, m->counters, &opt, &dtlb_event, sample_why, why_len);
	int rc = target_run(&opt, &rctx, results, tr);
	if (tr->fifo_errno) {
		/* The FIFOs' directory failed, not the command. */
		snprintf(msg, sizeof(msg), "run: cannot make the marker FIFOs' directory in TMPDIR '%s': %s",
			 opt.tmpdir && *opt.tmpdir ? opt.tmpdir : "/tmp", strerror(tr->fifo_errno));
		report_error(msg);
		return EXIT_UNAVAILABLE;
	}
	if (rc == -ENOENT && tr->exec_errno) {
		snprintf(msg, sizeof(msg), "run: cannot execute '%s': %s", o->argv[0], strerror(tr->exec_errno));
		report_error(msg);
		return EXIT_USAGE;
	}
	if (rc != 0) {
		snprintf(msg, sizeof(msg), "run: cannot start '%s': %s", o->argv[0], strerror(-rc));
		report_error(msg);
		return EXIT_UNAVAILABLE;
	}
	return EXIT_OK;
}

/* Whether run -r goes on after a run: not once the command failed, or tlbprof was asked to stop. */
static bool run_again(const struct target_result *tr, const struct command_context *ctx)
{
	return tr->started && tr->exited && tr->exit_code == 0 && !tr->interrupted && !(ctx->stop && *ctx->stop);
}

/*
 * run -r N: runs 2..N of the command, each added to the first's results (its
 * phases joined by name, each run one allocation: target_repeat_add()).
 */
static int repeat(const struct run_options *o, const char *program, struct measuring *m,
		  const struct command_context *ctx, struct run_results *results, struct target_result *tr)
{
	char why[320];
	int status = EXIT_OK;

	if (target_repeat_begin(tr, o->repeat) != 0) {
		report_error("out of memory");
		return EXIT_UNAVAILABLE;
	}
	for (unsigned k = 1; k < o->repeat && run_again(tr, ctx) && status == EXIT_OK; k++) {
		struct run_results more = { 0 };
		struct target_result tr_more = { 0 };

		status = start(o, program, m, ctx, &more, &tr_more, false, why, sizeof(why));
		if (status == EXIT_OK && target_repeat_add(results, tr, &more, &tr_more) != 0) {
			report_error("out of memory");
			status = EXIT_UNAVAILABLE;
		}
		run_results_free(&more);
		target_result_free(&tr_more);
	}
	/* Asked to stop between two runs: no run saw it, yet the runs asked for were not all made. */
	if (ctx->stop && *ctx->stop && tr->n_repeats < o->repeat)
		tr->interrupted = results->interrupted = true;
	return status;
}

/* run -p: count the running process; on failure the one-line error is printed and the exit status returned. */
static int attach(const struct run_options *o, struct measuring *m, const struct command_context *ctx,
		  struct run_results *results, struct target_result *tr)
{
	struct target_options opt = { .argv = o->argv, .cpu = -1, .ctl_fd = -1, .ack_fd = -1,
				      .attach_pid = o->attach_pid, .per_thread = o->per_thread };
	struct run_context rctx = { .clock = &m->clock, .counters = m->counters, .stop = ctx->stop };
	char msg[512];
	int rc = target_attach(&opt, &rctx, results, tr);

	if (rc == 0)
		return EXIT_OK;
	if (rc == -ESRCH)
		snprintf(msg, sizeof(msg), "--pid %d: the process exited before tlbprof could count it", o->attach_pid);
	else if (rc == -ENODEV)
		snprintf(msg, sizeof(msg), "--pid %d: no counter set to count it with (see tlbprof env)", o->attach_pid);
	else
		snprintf(msg, sizeof(msg), "--pid %d: cannot attach: %s", o->attach_pid, strerror(-rc));
	report_error(msg);
	return rc == -ESRCH ? EXIT_USAGE : EXIT_UNAVAILABLE;
}

/* The attached process's command line (/proc/PID/cmdline) as argv words in buf; its comm where unreadable. */
static char **attached_argv(int pid, char *buf, size_t len, char **words, size_t max)
{
	char path[64];
	size_t n = 0, got = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	if ((f = fopen(path, "re"))) {
		got = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[got] = '\0';
	for (size_t i = 0; i < got && n + 1 < max; i += strlen(buf + i) + 1)
		words[n++] = buf + i;
	if (!n) {
		snprintf(buf, len, "[pid %d]", pid);
		words[n++] = buf;
	}
	words[n] = NULL;
	return words;
}

static int run_run(const void *options, const struct command_context *ctx)
{
	const struct run_options *o = options;
	struct measuring m;
	struct run_results results = { 0 };
	struct target_result tr = { 0 };
	struct analysis analysis = { 0 };
	struct benchmark_binary binary;
	char command_path[PATH_MAX];
	char sample_why[320] = "";
	int status;

	char cmdline[4096], link[64], exe[PATH_MAX] = "", *words[64];
	char **argv = o->attach_pid ? attached_argv(o->attach_pid, cmdline, sizeof(cmdline), words, 64) : o->argv;

	if ((status = command_measuring_setup(&m, o->events_dir, &o->events, o->cpu)) != 0)
		return status;
	/* An attached process's image is the file /proc/PID/exe links to (where tlbprof may read the link). */
	snprintf(link, sizeof(link), "/proc/%d/exe", o->attach_pid);
	ssize_t nlink = o->attach_pid ? readlink(link, exe, sizeof(exe) - 1) : -1;
	if (nlink > 0)
		exe[nlink] = '\0';
	binary_read(o->attach_pid ? (nlink > 0 ? exe : link) : o->argv[0], &binary);
	command_host_before(&m);
	if (o->attach_pid) {
		status = attach(o, &m, ctx, &results, &tr);
	} else {
		/* argv[0] as binary_read() found it in PATH ("" if gone since). */
		status = start(o, binary.path, &m, ctx, &results, &tr, true, sample_why, sizeof(sample_why));
		if (status == EXIT_OK && o->repeat > 1)
			status = repeat(o, binary.path, &m, ctx, &results, &tr);
	}
	command_host_after(&m);
	if (status != EXIT_OK)
		goto out;
	/* Through a wrapper (env, taskset, numactl) the program is the image finally exec'd, as the sampler saw it. */
	if (tr.watched && tr.profile.n_execs && *tr.profile.execs[tr.profile.n_execs - 1] == '/' &&
	    strcmp(tr.profile.execs[tr.profile.n_execs - 1], binary.path) != 0)
		binary_read(tr.profile.execs[tr.profile.n_execs - 1], &binary);
	/*
	 * Through a shell, a script or GNU time, which fork it, it is the image of the hot thread's process: its
	 * provenance is judged, while target.path stays the command's own image, whose exit status is reported.
	 */
	snprintf(command_path, sizeof(command_path), "%s", binary.path);
	if (tr.watched && *tr.profile.program == '/' && strcmp(tr.profile.program, binary.path) != 0)
		binary_read(tr.profile.program, &binary);
	struct analysis_build build = binary_build(&binary, argv[0]);
	struct analysis_command_end end = command_end(&tr);
	if (analysis_run(results.phases, results.n, &m.env, &m.clock, &analysis) != 0 ||
	    analysis_check_build(&analysis, results.phases, results.n, &build) != 0 ||
	    analysis_check_markers(&analysis, results.phases, results.n, tr.messages, tr.errors, tr.error_lines[0],
				   &end) != 0 ||
	    (tr.watched && analysis_check_unmarked(&analysis, results.phases, results.n, &m.env, &tr.profile) != 0)) {
		report_error("out of memory");
		status = EXIT_UNAVAILABLE;
		goto out;
	}
	struct target_report target = {
		.argv = argv,
		.path = command_path,
		.result = &tr,
		.binary = binary.read ? &binary.elf : NULL,
		.binary_error = binary.error,
	};
	struct report_input in = {
		.argc = ctx->argc,
		.argv = ctx->argv,
		.fail_on = (enum fail_on)o->fail_on,
		.env = &m.env,
		.clock = &m.clock,
		.counters = m.counters,
		.results = &results,
		.analysis = &analysis,
		.pmu_name = m.counters ? counter_set_pmu_name(m.counters) : "none",
		.target = &target,
	};
	status = run_status(&tr, &results, &analysis, (enum fail_on)o->fail_on);
	say_outcome(o, &tr, sample_why);
	int emitted = report_emit(&in, &o->out);
	if (emitted != 0)
		status = emitted == -EINTR ? EXIT_INTERRUPTED : EXIT_OUTPUT;
out:
	analysis_free(&analysis);
	run_results_free(&results);
	target_result_free(&tr);
	command_measuring_free(&m);
	return status;
}

const struct command command_run = {
	.name = "run",
	.summary = "run your own benchmark under counters, phase markers and checks",
	.signals = COMMAND_SIGNALS_SURVIVE,
	.specs = run_specs,
	.options_size = sizeof(struct run_options),
	.usage = run_usage,
	.parse = run_parse,
	.run = run_run,
};
