/* SPDX-License-Identifier: MIT */
/* The files a fatal signal must not leave behind (cleanup.h): fixed slots a signal handler can read. */
#include "cleanup.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

/*
 * A handler may only read what is fully written: the path is copied first
 * and the slot marked used after it, both with the fatal signals blocked.
 */
static struct {
	volatile sig_atomic_t used;
	char path[PATH_MAX];
} slots[CLEANUP_SLOTS];

void cleanup_block(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, old);
}

void cleanup_unblock(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

int cleanup_add(const char *path)
{
	size_t n = strlen(path);

	if (n >= sizeof(slots[0].path))
		return -1;
	for (int i = 0; i < CLEANUP_SLOTS; i++) {
		if (slots[i].used)
			continue;
		memcpy(slots[i].path, path, n + 1);
		slots[i].used = 1;
		return i;
	}
	return -1;
}

void cleanup_forget(int slot)
{
	if (slot >= 0 && slot < CLEANUP_SLOTS)
		slots[slot].used = 0;
}

void cleanup_run(void)
{
	for (int i = 0; i < CLEANUP_SLOTS; i++)
		if (slots[i].used) {
			unlink(slots[i].path);
			slots[i].used = 0;
		}
}
