/* SPDX-License-Identifier: MIT */
/*
 * A command whose clock reads are in a thread other than the first, for the clock probes of tlbprof run: it starts
 * argv[1] idle threads, then a worker that spins 0.1 s or more (so that tlbprof has seen it start), then reads
 * CLOCK_MONOTONIC argv[2] times through libc's clock_gettime, some 20 us of spinning apart: the hot thread. Exits 3
 * when a thread cannot be created (an inherited uprobe event fails every clone with EFAULT).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile int done;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spin for about n iterations, with no clock read (libc's clock_gettime carries the probe, whatever the clock). */
static void spin(uint64_t n)
{
	for (volatile uint64_t i = 0; i < n; i++)
		;
}

static void *idle(void *arg)
{
	(void)arg;
	while (!done) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void *worker(void *arg)
{
	long reads = (long)(intptr_t)arg;
	uint64_t sum = 0;

	spin(100000000);	/* 0.1-0.3 s */
	for (long i = 0; i < reads; i++) {
		sum += now_ns();
		spin(20000);	/* some 10-30 us */
	}
	return (void *)(uintptr_t)(sum & 1);
}

int main(int argc, char **argv)
{
	pthread_t t[64], w;
	long idle_threads = argc > 1 ? strtol(argv[1], NULL, 10) : 0, reads = argc > 2 ? strtol(argv[2], NULL, 10) : 0;

	if (argc != 3 || idle_threads < 0 || idle_threads > 64 || reads < 0)
		return 2;
	for (long i = 0; i < idle_threads; i++)
		if (pthread_create(&t[i], NULL, idle, NULL) != 0)
			return 3;
	if (pthread_create(&w, NULL, worker, (void *)(intptr_t)reads) != 0)
		return 3;
	pthread_join(w, NULL);
	done = 1;
	for (long i = 0; i < idle_threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
