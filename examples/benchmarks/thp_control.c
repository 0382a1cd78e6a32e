/* SPDX-License-Identifier: MIT */
/* Trap: the "4k" control comes out of an arena advised for huge pages, so THP silently backs it with 2 MiB pages. */
#include "bench.h"

int main(void)
{
	size_t bytes = 64u << 20, stride = 4096;
	/* The bug: one arena for everything, advised MADV_HUGEPAGE (as with THP "always"), the control included. */
	void *base = bench_region(bytes, 1);
	void **start = bench_chain(base, stride, 0, bytes / stride, 42);
	struct tlbprof_phase ph = TLBPROF_PHASE_INIT;

	ph.accesses = 1000000;
	ph.region = base;
	ph.region_bytes = bytes;
	ph.page = "4k";	/* what the benchmark believes */
	ph.chain = start;
	ph.slots = bytes / stride;
	bench_chase(start, ph.accesses / 10);
	for (int rep = 0; rep < 5; rep++) {
		tlbprof_phase_begin("chase4k", &ph);
		bench_chase(start, ph.accesses);
		tlbprof_phase_end(0, 0);
	}
	return 0;
}
