/* SPDX-License-Identifier: MIT */
/* Analysis on fixtures from published measurements: statistics, comparisons, and checks that fire and stay quiet. */
#include <string.h>

#include "analysis.h"
#include "check.h"
#include "fixtures.h"

static const struct analysis_check *find_check(const struct analysis *a, const char *id)
{
	for (size_t i = 0; i < a->n_checks; i++)
		if (strcmp(a->checks[i].id, id) == 0)
			return &a->checks[i];
	return NULL;
}

static void test_stats(void)
{
	const double v[] = { 3, 1, 2, 10, 4 };
	struct sample_stats st;

	analysis_stats(v, 5, &st);
	CHECK(st.n == 5 && st.median == 3 && st.min == 1 && st.max == 10, "median/min/max");
	CHECK_NEAR(st.mean, 4.0, 1e-12);
	CHECK_NEAR(st.stddev, 3.5355339, 1e-6);
	CHECK_NEAR(st.rel_spread, 3.0, 1e-12);
	analysis_stats(v, 4, &st);
	CHECK(st.median == 2.5, "even count median %g", st.median);
	analysis_stats(v, 0, &st);
	CHECK(st.n == 0 && st.median == 0, "empty");
}

/*
 * A cloud Xeon at 128 MiB (DESIGN.md): 4k 47.12 ns with 72,486,304 dTLB
 * loads and 22,003,065 misses, 2m 34.85 ns with 24,745,791 loads and 2,802
 * misses, over 22 M counted accesses, core at 3.9 GHz: about 12.3 ns and
 * 48 cycles per dTLB miss.
 */
static void test_cloud_xeon_counters(void)
{
	struct phase_result r[2];
	struct analysis a;
	struct timing_calibration clk = { .clock_overhead_ns = 20, .clock_resolution_ns = 1, .core_clock_ghz = 3.9 };
	const double s4k[] = { 47.12 }, s2m[] = { 34.85 };

	fixture_phase(&r[0], "chase/4k/128M/r0", "4k", 128ull << 20, 22000000, s4k, 1, 72486304, 22003065);
	fixture_phase(&r[1], "chase/2m/128M/r0", "2m", 128ull << 20, 22000000, s2m, 1, 24745791, 2802);
	CHECK(analysis_run(r, 2, NULL, &clk, &a) == 0, "analysis runs");
	CHECK(a.n_comparisons == 1, "one comparison, got %zu", a.n_comparisons);
	if (a.n_comparisons == 1) {
		const struct comparison *c = &a.comparisons[0];
		CHECK(c->baseline == 0 && c->variant == 1, "4k is the baseline");
		CHECK_NEAR(c->delta_ns, 12.27, 1e-9);
		CHECK_NEAR(c->speedup, 47.12 / 34.85, 1e-9);
		CHECK(c->have_tlb_counts && strcmp(c->method, "counters") == 0, "counters method");
		CHECK_NEAR(c->delta_tlb_misses_per_access, (22003065.0 - 2802.0) / 22e6, 1e-9);
		CHECK_NEAR(c->ns_per_tlb_miss, 12.3, 0.1);
		CHECK_NEAR(c->cycles_per_tlb_miss, 48, 1.0);
	}
	CHECK(a.verdict == VERDICT_OK, "verdict ok, got %s", verdict_name(a.verdict));
	analysis_free(&a);
	fixture_free(r, 2);
}

/* The same without counters (a cloud VM): differential method, no per-miss cost invented. */
static void test_differential(void)
{
	struct phase_result r[2];
	struct analysis a;
	struct timing_calibration clk = { .clock_overhead_ns = 20, .clock_resolution_ns = 1, .core_clock_ghz = 3.6 };
	const double s4k[] = { 50.9, 50.5, 51.2 }, s2m[] = { 34.3, 34.1, 34.6 };

	fixture_phase(&r[0], "chase/4k/256M/r0", "4k", 256ull << 20, 20000000, s4k, 3, 0, -1);
	fixture_phase(&r[1], "chase/2m/256M/r0", "2m", 256ull << 20, 20000000, s2m, 3, 0, -1);
	CHECK(analysis_run(r, 2, NULL, &clk, &a) == 0, "analysis runs");
	CHECK(a.n_comparisons == 1 && strcmp(a.comparisons[0].method, "differential") == 0, "differential");
	CHECK_NEAR(a.comparisons[0].delta_ns, 50.9 - 34.3, 1e-9);
	CHECK(a.comparisons[0].ns_per_tlb_miss == 0, "no per-miss cost without counts");
	CHECK_NEAR(a.comparisons[0].tlb_ns, a.comparisons[0].delta_ns, 1e-12);
	const struct analysis_check *pmu = find_check(&a, "pmu_unavailable");
	CHECK(pmu && pmu->status == CHECK_PASS && strstr(pmu->message, "differential"), "pmu check informs");
	analysis_free(&a);
	fixture_free(r, 2);
}

static void test_checks_fire_and_stay_quiet(void)
{
	struct phase_result r[2];
	struct analysis a;
	struct timing_calibration clk = { .clock_overhead_ns = 30, .clock_resolution_ns = 1, .core_clock_ghz = 3 };
	const double s[] = { 40, 41 };

	/* Quiet. */
	fixture_phase(&r[0], "chase/4k/64M/r0", "4k", 64ull << 20, 1000000, s, 2, 0, -1);
	fixture_phase(&r[1], "chase/2m/64M/r0", "2m", 64ull << 20, 1000000, s, 2, 0, -1);
	analysis_run(r, 2, NULL, &clk, &a);
	static const char *const quiet[] = { "phases_completed", "workload_self_checks", "control_thp_contamination",
					     "huge_pages_granted", "timer_resolution" };
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++) {
		const struct analysis_check *c = find_check(&a, quiet[i]);
		CHECK(c && c->status == CHECK_PASS, "%s should pass: %s", quiet[i], c ? c->message : "missing");
	}
	CHECK(a.verdict == VERDICT_OK, "verdict ok");
	analysis_free(&a);

	/* Fire: a contaminated control, a partial THP, a failed self-check, a too-short sample, a failed phase. */
	r[0].backing.kind = PAGE_THP;
	r[0].backing.huge_fraction = 0.4;
	r[1].backing.huge_fraction = 0.6;
	r[1].self_checks[0].status = CHECK_FAIL;
	r[0].spec.iterations = 10;	/* 10 accesses x 40 ns = 400 ns, only ~13x the 30 ns clock overhead */
	analysis_run(r, 2, NULL, &clk, &a);
	static const char *const fire[] = { "workload_self_checks", "control_thp_contamination", "huge_pages_granted",
					    "timer_resolution" };
	for (size_t i = 0; i < sizeof(fire) / sizeof(fire[0]); i++) {
		const struct analysis_check *c = find_check(&a, fire[i]);
		CHECK(c && c->status == CHECK_FAIL, "%s should fail: %s", fire[i], c ? c->message : "missing");
		CHECK(c && c->n_evidence > 0, "%s carries evidence", fire[i]);
	}
	CHECK(a.verdict == VERDICT_FAIL, "verdict fail");
	analysis_free(&a);

	r[1].status = PHASE_FAILED;
	analysis_run(r, 2, NULL, &clk, &a);
	const struct analysis_check *pc = find_check(&a, "phases_completed");
	CHECK(pc && pc->status == CHECK_FAIL, "a failed phase fails phases_completed");
	CHECK(a.n_comparisons == 0, "no comparison with a failed phase");
	analysis_free(&a);
	fixture_free(r, 2);
}

int main(void)
{
	test_stats();
	test_cloud_xeon_counters();
	test_differential();
	test_checks_fire_and_stay_quiet();
	return check_finish();
}
