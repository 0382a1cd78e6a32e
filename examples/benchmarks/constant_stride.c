/* SPDX-License-Identifier: MIT */
/* Trap: a "chase" whose next slot is always the neighbour, a constant stride the prefetcher follows. */
#include "bench.h"

int main(void)
{
	size_t bytes = 64u << 20, stride = 4096, n = bytes / stride;
	void *base = bench_region(bytes, 0);
	struct tlbprof_phase ph = TLBPROF_PHASE_INIT;

	for (size_t i = 0; i < n; i++)	/* the bug: slot i points at slot i + 1 */
		*(void **)((char *)base + i * stride) = (char *)base + ((i + 1) % n) * stride;
	ph.accesses = 1000000;
	ph.region = base;
	ph.region_bytes = bytes;
	ph.page = "4k";
	ph.chain = base;
	ph.slots = n;
	for (int rep = 0; rep < 5; rep++) {
		tlbprof_phase_begin("chase4k", &ph);
		bench_chase((void **)base, ph.accesses);
		tlbprof_phase_end(0, 0);
	}
	return 0;
}
