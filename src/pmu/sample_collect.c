/* SPDX-License-Identifier: MIT */
/* Sampling, collecting side: the sample list, the sink that feeds the symbolizer, and the summary of the samples. */
#include "pmu/sample.h"

#include "pmu/symbols.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- collecting ---------------------------------------------------------- */

int sample_list_append(struct sample_list *list, const struct sample_record *r)
{
	if (list->count == list->capacity) {
		size_t cap = list->capacity ? list->capacity * 2 : 4096;
		struct sample_record *items = realloc(list->items, cap * sizeof(*items));

		if (!items)
			return -ENOMEM;
		list->items = items;
		list->capacity = cap;
	}
	list->items[list->count++] = *r;
	return 0;
}

void sample_list_free(struct sample_list *list)
{
	free(list->items);
	*list = (struct sample_list){ 0 };
}

void sample_list_decimate(struct sample_list *list, size_t block)
{
	size_t k = 0;

	for (size_t i = 0; i < list->count; i++)
		if ((i / block) % 2 == 0)
			list->items[k++] = list->items[i];
	list->count = k;
}

/*
 * Sample n (from 0) is kept while its block's index is a multiple of one_in: the kept blocks are then
 * those of index 0, one_in, 2 one_in, ... in order, and dropping every other one of them leaves the multiples of
 * 2 one_in, so the rule holds on as one_in doubles. The cap is a multiple of two blocks, so it is reached at the
 * end of a kept block.
 */
uint64_t sample_collector_one_in(const struct sample_collector *c)
{
	return c->one_in > 1 ? c->one_in : 1;	/* zero-initialised: none dropped yet */
}

static int collect_sample(void *ctx, const struct sample_record *r)
{
	struct sample_collector *c = ctx;
	uint64_t n = c->seen++, one_in = sample_collector_one_in(c);

	if (!c->list)
		return 0;
	if (c->cap && (n / SAMPLE_KEEP_BLOCK) % one_in)
		return 0;
	if (c->cap && c->list->count >= c->cap) {
		sample_list_decimate(c->list, SAMPLE_KEEP_BLOCK);
		c->one_in = one_in *= 2;
		if ((n / SAMPLE_KEEP_BLOCK) % one_in)
			return 0;
	}
	return sample_list_append(c->list, r);
}

static int collect_mmap(void *ctx, const struct sample_mmap *m)
{
	struct sample_collector *c = ctx;
	struct symbols_mapping map = {
		.start = m->start, .end = m->start + m->len, .offset = m->pgoff,
		.dev_major = m->major, .dev_minor = m->minor, .inode = m->inode, .path = m->filename,
	};

	if (!c->syms || m->len == 0 || map.end < map.start)
		return 0;
	if (m->prot || m->flags)
		snprintf(map.perms, sizeof(map.perms), "%c%c%c%c", m->prot & PROT_READ ? 'r' : '-',
			 m->prot & PROT_WRITE ? 'w' : '-', m->prot & PROT_EXEC ? 'x' : '-',
			 m->flags & MAP_SHARED ? 's' : 'p');
	return symbols_mapping_add(c->syms, (pid_t)m->pid, &map) == -ENOMEM ? -ENOMEM : 0;
}

static int collect_task(void *ctx, const struct sample_task *t)
{
	struct sample_collector *c = ctx;

	if (!c->syms)
		return 0;
	if (t->kind == SAMPLE_TASK_EXEC)
		symbols_exec(c->syms, (pid_t)t->pid);
	else if (t->kind == SAMPLE_TASK_FORK && t->pid != t->ppid)
		return symbols_fork(c->syms, (pid_t)t->ppid, (pid_t)t->pid);
	return 0;
}

void sample_collector_sink(struct sample_collector *c, struct sample_sink *sink)
{
	*sink = (struct sample_sink){
		.sample = collect_sample, .mmap = collect_mmap, .task = collect_task, .ctx = c,
	};
}

/* ---- the summary ----------------------------------------------------------- */

/*
 * One sample's group: interned names (owned by the symbolizer, so equal
 * names are equal pointers) and, for regions, the mapping's start. The end
 * rides along: a region's name and start fix its mapping.
 */
struct group_key {
	const char *a, *b;		/* functions: object, function; regions: name, NULL */
	uint64_t start, end;
	bool anonymous;
	bool walk;			/* the sample's data source says the page walker served it (not part of the key) */
	uint64_t ip;			/* functions: the sample's instruction (not part of the key) */
	uint32_t pid;
};

static int key_cmp(const void *x, const void *y)
{
	const struct group_key *p = x, *q = y;

	if (p->a != q->a)
		return (uintptr_t)p->a < (uintptr_t)q->a ? -1 : 1;
	if (p->b != q->b)
		return (uintptr_t)p->b < (uintptr_t)q->b ? -1 : 1;
	if (p->start != q->start)
		return p->start < q->start ? -1 : 1;
	return 0;
}

struct group {
	struct group_key key;
	uint64_t count, walks;
};

/* Most samples first; ties by name (function, then object) and start, so the order is the same every run. */
static int group_cmp(const void *x, const void *y)
{
	const struct group *p = x, *q = y;
	int c;

	if (p->count != q->count)
		return p->count > q->count ? -1 : 1;
	if (p->key.b && q->key.b && (c = strcmp(p->key.b, q->key.b)) != 0)
		return c;
	if ((c = strcmp(p->key.a, q->key.a)) != 0)
		return c;
	if (p->key.start != q->key.start)
		return p->key.start < q->key.start ? -1 : 1;
	return 0;
}

/* Sort keys, count runs into groups (allocated, *n_groups), then order the groups by count. NULL: no memory. */
static struct group *count_groups(struct group_key *keys, size_t n, size_t *n_groups)
{
	struct group *groups;
	size_t g = 0;

	*n_groups = 0;
	qsort(keys, n, sizeof(*keys), key_cmp);
	groups = calloc(n ? n : 1, sizeof(*groups));
	if (!groups)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (g && key_cmp(&groups[g - 1].key, &keys[i]) == 0) {
			groups[g - 1].count++;
			groups[g - 1].walks += keys[i].walk;
			continue;
		}
		groups[g].key = keys[i];
		groups[g].count = 1;
		groups[g].walks = keys[i].walk;
		g++;
	}
	qsort(groups, g, sizeof(*groups), group_cmp);
	*n_groups = g;
	return groups;
}

static int ip_cmp(const void *x, const void *y)
{
	const struct group_key *p = x, *q = y;

	return p->ip == q->ip ? 0 : p->ip < q->ip ? -1 : 1;
}

/*
 * The source line of group g's hottest instruction: its keys are a run of
 * the sorted keys[0..n-1] (count_groups() sorted them); sorted again by ip
 * there, the longest run of one ip is the hottest. NULL without DWARF.
 */
static char *hot_source(struct symbols *syms, struct group_key *keys, size_t n, const struct group *g)
{
	size_t lo = 0, best = 0, best_n = 0;
	struct symbols_frame frames[4];
	char here[512], outer[512], *out = NULL;

	while (lo < n && key_cmp(&keys[lo], &g->key) != 0)
		lo++;
	size_t hi = lo;
	while (hi < n && key_cmp(&keys[hi], &g->key) == 0)
		hi++;
	if (lo == hi)
		return NULL;
	qsort(keys + lo, hi - lo, sizeof(*keys), ip_cmp);
	for (size_t i = lo, run = 0; i < hi; i++) {
		run = i > lo && keys[i].ip == keys[i - 1].ip ? run + 1 : 1;
		if (run > best_n) {
			best_n = run;
			best = i;
		}
	}
	size_t nf = symbols_frames(syms, (pid_t)keys[best].pid, keys[best].ip, frames, 4);
	if (!nf || symbols_frame_format(&frames[0], here, sizeof(here)) <= 0)
		return NULL;
	if (nf > 1 && frames[0].inlined && symbols_frame_format(&frames[1], outer, sizeof(outer)) > 0) {
		if (asprintf(&out, "%s (inlined into %s at %s)", here, frames[1].function ? frames[1].function : "?",
			     outer) < 0)
			out = NULL;
	} else {
		out = strdup(here);
	}
	return out;
}

void sample_summary_free(struct sample_summary *summary)
{
	if (!summary)
		return;
	for (size_t i = 0; summary->functions && i < summary->n_functions; i++) {
		free(summary->functions[i].object);
		free(summary->functions[i].function);
		free(summary->functions[i].source);
	}
	for (size_t i = 0; summary->regions && i < summary->n_regions; i++)
		free(summary->regions[i].name);
	free(summary->functions);
	free(summary->regions);
	*summary = (struct sample_summary){ 0 };
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

int sample_summarize(const struct sample_record *samples, size_t n, uint64_t lost, struct symbols *syms,
		     size_t top_n, struct sample_summary *out)
{
	struct group_key *fkeys = calloc(n ? n : 1, sizeof(*fkeys)), *rkeys = calloc(n ? n : 1, sizeof(*rkeys));
	struct group *fgroups = NULL, *rgroups = NULL;
	size_t nf = 0, nr = 0;
	int err = -ENOMEM;

	*out = (struct sample_summary){ .samples = n, .lost = lost };
	if (!fkeys || !rkeys)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct symbols_location loc;
		struct symbols_region region = { .name = SYMBOLS_UNKNOWN };
		enum sample_tlb_level level = sample_tlb_level(samples[i].data_src);

		out->tlb_levels[level]++;
		symbols_resolve(syms, (pid_t)samples[i].pid, samples[i].ip, &loc);
		if (!loc.resolved)
			out->unresolved_ip++;
		fkeys[i] = (struct group_key){ .a = loc.object, .b = loc.function, .walk = level == SAMPLE_TLB_WALK,
					       .ip = samples[i].ip, .pid = samples[i].pid };
		/* Address 0: the event gives none (or a NULL dereference, which no mapping holds either). */
		if (samples[i].addr)
			symbols_classify(syms, (pid_t)samples[i].pid, samples[i].addr, &region);
		if (region.start == 0 && region.end == 0)
			out->unresolved_addr++;
		rkeys[i] = (struct group_key){
			.a = region.name, .start = region.start, .end = region.end, .anonymous = region.anonymous,
			.walk = level == SAMPLE_TLB_WALK,
		};
	}
	fgroups = count_groups(fkeys, n, &nf);
	rgroups = count_groups(rkeys, n, &nr);
	if (!fgroups || !rgroups)
		goto out;
	out->distinct_functions = nf;
	out->distinct_regions = nr;
	out->functions = calloc(min_size(nf, top_n) + 1, sizeof(*out->functions));
	out->regions = calloc(min_size(nr, top_n) + 1, sizeof(*out->regions));
	if (!out->functions || !out->regions)
		goto out;
	for (size_t i = 0; i < min_size(nf, top_n); i++) {
		struct sample_function_count *f = &out->functions[i];

		f->object = strdup(fgroups[i].key.a);
		f->function = strdup(fgroups[i].key.b);
		out->n_functions++;	/* counted first, so a failure below frees what was made */
		if (!f->object || !f->function)
			goto out;
		f->count = fgroups[i].count;
		f->walks = fgroups[i].walks;
		f->share = (double)f->count / (double)n;
		f->source = hot_source(syms, fkeys, n, &fgroups[i]);
	}
	for (size_t i = 0; i < min_size(nr, top_n); i++) {
		struct sample_region_count *r = &out->regions[i];

		r->name = strdup(rgroups[i].key.a);
		out->n_regions++;
		if (!r->name)
			goto out;
		r->start = rgroups[i].key.start;
		r->end = rgroups[i].key.end;
		r->anonymous = rgroups[i].key.anonymous;
		r->count = rgroups[i].count;
		r->walks = rgroups[i].walks;
		r->share = (double)r->count / (double)n;
	}
	err = 0;
out:
	if (err)
		sample_summary_free(out);
	free(fkeys);
	free(rkeys);
	free(fgroups);
	free(rgroups);
	return err;
}

void sample_summary_scale(struct sample_summary *summary, const struct sample_collector *c)
{
	uint64_t x = sample_collector_one_in(c);

	summary->kept_one_in = x;
	if (x == 1)
		return;
	summary->samples = c->seen;
	summary->unresolved_ip *= x;
	summary->unresolved_addr *= x;
	for (int l = 0; l < SAMPLE_TLB_LEVELS; l++)
		summary->tlb_levels[l] *= x;
	for (size_t i = 0; i < summary->n_functions; i++) {
		summary->functions[i].count *= x;
		summary->functions[i].walks *= x;
	}
	for (size_t i = 0; i < summary->n_regions; i++) {
		summary->regions[i].count *= x;
		summary->regions[i].walks *= x;
	}
}
