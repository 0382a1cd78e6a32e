/* SPDX-License-Identifier: MIT */
/* The SVG writer of `tlbprof plot`: draws the charts judge/plot*.c laid out as one standalone SVG 1.1 document. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/plot.h"
#include "report/report.h"
#include "report/internal.h"
#include "version.h"

#if TLBPROF_HAVE_PNG
#include <dlfcn.h>

#include <cairo.h>
#include <librsvg/rsvg.h>
#endif

/* Fonts every browser has one of; no web fonts (a standalone file fetches nothing). */
#define FONT_FAMILY "DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif"
#define AXIS_COLOR "#333333"
#define GRID_COLOR "#e3e3e3"
#define KNEE_COLOR "#d62728"
#define CPUID_COLOR "#2ca02c"

/*
 * Text as XML character data or an attribute value: markup escaped, and
 * bytes that are not UTF-8 (a file name from argv can be anything) and
 * characters XML 1.0 forbids as U+FFFD, so the document stays well-formed
 * whatever a report or a path holds (report_put_text(), as every format).
 */
static void put_text(FILE *f, const char *s)
{
	report_put_text(f, s, REPORT_TEXT_XML_ATTR);
}

/* <text ATTRS>ESCAPED</text> */
static void text_el(FILE *f, const char *cls, double x, double y, const char *anchor, const char *extra, const char *s)
{
	fprintf(f, "<text class=\"%s\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\"%s%s>", cls, x, y, anchor, extra ? " " : "",
		extra ? extra : "");
	put_text(f, s);
	fputs("</text>\n", f);
}


/* The unit of the chart's y values, for tooltips. */
static const char *y_unit(const struct plot_chart *c)
{
	return c->y.unit == PLOT_UNIT_MS ? "ms" : c->y.unit == PLOT_UNIT_PER_S ? "per s" : "ns";
}

static void draw_axes(FILE *f, const struct plot_chart *c)
{
	const struct plot_rect *a = &c->area;
	double bottom = a->y + a->h;

	fprintf(f, "<rect class=\"plot-area\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#fbfbfb\" "
		   "stroke=\"none\"/>\n", a->x, a->y, a->w, a->h);
	/* y: grid lines, ticks, labels, the title with its unit. */
	fprintf(f, "<g class=\"axis y-axis\" data-scale=\"%s\" data-min=\"%.12g\" data-max=\"%.12g\" font-size=\"11\">\n",
		plot_scale_name(c->y.scale), c->y.min, c->y.max);
	for (size_t i = 0; i < c->y.n_ticks; i++) {
		double y = plot_y_px(c, c->y.ticks[i].value);
		fprintf(f, "<g class=\"tick\" data-value=\"%.12g\"><line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
			   "stroke=\"%s\"/><line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\"/>",
			c->y.ticks[i].value, a->x, y, a->x + a->w, y, GRID_COLOR, a->x - 5, y, a->x, y, AXIS_COLOR);
		text_el(f, "tick-label", a->x - 8, y + 4, "end", NULL, c->y.ticks[i].label);
		fputs("</g>\n", f);
	}
	char rot[64];
	double yx = c->y_title_x_px, yy = a->y + a->h / 2;
	snprintf(rot, sizeof(rot), "transform=\"rotate(-90 %.2f %.2f)\" font-size=\"12\"", yx, yy);
	text_el(f, "axis-label", yx, yy, "middle", rot, c->y.title);
	fputs("</g>\n", f);

	/* x: grid lines on numeric axes (bands need none), ticks, labels, title. */
	fprintf(f, "<g class=\"axis x-axis\" data-scale=\"%s\" data-min=\"%.12g\" data-max=\"%.12g\" font-size=\"11\">\n",
		plot_scale_name(c->x.scale), c->x.min, c->x.max);
	for (size_t i = 0; i < c->x.n_ticks; i++) {
		double x = plot_x_px(c, c->x.ticks[i].value);
		fprintf(f, "<g class=\"tick\" data-value=\"%.12g\">", c->x.ticks[i].value);
		if (c->x.scale != PLOT_SCALE_BAND)
			fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\"/>", x, a->y, x, bottom,
				GRID_COLOR);
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\"/>", x, bottom, x, bottom + 5,
			AXIS_COLOR);
		text_el(f, "tick-label", x, bottom + 19, "middle", NULL, c->x.ticks[i].label);
		fputs("</g>\n", f);
	}
	text_el(f, "axis-label", a->x + a->w / 2, bottom + 42, "middle", "font-size=\"12\"", c->x.title);
	fputs("</g>\n", f);
	fprintf(f, "<path class=\"frame\" d=\"M %.2f %.2f V %.2f H %.2f\" fill=\"none\" stroke=\"%s\"/>\n", a->x, a->y,
		bottom, a->x + a->w, AXIS_COLOR);
}

/*
 * A white backing behind a short label so a line under it does not strike
 * it through (SVG 1.1 has no text halo): the box the layout kept clear,
 * from the estimated width of the text (plot_text_width_px()).
 */
static void label_backing(FILE *f, double x, double baseline, const char *anchor, const char *s)
{
	double w = plot_text_width_px(s, PLOT_LABEL_FONT_PX) + 4;
	double left = strcmp(anchor, "middle") == 0 ? x - w / 2 : strcmp(anchor, "end") == 0 ? x - w + 2 : x - 2;

	fprintf(f, "<rect class=\"label-backing\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"14\" fill=\"#ffffff\" "
		   "fill-opacity=\"0.8\"/>", left, baseline - 11, w);
}

/*
 * The hatching of series s's spread band: thin lines of its colour at its
 * angle, so two bands that overlap cross instead of blending.
 */
static void hatch_pattern(FILE *f, size_t chart, size_t s, const char *color, double deg)
{
	fprintf(f, "<pattern id=\"hatch-%zu-%zu\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\" "
		   "patternTransform=\"rotate(%g)\"><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"%s\" "
		   "stroke-width=\"1.6\" stroke-opacity=\"0.55\"/></pattern>", chart, s, deg, color);
}

static void draw_markers(FILE *f, const struct plot_chart *c)
{
	const struct plot_rect *a = &c->area;

	for (size_t i = 0; i < c->n_markers; i++) {
		const struct plot_marker *m = &c->markers[i];
		double x = plot_x_px(c, m->x);
		bool knee = m->kind == PLOT_MARKER_KNEE;
		if (knee)
			fprintf(f, "<g class=\"knee\" data-pages=\"%.12g\" data-pages-after=\"%.12g\">", m->x, m->x_after);
		else
			fprintf(f, "<g class=\"cpuid-ref\" data-level=\"%s\" data-entries=\"%.12g\">", m->level, m->x);
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-width=\"1.5\"%s/>", x,
			a->y, x, a->y + a->h, knee ? KNEE_COLOR : CPUID_COLOR, knee ? "" : " stroke-dasharray=\"6 4\"");
		char fill[32];
		snprintf(fill, sizeof(fill), "fill=\"%s\" font-size=\"11\"", knee ? KNEE_COLOR : CPUID_COLOR);
		const char *anchor = m->label_end ? "end" : "start";
		label_backing(f, m->label_x_px, m->label_y_px, anchor, m->label);
		text_el(f, knee ? "knee-label" : "cpuid-label", m->label_x_px, m->label_y_px, anchor, fill, m->label);
		fputs("</g>\n", f);
	}
}

static void draw_line_series(FILE *f, const struct plot_chart *c, const struct plot_series *s, size_t clip)
{
	bool spread = false;

	for (size_t i = 0; i < s->n; i++)
		spread |= s->points[i].hi > s->points[i].lo;
	/* The band: along the upper quartiles, back along the lower ones; hatched, with a thin edge. */
	if (spread && s->n > 1) {
		fprintf(f, "<path class=\"band\" clip-path=\"url(#area-%zu)\" fill=\"url(#hatch-%zu-%zu)\" "
			   "data-hatch=\"%g\" stroke=\"%s\" stroke-width=\"0.8\" stroke-opacity=\"0.6\" d=\"", clip, clip,
			(size_t)(s - c->series), s->hatch_deg, s->color);
		for (size_t i = 0; i < s->n; i++)
			fprintf(f, "%s%.2f %.2f ", i ? "L " : "M ", plot_x_px(c, s->points[i].x), plot_y_px(c, s->points[i].hi));
		for (size_t i = s->n; i-- > 0;)
			fprintf(f, "L %.2f %.2f ", plot_x_px(c, s->points[i].x), plot_y_px(c, s->points[i].lo));
		fputs("Z\"/>\n", f);
	}
	if (s->n > 1) {
		fprintf(f, "<path class=\"line\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s d=\"", s->color,
			s->control ? " stroke-dasharray=\"5 3\"" : "");
		for (size_t i = 0; i < s->n; i++)
			fprintf(f, "%s%.2f %.2f", !i ? "M " : s->points[i].gap_before ? " M " : " L ",
				plot_x_px(c, s->points[i].x), plot_y_px(c, s->points[i].y));
		fputs("\"/>\n", f);
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct plot_point *p = &s->points[i];
		double x = plot_x_px(c, p->x);
		char xs[32], ys[32], tip[200];
		if (c->x.unit == PLOT_UNIT_BYTES)
			plot_format_bytes(p->x, xs, sizeof(xs));
		else if (c->x.unit == PLOT_UNIT_MS)
			snprintf(xs, sizeof(xs), "%.6g ms", p->x);
		else
			snprintf(xs, sizeof(xs), "%.12g pages", p->x);
		plot_format_value(p->y, ys, sizeof(ys));
		/* A lone point with a spread shows it as a whisker. */
		if (p->hi > p->lo && (s->n == 1))
			fprintf(f, "<path class=\"whisker\" clip-path=\"url(#area-%zu)\" stroke=\"%s\" d=\"M %.2f %.2f V %.2f\"/>\n",
				clip, s->color, x, plot_y_px(c, p->lo), plot_y_px(c, p->hi));
		fprintf(f, "<circle class=\"point\" cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" fill=\"%s\" stroke=\"%s\" "
			   "stroke-width=\"1.5\" data-x=\"%.12g\" data-y=\"%.12g\" data-lo=\"%.12g\" data-hi=\"%.12g\" "
			   "data-samples=\"%zu\">",
			x, plot_y_px(c, p->y), s->control ? "#ffffff" : s->color, s->color, p->x, p->y, p->lo, p->hi,
			p->samples);
		if (c->kind == PLOT_CHART_INTERVALS)
			snprintf(tip, sizeof(tip), "%s, the interval ending at %s: %s %s", s->label, xs, ys, y_unit(c));
		else
			snprintf(tip, sizeof(tip), "%s at %s: %s %s (IQR %.4g-%.4g, %zu sample%s)", s->label, xs, ys,
				 y_unit(c), p->lo, p->hi, p->samples, p->samples == 1 ? "" : "s");
		fputs("<title>", f);
		put_text(f, tip);
		fputs("</title></circle>\n", f);
	}
}

static void draw_bar_series(FILE *f, const struct plot_chart *c, size_t si, size_t clip)
{
	const struct plot_series *s = &c->series[si];
	double y0 = plot_y_px(c, 0);

	for (size_t i = 0; i < s->n; i++) {
		const struct plot_point *p = &s->points[i];
		size_t cat = (size_t)p->x;
		double x, w, y = plot_y_px(c, p->y);
		char v[32], tip[200];
		plot_bar_px(c, si, cat, &x, &w);
		fprintf(f, "<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"%s "
			   "data-x=\"", x, y, w, y0 - y, s->color,
			s->control ? " fill-opacity=\"0.55\" stroke=\"#555555\" stroke-dasharray=\"4 2\"" : "");
		put_text(f, c->categories[cat]);
		fprintf(f, "\" data-y=\"%.12g\" data-lo=\"%.12g\" data-hi=\"%.12g\" data-samples=\"%zu\">", p->y, p->lo,
			p->hi, p->samples);
		snprintf(v, sizeof(v), "%s", p->value_label);
		snprintf(tip, sizeof(tip), "%s, %s: %s %s (IQR %.4g-%.4g, %zu %s%s)", s->label, c->categories[cat], v,
			 y_unit(c), p->lo, p->hi, p->samples,
			 c->kind == PLOT_CHART_RUN_BARS || c->kind == PLOT_CHART_WALL_BARS ? "occurrence" : "sample",
			 p->samples == 1 ? "" : "s");
		fputs("<title>", f);
		put_text(f, tip);
		fputs("</title></rect>\n", f);
		double cx = x + w / 2;
		if (p->hi > p->lo) {
			/* Clipped to the area as judge/plot_place.c placed the labels clear of it. */
			double lo = fmin(plot_y_px(c, p->lo), c->area.y + c->area.h), hi = fmax(plot_y_px(c, p->hi), c->area.y);
			double cap = fmin(w / 4, 6);
			fprintf(f, "<path class=\"whisker\" clip-path=\"url(#area-%zu)\" stroke=\"%s\" stroke-width=\"1.5\" "
				   "fill=\"none\" d=\"M %.2f %.2f V %.2f M %.2f %.2f H %.2f M %.2f %.2f H %.2f\"/>\n", clip,
				AXIS_COLOR, cx, lo, hi, cx - cap, lo, cx + cap, cx - cap, hi, cx + cap);
		}
		label_backing(f, p->label_x_px, p->label_y_px, "middle", v);
		text_el(f, "value", p->label_x_px, p->label_y_px, "middle", "font-size=\"11\"", v);
	}
}

static void draw_steps(FILE *f, const struct plot_chart *c)
{
	for (size_t i = 0; i < c->n_steps; i++) {
		const struct plot_step *st = &c->steps[i];
		const struct plot_series *s = &c->series[st->series];
		double x = st->label_x_px, y = st->label_y_px;
		label_backing(f, x, y, "middle", st->label);
		fprintf(f, "<text class=\"step\" data-label=\"%s\" data-series=\"", st->label);
		put_text(f, s->key);
		fprintf(f, "\" data-from=\"%.12g\" data-to=\"%.12g\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" "
			   "font-size=\"11\" fill=\"%s\">%s</text>\n", st->x_from, st->x_to, x, y, s->color, st->label);
	}
}

/*
 * A legend label from x on baseline y, wrapped at spaces where it would run
 * past the page's right edge (the legend has the right margin only).
 * Returns the height it took, px, with the gap to the next entry.
 */
static double legend_label(FILE *f, double x, double y, const char *text)
{
	double room = PLOT_WIDTH_PX - x - 6, dy = 0;
	char line[200];
	const char *p = text;

	while (*p) {
		size_t n = strlen(p), cut = n;
		snprintf(line, sizeof(line), "%s", p);
		/* The longest run of whole words that fits; a single word too long stays whole. */
		while (cut > 0 && plot_text_width_px(line, PLOT_LABEL_FONT_PX) > room) {
			while (cut > 0 && p[cut - 1] != ' ')
				cut--;
			if (cut == 0)
				break;
			cut--;
			snprintf(line, sizeof(line), "%.*s", (int)cut, p);
		}
		if (cut == 0) {
			cut = strcspn(p, " ");
			snprintf(line, sizeof(line), "%.*s", (int)cut, p);
		}
		text_el(f, "legend-label", x, y + dy, "start", NULL, line);
		p += cut;
		while (*p == ' ')
			p++;
		if (*p)
			dy += 13;
	}
	return dy + 18;
}

static void draw_legend(FILE *f, const struct plot_chart *c, size_t index)
{
	double x = c->legend_x, y = c->legend_y;
	bool bars = c->x.scale == PLOT_SCALE_BAND;
	bool knees = false, refs = false;

	fputs("<g class=\"legend\" font-size=\"11\">\n", f);
	for (size_t i = 0; i < c->n_series; i++) {
		const struct plot_series *s = &c->series[i];
		fputs("<g class=\"legend-entry\" data-series=\"", f);
		put_text(f, s->key);
		fputs("\">", f);
		if (bars)
			fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"14\" height=\"10\" fill=\"%s\"%s/>", x, y - 9, s->color,
				s->control ? " fill-opacity=\"0.55\" stroke=\"#555555\" stroke-dasharray=\"4 2\"" : "");
		else
			fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-width=\"2\"%s/>"
				   "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" fill=\"%s\" stroke=\"%s\"/>",
				x, y - 4, x + 22, y - 4, s->color, s->control ? " stroke-dasharray=\"5 3\"" : "", x + 11, y - 4,
				s->control ? "#ffffff" : s->color, s->color);
		y += legend_label(f, x + 30, y, s->label);
		fputs("</g>\n", f);
	}
	/* What the spread drawn around every point is; nothing to explain where no point has one. */
	if (c->spread_label) {
		fputs("<g class=\"legend-entry\" data-kind=\"spread\">", f);
		if (bars)
			fprintf(f, "<path stroke=\"%s\" stroke-width=\"1.5\" fill=\"none\" d=\"M %.2f %.2f V %.2f M %.2f %.2f "
				   "H %.2f M %.2f %.2f H %.2f\"/>", AXIS_COLOR, x + 11, y - 10, y + 1, x + 6, y - 10, x + 16,
				x + 6, y + 1, x + 16);
		else
			fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"22\" height=\"10\" fill=\"url(#hatch-%zu-legend)\" "
				   "stroke=\"#888888\" stroke-width=\"0.8\"/>", x, y - 9, index);
		y += legend_label(f, x + 30, y, c->spread_label);
		fputs("</g>\n", f);
	}
	for (size_t i = 0; i < c->n_markers; i++) {
		knees |= c->markers[i].kind == PLOT_MARKER_KNEE;
		refs |= c->markers[i].kind == PLOT_MARKER_CPUID;
	}
	if (knees) {
		fprintf(f, "<g class=\"legend-entry\" data-kind=\"knee\"><line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
			   "y2=\"%.2f\" stroke=\"%s\" stroke-width=\"1.5\"/>", x + 11, y - 11, x + 11, y + 2, KNEE_COLOR);
		y += legend_label(f, x + 30, y, "knee (rise of latency)");
		fputs("</g>\n", f);
	}
	if (refs) {
		fprintf(f, "<g class=\"legend-entry\" data-kind=\"cpuid-ref\"><line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
			   "y2=\"%.2f\" stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"3 2\"/>", x + 11, y - 11, x + 11,
			y + 2, CPUID_COLOR);
		legend_label(f, x + 30, y, "TLB entries (CPUID or documented)");
		fputs("</g>\n", f);
	}
	fputs("</g>\n", f);
}

static void draw_chart(FILE *f, const struct plot_chart *c, size_t index)
{
	fprintf(f, "<g class=\"chart\" data-chart=\"%s\" data-workload=\"", plot_chart_kind_name(c->kind));
	put_text(f, c->workload);
	fputs("\">\n", f);
	/* Spreads cut at the top of the axis (plot_layout_y_axis() in judge/plot_axes.c) stop at the frame. */
	fprintf(f, "<defs><clipPath id=\"area-%zu\"><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>"
		   "</clipPath>", index, c->area.x, c->area.y, c->area.w, c->area.h);
	if (c->spread_label && c->x.scale != PLOT_SCALE_BAND) {
		for (size_t i = 0; i < c->n_series; i++)
			hatch_pattern(f, index, i, c->series[i].color, c->series[i].hatch_deg);
		fprintf(f, "<pattern id=\"hatch-%zu-legend\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\" "
			   "patternTransform=\"rotate(45)\"><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#888888\" "
			   "stroke-width=\"1.6\"/></pattern>", index);
	}
	fputs("</defs>\n", f);
	text_el(f, "chart-title", c->area.x, c->frame.y + 30, "start", "font-size=\"15\" font-weight=\"bold\"", c->title);
	draw_axes(f, c);
	draw_markers(f, c);
	for (size_t i = 0; i < c->n_series; i++) {
		const struct plot_series *s = &c->series[i];
		fputs("<g class=\"series\" data-series=\"", f);
		put_text(f, s->key);
		fputs("\" data-label=\"", f);
		put_text(f, s->label);
		fprintf(f, "\"%s>\n", s->control ? " data-control=\"true\"" : "");
		if (c->x.scale == PLOT_SCALE_BAND)
			draw_bar_series(f, c, i, index);
		else
			draw_line_series(f, c, s, index);
		fputs("</g>\n", f);
	}
	draw_steps(f, c);
	draw_legend(f, c, index);
	for (size_t i = 0; i < c->n_notes; i++)
		text_el(f, "note", c->area.x, c->notes_y_px + c->note_h_px * (double)i, "start",
			"font-size=\"11\" fill=\"#444444\"", c->notes[i]);
	fputs("</g>\n", f);
}

static int emit_svg(FILE *f, const void *ctx)
{
	const struct plot *p = ctx;

	errno = 0;
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	double w = p->render_width_px > 0 ? p->render_width_px : p->width_px;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
		   "viewBox=\"0 0 %.0f %.0f\" font-family=\"%s\" font-size=\"12\" fill=\"#222222\">\n",
		w, round(p->height_px * w / p->width_px), p->width_px, p->height_px, FONT_FAMILY);
	fputs("<title>", f);
	put_text(f, p->title);
	fputs("</title>\n<desc>Drawn by tlbprof " TLBPROF_VERSION " (tlbprof plot). Every point carries its values: "
	      "data-x, data-y (median), data-lo and data-hi (25th and 75th percentile of the samples).</desc>\n", f);
	fprintf(f, "<rect class=\"background\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n",
		p->width_px, p->height_px);
	for (size_t i = 0; i < p->n_charts; i++)
		draw_chart(f, &p->charts[i], i);
	/* Where it came from, on the picture itself: a PNG passed around keeps it. */
	fprintf(f, "<g class=\"footer\" font-size=\"10\" fill=\"#555555\"><line x1=\"16\" y1=\"%.2f\" x2=\"%.2f\" "
		   "y2=\"%.2f\" stroke=\"#cccccc\"/>\n", p->footer_y_px - 16, p->width_px - 16, p->footer_y_px - 16);
	for (size_t i = 0; i < p->n_footer; i++)
		text_el(f, "footer-line", 16, p->footer_y_px + p->footer_h_px * (double)i, "start", NULL, p->footer[i]);
	fputs("</g>\n</svg>\n", f);
	return ferror(f) ? (errno ? -errno : -EIO) : 0;
}

int report_write_svg(const struct plot *p, const char *path, char *err, size_t err_len)
{
	return report_write_file(path, "-o", "plot", emit_svg, p, err, err_len);
}

#if TLBPROF_HAVE_PNG
/*
 * librsvg, loaded when a PNG is asked for and never before: linked, it brings
 * cairo, pango, glib, fontconfig, ICU and X11 with it, 56 shared objects that
 * every tlbprof paid for at each start (13.5 ms against 6.2 ms here), and the
 * page-fault workload starts tlbprof 40 times. Its headers give the types, so
 * each pointer has the exact type of the function it stands for; dlsym() on
 * librsvg's handle also finds cairo's and glib's, which it depends on.
 */
#define PNG_LIBRARY "librsvg-2.so.2"
static struct png_lib {
	bool tried, ok;
	char why[256];
	__typeof__(&rsvg_handle_new_from_data) handle_new_from_data;
	__typeof__(&rsvg_handle_render_document) render_document;
	__typeof__(&cairo_image_surface_create) image_surface_create;
	__typeof__(&cairo_surface_status) surface_status;
	__typeof__(&cairo_status_to_string) status_to_string;
	__typeof__(&cairo_create) create;
	__typeof__(&cairo_destroy) destroy;
	__typeof__(&cairo_surface_destroy) surface_destroy;
	__typeof__(&cairo_surface_write_to_png_stream) write_to_png_stream;
	__typeof__(&g_error_free) error_free;
	__typeof__(&g_object_unref) object_unref;
} png;

/* One symbol into *slot; false, with the reason in png.why, where it is missing. */
static bool png_symbol(void *lib, const char *name, void *slot)
{
	void *sym = dlsym(lib, name);

	if (!sym) {
		snprintf(png.why, sizeof(png.why), "%s lacks %s", PNG_LIBRARY, name);
		return false;
	}
	memcpy(slot, &sym, sizeof(sym));	/* ISO C has no cast from an object pointer to a function pointer */
	return true;
}

/* Load librsvg once per process (the handle is kept until exit). */
static bool png_load(void)
{
	if (png.tried)
		return png.ok;
	png.tried = true;
	void *lib = dlopen(PNG_LIBRARY, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *e = dlerror();
		snprintf(png.why, sizeof(png.why), "%s cannot be loaded (%s): install librsvg (Debian: librsvg2-2)",
			 PNG_LIBRARY, e ? e : "not found");
		return false;
	}
	png.ok = png_symbol(lib, "rsvg_handle_new_from_data", &png.handle_new_from_data) &&
		 png_symbol(lib, "rsvg_handle_render_document", &png.render_document) &&
		 png_symbol(lib, "cairo_image_surface_create", &png.image_surface_create) &&
		 png_symbol(lib, "cairo_surface_status", &png.surface_status) &&
		 png_symbol(lib, "cairo_status_to_string", &png.status_to_string) &&
		 png_symbol(lib, "cairo_create", &png.create) && png_symbol(lib, "cairo_destroy", &png.destroy) &&
		 png_symbol(lib, "cairo_surface_destroy", &png.surface_destroy) &&
		 png_symbol(lib, "cairo_surface_write_to_png_stream", &png.write_to_png_stream) &&
		 png_symbol(lib, "g_error_free", &png.error_free) && png_symbol(lib, "g_object_unref", &png.object_unref);
	if (!png.ok)
		dlclose(lib);
	return png.ok;
}

bool report_png_available(char *why, size_t why_len)
{
	if (png_load())
		return true;
	snprintf(why, why_len, "%s", png.why);
	return false;
}

static cairo_status_t png_bytes(void *closure, const unsigned char *data, unsigned int len)
{
	return fwrite(data, 1, len, closure) == len ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

static int emit_png(FILE *f, const void *ctx)
{
	cairo_surface_t *surface = (cairo_surface_t *)ctx;

	errno = 0;
	if (png.write_to_png_stream(surface, png_bytes, f) != CAIRO_STATUS_SUCCESS || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

/*
 * The SVG, drawn into memory, rendered by librsvg onto a cairo surface of
 * the picture's size (the viewBox scales it), white where nothing is drawn.
 * 0, or -errno with the reason in err.
 */
static int render_png(const struct plot *p, cairo_surface_t **out, char *err, size_t err_len)
{
	char *svg = NULL;
	size_t len = 0;
	FILE *mem;
	int w = (int)lround(p->render_width_px > 0 ? p->render_width_px : p->width_px);
	int h = (int)lround(p->height_px * w / p->width_px);
	GError *gerr = NULL;
	int rc = 0;

	*out = NULL;
	if (!png_load())
		return snprintf(err, err_len, "-o: %s", png.why), -ENOTSUP;
	mem = open_memstream(&svg, &len);
	if (!mem)
		return snprintf(err, err_len, "-o: out of memory"), -ENOMEM;
	rc = emit_svg(mem, p);
	if (fclose(mem) != 0 && !rc)
		rc = -ENOMEM;
	if (rc) {
		free(svg);
		return snprintf(err, err_len, "-o: out of memory"), rc;
	}
	/* cairo's image surfaces stop at 32767 px a side. */
	if (h < 1 || h > 32767) {
		free(svg);
		snprintf(err, err_len, "--width %d: the picture would be %d px high (at most 32767); give a smaller width", w,
			 h);
		return -EFBIG;
	}
	RsvgHandle *handle = png.handle_new_from_data((const guint8 *)svg, len, &gerr);
	cairo_surface_t *surface = png.image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
	if (!handle || png.surface_status(surface) != CAIRO_STATUS_SUCCESS) {
		snprintf(err, err_len, "-o: librsvg cannot draw the plot: %s",
			 gerr ? gerr->message : png.status_to_string(png.surface_status(surface)));
		rc = -EIO;
	} else {
		cairo_t *cr = png.create(surface);
		RsvgRectangle viewport = { 0, 0, w, h };
		if (!png.render_document(handle, cr, &viewport, &gerr)) {
			snprintf(err, err_len, "-o: librsvg cannot draw the plot: %s", gerr ? gerr->message : "unknown error");
			rc = -EIO;
		}
		png.destroy(cr);
	}
	if (gerr)
		png.error_free(gerr);
	if (handle)
		png.object_unref(handle);
	free(svg);
	if (rc)
		png.surface_destroy(surface);
	else
		*out = surface;
	return rc;
}

int report_write_png(const struct plot *p, const char *path, char *err, size_t err_len)
{
	cairo_surface_t *surface;
	int rc = render_png(p, &surface, err, err_len);

	if (rc)
		return rc;
	rc = report_write_file(path, "-o", "plot", emit_png, surface, err, err_len);
	png.surface_destroy(surface);
	return rc;
}
#else
bool report_png_available(char *why, size_t why_len)
{
	snprintf(why, why_len, "this tlbprof was built without PNG support (librsvg)");
	return false;
}

int report_write_png(const struct plot *p, const char *path, char *err, size_t err_len)
{
	(void)p;
	snprintf(err, err_len, "-o '%s': this tlbprof was built without PNG support (librsvg); write an .svg", path);
	return -ENOTSUP;
}
#endif
