/* SPDX-License-Identifier: MIT */
/* Trap: a "4 KiB" buffer on transparent huge pages (a 2 MiB-aligned buffer advised MADV_HUGEPAGE): no 4k TLB misses. */
#include "broken.h"

int main(void)
{
	size_t len = REGION_BYTES + (2u << 20);
	char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return 1;
	char *buf = (char *)(((uintptr_t)raw + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1));
	uint64_t n = 2000000;

	pin_self();
	madvise(buf, REGION_BYTES, MADV_HUGEPAGE);
	void **start = build_chain(buf, REGION_BYTES / PAGE, 9);
	start = chase(start, n / 10);	/* warm-up; its result kept, or -O2 deletes it */
	uint64_t t0 = now_ns();
	void *end = chase(start, n);
	say("4k chase", n, now_ns() - t0, (uintptr_t)end);
	return 0;
}
