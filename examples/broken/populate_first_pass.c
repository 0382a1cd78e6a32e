/* SPDX-License-Identifier: MIT */
/*
 * Trap where the hypervisor maps pages on their first use (shadow paging: PVM, KVM without EPT/NPT): the region is
 * populated by the kernel before the timing (MADV_POPULATE_WRITE, else mlock), so it takes no page fault, and a
 * bare-metal or EPT machine times what it should. Under shadow paging the timed loop is still the first write from
 * user space to each page, and each traps to the hypervisor: 5 us a page on a PVM guest here, 41 ms over the 8192
 * pages, which no fault shows. Natively the same first pass is a TLB miss a page. Passes as first_touch.c makes
 * them, so that the loop holds samples enough to be found.
 */
#include <sys/mman.h>

#include "broken.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define REPS 400

int main(void)
{
	size_t pages = REGION_BYTES / PAGE;
	char *buf = mmap(NULL, REGION_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t *order = page_order(pages, 1);
	uint64_t sum = 0;

	if (buf == MAP_FAILED)
		return 1;
	pin_self();
	madvise(buf, REGION_BYTES, MADV_NOHUGEPAGE);
	if (madvise(buf, REGION_BYTES, MADV_POPULATE_WRITE) != 0 && (mlock(buf, REGION_BYTES) != 0 ||
								     munlock(buf, REGION_BYTES) != 0))
		perror("populate");
	uint64_t t0 = now_ns();
	for (int rep = 0; rep < REPS; rep++)
		for (size_t i = 0; i < pages; i++)
			sum += ++buf[(size_t)order[i] * PAGE + (order[i] % 64) * 64];
	say("populate_first_pass", REPS * (uint64_t)pages, now_ns() - t0, sum);
	return 0;
}
