/* SPDX-License-Identifier: MIT */
/*
 * tlbprof run -I MS, as perf stat -I MS: the whole command's counters read
 * every MS from exec, each interval's counts the difference from the last
 * read. The reads happen in the serve loop, between channel work, so an
 * interval ends within a poll wake-up of its due time; each row records when
 * it really ended, and the last row is cut short by the exit.
 */
#include "target/internal.h"

#include <stdlib.h>
#include <string.h>

#include "machine/timing.h"

void target_intervals_start(struct target_state *st, uint64_t exec_ns)
{
	if (!st->opt->interval_ms || !st->n_counters)
		return;
	st->interval_prev = calloc(st->n_counters, sizeof(*st->interval_prev));
	if (!st->interval_prev)
		return;
	st->tr->interval_ms = st->opt->interval_ms;
	st->interval_start_ns = exec_ns;
	st->interval_next_ns = exec_ns + (uint64_t)st->opt->interval_ms * 1000000u;
}

int target_intervals_timeout_ms(const struct target_state *st, int max_ms)
{
	return st->interval_prev ? target_ms_until(st->interval_next_ns, timing_now_ns(), max_ms) : max_ms;
}

/* One row: the counts since the last row, ending now_ns. */
static void add_row(struct target_state *st, uint64_t now_ns)
{
	struct target_result *tr = st->tr;
	size_t n = st->n_counters, rows = tr->n_intervals + 1;
	struct counter_reading *counts = realloc(tr->interval_counts, rows * n * sizeof(*counts));

	if (!counts)
		return;
	tr->interval_counts = counts;
	double *ends = realloc(tr->interval_end_ns, rows * sizeof(*ends));
	if (!ends)
		return;
	tr->interval_end_ns = ends;
	counter_set_read(st->ctx->counters, st->snap_end);
	struct counter_reading *row = counts + tr->n_intervals * n;
	memset(row, 0, n * sizeof(*row));
	for (size_t i = 0; i < n; i++) {
		counter_reading_add_delta(&row[i], &st->interval_prev[i], &st->snap_end[i],
					  counter_set_info(st->ctx->counters, i)->hardware);
		st->interval_prev[i] = st->snap_end[i];
	}
	ends[tr->n_intervals++] = (double)(now_ns - st->interval_start_ns);
}

void target_intervals_tick(struct target_state *st, bool at_exit)
{
	if (!st->interval_prev)
		return;
	uint64_t now = timing_now_ns(), step = (uint64_t)st->opt->interval_ms * 1000000u;

	if (now >= st->interval_next_ns) {
		add_row(st, now);
		/* A late wake-up skips the ends it missed rather than record rows of nothing. */
		while (st->interval_next_ns <= now)
			st->interval_next_ns += step;
	} else if (at_exit) {
		add_row(st, now);
	}
}

void target_intervals_close(struct target_state *st)
{
	free(st->interval_prev);
	st->interval_prev = NULL;
}
