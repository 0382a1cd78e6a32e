/* SPDX-License-Identifier: MIT */
/* Comparing reports: the ratio bootstrap against known values, verdicts, matching, environments. */
#include <errno.h>
#include <math.h>
#include <stdint.h>

#include "judge/analysis.h"
#include "check.h"
#include "judge/compare.h"
#include "fixtures.h"

#define MAXN 64

/*
 * The verdict rule: beyond noise (p < 0.01, an interval without 1, above the floor) and size (> threshold)
 * together, samples first.
 */
static const struct {
	int line;
	double change, p, lo, hi, floor;
	size_t nb, nn;
	double threshold;
	bool higher_is_better;
	enum compare_verdict want;
} judge_rows[] = {
	{ __LINE__, 0.20, 0.0001, 1.15, 1.25, 0, 50, 50, 0.05, false, COMPARE_REGRESSION },
	{ __LINE__, -0.20, 0.0001, 0.75, 0.85, 0, 50, 50, 0.05, false, COMPARE_BETTER },
	{ __LINE__, 0.03, 0.0001, 1.01, 1.05, 0, 50, 50, 0.05, false, COMPARE_WORSE_SMALL },
	{ __LINE__, -0.03, 0.0001, 0.95, 0.99, 0, 50, 50, 0.05, false, COMPARE_BETTER_SMALL },
	{ __LINE__, 0.20, 0.2, 0.9, 1.5, 0, 50, 50, 0.05, false, COMPARE_NOISE },
	{ __LINE__, 0.03, 0.2, 0.98, 1.08, 0, 50, 50, 0.05, false, COMPARE_NO_CHANGE },
	/* The rank test says different, the medians' interval still holds 1: not significant. */
	{ __LINE__, 0.22, 0.0001, 0.71, 1.28, 0, 50, 50, 0.05, false, COMPARE_NOISE },
	{ __LINE__, 0.03, 0.0001, 0.99, 1.05, 0, 50, 50, 0.05, false, COMPARE_NO_CHANGE },
	/* No interval (NAN): the rank test alone never declares a change. */
	{ __LINE__, 0.20, 0.0001, NAN, NAN, 0, 50, 50, 0.05, false, COMPARE_NOISE },
	{ __LINE__, 0.20, 0.0001, 1.15, 1.25, 0, 4, 50, 0.05, false, COMPARE_INSUFFICIENT },
	{ __LINE__, 0.20, 0.0001, 1.15, 1.25, 0, 50, 4, 0.05, false, COMPARE_INSUFFICIENT },
	{ __LINE__, 0.20, 0.0001, 1.15, 1.25, 0, 5, 5, 0.05, false, COMPARE_REGRESSION },
	{ __LINE__, 0.20, 0.0001, 1.15, 1.25, 0, 0, 50, 0.05, false, COMPARE_NOT_COMPARABLE },
	/* p exactly at alpha is not significant. */
	{ __LINE__, 0.20, 0.01, 1.15, 1.25, 0, 50, 50, 0.05, false, COMPARE_NOISE },
	/* A change of exactly the threshold is not beyond it. */
	{ __LINE__, 0.05, 0.0001, 1.04, 1.06, 0, 50, 50, 0.05, false, COMPARE_WORSE_SMALL },
	{ __LINE__, 0.20, 0.0001, 1.15, 1.25, 0, 50, 50, 0.25, false, COMPARE_WORSE_SMALL },
	/* An exact +10 % (1.1 / 1 - 1 is 0.10000000000000009) is not beyond a 10 % threshold. */
	{ __LINE__, 1.1 / 1.0 - 1, 0.0001, 1.08, 1.12, 0, 50, 50, 0.10, false, COMPARE_WORSE_SMALL },
	{ __LINE__, 0.1001, 0.0001, 1.08, 1.12, 0, 50, 50, 0.10, false, COMPARE_REGRESSION },
	/* The noise floor: a change no larger than the spread between a run's own allocations is not beyond noise. */
	{ __LINE__, 0.20, 0.0001, 1.15, 1.25, 0.25, 50, 50, 0.05, false, COMPARE_NOISE },
	{ __LINE__, 0.20, 0.0001, 1.15, 1.25, 0.20, 50, 50, 0.05, false, COMPARE_NOISE },
	{ __LINE__, 0.20, 0.0001, 1.15, 1.25, 0.19, 50, 50, 0.05, false, COMPARE_REGRESSION },
	{ __LINE__, 0.04, 0.0001, 1.02, 1.06, 0.05, 50, 50, 0.05, false, COMPARE_NO_CHANGE },
	{ __LINE__, 0.20, 0.0001, 1.15, 1.25, NAN, 50, 50, 0.05, false, COMPARE_REGRESSION },
	/* Speedups: smaller is worse. */
	{ __LINE__, -0.20, 0.0001, 0.75, 0.85, 0, 50, 50, 0.05, true, COMPARE_REGRESSION },
	{ __LINE__, 0.20, 0.0001, 1.15, 1.25, 0, 50, 50, 0.05, true, COMPARE_BETTER },
	{ __LINE__, -0.03, 0.0001, 0.95, 0.99, 0, 50, 50, 0.05, true, COMPARE_WORSE_SMALL },
	{ __LINE__, 0.0, 0.0001, 0.99, 1.01, 0, 50, 50, 0.05, false, COMPARE_NO_CHANGE },
	{ __LINE__, NAN, 0.0001, NAN, NAN, 0, 50, 50, 0.05, false, COMPARE_NOT_COMPARABLE },
};

static void test_judge(void)
{
	for (size_t i = 0; i < sizeof(judge_rows) / sizeof(judge_rows[0]); i++) {
		enum compare_verdict v = compare_judge(judge_rows[i].change, judge_rows[i].p, judge_rows[i].lo,
						       judge_rows[i].hi, judge_rows[i].floor, judge_rows[i].nb,
						       judge_rows[i].nn, judge_rows[i].threshold, judge_rows[i].higher_is_better);
		CHECK_ROW(judge_rows[i].line, v == judge_rows[i].want, "verdict %s, want %s", compare_verdict_name(v),
			  compare_verdict_name(judge_rows[i].want));
	}
	CHECK(strcmp(compare_verdict_label(COMPARE_REGRESSION, false), "slower (regression)") == 0, "label");
	CHECK(strcmp(compare_verdict_label(COMPARE_REGRESSION, true), "smaller (regression)") == 0, "speedup label");
}

/* Deterministic noise in [-1, 1]: a fixed sequence, so the tests never depend on a random draw. */
static double noise(unsigned i)
{
	return sin(1.7 * i + 0.3 * i * i);
}

/* The module's functions on sets without clusters (every sample its own draw). */
static int samples_of(const double *b, size_t nb, const double *n, size_t nn, double threshold,
		      struct compare_samples *out)
{
	const struct stats_set sb = { b, NULL, nb }, sn = { n, NULL, nn };

	return compare_samples(&sb, &sn, threshold, out);
}

static int boot_of(const double *a, size_t na, const double *b, size_t nb, double alpha, uint64_t seed, double *lo,
		   double *hi, double *p)
{
	const struct stats_set sa = { a, NULL, na }, sb = { b, NULL, nb };

	return compare_bootstrap_ratio(&sa, &sb, alpha, seed, lo, hi, p);
}

static int speedup_of(const double *ob, size_t nob, const double *ov, size_t nov, const double *nb, size_t nnb,
		      const double *nv, size_t nnv, double threshold, struct compare_samples *out)
{
	const struct stats_set sets[4] = { { ob, NULL, nob }, { ov, NULL, nov }, { nb, NULL, nnb }, { nv, NULL, nnv } };

	return compare_ratio(sets, threshold, true, out);
}

static void test_samples(void)
{
	double base[60], same[60], slow[60], small[60], four_b[4], four_n[4];
	struct compare_samples r, r2;

	for (unsigned i = 0; i < 60; i++) {
		base[i] = 100 * (1 + 0.02 * noise(i));
		same[i] = base[i];
		slow[i] = base[i] * 1.2;
		small[i] = 103 * (1 + 0.02 * noise(i + 1000));	/* a 3 % shift in 2 % noise */
	}
	/* Identical sets: p = 1, no change. */
	CHECK(samples_of(base, 60, same, 60, 0.05, &r) == 0, "identical");
	CHECK(r.p == 1 && r.change == 0 && r.verdict == COMPARE_NO_CHANGE, "identical: p %g change %g %s", r.p,
	      r.change, compare_verdict_name(r.verdict));
	CHECK(r.ratio_lo <= 1 && r.ratio_hi >= 1 && r.ratio_lo > 0.98 && r.ratio_hi < 1.02, "interval [%g, %g] holds 1",
	      r.ratio_lo, r.ratio_hi);
	/* Clearly slower: significant, +20 %, a regression; the interval holds 1.2 and excludes 1. */
	CHECK(samples_of(base, 60, slow, 60, 0.05, &r) == 0, "slow");
	CHECK(r.verdict == COMPARE_REGRESSION && r.p < 1e-6 && fabs(r.change - 0.2) < 1e-9 &&
		      strcmp(r.test, "mann_whitney_u") == 0,
	      "slower: %s p %g change %g", compare_verdict_name(r.verdict), r.p, r.change);
	CHECK(r.ratio_lo > 1.15 && r.ratio_lo <= 1.2 && r.ratio_hi >= 1.2 && r.ratio_hi < 1.25, "interval [%g, %g]",
	      r.ratio_lo, r.ratio_hi);
	/* The other way round: faster. */
	CHECK(samples_of(slow, 60, base, 60, 0.05, &r) == 0 && r.verdict == COMPARE_BETTER, "faster: %s",
	      compare_verdict_name(r.verdict));
	/* 3 % in 2 % noise against a 5 % threshold: significant, but not a regression. */
	CHECK(samples_of(base, 60, small, 60, 0.05, &r) == 0, "small");
	CHECK(r.p < COMPARE_ALPHA && r.change > 0.01 && r.change < 0.05 && r.verdict == COMPARE_WORSE_SMALL,
	      "3 %% shift: p %g change %g %s", r.p, r.change, compare_verdict_name(r.verdict));
	/* ... and against a 1 % threshold it is one. */
	CHECK(samples_of(base, 60, small, 60, 0.01, &r) == 0 && r.verdict == COMPARE_REGRESSION, "1 %% threshold: %s",
	      compare_verdict_name(r.verdict));
	/* Deterministic: the same inputs give the same interval. */
	CHECK(samples_of(base, 60, small, 60, 0.05, &r2) == 0 && r2.ratio_lo == r.ratio_lo &&
		      r2.ratio_hi == r.ratio_hi,
	      "same interval twice");
	/* Four samples a side: not judged, whatever the shift. */
	for (unsigned i = 0; i < 4; i++) {
		four_b[i] = 100 + i;
		four_n[i] = 150 + i;
	}
	CHECK(samples_of(four_b, 4, four_n, 4, 0.05, &r) == 0 && r.verdict == COMPARE_INSUFFICIENT && isnan(r.p) &&
		      !r.test && fabs(r.change - (151.5 / 101.5 - 1)) < 1e-9,
	      "4 samples: %s", compare_verdict_name(r.verdict));
	/* A large median move that the samples do not support: noise. */
	double wide_b[] = { 50, 100, 150, 200, 250 }, wide_n[] = { 60, 110, 160, 210, 260 };
	CHECK(samples_of(wide_b, 5, wide_n, 5, 0.05, &r) == 0 && r.verdict == COMPARE_NOISE && r.exact && r.p > 0.5,
	      "wide: %s p %g", compare_verdict_name(r.verdict), r.p);
}

static void test_bootstrap(void)
{
	double two[] = { 2, 2, 2, 2, 2 }, three[] = { 3, 3, 3, 3, 3, 3 }, lo, hi, p;

	/* Constant sets: every resample has the same ratio. */
	CHECK(boot_of(two, 5, three, 6, 0.01, 1, &lo, &hi, &p) == 0 && lo == 1.5 && hi == 1.5,
	      "constant: [%g, %g]", lo, hi);
	CHECK(p < 0.001, "a ratio that is never 1: p %g", p);
	CHECK(boot_of(two, 5, two, 5, 0.01, 1, &lo, &hi, &p) == 0 && lo == 1 && hi == 1 && p == 1,
	      "equal constants: [%g, %g] p %g", lo, hi, p);
	double zero[] = { 0, 0, 0, 0, 0 };
	CHECK(boot_of(zero, 5, two, 5, 0.01, 1, &lo, &hi, &p) == -EINVAL && isnan(lo), "median 0");
	CHECK(boot_of(two, 0, two, 5, 0.01, 1, &lo, &hi, NULL) == -EINVAL, "empty");

	/* Speedups: baseline 150, variant 100 (1.5x) old; new variant 120 (1.25x): a regression of -16.7 %. */
	double ob[40], ov[40], nv[40], nv2[40];
	struct compare_samples s;
	for (unsigned i = 0; i < 40; i++) {
		ob[i] = 150 * (1 + 0.01 * noise(i));
		ov[i] = 100 * (1 + 0.01 * noise(i + 100));
		nv[i] = 120 * (1 + 0.01 * noise(i + 200));
		nv2[i] = 101 * (1 + 0.01 * noise(i + 300));
	}
	CHECK(speedup_of(ob, 40, ov, 40, ob, 40, nv, 40, 0.05, &s) == 0, "speedup");
	CHECK(s.verdict == COMPARE_REGRESSION && fabs(s.base - 1.5) < 0.03 && fabs(s.new - 1.25) < 0.03 &&
		      s.p < COMPARE_ALPHA && strcmp(s.test, "bootstrap") == 0 && s.ratio_hi < 1,
	      "speedup 1.5 -> 1.25: %s base %g new %g p %g [%g, %g]", compare_verdict_name(s.verdict), s.base, s.new,
	      s.p, s.ratio_lo, s.ratio_hi);
	CHECK(speedup_of(ob, 40, ov, 40, ob, 40, ov, 40, 0.05, &s) == 0 && s.verdict == COMPARE_NO_CHANGE &&
		      s.change == 0 && s.ratio_lo <= 1 && s.ratio_hi >= 1,
	      "same speedup: %s", compare_verdict_name(s.verdict));
	/* 1 % smaller in 1 % noise: within the threshold whether or not it is significant. */
	CHECK(speedup_of(ob, 40, ov, 40, ob, 40, nv2, 40, 0.05, &s) == 0 &&
		      (s.verdict == COMPARE_WORSE_SMALL || s.verdict == COMPARE_NO_CHANGE),
	      "1 %% smaller speedup: %s", compare_verdict_name(s.verdict));
	CHECK(speedup_of(ob, 4, ov, 40, ob, 40, nv, 40, 0.05, &s) == 0 && s.verdict == COMPARE_INSUFFICIENT &&
		      s.n_base == 4,
	      "a speedup on 4 samples: %s", compare_verdict_name(s.verdict));
}

/* A side of a comparison built from fixture phases, analysed as tlbprof compare does. */
struct side {
	struct phase_result r[4];
	size_t n;
	struct run_results results;
	struct analysis analysis;
	struct environment env;
	struct timing_calibration clock;
	struct compare_side cs;
};

static void side_build(struct side *s, const char *const *names, const char *const *pages, const double *scale,
		       size_t n)
{
	double v[20];

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < n; i++) {
		for (unsigned k = 0; k < 20; k++)
			v[k] = scale[i] * (1 + 0.01 * noise(k + 50 * (unsigned)i));
		fixture_phase(&s->r[i], names[i], pages[i], 256ull << 20, 1000000, v, 20, 0, -1);
	}
	s->n = n;
	snprintf(s->env.cpu_model_name, sizeof(s->env.cpu_model_name), "Test CPU");
	snprintf(s->env.kernel, sizeof(s->env.kernel), "Linux 6.1");
	snprintf(s->env.thp_enabled, sizeof(s->env.thp_enabled), "madvise");
	snprintf(s->env.hypervisor, sizeof(s->env.hypervisor), "KVM");
	s->env.perf_event_paranoid = 2;
	s->env.turbo = -1;
	s->clock.core_clock_ghz = 3.0;
	s->clock.clock_overhead_ns = 20;
	s->clock.core_clock_method = "dependent_add_chain";
}

static void side_analyse(struct side *s)
{
	s->results = (struct run_results){ .phases = s->r, .n = s->n };
	CHECK(analysis_run(s->r, s->n, &s->env, &s->clock, &s->analysis) == 0, "analysis");
	s->cs = (struct compare_side){ .results = &s->results, .analysis = &s->analysis, .env = &s->env,
				       .clock = &s->clock, .pmu_name = "none" };
}

static void side_free(struct side *s)
{
	analysis_free(&s->analysis);
	fixture_free(s->r, s->n);
}

static const struct compare_phase *find_phase(const struct compare_result *r, const char *name)
{
	for (size_t i = 0; i < r->n_phases; i++)
		if (strcmp(r->phases[i].name, name) == 0)
			return &r->phases[i];
	return NULL;
}

static const struct compare_check *find_check(const struct compare_result *r, const char *id)
{
	for (size_t i = 0; i < r->n_checks; i++)
		if (strcmp(r->checks[i].id, id) == 0)
			return &r->checks[i];
	return NULL;
}

static void test_matching(void)
{
	static const char *const names_b[] = { "chase/4k/256M/r0", "chase/2m/256M/r0", "chase/1g/256M/r0" };
	static const char *const pages_b[] = { "4k", "2m", "1g" };
	/* The new run lacks 1g, has 2m first, and adds a phase. */
	static const char *const names_n[] = { "chase/2m/256M/r0", "chase/4k/256M/r0", "chase/4k/512M/r0" };
	static const char *const pages_n[] = { "2m", "4k", "4k" };
	const double scale_b[] = { 80, 50, 45 }, scale_n[] = { 60, 80, 90 };
	struct side b, n;
	struct compare_result r;

	side_build(&b, names_b, pages_b, scale_b, 3);
	side_build(&n, names_n, pages_n, scale_n, 3);
	side_analyse(&b);
	side_analyse(&n);
	CHECK(compare_run(&b.cs, &n.cs, 0.05, &r) == 0, "compare_run");
	CHECK(r.n_phases == 4, "3 in base + 1 added: %zu", r.n_phases);
	const struct compare_phase *p4 = find_phase(&r, "chase/4k/256M/r0"), *p2 = find_phase(&r, "chase/2m/256M/r0");
	const struct compare_phase *p1 = find_phase(&r, "chase/1g/256M/r0"), *pa = find_phase(&r, "chase/4k/512M/r0");
	CHECK(p4 && p4->match == COMPARE_MATCHED && p4->base == 0 && p4->new == 1 && p4->ns.verdict == COMPARE_NO_CHANGE,
	      "4k matched across orders, unchanged");
	CHECK(p2 && p2->match == COMPARE_MATCHED && p2->base == 1 && p2->new == 0 && p2->ns.verdict == COMPARE_REGRESSION,
	      "2m: 50 -> 60 ns is a regression");
	CHECK(p1 && p1->match == COMPARE_REMOVED && p1->new == SIZE_MAX && p1->ns.verdict == COMPARE_NOT_COMPARABLE &&
		      isfinite(p1->ns.base) && isnan(p1->ns.new),
	      "1g only in base");
	CHECK(pa && pa->match == COMPARE_ADDED && pa->base == SIZE_MAX && isnan(pa->ns.base) && isfinite(pa->ns.new),
	      "512M only in new");
	CHECK(r.phases[3].match == COMPARE_ADDED, "added phases come last");
	/* Page-size comparisons: 4k -> 2m in both (speedup 1.6 -> 1.33), 4k -> 1g only in base. */
	CHECK(r.n_pairs == 2, "pairs %zu", r.n_pairs);
	const struct compare_pair *cp = &r.pairs[0];
	CHECK(strcmp(cp->baseline, "chase/4k/256M/r0") == 0 && strcmp(cp->variant, "chase/2m/256M/r0") == 0 &&
		      cp->match == COMPARE_MATCHED && cp->speedup.verdict == COMPARE_REGRESSION &&
		      fabs(cp->speedup.base - 1.6) < 0.02 && fabs(cp->speedup.new - 80.0 / 60) < 0.02,
	      "4k -> 2m speedup %g -> %g %s", cp->speedup.base, cp->speedup.new, compare_verdict_name(cp->speedup.verdict));
	CHECK(r.pairs[1].match == COMPARE_REMOVED && strcmp(r.pairs[1].variant, "chase/1g/256M/r0") == 0,
	      "4k -> 1g only in base");
	CHECK(r.regressions == 2 && compare_fails(&r, FAIL_ON_FAIL) && !compare_fails(&r, FAIL_ON_NEVER),
	      "two regressions: %zu", r.regressions);
	/* Counter rates: software counters read 0 on both sides. */
	bool faults = false;
	for (size_t k = 0; k < p4->n_rates; k++)
		faults |= p4->rates[k].metric == METRIC_PAGE_FAULTS && p4->rates[k].base == 0 && p4->rates[k].new == 0 &&
			  isnan(p4->rates[k].change);
	CHECK(faults, "page-fault rate 0 -> 0, change undefined");
	CHECK(r.n_env == 0, "same environment: %zu differences", r.n_env);
	compare_free(&r);
	side_free(&b);
	side_free(&n);
}

static void test_checks_and_environment(void)
{
	static const char *const names[] = { "chase/4k/256M/r0", "chase/2m/256M/r0" };
	static const char *const pages[] = { "4k", "2m" };
	const double scale[] = { 80, 50 };
	struct side b, n;
	struct compare_result r;

	side_build(&b, names, pages, scale, 2);
	side_build(&n, names, pages, scale, 2);
	/* A self-check that failed in the new run: workload_self_checks goes pass -> fail. */
	n.r[1].self_checks[0].status = CHECK_FAIL;
	/* Environment: another kernel, THP always, bare metal, a 10 % faster clock, a 2 MiB pool with pages. */
	snprintf(n.env.kernel, sizeof(n.env.kernel), "Linux 6.8");
	snprintf(n.env.thp_enabled, sizeof(n.env.thp_enabled), "always");
	n.env.hypervisor[0] = '\0';
	n.clock.core_clock_ghz = 3.3;
	n.env.pools[0] = (struct env_hugepool){ .page_bytes = 2ull << 20, .nr = 512 };
	n.env.n_pools = 1;
	b.env.pools[0] = (struct env_hugepool){ .page_bytes = 2ull << 20, .nr = 0 };
	b.env.pools[1] = (struct env_hugepool){ .page_bytes = 1ull << 30, .nr = 0 };
	b.env.n_pools = 2;
	side_analyse(&b);
	side_analyse(&n);
	CHECK(compare_run(&b.cs, &n.cs, 0.05, &r) == 0, "compare_run");
	const struct compare_check *sc = find_check(&r, "workload_self_checks");
	CHECK(sc && sc->match == COMPARE_MATCHED && sc->base == CHECK_PASS && sc->new == CHECK_FAIL && sc->worse,
	      "self-checks pass -> fail is worse");
	CHECK(r.checks_worse == 1 && r.checks_now_failing == 1 && r.regressions == 0, "worse %zu failing %zu reg %zu",
	      r.checks_worse, r.checks_now_failing, r.regressions);
	CHECK(compare_fails(&r, FAIL_ON_WARN) && compare_fails(&r, FAIL_ON_FAIL) && !compare_fails(&r, FAIL_ON_NEVER),
	      "a check that fails now fails the comparison");
	const char *want[] = { "kernel", "thp.enabled", "hypervisor", "core_clock_ghz", "hugepages.2M" };
	CHECK(r.n_env == 5, "5 differences, got %zu", r.n_env);
	for (size_t i = 0; i < 5 && i < r.n_env; i++)
		CHECK(strcmp(r.env[i].field, want[i]) == 0, "difference %zu: %s, want %s", i, r.env[i].field, want[i]);
	CHECK(r.n_env > 2 && strcmp(r.env[2].base, "KVM") == 0 && strcmp(r.env[2].new, "none") == 0, "hypervisor");
	compare_free(&r);

	/* A clock within 5 % and pools that hold pages on both sides (in different numbers) are the same machine. */
	struct compare_result r2;
	memcpy(&n.env, &b.env, sizeof(n.env));
	n.clock.core_clock_ghz = 3.1;
	b.env.pools[0].nr = 100;
	n.env.pools[0].nr = 2000;
	compare_environments(&b.cs, &n.cs, &r2);
	CHECK(r2.n_env == 0, "no differences: %zu (%s)", r2.n_env, r2.n_env ? r2.env[0].field : "");
	/*
	 * The first access to populated memory: 38 against 61 ns (both a TLB miss) and a side that did not measure it
	 * are no difference; 61 ns against 4.9 µs (a trap a page, shadow paging on the new side) is one.
	 */
	b.env.first_access = (struct env_first_access){ 4096, 38.0 };
	n.env.first_access = (struct env_first_access){ 4096, 61.0 };
	compare_environments(&b.cs, &n.cs, &r2);
	CHECK(r2.n_env == 0, "two TLB misses: %zu", r2.n_env);
	n.env.first_access = (struct env_first_access){ 4096, 4901.7 };
	compare_environments(&b.cs, &n.cs, &r2);
	CHECK(r2.n_env == 1 && strcmp(r2.env[0].field, "first_access") == 0 &&
		      strcmp(r2.env[0].base, "38 ns a page: a TLB miss") == 0 &&
		      strcmp(r2.env[0].new, "4902 ns a page: a trap each (shadow paging)") == 0,
	      "shadow paging on one side: %zu %s %s", r2.n_env, r2.n_env ? r2.env[0].base : "", r2.n_env ? r2.env[0].new : "");
	b.env.first_access.pages = 0;
	compare_environments(&b.cs, &n.cs, &r2);
	CHECK(r2.n_env == 0, "not measured on one side: %zu", r2.n_env);
	/* pass -> warn is worse but fails only at --fail-on warn. */
	struct compare_result r3 = { .checks_worse = 1 };
	CHECK(compare_fails(&r3, FAIL_ON_WARN) && !compare_fails(&r3, FAIL_ON_FAIL), "warn vs fail level");
	side_free(&b);
	side_free(&n);
}

/*
 * Three allocations as tlbprof --iters auto takes them: 5, 5, then 30 samples on the last, so the last
 * allocation's placement decides the median. first and last are the allocations' levels; each tight (0.2 %).
 */
static void clustered(double *v, unsigned *c, double first, double last)
{
	for (unsigned i = 0; i < 40; i++) {
		c[i] = i < 5 ? 0 : i < 10 ? 1 : 2;
		v[i] = (c[i] < 2 ? first : last) * (1 + 0.002 * noise(i));
	}
}

static void test_clusters(void)
{
	double b[40], n[40], n20[40], spread;
	unsigned cb[40], cn[40], c20[40];
	size_t k;
	struct compare_samples r;

	/* Base: the last allocation got placement 12 % faster; new: 9 % slower. Same code. */
	clustered(b, cb, 112, 100);
	clustered(n, cn, 100, 109);
	clustered(n20, c20, 112 * 1.2, 100 * 1.2);
	const struct stats_set sb = { b, cb, 40 }, sn = { n, cn, 40 }, s20 = { n20, c20, 40 };
	const struct stats_set flat_b = { b, NULL, 40 }, flat_n = { n, NULL, 40 };

	/* The spread of the allocations' medians: (112 - 100) / 112. */
	CHECK(stats_cluster_spread(&sb, &k, &spread) == 0 && k == 3 && fabs(spread - 12.0 / 112) < 0.005,
	      "3 clusters, spread %g", spread);
	CHECK(stats_cluster_spread(&flat_b, &k, &spread) == 0 && k == 1 && spread == 0, "one cluster: spread 0");
	const struct stats_set empty = { b, NULL, 0 };
	CHECK(stats_cluster_spread(&empty, &k, &spread) == -EINVAL && k == 0, "empty");

	/*
	 * +9 %: the same samples taken as independent draws make it a regression (p tiny, a narrow interval);
	 * with their allocations it is within the noise each run shows between its own allocations.
	 */
	CHECK(compare_samples(&flat_b, &flat_n, 0.05, &r) == 0 && r.verdict == COMPARE_REGRESSION &&
		      r.clusters_base == 1 && r.noise_floor == 0,
	      "as independent samples: %s", compare_verdict_name(r.verdict));
	CHECK(compare_samples(&sb, &sn, 0.05, &r) == 0, "clustered");
	CHECK(r.verdict == COMPARE_NOISE && r.clusters_base == 3 && r.clusters_new == 3 && r.noise_floor > 0.1 &&
		      r.change > 0.08 && r.ratio_lo < 1 && r.ratio_hi > 1,
	      "+9 %% within the allocations' spread: %s change %g floor %g [%g, %g] p %g",
	      compare_verdict_name(r.verdict), r.change, r.noise_floor, r.ratio_lo, r.ratio_hi, r.p);
	/* A real +20 % is beyond that spread: still a regression. */
	CHECK(compare_samples(&sb, &s20, 0.05, &r) == 0 && r.verdict == COMPARE_REGRESSION && r.ratio_lo > 1,
	      "+20 %%: %s [%g, %g] floor %g", compare_verdict_name(r.verdict), r.ratio_lo, r.ratio_hi, r.noise_floor);
	/* The hierarchical interval is wider than the flat one. */
	double lo_f, hi_f, lo_h, hi_h;
	CHECK(compare_bootstrap_ratio(&flat_b, &flat_n, 0.01, 7, &lo_f, &hi_f, NULL) == 0 &&
		      compare_bootstrap_ratio(&sb, &sn, 0.01, 7, &lo_h, &hi_h, NULL) == 0 && lo_f > 1 && lo_h < 1 &&
		      hi_h - lo_h > 2 * (hi_f - lo_f),
	      "hierarchical [%g, %g] vs flat [%g, %g]", lo_h, hi_h, lo_f, hi_f);
}

/* A side of three phases: the packed control, 4k and 2m at 256M, with three allocations each. */
static void side_controlled(struct side *s, double control, double base4k, double huge2m)
{
	static const char *const names[] = { "chase/4k:packed/256M/r0", "chase/4k/256M/r0", "chase/2m/256M/r0" };
	static const char *const pages[] = { "4k", "4k", "2m" };
	const double scale[] = { control, base4k, huge2m };

	side_build(s, names, pages, scale, 3);
	s->r[0].spec.role = PHASE_ROLE_CONTROL;
	s->r[0].spec.controls_size_bytes = 256ull << 20;
	s->r[0].spec.controls_stride_bytes = 4096;
	for (size_t i = 0; i < 3; i++) {
		s->r[i].sample_alloc = calloc(s->r[i].n_samples, sizeof(unsigned));
		for (size_t k = 0; k < s->r[i].n_samples; k++)
			s->r[i].sample_alloc[k] = (unsigned)(k % 3);
	}
}

static void side_controlled_free(struct side *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->r[i].sample_alloc);
	side_free(s);
}

static void test_against_control(void)
{
	struct side b, n;
	struct compare_result r;

	/* The machine 25 % slower: every phase and the control alike. Not a regression; said so. */
	side_controlled(&b, 6, 25, 18);
	side_controlled(&n, 6 * 1.25, 25 * 1.25, 18 * 1.25);
	side_analyse(&b);
	side_analyse(&n);
	CHECK(b.analysis.phases[1].has_control && b.analysis.phases[1].control == 0, "the fixture has a control");
	CHECK(compare_run(&b.cs, &n.cs, 0.05, &r) == 0, "compare_run");
	CHECK(r.regressions == 0 && r.machine_shifts == 3 && r.phases_judged == 3 && !compare_fails(&r, FAIL_ON_WARN),
	      "the machine: %zu regressions, %zu machine shifts", r.regressions, r.machine_shifts);
	const struct compare_phase *c = find_phase(&r, "chase/4k:packed/256M/r0"), *p4 = find_phase(&r, "chase/4k/256M/r0");
	CHECK(c && c->control && !c->control_name && c->ns.verdict == COMPARE_REGRESSION &&
		      c->verdict == COMPARE_MACHINE_SLOWER,
	      "the control moved with the machine: %s", c ? compare_verdict_name(c->verdict) : "-");
	CHECK(p4 && p4->ns.verdict == COMPARE_REGRESSION && p4->against_control && p4->control_name &&
		      strcmp(p4->control_name, "chase/4k:packed/256M/r0") == 0 && fabs(p4->vs_control.change) < 0.02 &&
		      p4->verdict == COMPARE_MACHINE_SLOWER,
	      "4k: %s against its control %+g", p4 ? compare_verdict_name(p4->verdict) : "-",
	      p4 ? p4->vs_control.change : NAN);
	compare_free(&r);
	side_controlled_free(&n);

	/* Translation 20 % slower, the control unchanged: both phases regress. */
	side_controlled(&n, 6, 25 * 1.2, 18 * 1.2);
	side_analyse(&n);
	CHECK(compare_run(&b.cs, &n.cs, 0.05, &r) == 0 && r.regressions == 2 && r.machine_shifts == 0,
	      "+20 %%, control steady: %zu regressions", r.regressions);
	p4 = find_phase(&r, "chase/4k/256M/r0");
	CHECK(p4 && p4->verdict == COMPARE_REGRESSION && p4->against_control && fabs(p4->vs_control.change - 0.2) < 0.02,
	      "4k regresses against its control");
	compare_free(&r);
	side_controlled_free(&n);

	/*
	 * +20 % on a machine 20 % faster: the same ns per access. Slower against the control, but the phase's
	 * own samples do not confirm it: not counted (the price of never counting the machine's moves).
	 */
	side_controlled(&n, 6 * 0.8, 25 * 0.8 * 1.2, 18 * 0.8 * 1.2);
	side_analyse(&n);
	CHECK(compare_run(&b.cs, &n.cs, 0.05, &r) == 0, "masked");
	p4 = find_phase(&r, "chase/4k/256M/r0");
	CHECK(p4 && fabs(p4->ns.change + 0.04) < 0.02 && p4->vs_control.verdict == COMPARE_REGRESSION &&
		      p4->verdict != COMPARE_REGRESSION && !p4->against_control && r.regressions == 0,
	      "a regression a faster machine hides: ns %+g, against the control %s, verdict %s",
	      p4 ? p4->ns.change : NAN, p4 ? compare_verdict_name(p4->vs_control.verdict) : "-",
	      p4 ? compare_verdict_name(p4->verdict) : "-");
	compare_free(&r);
	side_controlled_free(&n);

	/*
	 * A control whose last allocation ran 40 % slower: the change against it is beyond the threshold but not
	 * beyond noise. Its direction agrees with the phase's own +20 %: a regression. Its direction disagreeing
	 * (the phase 20 % faster against a control 40 % slower): the machine.
	 */
	side_controlled(&n, 6, 25 * 1.2, 18 * 1.2);
	for (size_t k = 0; k < n.r[0].n_samples; k++)
		n.r[0].samples_ns[k] *= n.r[0].sample_alloc[k] == 2 ? 1.4 : 1;
	side_analyse(&n);
	CHECK(compare_run(&b.cs, &n.cs, 0.05, &r) == 0, "noisy control");
	p4 = find_phase(&r, "chase/4k/256M/r0");
	CHECK(p4 && p4->ns.verdict == COMPARE_REGRESSION && p4->vs_control.verdict == COMPARE_NOISE &&
		      p4->control_inconclusive && p4->against_control && p4->verdict == COMPARE_REGRESSION,
	      "noisy control, agreeing: against it %s, verdict %s", p4 ? compare_verdict_name(p4->vs_control.verdict) : "-",
	      p4 ? compare_verdict_name(p4->verdict) : "-");
	compare_free(&r);
	side_controlled_free(&n);
	side_controlled(&n, 6 * 1.4, 25 * 1.2, 18 * 1.2);
	for (size_t k = 0; k < n.r[0].n_samples; k++)
		n.r[0].samples_ns[k] /= n.r[0].sample_alloc[k] == 2 ? 1.4 : 1;
	side_analyse(&n);
	CHECK(compare_run(&b.cs, &n.cs, 0.05, &r) == 0, "noisy control");
	p4 = find_phase(&r, "chase/4k/256M/r0");
	CHECK(p4 && p4->ns.verdict == COMPARE_REGRESSION && p4->vs_control.verdict == COMPARE_NOISE &&
		      p4->vs_control.change < -0.1 && !p4->control_inconclusive && p4->verdict == COMPARE_MACHINE_SLOWER,
	      "noisy control, disagreeing: against it %s %+g, verdict %s",
	      p4 ? compare_verdict_name(p4->vs_control.verdict) : "-", p4 ? p4->vs_control.change : NAN,
	      p4 ? compare_verdict_name(p4->verdict) : "-");
	compare_free(&r);
	side_controlled_free(&n);
	side_controlled_free(&b);
}

static void test_speedup_rule(void)
{
	static const char *const names[] = { "chase/4k/256M/r0", "chase/2m/256M/r0" };
	static const char *const pages[] = { "4k", "2m" };
	const double scale_b[] = { 80, 50 }, faster_4k[] = { 64, 50 }, slower_2m[] = { 80, 60 };
	struct side b, n;
	struct compare_result r;

	/* 4k 20 % faster, 2m unchanged: the speedup shrinks by a fifth, but nothing got slower. */
	side_build(&b, names, pages, scale_b, 2);
	side_build(&n, names, pages, faster_4k, 2);
	side_analyse(&b);
	side_analyse(&n);
	CHECK(compare_run(&b.cs, &n.cs, 0.05, &r) == 0, "compare_run");
	CHECK(r.n_pairs == 1 && r.pairs[0].speedup.verdict == COMPARE_SMALLER_UNCOUNTED &&
		      fabs(r.pairs[0].speedup.change + 0.2) < 0.02 && r.regressions == 0 && r.speedups_uncounted == 1 &&
		      r.improvements == 1 && !compare_fails(&r, FAIL_ON_WARN),
	      "a smaller speedup with every phase faster: %s, %zu regressions",
	      r.n_pairs ? compare_verdict_name(r.pairs[0].speedup.verdict) : "-", r.regressions);
	compare_free(&r);
	side_free(&n);
	/* 2m 20 % slower: the phase and the speedup both count. */
	side_build(&n, names, pages, slower_2m, 2);
	side_analyse(&n);
	CHECK(compare_run(&b.cs, &n.cs, 0.05, &r) == 0 && r.pairs[0].speedup.verdict == COMPARE_REGRESSION &&
		      r.regressions == 2 && r.speedups_uncounted == 0,
	      "variant slower: speedup %s, %zu regressions", compare_verdict_name(r.pairs[0].speedup.verdict),
	      r.regressions);
	compare_free(&r);
	side_free(&n);
	side_free(&b);
}

static void test_nothing_judged(void)
{
	static const char *const names[] = { "chase/4k/256M/r0", "chase/2m/256M/r0" };
	static const char *const other[] = { "chase/4k/512M/r0", "chase/2m/512M/r0" };
	static const char *const pages[] = { "4k", "2m" };
	const double scale[] = { 80, 50 };
	struct side b, n;
	struct compare_result r;

	side_build(&b, names, pages, scale, 2);
	side_build(&n, names, pages, scale, 2);
	for (size_t i = 0; i < 2; i++)
		b.r[i].n_samples = n.r[i].n_samples = 4;
	side_analyse(&b);
	side_analyse(&n);
	CHECK(compare_run(&b.cs, &n.cs, 0.05, &r) == 0, "compare_run");
	CHECK(!compare_judged_any(&r) && r.phases_judged == 0 && r.phases_insufficient == 2 && r.pairs_judged == 0 &&
		      r.pairs_insufficient == 1 && r.regressions == 0,
	      "4 samples a phase: %zu judged, %zu insufficient", r.phases_judged, r.phases_insufficient);
	compare_free(&r);
	side_free(&n);
	/* No phase in common: nothing judged either. */
	side_build(&n, other, pages, scale, 2);
	side_analyse(&n);
	CHECK(compare_run(&b.cs, &n.cs, 0.05, &r) == 0 && !compare_judged_any(&r) && r.n_phases == 4 &&
		      r.phases_judged == 0 && r.phases_insufficient == 0,
	      "no common phase");
	compare_free(&r);
	for (size_t i = 0; i < 2; i++)
		b.r[i].n_samples = 20;
	side_free(&b);
	side_free(&n);
}

static void test_parameters_and_interrupted(void)
{
	static const char *const names[] = { "chase/4k/256M/r0", "chase/2m/256M/r0" };
	static const char *const pages[] = { "4k", "2m" };
	const double scale[] = { 80, 50 };
	struct side b, n;
	struct compare_result r;

	side_build(&b, names, pages, scale, 2);
	side_build(&n, names, pages, scale, 2);
	n.r[0].spec.layout = LAYOUT_ALIGNED;
	n.r[0].spec.stride_bytes = 64;
	n.r[0].spec.cpu = 3;
	n.r[1].spec.iterations_auto = true;
	side_analyse(&b);
	side_analyse(&n);
	n.results.interrupted = true;
	CHECK(compare_run(&b.cs, &n.cs, 0.05, &r) == 0, "compare_run");
	const struct compare_phase *p4 = find_phase(&r, "chase/4k/256M/r0"), *p2 = find_phase(&r, "chase/2m/256M/r0");
	CHECK(p4 && p4->n_params == 3 && strcmp(p4->params[0].param, "layout") == 0 &&
		      strcmp(p4->params[0].base, "colored") == 0 && strcmp(p4->params[0].new, "aligned") == 0 &&
		      strcmp(p4->params[1].param, "stride_bytes") == 0 && strcmp(p4->params[1].new, "64") == 0 &&
		      strcmp(p4->params[2].param, "cpu") == 0 && strcmp(p4->params[2].base, "not pinned") == 0,
	      "4k: %zu parameters differ", p4 ? p4->n_params : 0);
	CHECK(p2 && p2->n_params == 1 && strcmp(p2->params[0].param, "iterations_mode") == 0 &&
		      strcmp(p2->params[0].new, "auto") == 0,
	      "2m: iterations mode");
	CHECK(r.phases_params_differ == 2 && !r.interrupted_base && r.interrupted_new, "counted; new interrupted");
	compare_free(&r);
	side_free(&b);
	side_free(&n);
}

/* Page faults in two processes: the process is the cluster, of ns per page and of ns per fault. */
static void test_fault_processes(void)
{
	struct side sides[2];
	struct fault_sample fs[2][10];
	struct compare_result r;
	double v[10];

	for (unsigned i = 0; i < 10; i++)
		v[i] = 2000 * (1 + 0.01 * noise(i)) * (i < 5 ? 1 : 1.1);
	for (size_t s = 0; s < 2; s++) {
		struct side *sd = &sides[s];
		memset(sd, 0, sizeof(*sd));
		fixture_phase(&sd->r[0], "pagefault/4k/32M/anon_cold/r0", "4k", 32ull << 20, 8192, v, 10, 0, -1);
		for (unsigned i = 0; i < 10; i++)
			fs[s][i] = (struct fault_sample){ .elapsed_ns = v[i] * 8192, .pages = 8192, .minor = 8192,
							  .process = i / 5 };
		sd->r[0].spec.workload = workload_find("pagefault");
		sd->r[0].spec.fault_case = FAULT_ANON_COLD;
		sd->r[0].spec.processes = 2;
		sd->r[0].processes_run = 2;
		sd->r[0].fault_samples = fs[s];
		sd->r[0].n_fault_samples = 10;
		sd->n = 1;
		side_analyse(sd);
	}
	CHECK(compare_run(&sides[0].cs, &sides[1].cs, 0.05, &r) == 0 && r.n_phases == 1, "compare_run");
	const struct compare_phase *cp = &r.phases[0];
	CHECK(cp->faults && cp->ns.clusters_base == 2 && cp->ns.clusters_new == 2 && cp->ns_per_fault.clusters_base == 2 &&
		      fabs(cp->ns.noise_floor - 0.1 / 1.05) < 0.03 && cp->ns.verdict == COMPARE_NO_CHANGE,
	      "two processes 10 %% apart: clusters %zu/%zu, per fault %zu, floor %g, %s", cp->ns.clusters_base,
	      cp->ns.clusters_new, cp->ns_per_fault.clusters_base, cp->ns.noise_floor,
	      compare_verdict_name(cp->ns.verdict));
	compare_free(&r);
	for (size_t s = 0; s < 2; s++) {
		sides[s].r[0].fault_samples = NULL;
		side_free(&sides[s]);
	}
}

int main(void)
{
	test_judge();
	test_samples();
	test_bootstrap();
	test_matching();
	test_checks_and_environment();
	test_clusters();
	test_against_control();
	test_speedup_rule();
	test_nothing_judged();
	test_parameters_and_interrupted();
	test_fault_processes();
	return check_finish();
}
