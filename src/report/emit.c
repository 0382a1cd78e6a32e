/* SPDX-License-Identifier: MIT */
/* report_emit(): the table for people, then every document a command asked for; and the one-line error. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"
#include "report/report.h"

/* report/internal.h says what; report_error() writes every one-line error through it. */
void report_put_visible(FILE *f, const char *s, size_t n, bool one_line)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0x9f)
			fprintf(f, "\\u%04x", (unsigned char)s[++i]);
		else if (ch == '\n' && one_line)
			fputs("\\n", f);
		else if ((ch < 0x20 && ch != '\n' && ch != '\t') || ch == 0x7f)
			fprintf(f, "\\x%02x", ch);
		else
			fputc(ch, f);
	}
}

char *report_visible_dup(const char *s)
{
	char *out = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&out, &len);

	if (!mem)
		return NULL;
	report_put_visible(mem, s, strlen(s), true);
	if (fclose(mem) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

void report_error(const char *msg)
{
	fputs("tlbprof: ", stderr);
	report_put_visible(stderr, msg, strlen(msg), true);
	fputc('\n', stderr);
}

bool report_outputs_stdout(const struct report_outputs *out)
{
	bool to_stdout = out->json_path && strcmp(out->json_path, "-") == 0;

	for (size_t i = 0; i < out->n_formats; i++) {
		char file[PATH_MAX + 32];
		const char *p = report_output_path(out, out->formats[i], file, sizeof(file));
		to_stdout |= p && strcmp(p, "-") == 0;
	}
	return to_stdout;
}

const char *report_output_path(const struct report_outputs *out, enum output_format fmt, char *buf, size_t size)
{
	if (out->format_paths[fmt] || !out->output_dir || !out->output_path)
		return out->format_paths[fmt] ? out->format_paths[fmt] : out->output_path;
	size_t n = strlen(out->output_path);
	int w = snprintf(buf, size, "%s%s%s", out->output_path, n && out->output_path[n - 1] == '/' ? "" : "/",
			 report_format_file_name(fmt));
	return w >= 0 && (size_t)w < size ? buf : NULL;
}

int report_emit(const struct report_input *in, const struct report_outputs *out)
{
	bool to_stdout = report_outputs_stdout(out), interrupted = false;
	char msg[512];
	int rc = 0, e;

	/*
	 * Every output is tried, so one that cannot be written does not cost the
	 * others: a full or closed stdout (> /dev/full, >&- under cron, | head
	 * with SIGPIPE ignored) loses the table, never the report files.
	 */
	if (!out->quiet) {
		FILE *f = to_stdout ? stderr : stdout;
		errno = 0;
		report_print_text(in, f);
		if (fflush(f) != 0 || ferror(f)) {
			snprintf(msg, sizeof(msg), "cannot write the table to %s: %s", to_stdout ? "stderr" : "stdout",
				 strerror(errno ? errno : EIO));
			report_error(msg);
			clearerr(f);
			rc = -1;
		}
	}
	if (out->json_path && (e = report_write_json(in, out->json_path, msg, sizeof(msg))) != 0) {
		report_error(msg);
		interrupted |= e == -EINTR;
		rc = -1;
	}
	for (size_t i = 0; i < out->n_formats; i++) {
		char file[PATH_MAX + 32];
		const char *path = report_output_path(out, out->formats[i], file, sizeof(file));
		if (!path) {
			snprintf(msg, sizeof(msg), "--output '%s': %s", out->output_path, strerror(ENAMETOOLONG));
			e = -ENAMETOOLONG;
		} else {
			e = report_write_format(in, out->formats[i], path, "--output", msg, sizeof(msg));
		}
		if (e != 0) {
			report_error(msg);
			interrupted |= e == -EINTR;
			rc = -1;
		}
	}
	return interrupted ? -EINTR : rc;
}
