/* SPDX-License-Identifier: MIT */
/* perf_event_paranoid read once for the counters, the sampler and tlbprof env, and the one text of its fix. */
#include "pmu/paranoid.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* Parse "2\n": a decimal integer with surrounding whitespace and nothing else, in int range above UNKNOWN. */
static int parse_level(const char *text)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (end == text || errno == ERANGE || v <= PARANOID_UNKNOWN || v > INT32_MAX)
		return PARANOID_UNKNOWN;
	while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
		end++;
	return *end == '\0' ? (int)v : PARANOID_UNKNOWN;
}

static int read_level(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	char text[32];
	int level = PARANOID_UNKNOWN;

	if (!f)
		return level;
	if (fgets(text, sizeof(text), f))
		level = parse_level(text);
	fclose(f);
	return level;
}

int paranoid_level(void)
{
	/*
	 * The cache is a fact about the system, not command state. Two threads
	 * that both find it unread both read the same file; known is published
	 * (release) only after level is stored.
	 */
	static int level;
	static bool known;

	if (__atomic_load_n(&known, __ATOMIC_ACQUIRE))
		return __atomic_load_n(&level, __ATOMIC_RELAXED);
	int v = read_level();
	__atomic_store_n(&level, v, __ATOMIC_RELAXED);
	__atomic_store_n(&known, true, __ATOMIC_RELEASE);
	return v;
}

void paranoid_level_text(int level, char *buf, size_t len)
{
	if (level == PARANOID_UNKNOWN)
		snprintf(buf, len, "unknown");
	else
		snprintf(buf, len, "%d", level);
}

void paranoid_fix(int wanted, bool root, char *buf, size_t len)
{
	snprintf(buf, len, "%ssysctl kernel.perf_event_paranoid=%d", root ? "" : "sudo ", wanted);
}
