/* SPDX-License-Identifier: MIT */
/* The knees of a tlbsize curve, matched with the TLB capacities CPUID reports. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "judge/analysis_internal.h"
#include "measure/workload.h"

enum { MAX_KNEES = 16, MAX_CURVE = 1024 };

static int cmp_knee_point(const void *pa, const void *pb)
{
	double x = ((const struct knee_point *)pa)->x, y = ((const struct knee_point *)pb)->x;

	return (x > y) - (x < y);
}

static void match_cpuid(struct tlb_knee *tk, const struct environment *env)
{
	const struct {
		const char *level;
		unsigned entries;
	} caps[] = {
		{ "l1d_4k_entries", env ? env->tlb.l1d_4k_entries : 0 },
		{ "l2d_4k_entries", env ? env->tlb.l2d_4k_entries : 0 },
	};

	for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		if (!caps[c].entries)
			continue;
		/*
		 * The capacity lies where the rise happens: between the last point
		 * on the lower level and the first on the higher one (a
		 * set-associative TLB starts missing before it is full).
		 */
		double e = caps[c].entries, x = tk->knee.x_before;
		if (e > tk->knee.x_before && e <= tk->knee.x_after)
			x = e;
		else if (e > tk->knee.x_after)
			x = tk->knee.x_after;
		double err = (x - e) / e;
		if (!tk->cpuid_level || fabs(err) < fabs(tk->relative_error)) {
			tk->cpuid_level = caps[c].level;
			tk->cpuid_entries = caps[c].entries;
			tk->relative_error = err;
		}
	}
	tk->matches = tk->cpuid_level && fabs(tk->relative_error) <= KNEE_MATCH_TOLERANCE;
}

int analysis_build_knees(const struct phase_result *res, size_t n, const struct environment *env, struct analysis *a)
{
	struct knee_point *pts = calloc(MAX_CURVE, sizeof(*pts));
	struct knee found[MAX_KNEES];
	size_t m = 0, k = 0;

	a->knees = calloc(MAX_KNEES, sizeof(*a->knees));
	if (!pts || !a->knees) {
		free(pts);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && m < MAX_CURVE; i++) {
		if (!analysis_measured_ok(&res[i]) || res[i].spec.workload->sweep != WORKLOAD_SWEEP_PAGE_COUNTS)
			continue;
		pts[m++] = (struct knee_point){ .x = (double)res[i].slots, .median = a->phases[i].ns.median,
						.spread = stats_mad(res[i].samples_ns, res[i].n_samples,
							      a->phases[i].ns.median) };
	}
	qsort(pts, m, sizeof(*pts), cmp_knee_point);
	if (m && knees_detect(pts, m, found, MAX_KNEES, &k) == 0) {
		for (size_t i = 0; i < k && i < MAX_KNEES; i++) {
			struct tlb_knee *tk = &a->knees[a->n_knees++];
			tk->knee = found[i];
			tk->page_label = "4k";
			match_cpuid(tk, env);
		}
	}
	free(pts);
	return 0;
}
