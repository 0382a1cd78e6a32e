/* SPDX-License-Identifier: MIT */
/*
 * Statistics of sample sets, the one copy every stage uses: sorting,
 * medians, quantiles, the MAD, summaries, Student's t, intervals and the
 * precision of clustered samples, the Mann-Whitney U test and the
 * hierarchical bootstrap. Pure: no I/O, no global state.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Groups (allocations, processes) the precision and the spreads look at, at most (the runner draws 100). */
#define STATS_MAX_GROUPS 256

/* qsort() comparison of two doubles, ascending. */
int stats_cmp_double(const void *a, const void *b);

/* qsort() comparison of two uint64_t, ascending. */
int stats_cmp_u64(const void *a, const void *b);

/* Sort v[0..n-1] ascending in place. */
void stats_sort(double *v, size_t n);

/* The median of sorted s[0..n-1], n > 0 (the mean of the two middle values when n is even). */
double stats_median_sorted(const double *s, size_t n);

/* The median of v[0..n-1], n > 0, reordering v (selection: O(n) on average). */
double stats_median_inplace(double *v, size_t n);

/* The median of v[0..n-1] (not modified); NAN when n is 0 or memory is short. */
double stats_median(const double *v, size_t n);

/* The q-quantile (0..1, clamped) of sorted s[0..n-1], n > 0, interpolating between order statistics. */
double stats_quantile_sorted(const double *s, size_t n, double q);

/* The same of v[0..n-1] (not modified); 0 when n is 0, NAN when memory is short. */
double stats_quantile(const double *v, size_t n, double q);

/* The median absolute deviation of v[0..n-1] around m (not scaled to a sigma); 0 when n is 0. */
double stats_mad(const double *v, size_t n, double m);

/* What a sample set looks like. */
struct stats_summary {
	size_t n;
	double median, min, max, mean;
	double stddev;		/* sample standard deviation (n - 1), 0 when n < 2 */
	double rel_spread;	/* (max - min) / median, 0 when median is 0 */
};

/* Summarise v[0..n-1] (not modified). n == 0 (or no memory) gives all zeros. */
void stats_summarize(const double *v, size_t n, struct stats_summary *out);

/*
 * Relative half-width of the distribution-free 95 % confidence interval of
 * the median of v[0..n-1] (order statistics around n/2 +- 0.98 sqrt(n)),
 * divided by the median. INFINITY when n < 6 (too few for an interval).
 */
double stats_median_ci(const double *v, size_t n);

/* The two-sided 95 % quantile of Student's t with df degrees of freedom (df >= 1; INFINITY for 0). */
double stats_t975(unsigned df);

/*
 * Samples grouped by their tag (the allocation, or the process, each was
 * taken on): group g is v[start[g] .. start[g] + len[g] - 1], its samples in
 * the order taken, groups in tag order. Without tags (NULL) every sample is
 * one group.
 */
struct stats_groups {
	double *v;
	size_t *start, *len;
	size_t n, k;
};

/* Group v[0..n-1] by tag[i] into g. 0, -EINVAL when n is 0, -ENOMEM. Free g with stats_groups_free(). */
int stats_group(const double *v, const unsigned *tag, size_t n, struct stats_groups *g);
void stats_groups_free(struct stats_groups *g);

/*
 * The precision of a median whose samples come from several allocations
 * (alloc[i] tags v[i]; NULL means one): samples of one allocation share its
 * physical placement, so they are not independent and an interval over all
 * of them would claim a precision that a rerun does not repeat. With k >= 2
 * allocations: the 95 % Student t half-width over the k allocation medians,
 * t(k-1) * s / sqrt(k), divided by the median of all samples, and never
 * below stats_median_ci() of all samples. With one allocation: that
 * interval alone. INFINITY when there are too few samples.
 */
double stats_precision(const double *v, const unsigned *alloc, size_t n);

/*
 * The relative 95 % half-width of the median of v[0..n-1] (alloc as in
 * stats_precision()): stats_precision() where it is finite; with too few
 * samples for that (fewer than 6 in one allocation), the normal
 * approximation t(n-1) * 1.2533 * s / sqrt(n) / median (the median's
 * standard error is 1.2533 s / sqrt(n) for normal samples). INFINITY with
 * fewer than 2 samples or a median that is not positive.
 */
double stats_median_halfwidth(const double *v, const unsigned *alloc, size_t n);

/*
 * The host's part of the precision a run can claim for a median m0 it
 * reports, from its second passes: later passes over the same layout at
 * other times of the run (rerun[i] ns per access, pass[i] in 1..k tags it;
 * NULL means one pass). The k pass medians and m0 are k + 1 draws of what
 * moves between runs; s is their standard deviation over m0, with k degrees
 * of freedom, and the part is t(k) * s (Student's t: one pass, k = 1, gives
 * t 12.7, not 1.96, since s from two draws is itself a guess). *rel_sd gets
 * s and *df gets k (either may be NULL). 0 without passes. Pure.
 */
double stats_precision_host(double m0, const double *rerun, const unsigned *pass, size_t n, double *rel_sd,
			    unsigned *df);

/*
 * The precision a run claims for a median: its own relative half-width
 * (within, stats_median_halfwidth()) and the host's part
 * (stats_precision_host()) in quadrature, sqrt(within^2 + host^2). Pure.
 */
double stats_precision_runs(double within, double host);

/* What a phase claims for the median of its samples, and its parts (stats_claim()). */
struct stats_claim {
	double within;		/* stats_median_halfwidth() of the samples, relative */
	double between;		/* (the second passes' median - the median) / the median; 0 without them */
	double host;		/* stats_precision_host(); 0 without second passes */
	unsigned passes;	/* second passes */
	double claimed;		/* stats_precision_runs(within, host) */
};

/*
 * The claim for the median of v[0..n) (alloc as in stats_precision()), with
 * the second passes rerun[0..n_rerun) (pass as in stats_precision_host()):
 * the one computation behind the runner's precision.claimed and the
 * analysis's, so a saved report is judged as the run that made it. Pure.
 */
void stats_claim(const double *v, const unsigned *alloc, size_t n, const double *rerun, const unsigned *pass,
		 size_t n_rerun, struct stats_claim *out);

/* The result of a Mann-Whitney U (Wilcoxon rank-sum) test of two sample sets a and b. */
struct stats_rank_test {
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
int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct stats_rank_test *out);

/*
 * A sample set and where its samples came from. Samples of one cluster (an
 * allocation of a chase phase, a process of a page-fault phase) share what
 * that allocation or process got (physical placement, cache colouring, the
 * state of the machine at the time), so they are not independent draws of
 * the run: the bootstrap resamples clusters first, then samples within them.
 */
struct stats_set {
	const double *v;
	const unsigned *cluster;	/* the cluster of each sample; NULL: one cluster */
	size_t n;
};

/*
 * The clusters of s: how many there are and the spread of their medians,
 * (max - min) / median of the cluster medians (0 with one cluster): how far
 * the run itself moved between its own allocations or processes.
 * Returns 0, -EINVAL (empty) or -ENOMEM.
 */
int stats_cluster_spread(const struct stats_set *s, size_t *n_clusters, double *spread);

/* The most sets one bootstrap statistic takes. */
#define STATS_BOOTSTRAP_MAX_SETS 4

/*
 * Percentile bootstrap of a statistic of the medians of sets[0..k-1]
 * (k <= STATS_BOOTSTRAP_MAX_SETS), each resampled hierarchically: as many
 * clusters as it has, drawn with replacement, then as many samples as each
 * drawn cluster holds from that cluster with replacement (with one cluster
 * this is the ordinary bootstrap), `resamples` times from seed (splitmix64),
 * so the interval is the same on every run. stat(medians) is evaluated on
 * each resample; a resample whose statistic is not finite is left out.
 * Gives the (1 - alpha) percentile interval [*lo, *hi] and, when p_value is
 * not NULL, the two-sided p-value of "the statistic is 1". Returns 0,
 * -EINVAL (an empty set, or the statistic of the sets themselves or of every
 * resample is not finite) or -ENOMEM.
 */
int stats_bootstrap(const struct stats_set *sets, size_t k, double (*stat)(const double *medians), double alpha,
		    uint64_t seed, size_t resamples, double *lo, double *hi, double *p_value);

/* splitmix64: the next value of a small, fast generator whose sequence depends on the seed alone. */
uint64_t stats_random(uint64_t *state);
