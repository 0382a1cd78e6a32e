/* SPDX-License-Identifier: MIT */
/* The correct benchmark: a random single-cycle chase on 4 KiB and 2 MiB pages, each phase marked and repeated. */
#include "bench.h"

int main(int argc, char **argv)
{
	size_t bytes = (argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : 64) << 20, stride = 4096;
	uint64_t accesses = 1000000;
	const char *pages[] = { "4k", "2m" };

	for (int h = 0; h < 2; h++) {
		void *base = bench_region(bytes, h);
		void **start = bench_chain(base, stride, 0, bytes / stride, 42);
		struct tlbprof_phase ph = TLBPROF_PHASE_INIT;
		char name[32];

		/* Warm-up on the same path, a whole timed pass long: after a fresh allocation a tenth of one
		 * left the first pass 10-50 % slower here (a chase of 64 MiB, no tlbprof attached). */
		bench_chase(start, accesses);
		ph.accesses = accesses;
		ph.region = base;
		ph.region_bytes = bytes;
		ph.page = pages[h];
		ph.chain = start;
		ph.slots = bytes / stride;
		snprintf(name, sizeof(name), "chase%s", pages[h]);
		for (int rep = 0; rep < 5; rep++) {
			if (tlbprof_phase_begin(name, &ph) != 0)
				perror("tlbprof_phase_begin");
			bench_chase(start, accesses);
			if (tlbprof_phase_end(0, 0) != 0)
				perror("tlbprof_phase_end");
		}
	}
	return 0;
}
