/* SPDX-License-Identifier: MIT */
/*
 * Trap: a clock read around every access, in a worker thread. The same trap as clock_per_access.c, in the shape
 * many benchmarks take: main starts a thread that pins itself and runs the timed loop, then joins it. The hot
 * thread is not the first one, so its clock reads are seen only if the probes follow the threads the process
 * starts; a uprobe traps every thread of the process all the same, traced or not.
 */
#include <pthread.h>

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

static void *worker(void *arg)
{
	char *buf = arg;
	uint64_t n = 2000000, total = 0;

	pin_self();
	madvise(buf, REGION_BYTES, MADV_NOHUGEPAGE);
	void **p = build_chain(buf, REGION_BYTES / PAGE, 11);
	p = chase(p, n / 10);
	p = timed_chase(p, n, &total);
	say("clock_per_access_thread", n, total, (uintptr_t)p);
	return NULL;
}

int main(void)
{
	char *buf = malloc(REGION_BYTES);
	pthread_t t;

	if (!buf || pthread_create(&t, NULL, worker, buf) != 0) {
		perror("clock_per_access_thread");
		return 1;
	}
	pthread_join(t, NULL);
	return 0;
}
