/* SPDX-License-Identifier: MIT */
/* Sequential strided reads: ns per access at each stride separates cache-line effects from TLB effects. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "parse.h"
#include "measure/plan.h"
#include "measure/region.h"
#include "measure/workload.h"

struct stride_state {
	const char *base;
	uint64_t offsets;	/* reads per pass: size / stride */
	uint64_t stride;
	unsigned line_shift;	/* log2(lines per cell) when the reads are colored, else 0 */
	uint64_t next;		/* index of the next read in the pass */
	volatile uint64_t sink;	/* the sum of everything read: keeps the loads */
};

/* Byte offset of read i: its cell, plus the colored line inside the cell. */
static inline uint64_t read_offset(const struct stride_state *st, uint64_t i)
{
	uint64_t lines = 1ull << st->line_shift;

	return i * st->stride + (st->line_shift ? ((i + (i >> st->line_shift)) & (lines - 1)) * 64 : 0);
}

static const struct workload_param stride_params[] = {
	{ "--strides", "strides to sweep (default 8,64,512,4K,8K): 8 B -> 512 B is cache, 512 B -> 4 KiB the TLB" },
	{ "--size", "working-set size, read sequentially at each stride" },
	{ "--layout", "colored (default: each read's line rotated in its cell, all cache sets used) or aligned" },
	{ NULL, NULL },
};

static int stride_prepare(void **state, const struct phase_spec *phase, struct region *region,
			  struct self_check *checks, size_t *n_checks, struct prepare_info *info, char *why, size_t why_len)
{
	struct stride_state *st;

	(void)why;
	(void)why_len;
	*state = NULL;
	if (phase->stride_bytes < 8 || phase->size_bytes / phase->stride_bytes < 2 || phase->size_bytes > region->bytes)
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->base = region->base;
	st->stride = phase->stride_bytes;
	st->offsets = phase->size_bytes / phase->stride_bytes;
	/*
	 * Colored (the default): read cell i at line (i + i / L) mod L of its
	 * stride cell, as the chase places its slots, so that at 512 B and 4 KiB
	 * the reads spread over all cache sets and the 512 B -> 4 KiB step keeps
	 * the cache behaviour the same. Aligned: the naive cell start.
	 */
	if (phase->layout == LAYOUT_COLORED && st->stride >= 128)
		st->line_shift = (unsigned)__builtin_ctzll(st->stride / 64);
	/* Every read lands inside the region, 8-byte aligned: check the last one of a pass. */
	uint64_t last = read_offset(st, st->offsets - 1);
	bool inside = last + 8 <= region->bytes && !(last & 7);
	checks[0] = (struct self_check){ .id = "covers_region", .status = inside ? CHECK_PASS : CHECK_FAIL };
	snprintf(checks[0].message, sizeof(checks[0].message),
		 "a pass reads %llu words, one per %llu-byte cell (%s), over %llu bytes",
		 (unsigned long long)st->offsets, (unsigned long long)st->stride,
		 st->line_shift ? "line rotated in the cell" : "at the cell start",
		 (unsigned long long)(st->offsets * st->stride));
	*n_checks = 1;
	info->units = st->offsets;
	*state = st;
	return 0;
}

static void stride_run(void *state, uint64_t accesses)
{
	struct stride_state *st = state;
	const char *base = st->base;
	uint64_t i = st->next, n = st->offsets, sum = 0;

	while (accesses) {
		/* Up to the end of the pass, unrolled by 4; the loads are independent on purpose. */
		uint64_t end = n - i < accesses ? n : i + accesses;
		accesses -= end - i;
		for (; i + 4 <= end; i += 4)
			sum += *(const volatile uint64_t *)(base + read_offset(st, i)) +
			       *(const volatile uint64_t *)(base + read_offset(st, i + 1)) +
			       *(const volatile uint64_t *)(base + read_offset(st, i + 2)) +
			       *(const volatile uint64_t *)(base + read_offset(st, i + 3));
		for (; i < end; i++)
			sum += *(const volatile uint64_t *)(base + read_offset(st, i));
		if (i == n)
			i = 0;
	}
	st->next = i;
	st->sink += sum;
}

static void stride_release(void *state)
{
	free(state);
}

/* One phase per size x page size x stride, strides innermost so steps are measured back to back. */
static int stride_expand(const struct tlbprof_config *cfg, const struct plan_context *ctx, struct plan *out)
{
	(void)ctx;
	for (size_t s = 0; s < cfg->n_sizes; s++) {
		for (size_t p = 0; p < cfg->n_pages; p++) {
			for (size_t k = 0; k < cfg->n_strides; k++) {
				struct phase_spec *ph = plan_add(out, cfg, &cfg->pages[p], cfg->sizes_bytes[s]);
				char size[16], stride[16];
				if (!ph)
					return -ENOMEM;
				ph->stride_bytes = cfg->strides_bytes[k];
				snprintf(ph->name, sizeof(ph->name), "stride/%s/%s/s%s/r%u", cfg->pages[p].label,
					 format_size(cfg->sizes_bytes[s], size, sizeof(size)),
					 format_size(ph->stride_bytes, stride, sizeof(stride)), ph->run);
			}
		}
	}
	return 0;
}

const struct workload_ops workload_stride = {
	.name = "stride",
	.description = "sequential reads at each stride: cache-line steps versus the TLB step",
	.params = stride_params,
	.latency = false,
	.prepare = stride_prepare,
	.run = stride_run,
	.release = stride_release,
	.expand = stride_expand,
};
