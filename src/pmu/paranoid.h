/* SPDX-License-Identifier: MIT */
/* perf_event_paranoid: the kernel's level, read once per process, and the command that sets the level wanted. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The level when /proc/sys/kernel/perf_event_paranoid cannot be read or is not a decimal integer. */
#define PARANOID_UNKNOWN INT32_MIN

/*
 * The level in /proc/sys/kernel/perf_event_paranoid ("2\n" -> 2), or
 * PARANOID_UNKNOWN. Read on the first call and cached for the process: only
 * an administrator's sysctl changes it, and tlbprof never does, so every
 * message of one run names the same level. Safe to call from any thread.
 */
int paranoid_level(void);

/* level as text for a message: "2", or "unknown" for PARANOID_UNKNOWN. */
void paranoid_level_text(int level, char *buf, size_t len);

/*
 * The shell command that sets the level to wanted:
 * "sysctl kernel.perf_event_paranoid=WANTED", with "sudo " in front unless
 * root (the caller says; tlbprof env decides from the facts it collected).
 */
void paranoid_fix(int wanted, bool root, char *buf, size_t len);
