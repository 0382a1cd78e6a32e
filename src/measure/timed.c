/* SPDX-License-Identifier: MIT */
/* One timed sample of a workload (timed.h): counters around it, chunks a stop request can end. */
#include "measure/timed.h"

#include "machine/timing.h"

uint64_t timed_run_chunks(const struct workload_ops *w, void *state, uint64_t accesses, volatile sig_atomic_t *stop)
{
	uint64_t done = 0;

	if (w->per_sample_memory) {
		w->run(state, accesses);
		return accesses;
	}
	while (done < accesses) {
		uint64_t n = accesses - done < TIMED_CHUNK_ACCESSES ? accesses - done : TIMED_CHUNK_ACCESSES;
		w->run(state, n);
		done += n;
		if (done < accesses && stop && *stop)
			break;
	}
	return done;
}

uint64_t timed_sample(const struct workload_ops *w, void *state, uint64_t accesses, struct counter_set *cs,
		      volatile sig_atomic_t *stop)
{
	if (cs)
		counter_set_enable(cs);
	uint64_t t0 = timing_now_ns();
	uint64_t done = timed_run_chunks(w, state, accesses, stop);
	uint64_t t1 = timing_now_ns();
	if (cs) {
		counter_set_hint_accesses(cs, done);
		counter_set_disable(cs);
	}
	return done < accesses ? TIMED_STOPPED : t1 - t0;
}
