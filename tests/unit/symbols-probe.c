/* SPDX-License-Identifier: MIT */
/* A program with known source lines and an inlined function, built with gcc -O2 -g for test-symbols' frames. */

/* test-symbols finds the lines of the markers in this file (PROBE-...), so they may move. */
static volatile unsigned probe_sink;

static inline __attribute__((always_inline)) unsigned probe_inner(unsigned x)
{
	unsigned v = x;

	for (unsigned i = 0; i < x; i++)
		v = v * 2654435761u + i;	/* PROBE-INNER-LINE */
	return v;
}

unsigned probe_outer(unsigned x);

__attribute__((noinline)) unsigned probe_outer(unsigned x)
{
	unsigned r = probe_inner(x);	/* PROBE-CALL-LINE */

	probe_sink = r;
	return r;
}

#if defined(__x86_64__)
/* Hand-written assembly without CFI directives: no unwind entry bounds it, so stripped, nothing covers it. */
unsigned probe_asm(unsigned x);
__asm__(".text\n"
	".globl probe_asm\n"
	".type probe_asm, @function\n"
	"probe_asm:\n"
	"	lea 1(%rdi), %eax\n"
	"	imul %eax, %eax\n"
	"	ret\n"
	".size probe_asm, .-probe_asm\n");
#else
static unsigned probe_asm(unsigned x)
{
	return (x + 1) * (x + 1);
}
#endif

int main(int argc, char **argv)
{
	(void)argv;
	return (int)((probe_outer((unsigned)argc) + probe_asm((unsigned)argc)) & 1);
}
