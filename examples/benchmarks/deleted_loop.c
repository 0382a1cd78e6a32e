/* SPDX-License-Identifier: MIT */
/* Trap: the chase's result is never used, so an optimising compiler deletes the loop and times nothing. */
#include "bench.h"

static volatile uint64_t progress;

int main(void)
{
	size_t bytes = 64u << 20, stride = 4096;
	void *base = bench_region(bytes, 0);
	void **start = bench_chain(base, stride, 0, bytes / stride, 42);
	struct tlbprof_phase ph = TLBPROF_PHASE_INIT;
	uint64_t rounds = 200000, per_round = 100;

	ph.accesses = rounds * per_round;
	ph.region = base;
	ph.region_bytes = bytes;
	ph.page = "4k";
	ph.chain = start;
	ph.slots = bytes / stride;
	for (int rep = 0; rep < 5; rep++) {
		tlbprof_phase_begin("chase4k", &ph);
		for (uint64_t r = 0; r < rounds; r++) {
			void **p = start;
			for (uint64_t i = 0; i < per_round; i++)	/* the bug: p is dead after the loop */
				p = (void **)*p;
			progress = progress + 1;	/* what survives: a progress counter */
		}
		tlbprof_phase_end(0, 0);
	}
	return 0;
}
