/* SPDX-License-Identifier: MIT */
/* TLB capacity sweep: a colored random chase with one access per 4 KiB page, over a range of page counts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/chain.h"
#include "measure/plan.h"
#include "measure/workload.h"

/* Without CPUID geometry: as many as the largest last-level TLBs (Zen 5: 4096 entries) times 16. */
#define DEFAULT_MAX_PAGES 65536u
/* Points per octave of page counts: enough to place a knee within 19 % (2^(1/4)) ... */
#define POINTS_PER_OCTAVE_KNOWN 4
/* ... or within 12 % (2^(1/6)) when CPUID gives no capacities to refine around. */
#define POINTS_PER_OCTAVE_UNKNOWN 6
/* Reach beyond the largest reported TLB: the curve must show the plateau after the last knee. */
#define REACH_FACTOR 4
/* Timed accesses per sample when --iters is not given: ~20-40 ms per sample at DRAM latency. */
#define DEFAULT_ITERS 200000u
#define MAX_POINTS 512

extern const struct workload_ops workload_chase;

static const struct workload_param tlbsize_params[] = {
	{ "--max-pages", "largest page count (default: 4x the largest 4 KiB TLB CPUID reports, or 65536)" },
	{ "--layout", "colored (default) or aligned: the naive layout shows a false knee at 8-16 pages" },
	{ "--cpu", "CPU to pin to (default: the CPU tlbprof starts on)" },
	{ NULL, NULL },
};

/* The chase does the work: one slot per page, colored, random single cycle. */
static int tlbsize_prepare(void **state, const struct phase_spec *phase, struct region *region,
			   struct self_check *checks, size_t *n_checks, struct prepare_info *info, char *why, size_t why_len)
{
	return workload_chase.prepare(state, phase, region, checks, n_checks, info, why, why_len);
}

static void tlbsize_run(void *state, uint64_t accesses)
{
	workload_chase.run(state, accesses);
}

static void tlbsize_release(void *state)
{
	workload_chase.release(state);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * The page counts to measure: 1, 2, 3, then a geometric grid, plus dense
 * points at 1/2 .. 2x of every capacity CPUID reports, sorted and unique.
 * Returns the count written to pts (at most MAX_POINTS).
 */
static size_t page_counts(uint64_t max, const struct env_tlb *tlb, uint64_t *pts)
{
	static const double around[] = { 0.5, 0.75, 0.875, 0.9375, 1.0, 1.0625, 1.125, 1.25, 1.5, 2.0 };
	unsigned caps[] = { tlb ? tlb->l1d_4k_entries : 0, tlb ? tlb->l2d_4k_entries : 0 };
	bool known = caps[0] || caps[1];
	int per_octave = known ? POINTS_PER_OCTAVE_KNOWN : POINTS_PER_OCTAVE_UNKNOWN;
	size_t n = 0, m = 0;

	for (uint64_t x = 1; x <= 3 && x <= max; x++)
		pts[n++] = x;
	for (int k = 2 * per_octave; n < MAX_POINTS; k++) {
		uint64_t x = (uint64_t)(__builtin_exp2((double)k / per_octave) + 0.5);
		if (x > max)
			break;
		pts[n++] = x;
	}
	for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++)
		for (size_t f = 0; caps[c] && f < sizeof(around) / sizeof(around[0]) && n < MAX_POINTS; f++) {
			uint64_t x = (uint64_t)(caps[c] * around[f] + 0.5);
			if (x >= 1 && x <= max)
				pts[n++] = x;
		}
	if (n < MAX_POINTS && (!n || pts[n - 1] != max))
		pts[n++] = max;
	qsort(pts, n, sizeof(*pts), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!m || pts[m - 1] != pts[i])
			pts[m++] = pts[i];
	return m;
}

static int tlbsize_expand(const struct tlbprof_config *cfg, const struct plan_context *ctx, struct plan *out)
{
	const struct env_tlb *tlb = ctx ? ctx->tlb : NULL;
	unsigned largest = tlb ? (tlb->l2d_4k_entries > tlb->l1d_4k_entries ? tlb->l2d_4k_entries : tlb->l1d_4k_entries) : 0;
	uint64_t max = cfg->max_pages ? cfg->max_pages : largest ? (uint64_t)largest * REACH_FACTOR : DEFAULT_MAX_PAGES;
	uint64_t pts[MAX_POINTS];
	size_t n = page_counts(max, tlb, pts);
	struct chain_rng rng = { .state = cfg->seed ^ 0x746c6273697a65ull };
	const struct page_request *base = NULL;

	for (size_t p = 0; p < cfg->n_pages; p++)
		if (cfg->pages[p].kind == PAGE_BASE)
			base = &cfg->pages[p];
	if (!base)
		return -EINVAL;	/* the cli requires 4k in --pages for tlbsize */
	/* Measured in random order, so a drift in time (thermal, a noisy neighbour) is not a knee. */
	for (size_t i = n - 1; n > 1 && i > 0; i--) {
		size_t j = (size_t)chain_rng_below(&rng, i + 1);
		uint64_t t = pts[i];
		pts[i] = pts[j];
		pts[j] = t;
	}
	for (size_t i = 0; i < n; i++) {
		struct phase_spec *ph = plan_add(out, cfg, base, pts[i] * base->bytes);
		if (!ph)
			return -ENOMEM;
		ph->stride_bytes = base->bytes;
		/* Each point is already a fresh allocation, measured in random order: one per point. */
		ph->allocations = 1;
		if (!cfg->iterations_set) {
			ph->iterations_auto = false;
			ph->iterations = DEFAULT_ITERS;
			ph->warmup_iterations = (uint64_t)(DEFAULT_ITERS * cfg->warmup_frac + 0.5);
		}
		if (ph->cpu < 0 && ctx)
			ph->cpu = ctx->current_cpu;
		snprintf(ph->name, sizeof(ph->name), "tlbsize/%s/%llup/r%u", base->label, (unsigned long long)pts[i],
			 ph->run);
	}
	return 0;
}

const struct workload_ops workload_tlbsize = {
	.name = "tlbsize",
	.description = "latency vs pages touched (one colored access per page): candidate TLB capacities",
	.params = tlbsize_params,
	.latency = true,
	.prepare = tlbsize_prepare,
	.run = tlbsize_run,
	.release = tlbsize_release,
	.expand = tlbsize_expand,
};
