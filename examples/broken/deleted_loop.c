/* SPDX-License-Identifier: MIT */
/*
 * Trap: the timed loop is deleted at -O2. The chase's last pointer is never used, so the compiler drops the
 * whole loop: the two clock reads are back to back, and the program prints a few ns "per access" for work
 * it never did. Pinned, written first, one slot per page in a random cycle: correct in every other way.
 */
#include "broken.h"

int main(void)
{
	char *buf = malloc(REGION_BYTES);
	uint64_t n = 2000000;

	pin_self();
	madvise(buf, REGION_BYTES, MADV_NOHUGEPAGE);
	void **p = build_chain(buf, REGION_BYTES / PAGE, 11);
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < n; i++)
		p = (void **)*p;
	uint64_t ns = now_ns() - t0;
	printf("deleted_loop: %.2f ns per access\n", (double)ns / (double)n);
	return 0;
}
