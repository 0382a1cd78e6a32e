/* SPDX-License-Identifier: MIT */
/* The verdict rules of a comparison: judging two sample sets (or a ratio of four), and settling what counts. */
#include "judge/compare.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "stats.h"
#include "judge/compare_internal.h"

/* median(b) / median(a). */
static double stat_ratio(const double *m)
{
	return m[0] > 0 ? m[1] / m[0] : NAN;
}

/* (new x / new y) / (old x / old y), medians of {old x, old y, new x, new y}. */
static double stat_ratio_of_ratios(const double *m)
{
	return m[0] > 0 && m[1] > 0 && m[3] > 0 ? (m[2] / m[3]) / (m[0] / m[1]) : NAN;
}

int compare_bootstrap_ratio(const struct stats_set *a, const struct stats_set *b, double alpha, uint64_t seed,
			    double *lo, double *hi, double *p_value)
{
	const struct stats_set sets[] = { *a, *b };

	return stats_bootstrap(sets, 2, stat_ratio, alpha, seed, COMPARE_BOOTSTRAP_RESAMPLES, lo, hi, p_value);
}

/* ---- verdicts ---- */

static const char *const verdict_names[] = {
	[COMPARE_INSUFFICIENT] = "insufficient_samples",
	[COMPARE_NO_CHANGE] = "no_change",
	[COMPARE_NOISE] = "noise",
	[COMPARE_BETTER_SMALL] = "better_within_threshold",
	[COMPARE_WORSE_SMALL] = "worse_within_threshold",
	[COMPARE_BETTER] = "better",
	[COMPARE_REGRESSION] = "regression",
	[COMPARE_NOT_COMPARABLE] = "not_comparable",
	[COMPARE_MACHINE_SLOWER] = "machine_slower",
	[COMPARE_MACHINE_FASTER] = "machine_faster",
	[COMPARE_SMALLER_UNCOUNTED] = "smaller_no_phase_slower",
	[COMPARE_TOO_FEW_RUNS] = "too_few_runs",
};

const char *compare_verdict_name(enum compare_verdict v)
{
	return (unsigned)v < sizeof(verdict_names) / sizeof(verdict_names[0]) ? verdict_names[v] : "?";
}

const char *compare_verdict_label(enum compare_verdict v, bool higher_is_better)
{
	switch (v) {
	case COMPARE_INSUFFICIENT:
		return "insufficient samples";
	case COMPARE_NO_CHANGE:
		return "no significant change";
	case COMPARE_NOISE:
		return "within noise";
	case COMPARE_BETTER_SMALL:
		return higher_is_better ? "larger, within threshold" : "faster, within threshold";
	case COMPARE_WORSE_SMALL:
		return higher_is_better ? "smaller, within threshold" : "slower, within threshold";
	case COMPARE_BETTER:
		return higher_is_better ? "larger" : "faster";
	case COMPARE_REGRESSION:
		return higher_is_better ? "smaller (regression)" : "slower (regression)";
	case COMPARE_NOT_COMPARABLE:
		return "not comparable";
	case COMPARE_MACHINE_SLOWER:
		return "slower with its control (the machine)";
	case COMPARE_MACHINE_FASTER:
		return "faster with its control (the machine)";
	case COMPARE_SMALLER_UNCOUNTED:
		return "smaller, no phase slower (informational)";
	case COMPARE_TOO_FEW_RUNS:
		return "could not tell: too few runs";
	}
	return "?";
}

bool compare_verdict_judged(enum compare_verdict v)
{
	return v != COMPARE_INSUFFICIENT && v != COMPARE_NOT_COMPARABLE && v != COMPARE_TOO_FEW_RUNS;
}

/* compare_judge() once there are enough samples (or runs) on each side. */
static enum compare_verdict judge_change(double change, double p, double lo, double hi, double floor,
					 double threshold, bool higher_is_better)
{
	if (!isfinite(change) || isnan(p))
		return COMPARE_NOT_COMPARABLE;
	/* The rank test alone never decides: the interval must exclude 1 and the change exceed the floor. */
	bool interval_excludes_one = isfinite(lo) && isfinite(hi) && (lo > 1 || hi < 1);
	bool above_floor = !(fabs(change) <= (isfinite(floor) ? floor : 0));
	bool significant = p < COMPARE_ALPHA && interval_excludes_one && above_floor;
	bool beyond = fabs(change) - threshold > COMPARE_THRESHOLD_TOLERANCE;
	bool worse = higher_is_better ? change < 0 : change > 0;
	if (significant && change == 0)
		return COMPARE_NO_CHANGE;	/* the shapes differ, the medians do not */
	if (significant && beyond)
		return worse ? COMPARE_REGRESSION : COMPARE_BETTER;
	if (significant)
		return worse ? COMPARE_WORSE_SMALL : COMPARE_BETTER_SMALL;
	return beyond ? COMPARE_NOISE : COMPARE_NO_CHANGE;
}

enum compare_verdict compare_judge(double change, double p, double lo, double hi, double floor, size_t n_base,
				   size_t n_new, double threshold, bool higher_is_better)
{
	if (!n_base || !n_new)
		return COMPARE_NOT_COMPARABLE;
	if (n_base < COMPARE_MIN_SAMPLES || n_new < COMPARE_MIN_SAMPLES)
		return COMPARE_INSUFFICIENT;
	return judge_change(change, p, lo, hi, floor, threshold, higher_is_better);
}

/* ---- Student's t, for the test between runs ---- */

/*
 * The continued fraction of the regularized incomplete beta function
 * I_x(a, b) (its even and odd steps, evaluated by the modified Lentz
 * method), which converges fast for x < (a + 1) / (a + b + 2).
 */
static double beta_fraction(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	d = 1 / (fabs(d) < tiny ? tiny : d);
	h = d;
	for (int m = 1; m <= 300; m++) {
		for (int odd = 0; odd < 2; odd++) {
			double num = odd ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
					 : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
			d = 1 + num * d;
			d = 1 / (fabs(d) < tiny ? tiny : d);
			c = 1 + num / c;
			c = fabs(c) < tiny ? tiny : c;
			h *= c * d;
			if (odd && fabs(c * d - 1) < 1e-15)
				return h;
		}
	}
	return h;
}

/* I_x(a, b), 0 <= x <= 1, a, b > 0. */
static double incomplete_beta(double a, double b, double x)
{
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	/* The fraction converges on one side of the mean; the symmetry I_x(a, b) = 1 - I_1-x(b, a) gives the other. */
	if (x < (a + 1) / (a + b + 2))
		return front * beta_fraction(a, b, x) / a;
	return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double compare_t_p_value(double t, double df)
{
	if (!(df > 0) || isnan(t))
		return NAN;
	if (isinf(t))
		return 0;
	/* P(|T| >= |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2). */
	return incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

double compare_t_quantile(double p, double df)
{
	if (!(df > 0) || !(p > 0 && p < 1))
		return NAN;
	/* The p-value falls as |t| grows; bisect x = df / (df + t^2) in (0, 1), where it is I_x(df / 2, 1 / 2). */
	double lo = 0, hi = 1;
	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;
		if (incomplete_beta(df / 2, 0.5, mid) < p)
			lo = mid;
		else
			hi = mid;
	}
	double x = (lo + hi) / 2;
	return sqrt(df * (1 - x) / x);
}

/* ---- judging between runs ---- */

/* The values of one side's runs that can be judged (finite, above 0). */
struct run_values {
	size_t n;
	double mean, var;	/* of their logarithms; var the sample variance (n - 1), NAN below 2 */
	double spread;		/* (max - min) / median of the values, as between a run's own allocations */
};

/* v[0..n-1] (at most COMPARE_MAX_RUNS are read) summed up; scratch has room for COMPARE_MAX_RUNS. */
static struct run_values run_values(const double *v, size_t n, double *scratch)
{
	struct run_values r = { .mean = NAN, .var = NAN, .spread = NAN };
	double sum = 0, ss = 0;

	for (size_t i = 0; i < n && i < COMPARE_MAX_RUNS; i++) {
		if (v[i] > 0 && isfinite(v[i])) {
			scratch[r.n++] = v[i];
			sum += log(v[i]);
		}
	}
	if (!r.n)
		return r;
	r.mean = sum / (double)r.n;
	for (size_t i = 0; i < r.n; i++)
		ss += (log(scratch[i]) - r.mean) * (log(scratch[i]) - r.mean);
	if (r.n > 1)
		r.var = ss / (double)(r.n - 1);
	stats_sort(scratch, r.n);
	r.spread = (scratch[r.n - 1] - scratch[0]) / stats_median_sorted(scratch, r.n);
	return r;
}

void compare_between_runs(const double *base, size_t nb, const double *new, size_t nn, double threshold,
			  bool higher_is_better, struct compare_samples *out)
{
	double sb[COMPARE_MAX_RUNS], sn[COMPARE_MAX_RUNS];
	size_t samples_base = out->n_base, samples_new = out->n_new;
	struct run_values b = run_values(base, nb, sb), n = run_values(new, nn, sn);

	compare_samples_clear(out);
	out->n_base = samples_base;
	out->n_new = samples_new;
	out->runs_base = b.n;
	out->runs_new = n.n;
	out->run_spread_base = b.spread;
	out->run_spread_new = n.spread;
	out->base = exp(b.mean);
	out->new = exp(n.mean);
	if (!b.n || !n.n)
		return;		/* COMPARE_NOT_COMPARABLE */
	out->change = exp(n.mean - b.mean) - 1;
	double d = n.mean - b.mean, vb = b.var / (double)b.n, vn = n.var / (double)n.n, se2 = vb + vn;
	/*
	 * Fewer than two runs a side leave that side without a variance; runs
	 * that are all alike on both sides (copies of one report) leave the test
	 * without one: either way, there is nothing to judge the change against.
	 */
	if (b.n < COMPARE_MIN_RUNS || n.n < COMPARE_MIN_RUNS || !(se2 > 0)) {
		out->verdict = COMPARE_TOO_FEW_RUNS;
		return;
	}
	/* Welch: each side's own variance, and the Welch-Satterthwaite degrees of freedom. */
	out->test = "welch_t_runs";
	out->df = se2 * se2 / (vb * vb / (double)(b.n - 1) + vn * vn / (double)(n.n - 1));
	out->t = d / sqrt(se2);
	out->p = compare_t_p_value(out->t, out->df);
	double half = compare_t_quantile(COMPARE_ALPHA, out->df) * sqrt(se2);
	out->ratio_lo = exp(d - half);
	out->ratio_hi = exp(d + half);
	/* No floor: the spread between runs is what the t-test weighs the change against. */
	out->verdict = judge_change(out->change, out->p, out->ratio_lo, out->ratio_hi, NAN, threshold, higher_is_better);
}

/* ---- judging sample sets ---- */

void compare_samples_clear(struct compare_samples *s)
{
	*s = (struct compare_samples){ .base = NAN, .new = NAN, .change = NAN, .ratio_lo = NAN, .ratio_hi = NAN,
				       .p = NAN, .noise_floor = NAN, .verdict = COMPARE_NOT_COMPARABLE,
				       .run_spread_base = NAN, .run_spread_new = NAN, .t = NAN, .df = NAN };
}

/* The cluster count and spread of a set into *k and *spread; *floor becomes the larger spread so far. */
static int floor_of(const struct stats_set *s, size_t *k, double *floor)
{
	double spread;
	int rc = stats_cluster_spread(s, k, &spread);

	if (rc == 0 && (isnan(*floor) || spread > *floor))
		*floor = spread;
	return rc == -ENOMEM ? rc : 0;
}

int compare_samples(const struct stats_set *base, const struct stats_set *new, double threshold,
		    struct compare_samples *out)
{
	struct stats_rank_test mw;
	int rc;

	compare_samples_clear(out);
	out->n_base = base->n;
	out->n_new = new->n;
	out->base = stats_median(base->v, base->n);
	out->new = stats_median(new->v, new->n);
	if (out->base > 0 && isfinite(out->new))
		out->change = out->new / out->base - 1;
	if (base->n >= COMPARE_MIN_SAMPLES && new->n >= COMPARE_MIN_SAMPLES && isfinite(out->change)) {
		rc = stats_mann_whitney(base->v, base->n, new->v, new->n, &mw);
		if (rc == -ENOMEM)
			return rc;
		if (rc == 0) {
			out->p = mw.p;
			out->exact = mw.exact;
			out->test = "mann_whitney_u";
		}
		if ((rc = floor_of(base, &out->clusters_base, &out->noise_floor)) ||
		    (rc = floor_of(new, &out->clusters_new, &out->noise_floor)))
			return rc;
		rc = compare_bootstrap_ratio(base, new, COMPARE_ALPHA, COMPARE_BOOTSTRAP_SEED, &out->ratio_lo,
					     &out->ratio_hi, NULL);
		if (rc == -ENOMEM)
			return rc;
	}
	out->verdict = compare_judge(out->change, out->p, out->ratio_lo, out->ratio_hi, out->noise_floor, out->n_base,
				     out->n_new, threshold, false);
	return 0;
}

int compare_ratio(const struct stats_set sets[4], double threshold, bool higher_is_better,
		  struct compare_samples *out)
{
	double m[4];
	int rc;

	compare_samples_clear(out);
	for (size_t s = 0; s < 4; s++)
		m[s] = stats_median(sets[s].v, sets[s].n);
	/* A ratio rests on the smaller of its two sample sets. */
	out->n_base = sets[0].n < sets[1].n ? sets[0].n : sets[1].n;
	out->n_new = sets[2].n < sets[3].n ? sets[2].n : sets[3].n;
	out->base = m[1] > 0 ? m[0] / m[1] : NAN;
	out->new = m[3] > 0 ? m[2] / m[3] : NAN;
	if (out->base > 0 && isfinite(out->new))
		out->change = out->new / out->base - 1;
	if (out->n_base >= COMPARE_MIN_SAMPLES && out->n_new >= COMPARE_MIN_SAMPLES && isfinite(out->change)) {
		size_t k[4];
		for (size_t s = 0; s < 4; s++)
			if ((rc = floor_of(&sets[s], &k[s], &out->noise_floor)))
				return rc;
		out->clusters_base = k[0] < k[1] ? k[0] : k[1];
		out->clusters_new = k[2] < k[3] ? k[2] : k[3];
		/* The four sets are independent; a ratio of ratios has no rank test, so the bootstrap decides. */
		rc = stats_bootstrap(sets, 4, stat_ratio_of_ratios, COMPARE_ALPHA, COMPARE_BOOTSTRAP_SEED,
				     COMPARE_BOOTSTRAP_RESAMPLES, &out->ratio_lo, &out->ratio_hi, &out->p);
		if (rc == -ENOMEM)
			return rc;
		if (rc == 0)
			out->test = "bootstrap";
	}
	out->verdict = compare_judge(out->change, out->p, out->ratio_lo, out->ratio_hi, out->noise_floor, out->n_base,
				     out->n_new, threshold, higher_is_better);
	return 0;
}

/* ---- what counts ---- */

/*
 * The verdict that counts for a matched phase. A packed control is the
 * machine's reference, so its own move is the machine's. A phase measured
 * against the same control on both sides must be slower (faster) beyond
 * noise and threshold by its own samples, and its change against the
 * control must say the same, to be a regression (an improvement): the
 * control ran next to the phase, so load, clock or a noisy neighbour move
 * both. Where the control's own samples are too noisy to be sure (the change
 * against it is beyond the threshold but not beyond noise), its direction
 * still has to agree. Otherwise the move is the machine's. The price: a
 * regression that a faster machine hides in the phase's own figures is not
 * counted (the change against the control still shows it).
 */
static void phase_verdict(struct compare_phase *cp)
{
	enum compare_verdict v = cp->ns.verdict, vc = cp->vs_control.verdict;

	cp->verdict = v;
	cp->against_control = false;
	cp->control_inconclusive = false;
	if (v != COMPARE_REGRESSION && v != COMPARE_BETTER)
		return;
	if (cp->control) {
		cp->verdict = v == COMPARE_REGRESSION ? COMPARE_MACHINE_SLOWER : COMPARE_MACHINE_FASTER;
		return;
	}
	if (!cp->control_name || !compare_verdict_judged(vc))
		return;
	cp->against_control = true;
	if (vc == v)
		return;
	if (vc == COMPARE_NOISE && (cp->vs_control.change > 0) == (cp->ns.change > 0)) {
		cp->control_inconclusive = true;
		return;
	}
	cp->verdict = v == COMPARE_REGRESSION ? COMPARE_MACHINE_SLOWER : COMPARE_MACHINE_FASTER;
}

/* Whether a matched phase got slower beyond noise by the measure that counts for it (within the threshold or not). */
static bool phase_got_slower(const struct compare_result *r, const char *name)
{
	for (size_t i = 0; i < r->n_phases; i++) {
		const struct compare_phase *cp = &r->phases[i];
		if (cp->match == COMPARE_MATCHED && strcmp(cp->name, name) == 0)
			return cp->verdict == COMPARE_REGRESSION || cp->verdict == COMPARE_WORSE_SMALL;
	}
	return false;
}

void compare_apply_rules(struct compare_result *out)
{
	for (size_t i = 0; i < out->n_phases; i++) {
		struct compare_phase *cp = &out->phases[i];
		phase_verdict(cp);
		if (cp->match != COMPARE_MATCHED)
			continue;
		out->phases_judged += compare_verdict_judged(cp->verdict);
		out->phases_insufficient += cp->verdict == COMPARE_INSUFFICIENT;
		out->phases_params_differ += cp->n_params > 0;
		out->regressions += cp->verdict == COMPARE_REGRESSION;
		out->improvements += cp->verdict == COMPARE_BETTER;
		out->machine_shifts += cp->verdict == COMPARE_MACHINE_SLOWER || cp->verdict == COMPARE_MACHINE_FASTER;
		out->too_few_runs += cp->verdict == COMPARE_TOO_FEW_RUNS;
		out->missing_from_runs += cp->missing_base + cp->missing_new > 0;
	}
	for (size_t i = 0; i < out->n_pairs; i++) {
		struct compare_pair *cp = &out->pairs[i];
		if (cp->match != COMPARE_MATCHED)
			continue;
		/*
		 * A smaller speedup with no phase slower is the baseline getting
		 * faster: the code or machine improved where huge pages help
		 * least. Worth reading, not a reason to fail.
		 */
		if (cp->speedup.verdict == COMPARE_REGRESSION && !phase_got_slower(out, cp->baseline) &&
		    !phase_got_slower(out, cp->variant))
			cp->speedup.verdict = COMPARE_SMALLER_UNCOUNTED;
		out->pairs_judged += compare_verdict_judged(cp->speedup.verdict);
		out->pairs_insufficient += cp->speedup.verdict == COMPARE_INSUFFICIENT;
		out->regressions += cp->speedup.verdict == COMPARE_REGRESSION;
		out->improvements += cp->speedup.verdict == COMPARE_BETTER;
		out->speedups_uncounted += cp->speedup.verdict == COMPARE_SMALLER_UNCOUNTED;
		out->too_few_runs += cp->speedup.verdict == COMPARE_TOO_FEW_RUNS;
		out->missing_from_runs += cp->missing_base + cp->missing_new > 0;
	}
}

bool compare_judged_any(const struct compare_result *r)
{
	return r->phases_judged + r->pairs_judged > 0;
}

bool compare_fails(const struct compare_result *r, enum fail_on fail_on)
{
	switch (fail_on) {
	case FAIL_ON_NEVER:
		return false;
	case FAIL_ON_WARN:
		return r->regressions > 0 || r->checks_worse > 0;
	case FAIL_ON_FAIL:
		return r->regressions > 0 || r->checks_now_failing > 0;
	}
	return false;
}
