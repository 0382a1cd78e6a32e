/* SPDX-License-Identifier: MIT */
/*
 * The timed kernel of broken-first_touch_lib, in a shared library: the executable is a launcher that calls it, as
 * python3.11 built --enable-shared calls libpython. The trap is in the library: its timed loop is the memory's
 * first touch. Timed with the time stamp counter (x86-64; elsewhere not timed), so no traced clock read says which
 * faults were timed: only the hot loop's code can, and that is the library's.
 */
#include <stdint.h>

#include "lib_kernel.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#define TICKS() __rdtsc()
#else
#define TICKS() 0ull
#endif

uint64_t lib_kernel_touch(char *buf, const uint32_t *order, uint64_t pages, unsigned reps)
{
	uint64_t t0 = TICKS();

	for (unsigned rep = 0; rep < reps; rep++)
		for (uint64_t i = 0; i < pages; i++)
			buf[(uint64_t)order[i] * 4096u + (order[i] % 64u) * 64u]++;
	return TICKS() - t0;
}
