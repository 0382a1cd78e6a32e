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

/* LLC misses per access that count as "the cache behaviour changed". */
static const double LLC_DELTA_SIGNIFICANT = 0.01;

static void attribute(const struct phase_result *b, const struct phase_result *v, const struct timing_calibration *clock,
		      struct comparison *c)
{
	if (b->spec.workload->faults_expected) {
		/* Page faults: the larger page means fewer, larger faults, not cheaper translation. */
		c->method = "fault_path";
		c->assumption = "page-fault phases: the delta per page is the fault path (one fault per large page "
				"instead of one per 4 KiB page), not address translation";
		return;
	}
	double mb_miss, mv_miss, wb, wv, lb, lv;
	bool llc = analysis_per_access(b, METRIC_LLC_LOAD_MISSES, &lb) &&
		   analysis_per_access(v, METRIC_LLC_LOAD_MISSES, &lv);
	bool llc_changed = llc && fabs(lb - lv) >= LLC_DELTA_SIGNIFICANT;
	double ghz = analysis_clock_ghz(clock, b);

	c->have_tlb_counts = analysis_per_access(b, METRIC_DTLB_LOAD_MISSES, &mb_miss) &&
			     analysis_per_access(v, METRIC_DTLB_LOAD_MISSES, &mv_miss);
	c->have_walk_cycles = ghz > 0 && analysis_per_access(b, METRIC_WALK_ACTIVE, &wb) &&
			      analysis_per_access(v, METRIC_WALK_ACTIVE, &wv);
	if (c->have_tlb_counts) {
		c->delta_tlb_misses_per_access = mb_miss - mv_miss;
		if (c->delta_tlb_misses_per_access > 1e-6) {
			c->ns_per_tlb_miss = c->delta_ns / c->delta_tlb_misses_per_access;
			if (ghz > 0)
				c->cycles_per_tlb_miss = c->ns_per_tlb_miss * ghz;
		}
	}
	if (c->have_walk_cycles) {
		/* Page-walk cycles measure translation directly; what is left is cache or unexplained. */
		c->method = "counters";
		c->tlb_ns = (wb - wv) / ghz;
		double rest = c->delta_ns - c->tlb_ns;
		if (llc_changed)
			c->cache_ns = rest;
		else
			c->unexplained_ns = rest;
		c->assumption = llc_changed ? "tlb_ns from page-walk cycles (walk_active); the rest is cache, since "
					      "LLC misses per access changed"
					    : "tlb_ns from page-walk cycles (walk_active); LLC misses did not change, "
					      "so the rest is unexplained";
	} else if (c->have_tlb_counts) {
		c->method = "counters";
		if (llc_changed) {
			c->unexplained_ns = c->delta_ns;
			c->assumption = "LLC misses per access changed as well and no page-walk cycles are counted, "
					"so the delta cannot be split between TLB and cache";
		} else {
			c->tlb_ns = c->delta_ns;
			c->assumption = "same chain and cache-line footprint in both phases and no change in LLC "
					"misses: the delta per avoided dTLB miss is the cost of one miss";
		}
	} else {
		c->method = "differential";
		c->tlb_ns = c->delta_ns;
		c->assumption = "no dTLB counters: both phases walk the same chain over the same cache-line "
				"footprint and differ only in page size, so the whole delta is address translation";
	}
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
 * second pass measured a between-run term), and *rel the same relative to
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
	/* Where the run measured what moves between runs (its second pass), the claim includes it. */
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
		attribute(&res[b], &res[v], clock, c);
		/* With a packed control: each side's translation part, next to the delta between them. */
		c->has_control = a->phases[b].has_control && a->phases[v].has_control;
		c->baseline_translation_ns = a->phases[b].translation_ns;
		c->variant_translation_ns = a->phases[v].translation_ns;
		if (speedup_doubt(&res[b], &res[v], a, c))
			return -ENOMEM;
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
