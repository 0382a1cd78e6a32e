/* SPDX-License-Identifier: MIT */
/*
 * Where the counters' perf_event calls go: the kernel, or a PMU model that
 * schedules counters the way the kernel does (pmu/simpmu.h), so that the
 * counting path is tested without hardware. One seam, four calls.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perf_event_attr;
struct counter_phase_hint;

struct pmu_backend {
	const char *name;		/* "kernel", "simulated skx-smt", ... */
	/* perf_event_open(2): the new fd, or -1 with errno set. */
	int (*open)(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags);
	/* ioctl(2) on an event fd: 0, or -1 with errno set. */
	int (*ioctl)(int fd, unsigned long request, unsigned long arg);
	/* read(2) of an event fd. */
	ssize_t (*read)(int fd, void *buf, size_t len);
	/* close(2) of an event fd. */
	int (*close)(int fd);
	/* mmap(2) of an event fd's ring, len bytes shared read-write: the mapping, or MAP_FAILED with errno; NULL: none. */
	void *(*map)(int fd, size_t len);
	/* Whether a core PMU exists at all (sysfs event_source/devices/cpu, or the model's). */
	bool (*has_core_pmu)(void);
	/*
	 * What the measured phase is, and the accesses each run made while the
	 * events were enabled, for a backend that models its counts per access
	 * (the simulated PMU); NULL in the kernel's, which counts for real.
	 */
	void (*hint_phase)(const struct counter_phase_hint *h);
	void (*hint_accesses)(uint64_t accesses);
};

/* The backend in use: the kernel unless pmu_backend_set() chose another. */
const struct pmu_backend *pmu_backend(void);
/* Use b from now on (NULL: the kernel again); for tests and the simulated PMU. */
void pmu_backend_set(const struct pmu_backend *b);
/* The kernel's own calls, for a backend that passes some events through (software events). */
extern const struct pmu_backend pmu_backend_kernel;
