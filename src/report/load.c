/* SPDX-License-Identifier: MIT */
/* A saved report's JSON read with its size bounded (report_json_load(), for read.c): no file makes tlbprof swap. */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "report/internal.h"

/*
 * The largest report read: a sweep of hundreds of phases with thousands of
 * samples each is a few MiB, so this is far beyond any report tlbprof
 * writes, and it bounds jansson's tree (about twice the text) and the time.
 */
#define REPORT_MAX_BYTES (256ull << 20)

/* json_load_callback()'s reader: the file, up to REPORT_MAX_BYTES (over that, an error and over set). */
struct bounded_input {
	FILE *f;
	uint64_t read;
	bool over;
	int err;		/* the read's errno where it failed, 0 otherwise */
};

static size_t bounded_read(void *buf, size_t len, void *arg)
{
	struct bounded_input *in = arg;
	size_t n = fread(buf, 1, len, in->f);

	in->read += n;
	if (in->read > REPORT_MAX_BYTES) {
		in->over = true;
		return (size_t)-1;
	}
	if (!n && ferror(in->f)) {
		in->err = errno ? errno : EIO;
		return (size_t)-1;
	}
	return n;
}

int report_json_load(const char *path, json_t **root, char *err, size_t err_len)
{
	struct bounded_input in = { .f = fopen(path, "re") };
	json_error_t jerr;
	struct stat st;
	int rc;

	*root = NULL;
	if (!in.f) {
		rc = -errno;
		snprintf(err, err_len, "%s: %s", path, strerror(-rc));
		return rc;
	}
	bool known = fstat(fileno(in.f), &st) == 0;
	/* A regular file says its size: refused at once; a pipe is cut off as it is read. */
	if (known && S_ISREG(st.st_mode) && (uint64_t)st.st_size > REPORT_MAX_BYTES)
		in.over = true;
	/* fopen() opens a directory for reading; its first read fails, which is no JSON error. */
	if (known && S_ISDIR(st.st_mode)) {
		fclose(in.f);
		snprintf(err, err_len, "%s: %s", path, strerror(EISDIR));
		return -EISDIR;
	}
	*root = in.over ? NULL : json_load_callback(bounded_read, &in, JSON_REJECT_DUPLICATES, &jerr);
	fclose(in.f);
	if (in.over) {
		json_decref(*root);
		*root = NULL;
		snprintf(err, err_len, "%s: more than %llu MiB, larger than any tlbprof report", path, REPORT_MAX_BYTES >> 20);
		return -EINVAL;
	}
	if (!*root && in.err) {
		snprintf(err, err_len, "%s: %s", path, strerror(in.err));
		return -in.err;
	}
	if (!*root) {
		/* jansson quotes the offending byte: a control byte from a hostile file must not reach a terminal raw. */
		for (char *c = jerr.text; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		snprintf(err, err_len, "%s:%d:%d: not valid JSON: %s", path, jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	return 0;
}
