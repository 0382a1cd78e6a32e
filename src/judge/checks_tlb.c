/* SPDX-License-Identifier: MIT */
/* Checks on the TLB: expected pressure beyond its reach, huge pages that do not help, CPUID geometry. */
#include <math.h>

#include "judge/analysis_internal.h"
#include "measure/workload.h"

/* Pages beyond this multiple of the last-level TLB's entries miss on (almost) every random access. */
static const double FAR_BEYOND_REACH = 8.0;
/* Assumed last-level 4 KiB TLB entries when neither CPUID nor a documented core says (the largest common: Zen 5). */
static const unsigned ASSUMED_L2_TLB_ENTRIES = 4096;
/* A chase far beyond TLB reach missing less often than this means the events or the pattern are broken. */
static const double MIN_EXPECTED_MISS_RATE = 0.1;

/* The last-level 4 KiB TLB entries expectations rest on (CPUID's, else the documented core's), else assumed. */
static unsigned l2_tlb_entries(const struct environment *env, bool *assumed)
{
	const struct env_tlb *tlb = env ? environment_expected_tlb(env) : NULL;

	*assumed = !tlb || !tlb->l2d_4k_entries;
	return *assumed ? ASSUMED_L2_TLB_ENTRIES : tlb->l2d_4k_entries;
}

void checks_tlb_pressure_expected(const struct analysis_check_def *def, const struct analysis_input *in,
				  struct analysis *a)
{
	const struct phase_result *res = in->results;
	size_t n = in->n;
	const struct environment *env = in->env;
	bool assumed;
	unsigned entries = l2_tlb_entries(env, &assumed);
	const struct phase_result *worst = NULL;
	double worst_rate = 0;
	size_t candidates = 0;

	for (size_t i = 0; i < n; i++) {
		const struct phase_result *r = &res[i];
		double rate;
		if (!analysis_measured_ok(r) || r->spec.page.kind != PAGE_BASE || r->spec.stride_bytes < 4096 ||
		    r->spec.workload->faults_expected)
			continue;
		if ((double)r->slots < FAR_BEYOND_REACH * entries)
			continue;
		if (!analysis_per_access(r, METRIC_DTLB_LOAD_MISSES, &rate))
			continue;
		candidates++;
		if (!worst || rate < worst_rate) {
			worst = r;
			worst_rate = rate;
		}
	}
	struct analysis_check *c;
	if (!candidates) {
		checks_add(a, def, CHECK_SKIP,
			   "needs dTLB miss counts on a 4k phase far beyond the TLB reach (%u+ pages, one per page)",
			   (unsigned)(FAR_BEYOND_REACH * entries));
		return;
	}
	if (worst_rate < MIN_EXPECTED_MISS_RATE)
		c = checks_add(a, def, CHECK_FAIL,
			       "%s touches %llu pages at random, %.0f× the %u-entry last-level TLB%s, yet counts only "
			       "%.3f dTLB misses per access: the access pattern is not random or the event mapping is "
			       "wrong (generic dTLB events are known to read zero on some CPUs; check events/)",
			       worst->spec.name, (unsigned long long)worst->slots, (double)worst->slots / entries, entries,
			       assumed ? " (assumed: neither CPUID nor a documented core gives it)" : "", worst_rate);
	else
		c = checks_add(a, def, CHECK_PASS,
			       "working sets far beyond the TLB reach miss the dTLB as expected (lowest %.2f misses "
			       "per access)", worst_rate);
	checks_evidence(c, "lowest_miss_rate", worst_rate);
	checks_evidence(c, "l2_tlb_entries", entries);
	checks_evidence(c, "entries_assumed", assumed);
}

void checks_huge_pages_ineffective(const struct analysis_check_def *def, const struct analysis_input *in,
				   struct analysis *a)
{
	const struct phase_result *res = in->results;
	const struct environment *env = in->env;
	bool assumed;
	unsigned entries = l2_tlb_entries(env, &assumed);
	const struct comparison *worst = NULL;
	double worst_margin = 0, worst_noise = 0;
	size_t eligible = 0;

	for (size_t i = 0; i < a->n_comparisons; i++) {
		const struct comparison *cmp = &a->comparisons[i];
		const struct phase_result *b = &res[cmp->baseline], *v = &res[cmp->variant];
		if (!b->spec.workload->latency || b->spec.page.kind != PAGE_BASE || b->spec.stride_bytes < 4096 ||
		    (double)b->slots < FAR_BEYOND_REACH * entries)
			continue;
		eligible++;
		const struct stats_summary *sb = &a->phases[cmp->baseline].ns, *sv = &a->phases[cmp->variant].ns;
		/* Noise: twice the larger coefficient of variation, at least 3 %. */
		double noise = fmax(0.03, 2 * fmax(sb->mean ? sb->stddev / sb->mean : 0, sv->mean ? sv->stddev / sv->mean : 0));
		double margin = cmp->speedup - 1 - noise;
		if (!worst || margin < worst_margin) {
			worst = cmp;
			worst_margin = margin;
			worst_noise = noise;
		}
		(void)v;
	}
	struct analysis_check *c;
	if (!eligible) {
		checks_add(a, def, CHECK_SKIP,
			   "needs a 4k phase far beyond the TLB reach (%u+ pages) compared with a huge-page phase",
			   (unsigned)(FAR_BEYOND_REACH * entries));
		return;
	}
	const struct phase_result *wv = &res[worst->variant];
	if (worst_margin <= 0 && res[worst->baseline].spec.layout == LAYOUT_ALIGNED)
		c = checks_add(a, def, CHECK_WARN,
			       "%s was granted huge pages far beyond the 4 KiB TLB reach, yet is only %.2f× faster: with "
			       "--layout aligned, set aliasing inflates the base latency of both phases and hides the TLB "
			       "effect (see cache_set_aliasing); rerun with --layout colored", wv->spec.name, worst->speedup);
	else if (worst_margin <= 0 && worst->speedup > 1.03)
		c = checks_add(a, def, CHECK_WARN,
			       "inconclusive: %s is %.2f× faster, but the noise (%.0f %%) is as large as the gain; raise "
			       "--repeat or pin with --cpu before concluding that huge pages do not help", wv->spec.name,
			       worst->speedup, 100 * worst_noise);
	else if (worst_margin <= 0) {
		/* Under shadow paging the TLB caches the hypervisor's own tables' entries: say so where it was measured. */
		char shadow[200] = "";
		if (env && env_shadow_paging(env))
			snprintf(shadow, sizeof(shadow), "; here the hypervisor also keeps its own page tables (the first "
				 "write to a populated 4 KiB page took %.1f µs, shadow_paging), whose page size the guest "
				 "does not choose", env->first_access.ns_per_page / 1e3);
		c = checks_add(a, def, CHECK_WARN,
			       "%s was granted huge pages and works far beyond the 4 KiB TLB reach, yet is only %.2f× "
			       "faster (noise %.0f %%)%s: the TLB caches the smaller of guest and host page, so a "
			       "hypervisor backing guest memory with 4 KiB pages cancels guest huge pages%s; confirm on bare "
			       "metal or ask whether the host backs this VM with huge pages (hugetlbfs/THP for guest RAM)",
			       wv->spec.name, worst->speedup, 100 * worst_noise,
			       env && *env->hypervisor ? " in a VM" : "", shadow);
	} else {
		c = checks_add(a, def, CHECK_PASS,
			       "huge pages help beyond noise where the 4 KiB TLB is overwhelmed (worst %.2f×)", worst->speedup);
	}
	checks_evidence(c, "speedup", worst->speedup);
	checks_evidence(c, "noise", worst_noise);
	checks_evidence(c, "l2_tlb_entries", entries);
	checks_evidence(c, "entries_assumed", assumed);
}

/*
 * The TLB geometry a tlbsize curve is compared with: CPUID's, else the
 * documented core's. Hypervisors often zero or invent the CPUID leaves; say
 * so, and say which row the knees were labelled against.
 */
void checks_tlb_geometry(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct phase_result *res = in->results;
	size_t n = in->n;
	const struct environment *env = in->env;
	bool sweep = false;
	struct analysis_check *c;

	for (size_t i = 0; i < n && !sweep; i++)
		sweep = analysis_measured_ok(&res[i]) && res[i].spec.workload->sweep == WORKLOAD_SWEEP_PAGE_COUNTS;
	if (!sweep) {
		checks_add(a, def, CHECK_SKIP, "no tlbsize sweep to compare with the TLB geometry");
		return;
	}
	unsigned l1 = env ? env->tlb.l1d_4k_entries : 0, l2 = env ? env->tlb.l2d_4k_entries : 0;
	const struct env_tlb *doc = env && env->documented_tlb.l1d_4k_entries ? &env->documented_tlb : NULL;
	bool vm = env && *env->hypervisor;
	size_t tlb = 0, cache = 0;
	for (size_t i = 0; i < a->n_knees; i++) {
		tlb += a->knees[i].kind == KNEE_TLB;
		cache += a->knees[i].kind == KNEE_CACHE;
	}
	if (env && doc && environment_tlb_disagrees(env))
		c = checks_add(a, def, tlb ? CHECK_PASS : CHECK_WARN,
			       "CPUID under %s reports L1 %u, L2 %u entries, the documented %s row L1 %u, L2 %u: "
			       "hypervisors invent these leaves, so the sweep and its labels used the row: %zu tlb, %zu "
			       "cache, %zu unknown of %zu knees%s", env->hypervisor, l1, l2, env->core_name,
			       doc->l1d_4k_entries, doc->l2d_4k_entries, tlb, cache, a->n_knees - tlb - cache, a->n_knees,
			       tlb ? "" : "; none is the row's either: the core may be misidentified, or the curve shows "
					  "something else");
	else if (!l1 && !l2 && doc && a->n_knees && !tlb)
		c = checks_add(a, def, CHECK_WARN,
			       "CPUID reports no TLB geometry%s, and none of the %zu knees is within %.0f %% of the %s "
			       "row's capacities (L1 %u, L2 %u entries): the core may be misidentified (see "
			       "environment.cpu.identification), or the curve shows something else", vm ? " (usual in a "
			       "VM)" : "", a->n_knees, 100 * KNEE_MATCH_TOLERANCE, env->core_name, doc->l1d_4k_entries,
			       doc->l2d_4k_entries);
	else if (!l1 && !l2 && doc)
		c = checks_add(a, def, CHECK_PASS,
			       "CPUID reports no TLB geometry%s, so the knees were labelled against the %s row (L1 %u, "
			       "L2 %u entries): %zu tlb, %zu cache, %zu unknown of %zu", vm ? " (usual in a VM: the "
			       "hypervisor zeroes the leaves)" : "", env->core_name, doc->l1d_4k_entries,
			       doc->l2d_4k_entries, tlb, cache, a->n_knees - tlb - cache, a->n_knees);
	else if (!l1 && !l2)
		c = checks_add(a, def, CHECK_WARN,
			       "CPUID reports no TLB geometry%s and no documented core fits this CPU: the %zu knees are "
			       "labelled against the caches only; compare with the CPU's documentation", vm ? " (usual in "
			       "a VM: the hypervisor zeroes the leaves)" : "", a->n_knees);
	else if ((l1 && l2 && l2 < l1) || l1 > 4096 || l2 > 65536 || (l1 && l1 % 4) || (l2 && l2 % 4))
		c = checks_add(a, def, CHECK_WARN,
			       "CPUID reports an implausible TLB (L1 %u, L2 %u entries for 4 KiB pages)%s: do not trust "
			       "labels against it", l1, l2, vm ? "; the hypervisor may invent it" : "");
	else if (a->n_knees && !tlb)
		c = checks_add(a, def, CHECK_WARN,
			       "none of the %zu knees is within %.0f %% of a CPUID capacity (L1 %u, L2 %u entries) and "
			       "no other: the curve shows something else (cache capacity, page-walk caches) or CPUID is "
			       "wrong", a->n_knees, 100 * KNEE_MATCH_TOLERANCE, l1, l2);
	else
		c = checks_add(a, def, CHECK_PASS, "%zu of %zu knees are CPUID TLB capacities (L1 %u, L2 %u entries), "
			       "%zu cache", tlb, a->n_knees, l1, l2, cache);
	checks_evidence(c, "l1d_4k_entries", l1);
	checks_evidence(c, "l2d_4k_entries", l2);
	checks_evidence(c, "documented_l1d_4k_entries", doc ? doc->l1d_4k_entries : 0);
	checks_evidence(c, "documented_l2d_4k_entries", doc ? doc->l2d_4k_entries : 0);
	checks_evidence(c, "knees", (double)a->n_knees);
	checks_evidence(c, "tlb_knees", (double)tlb);
	checks_evidence(c, "cache_knees", (double)cache);
}
