/* SPDX-License-Identifier: MIT */
/*
 * Trap: a STREAM-style kernel whose timed loop is its three arrays' first touch, so its first pass times page
 * faults. The loop scans the arrays side by side, meeting each page at its first line whatever it reads next:
 * the faults show the trap and the order, and cannot show where in a page the loop reads (it reads every line).
 */
#include "broken.h"

#define REPS 10

int main(void)
{
	size_t n = REGION_BYTES / sizeof(double);
	double *a = malloc(REGION_BYTES), *b = malloc(REGION_BYTES), *c = malloc(REGION_BYTES);

	if (!a || !b || !c)
		return 1;
	pin_self();
	uint64_t t0 = now_ns();
	for (int rep = 0; rep < REPS; rep++)
		for (size_t i = 0; i < n; i++) {
			a[i] += 1.0;
			b[i] += a[i];
			c[i] += 0.5 * b[i];
		}
	say("stream_first_touch", REPS * (uint64_t)n, now_ns() - t0, (uint64_t)(a[n / 2] + b[n / 3] + c[n - 1]));
	return 0;
}
