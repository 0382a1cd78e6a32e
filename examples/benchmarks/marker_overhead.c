/* SPDX-License-Identifier: MIT */
/*
 * Not a trap: how long one marker call takes under tlbprof run (the round
 * trip to tlbprof and back), median µs. With CTL and ACK FIFO paths after N,
 * the same with perf stat's control protocol instead ("enable", "disable",
 * each answered "ack\n\0"), under perf stat --control fifo:CTL,ACK or
 * tlbprof run --control fifo:CTL,ACK.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/*
 * The clock straight from the vDSO: tlbprof run traces calls of libc's
 * clock_gettime (a uprobe, a trap each, for its first few thousand calls),
 * and that trap is the watch's cost, not the marker's. Without a vDSO
 * symbol, libc's.
 */
static int (*vdso_clock_gettime)(clockid_t, struct timespec *);

static double now_us(void)
{
	struct timespec ts;
	if (!vdso_clock_gettime || vdso_clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One perf-control command and its acknowledgement (5 bytes: "ack\n" and its NUL). 0, or -1. */
static int perf_command(int ctl, int ack, const char *cmd)
{
	char reply[5];
	size_t got = 0;

	if (write(ctl, cmd, strlen(cmd)) != (ssize_t)strlen(cmd))
		return -1;
	while (got < sizeof(reply)) {
		ssize_t r = read(ack, reply + got, sizeof(reply) - got);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return strncmp(reply, "ack\n", 4) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	double *begin = calloc((size_t)n, sizeof(double)), *end = calloc((size_t)n, sizeof(double));

	if (n < 1 || !begin || !end)
		return 2;
	void *vdso = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (vdso)
		*(void **)&vdso_clock_gettime = dlsym(vdso, "__vdso_clock_gettime");
	int ctl = -1, ack = -1;
	if (argc > 3) {
		ctl = open(argv[2], O_WRONLY | O_CLOEXEC);
		ack = open(argv[3], O_RDONLY | O_CLOEXEC);
		if (ctl < 0 || ack < 0) {
			perror("control FIFOs");
			return 2;
		}
	} else if (!tlbprof_marker_active()) {
		fprintf(stderr, "not under tlbprof run: the calls are no-ops\n");
	}
	for (int i = 0; i < n; i++) {
		double t0 = now_us();
		if (ctl >= 0 ? perf_command(ctl, ack, "enable\n") : tlbprof_phase_begin("round_trip", NULL))
			return 1;
		double t1 = now_us();
		if (ctl >= 0 ? perf_command(ctl, ack, "disable\n") : tlbprof_phase_end(0, 0))
			return 1;
		double t2 = now_us();
		begin[i] = t1 - t0;
		end[i] = t2 - t1;
	}
	qsort(begin, (size_t)n, sizeof(double), compare);
	qsort(end, (size_t)n, sizeof(double), compare);
	/* Built against an older header (examples/benchmarks/meson.build's fifo build), the channel is the FIFOs. */
#ifdef TLBPROF_MARKER_ENV_SHM
	const char *channel = tlbprof_marker_channel();
#else
	const char *channel = tlbprof_marker_active() ? "fifo" : "none";
#endif
	if (ctl >= 0)
		channel = "perf-control";
	printf("{\"channel\": \"%s\", \"calls\": %d, \"begin_us_median\": %.2f, \"end_us_median\": %.2f, \"begin_us_p90\": %.2f, "
	       "\"end_us_p90\": %.2f}\n", channel, n, begin[n / 2], end[n / 2], begin[n * 9 / 10], end[n * 9 / 10]);
	free(begin);
	free(end);
	return 0;
}
