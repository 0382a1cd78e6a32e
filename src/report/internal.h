/* SPDX-License-Identifier: MIT */
/*
 * What the report writers (src/report/) share; not for other modules. Each
 * group names the file that provides it. Who may call whom: emit.c calls
 * the table, the writer and the formats; formats.c dispatches to each
 * format and to the JSON; the formats and the JSON call down to the labels,
 * the writer and the text rules, never back up.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pmu/counters.h"
#include "machine/environment.h"
#include "measure/phase.h"
#include "report/report.h"
#include "machine/timing.h"

/* ---- labels.c: short labels for people ---- */

/* A short label of the verified backing: "base 4K", "thp 100% 2M", "-" when unknown. */
void report_backing_label(const struct phase_result *r, char *buf, size_t len);

/* "SIGSEGV" for SIGSEGV, "?" for a signal without a name; in a static buffer the next call overwrites. */
const char *report_signal_name(int sig);

/* ---- json.c: the native document ---- */

/* The native tlbprof.report/1 document (a re-analysis keeps every field it read); NULL on OOM. Caller decrefs. */
json_t *report_json_build(const struct report_input *in);

/*
 * The report's "environment" object (cpu, tlb, tlb_reach, kernel, thp,
 * cpufreq, hugepages, perf_event_paranoid, hypervisor, clock, build), also
 * the environment of tlbprof env. Returns a new reference.
 */
json_t *report_environment_json(const struct environment *env, const struct timing_calibration *clk,
				const char *pmu_name);

/* One counter as the report lists it: name, metric, event, source, hardware, type, config ("0x..."), status, reason. */
json_t *report_counter_info_json(const struct counter_info *ci);

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
