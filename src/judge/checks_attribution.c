/* SPDX-License-Identifier: MIT */
/* Checks on what the counters say: whether a PMU could count it, and whether the attribution adds up. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "judge/analysis_internal.h"
#include "measure/workload.h"

/*
 * A load misses the dTLB at most once: more completed walks than loads
 * (or than accesses of a workload that makes one dependent load per access)
 * is an event that counts something else. "About one": walks of loads
 * outside the timed loop (the sample's bookkeeping) and a page-split load's
 * second walk add a little.
 */
static const double MISSES_PER_LOAD_MAX = 1.1;

/*
 * Cycles per walk (walk_active / walks completed) a page walker can take.
 * Low: a walk reads at least one paging-structure entry, an L1 hit of 4-5
 * cycles, and up to 4 walkers (Ice Lake and later; 2 on Skylake) overlap,
 * so active cycles per walk cannot go below about one. High: a 2-D walk of
 * a guest makes up to 24 memory references, each at most a remote DRAM
 * access (~400 cycles): about 10000.
 */
static const double CYCLES_PER_WALK_MIN = 1.0, CYCLES_PER_WALK_MAX = 10000.0;

/* Fewer walks per access than this make cycles per walk a ratio of a handful of walks: not judged. */
static const double WALKS_PER_ACCESS_JUDGED = 1e-3;

/* Walk cycles are cycles: more walk cycles than cycles, beyond counting noise, is a wrong event. */
static const double WALK_OVER_CYCLES_MAX = 1.02;

/* What one phase's counters say that no PMU could: "" when plausible, else why (one clause). */
static void implausible(const struct phase_result *r, char *why, size_t len, double *per_load, double *per_walk)
{
	double misses, loads, walk, cycles;

	*why = '\0';
	*per_load = *per_walk = NAN;
	if (!analysis_per_access(r, METRIC_DTLB_LOAD_MISSES, &misses))
		return;
	if (analysis_per_access(r, METRIC_DTLB_LOADS, &loads) && loads > 0)
		*per_load = misses / loads;
	else if (!r->spec.workload->foreign)
		*per_load = misses;	/* tlbprof's own workloads make one dependent load per access */
	if (isfinite(*per_load) && *per_load > MISSES_PER_LOAD_MAX) {
		snprintf(why, len, "%s: %.2f dTLB misses per load, more than one", r->spec.name, *per_load);
		return;
	}
	if (!analysis_per_access(r, METRIC_WALK_ACTIVE, &walk))
		return;
	if (analysis_per_access(r, METRIC_CYCLES, &cycles) && cycles > 0 && walk > cycles * WALK_OVER_CYCLES_MAX) {
		snprintf(why, len, "%s: %.0f walk cycles per access of %.0f cycles", r->spec.name, walk, cycles);
		return;
	}
	if (misses < WALKS_PER_ACCESS_JUDGED)
		return;
	*per_walk = walk / misses;
	if (*per_walk < CYCLES_PER_WALK_MIN || *per_walk > CYCLES_PER_WALK_MAX)
		snprintf(why, len, "%s: %.1f cycles per walk, outside the %.0f-%.0f a page walker can take", r->spec.name,
			 *per_walk, CYCLES_PER_WALK_MIN, CYCLES_PER_WALK_MAX);
}

void checks_counters_plausible(const struct analysis_check_def *def, const struct analysis_input *in,
			       struct analysis *a)
{
	char first[200] = "", why[200];
	size_t judged = 0, bad = 0;
	double worst_load = 0, lo_walk = NAN, hi_walk = NAN;

	for (size_t i = 0; i < in->n; i++) {
		const struct phase_result *r = &in->results[i];
		double per_load, per_walk;
		if (!analysis_measured_ok(r) || r->spec.workload->faults_expected)
			continue;
		implausible(r, why, sizeof(why), &per_load, &per_walk);
		if (!isfinite(per_load) && !isfinite(per_walk) && !*why)
			continue;
		judged++;
		if (isfinite(per_load))
			worst_load = fmax(worst_load, per_load);
		if (isfinite(per_walk)) {
			lo_walk = isfinite(lo_walk) ? fmin(lo_walk, per_walk) : per_walk;
			hi_walk = isfinite(hi_walk) ? fmax(hi_walk, per_walk) : per_walk;
		}
		if (*why && !bad++)
			snprintf(first, sizeof(first), "%s", why);
	}
	struct analysis_check *c;
	if (!judged)
		c = checks_add(a, def, CHECK_SKIP, "could not tell, because no phase counted dTLB misses per load");
	else if (bad)
		c = checks_add(a, def, CHECK_WARN, "%zu of %zu %s counted what no PMU can (%s): the event is not what its "
			       "name says (a masked CPU model or a wrong map?), so the attribution is not to be trusted",
			       bad, judged, checks_phases_word(judged), first);
	else if (isfinite(lo_walk))
		c = checks_add(a, def, CHECK_PASS, "at most %.2f dTLB misses per load, %.1f-%.1f cycles per walk", worst_load,
			       lo_walk, hi_walk);
	else
		c = checks_add(a, def, CHECK_PASS, "at most %.2f dTLB misses per load; no walk cycles to judge", worst_load);
	checks_evidence(c, "phases_judged", (double)judged);
	checks_evidence(c, "implausible_phases", (double)bad);
	checks_evidence(c, "max_misses_per_load", worst_load);
	if (isfinite(lo_walk)) {
		checks_evidence(c, "min_cycles_per_walk", lo_walk);
		checks_evidence(c, "max_cycles_per_walk", hi_walk);
	}
}

void checks_attribution_adds_up(const struct analysis_check_def *def, const struct analysis_input *in,
				struct analysis *a)
{
	const struct phase_result *res = in->results;
	size_t counted = 0, bad = 0, unknown = 0;
	const struct comparison *first = NULL;

	for (size_t i = 0; i < a->n_comparisons; i++) {
		const struct comparison *cm = &a->comparisons[i];
		if (!cm->method || strcmp(cm->method, "counters") != 0)
			continue;
		counted++;
		if (cm->adds_up == 0 && !bad++)
			first = cm;
		unknown += cm->adds_up < 0;
	}
	struct analysis_check *c;
	if (!counted)
		c = checks_add(a, def, CHECK_SKIP, "could not tell, because no comparison was attributed from counters");
	else if (bad)
		c = checks_add(a, def, CHECK_WARN, "%zu of %zu comparisons do not add up: %s vs %s: %s", bad, counted,
			       res[first->baseline].spec.name, res[first->variant].spec.name, first->inconsistency);
	else if (unknown == counted)
		c = checks_add(a, def, CHECK_SKIP, "could not tell, because no comparison has an interval to judge its "
			       "parts against (a phase has a single sample)");
	else
		c = checks_add(a, def, CHECK_PASS, "no measured part of %zu %s is negative or larger than its delta beyond "
			       "its noise%s", counted, counted == 1 ? "comparison" : "comparisons",
			       unknown ? " (some have no interval)" : "");
	checks_evidence(c, "comparisons_counted", (double)counted);
	checks_evidence(c, "comparisons_not_adding_up", (double)bad);
	checks_evidence(c, "comparisons_without_interval", (double)unknown);
}
