/* SPDX-License-Identifier: MIT */
/* A file read whole into a growable buffer: /proc files of no known size, and regular files read after checks. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/*
 * Read fd from where it stands to its end into *buf (grown as needed, *cap
 * its size; both may start NULL and 0 and are kept for the next read),
 * NUL-terminated. A read interrupted by a signal is retried. At most max
 * bytes: a file longer than that is -EFBIG. Returns the length read, or
 * -errno (-ENOMEM when the buffer cannot grow); *buf is then still the
 * caller's to free. fd stays open.
 */
ssize_t read_all(int fd, char **buf, size_t *cap, size_t max);
