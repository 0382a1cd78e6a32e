/* SPDX-License-Identifier: MIT */
/* Private to machine/: the string helpers the CPUID decoder, the text parsers and the collection share. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "machine/environment.h"	/* env_read_text(), the one small-file reader */

/* Copy a string, truncating to fit (for facts where a cut value beats none). */
static inline void env_copy_trunc(char *out, size_t out_size, const char *src)
{
	size_t n = strlen(src);

	if (out_size == 0)
		return;
	if (n >= out_size)
		n = out_size - 1;
	memcpy(out, src, n);
	out[n] = '\0';
}

static inline bool env_is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Trim leading and trailing whitespace in place. */
static inline void env_trim(char *s)
{
	size_t start = 0, n = strlen(s);

	while (n > 0 && env_is_blank(s[n - 1]))
		s[--n] = '\0';
	while (start < n && env_is_blank(s[start]))
		start++;
	if (start > 0)
		memmove(s, s + start, n - start + 1);
}
