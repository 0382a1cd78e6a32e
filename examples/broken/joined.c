/* SPDX-License-Identifier: MIT */
/*
 * Correct: a STREAM-style triad split over two POSIX threads, each started on a CPU of its own, every page written
 * by the main thread before the timing (with non-zero values: GCC turns a malloc whose every byte is then set to
 * zero into calloc, whose fresh pages the workers would touch first). The workers wait at a barrier; the main thread
 * reads the clock, releases them, joins them and reads it again: it times their loop and runs none of it, as many
 * pthread benchmarks do.
 */
#include <pthread.h>

#include "broken.h"

#define ELEMENTS (8u << 20)	/* 64 MiB per array */
#define WORKERS 2

static double *a, *b, *c;
static pthread_barrier_t go;

static void *triad(void *arg)
{
	size_t k = (size_t)arg, lo = k * (ELEMENTS / WORKERS), hi = lo + ELEMENTS / WORKERS;

	pthread_barrier_wait(&go);
	for (int rep = 0; rep < 20; rep++)
		for (size_t i = lo; i < hi; i++)
			c[i] = a[i] + 3.0 * b[i];
	return NULL;
}

int main(void)
{
	pthread_t t[WORKERS];

	a = malloc(ELEMENTS * sizeof(double));
	b = malloc(ELEMENTS * sizeof(double));
	c = malloc(ELEMENTS * sizeof(double));
	if (!a || !b || !c || pthread_barrier_init(&go, NULL, WORKERS + 1) != 0)
		return 1;
	pin_self();
	for (size_t i = 0; i < ELEMENTS; i++) {
		a[i] = 1;
		b[i] = 2;
		c[i] = 1;
	}
	for (size_t k = 0; k < WORKERS; k++) {
		pthread_attr_t attr;
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET((int)k % CPU_SETSIZE, &set);
		/* Started before the timing: glibc moves a new thread to its CPU, a move that must not be timed. */
		if (pthread_attr_init(&attr) != 0 || pthread_attr_setaffinity_np(&attr, sizeof(set), &set) != 0 ||
		    pthread_create(&t[k], &attr, triad, (void *)k) != 0)
			return 1;
		pthread_attr_destroy(&attr);
	}
	uint64_t t0 = now_ns();
	pthread_barrier_wait(&go);
	for (size_t k = 0; k < WORKERS; k++)
		pthread_join(t[k], NULL);
	uint64_t ns = now_ns() - t0;
	printf("joined: triad %.0f MB/s (%g)\n", 20 * 3.0 * sizeof(double) * ELEMENTS / (double)ns * 1e3, c[ELEMENTS / 2]);
	return 0;
}
