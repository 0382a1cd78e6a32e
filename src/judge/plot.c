/* SPDX-License-Identifier: MIT */
/* Chart layout for `tlbprof plot` (pure, no I/O): which charts a report gets, of which kind, each built in steps. */
#include "judge/plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/plan.h"
#include "measure/workload.h"
#include "judge/plot_internal.h"

const char *plot_chart_kind_name(enum plot_chart_kind k)
{
	static const char *const names[] = {
		[PLOT_CHART_SIZE_SWEEP] = "size-sweep", [PLOT_CHART_PAGE_BARS] = "page-bars",
		[PLOT_CHART_TLBSIZE] = "tlbsize",	[PLOT_CHART_STRIDE] = "stride",
		[PLOT_CHART_FAULT_BARS] = "pagefault",	[PLOT_CHART_RUN_BARS] = "run-phases",
		[PLOT_CHART_WALL_BARS] = "wall-time",	[PLOT_CHART_INTERVALS] = "intervals",
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

/* What a chart's phases are, before it is drawn: the working sets measured, the phases that will not be. */
struct chart_census {
	uint64_t sizes[PLAN_MAX_SIZES];	/* distinct, in order of first appearance */
	size_t n_sizes;
	size_t not_drawn;		/* failed or skipped */
	char first_failed[200];		/* "name (reason)" of the first of them */
};

/*
 * The census of the chart's phases. Distinct measured working sets decide
 * between a sweep and bars (and split stride series).
 */
static void count_phases(const struct plot_chart_ctx *cx, struct chart_census *cs)
{
	const struct plot_input *in = cx->in;

	for (size_t i = 0; i < in->n; i++) {
		const struct phase_result *r = &in->phases[i];
		if (!plot_on_chart(cx, r))
			continue;
		if (!plot_phase_drawable(r)) {
			if (!cs->not_drawn++)
				snprintf(cs->first_failed, sizeof(cs->first_failed), "%.63s (%.120s)", r->spec.name,
					 *r->reason ? r->reason : phase_status_name(r->status));
			continue;
		}
		if (r->spec.role != PHASE_ROLE_MEASURE)
			continue;
		size_t k;
		for (k = 0; k < cs->n_sizes && cs->sizes[k] != r->spec.size_bytes; k++)
			;
		if (k == cs->n_sizes && cs->n_sizes < PLAN_MAX_SIZES)
			cs->sizes[cs->n_sizes++] = r->spec.size_bytes;
	}
}

/*
 * What the chart's kind decides: its title, its axis titles and units, the
 * spread's legend text, and the kind's own markers, steps and notes.
 * 0 or -ENOMEM.
 */
static int apply_kind(struct plot_chart_ctx *cx, const struct chart_census *cs)
{
	struct plot_chart *c = cx->c;
	const char *workload = cx->workload->name;
	size_t n_sizes = cs->n_sizes;
	char sz[24];
	int rc;

	plot_format_bytes(n_sizes ? (double)cs->sizes[0] : 0, sz, sizeof(sz));
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
		plot_add_tlbsize_markers(cx);
		break;
	case PLOT_CHART_STRIDE:
		if (n_sizes == 1)
			snprintf(c->title, sizeof(c->title), "%s at %s: ns per access vs stride, with the steps", workload, sz);
		else
			snprintf(c->title, sizeof(c->title), "%s: ns per access vs stride, with the steps", workload);
		snprintf(c->x.title, sizeof(c->x.title), "stride (log scale)");
		c->x.unit = PLOT_UNIT_BYTES;
		if ((rc = plot_add_stride_steps(cx)))
			return rc;
		plot_add_note(c, "Steps: cache = more new cache lines per access; tlb = the same lines, more pages "
				 "per access; flat = one access per page either way; within-page = huge pages, still "
				 "many accesses per page; none = no rise beyond the phases' own 95 %% intervals.");
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
	case PLOT_CHART_INTERVALS:
		break;	/* plot_intervals.c builds it, from the intervals rather than the phases */
	case PLOT_CHART_WALL_BARS:
		snprintf(c->title, sizeof(c->title), "%s: wall time per occurrence, per phase", workload);
		snprintf(c->x.title, sizeof(c->x.title), "phase");
		if (cx->workload->sweep == WORKLOAD_SWEEP_COMMAND)
			plot_add_note(c, "The command marked no phases: the bar is the wall time of the whole command "
					 "(declared.wall_ns). Phase markers with accesses=N give ns per access.");
		else
			plot_add_note(c, "These phases declared no accesses, so there is no ns per access: a bar is the "
					 "median wall time of one occurrence (declared.wall_ns; accesses=N on the begin "
					 "marker gives ns per access).");
		break;
	}
	snprintf(c->y.title, sizeof(c->y.title), "%s",
		 c->kind == PLOT_CHART_FAULT_BARS  ? "ns per page"
		 : c->kind == PLOT_CHART_WALL_BARS ? "ms per occurrence (wall time)"
						   : "ns per access");
	/* A run phase's samples are its occurrences, one value each. No spread drawn: no legend entry for one. */
	bool spread = false;
	for (size_t s = 0; s < c->n_series; s++)
		for (size_t i = 0; i < c->series[s].n; i++)
			spread |= c->series[s].points[i].hi > c->series[s].points[i].lo;
	c->spread_label = !spread ? NULL
			  : c->kind == PLOT_CHART_RUN_BARS || c->kind == PLOT_CHART_WALL_BARS ? "IQR of occurrences (25-75 %)"
											       : "IQR of samples (25-75 %)";
	return 0;
}

/* The notes every kind of chart may get: packed controls, no spread, phases not drawn, an interrupted run. */
static void add_chart_notes(const struct plot_chart_ctx *cx, const struct chart_census *cs)
{
	struct plot_chart *c = cx->c;
	size_t single = 0, points = 0;
	bool controls = false;

	for (size_t s = 0; s < c->n_series; s++)
		controls |= c->series[s].control;
	if (controls)
		plot_add_note(c, "Packed control: as many cache lines, packed on few 4 KiB pages, so its latency "
				 "approximates the cache part; the gap above it is the high end of the translation range.");
	for (size_t s = 0; s < c->n_series; s++)
		for (size_t i = 0; i < c->series[s].n; i++) {
			points++;
			single += c->series[s].points[i].samples == 1;
		}
	if (points && single == points)
		plot_add_note(c, "One %s per %s: there is no spread to show.",
			      cx->wall_time || c->kind == PLOT_CHART_RUN_BARS ? "occurrence" : "sample",
			      plot_kind_is_bars(c->kind) ? "bar" : "point");
	if (cs->not_drawn)
		plot_add_note(c, "%zu phase%s not drawn (failed or skipped), e.g. %s.", cs->not_drawn,
			      cs->not_drawn == 1 ? "" : "s", cs->first_failed);
	if (cx->dropped)
		plot_add_note(c, "%zu phase%s not drawn: more than %d series or %d categories.", cx->dropped,
			      cx->dropped == 1 ? "" : "s", MAX_SERIES, PLOT_MAX_CATEGORIES);
	if (cx->in->interrupted)
		plot_add_note(c, "The run was interrupted: only the phases that finished are drawn.");
}

/* The axes, then the chart's geometry in px from top (its height has a line per note), then what sits on it. */
void plot_lay_out(struct plot_chart *c, double top)
{
	struct plot_cut cut;

	plot_layout_x_axis(c);
	plot_layout_y_axis(c, &cut);
	if (cut.points)
		plot_add_note(c, "The spread of %zu point%s reaches past the top of the chart (up to %.4g %s) and is "
				 "cut off there; the SVG's data-hi attributes keep the values.", cut.points,
			      cut.points == 1 ? "" : "s", cut.worst, c->y.unit == PLOT_UNIT_MS ? "ms" : "ns");
	plot_place_steps(c);
	c->frame = (struct plot_rect){ 0, top, PLOT_WIDTH_PX,
				       TITLE_H + AREA_H + AXIS_H + NOTE_H * (double)c->n_notes + BOTTOM_PAD };
	c->area = (struct plot_rect){ MARGIN_LEFT, top + TITLE_H, PLOT_WIDTH_PX - MARGIN_LEFT - MARGIN_RIGHT, AREA_H };
	c->legend_x = c->area.x + c->area.w + 24;
	c->legend_y = c->area.y + 6;
	c->notes_y_px = c->area.y + c->area.h + AXIS_H + 4;
	c->note_h_px = NOTE_H;
	/* The y title left of the longest tick label (they end 8 px left of the area), not through it. */
	double longest = 0;
	for (size_t i = 0; i < c->y.n_ticks; i++)
		longest = fmax(longest, plot_text_width_px(c->y.ticks[i].label, PLOT_LABEL_FONT_PX));
	c->y_title_x_px = fmax(14, fmin(c->area.x - 58, c->area.x - 8 - longest - 12));
	plot_place_marker_labels(c);
	plot_place_step_labels(c);
	if (plot_kind_is_bars(c->kind))
		plot_place_value_labels(c);
}

/* One chart for the phases of one workload; top is its upper edge in px. */
static int build_chart(const struct plot_input *in, const struct workload_ops *w, bool wall_time, double top,
		       struct plot_chart *c)
{
	struct plot_chart_ctx cx = { .in = in, .c = c, .workload = w, .wall_time = wall_time };
	struct chart_census cs = { 0 };
	int rc;

	memset(c, 0, sizeof(*c));
	c->workload = w->name;
	count_phases(&cx, &cs);
	c->kind = plot_chart_kind_for(w->sweep, cs.n_sizes, wall_time);
	cx.multi_size = c->kind == PLOT_CHART_STRIDE && cs.n_sizes > 1;
	if ((rc = plot_fill_series(&cx)) || (rc = apply_kind(&cx, &cs)))
		return rc;
	add_chart_notes(&cx, &cs);
	plot_lay_out(c, top);
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
		bool wall = plot_phase_wall_time(&in->phases[i]), named = false;
		size_t k;
		if (!plot_phase_drawable(&in->phases[i]))
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
	bool intervals = in->intervals && in->intervals->n && in->intervals->n_series;
	out->charts = calloc(n_charts + intervals, sizeof(*out->charts));
	if (!out->charts)
		return -ENOMEM;
	out->width_px = PLOT_WIDTH_PX;
	for (size_t k = 0; k < n_charts + intervals && !rc; k++) {
		rc = k < n_charts ? build_chart(in, charts[k].workload, charts[k].wall_time, out->height_px, &out->charts[k])
				  : plot_build_intervals_chart(in, out->height_px, &out->charts[k]);
		out->n_charts = k + 1;
		out->height_px += out->charts[k].frame.h;
	}
	if (rc) {
		plot_free(out);
		return rc;
	}
	plot_build_footer(in, out);
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
