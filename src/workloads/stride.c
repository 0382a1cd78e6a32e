/* SPDX-License-Identifier: MIT */
/* Sequential strided reads: ns per access at each stride separates cache-line effects from TLB effects. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "../parse.h"
#include "../plan.h"
#include "../region.h"
#include "../workload.h"

struct stride_state {
	const char *base;
	uint64_t offsets;	/* reads per pass: size / stride */
	uint64_t stride;
	uint64_t next;		/* index of the next read in the pass */
	volatile uint64_t sink;	/* the sum of everything read: keeps the loads */
};

static const struct workload_param stride_params[] = {
	{ "--strides", "strides to sweep (default 8,64,512,4K,8K): 8 B -> 512 B is cache, 512 B -> 4 KiB the TLB" },
	{ "--size", "working-set size, read sequentially at each stride" },
	{ NULL, NULL },
};

static int stride_prepare(void **state, const struct phase_spec *phase, struct region *region,
			  struct self_check *checks, size_t *n_checks, uint64_t *units, char *why, size_t why_len)
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
	/* Every read lands in the region and a pass covers it: the access pattern is what the name says. */
	checks[0] = (struct self_check){ .id = "covers_region", .status = CHECK_PASS };
	snprintf(checks[0].message, sizeof(checks[0].message),
		 "a pass reads %llu words, one every %llu bytes, over %llu bytes",
		 (unsigned long long)st->offsets, (unsigned long long)st->stride,
		 (unsigned long long)(st->offsets * st->stride));
	*n_checks = 1;
	*units = st->offsets;
	*state = st;
	return 0;
}

static void stride_run(void *state, uint64_t accesses)
{
	struct stride_state *st = state;
	const char *base = st->base;
	uint64_t stride = st->stride, i = st->next, n = st->offsets, sum = 0;

	while (accesses) {
		/* Up to the end of the pass, unrolled by 8; the loads are independent on purpose. */
		uint64_t run = n - i < accesses ? n - i : accesses;
		const char *p = base + i * stride;
		uint64_t k = run;
		for (; k >= 8; k -= 8, p += 8 * stride)
			sum += *(const volatile uint64_t *)p + *(const volatile uint64_t *)(p + stride) +
			       *(const volatile uint64_t *)(p + 2 * stride) + *(const volatile uint64_t *)(p + 3 * stride) +
			       *(const volatile uint64_t *)(p + 4 * stride) + *(const volatile uint64_t *)(p + 5 * stride) +
			       *(const volatile uint64_t *)(p + 6 * stride) + *(const volatile uint64_t *)(p + 7 * stride);
		for (; k; k--, p += stride)
			sum += *(const volatile uint64_t *)p;
		i += run;
		accesses -= run;
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
