/* SPDX-License-Identifier: MIT */
/* Checks on the timing: clock resolution, speed of light, noise, migrations, warm-up and frequency scaling. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "judge/analysis_internal.h"
#include "measure/workload.h"

/*
 * The first sample still carried warm-up when it is slower than the median
 * of the others by more than the larger of this floor and WARMUP_SPREADS
 * times the others' own reach above their median: on a host whose samples
 * jump 15 % among themselves, a first sample 15 % slower says nothing.
 */
static const double WARMUP_EXCESS = 0.10;
static const double WARMUP_SPREADS = 3.0;
/*
 * One burst on a shared host (another process's memory traffic over one
 * 50 ms sample) looks exactly like one cold start: 84 % on a sample whose
 * others agree within 3 % was seen here on a benchmark that warms up. A cold
 * start repeats; a burst does not. So a warm-up is called only on
 * WARMUP_MIN_GROUPS first samples that stand out: the median over two or more
 * allocations of one phase, or two or more phases.
 */
#define WARMUP_MIN_GROUPS 2
/* A calibration whose runs disagree by more than this: the clock moved during calibration. */
static const double CLOCK_SPREAD_MAX = 0.10;
/* No core answers an L1 hit in fewer than 90 % of its documented load-to-use cycles. */
static const double TOO_FAST_FRACTION = 0.9;
/* Without a documented value: no x86 or Arm core has an L1 load-to-use latency below 3 cycles. */
static const double MIN_L1_CYCLES = 3.0;
/* Steal above this share of a phase's wall time: the hypervisor took the CPU away. */
static const double STEAL_SHARE_MAX = 0.01;
/*
 * A median whose claimed 95 % half-width (its own and, with second passes,
 * the host's part) exceeds this is unstable. Judged on the median, not
 * the samples: quiet default runs here had samples varying 4-6 % (the old
 * 5 % coefficient-of-variation limit fired in 3 of 5) while their medians
 * repeated within 2-3 %; the claim with three allocations and one second
 * pass was 4-6 % there, and ±120 % and more under contention.
 */
static const double UNSTABLE_HALFWIDTH = 0.10;
/*
 * Fewer steal ticks than this in a phase are not judged. The old rule, steal
 * of all CPUs over the timed samples' wall time alone, read 53 % for a phase
 * of a run whose steal was 0.6 % of its CPU time here.
 */
enum { STEAL_MIN_TICKS = 2 };
/* The core clock at the end this far from its calibration: cycles per access are off by as much. */
static const double CLOCK_MOVED_MAX = 0.05;

void checks_timer_resolution(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct phase_result *res = in->results;
	size_t n = in->n;
	const struct timing_calibration *clock = in->clock;
	double shortest = 0;

	if (!clock || clock->clock_overhead_ns <= 0) {
		checks_add(a, def, CHECK_SKIP, "clock overhead not measured");
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
		checks_add(a, def, CHECK_SKIP, "no phase was timed");
		return;
	}
	double ratio = shortest / fmax(clock->clock_overhead_ns, clock->clock_resolution_ns);
	struct analysis_check *c;
	if (ratio >= 100)
		c = checks_add(a, def, CHECK_PASS,
			       "the shortest timed sample (%.3g ns) is %.0f× the clock overhead (%.1f ns)", shortest,
			       ratio, clock->clock_overhead_ns);
	else
		c = checks_add(a, def, CHECK_FAIL,
			       "the shortest timed sample (%.3g ns) is only %.1f× the clock overhead (%.1f ns): timer "
			       "noise is the size of the signal; time longer intervals (tlbprof: raise --iters; "
			       "pagefault: --size)", shortest, ratio,
			       clock->clock_overhead_ns);
	checks_evidence(c, "shortest_sample_ns", shortest);
	checks_evidence(c, "clock_overhead_ns", clock->clock_overhead_ns);
	checks_evidence(c, "ratio", ratio);
}

void checks_too_fast(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct phase_result *res = in->results;
	size_t n = in->n;
	const struct environment *env = in->env;
	const struct timing_calibration *clock = in->clock;
	double floor_cycles = env && env->l1_latency_cycles ? TOO_FAST_FRACTION * env->l1_latency_cycles : MIN_L1_CYCLES;
	const struct phase_result *worst = NULL;
	double worst_cycles = 0;
	size_t timed = 0;

	for (size_t i = 0; i < n; i++) {
		double ghz = analysis_clock_ghz(clock, &res[i]);
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
		checks_add(a, def, CHECK_SKIP, "no latency phase was timed with a known core clock");
		return;
	}
	/*
	 * Cycles from the calibrated clock are as uncertain as it is: its runs' spread (interquartile range over the
	 * median) bounds how far the core may have run faster than calibrated. Judged at that bound: a packed control
	 * that fits L1 read 3.49 cycles against Zen 5's 3.6 with the clock calibrated at 3.13 GHz, spread 18.8 %, on a
	 * boosting guest, and failed a correct run; a deleted loop is a fraction of a cycle at any bound.
	 */
	double spread = clock && clock->core_clock_ghz > 0 && clock->core_clock_spread > 0 ? clock->core_clock_spread
											    : 0;
	struct analysis_check *c;
	if (worst_cycles * (1 + spread) < floor_cycles)
		c = checks_add(a, def, CHECK_FAIL,
			       "%s: %.2f cycles per access is faster than an L1 hit (%s %.0f cycles): the loads were "
			       "not dependent or the loop was optimised away; the number is not a latency",
			       worst->spec.name, worst_cycles,
			       env && env->l1_latency_cycles ? "documented" : "no core answers in under",
			       env && env->l1_latency_cycles ? (double)env->l1_latency_cycles : MIN_L1_CYCLES);
	else if (worst_cycles < floor_cycles)
		c = checks_add(a, def, CHECK_PASS,
			       "the fastest phase (%s, %.2f cycles per access) reads faster than an L1 hit (%s %.0f "
			       "cycles) only by the calibrated clock: at its spread (%.1f %%, %.2f cycles) it is not",
			       worst->spec.name, worst_cycles, env && env->l1_latency_cycles ? "documented" : "at least",
			       env && env->l1_latency_cycles ? (double)env->l1_latency_cycles : MIN_L1_CYCLES,
			       100 * spread, worst_cycles * (1 + spread));
	else
		c = checks_add(a, def, CHECK_PASS,
			       "the fastest phase (%s, %.2f cycles per access) is no faster than an L1 hit (%s %.0f cycles)",
			       worst->spec.name, worst_cycles, env && env->l1_latency_cycles ? "documented" : "at least",
			       env && env->l1_latency_cycles ? (double)env->l1_latency_cycles : MIN_L1_CYCLES);
	checks_evidence(c, "fastest_cycles_per_access", worst_cycles);
	checks_evidence(c, "floor_cycles", floor_cycles);
}

/* Append a formatted part to out (len bytes, used so far in *at), separated by "; "; what does not fit is cut. */
static void add_part(char *out, size_t len, size_t *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add_part(char *out, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;

	if (*at + 3 >= len)
		return;
	if (*at)
		*at += (size_t)snprintf(out + *at, len - *at, "; ");
	va_start(ap, fmt);
	int n = vsnprintf(out + *at, len - *at, fmt, ap);
	va_end(ap);
	*at = n < 0 ? *at : *at + (size_t)n >= len ? len - 1 : *at + (size_t)n;
}

/*
 * The share of CPU time the hypervisor stole while a phase ran: steal over
 * every CPU tick of the phase, where both were recorded. A single tick
 * (1/USER_HZ s) is quantisation, not a measurement, so it counts as none.
 * Reports from before stat_ticks: steal time over the timed samples' wall
 * time, as they were judged.
 */
static double phase_steal_share(const struct phase_result *r)
{
	if (r->stat_ticks)
		return r->steal_ticks >= STEAL_MIN_TICKS ? (double)r->steal_ticks / (double)r->stat_ticks : 0;
	return r->timed_ns > 0 ? r->steal_ms * 1e6 / r->timed_ns : 0;
}

/* Replace c's message (its evidence was added first). */
static void set_message(struct analysis_check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_message(struct analysis_check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	analysis_vtext(c->message, sizeof(c->message), fmt, ap);
	va_end(ap);
}

/*
 * What the host facts say moved during the run, as one phrase into out:
 * the core clock against its calibration, steal over the run, pages
 * khugepaged collapsed, DAMON schemes that change memory. Facts the report
 * does not hold, or that could not be read, are said so. Returns whether
 * something moved; the values go into c's evidence.
 */
static bool host_moved(const struct analysis_input *in, char *out, size_t len, struct analysis_check *c)
{
	const struct host_facts *h = in->env ? &in->env->host : NULL;
	double ratio = timing_clock_ratio(in->clock), share;
	uint64_t scans, collapsed;
	bool collapsed_known, moved = false;
	size_t at = 0;

	out[0] = '\0';
	if (ratio > 0) {
		checks_evidence(c, "core_clock_end_ratio", ratio);
		if (fabs(ratio - 1) > CLOCK_MOVED_MAX) {
			add_part(out, len, &at, "the core clock %s %.0f %% between calibration and the end",
				 ratio < 1 ? "fell" : "rose",
				 100 * fabs(ratio - 1));
			moved = true;
		}
	}
	if (ratio <= 0 && h && h->recorded)
		add_part(out, len, &at, "core clock: could not tell, because %s",
			 in->clock && in->clock->core_clock_ghz > 0 ? "it was not measured again at the end"
								    : "it was not calibrated");
	if (!h || !h->recorded) {
		add_part(out, len, &at, "host facts not recorded%s", ratio > 0 ? "" : ", nor the end clock");
		return moved;
	}
	if (host_steal_share(h, &share)) {
		checks_evidence(c, "run_steal_share", share);
		if (share > STEAL_SHARE_MAX) {
			add_part(out, len, &at, share >= 0.02 ? "steal %.0f %% of the run" : "steal %.1f %% of the run",
				 100 * share);
			moved = true;
		}
	} else {
		add_part(out, len, &at, "steal: could not tell, because /proc/stat was not read at both ends");
	}
	if (host_khugepaged_delta(h, &scans, &collapsed, &collapsed_known)) {
		if (collapsed_known)
			checks_evidence(c, "khugepaged_pages_collapsed", (double)collapsed);
		if (collapsed_known && collapsed > 0) {
			add_part(out, len, &at, "khugepaged collapsed %llu pages during the run",
				 (unsigned long long)collapsed);
			moved = true;
		}
	} else if (!h->before.khugepaged_present && !h->after.khugepaged_present) {
		add_part(out, len, &at, "khugepaged %s",
			 *h->after.khugepaged_why ? h->after.khugepaged_why : "not present");
	} else {
		add_part(out, len, &at, "khugepaged: could not tell, because its full_scans was %s",
			 h->before.khugepaged_present && h->after.khugepaged_present ? "lower at the end"
										  : "read at one end only");
	}
	const struct host_damon *d[2] = { &h->damon_before, &h->damon_after };
	char seen[sizeof(h->damon_after.actions) * 2] = "";
	for (size_t k = 0; k < 2; k++) {
		char list[sizeof(d[k]->actions)], *save = NULL;
		snprintf(list, sizeof(list), "%s", d[k]->actions);
		for (char *a = strtok_r(list, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
			if (!host_damon_action_moves_memory(a) || strstr(seen, a))
				continue;
			add_part(out, len, &at, "DAMON scheme %s active", a);
			strncat(seen, a, sizeof(seen) - strlen(seen) - 2);
			strcat(seen, ",");
			moved = true;
		}
	}
	if (!at)
		add_part(out, len, &at, "nothing the guest sees moved (steal, khugepaged, DAMON, core clock)");
	return moved;
}

/*
 * Why a median is uncertain, as a phrase: the run's conditions moved when
 * the host's part (the second passes' spread, later in the run) is wider
 * than the phase's own interval and its allocations' spread (they all
 * shared one run's conditions); physical placement when the allocations
 * disagree more than twice the noise within one; else plain noise.
 */
static const char *unstable_cause(const struct phase_analysis *pa, const struct phase_result *r, char *buf,
				  size_t len)
{
	if (pa->second_pass && pa->host > pa->precision_within && pa->host > pa->between_allocations) {
		if (!r->pass_warmup_known || !r->pass_unsettled)
			return "the machine moved between the run and its second passes, which its allocations back to "
			       "back could not see; rerun, and compare runs rather than allocations";
		/* A re-warm that hit its cap: a cache that never refilled and a slower host read alike. Short: the
		   check's message must still hold the host's facts after it. */
		snprintf(buf, len,
			 "the machine moved between the run and its second passes, or their caches never refilled "
			 "(%u of its %u re-warms hit their cap; one pass cannot tell which); rerun, and compare runs",
			 r->pass_unsettled, r->n_passes);
		return buf;
	}
	if (pa->allocations > 1 && pa->between_allocations > 2 * pa->within_allocation)
		return "physical page placement differs between allocations; report the median over several "
		       "(--realloc)";
	return "the machine is noisy; pin with --cpu, rerun, compare medians with care";
}

void checks_unstable(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct phase_result *res = in->results;
	size_t n = in->n;
	const struct phase_result *worst = NULL, *stolen = NULL;
	double worst_hw = -1, worst_cv = 0, worst_steal = 0;
	size_t timed = 0;

	for (size_t i = 0; i < n; i++) {
		const struct phase_analysis *pa = &a->phases[i];
		const struct stats_summary *st = &pa->ns;
		struct stats_summary wall;
		double hw = pa->precision;
		/* A run phase that declared no accesses: its occurrences' wall times are its samples. */
		if (res[i].status == PHASE_OK && res[i].n_samples < 2 && res[i].target && res[i].target->n_wall >= 2) {
			stats_summarize(res[i].target->wall_ns, res[i].target->n_wall, &wall);
			st = &wall;
			hw = stats_median_halfwidth(res[i].target->wall_ns, NULL, res[i].target->n_wall);
		} else if (res[i].status != PHASE_OK || res[i].n_samples < 2) {
			continue;
		}
		timed++;
		double cv = st->mean > 0 ? st->stddev / st->mean : 0;
		if (cv > worst_cv)
			worst_cv = cv;
		if (!worst || hw > worst_hw) {
			worst = &res[i];
			worst_hw = hw;
		}
		double share = phase_steal_share(&res[i]);
		if (share > worst_steal) {
			stolen = &res[i];
			worst_steal = share;
		}
	}
	if (!timed || !worst) {
		checks_add(a, def, CHECK_SKIP, "no phase has two or more samples");
		return;
	}
	struct analysis_check *c;
	const struct phase_analysis *wp = &a->phases[worst - res];
	char split[120] = "", host[240], cause[200];
	double ratio = timing_clock_ratio(in->clock);
	if (wp->second_pass)
		snprintf(split, sizeof(split), "; own ±%.1f %%, host ±%.1f %% from %u second pass%s, moved %+.1f %%",
			 100 * wp->precision_within, 100 * wp->host, wp->passes, wp->passes == 1 ? "" : "es",
			 100 * wp->between_runs);
	else if (!worst->target)
		snprintf(split, sizeof(split), "; no second pass recorded");
	if (worst_hw > UNSTABLE_HALFWIDTH) {
		c = checks_add(a, def, CHECK_WARN, "%s", "");
		host_moved(in, host, sizeof(host), c);
		set_message(c, "%s: its median is uncertain by ±%.0f %% (95 %%, limit %.0f %%%s): %s; host: %s",
				   worst->spec.name, 100 * worst_hw, 100 * UNSTABLE_HALFWIDTH, split,
				   unstable_cause(wp, worst, cause, sizeof(cause)), host);
	} else if (worst_steal > STEAL_SHARE_MAX) {
		c = checks_add(a, def, CHECK_WARN, "%s", "");
		host_moved(in, host, sizeof(host), c);
		set_message(c, "%s: the hypervisor stole %.1f %% of the CPU time while it ran (steal time): "
				   "its samples may hide pauses; host: %s", stolen->spec.name, 100 * worst_steal, host);
	} else if (ratio > 0 && fabs(ratio - 1) > CLOCK_MOVED_MAX) {
		c = checks_add(a, def, CHECK_WARN, "%s", "");
		host_moved(in, host, sizeof(host), c);
		set_message(c, "medians hold within ±%.1f %%, but %s: cycles per access (from the start's clock) "
				   "are off by as much", 100 * worst_hw, host);
	} else {
		c = checks_add(a, def, CHECK_PASS, "%s", "");
		host_moved(in, host, sizeof(host), c);
		set_message(c, "medians hold within ±%.1f %% (95 %%, %s%s; samples vary up to %.1f %%); host: %s",
				   100 * worst_hw, worst->spec.name, split, 100 * worst_cv, host);
	}
	checks_evidence(c, "worst_cv", worst_cv);
	checks_evidence(c, "worst_steal_share", worst_steal);
	checks_evidence(c, "median_halfwidth", worst_hw);
	if (wp->second_pass) {
		checks_evidence(c, "between_runs", wp->between_runs);
		checks_evidence(c, "host", wp->host);
	}
}

void checks_cpu_migrations(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct phase_result *res = in->results;
	size_t n = in->n;
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
		c = checks_add(a, def, CHECK_SKIP, "the cpu-migrations counter is not available");
	else if (total > 0 && where && where->target)
		c = checks_add(a, def, CHECK_WARN,
			       "the command's threads moved between CPUs %.0f times inside its phases (first in %s): "
			       "caches and TLBs went cold mid-phase; pin it with tlbprof run --cpu (or taskset for "
			       "several threads)", total, where->spec.name);
	else if (total > 0)
		c = checks_add(a, def, CHECK_WARN,
			       "the measuring thread moved between CPUs %.0f times during timed samples (first in %s): "
			       "caches and TLBs went cold mid-sample; pin it with --cpu", total, where->spec.name);
	else
		c = checks_add(a, def, CHECK_PASS, "no CPU migration during the timed samples");
	checks_evidence(c, "migrations", total);
}

/* How far the first sample of a group stands out, and how far it may. */
struct warmup_excess {
	double excess;		/* first / median of the others - 1 (median over the allocations) */
	double threshold;	/* max(WARMUP_EXCESS, WARMUP_SPREADS x the others' reach above their median) */
	double margin;		/* median over the allocations of excess - threshold: > 0 stands out */
	size_t groups;		/* allocations judged */
	bool skipped_first;	/* the phase's second sample, after tlbprof read its chain or region, left out */
};

/*
 * How much slower the first sample of an allocation is than the median of
 * that allocation's other samples, against those others' own spread, as the
 * median over the allocations with three or more samples (all samples are
 * one allocation without tags). Another allocation's placement is not a
 * warm-up, so allocations are not mixed; and a cold start repeats on every
 * allocation, where one noisy first sample among many allocations does not.
 * A tlbprof run phase whose chain or region tlbprof read at its first end
 * (while the benchmark waited) has its second sample left out of the
 * others: copying the chain out and reading the pages run the region through
 * tlbprof's caches, which slowed that sample by 7 % at the median and up to
 * 60 % here, on a benchmark that had warmed up, and it is tlbprof's doing.
 * The first sample, the one a warm-up shows in, is the benchmark's own.
 * Returns false when no allocation has enough samples.
 */
static bool first_sample_excess(const struct phase_result *r, struct warmup_excess *w)
{
	double per[STATS_MAX_GROUPS], ex[STATS_MAX_GROUPS], th[STATS_MAX_GROUPS];
	struct stats_groups g;
	size_t na = 0, skip = r->target && (r->target->chain_inspected || r->target->has_region) ? 1 : 0;

	memset(w, 0, sizeof(*w));
	w->skipped_first = skip;
	if (stats_group(r->samples_ns, r->sample_alloc, r->n_samples, &g))
		return false;
	for (size_t i = 0; i < g.k && na < STATS_MAX_GROUPS; i++) {
		/* Only the phase's second sample (allocation 0's) followed tlbprof's reading. */
		size_t left_out = i == 0 ? skip : 0;
		const double *first = g.v + g.start[i];
		if (g.len[i] < left_out + 3)
			continue;
		struct stats_summary st;
		size_t others = g.len[i] - left_out - 1;
		stats_summarize(first + 1 + left_out, others, &st);
		if (!(st.median > 0))
			continue;
		double reach = st.max / st.median - 1;
		ex[na] = first[0] / st.median - 1;
		th[na] = fmax(WARMUP_EXCESS, WARMUP_SPREADS * reach);
		per[na] = ex[na] - th[na];
		na++;
	}
	stats_groups_free(&g);
	if (!na)
		return false;
	w->groups = na;
	w->excess = stats_median(ex, na);
	w->threshold = stats_median(th, na);
	w->margin = stats_median(per, na);
	return true;
}

void checks_warmup_insufficient(const struct analysis_check_def *def, const struct analysis_input *in,
				struct analysis *a)
{
	const struct phase_result *res = in->results;
	size_t n = in->n, eligible = 0, skipped = 0, standing = 0, strong = 0;
	const struct phase_result *worst = NULL;
	struct warmup_excess wx, worst_wx = { 0 };

	for (size_t i = 0; i < n; i++) {
		/* Fresh memory per sample has no warm-up: its first sample is like the others by design. */
		if (res[i].status != PHASE_OK || res[i].n_samples < 3 || res[i].spec.workload->per_sample_memory ||
		    !first_sample_excess(&res[i], &wx))
			continue;
		eligible++;
		skipped += wx.skipped_first;
		standing += wx.margin > 0;
		strong += wx.margin > 0 && wx.groups >= WARMUP_MIN_GROUPS;
		if (!worst || wx.margin > worst_wx.margin) {
			worst = &res[i];
			worst_wx = wx;
		}
	}
	struct analysis_check *c;
	if (!eligible) {
		checks_add(a, def, CHECK_SKIP, "needs three or more samples on an allocation");
		return;
	}
	if (strong || standing >= WARMUP_MIN_GROUPS)
		c = checks_add(a, def, CHECK_WARN,
			       "%s: the first sample of an allocation is %.0f %% slower than the median of its others, "
			       "beyond the %.0f %% their own spread allows (median over the allocations): caches, TLBs or "
			       "page walks were still warming up; %s",
			       worst->spec.name, 100 * worst_wx.excess, 100 * worst_wx.threshold,
			       worst->target ? "warm up on the same path before the first timed phase"
			       : worst->spec.iterations_auto
				       ? "where the phase's warmup.unsettled counts allocations whose warm-up hit its cap (a "
					 "quarter of --time-budget), raise --time-budget; where none did, the host slowed "
					 "down after the warm-up: rerun, or pin with --cpu"
				       : "raise --warmup-frac, or use --iters auto (it warms up until a pass is no longer faster)");
	else if (standing)
		c = checks_add(a, def, CHECK_PASS,
			       "%s: its first sample is %.0f %% slower than the median of its others (beyond the %.0f %% "
			       "their spread allows), but on one allocation, and no other phase's first sample stands "
			       "out: one burst on the host looks the same, and a cold start would repeat; not called a "
			       "warm-up (more allocations, or a second phase, would tell)", worst->spec.name,
			       100 * worst_wx.excess, 100 * worst_wx.threshold);
	else
		c = checks_add(a, def, CHECK_PASS,
			       "first samples are within what the other samples' spread allows (at least %.0f %%; closest: "
			       "%s, %.0f %% against %.0f %%)%s", 100 * WARMUP_EXCESS, worst->spec.name,
			       100 * worst_wx.excess, 100 * worst_wx.threshold,
			       skipped ? "; of run phases whose chain or region tlbprof read after the first sample, the "
					 "second is left out" : "");
	checks_evidence(c, "worst_first_sample_excess", worst_wx.excess);
	checks_evidence(c, "threshold", worst_wx.threshold);
	checks_evidence(c, "phases_standing_out", (double)standing);
	checks_evidence(c, "after_tlbprof_copy_skipped", (double)skipped);
}

void checks_frequency_scaling(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct environment *env = in->env;
	const struct timing_calibration *clock = in->clock;
	struct analysis_check *c;

	if (clock && clock->core_clock_ghz > 0 && clock->core_clock_spread > CLOCK_SPREAD_MAX) {
		c = checks_add(a, def, CHECK_WARN,
			       "the core-clock calibration runs disagree by %.0f %% (interquartile range): the clock moved (frequency "
			       "scaling, or the hypervisor descheduled the vCPU), so cycles per access are uncertain "
			       "by as much", 100 * clock->core_clock_spread);
	} else if (env && *env->cpufreq_governor && strcmp(env->cpufreq_governor, "performance") != 0) {
		c = checks_add(a, def, CHECK_WARN,
			       "the cpufreq governor is '%s'%s: the core clock follows load, so latency in ns drifts; "
			       "for stable numbers: cpupower frequency-set -g performance%s", env->cpufreq_governor,
			       env->turbo == 1 ? " and turbo is on" : "",
			       env->turbo == 1 ? ", and disable turbo/boost" : "");
	} else if (env && env->turbo == 1) {
		c = checks_add(a, def, CHECK_WARN,
			       "turbo/boost is on: the core clock depends on temperature and load on other cores; "
			       "cycles come from the clock calibrated at start");
	} else if (env && (*env->cpufreq_governor || env->turbo == 0)) {
		c = checks_add(a, def, CHECK_PASS, "governor '%s', turbo %s",
			       *env->cpufreq_governor ? env->cpufreq_governor : "unknown",
			       env->turbo == 0 ? "off" : "unknown");
	} else {
		c = checks_add(a, def, CHECK_SKIP,
			       "cpufreq is not exposed (usual in VMs); the calibrated core clock varied %.1f %% between runs",
			       clock ? 100 * clock->core_clock_spread : 0.0);
	}
	if (clock)
		checks_evidence(c, "core_clock_spread", clock->core_clock_spread);
	if (env)
		checks_evidence(c, "turbo", env->turbo);
}
