/* SPDX-License-Identifier: MIT */
/*
 * The chart of tlbprof run -I: each counter's rate in each interval against
 * the time since exec, one line per counter, as perf stat -I prints them.
 * Rates of different counters differ by orders of magnitude (task-clock in
 * ns per second against page faults per second), so the y axis goes log2
 * where they span more than the axis' ratio; an interval with a count of 0
 * has no place on a log axis and is left out (a note says how many).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/plot_internal.h"

static const char *const line_colors[] = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
					   "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f" };

/* The unit a counter's rate is in: task-clock and cpu-clock count ns. */
static const char *rate_unit(const char *counter)
{
	return strcmp(counter, "task-clock") == 0 || strcmp(counter, "cpu-clock") == 0 ? "ns/s" : "/s";
}

/* Series s of c from counter v: its positive rates; *zeros counts the intervals left out. */
static int fill(struct plot_chart *c, const struct plot_intervals *iv, const struct plot_interval_series *v,
		size_t *zeros)
{
	struct plot_series *s = &c->series[c->n_series];
	double start = 0;
	bool gap = false;

	s->points = calloc(iv->n ? iv->n : 1, sizeof(*s->points));
	if (!s->points)
		return -ENOMEM;
	for (size_t i = 0; i < iv->n; i++) {
		double len_s = (iv->end_ns[i] - start) / 1e9, rate = len_s > 0 ? v->values[i] / len_s : 0;
		start = iv->end_ns[i];
		if (!(rate > 0) || !isfinite(rate)) {
			++*zeros;
			gap = true;
			continue;
		}
		/* A line across intervals left out would draw rates nobody measured: it breaks there. */
		bool joined = !gap || !s->n;
		s->points[s->n] = (struct plot_point){ .x = iv->end_ns[i] / 1e6, .y = rate, .lo = rate, .hi = rate,
						       .samples = 1, .phase = SIZE_MAX, .gap_before = !joined };
		s->n++;
		gap = false;
	}
	if (!s->n) {
		free(s->points);
		s->points = NULL;
		return 0;
	}
	snprintf(s->key, sizeof(s->key), "%s", v->name);
	snprintf(s->label, sizeof(s->label), "%s (%s)", v->name, rate_unit(v->name));
	snprintf(s->color, sizeof(s->color), "%s", line_colors[c->n_series % (sizeof(line_colors) /
									    sizeof(line_colors[0]))]);
	c->n_series++;
	return 0;
}

int plot_build_intervals_chart(const struct plot_input *in, double top, struct plot_chart *c)
{
	const struct plot_intervals *iv = in->intervals;
	size_t zeros = 0;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	c->kind = PLOT_CHART_INTERVALS;
	c->workload = "run";
	c->series = calloc(MAX_SERIES, sizeof(*c->series));
	if (!c->series)
		return -ENOMEM;
	for (size_t k = 0; k < iv->n_series && c->n_series < MAX_SERIES && !rc; k++)
		rc = fill(c, iv, &iv->series[k], &zeros);
	if (rc)
		return rc;
	snprintf(c->title, sizeof(c->title), "command: each counter's rate in each %u ms interval (-I)", iv->interval_ms);
	snprintf(c->x.title, sizeof(c->x.title), "time since exec (ms)");
	snprintf(c->y.title, sizeof(c->y.title), "count per second");
	plot_add_note(c, "A point is an interval's count over its length, at its end; the last interval is cut short "
			 "by the exit. %zu interval%s of %zu counter%s, from target.intervals.", iv->n,
		      iv->n == 1 ? "" : "s", iv->n_series, iv->n_series == 1 ? "" : "s");
	if (zeros)
		plot_add_note(c, "%zu interval%s with a count of 0 not drawn (no place on a log axis).", zeros,
			      zeros == 1 ? "" : "s");
	if (in->interrupted)
		plot_add_note(c, "The run was interrupted: the intervals end there.");
	plot_lay_out(c, top);
	return 0;
}
