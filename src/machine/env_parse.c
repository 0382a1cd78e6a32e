/* SPDX-License-Identifier: MIT */
/* Pure parsers of the sysfs and procfs texts environment_collect reads (declared in environment.h, for the tests). */
#include "machine/environment.h"

#include "machine/env_text.h"
#include "machine/host.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Copy n bytes of src into out as a string; -ERANGE (and out = "") when it does not fit. */
static int copy_span(char *out, size_t out_size, const char *src, size_t n)
{
	if (out_size == 0)
		return -ERANGE;
	if (n >= out_size) {
		out[0] = '\0';
		return -ERANGE;
	}
	memcpy(out, src, n);
	out[n] = '\0';
	return 0;
}

/* Parse an unsigned decimal at *p (no sign, no leading blanks); advances *p. */
static bool parse_u64(const char **p, uint64_t *value)
{
	const char *s = *p;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return false;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*p = s;
	*value = v;
	return true;
}

int env_parse_thp_selected(const char *text, char *out, size_t out_size)
{
	const char *open_b, *close_b;

	if (out_size > 0)
		out[0] = '\0';
	open_b = strchr(text, '[');
	if (!open_b)
		return -EINVAL;
	close_b = strchr(open_b + 1, ']');
	if (!close_b || close_b == open_b + 1)
		return -EINVAL;
	for (const char *c = open_b + 1; c < close_b; c++)
		if (env_is_blank(*c) || *c == '[')
			return -EINVAL;
	/* The kernel marks exactly one value; a second bracket means this is not its format. */
	if (strchr(close_b + 1, '[') || strchr(close_b + 1, ']'))
		return -EINVAL;
	return copy_span(out, out_size, open_b + 1, (size_t)(close_b - open_b - 1));
}

int env_parse_proc_stat_cpu(const char *text, uint64_t *total_ticks, uint64_t *steal_ticks)
{
	/*
	 * "cpu  user nice system idle iowait irq softirq steal guest guest_nice"
	 * (proc(5)); steal exists since Linux 2.6.11. The aggregate line is the
	 * one named "cpu" followed by a blank; "cpu0" etc. are per-CPU lines.
	 * guest and guest_nice are already counted in user and nice, so the
	 * total is the sum of the first eight.
	 */
	for (const char *line = text; line && *line;) {
		if (strncmp(line, "cpu", 3) == 0 && (line[3] == ' ' || line[3] == '\t')) {
			const char *p = line + 3;
			uint64_t v = 0, total = 0;

			for (int field = 1; field <= 8; field++) {
				if (*p != ' ' && *p != '\t')
					return -EINVAL;
				while (*p == ' ' || *p == '\t')
					p++;
				if (!parse_u64(&p, &v))
					return -EINVAL;
				total = total > UINT64_MAX - v ? UINT64_MAX : total + v;	/* saturate, never wrap */
			}
			if (*p != '\0' && !env_is_blank(*p))
				return -EINVAL;
			*total_ticks = total;
			*steal_ticks = v;
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -EINVAL;
}

int env_parse_proc_stat_steal(const char *text, uint64_t *steal_ticks)
{
	uint64_t total;

	return env_parse_proc_stat_cpu(text, &total, steal_ticks);
}

int env_parse_cap_eff(const char *text, uint64_t *cap_effective)
{
	/* "CapEff:\t000001ffffffffff" in /proc/PID/status (proc(5)): 64 bits in hex. */
	for (const char *line = text; line && *line;) {
		if (strncmp(line, "CapEff:", 7) == 0) {
			const char *p = line + 7;
			uint64_t v = 0;
			int digits = 0;

			while (*p == ' ' || *p == '\t')
				p++;
			for (; isxdigit((unsigned char)*p); p++, digits++) {
				if (digits == 16)
					return -EINVAL;
				v = v << 4 | (uint64_t)(isdigit((unsigned char)*p) ? *p - '0'
										 : tolower((unsigned char)*p) - 'a' + 10);
			}
			if (digits == 0 || (*p != '\0' && !env_is_blank(*p)))
				return -EINVAL;
			*cap_effective = v;
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENOENT;
}

int env_parse_hugepages_dirname(const char *name, uint64_t *page_bytes)
{
	static const char prefix[] = "hugepages-";
	const char *p = name;
	uint64_t kb;

	if (strncmp(p, prefix, sizeof(prefix) - 1) != 0)
		return -EINVAL;
	p += sizeof(prefix) - 1;
	if (!parse_u64(&p, &kb) || kb == 0 || strcmp(p, "kB") != 0)
		return -EINVAL;
	if (kb > UINT64_MAX / 1024)
		return -EINVAL;
	*page_bytes = kb * 1024;
	return 0;
}

int env_parse_cache_size(const char *text, uint64_t *bytes)
{
	const char *p = text;
	uint64_t v, mult = 1;

	while (env_is_blank(*p))
		p++;
	if (!parse_u64(&p, &v))
		return -EINVAL;
	switch (*p) {
	case 'K': case 'k': mult = UINT64_C(1) << 10; p++; break;
	case 'M': case 'm': mult = UINT64_C(1) << 20; p++; break;
	case 'G': case 'g': mult = UINT64_C(1) << 30; p++; break;
	default: break;
	}
	while (env_is_blank(*p))
		p++;
	if (*p != '\0' || v > UINT64_MAX / mult)
		return -EINVAL;
	*bytes = v * mult;
	return 0;
}

int env_parse_long(const char *text, long *value)
{
	const char *p = text;
	char *end;
	long v;

	while (env_is_blank(*p))
		p++;
	if (!(isdigit((unsigned char)*p) || (*p == '-' && isdigit((unsigned char)p[1]))))
		return -EINVAL;
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno == ERANGE)
		return -EINVAL;
	while (env_is_blank(*end))
		end++;
	if (*end != '\0')
		return -EINVAL;
	*value = v;
	return 0;
}

int env_parse_cpuinfo_field(const char *text, const char *key, char *out, size_t out_size)
{
	size_t key_len = strlen(key);

	if (out_size > 0)
		out[0] = '\0';
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		const char *end = nl ? nl : line + strlen(line);
		const char *colon = memchr(line, ':', (size_t)(end - line));

		if (colon) {
			const char *k_end = colon;

			while (k_end > line && env_is_blank(k_end[-1]))
				k_end--;
			if ((size_t)(k_end - line) == key_len && memcmp(line, key, key_len) == 0) {
				const char *v = colon + 1, *v_end = end;

				while (v < v_end && env_is_blank(*v))
					v++;
				while (v_end > v && env_is_blank(v_end[-1]))
					v_end--;
				return copy_span(out, out_size, v, (size_t)(v_end - v));
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

int env_parse_u64(const char *text, uint64_t *value)
{
	const char *p = text;
	uint64_t v;

	while (env_is_blank(*p))
		p++;
	if (!parse_u64(&p, &v))
		return -EINVAL;
	while (env_is_blank(*p))
		p++;
	if (*p)
		return -EINVAL;
	*value = v;
	return 0;
}

/* The one word of a sysfs file (surrounding whitespace trimmed): its start and length; false when not one word. */
static bool one_word(const char *text, const char **start, size_t *len)
{
	const char *p = text, *s;

	while (env_is_blank(*p))
		p++;
	for (s = p; *p && !env_is_blank(*p); p++)
		;
	*start = s;
	*len = (size_t)(p - s);
	while (env_is_blank(*p))
		p++;
	return *len > 0 && !*p;
}

int env_parse_damon_state(const char *text, bool *running)
{
	const char *w;
	size_t n;

	/* mm/damon/sysfs.c: "on" or "off" (writes accept more verbs; reads print these two). */
	if (!one_word(text, &w, &n))
		return -EINVAL;
	if (n == 2 && strncmp(w, "on", 2) == 0)
		*running = true;
	else if (n == 3 && strncmp(w, "off", 3) == 0)
		*running = false;
	else
		return -EINVAL;
	return 0;
}

int env_parse_damon_action(const char *text, char *out, size_t out_size)
{
	const char *w;
	size_t n;

	if (out_size > 0)
		out[0] = '\0';
	/* "willneed", "cold", "pageout", "hugepage", "nohugepage", "lru_prio", "lru_deprio", "stat", ... */
	if (!one_word(text, &w, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!((w[i] >= 'a' && w[i] <= 'z') || w[i] == '_'))
			return -EINVAL;
	return copy_span(out, out_size, w, n);
}
