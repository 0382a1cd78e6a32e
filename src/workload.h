/* SPDX-License-Identifier: MIT */
/* The workload operations table: one const struct per workload, one file per workload, one registry. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "phase.h"

struct region;
struct plan;
struct plan_context;
struct tlbprof_config;

/* A parameter a workload understands, as data: --help and validation come from here. */
struct workload_param {
	const char *option;		/* "--stride" */
	const char *help;
};

/*
 * Hook contracts:
 *   prepare  Required. Build the workload's access structure inside region
 *            (already mapped and prefaulted) for phase; allocate the
 *            workload's own state into *state. Record self-checks into
 *            checks[] (at most PHASE_MAX_SELF_CHECKS, count in *n_checks)
 *            and the number of units (chase: slots) in *units.
 *            Returns 0 or -errno; on error *state must be left NULL.
 *   run      Required. Perform exactly `accesses` accesses from where the
 *            previous run left off. Called for warm-up and for each timed
 *            sample; must not allocate, fault or print.
 *   release  Optional. Free *state (the region is unmapped by the runner).
 *   expand   Optional. Append this workload's phases for cfg to the plan
 *            with plan_add(); pure (ctx carries the facts it may use).
 *            Without it: plan_grid(), one phase per size x page size.
 *            Returns 0 or -ENOMEM.
 */
struct workload_ops {
	const char *name;
	const char *description;
	const struct workload_param *params;	/* NULL-terminated by option == NULL */
	bool latency;	/* ns per access is a load-to-use latency (dependent loads), so an L1 hit bounds it */
	int (*prepare)(void **state, const struct phase_spec *phase, struct region *region,
		       struct self_check *checks, size_t *n_checks, uint64_t *units);
	void (*run)(void *state, uint64_t accesses);
	void (*release)(void *state);
	int (*expand)(const struct tlbprof_config *cfg, const struct plan_context *ctx, struct plan *out);
};

/* The registry, NULL-terminated. */
extern const struct workload_ops *const workload_registry[];

/* Look a workload up by name; NULL when unknown. */
const struct workload_ops *workload_find(const char *name);
