/* SPDX-License-Identifier: MIT */
/* perf_event_open(2) for the counters and the sampler: the system call, and what its failures mean. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

struct perf_event_attr;

/* perf_event_open(2), which glibc does not wrap. Returns the new fd, or -1 with errno set. */
int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags);

/* What a failed open means to the caller: perf stat's skip, retry and fatal. */
enum perf_open_class {
	PERF_OPEN_UNSUPPORTED,	/* ENOENT, ENODEV, EOPNOTSUPP: no such event or PMU here; skip it */
	PERF_OPEN_DENIED,	/* EACCES, EPERM: perf_event_paranoid or capabilities; retry without the kernel side */
	PERF_OPEN_ERROR,	/* anything else (EINVAL: attributes the kernel rejects, ESRCH, ENOSYS) */
};

/*
 * Classify err, the positive errno of a failed perf_event_open, and (when
 * reason is not NULL) say why in one line of at most reason_len bytes:
 * "<strerror> (<what it means>)". A denial names perf_event_paranoid's level
 * and the command that sets wanted_level (the level the caller's open needs:
 * 1 to count the kernel side, 2 to sample user space), with sudo unless the
 * process runs as root, or CAP_PERFMON.
 */
enum perf_open_class perf_open_classify(int err, int wanted_level, char *reason, size_t reason_len);
