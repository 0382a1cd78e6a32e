/* SPDX-License-Identifier: MIT */
/*
 * A benchmark whose timed kernel is hand-written assembly, as likwid-bench's are: no CFI directives, so no
 * .eh_frame entry bounds it, and built stripped, so no symbol names it either. Timed with the time stamp counter,
 * as likwid-bench is, so no traced clock read says which faults were timed: only the hot loop's code can.
 * Correct as it is (every page written by a C initialisation routine, then a random single-cycle chase in the
 * assembly kernel); with -DFIRST_TOUCH the trap (the assembly kernel is the memory's first touch). x86-64 only.
 */
#include <x86intrin.h>

#include "broken.h"

/* p = *p, n times (n > 0); returns the last p. */
void *asm_chase(void **p, uint64_t n);
/* ++buf[order[i] * PAGE + (order[i] % 64) * 64] for i < pages (pages > 0). */
void asm_touch(char *buf, const uint32_t *order, uint64_t pages);

__asm__(".text\n"
	".p2align 6\n"
	".globl asm_chase\n"
	".hidden asm_chase\n"
	".type asm_chase, @function\n"
	"asm_chase:\n"
	"1:	mov (%rdi), %rdi\n"
	"	dec %rsi\n"
	"	jnz 1b\n"
	"	mov %rdi, %rax\n"
	"	ret\n"
	".p2align 6\n"
	".globl asm_touch\n"
	".hidden asm_touch\n"
	".type asm_touch, @function\n"
	"asm_touch:\n"
	"	xor %ecx, %ecx\n"
	"2:	mov (%rsi,%rcx,4), %eax\n"
	"	mov %rax, %r8\n"
	"	shl $12, %r8\n"
	"	and $63, %eax\n"
	"	shl $6, %eax\n"
	"	add %rax, %r8\n"
	"	incb (%rdi,%r8)\n"
	"	inc %rcx\n"
	"	cmp %rdx, %rcx\n"
	"	jb 2b\n"
	"	ret\n");

int main(void)
{
	size_t pages = REGION_BYTES / PAGE;
	char *buf = malloc(REGION_BYTES);

	if (!buf)
		return 1;
	pin_self();
	madvise(buf, REGION_BYTES, MADV_NOHUGEPAGE);
#ifdef FIRST_TOUCH
	uint32_t *order = page_order(pages, 1);
	uint64_t t0 = __rdtsc();
	for (int rep = 0; rep < 1000; rep++)
		asm_touch(buf, order, pages);
	uint64_t ticks = __rdtsc() - t0;
	printf("first_touch_asm: %.2f TSC ticks per access (%d)\n", (double)ticks / (1000.0 * (double)pages), buf[0]);
#else
	void **start = build_chain(buf, pages, 11);
	start = asm_chase(start, 200000);	/* warm-up */
	uint64_t t0 = __rdtsc();
	/*
	 * 8 M accesses, not 2 M: the C routine writing every page (stripped: sub_...) outweighed a 2 M chase in 1 run of
	 * 3 under ASan on a Zen 5 guest, whose first touches wait for the host, and was taken for the hot loop.
	 */
	void *end = asm_chase(start, 8000000);
	uint64_t ticks = __rdtsc() - t0;
	printf("correct_asm: %.2f TSC ticks per access (%d)\n", (double)ticks / 8e6, end != NULL);
#endif
	return 0;
}
