/* SPDX-License-Identifier: MIT */
/* Checks on the memory the phases got: page backing as verified, and cache-set aliasing of the layout. */
#include <math.h>
#include <stdint.h>

#include "judge/analysis_internal.h"
#include "measure/workload.h"
#include "parse.h"

/* Randomly placed lines conflict in a set-associative cache once they fill this share of it. */
static const double ALIASED_LOAD = 0.5;

void checks_control_thp_contamination(const struct analysis_check_def *def, const struct analysis_input *in,
				       struct analysis *a)
{
	size_t base = 0, base_bad = 0;
	double worst_base = 0;

	for (size_t i = 0; i < in->n; i++) {
		const struct phase_result *r = &in->results[i];
		if (!r->backing_known || r->spec.page.kind != PAGE_BASE)
			continue;
		base++;
		if (r->backing.kind != PAGE_BASE) {
			base_bad++;
			worst_base = fmax(worst_base, r->backing.huge_fraction);
		}
	}
	struct analysis_check *c;
	if (!base)
		c = checks_add(a, def, CHECK_SKIP, "no 4k phase was verified");
	else if (base_bad)
		c = checks_add(a, def, CHECK_FAIL,
			       "%zu of %zu 4k phases are partly on huge pages (up to %.0f %%): the control is "
			       "contaminated and understates what huge pages buy; check THP (enabled/khugepaged)",
			       base_bad, base, 100 * worst_base);
	else
		c = checks_add(a, def, CHECK_PASS,
			       "every 4k phase was verified on 4 KiB pages with no AnonHugePages (%zu %s)", base,
			       checks_phases_word(base));
	checks_evidence(c, "phases", (double)base);
	checks_evidence(c, "contaminated", (double)base_bad);
	if (base_bad)
		checks_evidence(c, "worst_huge_fraction", worst_base);
}

void checks_huge_pages_granted(const struct analysis_check_def *def, const struct analysis_input *in,
			       struct analysis *a)
{
	size_t huge = 0, huge_bad = 0;
	double worst_huge = 1;

	for (size_t i = 0; i < in->n; i++) {
		const struct phase_result *r = &in->results[i];
		if (r->spec.page.kind == PAGE_BASE)
			continue;
		if (!r->backing_known) {
			/* A huge-page phase the machine could not map at all was not granted either. */
			if (r->status == PHASE_FAILED && r->unavailable) {
				huge++;
				huge_bad++;
				worst_huge = 0;
			}
			continue;
		}
		huge++;
		if (r->backing.kind != r->spec.page.kind || r->backing.huge_fraction < 0.999) {
			huge_bad++;
			worst_huge = fmin(worst_huge, r->backing.huge_fraction);
		}
	}
	struct analysis_check *c;
	if (!huge)
		c = checks_add(a, def, CHECK_SKIP, "no huge-page phase was verified");
	else if (huge_bad)
		c = checks_add(a, def, CHECK_FAIL,
			       "%zu of %zu huge-page phases did not get the pages they asked for (worst: %.0f %% "
			       "huge); each phase's reason has the fix", huge_bad, huge, 100 * worst_huge);
	else
		c = checks_add(a, def, CHECK_PASS,
			       "every huge-page phase was verified fully on the requested page size (%zu %s)", huge,
			       checks_phases_word(huge));
	checks_evidence(c, "phases", (double)huge);
	checks_evidence(c, "not_granted", (double)huge_bad);
}

/*
 * With every slot at the start of its stride cell, address bits 6 .. log2(stride)-1
 * are always zero: a cache indexed by those bits sees only sets / (stride/64) of
 * its sets. L1 is virtually indexed within a page; L2 is physically indexed, and
 * bits at and above 12 are random on 4 KiB pages (so at most 64 lines per page
 * alias) but follow the virtual address inside a huge page.
 */
static double used_set_fraction(const struct env_cache *cache, uint64_t stride, uint64_t page_bytes)
{
	uint64_t sets = cache->sets ? cache->sets : cache->size_bytes / (cache->line_bytes ? cache->line_bytes : 64) /
							     (cache->ways ? cache->ways : 1);
	uint64_t aliased = stride / 64;

	if (page_bytes <= 4096 && aliased > 4096 / 64)
		aliased = 4096 / 64;
	if (aliased > sets)
		aliased = sets;
	return aliased ? 1.0 / (double)aliased : 1.0;
}

/*
 * The pass of a colored run, with what colored does not promise: where a 4k
 * phase's data lines and the page-table lines its walks bring in together
 * exceed the L2, colored data competes with the page tables for every set
 * (aligned leaves most sets to them), so colored is not every data's cache
 * behaviour there (issue: 3-10 % at 1 GiB on the development VM).
 */
static void colored_caveat(struct analysis *a, const struct analysis_check_def *def, const struct phase_result *res,
			   size_t n, const struct environment *env)
{
	const struct env_cache *l2 = environment_data_cache(env, 2);
	const struct phase_result *big = NULL;
	bool both = false;

	for (size_t i = 0; i < n; i++) {
		const struct phase_result *r = &res[i];
		both |= r->spec.layout == LAYOUT_ALIGNED && r->status == PHASE_OK;
		if (r->status != PHASE_OK || r->spec.role != PHASE_ROLE_MEASURE || r->spec.layout != LAYOUT_COLORED ||
		    r->spec.page.bytes != 4096 || r->spec.stride_bytes < 4096 || !l2 || r->spec.workload->expand)
			continue;
		/* One line per slot, and one 8-byte PTE per 4 KiB page: a PTE line per 8 pages. */
		double bytes = (double)r->slots * 64 + (double)r->spec.size_bytes / 4096 * 8;
		if (bytes > (double)l2->size_bytes && (!big || r->spec.size_bytes > big->spec.size_bytes))
			big = r;
	}
	if (!big || both) {
		checks_add(a, def, CHECK_PASS,
			   "slots are colored (or at most one line per cell): the touched lines spread over all cache sets");
		return;
	}
	char data[SIZE_TEXT], ptes[SIZE_TEXT], cap[SIZE_TEXT];
	struct analysis_check *c = checks_add(
		a, def, CHECK_PASS,
		"slots are colored: the touched lines spread over all cache sets; but in %s its %s of data lines and "
		"%s of page-table lines exceed the %s L2, where colored data competes with the page tables for every "
		"set (aligned data leaves most sets to them), so colored is not how all data caches at this size: "
		"--layout colored,aligned measures both", big->spec.name, format_bytes(big->slots * 64, data, sizeof(data)),
		format_bytes(big->spec.size_bytes / 4096 * 8, ptes, sizeof(ptes)),
		format_bytes(l2->size_bytes, cap, sizeof(cap)));
	checks_evidence(c, "data_and_pte_bytes", (double)big->slots * 64 + (double)big->spec.size_bytes / 4096 * 8);
	checks_evidence(c, "l2_bytes", (double)l2->size_bytes);
}

void checks_cache_set_aliasing(const struct analysis_check_def *def, const struct analysis_input *in,
			       struct analysis *a)
{
	const struct phase_result *res = in->results;
	size_t n = in->n;
	const struct environment *env = in->env;
	const struct phase_result *worst = NULL;
	double worst_frac = 1, worst_cap = 0, worst_full = 0;
	unsigned worst_level = 0;
	size_t aligned = 0, known = 0;

	if (!env || !env->n_caches) {
		checks_add(a, def, CHECK_SKIP, "cache geometry unknown");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct phase_result *r = &res[i];
		/* A run phase's layout is known only from its inspected chain. */
		if (r->status != PHASE_OK || (r->target && !r->target->chain_inspected))
			continue;
		known++;
		if (r->spec.layout != LAYOUT_ALIGNED || r->spec.stride_bytes < 128)
			continue;
		aligned++;
		double lines = (double)r->slots * 64;
		for (unsigned level = 1; level <= 3; level++) {
			const struct env_cache *c = environment_data_cache(env, level);
			if (!c)
				continue;
			/* Inside a verified huge page the physical address follows the virtual one. */
			uint64_t page = r->backing_known && r->backing.kind != PAGE_BASE ? r->spec.page.bytes : 4096;
			double frac = used_set_fraction(c, r->spec.stride_bytes, page);
			double cap = (double)c->size_bytes * frac;
			/*
			 * It matters when aliasing evicts lines that the whole cache would
			 * hold. Lines land in the remaining sets at random (physical pages),
			 * so conflicts start well before they are full: past half of them.
			 */
			if (frac < 1 && lines > ALIASED_LOAD * cap && lines <= (double)c->size_bytes && frac < worst_frac) {
				worst = r;
				worst_frac = frac;
				worst_cap = cap;
				worst_full = (double)c->size_bytes;
				worst_level = level;
			}
		}
	}
	struct analysis_check *c;
	if (worst) {
		char line_fp[SIZE_TEXT], capacity[SIZE_TEXT], full[SIZE_TEXT];
		c = checks_add(a, def, CHECK_WARN,
			       "%s: %s every slot sits at %s %llu-byte cell%s, so its lines use "
			       "only 1/%.0f of the L%u sets: the effective L%u shrinks from %s to %s, and the %s of "
			       "touched lines (%.1f× that; conflict misses start past %.1f×), which the whole cache would "
			       "hold, miss instead, inflating the base latency and hiding the TLB effect; %s",
			       worst->spec.name, worst->target ? "in its chain" : "with --layout aligned",
			       worst->target ? "the same line of its" : "its", (unsigned long long)worst->spec.stride_bytes,
			       worst->target ? "" : " start", 1 / worst_frac, worst_level,
			       worst_level, format_bytes((uint64_t)worst_full, full, sizeof(full)),
			       format_bytes((uint64_t)worst_cap, capacity, sizeof(capacity)),
			       format_bytes(worst->slots * 64, line_fp, sizeof(line_fp)),
			       (double)worst->slots * 64 / worst_cap, ALIASED_LOAD,
			       worst->target ? "rotate each slot's line inside its cell (cache coloring)" : "use --layout colored");
		checks_evidence(c, "used_set_fraction", worst_frac);
		checks_evidence(c, "cache_level", worst_level);
		checks_evidence(c, "effective_capacity_bytes", worst_cap);
		checks_evidence(c, "line_footprint_bytes", (double)worst->slots * 64);
	} else if (aligned) {
		c = checks_add(a, def, CHECK_PASS,
			       "aligned layout in %zu %s, but the touched lines fit the aliased sets or exceed "
			       "the caches anyway", aligned, checks_phases_word(aligned));
		checks_evidence(c, "aligned_phases", (double)aligned);
	} else if (!known) {
		checks_add(a, def, CHECK_SKIP, "no phase with a known slot layout (declare chain= to have "
			   "a benchmark's chain inspected)");
	} else {
		colored_caveat(a, def, res, n, env);
	}
}
