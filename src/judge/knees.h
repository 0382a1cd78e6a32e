/* SPDX-License-Identifier: MIT */
/* Knees of a latency-vs-pages curve: where latency steps up to a new, persistent level (a TLB or cache capacity). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* One point of the curve, as the caller summarised its repetitions. */
struct knee_point {
	double x;	/* pages touched, > 0 (strictly increasing order required) */
	double median;	/* median ns per access over the repetitions */
	double spread;	/* dispersion of the repetitions around the median, ns (MAD or IQR/2); >= 0 */
};

/* A candidate knee: the curve leaves a flat lower level and stays on a clearly higher one. */
struct knee {
	double x_before;	/* last x on the lower level (the candidate capacity) */
	double x_after;		/* first x after it that has covered at least half of the step */
	double before_ns;	/* lower level: median of the points over up to two octaves up to x_before */
	double after_ns;	/* higher level: median of the points over up to one octave from x_after */
	double step_ns;		/* after_ns - before_ns, > 0 */
	/*
	 * step_ns / noise, noise = sqrt(spread_lo^2 + spread_hi^2 + scatter_lo^2
	 * + scatter_hi^2): spread is the median of the points' spreads in each
	 * window, scatter the points' scatter about the local curve (as a MAD)
	 * at that level; at least 0.5 % of before_ns. Knees have >= 5.
	 */
	double confidence;
	size_t i_before;	/* index of x_before in the input */
	size_t i_after;		/* index of x_after in the input */
	bool ramp;		/* the rise spreads over several points (x_before .. x_after), not one gap */
};

/*
 * Find candidate knees on a curve of n points sorted by x: rises to a new
 * level that persists, by at least 10 % of the lower level and 5 times the
 * noise, after a lower level that is flat over at least an octave (a steady
 * slope has no knee). Latency that falls is never a knee.
 *
 * Writes the first min(*n_out, max) knees to out in increasing x and stores
 * in *n_out the number of knees found, which exceeds max when out was too
 * small (as snprintf does: loop to the smaller of the two); out may be NULL
 * when max is 0, to count only.
 *
 * A rise that no single gap passes, because it spreads over several points
 * (a set-associative TLB or a randomly indexed cache fills gradually), is a
 * ramp: the same tests across a gap of up to an octave and a half, looked
 * for between the steps.
 *
 * A knee needs at least 3 points spanning an octave on the lower level (and
 * after the previous knee's x_after) and 3 points at or above the step's
 * midpoint on the higher one, the last point of the window among them. So
 * curves of fewer than 6 points have none, nor has a step seen only on the
 * last 1-2 points, nor one of 2 adjacent outliers. Best on a grid of 4-24
 * points per octave, as tlbsize measures.
 *
 * Returns 0, or -EINVAL (n > 0 with pts NULL, out NULL with max > 0, n_out
 * NULL, x not > 0 or not strictly increasing, negative spread, non-finite
 * values); on -EINVAL *n_out (when not NULL) is 0.
 * Pure: no I/O and no allocation (working arrays of a few KiB on the stack).
 */
int knees_detect(const struct knee_point *pts, size_t n, struct knee *out, size_t max, size_t *n_out);
