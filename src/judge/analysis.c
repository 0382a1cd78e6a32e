/* SPDX-License-Identifier: MIT */
/* Pure analysis: phase statistics, page-size comparisons and the checks that catch a broken measurement. */
#include "judge/analysis.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "measure/plan.h"
#include "measure/workload.h"

/* Thresholds, each with the reason it has this value. */
enum {
	MAX_CHECKS = 32,
	MAX_FINDINGS = 4,
};
/* A sample's coefficient of variation above this is noise the size of a small TLB effect. */
static const double UNSTABLE_CV = 0.05;
/* The first sample this much slower than the others still carried warm-up. */
static const double WARMUP_EXCESS = 0.10;
/* Pages beyond this multiple of the last-level TLB's entries miss on (almost) every random access. */
static const double FAR_BEYOND_REACH = 8.0;
/* Assumed last-level 4 KiB TLB entries when CPUID does not say (the largest common: Zen 5). */
static const unsigned ASSUMED_L2_TLB_ENTRIES = 4096;
/* Randomly placed lines conflict in a set-associative cache once they fill this share of it. */
static const double ALIASED_LOAD = 0.5;
/* A chase far beyond TLB reach missing less often than this means the events or the pattern are broken. */
static const double MIN_EXPECTED_MISS_RATE = 0.1;
/* A calibration whose runs disagree by more than this: the clock moved during calibration. */
static const double CLOCK_SPREAD_MAX = 0.10;
/* No core answers an L1 hit in fewer than 90 % of its documented load-to-use cycles. */
static const double TOO_FAST_FRACTION = 0.9;
/* Without a documented value: no x86 or Arm core has an L1 load-to-use latency below 3 cycles. */
static const double MIN_L1_CYCLES = 3.0;
/* LLC misses per access that count as "the cache behaviour changed". */
static const double LLC_DELTA_SIGNIFICANT = 0.01;
/* Steal above this share of a phase's wall time: the hypervisor took the CPU away. */
static const double STEAL_SHARE_MAX = 0.01;

static const struct counter_info *counter_find(const struct phase_result *r, enum metric m, size_t *idx)
{
	for (size_t i = 0; i < r->n_counters; i++) {
		if (r->counter_info[i].metric == m) {
			if (idx)
				*idx = i;
			return &r->counter_info[i];
		}
	}
	return NULL;
}

/* Spread between allocations (their medians) and within them (stddev / mean), from the sample tags. */
static void allocation_spread(const struct phase_result *r, struct phase_analysis *pa)
{
	double med[STATS_MAX_GROUPS], cv[STATS_MAX_GROUPS];
	struct stats_groups g;
	size_t k;

	if (!r->sample_alloc || !r->n_samples) {
		pa->allocations = 0;
		return;
	}
	if (stats_group(r->samples_ns, r->sample_alloc, r->n_samples, &g))
		return;
	k = g.k < STATS_MAX_GROUPS ? g.k : STATS_MAX_GROUPS;
	for (size_t i = 0; i < k; i++) {
		struct stats_summary st;
		stats_summarize(g.v + g.start[i], g.len[i], &st);
		med[i] = st.median;
		cv[i] = st.mean > 0 ? st.stddev / st.mean : 0;
	}
	stats_groups_free(&g);
	pa->allocations = (unsigned)k;
	struct stats_summary sm, sc;
	stats_summarize(med, k, &sm);
	stats_summarize(cv, k, &sc);
	pa->between_allocations = k > 1 ? sm.rel_spread : 0;
	pa->within_allocation = sc.median;
}

bool analysis_counter(const struct phase_result *r, enum metric m, double *value)
{
	size_t i;
	const struct counter_info *ci = counter_find(r, m, &i);

	if (!ci || (ci->status != COUNTER_OK && ci->status != COUNTER_MULTIPLEXED))
		return false;
	if (r->counters[i].running_ns == 0 && r->counters[i].enabled_ns)
		return false;	/* never scheduled: no information */
	*value = r->counters[i].scaled;
	return true;
}

bool analysis_per_access(const struct phase_result *r, enum metric m, double *rate)
{
	double v, n = r->spec.accesses_total ? (double)r->spec.accesses_total
					     : (double)r->spec.iterations * (double)r->n_samples;

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

bool analysis_fails(enum verdict v, enum fail_on fail_on)
{
	switch (fail_on) {
	case FAIL_ON_FAIL:
		return v == VERDICT_FAIL;
	case FAIL_ON_WARN:
		return v != VERDICT_OK;
	case FAIL_ON_NEVER:
		return false;
	}
	return false;
}

static bool measured_ok(const struct phase_result *r)
{
	return r->status == PHASE_OK && r->spec.role == PHASE_ROLE_MEASURE && r->n_samples;
}

/* The core clock to turn ns into cycles: the calibrated one, else the phase's own. */
static double clock_ghz(const struct timing_calibration *clock, const struct phase_result *r)
{
	if (clock && clock->core_clock_ghz > 0)
		return clock->core_clock_ghz;
	return r->cycles_per_ns;
}

/* ---- page faults ---- */

void analysis_fault_metrics(const struct fault_sample *s, size_t n, struct fault_metrics *out)
{
	double *npf = calloc(n + 1, sizeof(double)), *npp = calloc(n + 1, sizeof(double));
	double *ppf = calloc(n + 1, sizeof(double)), *mbs = calloc(n + 1, sizeof(double));
	double *minor = calloc(n + 1, sizeof(double)), *major = calloc(n + 1, sizeof(double));
	size_t nf = 0;
	unsigned procs = 0;

	memset(out, 0, sizeof(*out));
	if (!n || !npf || !npp || !ppf || !mbs || !minor || !major)
		goto out;
	out->valid = true;
	out->from_counters = true;
	out->rusage_agrees = true;
	for (size_t i = 0; i < n; i++) {
		bool counted = s[i].minor >= 0 && s[i].major >= 0;
		double mi = counted ? s[i].minor : (double)s[i].minor_rusage;
		double ma = counted ? s[i].major : (double)s[i].major_rusage;
		double ru = (double)(s[i].minor_rusage + s[i].major_rusage);
		out->from_counters &= counted;
		if (counted && fabs(ru - (mi + ma)) > 2 + 0.01 * (mi + ma))
			out->rusage_agrees = false;
		minor[i] = mi;
		major[i] = ma;
		npp[i] = s[i].pages ? s[i].elapsed_ns / (double)s[i].pages : 0;
		mbs[i] = s[i].elapsed_ns > 0 ? (double)s[i].pages * 4096.0 / 1048576.0 / (s[i].elapsed_ns / 1e9) : 0;
		if (mi + ma > 0) {
			npf[nf] = s[i].elapsed_ns / (mi + ma);
			ppf[nf] = (double)s[i].pages / (mi + ma);
			nf++;
		}
		out->user_s += s[i].user_ns / 1e9;
		out->sys_s += s[i].sys_ns / 1e9;
		out->wall_s += s[i].elapsed_ns / 1e9;
		out->resident_before = fmax(out->resident_before, s[i].resident_before);
		if (s[i].process + 1 > procs)
			procs = s[i].process + 1;
	}
	stats_summarize(npp, n, &out->ns_per_page);
	stats_summarize(mbs, n, &out->mib_per_s);
	stats_summarize(npf, nf, &out->ns_per_fault);
	stats_summarize(ppf, nf, &out->pages_per_fault);
	struct stats_summary st;
	stats_summarize(minor, n, &st);
	out->minor = st.median;
	stats_summarize(major, n, &st);
	out->major = st.median;
	out->processes = procs;
	/* Per-process medians of ns per page, then their spread. */
	double med[256];
	size_t nm = 0;
	for (unsigned p = 0; p < procs && nm < 256; p++) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (s[i].process == p)
				npf[k++] = npp[i];
		if (!k)
			continue;
		stats_summarize(npf, k, &st);
		med[nm++] = st.median;
	}
	stats_summarize(med, nm, &st);
	out->process_spread = nm > 1 ? st.rel_spread : 0;
out:
	free(npf);
	free(npp);
	free(ppf);
	free(mbs);
	free(minor);
	free(major);
}

/* ---- per-phase statistics and controls ---- */

static void analyse_phases(const struct phase_result *res, size_t n, struct analysis *a)
{
	for (size_t i = 0; i < n; i++) {
		struct phase_analysis *pa = &a->phases[i];
		stats_summarize(res[i].samples_ns, res[i].n_samples, &pa->ns);
		analysis_fault_metrics(res[i].fault_samples, res[i].n_fault_samples, &pa->faults);
		allocation_spread(&res[i], pa);
		if (!measured_ok(&res[i]))
			continue;
		for (size_t c = 0; c < n; c++) {
			const struct phase_spec *cs = &res[c].spec;
			if (cs->role != PHASE_ROLE_CONTROL || res[c].status != PHASE_OK || !res[c].n_samples ||
			    cs->controls_size_bytes != res[i].spec.size_bytes ||
			    cs->controls_stride_bytes != res[i].spec.stride_bytes || cs->workload != res[i].spec.workload)
				continue;
			struct stats_summary cst;
			stats_summarize(res[c].samples_ns, res[c].n_samples, &cst);
			pa->has_control = true;
			pa->control = c;
			pa->translation_ns = pa->ns.median - cst.median;
			break;
		}
	}
}

/* ---- comparisons ---- */

static void attribute(const struct phase_result *b, const struct phase_result *v, const struct timing_calibration *clock,
		      struct comparison *c)
{
	if (b->spec.workload->faults_expected) {
		/* Page faults: the larger page means fewer, larger faults, not cheaper translation. */
		c->method = "fault_path";
		c->assumption = "page-fault phases: the delta per page is the fault path (one fault per large page "
				"instead of one per 4 KiB page), not address translation";
		return;
	}
	double mb_miss, mv_miss, wb, wv, lb, lv;
	bool llc = analysis_per_access(b, METRIC_LLC_LOAD_MISSES, &lb) &&
		   analysis_per_access(v, METRIC_LLC_LOAD_MISSES, &lv);
	bool llc_changed = llc && fabs(lb - lv) >= LLC_DELTA_SIGNIFICANT;
	double ghz = clock_ghz(clock, b);

	c->have_tlb_counts = analysis_per_access(b, METRIC_DTLB_LOAD_MISSES, &mb_miss) &&
			     analysis_per_access(v, METRIC_DTLB_LOAD_MISSES, &mv_miss);
	c->have_walk_cycles = ghz > 0 && analysis_per_access(b, METRIC_WALK_ACTIVE, &wb) &&
			      analysis_per_access(v, METRIC_WALK_ACTIVE, &wv);
	if (c->have_tlb_counts) {
		c->delta_tlb_misses_per_access = mb_miss - mv_miss;
		if (c->delta_tlb_misses_per_access > 1e-6) {
			c->ns_per_tlb_miss = c->delta_ns / c->delta_tlb_misses_per_access;
			if (ghz > 0)
				c->cycles_per_tlb_miss = c->ns_per_tlb_miss * ghz;
		}
	}
	if (c->have_walk_cycles) {
		/* Page-walk cycles measure translation directly; what is left is cache or unexplained. */
		c->method = "counters";
		c->tlb_ns = (wb - wv) / ghz;
		double rest = c->delta_ns - c->tlb_ns;
		if (llc_changed)
			c->cache_ns = rest;
		else
			c->unexplained_ns = rest;
		c->assumption = llc_changed ? "tlb_ns from page-walk cycles (walk_active); the rest is cache, since "
					      "LLC misses per access changed"
					    : "tlb_ns from page-walk cycles (walk_active); LLC misses did not change, "
					      "so the rest is unexplained";
	} else if (c->have_tlb_counts) {
		c->method = "counters";
		if (llc_changed) {
			c->unexplained_ns = c->delta_ns;
			c->assumption = "LLC misses per access changed as well and no page-walk cycles are counted, "
					"so the delta cannot be split between TLB and cache";
		} else {
			c->tlb_ns = c->delta_ns;
			c->assumption = "same chain and cache-line footprint in both phases and no change in LLC "
					"misses: the delta per avoided dTLB miss is the cost of one miss";
		}
	} else {
		c->method = "differential";
		c->tlb_ns = c->delta_ns;
		c->assumption = "no dTLB counters: both phases walk the same chain over the same cache-line "
				"footprint and differ only in page size, so the whole delta is address translation";
	}
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
		if (!measured_ok(&res[v]))
			continue;
		for (size_t i = 0; i < n; i++) {
			if (i == v || !measured_ok(&res[i]) || res[i].spec.size_bytes != res[v].spec.size_bytes ||
			    res[i].spec.stride_bytes != res[v].spec.stride_bytes ||
			    res[i].spec.fault_case != res[v].spec.fault_case ||
			    res[i].spec.workload != res[v].spec.workload || res[i].spec.page.bytes >= res[v].spec.page.bytes)
				continue;
			if (b == SIZE_MAX || res[i].spec.page.bytes < res[b].spec.page.bytes)
				b = i;
		}
		if (b == SIZE_MAX)
			continue;

		struct comparison *c = &a->comparisons[a->n_comparisons++];
		double mb = a->phases[b].ns.median, mv = a->phases[v].ns.median;
		c->baseline = b;
		c->variant = v;
		c->delta_ns = mb - mv;
		c->speedup = mv > 0 ? mb / mv : 0;
		attribute(&res[b], &res[v], clock, c);
		/* With a packed control: each side's translation part, next to the delta between them. */
		c->has_control = a->phases[b].has_control && a->phases[v].has_control;
		c->baseline_translation_ns = a->phases[b].translation_ns;
		c->variant_translation_ns = a->phases[v].translation_ns;
	}
	return 0;
}

/* ---- stride steps ---- */

/* What a step between two strides changes, with 64 B lines, on pages of page_bytes. */
static const char *stride_label(uint64_t from, uint64_t to, uint64_t page_bytes)
{
	if (to <= 512)
		return "cache";		/* each access touches a new line more often; pages are still shared */
	if (from >= page_bytes)
		return "flat";		/* one access per page either way: the miss penalty is flat */
	if (page_bytes > 4096)
		return "within-page";	/* a new line each access and still many accesses per huge page: no TLB step */
	if (from >= 512)
		return "tlb";		/* same cache behaviour (a new line each access), more pages per access */
	return "cache+tlb";
}

static int build_stride_steps(const struct phase_result *res, size_t n, const struct timing_calibration *clock,
			      struct analysis *a)
{
	a->stride_steps = calloc(n ? n : 1, sizeof(*a->stride_steps));
	if (!a->stride_steps)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct phase_spec *si = &res[i].spec;
		size_t next = SIZE_MAX;
		if (!measured_ok(&res[i]) || si->workload->sweep != WORKLOAD_SWEEP_STRIDES)
			continue;
		/* The next larger stride at the same size, page size and workload. */
		for (size_t j = 0; j < n; j++) {
			const struct phase_spec *sj = &res[j].spec;
			if (!measured_ok(&res[j]) || sj->workload != si->workload || sj->size_bytes != si->size_bytes ||
			    strcmp(sj->page.label, si->page.label) != 0 || sj->stride_bytes <= si->stride_bytes)
				continue;
			if (next == SIZE_MAX || sj->stride_bytes < res[next].spec.stride_bytes)
				next = j;
		}
		if (next == SIZE_MAX)
			continue;
		struct stride_step *st = &a->stride_steps[a->n_stride_steps++];
		double ghz = clock_ghz(clock, &res[i]);
		st->from = i;
		st->to = next;
		st->label = stride_label(si->stride_bytes, res[next].spec.stride_bytes, si->page.bytes);
		st->delta_ns = a->phases[next].ns.median - a->phases[i].ns.median;
		st->delta_cycles = st->delta_ns * ghz;
		st->have_misses = analysis_per_access(&res[i], METRIC_DTLB_LOAD_MISSES, &st->misses_from) &&
				  analysis_per_access(&res[next], METRIC_DTLB_LOAD_MISSES, &st->misses_to);
	}
	return 0;
}

/* ---- tlbsize knees ---- */

/* A knee this close to a CPUID capacity matches it: the grid is 2^(1/4) apart, ~19 %, plus noise. */
static const double KNEE_MATCH_TOLERANCE = 0.25;
enum { MAX_KNEES = 16, MAX_CURVE = 1024 };

static int cmp_knee_point(const void *pa, const void *pb)
{
	double x = ((const struct knee_point *)pa)->x, y = ((const struct knee_point *)pb)->x;

	return (x > y) - (x < y);
}

static void match_cpuid(struct tlb_knee *tk, const struct environment *env)
{
	const struct {
		const char *level;
		unsigned entries;
	} caps[] = {
		{ "l1d_4k_entries", env ? env->tlb.l1d_4k_entries : 0 },
		{ "l2d_4k_entries", env ? env->tlb.l2d_4k_entries : 0 },
	};

	for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		if (!caps[c].entries)
			continue;
		/*
		 * The capacity lies where the rise happens: between the last point
		 * on the lower level and the first on the higher one (a
		 * set-associative TLB starts missing before it is full).
		 */
		double e = caps[c].entries, x = tk->knee.x_before;
		if (e > tk->knee.x_before && e <= tk->knee.x_after)
			x = e;
		else if (e > tk->knee.x_after)
			x = tk->knee.x_after;
		double err = (x - e) / e;
		if (!tk->cpuid_level || fabs(err) < fabs(tk->relative_error)) {
			tk->cpuid_level = caps[c].level;
			tk->cpuid_entries = caps[c].entries;
			tk->relative_error = err;
		}
	}
	tk->matches = tk->cpuid_level && fabs(tk->relative_error) <= KNEE_MATCH_TOLERANCE;
}

static int build_knees(const struct phase_result *res, size_t n, const struct environment *env, struct analysis *a)
{
	struct knee_point *pts = calloc(MAX_CURVE, sizeof(*pts));
	struct knee found[MAX_KNEES];
	size_t m = 0, k = 0;

	a->knees = calloc(MAX_KNEES, sizeof(*a->knees));
	if (!pts || !a->knees) {
		free(pts);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && m < MAX_CURVE; i++) {
		if (!measured_ok(&res[i]) || res[i].spec.workload->sweep != WORKLOAD_SWEEP_PAGE_COUNTS)
			continue;
		pts[m++] = (struct knee_point){ .x = (double)res[i].slots, .median = a->phases[i].ns.median,
						.spread = stats_mad(res[i].samples_ns, res[i].n_samples,
							      a->phases[i].ns.median) };
	}
	qsort(pts, m, sizeof(*pts), cmp_knee_point);
	if (m && knees_detect(pts, m, found, MAX_KNEES, &k) == 0) {
		for (size_t i = 0; i < k && i < MAX_KNEES; i++) {
			struct tlb_knee *tk = &a->knees[a->n_knees++];
			tk->knee = found[i];
			tk->page_label = "4k";
			match_cpuid(tk, env);
		}
	}
	free(pts);
	return 0;
}

/* ---- checks ---- */

/* "phase" or "phases" for a count of n: messages say "1 phase", never "1 phases". */
static const char *phases_word(size_t n)
{
	return n == 1 ? "phase" : "phases";
}

__attribute__((format(printf, 4, 5)))
static struct analysis_check *add_check(struct analysis *a, const char *id, enum check_status st, const char *fmt,
					 ...)
{
	static struct analysis_check overflow;
	struct analysis_check *c = a->n_checks < MAX_CHECKS ? &a->checks[a->n_checks++] : &overflow;
	va_list ap;

	memset(c, 0, sizeof(*c));
	c->id = id;
	c->status = st;
	va_start(ap, fmt);
	vsnprintf(c->message, sizeof(c->message), fmt, ap);
	va_end(ap);
	return c;
}

static void evidence_add(struct analysis_evidence *e, const char *key, double value)
{
	if (e->n < ANALYSIS_MAX_EVIDENCE) {
		e->items[e->n].key = key;
		e->items[e->n].value = value;
		e->n++;
	}
}

static void evidence(struct analysis_check *c, const char *key, double value)
{
	evidence_add(&c->evidence, key, value);
}

static void check_phases(const struct phase_result *res, size_t n, struct analysis *a)
{
	size_t failed = 0, unavailable = 0;

	for (size_t i = 0; i < n; i++) {
		failed += res[i].status == PHASE_FAILED;
		unavailable += res[i].status == PHASE_FAILED && res[i].unavailable;
	}
	struct analysis_check *c;
	if (failed)
		c = add_check(a, "phases_completed", CHECK_FAIL, "%zu of %zu %s failed (see %s)", failed, n,
			      phases_word(n), failed == 1 ? "its reason" : "their reasons");
	else if (n == 1)
		c = add_check(a, "phases_completed", CHECK_PASS, "the 1 phase completed");
	else
		c = add_check(a, "phases_completed", CHECK_PASS, "all %zu phases completed", n);
	evidence(c, "phases", (double)n);
	evidence(c, "failed", (double)failed);
	evidence(c, "unavailable", (double)unavailable);
}

static void check_self_checks(const struct phase_result *res, size_t n, struct analysis *a)
{
	size_t pass = 0, fail = 0, total = 0;
	const char *first = NULL, *where = NULL;

	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < res[i].n_self_checks; j++) {
			total++;
			pass += res[i].self_checks[j].status == CHECK_PASS;
			if (res[i].self_checks[j].status == CHECK_FAIL) {
				fail++;
				if (!first) {
					first = res[i].self_checks[j].id;
					where = res[i].spec.name;
				}
			}
		}
	}
	struct analysis_check *c;
	if (!total)
		c = add_check(a, "workload_self_checks", CHECK_SKIP, "no phase ran a self-check");
	else if (fail)
		c = add_check(a, "workload_self_checks", CHECK_FAIL,
			      "%zu of %zu self-checks failed (first: %s in %s): the access pattern is not what it "
			      "claims to be, so its latency means nothing", fail, total, first, where);
	else
		c = add_check(a, "workload_self_checks", CHECK_PASS,
			      "%zu self-checks passed (every chain is one random cycle with non-constant strides)", pass);
	evidence(c, "total", (double)total);
	evidence(c, "failed", (double)fail);
}

static void check_backing(const struct phase_result *res, size_t n, struct analysis *a)
{
	size_t base = 0, base_bad = 0, huge = 0, huge_bad = 0;
	double worst_base = 0, worst_huge = 1;

	for (size_t i = 0; i < n; i++) {
		const struct phase_result *r = &res[i];
		if (!r->backing_known) {
			/* A huge-page phase the machine could not map at all was not granted either. */
			if (r->spec.page.kind != PAGE_BASE && r->status == PHASE_FAILED && r->unavailable) {
				huge++;
				huge_bad++;
				worst_huge = 0;
			}
			continue;
		}
		if (r->spec.page.kind == PAGE_BASE) {
			base++;
			if (r->backing.kind != PAGE_BASE) {
				base_bad++;
				worst_base = fmax(worst_base, r->backing.huge_fraction);
			}
		} else {
			huge++;
			if (r->backing.kind != r->spec.page.kind || r->backing.huge_fraction < 0.999) {
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
			      "%zu of %zu 4k phases are partly on huge pages (up to %.0f %%): the control is "
			      "contaminated and understates what huge pages buy; check THP (enabled/khugepaged)",
			      base_bad, base, 100 * worst_base);
	else
		c = add_check(a, "control_thp_contamination", CHECK_PASS,
			      "every 4k phase was verified on 4 KiB pages with no AnonHugePages (%zu %s)", base,
			      phases_word(base));
	evidence(c, "phases", (double)base);
	evidence(c, "contaminated", (double)base_bad);
	if (base_bad)
		evidence(c, "worst_huge_fraction", worst_base);

	if (!huge)
		c = add_check(a, "huge_pages_granted", CHECK_SKIP, "no huge-page phase was verified");
	else if (huge_bad)
		c = add_check(a, "huge_pages_granted", CHECK_FAIL,
			      "%zu of %zu huge-page phases did not get the pages they asked for (worst: %.0f %% "
			      "huge); each phase's reason has the fix", huge_bad, huge, 100 * worst_huge);
	else
		c = add_check(a, "huge_pages_granted", CHECK_PASS,
			      "every huge-page phase was verified fully on the requested page size (%zu %s)", huge,
			      phases_word(huge));
	evidence(c, "phases", (double)huge);
	evidence(c, "not_granted", (double)huge_bad);
}

/*
 * With every slot at the start of its stride cell, address bits 6 .. log2(stride)-1
 * are always zero: a cache indexed by those bits sees only sets / (stride/64) of
 * its sets. L1 is virtually indexed within a page; L2 is physically indexed, and
 * bits at and above 12 are random on 4 KiB pages (so at most 64 lines per page
 * alias) but follow the virtual address inside a huge page.
 */
static double used_set_fraction(const struct env_cache *cache, uint64_t stride, uint64_t page_bytes)
{
	uint64_t sets = cache->sets ? cache->sets : cache->size_bytes / (cache->line_bytes ? cache->line_bytes : 64) /
							     (cache->ways ? cache->ways : 1);
	uint64_t aliased = stride / 64;

	if (page_bytes <= 4096 && aliased > 4096 / 64)
		aliased = 4096 / 64;
	if (aliased > sets)
		aliased = sets;
	return aliased ? 1.0 / (double)aliased : 1.0;
}

static void check_set_aliasing(const struct phase_result *res, size_t n, const struct environment *env,
			       struct analysis *a)
{
	const struct phase_result *worst = NULL;
	double worst_frac = 1, worst_cap = 0, worst_full = 0;
	unsigned worst_level = 0;
	size_t aligned = 0, known = 0;

	if (!env || !env->n_caches) {
		add_check(a, "cache_set_aliasing", CHECK_SKIP, "cache geometry unknown");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct phase_result *r = &res[i];
		/* A run phase's layout is known only from its inspected chain. */
		if (r->status != PHASE_OK || (r->target && !r->target->chain_inspected))
			continue;
		known++;
		if (r->spec.layout != LAYOUT_ALIGNED || r->spec.stride_bytes < 128)
			continue;
		aligned++;
		double lines = (double)r->slots * 64;
		for (unsigned level = 1; level <= 3; level++) {
			const struct env_cache *c = environment_data_cache(env, level);
			if (!c)
				continue;
			/* Inside a verified huge page the physical address follows the virtual one. */
			uint64_t page = r->backing_known && r->backing.kind != PAGE_BASE ? r->spec.page.bytes : 4096;
			double frac = used_set_fraction(c, r->spec.stride_bytes, page);
			double cap = (double)c->size_bytes * frac;
			/*
			 * It matters when aliasing evicts lines that the whole cache would
			 * hold. Lines land in the remaining sets at random (physical pages),
			 * so conflicts start well before they are full: past half of them.
			 */
			if (frac < 1 && lines > ALIASED_LOAD * cap && lines <= (double)c->size_bytes && frac < worst_frac) {
				worst = r;
				worst_frac = frac;
				worst_cap = cap;
				worst_full = (double)c->size_bytes;
				worst_level = level;
			}
		}
	}
	struct analysis_check *c;
	if (worst) {
		char line_fp[16], capacity[16], full[16];
		c = add_check(a, "cache_set_aliasing", CHECK_WARN,
			      "%s: %s every slot sits at %s %llu-byte cell%s, so its lines use "
			      "only 1/%.0f of the L%u sets: the effective L%u shrinks from %siB to %siB, and the %siB of "
			      "touched lines (%.1f× that; conflict misses start past %.1f×), which the whole cache would "
			      "hold, miss instead, inflating the base latency and hiding the TLB effect; %s",
			      worst->spec.name, worst->target ? "in its chain" : "with --layout aligned",
			      worst->target ? "the same line of its" : "its", (unsigned long long)worst->spec.stride_bytes,
			      worst->target ? "" : " start", 1 / worst_frac, worst_level,
			      worst_level, format_size((uint64_t)worst_full, full, sizeof(full)),
			      format_size((uint64_t)worst_cap, capacity, sizeof(capacity)),
			      format_size(worst->slots * 64, line_fp, sizeof(line_fp)),
			      (double)worst->slots * 64 / worst_cap, ALIASED_LOAD,
			      worst->target ? "rotate each slot's line inside its cell (cache coloring)" : "use --layout colored");
		evidence(c, "used_set_fraction", worst_frac);
		evidence(c, "cache_level", worst_level);
		evidence(c, "effective_capacity_bytes", worst_cap);
		evidence(c, "line_footprint_bytes", (double)worst->slots * 64);
	} else if (aligned) {
		c = add_check(a, "cache_set_aliasing", CHECK_PASS,
			      "aligned layout in %zu %s, but the touched lines fit the aliased sets or exceed "
			      "the caches anyway", aligned, phases_word(aligned));
		evidence(c, "aligned_phases", (double)aligned);
	} else if (!known) {
		add_check(a, "cache_set_aliasing", CHECK_SKIP, "no phase with a known slot layout (declare chain= to have "
			  "a benchmark's chain inspected)");
	} else {
		add_check(a, "cache_set_aliasing", CHECK_PASS,
			  "slots are colored (or at most one line per cell): the touched lines spread over all cache sets");
	}
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
		if (res[i].status != PHASE_OK || !res[i].n_samples)
			continue;
		double interval = a->phases[i].ns.min * (double)res[i].spec.iterations;
		/* A benchmark under tlbprof run may time a phase as many separately clocked pieces. */
		if (res[i].target && res[i].target->n_wall) {
			struct stats_summary w;
			stats_summarize(res[i].target->wall_ns, res[i].target->n_wall, &w);
			interval = w.min;
		}
		if (res[i].spec.timings > 1)
			interval /= (double)res[i].spec.timings;
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
			      "noise is the size of the signal; time longer intervals (tlbprof: raise --iters; "
			      "pagefault: --size)", shortest, ratio,
			      clock->clock_overhead_ns);
	evidence(c, "shortest_sample_ns", shortest);
	evidence(c, "clock_overhead_ns", clock->clock_overhead_ns);
	evidence(c, "ratio", ratio);
}

static void check_too_fast(const struct phase_result *res, size_t n, const struct environment *env,
			   const struct timing_calibration *clock, struct analysis *a)
{
	double floor_cycles = env && env->l1_latency_cycles ? TOO_FAST_FRACTION * env->l1_latency_cycles : MIN_L1_CYCLES;
	const struct phase_result *worst = NULL;
	double worst_cycles = 0;
	size_t timed = 0;

	for (size_t i = 0; i < n; i++) {
		double ghz = clock_ghz(clock, &res[i]);
		if (res[i].status != PHASE_OK || !res[i].n_samples || ghz <= 0 || !res[i].spec.workload->latency ||
		    res[i].spec.throughput)
			continue;
		timed++;
		double cyc = a->phases[i].ns.median * ghz;
		if (!worst || cyc < worst_cycles) {
			worst = &res[i];
			worst_cycles = cyc;
		}
	}
	if (!timed) {
		add_check(a, "too_fast", CHECK_SKIP, "no latency phase was timed with a known core clock");
		return;
	}
	struct analysis_check *c;
	if (worst_cycles < floor_cycles)
		c = add_check(a, "too_fast", CHECK_FAIL,
			      "%s: %.2f cycles per access is faster than an L1 hit (%s %.0f cycles): the loads were "
			      "not dependent or the loop was optimised away; the number is not a latency",
			      worst->spec.name, worst_cycles,
			      env && env->l1_latency_cycles ? "documented" : "no core answers in under",
			      env && env->l1_latency_cycles ? (double)env->l1_latency_cycles : MIN_L1_CYCLES);
	else
		c = add_check(a, "too_fast", CHECK_PASS,
			      "the fastest phase (%s, %.2f cycles per access) is no faster than an L1 hit (%s %.0f cycles)",
			      worst->spec.name, worst_cycles, env && env->l1_latency_cycles ? "documented" : "at least",
			      env && env->l1_latency_cycles ? (double)env->l1_latency_cycles : MIN_L1_CYCLES);
	evidence(c, "fastest_cycles_per_access", worst_cycles);
	evidence(c, "floor_cycles", floor_cycles);
}

static unsigned l2_tlb_entries(const struct environment *env, bool *assumed)
{
	*assumed = !env || !env->tlb.l2d_4k_entries;
	return *assumed ? ASSUMED_L2_TLB_ENTRIES : env->tlb.l2d_4k_entries;
}

static void check_tlb_pressure(const struct phase_result *res, size_t n, const struct environment *env,
			       struct analysis *a)
{
	bool assumed;
	unsigned entries = l2_tlb_entries(env, &assumed);
	const struct phase_result *worst = NULL;
	double worst_rate = 0;
	size_t candidates = 0;

	for (size_t i = 0; i < n; i++) {
		const struct phase_result *r = &res[i];
		double rate;
		if (!measured_ok(r) || r->spec.page.kind != PAGE_BASE || r->spec.stride_bytes < 4096 ||
		    r->spec.workload->faults_expected)
			continue;
		if ((double)r->slots < FAR_BEYOND_REACH * entries)
			continue;
		if (!analysis_per_access(r, METRIC_DTLB_LOAD_MISSES, &rate))
			continue;
		candidates++;
		if (!worst || rate < worst_rate) {
			worst = r;
			worst_rate = rate;
		}
	}
	struct analysis_check *c;
	if (!candidates) {
		add_check(a, "tlb_pressure_expected", CHECK_SKIP,
			  "needs dTLB miss counts on a 4k phase far beyond the TLB reach (%u+ pages, one per page)",
			  (unsigned)(FAR_BEYOND_REACH * entries));
		return;
	}
	if (worst_rate < MIN_EXPECTED_MISS_RATE)
		c = add_check(a, "tlb_pressure_expected", CHECK_FAIL,
			      "%s touches %llu pages at random, %.0f× the %u-entry last-level TLB%s, yet counts only "
			      "%.3f dTLB misses per access: the access pattern is not random or the event mapping is "
			      "wrong (generic dTLB events are known to read zero on some CPUs; check events/)",
			      worst->spec.name, (unsigned long long)worst->slots, (double)worst->slots / entries, entries,
			      assumed ? " (assumed: CPUID did not report it)" : "", worst_rate);
	else
		c = add_check(a, "tlb_pressure_expected", CHECK_PASS,
			      "working sets far beyond the TLB reach miss the dTLB as expected (lowest %.2f misses "
			      "per access)", worst_rate);
	evidence(c, "lowest_miss_rate", worst_rate);
	evidence(c, "l2_tlb_entries", entries);
	evidence(c, "entries_assumed", assumed);
}

static void check_multiplexed(const struct phase_result *res, size_t n, struct analysis *a)
{
	char names[256] = "";
	size_t count = 0;

	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < res[i].n_counters; j++) {
			const struct counter_info *ci = &res[i].counter_info[j];
			if (ci->status != COUNTER_MULTIPLEXED)
				continue;
			if (!strstr(names, ci->name) && strlen(names) + strlen(ci->name) + 3 < sizeof(names))
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", *names ? ", " : "",
					 ci->name);
			count++;
		}
	}
	struct analysis_check *c;
	if (count)
		c = add_check(a, "multiplexed_counters", CHECK_WARN,
			      "%s counted only part of the time and were scaled by time_enabled/time_running: the "
			      "values are estimates; request fewer events or pin to a CPU", names);
	else
		c = add_check(a, "multiplexed_counters", CHECK_PASS, "no counter was multiplexed");
	evidence(c, "multiplexed_readings", (double)count);
}

static void check_pmu(const struct phase_result *res, size_t n, struct analysis *a)
{
	size_t hw = 0, hw_ok = 0;

	for (size_t i = 0; i < n; i++) {
		if (!res[i].n_counters)
			continue;
		for (size_t j = 0; j < res[i].n_counters; j++) {
			if (!res[i].counter_info[j].hardware)
				continue;
			hw++;
			hw_ok += res[i].counter_info[j].status == COUNTER_OK ||
				 res[i].counter_info[j].status == COUNTER_MULTIPLEXED;
		}
		break;	/* the set is the same for every phase: one is enough */
	}
	struct analysis_check *c;
	if (!hw)
		c = add_check(a, "pmu_unavailable", CHECK_SKIP, "no hardware event was requested");
	else if (!hw_ok)
		c = add_check(a, "pmu_unavailable", CHECK_PASS,
			      "informational: no hardware event could be opened (no PMU visible, as in most cloud VMs): "
			      "cycles come from the calibrated core clock and comparisons use the differential method");
	else
		c = add_check(a, "pmu_unavailable", CHECK_PASS, "%zu of %zu hardware events counted", hw_ok, hw);
	evidence(c, "hardware_events", (double)hw);
	evidence(c, "hardware_events_ok", (double)hw_ok);
}

static void check_unstable(const struct phase_result *res, size_t n, struct analysis *a)
{
	const struct phase_result *worst = NULL, *stolen = NULL;
	double worst_cv = 0, worst_steal = 0;
	size_t timed = 0;

	for (size_t i = 0; i < n; i++) {
		const struct phase_analysis *pa = &a->phases[i];
		const struct stats_summary *st = &pa->ns;
		struct stats_summary wall;
		/* A run phase that declared no accesses: its occurrences' wall times are its samples. */
		if (res[i].status == PHASE_OK && res[i].n_samples < 2 && res[i].target && res[i].target->n_wall >= 2) {
			stats_summarize(res[i].target->wall_ns, res[i].target->n_wall, &wall);
			st = &wall;
		} else if (res[i].status != PHASE_OK || res[i].n_samples < 2) {
			continue;
		}
		timed++;
		double cv = st->mean > 0 ? st->stddev / st->mean : 0;
		if (cv > worst_cv) {
			worst = &res[i];
			worst_cv = cv;
		}
		double share = res[i].timed_ns > 0 ? res[i].steal_ms * 1e6 / res[i].timed_ns : 0;
		if (share > worst_steal) {
			stolen = &res[i];
			worst_steal = share;
		}
	}
	if (!timed) {
		add_check(a, "unstable", CHECK_SKIP, "no phase has two or more samples");
		return;
	}
	struct analysis_check *c;
	const struct phase_analysis *wp = worst ? &a->phases[worst - res] : NULL;
	char split[160] = "";
	if (wp && wp->allocations > 1)
		snprintf(split, sizeof(split), " (between allocations: medians %.1f %% apart; within one: %.1f %%)",
			 100 * wp->between_allocations, 100 * wp->within_allocation);
	if (worst_cv > UNSTABLE_CV)
		c = add_check(a, "unstable", CHECK_WARN,
			      "%s: samples vary by %.1f %% (standard deviation / mean, limit %.0f %%)%s%s%s: %s",
			      worst->spec.name, 100 * worst_cv, 100 * UNSTABLE_CV, split,
			      worst_steal > STEAL_SHARE_MAX ? "; the hypervisor stole CPU time during " : "",
			      worst_steal > STEAL_SHARE_MAX ? stolen->spec.name : "",
			      wp && wp->allocations > 1 && wp->between_allocations > 2 * wp->within_allocation
				      ? "physical page placement differs between allocations; report the median over "
					"several (--realloc) rather than one"
				      : "the machine is noisy; pin with --cpu, raise --repeat, and compare medians with care");
	else if (worst_steal > STEAL_SHARE_MAX)
		c = add_check(a, "unstable", CHECK_WARN,
			      "%s: the hypervisor stole %.1f %% of the CPU time while it ran (steal time): "
			      "its samples may hide pauses", stolen->spec.name, 100 * worst_steal);
	else
		c = add_check(a, "unstable", CHECK_PASS, "samples agree within %.1f %% (standard deviation / mean)",
			      100 * worst_cv);
	evidence(c, "worst_cv", worst_cv);
	evidence(c, "worst_steal_share", worst_steal);
}

static void check_migrations(const struct phase_result *res, size_t n, struct analysis *a)
{
	double total = 0, v;
	size_t counted = 0;
	const struct phase_result *where = NULL;

	for (size_t i = 0; i < n; i++) {
		if (res[i].status != PHASE_OK || !analysis_counter(&res[i], METRIC_CPU_MIGRATIONS, &v))
			continue;
		counted++;
		if (v > 0 && !where)
			where = &res[i];
		total += v;
	}
	struct analysis_check *c;
	if (!counted)
		c = add_check(a, "cpu_migrations", CHECK_SKIP, "the cpu-migrations counter is not available");
	else if (total > 0 && where->target)
		c = add_check(a, "cpu_migrations", CHECK_WARN,
			      "the command's threads moved between CPUs %.0f times inside its phases (first in %s): "
			      "caches and TLBs went cold mid-phase; pin it with tlbprof run --cpu (or taskset for "
			      "several threads)", total, where->spec.name);
	else if (total > 0)
		c = add_check(a, "cpu_migrations", CHECK_WARN,
			      "the measuring thread moved between CPUs %.0f times during timed samples (first in %s): "
			      "caches and TLBs went cold mid-sample; pin it with --cpu", total, where->spec.name);
	else
		c = add_check(a, "cpu_migrations", CHECK_PASS, "no CPU migration during the timed samples");
	evidence(c, "migrations", total);
}

/*
 * How much slower the first sample of an allocation is than the median of
 * that allocation's other samples, as the median over the allocations with
 * three or more samples (all samples are one allocation without tags).
 * Another allocation's placement is not a warm-up, so allocations are not
 * mixed; and a cold start repeats on every allocation, where one noisy
 * first sample among many allocations does not. Returns false when no
 * allocation has three samples.
 */
static bool first_sample_excess(const struct phase_result *r, double *excess)
{
	double per[STATS_MAX_GROUPS];
	struct stats_groups g;
	size_t na = 0;

	*excess = 0;
	if (stats_group(r->samples_ns, r->sample_alloc, r->n_samples, &g))
		return false;
	for (size_t i = 0; i < g.k && na < STATS_MAX_GROUPS; i++) {
		const double *first = g.v + g.start[i];
		if (g.len[i] < 3)
			continue;
		struct stats_summary st;
		stats_summarize(first + 1, g.len[i] - 1, &st);
		per[na++] = st.median > 0 ? first[0] / st.median - 1 : 0;
	}
	stats_groups_free(&g);
	if (!na)
		return false;
	struct stats_summary st;
	stats_summarize(per, na, &st);
	*excess = st.median;
	return true;
}

static void check_warmup(const struct phase_result *res, size_t n, struct analysis *a)
{
	const struct phase_result *worst = NULL;
	double worst_excess = 0, excess;
	size_t eligible = 0;

	for (size_t i = 0; i < n; i++) {
		/* Fresh memory per sample has no warm-up: its first sample is like the others by design. */
		if (res[i].status != PHASE_OK || res[i].n_samples < 3 || res[i].spec.workload->per_sample_memory ||
		    !first_sample_excess(&res[i], &excess))
			continue;
		eligible++;
		if (excess > worst_excess) {
			worst = &res[i];
			worst_excess = excess;
		}
	}
	struct analysis_check *c;
	if (!eligible) {
		add_check(a, "warmup_insufficient", CHECK_SKIP, "needs three or more samples on an allocation");
		return;
	}
	if (worst_excess > WARMUP_EXCESS)
		c = add_check(a, "warmup_insufficient", CHECK_WARN,
			      "%s: the first sample of an allocation is %.0f %% slower than the median of its others "
			      "(median over the allocations): caches, TLBs or page walks were still warming up; %s",
			      worst->spec.name, 100 * worst_excess,
			      worst->spec.iterations_auto
				      ? "where the phase's warmup.unsettled counts allocations whose warm-up hit its cap (a "
					"quarter of --time-budget), raise --time-budget; where none did, the host slowed "
					"down after the warm-up: rerun, or pin with --cpu"
				      : "raise --warmup-frac, or use --iters auto (it warms up until a pass is no longer faster)");
	else
		c = add_check(a, "warmup_insufficient", CHECK_PASS,
			      "first samples are within %.0f %% of the rest of their allocation (median over the "
			      "allocations)", 100 * WARMUP_EXCESS);
	evidence(c, "worst_first_sample_excess", worst_excess);
}

static void check_faults(const struct phase_result *res, size_t n, struct analysis *a)
{
	double total = 0, v;
	size_t counted = 0;
	const struct phase_result *where = NULL;
	bool from_rusage = false;

	for (size_t i = 0; i < n; i++) {
		if (res[i].status != PHASE_OK || res[i].spec.workload->faults_expected)
			continue;
		if (analysis_counter(&res[i], METRIC_PAGE_FAULTS, &v)) {
			counted++;
		} else if (res[i].n_samples) {
			v = (double)(res[i].rusage_minflt + res[i].rusage_majflt);
			from_rusage = true;
			counted++;
		} else {
			continue;
		}
		if (v > 0 && !where)
			where = &res[i];
		total += v;
	}
	struct analysis_check *c;
	bool measured = false;
	for (size_t i = 0; i < n; i++)
		measured |= res[i].spec.workload->faults_expected;
	if (!counted)
		c = add_check(a, "faults_in_timed_phase", CHECK_SKIP,
			      measured ? "page faults are what this workload measures" : "no fault count available");
	else if (total > 0)
		c = add_check(a, "faults_in_timed_phase", CHECK_WARN,
			      "%.0f page faults happened inside timed samples (first in %s, from %s): each costs "
			      "microseconds and inflates ns per access; the region was not fully prefaulted or was "
			      "reclaimed", total, where->spec.name, from_rusage ? "getrusage" : "the page-faults counter");
	else
		c = add_check(a, "faults_in_timed_phase", CHECK_PASS, "no page fault inside the timed samples");
	evidence(c, "faults", total);
}

static void check_frequency(const struct environment *env, const struct timing_calibration *clock,
			    struct analysis *a)
{
	struct analysis_check *c;

	if (clock && clock->core_clock_ghz > 0 && clock->core_clock_spread > CLOCK_SPREAD_MAX) {
		c = add_check(a, "frequency_scaling", CHECK_WARN,
			      "the core-clock calibration runs disagree by %.0f %% (interquartile range): the clock moved (frequency "
			      "scaling, or the hypervisor descheduled the vCPU), so cycles per access are uncertain "
			      "by as much", 100 * clock->core_clock_spread);
	} else if (env && *env->cpufreq_governor && strcmp(env->cpufreq_governor, "performance") != 0) {
		c = add_check(a, "frequency_scaling", CHECK_WARN,
			      "the cpufreq governor is '%s'%s: the core clock follows load, so latency in ns drifts; "
			      "for stable numbers: cpupower frequency-set -g performance%s", env->cpufreq_governor,
			      env->turbo == 1 ? " and turbo is on" : "",
			      env->turbo == 1 ? ", and disable turbo/boost" : "");
	} else if (env && env->turbo == 1) {
		c = add_check(a, "frequency_scaling", CHECK_WARN,
			      "turbo/boost is on: the core clock depends on temperature and load on other cores; "
			      "cycles come from the clock calibrated at start");
	} else if (env && (*env->cpufreq_governor || env->turbo == 0)) {
		c = add_check(a, "frequency_scaling", CHECK_PASS, "governor '%s', turbo %s",
			      *env->cpufreq_governor ? env->cpufreq_governor : "unknown",
			      env->turbo == 0 ? "off" : "unknown");
	} else {
		c = add_check(a, "frequency_scaling", CHECK_SKIP,
			      "cpufreq is not exposed (usual in VMs); the calibrated core clock varied %.1f %% between runs",
			      clock ? 100 * clock->core_clock_spread : 0.0);
	}
	if (clock)
		evidence(c, "core_clock_spread", clock->core_clock_spread);
	if (env)
		evidence(c, "turbo", env->turbo);
}

static void check_huge_ineffective(const struct phase_result *res, const struct environment *env,
				   struct analysis *a)
{
	bool assumed;
	unsigned entries = l2_tlb_entries(env, &assumed);
	const struct comparison *worst = NULL;
	double worst_margin = 0, worst_noise = 0;
	size_t eligible = 0;

	for (size_t i = 0; i < a->n_comparisons; i++) {
		const struct comparison *cmp = &a->comparisons[i];
		const struct phase_result *b = &res[cmp->baseline], *v = &res[cmp->variant];
		if (!b->spec.workload->latency || b->spec.page.kind != PAGE_BASE || b->spec.stride_bytes < 4096 ||
		    (double)b->slots < FAR_BEYOND_REACH * entries)
			continue;
		eligible++;
		const struct stats_summary *sb = &a->phases[cmp->baseline].ns, *sv = &a->phases[cmp->variant].ns;
		/* Noise: twice the larger coefficient of variation, at least 3 %. */
		double noise = fmax(0.03, 2 * fmax(sb->mean ? sb->stddev / sb->mean : 0, sv->mean ? sv->stddev / sv->mean : 0));
		double margin = cmp->speedup - 1 - noise;
		if (!worst || margin < worst_margin) {
			worst = cmp;
			worst_margin = margin;
			worst_noise = noise;
		}
		(void)v;
	}
	struct analysis_check *c;
	if (!eligible) {
		add_check(a, "huge_pages_ineffective", CHECK_SKIP,
			  "needs a 4k phase far beyond the TLB reach (%u+ pages) compared with a huge-page phase",
			  (unsigned)(FAR_BEYOND_REACH * entries));
		return;
	}
	const struct phase_result *wv = &res[worst->variant];
	if (worst_margin <= 0 && res[worst->baseline].spec.layout == LAYOUT_ALIGNED)
		c = add_check(a, "huge_pages_ineffective", CHECK_WARN,
			      "%s was granted huge pages far beyond the 4 KiB TLB reach, yet is only %.2f× faster: with "
			      "--layout aligned, set aliasing inflates the base latency of both phases and hides the TLB "
			      "effect (see cache_set_aliasing); rerun with --layout colored", wv->spec.name, worst->speedup);
	else if (worst_margin <= 0 && worst->speedup > 1.03)
		c = add_check(a, "huge_pages_ineffective", CHECK_WARN,
			      "inconclusive: %s is %.2f× faster, but the noise (%.0f %%) is as large as the gain; raise "
			      "--repeat or pin with --cpu before concluding that huge pages do not help", wv->spec.name,
			      worst->speedup, 100 * worst_noise);
	else if (worst_margin <= 0)
		c = add_check(a, "huge_pages_ineffective", CHECK_WARN,
			      "%s was granted huge pages and works far beyond the 4 KiB TLB reach, yet is only %.2f× "
			      "faster (noise %.0f %%)%s: the TLB caches the smaller of guest and host page, so a "
			      "hypervisor backing guest memory with 4 KiB pages cancels guest huge pages; confirm on bare "
			      "metal or ask whether the host backs this VM with huge pages (hugetlbfs/THP for guest RAM)",
			      wv->spec.name, worst->speedup, 100 * worst_noise,
			      env && *env->hypervisor ? " in a VM" : "");
	else
		c = add_check(a, "huge_pages_ineffective", CHECK_PASS,
			      "huge pages help beyond noise where the 4 KiB TLB is overwhelmed (worst %.2f×)", worst->speedup);
	evidence(c, "speedup", worst->speedup);
	evidence(c, "noise", worst_noise);
	evidence(c, "l2_tlb_entries", entries);
	evidence(c, "entries_assumed", assumed);
}

/*
 * CPUID TLB geometry that a tlbsize curve is compared with. Hypervisors often
 * zero or invent these leaves; say so rather than match knees against nothing.
 */
static void check_tlb_geometry(const struct phase_result *res, size_t n, const struct environment *env,
			       struct analysis *a)
{
	bool sweep = false;
	struct analysis_check *c;

	for (size_t i = 0; i < n && !sweep; i++)
		sweep = measured_ok(&res[i]) && res[i].spec.workload->sweep == WORKLOAD_SWEEP_PAGE_COUNTS;
	if (!sweep) {
		add_check(a, "tlb_geometry", CHECK_SKIP, "no tlbsize sweep to compare with CPUID");
		return;
	}
	unsigned l1 = env ? env->tlb.l1d_4k_entries : 0, l2 = env ? env->tlb.l2d_4k_entries : 0;
	bool vm = env && *env->hypervisor;
	size_t matched = 0;
	for (size_t i = 0; i < a->n_knees; i++)
		matched += a->knees[i].matches;
	if (!l1 && !l2)
		c = add_check(a, "tlb_geometry", CHECK_WARN,
			      "CPUID reports no TLB geometry%s: the %zu knees are candidates with nothing to confirm "
			      "them; compare with the CPU's documentation", vm ? " (usual in a VM: the hypervisor "
			      "zeroes the leaves)" : "", a->n_knees);
	else if ((l1 && l2 && l2 < l1) || l1 > 4096 || l2 > 65536 || (l1 && l1 % 4) || (l2 && l2 % 4))
		c = add_check(a, "tlb_geometry", CHECK_WARN,
			      "CPUID reports an implausible TLB (L1 %u, L2 %u entries for 4 KiB pages)%s: do not trust "
			      "matches against it", l1, l2, vm ? "; the hypervisor may invent it" : "");
	else if (a->n_knees && !matched)
		c = add_check(a, "tlb_geometry", CHECK_WARN,
			      "none of the %zu knees is within %.0f %% of a CPUID capacity (L1 %u, L2 %u entries): "
			      "the curve shows something else (cache capacity, page-walk caches) or CPUID is wrong",
			      a->n_knees, 100 * KNEE_MATCH_TOLERANCE, l1, l2);
	else
		c = add_check(a, "tlb_geometry", CHECK_PASS, "%zu of %zu knees match CPUID capacities (L1 %u, L2 %u entries)",
			      matched, a->n_knees, l1, l2);
	evidence(c, "l1d_4k_entries", l1);
	evidence(c, "l2d_4k_entries", l2);
	evidence(c, "knees", (double)a->n_knees);
	evidence(c, "matched", (double)matched);
}

/* A process-to-process spread above this: page-cache or allocator state differs between processes. */
static const double PROCESS_SPREAD_MAX = 0.10;
/* Faults per page within this fraction of one fault per page (per 2 MiB on THP). */
static const double FAULTS_PER_PAGE_TOLERANCE = 0.10;

/* The page-fault workload's own checks: fault counts mean what the case says. */
static void check_page_faults(const struct phase_result *res, size_t n, struct analysis *a)
{
	size_t cold = 0, cold_bad = 0, pre = 0, pre_bad = 0, file = 0, file_bad = 0, file_skip = 0, spread_n = 0;
	size_t rusage_n = 0, rusage_bad = 0;
	double worst_ratio = 1, pre_faults = 0, worst_spread = 0, resident = 0;
	const char *cold_where = NULL, *file_where = NULL, *spread_where = NULL;
	struct analysis_check *c;

	for (size_t i = 0; i < n; i++) {
		const struct phase_result *r = &res[i];
		const struct fault_metrics *fm = &a->phases[i].faults;
		if (r->spec.fault_case == FAULT_NONE)
			continue;
		if (r->spec.fault_case == FAULT_FILE_COLD && r->status == PHASE_SKIPPED) {
			file_skip++;
			file_where = r->spec.name;
			continue;
		}
		if (r->status != PHASE_OK || !fm->valid)
			continue;
		if (fm->from_counters) {
			rusage_n++;
			rusage_bad += !fm->rusage_agrees;
		}
		if (fm->processes > 1) {
			spread_n++;
			if (fm->process_spread > worst_spread) {
				worst_spread = fm->process_spread;
				spread_where = r->spec.name;
			}
		}
		double faults = fm->minor + fm->major;
		uint64_t pages = r->fault_samples[0].pages;
		switch (r->spec.fault_case) {
		case FAULT_ANON_COLD: {
			/* One fault per page, one per huge page when THP backs it. */
			uint64_t per = r->backing_known && r->backing.kind != PAGE_BASE ? r->spec.page.bytes / 4096 : 1;
			double ratio = faults / ((double)pages / (double)per);
			cold++;
			if (fabs(ratio - 1) > FAULTS_PER_PAGE_TOLERANCE) {
				cold_bad++;
				if (fabs(ratio - 1) > fabs(worst_ratio - 1)) {
					worst_ratio = ratio;
					cold_where = r->spec.name;
				}
			}
			break;
		}
		case FAULT_ANON_PREFAULT:
			pre++;
			if (faults > 0) {
				pre_bad++;
				pre_faults = fmax(pre_faults, faults);
			}
			break;
		case FAULT_FILE_COLD:
			file++;
			resident = fmax(resident, fm->resident_before);
			if (fm->major <= 0) {
				file_bad++;
				file_where = r->spec.name;
			}
			break;
		default:
			break;
		}
	}
	if (!cold)
		c = add_check(a, "anon_cold_faults_per_page", CHECK_SKIP, "no anon_cold phase ran");
	else if (cold_bad)
		c = add_check(a, "anon_cold_faults_per_page", CHECK_WARN,
			      "%s: %.2f faults per expected fault (one per base page, one per 2 MiB with THP): the "
			      "first touch did not fault as the case defines (fault-around, THP collapse, or reclaim)",
			      cold_where, worst_ratio);
	else
		c = add_check(a, "anon_cold_faults_per_page", CHECK_PASS,
			      "every anon_cold sample faulted once per page (once per 2 MiB with THP), within %.0f %%",
			      100 * FAULTS_PER_PAGE_TOLERANCE);
	evidence(c, "phases", (double)cold);
	evidence(c, "worst_ratio", worst_ratio);

	if (!pre)
		c = add_check(a, "anon_prefault_no_faults", CHECK_SKIP, "no anon_prefault phase ran");
	else if (pre_bad)
		c = add_check(a, "anon_prefault_no_faults", CHECK_FAIL,
			      "a prefaulted region still took %.0f faults per timed touch: the prefault did not stick "
			      "(memory pressure, or a THP split)", pre_faults);
	else
		c = add_check(a, "anon_prefault_no_faults", CHECK_PASS,
			      "prefaulted touches took no fault: the timed loop costs ns per page, not per fault");
	evidence(c, "faults", pre_faults);

	if (!file && !file_skip)
		c = add_check(a, "file_cold_major_faults", CHECK_SKIP, "no file_cold phase ran");
	else if (file_skip && !file)
		c = add_check(a, "file_cold_major_faults", CHECK_SKIP,
			      "%s was skipped: its file could not be evicted from the page cache (see its reason)",
			      file_where);
	else if (file_bad)
		c = add_check(a, "file_cold_major_faults", CHECK_FAIL,
			      "%s took no major fault although the file was evicted (%.1f %% resident before): the "
			      "reads did not go to the device", file_where, 100 * resident);
	else
		c = add_check(a, "file_cold_major_faults", CHECK_PASS,
			      "file_cold took major faults with at most %.1f %% of the file resident before timing",
			      100 * resident);
	evidence(c, "resident_before", resident);

	if (!rusage_n)
		c = add_check(a, "fault_counts_agree", CHECK_SKIP, "no fault counts from both perf and getrusage");
	else if (rusage_bad)
		c = add_check(a, "fault_counts_agree", CHECK_WARN,
			      "in %zu of %zu phases the perf fault counters and getrusage disagree: one of them missed "
			      "faults (another thread, or counting limited to user space)", rusage_bad, rusage_n);
	else
		c = add_check(a, "fault_counts_agree", CHECK_PASS,
			      "perf software counters and getrusage count the same faults (%zu %s)", rusage_n,
			      phases_word(rusage_n));
	evidence(c, "disagree", (double)rusage_bad);

	if (!spread_n)
		c = add_check(a, "process_spread", CHECK_SKIP, "no phase ran in several processes");
	else if (worst_spread > PROCESS_SPREAD_MAX)
		c = add_check(a, "process_spread", CHECK_WARN,
			      "%s: the processes' medians differ by %.0f %% (limit %.0f %%): page-cache, allocator or "
			      "host state changes between runs; report the median of processes, not one run",
			      spread_where, 100 * worst_spread, 100 * PROCESS_SPREAD_MAX);
	else
		c = add_check(a, "process_spread", CHECK_PASS, "the processes agree within %.0f %%", 100 * worst_spread);
	evidence(c, "worst_spread", worst_spread);
}

/* ---- findings ---- */

static struct analysis_finding *add_finding(struct analysis *a, const char *id)
{
	struct analysis_finding *f;

	if (a->n_findings >= MAX_FINDINGS)
		return NULL;
	f = &a->findings[a->n_findings++];
	memset(f, 0, sizeof(*f));
	f->id = id;
	return f;
}

static void finding_evidence(struct analysis_finding *f, const char *key, double value)
{
	evidence_add(&f->evidence, key, value);
}

static int cmp_comparison_size(const void *pa, const void *pb, void *ctx)
{
	const struct phase_result *res = ctx;
	const struct comparison *x = *(const struct comparison *const *)pa, *y = *(const struct comparison *const *)pb;
	uint64_t sx = res[x->variant].spec.size_bytes, sy = res[y->variant].spec.size_bytes;

	return (sx > sy) - (sx < sy);
}

/*
 * Over a size sweep (three or more sizes of one page-size pair): the constant
 * TLB cost is diluted by a base latency that grows with the working set, so the
 * speedup shrinks although TLB misses grow. Compare the lower and upper halves
 * of the sweep by their medians, so one noisy size does not decide.
 */
static bool same_sweep(const struct phase_result *res, const struct comparison *x, const struct comparison *y)
{
	const struct phase_spec *xb = &res[x->baseline].spec, *yb = &res[y->baseline].spec;
	const struct phase_spec *xv = &res[x->variant].spec, *yv = &res[y->variant].spec;

	return xb->page.bytes == yb->page.bytes && xv->page.kind == yv->page.kind && xv->page.bytes == yv->page.bytes &&
	       xb->workload == yb->workload && xb->stride_bytes == yb->stride_bytes &&
	       xb->fault_case == yb->fault_case && xb->layout == yb->layout;
}

static void find_shrinking_speedup(const struct phase_result *res, struct analysis *a)
{
	for (size_t i = 0; i < a->n_comparisons; i++) {
		const struct comparison *first = &a->comparisons[i];
		const struct comparison *sweep[PLAN_MAX_SIZES];
		size_t m = 0;
		bool seen = false;

		for (size_t k = 0; k < i && !seen; k++)
			seen = same_sweep(res, &a->comparisons[k], first);
		if (seen || res[first->baseline].spec.workload->faults_expected)
			continue;
		for (size_t k = i; k < a->n_comparisons && m < PLAN_MAX_SIZES; k++)
			if (same_sweep(res, &a->comparisons[k], first))
				sweep[m++] = &a->comparisons[k];
		if (m < 3)
			continue;
		qsort_r(sweep, m, sizeof(sweep[0]), cmp_comparison_size, (void *)res); // NOLINT(bugprone-sizeof-expression): an array of pointers
		size_t sizes = 1;
		for (size_t k = 1; k < m; k++)
			sizes += res[sweep[k]->baseline].spec.size_bytes != res[sweep[k - 1]->baseline].spec.size_bytes;
		if (sizes < 3)
			continue;	/* a sweep needs three sizes */

		size_t half = m / 2, hi0 = m - half;
		double lo_base[PLAN_MAX_SIZES], hi_base[PLAN_MAX_SIZES], lo_delta[PLAN_MAX_SIZES];
		double hi_delta[PLAN_MAX_SIZES], lo_speed[PLAN_MAX_SIZES], hi_speed[PLAN_MAX_SIZES];
		for (size_t k = 0; k < half; k++) {
			lo_base[k] = a->phases[sweep[k]->baseline].ns.median;
			lo_delta[k] = sweep[k]->delta_ns;
			lo_speed[k] = sweep[k]->speedup;
			hi_base[k] = a->phases[sweep[hi0 + k]->baseline].ns.median;
			hi_delta[k] = sweep[hi0 + k]->delta_ns;
			hi_speed[k] = sweep[hi0 + k]->speedup;
		}
		struct stats_summary lb, hb, ld, hd, ls, hs;
		stats_summarize(lo_base, half, &lb);
		stats_summarize(hi_base, half, &hb);
		stats_summarize(lo_delta, half, &ld);
		stats_summarize(hi_delta, half, &hd);
		stats_summarize(lo_speed, half, &ls);
		stats_summarize(hi_speed, half, &hs);
		double base_growth = lb.median > 0 ? hb.median / lb.median : 0;
		double delta_growth = ld.median > 0 ? hd.median / ld.median : 0;
		if (!(base_growth >= 1.3 && delta_growth > 0 && delta_growth * 1.5 <= base_growth && hs.median < ls.median))
			continue;

		struct analysis_finding *f = add_finding(a, "speedup_shrinks_with_size");
		if (!f)
			return;
		char s0[16], s1[16];
		const struct phase_result *b0 = &res[sweep[0]->baseline], *v0 = &res[sweep[0]->variant];
		snprintf(f->message, sizeof(f->message),
			 "from %siB to %siB the %s latency grows %.1f× (%.1f → %.1f ns, medians of the smaller and the "
			 "larger sizes) while the %s → %s delta stays about the same (%.1f → %.1f ns): the speedup "
			 "shrinks (%.2f× → %.2f×) although TLB misses "
			 "grow, because a roughly constant translation cost is diluted by cache and DRAM latency that "
			 "grow with the working set",
			 format_size(b0->spec.size_bytes, s0, sizeof(s0)),
			 format_size(res[sweep[m - 1]->baseline].spec.size_bytes, s1, sizeof(s1)), b0->spec.page.label,
			 base_growth, lb.median, hb.median, b0->spec.page.label, v0->spec.page.label, ld.median, hd.median,
			 ls.median, hs.median);
		finding_evidence(f, "sizes", (double)m);
		finding_evidence(f, "base_growth", base_growth);
		finding_evidence(f, "delta_growth", delta_growth);
		finding_evidence(f, "speedup_small", ls.median);
		finding_evidence(f, "speedup_large", hs.median);
	}
}

/* ---- summary ---- */

/* Append formatted text to the NUL-terminated s of capacity cap (truncating). */
__attribute__((format(printf, 3, 4)))
static void appendf(char *s, size_t cap, const char *fmt, ...)
{
	size_t len = strlen(s);
	va_list ap;

	if (len + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(s + len, cap - len, fmt, ap);
	va_end(ap);
}

/* "N checks failed (a, b)" / "N warnings (c)" for the checks at status st; nothing when none. */
static void append_checks(const struct analysis *a, enum check_status st, const char *one, const char *many, char *s,
			  size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < a->n_checks; i++)
		n += a->checks[i].status == st;
	if (!n)
		return;
	appendf(s, cap, "%s%zu %s (", *s ? "; " : "", n, n > 1 ? many : one);
	for (size_t i = 0, k = 0; i < a->n_checks; i++)
		if (a->checks[i].status == st)
			appendf(s, cap, "%s%s", k++ ? ", " : "", a->checks[i].id);
	appendf(s, cap, ")");
}

static void summarise(const struct phase_result *res, struct analysis *a)
{
	char *s = a->summary;
	size_t cap = sizeof(a->summary);

	*s = '\0';
	for (size_t i = 0; i < a->n_comparisons; i++) {
		const struct comparison *c = &a->comparisons[i];
		const struct phase_result *b = &res[c->baseline], *v = &res[c->variant];
		const struct phase_analysis *pb = &a->phases[c->baseline];
		char sz[16];
		if (a->n_stride_steps || res[c->baseline].spec.fault_case != FAULT_NONE)
			continue;	/* stride and fault sweeps are summed up by their own figures */
		appendf(s, cap, "%sat %siB, %s pages are %.2f× %s than %s", *s ? "; " : "",
			format_size(v->spec.size_bytes, sz, sizeof(sz)), v->spec.page.label,
			c->speedup >= 1 ? c->speedup : (c->speedup > 0 ? 1 / c->speedup : 0),
			c->speedup >= 1 ? "faster" : "slower", b->spec.page.label);
		if (pb->has_control)
			appendf(s, cap, "; address translation is %.1f of %.1f ns per access at %s", pb->translation_ns,
				pb->ns.median, b->spec.page.label);
		else if (c->have_walk_cycles)
			appendf(s, cap, "; page walks account for %.1f of %.1f ns per access at %s", c->tlb_ns,
				pb->ns.median, b->spec.page.label);
		else if (c->delta_ns > 0)
			appendf(s, cap, "; %s pages remove %.1f of %.1f ns per access", v->spec.page.label, c->delta_ns,
				pb->ns.median);
	}
	for (size_t i = 0; i < a->n_stride_steps; i++) {
		const struct stride_step *st = &a->stride_steps[i];
		const struct phase_spec *f = &res[st->from].spec, *t = &res[st->to].spec;
		char sz[16], s1[16], s2[16];
		if (strcmp(st->label, "tlb") != 0)
			continue;
		appendf(s, cap, "%sat %siB on %s pages the TLB step (%sB -> %sB stride) adds %.2f ns (%.1f cycles) per access",
			*s ? "; " : "", format_size(f->size_bytes, sz, sizeof(sz)), f->page.label,
			format_size(f->stride_bytes, s1, sizeof(s1)), format_size(t->stride_bytes, s2, sizeof(s2)),
			st->delta_ns, st->delta_cycles);
	}
	for (size_t i = 0; i < a->n_phases; i++) {
		const struct fault_metrics *fm = &a->phases[i].faults;
		if (!measured_ok(&res[i]) || !fm->valid)
			continue;
		appendf(s, cap, "%s%s on %s: %.0f ns per page", *s ? "; " : "", fault_case_name(res[i].spec.fault_case),
			res[i].spec.page.label, fm->ns_per_page.median);
		if (fm->ns_per_fault.n)
			appendf(s, cap, ", %.0f ns per fault, %.3g pages per fault", fm->ns_per_fault.median,
				fm->pages_per_fault.median);
		else
			appendf(s, cap, ", no faults");
	}
	if (a->n_knees) {
		appendf(s, cap, "%scandidate TLB capacities at", *s ? "; " : "");
		for (size_t i = 0; i < a->n_knees; i++) {
			const struct tlb_knee *tk = &a->knees[i];
			appendf(s, cap, "%s %.0f pages (%.1f -> %.1f ns", i ? "," : "", tk->knee.x_before, tk->knee.before_ns,
				tk->knee.after_ns);
			if (tk->matches)
				appendf(s, cap, ", CPUID %s %u", tk->cpuid_level, tk->cpuid_entries);
			appendf(s, cap, ")");
		}
	}
	if (!a->n_comparisons && !a->n_stride_steps && !a->n_knees)
		for (size_t i = 0; i < a->n_phases; i++) {
			const struct target_phase *tp = res[i].target;
			if (measured_ok(&res[i]) && !a->phases[i].faults.valid) {
				appendf(s, cap, "%s%s: %.1f ns per access", *s ? "; " : "", res[i].spec.name,
					a->phases[i].ns.median);
			} else if (res[i].status == PHASE_OK && tp && !res[i].n_samples && tp->n_wall) {
				/* A run phase without declared accesses: its wall time per occurrence. */
				struct stats_summary w;
				stats_summarize(tp->wall_ns, tp->n_wall, &w);
				appendf(s, cap, "%s%s: %.3g ms%s", *s ? "; " : "", res[i].spec.name, w.median / 1e6,
					tp->n_wall > 1 ? " per occurrence (median)" : "");
			}
		}
	if (a->verdict == VERDICT_OK) {
		appendf(s, cap, "%sall checks passed", *s ? "; " : "");
		return;
	}
	append_checks(a, CHECK_FAIL, "check failed", "checks failed", s, cap);
	append_checks(a, CHECK_WARN, "warning", "warnings", s, cap);
}

/* The verdict (the worst check) and the plain-language summary, from the checks as they stand. */
static void finish(const struct phase_result *results, struct analysis *out)
{
	out->verdict = VERDICT_OK;
	for (size_t i = 0; i < out->n_checks; i++) {
		if (out->checks[i].status == CHECK_FAIL)
			out->verdict = VERDICT_FAIL;
		else if (out->checks[i].status == CHECK_WARN && out->verdict == VERDICT_OK)
			out->verdict = VERDICT_WARN;
	}
	summarise(results, out);
}

int analysis_check_build(struct analysis *a, const struct phase_result *results, size_t n,
			 const struct analysis_build *build)
{
	const char *level = build->opt_level ? build->opt_level : "";
	const char *levels = build->opt_levels ? build->opt_levels : "";
	const char *source = build->source ? build->source : "none";
	struct analysis_check *c;

	/* Where the level was read, in words. */
	if (strcmp(source, "gcc-command-line") == 0)
		source = ".GCC.command.line section";
	else if (strcmp(source, "dwarf-producer") == 0)
		source = "DWARF producer strings";

	(void)n;
	if (!a->checks || a->n_checks >= MAX_CHECKS)
		return -ENOMEM;
	if (build->unreadable && *build->unreadable)
		c = add_check(a, "build_optimised", CHECK_SKIP, "the executable was not read as ELF (%s): no recorded build "
			      "to judge", build->unreadable);
	else if (!*level)
		c = add_check(a, "build_optimised", CHECK_SKIP,
			      "%s records no optimisation level (clang records none by default: build with "
			      "-frecord-command-line, or gcc -g / -frecord-gcc-switches)", build->binary);
	else if (strcmp(level, "-O0") == 0)
		c = add_check(a, "build_optimised", CHECK_WARN,
			      "%s was compiled -O0%s (read from its %s): unoptimised code spills and reloads around "
			      "every access, so the phases time the compiler's bookkeeping as well as the memory "
			      "system; build the benchmark with -O2", build->binary,
			      build->defaulted ? " (no -O given: the compiler's default)" : "", source);
	else if (strcmp(level, "mixed") == 0 && strstr(levels, "-O0"))
		c = add_check(a, "build_optimised", CHECK_WARN,
			      "%s mixes optimisation levels (%s, read from its %s): the parts built -O0 spill and "
			      "reload around every access; check that the timed loop is not among them", build->binary,
			      levels, source);
	else
		c = add_check(a, "build_optimised", CHECK_PASS, "%s was compiled %s (read from its %s)", build->binary,
			      strcmp(level, "mixed") == 0 ? levels : level, source);
	evidence(c, "defaulted", build->defaulted);
	finish(results, a);
	return 0;
}

int analysis_check_markers(struct analysis *a, const struct phase_result *results, size_t n, unsigned messages,
			   unsigned refused, const char *first)
{
	struct analysis_check *c;

	(void)n;
	if (!a->checks || a->n_checks >= MAX_CHECKS)
		return -ENOMEM;
	if (!messages)
		c = add_check(a, "marker_protocol", CHECK_SKIP, "the command sent no marker or control line");
	else if (refused)
		c = add_check(a, "marker_protocol", CHECK_WARN,
			      "tlbprof refused %u of the command's %u marker or control lines (first: %s): the phases "
			      "they marked are missing or incomplete", refused, messages, first && *first ? first : "?");
	else
		c = add_check(a, "marker_protocol", CHECK_PASS, "all %u marker or control lines were accepted", messages);
	evidence(c, "messages", messages);
	evidence(c, "refused", refused);
	finish(results, a);
	return 0;
}

int analysis_run(const struct phase_result *results, size_t n, const struct environment *env,
		 const struct timing_calibration *clock, struct analysis *out)
{
	memset(out, 0, sizeof(*out));
	out->checks = calloc(MAX_CHECKS, sizeof(*out->checks));
	out->findings = calloc(MAX_FINDINGS, sizeof(*out->findings));
	out->phases = calloc(n ? n : 1, sizeof(*out->phases));
	if (!out->checks || !out->findings || !out->phases)
		goto oom;
	out->n_phases = n;
	analyse_phases(results, n, out);
	if (build_comparisons(results, n, clock, out) != 0 || build_stride_steps(results, n, clock, out) != 0 ||
	    build_knees(results, n, env, out) != 0)
		goto oom;

	check_phases(results, n, out);
	check_self_checks(results, n, out);
	check_backing(results, n, out);
	check_set_aliasing(results, n, env, out);
	check_timer(results, n, clock, out);
	check_too_fast(results, n, env, clock, out);
	check_tlb_pressure(results, n, env, out);
	check_multiplexed(results, n, out);
	check_pmu(results, n, out);
	check_unstable(results, n, out);
	check_migrations(results, n, out);
	check_warmup(results, n, out);
	check_faults(results, n, out);
	check_frequency(env, clock, out);
	check_huge_ineffective(results, env, out);
	check_tlb_geometry(results, n, env, out);
	check_page_faults(results, n, out);
	find_shrinking_speedup(results, out);
	finish(results, out);
	return 0;
oom:
	analysis_free(out);
	return -ENOMEM;
}

void analysis_free(struct analysis *a)
{
	free(a->phases);
	free(a->comparisons);
	free(a->stride_steps);
	free(a->knees);
	free(a->checks);
	free(a->findings);
	memset(a, 0, sizeof(*a));
}
