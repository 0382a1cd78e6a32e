/* SPDX-License-Identifier: MIT */
/* Chart layout for `tlbprof plot`: which charts a report gets, their series, scales, ticks and geometry, as data. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "judge/analysis.h"
#include "machine/environment.h"
#include "measure/phase.h"
#include "measure/workload.h"

#define PLOT_MAX_TICKS 24
#define PLOT_MAX_NOTES 6
#define PLOT_MAX_MARKERS 24
#define PLOT_MAX_CATEGORIES 24
#define PLOT_MAX_FOOTER 4

/* Page width in px; every chart is this wide and they stack vertically. */
#define PLOT_WIDTH_PX 960.0
/* The size of label text, px (tick, value, step, marker and legend labels). */
#define PLOT_LABEL_FONT_PX 11.0

/* How an axis maps values to pixels. */
enum plot_scale {
	PLOT_SCALE_LINEAR,	/* value -> px, linearly; ticks at 1-2-5 x 10^k */
	PLOT_SCALE_LOG2,	/* log2(value) -> px; ticks at powers of two */
	PLOT_SCALE_BAND,	/* categories 0 .. n-1, each a band of width 1 (bar charts) */
};
/* "linear", "log2", "band". */
const char *plot_scale_name(enum plot_scale s);

/* What an axis value counts, so its tick labels can carry the unit. */
enum plot_unit {
	PLOT_UNIT_BYTES,	/* binary units: "4 KiB", "1 GiB" */
	PLOT_UNIT_COUNT,	/* plain integers: pages */
	PLOT_UNIT_NS,		/* nanoseconds, decimals as the tick step needs */
	PLOT_UNIT_MS,		/* milliseconds (wall time of a run phase's occurrences; time since exec) */
	PLOT_UNIT_PER_S,	/* a count per second (tlbprof run -I: each interval's count over its length) */
	PLOT_UNIT_CATEGORY,	/* band axis: the labels are the categories */
};

struct plot_tick {
	double value;
	char label[32];
};

struct plot_axis {
	enum plot_scale scale;
	enum plot_unit unit;
	double min, max;		/* the domain shown (band: 0 .. categories) */
	char title[64];			/* with the unit: "working set (log scale)", "ns per access" */
	struct plot_tick ticks[PLOT_MAX_TICKS];
	size_t n_ticks;
};

/* One measured point: the median and the spread of its samples. */
struct plot_point {
	double x;			/* axis value (band axis: the category index) */
	double y;			/* median of the samples */
	double lo, hi;			/* 25th and 75th percentile of the samples (== y with one sample) */
	size_t samples;
	size_t phase;			/* index into the report's phases (SIZE_MAX: none, an interval) */
	bool gap_before;		/* the line does not join it to the point before (intervals left out between) */
	/* Bar charts: the value printed over the bar, centred at label_x_px on baseline label_y_px. */
	char value_label[24];
	double label_x_px, label_y_px;
};

/* A series: one page size (and, where a chart mixes them, one working-set size). */
struct plot_series {
	char key[48];			/* stable id: "4k", "2m", "4k:packed", "4k/16M" */
	char label[80];			/* legend text */
	char color[8];			/* "#rrggbb" */
	bool control;			/* a packed control: drawn dashed */
	double hatch_deg;		/* the angle of its spread band's hatching: bands of two series cross, never blend */
	struct plot_point *points;	/* owned; sorted by x */
	size_t n;
};

enum plot_marker_kind {
	PLOT_MARKER_KNEE,		/* a candidate knee from the analysis (vertical line at x) */
	PLOT_MARKER_CPUID,		/* a TLB capacity CPUID reports (dashed vertical line at x) */
};

struct plot_marker {
	enum plot_marker_kind kind;
	double x;			/* knee: pages before the step; CPUID: entries */
	double x_after;			/* knee: the first point on the higher level */
	const char *level;		/* CPUID: "l1d_4k_entries", "l2d_4k_entries" (static) */
	char label[64];
	double label_x_px;		/* where its label is anchored: its left end, or its right end with label_end */
	bool label_end;			/* the label sits left of its line (no room on the right) */
	double label_y_px;		/* its baseline (rows, so neighbouring labels do not overlap) */
};

/* A stride step's label between two points of a series. */
struct plot_step {
	size_t series;
	double x_from, x_to;		/* strides, bytes */
	double x, y;			/* the segment's midpoint: log midpoint of the strides, mean of the medians */
	bool above;			/* the label goes above the segment (else below) */
	const char *label;		/* "cache", "tlb", "flat", "within-page", "cache+tlb" (static) */
	double label_x_px, label_y_px;	/* its centre and baseline, clear of the other labels */
};

enum plot_chart_kind {
	PLOT_CHART_SIZE_SWEEP,		/* ns/access vs working set, one line per page size */
	PLOT_CHART_PAGE_BARS,		/* one working set: a bar per page size (and control) */
	PLOT_CHART_TLBSIZE,		/* ns/access vs pages touched, knees and CPUID capacities */
	PLOT_CHART_STRIDE,		/* ns/access vs stride, step labels */
	PLOT_CHART_FAULT_BARS,		/* ns/page per page-fault case and page size */
	PLOT_CHART_RUN_BARS,		/* tlbprof run: ns/access per marked phase name, coloured by declared page */
	PLOT_CHART_WALL_BARS,		/* tlbprof run phases that declared no accesses: ms per occurrence */
	PLOT_CHART_INTERVALS,		/* tlbprof run -I: each counter's rate per interval over time */
};
/* "size-sweep", "page-bars", "tlbsize", "stride", "pagefault", "run-phases", "wall-time", "intervals". */
const char *plot_chart_kind_name(enum plot_chart_kind k);

/* A rectangle in px, origin top left. */
struct plot_rect {
	double x, y, w, h;
};

struct plot_chart {
	enum plot_chart_kind kind;
	const char *workload;		/* the workload drawn (static, from the registry) */
	char title[160];
	struct plot_axis x, y;
	double y_title_x_px;		/* the rotated y axis title's centre, clear of the longest tick label */
	char categories[PLOT_MAX_CATEGORIES][48];	/* band axis labels (also its ticks) */
	size_t n_categories;
	struct plot_series *series;	/* owned */
	size_t n_series;
	struct plot_marker markers[PLOT_MAX_MARKERS];
	size_t n_markers;
	struct plot_step *steps;	/* owned */
	size_t n_steps;
	const char *spread_label;	/* legend text for the band or whiskers (static); NULL: no point has a spread */
	char notes[PLOT_MAX_NOTES][160];	/* lines printed under the chart */
	size_t n_notes;
	/* Geometry, px: the chart's frame, the plotting area inside it, the legend's top left. */
	struct plot_rect frame, area;
	double legend_x, legend_y;
	double notes_y_px, note_h_px;	/* baseline of the first note, distance between notes */
};

struct plot {
	char title[200];		/* the document's <title> */
	struct plot_chart *charts;	/* owned, stacked top to bottom */
	size_t n_charts;
	double width_px, height_px;	/* the layout's own px (the viewBox) */
	double render_width_px;		/* the picture's width when drawn (0: width_px); the height follows */
	/* Where the picture came from, printed under the last chart so a shared PNG keeps it. */
	char footer[PLOT_MAX_FOOTER][200];
	size_t n_footer;
	double footer_y_px, footer_h_px;	/* baseline of the first footer line, distance between lines */
};

/* tlbprof run -I: one counter's count in each interval. */
struct plot_interval_series {
	char name[48];			/* the counter: "page-faults", "task-clock" */
	double *values;			/* one count per interval (owned by whoever filled it) */
};

/* tlbprof run -I MS: the whole command's counts in each interval (the report's target.intervals). */
struct plot_intervals {
	unsigned interval_ms;
	size_t n;			/* intervals */
	double *end_ns;			/* each one's end, ns after exec (the last may be cut short by the exit) */
	struct plot_interval_series *series;
	size_t n_series;
};

/* What a plot is made of; all borrowed. */
struct plot_input {
	const struct phase_result *phases;
	size_t n;
	const struct analysis *analysis;	/* analysis_run() over the same phases */
	const struct environment *env;		/* may be NULL: no CPUID reference lines */
	bool interrupted;
	const char *source;			/* the report's file name, for the title; may be NULL */
	const char *command;			/* the command that measured, as one line; may be NULL */
	const char *measured_at;		/* when it was measured, as the report says ("2026-05-01 12:00 UTC"); may be NULL */
	const char *date;			/* else when its file was written ("2026-05-01 12:00 UTC"); may be NULL */
	const char *measured_by;		/* the version of the tlbprof that wrote the report; may be NULL */
	const char *version;			/* the drawing tlbprof's version */
	const struct plot_intervals *intervals;	/* run -I: a chart of the counts over time; NULL: none */
};

/*
 * Choose the charts for a report and lay them out: one chart per workload
 * present among the phases that finished ok (in order of first appearance),
 * its kind from plot_chart_kind_for(); tlbprof run phases that declared no
 * accesses get a chart of their own (wall time per occurrence). Failed or
 * skipped phases are not drawn; a note on the chart names how many.
 * Returns 0, -ENODATA when no phase finished ok (nothing to draw; *out is
 * empty), or -ENOMEM. Free with plot_free().
 */
int plot_build(const struct plot_input *in, struct plot *out);
void plot_free(struct plot *p);

/*
 * The chart a workload's phases get, by what tells them apart (its sweep):
 * wall_time (tlbprof run phases that declared no accesses) or a whole
 * command -> wall-time bars per phase name; fault cases -> fault bars, page
 * counts -> the tlbsize curve, strides -> stride steps, marked phases of
 * tlbprof run -> bars per phase name; working-set sizes (chase) -> a size
 * sweep with several measured sizes, bars per page size with one.
 */
enum plot_chart_kind plot_chart_kind_for(enum workload_sweep sweep, size_t n_sizes, bool wall_time);

/*
 * A linear axis from 0 up to a "nice" maximum at or above 1.05 * max_value
 * (room over the highest point), ticks every 1, 2 or 5 x 10^k so that there
 * are at most target + 1 of them (target >= 2), labelled with the decimals
 * the step needs; beyond 10^-4 .. 10^6 in engineering notation with one
 * exponent for the axis ("2e12", "0.2e-300"), so a label stays short. max_value
 * <= 0 or not finite gives 0 .. 1.
 */
void plot_axis_linear(struct plot_axis *ax, double max_value, size_t target);

/*
 * A log2 axis over [lo, hi] (0 < lo <= hi), padded by a fraction of an
 * octave on each side (half an octave for a single value) so no point sits
 * on the frame, with ticks at powers of two every k octaves (k the smallest
 * that keeps at most max_ticks, and tick exponents multiples of k), labelled
 * in the axis unit ("4 KiB" for bytes, "512" for counts; outside 10^-3 ..
 * 10^6 three significant digits in engineering notation, "17.6e12").
 */
void plot_axis_log2(struct plot_axis *ax, double lo, double hi, size_t max_ticks);

/*
 * A log2 axis whose ends are ticks: from the power of two at or below lo to
 * the one at or above hi (3 % beyond each, so no point sits on the frame),
 * ticks every k octaves as plot_axis_log2() chooses them, so the lowest and
 * the highest values lie between two labelled ticks.
 */
void plot_axis_log2_covering(struct plot_axis *ax, double lo, double hi, size_t max_ticks);

/* Map value v on ax to px between px_lo (at ax->min) and px_hi (at ax->max). */
double plot_map(const struct plot_axis *ax, double v, double px_lo, double px_hi);

/* The chart's x and y in px (y grows downwards: ax->min at the bottom of the area). */
double plot_x_px(const struct plot_chart *c, double x);
double plot_y_px(const struct plot_chart *c, double y);

/* A bar of series s in category cat of a bar chart: left edge and width in px. */
void plot_bar_px(const struct plot_chart *c, size_t s, size_t cat, double *x_px, double *w_px);

/*
 * A number for a label: plain ("%g") from 10^-3 up to 10^6 ("0.125",
 * "65536"), else engineering notation, three significant digits and an
 * exponent that is a multiple of 3 ("8.8e12", "17.6e12", "200e-303"); 0 is
 * "0". Returns buf.
 */
char *plot_format_number(double v, char *buf, size_t len);

/* Format bytes in binary units for a tick label: "8 B", "4 KiB", "1.5 MiB", "1 GiB". Returns buf. */
char *plot_format_bytes(double bytes, char *buf, size_t len);

/*
 * The width in px of UTF-8 text s at font_px in DejaVu Sans, the first of the
 * SVG's fonts and the widest of them, from its advance widths (ASCII; any
 * other character counts as wide as 'M' less a little): an estimate that
 * errs wide, so labels placed apart by it stay apart.
 */
double plot_text_width_px(const char *s, double font_px);

/*
 * The value printed on a bar: three significant figures ("123", "45.6",
 * "7.89"), engineering notation outside 10^-3 .. 10^6. Returns buf.
 */
char *plot_format_value(double v, char *buf, size_t len);
