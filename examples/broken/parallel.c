/* SPDX-License-Identifier: MIT */
/*
 * Correct: a STREAM-style triad in OpenMP, each thread pinned to a CPU of its own, every page written by the
 * threads' parallel initialisation, then 10 timed passes with omp_get_wtime() on the master thread, which runs its
 * share of each pass. The threads run the hot loop alike; the master alone reads the clock.
 * Built -DCPU_TIME (broken-cpu_time_parallel): timed with clock(), the CPU time of every thread of the process, so
 * each pass reads the threads' time summed, about twice its elapsed time on two threads.
 */
#include <omp.h>
#include <time.h>

#include "broken.h"

#ifdef CPU_TIME
#define NOW() ((double)clock() / CLOCKS_PER_SEC)
#else
#define NOW() omp_get_wtime()
#endif

#define ELEMENTS (8u << 20)	/* 64 MiB per array */

int main(void)
{
	double *a = malloc(ELEMENTS * sizeof(double)), *b = malloc(ELEMENTS * sizeof(double));
	double *c = malloc(ELEMENTS * sizeof(double)), best = 1e30;

	if (!a || !b || !c)
		return 1;
#pragma omp parallel
	{
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(omp_get_thread_num() % CPU_SETSIZE, &set);
		(void)sched_setaffinity(0, sizeof(set), &set);
	}
#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < ELEMENTS; i++) {
		a[i] = 1;
		b[i] = 2;
		c[i] = 0;
	}
	for (int k = 0; k < 10; k++) {
		double t = NOW();
#pragma omp parallel for schedule(static)
		for (size_t i = 0; i < ELEMENTS; i++)
			c[i] = a[i] + 3.0 * b[i];
		t = NOW() - t;
		best = t < best ? t : best;
	}
	printf("parallel: triad %.0f MB/s (%g)\n", 3.0 * sizeof(double) * ELEMENTS / best / 1e6, c[ELEMENTS / 2]);
	return 0;
}
