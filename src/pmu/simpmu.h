/* SPDX-License-Identifier: MIT */
/*
 * A simulated core PMU behind the counters' backend seam (pmu/backend.h),
 * scheduling counters the way the kernel does, so that the counting path is
 * tested on machines without one:
 * - generic and fixed counters, with per-event counter masks (Intel: the
 *   dTLB, load and L3-miss events on counters 0-3 only; the architectural
 *   cycles and instructions on their fixed counters when free);
 * - an NMI watchdog (a pinned cycles event: Intel's fixed counter 1, a
 *   generic counter on AMD) and another user's pinned events holding counters;
 * - flexible groups in list order, all or nothing: the first group that does
 *   not fit stops the groups after it, and the list rotates by one group
 *   every multiplexing interval (4 ms) while any group is left out
 *   (merge_sched_in, ctx_event_to_rotate);
 * - EINVAL on open for a group that can never fit, even on an empty PMU;
 * - deterministic counts: each event counts at a rate per ns that the caller
 *   sets, while it is on a counter; the model keeps the true count (the rate
 *   over all enabled time), so tests can assert that scaling recovers it.
 * Software events pass through to the kernel. Single-threaded, like the runner.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pmu_backend;

/*
 * Configure the model from "MODEL[,watchdog][,others=N]": MODEL one of
 * simpmu_model_at()'s names ("skx-smt", "skx", "icx", "spr", "emr", "zen3",
 * "zen4"), watchdog an NMI watchdog, others=N another user's N pinned generic
 * events. Clears every event and rate. 0, or -EINVAL with why.
 */
int simpmu_configure(const char *spec, char *why, size_t why_len);
/* The i-th model name, NULL past the last. */
const char *simpmu_model_at(size_t i);
/* The libpfm4 PMU whose encodings the configured model counts ("skx", "amd64_fam19h_zen3"). */
const char *simpmu_pfm_pmu(void);
/* The backend that opens hardware events on the model (pmu_backend_set() it). */
const struct pmu_backend *simpmu_backend(void);

/* The key of an event's rate: its type and, for raw events, event code and umask. */
uint64_t simpmu_event_key(uint32_t type, uint64_t config);
/* Count events of key at per_ns per nanosecond on a counter (0 by default). */
void simpmu_set_rate(uint64_t key, double per_ns);
/* The clock the model's time runs on (ns; NULL: CLOCK_MONOTONIC). Tests step it by hand. */
void simpmu_set_clock(uint64_t (*now_ns)(void));
/* What a counter that never left its event would have counted since the last reset; false: not a model fd. */
bool simpmu_true_count(int fd, double *count);
