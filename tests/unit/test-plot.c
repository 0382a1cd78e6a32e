/* SPDX-License-Identifier: MIT */
/* Chart layout (ticks, scales, chart choice, series, knees, steps, geometry) and the SVG writer. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "fixtures.h"
#include "judge/plot.h"
#include "report/report.h"
#include "target/target.h"

/* ---- ticks: golden tables ---- */

static void ticks_joined(const struct plot_axis *ax, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < ax->n_ticks; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? "," : "", ax->ticks[i].label);
}

static void test_linear_ticks(void)
{
	/* Worked by hand: top = 1.05 max, raw step = top / target, rounded up to 1, 2 or 5 x 10^k. */
	static const struct {
		int line;
		double max_value;
		size_t target;
		double axis_max;
		const char *labels;
	} rows[] = {
		{ __LINE__, 137.01, 7, 150, "0,50,100,150" },
		{ __LINE__, 100, 7, 120, "0,20,40,60,80,100,120" },
		{ __LINE__, 6.21, 7, 7, "0,1,2,3,4,5,6,7" },
		{ __LINE__, 1.0, 7, 1.2, "0.0,0.2,0.4,0.6,0.8,1.0,1.2" },
		{ __LINE__, 2337.02, 7, 2500, "0,500,1000,1500,2000,2500" },
		{ __LINE__, 0.042, 5, 0.05, "0.00,0.01,0.02,0.03,0.04,0.05" },
		{ __LINE__, 0, 7, 1.0, "0.0,0.2,0.4,0.6,0.8,1.0" },
		{ __LINE__, -3, 7, 1.0, "0.0,0.2,0.4,0.6,0.8,1.0" },
		{ __LINE__, NAN, 7, 1.0, "0.0,0.2,0.4,0.6,0.8,1.0" },
		{ __LINE__, 9.5, 1, 10, "0,5,10" },	/* target below 2 is 2 */
		/* Beyond 10^-4 .. 10^6: one engineering exponent for the axis, never a long string of digits. */
		{ __LINE__, 1e-300, 7, 1.2e-300, "0,0.2e-300,0.4e-300,0.6e-300,0.8e-300,1.0e-300,1.2e-300" },
		{ __LINE__, 1e13, 7, 1.2e13, "0,2e12,4e12,6e12,8e12,10e12,12e12" },
		{ __LINE__, 2.5e6, 5, 3e6, "0,1e6,2e6,3e6" },
		{ __LINE__, 950000, 5, 1e6, "0,0.2e6,0.4e6,0.6e6,0.8e6,1.0e6" },
		{ __LINE__, 4.2e-5, 5, 5e-5, "0,10e-6,20e-6,30e-6,40e-6,50e-6" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct plot_axis ax = { .unit = PLOT_UNIT_NS };
		char got[400];
		plot_axis_linear(&ax, rows[i].max_value, rows[i].target);
		ticks_joined(&ax, got, sizeof(got));
		CHECK_ROW(rows[i].line, ax.scale == PLOT_SCALE_LINEAR && ax.min == 0, "linear from 0");
		CHECK_ROW(rows[i].line, fabs(ax.max - rows[i].axis_max) < 1e-9, "max %g, want %g", ax.max, rows[i].axis_max);
		CHECK_ROW(rows[i].line, strcmp(got, rows[i].labels) == 0, "ticks '%s', want '%s'", got, rows[i].labels);
		CHECK_ROW(rows[i].line, ax.n_ticks <= (rows[i].target < 2 ? 2 : rows[i].target) + 1, "at most target + 1");
		for (size_t k = 0; k < ax.n_ticks; k++)
			CHECK_ROW(rows[i].line, strlen(ax.ticks[k].label) <= 9, "label '%s' too long", ax.ticks[k].label);
		if (isfinite(rows[i].max_value) && rows[i].max_value > 0)
			CHECK_ROW(rows[i].line, ax.max >= 1.05 * rows[i].max_value - 1e-9, "room above the highest value");
	}
}

static void test_log2_ticks(void)
{
	static const struct {
		int line;
		enum plot_unit unit;
		double lo, hi;
		size_t max_ticks;
		const char *labels;
	} rows[] = {
		{ __LINE__, PLOT_UNIT_BYTES, 64.0 * (1 << 20), 1024.0 * (1 << 20), 10,
		  "64 MiB,128 MiB,256 MiB,512 MiB,1 GiB" },
		{ __LINE__, PLOT_UNIT_BYTES, 8, 8192, 10, "16 B,64 B,256 B,1 KiB,4 KiB" },	/* 11 octaves: every 2nd */
		{ __LINE__, PLOT_UNIT_BYTES, 4096, 4096, 10, "4 KiB" },			/* one value, half an octave each side */
		{ __LINE__, PLOT_UNIT_BYTES, 4096, 1ull << 30, 10,
		  "4 KiB,16 KiB,64 KiB,256 KiB,1 MiB,4 MiB,16 MiB,64 MiB,256 MiB,1 GiB" },	/* 19 octaves: every 2nd */
		{ __LINE__, PLOT_UNIT_COUNT, 1, 512, 10, "1,2,4,8,16,32,64,128,256,512" },
		{ __LINE__, PLOT_UNIT_COUNT, 1, 65536, 10, "1,4,16,64,256,1024,4096,16384,65536" },
		{ __LINE__, PLOT_UNIT_COUNT, 1, 512, 3, "1,16,256" },
		{ __LINE__, PLOT_UNIT_COUNT, 3, 5, 10, "4" },
		/* ns far beyond 10^6: three significant digits in engineering notation. */
		{ __LINE__, PLOT_UNIT_NS, 1e13, 1.2e14, 10, "17.6e12,35.2e12,70.4e12" },
		{ __LINE__, PLOT_UNIT_NS, 1e-300, 1e-299, 10, "1.49e-300,2.99e-300,5.97e-300" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct plot_axis ax = { .unit = rows[i].unit };
		char got[400];
		plot_axis_log2(&ax, rows[i].lo, rows[i].hi, rows[i].max_ticks);
		ticks_joined(&ax, got, sizeof(got));
		CHECK_ROW(rows[i].line, ax.scale == PLOT_SCALE_LOG2, "log2");
		CHECK_ROW(rows[i].line, strcmp(got, rows[i].labels) == 0, "ticks '%s', want '%s'", got, rows[i].labels);
		CHECK_ROW(rows[i].line, ax.min < rows[i].lo && ax.max > rows[i].hi, "padded: %g..%g around %g..%g", ax.min,
			  ax.max, rows[i].lo, rows[i].hi);
		for (size_t k = 0; k < ax.n_ticks; k++)
			CHECK_ROW(rows[i].line, ax.ticks[k].value >= ax.min && ax.ticks[k].value <= ax.max, "tick in the domain");
	}
}

static void test_format_and_quantile(void)
{
	static const struct {
		int line;
		double bytes;
		const char *want;
	} rows[] = {
		{ __LINE__, 8, "8 B" },		 { __LINE__, 1023, "1023 B" },	     { __LINE__, 1024, "1 KiB" },
		{ __LINE__, 1536, "1.5 KiB" }, { __LINE__, 256.0 * (1 << 20), "256 MiB" }, { __LINE__, 1ull << 30, "1 GiB" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char buf[32];
		plot_format_bytes(rows[i].bytes, buf, sizeof(buf));
		CHECK_ROW(rows[i].line, strcmp(buf, rows[i].want) == 0, "'%s', want '%s'", buf, rows[i].want);
	}
	static const struct {
		int line;
		double v;
		const char *want;
	} numbers[] = {
		{ __LINE__, 0, "0" },	      { __LINE__, 0.125, "0.125" },	  { __LINE__, 65536, "65536" },
		{ __LINE__, 999999, "999999" }, { __LINE__, 1e6, "1e6" },	  { __LINE__, 8.796093022208e12, "8.8e12" },
		{ __LINE__, 1.4e14, "140e12" }, { __LINE__, 999.9e12, "1e15" }, { __LINE__, 2e-301, "200e-303" },
		{ __LINE__, 5e-4, "500e-6" },	{ __LINE__, -3e9, "-3e9" },	  { __LINE__, 1e-300, "1e-300" },
	};
	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		char buf[32];
		plot_format_number(numbers[i].v, buf, sizeof(buf));
		CHECK_ROW(numbers[i].line, strcmp(buf, numbers[i].want) == 0, "%g: '%s', want '%s'", numbers[i].v, buf,
			  numbers[i].want);
	}
}

static void test_map(void)
{
	struct plot_axis lin = { .scale = PLOT_SCALE_LINEAR, .min = 0, .max = 150 };
	struct plot_axis lg = { .scale = PLOT_SCALE_LOG2, .min = 1, .max = 1024 };
	struct plot_axis flat = { .scale = PLOT_SCALE_LINEAR, .min = 5, .max = 5 };

	CHECK_NEAR(plot_map(&lin, 75, 0, 300), 150, 1e-9);
	CHECK_NEAR(plot_map(&lin, 0, 400, 100), 400, 1e-9);	/* y axes run upwards: px_lo below px_hi */
	CHECK_NEAR(plot_map(&lin, 150, 400, 100), 100, 1e-9);
	CHECK_NEAR(plot_map(&lg, 32, 0, 300), 150, 1e-9);	/* 5 of 10 octaves */
	CHECK_NEAR(plot_map(&lg, 1024, 0, 300), 300, 1e-9);
	CHECK_NEAR(plot_map(&flat, 5, 0, 300), 150, 1e-9);	/* an empty domain maps to the middle */
}

static void test_chart_kinds(void)
{
	static const struct {
		int line;
		enum workload_sweep sweep;
		size_t sizes;
		bool wall_time;
		enum plot_chart_kind want;
	} rows[] = {
		{ __LINE__, WORKLOAD_SWEEP_SIZES, 1, false, PLOT_CHART_PAGE_BARS },
		{ __LINE__, WORKLOAD_SWEEP_SIZES, 5, false, PLOT_CHART_SIZE_SWEEP },
		{ __LINE__, WORKLOAD_SWEEP_SIZES, 0, false, PLOT_CHART_PAGE_BARS },
		{ __LINE__, WORKLOAD_SWEEP_PAGE_COUNTS, 40, false, PLOT_CHART_TLBSIZE },
		{ __LINE__, WORKLOAD_SWEEP_STRIDES, 1, false, PLOT_CHART_STRIDE },
		{ __LINE__, WORKLOAD_SWEEP_STRIDES, 3, false, PLOT_CHART_STRIDE },
		{ __LINE__, WORKLOAD_SWEEP_FAULT_CASES, 1, false, PLOT_CHART_FAULT_BARS },
		{ __LINE__, WORKLOAD_SWEEP_SIZES, 2, false, PLOT_CHART_SIZE_SWEEP },
		/* tlbprof run: marked phases with accesses by name; without accesses (or unmarked) by wall time. */
		{ __LINE__, WORKLOAD_SWEEP_MARKED, 2, false, PLOT_CHART_RUN_BARS },
		{ __LINE__, WORKLOAD_SWEEP_MARKED, 0, true, PLOT_CHART_WALL_BARS },
		{ __LINE__, WORKLOAD_SWEEP_COMMAND, 0, true, PLOT_CHART_WALL_BARS },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		enum plot_chart_kind k = plot_chart_kind_for(rows[i].sweep, rows[i].sizes, rows[i].wall_time);
		CHECK_ROW(rows[i].line, k == rows[i].want, "sweep %d with %zu: %s", (int)rows[i].sweep, rows[i].sizes,
			  plot_chart_kind_name(k));
	}
	CHECK(strcmp(plot_chart_kind_name(PLOT_CHART_RUN_BARS), "run-phases") == 0 &&
		      strcmp(plot_chart_kind_name(PLOT_CHART_WALL_BARS), "wall-time") == 0,
	      "kind names");
}

/* ---- charts from phases ---- */

static const struct plot_series *find_series(const struct plot_chart *c, const char *key)
{
	for (size_t i = 0; i < c->n_series; i++)
		if (strcmp(c->series[i].key, key) == 0)
			return &c->series[i];
	return NULL;
}

static bool has_note(const struct plot_chart *c, const char *needle)
{
	for (size_t i = 0; i < c->n_notes; i++)
		if (strstr(c->notes[i], needle))
			return true;
	return false;
}

static bool inside(const struct plot_rect *outer, double x, double y)
{
	return x >= outer->x - 1e-9 && x <= outer->x + outer->w + 1e-9 && y >= outer->y - 1e-9 &&
	       y <= outer->y + outer->h + 1e-9;
}

/* A chase size sweep: a line per page size, points at the working sets, medians as the analysis has them. */
static void test_size_sweep(void)
{
	static const uint64_t sizes[] = { 64ull << 20, 128ull << 20, 256ull << 20 };
	struct phase_result r[6];
	struct analysis a;
	struct plot p;

	for (size_t i = 0; i < 3; i++) {
		double b = 40 + 20 * (double)i, s4[3] = { b + 1, b, b + 5 }, s2[3] = { b - 10, b - 9, b - 11 };
		char name[64];
		snprintf(name, sizeof(name), "chase/2m/%lluM/r0", (unsigned long long)(sizes[i] >> 20));
		fixture_phase(&r[2 * i + 1], name, "2m", sizes[i], 1000000, s2, 3, 0, -1);
		snprintf(name, sizeof(name), "chase/4k/%lluM/r0", (unsigned long long)(sizes[i] >> 20));
		fixture_phase(&r[2 * i], name, "4k", sizes[i], 1000000, s4, 3, 0, -1);
	}
	analysis_run(r, 6, NULL, NULL, &a);
	struct plot_input in = { .phases = r, .n = 6, .analysis = &a, .source = "sweep.json" };
	CHECK(plot_build(&in, &p) == 0, "built");
	CHECK(p.n_charts == 1, "one chart: %zu", p.n_charts);
	const struct plot_chart *c = &p.charts[0];
	CHECK(c->kind == PLOT_CHART_SIZE_SWEEP, "size sweep: %s", plot_chart_kind_name(c->kind));
	CHECK(c->n_series == 2 && strcmp(c->series[0].key, "4k") == 0 && strcmp(c->series[1].key, "2m") == 0,
	      "a series per page size, in run order");
	CHECK(strcmp(c->series[0].color, c->series[1].color) != 0, "told apart by colour");
	CHECK(c->x.scale == PLOT_SCALE_LOG2 && c->x.unit == PLOT_UNIT_BYTES && strstr(c->x.title, "working set"),
	      "x: working set, log2, bytes: %s", c->x.title);
	CHECK(c->y.scale == PLOT_SCALE_LINEAR && strcmp(c->y.title, "ns per access") == 0, "y: ns per access");
	for (size_t s = 0; s < c->n_series; s++) {
		CHECK(c->series[s].n == 3, "%s: three points", c->series[s].key);
		for (size_t i = 0; i < c->series[s].n && i < 3; i++) {
			const struct plot_point *pt = &c->series[s].points[i];
			CHECK(pt->x == (double)sizes[i], "x is the working set: %g", pt->x);
			CHECK(pt->y == a.phases[pt->phase].ns.median, "y is the analysis median: %g", pt->y);
			CHECK(pt->lo <= pt->y && pt->y <= pt->hi && pt->samples == 3, "IQR around the median");
			CHECK(pt->y <= c->y.max && pt->hi <= c->y.max, "inside the y axis");
			CHECK(inside(&c->area, plot_x_px(c, pt->x), plot_y_px(c, pt->y)), "drawn inside the area");
		}
	}
	/* 4k at 64M: samples 41, 40, 45 -> quartiles 40.5 and 43. */
	CHECK_NEAR(c->series[0].points[0].lo, 40.5, 1e-12);
	CHECK_NEAR(c->series[0].points[0].hi, 43, 1e-12);
	CHECK(strstr(p.title, "chase") && strstr(p.title, "sweep.json"), "title: %s", p.title);
	CHECK(inside(&c->frame, c->area.x, c->area.y) && inside(&c->frame, c->area.x + c->area.w, c->area.y + c->area.h),
	      "the area lies in the frame");
	CHECK(c->legend_x > c->area.x + c->area.w && c->legend_x < p.width_px, "legend right of the area");
	CHECK(p.n_footer == 3 && p.footer_y_px > c->frame.y + c->frame.h &&
		      p.footer_y_px + p.footer_h_px * (double)(p.n_footer - 1) < p.height_px,
	      "the footer under the chart, inside the document");
	CHECK(strstr(p.footer[2], "sweep.json") != NULL, "the footer names the report: %s", p.footer[2]);
	plot_free(&p);
	analysis_free(&a);
	fixture_free(r, 6);
}

/* The default chase run: one working set, a bar per page size and one for the packed control. */
static void test_page_bars(void)
{
	struct phase_result r[3];
	const double sc[] = { 41, 41.5, 40.8 }, s4[] = { 76, 77, 75 }, s2[] = { 55, 54, 56 };
	struct analysis a;
	struct plot p;

	fixture_phase(&r[0], "chase/4k:packed/256M/r0", "4k", 4ull << 20, 1000000, sc, 3, 0, -1);
	r[0].spec.role = PHASE_ROLE_CONTROL;
	r[0].spec.controls_size_bytes = 256ull << 20;
	r[0].spec.controls_stride_bytes = 4096;
	fixture_phase(&r[1], "chase/4k/256M/r0", "4k", 256ull << 20, 1000000, s4, 3, 0, -1);
	fixture_phase(&r[2], "chase/2m/256M/r0", "2m", 256ull << 20, 1000000, s2, 3, 0, -1);
	analysis_run(r, 3, NULL, NULL, &a);
	struct plot_input in = { .phases = r, .n = 3, .analysis = &a };
	CHECK(plot_build(&in, &p) == 0, "built");
	const struct plot_chart *c = &p.charts[0];
	CHECK(c->kind == PLOT_CHART_PAGE_BARS, "bars: %s", plot_chart_kind_name(c->kind));
	CHECK(c->x.scale == PLOT_SCALE_BAND && c->n_categories == 3 && c->x.n_ticks == 3, "three categories");
	CHECK(strcmp(c->categories[0], "4k:packed") == 0 && strcmp(c->categories[1], "4k") == 0 &&
		      strcmp(c->categories[2], "2m") == 0, "in run order");
	const struct plot_series *ctl = find_series(c, "4k:packed");
	CHECK(ctl && ctl->control && ctl->n == 1 && ctl->points[0].y == 41, "the control is a bar of its own");
	CHECK(strstr(c->title, "256 MiB"), "title names the working set: %s", c->title);
	CHECK(has_note(c, "Packed control"), "a note explains the control");
	/* Bars: inside the area, in their own band, not overlapping. */
	double prev_end = c->area.x;
	for (size_t s = 0; s < c->n_series; s++) {
		double x, w;
		plot_bar_px(c, s, (size_t)c->series[s].points[0].x, &x, &w);
		CHECK(x >= prev_end - 1e-9 && w > 0 && x + w <= c->area.x + c->area.w + 1e-9, "bar %zu at %g+%g", s, x, w);
		CHECK_NEAR(w, 0.8 * c->area.w / 3, 1e-9);	/* alone in its category: the whole 80 % */
		prev_end = x + w;
	}
	plot_free(&p);
	analysis_free(&a);
	fixture_free(r, 3);
}

/*
 * Marker labels stay inside the area (never under the legend), do not overlap
 * each other in a row, and cross another marker's line only when neither
 * side of their own line had room for them.
 */
static void check_marker_labels(const struct plot_chart *c, int line)
{
	double left = c->area.x, right = c->area.x + c->area.w;

	for (size_t i = 0; i < c->n_markers; i++) {
		const struct plot_marker *m = &c->markers[i];
		double x = plot_x_px(c, m->x), w = plot_text_width_px(m->label, PLOT_LABEL_FONT_PX) + 4;
		double lo = m->label_end ? m->label_x_px - w : m->label_x_px, hi = lo + w;
		CHECK_ROW(line, lo >= left && hi <= right, "'%s' at %.0f..%.0f outside the area %.0f..%.0f", m->label, lo, hi,
			  left, right);
		CHECK_ROW(line, m->label_end ? hi <= x : lo >= x, "'%s' not beside its line", m->label);
		double next = right, prev = left;
		bool crosses = false;
		for (size_t k = 0; k < c->n_markers; k++) {
			double xk = plot_x_px(c, c->markers[k].x);
			crosses |= xk > lo && xk < hi && fabs(xk - x) > 0.5;
			if (xk > x + 0.5)
				next = fmin(next, xk);
			else if (xk < x - 0.5)
				prev = fmax(prev, xk);
			if (k == i || c->markers[k].label_y_px != m->label_y_px)
				continue;
			const struct plot_marker *o = &c->markers[k];
			double ow = plot_text_width_px(o->label, PLOT_LABEL_FONT_PX) + 4;
			double olo = o->label_end ? o->label_x_px - ow : o->label_x_px;
			CHECK_ROW(line, hi <= olo || lo >= olo + ow, "'%s' and '%s' overlap in a row", m->label, o->label);
		}
		if (crosses)
			CHECK_ROW(line, x + 4 + w > next && x - 4 - w < prev, "'%s' crosses a line although one side had room",
				  m->label);
	}
}

/* tlbsize: one point per page count, the analysis's knees, CPUID capacities as references (or a note). */
static void test_tlbsize(void)
{
	static const double grid[] = { 1, 2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 56, 60, 64, 68, 72, 80, 96, 128, 181,
				       256, 362, 512, 724, 1024, 1448, 1800, 2048, 2200, 2600, 2896, 4096, 5793, 8192 };
	enum { N = sizeof(grid) / sizeof(grid[0]) };
	struct phase_result r[N];
	struct environment env = { .tlb = { .l1d_4k_entries = 64, .l2d_4k_entries = 2048 }, .turbo = -1 };
	struct analysis a;
	struct plot p;

	/* Run in a shuffled order, as tlbsize does: the chart sorts by pages. */
	for (size_t k = 0; k < N; k++) {
		size_t i = (k * 7) % N;
		double x = grid[i], ns = x <= 64 ? 1.5 : x <= 2048 ? 4.0 : 25.0, s[3] = { ns * 0.99, ns, ns * 1.01 };
		char name[48];
		snprintf(name, sizeof(name), "tlbsize/4k/%.0fp/r0", x);
		fixture_phase(&r[k], name, "4k", (uint64_t)x * 4096, 200000, s, 3, 0, -1);
		r[k].spec.workload = workload_find("tlbsize");
		r[k].slots = (uint64_t)x;
	}
	analysis_run(r, N, &env, NULL, &a);
	struct plot_input in = { .phases = r, .n = N, .analysis = &a, .env = &env };
	CHECK(plot_build(&in, &p) == 0, "built");
	const struct plot_chart *c = &p.charts[0];
	CHECK(c->kind == PLOT_CHART_TLBSIZE && c->n_series == 1 && c->series[0].n == N, "one curve, a point per count");
	for (size_t i = 0; i + 1 < c->series[0].n; i++)
		CHECK(c->series[0].points[i].x < c->series[0].points[i + 1].x, "sorted by pages");
	CHECK(c->x.scale == PLOT_SCALE_LOG2 && c->x.unit == PLOT_UNIT_COUNT && strstr(c->x.title, "pages"), "x: pages");
	/* 1.5 to 25 ns: more than 10x, so the y axis is log2 too (the first knee would lie on the floor). */
	CHECK(c->y.scale == PLOT_SCALE_LOG2 && strcmp(c->y.title, "ns per access (log scale)") == 0, "y: %s %s",
	      plot_scale_name(c->y.scale), c->y.title);
	CHECK(c->y.min < 1.5 * 0.99 && c->y.max > 25 * 1.01, "y covers the spread: %g..%g", c->y.min, c->y.max);
	size_t knees = 0, refs = 0;
	for (size_t i = 0; i < c->n_markers; i++) {
		const struct plot_marker *m = &c->markers[i];
		if (m->kind == PLOT_MARKER_KNEE) {
			CHECK(knees < a.n_knees && m->x == a.knees[knees].knee.x_before, "knee at %g", m->x);
			knees++;
		} else {
			CHECK((m->x == 64 && strcmp(m->level, "l1d_4k_entries") == 0) ||
				      (m->x == 2048 && strcmp(m->level, "l2d_4k_entries") == 0),
			      "CPUID %s %g", m->level, m->x);
			refs++;
		}
		CHECK(m->x >= c->x.min && m->x <= c->x.max, "marker on the axis");
		CHECK(m->label_y_px > c->area.y && m->label_y_px < c->area.y + c->area.h, "label inside the area");
	}
	CHECK(a.n_knees == 2 && knees == 2 && refs == 2, "both knees (%zu of %zu) and both capacities (%zu)", knees,
	      a.n_knees, refs);
	check_marker_labels(c, __LINE__);
	CHECK(!has_note(c, "CPUID reports no"), "no CPUID note when it reports");
	plot_free(&p);
	analysis_free(&a);

	/* A KVM guest of no known core: no capacities, a note instead; the knees stay. */
	env.tlb = (struct env_tlb){ 0 };
	analysis_run(r, N, &env, NULL, &a);
	CHECK(plot_build(&in, &p) == 0, "built");
	c = &p.charts[0];
	refs = 0;
	for (size_t i = 0; i < c->n_markers; i++)
		refs += c->markers[i].kind == PLOT_MARKER_CPUID;
	CHECK(refs == 0 && c->n_markers == a.n_knees, "knees only");
	CHECK(has_note(c, "Neither CPUID nor a documented core gives 4 KiB TLB capacities"),
	      "the note says nothing gives them");
	check_marker_labels(c, __LINE__);
	plot_free(&p);
	analysis_free(&a);

	/* A KVM guest of a documented core: its capacities, named as documented, and a note that says so. */
	env.documented_tlb = (struct env_tlb){ .l1d_4k_entries = 64, .l2d_4k_entries = 2048, .source = "documented: X" };
	analysis_run(r, N, &env, NULL, &a);
	CHECK(plot_build(&in, &p) == 0, "built");
	c = &p.charts[0];
	refs = 0;
	for (size_t i = 0; i < c->n_markers; i++)
		refs += c->markers[i].kind == PLOT_MARKER_CPUID && strstr(c->markers[i].label, "(documented)");
	CHECK(refs == 2, "two documented capacities, got %zu", refs);
	CHECK(has_note(c, "CPUID reports no TLB here; the dashed lines are the documented capacities"),
	      "the note names the source");
	check_marker_labels(c, __LINE__);
	plot_free(&p);
	analysis_free(&a);
	env.documented_tlb = (struct env_tlb){ 0 };

	/*
	 * An L2 TLB of 1536 entries next to the knee at 2048: no room right of
	 * its line, so its label goes left of it, inside the area.
	 */
	env.tlb = (struct env_tlb){ .l1d_4k_entries = 64, .l2d_4k_entries = 1536 };
	analysis_run(r, N, &env, NULL, &a);
	CHECK(plot_build(&in, &p) == 0, "built");
	c = &p.charts[0];
	check_marker_labels(c, __LINE__);
	for (size_t i = 0; i < c->n_markers; i++)
		if (c->markers[i].kind == PLOT_MARKER_CPUID && c->markers[i].x == 1536)
			CHECK(c->markers[i].label_end, "'%s' left of its line", c->markers[i].label);
	plot_free(&p);
	analysis_free(&a);
	fixture_free(r, N);
}

/* stride: a line per page size against the stride, the analysis's step labels on its segments. */
static void test_stride(void)
{
	static const struct {
		uint64_t stride;
		double ns;
	} sweep[] = { { 8, 1 }, { 64, 3 }, { 512, 3.3 }, { 4096, 6.2 }, { 8192, 5 } };
	struct phase_result r[10];
	struct analysis a;
	struct plot p;

	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < 5; i++) {
			double ns = sweep[i].ns * (k ? 0.7 : 1), s[3] = { ns, ns * 1.02, ns * 0.98 };
			char name[64];
			snprintf(name, sizeof(name), "stride/%s/16M/s%llu/r0", k ? "2m" : "4k",
				 (unsigned long long)sweep[i].stride);
			fixture_phase(&r[5 * k + i], name, k ? "2m" : "4k", 16ull << 20, 200000, s, 3, 0, -1);
			r[5 * k + i].spec.workload = workload_find("stride");
			r[5 * k + i].spec.stride_bytes = sweep[i].stride;
		}
	analysis_run(r, 10, NULL, NULL, &a);
	struct plot_input in = { .phases = r, .n = 10, .analysis = &a };
	CHECK(plot_build(&in, &p) == 0, "built");
	const struct plot_chart *c = &p.charts[0];
	CHECK(c->kind == PLOT_CHART_STRIDE && c->n_series == 2, "a line per page size");
	CHECK(c->y.scale == PLOT_SCALE_LINEAR, "0.7 to 6.2 ns: under 10x, linear");
	CHECK(c->x.unit == PLOT_UNIT_BYTES && strstr(c->x.title, "stride"), "x: stride");
	CHECK(c->n_steps == a.n_stride_steps && a.n_stride_steps == 8, "every step labelled: %zu of %zu", c->n_steps,
	      a.n_stride_steps);
	for (size_t i = 0; i < c->n_steps && i < a.n_stride_steps; i++) {
		const struct plot_step *st = &c->steps[i];
		CHECK(strcmp(st->label, a.stride_steps[i].label) == 0, "step %zu: %s", i, st->label);
		CHECK(st->x_from == (double)r[a.stride_steps[i].from].spec.stride_bytes &&
			      st->x_to == (double)r[a.stride_steps[i].to].spec.stride_bytes,
		      "between its strides");
		CHECK(st->x > st->x_from && st->x < st->x_to, "label between them");
		/* 4k runs higher than 2m: its labels above, the 2m ones below. */
		CHECK(st->above == (strcmp(c->series[st->series].key, "4k") == 0), "placement of %zu", i);
	}
	CHECK(strcmp(c->steps[2].label, "tlb") == 0, "512 -> 4K on 4k pages is the TLB step");
	CHECK(has_note(c, "Steps:"), "a note says what the labels mean");
	plot_free(&p);
	analysis_free(&a);
	fixture_free(r, 10);
}

/* pagefault: bars of ns per page, a group per case, a bar per page size; a failed phase is noted. */
static void test_fault_bars(void)
{
	static const struct {
		int fault_case;
		const char *page;
		double ns_per_page;
	} rows[] = {
		{ FAULT_ANON_COLD, "4k", 2000 }, { FAULT_ANON_COLD, "2m", 600 },	{ FAULT_ANON_PREFAULT, "4k", 20 },
		{ FAULT_ANON_PREFAULT, "2m", 12 }, { FAULT_FILE_WARM, "4k", 26 },
	};
	enum { N = sizeof(rows) / sizeof(rows[0]) + 1 };
	struct phase_result r[N];
	struct analysis a;
	struct plot p;

	for (size_t i = 0; i < N - 1; i++) {
		char name[64];
		double ns = rows[i].ns_per_page, s[4] = { ns, ns, ns, ns };
		snprintf(name, sizeof(name), "pagefault/%s/32M/%s/r0", rows[i].page, fault_case_name(rows[i].fault_case));
		fixture_phase(&r[i], name, rows[i].page, 32ull << 20, 8192, s, 4, 0, -1);
		r[i].spec.workload = workload_find("pagefault");
		r[i].spec.fault_case = rows[i].fault_case;
		r[i].n_fault_samples = 4;
		r[i].fault_samples = calloc(4, sizeof(*r[i].fault_samples));
		for (size_t k = 0; k < 4; k++)	/* ns per page: 0.9, 1.0, 1.1, 1.2 x the row's */
			r[i].fault_samples[k] = (struct fault_sample){ .elapsed_ns = ns * 8192 * (0.9 + 0.1 * (double)k),
								       .pages = 8192, .minor = 8192, .major = 0 };
	}
	const double none[] = { 0 };
	fixture_phase(&r[N - 1], "pagefault/4k/32M/file_cold/r0", "4k", 32ull << 20, 8192, none, 1, 0, -1);
	r[N - 1].n_samples = 0;
	r[N - 1].spec.workload = workload_find("pagefault");
	r[N - 1].spec.fault_case = FAULT_FILE_COLD;
	r[N - 1].status = PHASE_SKIPPED;
	snprintf(r[N - 1].reason, sizeof(r[N - 1].reason), "the file stayed resident");
	analysis_run(r, N, NULL, NULL, &a);
	struct plot_input in = { .phases = r, .n = N, .analysis = &a };
	CHECK(plot_build(&in, &p) == 0, "built");
	const struct plot_chart *c = &p.charts[0];
	CHECK(c->kind == PLOT_CHART_FAULT_BARS && strcmp(c->y.title, "ns per page") == 0, "fault bars, ns per page");
	CHECK(c->n_categories == 3 && strcmp(c->categories[0], "anon_cold") == 0 &&
		      strcmp(c->categories[1], "anon_prefault") == 0 && strcmp(c->categories[2], "file_warm") == 0,
	      "a group per case that ran");
	const struct plot_series *s4 = find_series(c, "4k"), *s2 = find_series(c, "2m");
	CHECK(s4 && s2 && s4->n == 3 && s2->n == 2, "a bar per page size where it ran");
	if (s4 && s4->n == 3) {
		CHECK_NEAR(s4->points[0].y, a.phases[0].faults.ns_per_page.median, 1e-9);
		CHECK_NEAR(s4->points[0].y, 2000 * 1.05, 1e-9);
		CHECK_NEAR(s4->points[0].lo, 2000 * 0.975, 1e-9);
	}
	double x0, w0, x1, w1, x2, w2;
	plot_bar_px(c, 0, 0, &x0, &w0);
	plot_bar_px(c, 1, 0, &x1, &w1);
	plot_bar_px(c, 0, 2, &x2, &w2);
	CHECK(w0 == w1 && x1 >= x0 + w0 - 1e-9, "two bars side by side in a shared case");
	CHECK(w2 > w0, "a case with one bar gives it the whole width");
	CHECK(has_note(c, "1 phase not drawn") && has_note(c, "file_cold"), "the skipped case is named");
	plot_free(&p);
	analysis_free(&a);
	for (size_t i = 0; i < N; i++)
		free(r[i].fault_samples);
	fixture_free(r, N);
}

/*
 * A tlbprof run phase as report_read() gives it: workload run (marked) or
 * command (unmarked), the wall time of each occurrence, and ns per access
 * per occurrence when accesses were declared (then page may be declared too).
 */
static void run_phase(struct phase_result *r, const char *name, const char *page, const double *wall_ns, size_t n,
		      uint64_t accesses_per_occurrence, bool command)
{
	double ns[16];

	for (size_t i = 0; i < n && i < 16; i++)
		ns[i] = accesses_per_occurrence ? wall_ns[i] / (double)accesses_per_occurrence : 0;
	fixture_phase(r, name, page ? page : "4k", 8ull << 20, accesses_per_occurrence, ns, n, 0, -1);
	r->spec.workload = command ? workload_find("command") : workload_find("run");
	r->n_self_checks = 0;
	r->target = calloc(1, sizeof(*r->target));
	r->target->occurrences = (unsigned)n;
	r->target->has_accesses = accesses_per_occurrence > 0;
	r->target->has_page = page != NULL;
	r->target->wall_ns = calloc(n, sizeof(double));
	memcpy(r->target->wall_ns, wall_ns, n * sizeof(double));
	r->target->n_wall = n;
	if (!accesses_per_occurrence)
		r->n_samples = 0;	/* nothing per access: the reader keeps no samples */
	r->spec.accesses_total = accesses_per_occurrence * n;
}

static void run_phases_free(struct phase_result *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (r[i].target)
			free(r[i].target->wall_ns);
		free(r[i].target);
	}
	fixture_free(r, n);
}

/*
 * tlbprof run: marked phases with declared accesses are bars of ns per
 * access per phase name (coloured by the declared page); phases without are
 * bars of ms per occurrence on a chart of their own; an unmarked command is
 * one such bar, not refused as "nothing finished".
 */
static void test_run_charts(void)
{
	const double chase4k[] = { 20.8e6, 20.4e6, 20.1e6, 20.3e6, 20.2e6 }, chase2m[] = { 15.5e6, 15.1e6, 15.3e6 };
	const double load[] = { 4e6, 6e6, 8e6, 10e6 }, scan[] = { 2e6, 2.2e6 };
	struct phase_result r[5];
	struct analysis a;
	struct plot p;

	run_phase(&r[0], "load", NULL, load, 4, 0, false);
	run_phase(&r[1], "chase4k", "4k", chase4k, 5, 1000000, false);
	run_phase(&r[2], "chase2m", "2m", chase2m, 3, 1000000, false);
	run_phase(&r[3], "scan", NULL, scan, 2, 0, false);
	run_phase(&r[4], "walk", NULL, chase2m, 3, 1000000, false);
	analysis_run(r, 5, NULL, NULL, &a);
	struct plot_input in = { .phases = r, .n = 5, .analysis = &a };
	CHECK(plot_build(&in, &p) == 0 && p.n_charts == 2, "two charts: %zu", p.n_charts);
	if (p.n_charts == 2) {
		/* In order of first appearance: load (wall time) ran first. */
		const struct plot_chart *w = &p.charts[0], *c = &p.charts[1];
		CHECK(w->kind == PLOT_CHART_WALL_BARS && c->kind == PLOT_CHART_RUN_BARS, "kinds %s, %s",
		      plot_chart_kind_name(w->kind), plot_chart_kind_name(c->kind));
		CHECK(strstr(p.title, "tlbprof: run on") != NULL, "the workload named once: %s", p.title);

		CHECK(w->n_categories == 2 && strcmp(w->categories[0], "load") == 0 && strcmp(w->categories[1], "scan") == 0,
		      "a bar per phase name without accesses");
		CHECK(w->y.unit == PLOT_UNIT_MS && strcmp(w->y.title, "ms per occurrence (wall time)") == 0, "y: %s",
		      w->y.title);
		CHECK(w->x.scale == PLOT_SCALE_BAND && w->y.scale == PLOT_SCALE_LINEAR, "bars, linear");
		const struct plot_series *ws = find_series(w, "wall");
		CHECK(ws && ws->n == 2, "one series of wall times");
		if (ws && ws->n == 2) {
			/* load: 4, 6, 8, 10 ms -> median 7, quartiles 5.5 and 8.5. */
			CHECK_NEAR(ws->points[0].y, 7, 1e-12);
			CHECK_NEAR(ws->points[0].lo, 5.5, 1e-12);
			CHECK_NEAR(ws->points[0].hi, 8.5, 1e-12);
			CHECK(ws->points[0].samples == 4 && ws->points[1].samples == 2, "a value per occurrence");
			CHECK_NEAR(ws->points[1].y, 2.1, 1e-12);
		}
		CHECK(has_note(w, "declared no accesses"), "the wall chart says why");
		CHECK(strstr(w->spread_label, "occurrences") != NULL, "spread over occurrences: %s", w->spread_label);

		CHECK(c->n_categories == 3 && strcmp(c->categories[0], "chase4k") == 0 &&
			      strcmp(c->categories[1], "chase2m") == 0 && strcmp(c->categories[2], "walk") == 0,
		      "a bar per phase name with accesses");
		CHECK(strcmp(c->y.title, "ns per access") == 0 && c->y.unit == PLOT_UNIT_NS, "y: %s", c->y.title);
		const struct plot_series *s4 = find_series(c, "4k"), *s2 = find_series(c, "2m"),
					 *nd = find_series(c, "page-not-declared");
		CHECK(s4 && s2 && nd && c->n_series == 3, "a series per declared page, one for none");
		if (s4 && s4->n == 1)
			CHECK(s4->points[0].y == a.phases[1].ns.median && fabs(s4->points[0].y - 20.3) < 1e-9,
			      "chase4k at the analysis median: %g", s4->points[0].y);
		if (s4 && s2)
			CHECK(strcmp(s4->color, s2->color) != 0, "pages told apart");
		double x, width;
		plot_bar_px(c, 0, 0, &x, &width);
		CHECK_NEAR(width, 0.8 * c->area.w / 3, 1e-9);	/* one bar per category, the whole 80 % */
	}
	plot_free(&p);
	analysis_free(&a);
	run_phases_free(r, 5);

	/* The unmarked command (tlbprof run -- sleep 0.1): one occurrence, drawn, not -ENODATA. */
	const double one[] = { 101.4e6 };
	run_phase(&r[0], "command", NULL, one, 1, 0, true);
	analysis_run(r, 1, NULL, NULL, &a);
	in = (struct plot_input){ .phases = r, .n = 1, .analysis = &a };
	CHECK(plot_build(&in, &p) == 0 && p.n_charts == 1, "the command is drawn");
	if (p.n_charts == 1) {
		const struct plot_chart *c = &p.charts[0];
		CHECK(c->kind == PLOT_CHART_WALL_BARS && c->n_series == 1 && c->series[0].n == 1, "one wall-time bar");
		CHECK(c->series[0].n == 1 && fabs(c->series[0].points[0].y - 101.4) < 1e-9, "101.4 ms");
		CHECK(has_note(c, "marked no phases") && has_note(c, "One occurrence per bar"), "notes");
	}
	plot_free(&p);
	analysis_free(&a);
	run_phases_free(r, 1);
}

/* Long phase names on many bars are shortened in the middle to their band; the category keeps the name. */
static void test_band_labels(void)
{
	enum { N = 8 };
	struct phase_result r[N];
	const double wall[] = { 1e6, 2e6 };
	struct analysis a;
	struct plot p;

	for (size_t i = 0; i < N; i++) {
		char name[64];
		snprintf(name, sizeof(name), "initialise_the_table_number_%02zu", i);
		run_phase(&r[i], name, NULL, wall, 2, 0, false);
	}
	analysis_run(r, N, NULL, NULL, &a);
	struct plot_input in = { .phases = r, .n = N, .analysis = &a };
	CHECK(plot_build(&in, &p) == 0 && p.n_charts == 1, "built");
	if (p.n_charts == 1) {
		const struct plot_chart *c = &p.charts[0];
		double band = c->area.w / (double)c->n_categories;
		CHECK(c->n_categories == N && c->x.n_ticks == N, "a tick per bar");
		for (size_t i = 0; i < c->x.n_ticks; i++) {
			const char *l = c->x.ticks[i].label;
			CHECK(plot_text_width_px(l, PLOT_LABEL_FONT_PX) <= band, "label '%s' (%zu chars) wider than its %.0f px "
			      "band", l, strlen(l), band);
			size_t cl = strlen(c->categories[i]);
			CHECK(strstr(l, "..") && strncmp(l, c->categories[i], 4) == 0 &&
				      strcmp(l + strlen(l) - 3, c->categories[i] + cl - 3) == 0,
			      "'%s': head, '..', tail of '%s'", l, c->categories[i]);
		}
		CHECK(strcmp(c->categories[3], "initialise_the_table_number_03") == 0, "the category keeps the name");
	}
	plot_free(&p);
	analysis_free(&a);
	run_phases_free(r, N);
}

/* Extreme medians (a broken clock): short tick labels, and the y title clear of them. */
static void test_extreme_values(void)
{
	static const double values[] = { 1e13, 1e-300, 123.4 };
	for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
		struct phase_result r[2];
		const double s4[] = { values[v], values[v] * 1.1, values[v] * 0.9 }, s2[] = { values[v] / 2, values[v] / 2 };
		struct analysis a;
		struct plot p;

		fixture_phase(&r[0], "chase/4k/256M/r0", "4k", 256ull << 20, 1000000, s4, 3, 0, -1);
		fixture_phase(&r[1], "chase/2m/256M/r0", "2m", 256ull << 20, 1000000, s2, 2, 0, -1);
		analysis_run(r, 2, NULL, NULL, &a);
		struct plot_input in = { .phases = r, .n = 2, .analysis = &a };
		CHECK(plot_build(&in, &p) == 0, "built");
		const struct plot_chart *c = &p.charts[0];
		size_t longest = 0;
		for (size_t i = 0; i < c->y.n_ticks; i++) {
			longest = strlen(c->y.ticks[i].label) > longest ? strlen(c->y.ticks[i].label) : longest;
			CHECK(strlen(c->y.ticks[i].label) <= 9, "%g: tick '%s'", values[v], c->y.ticks[i].label);
		}
		/* The rotated title is about 12 px thick around its x; the labels end 8 px left of the area. */
		CHECK(c->y_title_x_px + 6 <= c->area.x - 8 - 6.3 * (double)longest && c->y_title_x_px >= 6,
		      "%g: y title at %.0f px, labels from %.0f px", values[v], c->y_title_x_px,
		      c->area.x - 8 - 6.3 * (double)longest);
		CHECK(values[v] != 123.4 || c->y_title_x_px == c->area.x - 58, "ordinary labels keep the usual place");
		plot_free(&p);
		analysis_free(&a);
		fixture_free(r, 2);
	}
}

/* Several workloads stack; nothing that finished ok gives -ENODATA. */
static void test_stacking_and_empty(void)
{
	struct phase_result r[3];
	const double s[] = { 10, 11, 12 };
	struct analysis a;
	struct plot p;

	fixture_phase(&r[0], "chase/4k/16M/r0", "4k", 16ull << 20, 100000, s, 3, 0, -1);
	fixture_phase(&r[1], "stride/4k/16M/s64/r0", "4k", 16ull << 20, 100000, s, 3, 0, -1);
	r[1].spec.workload = workload_find("stride");
	r[1].spec.stride_bytes = 64;
	fixture_phase(&r[2], "stride/4k/16M/s4K/r0", "4k", 16ull << 20, 100000, s, 3, 0, -1);
	r[2].spec.workload = workload_find("stride");
	analysis_run(r, 3, NULL, NULL, &a);
	struct plot_input in = { .phases = r, .n = 3, .analysis = &a, .interrupted = true };
	CHECK(plot_build(&in, &p) == 0 && p.n_charts == 2, "a chart per workload");
	if (p.n_charts == 2) {
		CHECK(p.charts[0].kind == PLOT_CHART_PAGE_BARS && p.charts[1].kind == PLOT_CHART_STRIDE, "in run order");
		CHECK(p.charts[1].frame.y == p.charts[0].frame.y + p.charts[0].frame.h, "stacked");
		CHECK(p.footer_y_px > p.charts[0].frame.h + p.charts[1].frame.h && p.height_px > p.footer_y_px,
		      "the document holds both, then the footer");
		CHECK(has_note(&p.charts[0], "interrupted"), "an interrupted run says so");
	}
	plot_free(&p);
	analysis_free(&a);

	for (size_t i = 0; i < 3; i++) {
		r[i].status = PHASE_FAILED;
		snprintf(r[i].reason, sizeof(r[i].reason), "no pool");
	}
	analysis_run(r, 3, NULL, NULL, &a);
	CHECK(plot_build(&in, &p) == -ENODATA && p.n_charts == 0 && !p.charts, "nothing to draw");
	plot_free(&p);
	analysis_free(&a);
	fixture_free(r, 3);
}

/* ---- the SVG writer ---- */

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	if (d)
		closedir(d);
	return n;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 20);
	size_t n = 0;

	if (f && buf)
		n = fread(buf, 1, (1 << 20) - 1, f);
	if (f)
		fclose(f);
	if (buf)
		buf[n] = '\0';
	return buf;
}

static void test_svg_writer(void)
{
	struct phase_result r[2];
	const double s4[] = { 50, 51, 52 }, s2[] = { 34, 35, 36 };
	struct environment env = { .turbo = -1 };
	struct analysis a;
	struct plot p;
	char dir[] = "/tmp/tlbprof-plot-XXXXXX", path[300], err[300];

	/* Markup and a byte that is not UTF-8 in a model name must not break the document. */
	snprintf(env.cpu_model_name, sizeof(env.cpu_model_name), "A<B> & \"C\" 'D' \x01 \xff end");
	fixture_phase(&r[0], "chase/4k/256M/r0", "4k", 256ull << 20, 1000000, s4, 3, 0, -1);
	fixture_phase(&r[1], "chase/2m/256M/r0", "2m", 256ull << 20, 1000000, s2, 3, 0, -1);
	analysis_run(r, 2, &env, NULL, &a);
	struct plot_input in = { .phases = r, .n = 2, .analysis = &a, .env = &env };
	CHECK(plot_build(&in, &p) == 0, "built");
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(path, sizeof(path), "%s/r.svg", dir);
	CHECK(report_write_svg(&p, path, err, sizeof(err)) == 0, "written: %s", err);
	CHECK(count_entries(dir) == 1, "no temporary file left: %d", count_entries(dir));
	char *svg = slurp(path);
	const char *head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"";
	CHECK(svg && strncmp(svg, head, strlen(head)) == 0, "an SVG document");
	if (svg) {
		/* The control character XML cannot carry and the invalid byte become U+FFFD, as in every format. */
		CHECK(strstr(svg, "A&lt;B&gt; &amp; &quot;C&quot; 'D' \xef\xbf\xbd \xef\xbf\xbd end"), "title escaped");
		CHECK(!strstr(svg, "A<B>") && !strstr(svg, "\xff") && !strstr(svg, "\x01"), "nothing raw");
		CHECK(strstr(svg, "viewBox=\"0 0 960 ") && strstr(svg, "<title>"), "viewBox and title");
		CHECK(strstr(svg, "<g class=\"series\" data-series=\"4k\"") &&
			      strstr(svg, "<g class=\"series\" data-series=\"2m\""), "a group per series");
		CHECK(strstr(svg, "data-x=\"4k\" data-y=\"51\""), "the 4k bar carries its median");
		CHECK(strstr(svg, "ns per access") && strstr(svg, "class=\"legend\""), "axis label and legend");
		CHECK(!strstr(svg, "<script") && !strstr(svg, "href") && !strstr(svg, "@import"), "nothing external");
		CHECK(strcmp(svg + strlen(svg) - 7, "</svg>\n") == 0, "complete");
	}
	free(svg);

	/* A missing directory: the error names -o, nothing is created. */
	char bad[320];
	snprintf(bad, sizeof(bad), "%s/missing/r.svg", dir);
	CHECK(report_write_svg(&p, bad, err, sizeof(err)) == -ENOENT, "missing directory");
	CHECK(strstr(err, "-o '") && strstr(err, "missing/r.svg"), "error names -o and the file: %s", err);
	CHECK(count_entries(dir) == 1, "nothing else created");
	unlink(path);
	rmdir(dir);
	plot_free(&p);
	analysis_free(&a);
	fixture_free(r, 2);
}

int main(void)
{
	test_linear_ticks();
	test_log2_ticks();
	test_format_and_quantile();
	test_map();
	test_chart_kinds();
	test_size_sweep();
	test_page_bars();
	test_tlbsize();
	test_stride();
	test_fault_bars();
	test_run_charts();
	test_band_labels();
	test_extreme_values();
	test_stacking_and_empty();
	test_svg_writer();
	return check_finish();
}
