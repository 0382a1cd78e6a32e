/* SPDX-License-Identifier: MIT */
/*
 * The only writer of output: the JSON report (jansson, src/report/json.c),
 * the formats for dashboards and CI (src/report/formats.c), the SVG plot
 * (src/report/svg.c), all written atomically (src/report/writer.c), and the
 * table for people (src/report/table.c).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "judge/analysis.h"
#include "judge/compare.h"
#include "types.h"
#include "pmu/counters.h"
#include "machine/diagnose.h"
#include "machine/environment.h"
#include "judge/plot.h"
#include "measure/runner.h"
#include "machine/timing.h"

#define REPORT_SCHEMA "tlbprof.report/1"

/*
 * The report formats --format names; each goes to --output (a file, or its
 * own file in a directory). One table in src/report/formats.c gives each its
 * name, its file name in an --output directory and its writer.
 */
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
/* The same as a choice list: the i-th name, NULL after the last. */
const char *output_format_at(size_t i);
/* Inverse of output_format_name(); -1 when unknown. */
int output_format_from_name(const char *s);
/* Room for the paths of --output FORMAT=PATH,... (all of them, with their terminators). */
#define REPORT_OUTPUT_MAP_BYTES 8192

/* Where a command's documents go and whether it prints: what --json, --format, --output and --quiet said. */
struct report_outputs {
	const char *json_path;		/* NULL: no JSON; "-": stdout */
	enum output_format formats[OUTPUT_FORMATS];	/* --format, in the order given, each once */
	size_t n_formats;		/* 0 when nothing goes to --output */
	const char *formats_arg;	/* --format as given, for messages */
	const char *output_path;	/* --output: a file, "-" (stdout) or a directory; NULL: none */
	bool output_dir;		/* output_path is a directory: each format in its own file there */
	/* --output FORMAT=PATH[,FORMAT=PATH...] (repeatable): each format to its own file instead. */
	const char *format_paths[OUTPUT_FORMATS];	/* by format; "-": stdout; NULL: not named */
	enum output_format output_map[OUTPUT_FORMATS];	/* the formats named that way, in order */
	size_t n_output_map;
	char output_map_buf[REPORT_OUTPUT_MAP_BYTES];	/* storage behind format_paths */
	size_t output_map_used;
	bool quiet;			/* no table (or text) on stdout */
};
#define REPORT_COMPARE_SCHEMA "tlbprof.compare/1"

struct target_result;
struct elf_provenance;
struct workload_ops;

/* tlbprof run: the command, how it ended, and who built it; all borrowed. */
struct target_report {
	char **argv;				/* the command, NULL-terminated */
	const char *path;			/* the executable as found in PATH ("" when not found) */
	const struct target_result *result;
	const struct elf_provenance *binary;	/* NULL when the executable could not be read as ELF */
	const char *binary_error;		/* why not ("" when read) */
};

/* Everything a report is made of; all borrowed. */
struct report_input {
	int argc;				/* the command that measured, as typed */
	char **argv;
	const struct workload_ops *workload;	/* what the command measured with; NULL for tlbprof run */
	enum fail_on fail_on;			/* which check level fails (JUnit marks warnings by it) */
	const struct environment *env;
	const struct timing_calibration *clock;
	const struct counter_set *counters;	/* may be NULL */
	const struct run_results *results;
	const struct analysis *analysis;
	const char *pmu_name;			/* libpfm4's default PMU, "none" */
	/* tlbprof analyze: the report read back and the command that re-analysed it (else NULL/0). */
	const char *reanalyzed_from;
	int analyze_argc;
	char **analyze_argv;
	const void *source;			/* analyze: the report as read (json_t *); its fields are kept */
	const struct target_report *target;	/* tlbprof run, else NULL */
};

/*
 * Write the JSON report to path ("-" = stdout). A file is written to a
 * temporary file in the same directory (created exclusively) and renamed
 * over path, so a reader never sees half a report and an earlier report
 * survives a failed write. Returns 0 or -errno; *err gets a one-line reason.
 */
int report_write_json(const struct report_input *in, const char *path, char *err, size_t err_len);

/* The file name format fmt gets in an --output directory: "tlbprof.json", "tlbprof.gbench.json", "tlbprof.prom", ... */
const char *report_format_file_name(enum output_format fmt);

/*
 * Where format fmt of out goes: its own --output FORMAT=PATH, else DIR/NAME
 * under --output DIR/ (built in buf), else the --output path; "-" is stdout.
 * NULL when DIR/NAME does not fit buf (size PATH_MAX + 32 holds any path
 * open(2) takes).
 */
const char *report_output_path(const struct report_outputs *out, enum output_format fmt, char *buf, size_t size);

/*
 * Write format fmt of the report to the stream f: gbench (Google Benchmark
 * JSON), openmetrics, junit or csv (json: the native report). The mapping
 * of each is in ARCHITECTURE.md. Deterministic for a given input except the
 * gbench "date" and "host_name". Returns 0, or -errno (-ENOMEM) when the
 * document cannot be built; write errors are left on the stream (ferror).
 */
int report_format_write(const struct report_input *in, enum output_format fmt, FILE *f);

/*
 * Write format fmt to path ("-" = stdout) the way report_write_json does
 * (atomically); option ("--output") names the option in the one-line error.
 */
int report_write_format(const struct report_input *in, enum output_format fmt, const char *path, const char *option,
			char *err, size_t err_len);

/*
 * Write a document to path ("-" = stdout) with emit(f, ctx), which returns 0
 * or -errno. A regular file is written to a temporary file in the same
 * directory (created exclusively, ".tlbprof-WHAT.XXXXXX") and renamed over
 * path, so a reader never sees half a document and an earlier one survives
 * a failed write; a symlink keeps pointing at the replaced file (a dangling
 * one gets its file); a device, FIFO or socket is written in place. The file
 * keeps the mode of the one it replaces, a new one gets 0666 less the umask. option names the option in the error
 * ("--json", "-o"), what names the document ("report", "plot"). Returns 0 or
 * -errno with a one-line reason in err.
 */
int report_write_file(const char *path, const char *option, const char *what,
		      int (*emit)(FILE *f, const void *ctx), const void *ctx, char *err, size_t err_len);

/*
 * The file a write to path changes: path itself, or the end of its chain of
 * symlinks, also when that file does not exist yet (a dangling link). The
 * writers above replace that file and keep the links; the cli checks its
 * directory before any work. A link the kernel's fs.protected_symlinks
 * would refuse (another user's, in a sticky world-writable directory) is not
 * followed, whatever the sysctl says: NULL with EACCES. Caller frees; NULL
 * with errno (EACCES, ELOOP, ENOMEM, a readlink error).
 */
char *report_link_target(const char *path);

/*
 * Write the plot as a standalone SVG 1.1 document (no scripts, no external
 * resources) to path ("-" = stdout), atomically as report_write_file() does;
 * errors name option "-o". Every point carries its values (data-x, data-y,
 * data-lo, data-hi) so the file can be checked as well as looked at.
 * Returns 0 or -errno with a one-line reason in err.
 */
int report_write_svg(const struct plot *p, const char *path, char *err, size_t err_len);

/*
 * Whether this tlbprof can rasterise plots: built with librsvg's headers, and
 * librsvg loads now (it is loaded on first use, never linked). Where not, a
 * one-line reason goes into why (why_len bytes).
 */
bool report_png_available(char *why, size_t why_len);

/*
 * Write the plot as a PNG: the SVG report_write_svg() writes, rendered by
 * librsvg, p->render_width_px wide (the height follows), to path as
 * report_write_file() does. Returns 0 or -errno with a one-line reason in
 * err (-ENOTSUP in a build without librsvg, -EFBIG for a picture too tall
 * for cairo).
 */
int report_write_png(const struct plot *p, const char *path, char *err, size_t err_len);

/* Print the human-readable summary and tables to f. */
void report_print_text(const struct report_input *in, FILE *f);
/* "SIGSEGV" for SIGSEGV, "?" for a signal without a name; in a static buffer the next call overwrites. */
const char *report_signal_name(int sig);
/* Whether a document of out goes to stdout (--json -, --output -, a format's -): the table then goes to stderr. */
bool report_outputs_stdout(const struct report_outputs *out);

/* A saved report read back for re-analysis; everything owned by the doc. */
struct report_doc {
	int argc;			/* the command that measured (report.command) */
	char **argv;
	const struct workload_ops *workload;	/* its first phase's, else chase */
	struct environment env;
	struct timing_calibration clock;
	struct run_results results;
	char pmu_name[64];
	void *source;			/* the parsed JSON (json_t *), kept so a re-written report keeps every field */
	char tool_version[32];		/* the tlbprof that wrote it (tool.version); "" when absent */
	/* tlbprof run reports: how the benchmark was built (target.binary), for the build_optimised check. */
	bool has_build;
	char build_binary[256];
	char build_opt_level[8];
	char build_opt_levels[64];
	char build_opt_source[32];
	bool build_defaulted;
	char build_unreadable[128];	/* why the executable was not read as ELF ("" when it was) */
	/* ... and its marker traffic (target.markers), for the marker_protocol check. */
	bool has_markers;
	unsigned marker_messages, marker_refused;
	/* tlbprof run reports: what watching the command found (target.watch), for the unmarked checks; owned. */
	struct sample_profile *watch;
	/* tlbprof run -I: the counts per interval (target.intervals), for the plot; owned, NULL: none. */
	struct plot_intervals *intervals;
	char marker_first_refusal[200];
	/* How the command ended (target.exit_code, signal, repeats, attached, interrupted); has_end: the report says. */
	bool has_end;
	struct analysis_command_end end;
	char end_signal[32];		/* behind end.signal */
	char **strings;			/* owned storage behind argv and self-check ids */
	size_t n_strings, cap_strings;
};

/*
 * Read a tlbprof.report/1 JSON file back into phases, environment and clock,
 * so analysis_run() can recompute its analysis. Every field the analysis uses
 * is type-checked. Returns 0, or -errno (unreadable: -ENOENT, ...) / -EINVAL
 * (not JSON, another schema, a missing or mistyped field) with a one-line
 * reason naming the file and the field in err. Free with report_doc_free().
 */
int report_read_json(const char *path, struct report_doc *doc, char *err, size_t err_len);
void report_doc_free(struct report_doc *doc);

/*
 * Print the table (unless out->quiet; to stderr when a report goes to
 * stdout), write the JSON report when out->json_path asks and each of
 * out->formats to out->output_path (a file, or one file per format in a
 * directory). Returns 0, or -1 after printing the one-line reason of each
 * failed write (exit 4): the table's failure too, and the other outputs are
 * still written; -EINTR when a signal ended a wait for a FIFO's reader (exit
 * 130).
 */
int report_emit(const struct report_input *in, const struct report_outputs *out);

#define REPORT_ENV_SCHEMA "tlbprof.env/1"
#define REPORT_EVENTS_SCHEMA "tlbprof.events/1"

/* What tlbprof env found (src/report/env.c); all borrowed. */
struct report_env_input {
	const struct environment *env;
	const struct timing_calibration *clock;
	const struct counter_set *counters;	/* opened once and closed: statuses as this machine gives them; may be NULL */
	const char *counters_error;		/* why counters is NULL */
	const char *events_dir;			/* where the maps were read */
	const struct env_steal *steal;		/* NULL when it could not be sampled */
	const struct diagnosis *diagnosis;
	int argc;				/* the command line, for the JSON */
	char **argv;
};

/*
 * tlbprof env: print the findings for people (sections, then each problem
 * with its fix; unless out->quiet; to stderr when the JSON goes to stdout)
 * and write tlbprof.env/1 JSON when out->json_path asks. Returns 0, or -1
 * after printing the one-line reason of a failed write (exit 4).
 */
int report_env_emit(const struct report_env_input *in, const struct report_outputs *out);

/* The metric -> event table of tlbprof events; all borrowed. */
struct report_events_input {
	const struct counter_set *counters;
	const char *events_dir;
	bool forced;				/* --pmu: encoded for that PMU, not opened here */
	int argc;
	char **argv;
};

/* tlbprof events: the table (unless quiet) and tlbprof.events/1 JSON; as report_env_emit(). */
int report_events_emit(const struct report_events_input *in, const struct report_outputs *out);

/*
 * The progress line of a measurement (src/report/progress.c): one line on a
 * terminal, "tlbprof: phase 3/7 chase/2m/256M/r0, 4.1 s elapsed, about 6 s
 * left", redrawn in place ("\r" + clear to end of line) at each phase start
 * and, at most four times a second, at the runner's safe points inside a
 * phase, once the run has lasted more than a second; cleared when it ends.
 * The caller decides whether to show one at all (a terminal, not --quiet).
 */
struct report_progress {
	FILE *f;
	uint64_t start_ns;	/* when the run started */
	size_t width;		/* terminal columns: the line is cut to fit */
	bool shown;		/* a line is on the terminal */
	size_t index, n;	/* the phase running (from 0) of n */
	char name[160];		/* its name; "" before the first phase */
	uint64_t phase_start_ns;	/* when it started */
	uint64_t last_draw_ns;	/* when the line was last drawn (0: never) */
};

/* Start the clock of a run whose progress goes to f (a terminal). */
void report_progress_start(struct report_progress *p, FILE *f);

/*
 * The runner's progress hook (arg is the struct report_progress): phase index
 * (from 0) of n is about to start; name NULL: the run ended (clear the line).
 */
void report_progress_phase(void *arg, size_t index, size_t n, const char *name);

/*
 * The runner's tick hook (arg is the struct report_progress), called between
 * timed samples: redraws the line with the time now when the last drawing is
 * 250 ms old or more, else returns after one clock read.
 */
void report_progress_tick(void *arg);

/*
 * Pure: the text of the line for phase index (from 0) of n, elapsed_s into
 * the run and phase_s into the phase; the time left is extrapolated from the
 * pace of the phases done (none before the first ends; the current phase's
 * time so far counts against it). Cut to len - 1 characters: the phase name
 * is shortened first (its middle taken out), then dropped, then "tlbprof: ",
 * so "i/N", the elapsed time and the time left stay whole as long as they
 * fit. Returns the length written.
 */
size_t report_progress_format(char *buf, size_t len, size_t index, size_t n, const char *name, double elapsed_s,
			      double phase_s);

/* Print a one-line error "tlbprof: MSG" to stderr. */
void report_error(const char *msg);

/* What tlbprof compare writes: the table for people, or a markdown summary (a pull request's comment). */
enum report_compare_format { REPORT_COMPARE_TEXT, REPORT_COMPARE_MARKDOWN };
/* "text", "markdown" (--format's choices), NULL-terminated. */
extern const char *const report_compare_format_names[];

/* What the output of tlbprof compare is made of; all borrowed. */
struct report_compare_input {
	const struct compare_result *cmp;
	const char *base_path, *new_path;
	const struct report_doc *base, *new;		/* the two reports as read (each side's first) */
	const struct analysis *base_analysis, *new_analysis;	/* recomputed from them */
	/*
	 * Several reports a side (compare A1 A2 -- B1 B2): every report, path
	 * and analysis of each side, n_base and n_new of them, in the order
	 * given (the fields above are the first of each). n_base 0: one report a
	 * side, the fields above.
	 */
	size_t n_base, n_new;
	const char *const *base_paths, *const *new_paths;
	const struct report_doc *const *base_docs, *const *new_docs;
	const struct analysis *const *base_analyses, *const *new_analyses;
	enum report_compare_format format;	/* what goes to stdout (or output_path) */
	const char *output_path;		/* --output: that file instead of stdout (atomically); NULL: stdout */
	enum fail_on fail_on;
	bool fails;				/* compare_fails(): a regression or a check at the --fail-on level */
	int status;				/* the exit status: 0, 1 (fails), 3 (nothing judged) */
	int argc;				/* the compare command as typed */
	char **argv;
};

/* Print the comparison for people: environment warnings, phases, page sizes, counter rates, checks, result. */
void report_compare_print_text(const struct report_compare_input *in, FILE *f);

/*
 * Write the comparison as JSON (schema tlbprof.compare/1) to path ("-" =
 * stdout), atomically as report_write_json() does. Returns 0 or -errno with
 * a one-line reason in err.
 */
int report_compare_write_json(const struct report_compare_input *in, const char *path, char *err, size_t err_len);

/*
 * Print in->format, the table or the markdown summary (unless out->quiet;
 * the table to stderr when the JSON goes to stdout), or write it to
 * in->output_path through report_write_file(), and write the JSON when
 * out->json_path asks. Returns 0, or -1 after printing the one-line reason
 * of a failed write (exit 4).
 */
int report_compare_emit(const struct report_compare_input *in, const struct report_outputs *out);
