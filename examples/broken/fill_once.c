/* SPDX-License-Identifier: MIT */
/*
 * Correct, in mbw's shape: two arrays filled once by a function of its own (the first touch of every page), then
 * copied with memcpy, timed with gettimeofday (the vDSO's, which no uprobe sees). The fill is the program's own
 * hottest code, and it took its faults; without the clock reads, only its one pass tells it from a timed loop.
 */
#include <sys/time.h>

#include "broken.h"

#define ARRAY_BYTES (64u << 20)
#define COPIES 20

__attribute__((noinline)) static void fill(long *a, size_t n, long v)
{
	for (size_t i = 0; i < n; i++)
		a[i] = v + (long)(i & 7);
}

int main(void)
{
	size_t n = ARRAY_BYTES / sizeof(long);
	long *a = malloc(ARRAY_BYTES), *b = malloc(ARRAY_BYTES);
	struct timeval t0, t1;

	if (!a || !b)
		return 1;
	pin_self();
	fill(a, n, 0xaa);
	fill(b, n, 0xbb);
	gettimeofday(&t0, NULL);
	for (int rep = 0; rep < COPIES; rep++) {
		memcpy(b, a, ARRAY_BYTES);
		a[rep] = b[rep + 1];
	}
	gettimeofday(&t1, NULL);
	uint64_t ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)(t1.tv_usec - t0.tv_usec) * 1000u;
	say("fill_once", COPIES * (uint64_t)n, ns, (uint64_t)b[n / 2]);
	return 0;
}
