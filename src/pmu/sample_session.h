/* SPDX-License-Identifier: MIT */
/* Private to pmu/: a sampling session's per-CPU rings and its records waiting for the time-ordered hand-over. */
#pragma once

#include "pmu/sample.h"

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

/* One CPU's event and ring. */
struct ring {
	int fd;				/* -1 for a ring of sample_session_over_rings() */
	struct perf_event_mmap_page *meta;
	void *base;			/* the mapping (one metadata page, then the data), NULL when not ours */
	size_t map_bytes;
	unsigned char *data;
	size_t data_size;		/* a power of two */
};

/* A record copied out of a ring, waiting to be handed over in time order. */
struct pending {
	uint64_t time_ns, seq;		/* seq: arrival order, for equal times */
	size_t off;			/* into the arena */
	uint16_t size;
};

struct sample_session {
	struct ring *rings;
	size_t n_rings;
	int epoll_fd;
	unsigned char *arena;		/* pending records' bytes */
	size_t arena_len, arena_cap;
	struct pending *pend;
	size_t n_pend, cap_pend;
	uint64_t seq;
	struct sample_info info;
	bool convert_time;		/* records carry the perf clock: clock_offset_ns makes it CLOCK_MONOTONIC */
	int64_t clock_offset_ns;	/* CLOCK_MONOTONIC minus the perf clock, measured at each drain */
	uint64_t throttled_seen;	/* info.throttled when the period was last set */
};

/*
 * For a session whose events have no use_clockid: measure CLOCK_MONOTONIC
 * minus the kernel's perf clock through the TSC and the first ring's
 * time_zero/time_mult/time_shift, and set convert_time. false when the
 * kernel offers no conversion (cap_user_time_zero 0, or not x86).
 */
bool sample_clock_calibrate(struct sample_session *s);
