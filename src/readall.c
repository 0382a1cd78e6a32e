/* SPDX-License-Identifier: MIT */
/* read_all(): a file to its end, into a growable buffer. */
#include "readall.h"

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "grow.h"

/* The first buffer: a /proc/PID/maps or status fits, a big smaps doubles it a few times. */
#define READ_ALL_FIRST 65536

ssize_t read_all(int fd, char **buf, size_t *cap, size_t max)
{
	size_t len = 0, limit = max < SIZE_MAX ? max + 1 : SIZE_MAX;

	for (;;) {
		/* Room for a read of 4 KiB or more and the NUL, and one byte past max to see a longer file. */
		if (!array_grow((void **)buf, cap, len + 4096 + 1, 1, READ_ALL_FIRST))
			return -ENOMEM;
		size_t room = *cap - len - 1;
		if (room > limit - len)
			room = limit - len;
		ssize_t r = read(fd, *buf + len, room);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > max)
			return -EFBIG;
	}
	(*buf)[len] = '\0';
	return (ssize_t)len;
}
