/* SPDX-License-Identifier: MIT */
/* Comparisons between page sizes, the attribution of their delta (TLB, cache, unexplained), and stride steps. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "judge/analysis_internal.h"
#include "measure/workload.h"

/*
 * What an L1 dTLB miss that hits the STLB costs beyond an L1 hit, cycles:
 * Intel's top-down metric for DTLB load stalls (tma_dtlb_load, "Mem_STLB_Hit_Cost
 * * DTLB_LOAD_MISSES.STLB_HIT + DTLB_LOAD_MISSES.WALK_ACTIVE") takes 9 on
 * Skylake and 7 on Ice Lake and later. walk_active counts only the walks
 * (their own STLB lookup included), so a phase's STLB hits are time its walk
 * cycles do not show. Other PMUs: the larger, 9.
 */
static const double STLB_HIT_CYCLES_SKYLAKE = 9.0, STLB_HIT_CYCLES_ICELAKE = 7.0;

/* A counted clock outside this range is no clock (a wrong or broken event): the calibrated one is used. */
static const double COUNTED_GHZ_MIN = 0.2, COUNTED_GHZ_MAX = 8.0;

/*
 * The most one LLC miss can cost, ns: a load from a remote socket's DRAM, 80-140 ns on the servers in scope
 * (Intel's and AMD's published latencies), with room. Bounds what a change in LLC misses can explain.
 */
static const double LLC_MISS_NS_MAX = 200.0;

/* What one side of a comparison counted, per access, and the clock that turns its cycles into ns. */
struct side {
	double ns;			/* its median, ns per access */
	double ghz;			/* its own counted cycles per ns, else the calibrated clock */
	bool counted_clock;
	bool have_misses, have_walk, have_stlb, have_llc;
	double misses, walk_cycles, stlb_hits, llc_misses;	/* per access; misses are completed walks */
	double cycles_per_walk;		/* walk_cycles / misses; NAN: unknown */
	const char *walk_source;	/* the PMU map of walk_active ("skx"), or "" */
};

static const char *metric_source(const struct phase_result *r, enum metric m)
{
	for (size_t i = 0; i < r->n_counters; i++)
		if (r->counter_info[i].metric == m)
			return r->counter_info[i].source;
	return "";
}

static void side_read(const struct phase_result *r, const struct phase_analysis *pa,
		      const struct timing_calibration *clock, struct side *s)
{
	double cycles;

	memset(s, 0, sizeof(*s));
	s->ns = pa->ns.median;
	s->ghz = analysis_clock_ghz(clock, r);
	/* The phase's own clock: cycles counted in the same group as the walks, over the same timed samples. */
	if (r->timed_ns > 0 && analysis_counter(r, METRIC_CYCLES, &cycles) && cycles / r->timed_ns >= COUNTED_GHZ_MIN &&
	    cycles / r->timed_ns <= COUNTED_GHZ_MAX) {
		s->ghz = cycles / r->timed_ns;
		s->counted_clock = true;
	}
	/* dtlb_load_misses is the walk-completed event in every map; an old report may carry walk_completed alone. */
	s->have_misses = analysis_per_access(r, METRIC_DTLB_LOAD_MISSES, &s->misses) ||
			 analysis_per_access(r, METRIC_WALK_COMPLETED, &s->misses);
	s->have_walk = s->ghz > 0 && analysis_per_access(r, METRIC_WALK_ACTIVE, &s->walk_cycles);
	s->have_stlb = analysis_per_access(r, METRIC_STLB_HITS, &s->stlb_hits);
	s->have_llc = analysis_per_access(r, METRIC_LLC_LOAD_MISSES, &s->llc_misses);
	s->cycles_per_walk = s->have_walk && s->have_misses && s->misses > 0 ? s->walk_cycles / s->misses : NAN;
	s->walk_source = metric_source(r, METRIC_WALK_ACTIVE);
}

/* Skylake's WALK_ACTIVE leaves out the EPT part of a walk in a guest (Intel's event list: "EPT page walk
 * duration are excluded in Skylake"); its maps are skl and skx (Cascade Lake uses skx's events). */
static bool walk_skylake(const char *source)
{
	return strcmp(source, "skl") == 0 || strcmp(source, "skx") == 0 || strcmp(source, "clx") == 0;
}

/*
 * Whether LLC misses changed beyond the noise: the most the change can cost
 * (|delta| x the most one miss can cost: a whole access's time at the side
 * with more misses, at most LLC_MISS_NS_MAX) against noise_ns.
 */
static void judge_llc(const struct side *b, const struct side *v, struct comparison *c)
{
	c->llc_change = NULL;
	c->llc_cache_bound_ns = 0;
	if (!b->have_llc || !v->have_llc)
		return;
	double most = fmax(b->llc_misses, v->llc_misses);
	double per_miss = most > 0 ? fmin(fmax(b->ns, v->ns) / most, LLC_MISS_NS_MAX) : 0;
	c->llc_cache_bound_ns = fabs(b->llc_misses - v->llc_misses) * per_miss;
	if (!(c->llc_cache_bound_ns > 0))
		c->llc_change = "within_noise";
	else if (!isfinite(c->noise_ns))
		c->llc_change = "unknown";
	else
		c->llc_change = c->llc_cache_bound_ns > c->noise_ns ? "changed" : "within_noise";
}

static void see_add(struct comparison *c, const char *text)
{
	size_t len = strlen(c->cannot_see);

	snprintf(c->cannot_see + len, sizeof(c->cannot_see) - len, "%s%s", len ? "; " : "", text);
}

/* What the walk method assumed, in the words of what it could and could not judge. */
static const char *walks_assumption(const struct comparison *c)
{
	bool changed = c->llc_change && strcmp(c->llc_change, "changed") == 0;

	if (c->cache_ns != 0)
		return c->clock_counted ? "tlb_ns from page-walk cycles (walk_active) and STLB hits, each side in its own "
					  "clock; LLC misses changed beyond the noise, so the rest is cache, up to what "
					  "that change can cost"
					: "tlb_ns from page-walk cycles (walk_active) and STLB hits, in the calibrated clock; "
					  "LLC misses changed beyond the noise, so the rest is cache, up to what that "
					  "change can cost";
	if (changed)
		return "tlb_ns from page-walk cycles (walk_active) and STLB hits; LLC misses changed, but the rest goes "
		       "the other way, so it is unexplained";
	if (!c->llc_change)
		return "tlb_ns from page-walk cycles (walk_active) and STLB hits; LLC misses were not counted, so the "
		       "rest is unexplained";
	if (strcmp(c->llc_change, "unknown") == 0)
		return "tlb_ns from page-walk cycles (walk_active) and STLB hits; whether LLC misses changed beyond the "
		       "noise could not be judged (no interval), so the rest is unexplained, up to llc_cache_bound_ns of "
		       "it could be cache";
	return c->clock_counted ? "tlb_ns from page-walk cycles (walk_active) and STLB hits, each side in its own "
				  "clock; LLC misses did not change beyond the noise, so the rest is unexplained"
				: "tlb_ns from page-walk cycles (walk_active) and STLB hits, in the calibrated clock; LLC "
				  "misses did not change beyond the noise, so the rest is unexplained";
}

/* With page-walk cycles: translation is each side's walk time (its own clock) plus its STLB hits' time. */
static void attribute_walks(const struct side *b, const struct side *v, const struct environment *env,
			    struct comparison *c)
{
	double hit = strcmp(b->walk_source, "icl") == 0 || strcmp(b->walk_source, "icx") == 0 ||
				     strcmp(b->walk_source, "spr") == 0
			     ? STLB_HIT_CYCLES_ICELAKE
			     : STLB_HIT_CYCLES_SKYLAKE;

	c->method = "counters";
	c->have_stlb_hits = b->have_stlb && v->have_stlb;
	if (c->have_stlb_hits)
		c->stlb_ns = v->stlb_hits * hit / v->ghz - b->stlb_hits * hit / b->ghz;
	c->tlb_ns = b->walk_cycles / b->ghz - v->walk_cycles / v->ghz - c->stlb_ns;
	double rest = c->delta_ns - c->tlb_ns;
	if (c->llc_change && strcmp(c->llc_change, "changed") == 0) {
		/* The cache part has the sign of the LLC change and is at most what that change can cost. */
		double sign = b->llc_misses > v->llc_misses ? 1.0 : -1.0;
		c->cache_ns = sign * fmin(fmax(sign * rest, 0), c->llc_cache_bound_ns);
	}
	c->unexplained_ns = rest - c->cache_ns;
	c->assumption = walks_assumption(c);
	see_add(c, "walk_active counts cycles with a walk in progress, so overlapping walks count once");
	if (!c->have_stlb_hits) {
		char t[200];
		snprintf(t, sizeof(t), "STLB hits were not counted: an L1 dTLB miss that hits the STLB (%.0f cycles) is "
			 "not in walk_active, so a side that hits the STLB looks translation-free", hit);
		see_add(c, t);
	}
	if (!c->clock_counted)
		see_add(c, "cycles were not counted on both sides: walk cycles use the calibrated clock, not the phase's");
	if (env && *env->hypervisor && (walk_skylake(b->walk_source) || walk_skylake(v->walk_source)))
		see_add(c, "in a guest, Skylake's WALK_ACTIVE leaves out the EPT (host) part of each walk, so tlb_ns "
			   "misses the host's share of translation");
	if (!c->llc_change)
		see_add(c, "LLC misses were not counted: the rest cannot be told cache or not");
}

/* dTLB counts without walk cycles: the delta per avoided miss, less what a change in LLC misses could cost. */
static void attribute_misses(struct comparison *c)
{
	bool changed = c->llc_change && strcmp(c->llc_change, "within_noise") != 0;

	c->method = "counters";
	c->tlb_ns = c->delta_ns;
	if (changed && c->delta_ns > 0 && c->llc_cache_bound_ns > 0 && c->delta_tlb_misses_per_access > 0) {
		/* Fewer LLC misses on larger pages could be part of the delta: up to their bound is unexplained. */
		double part = fmin(c->llc_cache_bound_ns, c->delta_ns);
		c->tlb_ns = c->delta_ns - part;
		c->unexplained_ns = part;
		c->assumption = "no page-walk cycles: the delta is translation except what the change in LLC misses "
				"could cost, which cannot be split from it and is unexplained (tlb_ns is a low end)";
	} else if (changed) {
		c->assumption = "no page-walk cycles: the delta is translation; the larger pages' extra LLC misses could "
				"hide more translation, so tlb_ns is a low end";
	} else if (!c->llc_change) {
		c->assumption = "same chain and cache-line footprint in both phases; LLC misses were not counted, so the "
				"delta per avoided dTLB miss is the cost of one miss only if the caches behaved alike";
	} else {
		c->assumption = "same chain and cache-line footprint in both phases and no change in LLC misses beyond "
				"the noise: the delta per avoided dTLB miss is the cost of one miss";
	}
	see_add(c, "no page-walk cycles: a cache effect that leaves LLC misses unchanged (L2 hits, page-table lines "
		   "in the cache, DRAM row locality) counts as translation");
	if (!c->llc_change)
		see_add(c, "LLC misses were not counted: any cache change counts as translation");
}

/*
 * Whether the parts add up within the noise: no part the counters measured
 * (translation) is negative, nor larger than the delta, by more than noise_ns.
 */
static void judge_sum(struct comparison *c)
{
	double noise = isfinite(c->noise_ns) ? c->noise_ns : 0;
	const char *what = NULL;
	double by = 0;

	c->inconsistency[0] = '\0';
	c->adds_up = 1;
	if (strcmp(c->method, "counters") != 0)
		return;
	if (c->tlb_ns < 0 && c->delta_ns > 0) {
		what = "translation is negative";
		by = -c->tlb_ns;
	} else if (c->unexplained_ns < 0) {
		what = "the measured parts exceed the delta";
		by = -c->unexplained_ns;
	}
	if (!what || by <= noise)
		return;
	c->adds_up = isfinite(c->noise_ns) ? 0 : -1;
	snprintf(c->inconsistency, sizeof(c->inconsistency), "%s by %.2f ns (tlb %.2f, cache %.2f of a %.2f ns delta), "
		 "%s", what, by, c->tlb_ns, c->cache_ns, c->delta_ns,
		 isfinite(c->noise_ns) ? "beyond its noise" : "and no interval tells whether that is noise");
	if (isfinite(c->noise_ns))
		snprintf(c->inconsistency + strlen(c->inconsistency), sizeof(c->inconsistency) - strlen(c->inconsistency),
			 " (±%.2f ns)", c->noise_ns);
}

/*
 * A side's 95 % half-width in ns: the comparison's (allocations as the unit),
 * else the phase's claimed precision, which has a normal approximation for
 * a few samples of one allocation; NAN with fewer than two samples.
 */
static double side_halfwidth(double halfwidth_ns, const struct phase_analysis *pa)
{
	if (isfinite(halfwidth_ns))
		return halfwidth_ns;
	return isfinite(pa->precision) ? pa->precision * pa->ns.median : NAN;
}

static void attribute(const struct phase_result *b, const struct phase_result *v, const struct analysis *a,
		      const struct environment *env, const struct timing_calibration *clock, struct comparison *c)
{
	struct side sb, sv;

	c->baseline_cycles_per_walk = c->variant_cycles_per_walk = NAN;
	c->cannot_see[0] = '\0';
	c->adds_up = 1;
	if (b->spec.workload->faults_expected) {
		/* Page faults: the larger page means fewer, larger faults, not cheaper translation. */
		c->method = "fault_path";
		c->assumption = "page-fault phases: the delta per page is the fault path (one fault per large page "
				"instead of one per 4 KiB page), not address translation";
		see_add(c, "the fault path is not split into kernel entry, zeroing and page-table work");
		return;
	}
	side_read(b, &a->phases[c->baseline], clock, &sb);
	side_read(v, &a->phases[c->variant], clock, &sv);
	c->baseline_cycles_per_walk = sb.cycles_per_walk;
	c->variant_cycles_per_walk = sv.cycles_per_walk;
	c->baseline_clock_ghz = sb.ghz;
	c->variant_clock_ghz = sv.ghz;
	c->clock_counted = sb.counted_clock && sv.counted_clock;
	double hb = side_halfwidth(c->baseline_halfwidth_ns, &a->phases[c->baseline]);
	double hv = side_halfwidth(c->variant_halfwidth_ns, &a->phases[c->variant]);
	c->noise_ns = isfinite(hb) && isfinite(hv) ? hypot(hb, hv) : NAN;
	judge_llc(&sb, &sv, c);
	c->have_tlb_counts = sb.have_misses && sv.have_misses;
	c->have_walk_cycles = sb.have_walk && sv.have_walk;
	if (c->have_tlb_counts)
		c->delta_tlb_misses_per_access = sb.misses - sv.misses;
	if (c->have_walk_cycles) {
		attribute_walks(&sb, &sv, env, c);
	} else if (c->have_tlb_counts) {
		attribute_misses(c);
	} else {
		c->method = "differential";
		c->tlb_ns = c->delta_ns;
		c->assumption = "no dTLB counters: both phases walk the same chain over the same cache-line "
				"footprint and differ only in page size, so the whole delta is address translation";
		see_add(c, "without counters no cache difference between the phases can be seen (page-table lines in "
			   "the cache, DRAM row locality): all of it counts as translation");
	}
	/* The cost of one miss is the translation part per avoided miss, never the whole delta. */
	if (c->have_tlb_counts && c->delta_tlb_misses_per_access > 1e-6 && c->tlb_ns > 0) {
		c->ns_per_tlb_miss = c->tlb_ns / c->delta_tlb_misses_per_access;
		if (sb.ghz > 0)
			c->cycles_per_tlb_miss = c->ns_per_tlb_miss * sb.ghz;
	}
	judge_sum(c);
}

/* The confidence level of a comparison's speedup interval, and the bootstrap that draws it (fixed seed). */
static const double SPEEDUP_ALPHA = 0.05;
enum { SPEEDUP_RESAMPLES = 2000 };
static const uint64_t SPEEDUP_SEED = 0x73706565647570ull;	/* "speedup" */

/* median(baseline) / median(variant). */
static double stat_speedup(const double *m)
{
	return m[1] > 0 ? m[0] / m[1] : NAN;
}

/*
 * The 95 % half-width of r's median in ns (stats_precision: allocations, or
 * processes, as the unit, widened to the phase's claimed precision where its
 * second passes measured the host's part), and *rel the same relative to
 * the median; NAN or INFINITY where the phase has too few samples for one.
 */
static double halfwidth_ns(const struct phase_result *r, const struct phase_analysis *pa, double *rel)
{
	const unsigned *cl;
	unsigned *owned = NULL;

	*rel = NAN;
	if (analysis_sample_clusters(r, &cl, &owned))
		return NAN;
	*rel = stats_precision(r->samples_ns, cl, r->n_samples);
	free(owned);
	/* Where the run measured what moves between runs (its second passes), the claim includes it. */
	if (isfinite(*rel) && isfinite(pa->precision) && pa->precision > *rel)
		*rel = pa->precision;
	return *rel * pa->ns.median;
}

/*
 * How sure the comparison is: the 95 % interval of the speedup (a
 * hierarchical bootstrap: allocations, then samples within them, so a
 * difference the allocations' placement could make is inside it), and
 * whether either phase's own 95 % interval (stats_precision, allocations as
 * the unit) is as wide as the difference: then the two cannot be told apart
 * and c->doubt says why. 0 or -ENOMEM.
 */
static int speedup_doubt(const struct phase_result *b, const struct phase_result *v, const struct analysis *a,
			 struct comparison *c)
{
	const unsigned *cb, *cv;
	unsigned *ob = NULL, *ov = NULL;
	int rc = analysis_sample_clusters(b, &cb, &ob);

	if (!rc)
		rc = analysis_sample_clusters(v, &cv, &ov);
	if (rc) {
		free(ob);
		return rc;
	}
	const struct stats_set sets[2] = { { b->samples_ns, cb, b->n_samples }, { v->samples_ns, cv, v->n_samples } };
	if (stats_bootstrap(sets, 2, stat_speedup, SPEEDUP_ALPHA, SPEEDUP_SEED, SPEEDUP_RESAMPLES, &c->speedup_lo,
			    &c->speedup_hi, NULL))
		c->speedup_lo = c->speedup_hi = NAN;
	free(ob);
	free(ov);
	double pb, pv;
	c->baseline_halfwidth_ns = halfwidth_ns(b, &a->phases[c->baseline], &pb);
	c->variant_halfwidth_ns = halfwidth_ns(v, &a->phases[c->variant], &pv);
	c->interval_known = isfinite(c->baseline_halfwidth_ns) && isfinite(c->variant_halfwidth_ns);
	c->comparable = !c->interval_known || fmax(c->baseline_halfwidth_ns, c->variant_halfwidth_ns) < fabs(c->delta_ns);
	c->doubt[0] = '\0';
	bool base_wider = !(c->baseline_halfwidth_ns < c->variant_halfwidth_ns);
	const struct phase_result *w = base_wider ? b : v;
	if (!c->interval_known)
		snprintf(c->doubt, sizeof(c->doubt), "no interval: the %s phase has %zu sample%s%s", w->spec.page.label,
			 w->n_samples, w->n_samples == 1 ? "" : "s", w->n_samples > 1 ? " of one allocation" : "");
	else if (!c->comparable)
		snprintf(c->doubt, sizeof(c->doubt), "the %s phase's own 95 %% interval (±%.0f %%, ±%.1f ns) is wider "
			 "than the difference between them (%.1f ns)", w->spec.page.label, 100 * (base_wider ? pb : pv),
			 base_wider ? c->baseline_halfwidth_ns : c->variant_halfwidth_ns, fabs(c->delta_ns));
	return 0;
}

/* Compare every page size with the smallest measured at the same working-set size. */
int analysis_build_comparisons(const struct phase_result *res, size_t n, const struct environment *env,
			       const struct timing_calibration *clock, struct analysis *a)
{
	a->comparisons = calloc(n ? n : 1, sizeof(*a->comparisons));
	if (!a->comparisons)
		return -ENOMEM;
	for (size_t v = 0; v < n; v++) {
		size_t b = SIZE_MAX;
		if (!analysis_measured_ok(&res[v]))
			continue;
		for (size_t i = 0; i < n; i++) {
			if (i == v || !analysis_measured_ok(&res[i]) || res[i].spec.size_bytes != res[v].spec.size_bytes ||
			    res[i].spec.stride_bytes != res[v].spec.stride_bytes ||
			    res[i].spec.fault_case != res[v].spec.fault_case || res[i].spec.layout != res[v].spec.layout ||
			    res[i].spec.workload != res[v].spec.workload || res[i].spec.page.bytes >= res[v].spec.page.bytes)
				continue;
			if (b == SIZE_MAX || res[i].spec.page.bytes < res[b].spec.page.bytes)
				b = i;
		}
		if (b == SIZE_MAX)
			continue;

		struct comparison *c = &a->comparisons[a->n_comparisons++];
		double mb = a->phases[b].ns.median, mv = a->phases[v].ns.median;
		c->baseline = b;
		c->variant = v;
		c->delta_ns = mb - mv;
		c->speedup = mv > 0 ? mb / mv : 0;
		/* With a packed control: each side's translation part, next to the delta between them. */
		c->has_control = a->phases[b].has_control && a->phases[v].has_control;
		c->baseline_translation_ns = a->phases[b].translation_ns;
		c->variant_translation_ns = a->phases[v].translation_ns;
		if (speedup_doubt(&res[b], &res[v], a, c))
			return -ENOMEM;
		/* After the doubt: the attribution judges its parts against the phases' half-widths. */
		attribute(&res[b], &res[v], a, env, clock, c);
		analysis_translation_share(res, n, env, a, c);
	}
	return 0;
}

/* ---- stride steps ---- */

/* What a step between two strides changes, with 64 B lines, on pages of page_bytes. */
static const char *stride_label(uint64_t from, uint64_t to, uint64_t page_bytes)
{
	if (to <= 512)
		return "cache";		/* each access touches a new line more often; pages are still shared */
	if (from >= page_bytes)
		return "flat";		/* one access per page either way: the miss penalty is flat */
	if (page_bytes > 4096)
		return "within-page";	/* a new line each access and still many accesses per huge page: no TLB step */
	if (from >= 512)
		return "tlb";		/* same cache behaviour (a new line each access), more pages per access */
	return "cache+tlb";
}

/*
 * The same step (strides, size, workload) on huge pages, for a step on base
 * pages: the largest huge page size swept. SIZE_MAX: none.
 */
static size_t huge_twin(const struct phase_result *res, const struct analysis *a, const struct stride_step *st)
{
	const struct phase_spec *f = &res[st->from].spec, *t = &res[st->to].spec;
	size_t best = SIZE_MAX;

	for (size_t k = 0; k < a->n_stride_steps; k++) {
		const struct phase_spec *hf = &res[a->stride_steps[k].from].spec, *ht = &res[a->stride_steps[k].to].spec;
		if (hf->page.bytes <= f->page.bytes || hf->workload != f->workload || hf->size_bytes != f->size_bytes ||
		    hf->stride_bytes != f->stride_bytes || ht->stride_bytes != t->stride_bytes)
			continue;
		if (best == SIZE_MAX || hf->page.bytes > res[a->stride_steps[best].from].spec.page.bytes)
			best = k;
	}
	return best;
}

/*
 * What the evidence supports of each step: a rise within either phase's own
 * 95 % interval (or no rise) is "none", whatever the geometry predicts; the
 * translation part of a base-page TLB step is what the same step on huge
 * pages (which have no TLB step there) does not also show.
 */
static void judge_stride_steps(const struct phase_result *res, struct analysis *a)
{
	for (size_t i = 0; i < a->n_stride_steps; i++) {
		struct stride_step *st = &a->stride_steps[i];
		double rel;
		double hf = halfwidth_ns(&res[st->from], &a->phases[st->from], &rel);
		double ht = halfwidth_ns(&res[st->to], &a->phases[st->to], &rel);
		double noise = fmax(isfinite(hf) ? hf : 0, isfinite(ht) ? ht : 0);
		st->noise_ns = noise;
		bool claims_cost = st->label && strcmp(st->label, "flat") != 0 && strcmp(st->label, "within-page") != 0;
		if (claims_cost && !(st->delta_ns > noise))
			st->label = "none";
	}
	for (size_t i = 0; i < a->n_stride_steps; i++) {
		struct stride_step *st = &a->stride_steps[i];
		st->tlb_ns = NAN;
		st->huge = SIZE_MAX;
		if (!st->label || (strcmp(st->label, "tlb") != 0 && strcmp(st->label, "cache+tlb") != 0))
			continue;
		st->huge = huge_twin(res, a, st);
		if (st->huge != SIZE_MAX)
			st->tlb_ns = st->delta_ns - a->stride_steps[st->huge].delta_ns;
	}
}

int analysis_build_stride_steps(const struct phase_result *res, size_t n, const struct timing_calibration *clock,
				struct analysis *a)
{
	a->stride_steps = calloc(n ? n : 1, sizeof(*a->stride_steps));
	if (!a->stride_steps)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct phase_spec *si = &res[i].spec;
		size_t next = SIZE_MAX;
		if (!analysis_measured_ok(&res[i]) || si->workload->sweep != WORKLOAD_SWEEP_STRIDES)
			continue;
		/* The next larger stride at the same size, page size and workload. */
		for (size_t j = 0; j < n; j++) {
			const struct phase_spec *sj = &res[j].spec;
			if (!analysis_measured_ok(&res[j]) || sj->workload != si->workload || sj->size_bytes != si->size_bytes ||
			    strcmp(sj->page.label, si->page.label) != 0 || sj->stride_bytes <= si->stride_bytes)
				continue;
			if (next == SIZE_MAX || sj->stride_bytes < res[next].spec.stride_bytes)
				next = j;
		}
		if (next == SIZE_MAX)
			continue;
		struct stride_step *st = &a->stride_steps[a->n_stride_steps++];
		double ghz = analysis_clock_ghz(clock, &res[i]);
		st->from = i;
		st->to = next;
		st->label = stride_label(si->stride_bytes, res[next].spec.stride_bytes, si->page.bytes);
		st->delta_ns = a->phases[next].ns.median - a->phases[i].ns.median;
		st->delta_cycles = st->delta_ns * ghz;
		st->have_misses = analysis_per_access(&res[i], METRIC_DTLB_LOAD_MISSES, &st->misses_from) &&
				  analysis_per_access(&res[next], METRIC_DTLB_LOAD_MISSES, &st->misses_to);
	}
	judge_stride_steps(res, a);
	return 0;
}
