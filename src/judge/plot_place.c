/* SPDX-License-Identifier: MIT */
/* Where the labels of `tlbprof plot` go, clear of each other and of the whiskers, and the footer's provenance. */
#include "judge/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/plot_internal.h"

/*
 * DejaVu Sans advance widths of the printable ASCII characters, in
 * thousandths of an em (its 2048-unit widths, rounded up): the SVG names it
 * first, and Liberation Sans and Arial are narrower, so an estimate from it
 * errs on the wide side whichever font a reader has.
 */
static const unsigned short dejavu_sans[95] = {
	318, 401, 461, 838, 637, 951, 780, 276, 391, 391, 500, 838, 318, 361, 318, 337,	/* space .. / */
	637, 637, 637, 637, 637, 637, 637, 637, 637, 637, 337, 337, 838, 838, 838, 531,	/* 0 .. ? */
	1000, 685, 687, 699, 771, 633, 576, 776, 753, 295, 295, 657, 558, 864, 749, 788,	/* @ .. O */
	604, 788, 695, 635, 612, 733, 685, 990, 686, 612, 686, 391, 337, 391, 838, 500,	/* P .. _ */
	500, 613, 636, 550, 636, 616, 353, 636, 634, 278, 278, 580, 278, 975, 634, 613,	/* ` .. o */
	636, 636, 412, 521, 393, 634, 592, 818, 592, 592, 526, 637, 337, 637, 838,	/* p .. ~ */
};
/* A character outside ASCII (µ, –, ×, …): about an 'M' less a little. */
static const unsigned short WIDE_GLYPH = 800;

double plot_text_width_px(const char *s, double font_px)
{
	double em = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p >= 0x20 && *p < 0x7f)
			em += dejavu_sans[*p - 0x20];
		else if (*p >= 0xc0)	/* the lead byte of a UTF-8 sequence; continuation bytes add nothing */
			em += WIDE_GLYPH;
	}
	return em / 1000 * font_px;
}

char *plot_format_value(double v, char *buf, size_t len)
{
	if (v != 0 && (fabs(v) >= 1e6 || fabs(v) < 1e-3))
		plot_format_number(v, buf, len);
	else
		snprintf(buf, len, fabs(v) >= 100 ? "%.0f" : fabs(v) >= 10 ? "%.1f" : "%.2f", v);
	return buf;
}

/* A label's box: text 11 px high over its baseline (ascent 11, descent 3), with 2 px around it. */
static const double LABEL_ASCENT = 11, LABEL_DESCENT = 3, LABEL_PAD = 2;

struct box {
	double x0, y0, x1, y1;
};

static struct box label_box(double cx, double baseline, const char *text)
{
	double w = plot_text_width_px(text, PLOT_LABEL_FONT_PX) + 2 * LABEL_PAD;

	return (struct box){ cx - w / 2, baseline - LABEL_ASCENT, cx + w / 2, baseline + LABEL_DESCENT };
}

static bool overlaps(const struct box *a, const struct box *b)
{
	return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* What a label must keep clear of: the whiskers' lines and caps, and the labels placed so far. */
struct obstacles {
	struct box *b;
	size_t n, cap;
};

static bool add_obstacle(struct obstacles *o, struct box b)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 64;
		struct box *nb = realloc(o->b, cap * sizeof(*nb));
		if (!nb)
			return false;
		o->b = nb;
		o->cap = cap;
	}
	o->b[o->n++] = b;
	return true;
}

static bool clear_of(const struct obstacles *o, const struct box *b, const struct plot_rect *area)
{
	if (b->x0 < area->x || b->x1 > area->x + area->w || b->y0 < area->y || b->y1 > area->y + area->h)
		return false;
	for (size_t i = 0; i < o->n; i++)
		if (overlaps(&o->b[i], b))
			return false;
	return true;
}

/* A bar's whisker in px: its x, its ends (clipped to the area) and the half width of its caps. */
static bool whisker_px(const struct plot_chart *c, const struct plot_point *p, double w, double *top, double *bottom,
		       double *cap)
{
	if (!(p->hi > p->lo))
		return false;
	*top = fmax(plot_y_px(c, p->hi), c->area.y);
	*bottom = fmin(plot_y_px(c, p->lo), c->area.y + c->area.h);
	*cap = fmin(w / 4, 6);
	return true;
}

/* Rows a label may climb above its bar, or sink into it, before it gives up; px between them. */
enum { LABEL_TRIES = 12 };
static const double LABEL_STEP = 14;

/*
 * Place the value label of one bar: centred just over the bar and its
 * whisker; else beside the whisker, right then left; then the same a row
 * higher, and so on; then inside the bar (its white backing keeps it
 * readable). The first place inside the area clear of every whisker and
 * every label placed before wins; with none, the first place is kept.
 */
static void place_one(const struct plot_chart *c, struct plot_point *p, double x, double w, struct obstacles *o)
{
	double cx = x + w / 2, bar_top = plot_y_px(c, p->y), top = bar_top, wt, wb, cap = 0;
	bool whisker = whisker_px(c, p, w, &wt, &wb, &cap);
	struct box first = { 0 }, b = { 0 };
	bool placed = false;

	if (whisker)
		top = fmin(top, wt);
	double tw = plot_text_width_px(p->value_label, PLOT_LABEL_FONT_PX) + 2 * LABEL_PAD;
	double side = tw / 2 + cap + 3;
	for (int k = 0; k < LABEL_TRIES && !placed; k++) {
		/* Over the bar and whisker, rising a row each try; beside the whisker over the bar top, rising too. */
		const double tries[][2] = {
			{ cx, top - LABEL_DESCENT - 3 - LABEL_STEP * k },
			{ cx + side, bar_top - LABEL_DESCENT - 3 - LABEL_STEP * k },
			{ cx - side, bar_top - LABEL_DESCENT - 3 - LABEL_STEP * k },
			{ cx + side, bar_top + LABEL_ASCENT + 3 + LABEL_STEP * k },
			{ cx - side, bar_top + LABEL_ASCENT + 3 + LABEL_STEP * k },
		};
		for (size_t t = 0; t < sizeof(tries) / sizeof(tries[0]) && !placed; t++) {
			b = label_box(tries[t][0], tries[t][1], p->value_label);
			if (!k && !t)
				first = b;
			if (clear_of(o, &b, &c->area)) {
				p->label_x_px = tries[t][0];
				p->label_y_px = tries[t][1];
				placed = true;
			}
		}
	}
	if (!placed) {
		b = first;
		p->label_x_px = (first.x0 + first.x1) / 2;
		p->label_y_px = first.y1 - LABEL_DESCENT;
	}
	add_obstacle(o, b);
}

void plot_place_value_labels(struct plot_chart *c)
{
	struct obstacles o = { 0 };
	bool ok = true;

	/* Every whisker first: a label must not cross a bar's whisker placed later either. */
	for (size_t s = 0; s < c->n_series; s++)
		for (size_t i = 0; i < c->series[s].n; i++) {
			struct plot_point *p = &c->series[s].points[i];
			double x, w, wt, wb, cap;
			plot_format_value(p->y, p->value_label, sizeof(p->value_label));
			plot_bar_px(c, s, (size_t)p->x, &x, &w);
			if (!whisker_px(c, p, w, &wt, &wb, &cap))
				continue;
			ok &= add_obstacle(&o, (struct box){ x + w / 2 - 1, wt - 1, x + w / 2 + 1, wb + 1 });
			ok &= add_obstacle(&o, (struct box){ x + w / 2 - cap, wt - 1, x + w / 2 + cap, wt + 1 });
			ok &= add_obstacle(&o, (struct box){ x + w / 2 - cap, wb - 1, x + w / 2 + cap, wb + 1 });
		}
	for (size_t s = 0; s < c->n_series; s++)
		for (size_t i = 0; i < c->series[s].n; i++) {
			struct plot_point *p = &c->series[s].points[i];
			double x, w;
			plot_bar_px(c, s, (size_t)p->x, &x, &w);
			if (ok)
				place_one(c, p, x, w, &o);
			else {	/* out of memory: over the bar, unchecked */
				p->label_x_px = x + w / 2;
				p->label_y_px = plot_y_px(c, p->y) - LABEL_DESCENT - 3;
			}
		}
	free(o.b);
}

/* Every 3 px along x between a and b (px), the pieces a line chart draws there become obstacles. */
enum { SAMPLE_PX = 3 };

/*
 * What a line chart draws, as obstacles for its labels: each series' line
 * (2 px wide) as boxes every few px along x and its points into o, its
 * spread band into bands (a label may sit on a hatched band where nothing
 * else is clear, never on a line). False when out of memory.
 */
static bool add_series_obstacles(const struct plot_chart *c, struct obstacles *o, struct obstacles *bands)
{
	bool ok = true;

	for (size_t s = 0; s < c->n_series; s++) {
		const struct plot_series *se = &c->series[s];
		bool spread = false;
		for (size_t i = 0; i < se->n; i++) {
			spread |= se->points[i].hi > se->points[i].lo;
			double px = plot_x_px(c, se->points[i].x), py = plot_y_px(c, se->points[i].y);
			ok &= add_obstacle(o, (struct box){ px - 5, py - 5, px + 5, py + 5 });
		}
		for (size_t i = 1; i < se->n; i++) {
			const struct plot_point *a = &se->points[i - 1], *b = &se->points[i];
			/* Straight in px between the points, as the SVG paths draw the line and the band's edges. */
			double xa = plot_x_px(c, a->x), xb = plot_x_px(c, b->x), ya = plot_y_px(c, a->y),
			       yb = plot_y_px(c, b->y), ha = plot_y_px(c, a->hi), hb = plot_y_px(c, b->hi),
			       la = plot_y_px(c, a->lo), lb = plot_y_px(c, b->lo);
			int n = (int)ceil(fabs(xb - xa) / SAMPLE_PX);
			n = n < 1 ? 1 : n;
			for (int k = 0; k < n; k++) {
				double t0 = (double)k / n, t1 = (double)(k + 1) / n, x0 = xa + (xb - xa) * t0,
				       x1 = xa + (xb - xa) * t1, y0 = ya + (yb - ya) * t0, y1 = ya + (yb - ya) * t1;
				if (!b->gap_before)
					ok &= add_obstacle(o, (struct box){ fmin(x0, x1) - 1, fmin(y0, y1) - 2, fmax(x0, x1) + 1,
									    fmax(y0, y1) + 2 });
				if (spread) {
					double top = fmin(ha + (hb - ha) * t0, ha + (hb - ha) * t1),
					       bottom = fmax(la + (lb - la) * t0, la + (lb - la) * t1);
					ok &= add_obstacle(bands, (struct box){ fmin(x0, x1), top - 1, fmax(x0, x1), bottom + 1 });
				}
			}
		}
	}
	return ok;
}

/*
 * A step label's baseline: 9 px above its segment's midpoint (or 17 below,
 * as plot_place_steps() chose), moved further away from it a row at a time,
 * then the other way, until its box is clear of o and, where given, of
 * bands. Returns false, with *y at the first row, when no row is clear.
 */
static bool step_row(const struct plot_chart *c, const struct plot_step *st, const struct obstacles *o,
		     const struct obstacles *bands, double *y)
{
	double x = plot_x_px(c, st->x), y0 = plot_y_px(c, st->y) + (st->above ? -9 : 17);
	double away = st->above ? -LABEL_STEP : LABEL_STEP;

	for (int k = 0; k < 2 * LABEL_TRIES; k++) {
		/* The side plot_place_steps() chose first; from the other side's first row after. */
		double at = k < LABEL_TRIES ? y0 + away * k : y0 + (st->above ? 26 : -26) - away * (k - LABEL_TRIES);
		struct box b = label_box(x, at, st->label);
		if (clear_of(o, &b, &c->area) && (!bands || clear_of(bands, &b, &c->area))) {
			*y = at;
			return true;
		}
	}
	*y = y0;
	return false;
}

/*
 * Stride step labels, clear of the labels placed before them and of what the
 * chart draws: its lines and points, and its spread bands where a row clear of
 * those too exists; where nothing is clear, where they belong.
 */
void plot_place_step_labels(struct plot_chart *c)
{
	struct obstacles o = { 0 }, bands = { 0 };

	if (c->n_steps && !add_series_obstacles(c, &o, &bands))
		o.n = bands.n = 0;	/* out of memory: clear of the other labels only */
	for (size_t i = 0; i < c->n_steps; i++) {
		struct plot_step *st = &c->steps[i];
		double y;
		if (!step_row(c, st, &o, &bands, &y))
			(void)step_row(c, st, &o, NULL, &y);
		st->label_x_px = plot_x_px(c, st->x);
		st->label_y_px = y;
		if (!add_obstacle(&o, label_box(st->label_x_px, y, st->label)))
			break;	/* out of memory: the rest stay unchecked */
	}
	for (size_t i = 0; i < c->n_steps; i++)
		if (c->steps[i].label_x_px == 0 && c->steps[i].label_y_px == 0) {
			c->steps[i].label_x_px = plot_x_px(c, c->steps[i].x);
			c->steps[i].label_y_px = plot_y_px(c, c->steps[i].y) + (c->steps[i].above ? -9 : 17);
		}
	free(o.b);
	free(bands.b);
}

/* Footer text: 10 px, one line each, the width of the page less its margins. */
static const double FOOTER_FONT_PX = 10, FOOTER_LINE_PX = 14, FOOTER_PAD_PX = 14;

/* Append a footer line, cut in its middle ("...") until it fits the page. */
static void footer_line(struct plot *p, const char *text)
{
	double room = p->width_px - 2 * 16;
	char *line;
	size_t len = strlen(text);

	if (p->n_footer == PLOT_MAX_FOOTER)
		return;
	line = p->footer[p->n_footer++];
	snprintf(line, sizeof(p->footer[0]), "%s", text);
	/* Cut from the middle: the start says what the line is, the end is often the telling part (a file name). */
	for (size_t keep = strlen(line); plot_text_width_px(line, FOOTER_FONT_PX) > room && keep > 8; keep--) {
		size_t head = keep / 2, tail = len - (keep - head);
		while (head > 0 && ((unsigned char)text[head] & 0xc0) == 0x80)
			head--;
		while (tail < len && ((unsigned char)text[tail] & 0xc0) == 0x80)
			tail++;
		snprintf(line, sizeof(p->footer[0]), "%.*s...%s", (int)head, text, text + tail);
	}
}

void plot_build_footer(const struct plot_input *in, struct plot *p)
{
	const struct environment *env = in->env;
	char text[1024], cpus[32] = "";

	if (env && env->logical_cpus > 0)
		snprintf(cpus, sizeof(cpus), ", %d logical CPUs", env->logical_cpus);
	snprintf(text, sizeof(text), "Machine: %s%s%s%s%s; kernel %s",
		 env && *env->cpu_model_name ? env->cpu_model_name : "an unknown CPU",
		 env && *env->hypervisor ? " (" : "", env ? env->hypervisor : "", env && *env->hypervisor ? " guest)" : "",
		 cpus, env && *env->kernel ? env->kernel : "unknown");
	footer_line(p, text);
	snprintf(text, sizeof(text), "Command: %s", in->command && *in->command ? in->command : "not recorded");
	footer_line(p, text);
	/* The report's own date where it has one: a file's modification time is lost on a copy or a clone. */
	bool by = in->measured_by && *in->measured_by;
	if (in->measured_at && *in->measured_at)
		snprintf(text, sizeof(text), "Report: %s, measured %s by tlbprof %s; drawn by tlbprof %s (tlbprof plot)",
			 in->source ? in->source : "(unnamed)", in->measured_at, by ? in->measured_by : "?",
			 in->version ? in->version : "?");
	else
		snprintf(text, sizeof(text), "Report: %s (file dated %s%s%s); drawn by tlbprof %s (tlbprof plot)",
			 in->source ? in->source : "(unnamed)", in->date && *in->date ? in->date : "unknown",
			 by ? ", written by tlbprof " : "", by ? in->measured_by : "", in->version ? in->version : "?");
	footer_line(p, text);
	p->footer_h_px = FOOTER_LINE_PX;
	p->footer_y_px = p->height_px + FOOTER_PAD_PX + 6;
	p->height_px += FOOTER_PAD_PX + FOOTER_LINE_PX * (double)p->n_footer + 8;
}
