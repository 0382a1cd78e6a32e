/* SPDX-License-Identifier: MIT */
/* How much of a 4k phase's latency is address translation: proven against a walk-free phase, else a range. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "judge/analysis_internal.h"
#include "measure/workload.h"

/*
 * dTLB misses per access below which a phase's translation is nearly free:
 * at ~30 cycles a miss that hits the STLB, 0.001 is under 0.05 cycles per
 * access, below what a median resolves.
 */
static const double WALK_FREE_MISSES = 0.001;

/*
 * Whether r's translation is nearly free, from evidence only: its dTLB
 * misses per access, or, on bare metal, its pages all fitting the L1 dTLB
 * for their size with the kernel's backing verified. why says what decided
 * it either way.
 */
static bool walk_free(const struct phase_result *r, const struct environment *env, char *why, size_t len)
{
	double miss;
	uint64_t pages = r->spec.page.bytes ? (r->spec.size_bytes + r->spec.page.bytes - 1) / r->spec.page.bytes : 0;

	if (analysis_per_access(r, METRIC_DTLB_LOAD_MISSES, &miss)) {
		snprintf(why, len, "the %s phase has %.4f dTLB misses per access (walk-free below %.3f)",
			 r->spec.page.label, miss, WALK_FREE_MISSES);
		return miss < WALK_FREE_MISSES;
	}
	if (!env) {
		snprintf(why, len, "no dTLB counts and no recorded machine say whether the %s phase walks",
			 r->spec.page.label);
		return false;
	}
	if (env->hypervisor[0]) {
		snprintf(why, len, "no dTLB counts, and under %s a guest page is translated at the host's page size, "
			 "which the guest cannot see, so no phase is known to be walk-free", env->hypervisor);
		return false;
	}
	const struct env_tlb *t = environment_expected_tlb(env);
	unsigned entries = env_tlb_entries(t, 1, r->spec.page.bytes);
	bool granted = r->backing_known && r->backing.huge_fraction >= 0.999;
	if (!entries) {
		snprintf(why, len, "no dTLB counts, and the L1 dTLB entries for %s pages are not known", r->spec.page.label);
		return false;
	}
	snprintf(why, len, "the %s phase's %llu page%s %s the %u-entry L1 dTLB for its page size%s%s%s%s",
		 r->spec.page.label, (unsigned long long)pages, pages == 1 ? "" : "s",
		 pages <= entries ? (pages == 1 ? "fits" : "fit") : (pages == 1 ? "exceeds" : "exceed"), entries,
		 t->source[0] ? " (" : "", t->source, t->source[0] ? ")" : "",
		 granted ? "" : ", but its huge pages were not verified");
	return pages <= entries && granted && r->spec.page.bytes > 4096;
}

/* A measured phase at c's size and stride: the phases that differ from the baseline only in their pages. */
static bool same_grid(const struct phase_result *r, const struct phase_result *b)
{
	return analysis_measured_ok(r) && r->spec.size_bytes == b->spec.size_bytes &&
	       r->spec.stride_bytes == b->spec.stride_bytes && r->spec.workload == b->spec.workload &&
	       r->spec.fault_case == b->spec.fault_case && r->spec.layout == b->spec.layout &&
	       r->spec.page.bytes > b->spec.page.bytes;
}

void analysis_translation_share(const struct phase_result *res, size_t n, const struct environment *env,
				const struct analysis *a, struct comparison *c)
{
	struct translation_share *t = &c->translation;
	const struct phase_result *b = &res[c->baseline];
	const struct phase_analysis *pb = &a->phases[c->baseline];
	size_t largest = SIZE_MAX;
	char why[200] = "", first_why[200] = "";

	*t = (struct translation_share){ .lo_ns = NAN, .hi_ns = NAN, .free_phase = SIZE_MAX, .control_vs_free_ns = NAN };
	if (!b->spec.workload->latency || b->spec.fault_case != FAULT_NONE || c->have_walk_cycles)
		return;	/* page faults are not translation; page-walk cycles measure it directly */
	for (size_t i = 0; i < n; i++) {
		if (!same_grid(&res[i], b))
			continue;
		if (largest == SIZE_MAX || res[i].spec.page.bytes > res[largest].spec.page.bytes)
			largest = i;
		if (t->free_phase == SIZE_MAX && walk_free(&res[i], env, why, sizeof(why)))
			t->free_phase = i;
		else if (!first_why[0])
			memcpy(first_why, why, sizeof(why));
	}
	if (pb->has_control) {
		t->hi_ns = pb->translation_ns;
		t->hi_basis = "packed control";
	}
	if (t->free_phase != SIZE_MAX) {
		const struct phase_analysis *pf = &a->phases[t->free_phase];
		t->known = t->proven = true;
		t->lo_ns = t->hi_ns = pb->ns.median - pf->ns.median;
		t->lo_basis = t->hi_basis = res[t->free_phase].spec.page.label;
		int len = snprintf(t->evidence, sizeof(t->evidence), "%s", why);
		if (pb->has_control && len > 0 && (size_t)len < sizeof(t->evidence)) {
			double cm = a->phases[pb->control].ns.median;
			t->control_vs_free_ns = cm - pf->ns.median;
			snprintf(t->evidence + len, sizeof(t->evidence) - (size_t)len,
				 "; the packed control is %.1f ns (%.0f %%) %s than it", fabs(t->control_vs_free_ns),
				 pf->ns.median > 0 ? 100 * fabs(t->control_vs_free_ns) / pf->ns.median : 0,
				 t->control_vs_free_ns < 0 ? "faster" : "slower");
		}
		return;
	}
	if (largest != SIZE_MAX) {
		t->known = true;
		t->lo_ns = pb->ns.median - a->phases[largest].ns.median;
		t->lo_basis = res[largest].spec.page.label;
	} else if (pb->has_control) {
		t->known = true;
		t->lo_ns = t->hi_ns;
		t->lo_basis = t->hi_basis;
	}
	if (t->known && isfinite(t->hi_ns) && t->hi_ns < t->lo_ns) {
		/* The control read slower than the larger pages: the two estimates swap ends. */
		double x = t->lo_ns;
		const char *xb = t->lo_basis;
		t->lo_ns = t->hi_ns;
		t->lo_basis = t->hi_basis;
		t->hi_ns = x;
		t->hi_basis = xb;
	}
	snprintf(t->evidence, sizeof(t->evidence), "no control proven: %s%s",
		 first_why[0] ? first_why : "no phase on larger pages at this size",
		 t->known && t->lo_ns < 0 ? "; the larger pages read slower, so the low end is 0" : "");
	/* Translation is never negative: an estimate below 0 says only that nothing was saved. */
	if (t->known && t->lo_ns < 0)
		t->lo_ns = 0;
	if (t->known && isfinite(t->hi_ns) && t->hi_ns < 0)
		t->hi_ns = 0;
}
