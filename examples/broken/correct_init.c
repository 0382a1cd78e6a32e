/* SPDX-License-Identifier: MIT */
/* Correct: pinned at startup, every page written by an initialisation routine, then a random single-cycle chase. */
#include "broken.h"

int main(void)
{
	char *buf = malloc(REGION_BYTES);
	uint64_t n = 2000000;

	pin_self();
	madvise(buf, REGION_BYTES, MADV_NOHUGEPAGE);
	void **start = build_chain(buf, REGION_BYTES / PAGE, 11);
	chase(start, n / 10);
	uint64_t t0 = now_ns();
	void *end = chase(start, n);
	say("correct_init", n, now_ns() - t0, (uintptr_t)end);
	return 0;
}
