/* SPDX-License-Identifier: MIT */
/* The shared library behind broken-first_touch_lib (lib_kernel.c). */
#pragma once

#include <stdint.h>

/* ++buf[order[i] * 4096 + (order[i] % 64) * 64] for i < pages, reps times; the time stamp counter ticks it took. */
uint64_t lib_kernel_touch(char *buf, const uint32_t *order, uint64_t pages, unsigned reps);
