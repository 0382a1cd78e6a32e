/* SPDX-License-Identifier: MIT */
/* Knees of a latency-vs-pages curve: where latency steps up to a new, persistent level (a TLB or cache capacity). */
#pragma once

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
	double x_after;		/* first x that has covered at least half of the step */
	double before_ns;	/* median of the points within one octave up to x_before (the lower plateau) */
	double after_ns;	/* median of the points within one octave from x_after (the higher level) */
	double step_ns;		/* after_ns - before_ns, > 0 */
	double confidence;	/* step_ns / noise; noise combines point spreads and the plateaus' scatter (MAD units) */
	size_t i_before;	/* index of x_before in the input */
	size_t i_after;		/* index of x_after in the input */
};

/*
 * Find candidate knees on a curve of n points sorted by x. Writes the first
 * min(*n_out, max) knees to out in increasing x and stores in *n_out the
 * number of knees found, which exceeds max when out was too small (as
 * snprintf does: loop to the smaller of the two); out may be NULL when max is
 * 0, to count only. A knee needs at least 3 points on the lower level (after
 * the previous knee) and 3 on the higher one, so curves of fewer than 6
 * points have none, nor has a step seen only on the last 1-2 points.
 * Returns 0, or -EINVAL (n > 0 with pts NULL, out NULL with max > 0, n_out
 * NULL, x not > 0 or not strictly increasing, negative spread, non-finite
 * values); on -EINVAL *n_out (when not NULL) is 0.
 * Pure: no I/O and no allocation (working arrays of a few KiB on the stack).
 */
int knees_detect(const struct knee_point *pts, size_t n, struct knee *out, size_t max, size_t *n_out);
