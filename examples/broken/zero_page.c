/* SPDX-License-Identifier: MIT */
/* Trap: memory never written: every page reads the kernel's one shared zero page, so the "working set" is 4 KiB. */
#include "broken.h"

/* A read pass "to warm up": it maps the zero page under every page and writes nothing. */
__attribute__((noinline)) static uint64_t warm(const volatile char *buf, size_t pages)
{
	uint64_t s = 0;

	for (size_t i = 0; i < pages; i++)
		s += buf[i * PAGE];
	return s;
}

__attribute__((noinline)) static uint64_t timed(const volatile char *buf, size_t pages, uint64_t n)
{
	uint64_t s = 0, seed = 7;

	for (uint64_t i = 0; i < n; i++)
		s += buf[(rnd(&seed) % pages) * PAGE + (i % 64) * 64];
	return s;
}

int main(void)
{
	size_t pages = REGION_BYTES / PAGE;
	const char *buf = calloc(1, REGION_BYTES);
	uint64_t n = 4000000;

	pin_self();
	uint64_t sum = warm(buf, pages);
	uint64_t t0 = now_ns();
	sum += timed(buf, pages, n);
	say("zero_page", n, now_ns() - t0, sum);
	return 0;
}
