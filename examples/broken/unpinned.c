/* SPDX-License-Identifier: MIT */
/* Trap: a correct chase that never pins itself: the scheduler may move it mid-measurement, caches and TLB cold. */
#include "broken.h"

int main(void)
{
	char *buf = malloc(REGION_BYTES);
	void **start = build_chain(buf, REGION_BYTES / PAGE, 5);
	uint64_t n = 2000000;

	start = chase(start, n / 10);	/* warm-up; its result kept, or -O2 deletes it */
	uint64_t t0 = now_ns();
	void *end = chase(start, n);
	say("unpinned", n, now_ns() - t0, (uintptr_t)end);
	return 0;
}
