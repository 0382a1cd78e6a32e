/* SPDX-License-Identifier: MIT */
/* Internal to the report module (src/report*.c, the only jansson users): what its JSON writers share. */
#pragma once

#include <jansson.h>
#include <stddef.h>

/*
 * Write root to path ("-" = stdout) the way every tlbprof JSON file is
 * written: a regular file through a temporary file in the same directory
 * (created exclusively) renamed over path, so a reader never sees half a
 * file and an earlier one survives a failed write; a device, FIFO or socket
 * in place; a symlink's target replaced, the link kept. what names the
 * document in the one-line error ("report", "comparison"). root is not
 * consumed. Returns 0 or -errno with the reason in err.
 */
int report_json_dump(json_t *root, const char *path, const char *what, char *err, size_t err_len);
