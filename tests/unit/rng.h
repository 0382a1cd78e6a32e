/* SPDX-License-Identifier: MIT */
/* Deterministic draws for the unit tests: every run draws the same numbers. */
#pragma once

#include <math.h>
#include <stdint.h>

/* splitmix64: a small generator with a good spread from any seed. */
static inline uint64_t rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* N(0, 1) by Box-Muller, unbounded (the tails matter when a test counts how often an interval holds). */
static inline double rng_normal(uint64_t *state)
{
	double u1 = ((double)(rng_next(state) >> 11) + 1) / 9007199254740993.0;
	double u2 = (double)(rng_next(state) >> 11) / 9007199254740992.0;

	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}
