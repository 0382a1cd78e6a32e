/* SPDX-License-Identifier: MIT */
/*
 * tlbprof run: the cpu-clock samples at one rate. Each sample's period read off its thread (the rate is lowered
 * after 100 ms only on the events tlbprof opened), then the fast ones thinned to the slow rate or the slow ones
 * spread to the fast one, so that each stands for the same CPU time. Pure functions over a sample list.
 */
#include "target/watch.h"

#include <errno.h>
#include <stdlib.h>

static int u32_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

struct thin_key {
	uint32_t tid;
	uint64_t bucket, time_ns;
	size_t index;
};

static int thin_cmp(const void *x, const void *y)
{
	const struct thin_key *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->bucket != b->bucket)
		return a->bucket < b->bucket ? -1 : 1;
	return a->time_ns < b->time_ns ? -1 : a->time_ns > b->time_ns;
}

/* Thread, then time. */
static int tid_time_cmp(const void *x, const void *y)
{
	const struct thin_key *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->time_ns < b->time_ns ? -1 : a->time_ns > b->time_ns;
}

int watch_clock_periods(struct sample_list *l, uint64_t from_ns, uint64_t fast_ns, uint64_t slow_ns)
{
	struct thin_key *keys = calloc(l->count ? l->count : 1, sizeof(*keys));
	uint32_t *fast = calloc(l->count ? l->count : 1, sizeof(*fast));
	size_t n = 0, n_fast = 0;

	if (!keys || !fast) {
		free(keys);
		free(fast);
		return -ENOMEM;
	}
	/* From a slow period on: the timer armed at the fast one may fire once more after the change. */
	for (size_t i = 0; i < l->count; i++)
		if (l->items[i].time_ns >= from_ns + slow_ns)
			keys[n++] = (struct thin_key){ .tid = l->items[i].tid, .time_ns = l->items[i].time_ns };
	qsort(keys, n, sizeof(*keys), tid_time_cmp);
	for (size_t i = 1; i < n; i++)
		if (keys[i].tid == keys[i - 1].tid && keys[i].time_ns - keys[i - 1].time_ns < slow_ns / 2 &&
		    (!n_fast || fast[n_fast - 1] != keys[i].tid))
			fast[n_fast++] = keys[i].tid;
	/* fast[] is in tid order, as the keys were. */
	for (size_t i = 0; i < l->count; i++) {
		struct sample_record *r = &l->items[i];
		bool kept_fast = bsearch(&r->tid, fast, n_fast, sizeof(*fast), u32_cmp) != NULL;
		r->period = r->time_ns < from_ns || kept_fast ? fast_ns : slow_ns;
	}
	free(keys);
	free(fast);
	return 0;
}

int watch_clock_thin(struct sample_list *l, uint64_t start_ns, uint64_t period_ns)
{
	struct thin_key *keys = calloc(l->count ? l->count : 1, sizeof(*keys));
	bool *drop = calloc(l->count ? l->count : 1, sizeof(*drop));
	size_t n = 0, k = 0;

	if (!keys || !drop) {
		free(keys);
		free(drop);
		return -ENOMEM;
	}
	for (size_t i = 0; i < l->count; i++) {
		const struct sample_record *r = &l->items[i];
		uint64_t since = r->time_ns > start_ns ? r->time_ns - start_ns : 0;
		if (r->period < period_ns)
			keys[n++] = (struct thin_key){ r->tid, since / period_ns, r->time_ns, i };
	}
	qsort(keys, n, sizeof(*keys), thin_cmp);
	for (size_t i = 1; i < n; i++)
		drop[keys[i].index] = keys[i].tid == keys[i - 1].tid && keys[i].bucket == keys[i - 1].bucket;
	for (size_t i = 0; i < l->count; i++)
		if (!drop[i]) {
			l->items[k] = l->items[i];
			l->items[k++].period = period_ns;
		}
	l->count = k;
	free(keys);
	free(drop);
	return 0;
}

int watch_clock_spread(struct sample_list *l, uint64_t fast_ns)
{
	struct sample_list out = { 0 };

	for (size_t i = 0; i < l->count; i++) {
		const struct sample_record *r = &l->items[i];
		uint64_t n = fast_ns && r->period > fast_ns ? r->period / fast_ns : 1;
		for (uint64_t k = n; k-- > 0;) {
			struct sample_record c = *r;
			c.time_ns = r->time_ns - (k * fast_ns < r->time_ns ? k * fast_ns : 0);
			c.spread = k > 0;
			c.period = fast_ns;
			if (sample_list_append(&out, &c) != 0) {
				sample_list_free(&out);
				return -ENOMEM;
			}
		}
	}
	sample_list_free(l);
	*l = out;
	return 0;
}
