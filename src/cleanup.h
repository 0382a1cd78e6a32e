/* SPDX-License-Identifier: MIT */
/*
 * Files to remove if a signal ends tlbprof: a report's temporary file, the
 * page-fault data file. A path is added when its file is created and
 * forgotten when it is renamed or removed; main's signal handler calls
 * cleanup_run() before a fatal signal is re-raised.
 */
#pragma once

#include <signal.h>

/* At most this many files at once (a report writes one temporary file at a time, pagefault one data file). */
#define CLEANUP_SLOTS 8

/*
 * Block the signals that end tlbprof (SIGINT, SIGTERM, SIGHUP) into *old,
 * so that creating a file and adding it, or renaming it and forgetting it,
 * happen with no signal in between; cleanup_unblock() restores *old.
 */
void cleanup_block(sigset_t *old);
void cleanup_unblock(const sigset_t *old);

/* Remember path (copied) for cleanup_run(). Returns its slot, or -1 when every slot is taken or path too long. */
int cleanup_add(const char *path);

/* Forget the file of slot (from cleanup_add(); -1 is ignored). */
void cleanup_forget(int slot);

/* Unlink every remembered file. Async-signal-safe: the only caller is a signal handler. */
void cleanup_run(void);
