/* SPDX-License-Identifier: MIT */
/* Random pointer chase: dependent loads over a single random cycle, one slot per stride, to time a load's latency. */
#include <errno.h>
#include <stdlib.h>

#include "measure/chain.h"
#include "measure/region.h"
#include "machine/timing.h"
#include "measure/workload.h"

struct chase_state {
	void **cursor;		/* where the next run continues */
	void *volatile sink;	/* the last pointer loaded: keeps the loop observable */
};

static const struct workload_param chase_params[] = {
	{ "--size", "working-set size (bytes, K/M/G suffixes); a list runs each size" },
	{ "--stride", "distance between slots, a power of two >= 8 (default 4K: one slot per page)" },
	{ "--layout", "colored (rotate each slot's cache line in its page) or aligned (naive, page start)" },
	{ "--seed", "seed of the random cycle" },
	{ NULL, NULL },
};

static int chase_prepare(void **state, const struct phase_spec *phase, struct region *region,
			 struct self_check *checks, size_t *n_checks, struct prepare_info *info, char *why, size_t why_len)
{
	struct chain_geom g = {
		.stride_bytes = phase->stride_bytes,
		.slots = phase->size_bytes / phase->stride_bytes,
		.layout = phase->layout,
	};
	struct chase_state *st;
	void *start;

	(void)why;
	(void)why_len;
	*state = NULL;
	if (g.slots < 1 || chain_slot_offset(&g, g.slots - 1) + sizeof(void *) > region->bytes)
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	uint64_t t0 = timing_now_ns();
	start = chain_build(region->base, &g, phase->seed);
	info->build_ms = (double)(timing_now_ns() - t0) / 1e6;
	chain_check_single_cycle(region->base, region->bytes, start, g.slots, &checks[0]);
	if (checks[0].status == CHECK_PASS)
		chain_check_strides(start, g.slots, &checks[1]);
	else
		checks[1] = (struct self_check){ .id = "strides_not_constant", .status = CHECK_SKIP,
						 .message = "not run: the chain is not a single cycle" };
	*n_checks = 2;
	info->units = g.slots;
	st->cursor = start;
	*state = st;
	return 0;
}

/* One dependent load: the next address is the value just loaded. */
#define HOP(p) ((p) = (void **)*(p))

static void chase_run(void *state, uint64_t accesses)
{
	struct chase_state *st = state;
	void **p = st->cursor;
	uint64_t n = accesses;

	/* Unrolled by 16 so the loop's compare-and-branch is 1/16 of the instructions. */
	for (; n >= 16; n -= 16) {
		HOP(p); HOP(p); HOP(p); HOP(p); HOP(p); HOP(p); HOP(p); HOP(p);
		HOP(p); HOP(p); HOP(p); HOP(p); HOP(p); HOP(p); HOP(p); HOP(p);
	}
	for (; n; n--)
		HOP(p);
	st->cursor = p;
	st->sink = p;
}

static void chase_release(void *state)
{
	free(state);
}

const struct workload_ops workload_chase = {
	.name = "chase",
	.description = "random single-cycle pointer chase: load-to-use latency including address translation",
	.params = chase_params,
	.latency = true,
	.prepare = chase_prepare,
	.run = chase_run,
	.release = chase_release,
};
