/* SPDX-License-Identifier: MIT */
/* Command line -> a validated, read-only config. The only module that prints usage. */
#include "cmd/cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "judge/compare.h"
#include "pmu/counters.h"
#include "parse.h"
#include "report/report.h"
#include "version.h"
#include "measure/workload.h"

#define DEFAULT_PAGES "4k,2m"
#define DEFAULT_SIZE "256M"
#define DEFAULT_STRIDE "4K"
#define DEFAULT_STRIDES "8,64,512,4K,8K"
#define MAX_PAGES_LIMIT (1ull << 24)
#define DEFAULT_CASES "anon_cold,anon_refault,anon_prefault,file_warm,file_cold"
#define DEFAULT_FAULT_SIZE "200M"
#define DEFAULT_PROCESSES 5
#define MAX_PROCESSES 100
#define DEFAULT_ITERS "20M"	/* with --iters auto replaced by a batch the clock can time */
#define DEFAULT_PRECISION 0.01
#define DEFAULT_TIME_BUDGET 0.5
#define DEFAULT_REALLOC 3
#define MAX_REALLOC 100
#define DEFAULT_WARMUP "0.1"
#define DEFAULT_REPEAT 5
#define DEFAULT_SEED 1
#define MAX_REPEAT 1000
#define MAX_THRESHOLD_PCT 1000.0

enum opt_id {
	OPT_WORKLOAD = 256, OPT_PAGES, OPT_SIZE, OPT_STRIDE, OPT_ITERS, OPT_WARMUP, OPT_REPEAT,
	OPT_SEED, OPT_CPU, OPT_LAYOUT, OPT_STRIDES, OPT_MAX_PAGES, OPT_CASES, OPT_PROCESSES, OPT_DIR, OPT_DROP_CACHES,
	OPT_PRECISION, OPT_TIME_BUDGET, OPT_REALLOC,
	OPT_EVENTS_DIR, OPT_JSON, OPT_FORMAT, OPT_OUTPUT, OPT_CONTROLS, OPT_FAIL_ON, OPT_INTERNAL_CHILD, OPT_PMU,
	OPT_CONTROL, OPT_DELAY, OPT_THRESHOLD, OPT_SAMPLE,
};

static const struct option long_options[] = {
	{ "workload", required_argument, NULL, OPT_WORKLOAD },
	{ "pages", required_argument, NULL, OPT_PAGES },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "stride", required_argument, NULL, OPT_STRIDE },
	{ "iters", required_argument, NULL, OPT_ITERS },
	{ "warmup-frac", required_argument, NULL, OPT_WARMUP },
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "layout", required_argument, NULL, OPT_LAYOUT },
	{ "strides", required_argument, NULL, OPT_STRIDES },
	{ "max-pages", required_argument, NULL, OPT_MAX_PAGES },
	{ "cases", required_argument, NULL, OPT_CASES },
	{ "processes", required_argument, NULL, OPT_PROCESSES },
	{ "dir", required_argument, NULL, OPT_DIR },
	{ "drop-caches", no_argument, NULL, OPT_DROP_CACHES },
	{ "precision", required_argument, NULL, OPT_PRECISION },
	{ "time-budget", required_argument, NULL, OPT_TIME_BUDGET },
	{ "realloc", required_argument, NULL, OPT_REALLOC },
	{ "internal-child", required_argument, NULL, OPT_INTERNAL_CHILD },
	{ "events-dir", required_argument, NULL, OPT_EVENTS_DIR },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "controls", required_argument, NULL, OPT_CONTROLS },
	{ "fail-on", required_argument, NULL, OPT_FAIL_ON },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void usage_measure(FILE *f);

/*
 * The subcommands: tlbprof NAME ... Each parses its own options (argv[0] is
 * its name) and prints its own --help; the table also makes the command list
 * of the main --help. Measuring (no subcommand) is the default.
 */
struct cli_command {
	const char *name;
	enum tlbprof_command command;
	const char *summary;
	void (*usage)(FILE *f);
	enum cli_result (*parse)(int argc, char **argv, struct tlbprof_config *cfg, char *msg, size_t len);
};

static enum cli_result parse_analyze(int argc, char **argv, struct tlbprof_config *cfg, char *msg, size_t len);
static void usage_analyze(FILE *f);
static enum cli_result parse_env(int argc, char **argv, struct tlbprof_config *cfg, char *msg, size_t len);
static void usage_env(FILE *f);
static enum cli_result parse_events(int argc, char **argv, struct tlbprof_config *cfg, char *msg, size_t len);
static void usage_events(FILE *f);
static enum cli_result parse_run(int argc, char **argv, struct tlbprof_config *cfg, char *msg, size_t len);
static void usage_run(FILE *f);
static enum cli_result parse_compare(int argc, char **argv, struct tlbprof_config *cfg, char *msg, size_t len);
static void usage_compare(FILE *f);

static enum cli_result parse_plot(int argc, char **argv, struct tlbprof_config *cfg, char *msg, size_t len);
static void usage_plot(FILE *f);

static const struct cli_command commands[] = {
	{ "analyze", COMMAND_ANALYZE, "recompute the analysis of a saved report", usage_analyze, parse_analyze },
	{ "compare", COMMAND_COMPARE, "compare two saved reports; exit 1 on a regression", usage_compare, parse_compare },
	{ "env", COMMAND_ENV, "what this machine can measure, each problem with its fix", usage_env, parse_env },
	{ "events", COMMAND_EVENTS, "the metric-to-event table for this CPU or --pmu NAME", usage_events,
	  parse_events },
	{ "plot", COMMAND_PLOT, "draw a saved report as an SVG chart", usage_plot, parse_plot },
	{ "run", COMMAND_RUN, "run your own benchmark under counters, phase markers and checks", usage_run,
	  parse_run },
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

void cli_usage(FILE *f)
{
	fprintf(f,
		"Usage: tlbprof [OPTIONS]\n"
		"       tlbprof COMMAND [OPTIONS] ...\n"
		"Measure what address translation costs: run memory workloads in phases on\n"
		"verified page sizes, with perf_event counters, and report JSON and a table.\n"
		"\n"
		"Commands (tlbprof COMMAND --help for each):\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-20s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n");
	usage_measure(f);
}

int cli_command_usage(const char *name, FILE *f)
{
	if (!name || !*name) {
		cli_usage(f);
		return 0;
	}
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0) {
			commands[i].usage(f);
			return 0;
		}
	return -ENOENT;
}

/* --format and --output, in the help of every command that reports. */
#define FORMAT_USAGE                                                                              \
	"  --format LIST        report formats for --output: json, gbench (Google Benchmark\n"  \
	"                       JSON), openmetrics (Prometheus textfile), junit (XML), csv\n"  \
	"                       (default: json)\n"                                              \
	"  --output PATH|DIR/|- where --format goes: a file (one format), stdout with -, or\n"  \
	"                       an existing directory: tlbprof.json, tlbprof.gbench.json,\n"   \
	"                       tlbprof.prom, tlbprof.junit.xml, tlbprof.csv; or each\n"       \
	"                       format to its own file: FORMAT=FILE[,FORMAT=FILE...], e.g.\n"  \
	"                       junit=ci.xml,gbench=bench.json (default: none)\n"

/* The options of measuring (no subcommand). */
static void usage_measure(FILE *f)
{
	fprintf(f,
		"Options (measuring):\n"
		"  --workload NAME      workload to run (default: chase)\n"
		"  --pages LIST         page sizes: 4k, 2m (THP), 2m:hugetlb, 1g (hugetlb)\n"
		"                       (default: " DEFAULT_PAGES ")\n"
		"  --size LIST          working-set sizes, binary K/M/G suffixes (default: " DEFAULT_SIZE ";\n"
		"                       pagefault: " DEFAULT_FAULT_SIZE ")\n"
		"  --stride SIZE        distance between slots, power of two, 8 to half the size\n"
		"                       (default: " DEFAULT_STRIDE ")\n"
		"  --strides LIST       stride workload: strides, power of two >= 8\n"
		"                       (default: " DEFAULT_STRIDES ")\n"
		"  --max-pages N        tlbsize workload: largest page count (default: 4x the\n"
		"                       largest 4 KiB TLB reach CPUID reports, or 65536)\n"
		"  --cases LIST         pagefault workload: anon_cold, anon_refault, anon_prefault,\n"
		"                       file_warm, file_cold (default: all five)\n"
		"  --processes N        pagefault: separate processes per case, 1 to %d (default: %d)\n"
		"  --dir DIR            pagefault: directory for the data file (default: $TMPDIR or /tmp)\n"
		"  --drop-caches        pagefault file_cold: also drop the global page cache (root)\n"
		"  --iters auto|N       timed accesses per sample, k/M/G suffixes; auto: warm up until\n"
		"                       steady, a batch lasting >= 1000x the clock overhead and >= 1 ms,\n"
		"                       then more allocations until --precision or --time-budget\n"
		"                       (default: auto; tlbsize: 200k)\n"
		"  --precision F        auto: stop when the 95%% CI half-width, allocations as the unit,\n"
		"                       is below F of the median (default: 0.01)\n"
		"  --time-budget S      auto: wall seconds per phase, allocations included; the least\n"
		"                       (--realloc allocations of --repeat samples) always runs\n"
		"                       (default: 0.5)\n"
		"  --realloc N          fresh region and chain N times per phase (1: off; auto: the\n"
		"                       least) (default: 3)\n"
		"  --warmup-frac F      fixed --iters: warm-up accesses as a fraction of --iters, 0 to 1\n"
		"                       (default: " DEFAULT_WARMUP ")\n"
		"  --repeat N           timed samples per allocation (per process; with --iters auto\n"
		"                       --realloc 1 the least), 1 to %d (default: %d)\n"
		"  --seed N             seed of the random chain (default: %d)\n"
		"  --cpu N              pin the measuring thread to CPU N (default: not pinned)\n"
		"  --layout L           colored (rotate each slot's cache line) or aligned\n"
		"                       (every slot at its page start, as naive benchmarks do)\n"
		"                       (default: colored)\n"
		"  --controls MODE      packed control phases (same cache lines on few pages):\n"
		"                       auto (when no dTLB counters), always, none (default: auto)\n"
		"  --fail-on LEVEL      exit 1 when a check reaches LEVEL: fail, warn, never\n"
		"                       (default: fail)\n"
		"  --events-dir DIR     metric-to-event map files (default: %s)\n"
		"  --json FILE|-        write the JSON report to FILE, or stdout with -\n"
		"                       (default: none)\n"
		FORMAT_USAGE
		"  -q, --quiet          no table on stdout, no progress line on stderr\n"
		"  -h, --help           show this help and exit\n"
		"  -V, --version        show the version and exit\n"
		"\n"
		"Workloads:\n",
		MAX_PROCESSES, DEFAULT_PROCESSES, MAX_REPEAT, DEFAULT_REPEAT, DEFAULT_SEED, TLBPROF_EVENTS_DIR);
	for (size_t i = 0; workload_registry[i]; i++) {
		const struct workload_ops *w = workload_registry[i];
		fprintf(f, "  %-20s %s\n", w->name, w->description);
		for (const struct workload_param *p = w->params; p && p->option; p++)
			fprintf(f, "    %-18s %s\n", p->option, p->help);
	}
	fprintf(f,
		"\n"
		"Exit status: 0 success, 1 a check failed, 2 usage error, 3 the machine cannot\n"
		"provide what was asked (page size, memory), 4 output could not be written,\n"
		"130 interrupted. See tlbprof(1).\n");
}

static void usage_run(FILE *f)
{
	fprintf(f,
		"Usage: tlbprof run [OPTIONS] [--] CMD [ARGS...]\n"
		"Run CMD (no shell) under perf_event counters and report it like a workload:\n"
		"each phase it marks with <tlbprof/marker.h> (or each enable..disable window of\n"
		"perf stat's control protocol) is measured and checked; an unmarked command is\n"
		"one phase. CMD's exit status is reported, and returned when it failed.\n"
		"\n"
		"Options:\n"
		"  --control fifo:CTL[,ACK] | fd:CTL[,ACK]\n"
		"                       also take perf stat control commands (enable, disable,\n"
		"                       ping) on a FIFO or an inherited fd, answering ack on ACK\n"
		"                       (default: markers only)\n"
		"  -D, --delay MS       -1: start with counting disabled until 'enable', as\n"
		"                       perf stat -D -1; 0: count from exec (default: 0)\n"
		"  --cpu N              pin CMD (and tlbprof's clock calibration) to CPU N\n"
		"                       (default: not pinned)\n"
		"  --sample EVENT       sample CMD's page-faults (every fault, works without a PMU)\n"
		"                       or dtlb-misses (precise loads that missed the STLB, where\n"
		"                       the PMU has them) with data address and instruction, and\n"
		"                       report the top functions and memory regions (default: none)\n"
		"  --events-dir DIR     metric-to-event map files (default: %s)\n"
		"  --json FILE|-        write the JSON report to FILE, or stdout with -\n"
		"                       (default: none)\n"
		FORMAT_USAGE
		"  --fail-on LEVEL      exit 1 when a check reaches LEVEL: fail, warn, never\n"
		"                       (default: fail)\n"
		"  -q, --quiet          no table on stdout\n"
		"  -h, --help           show this help and exit\n"
		"\n"
		"Exit status: CMD's own status when it failed (128+N when killed by signal N),\n"
		"else 0 success, 1 a check failed, 2 usage error or CMD cannot be executed,\n"
		"3 tlbprof could not set up, 4 output could not be written, 130 interrupted.\n"
		"See tlbprof-run(1).\n",
		TLBPROF_EVENTS_DIR);
}

static void usage_analyze(FILE *f)
{
	fprintf(f,
		"Usage: tlbprof analyze [OPTIONS] REPORT.json\n"
		"Read a saved tlbprof.report/1 file, recompute its analysis (comparisons,\n"
		"attribution, checks) and report again; every field of the file is kept.\n"
		"\n"
		"Options:\n"
		"  --json FILE|-        write the re-analysed JSON report to FILE, or stdout with -\n"
		"                       (default: none)\n"
		FORMAT_USAGE
		"  --fail-on LEVEL      exit 1 when a check reaches LEVEL: fail, warn, never\n"
		"                       (default: fail)\n"
		"  -q, --quiet          no table on stdout\n"
		"  -h, --help           show this help and exit\n"
		"\n"
		"Exit status: 0 success, 1 a check failed, 2 usage error or unreadable report,\n"
		"4 output could not be written. See tlbprof-analyze(1).\n");
}

static void usage_env(FILE *f)
{
	fprintf(f,
		"Usage: tlbprof env [OPTIONS]\n"
		"Say what this machine can measure and why not: PMU and whether hardware events\n"
		"open, perf_event_paranoid and capabilities, THP, hugetlb pools, hypervisor and\n"
		"steal time, frequency scaling, CPUID TLB geometry; each problem with the\n"
		"command that fixes it. Reads only: tlbprof never changes the system.\n"
		"\n"
		"Options:\n"
		"  --json FILE|-        write the findings as JSON (tlbprof.env/1) to FILE, or\n"
		"                       stdout with - (default: none)\n"
		"  --events-dir DIR     metric-to-event map files (default: %s)\n"
		"  -q, --quiet          no text on stdout\n"
		"  -h, --help           show this help and exit\n"
		"\n"
		"Exit status: 0 (a diagnosis, whatever it finds), 2 usage error, 4 output could\n"
		"not be written. See tlbprof-env(1).\n",
		TLBPROF_EVENTS_DIR);
}

static void usage_events(FILE *f)
{
	fprintf(f,
		"Usage: tlbprof events [OPTIONS]\n"
		"Show how every tlbprof metric resolves on this CPU (or the PMU of --pmu): the\n"
		"event, the libpfm4 event string, the map file it came from, and its\n"
		"perf_event type and config.\n"
		"\n"
		"Options:\n"
		"  --pmu NAME           encode for this PMU instead of this machine's (a map name\n"
		"                       in the events directory: skx, spr, amd64_fam19h_zen4, ...);\n"
		"                       nothing is opened then (default: this machine's PMU)\n"
		"  --json FILE|-        write the table as JSON (tlbprof.events/1) to FILE, or\n"
		"                       stdout with - (default: none)\n"
		"  --events-dir DIR     metric-to-event map files (default: %s)\n"
		"  -q, --quiet          no table on stdout\n"
		"  -h, --help           show this help and exit\n"
		"\n"
		"Exit status: 0 success, 2 usage error (an unknown --pmu lists the known ones),\n"
		"4 output could not be written. See tlbprof-events(1).\n",
		TLBPROF_EVENTS_DIR);
}

static void usage_compare(FILE *f)
{
	fprintf(f,
		"Usage: tlbprof compare [OPTIONS] BASE.json NEW.json\n"
		"Compare two saved tlbprof.report/1 files phase by phase (matched by name):\n"
		"ns per access (per page for page faults), page-size speedups, ns per dTLB\n"
		"miss, counter rates and checks, old against new. A change counts when it\n"
		"exceeds the threshold and is beyond noise: Mann-Whitney U p < 0.01, a 99%%\n"
		"hierarchical bootstrap interval (allocations or processes, then samples)\n"
		"without 0, and larger than the spread between each run's own allocations;\n"
		"a phase that moved with its packed control moved with the machine. Fewer\n"
		"than 5 samples a side are not judged.\n"
		"Both reports are re-analysed with this version; environments (CPU, kernel,\n"
		"THP, hypervisor, PMU, clock, hugetlb pools) and phase parameters that differ\n"
		"and interrupted runs are warned about.\n"
		"\n"
		"Options:\n"
		"  --threshold PCT      the smallest change that counts, percent, above 0 and\n"
		"                       below %.0f (default: %.0f)\n"
		"  --fail-on LEVEL      besides a regression, exit 1 when a check got worse:\n"
		"                       fail (it fails now), warn (pass -> warn or fail,\n"
		"                       warn -> fail), never (no exit 1) (default: fail)\n"
		"  --json FILE|-        write the comparison (tlbprof.compare/1) to FILE, or\n"
		"                       stdout with - (default: none)\n"
		"  -q, --quiet          no table on stdout\n"
		"  -h, --help           show this help and exit\n"
		"\n"
		"Exit status: 0 no regression, 1 a regression beyond noise and threshold or a\n"
		"check that got worse at the --fail-on level, 2 usage error or unreadable\n"
		"report, 3 nothing could be judged (no phase matched with enough samples),\n"
		"4 output could not be written. See tlbprof-compare(1).\n",
		MAX_THRESHOLD_PCT, COMPARE_DEFAULT_THRESHOLD_PCT);
}

static void usage_plot(FILE *f)
{
	fprintf(f,
		"Usage: tlbprof plot REPORT.json -o FILE.svg\n"
		"Draw a saved tlbprof.report/1 file as one standalone SVG: ns per access against\n"
		"the working set per page size (a size sweep; one working set: a bar per page\n"
		"size), the tlbsize curve with its knees and the TLB capacities CPUID reports,\n"
		"ns per access against the stride with the step labels, ns per page per\n"
		"page-fault case. The analysis is recomputed from the phases, as analyze does.\n"
		"\n"
		"Options:\n"
		"  -o, --output FILE|-  the SVG to write (required), or stdout with -\n"
		"  -h, --help           show this help and exit\n"
		"\n"
		"Exit status: 0 success, 2 usage error, an unreadable report or one with no\n"
		"phase that finished ok, 4 output could not be written. See tlbprof-plot(1).\n");
}

__attribute__((format(printf, 3, 4)))
static enum cli_result usage_error(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return CLI_USAGE;
}

static const char *errno_phrase(int rc)
{
	return rc == -ERANGE ? "out of range" : "not a number";
}

/*
 * Split the comma list arg of option into items (pointing into buf). Returns
 * the count, or -1 after writing the one-line error (too long, too many
 * items, an empty item) to msg.
 */
static int split_list(const char *option, const char *arg, const char *what, char *buf, size_t buf_len, char **items,
		      size_t max, char *msg, size_t len)
{
	int n;

	if (strlen(arg) >= buf_len) {
		usage_error(msg, len, "%s '%.40s...': too long", option, arg);
		return -1;
	}
	strcpy(buf, arg);
	n = parse_list(buf, items, max);
	if (n == -E2BIG)
		usage_error(msg, len, "%s '%s': more than %zu %s", option, arg, max, what);
	else if (n < 0)
		usage_error(msg, len, "%s '%s': empty item in the list", option, arg);
	return n < 0 ? -1 : n;
}

/* Parse and check every item of the --pages list. */
static enum cli_result parse_pages(const char *arg, struct tlbprof_config *cfg, char *msg, size_t len)
{
	char buf[512], *items[CONFIG_MAX_PAGES + 1];
	int n = split_list("--pages", arg, "page sizes", buf, sizeof(buf), items, CONFIG_MAX_PAGES, msg, len);

	if (n < 0)
		return CLI_USAGE;
	cfg->n_pages = 0;
	for (int i = 0; i < n; i++) {
		struct page_request pr;
		if (page_request_parse(items[i], &pr) != 0)
			return usage_error(msg, len,
					   "--pages '%s': unknown page size '%s' (use 4k, 2m, 2m:hugetlb, 1g)",
					   arg, items[i]);
		for (size_t j = 0; j < cfg->n_pages; j++)
			if (strcmp(cfg->pages[j].label, pr.label) == 0)
				return usage_error(msg, len, "--pages '%s': '%s' listed twice", arg, items[i]);
		cfg->pages[cfg->n_pages++] = pr;
	}
	return CLI_RUN;
}

static enum cli_result parse_sizes(const char *arg, struct tlbprof_config *cfg, char *msg, size_t len)
{
	char buf[512], *items[CONFIG_MAX_SIZES + 1];
	int n = split_list("--size", arg, "sizes", buf, sizeof(buf), items, CONFIG_MAX_SIZES, msg, len);

	if (n < 0)
		return CLI_USAGE;
	cfg->n_sizes = 0;
	for (int i = 0; i < n; i++) {
		uint64_t v;
		int rc = parse_size(items[i], &v);
		if (rc)
			return usage_error(msg, len, "--size '%s': '%s' is %s (use e.g. 64K, 256M, 1G)", arg,
					   items[i], rc == -ERANGE ? "out of range" : "not a size");
		if (v == 0)
			return usage_error(msg, len, "--size '%s': size must be greater than 0", arg);
		for (size_t j = 0; j < cfg->n_sizes; j++)
			if (cfg->sizes_bytes[j] == v)
				return usage_error(msg, len, "--size '%s': '%s' listed twice", arg, items[i]);
		cfg->sizes_bytes[cfg->n_sizes++] = v;
	}
	return CLI_RUN;
}

static enum cli_result parse_strides(const char *arg, struct tlbprof_config *cfg, char *msg, size_t len)
{
	char buf[512], *items[CONFIG_MAX_STRIDES + 1];
	int n = split_list("--strides", arg, "strides", buf, sizeof(buf), items, CONFIG_MAX_STRIDES, msg, len);

	if (n < 0)
		return CLI_USAGE;
	cfg->n_strides = 0;
	for (int i = 0; i < n; i++) {
		uint64_t v;
		if (parse_size(items[i], &v) != 0 || v < 8 || (v & (v - 1)))
			return usage_error(msg, len, "--strides '%s': '%s' is not a power of two of at least 8 bytes",
					   arg, items[i]);
		for (size_t j = 0; j < cfg->n_strides; j++)
			if (cfg->strides_bytes[j] == v)
				return usage_error(msg, len, "--strides '%s': '%s' listed twice", arg, items[i]);
		cfg->strides_bytes[cfg->n_strides++] = v;
	}
	return CLI_RUN;
}

static enum cli_result parse_cases(const char *arg, struct tlbprof_config *cfg, char *msg, size_t len)
{
	char buf[512], *items[FAULT_CASES + 1];
	int n = split_list("--cases", arg, "cases", buf, sizeof(buf), items, FAULT_CASES - 1, msg, len);

	if (n < 0)
		return CLI_USAGE;
	cfg->n_cases = 0;
	for (int i = 0; i < n; i++) {
		int c = fault_case_from_name(items[i]);
		if (c < 0)
			return usage_error(msg, len, "--cases '%s': unknown case '%s' (use %s)", arg, items[i], DEFAULT_CASES);
		for (size_t j = 0; j < cfg->n_cases; j++)
			if (cfg->cases[j] == c)
				return usage_error(msg, len, "--cases '%s': '%s' listed twice", arg, items[i]);
		cfg->cases[cfg->n_cases++] = c;
	}
	return CLI_RUN;
}

/* Whether the workload declares option (its --help lists it): cross-checks apply only then. */
static bool workload_has_param(const struct workload_ops *w, const char *option)
{
	for (const struct workload_param *p = w->params; p && p->option; p++)
		if (strcmp(p->option, option) == 0)
			return true;
	return false;
}

static bool cpu_usable(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return false;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return cpu < sysconf(_SC_NPROCESSORS_ONLN);
	return CPU_ISSET(cpu, &set);
}

/*
 * Check that FILE can be written: not a directory, and its directory exists
 * and is writable. A symlink is checked where the write lands: the file at
 * the end of its chain, which need not exist yet (report_link_target()).
 */
static bool output_dir_writable(const char *file)
{
	char *path = report_link_target(file), dir[4096];
	struct stat st;
	bool ok;

	if (!path)
		return false;
	const char *slash = strrchr(path, '/');
	/* A directory is no file, and a directory name longer than dir holds cannot be checked: both fail. */
	if ((stat(path, &st) == 0 && S_ISDIR(st.st_mode)) || (slash && (size_t)(slash - path) >= sizeof(dir)))
		ok = false;
	else if (!slash)
		ok = access(".", W_OK) == 0;
	else if (slash == path)
		ok = access("/", W_OK) == 0;
	else
		ok = snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) > 0 && access(dir, W_OK) == 0;
	free(path);
	return ok;
}

static enum cli_result set_defaults(struct tlbprof_config *cfg, char *msg, size_t len)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->workload = workload_find("chase");
	cfg->cpu = -1;
	cfg->repeat = DEFAULT_REPEAT;
	cfg->seed = DEFAULT_SEED;
	cfg->layout = LAYOUT_COLORED;
	cfg->warmup_frac = 0.1;
	cfg->controls = CONTROLS_AUTO;
	cfg->fail_on = FAIL_ON_FAIL;
	cfg->iterations_auto = true;
	cfg->precision = DEFAULT_PRECISION;
	cfg->time_budget_s = DEFAULT_TIME_BUDGET;
	cfg->allocations = DEFAULT_REALLOC;
	cfg->processes = DEFAULT_PROCESSES;
	const char *tmpdir = getenv("TMPDIR");
	cfg->dir = tmpdir && *tmpdir ? tmpdir : "/tmp";
	cfg->child_phase = -1;
	cfg->child_fd = -1;
	cfg->control_ctl_fd = -1;
	cfg->control_ack_fd = -1;
	if (parse_cases(DEFAULT_CASES, cfg, msg, len) != CLI_RUN)
		return usage_error(msg, len, "internal error: bad built-in default");
	if (parse_pages(DEFAULT_PAGES, cfg, msg, len) != CLI_RUN || parse_sizes(DEFAULT_SIZE, cfg, msg, len) != CLI_RUN ||
	    parse_strides(DEFAULT_STRIDES, cfg, msg, len) != CLI_RUN ||
	    parse_size(DEFAULT_STRIDE, &cfg->stride_bytes) || parse_count(DEFAULT_ITERS, &cfg->iterations))
		return usage_error(msg, len, "internal error: bad built-in default");
	return CLI_RUN;
}

/*
 * A getopt_long error as one line: a missing value, a value given to a flag,
 * an unknown option, or (cmd != NULL) an option that only measuring takes.
 */
static enum cli_result option_error(const char *cmd, int c, char **argv, const struct option *opts, char *msg,
				    size_t len)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		return usage_error(msg, len, "option '%s' needs a value", arg);
	if (strncmp(arg, "--", 2) == 0) {
		const char *eq = strchr(arg, '=');
		size_t n = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
		for (const struct option *o = opts; o->name; o++)
			if (eq && o->has_arg == no_argument && strlen(o->name) == n && memcmp(o->name, arg + 2, n) == 0)
				return usage_error(msg, len, "option '--%s' takes no value ('%s')", o->name, arg);
		for (const struct option *o = long_options; cmd && o->name; o++)
			if (strlen(o->name) == n && memcmp(o->name, arg + 2, n) == 0)
				return usage_error(msg, len, "%s: option '--%.*s' applies only to measuring", cmd, (int)n,
						   arg + 2);
		return usage_error(msg, len, "unknown option '%s' (see tlbprof %s%s--help)", arg, cmd ? cmd : "",
				   cmd ? " " : "");
	}
	return usage_error(msg, len, "unknown option '-%c' (see tlbprof %s%s--help)", optopt ? optopt : '?',
			   cmd ? cmd : "", cmd ? " " : "");
}

/* Parse --format: known names, each once. */
static enum cli_result parse_formats(const char *arg, struct tlbprof_config *cfg, char *msg, size_t len)
{
	char buf[256], *items[OUTPUT_FORMATS + 1];
	int n = split_list("--format", arg, "formats", buf, sizeof(buf), items, OUTPUT_FORMATS, msg, len);

	if (n < 0)
		return CLI_USAGE;
	cfg->n_formats = 0;
	cfg->formats_arg = arg;
	for (int i = 0; i < n; i++) {
		int f = output_format_from_name(items[i]);
		if (f < 0)
			return usage_error(msg, len, "--format '%s': unknown format '%s' (use json, gbench, openmetrics, junit, csv)",
					   arg, items[i]);
		for (size_t j = 0; j < cfg->n_formats; j++)
			if (cfg->formats[j] == (enum output_format)f)
				return usage_error(msg, len, "--format '%s': '%s' listed twice", arg, items[i]);
		cfg->formats[cfg->n_formats++] = (enum output_format)f;
	}
	return CLI_RUN;
}

/* The format whose "NAME=" starts s, or -1: how --output FORMAT=PATH is told from a plain path. */
static int output_map_prefix(const char *s)
{
	for (int f = 0; f < OUTPUT_FORMATS; f++) {
		const char *name = output_format_name((enum output_format)f);
		size_t n = strlen(name);
		if (strncmp(s, name, n) == 0 && s[n] == '=')
			return f;
	}
	return -1;
}

/*
 * Parse --output FORMAT=PATH[,FORMAT=PATH...]. A comma ends a path only where
 * the next FORMAT= follows, so "junit=a,b.xml" is one file; a path holding
 * ",gbench=" goes in its own --output. The paths are copied into the config.
 */
static enum cli_result parse_output_map(const char *arg, struct tlbprof_config *cfg, char *msg, size_t len)
{
	if (cfg->output_path)
		return usage_error(msg, len, "--output '%s': FORMAT=PATH cannot be combined with --output '%s'", arg,
				   cfg->output_path);
	for (const char *p = arg; *p;) {
		int f = output_map_prefix(p);
		const char *name = output_format_name((enum output_format)f), *path = p + strlen(name) + 1, *end = path;
		while (*end && !(*end == ',' && output_map_prefix(end + 1) >= 0))
			end++;
		size_t n = (size_t)(end - path);
		if (!n)
			return usage_error(msg, len, "--output '%s': no path for %s (give %s=FILE or %s=-)", arg, name, name,
					   name);
		if (cfg->format_paths[f])
			return usage_error(msg, len, "--output '%s': %s given twice", arg, name);
		if (n + 1 > sizeof(cfg->output_map_buf) - cfg->output_map_used)
			return usage_error(msg, len, "--output '%s': paths too long", arg);
		char *copy = cfg->output_map_buf + cfg->output_map_used;
		memcpy(copy, path, n);
		copy[n] = '\0';
		cfg->output_map_used += n + 1;
		cfg->format_paths[f] = copy;
		cfg->output_map[cfg->n_output_map++] = (enum output_format)f;
		p = *end ? end + 1 : end;
	}
	return CLI_RUN;
}

/*
 * The options every command takes: --json, --format, --output, --fail-on,
 * --quiet, --help, --version, --events-dir. Returns true when c is one of
 * them; *r then says how parsing goes on (CLI_RUN: keep going).
 */
static bool parse_shared(int c, const char *arg, void (*usage)(FILE *f), struct tlbprof_config *cfg,
			 enum cli_result *r, char *msg, size_t len)
{
	*r = CLI_RUN;
	switch (c) {
	case OPT_EVENTS_DIR:
		if (access(arg, R_OK | X_OK) != 0)
			*r = usage_error(msg, len, "--events-dir '%s': not a readable directory", arg);
		cfg->events_dir = arg;
		return true;
	case OPT_JSON:
		if (!*arg)
			*r = usage_error(msg, len, "--json '': give a file name or - for stdout");
		cfg->json_path = arg;
		return true;
	case OPT_FORMAT:
		*r = parse_formats(arg, cfg, msg, len);
		return true;
	case OPT_OUTPUT:
		if (!*arg)
			*r = usage_error(msg, len, "--output '': give a file, a directory, - for stdout or FORMAT=FILE");
		else if (output_map_prefix(arg) >= 0)
			*r = parse_output_map(arg, cfg, msg, len);
		else if (cfg->n_output_map)
			*r = usage_error(msg, len, "--output '%s': cannot be combined with --output FORMAT=PATH", arg);
		else
			cfg->output_path = arg;
		return true;
	case OPT_FAIL_ON:
		if (strcmp(arg, "fail") == 0)
			cfg->fail_on = FAIL_ON_FAIL;
		else if (strcmp(arg, "warn") == 0)
			cfg->fail_on = FAIL_ON_WARN;
		else if (strcmp(arg, "never") == 0)
			cfg->fail_on = FAIL_ON_NEVER;
		else
			*r = usage_error(msg, len, "--fail-on '%s': use fail, warn or never", arg);
		return true;
	case 'q':
		cfg->quiet = true;
		return true;
	case 'h':
		usage(stdout);
		*r = CLI_EXIT;
		return true;
	case 'V':
		printf("tlbprof %s\n", TLBPROF_VERSION);
		*r = CLI_EXIT;
		return true;
	default:
		return false;
	}
}

/* Checks that the output file of option can be created (CLI_NO_OUTPUT, exit 4, when not). */
static enum cli_result check_output_target(const char *option, const char *path, char *msg, size_t len)
{
	if (path && strcmp(path, "-") != 0 && !output_dir_writable(path)) {
		usage_error(msg, len, "%s '%s': a directory, or its directory does not exist or is not writable", option,
			    path);
		return CLI_NO_OUTPUT;
	}
	return CLI_RUN;
}

/* Whether two output paths name the same file: the same text, or the same existing inode. */
static bool same_output(const char *a, const char *b)
{
	struct stat sa, sb;

	if (strcmp(a, b) == 0)
		return true;
	return strcmp(a, "-") != 0 && strcmp(b, "-") != 0 && stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && S_ISREG(sa.st_mode);
}

/*
 * --output FORMAT=PATH,...: the formats are those named (with --format, the
 * same set); each path is a file or -, no two the same, none the --json file,
 * one stdout at most. Then each must be creatable (CLI_NO_OUTPUT, exit 4).
 */
static enum cli_result check_output_map(struct tlbprof_config *cfg, char *msg, size_t len)
{
	struct stat st;

	for (size_t i = 0; i < cfg->n_formats; i++)
		if (!cfg->format_paths[cfg->formats[i]])
			return usage_error(msg, len, "--format '%s': %s has no --output %s=PATH (name a path for each format)",
					   cfg->formats_arg, output_format_name(cfg->formats[i]),
					   output_format_name(cfg->formats[i]));
	for (size_t i = 0; i < cfg->n_output_map && cfg->n_formats; i++) {
		bool listed = false;
		for (size_t j = 0; j < cfg->n_formats; j++)
			listed |= cfg->formats[j] == cfg->output_map[i];
		if (!listed)
			return usage_error(msg, len, "--output '%s=%s': --format '%s' does not name %s",
					   output_format_name(cfg->output_map[i]), cfg->format_paths[cfg->output_map[i]],
					   cfg->formats_arg, output_format_name(cfg->output_map[i]));
	}
	cfg->n_formats = cfg->n_output_map;
	memcpy(cfg->formats, cfg->output_map, sizeof(cfg->formats));
	for (size_t i = 0; i < cfg->n_output_map; i++) {
		const char *name = output_format_name(cfg->output_map[i]), *path = cfg->format_paths[cfg->output_map[i]];
		if (path[strlen(path) - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
			return usage_error(msg, len, "--output '%s=%s': a directory (give a file, or --output DIR/ for every "
					   "format)", name, path);
		if (cfg->json_path && same_output(path, cfg->json_path))
			return usage_error(msg, len, "--output '%s=%s': the same %s as --json", name, path,
					   strcmp(path, "-") == 0 ? "stdout" : "file");
		for (size_t j = 0; j < i; j++)
			if (same_output(path, cfg->format_paths[cfg->output_map[j]]))
				return usage_error(msg, len, "--output '%s=%s': the same %s as %s", name, path,
						   strcmp(path, "-") == 0 ? "stdout" : "file", output_format_name(cfg->output_map[j]));
	}
	if (check_output_target("--json", cfg->json_path, msg, len) != CLI_RUN)
		return CLI_NO_OUTPUT;
	for (size_t i = 0; i < cfg->n_output_map; i++) {
		const char *path = cfg->format_paths[cfg->output_map[i]];
		if (strcmp(path, "-") != 0 && !output_dir_writable(path)) {
			usage_error(msg, len, "--output '%s=%s': its directory does not exist or is not writable",
				    output_format_name(cfg->output_map[i]), path);
			return CLI_NO_OUTPUT;
		}
	}
	return CLI_RUN;
}

/*
 * The output options together: --format needs --output (except --format json
 * with --json, which is --json alone); --output alone means json; several
 * formats need a directory or FORMAT=PATH each; one stream cannot take two
 * documents. Then checks that every target can be created (CLI_NO_OUTPUT,
 * exit 4, when not), so a run never ends with nowhere to put its report.
 */
static enum cli_result check_outputs(struct tlbprof_config *cfg, char *msg, size_t len)
{
	const char *out = cfg->output_path;
	struct stat st;

	if (cfg->n_output_map)
		return check_output_map(cfg, msg, len);

	if (cfg->n_formats && !out) {
		if (cfg->n_formats > 1 || cfg->formats[0] != OUTPUT_JSON || !cfg->json_path)
			return usage_error(msg, len, "--format '%s': give --output FILE, DIR/ or - to say where it goes",
					   cfg->formats_arg);
		cfg->n_formats = 0;	/* --format json --json FILE is --json FILE */
	}
	if (out && !cfg->n_formats) {
		cfg->formats[0] = OUTPUT_JSON;
		cfg->n_formats = 1;
	}
	if (out) {
		bool is_dir = strcmp(out, "-") != 0 && stat(out, &st) == 0 && S_ISDIR(st.st_mode);
		if (!is_dir && out[strlen(out) - 1] == '/')
			return usage_error(msg, len, "--output '%s': no such directory", out);
		cfg->output_dir = is_dir;
		if (!is_dir && cfg->n_formats > 1)
			return usage_error(msg, len,
					   "--output '%s': not a directory, and --format '%s' names %zu formats (give a "
					   "directory for several, or FORMAT=FILE for each)",
					   out, cfg->formats_arg, cfg->n_formats);
		if (!is_dir && strcmp(out, "-") == 0 && cfg->json_path && strcmp(cfg->json_path, "-") == 0)
			return usage_error(msg, len, "--output '-': --json already writes to stdout");
		if (!is_dir && cfg->json_path && strcmp(out, "-") != 0 && strcmp(out, cfg->json_path) == 0)
			return usage_error(msg, len, "--output '%s': the same file as --json", out);
	}
	if (check_output_target("--json", cfg->json_path, msg, len) != CLI_RUN)
		return CLI_NO_OUTPUT;
	if (out && cfg->output_dir && access(out, W_OK | X_OK) != 0) {
		usage_error(msg, len, "--output '%s': directory not writable: %s", out, strerror(errno));
		return CLI_NO_OUTPUT;
	}
	if (out && !cfg->output_dir && strcmp(out, "-") != 0 && !output_dir_writable(out)) {
		usage_error(msg, len, "--output '%s': its directory does not exist or is not writable", out);
		return CLI_NO_OUTPUT;
	}
	return CLI_RUN;
}

static enum cli_result parse_measure(int argc, char **argv, struct tlbprof_config *cfg, char *msg, size_t len);

enum cli_result cli_parse(int argc, char **argv, struct tlbprof_config *cfg, char *msg, size_t len)
{
	/* getopt_long permutes the array it parses: give it a copy, so argv stays the command as typed. */
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	enum cli_result r = set_defaults(cfg, msg, len);

	if (!args)
		return usage_error(msg, len, "out of memory");
	memcpy(args, argv, (size_t)argc * sizeof(*args));
	opterr = 0;
	optind = 0;	/* 0, not 1: glibc then resets all its state (cli_parse may run more than once) */
	const struct cli_command *cmd = NULL;
	for (size_t i = 0; argc > 1 && i < N_COMMANDS; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			cmd = &commands[i];
	cfg->argc = argc;
	cfg->argv = argv;
	if (r == CLI_RUN && cmd) {
		cfg->command = cmd->command;
		r = cmd->parse(argc - 1, args + 1, cfg, msg, len);
	} else if (r == CLI_RUN) {
		r = parse_measure(argc, args, cfg, msg, len);
	}
	cfg->argc = argc;
	cfg->argv = argv;
	free(args);
	return r;
}

/* tlbprof analyze [OPTIONS] REPORT.json (argv[0] is "analyze"). */
static enum cli_result parse_analyze(int argc, char **argv, struct tlbprof_config *cfg, char *msg, size_t len)
{
	static const struct option opts[] = {
		{ "json", required_argument, NULL, OPT_JSON },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "fail-on", required_argument, NULL, OPT_FAIL_ON },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum cli_result r;
	int c;

	while ((c = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
		if (!parse_shared(c, optarg, usage_analyze, cfg, &r, msg, len))
			return option_error("analyze", c, argv, opts, msg, len);
		if (r != CLI_RUN)
			return r;
	}
	if (optind >= argc)
		return usage_error(msg, len, "analyze: give the report to analyse (tlbprof analyze FILE)");
	if (optind + 1 < argc)
		return usage_error(msg, len, "analyze: unexpected argument '%s' (one report at a time)", argv[optind + 1]);
	cfg->input_path = argv[optind];
	if (access(cfg->input_path, R_OK) != 0)
		return usage_error(msg, len, "analyze: '%s': %s", cfg->input_path, strerror(errno));
	return check_outputs(cfg, msg, len);
}

/* tlbprof env [OPTIONS] (argv[0] is "env"). */
static enum cli_result parse_env(int argc, char **argv, struct tlbprof_config *cfg, char *msg, size_t len)
{
	static const struct option opts[] = {
		{ "json", required_argument, NULL, OPT_JSON },
		{ "events-dir", required_argument, NULL, OPT_EVENTS_DIR },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum cli_result r;
	int c;

	while ((c = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
		if (!parse_shared(c, optarg, usage_env, cfg, &r, msg, len))
			return option_error("env", c, argv, opts, msg, len);
		if (r != CLI_RUN)
			return r;
	}
	if (optind < argc)
		return usage_error(msg, len, "env: unexpected argument '%s' (see tlbprof env --help)", argv[optind]);
	return check_outputs(cfg, msg, len);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Whether dir holds NAME.events (a map for PMU name, never "generic"); when
 * not, known gets the map names there, sorted and comma-separated.
 */
static bool pmu_map_exists(const char *dir, const char *name, char *known, size_t known_len)
{
	char names[64][64];
	char *sorted[64];
	size_t n = 0;
	bool found = false;
	DIR *d = opendir(dir);
	struct dirent *de;

	known[0] = '\0';
	while (d && (de = readdir(d)) != NULL && n < 64) {
		size_t l = strlen(de->d_name);
		if (l <= 7 || l - 7 >= sizeof(names[0]) || strcmp(de->d_name + l - 7, ".events") != 0)
			continue;
		snprintf(names[n], sizeof(names[n]), "%.*s", (int)(l - 7), de->d_name);
		if (strcmp(names[n], "generic") == 0)
			continue;
		found |= strcmp(names[n], name) == 0;
		sorted[n] = names[n];
		n++;
	}
	if (d)
		closedir(d);
	qsort(sorted, n, sizeof(sorted[0]), cmp_str);
	for (size_t i = 0; i < n; i++)
		snprintf(known + strlen(known), known_len - strlen(known), "%s%s", i ? ", " : "", sorted[i]);
	return found;
}

/* tlbprof events [OPTIONS] (argv[0] is "events"). */
static enum cli_result parse_events(int argc, char **argv, struct tlbprof_config *cfg, char *msg, size_t len)
{
	static const struct option opts[] = {
		{ "pmu", required_argument, NULL, OPT_PMU },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "events-dir", required_argument, NULL, OPT_EVENTS_DIR },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum cli_result r;
	int c;

	while ((c = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
		if (c == OPT_PMU) {
			cfg->pmu = optarg;
			continue;
		}
		if (!parse_shared(c, optarg, usage_events, cfg, &r, msg, len))
			return option_error("events", c, argv, opts, msg, len);
		if (r != CLI_RUN)
			return r;
	}
	if (optind < argc)
		return usage_error(msg, len, "events: unexpected argument '%s' (see tlbprof events --help)",
				   argv[optind]);
	/* Checked after the loop: --events-dir may come after --pmu. */
	if (cfg->pmu) {
		const char *dir = tlbprof_events_dir(cfg);
		char known[1024];
		if (!dir)
			dir = counters_default_events_dir();
		bool found = pmu_map_exists(dir, cfg->pmu, known, sizeof(known));
		/* generic.events is there, but it is what any PMU without a map falls back to: there is no PMU to force. */
		if (strcmp(cfg->pmu, "generic") == 0)
			return usage_error(msg, len, "--pmu 'generic': generic is the fallback map, not a PMU "
					   "(a PMU without a map of its own uses it); known PMUs: %s",
					   known[0] ? known : "none");
		if (!found)
			return usage_error(msg, len, "--pmu '%s': no map %s/%s.events (known: %s)", cfg->pmu, dir,
					   cfg->pmu, known[0] ? known : "none");
	}
	return check_outputs(cfg, msg, len);
}

/* --control fifo:CTL[,ACK] or fd:CTL[,ACK], as perf stat spells it. */
static enum cli_result parse_control(const char *arg, struct tlbprof_config *cfg, char *msg, size_t len)
{
	static char paths[2][4096];
	const char *spec;

	if (strncmp(arg, "fifo:", 5) == 0) {
		spec = arg + 5;
		const char *comma = strchr(spec, ',');
		size_t n = comma ? (size_t)(comma - spec) : strlen(spec);
		if (n == 0 || n >= sizeof(paths[0]) || (comma && (!comma[1] || strlen(comma + 1) >= sizeof(paths[1]))))
			return usage_error(msg, len, "--control '%s': use fifo:CTL[,ACK] or fd:CTL[,ACK]", arg);
		snprintf(paths[0], sizeof(paths[0]), "%.*s", (int)n, spec);
		snprintf(paths[1], sizeof(paths[1]), "%s", comma ? comma + 1 : "");
		for (int i = 0; i < (comma ? 2 : 1); i++) {
			struct stat st;
			if (stat(paths[i], &st) != 0 || !S_ISFIFO(st.st_mode))
				return usage_error(msg, len, "--control '%s': '%s' is not a FIFO (make it with mkfifo)", arg,
						   paths[i]);
		}
		cfg->control_ctl_path = paths[0];
		cfg->control_ack_path = comma ? paths[1] : NULL;
		return CLI_RUN;
	}
	if (strncmp(arg, "fd:", 3) == 0) {
		char *end;
		long ctl = strtol(arg + 3, &end, 10), ack = -1;
		if (end == arg + 3 || ctl < 0 || ctl > INT32_MAX || (*end && *end != ','))
			return usage_error(msg, len, "--control '%s': use fifo:CTL[,ACK] or fd:CTL[,ACK]", arg);
		if (*end == ',') {
			const char *a = end + 1;
			ack = strtol(a, &end, 10);
			if (end == a || *end || ack < 0 || ack > INT32_MAX)
				return usage_error(msg, len, "--control '%s': use fifo:CTL[,ACK] or fd:CTL[,ACK]", arg);
		}
		if (fcntl((int)ctl, F_GETFD) < 0 || (ack >= 0 && fcntl((int)ack, F_GETFD) < 0))
			return usage_error(msg, len, "--control '%s': fd %ld is not open", arg,
					   fcntl((int)ctl, F_GETFD) < 0 ? ctl : ack);
		cfg->control_ctl_fd = (int)ctl;
		cfg->control_ack_fd = (int)ack;
		return CLI_RUN;
	}
	return usage_error(msg, len, "--control '%s': use fifo:CTL[,ACK] or fd:CTL[,ACK]", arg);
}

/* tlbprof run [OPTIONS] [--] CMD [ARGS...] (argv[0] is "run"). */
static enum cli_result parse_run(int argc, char **argv, struct tlbprof_config *cfg, char *msg, size_t len)
{
	static const struct option opts[] = {
		{ "control", required_argument, NULL, OPT_CONTROL },
		{ "delay", required_argument, NULL, 'D' },
		{ "sample", required_argument, NULL, OPT_SAMPLE },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "events-dir", required_argument, NULL, OPT_EVENTS_DIR },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "fail-on", required_argument, NULL, OPT_FAIL_ON },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum cli_result r;
	uint64_t v;
	int c;

	/* "+": stop at the first operand, so CMD's own options stay CMD's (as with perf stat). */
	while ((c = getopt_long(argc, argv, "+:qhD:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_CONTROL:
			if ((r = parse_control(optarg, cfg, msg, len)) != CLI_RUN)
				return r;
			break;
		case OPT_SAMPLE:
			if (strcmp(optarg, "page-faults") == 0)
				cfg->sample = SAMPLE_PAGE_FAULTS;
			else if (strcmp(optarg, "dtlb-misses") == 0)
				cfg->sample = SAMPLE_DTLB_MISSES;
			else
				return usage_error(msg, len, "--sample '%s': use page-faults or dtlb-misses", optarg);
			break;
		case 'D':
			if (strcmp(optarg, "-1") == 0)
				cfg->start_disabled = true;
			else if (strcmp(optarg, "0") != 0)
				return usage_error(msg, len, "--delay '%s': use -1 (start disabled) or 0", optarg);
			break;
		case OPT_CPU:
			if (parse_count(optarg, &v) || v >= CPU_SETSIZE || !cpu_usable((int)v))
				return usage_error(msg, len, "--cpu '%s': no such online CPU available to this process",
						   optarg);
			cfg->cpu = (int)v;
			break;
		default:
			if (!parse_shared(c, optarg, usage_run, cfg, &r, msg, len))
				return option_error("run", c, argv, opts, msg, len);
			if (r != CLI_RUN)
				return r;
			break;
		}
	}
	if (optind >= argc)
		return usage_error(msg, len, "run: give the command to run (tlbprof run [OPTIONS] -- CMD [ARGS...])");
	char found[4096];
	if (!tlbprof_find_command(argv[optind], found, sizeof(found)))
		return usage_error(msg, len, "run: '%s': command not found or not executable", argv[optind]);
	/* Into the caller's argv (ours is a copy that cli_parse frees), which ends in NULL. */
	cfg->run_argv = cfg->argv + 1 + optind;
	return check_outputs(cfg, msg, len);
}

/* tlbprof compare [OPTIONS] BASE.json NEW.json (argv[0] is "compare"). */
static enum cli_result parse_compare(int argc, char **argv, struct tlbprof_config *cfg, char *msg, size_t len)
{
	static const struct option opts[] = {
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "fail-on", required_argument, NULL, OPT_FAIL_ON },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum cli_result r;
	int c;

	/* A check that merely got worse (pass -> warn) is flagged; by default only one that now fails fails CI. */
	cfg->fail_on = FAIL_ON_FAIL;
	cfg->threshold_pct = COMPARE_DEFAULT_THRESHOLD_PCT;
	while ((c = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
		if (c == OPT_THRESHOLD) {
			if (parse_double(optarg, &cfg->threshold_pct) ||
			    !(cfg->threshold_pct > 0 && cfg->threshold_pct < MAX_THRESHOLD_PCT))
				return usage_error(msg, len, "--threshold '%s': must be a percentage above 0 and below %.0f",
						   optarg, MAX_THRESHOLD_PCT);
			continue;
		}
		if (!parse_shared(c, optarg, usage_compare, cfg, &r, msg, len))
			return option_error("compare", c, argv, opts, msg, len);
		if (r != CLI_RUN)
			return r;
	}
	if (argc - optind < 2)
		return usage_error(msg, len, "compare: give two reports (tlbprof compare BASE.json NEW.json)");
	if (argc - optind > 2)
		return usage_error(msg, len, "compare: unexpected argument '%s' (two reports: BASE.json NEW.json)",
				   argv[optind + 2]);
	cfg->input_path = argv[optind];
	cfg->compare_path = argv[optind + 1];
	for (int i = 0; i < 2; i++) {
		const char *path = i ? cfg->compare_path : cfg->input_path;
		if (access(path, R_OK) != 0)
			return usage_error(msg, len, "compare: '%s': %s", path, strerror(errno));
	}
	return check_outputs(cfg, msg, len);
}

/* tlbprof plot REPORT.json -o FILE (argv[0] is "plot"). */
static enum cli_result parse_plot(int argc, char **argv, struct tlbprof_config *cfg, char *msg, size_t len)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct stat in_st, out_st;
	enum cli_result r;
	int c;

	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		if (c == 'o') {
			if (!*optarg)
				return usage_error(msg, len, "-o '': give a file name or - for stdout");
			cfg->output_path = optarg;
			continue;
		}
		if (!parse_shared(c, optarg, usage_plot, cfg, &r, msg, len))
			return option_error("plot", c, argv, opts, msg, len);
		if (r != CLI_RUN)
			return r;
	}
	if (optind >= argc)
		return usage_error(msg, len, "plot: give the report to draw (tlbprof plot REPORT.json -o FILE.svg)");
	if (optind + 1 < argc)
		return usage_error(msg, len, "plot: unexpected argument '%s' (one report at a time)", argv[optind + 1]);
	cfg->input_path = argv[optind];
	if (!cfg->output_path)
		return usage_error(msg, len, "plot: -o FILE is required (the SVG to write, or - for stdout)");
	if (access(cfg->input_path, R_OK) != 0)
		return usage_error(msg, len, "plot: '%s': %s", cfg->input_path, strerror(errno));
	/* Writing the SVG over the report it is drawn from would lose the measurement. */
	if (strcmp(cfg->output_path, "-") != 0 && stat(cfg->input_path, &in_st) == 0 &&
	    stat(cfg->output_path, &out_st) == 0 && in_st.st_dev == out_st.st_dev && in_st.st_ino == out_st.st_ino)
		return usage_error(msg, len, "-o '%s': that is the report being drawn; write the SVG elsewhere",
				   cfg->output_path);
	return check_output_target("-o", cfg->output_path, msg, len);
}

/* tlbprof [OPTIONS]: measure with a workload. */
static enum cli_result parse_measure(int argc, char **argv, struct tlbprof_config *cfg, char *msg, size_t len)
{
	enum cli_result r;
	uint64_t v;
	int c, rc;

	while ((c = getopt_long(argc, argv, ":qhV", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_WORKLOAD:
			cfg->workload = workload_find(optarg);
			if (!cfg->workload) {
				char known[128] = "";
				for (size_t i = 0; workload_registry[i]; i++)
					snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
						 i ? ", " : "", workload_registry[i]->name);
				return usage_error(msg, len, "--workload '%s': unknown workload (known: %s)", optarg,
						   known);
			}
			break;
		case OPT_PAGES:
			if ((r = parse_pages(optarg, cfg, msg, len)) != CLI_RUN)
				return r;
			break;
		case OPT_SIZE:
			if ((r = parse_sizes(optarg, cfg, msg, len)) != CLI_RUN)
				return r;
			cfg->size_set = true;
			break;
		case OPT_STRIDE:
			rc = parse_size(optarg, &v);
			if (rc)
				return usage_error(msg, len, "--stride '%s': %s", optarg,
						   rc == -ERANGE ? "out of range" : "not a size (use e.g. 64, 4K)");
			if (v < 8 || (v & (v - 1)))
				return usage_error(msg, len, "--stride '%s': must be a power of two of at least 8 bytes",
						   optarg);
			cfg->stride_bytes = v;
			break;
		case OPT_ITERS:
			if (strcmp(optarg, "auto") == 0) {
				cfg->iterations_auto = true;
				cfg->iterations_set = true;
				break;
			}
			rc = parse_count(optarg, &v);
			if (rc)
				return usage_error(msg, len, "--iters '%s': %s (use auto or a count)", optarg, errno_phrase(rc));
			if (v == 0 || v > (1ull << 40))
				return usage_error(msg, len, "--iters '%s': must be auto or between 1 and 2^40", optarg);
			cfg->iterations = v;
			cfg->iterations_set = true;
			cfg->iterations_auto = false;
			break;
		case OPT_PRECISION:
			if (parse_double(optarg, &cfg->precision) || !(cfg->precision > 0 && cfg->precision < 1))
				return usage_error(msg, len, "--precision '%s': must be a number above 0 and below 1", optarg);
			break;
		case OPT_TIME_BUDGET:
			if (parse_double(optarg, &cfg->time_budget_s) || !(cfg->time_budget_s > 0 && cfg->time_budget_s <= 3600))
				return usage_error(msg, len, "--time-budget '%s': must be seconds above 0, at most 3600", optarg);
			break;
		case OPT_REALLOC:
			rc = parse_count(optarg, &v);
			if (rc || v < 1 || v > MAX_REALLOC)
				return usage_error(msg, len, "--realloc '%s': must be a whole number from 1 to %d", optarg,
						   MAX_REALLOC);
			cfg->allocations = (unsigned)v;
			break;
		case OPT_WARMUP:
			if (parse_double(optarg, &cfg->warmup_frac) || cfg->warmup_frac < 0 || cfg->warmup_frac > 1)
				return usage_error(msg, len, "--warmup-frac '%s': must be a number from 0 to 1", optarg);
			break;
		case OPT_REPEAT:
			rc = parse_count(optarg, &v);
			if (rc || v < 1 || v > MAX_REPEAT)
				return usage_error(msg, len, "--repeat '%s': must be a whole number from 1 to %d", optarg,
						   MAX_REPEAT);
			cfg->repeat = (unsigned)v;
			break;
		case OPT_SEED:
			rc = parse_count(optarg, &cfg->seed);
			if (rc)
				return usage_error(msg, len, "--seed '%s': %s", optarg, errno_phrase(rc));
			break;
		case OPT_CPU:
			rc = parse_count(optarg, &v);
			if (rc || v >= CPU_SETSIZE || !cpu_usable((int)v))
				return usage_error(msg, len, "--cpu '%s': no such online CPU available to this process",
						   optarg);
			cfg->cpu = (int)v;
			break;
		case OPT_LAYOUT:
			if (strcasecmp(optarg, "colored") == 0)
				cfg->layout = LAYOUT_COLORED;
			else if (strcasecmp(optarg, "aligned") == 0)
				cfg->layout = LAYOUT_ALIGNED;
			else
				return usage_error(msg, len, "--layout '%s': use colored or aligned", optarg);
			break;
		case OPT_STRIDES:
			if ((r = parse_strides(optarg, cfg, msg, len)) != CLI_RUN)
				return r;
			break;
		case OPT_MAX_PAGES:
			rc = parse_count(optarg, &v);
			if (rc || v < 2 || v > MAX_PAGES_LIMIT)
				return usage_error(msg, len, "--max-pages '%s': must be a whole number from 2 to %llu", optarg,
						   (unsigned long long)MAX_PAGES_LIMIT);
			cfg->max_pages = v;
			break;
		case OPT_CASES:
			if ((r = parse_cases(optarg, cfg, msg, len)) != CLI_RUN)
				return r;
			break;
		case OPT_PROCESSES:
			rc = parse_count(optarg, &v);
			if (rc || v < 1 || v > MAX_PROCESSES)
				return usage_error(msg, len, "--processes '%s': must be a whole number from 1 to %d", optarg,
						   MAX_PROCESSES);
			cfg->processes = (unsigned)v;
			break;
		case OPT_DIR: {
			struct stat st;
			if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode) || access(optarg, W_OK | X_OK) != 0)
				return usage_error(msg, len, "--dir '%s': not a writable directory", optarg);
			cfg->dir = optarg;
			break;
		}
		case OPT_DROP_CACHES:
			if (geteuid() != 0)
				return usage_error(msg, len, "--drop-caches: needs root (it writes /proc/sys/vm/drop_caches)");
			cfg->drop_caches = true;
			break;
		case OPT_INTERNAL_CHILD: {
			/* PHASE:FD[:FILE], written by the parent process only. */
			char *end;
			long ph = strtol(optarg, &end, 10), fd;
			if (end == optarg || *end != ':' || ph < 0)
				return usage_error(msg, len, "--internal-child '%s': not PHASE:FD[:FILE]", optarg);
			fd = strtol(end + 1, &end, 10);
			if (fd < 0 || (*end != '\0' && *end != ':'))
				return usage_error(msg, len, "--internal-child '%s': not PHASE:FD[:FILE]", optarg);
			cfg->child_phase = (int)ph;
			cfg->child_fd = (int)fd;
			cfg->child_file = *end == ':' && end[1] ? end + 1 : NULL;
			break;
		}
		case OPT_CONTROLS:
			if (strcmp(optarg, "auto") == 0)
				cfg->controls = CONTROLS_AUTO;
			else if (strcmp(optarg, "none") == 0)
				cfg->controls = CONTROLS_NONE;
			else if (strcmp(optarg, "always") == 0)
				cfg->controls = CONTROLS_ALWAYS;
			else
				return usage_error(msg, len, "--controls '%s': use auto, always or none", optarg);
			break;
		default:
			if (!parse_shared(c, optarg, cli_usage, cfg, &r, msg, len))
				return option_error(NULL, c, argv, long_options, msg, len);
			if (r != CLI_RUN)
				return r;
			break;
		}
	}
	if (optind < argc)
		return usage_error(msg, len, "unexpected argument '%s' (see tlbprof --help)", argv[optind]);

	/* A page-fault run needs no cache-busting working set: its own default size. */
	if (strcmp(cfg->workload->name, "pagefault") == 0 && !cfg->size_set)
		parse_sizes(DEFAULT_FAULT_SIZE, cfg, msg, len);

	/* Cross-option checks. */
	/* Each check only where the workload uses the option (its parameter list says so). */
	if (workload_has_param(cfg->workload, "--max-pages")) {
		bool base = false;
		for (size_t i = 0; i < cfg->n_pages; i++)
			base |= cfg->pages[i].kind == PAGE_BASE;
		if (!base)
			return usage_error(msg, len, "--pages: the tlbsize workload counts 4 KiB pages; include 4k");
	}
	for (size_t i = 0; i < cfg->n_sizes; i++) {
		for (size_t k = 0; workload_has_param(cfg->workload, "--strides") && k < cfg->n_strides; k++) {
			char s[16], t[16];
			if (cfg->sizes_bytes[i] < 2 * cfg->strides_bytes[k])
				return usage_error(msg, len, "--strides: '%s' must be at most half of --size '%s'",
						   format_size(cfg->strides_bytes[k], t, sizeof(t)),
						   format_size(cfg->sizes_bytes[i], s, sizeof(s)));
		}
		char s[16], t[16];
		if (workload_has_param(cfg->workload, "--stride") && cfg->sizes_bytes[i] < 2 * cfg->stride_bytes)
			return usage_error(msg, len,
					   "--stride '%s': must be at most half of --size '%s' (a chain needs 2 slots)",
					   format_size(cfg->stride_bytes, t, sizeof(t)),
					   format_size(cfg->sizes_bytes[i], s, sizeof(s)));
	}
	return check_outputs(cfg, msg, len);
}
