/* SPDX-License-Identifier: MIT */
/*
 * Text that leaves tlbprof: well-formed UTF-8 made from arbitrary bytes (argv,
 * paths, reasons, symbol names are whatever Linux allows) and the escaping of
 * each output format, shared by every report writer.
 */
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

/* U+FFFD REPLACEMENT CHARACTER, for every byte that is not part of a well-formed sequence. */
#define REPLACEMENT "\xef\xbf\xbd"

size_t report_utf8_next(const char *s, uint32_t *cp)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char c = p[0];
	size_t len;
	uint32_t v;
	/* The second byte's range (Unicode Table 3-7): it rules out overlong forms, surrogates and > U+10FFFF. */
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		v = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		v = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;	/* a continuation byte, 0xc0/0xc1 (overlong) or 0xf5..0xff */
	}
	if (p[1] < lo || p[1] > hi)
		return 0;
	/* The NUL terminator fails the continuation test, so a truncated sequence never reads past it. */
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3f);
	}
	*cp = v;
	return len;
}

bool report_utf8_valid(const char *s)
{
	uint32_t cp;

	for (size_t n; *s; s += n)
		if (!(n = report_utf8_next(s, &cp)))
			return false;
	return true;
}

char *report_utf8_dup(const char *s)
{
	size_t len = strlen(s);
	/* Each byte becomes at most three. */
	char *out = malloc(3 * len + 1), *o = out;
	uint32_t cp;

	if (!out)
		return NULL;
	while (*s) {
		size_t n = report_utf8_next(s, &cp);
		if (n) {
			memcpy(o, s, n);
			o += n;
			s += n;
		} else {
			memcpy(o, REPLACEMENT, 3);
			o += 3;
			s++;
		}
	}
	*o = '\0';
	return out;
}

json_t *report_json_text(const char *s)
{
	if (!s)
		return NULL;
	if (report_utf8_valid(s))
		return json_string(s);
	char *clean = report_utf8_dup(s);
	json_t *j = clean ? json_string(clean) : NULL;
	free(clean);
	return j;
}

json_t *report_json_num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *report_json_str_or_null(const char *s)
{
	return s && *s ? report_json_text(s) : json_null();
}

/* Characters XML 1.0 cannot carry at all (its Char production): C0 controls but tab, LF, CR; U+FFFE, U+FFFF. */
static bool xml_forbidden(uint32_t cp)
{
	return (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xfffe || cp == 0xffff;
}

/* The escape of one ASCII character in context how, or NULL to write it as it is. */
static const char *escape_of(uint32_t cp, enum report_text how)
{
	bool attr = how == REPORT_TEXT_XML_ATTR;

	switch (how) {
	case REPORT_TEXT_XML:
	case REPORT_TEXT_XML_ATTR:
		switch (cp) {
		case '&': return "&amp;";
		case '<': return "&lt;";
		case '>': return "&gt;";
		case '"': return attr ? "&quot;" : NULL;
		/* In an attribute a parser folds tab and LF to spaces; a character reference keeps them. CR always. */
		case '\n': return attr ? "&#10;" : NULL;
		case '\t': return attr ? "&#9;" : NULL;
		case '\r': return "&#13;";
		default: return xml_forbidden(cp) ? REPLACEMENT : NULL;
		}
	case REPORT_TEXT_OPENMETRICS:
		/* A label value: backslash, double quote and line feed, as OpenMetrics and Prometheus text both read them. */
		switch (cp) {
		case '\\': return "\\\\";
		case '"': return "\\\"";
		case '\n': return "\\n";
		default: return NULL;
		}
	case REPORT_TEXT_CSV_QUOTED:
		return cp == '"' ? "\"\"" : NULL;
	case REPORT_TEXT_PLAIN:
		break;
	}
	return NULL;
}

void report_put_text(FILE *f, const char *s, enum report_text how)
{
	uint32_t cp;

	while (*s) {
		size_t n = report_utf8_next(s, &cp);
		if (!n) {
			fputs(REPLACEMENT, f);
			s++;
			continue;
		}
		const char *esc = escape_of(cp, how);
		if (esc)
			fputs(esc, f);
		else
			fwrite(s, 1, n, f);
		s += n;
	}
}
