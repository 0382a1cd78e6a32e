/* SPDX-License-Identifier: MIT */
/* Private to pmu/: the counter set that events.c resolves and encodes and counters.c opens, reads and closes. */
#pragma once

#include "pmu/counters.h"

#include <perfmon/pfmlib_perf_event.h>

struct counter_event {
	struct counter_info info;
	struct perf_event_attr attr;	/* as encoded; open() adjusts a copy */
	bool encoded;			/* attr is valid */
	int fd;				/* -1 when not open */
	bool leader;			/* fd leads a group (enable/disable/reset target) */
	size_t group;			/* index in events[] of its group's leader (itself for a leader) */
	uint64_t id;			/* the kernel's event id (PERF_EVENT_IOC_ID): its row in a group read */
	uint64_t base_enabled_ns;	/* times at the last reset (see counter_set_reset) */
	uint64_t base_running_ns;
	/* Status and note as opened; each read starts from them, so one multiplexed reading does not stick. */
	enum counter_status open_status;
	char open_reason[sizeof(((struct counter_info *)0)->reason)];
};

struct counter_threads;

/*
 * A count as counter_set_read() gives it: a software event's as it is (the software PMU never runs out of
 * counters, and task-clock's few us less running than enabled per enable/disable cycle are no reason to scale),
 * any other's scaled by enabled/running (counter_scale(), which says in *multiplexed, where not NULL, whether
 * it was).
 */
double counter_event_scale(const struct counter_event *ev, uint64_t value, uint64_t enabled_ns, uint64_t running_ns,
			   bool *multiplexed);

/* counters_threads.c, for counters.c: set the exit records up after the groups opened, and take them down. */
void counter_threads_open(struct counter_set *set);
void counter_threads_close(struct counter_set *set);

struct counter_set {
	struct counter_event *events;
	size_t n;
	char pmu_name[64];
	char pmu_desc[128];
	char pmu_basis[240];		/* why this PMU's map (pmu_choose()) */
	int pmu_num_cntrs;		/* generic counters libpfm4 reports; 0 unknown */
	bool forced;			/* LIBPFM_FORCE_PMU was set */
	/* What open() attaches to: the calling thread (pid 0), or another process (counter_set_open_task). */
	pid_t pid;
	bool inherit;
	bool enable_on_exec;
	/* Per thread (counters_threads.c): asked for, and the exit records' ring and what they told; owned. */
	bool track_threads;
	struct counter_threads *threads;
	/* The PMU map's precise dTLB-miss sampling event, encoded (counter_set_sample_event). */
	struct counter_sample_event sample_dtlb;
	int sample_dtlb_err;		/* 0, or -errno with sample_dtlb_reason */
	char sample_dtlb_reason[320];
};
