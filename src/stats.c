/* SPDX-License-Identifier: MIT */
/* Statistics of sample sets: the one sort, median, quantile, MAD, t, Mann-Whitney and bootstrap of tlbprof. */
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Exact Mann-Whitney p-values up to this many samples together: the count of
 * arrangements, C(40, 20) ~ 1.4e11, is still exact in a double (2^53).
 */
#define EXACT_MAX_SAMPLES 40

int stats_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int stats_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

void stats_sort(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), stats_cmp_double);
}

double stats_median_sorted(const double *s, size_t n)
{
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* The k-th smallest of v[0..n-1] (0-based), reordering v (Hoare's selection, O(n) on average). */
static double select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		double pivot = v[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				double t = v[i];
				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return v[k];
	}
	return v[k];
}

double stats_median_inplace(double *v, size_t n)
{
	if (!n)
		return NAN;
	double hi = select_kth(v, n, n / 2);

	if (n % 2)
		return hi;
	/* After the selection everything below n/2 is <= v[n/2]: the lower middle is their maximum. */
	double lo = v[0];
	for (size_t i = 1; i < n / 2; i++)
		if (v[i] > lo)
			lo = v[i];
	return (lo + hi) / 2;
}

double stats_median(const double *v, size_t n)
{
	double *c, m;

	if (!n || !(c = malloc(n * sizeof(*c))))
		return NAN;
	memcpy(c, v, n * sizeof(*c));
	m = stats_median_inplace(c, n);
	free(c);
	return m;
}

double stats_quantile_sorted(const double *s, size_t n, double q)
{
	q = q < 0 ? 0 : q > 1 ? 1 : q;
	double h = q * (double)(n - 1);
	size_t i = (size_t)floor(h);
	return i + 1 < n ? s[i] + (h - (double)i) * (s[i + 1] - s[i]) : s[n - 1];
}

double stats_quantile(const double *v, size_t n, double q)
{
	double *s, r;

	if (!n)
		return 0;
	s = malloc(n * sizeof(*s));
	if (!s)
		return NAN;
	memcpy(s, v, n * sizeof(*s));
	stats_sort(s, n);
	r = stats_quantile_sorted(s, n, q);
	free(s);
	return r;
}

double stats_mad(const double *v, size_t n, double m)
{
	double *d, r;

	if (!n || !(d = malloc(n * sizeof(*d))))
		return 0;
	for (size_t i = 0; i < n; i++)
		d[i] = fabs(v[i] - m);
	r = stats_median_inplace(d, n);
	free(d);
	return r;
}

void stats_summarize(const double *v, size_t n, struct stats_summary *out)
{
	double *s, sum = 0, sq = 0;

	memset(out, 0, sizeof(*out));
	if (!n || !(s = malloc(n * sizeof(*s))))
		return;
	memcpy(s, v, n * sizeof(*s));
	stats_sort(s, n);
	out->n = n;
	out->min = s[0];
	out->max = s[n - 1];
	out->median = stats_median_sorted(s, n);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	out->mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (s[i] - out->mean) * (s[i] - out->mean);
	out->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
	out->rel_spread = out->median ? (out->max - out->min) / out->median : 0;
	free(s);
}

double stats_median_ci(const double *v, size_t n)
{
	double *s, m, half;

	if (n < 6 || !(s = malloc(n * sizeof(*s))))
		return INFINITY;
	memcpy(s, v, n * sizeof(*s));
	stats_sort(s, n);
	/* Ranks of the 95 % interval: the median's rank is binomial(n, 1/2), sd sqrt(n)/2. */
	double w = 0.98 * sqrt((double)n);
	long lo = (long)floor((double)n / 2 - w), hi = (long)ceil((double)n / 2 + w);
	if (lo < 0)
		lo = 0;
	if (hi > (long)n - 1)
		hi = (long)n - 1;
	m = stats_median_sorted(s, n);
	half = (s[hi] - s[lo]) / 2;
	free(s);
	return m > 0 ? half / m : INFINITY;
}

double stats_t975(unsigned df)
{
	static const double t[] = { 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
				    2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
				    2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042 };

	if (df == 0)
		return INFINITY;
	if (df <= sizeof(t) / sizeof(t[0]))
		return t[df - 1];
	return 1.96 + 2.5 / (double)df;	/* within 0.002 of the quantile from 30 on */
}

struct tagged_sample {
	unsigned tag;
	size_t idx;
};

static int cmp_tagged_sample(const void *pa, const void *pb)
{
	const struct tagged_sample *a = pa, *b = pb;

	if (a->tag != b->tag)
		return a->tag < b->tag ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

void stats_groups_free(struct stats_groups *g)
{
	free(g->v);
	free(g->start);
	free(g->len);
	memset(g, 0, sizeof(*g));
}

int stats_group(const double *v, const unsigned *tag, size_t n, struct stats_groups *g)
{
	struct tagged_sample *ts;

	/*
	 * g is the caller's empty struct (stats_groups_free() empties one). The
	 * analyzer follows stats_bootstrap()'s loop into a second call on the same
	 * element and calls this overwrite a leak.
	 */
	memset(g, 0, sizeof(*g));
	if (!n)
		return -EINVAL;
	g->n = n; // NOLINT(clang-analyzer-unix.Malloc): see above
	g->v = malloc(n * sizeof(*g->v));
	g->start = malloc(n * sizeof(*g->start));
	g->len = malloc(n * sizeof(*g->len));
	ts = malloc(n * sizeof(*ts));
	if (!g->v || !g->start || !g->len || !ts) {
		free(ts);
		stats_groups_free(g);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ts[i] = (struct tagged_sample){ tag ? tag[i] : 0, i };
	qsort(ts, n, sizeof(*ts), cmp_tagged_sample);
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || ts[i].tag != ts[i - 1].tag) {
			g->start[g->k] = i;
			g->len[g->k++] = 0;
		}
		g->v[i] = v[ts[i].idx];
		g->len[g->k - 1]++;
	}
	free(ts);
	return 0;
}

/* The median of each allocation's samples into med (the first STATS_MAX_GROUPS). Returns how many. */
static size_t group_medians(const double *v, const unsigned *alloc, size_t n, double *med)
{
	struct stats_groups g;
	size_t k;

	if (stats_group(v, alloc, n, &g))
		return 0;
	k = g.k < STATS_MAX_GROUPS ? g.k : STATS_MAX_GROUPS;
	for (size_t i = 0; i < k; i++) {
		struct stats_summary st;
		stats_summarize(g.v + g.start[i], g.len[i], &st);
		med[i] = st.median;
	}
	stats_groups_free(&g);
	return k;
}

double stats_precision(const double *v, const unsigned *alloc, size_t n)
{
	double iid = stats_median_ci(v, n), med[STATS_MAX_GROUPS];
	size_t k;

	if (!alloc || n == 0 || (k = group_medians(v, alloc, n, med)) < 2)
		return iid;
	struct stats_summary all, am;
	stats_summarize(v, n, &all);
	stats_summarize(med, k, &am);
	if (!(all.median > 0))
		return INFINITY;
	double clustered = stats_t975((unsigned)k - 1) * am.stddev / sqrt((double)k) / all.median;
	return clustered > iid ? clustered : iid;
}

double stats_median_halfwidth(const double *v, const unsigned *alloc, size_t n)
{
	double p = stats_precision(v, alloc, n);

	if (isfinite(p) || n < 2)
		return p;
	struct stats_summary st;
	stats_summarize(v, n, &st);
	if (!(st.median > 0))
		return INFINITY;
	return stats_t975((unsigned)n - 1) * 1.2533 * st.stddev / sqrt((double)n) / st.median;
}

double stats_precision_host(double m0, const double *rerun, const unsigned *pass, size_t n, double *rel_sd,
			    unsigned *df)
{
	double med[STATS_MAX_GROUPS + 1];
	size_t k;

	if (rel_sd)
		*rel_sd = 0;
	if (df)
		*df = 0;
	if (!(m0 > 0) || !n || (k = group_medians(rerun, pass, n, med + 1)) == 0)
		return 0;
	med[0] = m0;
	struct stats_summary st;
	stats_summarize(med, k + 1, &st);
	if (rel_sd)
		*rel_sd = st.stddev / m0;
	if (df)
		*df = (unsigned)k;
	return stats_t975((unsigned)k) * st.stddev / m0;
}

double stats_precision_runs(double within, double host)
{
	return sqrt(within * within + host * host);
}

void stats_claim(const double *v, const unsigned *alloc, size_t n, const double *rerun, const unsigned *pass,
		 size_t n_rerun, struct stats_claim *out)
{
	struct stats_summary a = { 0 }, b;

	memset(out, 0, sizeof(*out));
	out->within = stats_median_halfwidth(v, alloc, n);
	if (n_rerun && n) {
		stats_summarize(v, n, &a);
		stats_summarize(rerun, n_rerun, &b);
		out->between = a.median > 0 ? (b.median - a.median) / a.median : 0;
		out->host = stats_precision_host(a.median, rerun, pass, n_rerun, NULL, &out->passes);
	}
	out->claimed = stats_precision_runs(out->within, out->host);
}

/* ---- Mann-Whitney U ---- */

struct ranked {
	double v;
	bool in_b;
};

static int cmp_ranked(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;

	return (a->v > b->v) - (a->v < b->v);
}

/*
 * P(U <= u) and P(U >= u) for U of nb samples against na without ties: the
 * counts of U are the coefficients of the Gaussian binomial coefficient
 * [na+nb choose na]_q = prod_{i=1..na} (1 - q^(nb+i)) / (1 - q^i), built one
 * factor at a time (each partial product is again a polynomial with integer
 * coefficients, so every step is exact in doubles for na + nb <= 40).
 */
static int exact_tails(size_t na, size_t nb, size_t u, double *le, double *ge)
{
	size_t deg = na * nb;
	double *c = calloc(deg + 1, sizeof(*c)), total = 0;

	if (!c)
		return -ENOMEM;
	c[0] = 1;
	for (size_t i = 1; i <= na; i++) {
		size_t mul = nb + i;
		for (size_t k = deg; k >= mul; k--)
			c[k] -= c[k - mul];
		for (size_t k = i; k <= deg; k++)
			c[k] += c[k - i];
	}
	*le = *ge = 0;
	for (size_t k = 0; k <= deg; k++) {
		total += c[k];
		if (k <= u)
			*le += c[k];
		if (k >= u)
			*ge += c[k];
	}
	*le /= total;
	*ge /= total;
	free(c);
	return 0;
}

int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct stats_rank_test *out)
{
	size_t n = na + nb;
	struct ranked *r;
	double rank_sum_b = 0, ties = 0;

	memset(out, 0, sizeof(*out));
	out->p = 1;
	if (!na || !nb)
		return -EINVAL;
	for (size_t i = 0; i < na; i++)
		if (!isfinite(a[i]))
			return -EINVAL;
	for (size_t i = 0; i < nb; i++)
		if (!isfinite(b[i]))
			return -EINVAL;
	r = malloc(n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < na; i++)
		r[i] = (struct ranked){ a[i], false };
	for (size_t i = 0; i < nb; i++)
		r[na + i] = (struct ranked){ b[i], true };
	qsort(r, n, sizeof(*r), cmp_ranked);
	/* Mid-ranks for runs of equal values; t^3 - t of each run corrects the variance. */
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && r[j + 1].v == r[i].v)
			j++;
		double t = (double)(j - i + 1), mid = ((double)i + (double)j) / 2 + 1;
		for (size_t k = i; k <= j; k++)
			if (r[k].in_b)
				rank_sum_b += mid;
		ties += t * t * t - t;
		i = j + 1;
	}
	free(r);
	out->u = rank_sum_b - (double)nb * ((double)nb + 1) / 2;

	double mean = (double)na * (double)nb / 2;
	if (ties == 0 && n <= EXACT_MAX_SAMPLES) {
		double le, ge;
		if (exact_tails(na, nb, (size_t)llround(out->u), &le, &ge) != 0)
			return -ENOMEM;
		out->exact = true;
		out->p = fmin(1.0, 2 * fmin(le, ge));
		return 0;
	}
	double nn = (double)n;
	double var = (double)na * (double)nb / 12 * ((nn + 1) - ties / (nn * (nn - 1)));
	if (var <= 0)
		return 0;	/* every value the same: nothing tells the sets apart */
	double dev = fabs(out->u - mean) - 0.5;
	out->z = (dev > 0 ? dev : 0) / sqrt(var) * (out->u < mean ? -1 : 1);
	out->p = fmin(1.0, erfc(fabs(out->z) / sqrt(2.0)));
	return 0;
}

/* ---- clusters and the hierarchical bootstrap ---- */

uint64_t stats_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The spread of a grouped set's cluster medians, (max - min) / median; 0 with one cluster. */
static double grouped_spread(const struct stats_groups *g)
{
	double *m, lo = INFINITY, hi = -INFINITY, mid, spread;

	if (g->k < 2)
		return 0;
	if (!(m = malloc(g->k * sizeof(*m))))
		return NAN;
	for (size_t c = 0; c < g->k; c++) {
		m[c] = stats_median(g->v + g->start[c], g->len[c]);
		lo = fmin(lo, m[c]);
		hi = fmax(hi, m[c]);
	}
	mid = stats_median_inplace(m, g->k);
	spread = mid > 0 ? (hi - lo) / mid : 0;
	free(m);
	return spread;
}

int stats_cluster_spread(const struct stats_set *s, size_t *n_clusters, double *spread)
{
	struct stats_groups g;
	int rc = stats_group(s->v, s->cluster, s->n, &g);

	*n_clusters = 0;
	*spread = NAN;
	if (rc)
		return rc;
	*n_clusters = g.k;
	*spread = grouped_spread(&g);
	stats_groups_free(&g);
	return isnan(*spread) ? -ENOMEM : 0;
}

/*
 * One hierarchical resample of g into buf (room for k * the largest
 * cluster): k clusters drawn with replacement, then each drawn cluster's own
 * number of samples from it with replacement (x % n: the bias is below
 * n / 2^64). With one cluster no cluster is drawn, so the sequence is the
 * ordinary bootstrap's. Returns the pooled count.
 */
static size_t resample(const struct stats_groups *g, uint64_t *state, double *buf)
{
	size_t pos = 0;

	for (size_t c = 0; c < g->k; c++) {
		size_t j = g->k > 1 ? stats_random(state) % g->k : 0;
		const double *v = g->v + g->start[j];
		for (size_t i = 0; i < g->len[j]; i++)
			buf[pos++] = v[stats_random(state) % g->len[j]];
	}
	return pos;
}

int stats_bootstrap(const struct stats_set *sets, size_t k, double (*stat)(const double *medians), double alpha,
		    uint64_t seed, size_t resamples, double *lo, double *hi, double *p_value)
{
	size_t room = 0, finite = 0, below = 0, above = 0;
	double med[STATS_BOOTSTRAP_MAX_SETS] = { 0 }, *buf = NULL, *stats = NULL;
	struct stats_groups g[STATS_BOOTSTRAP_MAX_SETS] = { 0 };
	uint64_t state = seed;
	int rc = 0;

	*lo = *hi = NAN;
	if (p_value)
		*p_value = NAN;
	if (k > STATS_BOOTSTRAP_MAX_SETS || !resamples)
		return -EINVAL;
	for (size_t s = 0; s < k; s++) {
		if ((rc = stats_group(sets[s].v, sets[s].cluster, sets[s].n, &g[s])))
			goto out;
		size_t largest = 0;
		for (size_t c = 0; c < g[s].k; c++)
			largest = g[s].len[c] > largest ? g[s].len[c] : largest;
		room = g[s].k * largest > room ? g[s].k * largest : room;
		med[s] = stats_median(sets[s].v, sets[s].n);
	}
	if (!room || !isfinite(stat(med))) {	/* room >= 1 once every set is non-empty */
		rc = -EINVAL;
		goto out;
	}
	buf = calloc(room, sizeof(*buf));
	stats = calloc(resamples, sizeof(*stats));
	if (!buf || !stats) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t r = 0; r < resamples; r++) {
		for (size_t s = 0; s < k; s++)
			med[s] = stats_median_inplace(buf, resample(&g[s], &state, buf));
		double x = stat(med);
		if (!isfinite(x))
			continue;	/* a resampled median of 0: no ratio */
		stats[finite++] = x;
		below += x <= 1;
		above += x >= 1;
	}
	if (!finite) {
		rc = -EINVAL;
		goto out;
	}
	stats_sort(stats, finite);
	size_t ilo = (size_t)floor(alpha / 2 * (double)finite);
	size_t ihi = (size_t)ceil((1 - alpha / 2) * (double)finite);
	*lo = stats[ilo];
	*hi = stats[ihi ? ihi - 1 : 0];
	if (p_value)
		*p_value = fmin(1.0, 2.0 * ((double)(below < above ? below : above) + 1) / ((double)finite + 1));
out:
	for (size_t s = 0; s < k; s++)
		stats_groups_free(&g[s]);
	free(buf);
	free(stats);
	return rc;
}
