/* SPDX-License-Identifier: MIT */
/* Scales of `tlbprof plot`: axes, their ticks and number formatting, values mapped to px, a chart's two axes. */
#include "judge/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/plot_internal.h"

enum { LOG_MAX_TICKS = 10, LINEAR_TARGET_TICKS = 7 };
/* The y axis covers spreads up to this multiple of the highest median; longer ones are cut (see plot_layout_y_axis). */
static const double SPREAD_CUT = 1.5;
/* Medians spanning more than this ratio get a log2 y axis (line charts only; see plot_layout_y_axis). */
static const double LOG_Y_RATIO = 10;
/* A bar chart's y axis reaches this fraction above its highest bar or whisker: room for the value label. */
static const double BAR_LABEL_ROOM = 0.08;

const char *plot_scale_name(enum plot_scale s)
{
	static const char *const names[] = { [PLOT_SCALE_LINEAR] = "linear", [PLOT_SCALE_LOG2] = "log2",
					     [PLOT_SCALE_BAND] = "band" };
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* Values from here on (and below the lower bound) are labelled in engineering notation. */
static const double PLAIN_MAX = 1e6, PLAIN_MIN = 1e-3;

/* The engineering exponent of v != 0: a multiple of 3 with 1 <= |v| / 10^e < 1000. */
static int eng_exponent(double v)
{
	int e = (int)floor(log10(fabs(v)) / 3) * 3;

	/* log10 of 1e-300 or 999.9999 may round across a boundary. */
	if (fabs(v) / pow(10, e) >= 1000 - 1e-9)
		e += 3;
	else if (fabs(v) / pow(10, e) < 1)
		e -= 3;
	return e;
}

char *plot_format_number(double v, char *buf, size_t len)
{
	if (v == 0 || !isfinite(v) || (fabs(v) >= PLAIN_MIN && fabs(v) < PLAIN_MAX)) {
		snprintf(buf, len, "%g", v);
		return buf;
	}
	int e = eng_exponent(v);
	double m = v / pow(10, e);
	char digits[16];
	/* 999.9 rounds to 1000 in three digits: then it is 1 of the next unit. */
	snprintf(digits, sizeof(digits), "%.3g", m);
	if (fabs(strtod(digits, NULL)) >= 1000) {
		e += 3;
		m /= 1000;
	}
	snprintf(buf, len, "%.3ge%d", m, e);
	return buf;
}

char *plot_format_bytes(double bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	size_t u = 0;

	while (fabs(bytes) >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, "%g %s", bytes, units[u]);
	return buf;
}

void plot_axis_linear(struct plot_axis *ax, double max_value, size_t target)
{
	static const double nice[] = { 1, 2, 5, 10 };
	double top = isfinite(max_value) && max_value > 0 ? max_value * 1.05 : 1.0;

	if (!isfinite(top))
		top = max_value;	/* within 5 % of DBL_MAX */
	double raw, mag, step = 0;
	size_t n;

	if (target < 2)
		target = 2;
	if (target > PLOT_MAX_TICKS - 1)
		target = PLOT_MAX_TICKS - 1;
	raw = top / (double)target;
	mag = pow(10, floor(log10(raw)));
	for (size_t i = 0; i < sizeof(nice) / sizeof(nice[0]) && !step; i++)
		if (nice[i] * mag >= raw * (1 - 1e-12))
			step = nice[i] * mag;
	/* step >= raw, so at most target steps reach top. */
	n = (size_t)ceil(top / step - 1e-9);
	ax->scale = PLOT_SCALE_LINEAR;
	ax->min = 0;
	ax->max = (double)n * step;
	/*
	 * Plain labels with the decimals the step needs, unless they would be
	 * long ("0.0000...", "10000000000000"): then one engineering exponent for
	 * the whole axis, the top's, and the decimals the step needs in its unit.
	 */
	bool plain = step >= 1e-4 && ax->max < PLAIN_MAX;
	int e = plain ? 0 : eng_exponent(ax->max);
	double unit = pow(10, e), scaled = step / unit;
	int decimals = scaled >= 1 ? 0 : (int)ceil(-log10(scaled) - 1e-9);
	ax->n_ticks = 0;
	for (size_t i = 0; i <= n && ax->n_ticks < PLOT_MAX_TICKS; i++) {
		struct plot_tick *t = &ax->ticks[ax->n_ticks++];
		t->value = (double)i * step;	/* a multiple, not a running sum: no accumulated rounding */
		if (plain)
			snprintf(t->label, sizeof(t->label), "%.*f", decimals, t->value);
		else if (i == 0)
			snprintf(t->label, sizeof(t->label), "0");
		else
			snprintf(t->label, sizeof(t->label), "%.*fe%d", decimals, (double)i * scaled, e);
	}
}

void plot_axis_log2(struct plot_axis *ax, double lo, double hi, size_t max_ticks)
{
	double l = log2(lo), h = log2(hi);
	double pad = h - l < 1e-9 ? 0.5 : fmax(0.15, 0.04 * (h - l));

	if (max_ticks < 2)
		max_ticks = 2;
	if (max_ticks > PLOT_MAX_TICKS)
		max_ticks = PLOT_MAX_TICKS;
	l -= pad;
	h += pad;
	ax->scale = PLOT_SCALE_LOG2;
	ax->min = exp2(l);
	ax->max = exp2(h);
	/* Tick exponents: multiples of k inside [l, h]; k grows until they fit. */
	double k0 = ceil(l - 1e-9), k1 = floor(h + 1e-9);
	int k = 1;
	while (floor(k1 / k) - ceil(k0 / k) + 1 > (double)max_ticks)
		k++;
	ax->n_ticks = 0;
	for (double e = ceil(k0 / k) * k; e <= k1 && ax->n_ticks < PLOT_MAX_TICKS; e += k) {
		struct plot_tick *t = &ax->ticks[ax->n_ticks++];
		t->value = exp2(e);
		if (ax->unit == PLOT_UNIT_BYTES)
			plot_format_bytes(t->value, t->label, sizeof(t->label));
		else
			plot_format_number(t->value, t->label, sizeof(t->label));
	}
}

void plot_axis_log2_covering(struct plot_axis *ax, double lo, double hi, size_t max_ticks)
{
	/* 3 % beyond the values, so a point never sits on the frame. */
	double l = log2(lo) - 0.04, h = log2(hi) + 0.04;
	int k = 1;

	if (max_ticks < 2)
		max_ticks = 2;
	if (max_ticks > PLOT_MAX_TICKS)
		max_ticks = PLOT_MAX_TICKS;
	while (ceil(h / k) - floor(l / k) + 1 > (double)max_ticks)
		k++;
	double e0 = floor(l / k) * k, e1 = ceil(h / k) * k;
	ax->scale = PLOT_SCALE_LOG2;
	ax->min = exp2(e0);
	ax->max = exp2(e1);
	ax->n_ticks = 0;
	for (double e = e0; e <= e1 + 1e-9 && ax->n_ticks < PLOT_MAX_TICKS; e += k) {
		struct plot_tick *t = &ax->ticks[ax->n_ticks++];
		t->value = exp2(e);
		if (ax->unit == PLOT_UNIT_BYTES)
			plot_format_bytes(t->value, t->label, sizeof(t->label));
		else
			plot_format_number(t->value, t->label, sizeof(t->label));
	}
}

double plot_map(const struct plot_axis *ax, double v, double px_lo, double px_hi)
{
	double a = ax->min, b = ax->max;

	if (ax->scale == PLOT_SCALE_LOG2) {
		a = log2(a);
		b = log2(b);
		v = v > 0 ? log2(v) : a;
	}
	if (!(b > a))
		return (px_lo + px_hi) / 2;
	return px_lo + (v - a) / (b - a) * (px_hi - px_lo);
}

double plot_x_px(const struct plot_chart *c, double x)
{
	return plot_map(&c->x, x, c->area.x, c->area.x + c->area.w);
}

double plot_y_px(const struct plot_chart *c, double y)
{
	return plot_map(&c->y, y, c->area.y + c->area.h, c->area.y);
}

static bool series_has(const struct plot_series *s, size_t cat)
{
	for (size_t i = 0; i < s->n; i++)
		if ((size_t)s->points[i].x == cat)
			return true;
	return false;
}

void plot_bar_px(const struct plot_chart *c, size_t s, size_t cat, double *x_px, double *w_px)
{
	/* The bars in a category share 80 % of its band, in series order; absent series take no room. */
	size_t slots = 0, slot = 0;
	double band = c->n_categories ? c->area.w / (double)c->n_categories : c->area.w;

	for (size_t i = 0; i < c->n_series; i++) {
		if (!series_has(&c->series[i], cat))
			continue;
		if (i < s)
			slot++;
		slots++;
	}
	if (!slots)
		slots = 1;
	*w_px = 0.8 * band / (double)slots;
	*x_px = c->area.x + band * (double)cat + 0.1 * band + *w_px * (double)slot;
}

/*
 * label cut to at most max_chars characters by taking out its middle
 * ("chase...r0"), never inside a UTF-8 character, and further until it is
 * at most max_px wide; whole when it fits.
 */
static void fit_label(char *out, size_t out_len, const char *label, size_t max_chars, double max_px)
{
	size_t len = strlen(label);

	snprintf(out, out_len, "%s", label);
	for (size_t keep = max_chars + 1; keep-- > 4;) {
		if (len <= keep && plot_text_width_px(out, PLOT_LABEL_FONT_PX) <= max_px)
			return;
		if (len <= keep)
			continue;
		size_t cut = keep - 2, head = cut / 2, tail = len - (cut - head);
		while (head > 0 && ((unsigned char)label[head] & 0xc0) == 0x80)
			head--;
		while (tail < len && ((unsigned char)label[tail] & 0xc0) == 0x80)
			tail++;
		snprintf(out, out_len, "%.*s..%s", (int)head, label, label + tail);
		if (plot_text_width_px(out, PLOT_LABEL_FONT_PX) <= max_px)
			return;
	}
}

/* The room between two tick labels on the x axis, px. */
static const double TICK_GAP_PX = 10;

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/*
 * The ticks of a log2 x axis at the measured values (n of them, any order):
 * a reader looks for the stride or size that was measured, not for the
 * powers of two between them. Where their labels would touch, the first and
 * the last stay and the ones between are kept left to right while each
 * clears the one before and the last.
 */
static void ticks_at_values(struct plot_axis *ax, double *v, size_t n, double width_px)
{
	double px[PLOT_MAX_TICKS * 8], half[PLOT_MAX_TICKS * 8];
	struct plot_tick t[PLOT_MAX_TICKS * 8];
	size_t m = 0, keep[PLOT_MAX_TICKS], k = 0;

	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n && m < sizeof(t) / sizeof(t[0]); i++) {
		if (m && v[i] == t[m - 1].value)
			continue;
		t[m].value = v[i];
		if (ax->unit == PLOT_UNIT_BYTES)
			plot_format_bytes(v[i], t[m].label, sizeof(t[m].label));
		else
			plot_format_number(v[i], t[m].label, sizeof(t[m].label));
		px[m] = plot_map(ax, v[i], 0, width_px);
		half[m] = plot_text_width_px(t[m].label, PLOT_LABEL_FONT_PX) / 2;
		m++;
	}
	if (!m)
		return;
	keep[k++] = 0;
	for (size_t i = 1; i + 1 < m && k + 1 < PLOT_MAX_TICKS; i++) {
		size_t last = keep[k - 1];
		if (px[i] - half[i] >= px[last] + half[last] + TICK_GAP_PX &&
		    px[i] + half[i] + TICK_GAP_PX <= px[m - 1] - half[m - 1])
			keep[k++] = i;
	}
	if (m > 1 && px[m - 1] - half[m - 1] >= px[0] + half[0] + TICK_GAP_PX)
		keep[k++] = m - 1;
	ax->n_ticks = 0;
	for (size_t i = 0; i < k; i++)
		ax->ticks[ax->n_ticks++] = t[keep[i]];
}

/* The x axis of a chart: log2 over its points (and CPUID capacities), or one band per category. */
void plot_layout_x_axis(struct plot_chart *c)
{
	struct plot_axis *ax = &c->x;
	double lo = INFINITY, hi = -INFINITY;

	if (plot_kind_is_bars(c->kind)) {
		ax->scale = PLOT_SCALE_BAND;
		ax->unit = PLOT_UNIT_CATEGORY;
		ax->min = 0;
		ax->max = (double)(c->n_categories ? c->n_categories : 1);
		ax->n_ticks = 0;
		/* A label wider than its band would run into the next one (the full name stays in data-x). */
		double band_px = (PLOT_WIDTH_PX - MARGIN_LEFT - MARGIN_RIGHT) / ax->max;
		for (size_t i = 0; i < c->n_categories && i < PLOT_MAX_TICKS; i++) {
			ax->ticks[ax->n_ticks] = (struct plot_tick){ .value = (double)i + 0.5 };
			fit_label(ax->ticks[ax->n_ticks++].label, sizeof(ax->ticks[0].label), c->categories[i],
				  sizeof(ax->ticks[0].label) - 1, band_px - TICK_GAP_PX);
		}
		return;
	}
	if (c->kind == PLOT_CHART_INTERVALS) {
		/* Time: linear from exec, ticks at round milliseconds. */
		for (size_t s = 0; s < c->n_series; s++)
			for (size_t i = 0; i < c->series[s].n; i++)
				hi = fmax(hi, c->series[s].points[i].x);
		plot_axis_linear(ax, isfinite(hi) ? hi : 1, LINEAR_TARGET_TICKS);
		ax->unit = PLOT_UNIT_MS;
		return;
	}
	size_t n = 0;
	for (size_t s = 0; s < c->n_series; s++)
		n += c->series[s].n;
	double *xs = malloc((n ? n : 1) * sizeof(*xs));
	n = 0;
	for (size_t s = 0; s < c->n_series; s++)
		for (size_t i = 0; i < c->series[s].n; i++) {
			lo = fmin(lo, c->series[s].points[i].x);
			hi = fmax(hi, c->series[s].points[i].x);
			if (xs)
				xs[n++] = c->series[s].points[i].x;
		}
	for (size_t i = 0; i < c->n_markers; i++) {
		lo = fmin(lo, c->markers[i].x);
		hi = fmax(hi, c->markers[i].x);
	}
	if (!(lo > 0) || !isfinite(hi))
		lo = hi = 1;
	plot_axis_log2(ax, lo, hi, LOG_MAX_TICKS);
	/* Without memory for the values the powers of two stay: the axis is still right, only less direct. */
	if (xs && n)
		ticks_at_values(ax, xs, n, PLOT_WIDTH_PX - MARGIN_LEFT - MARGIN_RIGHT);
	free(xs);
}

bool plot_kind_is_bars(enum plot_chart_kind k)
{
	return k == PLOT_CHART_PAGE_BARS || k == PLOT_CHART_FAULT_BARS || k == PLOT_CHART_RUN_BARS ||
	       k == PLOT_CHART_WALL_BARS;
}

/*
 * The y axis: linear from 0 over the medians and the spreads, except a
 * spread reaching past 1.5 times the highest median: one slow sample of
 * three (a noisy VM) would otherwise flatten every curve to the floor. That
 * spread is cut at the frame (the caller's note says so). A line chart whose medians
 * span more than LOG_Y_RATIO gets a log2 axis instead: a tlbsize curve
 * climbs from an L1 hit (~1.5 ns) to DRAM and page walks (~100 ns), and on a
 * linear axis its first knees would lie flat on the floor. Bars stay linear:
 * their length is the value.
 */
void plot_layout_y_axis(struct plot_chart *c, struct plot_cut *cut_out)
{
	double top_median = 0, low_median = INFINITY, top, low, worst = 0;
	size_t cut = 0;

	for (size_t s = 0; s < c->n_series; s++)
		for (size_t i = 0; i < c->series[s].n; i++) {
			top_median = fmax(top_median, c->series[s].points[i].y);
			low_median = fmin(low_median, c->series[s].points[i].y);
		}
	top = top_median;
	low = low_median;
	for (size_t s = 0; s < c->n_series; s++)
		for (size_t i = 0; i < c->series[s].n; i++) {
			double hi = c->series[s].points[i].hi, lo = c->series[s].points[i].lo;
			if (lo > 0)
				low = fmin(low, lo);
			if (hi <= SPREAD_CUT * top_median) {
				top = fmax(top, hi);
			} else {
				cut++;
				worst = fmax(worst, hi);
			}
		}
	c->y.unit = c->kind == PLOT_CHART_WALL_BARS ? PLOT_UNIT_MS : c->kind == PLOT_CHART_INTERVALS ? PLOT_UNIT_PER_S
											 : PLOT_UNIT_NS;
	if (c->x.scale != PLOT_SCALE_BAND && low_median > 0 && isfinite(low_median) && top_median > LOG_Y_RATIO * low_median) {
		plot_axis_log2_covering(&c->y, low, top, LOG_MAX_TICKS);
		snprintf(c->y.title + strlen(c->y.title), sizeof(c->y.title) - strlen(c->y.title), " (log scale)");
	} else {
		/* Bars get room over the highest for its value label (about 24 px of the 300). */
		plot_axis_linear(&c->y, c->x.scale == PLOT_SCALE_BAND ? top * (1 + BAR_LABEL_ROOM) : top,
				 LINEAR_TARGET_TICKS);
	}
	*cut_out = (struct plot_cut){ .points = cut, .worst = worst };
}
