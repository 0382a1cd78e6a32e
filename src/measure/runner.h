/* SPDX-License-Identifier: MIT */
/* Execute a plan: per phase allocate, prepare, verify pages, warm up, time with counters, collect. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/counters.h"
#include "measure/phase.h"
#include "measure/plan.h"
#include "machine/timing.h"

struct run_context {
	const struct timing_calibration *clock;	/* for cycles per access */
	struct counter_set *counters;		/* may be NULL: no counters */
	volatile sig_atomic_t *stop;		/* set asynchronously to stop at the next safe point */
	/* Told before each phase (index from 0 of n) and once with name NULL when the run ends; NULL: none. */
	void (*progress)(void *arg, size_t index, size_t n, const char *name);
	/*
	 * Called with progress_arg at safe points inside a phase (between timed
	 * samples and allocations, never inside a timed sample), so a long phase
	 * can show its time; it must return at once when it has nothing to do.
	 * NULL: none.
	 */
	void (*progress_tick)(void *arg);
	void *progress_arg;
	/* To re-execute tlbprof for phases that run in several processes (pagefault --processes). */
	int argc;
	char **argv;				/* the command line as given */
};

struct run_results {
	struct phase_result *phases;	/* owned; run_results_free() */
	size_t n;			/* phases finished (== plan size unless interrupted) */
	bool interrupted;
	/*
	 * When the run began to measure, seconds since the epoch (UTC): set by runner_run(), target_run() and
	 * target_attach() as they start; 0: not recorded (a report read back from a tlbprof before measured_at).
	 */
	int64_t started_unix_s;
};

/*
 * Run every phase of plan in order. A phase that cannot run (page size not
 * available, backing differs from the request, a failed self-check) is
 * recorded as failed with the reason; the others still run. Returns 0, or
 * -ENOMEM when the result list cannot be allocated.
 */
int runner_run(const struct plan *plan, const struct run_context *ctx, struct run_results *out);
void run_results_free(struct run_results *r);

/*
 * The internal child protocol: a parent that runs a phase in several
 * processes re-executes tlbprof with its own command line and
 * --internal-child PHASE:FD[:FILE]; the child builds the same plan, runs
 * phase PHASE and writes its results as lines on fd FD (a pipe), using the
 * data file FILE the parent made (if any).
 */
struct runner_child {
	size_t phase;		/* index into the plan */
	int fd;			/* where the child writes its results */
	const char *file;	/* the parent's data file, or NULL */
};

/*
 * Child mode: run phase child->phase of plan in this process and write its
 * samples, counters, backing and status to child->fd in the line protocol
 * the parent reads. Returns 0 or -errno.
 */
int runner_run_child(const struct plan *plan, const struct runner_child *child, const struct run_context *ctx);
