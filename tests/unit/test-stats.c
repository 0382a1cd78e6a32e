/* SPDX-License-Identifier: MIT */
/* The statistics every stage shares: medians, quantiles, MAD, intervals, precision, the rank test, the bootstrap. */
#include <errno.h>
#include <math.h>
#include <stdint.h>

#include "check.h"
#include "rng.h"
#include "stats.h"

#define MAXN 64

static void test_stats(void)
{
	const double v[] = { 3, 1, 2, 10, 4 };
	struct stats_summary st;

	stats_summarize(v, 5, &st);
	CHECK(st.n == 5 && st.median == 3 && st.min == 1 && st.max == 10, "median/min/max");
	CHECK_NEAR(st.mean, 4.0, 1e-12);
	CHECK_NEAR(st.stddev, 3.5355339, 1e-6);
	CHECK_NEAR(st.rel_spread, 3.0, 1e-12);
	stats_summarize(v, 4, &st);
	CHECK(st.median == 2.5, "even count median %g", st.median);
	stats_summarize(v, 0, &st);
	CHECK(st.n == 0 && st.median == 0, "empty");
}

/* Every median agrees: sorted, selected in place (odd and even counts, ties, negative values), copied. */
static void test_medians_and_quantiles(void)
{
	static const struct {
		int line;
		double v[9];
		size_t n;
		double median;
	} rows[] = {
		{ __LINE__, { 5 }, 1, 5 },
		{ __LINE__, { 2, 1 }, 2, 1.5 },
		{ __LINE__, { 3, 1, 2 }, 3, 2 },
		{ __LINE__, { 4, 4, 4, 1 }, 4, 4 },
		{ __LINE__, { -1, -5, 3, 0, 2, 2 }, 6, 1 },
		{ __LINE__, { 9, 8, 7, 6, 5, 4, 3, 2, 1 }, 9, 5 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double a[9], b[9];
		memcpy(a, rows[i].v, sizeof(a));
		memcpy(b, rows[i].v, sizeof(b));
		stats_sort(a, rows[i].n);
		CHECK_ROW(rows[i].line, stats_median_sorted(a, rows[i].n) == rows[i].median, "sorted %g",
			  stats_median_sorted(a, rows[i].n));
		CHECK_ROW(rows[i].line, stats_median_inplace(b, rows[i].n) == rows[i].median, "selected");
		CHECK_ROW(rows[i].line, stats_median(rows[i].v, rows[i].n) == rows[i].median, "copied");
	}
	CHECK(isnan(stats_median(NULL, 0)), "no samples: NAN");
	const double four[] = { 4, 1, 3, 2 }, three[] = { 3, 1, 2 }, one[] = { 5 };
	CHECK_NEAR(stats_quantile(four, 4, 0.25), 1.75, 1e-12);
	CHECK_NEAR(stats_quantile(four, 4, 0.5), 2.5, 1e-12);
	CHECK_NEAR(stats_quantile(four, 4, 1.0), 4, 1e-12);
	CHECK_NEAR(stats_quantile(four, 4, -1), 1, 1e-12);
	CHECK_NEAR(stats_quantile(three, 3, 0.75), 2.5, 1e-12);
	CHECK_NEAR(stats_quantile(one, 1, 0.25), 5, 1e-12);
	CHECK(stats_quantile(one, 0, 0.5) == 0, "no samples: 0");
	CHECK(four[0] == 4 && four[3] == 2, "input untouched");
	/* MAD of 1, 2, 3, 4, 100 around 3: deviations 2, 1, 0, 1, 97 -> 1. */
	const double out[] = { 1, 2, 3, 4, 100 };
	CHECK(stats_mad(out, 5, 3) == 1, "MAD %g", stats_mad(out, 5, 3));
	CHECK(stats_mad(out, 0, 3) == 0, "MAD of nothing");
}

/* The median's confidence interval that decides when --iters auto stops, and the precision with allocations. */
static void test_precision(void)
{
	double v[25];
	for (int i = 0; i < 25; i++)
		v[i] = 25 - i;	/* 25 .. 1: order does not matter */
	CHECK(isinf(stats_median_ci(v, 5)), "five samples are too few for an interval");
	/* n = 25: ranks 7 and 18 (0-based) of 1..25, i.e. 8 and 19; half-width 5.5 around 13. */
	CHECK_NEAR(stats_median_ci(v, 25), 5.5 / 13, 1e-12);
	double flat[10] = { 50, 50, 50, 50, 50, 50, 50, 50, 50, 50 };
	CHECK(stats_median_ci(flat, 10) == 0, "identical samples: exact");
	/* Three allocations: medians 40, 50, 60, each tight within. */
	const double s9[9] = { 39.6, 40, 40.4, 49.5, 50, 50.5, 59.4, 60, 60.6 };
	unsigned alloc[9] = { 0, 0, 0, 1, 1, 1, 2, 2, 2 };
	/* The precision with allocations as the unit: medians 40, 50, 60 have s = 10, t(2) = 4.303, so
	 * 4.303 * 10 / sqrt(3) over the median of all nine (50), wider than the samples' own interval. */
	CHECK_NEAR(stats_precision(s9, alloc, 9), 4.303 * 10 / sqrt(3) / 50, 1e-12);
	CHECK(stats_precision(s9, alloc, 9) > 2 * stats_median_ci(s9, 9), "clustered is wider");
	/* One allocation, or no tags: the median's interval over the samples. */
	CHECK_NEAR(stats_precision(v, NULL, 25), stats_median_ci(v, 25), 1e-15);
	unsigned one[25] = { 0 };
	CHECK_NEAR(stats_precision(v, one, 25), stats_median_ci(v, 25), 1e-15);
	/* Allocations that agree exactly: the samples' own interval is the floor. */
	const double same[12] = { 49, 50, 51, 49, 50, 51, 49, 50, 51, 49, 50, 51 };
	unsigned four[12] = { 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3 };
	CHECK_NEAR(stats_precision(same, four, 12), stats_median_ci(same, 12), 1e-15);
	/* Tags need not be in order: the allocations are grouped by tag. */
	const double mixed[9] = { 39.6, 49.5, 59.4, 40, 50, 60, 40.4, 50.5, 60.6 };
	unsigned mixed_alloc[9] = { 0, 1, 2, 0, 1, 2, 0, 1, 2 };
	CHECK_NEAR(stats_precision(mixed, mixed_alloc, 9), stats_precision(s9, alloc, 9), 1e-15);
	CHECK(isinf(stats_precision(v, NULL, 0)), "no samples: no precision");
	/* Student's t: the table, then 1.96 + 2.5 / df (within 0.002 from 30 on). */
	CHECK_NEAR(stats_t975(1), 12.706, 1e-12);
	CHECK_NEAR(stats_t975(30), 2.042, 1e-12);
	CHECK_NEAR(stats_t975(60), 2.000, 0.002);
	CHECK_NEAR(stats_t975(120), 1.980, 0.002);
	CHECK(isinf(stats_t975(0)), "no degrees of freedom");
}

/* The median's half-width where stats_precision() has none, and the term a second pass adds. */
static void test_halfwidth_and_runs(void)
{
	/* Five samples: no distribution-free interval; t(4) * 1.2533 * s / sqrt(5) / median instead. */
	const double five[5] = { 40, 55, 48, 62, 45 };
	double sd = sqrt((100.0 + 25 + 4 + 144 + 25) / 4);	/* mean 50 */
	CHECK_NEAR(stats_median_halfwidth(five, NULL, 5), 2.776 * 1.2533 * sd / sqrt(5) / 48, 1e-12);
	/* Where stats_precision() is finite, it is the answer (allocations as the unit). */
	const double s9[9] = { 39.6, 40, 40.4, 49.5, 50, 50.5, 59.4, 60, 60.6 };
	unsigned alloc[9] = { 0, 0, 0, 1, 1, 1, 2, 2, 2 };
	CHECK_NEAR(stats_median_halfwidth(s9, alloc, 9), stats_precision(s9, alloc, 9), 1e-15);
	CHECK(isinf(stats_median_halfwidth(five, NULL, 1)), "one sample: no half-width");
	const double zero[3] = { 0, 0, 0 };
	CHECK(isinf(stats_median_halfwidth(zero, NULL, 3)), "a zero median: no relative half-width");
	/* The claim: the run's own half-width and the host's part in quadrature. */
	CHECK_NEAR(stats_precision_runs(0.01, 0.03), sqrt(0.0001 + 0.0009), 1e-15);
	CHECK_NEAR(stats_precision_runs(0.02, 0), 0.02, 1e-15);
}

static void test_precision_host(void)
{
	/* One pass 3 % slower: s = 3 / sqrt(2) of the median 100, one degree of freedom, t 12.706. */
	const double one[3] = { 103, 102, 104 };
	double sd = 0;
	unsigned df = 9;
	CHECK_NEAR(stats_precision_host(100, one, NULL, 3, &sd, &df), 12.706 * 0.03 / sqrt(2), 1e-12);
	CHECK_NEAR(sd, 0.03 / sqrt(2), 1e-12);
	CHECK(df == 1, "one pass: one degree of freedom, got %u", df);
	/* Three passes, tagged out of order: medians 102, 98, 104 about 100: sd sqrt(20 / 3), t(3) 3.182. */
	const double three[9] = { 98, 102, 104, 103, 97, 104, 101, 99, 105 };
	const unsigned pass[9] = { 2, 1, 3, 1, 2, 3, 1, 2, 3 };
	CHECK_NEAR(stats_precision_host(100, three, pass, 9, &sd, &df), 3.182 * sqrt(20.0 / 3) / 100, 1e-12);
	CHECK(df == 3, "three passes: three degrees of freedom, got %u", df);
	CHECK_NEAR(stats_precision_host(100, three, NULL, 0, &sd, &df), 0, 0);
	CHECK(df == 0 && sd == 0, "no passes: no part, df %u", df);
	CHECK_NEAR(stats_precision_host(0, three, pass, 9, NULL, NULL), 0, 0);

	/*
	 * Does the part hold what it claims? Runs and their passes drawn alike
	 * from one normal host (sd 5 about 100): how often does the run's median
	 * +- the part hold the host's true centre? With the t quantile at least
	 * 95 % (s counts the run's own draw, so a little more); with 1.96 in
	 * place of t, as before several passes, well short of it.
	 */
	uint64_t rng = 20;
	for (unsigned k = 1; k <= 3; k++) {
		unsigned held = 0, held_z = 0, n = 4000;
		for (unsigned r = 0; r < n; r++) {
			double m0 = 100 + 5 * rng_normal(&rng), passes[3];
			for (unsigned j = 0; j < k; j++)
				passes[j] = 100 + 5 * rng_normal(&rng);
			unsigned tags[3] = { 1, 2, 3 };
			double part = stats_precision_host(m0, passes, tags, k, NULL, NULL) * m0;
			held += fabs(m0 - 100) <= part;
			held_z += fabs(m0 - 100) <= part / stats_t975(k) * 1.96;
		}
		CHECK((double)held / n >= 0.95 && (double)held / n <= 0.995, "%u pass(es): held %u of %u", k, held, n);
		CHECK((double)held_z / n < 0.94, "%u pass(es), 1.96 in place of t: held %u of %u", k, held_z, n);
	}
}

/*
 * Mann-Whitney U against values computed independently: the exact rows by
 * enumerating every split of the pooled values (itertools.combinations), the
 * tied and large rows with the textbook normal approximation.
 */
static const struct {
	int line;
	double a[MAXN], b[MAXN];
	size_t na, nb;
	double u, p;
	bool exact;
} mw_rows[] = {
	/* Completely separated, 5 against 5: the most extreme of C(10,5) = 252 splits, both tails. */
	{ __LINE__, { 1, 2, 3, 4, 5 }, { 6, 7, 8, 9, 10 }, 5, 5, 25, 2.0 / 252, true },
	{ __LINE__, { 1, 2, 3, 4, 5 }, { 1.5, 2.5, 3.5, 4.5, 5.5 }, 5, 5, 15, 0.6904761904761905, true },
	{ __LINE__, { 4, 5, 6, 7 }, { 1, 2, 3 }, 4, 3, 0, 2.0 / 35, true },
	{ __LINE__, { 3, 1, 4, 15, 9, 2, 6 }, { 5, 35, 8, 97, 93, 23, 84, 62 }, 7, 8, 51, 0.005905205905205905, true },
	/* Two identical sets: every value tied with its copy, U at its mean, p = 1. */
	{ __LINE__, { 1, 2, 3, 4, 5 }, { 1, 2, 3, 4, 5 }, 5, 5, 12.5, 1.0, false },
	{ __LINE__, { 1, 2, 2, 3, 3, 3, 4 }, { 3, 3, 4, 4, 5, 5, 6 }, 7, 7, 43, 0.017854292789382976, false },
	{ __LINE__, { 7, 7, 7 }, { 7, 7, 7, 7 }, 3, 4, 6, 1.0, false },
};

static void test_mann_whitney(void)
{
	for (size_t i = 0; i < sizeof(mw_rows) / sizeof(mw_rows[0]); i++) {
		struct stats_rank_test t;
		int rc = stats_mann_whitney(mw_rows[i].a, mw_rows[i].na, mw_rows[i].b, mw_rows[i].nb, &t);
		CHECK_ROW(mw_rows[i].line, rc == 0, "rc %d", rc);
		CHECK_ROW(mw_rows[i].line, t.u == mw_rows[i].u, "U %g, want %g", t.u, mw_rows[i].u);
		CHECK_ROW(mw_rows[i].line, fabs(t.p - mw_rows[i].p) < 1e-9, "p %.12g, want %.12g", t.p, mw_rows[i].p);
		CHECK_ROW(mw_rows[i].line, t.exact == mw_rows[i].exact, "exact %d", t.exact);
	}
	/* 30 against 30, no ties: beyond the exact limit, the normal approximation (z 3.8366, p 1.2477e-4). */
	double a[30], b[30];
	for (int i = 0; i < 30; i++) {
		a[i] = i;
		b[i] = i + 10.5;
	}
	struct stats_rank_test t;
	CHECK(stats_mann_whitney(a, 30, b, 30, &t) == 0 && !t.exact, "large sets use the approximation");
	CHECK(t.u == 710, "U %g", t.u);
	CHECK_NEAR(t.z, 3.836558396254233, 1e-9);
	CHECK_NEAR(t.p, 0.00012477053789099963, 1e-12);
	/* Swapping the sides mirrors U and keeps p. */
	struct stats_rank_test s;
	CHECK(stats_mann_whitney(b, 30, a, 30, &s) == 0 && s.u == 900 - 710 && fabs(s.p - t.p) < 1e-15 && s.z < 0,
	      "mirrored: U %g p %g z %g", s.u, s.p, s.z);
	/* Bad input. */
	double nan_v[] = { 1, NAN, 3 };
	CHECK(stats_mann_whitney(a, 0, b, 5, &t) == -EINVAL, "an empty side");
	CHECK(stats_mann_whitney(nan_v, 3, b, 5, &t) == -EINVAL, "a NaN");
}

/* Groups by tag, and the spread between clusters. */
static void test_groups(void)
{
	const double v[6] = { 1, 10, 2, 20, 3, 30 };
	const unsigned tag[6] = { 1, 0, 1, 0, 1, 0 };
	struct stats_groups g;
	CHECK(stats_group(v, tag, 6, &g) == 0 && g.k == 2 && g.len[0] == 3 && g.len[1] == 3, "two groups");
	CHECK(g.v[g.start[0]] == 10 && g.v[g.start[0] + 2] == 30 && g.v[g.start[1]] == 1, "in tag order, then taken");
	stats_groups_free(&g);
	CHECK(stats_group(v, NULL, 6, &g) == 0 && g.k == 1 && g.len[0] == 6 && g.v[1] == 10, "no tags: one group");
	stats_groups_free(&g);
	CHECK(stats_group(v, NULL, 0, &g) == -EINVAL, "empty");
	size_t k;
	double spread;
	const struct stats_set s = { v, tag, 6 };
	CHECK(stats_cluster_spread(&s, &k, &spread) == 0 && k == 2 && fabs(spread - 18.0 / 11) < 1e-12,
	      "medians 20 and 2: spread %g", spread);
}

static double ratio(const double *m)
{
	return m[0] > 0 ? m[1] / m[0] : NAN;
}

/* The bootstrap: the same seed gives the same interval, and a clear change excludes 1. */
static void test_bootstrap(void)
{
	double a[20], b[20];
	for (int i = 0; i < 20; i++) {
		a[i] = 100 + i % 5;
		b[i] = 120 + i % 5;
	}
	const struct stats_set sets[2] = { { a, NULL, 20 }, { b, NULL, 20 } };
	double lo, hi, p, lo2, hi2;
	CHECK(stats_bootstrap(sets, 2, ratio, 0.01, 42, 1000, &lo, &hi, &p) == 0 && lo > 1.1 && hi < 1.3 && p < 0.01,
	      "+20 %%: [%g, %g] p %g", lo, hi, p);
	CHECK(stats_bootstrap(sets, 2, ratio, 0.01, 42, 1000, &lo2, &hi2, NULL) == 0 && lo2 == lo && hi2 == hi,
	      "repeatable");
	const struct stats_set same[2] = { { a, NULL, 20 }, { a, NULL, 20 } };
	CHECK(stats_bootstrap(same, 2, ratio, 0.01, 42, 1000, &lo, &hi, &p) == 0 && lo <= 1 && hi >= 1, "no change");
	const struct stats_set empty[2] = { { a, NULL, 0 }, { b, NULL, 20 } };
	CHECK(stats_bootstrap(empty, 2, ratio, 0.01, 42, 1000, &lo, &hi, &p) == -EINVAL && isnan(lo), "empty side");
	CHECK(stats_bootstrap(sets, 5, ratio, 0.01, 42, 1000, &lo, &hi, &p) == -EINVAL, "too many sets");
}

int main(void)
{
	test_stats();
	test_medians_and_quantiles();
	test_precision();
	test_halfwidth_and_runs();
	test_precision_host();
	test_mann_whitney();
	test_groups();
	test_bootstrap();
	return check_finish();
}
