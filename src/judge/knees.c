/* SPDX-License-Identifier: MIT */
/* Knees of a latency-vs-pages curve: where latency steps up to a new, persistent level (a TLB or cache capacity). */
#include "judge/knees.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "stats.h"

/*
 * How it works. For each gap between neighbouring points, a window of up to
 * two octaves of points ends at the left point (the lower level) and one of
 * up to one octave starts at the right point (the higher level). Each gives a
 * robust level (median of the medians) and its points' typical spread
 * (median of the spreads); the lower one also a trend (Theil-Sen slope per
 * octave of x). The scatter of the points about the local curve (second
 * differences relative to the level, pooled over both windows, at least that
 * of the whole curve) completes the noise. A gap is a step when the higher
 * level is above the lower one by a clear relative amount and by several
 * times the noise, the lower window is flat (its trend is small next to the
 * step: this tells a step from a slope), and the higher level persists.
 * Neighbouring gaps that pass are one rise, of which the most confident
 * gap is kept; the knee is then placed where the rise starts (the last point
 * still on the lower level) and must pass again there, or it is dropped. The
 * next knee's lower window starts at this knee's x_after and must span an
 * octave, so one rise never gives a cascade of knees.
 *
 * Then ramps: between the steps (and on a curve cut at the next step, so no
 * window sees it), the same tests across a gap of two points or more, up to
 * an octave and a half, with the stricter ones of ramp_passes() that tell a
 * ramp from a slope. A step whose lower window held a ramp is measured again
 * from the ramp's top (knees_settle).
 */

/* Counts, each with the reason for its value. */
enum {
	/* Fewest points a level is measured on: a median of 3 is not moved by one outlier. */
	MIN_PLATEAU_POINTS = 3,
	/* Most points in a window: two octaves of the tlbsize grid hold about 12 near a capacity. */
	MAX_WINDOW_POINTS = 24,
	/* Pairs for the Theil-Sen slope of a full window, on the stack. */
	MAX_PAIRS = MAX_WINDOW_POINTS * (MAX_WINDOW_POINTS - 1) / 2,
	/* Residuals for the curve's scatter: tlbsize measures at most 512 points. */
	MAX_CURVE_RESIDUALS = 512,
	/* ... and at least these, so that the 2-4 residuals next to each of a few steps are a minority. */
	MIN_CURVE_RESIDUALS = 16,
	/* Steps kept to look for ramps between (a curve of 512 points has a handful). */
	KNEES_MAX_STEPS = 32,
};
/*
 * Span of the lower window as a ratio of x (two octaves): enough points
 * (8-12) to show its trend well against noise, and shorter than the distance
 * between the levels of interest (8 -> 64 -> 1536..4096 pages: 3 octaves or
 * more).
 */
static const double LOWER_SPAN = 4.0;
/*
 * ... and it must span at least this ratio (one octave): a level seen over
 * less is not shown flat, and after a knee the curve must first settle for an
 * octave, so the tail of one rise does not count as the next knee.
 */
static const double MIN_LOWER_SPAN = 2.0;
/* The lower window's span right after a knee, whose end bounds the level (see ramps_between). */
static const double AFTER_KNEE_LOWER_SPAN = 1.5;
/* Span of the higher window (one octave, 4-6 points or more): enough for a robust level and to show it persists. */
static const double UPPER_SPAN = 2.0;
/*
 * A step smaller than this fraction of the lower level is not a knee: an
 * L2-TLB hit or an L1 miss costs at least ~25 % of an L1 hit, while clock
 * drift and page-walk creep move a curve by a few percent.
 */
static const double MIN_REL_RISE = 0.10;
/*
 * A step must be this many times the noise. Noise is in MAD units
 * (~0.67 sigma for Gaussian repetitions), so 5 is ~3.4 sigma of one point;
 * the levels are medians of at least 3 points, so this is conservative.
 */
static const double MIN_CONFIDENCE = 5.0;
/*
 * The lower window's trend (ns per octave) must be below this fraction of
 * the step. On the tlbsize grids it is 0.46-1.0 of the step (median 0.63:
 * the window centres are ~1.6 octaves apart) on a steady slope in log x,
 * 0.37-0.92 on a power law x^0.3, 0.22-0.68 (median 0.35) on a slope linear
 * in x, and ~0 on a plateau.
 */
static const double FLAT_FRACTION = 0.15;
/*
 * ... plus this many standard errors of that trend (noise over the spread of
 * log2 x in the window), so that noise alone rarely makes a plateau "not
 * flat". One: with two, noisy slopes passed as plateaus in ~1 % of curves.
 */
static const double FLAT_NOISE = 1.0;
/*
 * A point is still on the lower level below before + max(ONSET_FRACTION *
 * step, ONSET_NOISE * noise of the lower level): the knee is where the rise
 * starts, not its middle. A tenth of the step puts the first points of a
 * ramp (a TLB whose miss rate grows as 1 - capacity / pages) on the rise; 3
 * MADs (2 sigma) keep a noisy point of the plateau off it.
 */
static const double ONSET_FRACTION = 0.1;
static const double ONSET_NOISE = 3.0;
/*
 * A ramp (a rise spread over several points, as a set-associative TLB or a
 * randomly indexed cache fills gradually) spans at most this ratio of x
 * between its last point on the lower level and its first on the higher one:
 * an octave and a half. The L1 dTLB of Sunny Cove (64 entries) ramped from 32
 * to 81 pages on the development VM, its STLB (2048) from 1448 to 2580.
 */
static const double RAMP_SPAN = 2.8284271247461903;
/* ... of which the trend on either side may explain at most this fraction (see ramp_passes). */
static const double RAMP_TREND_FRACTION = 0.5;
/*
 * ... and which must be this many times the noise, half as much again as a
 * step: a ramp is tried over every gap width up to RAMP_SPAN (9-12 of them on
 * the tlbsize grid), and so has as many more chances to pass by noise. On
 * noisy slopes in log x, ramps passed at 5.3-6.3 in 1 of 10 curves; the
 * measured L1 dTLB ramp of the development VM passes at 9.1.
 */
static const double MIN_RAMP_CONFIDENCE = 7.5;
/*
 * ... and two levels must fit it better than a line, by this ratio (see
 * ramp_bend): ramps at that confidence reach it in 19 of 20 simulated
 * curves, noisy slopes passed at up to 1.14 (the measured L1 dTLB ramp:
 * 2.5).
 */
static const double RAMP_MIN_BEND = 1.3;
/* A level on the way up a rise is flat when its trend is below this fraction of the rise's mean slope. */
static const double PLATEAU_FRACTION = 0.25;
/* Timed medians of a chase never agree better than this across runs (clock, refresh), however clean. */
static const double NOISE_FLOOR_REL = 0.005;
/* Absolute floor, so a confidence stays finite on a synthetic curve at 0 ns. */
static const double NOISE_FLOOR_NS = 1e-3;

/* A level measured on points first..last (inclusive). */
struct window {
	size_t first, last;
	double level_ns;	/* median of the medians */
	double spread_ns;	/* median of the points' spreads */
	double slope_ns;	/* Theil-Sen slope, ns per octave of x */
	double slope_leverage;	/* sqrt of the sum of squared deviations of log2 x: the slope's error is noise / this */
	double centre_log2;	/* mean log2 x of the points */
};

static void window_measure(const struct knee_point *pts, size_t first, size_t last, struct window *w)
{
	double v[MAX_WINDOW_POINTS], lx[MAX_WINDOW_POINTS], slopes[MAX_PAIRS], mean_t = 0, ss = 0;
	size_t c = last - first + 1, np = 0;
	const struct knee_point *p = pts + first;

	w->first = first;
	w->last = last;
	for (size_t i = 0; i < c; i++) {
		v[i] = p[i].median;
		lx[i] = log2(p[i].x);	/* once per point: the pairs below would take it c times each */
	}
	w->level_ns = stats_median_inplace(v, c);
	for (size_t i = 0; i < c; i++)
		v[i] = p[i].spread;
	w->spread_ns = stats_median_inplace(v, c);
	/* Theil-Sen: the median of pairwise slopes ignores a single jump or outlier inside the window. */
	for (size_t i = 0; i < c; i++)
		for (size_t j = i + 1; j < c; j++)
			slopes[np++] = (p[j].median - p[i].median) / (lx[j] - lx[i]);
	w->slope_ns = stats_median_inplace(slopes, np);
	for (size_t i = 0; i < c; i++)
		mean_t += lx[i] / (double)c;
	for (size_t i = 0; i < c; i++)
		ss += (lx[i] - mean_t) * (lx[i] - mean_t);
	w->slope_leverage = sqrt(ss);
	w->centre_log2 = mean_t;
}

/*
 * The lower window: points from end back over LOWER_SPAN, not before index
 * level_start, at most MAX_WINDOW_POINTS; widened past the span (never
 * before level_start) to reach MIN_PLATEAU_POINTS on a sparse grid. False
 * when too few.
 */
static bool window_left(const struct knee_point *pts, size_t level_start, size_t end, double min_span,
			struct window *w)
{
	size_t first = end;

	while (first > level_start && end - first + 1 < MAX_WINDOW_POINTS &&
	       (pts[first - 1].x * LOWER_SPAN >= pts[end].x || end - first + 1 < MIN_PLATEAU_POINTS))
		first--;
	if (end - first + 1 < MIN_PLATEAU_POINTS)
		return false;
	if (pts[first].x * min_span > pts[end].x && end - first + 1 < MAX_WINDOW_POINTS)
		return false;
	window_measure(pts, first, end, w);
	return true;
}

/* The higher window: the same, forward from start over UPPER_SPAN. */
static bool window_right(const struct knee_point *pts, size_t n, size_t start, struct window *w)
{
	size_t last = start;

	while (last + 1 < n && last - start + 1 < MAX_WINDOW_POINTS &&
	       (pts[last + 1].x <= pts[start].x * UPPER_SPAN || last - start + 1 < MIN_PLATEAU_POINTS))
		last++;
	if (last - start + 1 < MIN_PLATEAU_POINTS)
		return false;
	window_measure(pts, start, last, w);
	return true;
}

/*
 * Point i's distance from the line through its neighbours (in log2 x),
 * relative to level and divided by the growth the interpolation gives the
 * noise (sqrt(1 + f^2 + (1-f)^2)), so that it is in the units of one point's
 * noise. Not finite when level is 0.
 */
static double residual_rel(const struct knee_point *pts, size_t i, double level)
{
	double t0 = log2(pts[i - 1].x), t = log2(pts[i].x), t1 = log2(pts[i + 1].x);
	double f = (t - t0) / (t1 - t0);
	double r = pts[i].median - ((1 - f) * pts[i - 1].median + f * pts[i + 1].median);

	return fabs(r / level) / sqrt(1 + f * f + (1 - f) * (1 - f));
}

/*
 * Relative scatter of the points about the local curve, pooled over windows
 * a and b: the median of their inner points' residual_rel (each relative to
 * its window's level). A trend does not count, nor a jump between the
 * windows; a jump inside a window spoils one or two of the pooled values,
 * which the median ignores. 0 when there are none.
 */
static double scatter_rel(const struct knee_point *pts, const struct window *a, const struct window *b)
{
	double v[2 * MAX_WINDOW_POINTS];
	size_t nv = 0;

	for (const struct window *w = a; w; w = w == a ? b : NULL)
		for (size_t i = w->first + 1; i < w->last; i++) {
			double r = residual_rel(pts, i, w->level_ns);

			if (isfinite(r))
				v[nv++] = r;
		}
	return nv ? stats_median_inplace(v, nv) : 0;
}

/* The curve and what is measured on all of it once. */
struct curve {
	const struct knee_point *pts;
	size_t n;
	double scatter_rel;	/* relative scatter of all points about the local curve (see curve_scatter_rel) */
	double min_lower_span;	/* MIN_LOWER_SPAN, or 1 where a ramp below has shown the level (knees_settle) */
};

/*
 * Relative scatter of all inner points about the local curve, as
 * scatter_rel but over the whole curve (subsampled to MAX_CURVE_RESIDUALS on
 * a larger one): a floor for the local estimate, which rests on a dozen
 * values and is sometimes low by chance. The points next to steps are
 * outliers for the median; on a curve too short for that (fewer than
 * MIN_CURVE_RESIDUALS values) there is no floor: 0.
 */
static double curve_scatter_rel(const struct knee_point *pts, size_t n)
{
	double v[MAX_CURVE_RESIDUALS];
	size_t nv = 0, stride = n / MAX_CURVE_RESIDUALS + 1;

	for (size_t i = 1; i + 1 < n && nv < MAX_CURVE_RESIDUALS; i += stride) {
		double r = residual_rel(pts, i, pts[i].median);

		if (isfinite(r))
			v[nv++] = r;
	}
	return nv >= MIN_CURVE_RESIDUALS ? stats_median_inplace(v, nv) : 0;
}

/* A step between point i_before (end of the lower window) and i_after (start of the higher one). */
struct candidate {
	size_t i_before, i_after;
	struct window lo, hi;
	double step_ns, noise_ns, confidence;
	double noise_lo_ns;	/* noise of the lower level alone */
	double noise_hi_ns;	/* ... and of the higher one */
};

/*
 * Measure the step from the lower window ending at i_before (not before
 * level_start) to the higher one starting at i_after > i_before, into *c.
 * True when it is a knee: both windows exist, the rise is clear in relative
 * terms and against the noise, the lower window is flat, and the higher
 * level persists (at least MIN_PLATEAU_POINTS of its points at or above the
 * step's midpoint, its last one among them).
 */
static bool candidate_measure(const struct curve *cv, size_t level_start, size_t i_before, size_t i_after,
			      struct candidate *c)
{
	const struct knee_point *pts = cv->pts;
	double rel, scatter_lo, scatter_hi, mid;
	size_t low = 0;

	c->i_before = i_before;
	c->i_after = i_after;
	if (!window_left(pts, level_start, i_before, cv->min_lower_span, &c->lo) || !window_right(pts, cv->n, i_after, &c->hi))
		return false;
	c->step_ns = c->hi.level_ns - c->lo.level_ns;
	rel = fmax(scatter_rel(pts, &c->lo, &c->hi), cv->scatter_rel);
	scatter_lo = rel * fabs(c->lo.level_ns);
	scatter_hi = rel * fabs(c->hi.level_ns);
	c->noise_lo_ns = hypot(c->lo.spread_ns, scatter_lo);
	c->noise_hi_ns = hypot(c->hi.spread_ns, scatter_hi);
	c->noise_ns = hypot(c->noise_lo_ns, c->noise_hi_ns);
	c->noise_ns = fmax(c->noise_ns, fmax(NOISE_FLOOR_REL * fabs(c->lo.level_ns), NOISE_FLOOR_NS));
	c->confidence = c->step_ns / c->noise_ns;
	if (c->step_ns <= 0 || c->step_ns < MIN_REL_RISE * fabs(c->lo.level_ns) || c->confidence < MIN_CONFIDENCE)
		return false;
	if (c->lo.slope_ns > FLAT_FRACTION * c->step_ns + FLAT_NOISE * c->noise_lo_ns / c->lo.slope_leverage)
		return false;
	mid = c->lo.level_ns + c->step_ns / 2;
	for (size_t i = c->hi.first; i <= c->hi.last; i++)
		low += pts[i].median < mid;
	return c->hi.last - c->hi.first + 1 - low >= MIN_PLATEAU_POINTS && pts[c->hi.last].median >= mid;
}

/*
 * Move a detected step (found anywhere on its rise: any gap whose higher
 * window is mostly up passes) to where the rise starts. The rise is first
 * met at the first point at or above the midpoint in the step's higher
 * window; i_before becomes the last point below the onset level before it
 * (scanning down from the rise, so a noisy high point inside the lower level
 * does not count) and i_after the first point after i_before at or above the
 * midpoint. True, with *out, when the step still passes there.
 */
static bool candidate_refine(const struct curve *cv, size_t level_start, const struct candidate *c,
			     struct candidate *out)
{
	const struct knee_point *pts = cv->pts;
	double onset = c->lo.level_ns + fmax(ONSET_FRACTION * c->step_ns, ONSET_NOISE * c->noise_lo_ns);
	double mid = c->lo.level_ns + c->step_ns / 2;
	size_t rise = c->hi.first, j, k;

	while (rise < c->hi.last && pts[rise].median < mid)
		rise++;
	for (j = rise - 1; j > level_start && pts[j].median >= onset; j--)
		;
	if (pts[j].median >= onset)
		return false;
	for (k = j + 1; k < rise && pts[k].median < mid; k++)
		;
	return candidate_measure(cv, level_start, j, k, out);
}

static bool point_valid(const struct knee_point *p)
{
	return isfinite(p->x) && isfinite(p->median) && isfinite(p->spread) && p->x > 0 && p->spread >= 0;
}

static struct knee knee_of(const struct knee_point *pts, const struct candidate *c, bool ramp)
{
	return (struct knee){
		.x_before = pts[c->i_before].x,
		.x_after = pts[c->i_after].x,
		.before_ns = c->lo.level_ns,
		.after_ns = c->hi.level_ns,
		.step_ns = c->step_ns,
		.confidence = c->confidence,
		.i_before = c->i_before,
		.i_after = c->i_after,
		.ramp = ramp,
	};
}

/*
 * How much better two levels fit the windows' points than one line in
 * log2 x does: the root of the ratio of the sums of squared residuals, the
 * line's (least squares over both windows) over the levels' (each window's
 * mean). Both models have two parameters. On a slope the line is the right
 * model and the ratio is below 1, near 1 only where noise hides the slope;
 * on a ramp, with the steps' confidence (see MIN_RAMP_CONFIDENCE), it is
 * 1.15-2 (1st percentile to median in simulation) and grows with it.
 * Squares, not medians: a median fit through the majority window fits the
 * step half-way and hides the bend.
 */
static double ramp_bend(const struct knee_point *pts, const struct candidate *c)
{
	double st = 0, sy = 0, stt = 0, sty = 0, sse_line = 0, sse_level = 0, slope, icpt;
	size_t m = 0;

	for (const struct window *w = &c->lo; w; w = w == &c->lo ? &c->hi : NULL) {
		double mean = 0;

		for (size_t i = w->first; i <= w->last; i++)
			mean += pts[i].median / (double)(w->last - w->first + 1);
		for (size_t i = w->first; i <= w->last; i++) {
			double t = log2(pts[i].x), y = pts[i].median;

			st += t;
			sy += y;
			stt += t * t;
			sty += t * y;
			sse_level += (y - mean) * (y - mean);
			m++;
		}
	}
	slope = (sty - st * sy / (double)m) / (stt - st * st / (double)m);
	icpt = (sy - slope * st) / (double)m;
	for (const struct window *w = &c->lo; w; w = w == &c->lo ? &c->hi : NULL)
		for (size_t i = w->first; i <= w->last; i++) {
			double r = pts[i].median - icpt - slope * log2(pts[i].x);

			sse_line += r * r;
		}
	return sse_level > 0 ? sqrt(sse_line / sse_level) : INFINITY;
}

/*
 * A ramp must be more than the curve's trend. A gap an octave and a half
 * wide makes any slope look like a rise (the levels' distance grows with the
 * gap while the slope stays), so on top of the step's tests: a higher
 * confidence (MIN_RAMP_CONFIDENCE), two levels that fit better than a line
 * (RAMP_MIN_BEND), and neither window's trend, carried from its centre to
 * the other's, explaining more than RAMP_TREND_FRACTION of the step (on a
 * slope in log x either explains all of it, on a slope linear in x the
 * higher one does, on a ramp neither). No allowance for the trends' noise in
 * the last, unlike the steps' flatness test: the confidence bounds it, to a
 * fifth of the step or less with windows of two octaves and one.
 */
static bool ramp_passes(const struct knee_point *pts, const struct candidate *c)
{
	double dist = c->hi.centre_log2 - c->lo.centre_log2;

	return c->confidence >= MIN_RAMP_CONFIDENCE && ramp_bend(pts, c) >= RAMP_MIN_BEND &&
	       c->lo.slope_ns * dist <= RAMP_TREND_FRACTION * c->step_ns &&
	       c->hi.slope_ns * dist <= RAMP_TREND_FRACTION * c->step_ns;
}

/* The narrowest ramp from i_before (over more than one gap, within RAMP_SPAN) that passes; false when none. */
static bool ramp_at(const struct curve *cv, size_t level_start, size_t i_before, size_t limit, struct candidate *c)
{
	for (size_t i_after = i_before + 2; i_after <= limit && cv->pts[i_after].x <= cv->pts[i_before].x * RAMP_SPAN;
	     i_after++)
		if (candidate_measure(cv, level_start, i_before, i_after, c) && ramp_passes(cv->pts, c))
			return true;
	return false;
}

/*
 * Ramps between level_start and limit (the next step's lower end, or the
 * last point): rises no single gap passes, measured across several. The
 * ramps found are appended to out (up to max) and counted in *found.
 */
static void ramps_between(const struct curve *whole, size_t level_start, size_t limit, struct knee *out, size_t max,
			  size_t *found)
{
	/* The curve ends at limit for these ramps: a higher window reaching past the next step would see its rise. */
	struct curve part = *whole;
	const struct curve *cv = &part;
	size_t i = level_start;

	part.n = limit + 1;
	/*
	 * After a knee, the level starts where that knee ended: its plateau is
	 * bounded by a rise already found, not cut short by the grid, so it need
	 * only span AFTER_KNEE_LOWER_SPAN (the L1d knee at 683 pages and the
	 * STLB ramp from ~1450 on the Raptor Cove VM leave 861..1448 between
	 * them); shorter, the "plateau" is the rest of the rise just found.
	 */
	if (level_start > 0)
		part.min_lower_span = AFTER_KNEE_LOWER_SPAN;

	while (i + 2 <= limit) {
		struct candidate c, best;
		if (!ramp_at(cv, level_start, i, limit, &c)) {
			i++;
			continue;
		}
		/* Overlapping ramps from the next points are the same rise: keep the most confident. */
		best = c;
		for (size_t j = i + 1; j < best.i_after && ramp_at(cv, level_start, j, limit, &c); j++)
			if (c.confidence > best.confidence)
				best = c;
		if (*found < max)
			out[*found] = knee_of(cv->pts, &best, true);
		(*found)++;
		level_start = best.i_after;
		i = level_start;
		part.min_lower_span = AFTER_KNEE_LOWER_SPAN;
	}
}

static int cmp_knee(const void *pa, const void *pb)
{
	const struct knee *a = pa, *b = pb;

	return (a->x_before > b->x_before) - (a->x_before < b->x_before);
}

/*
 * A step found before the ramps measured its lower level over two octaves,
 * which may hold a ramp found since: measure it again from that ramp's
 * higher end (whose window has shown the level, so less than an octave of it
 * will do), and keep that where it passes.
 */
static void knees_settle(const struct curve *whole, struct knee *k, size_t n)
{
	struct curve cv = *whole;

	cv.min_lower_span = 1;
	for (size_t i = 1; i < n; i++) {
		struct candidate c;

		if (k[i - 1].ramp && !k[i].ramp && k[i - 1].i_after < k[i].i_before &&
		    candidate_measure(&cv, k[i - 1].i_after, k[i].i_before, k[i].i_after, &c))
			k[i] = knee_of(cv.pts, &c, false);
	}
}

/* The steps first (knees_steps), then the ramps between them, all in order of x. */
static size_t knees_steps(const struct curve *cv, struct knee *out, size_t max);

int knees_detect(const struct knee_point *pts, size_t n, struct knee *out, size_t max, size_t *n_out)
{
	struct knee steps[KNEES_MAX_STEPS];
	size_t n_steps, found, start = 0;
	struct curve cv;

	if (!n_out)
		return -EINVAL;
	*n_out = 0;
	if ((n && !pts) || (max && !out))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!point_valid(&pts[i]) || (i && !(pts[i].x > pts[i - 1].x)))
			return -EINVAL;
	cv = (struct curve){ .pts = pts, .n = n, .scatter_rel = curve_scatter_rel(pts, n), .min_lower_span = MIN_LOWER_SPAN };
	n_steps = knees_steps(&cv, steps, KNEES_MAX_STEPS);
	found = n_steps < KNEES_MAX_STEPS ? n_steps : KNEES_MAX_STEPS;
	for (size_t k = 0; k < found && k < max; k++)
		out[k] = steps[k];
	for (size_t k = 0; k <= n_steps && k <= KNEES_MAX_STEPS && n; k++) {
		size_t limit = k < n_steps && k < KNEES_MAX_STEPS ? steps[k].i_before : n - 1;
		ramps_between(&cv, start, limit, out, max, &found);
		if (k < n_steps && k < KNEES_MAX_STEPS)
			start = steps[k].i_after;
	}
	if (found && max) {
		qsort(out, found < max ? found : max, sizeof(*out), cmp_knee);
		knees_settle(&cv, out, found < max ? found : max);
	}
	*n_out = found;
	return 0;
}

/*
 * Whether the refined knee k, rising over several points, stops at a level
 * of its own on the way up: the points of its rise below its midpoint (three
 * or more) are flat next to the rise (their trend is below a quarter of k's
 * mean slope across it), and k's first gap passes as a step on its own, to a
 * level below the midpoint. Two capacities close together (the L1D at 683
 * pages and the STLB at 2048 on the development VM) make one run of passing
 * gaps. *first is that step.
 */
static bool first_of_two(const struct curve *cv, size_t level_start, const struct candidate *k,
			 struct candidate *first)
{
	const struct knee_point *pts = cv->pts;
	double mid = k->lo.level_ns + k->step_ns / 2, rise_slope;
	struct window on_the_way;
	size_t last = k->i_before;

	for (size_t i = k->i_before + 1; i < k->i_after && pts[i].median < mid; i++)
		last = i;
	if (last < k->i_before + MIN_PLATEAU_POINTS || last - k->i_before > MAX_WINDOW_POINTS)
		return false;
	window_measure(pts, k->i_before + 1, last, &on_the_way);
	rise_slope = k->step_ns / log2(pts[k->i_after].x / pts[k->i_before].x);
	if (on_the_way.slope_ns > PLATEAU_FRACTION * rise_slope)
		return false;
	return candidate_measure(cv, level_start, k->i_before, k->i_before + 1, first) && first->hi.level_ns < mid;
}

static size_t knees_steps(const struct curve *cv_in, struct knee *out, size_t max)
{
	/* After a rise split in two, the level between has shown itself on the way up: less than an octave will do. */
	struct curve normal = *cv_in, after_split = *cv_in;
	const struct curve *cv = &normal;
	const struct knee_point *pts = normal.pts;
	size_t n = normal.n, found = 0, level_start = 0, gap = 0;

	after_split.min_lower_span = 1;
	while (gap + 1 < n) {
		struct candidate c, best, knee;
		size_t run_end;

		if (!candidate_measure(cv, level_start, gap, gap + 1, &c)) {
			gap++;
			continue;
		}
		/* The run of neighbouring gaps that pass is one rise: keep its most confident step. */
		best = c;
		for (run_end = gap + 1; run_end + 1 < n && candidate_measure(cv, level_start, run_end, run_end + 1, &c);
		     run_end++)
			if (c.confidence > best.confidence)
				best = c;
		/* Every knee reported passed all tests where it is reported. */
		if (!candidate_refine(cv, level_start, &best, &knee)) {
			gap = run_end;
			continue;
		}
		/* A rise that stops at a level on the way up is two knees: report the first, look again after it. */
		bool two = first_of_two(cv, level_start, &knee, &c);
		if (two)
			knee = c;
		if (found < max)
			out[found] = knee_of(pts, &knee, false);
		found++;
		/* The higher level is the next knee's lower one: it starts at x_after. */
		level_start = knee.i_after;
		gap = run_end > level_start && !two ? run_end : level_start;
		cv = two ? &after_split : &normal;
	}
	return found;
}
