/* SPDX-License-Identifier: MIT */
/* Trap: the timed loop is the first touch of malloc'd memory, so its first pass times page faults, not the TLB. */
#include "broken.h"

/*
 * Passes over the pages: the first takes every fault. With 100, the faults held 75-88 % of the CPU time here and the
 * loop's own code 12-24 % of some 150 samples, under the 20 that locate a loop in 1 run of 20 (the hot loop then
 * not found, and the trap not seen); with 400 it holds a third of some 200, 60 or more.
 */
#define REPS 400

int main(void)
{
	size_t pages = REGION_BYTES / PAGE;
	char *buf = malloc(REGION_BYTES);
	uint32_t *order = page_order(pages, 1);
	uint64_t sum = 0;

	pin_self();
	uint64_t t0 = now_ns();
	for (int rep = 0; rep < REPS; rep++)
		for (size_t i = 0; i < pages; i++)
			sum += ++buf[(size_t)order[i] * PAGE + (order[i] % 64) * 64];
	say("first_touch", REPS * (uint64_t)pages, now_ns() - t0, sum);
	return 0;
}
