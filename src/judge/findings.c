/* SPDX-License-Identifier: MIT */
/* Findings: statements about several phases together (a speedup that shrinks over a size sweep). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/analysis_internal.h"
#include "measure/plan.h"
#include "measure/workload.h"
#include "parse.h"

static struct analysis_finding *add_finding(struct analysis *a, const char *id)
{
	struct analysis_finding *f;

	if (a->n_findings >= MAX_FINDINGS)
		return NULL;
	f = &a->findings[a->n_findings++];
	memset(f, 0, sizeof(*f));
	f->id = id;
	return f;
}

static void finding_evidence(struct analysis_finding *f, const char *key, double value)
{
	analysis_evidence_add(&f->evidence, key, value);
}

static int cmp_comparison_size(const void *pa, const void *pb, void *ctx)
{
	const struct phase_result *res = ctx;
	const struct comparison *x = *(const struct comparison *const *)pa, *y = *(const struct comparison *const *)pb;
	uint64_t sx = res[x->variant].spec.size_bytes, sy = res[y->variant].spec.size_bytes;

	return (sx > sy) - (sx < sy);
}

/*
 * Over a size sweep (three or more sizes of one page-size pair): the constant
 * TLB cost is diluted by a base latency that grows with the working set, so the
 * speedup shrinks although TLB misses grow. Compare the lower and upper halves
 * of the sweep by their medians, so one noisy size does not decide.
 */
static bool same_sweep(const struct phase_result *res, const struct comparison *x, const struct comparison *y)
{
	const struct phase_spec *xb = &res[x->baseline].spec, *yb = &res[y->baseline].spec;
	const struct phase_spec *xv = &res[x->variant].spec, *yv = &res[y->variant].spec;

	return xb->page.bytes == yb->page.bytes && xv->page.kind == yv->page.kind && xv->page.bytes == yv->page.bytes &&
	       xb->workload == yb->workload && xb->stride_bytes == yb->stride_bytes &&
	       xb->fault_case == yb->fault_case && xb->layout == yb->layout;
}

void analysis_find_shrinking_speedup(const struct phase_result *res, struct analysis *a)
{
	for (size_t i = 0; i < a->n_comparisons; i++) {
		const struct comparison *first = &a->comparisons[i];
		const struct comparison *sweep[PLAN_MAX_SIZES];
		size_t m = 0;
		bool seen = false;

		for (size_t k = 0; k < i && !seen; k++)
			seen = same_sweep(res, &a->comparisons[k], first);
		if (seen || res[first->baseline].spec.workload->faults_expected)
			continue;
		for (size_t k = i; k < a->n_comparisons && m < PLAN_MAX_SIZES; k++)
			if (same_sweep(res, &a->comparisons[k], first))
				sweep[m++] = &a->comparisons[k];
		if (m < 3)
			continue;
		qsort_r(sweep, m, sizeof(sweep[0]), cmp_comparison_size, (void *)res); // NOLINT(bugprone-sizeof-expression): an array of pointers
		size_t sizes = 1;
		for (size_t k = 1; k < m; k++)
			sizes += res[sweep[k]->baseline].spec.size_bytes != res[sweep[k - 1]->baseline].spec.size_bytes;
		if (sizes < 3)
			continue;	/* a sweep needs three sizes */

		size_t half = m / 2, hi0 = m - half;
		double lo_base[PLAN_MAX_SIZES], hi_base[PLAN_MAX_SIZES], lo_delta[PLAN_MAX_SIZES];
		double hi_delta[PLAN_MAX_SIZES], lo_speed[PLAN_MAX_SIZES], hi_speed[PLAN_MAX_SIZES];
		for (size_t k = 0; k < half; k++) {
			lo_base[k] = a->phases[sweep[k]->baseline].ns.median;
			lo_delta[k] = sweep[k]->delta_ns;
			lo_speed[k] = sweep[k]->speedup;
			hi_base[k] = a->phases[sweep[hi0 + k]->baseline].ns.median;
			hi_delta[k] = sweep[hi0 + k]->delta_ns;
			hi_speed[k] = sweep[hi0 + k]->speedup;
		}
		struct stats_summary lb, hb, ld, hd, ls, hs;
		stats_summarize(lo_base, half, &lb);
		stats_summarize(hi_base, half, &hb);
		stats_summarize(lo_delta, half, &ld);
		stats_summarize(hi_delta, half, &hd);
		stats_summarize(lo_speed, half, &ls);
		stats_summarize(hi_speed, half, &hs);
		double base_growth = lb.median > 0 ? hb.median / lb.median : 0;
		double delta_growth = ld.median > 0 ? hd.median / ld.median : 0;
		if (!(base_growth >= 1.3 && delta_growth > 0 && delta_growth * 1.5 <= base_growth && hs.median < ls.median))
			continue;

		struct analysis_finding *f = add_finding(a, "speedup_shrinks_with_size");
		if (!f)
			return;
		char s0[16], s1[16];
		const struct phase_result *b0 = &res[sweep[0]->baseline], *v0 = &res[sweep[0]->variant];
		snprintf(f->message, sizeof(f->message),
			 "from %siB to %siB the %s latency grows %.1f× (%.1f → %.1f ns, medians of the smaller and the "
			 "larger sizes) while the %s → %s delta stays about the same (%.1f → %.1f ns): the speedup "
			 "shrinks (%.2f× → %.2f×) although TLB misses "
			 "grow, because a roughly constant translation cost is diluted by cache and DRAM latency that "
			 "grow with the working set",
			 format_size(b0->spec.size_bytes, s0, sizeof(s0)),
			 format_size(res[sweep[m - 1]->baseline].spec.size_bytes, s1, sizeof(s1)), b0->spec.page.label,
			 base_growth, lb.median, hb.median, b0->spec.page.label, v0->spec.page.label, ld.median, hd.median,
			 ls.median, hs.median);
		finding_evidence(f, "sizes", (double)m);
		finding_evidence(f, "base_growth", base_growth);
		finding_evidence(f, "delta_growth", delta_growth);
		finding_evidence(f, "speedup_small", ls.median);
		finding_evidence(f, "speedup_large", hs.median);
	}
}
