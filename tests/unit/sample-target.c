/* SPDX-License-Identifier: MIT */
/* The program test-sample runs under sampling: it touches N fresh pages in a function with a distinctive name. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

void touch_pages_for_sampling(volatile char *buf, size_t pages, size_t page_size);

/* One write per page: one minor fault each, taken with this function's instruction address. */
void touch_pages_for_sampling(volatile char *buf, size_t pages, size_t page_size)
{
	for (size_t i = 0; i < pages; i++)
		buf[i * page_size] = (char)(i | 1);
}

/*
 * Usage: sample-target PAGES [CHUNK]. With CHUNK, after every CHUNK pages it
 * prints "chunk" and waits for a byte on stdin, so the test can drain the
 * rings between chunks (more samples in all than one ring holds).
 */
int main(int argc, char **argv)
{
	size_t pages = argc > 1 ? strtoul(argv[1], NULL, 0) : 1024;
	size_t chunk = argc > 2 ? strtoul(argv[2], NULL, 0) : pages;
	size_t page_size = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = pages * page_size;
	char *buf;

	if (pages == 0 || chunk == 0)
		return 2;
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		perror("sample-target: mmap");
		return 1;
	}
	/* Small pages, so N pages are N faults (a THP or mTHP folio would take many pages in one fault). */
	madvise(buf, len, MADV_NOHUGEPAGE);
	printf("buffer %p %zu\n", (void *)buf, len);
	fflush(stdout);
	for (size_t done = 0; done < pages; done += chunk) {
		char byte;

		touch_pages_for_sampling(buf + done * page_size, done + chunk <= pages ? chunk : pages - done, page_size);
		if (done + chunk < pages) {
			printf("chunk\n");
			fflush(stdout);
			if (read(STDIN_FILENO, &byte, 1) != 1)
				return 4;
		}
	}
	return buf[page_size] == 1 ? 0 : 3;
}
