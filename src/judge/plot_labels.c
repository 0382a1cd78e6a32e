/* SPDX-License-Identifier: MIT */
/* What `tlbprof plot` puts on a chart besides its series: notes, knee and TLB capacity markers, stride step labels. */
#include "judge/plot.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/plot_internal.h"

/* Wrap notes at this many characters: about 900 px of 11 px text. */
enum { NOTE_WRAP = 140 };

/* Append a note, wrapped at word boundaries; lines beyond PLOT_MAX_NOTES are dropped with an ellipsis. */
__attribute__((format(printf, 2, 3)))
void plot_add_note(struct plot_chart *c, const char *fmt, ...)
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

int plot_add_stride_steps(struct plot_chart_ctx *cx)
{
	const struct analysis *a = cx->in->analysis;
	struct plot_chart *c = cx->c;

	c->steps = calloc(a->n_stride_steps + 1, sizeof(*c->steps));
	if (!c->steps)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_stride_steps; i++) {
		const struct stride_step *st = &a->stride_steps[i];
		double x0, x1;
		size_t s = plot_series_of_phase(cx, st->from, &x0);
		if (s == SIZE_MAX || plot_series_of_phase(cx, st->to, &x1) != s)
			continue;
		const struct plot_point *p0 = plot_point_at(&c->series[s], x0), *p1 = plot_point_at(&c->series[s], x1);
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

void plot_add_tlbsize_markers(struct plot_chart_ctx *cx)
{
	const struct analysis *a = cx->in->analysis;
	const struct environment *env = cx->in->env;
	struct plot_chart *c = cx->c;
	char label[64];

	for (size_t i = 0; i < a->n_knees; i++) {
		const struct tlb_knee *tk = &a->knees[i];
		const char *level = tk->kind == KNEE_TLB ? tk->tlb.level : tk->kind == KNEE_CACHE ? tk->cache.level : NULL;
		snprintf(label, sizeof(label), "knee %.0f (%s)", tk->knee.x_before, level ? level : "unknown");
		add_marker(c, PLOT_MARKER_KNEE, tk->knee.x_before, tk->knee.x_after, NULL, label);
	}
	/* The capacities the knees were labelled against: CPUID's, else (or where a VM's disagrees) the documented core's. */
	const struct env_tlb *tlb = env ? environment_expected_tlb(env) : NULL;
	bool cpuid = tlb && env && tlb == &env->tlb;
	const struct {
		const char *level, *name;
		unsigned entries;
	} caps[] = {
		{ "l1d_4k_entries", "L1 dTLB", tlb ? tlb->l1d_4k_entries : 0 },
		{ "l2d_4k_entries", "L2 TLB", tlb ? tlb->l2d_4k_entries : 0 },
	};
	size_t reported = 0;
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		if (!caps[i].entries)
			continue;
		snprintf(label, sizeof(label), "%s %u (%s)", caps[i].name, caps[i].entries,
			 cpuid ? "CPUID" : "documented");
		add_marker(c, PLOT_MARKER_CPUID, caps[i].entries, 0, caps[i].level, label);
		reported++;
	}
	if (!reported)
		plot_add_note(c, "Neither CPUID nor a documented core gives 4 KiB TLB capacities here (environment.tlb "
				 "is null, and no row of the core table fits): the knees are labelled against the "
				 "caches only.");
	else if (!cpuid && environment_tlb_disagrees(env))
		plot_add_note(c, "CPUID under %s reports L1 %u, L2 %u entries, other counts than the identified core's "
				 "documented row, and hypervisors invent these leaves: the dashed lines are the row's "
				 "capacities (environment.cpu.identification).", env->hypervisor, env->tlb.l1d_4k_entries,
			      env->tlb.l2d_4k_entries);
	else if (!cpuid)
		plot_add_note(c, "CPUID reports no TLB here; the dashed lines are the documented capacities of the "
				 "identified core (environment.cpu.identification).");
	if (!a->n_knees)
		plot_add_note(c, "No knee found on this curve.");
	else
		plot_add_note(c, "Knees: the last page count on a lower level before latency rises to a higher one "
				 "that persists, labelled tlb or cache when only that capacity fills in the rise "
				 "(analysis.knees).");
}

/*
 * Stride step labels go above their segment for series that run high and
 * below it for those that run low, so they stay off the other lines.
 */
void plot_place_steps(struct plot_chart *c)
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
static const double LABEL_ROW_H = 15, LABEL_GAP = 4;	/* a row is a label's backing (14 px) and 1 px */

/*
 * Marker labels: right of their line when the label ends before the next
 * line to the right (so it crosses none), else left of it when it fits
 * before the previous line, else on whichever side stays inside the area
 * (never under the legend); then the first of four rows where it overlaps
 * no label placed before it.
 */
void plot_place_marker_labels(struct plot_chart *c)
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
		double x = plot_x_px(c, m->x), w = plot_text_width_px(m->label, PLOT_LABEL_FONT_PX) + 4;
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
