/* SPDX-License-Identifier: MIT */
/*
 * Trap: a clock read around every access. Each load of the chase is timed on its own, so every result holds
 * two clock reads (tens of ns each, and ordered around the load) besides the load it means to measure.
 *
 * Built with -DIN_THREAD (broken-clock_per_access_thread), the same trap in the shape many benchmarks take: main
 * starts a thread that pins itself and runs the timed loop, then joins it. The hot thread is then not the first
 * one, so its reads are seen only if the probes follow the threads the process starts (a uprobe traps every thread
 * of the process all the same, traced or not).
 */
#include "broken.h"

#ifdef IN_THREAD
#include <pthread.h>
#endif

__attribute__((noinline)) static void *timed_chase(void **p, uint64_t n, uint64_t *total)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t t0 = now_ns();
		p = (void **)*p;
		*total += now_ns() - t0;
	}
	return p;
}

static void *trap(void *arg)
{
	char *buf = malloc(REGION_BYTES);
	uint64_t n = 2000000, total = 0;

	(void)arg;
	pin_self();
	madvise(buf, REGION_BYTES, MADV_NOHUGEPAGE);
	void **p = build_chain(buf, REGION_BYTES / PAGE, 11);
	p = chase(p, n / 10);
	p = timed_chase(p, n, &total);
	say("clock_per_access", n, total, (uintptr_t)p);
	return NULL;
}

int main(void)
{
#ifdef IN_THREAD
	pthread_t t;

	if (pthread_create(&t, NULL, trap, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
#else
	trap(NULL);
#endif
	return 0;
}
