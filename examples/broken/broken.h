/* SPDX-License-Identifier: MIT */
/*
 * What the unmarked example benchmarks share: a clock, a generator, a random
 * page order, pinning and the one line each prints. They carry no markers:
 * tests/integration/test_broken.py runs each under `tlbprof run` as a user
 * would run someone else's benchmark, and checks what tlbprof finds on its own.
 */
#ifndef TLBPROF_EXAMPLE_BROKEN_H
#define TLBPROF_EXAMPLE_BROKEN_H

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define PAGE 4096u
#define REGION_BYTES (32u << 20)	/* 8192 pages: past the L1 dTLB, a few ms of faults */

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* splitmix64 */
static inline uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A random order of n pages (Fisher-Yates), from the heap (small: not one of the big regions). */
static inline uint32_t *page_order(size_t n, uint64_t seed)
{
	uint32_t *o = (uint32_t *)malloc(n * sizeof(*o));	/* a cast, for the C++ example too */

	if (!o)
		exit(1);
	for (size_t i = 0; i < n; i++)
		o[i] = (uint32_t)i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = rnd(&seed) % (i + 1);
		uint32_t t = o[i];
		o[i] = o[j];
		o[j] = t;
	}
	return o;
}

/* Pin the calling thread to the CPU it runs on now, as a careful benchmark does first. */
static inline void pin_self(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		perror("sched_setaffinity");
}

/* Pin the calling thread to another CPU than the one it runs on: the pinning itself moves it once. */
static inline void pin_other(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) < 2)
		return;
	for (int c = 1; c <= CPU_SETSIZE; c++)
		if (CPU_ISSET((cpu + c) % CPU_SETSIZE, &set)) {
			cpu = (cpu + c) % CPU_SETSIZE;
			break;
		}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		perror("sched_setaffinity");
}

static inline void say(const char *what, uint64_t accesses, uint64_t ns, uint64_t sink)
{
	printf("%s: %.2f ns per access (%llu)\n", what, (double)ns / (double)accesses, (unsigned long long)(sink & 1));
}

/*
 * A single random cycle through one slot per page of base (Sattolo, over order, a random order of its pages), the
 * slot's line rotated inside its page so the lines spread over the cache sets; its start. Always inlined: the
 * caller's own code, as a Google Benchmark function's setup is the timed loop's.
 */
static inline __attribute__((always_inline, unused)) void **write_chain(char *base, uint32_t *order, size_t pages,
									 uint64_t *seed)
{
	for (size_t i = pages - 1; i > 0; i--) {
		size_t j = rnd(seed) % i;
		uint32_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (size_t i = 0; i < pages; i++) {
		size_t from = order[i], to = order[(i + 1) % pages];
		*(void **)(base + from * PAGE + (from % 64) * 64) = base + to * PAGE + (to % 64) * 64;
	}
	return (void **)(base + (size_t)order[0] * PAGE + (order[0] % 64) * 64);
}

/* write_chain() over a random page order, in a function of its own. Written here, before any timing: the first
 * touch of every page. */
__attribute__((noinline, unused)) static void **build_chain(char *base, size_t pages, uint64_t seed)
{
	uint32_t *o = page_order(pages, seed);
	void **start = write_chain(base, o, pages, &seed);

	free(o);
	return start;
}

/* The dependent chase: each load's address is the previous load's value. */
__attribute__((noinline, unused)) static void *chase(void **p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		p = (void **)*p;
	return p;
}

#endif
