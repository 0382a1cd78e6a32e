/* SPDX-License-Identifier: MIT */
/* Trap: every access at the same page offset: all lines fall into 1/64 of the cache sets (cache-set aliasing). */
#include "broken.h"

int main(void)
{
	size_t pages = REGION_BYTES / PAGE;
	char *buf = malloc(REGION_BYTES);
	uint32_t *order = page_order(pages, 3);
	uint64_t sum = 0;

	pin_self();
	uint64_t t0 = now_ns();
	for (int rep = 0; rep < 100; rep++)
		for (size_t i = 0; i < pages; i++)
			sum += ++buf[(size_t)order[i] * PAGE];
	say("same_offset", 100 * (uint64_t)pages, now_ns() - t0, sum);
	return 0;
}
