/* SPDX-License-Identifier: MIT */
/* The pointer-chase chain: a random single cycle over all slots, built in place, and its self-checks. */
#include "measure/chain.h"

#include <errno.h>
#include <stdlib.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define LINE_BYTES 64u

uint64_t chain_slot_offset(const struct chain_geom *g, uint64_t i)
{
	uint64_t cell = i * g->stride_bytes;
	uint64_t lines = g->stride_bytes / LINE_BYTES;

	if (g->layout == LAYOUT_ALIGNED || lines < 2)
		return cell;
	/* lines is a power of two: mask instead of modulo. */
	return cell + ((i + i / lines) & (lines - 1)) * LINE_BYTES;
}

uint64_t chain_rng_next(struct chain_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t chain_rng_below(struct chain_rng *r, uint64_t bound)
{
	/* Lemire's multiply-shift; the bias (bound / 2^64) is far below anything measurable. */
	return (uint64_t)(((unsigned __int128)chain_rng_next(r) * bound) >> 64);
}

static inline uint64_t *slot_at(void *base, const struct chain_geom *g, uint64_t i)
{
	return (uint64_t *)((char *)base + chain_slot_offset(g, i));
}

void *chain_build(void *base, const struct chain_geom *g, uint64_t seed)
{
	struct chain_rng rng = { .state = seed };
	uint64_t n = g->slots;

	/* Slot i first holds the index a[i] = i ... */
	for (uint64_t i = 0; i < n; i++)
		*slot_at(base, g, i) = i;
	/*
	 * ... then Sattolo's shuffle: swapping a[i] only with an a[j], j < i,
	 * yields a permutation that is one cycle over all n slots, so the walk
	 * i -> a[i] visits every slot before it returns. The j depend only on
	 * the generator, so they are drawn AHEAD steps early (in the same order,
	 * so the chain is the same) and their slots prefetched: the swaps'
	 * random accesses then overlap instead of waiting for each other.
	 */
	enum { AHEAD = 16 };
	uint64_t ring[AHEAD];
	for (uint64_t k = 0; k < AHEAD && n - 1 - k >= 1 && k < n - 1; k++) {
		ring[k] = chain_rng_below(&rng, n - 1 - k);
		__builtin_prefetch(slot_at(base, g, ring[k]), 1);
	}
	for (uint64_t i = n - 1; i > 0; i--) {
		uint64_t k = (n - 1 - i) % AHEAD;
		uint64_t j = ring[k];
		if (i > AHEAD) {
			ring[k] = chain_rng_below(&rng, i - AHEAD);
			__builtin_prefetch(slot_at(base, g, ring[k]), 1);
		}
		uint64_t *si = slot_at(base, g, i), *sj = slot_at(base, g, j);
		uint64_t t = *si;
		*si = *sj;
		*sj = t;
	}
	/* Finally each slot's index becomes the address of the slot it names. */
	for (uint64_t i = 0; i < n; i++) {
		uint64_t *s = slot_at(base, g, i);
		void *next = slot_at(base, g, *s);
		memcpy(s, &next, sizeof(next));
	}
	return slot_at(base, g, 0);
}

__attribute__((format(printf, 4, 5)))
static void set_check(struct self_check *c, const char *id, enum check_status st, const char *fmt, ...)
{
	va_list ap;

	c->id = id;
	c->status = st;
	va_start(ap, fmt);
	vsnprintf(c->message, sizeof(c->message), fmt, ap);
	va_end(ap);
}

void chain_check_single_cycle(const void *base, uint64_t bytes, const void *start, uint64_t slots,
			      struct self_check *out)
{
	const char *lo = base, *hi = lo + bytes;
	const void *p = start;

	for (uint64_t step = 1; step <= slots; step++) {
		const char *q = p;
		if (q < lo || q + sizeof(void *) > hi || ((uintptr_t)q & 7u)) {
			set_check(out, "single_cycle", CHECK_FAIL,
				  "step %llu of %llu left the region: the chain is corrupt", (unsigned long long)step, (unsigned long long)slots);
			return;
		}
		p = *(void *const *)p;
		if (p == start) {
			if (step == slots)
				set_check(out, "single_cycle", CHECK_PASS,
					  "walking %llu steps returns to the start, visiting all %llu slots",
					  (unsigned long long)slots, (unsigned long long)slots);
			else
				set_check(out, "single_cycle", CHECK_FAIL,
					  "the chain returns to its start after %llu of %llu slots: "
					  "several short cycles, so the working set is smaller than asked",
					  (unsigned long long)step, (unsigned long long)slots);
			return;
		}
	}
	set_check(out, "single_cycle", CHECK_FAIL,
		  "walking %llu steps does not return to the start (%llu slots): the start is not on a cycle",
		  (unsigned long long)slots, (unsigned long long)slots);
}

void chain_check_strides(const void *start, uint64_t slots, struct self_check *out)
{
	enum { STRIDES = 16 };
	intptr_t first = 0;
	unsigned distinct = 1;
	const void *p = start;

	if (slots < STRIDES + 1) {
		set_check(out, "strides_not_constant", CHECK_SKIP,
			  "only %llu slots: fewer than %d strides to compare", (unsigned long long)slots, STRIDES + 1);
		return;
	}
	for (unsigned i = 0; i < STRIDES; i++) {
		const void *q = *(void *const *)p;
		intptr_t d = (const char *)q - (const char *)p;
		if (i == 0)
			first = d;
		else if (d != first)
			distinct++;
		p = q;
	}
	if (distinct == 1)
		set_check(out, "strides_not_constant", CHECK_FAIL,
			  "the first 16 strides are all %lld bytes: a prefetcher can follow this, "
			  "so it measures bandwidth, not latency", (long long)first);
	else
		set_check(out, "strides_not_constant", CHECK_PASS,
			  "%u of the first %d strides differ from the first", distinct - 1, STRIDES);
}

int chain_check_foreign(const void *copy, uint64_t base_addr, uint64_t bytes, uint64_t start_addr,
			uint64_t slots_declared, struct self_check out[2], struct chain_walk *walk)
{
	uint64_t words = bytes / 8, pages = (bytes + 4095) / 4096;
	uint64_t *seen = calloc((words + 63) / 64, sizeof(uint64_t));
	uint64_t *page_seen = calloc((pages + 63) / 64, sizeof(uint64_t));
	uint64_t huge_pages = (bytes + (2u << 20) - 1) / (2u << 20), huge_touched = 0;
	uint64_t *huge_seen = calloc((huge_pages + 63) / 64, sizeof(uint64_t));
	const uint64_t *mem = copy;
	uint64_t cur = start_addr, steps = 0, touched = 0, lines_used = 0, lo = UINT64_MAX, hi = 0;
	/* Strides over the whole walk: the longest run of equal consecutive ones, where it starts, its stride. */
	uint64_t prev_diff = 0, run = 0, best_run = 0, best_at = 0, best_diff = 0, repeats = 0;
	char problem[160] = "";

	memset(walk, 0, sizeof(*walk));
	out[0] = (struct self_check){ .id = "single_cycle", .status = CHECK_PASS };
	out[1] = (struct self_check){ .id = "strides_not_constant", .status = CHECK_PASS };
	if (bytes < 16) {
		/* Not even two slots: nothing to walk (and bytes - 8 below would wrap). */
		free(seen);
		free(page_seen);
		free(huge_seen);
		out[0].status = out[1].status = CHECK_SKIP;
		snprintf(out[0].message, sizeof(out[0].message), "a %llu-byte region holds no chain",
			 (unsigned long long)bytes);
		snprintf(out[1].message, sizeof(out[1].message), "a %llu-byte region holds no chain",
			 (unsigned long long)bytes);
		return 0;
	}
	if (!seen || !page_seen || !huge_seen) {
		free(seen);
		free(page_seen);
		free(huge_seen);
		return -ENOMEM;
	}
	/* At most one step per 8-byte word: a walk longer than that has left the cycle through start. */
	while (steps <= words) {
		if (cur < base_addr || cur - base_addr > bytes - 8 || (cur - base_addr) % 8) {
			snprintf(problem, sizeof(problem), "step %llu points at 0x%llx, outside the region or unaligned",
				 (unsigned long long)steps, (unsigned long long)cur);
			break;
		}
		uint64_t w = (cur - base_addr) / 8, pg = (cur - base_addr) / 4096;
		if (seen[w / 64] & (1ull << (w % 64))) {
			if (cur != start_addr)
				snprintf(problem, sizeof(problem),
					 "after %llu steps the walk re-entered slot 0x%llx, not its start: the start is "
					 "not on a cycle", (unsigned long long)steps, (unsigned long long)cur);
			break;
		}
		seen[w / 64] |= 1ull << (w % 64);
		lo = cur < lo ? cur : lo;
		hi = cur > hi ? cur : hi;
		lines_used |= 1ull << (((cur - base_addr) & 4095) >> 6);
		if (!(page_seen[pg / 64] & (1ull << (pg % 64)))) {
			page_seen[pg / 64] |= 1ull << (pg % 64);
			touched++;
		}
		uint64_t hp = (cur - base_addr) / (2u << 20);
		if (!(huge_seen[hp / 64] & (1ull << (hp % 64)))) {
			huge_seen[hp / 64] |= 1ull << (hp % 64);
			huge_touched++;
		}
		uint64_t next = mem[w], diff = next - cur;
		run = steps && diff == prev_diff ? run + 1 : 1;
		repeats += steps && diff == prev_diff;
		if (run > best_run) {
			best_run = run;
			best_at = steps + 1 - run;
			best_diff = diff;
		}
		prev_diff = diff;
		cur = next;
		steps++;
	}
	if (!*problem && cur == start_addr)
		walk->cycle_slots = steps;
	else if (!*problem)
		snprintf(problem, sizeof(problem), "the walk did not return to its start");
	walk->pages_covered = pages ? (double)touched / (double)pages : 0;
	walk->span_bytes = steps ? hi - lo + 8 : 0;
	/* One slot per 2 MiB page is a huge-page chase: its coverage counts in 2 MiB pages. */
	double covered = walk->pages_covered;
	if (huge_pages && (double)huge_touched / (double)huge_pages > covered)
		covered = (double)huge_touched / (double)huge_pages;

	/* The smallest gap between visited slots, from the bitmap in address order. */
	uint64_t gap = 0, prev = UINT64_MAX;
	for (uint64_t w = 0; w < words; w++) {
		if (!(seen[w / 64] & (1ull << (w % 64))))
			continue;
		if (prev != UINT64_MAX && (gap == 0 || (w - prev) * 8 < gap))
			gap = (w - prev) * 8;
		prev = w;
	}
	walk->expected_slots = slots_declared ? slots_declared : gap ? bytes / gap : 1;
	/* Aligned: with L lines per cell, every line used in a page is the same one modulo L. */
	uint64_t cell = slots_declared ? bytes / slots_declared : gap;
	unsigned per_cell = cell >= 4096 ? 64 : (unsigned)(cell / 64);
	if (per_cell >= 2 && lines_used) {
		int first = __builtin_ctzll(lines_used);
		walk->aligned = true;
		for (unsigned i = 0; i < 64; i++)
			if ((lines_used >> i) & 1)
				walk->aligned &= i % per_cell == (unsigned)first % per_cell;
	}

	if (*problem) {
		out[0].status = CHECK_FAIL;
		snprintf(out[0].message, sizeof(out[0].message), "%s", problem);
	} else if (!slots_declared && (walk->cycle_slots < CHAIN_FOREIGN_MIN_SLOTS ||
					covered < CHAIN_FOREIGN_MIN_PAGES)) {
		/* The smallest gap of a sparse chain is wide too: bytes / gap can agree with a handful of slots. */
		out[0].status = CHECK_FAIL;
		snprintf(out[0].message, sizeof(out[0].message),
			 "%llu slots on %.2f %% of the region's pages (undeclared: %d+ on %.1f %%+): it touches a sliver "
			 "of its working set", (unsigned long long)walk->cycle_slots, 100 * covered,
			 CHAIN_FOREIGN_MIN_SLOTS, 100 * CHAIN_FOREIGN_MIN_PAGES);
	} else if ((slots_declared && walk->cycle_slots != slots_declared) ||
		   (!slots_declared && (double)walk->cycle_slots < 0.99 * (double)walk->expected_slots)) {
		out[0].status = CHECK_FAIL;
		snprintf(out[0].message, sizeof(out[0].message),
			 "the cycle through the start holds %llu of %llu %s slots: the chain is several smaller cycles "
			 "and the phase touches only part of its working set", (unsigned long long)walk->cycle_slots,
			 (unsigned long long)walk->expected_slots, slots_declared ? "declared" : "expected");
	} else {
		snprintf(out[0].message, sizeof(out[0].message), "one cycle of %llu slots over %.0f %% of the region's pages",
			 (unsigned long long)walk->cycle_slots, 100 * walk->pages_covered);
	}
	if (steps < CHAIN_FOREIGN_STRIDE_RUN + 1) {
		out[1].status = CHECK_SKIP;
		snprintf(out[1].message, sizeof(out[1].message), "fewer than %d slots walked", CHAIN_FOREIGN_STRIDE_RUN + 1);
	} else if (best_run >= CHAIN_FOREIGN_STRIDE_RUN) {
		out[1].status = CHECK_FAIL;
		snprintf(out[1].message, sizeof(out[1].message),
			 "steps %llu to %llu of the %llu walked all move by %lld bytes: a constant stride the prefetcher "
			 "follows, so the phase measures bandwidth, not latency", (unsigned long long)best_at,
			 (unsigned long long)(best_at + best_run - 1), (unsigned long long)steps, (long long)best_diff);
	} else {
		snprintf(out[1].message, sizeof(out[1].message),
			 "no run of %d equal strides in the %llu steps walked (longest %llu; %llu steps repeat the one "
			 "before)", CHAIN_FOREIGN_STRIDE_RUN, (unsigned long long)steps, (unsigned long long)best_run,
			 (unsigned long long)repeats);
	}
	free(seen);
	free(page_seen);
	free(huge_seen);
	return 0;
}
