/* SPDX-License-Identifier: MIT */
/* Findings: statements about several phases together (a shrinking speedup, translation left to nested paging). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/analysis_internal.h"
#include "measure/plan.h"
#include "measure/workload.h"
#include "parse.h"
#include "stats.h"

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
		char s0[SIZE_TEXT], s1[SIZE_TEXT];
		const struct phase_result *b0 = &res[sweep[0]->baseline], *v0 = &res[sweep[0]->variant];
		analysis_text(f->message, sizeof(f->message),
			      "from %s to %s the %s latency grows %.1f× (%.1f → %.1f ns, medians of the smaller and the "
			      "larger sizes) while the %s → %s delta stays about the same (%.1f → %.1f ns): the speedup "
			      "shrinks (%.2f× → %.2f×) although TLB misses "
			      "grow, because a roughly constant translation cost is diluted by cache and DRAM latency that "
			      "grow with the working set",
			      format_bytes(b0->spec.size_bytes, s0, sizeof(s0)),
			      format_bytes(res[sweep[m - 1]->baseline].spec.size_bytes, s1, sizeof(s1)), b0->spec.page.label,
			      base_growth, lb.median, hb.median, b0->spec.page.label, v0->spec.page.label, ld.median, hd.median,
			      ls.median, hs.median);
		finding_evidence(f, "sizes", (double)m);
		finding_evidence(f, "base_growth", base_growth);
		finding_evidence(f, "delta_growth", delta_growth);
		finding_evidence(f, "speedup_small", ls.median);
		finding_evidence(f, "speedup_large", hs.median);
	}
}

/*
 * Under a hypervisor, huge pages that fit the L2 TLB still read slower than
 * their packed control by more than their own noise: the translation the
 * guest cannot remove. The largest such excess names it, with what would
 * confirm it; a 1g phase at the same size says whether the guest page size
 * is the limit.
 */
void analysis_find_nested_paging(const struct phase_result *res, size_t n, const struct environment *env,
				 struct analysis *a)
{
	const struct comparison *worst = NULL;
	size_t count = 0;

	if (!env || !env->hypervisor[0])
		return;
	for (size_t i = 0; i < a->n_comparisons; i++) {
		const struct comparison *c = &a->comparisons[i];
		const struct phase_spec *v = &res[c->variant].spec;
		/*
		 * A control with every line of its pairs (64 B apart, as before the
		 * 128 B packing) reads far faster than lone lines from the pair
		 * prefetch alone: its excess says nothing of nested paging.
		 */
		if (!c->has_control || v->page.bytes <= 4096 || !v->workload->latency || v->fault_case != FAULT_NONE ||
		    res[a->phases[c->variant].control].spec.stride_bytes < 128 ||
		    !(c->variant_translation_ns > (isfinite(c->variant_halfwidth_ns) ? c->variant_halfwidth_ns : 0)))
			continue;
		count++;
		if (!worst || c->variant_translation_ns > worst->variant_translation_ns)
			worst = c;
	}
	struct analysis_finding *f = worst ? add_finding(a, "nested_paging_translation") : NULL;
	if (!f)
		return;
	const struct phase_result *v = &res[worst->variant];
	uint64_t pages = (v->spec.size_bytes + v->spec.page.bytes - 1) / v->spec.page.bytes;
	unsigned entries = env_tlb_entries(environment_expected_tlb(env), 2, v->spec.page.bytes);
	double vm = a->phases[worst->variant].ns.median;
	char fits[160], big[200] = "";
	if (entries)
		snprintf(fits, sizeof(fits), "%s its %llu huge pages fit the %u-entry L2 TLB%s%s", pages <= entries ?
			 "although" : "and", (unsigned long long)pages, entries, env->core_name[0] ? " of " : "",
			 env->core_name);
	else
		snprintf(fits, sizeof(fits), "with %llu huge pages (the L2 TLB's entries for them are not known)",
			 (unsigned long long)pages);
	for (size_t i = 0; i < n; i++) {
		const struct phase_spec *g = &res[i].spec;
		if (analysis_measured_ok(&res[i]) && g->page.bytes > v->spec.page.bytes && g->size_bytes == v->spec.size_bytes &&
		    g->stride_bytes == v->spec.stride_bytes && g->workload == v->spec.workload && g->layout == v->spec.layout)
			snprintf(big, sizeof(big), "; the %s phase reads %.1f ns, %.1f ns from %s: %s", g->page.label,
				 a->phases[i].ns.median, fabs(a->phases[i].ns.median - vm), v->spec.page.label,
				 fabs(a->phases[i].ns.median - vm) <= fmax(worst->variant_halfwidth_ns, 0.02 * vm)
					 ? "larger guest pages do not help, so the guest page size is not the limit"
					 : "larger guest pages help, so part of it is the guest's own TLB reach");
	}
	analysis_text(f->message, sizeof(f->message),
		      "under %s, %s is still %.1f ns per access (%.0f %%) slower than its packed control %s: in a guest "
		      "every TLB entry maps the smaller of the guest and the host page, and a miss walks the host's tables "
		      "too, so this is likely the host backing guest memory with smaller pages, or the wider span caching "
		      "worse than the control%s. To confirm: back the guest with huge pages on the host, or count dTLB "
		      "misses and walk cycles with a vPMU%s", env->hypervisor, v->spec.name, worst->variant_translation_ns,
		      vm > 0 ? 100 * worst->variant_translation_ns / vm : 0, fits, big,
		      count > 1 ? " (the largest of the sizes where it shows)" : "");
	finding_evidence(f, "variant_translation_ns", worst->variant_translation_ns);
	finding_evidence(f, "variant_halfwidth_ns", worst->variant_halfwidth_ns);
	finding_evidence(f, "huge_pages", (double)pages);
	finding_evidence(f, "l2_tlb_entries", entries);
	finding_evidence(f, "sizes", (double)count);
}

/* The 95 % half-width the phase claims for its median, ns (0 where it has none). */
static double claimed_ns(const struct phase_analysis *pa)
{
	double h = pa->precision * pa->ns.median;

	return isfinite(h) && h > 0 ? h : 0;
}

/*
 * Two layouts of the same phase side by side (--layout colored,aligned):
 * where they differ by more than either's claimed interval, the layout is
 * part of the number. Colored spreads data lines over every set, where they
 * compete with the page-table lines a walk brings in; aligned puts them in a
 * few sets. Neither is how real data sits at every size.
 */
void analysis_find_layout_effect(const struct phase_result *res, size_t n, struct analysis *a)
{
	char list[600] = "";
	size_t len = 0, pairs = 0, differ = 0;
	double worst = 0;
	bool colored_slower = false;

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			const struct phase_spec *c = &res[i].spec, *al = &res[j].spec;
			if (!analysis_measured_ok(&res[i]) || !analysis_measured_ok(&res[j]) || c->layout != LAYOUT_COLORED ||
			    al->layout != LAYOUT_ALIGNED || c->size_bytes != al->size_bytes || c->workload != al->workload ||
			    c->stride_bytes != al->stride_bytes || strcmp(c->page.label, al->page.label) != 0)
				continue;
			double mc = a->phases[i].ns.median, ma = a->phases[j].ns.median;
			double noise = fmax(claimed_ns(&a->phases[i]), claimed_ns(&a->phases[j]));
			bool real = fabs(mc - ma) > noise;
			char sz[SIZE_TEXT];
			pairs++;
			differ += real;
			int k = snprintf(list + len, sizeof(list) - len, "%s%s at %s: colored %.1f, aligned %.1f ns (%+.1f %%, "
					 "±%.1f ns%s)", len ? "; " : "", c->page.label, format_bytes(c->size_bytes, sz, sizeof(sz)), mc,
					 ma, ma > 0 ? 100 * (mc / ma - 1) : 0, noise, real ? "" : ", within the noise");
			if (k > 0 && (size_t)k < sizeof(list) - len)
				len += (size_t)k;
			if (real && ma > 0 && fabs(mc / ma - 1) > worst) {
				worst = fabs(mc / ma - 1);
				colored_slower = mc > ma;
			}
		}
	if (!pairs)
		return;
	struct analysis_finding *f = add_finding(a, "layout_changes_latency");
	if (!f)
		return;
	if (!differ)
		analysis_text(f->message, sizeof(f->message), "colored and aligned read the same within their 95 %% intervals: "
			      "%s", list);
	else
		analysis_text(f->message, sizeof(f->message), "the layout is part of the number: %s. %s; neither layout is how "
			      "real data sits at every size, so read both", list,
			      colored_slower ? "Where colored is slower, its data lines spread over every L2 set and compete there "
					       "with the page-table lines the walks bring in, while aligned lines leave most sets "
					       "to them"
					     : "Where aligned is slower, its lines fall in a few cache sets and evict each other "
					       "(cache_set_aliasing)");
	finding_evidence(f, "pairs", (double)pairs);
	finding_evidence(f, "pairs_differ", (double)differ);
	finding_evidence(f, "largest_relative_difference", worst);
}

/*
 * The first write from user space to a page the kernel has just populated
 * (MADV_POPULATE_WRITE) is a TLB miss, tens to a few hundred ns, natively
 * and under nested paging (EPT/NPT); where a hypervisor builds its own
 * page tables as pages are used (shadow paging: PVM, KVM without EPT/NPT)
 * it is a trap to it, microseconds (PVM here: 1.7-2.4 µs a 4 KiB page on
 * one thread, 6.2-6.5 µs on two at once, 8-34 ns per 4 KiB of THP). Each
 * phase's figure is a median of 64-page chunks (region_populate_parallel()),
 * which a preempted thread does not move, so one 4 KiB phase over this is
 * the evidence. Not every page traps: the packed control's 8 MiB, mapped
 * again at once, read 248 ns in one run and 2.6 µs in another, so a cheap
 * phase does not clear an expensive one.
 */
#define SHADOW_MIN_PAGES 1024u

/*
 * A phase's first-access cost per 4 KiB page, or NAN without 1024 pages of
 * it or on pages over page_bytes_max; *pages: how many. A chase's is its
 * first_access; the page-fault workload's anon_prefault case times the same
 * write (its region populated by the kernel, then each page touched), one
 * sample a process, so its median sample is.
 */
static double first_access_per_page(const struct phase_result *r, uint64_t page_bytes_max, uint64_t *pages)
{
	double ns = NAN;

	*pages = 0;
	if (r->status != PHASE_OK || r->spec.page.bytes > page_bytes_max)
		return NAN;
	if (r->spec.fault_case == FAULT_ANON_PREFAULT && r->n_samples) {
		*pages = r->spec.size_bytes / 4096 * r->n_samples;
		ns = stats_median(r->samples_ns, r->n_samples);
	} else if (r->first_access_pages) {
		*pages = r->first_access_pages;
		ns = r->first_access_ns / (double)r->first_access_pages;
	}
	return *pages >= SHADOW_MIN_PAGES ? ns : NAN;
}

/* One piece of evidence for shadow_paging: where it was measured, how, its ns per 4 KiB page and its pages. */
struct first_access_seen {
	const char *name;
	const char *how;
	const char *page;	/* the page size it was on */
	double ns;
	uint64_t pages;
};

/* The 4 KiB evidence of the phases and of the command's own probe (environment.first_access), the most and the least. */
static bool first_access_range(const struct phase_result *res, size_t n, const struct environment *env,
			       struct first_access_seen *most, struct first_access_seen *least, struct first_access_seen *huge)
{
	uint64_t pages;

	*most = *least = *huge = (struct first_access_seen){ .ns = NAN };
	for (size_t i = 0; i <= n; i++) {
		struct first_access_seen s = { .ns = NAN };
		if (i < n) {
			double h = first_access_per_page(&res[i], UINT64_MAX, &pages);
			s = (struct first_access_seen){ res[i].spec.name,
							res[i].spec.fault_case == FAULT_ANON_PREFAULT ? "its timed touches"
												    : "64-page chunks",
							res[i].spec.page.label, h, pages };
			if (!isnan(h) && res[i].spec.page.bytes > 4096) {
				if (isnan(huge->ns) || h < huge->ns)
					*huge = s;
				continue;
			}
		} else if (env && env->first_access.pages >= SHADOW_MIN_PAGES) {
			s = (struct first_access_seen){ "tlbprof's probe before measuring", "64-page chunks", "4k",
							env->first_access.ns_per_page, env->first_access.pages };
		}
		if (isnan(s.ns))
			continue;
		if (isnan(most->ns) || s.ns > most->ns)
			*most = s;
		if (isnan(least->ns) || s.ns < least->ns)
			*least = s;
	}
	return !isnan(most->ns);
}

void analysis_find_shadow_paging(const struct phase_result *res, size_t n, const struct environment *env,
				 struct analysis *a)
{
	struct first_access_seen most, least, huge;

	if (!first_access_range(res, n, env, &most, &least, &huge) || !(most.ns >= ENV_SHADOW_NS_PER_PAGE))
		return;
	struct analysis_finding *f = add_finding(a, "shadow_paging");
	if (!f)
		return;
	char who[80], cheap[160] = "", big[160] = "";
	if (env && env->hypervisor[0])
		snprintf(who, sizeof(who), "the hypervisor (CPUID names %s)", env->hypervisor);
	else
		snprintf(who, sizeof(who), "something below this kernel (CPUID names no hypervisor)");
	if (least.ns < ENV_SHADOW_NS_PER_PAGE)
		snprintf(cheap, sizeof(cheap), "; %s read %.0f ns, so not every page traps", least.name, least.ns);
	if (!isnan(huge.ns))
		snprintf(big, sizeof(big), "; on %s's %s pages it was %.0f ns per 4 KiB, so those are mapped whole",
			 huge.name, huge.page, huge.ns);
	analysis_text(f->message, sizeof(f->message),
		      "the first write from user space to each 4 KiB page the kernel had already populated "
		      "(MADV_POPULATE_WRITE) took %.1f µs (%s, the median of %s over %llu pages), where a TLB miss takes "
		      "well under 1 µs: %s maps each page on its first use, a trap per page, as shadow paging does (PVM, "
		      "or KVM without EPT/NPT)%s%s. So a TLB miss walks page tables the hypervisor keeps, and a benchmark "
		      "that prefaults (MAP_POPULATE, MADV_POPULATE_WRITE) can still pay this per page on its first pass: "
		      "warm up over every page before timing (tlbprof's chase phases pay it before their warm-up)",
		      most.ns / 1e3, most.name, most.how, (unsigned long long)most.pages, who, cheap, big);
	finding_evidence(f, "ns_per_page", most.ns);
	finding_evidence(f, "pages", (double)most.pages);
	finding_evidence(f, "least_ns_per_page", least.ns);
	finding_evidence(f, "huge_ns_per_4k", huge.ns);
}
