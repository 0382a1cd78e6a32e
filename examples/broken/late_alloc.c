/* SPDX-License-Identifier: MIT */
/*
 * Correct: two chains in two arrays allocated 150 ms apart, each written whole before the timing. The kernel
 * merges the second mapping with the first (placed just below it, the same flags), so the watch first polls the
 * first array alone, not yet written, and then the merged mapping from a lower start. Taken for two regions,
 * the first one's faults on pages it never saw resident read as zero-page reads.
 */
#include "broken.h"

int main(void)
{
	size_t pages = REGION_BYTES / PAGE;
	char *a = malloc(REGION_BYTES);
	struct timespec pause = { 0, 150000000 };

	pin_self();
	nanosleep(&pause, NULL);	/* some polls of the first mapping alone */
	char *b = malloc(REGION_BYTES);
	if (!a || !b)
		return 1;
	void **pa = build_chain(a, pages, 11), **pb = build_chain(b, pages, 12);
	pa = chase(pa, 200000);
	pb = chase(pb, 200000);
	uint64_t t0 = now_ns();
	pa = chase(pa, 1000000);
	pb = chase(pb, 1000000);
	say("late_alloc", 2000000, now_ns() - t0, (uintptr_t)pa ^ (uintptr_t)pb);
	return 0;
}
