/* SPDX-License-Identifier: MIT */
/*
 * Broken: a random chase timed in ten reps by the main thread, pinned to its CPU, with two worker threads that chase
 * the same chain pinned to that same CPU (as one affinity mask handed to every thread does: taskset -c 0 on a
 * threaded program, or more OpenMP threads than places). The other CPUs stand idle, and each rep's time holds the
 * workers' turns on the main thread's CPU: about three times its own accesses.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "broken.h"

#define WORKERS 2

static void **start;
static atomic_int stop;
static cpu_set_t mask;

static void *worker(void *arg)
{
	void **p = start;

	(void)arg;
	if (sched_setaffinity(0, sizeof(mask), &mask) != 0)
		perror("sched_setaffinity");
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		p = chase(p, 20000);
	return (void *)p;
}

int main(void)
{
	uint64_t n = 100000, best = UINT64_MAX;
	char *buf = malloc(REGION_BYTES);
	pthread_t t[WORKERS];

	pin_self();
	if (!buf || sched_getaffinity(0, sizeof(mask), &mask) != 0)
		return 1;
	madvise(buf, REGION_BYTES, MADV_NOHUGEPAGE);
	memset(buf, 1, REGION_BYTES);
	start = build_chain(buf, REGION_BYTES / PAGE, 23);
	for (int i = 0; i < WORKERS; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 1;
	void **p = chase(start, 3 * n);	/* warm-up */
	for (int rep = 0; rep < 10; rep++) {
		uint64_t t0 = now_ns();
		p = chase(p, n);
		uint64_t ns = now_ns() - t0;
		best = ns < best ? ns : best;
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	say("oversubscribed", n, best, (uintptr_t)p);
	return 0;
}
