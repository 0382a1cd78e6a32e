/* SPDX-License-Identifier: MIT */
/*
 * Correct: pinned at startup, every page written by an initialisation routine, then a random single-cycle chase.
 * Optional arguments: the timed accesses (default 2000000) and the pages chased (default all 8192 of the region;
 * 8 keeps the chain in L1, a steady CPU-bound loop): tools/bench runs it for about 2 s both ways.
 */
#include "broken.h"

int main(int argc, char **argv)
{
	char *buf = malloc(REGION_BYTES);
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 2000000;
	uint64_t pages = argc > 2 ? strtoull(argv[2], NULL, 0) : REGION_BYTES / PAGE;

	pin_self();
	madvise(buf, REGION_BYTES, MADV_NOHUGEPAGE);
	if (pages < 2 || pages > REGION_BYTES / PAGE)
		pages = REGION_BYTES / PAGE;
	void **start = build_chain(buf, pages, 11);
	start = chase(start, n / 10);	/* warm-up; its result kept, or -O2 deletes it */
	uint64_t t0 = now_ns();
	void *end = chase(start, n);
	say("correct_init", n, now_ns() - t0, (uintptr_t)end);
	return 0;
}
