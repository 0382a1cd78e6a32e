/* SPDX-License-Identifier: MIT */
/*
 * Trap: a clock read around every access. Each load of the chase is timed on its own, so every result holds
 * two clock reads (tens of ns each, and ordered around the load) besides the load it means to measure.
 */
#include "broken.h"

__attribute__((noinline)) static void *timed_chase(void **p, uint64_t n, uint64_t *total)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t t0 = now_ns();
		p = (void **)*p;
		*total += now_ns() - t0;
	}
	return p;
}

int main(void)
{
	char *buf = malloc(REGION_BYTES);
	uint64_t n = 2000000, total = 0;

	pin_self();
	madvise(buf, REGION_BYTES, MADV_NOHUGEPAGE);
	void **p = build_chain(buf, REGION_BYTES / PAGE, 11);
	p = chase(p, n / 10);
	p = timed_chase(p, n, &total);
	say("clock_per_access", n, total, (uintptr_t)p);
	return 0;
}
