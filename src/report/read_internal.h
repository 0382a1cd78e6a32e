/* SPDX-License-Identifier: MIT */
/* Private to the report reader (read.c, read_env.c): its state and the field helpers they share. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/report.h"

/* Parsing state: the file name and where an error happened. */
struct reader {
	const char *path;
	char *err;
	size_t err_len;
	struct report_doc *doc;
};

/* Set the one-line error "PATH: what" and return -EINVAL. */
__attribute__((format(printf, 2, 3)))
int rd_bad(struct reader *rd, const char *fmt, ...);
/* Keep a copy of s alive as long as the doc; NULL on OOM. */
const char *rd_keep(struct report_doc *doc, const char *s);
/*
 * The field helpers always set *out (to a default on error), so a caller that
 * treats a field as optional and ignores the result never reads garbage.
 */
int rd_get_obj(struct reader *rd, json_t *o, const char *key, const char *where, json_t **out);
int rd_get_u64(struct reader *rd, json_t *o, const char *key, const char *where, uint64_t *out);
int rd_first_access(struct reader *rd, json_t *o, const char *where, uint64_t *pages, double *ns_per_page);
int rd_get_num(struct reader *rd, json_t *o, const char *key, const char *where, bool optional, double dflt,
	       double *out);
int rd_get_str(struct reader *rd, json_t *o, const char *key, const char *where, bool optional, const char **out);
/* Copy the string o[key] into dst ("" when absent or not a string). */
void rd_copy_str(char *dst, size_t len, json_t *o, const char *key);
/* o[key] as an unsigned, 0 when absent, negative or not an integer. */
unsigned rd_opt_uint(json_t *o, const char *key);
/* A count that may be unreadable: -1 when absent or not an integer. */
long rd_opt_long(json_t *o, const char *key);

/* The environment and the clock calibration (read_env.c) into rd->doc. Returns 0 or -errno. */
int rd_environment(struct reader *rd, json_t *root);
