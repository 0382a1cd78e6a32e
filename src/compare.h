/* SPDX-License-Identifier: MIT */
/* Pure comparison of two analysed reports: per phase and per page-size comparison, judged from the samples. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "environment.h"
#include "runner.h"
#include "timing.h"

/* A change is significant below this p-value (two-sided); the bootstrap intervals are 1 - alpha. */
#define COMPARE_ALPHA 0.01
/* Fewer samples than this on either side: too few to judge, never a regression. */
#define COMPARE_MIN_SAMPLES 5
/* --threshold default, percent. */
#define COMPARE_DEFAULT_THRESHOLD_PCT 5.0
/* Bootstrap resamples: at alpha 0.01 the interval's ends are the 20th and the 3980th of them. */
#define COMPARE_BOOTSTRAP_RESAMPLES 4000
/* A fixed seed: the same two reports always give the same intervals and verdicts. */
#define COMPARE_BOOTSTRAP_SEED 0x746c6270726f66ull	/* "tlbprof" */
/* The core clocks of the two runs differ when they are this far apart (relative). */
#define COMPARE_CLOCK_TOLERANCE 0.05
#define COMPARE_MAX_ENV_DIFFS 16

/* The result of a Mann-Whitney U (Wilcoxon rank-sum) test of two sample sets a and b. */
struct compare_rank_test {
	double u;		/* U of b: pairs (a_i, b_j) with b_j > a_i, ties counting one half */
	double z;		/* normal approximation (tie- and continuity-corrected); 0 when exact */
	double p;		/* two-sided p-value */
	bool exact;		/* p from the exact distribution of U (small samples, no ties) */
};

/*
 * Mann-Whitney U test of a[0..na-1] against b[0..nb-1] (neither modified).
 * Exact for na + nb <= 40 without ties (the distribution of U from the
 * Gaussian binomial coefficient), else the normal approximation with the tie
 * correction of the variance and a continuity correction. Identical sets give
 * p = 1. Returns 0, -EINVAL when a side is empty or a value is not finite,
 * -ENOMEM.
 */
int compare_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct compare_rank_test *out);

/*
 * Percentile bootstrap interval, at level 1 - alpha, of the ratio of the
 * medians median(b) / median(a): both sets resampled with replacement
 * COMPARE_BOOTSTRAP_RESAMPLES times from a fixed seed, so the interval is the
 * same on every run. *p_value (may be NULL) gets the bootstrap's two-sided
 * p-value of "the ratio is 1". Returns 0, -EINVAL (an empty side, a median
 * that is not above 0) or -ENOMEM.
 */
int compare_bootstrap_ratio(const double *a, size_t na, const double *b, size_t nb, double alpha, uint64_t seed,
			    double *lo, double *hi, double *p_value);

/* What a change means, for a metric where lower is better (ns) or higher is better (speedup). */
enum compare_verdict {
	COMPARE_INSUFFICIENT,		/* fewer than COMPARE_MIN_SAMPLES on a side: not judged */
	COMPARE_NO_CHANGE,		/* not significant, within the threshold */
	COMPARE_NOISE,			/* beyond the threshold, but the samples do not support it */
	COMPARE_BETTER_SMALL,		/* significant, better, within the threshold */
	COMPARE_WORSE_SMALL,		/* significant, worse, within the threshold */
	COMPARE_BETTER,			/* significant and better beyond the threshold */
	COMPARE_REGRESSION,		/* significant and worse beyond the threshold */
	COMPARE_NOT_COMPARABLE,		/* a side did not measure it (failed or skipped phase, no comparison) */
};

/* "insufficient_samples", "no_change", "noise", ..., "regression", "not_comparable" (JSON). */
const char *compare_verdict_name(enum compare_verdict v);
/* For people: "faster", "slower (regression)", ...; higher_is_better picks the words of a speedup. */
const char *compare_verdict_label(enum compare_verdict v, bool higher_is_better);

/*
 * The verdict of a relative change (new / old - 1) with its p-value and the
 * (1 - alpha) interval [lo, hi] of the ratio new / old, on n_base and n_new
 * samples, against threshold (a fraction, 0.05 = 5 %). Significant means
 * p < COMPARE_ALPHA and the interval excludes 1 (lo and hi NAN: no interval,
 * p alone decides): a rank test can call two sets different while the
 * medians' interval still holds "no change", and a verdict must not
 * contradict the interval printed next to it. Beyond means |change| >
 * threshold. Pure; the rule every comparison of this module follows.
 */
enum compare_verdict compare_judge(double change, double p, double lo, double hi, size_t n_base, size_t n_new,
				   double threshold, bool higher_is_better);

/* One metric, old against new, from samples. NAN where a side has no value. */
struct compare_samples {
	size_t n_base, n_new;
	double base, new;		/* medians */
	double change;			/* new / base - 1 */
	double ratio_lo, ratio_hi;	/* the (1 - alpha) bootstrap interval of new / base; NAN when not judged */
	double p;			/* two-sided p-value; NAN when not judged */
	bool exact;			/* p is exact (Mann-Whitney on small samples) */
	const char *test;		/* "mann_whitney_u", "bootstrap", or NULL when not judged */
	enum compare_verdict verdict;
};

/*
 * Compare two sample sets of a metric where lower is better: medians, the
 * change, a Mann-Whitney p-value, the bootstrap interval of the ratio of
 * medians, and the verdict. Returns 0 or -ENOMEM.
 */
int compare_samples(const double *base, size_t n_base, const double *new, size_t n_new, double threshold,
		    struct compare_samples *out);

/*
 * Compare the speedup baseline/variant of the old run (old_b, old_v) with
 * that of the new run (new_b, new_v): the medians' ratios, the change, and
 * the bootstrap p-value and interval of new speedup / old speedup (all four
 * sets resampled). Higher is better. Returns 0 or -ENOMEM.
 */
int compare_speedup(const double *old_b, size_t n_old_b, const double *old_v, size_t n_old_v, const double *new_b,
		    size_t n_new_b, const double *new_v, size_t n_new_v, double threshold, struct compare_samples *out);

/* A counter's rate per access (per page for page faults), old against new; NAN where a side did not count. */
struct compare_rate {
	enum metric metric;
	double base, new;
	double change;		/* new / base - 1; NAN when base is 0 or a side is missing */
};

enum compare_match {
	COMPARE_MATCHED,	/* in both reports */
	COMPARE_REMOVED,	/* only in the base report */
	COMPARE_ADDED,		/* only in the new report */
};
/* "matched", "removed", "added". */
const char *compare_match_name(enum compare_match m);

/* One phase, matched by name. */
struct compare_phase {
	const char *name;		/* borrowed from the reports */
	enum compare_match match;
	size_t base, new;		/* indices into the results; SIZE_MAX on the side that lacks it */
	bool faults;			/* a page-fault phase: the metric is ns per page */
	bool wall;			/* a tlbprof run phase without declared accesses: ns per occurrence */
	struct compare_samples ns;	/* ns per access (per page for page faults, per occurrence for wall) */
	struct compare_samples ns_per_fault;	/* page-fault phases; verdict COMPARE_NOT_COMPARABLE otherwise */
	struct compare_rate rates[METRIC_COUNT];
	size_t n_rates;
};

/* One page-size comparison (baseline vs variant phase), matched by the two names. */
struct compare_pair {
	const char *baseline, *variant;	/* borrowed */
	enum compare_match match;
	size_t base, new;		/* indices into the analyses' comparisons; SIZE_MAX when absent */
	struct compare_samples speedup;	/* base and new are the two speedups */
	double base_delta_ns, new_delta_ns;
	double base_ns_per_tlb_miss, new_ns_per_tlb_miss;	/* NAN without dTLB counts */
	const char *base_method, *new_method;			/* NULL on a side that lacks it */
};

/* One check of the analysis, matched by id. */
struct compare_check {
	const char *id;			/* borrowed */
	enum compare_match match;
	enum check_status base, new;
	bool worse;			/* pass -> warn or fail, warn -> fail */
	const char *base_message, *new_message;	/* borrowed; NULL on a side that lacks it */
};

/* A fact of the environment that differs between the two runs. */
struct compare_env_diff {
	char field[32];			/* "cpu.model_name", "kernel", "thp.enabled", "hugepages.2M", ... */
	char base[192], new[192];
};

/* One side of a comparison; all borrowed. */
struct compare_side {
	const struct run_results *results;
	const struct analysis *analysis;	/* analysis_run() over results */
	const struct environment *env;
	const struct timing_calibration *clock;
	const char *pmu_name;			/* "none" when no PMU */
};

struct compare_result {
	double threshold;		/* fraction */
	struct compare_phase *phases;	/* owned: the base's order, then the added ones */
	size_t n_phases;
	struct compare_pair *pairs;	/* owned */
	size_t n_pairs;
	struct compare_check *checks;	/* owned */
	size_t n_checks;
	struct compare_env_diff env[COMPARE_MAX_ENV_DIFFS];
	size_t n_env;
	size_t regressions;		/* phases and pairs with COMPARE_REGRESSION */
	size_t improvements;		/* ... with COMPARE_BETTER */
	size_t checks_worse;		/* checks that went from pass to warn/fail or from warn to fail */
	size_t checks_now_failing;	/* of those, the ones that are fail now */
};

/*
 * Compare base with new: phases by name (with their samples), page-size
 * comparisons by baseline and variant names, checks by id, the environments
 * field by field. threshold is a fraction (0.05). Pure: no I/O. Returns 0 or
 * -ENOMEM; free with compare_free(). out borrows names from both sides.
 */
int compare_run(const struct compare_side *base, const struct compare_side *new, double threshold,
		struct compare_result *out);
void compare_free(struct compare_result *r);

/*
 * Whether the comparison makes the exit status 1: a regression beyond noise
 * and the threshold, or (fail_on warn) a check that got worse, or (fail_on
 * fail) a check that fails now and did not before. Never with FAIL_ON_NEVER.
 */
bool compare_fails(const struct compare_result *r, enum fail_on fail_on);

/*
 * The environment facts that differ: CPU model, kernel, THP mode and defrag,
 * hypervisor, PMU, core clock (beyond COMPARE_CLOCK_TOLERANCE), hugetlb pool
 * availability per page size. Pure; fills out->env and out->n_env.
 */
void compare_environments(const struct compare_side *base, const struct compare_side *new, struct compare_result *out);
