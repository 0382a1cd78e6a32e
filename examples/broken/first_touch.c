/* SPDX-License-Identifier: MIT */
/* Trap: the timed loop is the first touch of malloc'd memory, so its first pass times page faults, not the TLB. */
#include "broken.h"

int main(void)
{
	size_t pages = REGION_BYTES / PAGE;
	char *buf = malloc(REGION_BYTES);
	uint32_t *order = page_order(pages, 1);
	uint64_t sum = 0;

	pin_self();
	uint64_t t0 = now_ns();
	for (int rep = 0; rep < 100; rep++)
		for (size_t i = 0; i < pages; i++)
			sum += ++buf[(size_t)order[i] * PAGE + (order[i] % 64) * 64];
	say("first_touch", 100 * (uint64_t)pages, now_ns() - t0, sum);
	return 0;
}
