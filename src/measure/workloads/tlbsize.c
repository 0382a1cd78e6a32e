/* SPDX-License-Identifier: MIT */
/* TLB capacity sweep: a colored random chase with one access per 4 KiB page, over a range of page counts. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/chain.h"
#include "measure/plan.h"
#include "measure/workload.h"

/* Without CPUID geometry: as many as the largest last-level TLBs (Zen 5: 4096 entries) times 16. */
#define DEFAULT_MAX_PAGES 65536
/* Points per octave of page counts: enough to place a knee within 19 % (2^(1/4)) ... */
#define POINTS_PER_OCTAVE_KNOWN 4
/* ... or within 12 % (2^(1/6)) when CPUID gives no capacities to refine around. */
#define POINTS_PER_OCTAVE_UNKNOWN 6
/* Reach beyond the largest reported TLB: the curve must show the plateau after the last knee. */
#define REACH_FACTOR 4
#define MAX_POINTS 512
/* The largest --max-pages: 64 GiB of 4 KiB pages. */
#define MAX_PAGES_LIMIT (1u << 24)

extern const struct workload_ops workload_chase;

static const struct option_spec tlbsize_params[] = {
	{ .name = "max-pages", .value = "N", .help = "largest page count",
	  .def_help = OPTION_STR(REACH_FACTOR) "x the largest 4 KiB TLB reach CPUID\nreports, or "
		      OPTION_STR(DEFAULT_MAX_PAGES),
	  .set = option_set_count, .offset = offsetof(struct plan_request, max_pages), .min = 2, .max = MAX_PAGES_LIMIT },
	{ 0 },
};

static const struct workload_default tlbsize_defaults[] = {
	/* ~20-40 ms per sample at DRAM latency; every point is a fresh allocation already. */
	{ .option = "iters", .value = "200k" },
	{ .option = "cpu", .help = "the CPU tlbprof starts on" },
	{ 0 },
};

/* The sweep counts 4 KiB pages: 4k must be among the page sizes. */
static int tlbsize_validate(const struct plan_request *req, char *msg, size_t len)
{
	for (size_t i = 0; i < req->n_pages; i++)
		if (req->pages[i].kind == PAGE_BASE)
			return 0;
	option_error(msg, len, "--pages: the tlbsize workload counts 4 KiB pages; include 4k");
	return -EINVAL;
}

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

static int tlbsize_expand(const struct plan_request *req, const struct plan_context *ctx, struct plan *out)
{
	const struct env_tlb *tlb = ctx ? ctx->tlb : NULL;
	unsigned largest = tlb ? (tlb->l2d_4k_entries > tlb->l1d_4k_entries ? tlb->l2d_4k_entries : tlb->l1d_4k_entries) : 0;
	uint64_t max = req->max_pages ? req->max_pages : largest ? (uint64_t)largest * REACH_FACTOR : DEFAULT_MAX_PAGES;
	uint64_t pts[MAX_POINTS];
	size_t n = page_counts(max, tlb, pts);
	struct chain_rng rng = { .state = req->seed ^ 0x746c6273697a65ull };
	const struct page_request *base = NULL;

	for (size_t p = 0; p < req->n_pages; p++)
		if (req->pages[p].kind == PAGE_BASE)
			base = &req->pages[p];
	if (!base)
		return -EINVAL;	/* tlbsize_validate requires 4k in --pages */
	/* Measured in random order, so a drift in time (thermal, a noisy neighbour) is not a knee. */
	for (size_t i = n - 1; n > 1 && i > 0; i--) {
		size_t j = (size_t)chain_rng_below(&rng, i + 1);
		uint64_t t = pts[i];
		pts[i] = pts[j];
		pts[j] = t;
	}
	for (size_t i = 0; i < n; i++) {
		struct phase_spec *ph = plan_add(out, req, base, pts[i] * base->bytes);
		if (!ph)
			return -ENOMEM;
		ph->stride_bytes = base->bytes;
		/* Each point is already a fresh allocation, measured in random order: one per point. */
		ph->allocations = 1;
		if (ph->cpu < 0 && ctx)
			ph->cpu = ctx->current_cpu;
		plan_name(ph, "tlbsize/%s/%llup", base->label, (unsigned long long)pts[i]);
	}
	return 0;
}

const struct workload_ops workload_tlbsize = {
	.name = "tlbsize",
	.description = "latency vs pages touched (one colored access per page): candidate TLB capacities",
	.params = tlbsize_params,
	.defaults = tlbsize_defaults,
	.sweep = WORKLOAD_SWEEP_PAGE_COUNTS,
	.latency = true,
	.prepare = tlbsize_prepare,
	.run = tlbsize_run,
	.release = tlbsize_release,
	.expand = tlbsize_expand,
	.validate = tlbsize_validate,
};
