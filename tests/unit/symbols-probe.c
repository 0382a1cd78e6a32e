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

int main(int argc, char **argv)
{
	(void)argv;
	return (int)(probe_outer((unsigned)argc) & 1);
}
