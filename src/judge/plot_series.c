/* SPDX-License-Identifier: MIT */
/* The series and points of a chart in `tlbprof plot`: which phases it draws, in which series, at which x, pooled. */
#include "judge/plot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "stats.h"
#include "measure/workload.h"
#include "judge/plot_internal.h"

/* The spread every point shows, and the legend says: robust to the one slow sample a noisy VM produces. */
static const double SPREAD_LO_Q = 0.25, SPREAD_HI_Q = 0.75;

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
 * The hatching of each series' spread band, by series: where two bands
 * overlap their lines cross, so each stays visible (translucent fills of two
 * colours blend into a third that belongs to neither).
 */
static const double hatch_angles[] = { 45, -45, 0, 90, 22.5, -67.5, 67.5, -22.5 };

/*
 * A tlbprof run phase that declared no accesses: there is no ns per access,
 * only the wall time of each occurrence (the unmarked command is one).
 */
bool plot_phase_wall_time(const struct phase_result *r)
{
	return r->target && !r->target->has_accesses;
}

bool plot_phase_drawable(const struct phase_result *r)
{
	if (r->status != PHASE_OK)
		return false;
	return plot_phase_wall_time(r) ? r->target->n_wall > 0 : r->n_samples || r->n_fault_samples;
}

/* How many values phase_values() gives at most. */
static size_t phase_value_count(const struct phase_result *r)
{
	if (plot_phase_wall_time(r))
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

	if (plot_phase_wall_time(r)) {
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

/* Whether phase r belongs on the chart of cx: its workload, and wall time or not. */
bool plot_on_chart(const struct plot_chart_ctx *cx, const struct phase_result *r)
{
	return r->spec.workload == cx->workload && plot_phase_wall_time(r) == cx->wall_time;
}

/* The series key and legend label of phase r on this chart. */
static void series_name(const struct plot_chart_ctx *cx, const struct phase_result *r, char *key, size_t klen,
			char *label, size_t llen)
{
	const struct phase_spec *s = &r->spec;
	char words[64], sz[SIZE_TEXT];
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
static size_t series_index(struct plot_chart_ctx *cx, const struct phase_result *r)
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
	s->hatch_deg = hatch_angles[c->n_series % (sizeof(hatch_angles) / sizeof(hatch_angles[0]))];
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
static bool phase_x(struct plot_chart_ctx *cx, const struct phase_result *r, size_t series, double *x)
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
	case PLOT_CHART_INTERVALS:
		return false;	/* drawn from the intervals, never from a phase (plot_intervals.c) */
	}
	return *x > 0;
}

/* Pool the samples of entries[a..b) (one series, one x) into one point. */
static int add_point(struct plot_chart_ctx *cx, const struct entry *e, size_t a, size_t b)
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
int plot_fill_series(struct plot_chart_ctx *cx)
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
		if (!plot_phase_drawable(r) || !plot_on_chart(cx, r))
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
const struct plot_point *plot_point_at(const struct plot_series *s, double x)
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
size_t plot_series_of_phase(const struct plot_chart_ctx *cx, size_t phase, double *x)
{
	const struct plot_chart *c = cx->c;
	const struct phase_spec *sp = &cx->in->phases[phase].spec;
	char key[48], label[80];

	series_name(cx, &cx->in->phases[phase], key, sizeof(key), label, sizeof(label));
	*x = (double)(sp->role == PHASE_ROLE_CONTROL ? sp->controls_stride_bytes : sp->stride_bytes);
	for (size_t s = 0; s < c->n_series; s++)
		if (strcmp(key, c->series[s].key) == 0)
			return plot_point_at(&c->series[s], *x) ? s : SIZE_MAX;
	return SIZE_MAX;
}
