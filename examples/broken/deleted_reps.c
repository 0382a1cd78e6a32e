/* SPDX-License-Identifier: MIT */
/*
 * Trap: the timed loop is deleted at -O2, in ten reps that each write a fresh chain before their start: the chase's
 * last pointer is never used, so each rep's two reads are back to back, with the chain's writing between a rep's
 * stop and the next start. With one clock read at each start and stop, those reads look the same as a total's reads
 * around back-to-back timed reps: tlbprof can say it could not tell, and why, but not that the loop is gone.
 */
#include "broken.h"

int main(void)
{
	size_t pages = REGION_BYTES / PAGE;
	char *buf = malloc(REGION_BYTES);
	uint64_t total = 0, seed = 3;
	uint32_t *order = page_order(pages, 7);

	pin_self();
	madvise(buf, REGION_BYTES, MADV_NOHUGEPAGE);
	for (int rep = 0; rep < 10; rep++) {
		void **p = write_chain(buf, order, pages, &seed);	/* a fresh chain before each rep */
		uint64_t t0 = now_ns();
		for (size_t i = 0; i < 4 * pages; i++)
			p = (void **)*p;
		total += now_ns() - t0;
	}
	printf("deleted_reps: %.2f ns per access\n", (double)total / (40.0 * (double)pages));
	free(order);
	return 0;
}
