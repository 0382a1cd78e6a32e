/* SPDX-License-Identifier: MIT */
/* Pure analysis: phase statistics, page-size comparisons and the checks that catch a broken measurement. */
#include "analysis.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void analysis_stats(const double *v, size_t n, struct sample_stats *out)
{
	double *s, sum = 0, sq = 0;

	memset(out, 0, sizeof(*out));
	if (!n || !(s = malloc(n * sizeof(*s))))
		return;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	out->n = n;
	out->min = s[0];
	out->max = s[n - 1];
	out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	out->mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (s[i] - out->mean) * (s[i] - out->mean);
	out->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
	out->rel_spread = out->median ? (out->max - out->min) / out->median : 0;
	free(s);
}

bool analysis_counter(const struct phase_result *r, enum metric m, double *value)
{
	for (size_t i = 0; i < r->n_counters; i++) {
		const struct counter_info *ci = &r->counter_info[i];
		if (ci->metric != m)
			continue;
		if (ci->status != COUNTER_OK && ci->status != COUNTER_MULTIPLEXED)
			return false;
		if (r->counters[i].running_ns == 0 && r->counters[i].enabled_ns)
			return false;	/* never scheduled: no information */
		*value = r->counters[i].scaled;
		return true;
	}
	return false;
}

bool analysis_per_access(const struct phase_result *r, enum metric m, double *rate)
{
	double v, n = (double)r->spec.iterations * (double)r->n_samples;

	if (n <= 0 || !analysis_counter(r, m, &v))
		return false;
	*rate = v / n;
	return true;
}

const char *verdict_name(enum verdict v)
{
	static const char *const names[] = { [VERDICT_OK] = "ok", [VERDICT_WARN] = "warn", [VERDICT_FAIL] = "fail" };

	return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "?";
}

static double median_of(const struct phase_result *r)
{
	struct sample_stats st;

	analysis_stats(r->samples_ns, r->n_samples, &st);
	return st.median;
}

/* Compare every page size with the smallest measured at the same working-set size. */
static int build_comparisons(const struct phase_result *res, size_t n, const struct timing_calibration *clock,
			     struct analysis *a)
{
	a->comparisons = calloc(n ? n : 1, sizeof(*a->comparisons));
	if (!a->comparisons)
		return -ENOMEM;
	for (size_t v = 0; v < n; v++) {
		size_t b = SIZE_MAX;
		if (res[v].status != PHASE_OK)
			continue;
		for (size_t i = 0; i < n; i++) {
			if (i == v || res[i].status != PHASE_OK || res[i].spec.size_bytes != res[v].spec.size_bytes ||
			    res[i].spec.workload != res[v].spec.workload || res[i].spec.page.bytes >= res[v].spec.page.bytes)
				continue;
			if (b == SIZE_MAX || res[i].spec.page.bytes < res[b].spec.page.bytes)
				b = i;
		}
		if (b == SIZE_MAX)
			continue;

		struct comparison *c = &a->comparisons[a->n_comparisons++];
		double mb = median_of(&res[b]), mv = median_of(&res[v]), mb_miss, mv_miss;
		c->baseline = b;
		c->variant = v;
		c->delta_ns = mb - mv;
		c->speedup = mv > 0 ? mb / mv : 0;
		c->have_tlb_counts = analysis_per_access(&res[b], METRIC_DTLB_LOAD_MISSES, &mb_miss) &&
				     analysis_per_access(&res[v], METRIC_DTLB_LOAD_MISSES, &mv_miss);
		/*
		 * The larger page holds the cache-line footprint and the access
		 * order constant and changes only the translation footprint, so
		 * the whole delta is taken as translation. With miss counts the
		 * delta is also expressed per avoided miss.
		 */
		c->tlb_ns = c->delta_ns;
		c->cache_ns = 0;
		c->unexplained_ns = 0;
		if (c->have_tlb_counts) {
			c->method = "counters";
			c->delta_tlb_misses_per_access = mb_miss - mv_miss;
			if (c->delta_tlb_misses_per_access > 1e-6) {
				c->ns_per_tlb_miss = c->delta_ns / c->delta_tlb_misses_per_access;
				if (clock && clock->core_clock_ghz > 0)
					c->cycles_per_tlb_miss = c->ns_per_tlb_miss * clock->core_clock_ghz;
			}
			c->assumption = "same chain and cache-line footprint in both phases; the delta per avoided "
					"dTLB miss is the cost of one miss";
		} else {
			c->method = "differential";
			c->assumption = "no dTLB counters: same chain and cache-line footprint in both phases, so the "
					"whole delta is attributed to address translation";
		}
	}
	return 0;
}

__attribute__((format(printf, 4, 5)))
static struct analysis_check *add_check(struct analysis *a, const char *id, enum check_status st, const char *fmt,
					 ...)
{
	struct analysis_check *c = &a->checks[a->n_checks++];
	va_list ap;

	memset(c, 0, sizeof(*c));
	c->id = id;
	c->status = st;
	va_start(ap, fmt);
	vsnprintf(c->message, sizeof(c->message), fmt, ap);
	va_end(ap);
	return c;
}

static void evidence(struct analysis_check *c, const char *key, double value)
{
	if (c->n_evidence < ANALYSIS_MAX_EVIDENCE) {
		c->evidence[c->n_evidence].key = key;
		c->evidence[c->n_evidence].value = value;
		c->n_evidence++;
	}
}

static void check_self_checks(const struct phase_result *res, size_t n, struct analysis *a)
{
	size_t pass = 0, fail = 0, total = 0;

	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < res[i].n_self_checks; j++) {
			total++;
			pass += res[i].self_checks[j].status == CHECK_PASS;
			fail += res[i].self_checks[j].status == CHECK_FAIL;
		}
	}
	struct analysis_check *c;
	if (!total)
		c = add_check(a, "workload_self_checks", CHECK_SKIP, "no phase ran a self-check");
	else if (fail)
		c = add_check(a, "workload_self_checks", CHECK_FAIL,
			      "%zu of %zu self-checks failed: the access pattern is not what it claims to be "
			      "(see each phase's self_checks)", fail, total);
	else
		c = add_check(a, "workload_self_checks", CHECK_PASS,
			      "%zu self-checks passed (single random cycle, non-constant strides)", pass);
	evidence(c, "total", (double)total);
	evidence(c, "failed", (double)fail);
}

static void check_backing(const struct phase_result *res, size_t n, struct analysis *a)
{
	size_t base = 0, base_bad = 0, huge = 0, huge_bad = 0;
	double worst_base = 0, worst_huge = 1;

	for (size_t i = 0; i < n; i++) {
		const struct phase_result *r = &res[i];
		if (!r->backing_known)
			continue;
		if (r->spec.page.kind == PAGE_BASE) {
			base++;
			if (r->backing.kind != PAGE_BASE) {
				base_bad++;
				worst_base = fmax(worst_base, r->backing.huge_fraction);
			}
		} else {
			huge++;
			bool ok = r->backing.kind == r->spec.page.kind && r->backing.huge_fraction >= 0.999;
			if (!ok) {
				huge_bad++;
				worst_huge = fmin(worst_huge, r->backing.huge_fraction);
			}
		}
	}
	struct analysis_check *c;
	if (!base)
		c = add_check(a, "control_thp_contamination", CHECK_SKIP, "no 4k phase was verified");
	else if (base_bad)
		c = add_check(a, "control_thp_contamination", CHECK_FAIL,
			      "%zu of %zu 4k phases are (partly) on huge pages: the control is contaminated, so "
			      "the comparison understates what huge pages buy", base_bad, base);
	else
		c = add_check(a, "control_thp_contamination", CHECK_PASS,
			      "every 4k phase was verified on 4 KiB pages with no AnonHugePages (%zu phases)", base);
	evidence(c, "phases", (double)base);
	evidence(c, "contaminated", (double)base_bad);
	if (base_bad)
		evidence(c, "worst_huge_fraction", worst_base);

	if (!huge)
		c = add_check(a, "huge_pages_granted", CHECK_SKIP, "no huge-page phase was verified");
	else if (huge_bad)
		c = add_check(a, "huge_pages_granted", CHECK_FAIL,
			      "%zu of %zu huge-page phases did not get the pages they asked for (worst: %.0f %% "
			      "huge); see each phase's reason for the fix", huge_bad, huge, 100 * worst_huge);
	else
		c = add_check(a, "huge_pages_granted", CHECK_PASS,
			      "every huge-page phase was verified fully on the requested page size (%zu phases)", huge);
	evidence(c, "phases", (double)huge);
	evidence(c, "not_granted", (double)huge_bad);
}

static void check_pmu(const struct phase_result *res, size_t n, struct analysis *a)
{
	size_t hw = 0, hw_ok = 0;

	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < res[i].n_counters; j++) {
			if (!res[i].counter_info[j].hardware)
				continue;
			hw++;
			hw_ok += res[i].counter_info[j].status == COUNTER_OK ||
				 res[i].counter_info[j].status == COUNTER_MULTIPLEXED;
		}
		if (res[i].n_counters)
			break;	/* the set is the same for every phase: one is enough */
	}
	struct analysis_check *c;
	if (!hw)
		c = add_check(a, "pmu_unavailable", CHECK_SKIP, "no hardware event was requested");
	else if (!hw_ok)
		c = add_check(a, "pmu_unavailable", CHECK_PASS,
			      "no hardware event could be opened (no PMU visible, as in most cloud VMs): cycles come "
			      "from the calibrated core clock and comparisons use the differential method");
	else
		c = add_check(a, "pmu_unavailable", CHECK_PASS, "%zu of %zu hardware events counted", hw_ok, hw);
	evidence(c, "hardware_events", (double)hw);
	evidence(c, "hardware_events_ok", (double)hw_ok);
}

static void check_timer(const struct phase_result *res, size_t n, const struct timing_calibration *clock,
			struct analysis *a)
{
	double shortest = 0;

	if (!clock || clock->clock_overhead_ns <= 0) {
		add_check(a, "timer_resolution", CHECK_SKIP, "clock overhead not measured");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct sample_stats st;
		if (res[i].status != PHASE_OK)
			continue;
		analysis_stats(res[i].samples_ns, res[i].n_samples, &st);
		double interval = st.min * (double)res[i].spec.iterations;
		if (shortest == 0 || interval < shortest)
			shortest = interval;
	}
	if (shortest == 0) {
		add_check(a, "timer_resolution", CHECK_SKIP, "no phase was timed");
		return;
	}
	double ratio = shortest / fmax(clock->clock_overhead_ns, clock->clock_resolution_ns);
	struct analysis_check *c;
	if (ratio >= 100)
		c = add_check(a, "timer_resolution", CHECK_PASS,
			      "the shortest timed sample (%.3g ns) is %.0f× the clock overhead (%.1f ns)", shortest,
			      ratio, clock->clock_overhead_ns);
	else
		c = add_check(a, "timer_resolution", CHECK_FAIL,
			      "the shortest timed sample (%.3g ns) is only %.1f× the clock overhead (%.1f ns): timer "
			      "noise is the size of the signal; raise --iters", shortest, ratio,
			      clock->clock_overhead_ns);
	evidence(c, "shortest_sample_ns", shortest);
	evidence(c, "clock_overhead_ns", clock->clock_overhead_ns);
	evidence(c, "ratio", ratio);
}

static void check_phases(const struct phase_result *res, size_t n, struct analysis *a)
{
	size_t failed = 0;

	for (size_t i = 0; i < n; i++)
		failed += res[i].status == PHASE_FAILED;
	struct analysis_check *c;
	if (failed)
		c = add_check(a, "phases_completed", CHECK_FAIL, "%zu of %zu phases failed (see their reasons)",
			      failed, n);
	else
		c = add_check(a, "phases_completed", CHECK_PASS, "all %zu phases completed", n);
	evidence(c, "phases", (double)n);
	evidence(c, "failed", (double)failed);
}

int analysis_run(const struct phase_result *results, size_t n, const struct environment *env,
		 const struct timing_calibration *clock, struct analysis *out)
{
	enum { MAX_CHECKS = 16 };

	(void)env;
	memset(out, 0, sizeof(*out));
	out->checks = calloc(MAX_CHECKS, sizeof(*out->checks));
	if (!out->checks || build_comparisons(results, n, clock, out) != 0) {
		analysis_free(out);
		return -ENOMEM;
	}
	check_phases(results, n, out);
	check_self_checks(results, n, out);
	check_backing(results, n, out);
	check_timer(results, n, clock, out);
	check_pmu(results, n, out);

	out->verdict = VERDICT_OK;
	for (size_t i = 0; i < out->n_checks; i++) {
		if (out->checks[i].status == CHECK_FAIL)
			out->verdict = VERDICT_FAIL;
		else if (out->checks[i].status == CHECK_WARN && out->verdict == VERDICT_OK)
			out->verdict = VERDICT_WARN;
	}
	return 0;
}

void analysis_free(struct analysis *a)
{
	free(a->comparisons);
	free(a->checks);
	memset(a, 0, sizeof(*a));
}
