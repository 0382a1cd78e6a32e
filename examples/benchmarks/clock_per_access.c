/* SPDX-License-Identifier: MIT */
/* Trap: every access is timed on its own, so each interval is the size of a clock read. */
#include <time.h>

#include "bench.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(void)
{
	size_t bytes = 64u << 20, stride = 4096;
	void *base = bench_region(bytes, 0);
	void **start = bench_chain(base, stride, 0, bytes / stride, 42);
	struct tlbprof_phase ph = TLBPROF_PHASE_INIT;
	uint64_t n = 200000, total = 0;
	void **p = start;

	ph.accesses = n;
	ph.region = base;
	ph.region_bytes = bytes;
	ph.page = "4k";
	ph.chain = start;
	ph.slots = bytes / stride;
	for (int rep = 0; rep < 5; rep++) {
		tlbprof_phase_begin("chase4k", &ph);
		for (uint64_t i = 0; i < n; i++) {
			uint64_t t0 = now_ns();	/* the bug: a clock read around each access */
			p = (void **)*p;
			total += now_ns() - t0;
		}
		tlbprof_phase_end(0, n);	/* it timed n separate intervals */
	}
	bench_sink = p;
	printf("%.1f ns per access (as this benchmark measures it)\n", (double)total / (5.0 * (double)n));
	return 0;
}
