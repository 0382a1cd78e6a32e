/* SPDX-License-Identifier: MIT */
/* Pure parsers for option values: sizes with binary suffixes, counts, fractions, comma lists. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Parse a size in bytes: digits with an optional binary suffix K, M, G, T
 * (case-insensitive, optionally followed by "B" or "iB"): "4k" = 4096,
 * "256M" = 268435456, "4096" = 4096. No sign, no fraction, no spaces.
 * Returns 0, -EINVAL (malformed) or -ERANGE (overflows 64 bits).
 */
int parse_size(const char *s, uint64_t *out);

/*
 * Parse a count: digits with an optional decimal suffix k, M, G (10^3, 10^6,
 * 10^9): "20M" = 20000000. Returns 0, -EINVAL or -ERANGE.
 */
int parse_count(const char *s, uint64_t *out);

/* Parse a finite decimal number (strtod syntax, whole string). 0 or -EINVAL. */
int parse_double(const char *s, double *out);

/* Room for anything format_size() or format_bytes() writes: 20 digits, a suffix, "iB" and the NUL. */
#define SIZE_TEXT 24

/*
 * Format bytes as the shortest exact binary-suffixed size ("256M", "4K",
 * "1536M", "100" for non-multiples of 1 KiB) into buf. Returns buf.
 */
char *format_size(uint64_t bytes, char *buf, size_t len);

/* The same with its unit, for prose: "256MiB", "4KiB", "100000B". Returns buf. */
char *format_bytes(uint64_t bytes, char *buf, size_t len);

/*
 * Split a comma-separated list in place: fills items[] with pointers into s
 * (which is modified). Returns the number of items, -EINVAL when an item is
 * empty ("4k,,2m", "", "4k,") or -E2BIG when there are more than max items.
 */
int parse_list(char *s, char **items, size_t max);

/*
 * A kernel cpu list ("0-3,8,10-11\n": 7 CPUs; it ends at a newline or NUL).
 * Returns the number of CPUs it names, 0 for a malformed one (or one naming
 * a CPU past 65535); where set is not NULL, it also holds them (those below
 * CPU_SETSIZE), and nothing for a malformed list.
 */
unsigned parse_cpulist(const char *list, cpu_set_t *set);
