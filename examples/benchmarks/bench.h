/* SPDX-License-Identifier: MIT */
/*
 * What the example benchmarks share: a region on the page size they intend,
 * a random single-cycle pointer chain (Sattolo) with colored slots, and the
 * chase loop. Each example is one trap (or the correct benchmark) and marks
 * its phases with <tlbprof/marker.h>; tests run them under `tlbprof run`.
 */
#ifndef TLBPROF_EXAMPLE_BENCH_H
#define TLBPROF_EXAMPLE_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <tlbprof/marker.h>

#define BENCH_2M (2u << 20)

/* A region of bytes, 2 MiB aligned, advised for THP (huge != 0) or against it, touched so no timed access faults. */
static inline void *bench_region(size_t bytes, int huge)
{
	size_t len = bytes + BENCH_2M;
	char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	char *base = (char *)(((uintptr_t)raw + BENCH_2M - 1) & ~(uintptr_t)(BENCH_2M - 1));
	madvise(base, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(base, 1, bytes);
	return base;
}

/* A small deterministic generator (splitmix64). */
static inline uint64_t bench_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Slot i of a chain with one slot per stride: its cache line rotates inside the page (no set aliasing). */
static inline void **bench_slot(void *base, size_t stride, size_t i)
{
	return (void **)((char *)base + i * stride + (i * 64) % stride);
}

/* Link slots first .. first+n-1 into one random cycle (Sattolo's algorithm); returns the first slot. */
static inline void **bench_chain(void *base, size_t stride, size_t first, size_t n, uint64_t seed)
{
	size_t *order = malloc(n * sizeof(*order));
	if (!order)
		exit(1);
	for (size_t i = 0; i < n; i++)
		order[i] = first + i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(bench_rand(&seed) % i);	/* j < i: one cycle */
		size_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		*bench_slot(base, stride, order[i]) = bench_slot(base, stride, order[(i + 1) % n]);
	void **start = bench_slot(base, stride, order[0]);
	free(order);
	return start;
}

/* The chase: n dependent loads, the last pointer kept in a volatile sink so nothing is deleted. */
static void *volatile bench_sink;
static inline void bench_chase(void **p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		p = (void **)*p;
	bench_sink = p;
}

#endif
