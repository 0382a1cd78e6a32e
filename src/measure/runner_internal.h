/* SPDX-License-Identifier: MIT */
/* Private to the runner (runner.c, fresh.c, rerun.c): one allocation of a phase, the second passes, the helpers they share. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "measure/region.h"
#include "measure/runner.h"
#include "measure/workload.h"

/* Fail the phase with a reason (unavailable: the machine cannot run it, not a defect). */
__attribute__((format(printf, 3, 4)))
void runner_phase_fail(struct phase_result *res, bool unavailable, const char *fmt, ...);
/* Whether a stop (Ctrl-C) was requested. */
bool runner_stop_requested(const struct run_context *ctx);
/* A safe point for the progress line: never inside a timed sample. */
void runner_progress_tick(const struct run_context *ctx);
/* Pin the calling thread to cpu. Returns 0 or -errno. */
int runner_pin_cpu(int cpu);
/* Open the set for this phase and keep a copy of the per-event infos. Returns 0 or -ENOMEM. */
int runner_open_counters(struct phase_result *res, struct counter_set *cs);
/* One timed run of accesses, counters enabled around it only. Returns the elapsed ns. */
uint64_t runner_timed_run(const struct workload_ops *w, void *state, uint64_t accesses, struct counter_set *cs);
/* A phase with fresh memory per sample (the workload's per_sample_memory): measure/fresh.c. */
void runner_fresh_phase(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res);

/* A phase's last allocation, kept for its second passes: its region and the workload's state on it. */
struct runner_kept {
	struct region region;
	void *state;
	uint64_t units;		/* what the workload says one pass is */
	bool held;
};

/* Release a kept allocation of phase ph (nothing when none is held). */
void runner_kept_release(const struct phase_spec *ph, struct runner_kept *k);

/*
 * One allocation a of phase ph into res: a fresh region and a fresh chain
 * (seeded per allocation), verified, warmed up, then sampled (extend: more
 * samples until precise, up to cap). The first allocation's prefault is
 * counted with cs and its self-checks are reported; every allocation's
 * self-checks and backing must pass. keep (may be NULL): a sampled
 * allocation is handed to it instead of released. Returns false when the
 * phase must stop.
 */
bool runner_allocation(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res,
		       struct counter_set *cs, unsigned a, bool extend, size_t cap, uint64_t phase_t0,
		       struct runner_kept *keep);

/*
 * One pass of --repeat samples into res on a kept allocation, warmed up
 * again the same way but steady only with its fastest pass at or below
 * settle_ns (0: no such bound), its backing checked after. *steady: whether
 * the warm-up got there before its cap. Returns false when it failed (res says why).
 */
bool runner_pass_kept(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res,
		      struct runner_kept *k, double settle_ns, bool *steady);

/*
 * Why a phase of spec ph takes no second pass, whatever it measures, or
 * NULL when it may: only --iters auto phases with several allocations do.
 */
const char *runner_spec_no_pass_why(const struct phase_spec *ph);
/* Why phase res takes no second pass (its spec's reason, or what happened to it), or NULL when it takes them. */
const char *runner_no_pass_why(const struct run_context *ctx, const struct phase_result *res);

/*
 * After every phase of the run: PHASE_SECOND_PASSES rounds over the n phases
 * (started[i]: when phase i began), each phase's pass on kept[i] when it is
 * held, else on a fresh allocation, into rerun_ns, or rerun_why saying why
 * there is none; then precision_between, precision_host and
 * precision_claimed. Releases every kept allocation.
 */
void runner_second_passes(const struct run_context *ctx, struct phase_result *phases, size_t n,
			  const uint64_t *started, struct runner_kept *kept);
