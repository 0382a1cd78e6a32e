/* SPDX-License-Identifier: MIT */
/* -e/--event: a user's event list, split, and perf's raw syntax parsed (user_events.h). */
#include "pmu/user_events.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int user_event_split(const char *list, char items[][USER_EVENT_MAX], size_t max, char *why, size_t why_len)
{
	size_t n = 0, len = 0;
	bool in_slashes = false;

	for (const char *p = list;; p++) {
		bool end = *p == '\0';
		if (*p == '/' && (in_slashes || (p - list >= 3 && strncmp(p - 3, "cpu", 3) == 0 && len == 3)))
			in_slashes = !in_slashes;
		if (end || (*p == ',' && !in_slashes)) {
			if (in_slashes) {
				snprintf(why, why_len, "unclosed '/' in '%s'", list);
				return -EINVAL;
			}
			if (!len) {
				snprintf(why, why_len, "an empty event in '%s'", list);
				return -EINVAL;
			}
			if (n >= max) {
				snprintf(why, why_len, "more than %zu events", max);
				return -EINVAL;
			}
			items[n++][len] = '\0';
			len = 0;
			if (end)
				return (int)n;
			continue;
		}
		if (n >= max) {
			snprintf(why, why_len, "more than %zu events", max);
			return -EINVAL;
		}
		if (len + 1 >= USER_EVENT_MAX) {
			snprintf(why, why_len, "an event longer than %d bytes", USER_EVENT_MAX - 1);
			return -EINVAL;
		}
		items[n][len++] = *p;
	}
}

/* One term "name=value" of cpu/.../ into config; false on an unknown name or a bad value. */
static bool raw_term(const char *term, uint64_t *config, bool *has_event)
{
	static const struct {
		const char *name;
		unsigned shift;
		uint64_t max;
	} fields[] = {
		{ "umask", 8, 0xff }, { "edge", 18, 1 }, { "inv", 23, 1 }, { "cmask", 24, 0xff },
	};
	const char *eq = strchr(term, '=');
	char name[16], *end;

	if (!eq || eq == term || (size_t)(eq - term) >= sizeof(name) || !eq[1])
		return false;
	memcpy(name, term, (size_t)(eq - term));
	name[eq - term] = '\0';
	errno = 0;
	unsigned long long v = strtoull(eq + 1, &end, 0);
	if (errno || *end || eq[1] == '-')
		return false;
	if (strcmp(name, "config") == 0) {
		*config = v;
		*has_event = true;
		return true;
	}
	if (strcmp(name, "event") == 0) {
		if (v > 0xfff)
			return false;
		*config |= (v & 0xff) | ((v >> 8) & 0xf) << 32;	/* AMD's event[11:8] sits at config:32-35 */
		*has_event = true;
		return true;
	}
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strcmp(name, fields[i].name) == 0) {
			if (v > fields[i].max)
				return false;
			*config |= (uint64_t)v << fields[i].shift;
			return true;
		}
	return false;
}

int user_event_parse_raw(const char *spec, uint64_t *config, char *why, size_t why_len)
{
	size_t len = strlen(spec);

	*config = 0;
	if (spec[0] == 'r' && len > 1) {
		bool hex = true;
		for (size_t i = 1; i < len; i++)
			hex &= isxdigit((unsigned char)spec[i]) != 0;
		if (hex) {
			if (len > 17) {
				snprintf(why, why_len, "'%s': more than 64 bits", spec);
				return -EINVAL;
			}
			*config = strtoull(spec + 1, NULL, 16);
			return 1;
		}
	}
	if (strncmp(spec, "cpu/", 4) != 0)
		return 0;
	if (len < 6 || spec[len - 1] != '/') {
		snprintf(why, why_len, "'%s': want cpu/event=N,umask=N[,cmask=N,inv=1,edge=1]/", spec);
		return -EINVAL;
	}
	char terms[USER_EVENT_MAX], *save = NULL;
	bool has_event = false;
	snprintf(terms, sizeof(terms), "%.*s", (int)(len - 5), spec + 4);
	for (char *t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (!raw_term(t, config, &has_event)) {
			snprintf(why, why_len, "'%s': bad term '%s' (known: event, umask, cmask, inv, edge, config)", spec, t);
			return -EINVAL;
		}
	if (!has_event) {
		snprintf(why, why_len, "'%s': no event= (or config=)", spec);
		return -EINVAL;
	}
	return 1;
}
