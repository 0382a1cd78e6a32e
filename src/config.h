/* SPDX-License-Identifier: MIT */
/* The run configuration the command line produces: plain data, validated, read-only after cli_parse(). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONFIG_MAX_PAGES 8
#define CONFIG_MAX_SIZES 32
#define CONFIG_MAX_STRIDES 32
/* Room for the paths of --output FORMAT=PATH,... (all of them, with their terminators). */
#define CONFIG_OUTPUT_MAP_BYTES 8192

/* How a page size is obtained. */
enum page_kind {
	PAGE_BASE,	/* the kernel's base page (4 KiB), THP disabled for the region */
	PAGE_THP,	/* transparent huge pages (2 MiB) via MADV_HUGEPAGE */
	PAGE_HUGETLB,	/* hugetlbfs pool pages via MAP_HUGETLB (2 MiB or 1 GiB) */
};

/* One requested page size, e.g. "4k", "2m", "2m:hugetlb", "1g". */
struct page_request {
	char label[16];		/* canonical spelling, used in phase names */
	enum page_kind kind;
	uint64_t bytes;		/* requested page size */
};

/* "base", "thp", "hugetlb". */
const char *page_kind_name(enum page_kind k);

/*
 * Parse one page request: "4k" (base pages), "2m" or "2m:thp" (THP),
 * "2m:hugetlb", "1g" or "1g:hugetlb" (hugetlb). Case-insensitive.
 * Returns 0 or -EINVAL.
 */
int page_request_parse(const char *s, struct page_request *out);

enum chase_layout {
	LAYOUT_COLORED,	/* rotate each slot's line inside its stride: spread over all cache sets */
	LAYOUT_ALIGNED,	/* every slot at the start of its stride (the naive layout) */
};

/* "colored", "aligned". */
const char *layout_name(enum chase_layout l);

/* The page-fault cases (--cases). */
enum fault_case {
	FAULT_NONE,		/* not a page-fault phase (zero, so zeroed specs are none) */
	FAULT_ANON_COLD,	/* fresh anonymous mapping, first write */
	FAULT_ANON_REFAULT,	/* touched, MADV_DONTNEED, touched again (timed) */
	FAULT_ANON_PREFAULT,	/* touched before timing: the timed touch must not fault */
	FAULT_FILE_WARM,	/* read-only file mapping, file in the page cache */
	FAULT_FILE_COLD,	/* the same, file evicted from the page cache */
	FAULT_CASES,
};
/* "anon_cold", ...; NULL when out of range. */
const char *fault_case_name(int c);
/* Inverse of fault_case_name(); -1 when unknown. */
int fault_case_from_name(const char *s);
/* Whether a case maps a file (page size then is the page cache's, 4 KiB). */
static inline bool fault_case_is_file(int c)
{
	return c == FAULT_FILE_WARM || c == FAULT_FILE_COLD;
}

/* When to add "packed" control phases (same cache-line footprint on few pages). */
enum controls_mode {
	CONTROLS_AUTO,	/* when no dTLB counters can attribute the delta */
	CONTROLS_NONE,
	CONTROLS_ALWAYS,
};
/* "auto", "none", "always". */
const char *controls_mode_name(enum controls_mode m);

/* Which check level makes the exit status 1. */
enum fail_on {
	FAIL_ON_FAIL,
	FAIL_ON_WARN,
	FAIL_ON_NEVER,
};
/* "fail", "warn", "never". */
const char *fail_on_name(enum fail_on f);

/* The report formats --format names; each goes to --output (a file, or its own file in a directory). */
enum output_format {
	OUTPUT_JSON,		/* the native tlbprof.report/1 (the contract) */
	OUTPUT_GBENCH,		/* Google Benchmark's JSON (--benchmark_format=json) */
	OUTPUT_OPENMETRICS,	/* OpenMetrics text, also valid Prometheus text (node_exporter textfile) */
	OUTPUT_JUNIT,		/* JUnit XML: one test case per check and per phase */
	OUTPUT_CSV,		/* CSV in the manner of perf stat -x, */
	OUTPUT_FORMATS,
};
/* "json", "gbench", "openmetrics", "junit", "csv"; NULL when out of range. */
const char *output_format_name(enum output_format f);
/* Inverse of output_format_name(); -1 when unknown. */
int output_format_from_name(const char *s);

enum tlbprof_command {
	COMMAND_MEASURE,	/* measure with a workload (the default) */
	COMMAND_ANALYZE,	/* re-analyse a saved report */
	COMMAND_COMPARE,	/* compare two saved reports */
	COMMAND_ENV,		/* what this machine can measure, and the fixes (tlbprof env) */
	COMMAND_EVENTS,		/* the metric -> event table (tlbprof events) */
	COMMAND_RUN,		/* run someone else's benchmark: tlbprof run -- CMD */
	COMMAND_PLOT,		/* draw a saved report as SVG */
};

struct workload_ops;

struct tlbprof_config {
	enum tlbprof_command command;
	const char *input_path;		/* analyze: the report to read; compare: the base report */
	const char *compare_path;	/* compare: the new report */
	double threshold_pct;		/* compare: --threshold, percent */
	const char *pmu;		/* events: --pmu, a map name to encode for; NULL: this machine's PMU */
	const struct workload_ops *workload;
	struct page_request pages[CONFIG_MAX_PAGES];
	size_t n_pages;
	uint64_t sizes_bytes[CONFIG_MAX_SIZES];
	size_t n_sizes;
	uint64_t stride_bytes;
	uint64_t strides_bytes[CONFIG_MAX_STRIDES];	/* stride workload: --strides */
	size_t n_strides;
	uint64_t max_pages;		/* tlbsize: largest page count, 0 = from CPUID */
	int cases[FAULT_CASES];		/* pagefault: --cases (enum fault_case), in order */
	size_t n_cases;
	unsigned processes;		/* pagefault: separate processes per case (--processes) */
	const char *dir;		/* pagefault: where the data file lives (--dir) */
	bool drop_caches;		/* pagefault: also drop the global page cache for file_cold (root) */
	bool size_set;			/* --size was given (workloads may otherwise choose their own) */
	/* Internal: this process is a child running one phase for its parent (--internal-child). */
	int child_phase;		/* phase index, -1 when not a child */
	int child_fd;			/* where the child writes its samples */
	const char *child_file;		/* the data file the parent created, or NULL */
	uint64_t iterations;		/* timed accesses per sample */
	bool iterations_set;		/* --iters was given (workloads may otherwise choose their own) */
	bool iterations_auto;		/* --iters auto (the default for chase and stride) */
	double precision;		/* --precision */
	double time_budget_s;		/* --time-budget, per phase */
	unsigned allocations;		/* --realloc */
	double warmup_frac;		/* warm-up accesses = warmup_frac * iterations */
	unsigned repeat;		/* timed samples per phase */
	uint64_t seed;
	int cpu;			/* CPU to pin to, -1 = not pinned */
	enum chase_layout layout;
	const char *events_dir;		/* NULL: installed default */
	enum controls_mode controls;
	enum fail_on fail_on;
	const char *json_path;		/* NULL: no JSON; "-": stdout */
	enum output_format formats[OUTPUT_FORMATS];	/* --format, in the order given, each once */
	size_t n_formats;		/* 0 when nothing goes to --output */
	const char *formats_arg;	/* --format as given, for messages */
	const char *output_path;	/* --output: a file, "-" (stdout) or a directory; plot: -o FILE; NULL: none */
	bool output_dir;		/* output_path is a directory: each format in its own file there */
	/* --output FORMAT=PATH[,FORMAT=PATH...] (repeatable): each format to its own file instead. */
	const char *format_paths[OUTPUT_FORMATS];	/* by format; "-": stdout; NULL: not named */
	enum output_format output_map[OUTPUT_FORMATS];	/* the formats named that way, in order */
	size_t n_output_map;
	char output_map_buf[CONFIG_OUTPUT_MAP_BYTES];	/* storage behind format_paths */
	size_t output_map_used;
	bool quiet;
	/* run: the command (NULL-terminated, borrowed from main's argv) and perf stat --control compatibility. */
	char **run_argv;
	const char *control_ctl_path, *control_ack_path;	/* --control fifo:CTL[,ACK] */
	int control_ctl_fd, control_ack_fd;			/* --control fd:CTL[,ACK], -1 when not given */
	bool start_disabled;					/* --delay -1 */
	enum sample_what { SAMPLE_NONE, SAMPLE_PAGE_FAULTS, SAMPLE_DTLB_MISSES } sample;	/* --sample */
	/* The command line as given, for the report (borrowed from main's argv). */
	int argc;
	char **argv;
};
