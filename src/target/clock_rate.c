/* SPDX-License-Identifier: MIT */
/*
 * tlbprof run: the cpu-clock samples at one rate. Each sample's period counted (the CPU time its event ran since
 * its sample before, PERF_SAMPLE_READ) or, where the kernel gives no count, read off its thread (the rate is
 * lowered after 100 ms only on the events tlbprof opened); then every thread's samples resampled to one period,
 * the fast ones thinned or the slow ones spread, so that each stands for the same CPU time. Pure functions over a
 * sample list.
 */
#include "target/watch.h"

#include <errno.h>
#include <stdlib.h>

static int u32_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

struct order_key {
	uint32_t tid;
	uint64_t cpu, time_ns;
	size_t index;
};

static int tid_cpu_time_cmp(const void *x, const void *y)
{
	const struct order_key *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->cpu != b->cpu)
		return a->cpu < b->cpu ? -1 : 1;
	return a->time_ns < b->time_ns ? -1 : a->time_ns > b->time_ns;
}

/* Thread, then time. */
static int tid_time_cmp(const void *x, const void *y)
{
	const struct order_key *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->time_ns < b->time_ns ? -1 : a->time_ns > b->time_ns;
}

/*
 * The periods of counted samples: each inherited event counts one thread on one CPU, so per thread and CPU, in
 * time order, a sample stands for the count since that event's sample before (its first: since the event began;
 * a count that went back is a new event, a reused thread ID), at most cap_ns: more means samples between were
 * lost or throttled away, and their time is not this sample's code (it stays unaccounted, which the command's
 * task-clock then shows).
 */
static int counted_periods(struct sample_list *l, uint64_t cap_ns)
{
	struct order_key *keys = calloc(l->count ? l->count : 1, sizeof(*keys));

	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < l->count; i++)
		keys[i] = (struct order_key){ .tid = l->items[i].tid, .cpu = (uint32_t)l->items[i].cpu,
					     .time_ns = l->items[i].time_ns, .index = i };
	qsort(keys, l->count, sizeof(*keys), tid_cpu_time_cmp);
	for (size_t i = 0; i < l->count; i++) {
		struct sample_record *r = &l->items[keys[i].index];
		bool same = i && keys[i].tid == keys[i - 1].tid && keys[i].cpu == keys[i - 1].cpu;
		uint64_t before = same ? l->items[keys[i - 1].index].count : 0;
		uint64_t d = r->count >= before ? r->count - before : r->count;
		r->period = d < cap_ns ? d : cap_ns;
	}
	free(keys);
	return 0;
}

int watch_clock_periods(struct sample_list *l, uint64_t from_ns, uint64_t fast_ns, uint64_t slow_ns)
{
	bool counted = l->count > 0;

	for (size_t i = 0; i < l->count && counted; i++)
		counted = l->items[i].counted;
	if (counted)
		return counted_periods(l, slow_ns);
	if (!from_ns) {
		for (size_t i = 0; i < l->count; i++)
			l->items[i].period = fast_ns;	/* never lowered */
		return 0;
	}

	struct order_key *keys = calloc(l->count ? l->count : 1, sizeof(*keys));
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
			keys[n++] = (struct order_key){ .tid = l->items[i].tid, .time_ns = l->items[i].time_ns };
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

int watch_clock_resample(struct sample_list *l, uint64_t period_ns)
{
	uint32_t *tids = calloc(l->count ? l->count : 1, sizeof(*tids));
	uint64_t *acc = calloc(l->count ? l->count : 1, sizeof(*acc));
	struct sample_list out = { 0 };
	size_t n = 0;

	if (!tids || !acc || !period_ns) {
		free(tids);
		free(acc);
		return !period_ns ? -EINVAL : -ENOMEM;
	}
	for (size_t i = 0; i < l->count; i++)
		tids[n++] = l->items[i].tid;
	qsort(tids, n, sizeof(*tids), u32_cmp);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (!u || tids[u - 1] != tids[i])
			tids[u++] = tids[i];
	/* Half a period to start with: each thread's time rounded, not cut, and its first sample kept. */
	for (size_t i = 0; i < u; i++)
		acc[i] = period_ns / 2;
	for (size_t i = 0; i < l->count; i++) {
		const struct sample_record *r = &l->items[i];
		uint64_t *a = &acc[(const uint32_t *)bsearch(&r->tid, tids, u, sizeof(*tids), u32_cmp) - tids];
		*a += r->period;
		uint64_t k = *a / period_ns;
		*a -= k * period_ns;
		while (k-- > 0) {
			struct sample_record c = *r;
			c.time_ns = r->time_ns - (k * period_ns < r->time_ns ? k * period_ns : 0);
			c.spread = k > 0;
			c.period = period_ns;
			if (sample_list_append(&out, &c) != 0) {
				sample_list_free(&out);
				free(tids);
				free(acc);
				return -ENOMEM;
			}
		}
	}
	free(tids);
	free(acc);
	sample_list_free(l);
	*l = out;
	return 0;
}
