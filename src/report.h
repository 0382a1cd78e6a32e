/* SPDX-License-Identifier: MIT */
/* The only writer of output: the JSON report (jansson, written atomically) and the table for people. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "analysis.h"
#include "config.h"
#include "counters.h"
#include "environment.h"
#include "runner.h"
#include "timing.h"

#define REPORT_SCHEMA "tlbprof.report/1"

/* Everything a report is made of; all borrowed. */
struct report_input {
	const struct tlbprof_config *cfg;
	const struct environment *env;
	const struct timing_calibration *clock;
	const struct counter_set *counters;	/* may be NULL */
	const struct run_results *results;
	const struct analysis *analysis;
	const char *pmu_name;			/* libpfm4's default PMU, "none" */
};

/*
 * Write the JSON report to path ("-" = stdout). A file is written to a
 * temporary file in the same directory (created exclusively) and renamed
 * over path, so a reader never sees half a report and an earlier report
 * survives a failed write. Returns 0 or -errno; *err gets a one-line reason.
 */
int report_write_json(const struct report_input *in, const char *path, char *err, size_t err_len);

/* Print the human-readable summary and tables to f. */
void report_print_text(const struct report_input *in, FILE *f);

/* Print a one-line error "tlbprof: MSG" to stderr. */
void report_error(const char *msg);
