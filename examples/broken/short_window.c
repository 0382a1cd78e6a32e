/* SPDX-License-Identifier: MIT */
/*
 * Trap: a window too short for its clock. clock() counts CPU time in microseconds (CLOCKS_PER_SEC is
 * 10^6), and each round here times 16000 accesses of a chain on 16 pages, some 20 us: a reading is off by up
 * to a whole tick, 5 % of the round, and the rounding does not average out, since every round starts on the
 * same kind of boundary. The chain stays in the L1 cache and the L1 dTLB, so a host short of memory does not
 * stretch the rounds past 100 ticks (a chain on 8192 pages read 100-185 us under CI's load). 200 rounds, not 40: the
 * check reads the 90th percentile of the windows, and with 40 a stall of the host's inside 8 of them (in 1 run of
 * the suite's 10, once in several dry runs) put it at 109 us; now it takes 40 stalled windows.
 */
#include "broken.h"

int main(void)
{
	char *buf = malloc(REGION_BYTES);
	uint64_t n = 16000, rounds = 200;
	clock_t total = 0;

	pin_self();
	madvise(buf, REGION_BYTES, MADV_NOHUGEPAGE);
	void **p = build_chain(buf, 16, 11);
	p = chase(p, 30000000);	/* some 35 ms untimed: enough samples to find the loop and see the pinning */
	clock_t warm = clock();
	p = chase(p, n);
	total += clock() - warm;
	total = 0;
	for (uint64_t r = 0; r < rounds; r++) {
		clock_t t0 = clock();
		p = chase(p, n);
		total += clock() - t0;
	}
	say("short_window", n * rounds, (uint64_t)total * (1000000000u / CLOCKS_PER_SEC), (uintptr_t)p);
	return 0;
}
