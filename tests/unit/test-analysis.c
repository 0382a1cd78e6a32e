/* SPDX-License-Identifier: MIT */
/* Analysis on fixtures from published measurements: comparisons, and checks that fire and stay quiet. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "judge/analysis.h"
#include "judge/analysis_internal.h"
#include "machine/cores.h"
#include "pmu/sample.h"
#include "check.h"
#include "fixtures.h"

static const struct analysis_check *find_check(const struct analysis *a, const char *id)
{
	for (size_t i = 0; i < a->n_checks; i++)
		if (strcmp(a->checks[i].id, id) == 0)
			return &a->checks[i];
	return NULL;
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

/*
 * The headline knows its doubt. Quiet: the speedup with its 95 % interval,
 * which holds the true ratio. Under contention (as measured on the
 * development VM: 4k allocations at 110, 300 and 520 ns, 2m at 53): each
 * phase's own interval is wider than their difference, so no speedup is
 * printed, only that they could not be compared and why.
 */
static void test_headline_doubt(void)
{
	struct phase_result r[2];
	struct analysis a;
	struct timing_calibration clk = { .clock_overhead_ns = 20, .clock_resolution_ns = 1, .core_clock_ghz = 3 };
	double s4k[9], s2m[9];
	unsigned alloc[9] = { 0, 0, 0, 1, 1, 1, 2, 2, 2 }, alloc2[9] = { 0, 0, 0, 1, 1, 1, 2, 2, 2 };

	for (int i = 0; i < 9; i++) {
		s4k[i] = 86.5 * (1 + 0.01 * (i % 3 - 1)) * (1 + 0.02 * (i / 3 - 1));
		s2m[i] = 52.4 * (1 + 0.01 * (i % 3 - 1)) * (1 + 0.02 * (i / 3 - 1));
	}
	fixture_phase(&r[0], "chase/4k/256M/r0", "4k", 256ull << 20, 20000000, s4k, 9, 0, -1);
	fixture_phase(&r[1], "chase/2m/256M/r0", "2m", 256ull << 20, 20000000, s2m, 9, 0, -1);
	r[0].sample_alloc = alloc;
	r[1].sample_alloc = alloc2;
	CHECK(analysis_run(r, 2, NULL, &clk, &a) == 0, "analysis runs");
	const struct comparison *c = &a.comparisons[0];
	CHECK(c->comparable && c->interval_known && c->speedup_lo <= 86.5 / 52.4 && c->speedup_hi >= 86.5 / 52.4 &&
		      c->speedup_hi - c->speedup_lo < 0.2,
	      "quiet: %.3f in [%.3f, %.3f]", c->speedup, c->speedup_lo, c->speedup_hi);
	char want[64];
	snprintf(want, sizeof(want), "%.2f× (%.2f–%.2f) faster", c->speedup, c->speedup_lo, c->speedup_hi);
	CHECK(strstr(a.summary, want), "the headline gives the interval (%s): %s", want, a.summary);
	analysis_free(&a);

	for (int i = 0; i < 9; i++)
		r[0].samples_ns[i] = (i < 3 ? 110 : i < 6 ? 300 : 520) * (1 + 0.01 * (i % 3 - 1));
	CHECK(analysis_run(r, 2, NULL, &clk, &a) == 0, "analysis runs");
	c = &a.comparisons[0];
	CHECK(!c->comparable && strstr(c->doubt, "4k phase's own 95 % interval"), "contended: %s", c->doubt);
	CHECK(strstr(a.summary, "4k and 2m pages could not be compared") && !strstr(a.summary, "×") &&
		      !strstr(a.summary, "address translation is"),
	      "no number it cannot stand behind: %s", a.summary);
	analysis_free(&a);

	/* One sample a phase (a published figure): the ratio, and that there is no interval. */
	fixture_free(r, 2);
	fixture_phase(&r[0], "chase/4k/256M/r0", "4k", 256ull << 20, 20000000, s4k, 1, 0, -1);
	fixture_phase(&r[1], "chase/2m/256M/r0", "2m", 256ull << 20, 20000000, s2m, 1, 0, -1);
	CHECK(analysis_run(r, 2, NULL, &clk, &a) == 0, "analysis runs");
	CHECK(a.comparisons[0].comparable && !a.comparisons[0].interval_known &&
		      strstr(a.summary, "(no interval: the 4k phase has 1 sample)"),
	      "no interval: %s", a.summary);
	analysis_free(&a);
	fixture_free(r, 2);
}

/*
 * Every check of the analyzer, made to fire and kept quiet. A scenario starts
 * from a clean two-phase run (4k and 2m at 256 MiB, no PMU, steady samples)
 * and changes one thing.
 */
struct scenario {
	struct phase_result r[4];
	size_t n;
	struct environment env;
	struct timing_calibration clk;
};

static void scenario_clean(struct scenario *s)
{
	const double s4k[] = { 50.0, 50.2, 50.1, 49.9, 50.0 }, s2m[] = { 34.0, 34.1, 34.2, 33.9, 34.0 };

	memset(s, 0, sizeof(*s));
	fixture_phase(&s->r[0], "chase/4k/256M/r0", "4k", 256ull << 20, 20000000, s4k, 5, 0, -1);
	fixture_phase(&s->r[1], "chase/2m/256M/r0", "2m", 256ull << 20, 20000000, s2m, 5, 0, -1);
	s->n = 2;
	strcpy(s->env.cpu_vendor, "AuthenticAMD");
	s->env.l1_latency_cycles = 4;
	s->env.tlb.l2d_4k_entries = 3072;
	s->env.turbo = -1;
	s->env.n_caches = 2;
	s->env.caches[0] = (struct env_cache){ 1, "Data", 32768, 8, 64, 64 };
	s->env.caches[1] = (struct env_cache){ 2, "Unified", 1u << 20, 8, 64, 2048 };
	s->clk = (struct timing_calibration){ .clock_overhead_ns = 20, .clock_resolution_ns = 1, .core_clock_ghz = 3.6,
					      .core_clock_spread = 0.01 };
}

/* Run the analysis and return the status of check id (CHECK_SKIP + 1 when missing). */
static int status_of(struct scenario *s, const char *id, char *msg, size_t len)
{
	struct analysis a;
	int st = CHECK_SKIP + 1;

	analysis_run(s->r, s->n, &s->env, &s->clk, &a);
	const struct analysis_check *c = find_check(&a, id);
	if (c) {
		st = (int)c->status;
		snprintf(msg, len, "%s", c->message);
	} else {
		snprintf(msg, len, "(missing)");
	}
	analysis_free(&a);
	return st;
}

typedef void (*mutate_fn)(struct scenario *s);

static void m_none(struct scenario *s) { (void)s; }
static void m_failed_phase(struct scenario *s) { s->r[1].status = PHASE_FAILED; }
static void m_self_check(struct scenario *s) { s->r[0].self_checks[1].status = CHECK_FAIL; }
static void m_contaminated(struct scenario *s)
{
	s->r[0].backing.kind = PAGE_THP;
	s->r[0].backing.huge_fraction = 0.5;
}
static void m_not_granted(struct scenario *s) { s->r[1].backing.huge_fraction = 0.3; }
static void m_aligned(struct scenario *s)
{
	/* 16 MiB at a 4 KiB stride: 4096 lines (256 KiB) squeezed into 1/64 of a 1 MiB L2. */
	for (size_t i = 0; i < s->n; i++) {
		s->r[i].spec.layout = LAYOUT_ALIGNED;
		s->r[i].spec.size_bytes = 16u << 20;
		s->r[i].slots = 4096;
	}
}
static void m_aligned_huge(struct scenario *s)
{
	/* Aligned, but the 65536 lines (4 MiB) exceed the whole L2 anyway: aliasing changes nothing there. */
	for (size_t i = 0; i < s->n; i++)
		s->r[i].spec.layout = LAYOUT_ALIGNED;
}
static void m_short_samples(struct scenario *s) { s->r[1].spec.iterations = 20; }
static void m_too_fast(struct scenario *s)
{
	for (size_t i = 0; i < s->r[1].n_samples; i++)
		s->r[1].samples_ns[i] = 0.5;	/* 1.8 cycles at 3.6 GHz: below any L1 */
}
/* 3.24 cycles at 3.6 GHz, under 0.9 of a 4-cycle L1, with the calibrated clock's spread at 20 % (3.9: not) and 5 %. */
static void m_fast_within_spread(struct scenario *s)
{
	s->env.l1_latency_cycles = 4;
	for (size_t i = 0; i < s->r[1].n_samples; i++)
		s->r[1].samples_ns[i] = 0.9;
	s->clk.core_clock_spread = 0.2;
}
static void m_fast_beyond_spread(struct scenario *s)
{
	m_fast_within_spread(s);
	s->clk.core_clock_spread = 0.05;
}
static void m_tlb_quiet_counts(struct scenario *s)
{
	fixture_set_counter(&s->r[0], METRIC_DTLB_LOAD_MISSES, 20000);	/* 0.0002 per access */
	fixture_set_counter(&s->r[1], METRIC_DTLB_LOAD_MISSES, 100);
}
static void m_tlb_busy_counts(struct scenario *s)
{
	fixture_set_counter(&s->r[0], METRIC_DTLB_LOAD_MISSES, 99e6);	/* 0.99 per access */
	fixture_set_counter(&s->r[1], METRIC_DTLB_LOAD_MISSES, 1000);
}
static void m_misses_over_loads(struct scenario *s)
{
	m_tlb_busy_counts(s);
	fixture_set_counter(&s->r[0], METRIC_DTLB_LOADS, 50e6);	/* 0.5 loads per access, 0.99 misses: 2 per load */
}
static void m_walk_too_fast(struct scenario *s)
{
	m_tlb_busy_counts(s);
	fixture_set_counter(&s->r[0], METRIC_WALK_ACTIVE, 0.5e8);	/* 0.5 cycles per walk */
	fixture_set_counter(&s->r[1], METRIC_WALK_ACTIVE, 0);
}
static void m_walk_exceeds_delta(struct scenario *s)
{
	m_tlb_busy_counts(s);
	fixture_set_counter(&s->r[0], METRIC_WALK_ACTIVE, 72.0 * 1e8);	/* 20 ns of walks at 3.6 GHz for a 16 ns delta */
	fixture_set_counter(&s->r[1], METRIC_WALK_ACTIVE, 0);
}
static void m_multiplexed(struct scenario *s)
{
	fixture_set_counter(&s->r[0], METRIC_DTLB_LOADS, 1e8);
	s->r[0].counter_info[METRIC_DTLB_LOADS].status = COUNTER_MULTIPLEXED;
	s->r[0].counters[METRIC_DTLB_LOADS].running_ns = 500;
}
static void m_pmu(struct scenario *s)
{
	for (size_t i = 0; i < s->n; i++)
		fixture_set_counter(&s->r[i], METRIC_CYCLES, 1e9);
}
static void m_noisy(struct scenario *s)
{
	const double v[] = { 40, 55, 48, 62, 45 };
	memcpy(s->r[0].samples_ns, v, sizeof(v));
}
static void m_steal(struct scenario *s) { s->r[0].steal_ms = 0.05 * s->r[0].timed_ns / 1e6; }
static void m_migrated(struct scenario *s) { fixture_set_counter(&s->r[1], METRIC_CPU_MIGRATIONS, 3); }
static void m_no_migration_counter(struct scenario *s)
{
	for (size_t i = 0; i < s->n; i++)
		s->r[i].counter_info[METRIC_CPU_MIGRATIONS].status = COUNTER_DENIED;
}
/* +11 % on both phases, CV still < 5 %: a cold start repeats */
static void m_cold_first(struct scenario *s)
{
	s->r[0].samples_ns[0] = 55.5;
	s->r[1].samples_ns[0] = 37.8;
}
/* +11 % on one phase of one allocation: a burst looks the same */
static void m_cold_once(struct scenario *s) { s->r[0].samples_ns[0] = 55.5; }
/* tlbprof run's declarations on phase 0 (static: the fixtures never free a target). */
static struct target_phase declared_tp;
static void m_declared(struct scenario *s, double resident, double reference_ns)
{
	declared_tp = (struct target_phase){ .has_region = true, .region_bytes = 16u << 20, .has_accesses = true,
					     .resident_fraction = resident, .reference_ns = reference_ns };
	s->r[0].target = &declared_tp;
}
static void m_resident(struct scenario *s) { m_declared(s, 1.0, 60); }
static void m_not_resident(struct scenario *s) { m_declared(s, 0.25, 60); }
static void m_inflated(struct scenario *s) { m_declared(s, 1.0, 400); }	/* 8x the phase's ~50 ns */
/* A reference only 2.4x the phase's ~50 ns wall time, but the command ran a fifth of its windows: 12x on a CPU. */
static void m_inflated_preempted(struct scenario *s)
{
	m_declared(s, 1.0, 120);
	fixture_set_counter(&s->r[0], METRIC_TASK_CLOCK, 10.0 * (double)s->r[0].spec.iterations * (double)s->r[0].n_samples);
}
/* The same reference, the command on a CPU all the time (task-clock = wall): 2.4x is within the noise. */
static void m_honest_on_cpu(struct scenario *s)
{
	m_declared(s, 1.0, 120);
	fixture_set_counter(&s->r[0], METRIC_TASK_CLOCK, 60.0 * (double)s->r[0].spec.iterations * (double)s->r[0].n_samples);
}
static void m_faults(struct scenario *s) { fixture_set_counter(&s->r[0], METRIC_PAGE_FAULTS, 12); }
static void m_faults_rusage(struct scenario *s)
{
	s->r[0].counter_info[METRIC_PAGE_FAULTS].status = COUNTER_UNSUPPORTED;
	s->r[0].rusage_minflt = 5;
}
/* A tlbprof run phase: its faults are weighed against its timed time (a first clock read's vDSO page is noise). */
static struct target_phase run_phase = { .occurrences = 1 };
static void m_run_fault(struct scenario *s)
{
	s->r[0].target = &run_phase;
	fixture_set_counter(&s->r[0], METRIC_PAGE_FAULTS, 1);
	s->r[0].timed_ns = 100e6;
}
static void m_run_faults(struct scenario *s)
{
	m_run_fault(s);
	fixture_set_counter(&s->r[0], METRIC_PAGE_FAULTS, 20);	/* up to 2 ms of 100: 2 % */
}
static void m_clock_moved(struct scenario *s) { s->clk.core_clock_spread = 0.25; }
static void m_powersave(struct scenario *s) { strcpy(s->env.cpufreq_governor, "powersave"); }
static void m_performance(struct scenario *s)
{
	strcpy(s->env.cpufreq_governor, "performance");
	s->env.turbo = 0;
}
static void m_no_gain(struct scenario *s)
{
	for (size_t i = 0; i < s->r[1].n_samples; i++)
		s->r[1].samples_ns[i] = s->r[0].samples_ns[i] * 0.995;
}
static void m_small_ws(struct scenario *s)
{
	/* 16 MiB: 4096 pages, within 8x the 3072-entry L2 TLB: the check has nothing to judge. */
	for (size_t i = 0; i < s->n; i++) {
		s->r[i].spec.size_bytes = 16u << 20;
		s->r[i].slots = 4096;
	}
	m_no_gain(s);
}

static const struct {
	int line;
	const char *id;
	mutate_fn mutate;
	enum check_status want;
} check_rows[] = {
	{ __LINE__, "phases_completed", m_none, CHECK_PASS },
	{ __LINE__, "phases_completed", m_failed_phase, CHECK_FAIL },
	{ __LINE__, "workload_self_checks", m_none, CHECK_PASS },
	{ __LINE__, "workload_self_checks", m_self_check, CHECK_FAIL },
	{ __LINE__, "control_thp_contamination", m_none, CHECK_PASS },
	{ __LINE__, "control_thp_contamination", m_contaminated, CHECK_FAIL },
	{ __LINE__, "huge_pages_granted", m_none, CHECK_PASS },
	{ __LINE__, "huge_pages_granted", m_not_granted, CHECK_FAIL },
	{ __LINE__, "declared_region_resident", m_none, CHECK_SKIP },
	{ __LINE__, "declared_region_resident", m_resident, CHECK_PASS },
	{ __LINE__, "declared_region_resident", m_not_resident, CHECK_WARN },
	{ __LINE__, "cache_set_aliasing", m_none, CHECK_PASS },
	{ __LINE__, "cache_set_aliasing", m_aligned, CHECK_WARN },
	{ __LINE__, "cache_set_aliasing", m_aligned_huge, CHECK_PASS },
	{ __LINE__, "timer_resolution", m_none, CHECK_PASS },
	{ __LINE__, "timer_resolution", m_short_samples, CHECK_FAIL },
	{ __LINE__, "too_fast", m_none, CHECK_PASS },
	{ __LINE__, "too_fast", m_too_fast, CHECK_FAIL },
	{ __LINE__, "too_fast", m_fast_within_spread, CHECK_PASS },
	{ __LINE__, "too_fast", m_fast_beyond_spread, CHECK_FAIL },
	{ __LINE__, "declared_accesses_plausible", m_none, CHECK_SKIP },
	{ __LINE__, "declared_accesses_plausible", m_resident, CHECK_PASS },
	{ __LINE__, "declared_accesses_plausible", m_inflated, CHECK_WARN },
	{ __LINE__, "declared_accesses_plausible", m_inflated_preempted, CHECK_WARN },
	{ __LINE__, "declared_accesses_plausible", m_honest_on_cpu, CHECK_PASS },
	{ __LINE__, "tlb_pressure_expected", m_none, CHECK_SKIP },
	{ __LINE__, "tlb_pressure_expected", m_tlb_busy_counts, CHECK_PASS },
	{ __LINE__, "tlb_pressure_expected", m_tlb_quiet_counts, CHECK_FAIL },
	{ __LINE__, "multiplexed_counters", m_none, CHECK_PASS },
	{ __LINE__, "multiplexed_counters", m_multiplexed, CHECK_WARN },
	{ __LINE__, "pmu_unavailable", m_none, CHECK_PASS },
	{ __LINE__, "pmu_unavailable", m_pmu, CHECK_PASS },
	{ __LINE__, "counters_plausible", m_none, CHECK_SKIP },
	{ __LINE__, "counters_plausible", m_tlb_busy_counts, CHECK_PASS },
	{ __LINE__, "counters_plausible", m_misses_over_loads, CHECK_WARN },
	{ __LINE__, "counters_plausible", m_walk_too_fast, CHECK_WARN },
	{ __LINE__, "attribution_adds_up", m_none, CHECK_SKIP },
	{ __LINE__, "attribution_adds_up", m_tlb_busy_counts, CHECK_PASS },
	{ __LINE__, "attribution_adds_up", m_walk_exceeds_delta, CHECK_WARN },
	{ __LINE__, "unstable", m_none, CHECK_PASS },
	{ __LINE__, "unstable", m_noisy, CHECK_WARN },
	{ __LINE__, "unstable", m_steal, CHECK_WARN },
	{ __LINE__, "cpu_migrations", m_none, CHECK_PASS },
	{ __LINE__, "cpu_migrations", m_migrated, CHECK_WARN },
	{ __LINE__, "cpu_migrations", m_no_migration_counter, CHECK_SKIP },
	{ __LINE__, "warmup_insufficient", m_none, CHECK_PASS },
	{ __LINE__, "warmup_insufficient", m_cold_first, CHECK_WARN },
	{ __LINE__, "warmup_insufficient", m_cold_once, CHECK_PASS },
	{ __LINE__, "faults_in_timed_phase", m_none, CHECK_PASS },
	{ __LINE__, "faults_in_timed_phase", m_faults, CHECK_WARN },
	{ __LINE__, "faults_in_timed_phase", m_faults_rusage, CHECK_WARN },
	{ __LINE__, "faults_in_timed_phase", m_run_fault, CHECK_PASS },
	{ __LINE__, "faults_in_timed_phase", m_run_faults, CHECK_WARN },
	{ __LINE__, "frequency_scaling", m_none, CHECK_SKIP },
	{ __LINE__, "frequency_scaling", m_performance, CHECK_PASS },
	{ __LINE__, "frequency_scaling", m_clock_moved, CHECK_WARN },
	{ __LINE__, "frequency_scaling", m_powersave, CHECK_WARN },
	{ __LINE__, "huge_pages_ineffective", m_none, CHECK_PASS },
	{ __LINE__, "huge_pages_ineffective", m_no_gain, CHECK_WARN },
	{ __LINE__, "huge_pages_ineffective", m_small_ws, CHECK_SKIP },
};

static void test_checks_table(void)
{
	for (size_t i = 0; i < sizeof(check_rows) / sizeof(check_rows[0]); i++) {
		struct scenario s;
		char msg[400];
		scenario_clean(&s);
		check_rows[i].mutate(&s);
		int st = status_of(&s, check_rows[i].id, msg, sizeof(msg));
		CHECK_ROW(check_rows[i].line, st == (int)check_rows[i].want, "%s: %s, want %s: %s", check_rows[i].id,
			  st <= CHECK_SKIP ? check_status_name((enum check_status)st) : "missing",
			  check_status_name(check_rows[i].want), msg);
		CHECK_ROW(check_rows[i].line, *msg, "%s has a message", check_rows[i].id);
		fixture_free(s.r, s.n);
	}
}

/* The pmu_unavailable message says which method replaced the counters. */
static void test_pmu_message(void)
{
	struct scenario s;
	char msg[400];

	scenario_clean(&s);
	status_of(&s, "pmu_unavailable", msg, sizeof(msg));
	CHECK(strstr(msg, "differential") && strstr(msg, "calibrated"), "names the fallbacks: %s", msg);
	fixture_free(s.r, s.n);
}

/* --fail-on and the verdict. */
static void test_fail_on(void)
{
	CHECK(analysis_fails(VERDICT_FAIL, FAIL_ON_FAIL) && !analysis_fails(VERDICT_WARN, FAIL_ON_FAIL), "fail");
	CHECK(analysis_fails(VERDICT_WARN, FAIL_ON_WARN) && analysis_fails(VERDICT_FAIL, FAIL_ON_WARN) &&
		      !analysis_fails(VERDICT_OK, FAIL_ON_WARN), "warn");
	CHECK(!analysis_fails(VERDICT_FAIL, FAIL_ON_NEVER), "never");

	struct scenario s;
	struct analysis a;
	scenario_clean(&s);
	m_cold_first(&s);
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	CHECK(a.verdict == VERDICT_WARN, "a warning makes the verdict warn");
	CHECK(strstr(a.summary, "1 warning (warmup_insufficient)"), "summary names it: %s", a.summary);
	analysis_free(&a);
	/* With the 2m phase failed, the 4k phase's cold first sample stands alone: no warm-up called. */
	m_failed_phase(&s);
	m_powersave(&s);
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	CHECK(a.verdict == VERDICT_FAIL, "a failure makes the verdict fail");
	CHECK(strstr(a.summary, "1 check failed (phases_completed); 1 warning (frequency_scaling)"), "summary: %s",
	      a.summary);
	analysis_free(&a);
	m_self_check(&s);
	m_noisy(&s);
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	CHECK(strstr(a.summary, "2 checks failed (phases_completed, workload_self_checks); 2 warnings (unstable, frequency_scaling)"),
	      "plural summary: %s", a.summary);
	analysis_free(&a);
	/* A run stopped before its first phase: nothing measured is a failure, not "all 0 phases completed". */
	analysis_run(s.r, 0, &s.env, &s.clk, &a);
	const struct analysis_check *pc = NULL;
	for (size_t i = 0; i < a.n_checks; i++)
		if (strcmp(a.checks[i].id, "phases_completed") == 0)
			pc = &a.checks[i];
	CHECK(a.verdict == VERDICT_FAIL && pc && pc->status == CHECK_FAIL && strstr(pc->message, "no phase ran"),
	      "no phase: verdict %d, %s", (int)a.verdict, pc ? pc->message : "(none)");
	analysis_free(&a);
	fixture_free(s.r, s.n);
}

/* command_exit: how a tlbprof run command ended, each case with its status and a word of its message. */
static void test_command_exit(void)
{
	static const struct {
		int line;
		struct analysis_command_end end;
		bool known;
		enum check_status want;
		const char *says;
	} rows[] = {
		{ __LINE__, { .runs = 1, .exited = true }, true, CHECK_PASS, "exited with status 0" },
		{ __LINE__, { .runs = 1, .failed = 1, .exited = true, .exit_code = 3 }, true, CHECK_FAIL, "status 3" },
		{ __LINE__, { .runs = 1, .failed = 1, .signal = "SIGSEGV", .core_dumped = true }, true, CHECK_FAIL,
		  "killed by SIGSEGV (core dumped)" },
		{ __LINE__, { .runs = 5, .failed = 2, .exited = true, .exit_code = 1 }, true, CHECK_FAIL,
		  "2 of the command's 5 runs failed" },
		{ __LINE__, { .runs = 5, .exited = true }, true, CHECK_PASS, "in every run" },
		{ __LINE__, { .runs = 1, .failed = 1, .interrupted = true, .signal = "SIGINT" }, true, CHECK_FAIL,
		  "the run is cut short" },
		{ __LINE__, { .runs = 1, .attached = true }, true, CHECK_SKIP, "attached" },
		{ __LINE__, { 0 }, false, CHECK_SKIP, "does not say how the command ended" },
	};
	struct scenario s;

	scenario_clean(&s);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct analysis a;
		analysis_run(s.r, s.n, &s.env, &s.clk, &a);
		CHECK_ROW(rows[i].line, analysis_check_markers(&a, s.r, s.n, 0, 0, NULL, rows[i].known ? &rows[i].end
												    : NULL) == 0,
			  "command_exit added");
		const struct analysis_check *c = find_check(&a, "command_exit");
		CHECK_ROW(rows[i].line, c && c->status == rows[i].want && strstr(c->message, rows[i].says),
			  "command_exit %s: %s", c ? check_status_name(c->status) : "missing", c ? c->message : "");
		CHECK_ROW(rows[i].line, (a.verdict == VERDICT_FAIL) == (rows[i].want == CHECK_FAIL), "verdict %d",
			  (int)a.verdict);
		analysis_free(&a);
	}
	fixture_free(s.r, s.n);
}

/*
 * A size sweep on a cloud Xeon (DESIGN.md): 4k/2m ns at 64M..1G. The delta
 * stays about constant while the base latency triples: the speedup shrinks.
 */
static void test_size_sweep(void)
{
	static const struct {
		uint64_t mib;
		double ns4k, ns2m;
	} sweep[] = { { 64, 42.98, 33.51 }, { 128, 47.64, 34.81 }, { 256, 86.50, 78.79 },
		      { 512, 119.71, 110.02 }, { 1024, 137.01, 116.91 } };
	struct phase_result r[10];
	struct analysis a;
	struct timing_calibration clk = { .clock_overhead_ns = 20, .clock_resolution_ns = 1, .core_clock_ghz = 3.9 };

	for (size_t i = 0; i < 5; i++) {
		char n4[32], n2[32];
		snprintf(n4, sizeof(n4), "chase/4k/%lluM/r0", (unsigned long long)sweep[i].mib);
		snprintf(n2, sizeof(n2), "chase/2m/%lluM/r0", (unsigned long long)sweep[i].mib);
		fixture_phase(&r[2 * i], n4, "4k", sweep[i].mib << 20, 20000000, &sweep[i].ns4k, 1, 0, -1);
		fixture_phase(&r[2 * i + 1], n2, "2m", sweep[i].mib << 20, 20000000, &sweep[i].ns2m, 1, 0, -1);
	}
	analysis_run(r, 10, NULL, &clk, &a);
	CHECK(a.n_comparisons == 5, "one comparison per size: %zu", a.n_comparisons);
	CHECK(a.n_findings == 1 && strcmp(a.findings[0].id, "speedup_shrinks_with_size") == 0,
	      "the shrinking-speedup finding: %zu findings", a.n_findings);
	if (a.n_findings)
		CHECK(strstr(a.findings[0].message, "from 64MiB to 1GiB") != NULL,
		      "names the range: %s", a.findings[0].message);
	analysis_free(&a);

	/* Quiet: the delta grows with the base latency (a constant speedup). */
	for (size_t i = 0; i < 5; i++)
		for (size_t k = 0; k < r[2 * i + 1].n_samples; k++)
			r[2 * i + 1].samples_ns[k] = r[2 * i].samples_ns[k] / 1.4;
	analysis_run(r, 10, NULL, &clk, &a);
	CHECK(a.n_findings == 0, "no finding when the speedup holds: %s", a.n_findings ? a.findings[0].message : "");
	analysis_free(&a);
	fixture_free(r, 10);
}

/* Walk cycles: with walk_active the TLB part is measured, not assumed. */
static void test_walk_cycles(void)
{
	struct scenario s;
	struct analysis a;

	scenario_clean(&s);
	m_tlb_busy_counts(&s);
	/* 4k: 36 cycles of walk per access (10 ns at 3.6 GHz); 2m: none. */
	fixture_set_counter(&s.r[0], METRIC_WALK_ACTIVE, 36.0 * 1e8);
	fixture_set_counter(&s.r[1], METRIC_WALK_ACTIVE, 0);
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	CHECK(a.n_comparisons == 1 && a.comparisons[0].have_walk_cycles, "walk cycles used");
	CHECK_NEAR(a.comparisons[0].tlb_ns, 10.0, 1e-9);
	CHECK_NEAR(a.comparisons[0].unexplained_ns, a.comparisons[0].delta_ns - 10.0, 1e-9);
	CHECK(a.comparisons[0].cache_ns == 0, "LLC unchanged: no cache share");
	analysis_free(&a);
	/* LLC misses changed: the rest is cache. */
	fixture_set_counter(&s.r[0], METRIC_LLC_LOAD_MISSES, 0.5e8);
	fixture_set_counter(&s.r[1], METRIC_LLC_LOAD_MISSES, 0.2e8);
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	CHECK_NEAR(a.comparisons[0].cache_ns, a.comparisons[0].delta_ns - 10.0, 1e-9);
	CHECK(a.comparisons[0].unexplained_ns == 0, "nothing unexplained");
	analysis_free(&a);
	fixture_free(s.r, s.n);
}

/* The 256 MiB SKX counts without STLB hits, in a KVM guest: the parts exceed the delta, and the report says why. */
static void env_guest_skx(struct analysis *a, const struct phase_result *r)
{
	struct environment env;
	struct timing_calibration clk = { .clock_overhead_ns = 20, .clock_resolution_ns = 1, .core_clock_ghz = 3.9 };

	memset(&env, 0, sizeof(env));
	strcpy(env.hypervisor, "KVM");
	analysis_run(r, 2, &env, &clk, a);
	const struct comparison *c = &a->comparisons[0];
	CHECK_NEAR(c->unexplained_ns, 7.71 - 40.0 / 3.9, 1e-9);
	CHECK(c->adds_up == 0 && strstr(c->inconsistency, "exceed the delta by 2.55"), "%s", c->inconsistency);
	CHECK(strstr(c->cannot_see, "STLB hits were not counted") && strstr(c->cannot_see, "EPT"), "%s", c->cannot_see);
	for (size_t i = 0; i < a->n_checks; i++)
		if (strcmp(a->checks[i].id, "attribution_adds_up") == 0)
			CHECK(a->checks[i].status == CHECK_WARN, "attribution_adds_up warns: %s", a->checks[i].message);
	analysis_free(a);
}

/* Ten samples around m, ±w: enough for an interval of one allocation. */
static void spread10(double m, double w, double *out)
{
	static const double k[10] = { -1, 1, -0.5, 0.5, 0, -0.25, 0.25, -0.75, 0.75, 0 };

	for (size_t i = 0; i < 10; i++)
		out[i] = m + k[i] * w;
}

/* Per-access counts of one phase (iterations x samples accesses); cycles at its own counted clock. */
static void set_rates(struct phase_result *r, double ghz, double misses, double walk, double stlb, double llc)
{
	double n = (double)r->spec.iterations * (double)r->n_samples;

	fixture_set_counter(r, METRIC_CYCLES, r->timed_ns * ghz);
	fixture_set_counter(r, METRIC_DTLB_LOAD_MISSES, misses * n);
	if (walk >= 0)
		fixture_set_counter(r, METRIC_WALK_ACTIVE, walk * n);
	if (stlb >= 0)
		fixture_set_counter(r, METRIC_STLB_HITS, stlb * n);
	if (llc >= 0)
		fixture_set_counter(r, METRIC_LLC_LOAD_MISSES, llc * n);
}

static void skx_pair(struct phase_result *r, uint64_t mib, double ns4k, double ns2m, double w)
{
	double s4[10], s2[10];
	char n4[32], n2[32];

	spread10(ns4k, w, s4);
	spread10(ns2m, w, s2);
	snprintf(n4, sizeof(n4), "chase/4k/%lluM/r0", (unsigned long long)mib);
	snprintf(n2, sizeof(n2), "chase/2m/%lluM/r0", (unsigned long long)mib);
	fixture_phase(&r[0], n4, "4k", mib << 20, 2000000, s4, 10, 0, -1);
	fixture_phase(&r[1], n2, "2m", mib << 20, 2000000, s2, 10, 0, -1);
	for (int i = 0; i < 2; i++)
		snprintf(r[i].counter_info[METRIC_WALK_ACTIVE].source, sizeof(r[i].counter_info[0].source), "skx");
}

/*
 * The attribution reproduces published figures from counts derived from them
 * (issue 16): the cloud Xeon's 12.3 ns (48 cycles) per miss, SKX at 1 GiB with
 * ~70 walk cycles per miss, SKX at 256 MiB with the 2m phase hitting the STLB.
 * Latencies are the published size sweep's (DESIGN.md, test_size_sweep); the
 * walk, STLB and LLC rates are derived, not measured: no published perf stat
 * of this chase with walk_active and LLC misses was found.
 */
static void test_attribution_published(void)
{
	struct phase_result r[2];
	struct analysis a;
	struct timing_calibration clk = { .clock_overhead_ns = 20, .clock_resolution_ns = 1, .core_clock_ghz = 3.9 };
	const double x4 = 47.12, x2 = 34.85;

	/* Cloud Xeon, 128 MiB: 22,003,065 of 22 M accesses miss at 4k, 2,802 at 2m (perf stat, whole run). */
	fixture_phase(&r[0], "chase/4k/128M/r0", "4k", 128u << 20, 22000000, &x4, 1, 72486304, 22003065);
	fixture_phase(&r[1], "chase/2m/128M/r0", "2m", 128u << 20, 22000000, &x2, 1, 24745791, 2802);
	analysis_run(r, 2, NULL, &clk, &a);
	CHECK_NEAR(a.comparisons[0].ns_per_tlb_miss, 12.27, 0.01);
	CHECK_NEAR(a.comparisons[0].cycles_per_tlb_miss, 47.85, 0.05);
	CHECK(a.comparisons[0].adds_up == 1, "cloud Xeon adds up");
	analysis_free(&a);
	fixture_free(r, 2);

	/* SKX, 1 GiB: 70 walk cycles per miss at 4k, the 2m phase in the STLB, 5 % fewer LLC misses on 2m. */
	skx_pair(r, 1024, 137.01, 116.91, 0.6);
	set_rates(&r[0], 3.9, 0.99, 0.99 * 70, 0.0, 1.05);
	set_rates(&r[1], 3.9, 1e-4, 1e-4 * 70, 1.0, 1.00);
	analysis_run(r, 2, NULL, &clk, &a);
	const struct comparison *c = &a.comparisons[0];
	CHECK_NEAR(c->baseline_cycles_per_walk, 70.0, 1e-9);
	CHECK(c->clock_counted && fabs(c->baseline_clock_ghz - 3.9) < 1e-9, "own counted clock");
	CHECK_NEAR(c->stlb_ns, 9.0 / 3.9, 1e-9);
	CHECK_NEAR(c->tlb_ns, (0.99 * 70 - 1e-4 * 70 - 9.0) / 3.9, 1e-9);
	CHECK(c->llc_change && strcmp(c->llc_change, "changed") == 0, "5 %% fewer LLC misses is beyond the noise");
	CHECK(c->cache_ns > 4 && fabs(c->unexplained_ns) < 1e-9, "the rest is cache: %.2f", c->cache_ns);
	CHECK_NEAR(c->tlb_ns + c->cache_ns + c->unexplained_ns, c->delta_ns, 1e-9);
	CHECK_NEAR(c->ns_per_tlb_miss, c->tlb_ns / c->delta_tlb_misses_per_access, 1e-9);
	CHECK(c->adds_up == 1 && strstr(c->cannot_see, "overlapping walks"), "adds up: %s", c->cannot_see);
	analysis_free(&a);
	fixture_free(r, 2);

	/* SKX, 256 MiB: 40 walk cycles (10.26 ns) for a 7.71 ns delta; the 2m phase hits the STLB every access. */
	skx_pair(r, 256, 86.50, 78.79, 1.0);
	set_rates(&r[0], 3.9, 1.0, 40.0, 0.0, 1.0);
	set_rates(&r[1], 3.9, 0.0, 0.0, 1.0, 0.988);	/* and 1.2 % fewer LLC misses */
	analysis_run(r, 2, NULL, &clk, &a);
	c = &a.comparisons[0];
	CHECK_NEAR(c->tlb_ns, (40.0 - 9.0) / 3.9, 1e-9);
	CHECK(c->adds_up == 1 && c->unexplained_ns > -c->noise_ns && c->tlb_ns > 0,
	      "no negative part beyond the noise: unexplained %.2f, noise %.2f", c->unexplained_ns, c->noise_ns);
	CHECK(c->llc_change && strcmp(c->llc_change, "within_noise") == 0,
	      "a 1.2 %% LLC change (%.2f ns at most) within the noise (%.2f ns)", c->llc_cache_bound_ns, c->noise_ns);
	analysis_free(&a);
	/* Without the STLB hits the same counts give the issue's -2.54 ns, beyond the noise: said, and warned. */
	for (int i = 0; i < 2; i++)
		r[i].counter_info[METRIC_STLB_HITS].status = COUNTER_UNSUPPORTED;
	env_guest_skx(&a, r);
	fixture_free(r, 2);

	/* Zen (no walk cycles), LLC misses 5 % fewer on 2m: only what that change can cost is unexplained. */
	skx_pair(r, 1024, 137.01, 116.91, 0.6);
	set_rates(&r[0], 3.9, 0.99, -1, -1, 1.05);
	set_rates(&r[1], 3.9, 1e-4, -1, -1, 1.00);
	analysis_run(r, 2, NULL, &clk, &a);
	c = &a.comparisons[0];
	CHECK(!c->have_walk_cycles && c->unexplained_ns > 0 && c->unexplained_ns < c->delta_ns && c->tlb_ns > 0,
	      "Zen: not the whole delta unexplained (tlb %.2f, unexplained %.2f)", c->tlb_ns, c->unexplained_ns);
	CHECK_NEAR(c->unexplained_ns, c->llc_cache_bound_ns, 1e-9);
	analysis_free(&a);
	fixture_free(r, 2);
}

/* A packed control gives each phase its translation part and the summary states it. */
static void test_control(void)
{
	struct scenario s;
	struct analysis a;
	const double sc[] = { 30.0, 30.1, 29.9, 30.0, 30.0 };

	scenario_clean(&s);
	s.r[2] = s.r[1];
	s.r[1] = s.r[0];
	fixture_phase(&s.r[0], "chase/4k:packed/256M/r0", "4k", 4u << 20, 20000000, sc, 5, 0, -1);
	s.r[0].spec.stride_bytes = 64;
	s.r[0].spec.role = PHASE_ROLE_CONTROL;
	s.r[0].spec.controls_size_bytes = 256ull << 20;
	s.r[0].spec.controls_stride_bytes = 4096;
	s.n = 3;
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	CHECK(a.n_comparisons == 1, "the control is not compared as a page size: %zu", a.n_comparisons);
	CHECK(a.phases[1].has_control && a.phases[1].control == 0, "4k phase uses the control");
	CHECK_NEAR(a.phases[1].translation_ns, 50.0 - 30.0, 1e-9);
	/* No phase is proven walk-free (the L1 dTLB's 2 MiB entries are not known): the range, never one number. */
	CHECK(strstr(a.summary, "address translation is 16.0–20.0 of 50.0 ns per access at 4k (4k - 2m to 4k - packed "
				"control; no control proven)"), "summary: %s", a.summary);
	CHECK(strstr(a.summary, "1.47× faster than 4k (no interval"), "summary has the speedup: %s", a.summary);
	analysis_free(&a);
	fixture_free(s.r, s.n);
}

/* The default run's three phases at a size (packed control, 4k, larger pages), as the development VM measured. */
static void scenario_control(struct scenario *s, const char *big, double ctl_ns)
{
	const double sc[] = { ctl_ns, ctl_ns + 0.1, ctl_ns - 0.1, ctl_ns, ctl_ns };
	const double s4k[] = { 64.9, 65.0, 64.8, 64.9, 65.1 }, sbig[] = { 45.1, 45.2, 45.0, 45.1, 45.3 };
	char name[48];

	scenario_clean(s);
	fixture_free(s->r, s->n);
	fixture_phase(&s->r[0], "chase/4k:packed/256M/r0", "4k", 8u << 20, 20000000, sc, 5, 0, -1);
	s->r[0].spec.stride_bytes = 128;
	s->r[0].spec.role = PHASE_ROLE_CONTROL;
	s->r[0].spec.controls_size_bytes = 256ull << 20;
	s->r[0].spec.controls_stride_bytes = 4096;
	fixture_phase(&s->r[1], "chase/4k/256M/r0", "4k", 256ull << 20, 20000000, s4k, 5, 0, -1);
	snprintf(name, sizeof(name), "chase/%s/256M/r0", big);
	fixture_phase(&s->r[2], name, big, 256ull << 20, 20000000, sbig, 5, 0, -1);
	s->n = 3;
	s->env.tlb.l1d_2m_entries = 32;
	s->env.tlb.l1d_1g_entries = 8;
	s->env.tlb.l2d_2m_entries = 2048;
}

static const struct analysis_finding *find_finding(const struct analysis *a, const char *id)
{
	for (size_t i = 0; i < a->n_findings; i++)
		if (strcmp(a->findings[i].id, id) == 0)
			return &a->findings[i];
	return NULL;
}

/*
 * Colored and aligned side by side at 1 GiB, as the development VM measured
 * (colored 3-10 % slower): the finding gives each pair with its noise and
 * says neither layout is the truth; within the noise it says they agree.
 */
static void test_layout_effect(void)
{
	struct scenario s;
	struct analysis a;
	const double col[] = { 140.0, 141.0, 139.5, 140.2, 140.8 }, ali[] = { 131.0, 131.5, 130.8, 131.2, 130.9 };

	scenario_clean(&s);
	fixture_free(s.r, s.n);
	fixture_phase(&s.r[0], "chase/4k/1G/r0", "4k", 1ull << 30, 20000000, col, 5, 0, -1);
	fixture_phase(&s.r[1], "chase/4k:aligned/1G/r0", "4k", 1ull << 30, 20000000, ali, 5, 0, -1);
	s.r[1].spec.layout = LAYOUT_ALIGNED;
	s.n = 2;
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	const struct analysis_finding *f = find_finding(&a, "layout_changes_latency");
	CHECK(f && strstr(f->message, "the layout is part of the number: 4k at 1GiB: colored 140.2, aligned 131.0 ns "
				      "(+7.0 %") && strstr(f->message, "compete there with the page-table lines"),
	      "finding: %s", f ? f->message : "(none)");
	CHECK(a.n_comparisons == 0, "layouts are not compared as page sizes: %zu", a.n_comparisons);
	analysis_free(&a);
	for (size_t i = 0; i < 5; i++)
		s.r[1].samples_ns[i] = col[i] + 0.1;
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	f = find_finding(&a, "layout_changes_latency");
	CHECK(f && strstr(f->message, "read the same within their 95 % intervals"), "same: %s", f ? f->message : "");
	analysis_free(&a);
	fixture_free(s.r, s.n);

	/* Colored alone, its 4 MiB of lines and 512 KiB of page-table lines past a 1 MiB L2: the pass says so. */
	char msg[1024];
	scenario_clean(&s);
	CHECK(status_of(&s, "cache_set_aliasing", msg, sizeof(msg)) == CHECK_PASS &&
		      strstr(msg, "in chase/4k/256M/r0 its 4MiB of data lines and 512KiB of page-table lines exceed the "
				  "1MiB L2") && strstr(msg, "--layout colored,aligned measures both"),
	      "colored caveat: %s", msg);
	fixture_free(s.r, s.n);
}

/*
 * Under KVM, 2m pages that fit the L2 TLB still read 11 ns over their
 * control (the development VM at 256 MiB): a finding names nested paging and
 * what would confirm it. On bare metal, or within the noise, there is none;
 * with a 1g phase that reads the same, it says larger guest pages do not help.
 */
static void test_nested_paging(void)
{
	struct scenario s;
	struct analysis a;

	scenario_control(&s, "2m", 34.0);
	strcpy(s.env.hypervisor, "KVM");
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	const struct analysis_finding *f = find_finding(&a, "nested_paging_translation");
	CHECK(f && strstr(f->message, "under KVM, chase/2m/256M/r0 is still 11.1 ns per access (25 %) slower than its "
				      "packed control although its 128 huge pages fit the 2048-entry L2 TLB") &&
		      strstr(f->message, "To confirm: back the guest with huge pages on the host"),
	      "finding: %s", f ? f->message : "(none)");
	analysis_free(&a);
	fixture_free(s.r, s.n);

	scenario_control(&s, "2m", 34.0);
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	CHECK(!find_finding(&a, "nested_paging_translation"), "bare metal: no nested-paging finding");
	analysis_free(&a);
	fixture_free(s.r, s.n);

	scenario_control(&s, "2m", 45.1);	/* the control reads like 2m: nothing left over */
	strcpy(s.env.hypervisor, "KVM");
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	CHECK(!find_finding(&a, "nested_paging_translation"), "no excess over the control: no finding");
	analysis_free(&a);
	fixture_free(s.r, s.n);

	scenario_control(&s, "2m", 34.0);
	strcpy(s.env.hypervisor, "KVM");
	const double s1g[] = { 45.0, 45.2, 45.1, 44.9, 45.1 };
	fixture_phase(&s.r[3], "chase/1g/256M/r0", "1g", 256ull << 20, 20000000, s1g, 5, 0, -1);
	s.n = 4;
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	f = find_finding(&a, "nested_paging_translation");
	CHECK(f && strstr(f->message, "the 1g phase reads 45.1 ns, 0.0 ns from 2m: larger guest pages do not help"),
	      "with 1g: %s", f ? f->message : "(none)");
	analysis_free(&a);
	fixture_free(s.r, s.n);
}

/*
 * Huge pages that do not help in a VM: where the command's probe saw a trap per populated page (PVM here, 2m
 * as slow as 4k at 256 MiB), huge_pages_ineffective also names the hypervisor's own page tables; without it, not.
 */
static void test_huge_pages_shadow(void)
{
	struct scenario s;
	char msg[1024];

	scenario_clean(&s);
	m_no_gain(&s);
	strcpy(s.env.hypervisor, "bhyve");
	s.env.first_access = (struct env_first_access){ 4096, 4901.7 };
	CHECK(status_of(&s, "huge_pages_ineffective", msg, sizeof(msg)) == CHECK_WARN &&
		      strstr(msg, "cancels guest huge pages; here the hypervisor also keeps its own page tables (the first "
				  "write to a populated 4 KiB page took 4.9 µs, shadow_paging)"),
	      "shadow: %s", msg);
	s.env.first_access = (struct env_first_access){ 4096, 38.0 };
	CHECK(status_of(&s, "huge_pages_ineffective", msg, sizeof(msg)) == CHECK_WARN && !strstr(msg, "own page tables"),
	      "a TLB miss: %s", msg);
	fixture_free(s.r, s.n);
}

/* A phase's first-access writes: pages of them at ns each. */
static void set_first_access(struct phase_result *r, uint64_t pages, double ns)
{
	r->first_access_pages = pages;
	r->first_access_ns = ns * (double)pages;
}

/*
 * PVM here, in default runs: 5.4-6.4 µs a 4 KiB page on two threads at once
 * (chase/4k/256M), the packed control 248 ns in one run and 2.6 µs in
 * another, 21-34 ns per 4 KiB of THP. One 4 KiB phase from 1 µs, over 1024
 * pages or more, is the evidence; a cheap one beside it is named.
 */
static void test_shadow_paging(void)
{
	struct scenario s;
	struct analysis a;

	scenario_control(&s, "2m", 34.0);
	strcpy(s.env.hypervisor, "bhyve");
	set_first_access(&s.r[0], 36864, 247.7);
	set_first_access(&s.r[1], 131072, 6428.8);
	set_first_access(&s.r[2], 131072, 21.3);
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	const struct analysis_finding *f = find_finding(&a, "shadow_paging");
	CHECK(f && strstr(f->message, "took 6.4 µs (chase/4k/256M/r0, the median of 64-page chunks over 131072 pages)") &&
		      strstr(f->message, "the hypervisor (CPUID names bhyve) maps each page on its first use") &&
		      strstr(f->message, "; chase/4k:packed/256M/r0 read 248 ns, so not every page traps") &&
		      strstr(f->message, "on chase/2m/256M/r0's 2m pages it was 21 ns per 4 KiB, so those are mapped whole"),
	      "finding: %s", f ? f->message : "(none)");
	analysis_free(&a);

	set_first_access(&s.r[0], 4096, 2581.9);	/* both 4 KiB phases trap: the larger is named, nothing cheap */
	set_first_access(&s.r[1], 131072, 5421.5);
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	f = find_finding(&a, "shadow_paging");
	CHECK(f && strstr(f->message, "took 5.4 µs (chase/4k/256M/r0") && !strstr(f->message, "not every page"),
	      "both trap: %s", f ? f->message : "(none)");
	analysis_free(&a);

	set_first_access(&s.r[0], 4096, 180.0);	/* a TLB miss's cost on every 4 KiB phase: nothing to say */
	set_first_access(&s.r[1], 131072, 95.0);
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	CHECK(!find_finding(&a, "shadow_paging"), "a native first access: no finding");
	analysis_free(&a);

	set_first_access(&s.r[0], 0, 0);
	set_first_access(&s.r[1], 1000, 5421.5);	/* under 1024 pages */
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	CHECK(!find_finding(&a, "shadow_paging"), "too few pages: no finding");
	analysis_free(&a);

	set_first_access(&s.r[1], 65536, 999.0);
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	CHECK(!find_finding(&a, "shadow_paging"), "just under 1 µs: no finding");
	analysis_free(&a);

	set_first_access(&s.r[1], 65536, 1000.0);
	set_first_access(&s.r[2], 0, 0);
	s.env.hypervisor[0] = '\0';
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	f = find_finding(&a, "shadow_paging");
	CHECK(f && strstr(f->message, "took 1.0 µs (chase/4k/256M/r0, the median of 64-page chunks over 65536 pages), where") &&
		      strstr(f->message, "something below this kernel (CPUID names no hypervisor)") && !strstr(f->message, "mapped whole"),
	      "at 1 µs, no hypervisor named: %s", f ? f->message : "(none)");
	analysis_free(&a);
	fixture_free(s.r, s.n);

	/*
	 * The page-fault workload's anon_prefault case times the same write: 5.4 µs
	 * a page on 4 KiB (this PVM guest, 8 MiB, 2 processes), 24 ns on THP; its
	 * anon_cold case (a fault each) is no evidence, however slow.
	 */
	const double pre4k[] = { 5432.7, 5440.1, 5420.3, 5501.0 }, pre2m[] = { 24.0, 23.8, 24.4, 24.1 };
	const double cold[] = { 11362.3, 11340.0, 11401.2, 11388.8 };
	scenario_clean(&s);
	fixture_free(s.r, s.n);
	fixture_phase(&s.r[0], "pagefault/4k/8M/anon_cold/r0", "4k", 8u << 20, 2048, cold, 4, 0, -1);
	fixture_phase(&s.r[1], "pagefault/4k/8M/anon_prefault/r0", "4k", 8u << 20, 2048, pre4k, 4, 0, -1);
	fixture_phase(&s.r[2], "pagefault/2m/8M/anon_prefault/r0", "2m", 8u << 20, 2048, pre2m, 4, 0, -1);
	s.n = 3;
	for (size_t i = 0; i < s.n; i++) {
		s.r[i].spec.workload = workload_find("pagefault");
		s.r[i].spec.fault_case = i ? FAULT_ANON_PREFAULT : FAULT_ANON_COLD;
	}
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	f = find_finding(&a, "shadow_paging");
	CHECK(f && strstr(f->message, "took 5.4 µs (pagefault/4k/8M/anon_prefault/r0, the median of its timed touches over "
				      "8192 pages)") &&
		      strstr(f->message, "on pagefault/2m/8M/anon_prefault/r0's 2m pages it was 24 ns per 4 KiB"),
	      "anon_prefault: %s", f ? f->message : "(none)");
	analysis_free(&a);
	s.r[1].spec.fault_case = FAULT_ANON_COLD;	/* faults only: nothing says what a populated page's write costs */
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	CHECK(!find_finding(&a, "shadow_paging"), "anon_cold is no evidence");
	analysis_free(&a);

	/* The command's own probe (environment.first_access, 16 MiB on one thread) is evidence where no phase is. */
	s.env.first_access = (struct env_first_access){ 4096, 4993.0 };
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	f = find_finding(&a, "shadow_paging");
	CHECK(f && strstr(f->message, "took 5.0 µs (tlbprof's probe before measuring, the median of 64-page chunks over "
				      "4096 pages)"),
	      "probe: %s", f ? f->message : "(none)");
	analysis_free(&a);
	s.env.first_access = (struct env_first_access){ 4096, 61.0 };	/* a TLB miss: cheap beside a trapping phase */
	s.r[1].spec.fault_case = FAULT_ANON_PREFAULT;
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	f = find_finding(&a, "shadow_paging");
	CHECK(f && strstr(f->message, "took 5.4 µs (pagefault/4k/8M/anon_prefault/r0") &&
		      strstr(f->message, "; tlbprof's probe before measuring read 61 ns, so not every page traps"),
	      "probe cheap, phase trapping: %s", f ? f->message : "(none)");
	analysis_free(&a);
	s.env.first_access = (struct env_first_access){ 1000, 4993.0 };	/* under 1024 pages: no evidence */
	s.r[1].spec.fault_case = FAULT_ANON_COLD;
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	CHECK(!find_finding(&a, "shadow_paging"), "a probe of 1000 pages is no evidence");
	analysis_free(&a);
	fixture_free(s.r, s.n);
}

/*
 * The translation share: a single number only where a phase at the size is
 * proven walk-free (its dTLB misses, or on bare metal its pages within the
 * L1 dTLB with the backing verified), else the range from 4k minus the
 * largest pages (they still translate) to 4k minus the packed control
 * (which caches better than lone lines).
 */
static void test_translation_share(void)
{
	struct scenario s;
	struct analysis a;

	/* Under KVM: 2m still translates at the host's page size, so a range (the development VM's 256 MiB figures). */
	scenario_control(&s, "2m", 34.0);
	strcpy(s.env.hypervisor, "KVM");
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	const struct translation_share *t = a.n_comparisons ? &a.comparisons[0].translation : NULL;
	CHECK(t && t->known && !t->proven && t->free_phase == SIZE_MAX, "KVM: a range, nothing proven");
	if (t) {
		CHECK_NEAR(t->lo_ns, 64.9 - 45.1, 1e-9);
		CHECK_NEAR(t->hi_ns, 64.9 - 34.0, 1e-9);
		CHECK(strcmp(t->lo_basis, "2m") == 0 && strcmp(t->hi_basis, "packed control") == 0, "bases %s, %s",
		      t->lo_basis, t->hi_basis);
		CHECK(strstr(t->evidence, "under KVM a guest page is translated at the host's page size"), "why: %s",
		      t->evidence);
	}
	CHECK(strstr(a.summary, "address translation is 19.8–30.9 of 64.9 ns per access at 4k"), "summary: %s",
	      a.summary);
	analysis_free(&a);
	fixture_free(s.r, s.n);

	/* Bare metal, one verified 1 GiB page within the 8-entry L1 dTLB: proven, one number, the control judged. */
	scenario_control(&s, "1g", 34.0);
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	t = a.n_comparisons ? &a.comparisons[0].translation : NULL;
	CHECK(t && t->proven && t->free_phase == 2, "bare metal 1g: proven");
	if (t) {
		CHECK_NEAR(t->lo_ns, 64.9 - 45.1, 1e-9);
		CHECK_NEAR(t->hi_ns, t->lo_ns, 0);
		CHECK_NEAR(t->control_vs_free_ns, 34.0 - 45.1, 1e-9);
		CHECK(strstr(t->evidence, "1 page fits the 8-entry L1 dTLB for its page size;") && strstr(t->evidence, "11.1 ns (25 %) faster"),
		      "evidence: %s", t->evidence);
	}
	CHECK(strstr(a.summary, "address translation is 19.8 of 64.9 ns per access at 4k (4k - 1g, walk-free)"),
	      "summary: %s", a.summary);
	analysis_free(&a);
	fixture_free(s.r, s.n);

	/* The same 1g phase, its backing not verified: no proof. */
	scenario_control(&s, "1g", 34.0);
	s.r[2].backing.huge_fraction = 0.5;
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	t = a.n_comparisons ? &a.comparisons[0].translation : NULL;
	CHECK(t && !t->proven && strstr(t->evidence, "not verified"), "unverified backing proves nothing: %s",
	      t ? t->evidence : "");
	analysis_free(&a);
	fixture_free(s.r, s.n);

	/* dTLB counts prove a phase walk-free even in a VM (0.0001 misses per access). */
	scenario_control(&s, "2m", 34.0);
	strcpy(s.env.hypervisor, "KVM");
	for (size_t i = 0; i < 3; i++)
		fixture_set_counter(&s.r[i], METRIC_DTLB_LOAD_MISSES, i == 2 ? 1e4 : 5e7);
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	t = a.n_comparisons ? &a.comparisons[0].translation : NULL;
	CHECK(t && t->proven && strstr(t->evidence, "0.0001 dTLB misses per access"), "counted walk-free: %s",
	      t ? t->evidence : "");
	analysis_free(&a);
	fixture_free(s.r, s.n);

	/* A control slower than the larger pages: the estimates swap ends, the range stays ordered. */
	scenario_control(&s, "2m", 50.0);
	strcpy(s.env.hypervisor, "KVM");
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	t = a.n_comparisons ? &a.comparisons[0].translation : NULL;
	CHECK(t && t->lo_ns < t->hi_ns && strcmp(t->lo_basis, "packed control") == 0, "ordered range");
	analysis_free(&a);
	fixture_free(s.r, s.n);

	/* Larger pages that read slower (4k - 2m < 0): the low end is 0, never a negative translation. */
	scenario_control(&s, "2m", 34.0);
	strcpy(s.env.hypervisor, "KVM");
	for (size_t i = 0; i < s.r[2].n_samples; i++)
		s.r[2].samples_ns[i] += 25;	/* 2m at ~70 ns against 4k at 64.9 */
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	t = a.n_comparisons ? &a.comparisons[0].translation : NULL;
	CHECK(t && t->lo_ns == 0 && t->hi_ns > 30 && strstr(t->evidence, "the low end is 0"), "clamped: %g..%g %s",
	      t ? t->lo_ns : -1, t ? t->hi_ns : -1, t ? t->evidence : "");
	analysis_free(&a);
	fixture_free(s.r, s.n);

	/* No control: what the larger pages remove, not a share. */
	scenario_clean(&s);
	strcpy(s.env.hypervisor, "KVM");
	analysis_run(s.r, s.n, &s.env, &s.clk, &a);
	t = a.n_comparisons ? &a.comparisons[0].translation : NULL;
	CHECK(t && t->known && !isfinite(t->hi_ns), "no control: only the low end");
	CHECK(strstr(a.summary, "2m pages remove 16.0 of 50.0 ns per access") && !strstr(a.summary, "translation is"),
	      "summary: %s", a.summary);
	analysis_free(&a);
	fixture_free(s.r, s.n);
}

/* A stride sweep: each step labelled, the TLB step in ns and cycles, dTLB rates where counted. */
static void test_stride_steps(void)
{
	static const struct {
		uint64_t stride;
		double ns;
		double misses;	/* per access over 1e6 accesses */
	} sweep[] = { { 8, 1.3, 0.0 }, { 64, 4.7, 0.02 }, { 512, 5.9, 0.12 }, { 4096, 8.9, 0.98 }, { 8192, 9.1, 0.99 } };
	static const char *const labels[] = { "cache", "cache", "tlb", "flat" };
	struct phase_result r[5];
	struct analysis a;
	struct timing_calibration clk = { .clock_overhead_ns = 20, .clock_resolution_ns = 1, .core_clock_ghz = 2.0 };

	for (size_t i = 0; i < 5; i++) {
		char name[48];
		snprintf(name, sizeof(name), "stride/4k/64M/s%llu/r0", (unsigned long long)sweep[i].stride);
		fixture_phase(&r[i], name, "4k", 64u << 20, 1000000, &sweep[i].ns, 1, 1e6, sweep[i].misses * 1e6);
		r[i].spec.workload = workload_find("stride");
		r[i].spec.stride_bytes = sweep[i].stride;
	}
	analysis_run(r, 5, NULL, &clk, &a);
	CHECK(a.n_stride_steps == 4, "four steps: %zu", a.n_stride_steps);
	for (size_t i = 0; i < a.n_stride_steps && i < 4; i++) {
		const struct stride_step *st = &a.stride_steps[i];
		CHECK(st->from == i && st->to == i + 1, "step %zu in stride order", i);
		CHECK(strcmp(st->label, labels[i]) == 0, "step %zu: %s, want %s", i, st->label, labels[i]);
		CHECK_NEAR(st->delta_ns, sweep[i + 1].ns - sweep[i].ns, 1e-9);
		CHECK_NEAR(st->delta_cycles, 2.0 * (sweep[i + 1].ns - sweep[i].ns), 1e-9);
		CHECK(st->have_misses && fabs(st->misses_to - sweep[i + 1].misses) < 1e-9, "miss rates");
	}
	CHECK(strstr(a.summary, "the TLB step (512B -> 4KB stride) adds 3.00 ns (6.0 cycles)"), "summary: %s",
	      a.summary);
	const struct analysis_check *tf = find_check(&a, "too_fast");
	CHECK(tf && tf->status == CHECK_SKIP, "independent strided loads are not a latency: too_fast skips");
	analysis_free(&a);
	/* On 2 MiB pages there is no TLB step between 512 B and 4 KiB: many accesses share each page. */
	for (size_t i = 0; i < 5; i++) {
		page_request_parse("2m", &r[i].spec.page);
		r[i].backing.kind = PAGE_THP;
	}
	analysis_run(r, 5, NULL, &clk, &a);
	CHECK(a.n_stride_steps == 4 && strcmp(a.stride_steps[2].label, "within-page") == 0 &&
		      strcmp(a.stride_steps[3].label, "within-page") == 0, "huge pages: within-page steps");
	CHECK(!strstr(a.summary, "TLB step"), "no TLB step claimed on huge pages: %s", a.summary);
	analysis_free(&a);
	fixture_free(r, 5);
}

/*
 * A stride sweep on both page sizes, as measured on the development VM at
 * 64 MiB: 512 B -> 4 KiB costs +6.12 ns on 4k and +2.87 ns on 2m pages,
 * where there is no TLB step, so only 3.25 ns of it is translation; and the
 * 64 -> 512 B "cache" step falls by 0.37 ns, which is no cache step at all.
 */
static void test_stride_huge_twin(void)
{
	static const struct {
		const char *page;
		uint64_t stride;
		double ns;
	} sweep[] = { { "4k", 64, 5.00 }, { "4k", 512, 4.63 }, { "4k", 4096, 10.75 },
		      { "2m", 64, 5.00 }, { "2m", 512, 4.70 }, { "2m", 4096, 7.57 } };
	struct phase_result r[6];
	struct analysis a;
	struct timing_calibration clk = { .clock_overhead_ns = 20, .clock_resolution_ns = 1, .core_clock_ghz = 2.0 };

	for (size_t i = 0; i < 6; i++) {
		char name[48];
		const double v[] = { sweep[i].ns, sweep[i].ns + 0.01, sweep[i].ns - 0.01, sweep[i].ns, sweep[i].ns + 0.02,
				     sweep[i].ns - 0.02, sweep[i].ns };
		snprintf(name, sizeof(name), "stride/%s/64M/s%llu/r0", sweep[i].page, (unsigned long long)sweep[i].stride);
		fixture_phase(&r[i], name, sweep[i].page, 64u << 20, 1000000, v, 7, 0, -1);
		r[i].spec.workload = workload_find("stride");
		r[i].spec.stride_bytes = sweep[i].stride;
	}
	analysis_run(r, 6, NULL, &clk, &a);
	CHECK(a.n_stride_steps == 4, "four steps: %zu", a.n_stride_steps);
	if (a.n_stride_steps == 4) {
		CHECK(strcmp(a.stride_steps[0].label, "none") == 0, "a falling cache step is none: %s",
		      a.stride_steps[0].label);
		CHECK(strcmp(a.stride_steps[1].label, "tlb") == 0 && a.stride_steps[1].huge == 3, "4k: tlb, twin 2m");
		CHECK_NEAR(a.stride_steps[1].tlb_ns, 6.12 - 2.87, 1e-9);
		CHECK(strcmp(a.stride_steps[3].label, "within-page") == 0, "2m: within-page");
		CHECK(!isfinite(a.stride_steps[3].tlb_ns), "no translation part on huge pages");
	}
	CHECK(strstr(a.summary, "the TLB step (512B -> 4KB stride) adds 3.25 ns (6.5 cycles) of translation per "
				"access: 6.12 ns on 4k less the +2.87 ns the same step costs on 2m pages"), "summary: %s", a.summary);
	analysis_free(&a);

	/* Without the 2m sweep the split is not known, and the summary says so. */
	analysis_run(r, 3, NULL, &clk, &a);
	CHECK(a.n_stride_steps == 2 && !isfinite(a.stride_steps[1].tlb_ns), "no twin: no split");
	CHECK(strstr(a.summary, "adds 6.12 ns (12.2 cycles) per access, of which the translation part could not be told"),
	      "summary: %s", a.summary);
	analysis_free(&a);
	fixture_free(r, 6);
}

/* A tlbsize curve with a 64-entry L1 dTLB and a 2048-entry STLB: knees matched to CPUID. */
static void test_tlbsize_knees(void)
{
	static const double grid[] = { 1, 2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 56, 60, 64, 68, 72, 80, 96, 128, 181,
				       256, 362, 512, 724, 1024, 1448, 1800, 2048, 2200, 2600, 2896, 4096, 5793, 8192 };
	enum { N = sizeof(grid) / sizeof(grid[0]) };
	struct phase_result r[N];
	struct analysis a;
	struct environment env = { .tlb = { .l1d_4k_entries = 64, .l2d_4k_entries = 2048 }, .turbo = -1 };
	struct timing_calibration clk = { .clock_overhead_ns = 20, .clock_resolution_ns = 1, .core_clock_ghz = 3 };

	for (size_t i = 0; i < N; i++) {
		double x = grid[i], ns = x <= 64 ? 1.5 : x <= 2048 ? 4.0 : 25.0, s[3] = { ns * 0.99, ns, ns * 1.01 };
		char name[48];
		snprintf(name, sizeof(name), "tlbsize/4k/%.0fp/r0", x);
		fixture_phase(&r[i], name, "4k", (uint64_t)x * 4096, 200000, s, 3, 0, -1);
		r[i].spec.workload = workload_find("tlbsize");
		r[i].slots = (uint64_t)x;
	}
	analysis_run(r, N, &env, &clk, &a);
	CHECK(a.n_knees == 2, "two knees: %zu", a.n_knees);
	if (a.n_knees == 2) {
		CHECK(a.knees[0].matches && strcmp(a.knees[0].cpuid_level, "l1d_4k_entries") == 0, "L1 matched: %s %.0f",
		      a.knees[0].cpuid_level, a.knees[0].knee.x_before);
		CHECK(a.knees[1].matches && strcmp(a.knees[1].cpuid_level, "l2d_4k_entries") == 0, "STLB matched: %s %.0f",
		      a.knees[1].cpuid_level, a.knees[1].knee.x_before);
	}
	const struct analysis_check *g = find_check(&a, "tlb_geometry");
	CHECK(g && g->status == CHECK_PASS, "geometry confirmed: %s", g ? g->message : "missing");
	CHECK(strstr(a.summary, "knees at 64..68 pages (1.5 -> 4.0 ns, L1 dTLB)") &&
		      strstr(a.summary, "pages (4.0 -> 25.0 ns, L2 TLB)"),
	      "summary names the levels: %s", a.summary);
	analysis_free(&a);

	/* A VM whose CPUID is silent: the same knees, and a warning that nothing confirms them. */
	env.tlb = (struct env_tlb){ 0 };
	strcpy(env.hypervisor, "KVM");
	analysis_run(r, N, &env, &clk, &a);
	g = find_check(&a, "tlb_geometry");
	CHECK(a.n_knees == 2 && !a.knees[0].cpuid_level && a.knees[0].kind == KNEE_UNKNOWN &&
		      strstr(a.knees[0].evidence, "could not tell"), "knees without CPUID: unknown (%s)",
	      a.n_knees ? a.knees[0].evidence : "");
	CHECK(g && g->status == CHECK_WARN && strstr(g->message, "VM"), "silent CPUID warns: %s", g ? g->message : "");
	analysis_free(&a);
	/* An implausible one (L2 smaller than L1). */
	env.tlb = (struct env_tlb){ .l1d_4k_entries = 2048, .l2d_4k_entries = 64 };
	analysis_run(r, N, &env, &clk, &a);
	g = find_check(&a, "tlb_geometry");
	CHECK(g && g->status == CHECK_WARN && strstr(g->message, "implausible"), "implausible: %s", g ? g->message : "");
	analysis_free(&a);
	fixture_free(r, N);
}

/* A tlbsize sweep over grid[0..n) pages reading levels[k] ns up to edges[k] pages, and levels[3] past them. */
static void step_curve(struct phase_result *r, const double *grid, size_t n, const double edges[3],
		       const double levels[4])
{
	for (size_t i = 0; i < n; i++) {
		double x = grid[i], ns = x <= edges[0] ? levels[0] : x <= edges[1] ? levels[1] : x <= edges[2] ? levels[2]
													  : levels[3];
		double s[3] = { ns * 0.99, ns, ns * 1.01 };
		char name[48];
		snprintf(name, sizeof(name), "tlbsize/4k/%.0fp/r0", x);
		fixture_phase(&r[i], name, "4k", (uint64_t)x * 4096, 200000, s, 3, 0, -1);
		r[i].spec.workload = workload_find("tlbsize");
		r[i].slots = (uint64_t)x;
	}
}

/*
 * Which knee is which, on a curve with an L1 dTLB (64), the L1d filling
 * (48 KiB: 683 pages of one line and 1/8 page-table line) and an STLB (2048),
 * in a VM whose CPUID is silent: the documented core's TLB and the sysfs
 * caches label them, and the check says which row was used.
 */
static void test_knee_labels(void)
{
	static const double grid[] = { 1, 2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 56, 64, 72, 81, 96, 128, 181, 256,
				       362, 456, 512, 575, 645, 724, 813, 912, 1024, 1290, 1448, 1625, 1825, 2048,
				       2299, 2580, 2896, 3251, 4096, 5793, 8192 };
	enum { N = sizeof(grid) / sizeof(grid[0]) };
	struct phase_result r[N];
	struct analysis a;
	struct environment env = { .turbo = -1, .hypervisor = "KVM" };
	struct timing_calibration clk = { .clock_overhead_ns = 20, .clock_resolution_ns = 1, .core_clock_ghz = 3 };

	env.documented_tlb = (struct env_tlb){ .l1d_4k_entries = 64, .l2d_4k_entries = 2048, .source = "documented: Sunny Cove" };
	strcpy(env.core_name, "Sunny Cove");
	env.caches[0] = (struct env_cache){ .level = 1, .type = "Data", .size_bytes = 48 << 10, .line_bytes = 64 };
	env.caches[1] = (struct env_cache){ .level = 2, .type = "Unified", .size_bytes = 1280 << 10, .line_bytes = 64 };
	env.n_caches = 2;
	static const double edges[3] = { 64, 683, 2048 }, levels[4] = { 1.5, 4.0, 7.5, 22.0 };
	step_curve(r, grid, N, edges, levels);
	analysis_run(r, N, &env, &clk, &a);
	CHECK(a.n_knees == 3, "three knees: %zu", a.n_knees);
	if (a.n_knees == 3) {
		CHECK(a.knees[0].kind == KNEE_TLB && strcmp(a.knees[0].tlb.level, "L1 dTLB") == 0 &&
			      strstr(a.knees[0].evidence, "documented: Sunny Cove"),
		      "64: L1 dTLB (%s)", a.knees[0].evidence);
		CHECK(a.knees[1].kind == KNEE_CACHE && strcmp(a.knees[1].cache.level, "L1d") == 0 &&
			      strstr(a.knees[1].evidence, "48 KiB L1d (full at 683 pages)"),
		      "645: the L1d (%s)", a.knees[1].evidence);
		CHECK(a.knees[2].kind == KNEE_TLB && strcmp(a.knees[2].tlb.level, "L2 TLB") == 0,
		      "2048: the L2 TLB (%s)", a.knees[2].evidence);
		CHECK(!a.knees[0].cpuid_level, "nothing claimed of CPUID");
	}
	const struct analysis_check *g = find_check(&a, "tlb_geometry");
	CHECK(g && g->status == CHECK_PASS && strstr(g->message, "Sunny Cove row") &&
		      strstr(g->message, "2 tlb, 1 cache, 0 unknown of 3"),
	      "geometry names the row: %s", g ? g->message : "missing");
	CHECK(strstr(a.summary, "L1d cache)"), "summary: %s", a.summary);
	analysis_free(&a);

	/* An L2 TLB as large as the L1d fills: both fit the knee near 683, so it is unknown, and says both. */
	env.documented_tlb.l2d_4k_entries = 680;
	analysis_run(r, N, &env, &clk, &a);
	CHECK(a.n_knees == 3 && a.knees[1].kind == KNEE_UNKNOWN && strstr(a.knees[1].evidence, "both"),
	      "both fit: %s", a.n_knees == 3 ? a.knees[1].evidence : "");
	analysis_free(&a);

	/* No TLB from anywhere: the cache knee is still a cache, the others could not be told. */
	env.documented_tlb = (struct env_tlb){ 0 };
	env.core_name[0] = 0;
	analysis_run(r, N, &env, &clk, &a);
	CHECK(a.n_knees == 3 && a.knees[0].kind == KNEE_UNKNOWN && a.knees[1].kind == KNEE_CACHE &&
		      strstr(a.knees[0].evidence, "the TLB is unknown"),
	      "no TLB: %s", a.n_knees == 3 ? a.knees[0].evidence : "");
	analysis_free(&a);
	fixture_free(r, N);
}

/*
 * A VM whose CPUID invents an L2 TLB (bhyve on a Zen 5 host: L1 96, L2 128 entries, where AMD's guide says
 * 4096): the documented row is expected and labels the rise at 4096; on bare metal CPUID's word stands.
 */
static void test_tlb_cpuid_disagrees(void)
{
	static const double grid[] = { 1, 2, 4, 8, 16, 32, 64, 81, 96, 128, 181, 256, 362, 456, 512, 575, 645, 683, 724,
				       813, 912, 1024, 1448, 2048, 2896, 3251, 4096, 4871, 5793, 8192, 11585, 16384 };
	enum { N = sizeof(grid) / sizeof(grid[0]) };
	struct phase_result r[N];
	struct analysis a;
	struct environment env = { .turbo = -1, .hypervisor = "bhyve" };
	struct timing_calibration clk = { .clock_overhead_ns = 20, .clock_resolution_ns = 1, .core_clock_ghz = 3 };

	env.tlb = (struct env_tlb){ .l1d_4k_entries = 96, .l2d_4k_entries = 128, .source = "cpuid 0x80000005/6" };
	env.documented_tlb = (struct env_tlb){ .l1d_4k_entries = 96, .l2d_4k_entries = 4096, .source = "documented: Zen 5" };
	strcpy(env.core_name, "Zen 5");
	/* Nor does it report caches (leaf 0x8000001d zeroed, no sysfs sizes): the row's 48 KiB L1d labels its knee. */
	for (const struct core_row *row = cores_table; row->name && !env.core.row; row++)
		if (strcmp(row->name, "Zen 5") == 0)
			env.core.row = row;
	CHECK(environment_tlb_disagrees(&env) && environment_expected_tlb(&env) == &env.documented_tlb,
	      "bhyve: the row is expected");
	static const double edges[3] = { 96, 683, 4096 }, levels[4] = { 1.1, 3.3, 6.5, 45.0 };
	step_curve(r, grid, N, edges, levels);
	analysis_run(r, N, &env, &clk, &a);
	CHECK(a.n_knees == 3 && a.knees[2].kind == KNEE_TLB && strcmp(a.knees[2].tlb.level, "L2 TLB") == 0 &&
		      strstr(a.knees[2].evidence, "4096-entry L2 TLB (documented: Zen 5)"),
	      "4096: the row's L2 TLB (%s)", a.n_knees == 3 ? a.knees[2].evidence : "");
	CHECK(a.n_knees == 3 && a.knees[1].kind == KNEE_CACHE && strcmp(a.knees[1].cache.level, "L1d") == 0 &&
		      strstr(a.knees[1].evidence, "the 48 KiB L1d (documented: Zen 5; full at 683 pages)"),
	      "683: the row's L1d (%s)", a.n_knees == 3 ? a.knees[1].evidence : "");
	const struct analysis_check *g = find_check(&a, "tlb_geometry");
	CHECK(g && g->status == CHECK_PASS && strstr(g->message, "CPUID under bhyve reports L1 96, L2 128 entries, the "
		      "documented Zen 5 row L1 96, L2 4096") && strstr(g->message, "2 tlb, 1 cache, 0 unknown of 3"),
	      "geometry: %s", g ? g->message : "missing");
	analysis_free(&a);

	/* Within ENV_TLB_AGREE (3500 against 4096): CPUID's, as on bare metal with the same numbers. */
	env.tlb.l2d_4k_entries = 3500;
	CHECK(!environment_tlb_disagrees(&env) && environment_expected_tlb(&env) == &env.tlb, "3500: CPUID's");
	env.tlb.l2d_4k_entries = 128;
	env.hypervisor[0] = 0;
	CHECK(!environment_tlb_disagrees(&env) && environment_expected_tlb(&env) == &env.tlb, "bare metal: CPUID's");
	fixture_free(r, N);
}

/* The split between and within allocations, and what unstable and warmup_insufficient make of it. */
static void test_allocations(void)
{
	/* Three allocations: medians 40, 50, 60 (between: 50 %), each tight within (about 1 %). */
	struct phase_result r;
	struct analysis a;
	const double s9[9] = { 39.6, 40, 40.4, 49.5, 50, 50.5, 59.4, 60, 60.6 };
	unsigned alloc[9] = { 0, 0, 0, 1, 1, 1, 2, 2, 2 };
	fixture_phase(&r, "chase/4k/256M/r0", "4k", 256ull << 20, 1000000, s9, 9, 0, -1);
	r.sample_alloc = alloc;
	analysis_run(&r, 1, NULL, NULL, &a);
	CHECK(a.phases[0].allocations == 3, "three allocations");
	CHECK_NEAR(a.phases[0].between_allocations, 20.0 / 50.0, 1e-12);
	CHECK(a.phases[0].within_allocation < 0.011, "within: %g", a.phases[0].within_allocation);
	const struct analysis_check *u = find_check(&a, "unstable");
	CHECK(u && u->status == CHECK_WARN && strstr(u->message, "physical page placement"),
	      "placement named as the cause: %s", u ? u->message : "");
	/* Allocations 50 % apart, but no allocation's first sample is slow: placement, no warm-up. */
	const struct analysis_check *wu = find_check(&a, "warmup_insufficient");
	CHECK(wu && wu->status == CHECK_PASS, "a slow allocation is not a cold start: %s", wu ? wu->message : "");
	analysis_free(&a);
	/* One noisy first sample among three allocations is not a cold start ... */
	const double noisy[9] = { 39.6, 40, 40.4, 60, 50, 50.5, 59.4, 60, 60.6 };
	memcpy(r.samples_ns, noisy, sizeof(noisy));
	analysis_run(&r, 1, NULL, NULL, &a);
	wu = find_check(&a, "warmup_insufficient");
	CHECK(wu && wu->status == CHECK_PASS, "one slow first sample of three: %s", wu ? wu->message : "");
	analysis_free(&a);
	/* ... one that repeats on most allocations is, each against its own allocation: +19 %, +19 %, -1.5 %. */
	const double cold[9] = { 48, 40, 40.4, 60, 50, 50.5, 59.4, 60, 60.6 };
	memcpy(r.samples_ns, cold, sizeof(cold));
	analysis_run(&r, 1, NULL, NULL, &a);
	wu = find_check(&a, "warmup_insufficient");
	CHECK(wu && wu->status == CHECK_WARN && strstr(wu->message, "first sample of an allocation is 19 %"),
	      "cold starts on two allocations of three: %s", wu ? wu->message : "");
	analysis_free(&a);
	r.sample_alloc = NULL;
	fixture_free(&r, 1);
}

/*
 * The table of checks: every entry has an id (once), a function, the call
 * that adds it and a one-line doc; the report lists the checks in the
 * table's order (analysis_run()'s, then tlbprof run's two).
 */
static void test_check_table(void)
{
	struct scenario s;
	struct analysis a;
	size_t by_run = 0;

	for (size_t i = 0; i < analysis_n_checks; i++) {
		const struct analysis_check_def *d = &analysis_checks[i];
		CHECK(d->id && *d->id, "entry %zu has an id", i);
		CHECK(d->fn, "%s has a function", d->id);
		CHECK(d->by <= ANALYSIS_CHECK_BY_UNMARKED, "%s is added by analysis_run or tlbprof run", d->id);
		CHECK(d->doc && *d->doc && !strchr(d->doc, '\n') && strlen(d->doc) <= 100, "%s has a one-line doc",
		      d->id);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(analysis_checks[j].id, d->id) != 0, "%s is in the table once", d->id);
		by_run += d->by == ANALYSIS_CHECK_BY_RUN;
	}

	const struct analysis_build build = { .binary = "bench", .opt_level = "-O2", .source = "gcc-command-line" };
	scenario_clean(&s);
	CHECK(analysis_run(s.r, s.n, &s.env, &s.clk, &a) == 0, "analysis runs");
	CHECK(a.n_checks == by_run, "analysis_run adds %zu checks, the table has %zu", a.n_checks, by_run);
	CHECK(analysis_check_build(&a, s.r, s.n, &build) == 0, "the build check is added");
	CHECK(analysis_check_markers(&a, s.r, s.n, 3, 0, NULL, NULL) == 0, "the marker check is added");
	const struct sample_profile none = { 0 };	/* watched nothing: each check says it could not tell */
	CHECK(analysis_check_unmarked(&a, s.r, s.n, NULL, &none) == 0, "the unmarked checks are added");
	CHECK(a.n_checks == analysis_n_checks, "%zu checks in the report, %zu in the table", a.n_checks,
	      analysis_n_checks);
	for (size_t i = 0; i < a.n_checks && i < analysis_n_checks; i++)
		CHECK(strcmp(a.checks[i].id, analysis_checks[i].id) == 0, "check %zu of the report is %s, the table's %s",
		      i, a.checks[i].id, analysis_checks[i].id);
	analysis_free(&a);
	fixture_free(s.r, s.n);
}

/* The man page's CHECKS section (each ".TP" then ".I id") lists the table's ids, in the table's order. */
static void test_man_checks(void)
{
	const char *dir = getenv("TLBPROF_TEST_SOURCE_DIR");
	char path[4096], line[512];
	bool in_checks = false, after_tp = false;
	size_t k = 0;

	CHECK(dir, "TLBPROF_TEST_SOURCE_DIR names the source tree (meson test sets it)");
	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/man/tlbprof.1", dir);
	FILE *f = fopen(path, "r");
	CHECK(f, "%s opens", path);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, ".SH", 3) == 0) {
			in_checks = strcmp(line, ".SH CHECKS") == 0;
			continue;
		}
		if (in_checks && after_tp && strncmp(line, ".I ", 3) == 0) {
			CHECK(k < analysis_n_checks && strcmp(line + 3, analysis_checks[k].id) == 0,
			      "CHECKS entry %zu of man/tlbprof.1 is %s, the table's is %s", k, line + 3,
			      k < analysis_n_checks ? analysis_checks[k].id : "(past its end)");
			k++;
		}
		after_tp = strcmp(line, ".TP") == 0;
	}
	fclose(f);
	CHECK(k == analysis_n_checks, "man/tlbprof.1 lists %zu checks, the table %zu", k, analysis_n_checks);
}

/* Text that outgrows its buffer ends in "…", whole characters before it; evidence past its cap is counted. */
static void test_text_cut(void)
{
	char buf[16];
	struct analysis_evidence e = { 0 };

	CHECK(!analysis_text(buf, sizeof(buf), "%s", "fits in it") && strcmp(buf, "fits in it") == 0, "fits: %s", buf);
	CHECK(!analysis_text(buf, sizeof(buf), "%s", "fifteen bytes!!") && strlen(buf) == 15, "exactly: %s", buf);
	CHECK(analysis_text(buf, sizeof(buf), "%s", "sixteen bytes!!!") && strcmp(buf, "sixteen byte\u2026") == 0,
	      "one over: %s", buf);
	/* "×" (2 bytes) across the cut: left out whole, not split */
	CHECK(analysis_text(buf, sizeof(buf), "%s", "1.18\u00d7 1.18\u00d7 1.18\u00d7") &&
		      strcmp(buf, "1.18\u00d7 1.18\u2026") == 0, "a character across the cut: %s", buf);
	for (int i = 0; i < ANALYSIS_MAX_EVIDENCE + 3; i++)
		analysis_evidence_add(&e, "k", i);
	CHECK(e.n == ANALYSIS_MAX_EVIDENCE && e.dropped == 3, "evidence kept %zu, dropped %u", e.n, e.dropped);
}

int main(void)
{
	test_text_cut();
	test_cloud_xeon_counters();
	test_differential();
	test_headline_doubt();
	test_checks_table();
	test_check_table();
	test_man_checks();
	test_pmu_message();
	test_fail_on();
	test_command_exit();
	test_size_sweep();
	test_walk_cycles();
	test_attribution_published();
	test_control();
	test_translation_share();
	test_nested_paging();
	test_shadow_paging();
	test_huge_pages_shadow();
	test_layout_effect();
	test_stride_steps();
	test_stride_huge_twin();
	test_tlbsize_knees();
	test_knee_labels();
	test_tlb_cpuid_disagrees();
	test_allocations();
	return check_finish();
}
