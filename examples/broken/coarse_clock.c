/* SPDX-License-Identifier: MIT */
/*
 * Trap: a coarse clock. Each round of the chase lasts about a millisecond, and is timed with
 * CLOCK_MONOTONIC_COARSE, which moves once per kernel tick (4 ms at HZ=250): most rounds read 0 ns, some a
 * whole tick, and the median is either.
 */
#include "broken.h"

static inline uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(void)
{
	char *buf = malloc(REGION_BYTES);
	uint64_t n = 20000, total = 0, rounds = 100;

	pin_self();
	madvise(buf, REGION_BYTES, MADV_NOHUGEPAGE);
	void **p = build_chain(buf, REGION_BYTES / PAGE, 11);
	p = chase(p, n);
	for (uint64_t r = 0; r < rounds; r++) {
		uint64_t t0 = coarse_ns();
		p = chase(p, n);
		total += coarse_ns() - t0;
	}
	say("coarse_clock", n * rounds, total, (uintptr_t)p);
	return 0;
}
