/* SPDX-License-Identifier: MIT */
/* Knees of a latency-vs-pages curve: where latency steps up to a new, persistent level (a TLB or cache capacity). */
#include "judge/knees.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>

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
};

static void window_measure(const struct knee_point *pts, size_t first, size_t last, struct window *w)
{
	double v[MAX_WINDOW_POINTS], slopes[MAX_PAIRS], mean_t = 0, ss = 0;
	size_t c = last - first + 1, np = 0;
	const struct knee_point *p = pts + first;

	w->first = first;
	w->last = last;
	for (size_t i = 0; i < c; i++)
		v[i] = p[i].median;
	w->level_ns = stats_median_inplace(v, c);
	for (size_t i = 0; i < c; i++)
		v[i] = p[i].spread;
	w->spread_ns = stats_median_inplace(v, c);
	/* Theil-Sen: the median of pairwise slopes ignores a single jump or outlier inside the window. */
	for (size_t i = 0; i < c; i++)
		for (size_t j = i + 1; j < c; j++)
			slopes[np++] = (p[j].median - p[i].median) / (log2(p[j].x) - log2(p[i].x));
	w->slope_ns = stats_median_inplace(slopes, np);
	for (size_t i = 0; i < c; i++)
		mean_t += log2(p[i].x) / (double)c;
	for (size_t i = 0; i < c; i++)
		ss += (log2(p[i].x) - mean_t) * (log2(p[i].x) - mean_t);
	w->slope_leverage = sqrt(ss);
}

/*
 * The lower window: points from end back over LOWER_SPAN, not before index
 * level_start, at most MAX_WINDOW_POINTS; widened past the span (never
 * before level_start) to reach MIN_PLATEAU_POINTS on a sparse grid. False
 * when too few.
 */
static bool window_left(const struct knee_point *pts, size_t level_start, size_t end, struct window *w)
{
	size_t first = end;

	while (first > level_start && end - first + 1 < MAX_WINDOW_POINTS &&
	       (pts[first - 1].x * LOWER_SPAN >= pts[end].x || end - first + 1 < MIN_PLATEAU_POINTS))
		first--;
	if (end - first + 1 < MIN_PLATEAU_POINTS)
		return false;
	if (pts[first].x * MIN_LOWER_SPAN > pts[end].x && end - first + 1 < MAX_WINDOW_POINTS)
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
	if (!window_left(pts, level_start, i_before, &c->lo) || !window_right(pts, cv->n, i_after, &c->hi))
		return false;
	c->step_ns = c->hi.level_ns - c->lo.level_ns;
	rel = fmax(scatter_rel(pts, &c->lo, &c->hi), cv->scatter_rel);
	scatter_lo = rel * fabs(c->lo.level_ns);
	scatter_hi = rel * fabs(c->hi.level_ns);
	c->noise_lo_ns = hypot(c->lo.spread_ns, scatter_lo);
	c->noise_ns = sqrt(c->noise_lo_ns * c->noise_lo_ns + c->hi.spread_ns * c->hi.spread_ns +
			   scatter_hi * scatter_hi);
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

int knees_detect(const struct knee_point *pts, size_t n, struct knee *out, size_t max, size_t *n_out)
{
	size_t found = 0, level_start = 0, gap = 0;
	struct curve cv;

	if (!n_out)
		return -EINVAL;
	*n_out = 0;
	if ((n && !pts) || (max && !out))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!point_valid(&pts[i]) || (i && !(pts[i].x > pts[i - 1].x)))
			return -EINVAL;

	cv = (struct curve){ .pts = pts, .n = n, .scatter_rel = curve_scatter_rel(pts, n) };
	while (gap + 1 < n) {
		struct candidate c, best, knee;
		size_t run_end;

		if (!candidate_measure(&cv, level_start, gap, gap + 1, &c)) {
			gap++;
			continue;
		}
		/* The run of neighbouring gaps that pass is one rise: keep its most confident step. */
		best = c;
		for (run_end = gap + 1; run_end + 1 < n && candidate_measure(&cv, level_start, run_end, run_end + 1, &c);
		     run_end++)
			if (c.confidence > best.confidence)
				best = c;
		/* Every knee reported passed all tests where it is reported. */
		if (!candidate_refine(&cv, level_start, &best, &knee)) {
			gap = run_end;
			continue;
		}
		if (found < max)
			out[found] = (struct knee){
				.x_before = pts[knee.i_before].x,
				.x_after = pts[knee.i_after].x,
				.before_ns = knee.lo.level_ns,
				.after_ns = knee.hi.level_ns,
				.step_ns = knee.step_ns,
				.confidence = knee.confidence,
				.i_before = knee.i_before,
				.i_after = knee.i_after,
			};
		found++;
		/* The higher level is the next knee's lower one: it starts at x_after. */
		level_start = knee.i_after;
		gap = run_end > level_start ? run_end : level_start;
	}
	*n_out = found;
	return 0;
}
