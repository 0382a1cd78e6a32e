/* SPDX-License-Identifier: MIT */
/* The workload operations table: one const struct per workload, one file per workload, one registry. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "measure/phase.h"
#include "option.h"

struct region;
struct plan;
struct plan_request;

/* What prepare reports besides its state and self-checks. */
struct prepare_info {
	uint64_t units;		/* chase: slots; stride: reads per pass; pagefault: pages */
	double build_ms;	/* building the structure alone (the chase: the chain), not its self-checks */
};
struct plan_context;

/* A measuring option whose default this workload changes: pagefault touches 128M, not 256M. */
struct workload_default {
	const char *option;	/* the option's name: "size" */
	const char *value;	/* as typed, set when the command line does not give it; NULL: the hook decides */
	const char *help;	/* what --help says the default is here; NULL: value */
};

/* What tells a workload's phases apart besides the page size: what the analysis compares and plot draws. */
enum workload_sweep {
	WORKLOAD_SWEEP_SIZES,		/* working-set sizes: page sizes compared at each (chase) */
	WORKLOAD_SWEEP_STRIDES,		/* strides at each size: the steps between them (stride) */
	WORKLOAD_SWEEP_PAGE_COUNTS,	/* pages touched: the knees of the curve (tlbsize) */
	WORKLOAD_SWEEP_FAULT_CASES,	/* page-fault cases (pagefault) */
	WORKLOAD_SWEEP_MARKED,		/* the phases a benchmark marked (tlbprof run) */
	WORKLOAD_SWEEP_COMMAND,		/* one phase, a whole command (tlbprof run, unmarked) */
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
 *   expand   Optional. Append this workload's phases for req to the plan
 *            with plan_add(); pure (ctx carries the facts it may use).
 *            Without it: plan_grid(), one phase per size x page size.
 *            Returns 0 or -ENOMEM.
 *   validate Optional. After the command line: check the values together
 *            (a stride at most half the size). Returns 0, or -EINVAL with a
 *            one-line error that names the option and the value in msg.
 * A foreign workload (tlbprof run's phases) has no hooks: it names phases
 * that target/ measures, so reports read back know what they were.
 */
struct workload_ops {
	const char *name;
	const char *description;
	/* The options only this workload takes, as data (offsets into struct plan_request), ended by name NULL. */
	const struct option_spec *params;
	const struct workload_default *defaults;	/* ended by option NULL; NULL: none */
	enum workload_sweep sweep;
	bool latency;	/* ns per access is a load-to-use latency (dependent loads), so an L1 hit bounds it */
	bool per_sample_memory;	/* fresh memory per timed sample: the runner maps nothing, no warm-up */
	bool faults_expected;	/* page faults in timed samples are the measurement, not an error */
	bool foreign;	/* phases of someone else's benchmark (tlbprof run): no hooks, not a --workload */
	int (*prepare)(void **state, const struct phase_spec *phase, struct region *region,
		       struct self_check *checks, size_t *n_checks, struct prepare_info *info, char *why, size_t why_len);
	void (*run)(void *state, uint64_t accesses);
	void (*release)(void *state);
	int (*sample_setup)(void *state, struct fault_sample *out, char *why, size_t why_len);
	bool (*sample_teardown)(void *state, struct region_backing *backing);
	const char *(*data_file)(void *state);
	int (*expand)(const struct plan_request *req, const struct plan_context *ctx, struct plan *out);
	int (*validate)(const struct plan_request *req, char *msg, size_t len);
};

/* The registry, NULL-terminated: the workloads --workload runs, then the foreign ones. */
extern const struct workload_ops *const workload_registry[];

/* Look a workload up by name, foreign ones too (a report names them); NULL when unknown. */
const struct workload_ops *workload_find(const char *name);

/* The i-th workload --workload takes (not foreign), NULL after the last: its choices, in registry order. */
const struct workload_ops *workload_at(size_t i);

/* Call w's release hook on state when it has one (teardown tolerates a workload without). */
void workload_release(const struct workload_ops *w, void *state);
