/* SPDX-License-Identifier: MIT */
/* What several commands do alike: set up a measurement, find the event maps and a program, re-analyse a report. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "machine/environment.h"
#include "machine/timing.h"
#include "pmu/counters.h"

struct analysis;
struct report_doc;

/*
 * The map files to resolve metrics with: events_dir (--events-dir) when
 * given, else counters_default_events_dir() (the installed ones; the source
 * tree's only for a binary run from its build directory). Never NULL.
 */
const char *command_events_dir(const char *events_dir);

/* What a measuring command (measuring, tlbprof run) starts from. */
struct measuring {
	struct counter_set *counters;	/* NULL: no counters (the report says why) */
	struct environment env;
	struct timing_calibration clock;
};

/*
 * Set up a measuring run: the environment (the core is a clue for the PMU),
 * the counter set (from --events-dir, which must parse; the installed maps
 * failing is a warning and a run without counters) with the user's events
 * (-e; may be NULL), pinning to cpu (-1: not pinned), then the core-clock
 * calibration on that CPU (cores of a hybrid CPU run at different clocks),
 * and the core identified again with what the clock measured (timing.h:
 * add_imm_per_cycle). Returns 0, or EXIT_USAGE after printing the one-line
 * error about --events-dir, an --event or TLBPROF_SIMULATE_PMU. Tear down
 * with command_measuring_free().
 */
struct cli_events;
/*
 * A simulated PMU instead of the kernel's where TLBPROF_SIMULATE_PMU names one
 * (tests; a machine without a PMU), before libpfm4 starts: every command that
 * opens counters (measuring, env, events) sees the same PMU. EXIT_OK, or
 * EXIT_USAGE after the one-line error for a model it does not know.
 */
int command_simulate_pmu(void);
int command_measuring_setup(struct measuring *m, const char *events_dir, const struct cli_events *events, int cpu);
void command_measuring_free(struct measuring *m);

/*
 * The host facts around a run (machine/host.h): before the first phase, and
 * after the last together with the core clock measured again
 * (timing_recheck()); then m->env.host is recorded.
 */
void command_host_before(struct measuring *m);
void command_host_after(struct measuring *m);

/*
 * The analysis of a saved report as every command makes it: analysis_run(),
 * then, for a tlbprof run report, the checks of its benchmark's build and
 * of its marker traffic, so analyze, compare and plot judge it the same.
 * Returns 0 or -ENOMEM (a is then freed).
 */
int command_analyse_doc(const struct report_doc *doc, struct analysis *a);

/*
 * The file execvp would run for name: name itself when it holds a '/', else
 * the first executable regular file of that name in $PATH. Writes the path
 * into out (len bytes; "" when none) and returns whether it is executable.
 */
bool command_find_program(const char *name, char *out, size_t len);
