/* SPDX-License-Identifier: MIT */
/*
 * One timed sample of a workload, run in chunks so that a stop request
 * (Ctrl-C) is seen within one chunk even in a sample of 2^40 accesses.
 */
#pragma once

#include <signal.h>
#include <stdint.h>

#include "measure/workload.h"
#include "pmu/counters.h"

/*
 * Accesses per chunk: 4 Mi, 6 ms at an L1 hit, under a second at DRAM
 * latency. Between two chunks the only extra work is one function return and
 * one load of the stop flag, a few ns against milliseconds: the sample's
 * time stays the time of its accesses.
 */
#define TIMED_CHUNK_ACCESSES (1ull << 22)

/* timed_sample()'s answer when a stop request cut the sample short. */
#define TIMED_STOPPED UINT64_MAX

/*
 * Run w over accesses with the counters cs (NULL: none) enabled around it
 * and time it. A workload whose run continues where the last one ended
 * (every one but per_sample_memory, whose sample is one touch of fresh
 * memory) runs in chunks of TIMED_CHUNK_ACCESSES with *stop (NULL: never)
 * read between them. Returns the elapsed ns, or TIMED_STOPPED when *stop
 * was raised before the last chunk: such a sample is dropped, never kept
 * short (its counts stay in cs; its phase ends as interrupted).
 */
uint64_t timed_sample(const struct workload_ops *w, void *state, uint64_t accesses, struct counter_set *cs,
		      volatile sig_atomic_t *stop);

/* The same chunks untimed (a warm-up): returns the accesses run, fewer than accesses when *stop was raised. */
uint64_t timed_run_chunks(const struct workload_ops *w, void *state, uint64_t accesses, volatile sig_atomic_t *stop);
