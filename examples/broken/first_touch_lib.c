/* SPDX-License-Identifier: MIT */
/*
 * Trap: the timed loop is the first touch of malloc'd memory, in a shared library (lib_kernel.c) that this launcher
 * calls, as an interpreter built --enable-shared runs its code from libpython. Its own code takes no samples.
 */
#include "broken.h"
#include "lib_kernel.h"

int main(void)
{
	size_t pages = REGION_BYTES / PAGE;
	char *buf = malloc(REGION_BYTES);
	uint32_t *order = page_order(pages, 1);

	if (!buf)
		return 1;
	pin_self();
	madvise(buf, REGION_BYTES, MADV_NOHUGEPAGE);
	uint64_t ticks = lib_kernel_touch(buf, order, pages, 1000);
	printf("first_touch_lib: %.2f TSC ticks per access (%d)\n", (double)ticks / (1000.0 * (double)pages), buf[0]);
	return 0;
}
