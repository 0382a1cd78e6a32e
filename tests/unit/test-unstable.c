/* SPDX-License-Identifier: MIT */
/* The unstable check judges the median (its own interval and a second pass) and names what moved on the host. */
#include "check.h"
#include "fixtures.h"
#include "judge/analysis.h"

#include <math.h>
#include <string.h>

/*
 * A quiet run as measured here: 3 allocations of 5 samples whose samples
 * vary by about 6 % (standard deviation / mean) while the allocations'
 * medians agree within 1 %, so the median is known to about ±2 %.
 */
static const double quiet[15] = { 60, 66, 63, 70, 62, 61, 67, 63, 69, 63, 62, 66, 63, 71, 61 };
static unsigned quiet_alloc[15] = { 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2 };

struct run {
	struct phase_result r;
	struct environment env;
	struct timing_calibration clk;
	double rerun[15];
	unsigned rerun_pass[15];
	struct analysis a;
};

static void run_init(struct run *u)
{
	memset(u, 0, sizeof(*u));
	fixture_phase(&u->r, "chase/4k/256M/r0", "4k", 256ull << 20, 1000000, quiet, 15, 0, -1);
	u->r.sample_alloc = quiet_alloc;
	u->env.turbo = -1;
	u->clk = (struct timing_calibration){ .clock_overhead_ns = 20, .clock_resolution_ns = 1, .core_clock_ghz = 3.0,
					      .core_clock_spread = 0.01 };
}

static const struct analysis_check *run_check(struct run *u)
{
	analysis_run(&u->r, 1, &u->env, &u->clk, &u->a);
	for (size_t i = 0; i < u->a.n_checks; i++)
		if (strcmp(u->a.checks[i].id, "unstable") == 0)
			return &u->a.checks[i];
	return NULL;
}

static void run_done(struct run *u)
{
	analysis_free(&u->a);
	u->r.sample_alloc = NULL;
	u->r.rerun_ns = NULL;
	u->r.rerun_pass = NULL;
	fixture_free(&u->r, 1);
}

/* Host facts of a run where khugepaged collapsed 40 pages, 8 % was stolen and DAMON pages out. */
static void host_moving(struct host_facts *h)
{
	memset(h, 0, sizeof(*h));
	h->recorded = true;
	h->before = (struct host_snapshot){ .stat_known = true, .total_ticks = 10000, .steal_ticks = 100,
					    .khugepaged_present = true, .full_scans = 3, .collapsed_known = true,
					    .pages_collapsed = 200 };
	h->after = h->before;
	h->after.total_ticks = 10500;
	h->after.steal_ticks = 140;
	h->after.full_scans = 4;
	h->after.pages_collapsed = 240;
	h->damon_before = (struct host_damon){ .present = true, .kdamonds = 1, .running = 1, .schemes_active = 2,
					       .actions = "pageout,stat" };
	h->damon_after = h->damon_before;
}

static void test_quiet_passes(void)
{
	struct run u;

	run_init(&u);
	const struct analysis_check *c = run_check(&u);
	/* The old rule (coefficient of variation over 5 %) warned here. */
	CHECK(u.a.phases[0].ns.stddev / u.a.phases[0].ns.mean > 0.05, "the samples vary by more than 5 %%");
	CHECK(c && c->status == CHECK_PASS, "a quiet median passes: %s", c ? c->message : "");
	CHECK(c && strstr(c->message, "no second pass recorded") && strstr(c->message, "host facts not recorded"),
	      "says what it did not have: %s", c ? c->message : "");
	CHECK(u.a.phases[0].precision < 0.10, "claimed %g", u.a.phases[0].precision);
	run_done(&u);
}

static void test_second_pass(void)
{
	struct run u;

	/* Three second passes agree within 1 %: still quiet, and the claim widens by the host's part. */
	run_init(&u);
	const double near[15] = { 63.5, 64, 62.5, 66, 63, 62.8, 63, 62.1, 64, 62.5, 63.4, 63, 64.2, 63.6, 62.9 };
	for (unsigned i = 0; i < 15; i++)
		u.rerun_pass[i] = 1 + i / 5;
	memcpy(u.rerun, near, sizeof(near));
	u.r.rerun_ns = u.rerun;
	u.r.rerun_pass = u.rerun_pass;
	u.r.n_rerun = 15;
	const struct analysis_check *c = run_check(&u);
	double own = u.a.phases[0].precision_within;
	CHECK(u.a.phases[0].second_pass && u.a.phases[0].passes == 3 && u.a.phases[0].precision > own,
	      "claim %g over own %g, %u passes", u.a.phases[0].precision, own, u.a.phases[0].passes);
	CHECK(c && c->status == CHECK_PASS && strstr(c->message, "from 3 second passes"), "%s", c ? c->message : "");
	analysis_free(&u.a);
	/* Second passes 12 % slower: the run's own interval did not see it; the claim does, and warns. */
	for (size_t i = 0; i < 15; i++)
		u.rerun[i] = near[i] * 1.12;
	c = run_check(&u);
	CHECK_NEAR(u.a.phases[0].between_runs, 0.12, 0.02);
	CHECK(c && c->status == CHECK_WARN && strstr(c->message, "moved +1") &&
		      strstr(c->message, "the machine moved between the run and its second passes, which"),
	      "between runs: %s", c ? c->message : "");
	analysis_free(&u.a);
	/* The same, with two of the three re-warms at their cap: the message cannot tell a cold cache from the host. */
	u.r.n_passes = 3;
	u.r.pass_unsettled = 2;
	u.r.pass_warmup_known = true;
	c = run_check(&u);
	CHECK(c && c->status == CHECK_WARN && strstr(c->message, "or their caches never refilled (2 of its 3 re-warms") &&
		      strstr(c->message, "one pass cannot tell which") && strstr(c->message, "; host: host facts not recorded"),
	      "unsettled re-warms, the host's facts still after them: %s", c ? c->message : "");
	analysis_free(&u.a);
	u.r.n_passes = 0;
	u.r.pass_unsettled = 0;
	u.r.pass_warmup_known = false;
	/*
	 * One pass 1 % off, as a report from before several passes holds: a
	 * spread from two draws is a guess, so its t quantile is 12.7 and the
	 * host's part alone is 12.7 * 1 % / sqrt(2), about 9 %.
	 */
	u.r.rerun_pass = NULL;
	for (size_t i = 0; i < 5; i++)
		u.rerun[i] = 63 * 1.01;
	u.r.n_rerun = 5;
	c = run_check(&u);
	CHECK_NEAR(u.a.phases[0].host, 12.706 * 0.01 / sqrt(2), 1e-9);
	CHECK(u.a.phases[0].passes == 1 && c && strstr(c->message, "from 1 second pass,"), "one pass: %s",
	      c ? c->message : "");
	run_done(&u);
}

static void test_host_named(void)
{
	struct run u;

	/* Noisy samples on a host that moved: the warning names each fact. */
	run_init(&u);
	const double noisy[15] = { 40, 66, 48, 90, 62, 45, 88, 50, 69, 41, 95, 43, 63, 71, 39 };
	memcpy(u.r.samples_ns, noisy, sizeof(noisy));
	host_moving(&u.env.host);
	u.clk.core_clock_end_ghz = 2.64;	/* 12 % below the calibration */
	const struct analysis_check *c = run_check(&u);
	CHECK(c && c->status == CHECK_WARN, "noisy: %s", c ? c->message : "");
	CHECK(c && strstr(c->message, "the core clock fell 12 % between calibration and the end"), "%s",
	      c ? c->message : "");
	CHECK(c && strstr(c->message, "steal 8 % of the run"), "%s", c ? c->message : "");
	CHECK(c && strstr(c->message, "khugepaged collapsed 40 pages during the run"), "%s", c ? c->message : "");
	CHECK(c && strstr(c->message, "DAMON scheme pageout active") && !strstr(c->message, "scheme stat"), "%s",
	      c ? c->message : "");
	analysis_free(&u.a);
	/* A quiet median, but the clock fell 12 %: a warning of its own, cycles per access are off. */
	memcpy(u.r.samples_ns, quiet, sizeof(quiet));
	memset(&u.env.host, 0, sizeof(u.env.host));
	c = run_check(&u);
	CHECK(c && c->status == CHECK_WARN && strstr(c->message, "the core clock fell 12 %") &&
		      strstr(c->message, "cycles per access"),
	      "clock: %s", c ? c->message : "");
	analysis_free(&u.a);
	/* Nothing moved: said so; khugepaged and DAMON absent: not present, never 0 pretending. */
	u.clk.core_clock_end_ghz = 3.03;
	u.env.host.recorded = true;
	u.env.host.before = (struct host_snapshot){ .stat_known = true, .total_ticks = 100, .steal_ticks = 1 };
	u.env.host.after = (struct host_snapshot){ .stat_known = true, .total_ticks = 300, .steal_ticks = 1 };
	snprintf(u.env.host.after.khugepaged_why, sizeof(u.env.host.after.khugepaged_why), "not present: test");
	c = run_check(&u);
	CHECK(c && c->status == CHECK_PASS && strstr(c->message, "khugepaged not present"), "%s", c ? c->message : "");
	CHECK(c && !strstr(c->message, "collapsed"), "no collapse count without khugepaged: %s", c ? c->message : "");
	analysis_free(&u.a);
	u.env.host.after = u.env.host.before;	/* no tick passed */
	u.env.host.before.khugepaged_present = true;	/* read at the start only */
	u.clk.core_clock_end_ghz = 0;
	c = run_check(&u);
	CHECK(c && strstr(c->message, "steal: could not tell, because"), "%s", c ? c->message : "");
	CHECK(c && strstr(c->message, "khugepaged: could not tell, because its full_scans was read at one end only"),
	      "%s", c ? c->message : "");
	CHECK(c && strstr(c->message, "core clock: could not tell, because it was not measured again at the end"), "%s",
	      c ? c->message : "");
	run_done(&u);
}

static void test_steal(void)
{
	struct run u;

	/* One tick of steal in a 50-tick phase: 2 %, but a tick is quantisation, not a measurement. */
	run_init(&u);
	u.r.steal_ticks = 1;
	u.r.steal_ms = 10;
	u.r.stat_ticks = 50;
	u.r.timed_ns = 5e6;	/* the old rule read 10 ms over 5 ms of samples: 200 % */
	const struct analysis_check *c = run_check(&u);
	CHECK(c && c->status == CHECK_PASS, "one tick: %s", c ? c->message : "");
	analysis_free(&u.a);
	/* 5 of 100 ticks stolen: 5 % of the CPU time. */
	u.r.steal_ticks = 5;
	u.r.stat_ticks = 100;
	c = run_check(&u);
	CHECK(c && c->status == CHECK_WARN && strstr(c->message, "stole 5.0 %"), "5 %%: %s", c ? c->message : "");
	analysis_free(&u.a);
	/* A report from before stat_ticks: steal over the timed samples' wall time, as before. */
	u.r.stat_ticks = 0;
	u.r.steal_ms = 0.05 * u.r.timed_ns / 1e6;
	c = run_check(&u);
	CHECK(c && c->status == CHECK_WARN && strstr(c->message, "stole 5.0 %"), "old: %s", c ? c->message : "");
	run_done(&u);
}

int main(void)
{
	test_steal();
	test_quiet_passes();
	test_second_pass();
	test_host_named();
	return check_finish();
}
