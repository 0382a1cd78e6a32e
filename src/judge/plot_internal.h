/* SPDX-License-Identifier: MIT */
/* What the chart layout's files (src/judge/plot*.c) share; not for other modules. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "judge/plot.h"

/*
 * Geometry of one chart, px. The legend takes the right margin; the title
 * sits above the plotting area, tick labels, the axis title and the notes
 * below it.
 */
static const double MARGIN_LEFT = 84, MARGIN_RIGHT = 236, TITLE_H = 50, AREA_H = 300, AXIS_H = 54, NOTE_H = 15,
		    BOTTOM_PAD = 16;
/* Series on one chart, at most; phases beyond it are not drawn and a note says how many. */
enum { MAX_SERIES = 32 };

/* One chart being built: what it is made of, and what it draws. */
struct plot_chart_ctx {
	const struct plot_input *in;
	struct plot_chart *c;
	const struct workload_ops *workload;	/* the phases drawn */
	bool wall_time;		/* the chart of run phases without accesses (plot_phase_wall_time) */
	bool multi_size;	/* stride: several working sets, a series each */
	size_t dropped;		/* phases beyond the series or category limits */
};

/* plot_axes.c: whether charts of kind k draw bars (a band x axis), not lines. */
bool plot_kind_is_bars(enum plot_chart_kind k);

/* plot_series.c: a tlbprof run phase that declared no accesses (drawn as wall time per occurrence). */
bool plot_phase_wall_time(const struct phase_result *r);
/* plot_series.c: whether phase r finished ok with values to draw. */
bool plot_phase_drawable(const struct phase_result *r);
/* plot_series.c: whether phase r belongs on the chart of cx (its workload, and wall time or not). */
bool plot_on_chart(const struct plot_chart_ctx *cx, const struct phase_result *r);
/*
 * plot_series.c: the chart's series (cx->c->series, owned by the chart, room
 * for MAX_SERIES) and their points from every drawable phase on the chart;
 * phases beyond the limits count in cx->dropped. 0 or -ENOMEM.
 */
int plot_fill_series(struct plot_chart_ctx *cx);
/* plot_series.c: the point of series s at x, or NULL. */
const struct plot_point *plot_point_at(const struct plot_series *s, double x);
/* plot_series.c: the series a stride phase was drawn in (its stride in *x), or SIZE_MAX. */
size_t plot_series_of_phase(const struct plot_chart_ctx *cx, size_t phase, double *x);

/* plot_labels.c: append a note under chart c, wrapped; past PLOT_MAX_NOTES lines it is cut with an ellipsis. */
__attribute__((format(printf, 2, 3)))
void plot_add_note(struct plot_chart *c, const char *fmt, ...);
/* plot_labels.c: the analysis's stride steps between points of one series (c->steps, owned). 0 or -ENOMEM. */
int plot_add_stride_steps(struct plot_chart_ctx *cx);
/* plot_labels.c: the knees of a tlbsize chart and the TLB capacities CPUID reports, as markers, with their notes. */
void plot_add_tlbsize_markers(struct plot_chart_ctx *cx);
/* plot_labels.c: each stride step label above or below its segment (after the y axis). */
void plot_place_steps(struct plot_chart *c);
/* plot_labels.c: each marker label's side and row (after the axes and the area). */
void plot_place_marker_labels(struct plot_chart *c);

/* plot_place.c: each bar's value label, clear of every whisker and of the labels placed before it. */
void plot_place_value_labels(struct plot_chart *c);
/* plot_place.c: each stride step label's position, moved off the step labels placed before it. */
void plot_place_step_labels(struct plot_chart *c);
/* plot_place.c: the document's footer (machine, kernel, command, report, date, version) under its charts. */
void plot_build_footer(const struct plot_input *in, struct plot *p);

/* plot_axes.c: the chart's x axis, from its kind, points, markers and categories. */
void plot_layout_x_axis(struct plot_chart *c);
/* The spreads plot_layout_y_axis() cut at the top of the chart: how many, and the highest value cut. */
struct plot_cut {
	size_t points;
	double worst;
};
/* plot_axes.c: the chart's y axis over its points' medians and spreads; *cut: what reaches past its top. */
void plot_layout_y_axis(struct plot_chart *c, struct plot_cut *cut);

/* plot.c: the axes, then the chart's geometry in px from top, then what sits on it. */
void plot_lay_out(struct plot_chart *c, double top);
/* plot_intervals.c: the chart of in->intervals (run -I) with its upper edge at top. 0 or -ENOMEM. */
int plot_build_intervals_chart(const struct plot_input *in, double top, struct plot_chart *c);
