/* SPDX-License-Identifier: MIT */
/* Sequential strided reads: ns per access at each stride separates cache-line effects from TLB effects. */
#include <errno.h>
#include <stddef.h>
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

/* --strides: powers of two of at least 8 bytes, each once. */
static enum option_result set_strides(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	struct plan_request *req = opts;
	char buf[512], *items[PLAN_MAX_STRIDES + 1];
	int n = option_split_list(o, arg, "strides", buf, sizeof(buf), items, PLAN_MAX_STRIDES, msg, len);

	if (n < 0)
		return OPTION_USAGE;
	req->n_strides = 0;
	for (int i = 0; i < n; i++) {
		uint64_t v;
		if (parse_size(items[i], &v) != 0 || v < 8 || (v & (v - 1)))
			return option_error(msg, len, "--strides '%s': '%s' is not a power of two of at least 8 bytes", arg,
					    items[i]);
		for (size_t j = 0; j < req->n_strides; j++)
			if (req->strides_bytes[j] == v)
				return option_error(msg, len, "--strides '%s': '%s' listed twice", arg, items[i]);
		req->strides_bytes[req->n_strides++] = v;
	}
	return OPTION_OK;
}

static const struct option_spec stride_params[] = {
	{ .name = "strides", .value = "LIST",
	  .help = "strides, powers of two >= 8: 8 B -> 512 B is cache,\n512 B -> 4 KiB the TLB\n",
	  .def = "8,64,512,4K,8K", .set = set_strides },
	{ 0 },
};

/* Every stride at most half of every size: a pass reads two cells at least. */
static int stride_validate(const struct plan_request *req, char *msg, size_t len)
{
	for (size_t i = 0; i < req->n_sizes; i++)
		for (size_t k = 0; k < req->n_strides; k++) {
			char s[SIZE_TEXT], t[SIZE_TEXT];
			if (req->sizes_bytes[i] / 2 < req->strides_bytes[k]) {	/* 2 * stride would wrap */
				option_error(msg, len, "--strides: '%s' must be at most half of --size '%s'",
					     format_size(req->strides_bytes[k], t, sizeof(t)),
					     format_size(req->sizes_bytes[i], s, sizeof(s)));
				return -EINVAL;
			}
		}
	return 0;
}

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
static int stride_expand(const struct plan_request *req, const struct plan_context *ctx, struct plan *out)
{
	(void)ctx;
	for (size_t s = 0; s < req->n_sizes; s++) {
		for (size_t p = 0; p < req->n_pages; p++) {
			for (size_t k = 0; k < req->n_strides; k++) {
				struct phase_spec *ph = plan_add(out, req, &req->pages[p], req->sizes_bytes[s]);
				char size[SIZE_TEXT], stride[SIZE_TEXT];
				if (!ph)
					return -ENOMEM;
				ph->stride_bytes = req->strides_bytes[k];
				plan_name(ph, "stride/%s/%s/s%s", req->pages[p].label,
					  format_size(req->sizes_bytes[s], size, sizeof(size)),
					  format_size(ph->stride_bytes, stride, sizeof(stride)));
			}
		}
	}
	return 0;
}

const struct workload_ops workload_stride = {
	.name = "stride",
	.description = "sequential reads at each stride: cache-line steps versus the TLB step",
	.params = stride_params,
	.sweep = WORKLOAD_SWEEP_STRIDES,
	.latency = false,
	.prepare = stride_prepare,
	.run = stride_run,
	.release = stride_release,
	.expand = stride_expand,
	.validate = stride_validate,
};
