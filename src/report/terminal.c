/* SPDX-License-Identifier: MIT */
/*
 * The text output on a terminal: status words in colour and long messages
 * wrapped to its width, as people expect from modern command-line tools. In
 * a pipe or a file nothing changes, byte for byte: scripts and goldens read
 * that. NO_COLOR (https://no-color.org) set to anything but "" and
 * TERM=dumb turn the colour off; the wrapping stays.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "report/internal.h"

/* Narrower than this, a wrapped message would be a column of words: wrap at this instead. */
#define TERM_MIN_WIDTH 40

void term_style_for(FILE *f, struct term_style *out)
{
	struct winsize ws;
	const char *no_colour = getenv("NO_COLOR"), *term = getenv("TERM");
	int fd = f ? fileno(f) : -1;

	memset(out, 0, sizeof(*out));
	if (fd < 0 || !isatty(fd))
		return;
	out->colour = !(no_colour && *no_colour) && !(term && strcmp(term, "dumb") == 0);
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
		out->width = ws.ws_col;
	} else {
		const char *cols = getenv("COLUMNS");
		long n = cols ? strtol(cols, NULL, 10) : 0;
		out->width = n > 0 && n < 10000 ? (unsigned)n : 80;
	}
	if (out->width < TERM_MIN_WIDTH)
		out->width = TERM_MIN_WIDTH;
}

/* SGR colours: red and yellow for what needs a look, green for what passed; the rest stays plain. */
const char *term_start(const struct term_style *s, const char *status)
{
	if (!s->colour || !status)
		return "";
	if (strcmp(status, "fail") == 0 || strcmp(status, "fails") == 0 || strcmp(status, "regression") == 0)
		return "\033[1;31m";
	if (strcmp(status, "warn") == 0 || strcmp(status, "worse") == 0)
		return "\033[33m";
	if (strcmp(status, "pass") == 0 || strcmp(status, "ok") == 0 || strcmp(status, "passes") == 0)
		return "\033[32m";
	return "";
}

const char *term_end(const struct term_style *s, const char *status)
{
	return *term_start(s, status) ? "\033[0m" : "";
}

void term_put_status(FILE *f, const struct term_style *s, const char *status, int pad)
{
	int n = (int)strlen(status);

	fprintf(f, "%s%s%s%*s", term_start(s, status), status, term_end(s, status), pad > n ? pad - n : 0, "");
}

/* Bytes of the escape sequence (CSI: ESC [ parameters final) at p; 0 where none starts. */
static size_t escape_len(const char *p)
{
	size_t i = 2;

	if (p[0] != '\033' || p[1] != '[')
		return 0;
	while (p[i] && !((unsigned char)p[i] >= 0x40 && (unsigned char)p[i] <= 0x7e))
		i++;
	return p[i] ? i + 1 : i;
}

/*
 * Columns the first n bytes of a UTF-8 string take: one per code point, none
 * for a colour's escapes (the messages hold no wide or combining characters).
 */
static size_t columns(const char *p, size_t n)
{
	size_t c = 0;

	for (size_t i = 0; i < n;) {
		size_t e = escape_len(p + i);
		if (e) {
			i += e;
			continue;
		}
		c += ((unsigned char)p[i] & 0xc0) != 0x80;
		i++;
	}
	return c;
}

/* Bytes of p that fit in room columns: whole code points and escapes, never more than strlen(p). */
static size_t bytes_for(const char *p, size_t room)
{
	size_t i = 0, c = 0;

	while (p[i]) {
		size_t next = i + escape_len(p + i);
		if (next == i) {
			next = i + 1;
			while (((unsigned char)p[next] & 0xc0) == 0x80)
				next++;
			if (++c > room)
				break;
		}
		i = next;
	}
	return i;
}

void term_put_wrapped(FILE *f, const char *text, size_t column, size_t indent, size_t width)
{
	const char *p = text;

	if (!width) {
		fprintf(f, "%s\n", text);
		return;
	}
	while (*p) {
		size_t room = width > column + 20 ? width - column : 20;
		size_t n = strlen(p);
		if (columns(p, n) > room) {
			/* Break at the last blank that fits; a longer word (a path) goes on a line of its own. */
			size_t fit = bytes_for(p, room), cut = fit;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (cut == 0) {
				cut = fit;
				while (p[cut] && p[cut] != ' ')
					cut++;
			}
			n = cut;
		}
		fprintf(f, "%.*s\n", (int)n, p);
		p += n;
		while (*p == ' ')
			p++;
		if (*p)
			fprintf(f, "%*s", (int)indent, "");
		column = indent;
	}
}

/*
 * Each line of text wrapped at width from column 0, its continuations indented
 * by indent; every line, the last too, ends with a newline.
 */
static void put_lines(FILE *f, char *text, size_t width, size_t indent)
{
	char *p = text;

	while (*p) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (*p)
			term_put_wrapped(f, p, 0, indent, width);
		else
			fputc('\n', f);
		if (!nl)
			break;
		p = nl + 1;
	}
}

/* term_paragraph() with its arguments as a va_list. */
__attribute__((format(printf, 3, 0)))
static void vparagraph(FILE *f, size_t indent, const char *fmt, va_list ap)
{
	struct term_style ts;
	va_list again;
	char *text = NULL;

	term_style_for(f, &ts);
	va_copy(again, ap);
	if (!ts.width || vasprintf(&text, fmt, ap) < 0)
		vfprintf(f, fmt, again);
	else
		put_lines(f, text, ts.width, indent);
	va_end(again);
	free(text);
}

void term_paragraph(FILE *f, size_t indent, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vparagraph(f, indent, fmt, ap);
	va_end(ap);
}

void term_note(FILE *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vparagraph(f, 0, fmt, ap);
	va_end(ap);
}
