/* SPDX-License-Identifier: MIT */
/* Probes for test_run_declared.py: marked benchmarks whose declarations hide one trap each (issue 17, item 8). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <tlbprof/marker.h>

#define MIB (1ull << 20)
#define PAGE 4096ull

static void *volatile sink;

/* A 2 MiB-aligned anonymous mapping of bytes, nothing advised, nothing touched. */
static char *map(size_t bytes)
{
	char *raw = mmap(NULL, bytes + 2 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		exit(3);
	return (char *)(((uintptr_t)raw + 2 * MIB - 1) & ~(uintptr_t)(2 * MIB - 1));
}

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Slot i: one per page, its line rotated inside the page. */
static void **slot(char *base, size_t i)
{
	return (void **)(base + i * PAGE + (i * 64) % PAGE);
}

/* Link slots in order[0..n-1] into one cycle; returns the start. */
static void **link_order(char *base, const size_t *order, size_t n)
{
	for (size_t i = 0; i < n; i++)
		*slot(base, order[i]) = slot(base, order[(i + 1) % n]);
	return slot(base, order[0]);
}

/* A random single cycle (Sattolo) over slots 0..n-1; sequential from step `rotate_at` on when it is not 0. */
static void **chain(char *base, size_t n, size_t rotate_at)
{
	size_t *order = malloc(n * sizeof(*order));
	uint64_t s = 7;
	if (!order)
		exit(3);
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(rnd(&s) % i), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	if (rotate_at) {
		/* The first rotate_at steps zigzag over the top slots (no stride twice in a row), then 0, 1, 2 ... */
		for (size_t i = 0; i < rotate_at; i++)
			order[i] = n - 1 - (i ^ 1);
		for (size_t i = rotate_at; i < n; i++)
			order[i] = i - rotate_at;
	}
	void **start = link_order(base, order, n);
	free(order);
	return start;
}

static void chase(void **p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		p = (void **)*p;
	sink = p;
}

/*
 * The same slots read through an index array in the chain's order: each
 * address comes from the array, none from the last load, so the core
 * overlaps them. noinline: one loop, the hot one, as a benchmark's own.
 */
static __attribute__((noinline)) void gather(char *const *at, size_t n, uint64_t real)
{
	uintptr_t sum = 0;

	for (uint64_t i = 0, k = 0; i < real; i++, k = k + 1 == n ? 0 : k + 1)
		sum += *(const uintptr_t *)at[k];
	sink = (void *)sum;
}

/* Five marked occurrences of `real` accesses, chased (or gathered through at[0..n-1]), that declare `declared`. */
static void phases(const char *name, struct tlbprof_phase *ph, void **start, char *const *at, size_t n,
		   uint64_t real, uint64_t declared)
{
	for (int rep = -1; rep < 5; rep++) {	/* -1: the warm-up, on the same path */
		if (rep == 0)
			ph->accesses = declared;
		if (rep >= 0 && tlbprof_phase_begin(name, ph) != 0)
			perror("tlbprof_phase_begin");
		if (at)
			gather(at, n, real);
		else
			chase(start, real);
		if (rep >= 0 && tlbprof_phase_end(0, 0) != 0)
			perror("tlbprof_phase_end");
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "correct";
	struct tlbprof_phase ph = TLBPROF_PHASE_INIT;
	size_t bytes = 16 * MIB, slots = bytes / PAGE;
	uint64_t accesses = 1000000, declared = accesses;	/* ~30-50 ms an occurrence: a preemption is a share of it */
	char *base = map(64 * MIB + 64 * MIB);
	void **start;

	ph.page = "4k";
	if (strcmp(mode, "two_slots") == 0) {
		/* Two slots 32 MiB apart, no slots declared: "a 64 MiB chain" that reads two lines. */
		bytes = 64 * MIB;
		madvise(base, bytes, MADV_NOHUGEPAGE);
		memset(base, 1, bytes);
		*(void **)base = base + 32 * MIB;
		*(void **)(base + 32 * MIB) = base;
		start = (void **)base;
		slots = 0;
	} else if (strcmp(mode, "partly_resident") == 0) {
		/* A 64 MiB region of which the chain writes 16 MiB; the rest is read, never written: the zero page. */
		madvise(base, 64 * MIB, MADV_NOHUGEPAGE);
		memset(base, 1, bytes);
		start = chain(base, slots, 0);
		for (size_t off = bytes; off < 64 * MIB; off += PAGE)
			sink = (void *)(uintptr_t)*(volatile char *)(base + off);
		bytes = 64 * MIB;	/* the chain's 4096 slots are declared: only residency is wrong */
	} else if (strcmp(mode, "late_thp") == 0) {
		/*
		 * "2m" declared over 32 MiB from a page past a 2 MiB boundary, written on 4 KiB pages and only then
		 * advised MADV_HUGEPAGE: the advice comes too late, and the start is not aligned.
		 */
		base += PAGE;
		bytes = 32 * MIB;
		slots = bytes / PAGE;
		ph.page = "2m";
		memset(base, 1, bytes);
		madvise(base, bytes, MADV_HUGEPAGE);
		start = chain(base, slots, 0);
	} else if (strcmp(mode, "thp_range") == 0) {
		/*
		 * One 128 MiB VMA, THP advised after [8, 64) MiB was touched on 4 KiB
		 * pages: the declared first 64 MiB are 12.5 % THP, the whole VMA 56 %.
		 */
		bytes = 64 * MIB;
		slots = bytes / PAGE;
		memset(base + 8 * MIB, 1, 56 * MIB);
		madvise(base, 128 * MIB, MADV_HUGEPAGE);
		memset(base, 1, 8 * MIB);
		memset(base + 64 * MIB, 1, 64 * MIB);
		start = chain(base, slots, 0);
	} else {
		/*
		 * Inflated: over 64 MiB, past every L2 TLB's reach, so that a
		 * twentieth of the real time per access stays above an L1 hit: 16 MiB
		 * (4096 pages) fits Zen 5's L2 TLB and its L2 cache, and a tenth of that
		 * was faster than an L1 hit there, which too_fast then caught instead.
		 * Twenty, not ten: a chase's speed differs up to 3x between two
		 * allocations on a PVM guest, and at ten the phase read 2.2 to 8.6
		 * times faster than tlbprof's reference chase over 16 runs (2.21 and
		 * 3.01 the lowest), and 2.91 in a CI dry run, against the check's 3x
		 * (at twenty: 13 to 16x over 6).
		 */
		if (strcmp(mode, "inflated") == 0) {
			bytes = 64 * MIB;
			slots = bytes / PAGE;
		}
		madvise(base, bytes, MADV_NOHUGEPAGE);
		memset(base, 1, bytes);
		start = chain(base, slots, strcmp(mode, "rotated") == 0 ? 20 : 0);
		if (strcmp(mode, "inflated") == 0)
			declared = 20 * accesses;
	}
	/* Overlapped: the chain's slots in its order, read from an index array: "a chase" whose loads overlap. */
	char **at = NULL;
	if (strcmp(mode, "overlapped") == 0) {
		accesses = declared = 20 * accesses;	/* overlapped, each a tenth of a chased one's time or less */
		at = malloc(slots * sizeof(*at));
		if (!at)
			exit(3);
		void **p = start;
		for (size_t i = 0; i < slots; i++, p = (void **)*p)
			at[i] = (char *)p;
	}
	ph.region = base;
	ph.region_bytes = bytes;
	ph.chain = start;
	ph.slots = slots;
	phases("chase", &ph, start, at, slots, accesses, declared);
	free(at);
	return 0;
}
