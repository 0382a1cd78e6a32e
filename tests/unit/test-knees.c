/* SPDX-License-Identifier: MIT */
/* Knee detection on synthetic tlbsize curves: clean and noisy steps, slopes, outliers, aliasing, ends, bad input. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rng.h"
#include "judge/knees.h"

enum {
	MAX_GRID = 200,
	MAX_KNEES = 8,
	/* Noisy curves are tried with this many seeds: a pass is not one lucky draw. */
	N_SEEDS = 200,
	/* Repetitions per point: tlbprof's default --repeat. */
	REPS = 5,
};

/* About N(0, 1): Irwin-Hall, the sum of 12 uniforms minus 6 (bounded at +-6, so no freak draw). */
static double rng_gauss(uint64_t *state)
{
	double s = 0;

	for (int i = 0; i < 12; i++)
		s += (double)(rng_next(state) >> 11) / 9007199254740992.0;
	return s - 6;
}

/* Grids as tlbsize builds them (src/workloads/tlbsize.c, page_counts). */
enum grid_kind {
	/* CPUID gave 64 and 2048 entries: 4 points per octave, dense points around both, up to 4 x 2048. */
	GRID_KNOWN,
	/* No CPUID capacities: 6 points per octave up to 65536. */
	GRID_UNKNOWN,
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static size_t grid_build(enum grid_kind kind, double *x)
{
	static const double around[] = { 0.5, 0.75, 0.875, 0.9375, 1.0, 1.0625, 1.125, 1.25, 1.5, 2.0 };
	static const double caps[] = { 64, 2048 };
	int per_octave = kind == GRID_KNOWN ? 4 : 6;
	double max = kind == GRID_KNOWN ? 4 * 2048 : 65536;
	size_t n = 0, m = 0;

	for (double p = 1; p <= 3; p++)
		x[n++] = p;
	for (int k = 2 * per_octave;; k++) {
		double p = floor(exp2((double)k / per_octave) + 0.5);
		if (p > max)
			break;
		x[n++] = p;
	}
	for (size_t c = 0; kind == GRID_KNOWN && c < 2; c++)
		for (size_t f = 0; f < sizeof(around) / sizeof(around[0]); f++)
			x[n++] = floor(caps[c] * around[f] + 0.5);
	x[n++] = max;
	qsort(x, n, sizeof(*x), cmp_double);
	for (size_t i = 0; i < n; i++)
		if (!m || x[m - 1] != x[i])
			x[m++] = x[i];
	return m;
}

/* Index of the grid point nearest to v. */
static size_t grid_index(const double *x, size_t n, double v)
{
	size_t best = 0;

	for (size_t i = 1; i < n; i++)
		if (fabs(log2(x[i] / v)) < fabs(log2(x[best] / v)))
			best = i;
	return best;
}

/*
 * Sample truth(x) on the grid. Noise: each point's level moves by a factor
 * 1 + point_rel * N(0,1) (run-to-run: clock, placement), then REPS
 * repetitions scatter by rep_rel around it; median and MAD are what the
 * caller reports. Without noise the spread is 0.
 */
struct noise {
	double point_rel;
	double rep_rel;
};

static void sample(const double *x, size_t n, double (*truth)(double), const struct noise *nz, uint64_t seed,
		   struct knee_point *p)
{
	uint64_t st = seed;

	for (size_t i = 0; i < n; i++) {
		double t = truth(x[i]), level = t * (1 + nz->point_rel * rng_gauss(&st)), r[REPS], d[REPS];

		for (int k = 0; k < REPS; k++)
			r[k] = level * (1 + nz->rep_rel * rng_gauss(&st));
		qsort(r, REPS, sizeof(*r), cmp_double);
		for (int k = 0; k < REPS; k++)
			d[k] = fabs(r[k] - r[REPS / 2]);
		qsort(d, REPS, sizeof(*d), cmp_double);
		p[i] = (struct knee_point){ .x = x[i], .median = r[REPS / 2], .spread = d[REPS / 2] };
	}
}

/* The curves. Levels: L1 hit 1.2 ns, L1-TLB miss / L2-TLB hit 3 ns, L2-TLB miss (page walk) 30 ns. */
static double two_step(double x)
{
	return x <= 64 ? 1.2 : x <= 2048 ? 3.0 : 30.0;
}

/* The same capacities with the shape random access gives: the miss rate grows as 1 - capacity / pages. */
static double two_ramp(double x)
{
	return 1.2 + 1.8 * fmax(0, 1 - 64 / x) + 27 * fmax(0, 1 - 2048 / x);
}

/*
 * A rise spread evenly (in log x) over an octave and a half, as the L1 dTLB
 * of the development VM ramped from 32 to 81 pages: no single gap of the
 * grid rises enough to be a step.
 */
static double log_ramp(double x)
{
	double f = fmin(1, fmax(0, log2(x / 32) / log2(3)));

	return 1.2 + 1.8 * f + (x > 2048 ? 27 : 0);
}

/* Page-aligned lines all fall into one L1 set: past its 8 ways they come from L2 (~4 ns), then the TLB steps. */
static double aligned(double x)
{
	double base = x <= 8 ? 1.2 : x < 16 ? 1.2 + 2.8 * (x - 8) / 8 : 4.0;

	return base + (x > 64 ? 1.8 : 0) + (x > 2048 ? 27 : 0);
}

static double flat(double x)
{
	(void)x;
	return 1.2;
}

/* Slopes without a plateau: steady in log x, linear in x, and a power law. */
static double log_slope(double x)
{
	return 1.2 + 2.0 * log2(x);
}

static double lin_slope(double x)
{
	return 1.2 + 0.002 * x;
}

static double power_slope(double x)
{
	return 1.2 * pow(x, 0.3);
}

static const struct noise clean = { 0, 0 };
/* A few percent run to run, and repetitions that agree to ~2 %. */
static const struct noise noisy = { 0.03, 0.02 };
/* A busy machine: 6 % run to run, 5 % between repetitions. */
static const struct noise very_noisy = { 0.06, 0.05 };

/*
 * Golden table: a curve on a grid with some noise, and the knees expected,
 * over N_SEEDS seeds when noisy. Each knee found must have x_before near its
 * capacity (within one grid point, or tol_octaves when given) and a
 * confidence of at least min_confidence. A row with at_most set expects no
 * more than that many knees, each below max_confidence, and no positions.
 */
static const struct curve_case {
	int line;
	const char *name;
	enum grid_kind grid;
	double (*truth)(double);
	const struct noise *noise;
	size_t n_knees;
	double knees[3];
	double min_confidence;
	double tol_octaves;
	size_t at_most;
	double max_confidence;
} curve_cases[] = {
	/* Steps: exactly the two TLB knees, on both grids, in growing noise. */
	{ .line = __LINE__, .name = "two steps, clean", .grid = GRID_KNOWN, .truth = two_step, .noise = &clean,
	  .n_knees = 2, .knees = { 64, 2048 }, .min_confidence = 100 },
	{ .line = __LINE__, .name = "two steps, clean, no CPUID grid", .grid = GRID_UNKNOWN, .truth = two_step,
	  .noise = &clean, .n_knees = 2, .knees = { 64, 2048 }, .min_confidence = 100 },
	{ .line = __LINE__, .name = "two steps, noisy", .grid = GRID_KNOWN, .truth = two_step, .noise = &noisy,
	  .n_knees = 2, .knees = { 64, 2048 }, .min_confidence = 10 },
	{ .line = __LINE__, .name = "two steps, noisy, no CPUID grid", .grid = GRID_UNKNOWN, .truth = two_step,
	  .noise = &noisy, .n_knees = 2, .knees = { 64, 2048 }, .min_confidence = 10 },
	{ .line = __LINE__, .name = "two steps, very noisy", .grid = GRID_KNOWN, .truth = two_step, .noise = &very_noisy,
	  .n_knees = 2, .knees = { 64, 2048 }, .min_confidence = 5 },
	/* Ramps: the rise starts at the capacity but takes an octave or two; placed within a quarter octave. */
	{ .line = __LINE__, .name = "two ramps (1 - C/N), clean", .grid = GRID_KNOWN, .truth = two_ramp, .noise = &clean,
	  .n_knees = 2, .knees = { 64, 2048 }, .min_confidence = 20, .tol_octaves = 0.25 },
	{ .line = __LINE__, .name = "two ramps (1 - C/N), noisy", .grid = GRID_KNOWN, .truth = two_ramp, .noise = &noisy,
	  .n_knees = 2, .knees = { 64, 2048 }, .min_confidence = 5, .tol_octaves = 0.25 },
	/* A ramp over 1.6 octaves that no gap passes alone: one knee, where it starts. */
	{ .line = __LINE__, .name = "ramp 32..96 in log x, clean", .grid = GRID_KNOWN, .truth = log_ramp,
	  .noise = &clean, .n_knees = 2, .knees = { 32, 2048 }, .min_confidence = 20, .tol_octaves = 0.25 },
	{ .line = __LINE__, .name = "ramp 32..96 in log x, noisy", .grid = GRID_KNOWN, .truth = log_ramp,
	  .noise = &noisy, .n_knees = 2, .knees = { 32, 2048 }, .min_confidence = 5, .tol_octaves = 0.5 },
	/* Aliasing: the aligned layout adds a knee at 8; the colored one (two_step) has none before 64. */
	{ .line = __LINE__, .name = "aligned: alias step at 8", .grid = GRID_KNOWN, .truth = aligned, .noise = &clean,
	  .n_knees = 3, .knees = { 8, 64, 2048 }, .min_confidence = 50 },
	{ .line = __LINE__, .name = "aligned: alias step at 8, noisy", .grid = GRID_KNOWN, .truth = aligned,
	  .noise = &noisy, .n_knees = 3, .knees = { 8, 64, 2048 }, .min_confidence = 5 },
	{ .line = __LINE__, .name = "colored: no alias step, noisy", .grid = GRID_KNOWN, .truth = two_step,
	  .noise = &noisy, .n_knees = 2, .knees = { 64, 2048 }, .min_confidence = 5 },
	/* No step: nothing. */
	{ .line = __LINE__, .name = "flat, clean", .grid = GRID_KNOWN, .truth = flat, .noise = &clean },
	{ .line = __LINE__, .name = "flat, noisy", .grid = GRID_KNOWN, .truth = flat, .noise = &noisy },
	{ .line = __LINE__, .name = "flat, very noisy", .grid = GRID_UNKNOWN, .truth = flat, .noise = &very_noisy },
	/* Slopes: no plateau, so no knee ... */
	{ .line = __LINE__, .name = "slope in log x, clean", .grid = GRID_KNOWN, .truth = log_slope, .noise = &clean },
	{ .line = __LINE__, .name = "slope in log x, noisy", .grid = GRID_UNKNOWN, .truth = log_slope, .noise = &noisy },
	{ .line = __LINE__, .name = "power law x^0.3, clean", .grid = GRID_KNOWN, .truth = power_slope, .noise = &clean },
	{ .line = __LINE__, .name = "power law x^0.3, noisy", .grid = GRID_UNKNOWN, .truth = power_slope,
	  .noise = &noisy },
	{ .line = __LINE__, .name = "slope linear in x, clean", .grid = GRID_KNOWN, .truth = lin_slope, .noise = &clean },
	/*
	 * ... except that a slope linear in x is flat on a log axis until it
	 * bends up, and in noise the bend can pass for the onset of a ramp:
	 * then one knee, of low confidence, never a cascade.
	 */
	{ .line = __LINE__, .name = "slope linear in x, noisy", .grid = GRID_UNKNOWN, .truth = lin_slope,
	  .noise = &noisy, .at_most = 1, .max_confidence = 10 },
};

static void print_knees(const char *name, unsigned seed, const struct knee *k, size_t nk)
{
	fprintf(stderr, "  %s, seed %u: %zu knees:", name, seed, nk);
	for (size_t i = 0; i < nk && i < MAX_KNEES; i++)
		fprintf(stderr, " [%g..%g %.3g->%.3g conf %.3g%s]", k[i].x_before, k[i].x_after, k[i].before_ns,
			k[i].after_ns, k[i].confidence, k[i].ramp ? " ramp" : "");
	fputc('\n', stderr);
}

/*
 * The noisy seeds to run: N_SEEDS, or 20 under TLBPROF_TEST_QUICK=1 (the
 * valgrind setup: memcheck looks for memory errors, which every seed walks
 * the same code for, and is ~50 times slower).
 */
static unsigned n_seeds(void)
{
	const char *q = getenv("TLBPROF_TEST_QUICK");

	return q && strcmp(q, "1") == 0 ? 20 : N_SEEDS;
}

static void test_curves(void)
{
	for (size_t c = 0; c < sizeof(curve_cases) / sizeof(curve_cases[0]); c++) {
		const struct curve_case *t = &curve_cases[c];
		double x[MAX_GRID], worst = INFINITY, best = 0;
		size_t n = grid_build(t->grid, x), failures = 0, most = 0;
		unsigned seeds = t->noise->point_rel > 0 ? n_seeds() : 1;

		for (unsigned s = 1; s <= seeds; s++) {
			struct knee_point p[MAX_GRID];
			struct knee k[MAX_KNEES];
			size_t nk = 99;
			bool ok;

			sample(x, n, t->truth, t->noise, s, p);
			ok = knees_detect(p, n, k, MAX_KNEES, &nk) == 0 && nk <= MAX_KNEES;
			if (ok && t->at_most)
				ok = nk <= t->at_most;
			else if (ok)
				ok = nk == t->n_knees;
			for (size_t i = 0; ok && i < nk; i++) {
				worst = fmin(worst, k[i].confidence);
				best = fmax(best, k[i].confidence);
				if (t->at_most) {
					ok = k[i].confidence < t->max_confidence;
				} else {
					size_t want = grid_index(x, n, t->knees[i]);
					bool near = t->tol_octaves > 0
							    ? fabs(log2(k[i].x_before / t->knees[i])) <= t->tol_octaves
							    : k[i].i_before + 1 >= want && k[i].i_before <= want + 1;

					ok = near && x[k[i].i_before] == k[i].x_before && k[i].confidence >= t->min_confidence;
				}
			}
			most = nk > most ? nk : most;
			if (!ok && failures++ < 3)
				print_knees(t->name, s, k, nk);
		}
		CHECK_ROW(t->line, failures == 0, "%s: %zu of %u seeds wrong", t->name, failures, seeds);
		if (getenv("KNEES_VERBOSE"))
			fprintf(stderr, "%-36s most knees %zu, confidence %.3g .. %.3g\n", t->name, most, worst, best);
	}
}

/* Sample a curve on a grid into p (no noise); returns the count. */
static size_t clean_curve(enum grid_kind grid, double (*truth)(double), struct knee_point *p)
{
	double x[MAX_GRID];
	size_t n = grid_build(grid, x);

	sample(x, n, truth, &clean, 1, p);
	return n;
}

static size_t index_of(const struct knee_point *p, size_t n, double x)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].x == x)
			return i;
	return n;
}

/* Clean steps: the knees sit exactly at the capacities, with the true levels. */
static void test_levels_clean(void)
{
	struct knee_point p[MAX_GRID];
	size_t n = clean_curve(GRID_KNOWN, two_step, p), nk = 99;
	struct knee k[MAX_KNEES];

	CHECK(knees_detect(p, n, k, MAX_KNEES, &nk) == 0 && nk == 2, "two knees, got %zu", nk);
	if (nk != 2)
		return;
	CHECK(k[0].x_before == 64 && k[0].x_after == 68, "first at 64..68, got %g..%g", k[0].x_before, k[0].x_after);
	CHECK(k[0].i_before == index_of(p, n, 64) && k[0].i_after == k[0].i_before + 1, "first indices");
	CHECK_NEAR(k[0].before_ns, 1.2, 1e-12);
	CHECK_NEAR(k[0].after_ns, 3.0, 1e-12);
	CHECK_NEAR(k[0].step_ns, 1.8, 1e-12);
	CHECK(k[1].x_before == 2048 && k[1].x_after == 2176, "second at 2048..2176, got %g..%g", k[1].x_before,
	      k[1].x_after);
	CHECK_NEAR(k[1].before_ns, 3.0, 1e-12);
	CHECK_NEAR(k[1].after_ns, 30.0, 1e-12);
	/* No spread, no scatter: the noise is the floor (0.5 % of the lower level). */
	CHECK_NEAR(k[0].confidence, 1.8 / (0.005 * 1.2), 1e-6);
}

/*
 * Noisy steps: the levels stay within 5 % of the truth (3.5 standard errors
 * of a median of ~8 points at 3 % noise), seed after seed.
 */
static void test_levels_noisy(void)
{
	double x[MAX_GRID];
	size_t n = grid_build(GRID_KNOWN, x), bad = 0;

	for (unsigned s = 1; s <= n_seeds(); s++) {
		struct knee_point p[MAX_GRID];
		struct knee k[MAX_KNEES];
		size_t nk = 0;

		sample(x, n, two_step, &noisy, s, p);
		if (knees_detect(p, n, k, MAX_KNEES, &nk) != 0 || nk != 2 || fabs(k[0].before_ns / 1.2 - 1) > 0.05 ||
		    fabs(k[0].after_ns / 3 - 1) > 0.05 || fabs(k[1].before_ns / 3 - 1) > 0.05 ||
		    fabs(k[1].after_ns / 30 - 1) > 0.05 || fabs(k[0].step_ns - (k[0].after_ns - k[0].before_ns)) > 1e-12)
			bad++;
	}
	CHECK(bad == 0, "levels off by more than 5 %% in %zu of %u seeds", bad, n_seeds());
}

/*
 * Outliers in a flat curve: one point (anywhere, up or down), two
 * neighbours, or three neighbours where the curve is back down at the end
 * of the octave after them, make no knee.
 */
static const struct spike_case {
	int line;
	double x;	/* first point of the spike */
	size_t width;	/* points */
	double ns;	/* their latency */
} spike_cases[] = {
	{ __LINE__, 5, 1, 6.0 },
	{ __LINE__, 64, 1, 6.0 },
	{ __LINE__, 128, 1, 30.0 },
	{ __LINE__, 2048, 1, 6.0 },
	{ __LINE__, 6889, 1, 6.0 },	/* the second-to-last point */
	{ __LINE__, 8192, 1, 6.0 },	/* the last point */
	{ __LINE__, 128, 1, 0.3 },	/* down */
	{ __LINE__, 91, 2, 6.0 },
	{ __LINE__, 91, 3, 6.0 },
	{ __LINE__, 6889, 2, 6.0 },	/* the last two points: a step that is not seen to persist */
};

static void test_spikes(void)
{
	for (size_t c = 0; c < sizeof(spike_cases) / sizeof(spike_cases[0]); c++) {
		const struct spike_case *t = &spike_cases[c];
		struct knee_point p[MAX_GRID];
		size_t n = clean_curve(GRID_KNOWN, flat, p), at = index_of(p, n, t->x), nk = 99;
		struct knee k[MAX_KNEES];

		for (size_t i = at; i < at + t->width && i < n; i++)
			p[i].median = t->ns;
		CHECK_ROW(t->line, at < n && knees_detect(p, n, k, MAX_KNEES, &nk) == 0 && nk == 0,
			  "spike at %g x%zu: %zu knees", t->x, t->width, nk);
	}
}

/*
 * A step at the very end: seen on the last two points it is not a knee (not
 * shown to persist); on the last three it is, placed before them.
 */
static void test_end_step(void)
{
	for (size_t up = 1; up <= 4; up++) {
		struct knee_point p[MAX_GRID];
		size_t n = clean_curve(GRID_KNOWN, flat, p), nk = 99;
		struct knee k[MAX_KNEES];

		for (size_t i = n - up; i < n; i++)
			p[i].median = 5.0;
		CHECK(knees_detect(p, n, k, MAX_KNEES, &nk) == 0, "runs");
		if (up < 3)
			CHECK(nk == 0, "%zu points up: no knee, got %zu", up, nk);
		else
			CHECK(nk == 1 && k[0].i_before == n - up - 1 && k[0].after_ns == 5.0,
			      "%zu points up: one knee before them, got %zu", up, nk);
	}
}

/* Grids other than tlbsize's: every page count, one point per octave, and the shortest curves. */
static void test_grids(void)
{
	enum { DENSE = 1024 };
	struct knee_point dense[DENSE], sparse[17], few[6];
	struct knee k[MAX_KNEES];
	size_t nk = 99;

	/* Every page count: windows hold the nearest MAX_WINDOW_POINTS points, less than an octave. */
	for (size_t i = 0; i < DENSE; i++)
		dense[i] = (struct knee_point){ .x = (double)(i + 1), .median = two_step((double)(i + 1)) };
	CHECK(knees_detect(dense, DENSE, k, MAX_KNEES, &nk) == 0 && nk == 1 && k[0].x_before == 64,
	      "dense: one knee at 64, got %zu (%g)", nk, nk ? k[0].x_before : 0);
	/* One point per octave: windows widen to 3 points; 2048 has only 4096 and 8192 after it, then 16384. */
	for (size_t i = 0; i < 17; i++)
		sparse[i] = (struct knee_point){ .x = exp2((double)i), .median = two_step(exp2((double)i)) };
	CHECK(knees_detect(sparse, 17, k, MAX_KNEES, &nk) == 0 && nk == 2 && k[0].x_before == 64 &&
		      k[1].x_before == 2048,
	      "sparse: knees at 64 and 2048, got %zu", nk);
	CHECK(knees_detect(sparse, 14, k, MAX_KNEES, &nk) == 0 && nk == 1, "sparse to 8192: 2048 not persistent");
	/* Six points: three below, three above is the least that makes a knee. */
	for (size_t i = 0; i < 6; i++)
		few[i] = (struct knee_point){ .x = (double)(i + 1), .median = i < 3 ? 1.2 : 3.0 };
	CHECK(knees_detect(few, 6, k, MAX_KNEES, &nk) == 0 && nk == 1 && k[0].x_before == 3, "six points: one knee");
	CHECK(knees_detect(few + 1, 5, k, MAX_KNEES, &nk) == 0 && nk == 0, "five points: none");
}

/*
 * Small steps on a clean curve, where the noise is only the 0.5 % floor: a
 * rise under 10 % of the lower level is not a knee, however clean.
 */
static void test_small_steps(void)
{
	static const struct {
		int line;
		double rise;	/* relative to 1.2 ns, at 64 pages */
		size_t n_knees;
	} rows[] = {
		{ __LINE__, 0.05, 0 },
		{ __LINE__, 0.09, 0 },
		{ __LINE__, 0.11, 1 },
		{ __LINE__, 0.50, 1 },
	};

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct knee_point p[MAX_GRID];
		size_t n = clean_curve(GRID_KNOWN, flat, p), nk = 99;
		struct knee k[MAX_KNEES];

		for (size_t i = 0; i < n; i++)
			p[i].median *= p[i].x > 64 ? 1 + rows[r].rise : 1;
		CHECK_ROW(rows[r].line, knees_detect(p, n, k, MAX_KNEES, &nk) == 0 && nk == rows[r].n_knees &&
				   (!nk || k[0].x_before == 64),
			  "rise %g: %zu knees", rows[r].rise, nk);
	}
}

/*
 * Measured: tlbprof --workload tlbsize --pages 4k on a 2-vCPU cloud VM,
 * Intel Xeon family 6 model 207 (Emerald Rapids, Raptor Cove cores: L1D
 * 48 KiB 12-way, L2 2 MiB; CPUID TLB leaves zeroed by the hypervisor), no
 * PMU, 5 samples per point: {pages, median ns, MAD ns}. Colored to 65536
 * pages, aligned (--layout aligned) to 8192.
 */
static const struct knee_point emr_colored[] = {
	{ 1, 2.019, 0.0196 }, { 2, 1.976, 0.00963 }, { 3, 1.954, 0.0557 }, { 4, 2.144, 0.0389 },
	{ 5, 2.052, 0.00724 }, { 6, 1.956, 0.00333 }, { 7, 1.975, 0.0126 }, { 8, 1.965, 0.0156 },
	{ 9, 2.006, 0.0318 }, { 10, 1.922, 0.0224 }, { 11, 1.892, 0.00215 }, { 13, 1.924, 0.0365 },
	{ 14, 2.024, 0.0212 }, { 16, 1.958, 0.00122 }, { 18, 1.897, 0.00266 }, { 20, 1.938, 0.0322 },
	{ 23, 2.023, 0.0584 }, { 25, 2.073, 0.00332 }, { 29, 1.883, 0.000405 }, { 32, 1.891, 0.00456 },
	{ 36, 1.984, 0.00868 }, { 40, 1.981, 0.0228 }, { 45, 2.082, 0.0253 }, { 51, 1.997, 0.0148 },
	{ 57, 2.054, 0.00713 }, { 64, 2.304, 0.039 }, { 72, 2.233, 0.0411 }, { 81, 2.779, 0.00572 },
	{ 91, 3.398, 0.0343 }, { 102, 3.988, 0.116 }, { 114, 4.672, 0.0217 }, { 128, 4.418, 0.0176 },
	{ 144, 4.514, 0.0573 }, { 161, 4.528, 0.0226 }, { 181, 4.575, 0.00958 }, { 203, 4.62, 0.0159 },
	{ 228, 4.731, 0.0156 }, { 256, 4.593, 0.066 }, { 287, 4.658, 0.0295 }, { 323, 4.859, 0.0334 },
	{ 362, 4.812, 0.014 }, { 406, 4.877, 0.0364 }, { 456, 4.903, 0.0248 }, { 512, 5.527, 0.017 },
	{ 575, 5.143, 0.161 }, { 645, 7.132, 0.0484 }, { 724, 8.336, 0.0391 }, { 813, 8.645, 0.155 },
	{ 912, 8.792, 0.138 }, { 1024, 8.591, 0.00362 }, { 1149, 8.76, 0.0172 }, { 1290, 9.911, 0.0359 },
	{ 1448, 9.35, 0.223 }, { 1625, 12.61, 0.161 }, { 1825, 12.87, 1.1 }, { 2048, 17.98, 2.26 },
	{ 2299, 20.34, 0.407 }, { 2580, 25.08, 0.198 }, { 2896, 23.41, 0.0991 }, { 3251, 25.8, 0.369 },
	{ 3649, 25.92, 0.0866 }, { 4096, 26.01, 0.173 }, { 4598, 24.08, 0.14 }, { 5161, 27.25, 0.134 },
	{ 5793, 26.65, 0.796 }, { 6502, 26.81, 0.168 }, { 7298, 26.22, 0.31 }, { 8192, 29.96, 1.97 },
	{ 9195, 30.26, 0.264 }, { 10321, 28.25, 0.03 }, { 11585, 33.12, 3.23 }, { 13004, 31.99, 0.496 },
	{ 14596, 31.34, 0.335 }, { 16384, 38.71, 6.56 }, { 18390, 39.68, 0.107 }, { 20643, 47.62, 1.1 },
	{ 23170, 73.06, 1.73 }, { 26008, 71.09, 1.79 }, { 29193, 75.19, 1.4 }, { 32768, 70.84, 1.21 },
	{ 36781, 73.02, 1.97 }, { 41285, 76.85, 0.593 }, { 46341, 103.8, 0.729 }, { 52016, 78.57, 0.138 },
	{ 58386, 85.11, 0.646 }, { 65536, 96.99, 1.8 },
};

static const struct knee_point emr_aligned[] = {
	{ 1, 1.987, 0.0291 }, { 2, 1.96, 0.00374 }, { 3, 1.98, 0.012 }, { 4, 1.97, 0.00332 }, { 5, 2.104, 0.0465 },
	{ 6, 2.069, 0.0902 }, { 7, 1.963, 0.00751 }, { 8, 1.98, 0.0279 }, { 9, 1.985, 0.0228 }, { 10, 2.011, 0.018 },
	{ 11, 2.073, 0.0144 }, { 13, 5.939, 0.195 }, { 14, 4.467, 0.155 }, { 16, 6.636, 0.0366 },
	{ 18, 6.68, 0.0328 }, { 20, 6.481, 0.123 }, { 23, 6.442, 0.24 }, { 25, 6.464, 0.295 }, { 29, 6.402, 0.102 },
	{ 32, 6.65, 0.119 }, { 36, 6.561, 0.108 }, { 40, 6.728, 0.114 }, { 45, 6.443, 0.0898 }, { 51, 7.005, 0.148 },
	{ 57, 6.546, 0.272 }, { 64, 6.965, 0.0639 }, { 72, 7.08, 0.263 }, { 81, 6.643, 0.321 }, { 91, 7.833, 0.277 },
	{ 102, 8.506, 0.235 }, { 114, 9.476, 0.0629 }, { 128, 8.958, 0.0369 }, { 144, 9.004, 0.0887 },
	{ 161, 8.945, 0.222 }, { 181, 9.195, 0.097 }, { 203, 9.24, 0.0531 }, { 228, 9.356, 0.0388 },
	{ 256, 9.454, 0.0361 }, { 287, 10.35, 0.409 }, { 323, 10.45, 0.416 }, { 362, 13.34, 0.644 },
	{ 406, 14.33, 0.234 }, { 456, 17.42, 0.281 }, { 512, 21.39, 0.261 }, { 575, 27.49, 0.81 },
	{ 645, 33.7, 0.385 }, { 724, 40.66, 1.09 }, { 813, 42.82, 0.2 }, { 912, 47.01, 0.22 },
	{ 1024, 47.56, 0.787 }, { 1149, 49.94, 0.998 }, { 1290, 47.65, 1.21 }, { 1448, 69.53, 3.59 },
	{ 1625, 53.14, 1.7 }, { 1825, 55.16, 0.631 }, { 2048, 57.97, 1.17 }, { 2299, 69.97, 6.68 },
	{ 2580, 62.82, 0.102 }, { 2896, 68.99, 7.69 }, { 3251, 81.77, 17.2 }, { 3649, 63.32, 1.3 },
	{ 4096, 61.3, 0.448 }, { 4598, 62.28, 0.279 }, { 5161, 65.81, 1.58 }, { 5793, 86.09, 3.9 },
	{ 6502, 64.7, 1.02 }, { 7298, 67.59, 1.38 }, { 8192, 63.98, 0.642 },
};

/*
 * On the measured curves: the colored one rises first at 64-72 pages (the
 * L1 dTLB), then near 512 (its colored lines leave the L1D), 1448 (the
 * 2048-entry STLB, set conflicts start the rise early) and 14596 (the lines
 * and page-table entries leave L2): four knees, none before 57 pages. The
 * aligned one steps first after 11 pages: all lines share one L1D set of 12
 * ways (the aliasing that --layout colored exists to avoid).
 */
static void test_measured(void)
{
	struct knee k[MAX_KNEES];
	size_t nk = 99;

	CHECK(knees_detect(emr_colored, sizeof(emr_colored) / sizeof(emr_colored[0]), k, MAX_KNEES, &nk) == 0 &&
		      nk == 4,
	      "colored: 4 knees, got %zu", nk);
	if (nk == 4) {
		CHECK(k[0].x_before >= 57 && k[0].x_before <= 81, "colored: L1 dTLB at %g", k[0].x_before);
		CHECK(k[1].x_before >= 406 && k[1].x_before <= 645, "colored: L1D at %g", k[1].x_before);
		CHECK(k[2].x_before >= 1290 && k[2].x_before <= 2048, "colored: STLB at %g", k[2].x_before);
		CHECK(k[3].x_before >= 11585 && k[3].x_before <= 32768, "colored: L2 at %g", k[3].x_before);
	}
	nk = 99;
	CHECK(knees_detect(emr_aligned, sizeof(emr_aligned) / sizeof(emr_aligned[0]), k, MAX_KNEES, &nk) == 0 &&
		      nk >= 1 && k[0].x_before == 11 && k[0].x_after == 13,
	      "aligned: first knee after 11 pages, got %zu (%g)", nk, nk ? k[0].x_before : 0);
}

/*
 * Measured on the development VM (Ice Lake-SP, Sunny Cove, KVM: tests/data/
 * tlbsize/vm-icx-run1.json), medians and MADs of 5 repetitions: the 64-entry
 * L1 dTLB ramps from 32 to 81 pages (2.0, 2.7, 3.0, 2.4, 2.7, 3.0 on the
 * way), a rise no single gap passes. Before ramps, this curve had no knee
 * below 575 pages.  Its L2 rises in two, with a level between.
 */
static const struct knee_point icx_run1[] = {
	{ 1, 1.733, 0.0302 }, { 2, 1.814, 0.0128 }, { 3, 1.812, 0.0101 }, { 4, 1.879, 0.043 }, { 5, 1.84, 0.037 },
	{ 6, 1.755, 0.00953 }, { 7, 1.78, 0.0164 }, { 8, 1.721, 0.0285 }, { 9, 1.824, 0.0101 },
	{ 10, 1.773, 0.00859 }, { 11, 1.737, 0.0473 }, { 13, 1.691, 0.00322 }, { 14, 1.763, 0.0161 },
	{ 16, 1.952, 0.0331 }, { 18, 1.81, 0.0467 }, { 20, 1.714, 0.00226 }, { 23, 1.944, 0.17 },
	{ 25, 1.888, 0.0767 }, { 29, 1.872, 0.0287 }, { 32, 1.86, 0.0249 }, { 36, 2.46, 0.0666 },
	{ 40, 2.049, 0.012 }, { 45, 2.74, 0.0605 }, { 51, 3.017, 0.0706 }, { 57, 2.429, 0.0191 },
	{ 64, 2.696, 0.0415 }, { 72, 2.96, 0.0301 }, { 81, 4.163, 0.0864 }, { 91, 4.031, 0.012 },
	{ 102, 4.469, 0.119 }, { 114, 4.765, 0.206 }, { 128, 4.397, 0.0652 }, { 144, 4.057, 0.051 },
	{ 161, 4.311, 0.0631 }, { 181, 4.203, 0.0968 }, { 203, 4.247, 0.0252 }, { 228, 4.514, 0.0256 },
	{ 256, 4.371, 0.0245 }, { 287, 4.11, 0.0194 }, { 323, 4.748, 0.0828 }, { 362, 4.125, 0.00139 },
	{ 406, 4.567, 0.22 }, { 456, 4.182, 0.0919 }, { 512, 4.55, 0.13 }, { 575, 4.926, 0.168 },
	{ 645, 5.369, 0.0845 }, { 724, 7.677, 0.142 }, { 813, 6.918, 0.0465 }, { 912, 7.178, 0.0421 },
	{ 1024, 7.71, 0.122 }, { 1149, 7.457, 0.0407 }, { 1290, 8.056, 0.339 }, { 1448, 7.794, 0.0752 },
	{ 1625, 8.718, 0.136 }, { 1825, 13.44, 0.781 }, { 2048, 14.28, 0.181 }, { 2299, 18.79, 0.194 },
	{ 2580, 22.75, 0.169 }, { 2896, 20.79, 0.595 }, { 3251, 22.08, 0.195 }, { 3649, 22.61, 0.294 },
	{ 4096, 25.65, 0.834 }, { 4598, 22.13, 0.367 }, { 5161, 25.05, 0.292 }, { 5793, 23.72, 0.481 },
	{ 6502, 24.85, 0.331 }, { 7298, 24.81, 0.404 }, { 8192, 24.75, 0.147 }, { 9195, 28.35, 0.559 },
	{ 10321, 27.38, 0.1 }, { 11585, 32.81, 0.314 }, { 13004, 32.55, 1.21 }, { 14596, 45.76, 0.567 },
	{ 16384, 59.7, 7.05 }, { 18390, 51.42, 1.25 }, { 20643, 52.08, 1.16 }, { 23170, 142.2, 4.14 },
	{ 26008, 155.2, 4.86 }, { 29193, 176.2, 1.91 }, { 32768, 163.6, 1.06 }, { 36781, 170.6, 0.65 },
	{ 41285, 180.2, 3.1 }, { 46341, 195.9, 0.384 }, { 52016, 256.2, 22.6 }, { 58386, 208.5, 1.83 },
	{ 65536, 262.3, 14.1 },
};

static void test_measured_ramp(void)
{
	struct knee k[MAX_KNEES];
	size_t nk = 99, n = sizeof(icx_run1) / sizeof(icx_run1[0]);

	CHECK(knees_detect(icx_run1, n, k, MAX_KNEES, &nk) == 0 && nk == 5, "ICX: 5 knees, got %zu", nk);
	if (nk != 5)
		return;
	CHECK(k[0].ramp && k[0].x_before <= 64 && k[0].x_after >= 64 && k[0].x_after <= 81,
	      "ICX: the L1 dTLB ramp spans 64, got %s %g..%g", k[0].ramp ? "ramp" : "step", k[0].x_before, k[0].x_after);
	CHECK(!k[1].ramp && k[1].x_before >= 575 && k[1].x_after <= 724, "ICX: L1D step at %g..%g", k[1].x_before,
	      k[1].x_after);
	CHECK(k[2].x_before <= 2048 && k[2].x_after >= 2048 && k[2].x_before >= 1448, "ICX: STLB %g..%g",
	      k[2].x_before, k[2].x_after);
	/* The L2 rises in two: to a level near 52 ns at 14596..20643 pages, then past 140 ns. */
	CHECK(k[3].x_before >= 11585 && k[3].x_after <= 16384, "ICX: L2 at %g..%g", k[3].x_before, k[3].x_after);
	CHECK(k[4].x_before >= 18390 && k[4].x_after <= 26008 && k[4].after_ns > 140, "ICX: past L2 at %g..%g, %g ns",
	      k[4].x_before, k[4].x_after, k[4].after_ns);
	/* Each knee's level before is the previous knee's level after, within noise: one staircase. */
	for (size_t i = 1; i < nk; i++)
		CHECK(fabs(k[i].before_ns - k[i - 1].after_ns) <= 0.2 * k[i].before_ns, "ICX: knee %zu starts at %g, "
		      "knee %zu ended at %g", i, k[i].before_ns, i - 1, k[i - 1].after_ns);
}

/*
 * The same VM on the grid dense around the documented capacities
 * (tests/data/tlbsize/vm-icx-run6.json): the L1D fills at 724..861 pages
 * (3.8 -> 6.7 ns) and the STLB rises from 1722 on. Every gap from 724 to
 * 2560 passes as one run; it is two knees, with the level between.
 */
static const struct knee_point icx_run6[] = {
	{ 1, 1.525, 0.00132 }, { 2, 1.577, 0.00599 }, { 3, 1.571, 0.0515 }, { 4, 1.586, 0.0379 },
	{ 5, 1.519, 0.00024 }, { 6, 1.53, 0.00635 }, { 7, 1.519, 6e-05 }, { 8, 1.519, 0.000255 },
	{ 10, 1.561, 0.0153 }, { 11, 1.565, 0.0169 }, { 13, 1.581, 0.00763 }, { 16, 1.519, 0.000215 },
	{ 19, 1.547, 0.0185 }, { 23, 1.567, 0.0476 }, { 27, 1.665, 0.029 }, { 32, 1.519, 0.0003 },
	{ 38, 1.519, 8e-05 }, { 45, 1.519, 0.00021 }, { 48, 1.728, 0.135 }, { 54, 1.935, 0.149 },
	{ 56, 1.52, 7.5e-05 }, { 60, 2.441, 0.157 }, { 64, 1.561, 0.0412 }, { 68, 2.171, 0.0263 },
	{ 72, 2.763, 0.0499 }, { 76, 3.576, 0.134 }, { 80, 3.684, 0.00294 }, { 91, 3.688, 0.0179 },
	{ 96, 3.848, 0.0418 }, { 108, 3.795, 0.0212 }, { 128, 3.693, 0.0231 }, { 152, 3.705, 0.0174 },
	{ 181, 3.7, 0.0172 }, { 215, 3.695, 0.0168 }, { 256, 3.678, 0.0326 }, { 304, 3.954, 0.14 },
	{ 362, 3.737, 0.034 }, { 431, 4.066, 0.267 }, { 512, 3.852, 0.0705 }, { 609, 3.736, 0.0471 },
	{ 724, 3.813, 0.071 }, { 861, 6.859, 0.15 }, { 1024, 6.476, 0.059 }, { 1218, 6.453, 0.0464 },
	{ 1448, 7.152, 0.448 }, { 1536, 6.741, 0.112 }, { 1722, 8.486, 0.22 }, { 1792, 9.133, 0.348 },
	{ 1920, 10.67, 0.11 }, { 2048, 14.42, 0.781 }, { 2176, 14.49, 0.259 }, { 2304, 15.54, 0.138 },
	{ 2435, 16.62, 0.315 }, { 2560, 19.07, 0.273 }, { 2896, 19.08, 0.0107 }, { 3072, 20.49, 0.439 },
	{ 3444, 20.61, 0.855 }, { 4096, 19.82, 0.167 }, { 4871, 20.19, 0.0472 }, { 5793, 20.19, 0.176 },
	{ 6889, 22.58, 1.43 }, { 8192, 21.65, 0.624 },
};

static void test_measured_close(void)
{
	struct knee k[MAX_KNEES];
	size_t nk = 99, n = sizeof(icx_run6) / sizeof(icx_run6[0]);

	CHECK(knees_detect(icx_run6, n, k, MAX_KNEES, &nk) == 0 && nk == 3, "ICX run 6: 3 knees, got %zu", nk);
	if (nk != 3)
		return;
	CHECK(k[0].x_before <= 64 && k[0].x_after >= 64, "ICX run 6: L1 dTLB %g..%g", k[0].x_before, k[0].x_after);
	CHECK(k[1].x_before == 724 && k[1].x_after == 861 && k[1].after_ns < 8, "ICX run 6: L1D %g..%g -> %g ns",
	      k[1].x_before, k[1].x_after, k[1].after_ns);
	CHECK(k[2].x_before >= 1448 && k[2].x_after * 1.25 >= 2048 && k[2].before_ns < 8, "ICX run 6: STLB %g..%g from %g ns",
	      k[2].x_before, k[2].x_after, k[2].before_ns);
}

/* Latency that falls is not a knee: knees are rises only. */
static void test_drop(void)
{
	struct knee_point p[MAX_GRID];
	size_t n = clean_curve(GRID_KNOWN, two_step, p), nk = 99;

	for (size_t i = 0; i < n; i++)
		p[i].median = 40 - p[i].median;
	CHECK(knees_detect(p, n, NULL, 0, &nk) == 0 && nk == 0, "a falling curve has no knee, got %zu", nk);
}

/* A short out: the first knees are written, *n_out tells how many there were. */
static void test_truncate(void)
{
	struct knee_point p[MAX_GRID];
	size_t n = clean_curve(GRID_KNOWN, two_step, p), nk = 99;
	struct knee k[2] = { [1] = { .x_before = -1 } };

	CHECK(knees_detect(p, n, k, 1, &nk) == 0 && nk == 2, "found 2, got %zu", nk);
	CHECK(k[0].x_before == 64 && k[1].x_before == -1, "wrote the first only");
	nk = 99;
	CHECK(knees_detect(p, n, NULL, 0, &nk) == 0 && nk == 2, "count only: 2, got %zu", nk);
}

/* Bad input: -EINVAL and *n_out 0; an empty curve is fine. */
enum bad_what { BAD_NONE, BAD_PTS_NULL, BAD_OUT_NULL, BAD_X_EQUAL, BAD_X_DOWN, BAD_X_ZERO, BAD_X_NAN,
		BAD_MEDIAN_INF, BAD_SPREAD_NEG, BAD_SPREAD_NAN };

static const struct bad_case {
	int line;
	enum bad_what what;
	size_t at;	/* the point that is made bad */
	int ret;
} bad_cases[] = {
	{ __LINE__, BAD_NONE, 0, 0 },
	{ __LINE__, BAD_PTS_NULL, 0, -EINVAL },
	{ __LINE__, BAD_OUT_NULL, 0, -EINVAL },
	{ __LINE__, BAD_X_EQUAL, 20, -EINVAL },
	{ __LINE__, BAD_X_DOWN, 20, -EINVAL },
	{ __LINE__, BAD_X_DOWN, 1, -EINVAL },
	{ __LINE__, BAD_X_ZERO, 0, -EINVAL },
	{ __LINE__, BAD_X_NAN, 5, -EINVAL },
	{ __LINE__, BAD_MEDIAN_INF, 30, -EINVAL },
	{ __LINE__, BAD_SPREAD_NEG, 7, -EINVAL },
	{ __LINE__, BAD_SPREAD_NAN, 0, -EINVAL },
};

static void test_bad_input(void)
{
	for (size_t c = 0; c < sizeof(bad_cases) / sizeof(bad_cases[0]); c++) {
		const struct bad_case *t = &bad_cases[c];
		struct knee_point p[MAX_GRID];
		size_t n = clean_curve(GRID_KNOWN, two_step, p), nk = 99;
		struct knee k[MAX_KNEES], *out = k;
		const struct knee_point *in = p;

		switch (t->what) {
		case BAD_NONE:
			break;
		case BAD_PTS_NULL:
			in = NULL;
			break;
		case BAD_OUT_NULL:
			out = NULL;
			break;
		case BAD_X_EQUAL:
			p[t->at].x = p[t->at - 1].x;
			break;
		case BAD_X_DOWN:
			p[t->at].x = p[t->at - 1].x / 2;
			break;
		case BAD_X_ZERO:
			p[t->at].x = 0;
			break;
		case BAD_X_NAN:
			p[t->at].x = NAN;
			break;
		case BAD_MEDIAN_INF:
			p[t->at].median = INFINITY;
			break;
		case BAD_SPREAD_NEG:
			p[t->at].spread = -0.01;
			break;
		case BAD_SPREAD_NAN:
			p[t->at].spread = NAN;
			break;
		}
		int ret = knees_detect(in, n, out, MAX_KNEES, &nk);
		CHECK_ROW(t->line, ret == t->ret && (ret == 0 ? nk == 2 : nk == 0), "case %d: returned %d, %zu knees",
			  (int)t->what, ret, nk);
	}
	size_t nk = 99;
	CHECK(knees_detect(NULL, 0, NULL, 0, &nk) == 0 && nk == 0, "empty curve: no knees");
	CHECK(knees_detect(NULL, 0, NULL, 0, NULL) == -EINVAL, "n_out NULL");
}

int main(void)
{
	test_curves();
	test_levels_clean();
	test_levels_noisy();
	test_spikes();
	test_end_step();
	test_grids();
	test_small_steps();
	test_measured();
	test_measured_ramp();
	test_measured_close();
	test_drop();
	test_truncate();
	test_bad_input();
	return check_finish();
}
