/* SPDX-License-Identifier: MIT */
/*
 * A command whose clock reads are in a thread other than the first, for the clock probes of tlbprof run: it starts
 * argv[1] idle threads, then a worker that spins 150 ms (so that tlbprof has seen it start), then reads
 * CLOCK_MONOTONIC argv[2] times through libc's clock_gettime, 20 us of spinning apart: the hot thread. Exits 3
 * when a thread cannot be created (an inherited uprobe event fails every clone with EFAULT). With argv[3], that
 * many workers run one after the other; with argv[4] "main-exits", the first thread starts one worker and leaves
 * with pthread_exit.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile int done;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC by the system call itself: libc's clock_gettime carries the probe, whatever the clock. */
static uint64_t raw_ns(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Spin for ns, reading no clock through libc: user-space work between the system calls that read the clock, so
 * that the worker's own code holds its samples. Spinning on the system call alone put them in the kernel, and the
 * hot function (a few samples of its own code) was then the idle threads' loop in 1 run of 20.
 */
static void spin(uint64_t ns)
{
	uint64_t t0 = raw_ns();
	volatile uint64_t sink = 0;

	do {
		for (unsigned i = 0; i < 2000; i++)
			sink += i;
	} while (raw_ns() - t0 < ns);
	(void)sink;	/* clang 14 calls a volatile only written "set but not used" */
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
	size_t bytes = 4u << 20;
	volatile char *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	/* A 4 MiB region of its own, written: the watch's smaps polls must see it, whoever's thread is alive. */
	if (buf == MAP_FAILED)
		_exit(3);
	for (size_t i = 0; i < bytes; i += 4096)
		buf[i] = 1;
	spin(150000000);	/* 150 ms: tlbprof has seen it start */
	for (long i = 0; i < reads; i++) {
		sum += now_ns();
		spin(20000);
	}
	return (void *)(uintptr_t)(sum & 1);
}

int main(int argc, char **argv)
{
	pthread_t t[64], w;
	long idle_threads = argc > 1 ? strtol(argv[1], NULL, 10) : 0, reads = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	long workers = argc > 3 ? strtol(argv[3], NULL, 10) : 1;

	bool main_exits = argc > 4 && strcmp(argv[4], "main-exits") == 0;

	if (argc < 3 || argc > 5 || idle_threads < 0 || idle_threads > 64 || reads < 0 || workers < 1)
		return 2;
	/* main-exits: the first thread leaves with pthread_exit while one worker runs (the process lives on). */
	if (main_exits) {
		if (pthread_create(&w, NULL, worker, (void *)(intptr_t)reads) != 0)
			return 3;
		pthread_exit(NULL);
	}
	for (long i = 0; i < idle_threads; i++)
		if (pthread_create(&t[i], NULL, idle, NULL) != 0)
			return 3;
	/* argv[3] workers, one after the other: never more than one alive. */
	for (long i = 0; i < workers; i++) {
		if (pthread_create(&w, NULL, worker, (void *)(intptr_t)reads) != 0)
			return 3;
		pthread_join(w, NULL);
	}
	done = 1;
	for (long i = 0; i < idle_threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
