/* SPDX-License-Identifier: MIT */
/* A growable array's one helper, shared by the sampler and the symbolizer. */
#pragma once

#include <stdbool.h>
#include <stdlib.h>

/*
 * Make *array (elements of elem bytes, *cap of them) hold at least need,
 * doubling from first. false when out of memory: the array is kept as it
 * was.
 */
static inline bool array_grow(void **array, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t n;
	void *p;

	if (need <= *cap && *array)
		return true;
	n = *cap ? *cap : first;
	while (n < need)
		n *= 2;
	p = realloc(*array, n * elem);
	if (!p)
		return false;
	*array = p;
	*cap = n;
	return true;
}
