/* SPDX-License-Identifier: MIT */
/* Chart layout for `tlbprof plot`: pure functions from phases and their analysis to charts as data (no I/O). */
#include "judge/plot.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "measure/plan.h"
#include "measure/workload.h"

/*
 * Geometry of one chart, px. The legend takes the right margin; the title
 * sits above the plotting area, tick labels, the axis title and the notes
 * below it.
 */
static const double MARGIN_LEFT = 84, MARGIN_RIGHT = 236, TITLE_H = 50, AREA_H = 300, AXIS_H = 54, NOTE_H = 15,
		    BOTTOM_PAD = 16;
/* The width of one character of 11 px text, estimated (the SVG writer's label backings use the same). */
static const double CHAR_W = 6.3;
/* Wrap notes at this many characters: about 900 px of 11 px text. */
enum { NOTE_WRAP = 140, MAX_SERIES = 32, LOG_MAX_TICKS = 10, LINEAR_TARGET_TICKS = 7 };
/* The spread every point shows, and the legend says: robust to the one slow sample a noisy VM produces. */
static const double SPREAD_LO_Q = 0.25, SPREAD_HI_Q = 0.75;
/* The y axis covers spreads up to this multiple of the highest median; longer ones are cut (see layout_y_axis). */
static const double SPREAD_CUT = 1.5;
/* Medians spanning more than this ratio get a log2 y axis (line charts only; see layout_y_axis). */
static const double LOG_Y_RATIO = 10;

const char *plot_scale_name(enum plot_scale s)
{
	static const char *const names[] = { [PLOT_SCALE_LINEAR] = "linear", [PLOT_SCALE_LOG2] = "log2",
					     [PLOT_SCALE_BAND] = "band" };
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

const char *plot_chart_kind_name(enum plot_chart_kind k)
{
	static const char *const names[] = {
		[PLOT_CHART_SIZE_SWEEP] = "size-sweep", [PLOT_CHART_PAGE_BARS] = "page-bars",
		[PLOT_CHART_TLBSIZE] = "tlbsize",	[PLOT_CHART_STRIDE] = "stride",
		[PLOT_CHART_FAULT_BARS] = "pagefault",	[PLOT_CHART_RUN_BARS] = "run-phases",
		[PLOT_CHART_WALL_BARS] = "wall-time",
	};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

enum plot_chart_kind plot_chart_kind_for(enum workload_sweep sweep, size_t n_sizes, bool wall_time)
{
	if (wall_time || sweep == WORKLOAD_SWEEP_COMMAND)
		return PLOT_CHART_WALL_BARS;
	switch (sweep) {
	case WORKLOAD_SWEEP_MARKED:
		return PLOT_CHART_RUN_BARS;
	case WORKLOAD_SWEEP_FAULT_CASES:
		return PLOT_CHART_FAULT_BARS;
	case WORKLOAD_SWEEP_PAGE_COUNTS:
		return PLOT_CHART_TLBSIZE;
	case WORKLOAD_SWEEP_STRIDES:
		return PLOT_CHART_STRIDE;
	default:
		return n_sizes > 1 ? PLOT_CHART_SIZE_SWEEP : PLOT_CHART_PAGE_BARS;
	}
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

/* Append a note, wrapped at word boundaries; lines beyond PLOT_MAX_NOTES are dropped with an ellipsis. */
__attribute__((format(printf, 2, 3)))
static void add_note(struct plot_chart *c, const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	const char *p = text;
	while (*p && c->n_notes < PLOT_MAX_NOTES) {
		size_t len = strlen(p), cut = len;
		if (len > NOTE_WRAP) {
			cut = NOTE_WRAP;
			while (cut > NOTE_WRAP / 2 && p[cut] != ' ')
				cut--;
		}
		char *line = c->notes[c->n_notes++];
		snprintf(line, sizeof(c->notes[0]), "%.*s%s", (int)cut, p,
			 cut < len && c->n_notes == PLOT_MAX_NOTES ? " ..." : "");
		p += cut;
		while (*p == ' ')
			p++;
	}
}

/* "4 KiB pages", "2 MiB pages (THP)", "1 GiB pages (hugetlb)". */
static void page_words(const struct page_request *pr, char *buf, size_t len)
{
	char b[24];

	snprintf(buf, len, "%s pages%s", plot_format_bytes((double)pr->bytes, b, sizeof(b)),
		 pr->kind == PAGE_THP ? " (THP)" : pr->kind == PAGE_HUGETLB ? " (hugetlb)" : "");
}

/* Colours by page size, so one page size looks the same in every chart of a document. */
static const char *page_color(const struct page_request *pr, bool control)
{
	if (control)
		return "#7f7f7f";
	if (pr->kind == PAGE_BASE)
		return "#1f77b4";
	if (pr->kind == PAGE_THP)
		return "#ff7f0e";
	return pr->bytes >= (1ull << 30) ? "#9467bd" : "#2ca02c";
}

/* A palette for charts that split one page size over several working sets. */
static const char *const palette[] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
				       "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f" };

/*
 * A tlbprof run phase that declared no accesses: there is no ns per access,
 * only the wall time of each occurrence (the unmarked command is one).
 */
static bool phase_wall_time(const struct phase_result *r)
{
	return r->target && !r->target->has_accesses;
}

static bool phase_drawable(const struct phase_result *r)
{
	if (r->status != PHASE_OK)
		return false;
	return phase_wall_time(r) ? r->target->n_wall > 0 : r->n_samples || r->n_fault_samples;
}

/* How many values phase_values() gives at most. */
static size_t phase_value_count(const struct phase_result *r)
{
	if (phase_wall_time(r))
		return r->target->n_wall;
	return r->n_fault_samples ? r->n_fault_samples : r->n_samples;
}

/*
 * The values a phase contributes to its point: ms per occurrence (run
 * phases without accesses), ns per page per touch (pagefault), else ns per
 * access.
 */
static size_t phase_values(const struct phase_result *r, double *out)
{
	size_t n = 0;

	if (phase_wall_time(r)) {
		for (size_t i = 0; i < r->target->n_wall; i++)
			out[n++] = r->target->wall_ns[i] / 1e6;
		return n;
	}
	if (r->n_fault_samples) {
		for (size_t i = 0; i < r->n_fault_samples; i++)
			if (r->fault_samples[i].pages)
				out[n++] = r->fault_samples[i].elapsed_ns / (double)r->fault_samples[i].pages;
		return n;
	}
	memcpy(out, r->samples_ns, r->n_samples * sizeof(*out));
	return r->n_samples;
}

static bool kind_is_bars(enum plot_chart_kind k)
{
	return k == PLOT_CHART_PAGE_BARS || k == PLOT_CHART_FAULT_BARS || k == PLOT_CHART_RUN_BARS ||
	       k == PLOT_CHART_WALL_BARS;
}

/* One phase placed on a chart: its series and x, before points are pooled. */
struct entry {
	size_t series;
	double x;
	size_t phase;
};

static int cmp_entry(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	if (a->series != b->series)
		return a->series < b->series ? -1 : 1;
	if (a->x != b->x)
		return a->x < b->x ? -1 : 1;
	return (a->phase > b->phase) - (a->phase < b->phase);
}

struct chart_ctx {
	const struct plot_input *in;
	struct plot_chart *c;
	const struct workload_ops *workload;	/* the phases drawn */
	bool wall_time;		/* the chart of run phases without accesses (phase_wall_time) */
	bool multi_size;	/* stride: several working sets, a series each */
	size_t dropped;		/* phases beyond the series or category limits */
};

/* Whether phase r belongs on the chart of cx: its workload, and wall time or not. */
static bool on_chart(const struct chart_ctx *cx, const struct phase_result *r)
{
	return r->spec.workload == cx->workload && phase_wall_time(r) == cx->wall_time;
}

/* The series key and legend label of phase r on this chart. */
static void series_name(const struct chart_ctx *cx, const struct phase_result *r, char *key, size_t klen, char *label,
			size_t llen)
{
	const struct phase_spec *s = &r->spec;
	char words[64], sz[16];
	bool control = s->role == PHASE_ROLE_CONTROL;

	if (cx->c->kind == PLOT_CHART_WALL_BARS) {
		snprintf(key, klen, "wall");
		snprintf(label, llen, "wall time per occurrence");
		return;
	}
	if (cx->c->kind == PLOT_CHART_RUN_BARS && !(r->target && r->target->has_page)) {
		snprintf(key, klen, "page-not-declared");
		snprintf(label, llen, "page size not declared");
		return;
	}
	page_words(&s->page, words, sizeof(words));
	if (cx->multi_size) {
		char b[24];
		snprintf(key, klen, "%s%s/%s", s->page.label, control ? ":packed" : "",
			 format_size(s->size_bytes, sz, sizeof(sz)));
		plot_format_bytes((double)s->size_bytes, b, sizeof(b));
		if (control)
			snprintf(label, llen, "%s packed control, %s", plot_format_bytes((double)s->page.bytes, words, sizeof(words)), b);
		else
			snprintf(label, llen, "%.40s, %.24s", words, b);
		return;
	}
	snprintf(key, klen, "%s%s", s->page.label, control ? ":packed" : "");
	if (control)
		snprintf(label, llen, "%s packed control", plot_format_bytes((double)s->page.bytes, words, sizeof(words)));
	else
		snprintf(label, llen, "%s", words);
}

/* Index of the series with key, added when new; SIZE_MAX past MAX_SERIES. */
static size_t series_index(struct chart_ctx *cx, const struct phase_result *r)
{
	struct plot_chart *c = cx->c;
	char key[48], label[80];

	series_name(cx, r, key, sizeof(key), label, sizeof(label));
	for (size_t i = 0; i < c->n_series; i++)
		if (strcmp(c->series[i].key, key) == 0)
			return i;
	if (c->n_series == MAX_SERIES)
		return SIZE_MAX;
	struct plot_series *s = &c->series[c->n_series];
	memset(s, 0, sizeof(*s));
	snprintf(s->key, sizeof(s->key), "%s", key);
	snprintf(s->label, sizeof(s->label), "%s", label);
	s->control = r->spec.role == PHASE_ROLE_CONTROL;
	const char *color = cx->multi_size ? palette[c->n_series % (sizeof(palette) / sizeof(palette[0]))]
					   : page_color(&r->spec.page, s->control);
	if (strcmp(key, "page-not-declared") == 0)
		color = "#8c564b";
	snprintf(s->color, sizeof(s->color), "%s", color);
	return c->n_series++;
}

/* The category index of label on a band axis, added when new; SIZE_MAX past the limit. */
static size_t category_index(struct plot_chart *c, const char *label)
{
	for (size_t i = 0; i < c->n_categories; i++)
		if (strcmp(c->categories[i], label) == 0)
			return i;
	if (c->n_categories == PLOT_MAX_CATEGORIES)
		return SIZE_MAX;
	snprintf(c->categories[c->n_categories], sizeof(c->categories[0]), "%s", label);
	return c->n_categories++;
}

/* Where phase r sits on the x axis of this chart; false when it cannot be placed. */
static bool phase_x(struct chart_ctx *cx, const struct phase_result *r, size_t series, double *x)
{
	const struct phase_spec *s = &r->spec;
	bool control = s->role == PHASE_ROLE_CONTROL;
	size_t cat;

	*x = 0;
	switch (cx->c->kind) {
	case PLOT_CHART_SIZE_SWEEP:
		/* A control stands for the working set it was packed from. */
		*x = (double)(control ? s->controls_size_bytes : s->size_bytes);
		break;
	case PLOT_CHART_STRIDE:
		*x = (double)(control ? s->controls_stride_bytes : s->stride_bytes);
		break;
	case PLOT_CHART_TLBSIZE:
		*x = (double)r->slots;	/* one slot per page */
		break;
	case PLOT_CHART_PAGE_BARS:
		cat = category_index(cx->c, cx->c->series[series].key);
		*x = (double)cat;
		return cat != SIZE_MAX;
	case PLOT_CHART_FAULT_BARS:
		cat = category_index(cx->c, fault_case_name(s->fault_case) ? fault_case_name(s->fault_case) : "?");
		*x = (double)cat;
		return cat != SIZE_MAX;
	case PLOT_CHART_RUN_BARS:
	case PLOT_CHART_WALL_BARS:
		/* A bar per marked phase name: the names are the benchmark's own words. */
		cat = category_index(cx->c, s->name);
		*x = (double)cat;
		return cat != SIZE_MAX;
	}
	return *x > 0;
}

/* Pool the samples of entries[a..b) (one series, one x) into one point. */
static int add_point(struct chart_ctx *cx, const struct entry *e, size_t a, size_t b)
{
	const struct phase_result *ph = cx->in->phases;
	struct plot_series *s = &cx->c->series[e[a].series];
	size_t total = 0, n = 0;
	double *v;
	struct stats_summary st;

	for (size_t i = a; i < b; i++)
		total += phase_value_count(&ph[e[i].phase]);
	v = malloc((total ? total : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = a; i < b; i++)
		n += phase_values(&ph[e[i].phase], v + n);
	if (!n) {
		free(v);
		return 0;
	}
	struct plot_point *p = &s->points[s->n++];
	stats_summarize(v, n, &st);	/* the analysis's median, so a point equals the report's */
	stats_sort(v, n);
	*p = (struct plot_point){ .x = e[a].x, .y = st.median, .lo = stats_quantile_sorted(v, n, SPREAD_LO_Q),
				  .hi = stats_quantile_sorted(v, n, SPREAD_HI_Q), .samples = n, .phase = e[a].phase };
	free(v);
	return 0;
}

/* Place every drawable phase of the chart's workload into series and points. */
static int fill_series(struct chart_ctx *cx)
{
	const struct plot_input *in = cx->in;
	struct plot_chart *c = cx->c;
	struct entry *e = calloc(in->n + 1, sizeof(*e));
	size_t m = 0;
	int rc = 0;

	c->series = calloc(MAX_SERIES, sizeof(*c->series));
	if (!e || !c->series) {
		free(e);
		return -ENOMEM;
	}
	for (size_t i = 0; i < in->n; i++) {
		const struct phase_result *r = &in->phases[i];
		if (!phase_drawable(r) || !on_chart(cx, r))
			continue;
		size_t s = series_index(cx, r);
		double x;
		if (s == SIZE_MAX || !phase_x(cx, r, s, &x)) {
			cx->dropped++;
			continue;
		}
		e[m++] = (struct entry){ .series = s, .x = x, .phase = i };
	}
	qsort(e, m, sizeof(*e), cmp_entry);
	/* Points per series: count, allocate, then pool runs of equal (series, x). */
	for (size_t i = 0; i < m; i++)
		c->series[e[i].series].n++;
	for (size_t s = 0; s < c->n_series; s++) {
		c->series[s].points = calloc(c->series[s].n + 1, sizeof(struct plot_point));
		c->series[s].n = 0;
		if (!c->series[s].points)
			rc = -ENOMEM;
	}
	for (size_t a = 0, b; !rc && a < m; a = b) {
		for (b = a + 1; b < m && e[b].series == e[a].series && e[b].x == e[a].x; b++)
			;
		rc = add_point(cx, e, a, b);
	}
	free(e);
	return rc;
}

/* The point of series s at x, or NULL (points are sorted by x: a binary search). */
static const struct plot_point *point_at(const struct plot_series *s, double x)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->points[mid].x < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->points[lo].x == x ? &s->points[lo] : NULL;
}

/* The series a stride phase was drawn in (its stride in *x), or SIZE_MAX. */
static size_t series_of_phase(const struct chart_ctx *cx, size_t phase, double *x)
{
	const struct plot_chart *c = cx->c;
	const struct phase_spec *sp = &cx->in->phases[phase].spec;
	char key[48], label[80];

	series_name(cx, &cx->in->phases[phase], key, sizeof(key), label, sizeof(label));
	*x = (double)(sp->role == PHASE_ROLE_CONTROL ? sp->controls_stride_bytes : sp->stride_bytes);
	for (size_t s = 0; s < c->n_series; s++)
		if (strcmp(key, c->series[s].key) == 0)
			return point_at(&c->series[s], *x) ? s : SIZE_MAX;
	return SIZE_MAX;
}

static int add_stride_steps(struct chart_ctx *cx)
{
	const struct analysis *a = cx->in->analysis;
	struct plot_chart *c = cx->c;

	c->steps = calloc(a->n_stride_steps + 1, sizeof(*c->steps));
	if (!c->steps)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_stride_steps; i++) {
		const struct stride_step *st = &a->stride_steps[i];
		double x0, x1;
		size_t s = series_of_phase(cx, st->from, &x0);
		if (s == SIZE_MAX || series_of_phase(cx, st->to, &x1) != s)
			continue;
		const struct plot_point *p0 = point_at(&c->series[s], x0), *p1 = point_at(&c->series[s], x1);
		c->steps[c->n_steps++] = (struct plot_step){ .series = s, .x_from = x0, .x_to = x1,
							     .x = sqrt(x0 * x1), .y = (p0->y + p1->y) / 2,
							     .above = true, .label = st->label };
	}
	return 0;
}

static void add_marker(struct plot_chart *c, enum plot_marker_kind kind, double x, double x_after, const char *level,
		       const char *label)
{
	if (c->n_markers == PLOT_MAX_MARKERS)
		return;
	struct plot_marker *m = &c->markers[c->n_markers++];
	*m = (struct plot_marker){ .kind = kind, .x = x, .x_after = x_after, .level = level };
	snprintf(m->label, sizeof(m->label), "%s", label);
}

static void add_tlbsize_markers(struct chart_ctx *cx)
{
	const struct analysis *a = cx->in->analysis;
	const struct environment *env = cx->in->env;
	struct plot_chart *c = cx->c;
	char label[64];

	for (size_t i = 0; i < a->n_knees; i++) {
		const struct tlb_knee *tk = &a->knees[i];
		snprintf(label, sizeof(label), "knee %.0f", tk->knee.x_before);
		add_marker(c, PLOT_MARKER_KNEE, tk->knee.x_before, tk->knee.x_after, NULL, label);
	}
	const struct {
		const char *level, *name;
		unsigned entries;
	} caps[] = {
		{ "l1d_4k_entries", "L1 dTLB", env ? env->tlb.l1d_4k_entries : 0 },
		{ "l2d_4k_entries", "L2 TLB", env ? env->tlb.l2d_4k_entries : 0 },
	};
	size_t reported = 0;
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		if (!caps[i].entries)
			continue;
		snprintf(label, sizeof(label), "%s %u (CPUID)", caps[i].name, caps[i].entries);
		add_marker(c, PLOT_MARKER_CPUID, caps[i].entries, 0, caps[i].level, label);
		reported++;
	}
	if (!reported)
		add_note(c, "CPUID reports no 4 KiB TLB capacities here (environment.tlb l1d_4k_entries and "
			    "l2d_4k_entries are null): the knees are candidates with nothing to confirm them.");
	if (!a->n_knees)
		add_note(c, "No knee found on this curve.");
	else
		add_note(c, "Knees: the last page count on a lower level before latency steps up to a higher one "
			    "that persists (candidate capacities, as the report's analysis.knees).");
}

/*
 * label cut to at most max_chars characters by taking out its middle
 * ("chase...r0"), never inside a UTF-8 character; whole when it fits.
 */
static void fit_label(char *out, size_t out_len, const char *label, size_t max_chars)
{
	size_t len = strlen(label);

	if (len <= max_chars || max_chars < 5) {
		snprintf(out, out_len, "%s", label);
		return;
	}
	size_t keep = max_chars - 2, head = keep / 2, tail = len - (keep - head);
	while (head > 0 && ((unsigned char)label[head] & 0xc0) == 0x80)
		head--;
	while (tail < len && ((unsigned char)label[tail] & 0xc0) == 0x80)
		tail++;
	snprintf(out, out_len, "%.*s..%s", (int)head, label, label + tail);
}

/* The x axis of a chart: log2 over its points (and CPUID capacities), or one band per category. */
static void layout_x_axis(struct plot_chart *c)
{
	struct plot_axis *ax = &c->x;
	double lo = INFINITY, hi = -INFINITY;

	if (kind_is_bars(c->kind)) {
		ax->scale = PLOT_SCALE_BAND;
		ax->unit = PLOT_UNIT_CATEGORY;
		ax->min = 0;
		ax->max = (double)(c->n_categories ? c->n_categories : 1);
		ax->n_ticks = 0;
		/* A label wider than its band would run into the next one (the full name stays in data-x). */
		double band_px = (PLOT_WIDTH_PX - MARGIN_LEFT - MARGIN_RIGHT) / ax->max;
		size_t fits = (size_t)((band_px - 4) / CHAR_W);
		for (size_t i = 0; i < c->n_categories && i < PLOT_MAX_TICKS; i++) {
			ax->ticks[ax->n_ticks] = (struct plot_tick){ .value = (double)i + 0.5 };
			fit_label(ax->ticks[ax->n_ticks++].label, sizeof(ax->ticks[0].label), c->categories[i],
				  fits < sizeof(ax->ticks[0].label) - 1 ? fits : sizeof(ax->ticks[0].label) - 1);
		}
		return;
	}
	for (size_t s = 0; s < c->n_series; s++)
		for (size_t i = 0; i < c->series[s].n; i++) {
			lo = fmin(lo, c->series[s].points[i].x);
			hi = fmax(hi, c->series[s].points[i].x);
		}
	for (size_t i = 0; i < c->n_markers; i++) {
		lo = fmin(lo, c->markers[i].x);
		hi = fmax(hi, c->markers[i].x);
	}
	if (!(lo > 0) || !isfinite(hi))
		lo = hi = 1;
	plot_axis_log2(ax, lo, hi, LOG_MAX_TICKS);
}

/*
 * The y axis: linear from 0 over the medians and the spreads, except a
 * spread reaching past 1.5 times the highest median: one slow sample of
 * three (a noisy VM) would otherwise flatten every curve to the floor. That
 * spread is cut at the frame and a note says so. A line chart whose medians
 * span more than LOG_Y_RATIO gets a log2 axis instead: a tlbsize curve
 * climbs from an L1 hit (~1.5 ns) to DRAM and page walks (~100 ns), and on a
 * linear axis its first knees would lie flat on the floor. Bars stay linear:
 * their length is the value.
 */
static void layout_y_axis(struct plot_chart *c)
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
	c->y.unit = c->kind == PLOT_CHART_WALL_BARS ? PLOT_UNIT_MS : PLOT_UNIT_NS;
	if (c->x.scale != PLOT_SCALE_BAND && low_median > 0 && isfinite(low_median) && top_median > LOG_Y_RATIO * low_median) {
		plot_axis_log2(&c->y, low, top, LOG_MAX_TICKS);
		snprintf(c->y.title + strlen(c->y.title), sizeof(c->y.title) - strlen(c->y.title), " (log scale)");
	} else {
		plot_axis_linear(&c->y, top, LINEAR_TARGET_TICKS);
	}
	if (cut)
		add_note(c, "The spread of %zu point%s reaches past the top of the chart (up to %.4g %s) and is cut off there; "
			    "the SVG's data-hi attributes keep the values.", cut, cut == 1 ? "" : "s", worst,
			 c->y.unit == PLOT_UNIT_MS ? "ms" : "ns");
}

/*
 * Stride step labels go above their segment for series that run high and
 * below it for those that run low, so they stay off the other lines.
 */
static void place_steps(struct plot_chart *c)
{
	double all = 0, *mean = calloc(c->n_series + 1, sizeof(*mean));
	size_t n_all = 0;

	if (!mean)
		return;	/* every label stays above: only the placement is lost */
	for (size_t s = 0; s < c->n_series; s++) {
		for (size_t i = 0; i < c->series[s].n; i++)
			mean[s] += c->series[s].points[i].y;
		all += mean[s];
		n_all += c->series[s].n;
		mean[s] = c->series[s].n ? mean[s] / (double)c->series[s].n : 0;
	}
	all = n_all ? all / (double)n_all : 0;
	for (size_t i = 0; i < c->n_steps; i++)
		c->steps[i].above = c->n_series < 2 || mean[c->steps[i].series] >= all;
	free(mean);
}

/* Rows of marker labels from the top of the area, px. */
enum { LABEL_ROWS = 4 };
static const double LABEL_ROW_H = 13, LABEL_GAP = 4;

/*
 * Marker labels: right of their line when the label ends before the next
 * line to the right (so it crosses none), else left of it when it fits
 * before the previous line, else on whichever side stays inside the area
 * (never under the legend); then the first of four rows where it overlaps
 * no label placed before it.
 */
static void place_marker_labels(struct plot_chart *c)
{
	double left = c->area.x + 2, right = c->area.x + c->area.w - 2;
	double row_end[LABEL_ROWS][PLOT_MAX_MARKERS][2];
	size_t row_n[LABEL_ROWS] = { 0 };
	size_t order[PLOT_MAX_MARKERS];

	for (size_t i = 0; i < c->n_markers; i++)
		order[i] = i;
	/* Left to right (insertion sort: a few markers). */
	for (size_t i = 1; i < c->n_markers; i++)
		for (size_t k = i; k > 0 && c->markers[order[k]].x < c->markers[order[k - 1]].x; k--) {
			size_t t = order[k];
			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	for (size_t oi = 0; oi < c->n_markers; oi++) {
		struct plot_marker *m = &c->markers[order[oi]];
		double x = plot_x_px(c, m->x), w = CHAR_W * (double)strlen(m->label) + 4;
		double next = right, prev = left;
		for (size_t k = 0; k < c->n_markers; k++) {
			double xk = plot_x_px(c, c->markers[k].x);
			if (xk > x + 0.5)
				next = fmin(next, xk);
			else if (xk < x - 0.5)
				prev = fmax(prev, xk);
		}
		if (x + LABEL_GAP + w <= next)
			m->label_end = false;
		else if (x - LABEL_GAP - w >= prev)
			m->label_end = true;
		else
			m->label_end = x + LABEL_GAP + w > right;
		m->label_x_px = m->label_end ? x - LABEL_GAP : x + LABEL_GAP;
		double lo = m->label_end ? m->label_x_px - w : m->label_x_px, hi = lo + w;
		size_t row = oi % LABEL_ROWS;
		for (size_t r = 0; r < LABEL_ROWS; r++) {
			bool clear = true;
			for (size_t k = 0; k < row_n[r] && clear; k++)
				clear = hi <= row_end[r][k][0] || lo >= row_end[r][k][1];
			if (clear) {
				row = r;
				break;
			}
		}
		row_end[row][row_n[row]][0] = lo;
		row_end[row][row_n[row]][1] = hi;
		row_n[row]++;
		m->label_y_px = c->area.y + 12 + LABEL_ROW_H * (double)row;
	}
}

/* One chart for the phases of one workload; top is its upper edge in px. */
static int build_chart(const struct plot_input *in, const struct workload_ops *w, bool wall_time, double top,
		       struct plot_chart *c)
{
	struct chart_ctx cx = { .in = in, .c = c, .workload = w, .wall_time = wall_time };
	const char *workload = w->name;
	uint64_t sizes[PLAN_MAX_SIZES];
	size_t n_sizes = 0, not_drawn = 0, single = 0, points = 0;
	char sz[24], first_failed[200] = "";
	int rc;

	memset(c, 0, sizeof(*c));
	c->workload = workload;
	/* Distinct measured working sets decide between a sweep and bars (and split stride series). */
	for (size_t i = 0; i < in->n; i++) {
		const struct phase_result *r = &in->phases[i];
		if (!on_chart(&cx, r))
			continue;
		if (!phase_drawable(r)) {
			if (!not_drawn++)
				snprintf(first_failed, sizeof(first_failed), "%.63s (%.120s)", r->spec.name,
					 *r->reason ? r->reason : phase_status_name(r->status));
			continue;
		}
		if (r->spec.role != PHASE_ROLE_MEASURE)
			continue;
		size_t k;
		for (k = 0; k < n_sizes && sizes[k] != r->spec.size_bytes; k++)
			;
		if (k == n_sizes && n_sizes < PLAN_MAX_SIZES)
			sizes[n_sizes++] = r->spec.size_bytes;
	}
	c->kind = plot_chart_kind_for(w->sweep, n_sizes, wall_time);
	cx.multi_size = c->kind == PLOT_CHART_STRIDE && n_sizes > 1;
	if ((rc = fill_series(&cx)))
		return rc;
	plot_format_bytes(n_sizes ? (double)sizes[0] : 0, sz, sizeof(sz));

	switch (c->kind) {
	case PLOT_CHART_SIZE_SWEEP:
		snprintf(c->title, sizeof(c->title), "%s: ns per access vs working set, per page size", workload);
		snprintf(c->x.title, sizeof(c->x.title), "working set (log scale)");
		c->x.unit = PLOT_UNIT_BYTES;
		break;
	case PLOT_CHART_PAGE_BARS:
		snprintf(c->title, sizeof(c->title), "%s at %s: ns per access per page size", workload, sz);
		snprintf(c->x.title, sizeof(c->x.title), "page size");
		break;
	case PLOT_CHART_TLBSIZE:
		snprintf(c->title, sizeof(c->title), "%s: ns per access vs pages touched (one slot per page)", workload);
		snprintf(c->x.title, sizeof(c->x.title), "pages touched (log scale)");
		c->x.unit = PLOT_UNIT_COUNT;
		add_tlbsize_markers(&cx);
		break;
	case PLOT_CHART_STRIDE:
		if (n_sizes == 1)
			snprintf(c->title, sizeof(c->title), "%s at %s: ns per access vs stride, with the steps", workload, sz);
		else
			snprintf(c->title, sizeof(c->title), "%s: ns per access vs stride, with the steps", workload);
		snprintf(c->x.title, sizeof(c->x.title), "stride (log scale)");
		c->x.unit = PLOT_UNIT_BYTES;
		if ((rc = add_stride_steps(&cx)))
			return rc;
		add_note(c, "Steps: cache = more new cache lines per access; tlb = the same lines, more pages per access; "
			    "flat = one access per page either way; within-page = huge pages, still many accesses per page.");
		break;
	case PLOT_CHART_FAULT_BARS:
		snprintf(c->title, sizeof(c->title), "%s at %s: ns per 4 KiB page touched, per case and page size",
			 workload, sz);
		snprintf(c->x.title, sizeof(c->x.title), "page-fault case");
		break;
	case PLOT_CHART_RUN_BARS:
		snprintf(c->title, sizeof(c->title), "%s: ns per access per phase (as the benchmark declared them)",
			 workload);
		snprintf(c->x.title, sizeof(c->x.title), "phase");
		break;
	case PLOT_CHART_WALL_BARS:
		snprintf(c->title, sizeof(c->title), "%s: wall time per occurrence, per phase", workload);
		snprintf(c->x.title, sizeof(c->x.title), "phase");
		if (w->sweep == WORKLOAD_SWEEP_COMMAND)
			add_note(c, "The command marked no phases: the bar is the wall time of the whole command "
				    "(declared.wall_ns). Phase markers with accesses=N give ns per access.");
		else
			add_note(c, "These phases declared no accesses, so there is no ns per access: a bar is the median "
				    "wall time of one occurrence (declared.wall_ns; accesses=N on the begin marker gives ns "
				    "per access).");
		break;
	}
	snprintf(c->y.title, sizeof(c->y.title), "%s",
		 c->kind == PLOT_CHART_FAULT_BARS  ? "ns per page"
		 : c->kind == PLOT_CHART_WALL_BARS ? "ms per occurrence (wall time)"
						   : "ns per access");
	/* A run phase's samples are its occurrences, one value each. */
	c->spread_label = c->kind == PLOT_CHART_RUN_BARS || c->kind == PLOT_CHART_WALL_BARS
				  ? "IQR of occurrences (25-75 %)"
				  : "IQR of samples (25-75 %)";

	bool controls = false;
	for (size_t s = 0; s < c->n_series; s++)
		controls |= c->series[s].control;
	if (controls)
		add_note(c, "Packed control: as many cache lines, packed 64 B apart on few 4 KiB pages, so its latency is "
			    "the cache part alone; the gap above it is address translation.");
	for (size_t s = 0; s < c->n_series; s++)
		for (size_t i = 0; i < c->series[s].n; i++) {
			points++;
			single += c->series[s].points[i].samples == 1;
		}
	if (points && single == points)
		add_note(c, "One %s per %s: there is no spread to show.",
			 cx.wall_time || c->kind == PLOT_CHART_RUN_BARS ? "occurrence" : "sample",
			 kind_is_bars(c->kind) ? "bar" : "point");
	if (not_drawn)
		add_note(c, "%zu phase%s not drawn (failed or skipped), e.g. %s.", not_drawn, not_drawn == 1 ? "" : "s",
			 first_failed);
	if (cx.dropped)
		add_note(c, "%zu phase%s not drawn: more than %d series or %d categories.", cx.dropped,
			 cx.dropped == 1 ? "" : "s", MAX_SERIES, PLOT_MAX_CATEGORIES);
	if (in->interrupted)
		add_note(c, "The run was interrupted: only the phases that finished are drawn.");

	layout_x_axis(c);
	layout_y_axis(c);
	place_steps(c);
	c->frame = (struct plot_rect){ 0, top, PLOT_WIDTH_PX,
				       TITLE_H + AREA_H + AXIS_H + NOTE_H * (double)c->n_notes + BOTTOM_PAD };
	c->area = (struct plot_rect){ MARGIN_LEFT, top + TITLE_H, PLOT_WIDTH_PX - MARGIN_LEFT - MARGIN_RIGHT, AREA_H };
	c->legend_x = c->area.x + c->area.w + 24;
	c->legend_y = c->area.y + 6;
	c->notes_y_px = c->area.y + c->area.h + AXIS_H + 4;
	c->note_h_px = NOTE_H;
	/* The y title left of the longest tick label (they end 8 px left of the area), not through it. */
	size_t longest = 0;
	for (size_t i = 0; i < c->y.n_ticks; i++)
		longest = strlen(c->y.ticks[i].label) > longest ? strlen(c->y.ticks[i].label) : longest;
	c->y_title_x_px = fmax(14, fmin(c->area.x - 58, c->area.x - 8 - CHAR_W * (double)longest - 12));
	place_marker_labels(c);
	return 0;
}

int plot_build(const struct plot_input *in, struct plot *out)
{
	/* A chart per workload, and one more for a workload's run phases without accesses. */
	struct {
		const struct workload_ops *workload;
		bool wall_time;
	} charts[16];
	size_t n_charts = 0;
	char names[96] = "";
	int rc = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < in->n; i++) {
		const struct workload_ops *w = in->phases[i].spec.workload;
		bool wall = phase_wall_time(&in->phases[i]), named = false;
		size_t k;
		if (!phase_drawable(&in->phases[i]))
			continue;
		for (k = 0; k < n_charts && (charts[k].workload != w || charts[k].wall_time != wall); k++)
			named |= charts[k].workload == w;
		if (k == n_charts && n_charts < sizeof(charts) / sizeof(charts[0])) {
			charts[n_charts].workload = w;
			charts[n_charts++].wall_time = wall;
			if (!named)
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", k ? ", " : "", w->name);
		}
	}
	if (!n_charts)
		return -ENODATA;
	out->charts = calloc(n_charts, sizeof(*out->charts));
	if (!out->charts)
		return -ENOMEM;
	out->width_px = PLOT_WIDTH_PX;
	for (size_t k = 0; k < n_charts && !rc; k++) {
		rc = build_chart(in, charts[k].workload, charts[k].wall_time, out->height_px, &out->charts[k]);
		out->n_charts = k + 1;
		out->height_px += out->charts[k].frame.h;
	}
	if (rc) {
		plot_free(out);
		return rc;
	}
	const struct environment *env = in->env;
	snprintf(out->title, sizeof(out->title), "tlbprof: %s on %s%s%s%s%s%s", names,
		 env && *env->cpu_model_name ? env->cpu_model_name : "an unknown CPU",
		 env && *env->hypervisor ? " (" : "", env ? env->hypervisor : "", env && *env->hypervisor ? " guest)" : "",
		 in->source ? ", from " : "", in->source ? in->source : "");
	return 0;
}

void plot_free(struct plot *p)
{
	for (size_t k = 0; p->charts && k < p->n_charts; k++) {
		struct plot_chart *c = &p->charts[k];
		for (size_t s = 0; c->series && s < c->n_series; s++)
			free(c->series[s].points);
		free(c->series);
		free(c->steps);
	}
	free(p->charts);
	memset(p, 0, sizeof(*p));
}
