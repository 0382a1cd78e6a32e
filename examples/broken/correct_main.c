/* SPDX-License-Identifier: MIT */
/* Correct, all in main: pinned (to another CPU: one move at startup), calloc'd memory written by a loop before the clock starts, then a random chase. */
#include "broken.h"

int main(void)
{
	size_t pages = REGION_BYTES / PAGE;
	char *buf = calloc(1, REGION_BYTES);
	uint32_t *order = page_order(pages, 13);
	uint64_t n = 2000000;

	pin_other();
	/* The chain, in main: page order[i] points to page order[i + 1]; every page is written here, untimed. */
	for (size_t i = 0; i < pages; i++) {
		size_t from = order[i], to = order[(i + 1) % pages];
		*(void **)(buf + from * PAGE + (from % 64) * 64) = buf + to * PAGE + (to % 64) * 64;
	}
	void *volatile *p = (void *volatile *)(buf + (size_t)order[0] * PAGE + (order[0] % 64) * 64);
	free(order);
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < n; i++)
		p = (void *volatile *)*p;
	say("correct_main", n, now_ns() - t0, (uintptr_t)p);
	return 0;
}
