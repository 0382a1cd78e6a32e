/* SPDX-License-Identifier: MIT */
/* The one perf_event_open(2) wrapper, and the one place that says what each of its errors means. */
#include "pmu/perf_open.h"

#include "pmu/paranoid.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	return (int)syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);
}

static const char unsupported[] = "the event is not supported here: no such PMU event, or the hypervisor hides the PMU";

/* Errnos perf_event_open(2) documents, what each means for the event, and what to do about it. */
static const struct {
	int err;
	enum perf_open_class class;
	const char *why;	/* NULL for a denial: its text names the level and the fix */
} open_errors[] = {
	{ EACCES, PERF_OPEN_DENIED, NULL },
	{ EPERM, PERF_OPEN_DENIED, NULL },
	{ ENOENT, PERF_OPEN_UNSUPPORTED, unsupported },
	{ ENODEV, PERF_OPEN_UNSUPPORTED, unsupported },
	{ EOPNOTSUPP, PERF_OPEN_UNSUPPORTED, unsupported },
	{ EINVAL, PERF_OPEN_ERROR, "the kernel rejects the event's attributes for this PMU (its encoding, "
				   "precise_ip, period or sample type)" },
	{ ESRCH, PERF_OPEN_ERROR, "no such process" },
	{ ENOSYS, PERF_OPEN_ERROR, "perf_event_open is not available: a kernel without perf events, or seccomp "
				   "blocks it" },
};

enum perf_open_class perf_open_classify(int err, int wanted_level, char *reason, size_t reason_len)
{
	enum perf_open_class class = PERF_OPEN_ERROR;
	const char *why = "perf_event_open failed";

	for (size_t i = 0; i < sizeof(open_errors) / sizeof(open_errors[0]); i++) {
		if (open_errors[i].err == err) {
			class = open_errors[i].class;
			why = open_errors[i].why;
			break;
		}
	}
	if (!reason)
		return class;
	if (class == PERF_OPEN_DENIED) {
		char level[16], fix[64];

		paranoid_level_text(paranoid_level(), level, sizeof(level));
		paranoid_fix(wanted_level, geteuid() == 0, fix, sizeof(fix));
		snprintf(reason, reason_len, "%s (perf_event_paranoid=%s; allow with '%s' or CAP_PERFMON)",
			 strerror(err), level, fix);
	} else {
		snprintf(reason, reason_len, "%s (%s)", strerror(err), why);
	}
	return class;
}
