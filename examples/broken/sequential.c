/* SPDX-License-Identifier: MIT */
/* Trap: one access per page in ascending page order: prefetchers and cached page-table lines hide the walks. */
#include "broken.h"

int main(void)
{
	size_t pages = REGION_BYTES / PAGE;
	char *buf = malloc(REGION_BYTES);
	uint64_t sum = 0;

	pin_self();
	uint64_t t0 = now_ns();
	for (int rep = 0; rep < 200; rep++)
		for (size_t i = 0; i < pages; i++)
			sum += ++buf[i * PAGE + (i % 64) * 64];
	say("sequential", 200 * (uint64_t)pages, now_ns() - t0, sum);
	return 0;
}
