/* SPDX-License-Identifier: MIT */
/*
 * Broken: ten timed reps of a random chase over memory written before any of them, but each rep settles with a
 * 10 ms sleep before it reads the clock again, so every rep's time holds a sleep beside its accesses (as a
 * benchmark that paces itself, logs and flushes, or waits on a disk inside its timer does).
 */
#include <unistd.h>

#include "broken.h"

int main(void)
{
	uint64_t n = 100000, best = UINT64_MAX;
	char *buf = malloc(REGION_BYTES);

	pin_self();
	madvise(buf, REGION_BYTES, MADV_NOHUGEPAGE);
	memset(buf, 1, REGION_BYTES);
	void **p = build_chain(buf, REGION_BYTES / PAGE, 19);
	p = chase(p, 3 * n);		/* warm-up */
	for (int rep = 0; rep < 10; rep++) {
		uint64_t t0 = now_ns();
		p = chase(p, n);
		usleep(10000);		/* the trap: a sleep inside the timed window */
		uint64_t ns = now_ns() - t0;
		best = ns < best ? ns : best;
	}
	say("sleep_in_window", n, best, (uintptr_t)p);
	return 0;
}
