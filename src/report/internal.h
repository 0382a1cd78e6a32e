/* SPDX-License-Identifier: MIT */
/*
 * What the files of src/report/ share; not for other modules. Each group
 * names the file that provides it. The calls go one way, from the top:
 * emit.c (report_emit) calls table.c and formats.c; formats.c dispatches to
 * each format, to the JSON (json.c) and to the writer; the formats and the
 * JSON call down to facts.c, labels.c, writer.c, text.c and terminal.c,
 * never back up, and those five call no other file of the folder. The other commands'
 * writers (env.c, compare.c, svg.c) call the same lower files, and
 * report_error() in emit.c.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pmu/counters.h"
#include "machine/environment.h"
#include "measure/phase.h"
#include "report/report.h"
#include "machine/timing.h"

/* ---- gbench.c, openmetrics.c, junit.c, csv.c: one writer per format, called by formats.c ---- */

/*
 * Each writes its format of the report to the stream f (as
 * report_format_write() in report.h: 0, or -errno when the document cannot
 * be built; write errors are left on the stream).
 */
int report_gbench_write(const struct report_input *in, FILE *f);
int report_openmetrics_write(const struct report_input *in, FILE *f);
int report_junit_write(const struct report_input *in, FILE *f);
int report_csv_write(const struct report_input *in, FILE *f);

/* compare_md.c: tlbprof compare --format markdown onto f (0, or -ENOMEM; write errors are left on the stream). */
struct report_compare_input;
int report_compare_markdown_write(const struct report_compare_input *in, FILE *f);
/* compare_result.c: the table's checks that changed, and its result line (wrapped on a terminal). */
void report_compare_print_checks(const struct compare_result *c, FILE *f);
void report_compare_print_result(const struct report_compare_input *in, FILE *f);
/* A fraction as a percentage, and the plural ending of a count: for the tables' words. */
static inline double report_pct(double fraction)
{
	return 100 * fraction;
}

static inline const char *report_plural(size_t n)
{
	return n == 1 ? "" : "s";
}

/* An address as reports write it, and as a reader takes it back: 0x and 1 to 16 lower-case hex digits. */
#define REPORT_HEX_ADDRESS "an address (0x and up to 16 lower-case hex digits)"
static inline bool report_hex_address(const char *s)
{
	return s && strncmp(s, "0x", 2) == 0 && s[2] && strlen(s) <= 18 && !s[2 + strspn(s + 2, "0123456789abcdef")];
}

/* compare.c: a verdict for people ("could not tell, because ..." between too few runs), and a phase's, into buf. */
const char *report_compare_verdict_text(const struct compare_samples *s, bool higher_is_better, char *buf, size_t len);
const char *report_compare_phase_verdict(const struct report_compare_input *in, const struct compare_phase *cp,
					 char *buf, size_t len);

/* ---- json.c: the native document ---- */

/* The native tlbprof.report/1 document (a re-analysis keeps every field it read); NULL on OOM. Caller decrefs. */
json_t *report_json_build(const struct report_input *in);

/* json_comparisons.c: the analysis's comparisons (ph: the phases they index), a new array. */
json_t *report_comparisons_json(const struct analysis *a, const struct phase_result *ph);

/*
 * The report's "environment" object (cpu, tlb, tlb_reach, kernel, thp,
 * cpufreq, hugepages, perf_event_paranoid, hypervisor, clock, build), also
 * the environment of tlbprof env. Returns a new reference.
 */
json_t *report_environment_json(const struct environment *env, const struct timing_calibration *clk,
				const char *pmu_name);

/* json_watch.c: target.watch, what watching an unmarked command found (pmu/sample.h's sample_profile). */
struct sample_profile;
struct sample_watch_region;
json_t *report_watch_json(const struct sample_profile *p);
/*
 * target.watch read back into *p (missing or null fields are 0, false, "").
 * Returns 0, or -EINVAL when w is not an object or a field present is of
 * the wrong type: report_watch_error() then names the first such field.
 */
int report_watch_read(const json_t *w, struct sample_profile *p);
const char *report_watch_error(void);
/* target.intervals (run -I): null without -I, else interval_ms, end_ns and each counting counter's values. */
struct target_result;
json_t *report_intervals_json(const struct target_result *tr);
/* target.attached (run -p): null when tlbprof started the command, else pid, comm, ended_by, threads, per_thread. */
json_t *report_attached_json(const struct target_result *tr);
/*
 * target.per_thread (run --per-thread of a started command): null without it, else error, lost_records and each
 * task (pid, tid, comm, first, exact, counters).
 */
json_t *report_per_thread_json(const struct target_result *tr);
/* target.intervals read back: *out (owned, free with report_intervals_free()), NULL when absent or malformed. */
int report_intervals_read(const json_t *iv, struct plot_intervals **out);
void report_intervals_free(struct plot_intervals *iv);
/* A watched region's backing ("base", "thp", "hugetlb", "not_resident") and THP control ("MADV_HUGEPAGE", ...). */
const char *report_watch_backing(const struct sample_watch_region *r);
const char *report_watch_thp_control(const struct sample_watch_region *r);

/* One counter as the report lists it: name, metric, event, source, hardware, type, config ("0x..."), status, reason. */
json_t *report_counter_info_json(const struct counter_info *ci);

/* ---- facts.c: what every format reads off a report ---- */

/*
 * The workload the report is about: the phases' own ("run" or "command" for
 * tlbprof run, whose configuration keeps the measuring default "chase"); a
 * report without phases names its command.
 */
const char *report_workload_of(const struct report_input *in);

/* Whether a phase has timed samples (status ok and something measured). */
bool report_phase_measured(const struct phase_result *r);

/* A tlbprof run phase that declared no accesses: measured, but only as wall time per occurrence. */
bool report_phase_wall_only(const struct phase_result *r);

/* Why a phase has no measurement: its reason, or what its status says. */
const char *report_phase_why(const struct phase_result *r);

/* The wall time per occurrence of a report_phase_wall_only() phase, in ns. */
struct stats_summary report_phase_wall_stats(const struct phase_result *r);

/* The ns-per-access statistics of phase i: the analysis has them; recomputed if it does not. */
struct stats_summary report_phase_stats(const struct report_input *in, size_t i);

/* Timed accesses of a phase over all its samples (pages touched for pagefault; what a run phase declared). */
double report_phase_accesses(const struct phase_result *r);

/* The comparison whose variant is phase i, or NULL. */
const struct comparison *report_comparison_of(const struct analysis *a, size_t i);

/* A counter that produced a value in this phase (ok or multiplexed, and scheduled at all). */
bool report_counter_counted(const struct counter_info *ci, const struct counter_reading *cr);

/* A counter whose value is a time in ns (task-clock, cpu-clock), not a count of events. */
bool report_counter_is_time(const struct counter_info *ci);
/* Share of the enabled time a counter ran: 1 when not multiplexed. */
double report_counter_running(const struct counter_reading *cr);

/*
 * v as text in buf, returned: the shortest of 15 to 17 significant digits
 * that reads back exactly ("47.12", not "47.119999999999997"); never "-0";
 * "NaN", "+Inf", "-Inf" for what is not finite.
 */
const char *report_num_text(double v, char *buf, size_t len);

/* ---- labels.c: short labels for people ---- */

/* A short label of the verified backing: "base 4K", "thp 100% 2M", "-" when unknown. */
void report_backing_label(const struct phase_result *r, char *buf, size_t len);

/* ---- writer.c: JSON onto a stream and into a file (report_write_file() in report.h is the writer itself) ---- */

/*
 * Write root to path ("-" = stdout) the way every tlbprof file is written
 * (report_write_file(): a temporary file renamed over path; a device in
 * place; a symlink's target replaced). root is not consumed. Returns 0 or
 * -errno with a one-line reason in err.
 */
int report_json_dump(json_t *root, const char *path, char *err, size_t err_len);

/*
 * Write root to the stream f, indented, with a final newline. Returns 0 or
 * the -errno of the failed write (-ENOSPC on a full disk; -EIO when stdio
 * kept none); a write the buffer still holds fails at the flush instead.
 */
int report_json_dumpf(const json_t *root, FILE *f);

/* load.c: a saved report's JSON into *root (caller decrefs), its input bounded at 256 MiB. 0, or -errno with err. */
int report_json_load(const char *path, json_t **root, char *err, size_t err_len);

/* ---- text.c: text from outside as well-formed UTF-8, escaped for each format ---- */

/*
 * Text from outside (argv, paths, reasons, symbol names, what a benchmark
 * sent) is arbitrary bytes on Linux; every document tlbprof writes is UTF-8.
 * The rule everywhere: each byte that is not part of a
 * well-formed UTF-8 sequence (Unicode Table 3-7: no overlong forms, no
 * surrogates, nothing above U+10FFFF) becomes U+FFFD, so a value is never
 * dropped or cut short and a reader sees where bytes were lost.
 */

/*
 * Length (1-4) of the well-formed UTF-8 sequence at the start of the
 * NUL-terminated s, with its code point in *cp; 0 when the byte at s starts
 * none (never reads past the terminator).
 */
size_t report_utf8_next(const char *s, uint32_t *cp);

/* Whether all of s is well-formed UTF-8. */
bool report_utf8_valid(const char *s);

/* s with every byte that is not part of a well-formed sequence replaced by U+FFFD; caller frees; NULL on OOM. */
char *report_utf8_dup(const char *s);

/* A JSON string of arbitrary bytes (jansson refuses invalid UTF-8): as report_utf8_dup(); NULL only for NULL or OOM. */
json_t *report_json_text(const char *s);
/* json_real() for finite numbers, null otherwise (JSON has no NaN or infinity). */
json_t *report_json_num(double v);
/* A first_access object ({pages, ns_per_page}: the first write to kernel-populated pages), null for 0 pages. */
json_t *report_first_access_json(uint64_t pages, double ns_per_page);
/* report_json_text() of a non-empty string, null for NULL or "". */
json_t *report_json_str_or_null(const char *s);

/*
 * A report's measured_at: s seconds since the epoch as ISO 8601 in UTC, to
 * the second ("2026-12-05T23:09:45Z"), into buf (at least 21 bytes). false,
 * with buf "", when s is 0 (not recorded) or out of range.
 */
bool report_utc_format(int64_t s, char *buf, size_t len);

/* The inverse: seconds since the epoch of exactly that form; 0 for anything else. */
int64_t report_utc_parse(const char *text);

/* How report_put_text() escapes. */
enum report_text {
	REPORT_TEXT_PLAIN,		/* no escapes */
	REPORT_TEXT_XML,		/* character data: & < > as entities, CR as &#13; */
	REPORT_TEXT_XML_ATTR,		/* a double-quoted attribute: also ", tab and LF as references */
	REPORT_TEXT_OPENMETRICS,	/* a label value: \\, \" and \n */
	REPORT_TEXT_CSV_QUOTED,		/* inside a quoted CSV field: "" */
};

/*
 * Write s to f as well-formed UTF-8 escaped for how: invalid bytes become
 * U+FFFD, and in XML so do the characters XML 1.0 cannot carry (C0 controls
 * but tab, LF, CR; U+FFFE, U+FFFF). Write errors stay on the stream.
 */
void report_put_text(FILE *f, const char *s, enum report_text how);

/* ---- terminal.c: colour and width where the text goes to a terminal ---- */

struct term_style {
	bool colour;		/* a terminal, NO_COLOR unset or "", TERM not dumb */
	unsigned width;		/* the terminal's columns (at least 40); 0: not a terminal, no wrapping */
};

/* How text written to f should look: no colour and no width unless f is a terminal. */
void term_style_for(FILE *f, struct term_style *out);
/*
 * s (n bytes) to f as a terminal should get it (emit.c): control bytes (ESC, CR, and a newline where one_line) and
 * the C1 controls' UTF-8 form (U+0080-U+009F) written as escapes (\n, \x1b, \u009b), so that a string a user gave
 * (a path, a command's name, a line it sent) neither splits a line nor sends the terminal a sequence.
 */
void report_put_visible(FILE *f, const char *s, size_t n, bool one_line);
/* The same into a string the caller frees; NULL when out of memory. */
char *report_visible_dup(const char *s);
/*
 * The escape that starts and the one that ends a status word's colour: "fail"
 * (and "fails", "regression") red, "warn" ("worse") yellow, "pass" ("ok",
 * "passes") green; "" for any other word, or without colour.
 */
const char *term_start(const struct term_style *s, const char *status);
const char *term_end(const struct term_style *s, const char *status);
/* A status word in its colour, padded with blanks to pad columns (as "%-*s" would). */
void term_put_status(FILE *f, const struct term_style *s, const char *status, int pad);
/*
 * text and a newline, wrapped at width columns (0: one line): the first line
 * goes on after a prefix already printed up to column, the others start with
 * indent blanks. It breaks at blanks; a word longer than a line stays whole.
 */
void term_put_wrapped(FILE *f, const char *text, size_t column, size_t indent, size_t width);
/*
 * printf(fmt, ...) to f, as it is in a pipe or a file; on a terminal each of
 * its lines wrapped at the terminal's width, the continuations indented by
 * indent blanks. fmt's text ends with a newline.
 */
void term_paragraph(FILE *f, size_t indent, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* term_paragraph() without an indent: a note or a summary line, its continuations from column 0. */
void term_note(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
