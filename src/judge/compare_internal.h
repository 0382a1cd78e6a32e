/* SPDX-License-Identifier: MIT */
/* What the comparison's files (src/judge/compare*.c) share; not for other modules. */
#pragma once

#include "judge/compare.h"

/* A comparison of nothing yet: every figure NaN, no test, COMPARE_NOT_COMPARABLE. */
void compare_samples_clear(struct compare_samples *s);

/* ---- compare.c: what compare_run() and compare_run_many() (compare_runs.c) share ---- */

/* A phase with timed samples: status ok and at least one sample. */
bool compare_phase_measured(const struct phase_result *r);

/* A tlbprof run phase that declared no accesses: its wall time per occurrence is what was measured. */
bool compare_phase_wall(const struct phase_result *r);

/*
 * The samples a phase is compared on, with their clusters: ns per access
 * (per page), or (wall) ns per occurrence; s->n = 0 if none. *owned is what
 * the caller frees. 0 or -ENOMEM.
 */
int compare_phase_set(const struct phase_result *r, bool wall, struct stats_set *s, unsigned **owned);

/*
 * Nanoseconds per fault of each fault sample that counted faults (perf
 * counts, else getrusage), with its process as the cluster, into v and c
 * (room for n_fault_samples each). Returns the count.
 */
size_t compare_fault_samples_of(const struct phase_result *r, double *v, unsigned *c);

/*
 * What a phase is, from one measurement of each side (either may be NULL):
 * its three comparisons cleared, faults, control and wall, the counter
 * rates, and (both given) the parameters that differ.
 */
void compare_phase_describe(const struct phase_result *b, const struct phase_result *n, struct compare_phase *cp);

/* One side's figures of comparison idx of s into cp (delta, ns per miss, method, its own interval, speedup). */
void compare_pair_side(const struct compare_side *s, size_t idx, bool is_base, struct compare_pair *cp);

/* pass < warn < fail; skip (could not judge) is outside the order. */
bool compare_check_worse(enum check_status from, enum check_status to);

/*
 * The rules that need more than one metric, over a result whose phases,
 * pairs and checks are filled: each phase's verdict that counts (against its
 * packed control, or the machine's for a control), a smaller speedup with no
 * phase slower made COMPARE_SMALLER_UNCOUNTED, and the totals counted into
 * out (see compare_run()).
 */
void compare_apply_rules(struct compare_result *out);
