/* SPDX-License-Identifier: MIT */
/* Parse marker and perf-control lines sent by a benchmark under tlbprof run: strict, bounded, no allocation. */
#include "target/marker.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

bool marker_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n >= MARKER_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == ':' || c == '/' || c == '-'))
			return false;
	}
	return true;
}

/*
 * A whole decimal number (or hexadecimal with 0x when hex_ok) of at most 64
 * bits. Counts and lengths (not hex_ok) stay within INT64_MAX: reports and
 * their readers keep them as signed 64-bit integers.
 */
static bool parse_u64(const char *s, bool hex_ok, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;

	if (hex_ok && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return false;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	if (base == 10 && v > (uint64_t)INT64_MAX)
		return false;
	*out = v;
	return true;
}

/* Split the next space-separated word off *p (modified in place); NULL at the end. */
static char *next_word(char **p)
{
	char *s = *p;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return NULL;
	char *w = s;
	while (*s && *s != ' ' && *s != '\t')
		s++;
	if (*s)
		*s++ = '\0';
	*p = s;
	return w;
}

/* One key=value of a begin or end message. */
static int parse_key(char *word, struct marker_msg *m, unsigned *seen, char *err, size_t len)
{
	static const char *const keys[] = { "accesses", "region", "page", "chain", "slots", "kind", "ns", "timings" };
	char *eq = strchr(word, '=');
	size_t k;

	if (!eq || eq == word)
		return fail(err, len, "'%.40s' is not KEY=VALUE", word);
	*eq = '\0';
	const char *val = eq + 1;
	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (strcmp(word, keys[k]) == 0)
			break;
	if (k == sizeof(keys) / sizeof(keys[0]))
		return fail(err, len, "unknown key '%.40s'", word);
	if (*seen & (1u << k))
		return fail(err, len, "key '%s' given twice", word);
	*seen |= 1u << k;
	bool begin = m->type == MARKER_BEGIN;
	bool ok = true;
	switch (k) {
	case 0:
		ok = parse_u64(val, false, &m->accesses) && m->accesses > 0;
		m->has_accesses = true;
		break;
	case 1: {
		char buf[64];
		const char *comma = strchr(val, ',');
		if (!begin)
			return fail(err, len, "'region' belongs to phase begin");
		if (!comma || (size_t)(comma - val) >= sizeof(buf))
			return fail(err, len, "region '%.40s': not ADDR,LEN", val);
		memcpy(buf, val, (size_t)(comma - val));
		buf[comma - val] = '\0';
		ok = parse_u64(buf, true, &m->region_addr) && parse_u64(comma + 1, false, &m->region_bytes) &&
		     m->region_bytes > 0 && m->region_addr + m->region_bytes > m->region_addr;
		m->has_region = true;
		break;
	}
	case 2:
		if (!begin)
			return fail(err, len, "'page' belongs to phase begin");
		ok = page_request_parse(val, &m->page) == 0;
		m->has_page = true;
		break;
	case 3:
		if (!begin)
			return fail(err, len, "'chain' belongs to phase begin");
		ok = parse_u64(val, true, &m->chain_addr) && m->chain_addr != 0;
		m->has_chain = true;
		break;
	case 4:
		if (!begin)
			return fail(err, len, "'slots' belongs to phase begin");
		ok = parse_u64(val, false, &m->slots) && m->slots >= 2;
		break;
	case 5:
		if (!begin)
			return fail(err, len, "'kind' belongs to phase begin");
		if (strcmp(val, "throughput") == 0)
			m->throughput = true;
		else
			ok = strcmp(val, "latency") == 0;
		break;
	case 6:
		if (begin)
			return fail(err, len, "'ns' belongs to phase end");
		ok = parse_u64(val, false, &m->ns);
		m->has_ns = true;
		break;
	case 7:
		if (begin)
			return fail(err, len, "'timings' belongs to phase end");
		ok = parse_u64(val, false, &m->timings) && m->timings > 0;
		break;
	}
	if (!ok)
		return fail(err, len, "%s '%.40s': not a valid value", keys[k], val);
	return 0;
}

int marker_parse(const char *line, size_t len, struct marker_msg *out, char *err, size_t err_len)
{
	char buf[MARKER_LINE_MAX + 1];
	char *p = buf, *w;
	unsigned seen = 0;

	memset(out, 0, sizeof(*out));
	if (len > MARKER_LINE_MAX)
		return fail(err, err_len, "line longer than %d bytes", MARKER_LINE_MAX);
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (strlen(buf) != len)
		return fail(err, err_len, "line contains a NUL byte");
	/* A benchmark written on another system may end its lines with CR LF. */
	if (len && buf[len - 1] == '\r')
		buf[len - 1] = '\0';

	w = next_word(&p);
	if (!w)
		return fail(err, err_len, "empty line");
	/* perf stat --control commands: the word alone (perf also accepts "enable EVENT": not supported here). */
	static const struct {
		const char *word;
		enum marker_type type;
	} perf_cmds[] = { { "enable", MARKER_ENABLE }, { "disable", MARKER_DISABLE }, { "ping", MARKER_PING } };
	for (size_t i = 0; i < sizeof(perf_cmds) / sizeof(perf_cmds[0]); i++) {
		if (strcmp(w, perf_cmds[i].word) == 0) {
			out->type = perf_cmds[i].type;
			if (next_word(&p))
				return fail(err, err_len, "'%s' takes no arguments here (per-event control is not supported)",
					    perf_cmds[i].word);
			return 0;
		}
	}
	if (strcmp(w, "phase") != 0)
		return fail(err, err_len, "unknown command '%.40s' (phase begin/end, enable, disable, ping)", w);
	w = next_word(&p);
	if (w && strcmp(w, "begin") == 0) {
		out->type = MARKER_BEGIN;
		w = next_word(&p);
		if (!w)
			return fail(err, err_len, "phase begin: no name");
		if (!marker_name_valid(w))
			return fail(err, err_len, "phase begin: bad name '%.40s' (1 to 63 of A-Z a-z 0-9 _ . : / -)", w);
		strcpy(out->name, w);
	} else if (w && strcmp(w, "end") == 0) {
		out->type = MARKER_END;
	} else {
		return fail(err, err_len, "'phase %.40s': use phase begin NAME or phase end", w ? w : "");
	}
	while ((w = next_word(&p)) != NULL) {
		int rc = parse_key(w, out, &seen, err, err_len);
		if (rc)
			return rc;
	}
	if (out->has_chain && out->has_region && out->region_bytes < 16)
		return fail(err, err_len, "chain needs a region of at least 16 bytes (two slots), not %llu",
			    (unsigned long long)out->region_bytes);
	if (out->has_chain && out->has_region &&
	    (out->chain_addr < out->region_addr || out->chain_addr - out->region_addr > out->region_bytes - 8))
		return fail(err, err_len, "chain 0x%llx lies outside region 0x%llx,%llu", (unsigned long long)out->chain_addr,
			    (unsigned long long)out->region_addr, (unsigned long long)out->region_bytes);
	if (out->has_chain && !out->has_region)
		return fail(err, err_len, "chain needs region=ADDR,LEN (where tlbprof may read the chain)");
	return 0;
}
