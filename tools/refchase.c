/* SPDX-License-Identifier: MIT */
/*
 * An independent reference chase for tools/bench: the layout tlbprof's default command builds (one slot per
 * 4 KiB page, its cache line rotating inside the page, linked into one random cycle by Sattolo's algorithm),
 * written here again from scratch, sharing no code with tlbprof, so that the two can be compared run by run.
 *
 * Usage: tlbprof-refchase 4k|2m SIZE_MIB [SAMPLES]
 * Maps SIZE_MIB MiB on 2 MiB alignment, advised against THP (4k) or for it (2m), touches it, builds the chain,
 * walks it twice to warm up, then times SAMPLES (default 30) passes of one trip around the chain each.
 * Prints one JSON line: the median ns per access, the samples' (max - min) / median, and the share of the
 * region THP backed (from /proc/self/smaps_rollup's AnonHugePages, -1 when unreadable).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define PAGE 4096u
#define LINE 64u
#define HUGE (2u << 20)

static void *volatile sink;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: any decent generator serves; this one is not tlbprof's. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* AnonHugePages of the whole process, in bytes; -1 when smaps_rollup cannot be read. */
static long long anon_huge_bytes(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	long long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "4k") != 0 && strcmp(argv[1], "2m") != 0) || atol(argv[2]) < 1) {
		fprintf(stderr, "usage: tlbprof-refchase 4k|2m SIZE_MIB [SAMPLES]\n");
		return 2;
	}
	int huge = strcmp(argv[1], "2m") == 0;
	size_t bytes = (size_t)atol(argv[2]) << 20, slots = bytes / PAGE;
	int samples = argc > 3 ? atoi(argv[3]) : 30;
	if (samples < 1 || samples > 1000)
		samples = 30;
	char *raw = mmap(NULL, bytes + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t *order = malloc(slots * sizeof(*order));
	double *ns = malloc((size_t)samples * sizeof(*ns));
	if (raw == MAP_FAILED || !order || !ns) {
		perror("tlbprof-refchase");
		return 1;
	}
	char *base = (char *)(((uintptr_t)raw + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	madvise(base, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(base, 1, bytes);

	/* Slot i sits in page i at line i mod 64: consecutive pages use different cache sets. */
	uint64_t seed = 0x243f6a8885a308d3ull ^ (uint64_t)now_ns();
	for (size_t i = 0; i < slots; i++)
		order[i] = i;
	for (size_t i = slots - 1; i > 0; i--) {
		size_t j = (size_t)(next_rand(&seed) % i);
		size_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
#define SLOT(i) ((void **)(base + (i) * PAGE + ((i) % (PAGE / LINE)) * LINE))
	for (size_t i = 0; i < slots; i++)
		*SLOT(order[i]) = SLOT(order[(i + 1) % slots]);
	void **p = SLOT(order[0]);
	free(order);

	for (size_t i = 0; i < 2 * slots; i++)
		p = (void **)*p;
	for (int s = 0; s < samples; s++) {
		uint64_t t0 = now_ns();
		for (size_t i = 0; i < slots; i++)
			p = (void **)*p;
		ns[s] = (double)(now_ns() - t0) / (double)slots;
	}
	sink = p;
	qsort(ns, (size_t)samples, sizeof(*ns), cmp);
	double median = samples % 2 ? ns[samples / 2] : (ns[samples / 2 - 1] + ns[samples / 2]) / 2;
	long long thp = anon_huge_bytes();
	printf("{\"pages\": \"%s\", \"bytes\": %zu, \"samples\": %d, \"ns_per_access_median\": %.3f, "
	       "\"range_over_median\": %.4f, \"thp_fraction\": %.3f}\n", argv[1], bytes, samples, median,
	       (ns[samples - 1] - ns[0]) / median, thp < 0 ? -1.0 : (double)thp / (double)bytes);
	return 0;
}
