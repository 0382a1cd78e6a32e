/* SPDX-License-Identifier: MIT */
/*
 * Trap: the first timed rep is the first touch of malloc'd memory, in a program that also reads the clock at its
 * start and at its end for the total it prints, with its setup (a permutation shuffled 500 times, in main) between
 * the start's read and the first rep's. Anchored at the start's read, that clock's reads pair as a timer's would:
 * the setup in the first pair, the reps in the gaps, and every other pair the instant between a rep's stop and the
 * next start.
 */
#include "broken.h"

int main(void)
{
	uint64_t start = now_ns(), s = 5, sum = 0, best = UINT64_MAX;
	size_t pages = REGION_BYTES / PAGE;
	uint32_t *perm = malloc(pages * sizeof(*perm));

	pin_self();
	for (size_t i = 0; i < pages; i++)
		perm[i] = (uint32_t)i;
	for (int round = 0; round < 500; round++)	/* the setup, in the timed function: most of its CPU time */
		for (size_t i = pages - 1; i > 0; i--) {
			size_t j = rnd(&s) % (i + 1);
			uint32_t t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
	char *buf = malloc(REGION_BYTES);
	for (int rep = 0; rep < 10; rep++) {
		uint64_t t0 = now_ns();
		for (size_t i = 0; i < pages; i++)
			sum += ++buf[(size_t)perm[i] * PAGE + (perm[i] % 64) * 64];
		uint64_t ns = now_ns() - t0;
		best = ns < best ? ns : best;
	}
	say("first_touch_total", pages, best, sum);
	printf("first_touch_total: %.3f s in all\n", (double)(now_ns() - start) / 1e9);
	free(perm);
	return 0;
}
