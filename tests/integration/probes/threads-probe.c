/* SPDX-License-Identifier: MIT */
/*
 * A command whose tasks fault a known number of pages each, for run --per-thread: two threads touch
 * argv[1] and argv[2] fresh pages, a child process argv[3], and the first thread argv[4] after they are done.
 * Each touch is one write per 4 KiB page of its own mapping with MADV_NOHUGEPAGE, so a page is one fault.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void *touch(void *arg)
{
	size_t pages = (size_t)(uintptr_t)arg, page = 4096;
	volatile char *p = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(3);
	madvise((void *)p, pages * page, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < pages; i++)
		p[i * page] = 1;
	munmap((void *)p, pages * page);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	int status;

	if (argc != 5)
		return 2;
	if (pthread_create(&a, NULL, touch, (void *)(uintptr_t)strtoul(argv[1], NULL, 10)) != 0 ||
	    pthread_create(&b, NULL, touch, (void *)(uintptr_t)strtoul(argv[2], NULL, 10)) != 0)
		return 3;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pid_t child = fork();
	if (child == 0) {
		touch((void *)(uintptr_t)strtoul(argv[3], NULL, 10));
		_exit(0);
	}
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 3;
	touch((void *)(uintptr_t)strtoul(argv[4], NULL, 10));
	return 0;
}
