/* SPDX-License-Identifier: MIT */
/* Pure parsers for option values: sizes with binary suffixes, counts, fractions, comma lists. */
#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Leading decimal digits of s into *val; returns the first non-digit, or NULL
 * on no digits / overflow (errno-style code in *err). */
static const char *parse_digits(const char *s, uint64_t *val, int *err)
{
	uint64_t v = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p)) {
		*err = -EINVAL;
		return NULL;
	}
	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10) {
			*err = -ERANGE;
			return NULL;
		}
		v = v * 10 + d;
	}
	*val = v;
	return p;
}

static int multiply(uint64_t v, uint64_t mult, uint64_t *out)
{
	if (mult && v > UINT64_MAX / mult)
		return -ERANGE;
	*out = v * mult;
	return 0;
}

int parse_size(const char *s, uint64_t *out)
{
	uint64_t v, mult = 1;
	int err = 0;
	const char *p;

	if (!s)
		return -EINVAL;
	p = parse_digits(s, &v, &err);
	if (!p)
		return err;
	switch (toupper((unsigned char)*p)) {
	case '\0':
		break;
	case 'K': mult = 1ull << 10; p++; break;
	case 'M': mult = 1ull << 20; p++; break;
	case 'G': mult = 1ull << 30; p++; break;
	case 'T': mult = 1ull << 40; p++; break;
	case 'B': break;
	default:
		return -EINVAL;
	}
	if (mult > 1 && (*p == 'i' || *p == 'I'))
		p++;
	if (*p == 'B' || *p == 'b')
		p++;
	if (*p != '\0')
		return -EINVAL;
	return multiply(v, mult, out);
}

int parse_count(const char *s, uint64_t *out)
{
	uint64_t v, mult = 1;
	int err = 0;
	const char *p;

	if (!s)
		return -EINVAL;
	p = parse_digits(s, &v, &err);
	if (!p)
		return err;
	switch (*p) {
	case '\0': break;
	case 'k': case 'K': mult = 1000ull; p++; break;
	case 'M': mult = 1000000ull; p++; break;
	case 'G': mult = 1000000000ull; p++; break;
	default:
		return -EINVAL;
	}
	if (*p != '\0')
		return -EINVAL;
	return multiply(v, mult, out);
}

int parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end != '\0' || !isfinite(v))
		return -EINVAL;
	*out = v;
	return 0;
}

char *format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	int u = -1;
	uint64_t v = bytes;

	while (v && v % 1024 == 0 && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)v, units[u]);
	return buf;
}

char *format_bytes(uint64_t bytes, char *buf, size_t len)
{
	char n[SIZE_TEXT];
	size_t k = strlen(format_size(bytes, n, sizeof(n)));

	snprintf(buf, len, "%s%s", n, k && !isdigit((unsigned char)n[k - 1]) ? "iB" : "B");
	return buf;
}

int parse_list(char *s, char **items, size_t max)
{
	size_t n = 0;
	char *p = s;

	if (!s || !*s)
		return -EINVAL;
	for (;;) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (!*p)
			return -EINVAL;
		if (n == max)
			return -E2BIG;
		items[n++] = p;
		if (!comma)
			break;
		p = comma + 1;
	}
	return (int)n;
}

/* Past any kernel's NR_CPUS: a list naming more is malformed, and the count cannot wrap. */
#define CPULIST_MAX 65536ul

static unsigned cpulist_malformed(cpu_set_t *set)
{
	if (set)
		CPU_ZERO(set);
	return 0;
}

unsigned parse_cpulist(const char *list, cpu_set_t *set)
{
	unsigned n = 0;
	const char *p = list;

	if (set)
		CPU_ZERO(set);
	while (*p && *p != '\n') {
		char *e;
		unsigned long a = strtoul(p, &e, 10), b = a;
		if (e == p || !isdigit((unsigned char)*p))
			return cpulist_malformed(set);
		if (*e == '-') {
			p = e + 1;
			b = strtoul(p, &e, 10);
			if (e == p || !isdigit((unsigned char)*p) || b < a)
				return cpulist_malformed(set);
		}
		if (b >= CPULIST_MAX)
			return cpulist_malformed(set);
		for (unsigned long c = a; set && c <= b && c < CPU_SETSIZE; c++)
			CPU_SET(c, set);
		n += (unsigned)(b - a + 1);
		p = e;
		if (*p == ',')
			p++;
	}
	return n;
}
