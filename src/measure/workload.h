/* SPDX-License-Identifier: MIT */
/* The workload operations table: one const struct per workload, one file per workload, one registry. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "measure/phase.h"

struct region;
struct plan;

/* What prepare reports besides its state and self-checks. */
struct prepare_info {
	uint64_t units;		/* chase: slots; stride: reads per pass; pagefault: pages */
	double build_ms;	/* building the structure alone (the chase: the chain), not its self-checks */
};
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
 *            and into *info the number of units (chase: slots) and the time
 *            spent building the structure alone, without its self-checks.
 *            Returns 0 or -errno; on error *state must be left NULL and
 *            why may hold a one-line reason (else the errno text is used).
 *            With per_sample_memory, region is NULL: the workload maps its
 *            own memory in sample_setup.
 *   run      Required. Perform exactly `accesses` accesses from where the
 *            previous run left off. Called for warm-up and for each timed
 *            sample; must not allocate, fault or print.
 *   release  Optional. Free *state (the region is unmapped by the runner).
 *   sample_setup     Required with per_sample_memory. Untimed, before each
 *            timed sample: make the sample's fresh memory (map, evict, ...).
 *            Fills out->resident_before. Returns 0, -EAGAIN when the sample
 *            cannot be measured as defined (why says why: the phase is
 *            skipped), or -errno (why says why: the phase fails).
 *   sample_teardown  Required with per_sample_memory. Untimed, after each
 *            timed sample: verify the backing into *backing (return true
 *            when known) and unmap.
 *   data_file        Optional. A file the workload made that child processes
 *            must reuse (their --internal-child FILE), or NULL.
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
	bool per_sample_memory;	/* fresh memory per timed sample: the runner maps nothing, no warm-up */
	bool faults_expected;	/* page faults in timed samples are the measurement, not an error */
	int (*prepare)(void **state, const struct phase_spec *phase, struct region *region,
		       struct self_check *checks, size_t *n_checks, struct prepare_info *info, char *why, size_t why_len);
	void (*run)(void *state, uint64_t accesses);
	void (*release)(void *state);
	int (*sample_setup)(void *state, struct fault_sample *out, char *why, size_t why_len);
	bool (*sample_teardown)(void *state, struct region_backing *backing);
	const char *(*data_file)(void *state);
	int (*expand)(const struct tlbprof_config *cfg, const struct plan_context *ctx, struct plan *out);
};

/* The registry, NULL-terminated. */
extern const struct workload_ops *const workload_registry[];

/* Look a workload up by name; NULL when unknown. */
const struct workload_ops *workload_find(const char *name);
