/* SPDX-License-Identifier: MIT */
/* read_all(): a pipe in pieces, a /proc file of no known size, the bound, an empty file, a reused buffer. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readall.h"
#include "check.h"

/* A pipe holding text, its write end closed: read() hands it over in the pieces it was written. */
static int pipe_of(const char *const *pieces, size_t n)
{
	int p[2];

	if (pipe(p) != 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (write(p[1], pieces[i], strlen(pieces[i])) != (ssize_t)strlen(pieces[i]))
			return -1;
	close(p[1]);
	return p[0];
}

int main(void)
{
	char *buf = NULL;
	size_t cap = 0;
	static const char *const pieces[] = { "7f00-7f10 r-xp ", "00000000 00:00 0 ", "[vdso]\n" };

	int fd = pipe_of(pieces, 3);
	ssize_t n = read_all(fd, &buf, &cap, 1 << 20);
	CHECK(n == 39 && strcmp(buf, "7f00-7f10 r-xp 00000000 00:00 0 [vdso]\n") == 0 && cap >= 65536,
	      "three writes read whole: %zd bytes, '%s'", n, buf ? buf : "");
	close(fd);

	/* At the bound exactly, and one byte past it. */
	fd = pipe_of(pieces, 3);
	CHECK(read_all(fd, &buf, &cap, 39) == 39, "39 bytes at a bound of 39");
	close(fd);
	fd = pipe_of(pieces, 3);
	CHECK(read_all(fd, &buf, &cap, 38) == -EFBIG, "39 bytes past a bound of 38: -EFBIG");
	close(fd);

	/* Empty: length 0 and an empty string, in the buffer kept from before. */
	fd = pipe_of(pieces, 0);
	size_t kept = cap;
	CHECK(read_all(fd, &buf, &cap, 1 << 20) == 0 && buf[0] == '\0' && cap == kept, "empty: 0, '', buffer kept");
	close(fd);

	/* A /proc file, generated as it is read and longer than the first buffer on a busy machine or not. */
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read_all(fd, &buf, &cap, (size_t)-1) : -1;
	CHECK(n > 0 && (size_t)n == strlen(buf) && buf[n - 1] == '\n' && strstr(buf, "[stack]"),
	      "/proc/self/maps to its end, no size bound: %zd bytes", n);
	if (fd >= 0)
		close(fd);

	CHECK(read_all(-1, &buf, &cap, 100) == -EBADF, "a bad descriptor: -EBADF");
	free(buf);
	return check_finish();
}
