/* SPDX-License-Identifier: MIT */
/*
 * A command whose time is all in libc and the kernel, none in its own code: it times one memset of argv[1] MiB
 * (first touch: the kernel's fault path, then libc's stores) between two clock reads. tlbprof run must still find
 * its hot thread (the busiest one) and judge its clock reads, though the hot loop stays unknown.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
	size_t bytes = (size_t)(argc > 1 ? strtoul(argv[1], NULL, 10) : 256) << 20;
	char *p = malloc(bytes);
	struct timespec a, b;

	if (!p)
		return 3;
	clock_gettime(CLOCK_MONOTONIC, &a);
	memset(p, 1, bytes);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("memset: %.1f ms (%d)\n", (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6,
	       p[bytes / 2]);
	free(p);
	return 0;
}
