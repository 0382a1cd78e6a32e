/* SPDX-License-Identifier: MIT */
/* The subcommands (tlbprof NAME ...), one file each (src/cmd_NAME.c), and the exit statuses only they and main decide. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* Exit statuses (DESIGN.md, tlbprof(1)). */
enum {
	EXIT_OK = 0,
	EXIT_CHECK_FAILED = 1,
	EXIT_USAGE = 2,
	EXIT_UNAVAILABLE = 3,
	EXIT_OUTPUT = 4,
	EXIT_INTERRUPTED = 130,
};

/*
 * The map files to resolve metrics with: --events-dir, else the installed
 * ones, else (run from the build tree) the source tree's. NULL means the
 * installed default (counter_set_new() then finds it).
 */
const char *tlbprof_events_dir(const struct tlbprof_config *cfg);

struct analysis;
struct report_doc;

/*
 * The analysis of a saved report as every command makes it: analysis_run(),
 * then, for a tlbprof run report, the checks of its benchmark's build and
 * of its marker traffic, so analyze, compare and plot judge it the same.
 * Returns 0 or -ENOMEM (a is then freed).
 */
int tlbprof_analyse_doc(const struct report_doc *doc, struct analysis *a);

/*
 * The file execvp would run for name: name itself when it holds a '/', else
 * the first executable regular file of that name in $PATH. Writes the path
 * into out (len bytes; "" when none) and returns whether it is executable.
 */
bool tlbprof_find_command(const char *name, char *out, size_t len);

/* Each subcommand takes the parsed config and returns the exit status. */

/* tlbprof analyze REPORT.json: read a saved report, recompute its analysis, report again. */
int cmd_analyze(const struct tlbprof_config *cfg);

/* tlbprof compare BASE.json NEW.json: compare two saved reports phase by phase, judged from their samples. */
int cmd_compare(const struct tlbprof_config *cfg);

/* tlbprof env: what this machine can measure, each problem with its fix (0 whatever it finds; 4 output). */
int cmd_env(const struct tlbprof_config *cfg);

/* tlbprof events [--pmu NAME]: the metric -> event table with encodings (0; 2 bad --pmu; 4 output). */
int cmd_events(const struct tlbprof_config *cfg);

/* tlbprof run [OPTIONS] -- CMD: someone else's benchmark under counters, markers and checks. */
int cmd_run(const struct tlbprof_config *cfg, volatile sig_atomic_t *stop);
/* tlbprof plot REPORT.json -o FILE.svg: draw a saved report (its re-computed analysis too) as SVG. */
int cmd_plot(const struct tlbprof_config *cfg);
