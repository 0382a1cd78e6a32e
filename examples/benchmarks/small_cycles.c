/* SPDX-License-Identifier: MIT */
/* Trap: the chain is 64 separate cycles (one per block), so the chase from slot 0 walks 1/64 of the region. */
#include "bench.h"

int main(void)
{
	size_t bytes = 64u << 20, stride = 4096, n = bytes / stride, blocks = 64;
	void *base = bench_region(bytes, 0);
	struct tlbprof_phase ph = TLBPROF_PHASE_INIT;
	void **start = NULL;

	/* The bug: one cycle per block (as if built for 64 threads), chased from one block only. */
	for (size_t b = 0; b < blocks; b++) {
		void **s = bench_chain(base, stride, b * (n / blocks), n / blocks, 7 + b);
		if (!start)
			start = s;
	}
	ph.accesses = 1000000;
	ph.region = base;
	ph.region_bytes = bytes;
	ph.page = "4k";
	ph.chain = start;
	ph.slots = n;
	bench_chase(start, ph.accesses / 10);
	for (int rep = 0; rep < 5; rep++) {
		tlbprof_phase_begin("chase4k", &ph);
		bench_chase(start, ph.accesses);
		tlbprof_phase_end(0, 0);
	}
	return 0;
}
