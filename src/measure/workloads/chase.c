/* SPDX-License-Identifier: MIT */
/* Random pointer chase: dependent loads over a single random cycle, one slot per stride, to time a load's latency. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "machine/timing.h"
#include "measure/chain.h"
#include "measure/plan.h"
#include "measure/region.h"
#include "measure/workload.h"
#include "parse.h"

struct chase_state {
	void **cursor;		/* where the next run continues */
	void *volatile sink;	/* the last pointer loaded: keeps the loop observable */
};

static enum option_result set_stride(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	uint64_t v;
	int rc = parse_size(arg, &v);

	if (rc)
		return option_error(msg, len, "--stride '%s': %s", arg,
				    rc == -ERANGE ? "out of range" : "not a size (use e.g. 64, 4K)");
	if (v < 8 || (v & (v - 1)))
		return option_error(msg, len, "--stride '%s': must be a power of two of at least 8 bytes", arg);
	option_store(o, opts, &v, sizeof(v));
	return OPTION_OK;
}

static const struct option_spec chase_params[] = {
	{ .name = "stride", .value = "SIZE", .help = "distance between slots, power of two, 8 to half the size\n",
	  .def = "4K", .set = set_stride, .offset = offsetof(struct plan_request, stride_bytes) },
	{ 0 },
};

/* A chain needs two slots: every size holds two strides. */
static int chase_validate(const struct plan_request *req, char *msg, size_t len)
{
	for (size_t i = 0; i < req->n_sizes; i++) {
		char s[SIZE_TEXT], t[SIZE_TEXT];
		if (req->sizes_bytes[i] / 2 < req->stride_bytes) {	/* 2 * stride would wrap at 2^63 */
			option_error(msg, len, "--stride '%s': must be at most half of --size '%s' (a chain needs 2 slots)",
				     format_size(req->stride_bytes, t, sizeof(t)), format_size(req->sizes_bytes[i], s, sizeof(s)));
			return -EINVAL;
		}
	}
	return 0;
}

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
	.sweep = WORKLOAD_SWEEP_SIZES,
	.latency = true,
	.prepare = chase_prepare,
	.run = chase_run,
	.release = chase_release,
	.validate = chase_validate,
};
