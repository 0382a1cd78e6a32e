/* SPDX-License-Identifier: MIT */
/* Execute a plan: per phase allocate, prepare, verify pages, warm up, time with counters, collect. */
#include "measure/runner.h"
#include "measure/runner_internal.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "stats.h"
#include "machine/cgroup.h"
#include "machine/environment.h"
#include "measure/region.h"
#include "measure/timed.h"
#include "measure/warmup.h"
#include "measure/workload.h"

void runner_phase_fail(struct phase_result *res, bool unavailable, const char *fmt, ...)
{
	va_list ap;

	res->status = PHASE_FAILED;
	res->unavailable = unavailable;
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
}

bool runner_stop_requested(const struct run_context *ctx)
{
	return ctx->stop && *ctx->stop;
}

/*
 * A safe point for the progress line: between timed samples and around the
 * untimed steps of a phase, never inside a timed sample. The hook costs a
 * clock read when it does not draw; drawing (a few hundred bytes to a
 * terminal, at most four times a second) happens while no sample runs.
 */
void runner_progress_tick(const struct run_context *ctx)
{
	if (ctx->progress_tick)
		ctx->progress_tick(ctx->progress_arg);
}

int runner_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static void rusage_faults(uint64_t *minflt, uint64_t *majflt)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		*minflt = (uint64_t)ru.ru_minflt;
		*majflt = (uint64_t)ru.ru_majflt;
	} else {
		*minflt = *majflt = 0;
	}
}

/*
 * Open the set for this phase and keep a copy of the per-event infos, so
 * statuses are per phase. Returns 0 or -ENOMEM.
 */
int runner_open_counters(struct phase_result *res, struct counter_set *cs)
{
	size_t n = counter_set_size(cs);

	res->counter_info = calloc(n ? n : 1, sizeof(*res->counter_info));
	res->counters = calloc(n ? n : 1, sizeof(*res->counters));
	res->prefault_counters = calloc(n ? n : 1, sizeof(*res->prefault_counters));
	if (!res->counter_info || !res->counters || !res->prefault_counters)
		return -ENOMEM;
	uint64_t t0 = timing_now_ns();
	counter_set_open(cs);
	res->counter_open_us = (double)(timing_now_ns() - t0) / 1e3;
	res->n_counters = n;
	for (size_t i = 0; i < n; i++)
		res->counter_info[i] = *counter_set_info(cs, i);
	const struct counter_phase_hint hint = { .page_bytes = res->spec.page.bytes, .size_bytes = res->spec.size_bytes,
						 .stride_bytes = res->spec.stride_bytes, .core_ghz = res->cycles_per_ns };
	counter_set_hint_phase(cs, &hint);
	return 0;
}

/* First touch of every page, counted: real fault counts, and no faults left for the timed part. */
static void prefault(struct region *region, struct counter_set *cs, struct phase_result *res)
{
	if (cs) {
		counter_set_reset(cs);
		counter_set_enable(cs);
	}
	uint64_t t0 = timing_now_ns();
	res->prefault_pages = region_prefault(region);
	res->prefault_ns = (double)(timing_now_ns() - t0);
	if (cs) {
		counter_set_disable(cs);
		counter_set_read(cs, res->prefault_counters);
	}
}

/* One timed sample: counters enabled around the workload's run only (measure/timed.c). Returns the elapsed ns. */
uint64_t runner_timed_run(const struct workload_ops *w, void *state, uint64_t accesses, struct counter_set *cs)
{
	return timed_sample(w, state, accesses, cs, NULL);
}

/*
 * The hypervisor's steal time since steal0 (all CPUs), in ticks and ms, and
 * every CPU tick since total0 (0 when /proc/stat could not be read at both
 * ends): the share of CPU time stolen is steal over those.
 */
static void record_steal(struct phase_result *res, uint64_t steal0, uint64_t total0)
{
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t total1 = 0, steal1 = 0;

	if (environment_stat_ticks(&total1, &steal1) != 0)
		steal1 = environment_steal_ticks();
	res->steal_ticks = steal1 >= steal0 ? steal1 - steal0 : 0;
	res->stat_ticks = total0 && total1 > total0 ? total1 - total0 : 0;
	res->steal_ms = (double)res->steal_ticks * 1000.0 / (double)(hz > 0 ? hz : 100);
}

/* --iters auto: a sample lasts at least this long, and at least 1000x the clock overhead. */
static const double SAMPLE_MIN_NS = 1e6;
/* --iters auto: at most this many samples on a single allocation, and this many allocations. */
enum { MAX_AUTO_SAMPLES = 2000, MAX_AUTO_ALLOCATIONS = 100 };
/*
 * Warm-up in auto mode: passes around the structure until one is no longer
 * faster. In a quiet hour here, a chain whose slots sit on many pages kept
 * getting faster for 10 to 15 passes after its region was faulted in
 * (256 MiB on 4 KiB pages: 158 ns on the first pass, 89 ns from about the
 * 12th; 4 MiB packed on few pages is steady from the first), so a fixed two
 * passes measured the transient; with none, this stops after four. Steady:
 * WARMUP_PATIENCE passes in a row not WARMUP_GAIN faster than the best
 * before them. At least WARMUP_MIN_PASSES, at most WARMUP_MAX_PASSES or a
 * quarter of the time budget per allocation; on a kept allocation's second
 * pass, steady also needs a pass back near the level it was measured at
 * (measure/warmup.c, measure/rerun.c). A pass is
 * one trip around the structure, but at least WARMUP_MIN_PASS accesses (to
 * outlast the clock) and at most WARMUP_MAX_PASS (a 16 M-slot chain is timed
 * in parts, so the caps and a stop request are seen within 0.2 s or so).
 */
enum { WARMUP_MIN_PASSES = 2, WARMUP_PATIENCE = 3, WARMUP_MAX_PASSES = 64 };
static const double WARMUP_GAIN = 0.005;
static const uint64_t WARMUP_MIN_PASS = 20000, WARMUP_MAX_PASS = 2000000;

/*
 * The batch for --iters auto: time growing probes (without counters) until
 * one lasts 100 us, then scale to SAMPLE_MIN_NS or 1000x the clock overhead,
 * whichever is longer, so the clock's cost and resolution vanish in a sample.
 * Sized with BATCH_MARGIN: a 100 us probe on a noisy host, or a chain still
 * settling, can read 30 % slow, and the samples must still last that long.
 */
static const double BATCH_MARGIN = 1.5;
static uint64_t auto_batch(const struct workload_ops *w, void *state, const struct run_context *ctx)
{
	double overhead = ctx->clock ? fmax(ctx->clock->clock_overhead_ns, ctx->clock->clock_resolution_ns) : 100;
	uint64_t n = 1000, ns;

	for (;;) {
		ns = runner_timed_run(w, state, n, NULL);
		if (ns >= 100000 || n >= (1ull << 34))
			break;
		n *= 4;
	}
	double per = (double)ns / (double)n, target = BATCH_MARGIN * fmax(SAMPLE_MIN_NS, 1000 * overhead);
	uint64_t batch = (uint64_t)ceil(target / (per > 0 ? per : 1));
	return batch < 1000 ? 1000 : batch;
}

/*
 * Auto warm-up: run passes of `units` accesses until steady under the rule
 * of measure/warmup.c (WARMUP_PATIENCE passes in a row not WARMUP_GAIN
 * faster than the best before them and, where settle_ns > 0, the fastest
 * pass back at or below it) (true), or the pass or time cap comes first, or
 * a stop is requested (false); the time cap only after WARMUP_MIN_PASSES.
 * *passes and *accesses: what ran.
 */
static bool warm_until_steady(const struct workload_ops *w, void *state, uint64_t units, double cap_s,
			      double settle_ns, const struct run_context *ctx, unsigned *passes, uint64_t *accesses)
{
	const struct warm_rule rule = { .gain = WARMUP_GAIN, .patience = WARMUP_PATIENCE, .settle_ns = settle_ns };
	uint64_t pass = units, t0 = timing_now_ns();
	struct warm_state st;

	if (pass < WARMUP_MIN_PASS)
		pass = WARMUP_MIN_PASS;
	if (pass > WARMUP_MAX_PASS)
		pass = WARMUP_MAX_PASS;
	warm_start(&st);
	*passes = 0;
	*accesses = 0;
	while (*passes < WARMUP_MAX_PASSES && !runner_stop_requested(ctx)) {
		double per = (double)runner_timed_run(w, state, pass, NULL) / (double)pass;
		++*passes;
		*accesses += pass;
		runner_progress_tick(ctx);
		if (warm_pass(&st, &rule, per))
			return true;	/* 1 + WARMUP_PATIENCE >= WARMUP_MIN_PASSES passes by now */
		if (*passes >= WARMUP_MIN_PASSES && (double)(timing_now_ns() - t0) / 1e9 >= cap_s)
			return false;
	}
	return false;
}

static void add_sample(struct phase_result *res, uint64_t ns, uint64_t accesses, unsigned alloc)
{
	res->samples_ns[res->n_samples] = (double)ns / (double)accesses;
	res->sample_alloc[res->n_samples] = alloc;
	res->n_samples++;
	res->timed_ns += (double)ns;
}

/* A fresh region for allocation a, faulted in: the first allocation's prefault counted, the others' not. */
static bool map_allocation(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res,
			   struct counter_set *cs, unsigned a, struct region *region)
{
	char why[400] = "";
	uint64_t t0 = timing_now_ns();
	int rc = region_map(region, &ph->page, ph->size_bytes, why, sizeof(why));

	if (rc) {
		runner_phase_fail(res, rc == -ENOMEM || rc == -EOPNOTSUPP, "%s", why);
		return false;
	}
	if (a == 0)
		prefault(region, cs, res);
	else {
		/* Nothing runs beside it: the chain is built after. */
		struct region_populated done = region_populate_parallel(region);
		res->first_access_pages += done.pages;
		res->first_access_ns += done.first_access_ns;
	}
	res->populate_ms += (double)(timing_now_ns() - t0) / 1e6;
	runner_progress_tick(ctx);
	return true;
}

/*
 * Prepare the workload on the region (a fresh chain, seeded per allocation),
 * then verify it: every self-check and the page backing must pass. The first
 * allocation's preparation times and self-checks are the ones reported.
 * *state: the workload's state, also on failure (release it). *units: what
 * the workload says one pass is. Returns false when the phase failed.
 */
static bool prepare_verified(const struct phase_spec *ph, struct phase_result *res, unsigned a,
			     struct region *region, void **state, uint64_t *units)
{
	const struct workload_ops *w = ph->workload;
	struct phase_spec spec = *ph;
	struct self_check checks[PHASE_MAX_SELF_CHECKS];
	size_t n_checks = 0;
	char why[400] = "";
	struct prepare_info info = { 0 };
	int rc;

	/* A fresh chain: another seed per allocation, the same for the same --seed. */
	spec.seed = ph->seed + a * 0x9e3779b97f4a7c15ull;
	uint64_t t0 = timing_now_ns();
	rc = w->prepare(state, &spec, region, checks, &n_checks, &info, why, sizeof(why));
	if (a == 0) {
		res->prepare_ms = (double)(timing_now_ns() - t0) / 1e6;
		res->build_ms = info.build_ms;
	}
	*units = info.units;
	if (rc) {
		runner_phase_fail(res, rc == -ENOMEM, "preparing %s failed: %s", w->name, *why ? why : strerror(-rc));
		return false;
	}
	if (a == 0) {
		memcpy(res->self_checks, checks, sizeof(checks));
		res->n_self_checks = n_checks;
		res->slots = info.units;
	}
	for (size_t i = 0; i < n_checks; i++) {
		if (checks[i].status == CHECK_FAIL) {
			runner_phase_fail(res, false, "self-check %s failed on allocation %u: %s", checks[i].id, a,
				   checks[i].message);
			return false;
		}
	}
	rc = region_verify(region, &res->backing);
	if (rc) {
		runner_phase_fail(res, false, "cannot verify the page backing from /proc/self/smaps: %s", strerror(-rc));
		return false;
	}
	res->backing_known = true;
	if (region_check_backing(&ph->page, &res->backing, why, sizeof(why)) != 0) {
		runner_phase_fail(res, true, "%s", why);
		return false;
	}
	return true;
}

/*
 * Warm-up on the very same code path: caches, TLBs, page walks, branch
 * predictors, core clock. Auto: until steady (settle_ns: see
 * warm_until_steady()), and on the first allocation the batch is chosen
 * after it. *steady: whether it got there. Returns the batch of a timed sample.
 */
static uint64_t warm_up(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res,
			void *state, uint64_t units, double settle_ns, bool *steady)
{
	const struct workload_ops *w = ph->workload;
	uint64_t wt0 = timing_now_ns(), warm;

	if (ph->iterations_auto) {
		unsigned passes = 0;
		*steady = warm_until_steady(w, state, units, ph->time_budget_s / 4, settle_ns, ctx, &passes, &warm);
		res->warmup_passes += passes;
		if (passes > res->warmup_max_passes)
			res->warmup_max_passes = passes;
		res->warmup_unsettled += !*steady;
	} else {
		warm = timed_run_chunks(w, state, ph->warmup_iterations, ctx->stop);	/* --iters 1T: 100 G */
		*steady = true;
	}
	res->warmup_accesses += warm;
	res->warmup_ms += (double)(timing_now_ns() - wt0) / 1e6;
	if (ph->iterations_auto && res->spec.iterations == 0) {
		res->spec.iterations = auto_batch(w, state, ctx);
		res->spec.warmup_iterations = warm;
	}
	return res->spec.iterations;
}

/*
 * The timed samples of allocation a, batch accesses each: --repeat of them,
 * or (extend: auto with one allocation) more until the median is precise
 * enough, the time budget is spent or cap samples are taken. The counters
 * count from the first allocation's first sample on; the rusage faults of
 * the samples are added up.
 */
static void take_samples(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res,
			 struct counter_set *cs, void *state, uint64_t batch, unsigned a, bool extend, size_t cap,
			 uint64_t phase_t0)
{
	uint64_t min0, maj0, min1, maj1;

	if (a == 0 && cs)
		counter_set_reset(cs);
	rusage_faults(&min0, &maj0);
	for (unsigned r = 0; res->n_samples < cap && !runner_stop_requested(ctx); r++) {
		if (r >= ph->repeat) {
			/* --repeat samples per allocation; auto with one allocation: more on it, until precise. */
			if (!extend)
				break;
			res->precision_reached = stats_median_ci(res->samples_ns, res->n_samples);
			if (res->precision_reached <= ph->precision) {
				res->stop_reason = "precision";
				break;
			}
			if ((double)(timing_now_ns() - phase_t0) / 1e9 >= ph->time_budget_s) {
				res->stop_reason = "budget";
				break;
			}
		}
		uint64_t ns = timed_sample(ph->workload, state, batch, cs, ctx->stop);
		if (ns == TIMED_STOPPED)
			break;	/* cut short by Ctrl-C: dropped, and the phase ends as interrupted */
		add_sample(res, ns, batch, a);
		runner_progress_tick(ctx);
	}
	if (res->n_samples >= cap && extend && !res->stop_reason)
		res->stop_reason = "max_samples";
	rusage_faults(&min1, &maj1);
	res->rusage_minflt += min1 - min0;
	res->rusage_majflt += maj1 - maj0;
	res->allocations_run = a + 1;
}

/* Check the backing again after the samples: khugepaged may collapse or split pages while the phase runs. */
static void verify_after(const struct phase_spec *ph, struct phase_result *res, const struct region *region)
{
	struct region_backing after;
	char why[400] = "";

	if (region_verify(region, &after) == 0 && region_check_backing(&ph->page, &after, why, sizeof(why)) != 0) {
		res->backing = after;
		runner_phase_fail(res, true, "the page backing changed during the timed run: %s", why);
	}
}

/*
 * One allocation of a phase: a fresh region and a fresh chain (seeded per
 * allocation), verified, warmed up, then sampled. The first allocation's
 * prefault is counted and its self-checks are reported; every allocation's
 * self-checks and backing must pass. Returns false when the phase must stop.
 */
bool runner_allocation(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res,
		       struct counter_set *cs, unsigned a, bool extend, size_t cap, uint64_t phase_t0,
		       struct runner_kept *keep)
{
	struct region region = { 0 };
	void *state = NULL;
	uint64_t units = 0;

	if (!map_allocation(ph, ctx, res, cs, a, &region))
		return false;
	if (prepare_verified(ph, res, a, &region, &state, &units)) {
		/* Before the warm-up, not after: whatever drawing the line touches is warmed over again. */
		runner_progress_tick(ctx);
		bool steady;
		uint64_t batch = warm_up(ph, ctx, res, state, units, 0, &steady);
		take_samples(ph, ctx, res, cs, state, batch, a, extend, cap, phase_t0);
		verify_after(ph, res, &region);
		if (keep && res->status == PHASE_OK) {
			*keep = (struct runner_kept){ .region = region, .state = state, .units = units, .held = true };
			return !runner_stop_requested(ctx);
		}
	}
	workload_release(ph->workload, state);
	region_unmap(&region);
	return res->status == PHASE_OK && !runner_stop_requested(ctx);
}

void runner_kept_release(const struct phase_spec *ph, struct runner_kept *k)
{
	if (!k->held)
		return;
	workload_release(ph->workload, k->state);
	region_unmap(&k->region);
	memset(k, 0, sizeof(*k));
}

bool runner_pass_kept(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res,
		      struct runner_kept *k, double settle_ns, bool *steady)
{
	uint64_t t0 = timing_now_ns();
	uint64_t batch = warm_up(ph, ctx, res, k->state, k->units, settle_ns, steady);

	take_samples(ph, ctx, res, NULL, k->state, batch, 0, false, ph->repeat, t0);
	verify_after(ph, res, &k->region);
	return res->status == PHASE_OK && !runner_stop_requested(ctx);
}

/*
 * Whether auto mode draws allocation a (a >= the --realloc least): not when
 * the allocations' interval is precise enough (over MIN_PRECISE_ALLOCATIONS
 * at least: three that agree by luck make a narrow t interval too often to
 * stop on), when another allocation, at the mean cost of those so far, would
 * pass the time budget with the phase's second passes (passes: it takes
 * them; each a warm-up and --repeat samples, at the mean of its allocations'
 * own) still to come, or when the samples or allocations run out. Sets
 * res->stop_reason when it stops.
 */
enum { MIN_PRECISE_ALLOCATIONS = 5 };
static bool another_allocation(const struct phase_spec *ph, struct phase_result *res, unsigned a, size_t cap,
			       uint64_t phase_t0, bool passes)
{
	double elapsed = (double)(timing_now_ns() - phase_t0) / 1e9;
	double later = passes ? PHASE_SECOND_PASSES * (res->warmup_ms / 1e3 + res->timed_ns / 1e9) / a : 0;

	res->precision_reached = stats_precision(res->samples_ns, res->sample_alloc, res->n_samples);
	if (res->precision_reached <= ph->precision && a >= MIN_PRECISE_ALLOCATIONS)
		res->stop_reason = "precision";
	else if (elapsed + elapsed / a + later > ph->time_budget_s)
		res->stop_reason = "budget";
	else if (a >= MAX_AUTO_ALLOCATIONS || res->n_samples + ph->repeat > cap)
		res->stop_reason = "max_samples";
	return !res->stop_reason;
}

/*
 * Phase ph into res. kept (may be NULL): where a phase that may take second
 * passes leaves its last allocation; each allocation before it is released
 * before the next is mapped, so two are never held at once.
 */
static void run_phase(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res,
		      struct runner_kept *kept)
{
	const struct workload_ops *w = ph->workload;
	unsigned allocations = ph->allocations ? ph->allocations : 1;
	/* Auto with one allocation extends it; with several, it draws more allocations. */
	bool extend_one = ph->iterations_auto && allocations == 1;
	/* Auto: --repeat samples on each of up to MAX_AUTO_ALLOCATIONS allocations, or more on a single one. */
	size_t cap = (size_t)ph->repeat * (ph->iterations_auto && allocations > 1 && allocations < MAX_AUTO_ALLOCATIONS
						   ? MAX_AUTO_ALLOCATIONS
						   : allocations) +
		     (extend_one ? MAX_AUTO_SAMPLES : 0);
	uint64_t total0 = 0, steal0 = 0, phase_t0 = timing_now_ns();
	int rc;

	if (environment_stat_ticks(&total0, &steal0) != 0) {
		total0 = 0;
		steal0 = environment_steal_ticks();
	}
	res->spec = *ph;
	res->status = PHASE_OK;
	res->cycles_per_ns = ctx->clock ? ctx->clock->core_clock_ghz : 0.0;
	if (ph->iterations_auto)
		res->spec.iterations = 0;	/* chosen on the first allocation */
	res->samples_ns = calloc(cap, sizeof(*res->samples_ns));
	res->sample_alloc = calloc(cap, sizeof(*res->sample_alloc));
	if (!res->samples_ns || !res->sample_alloc) {
		runner_phase_fail(res, true, "out of memory for %zu samples", cap);
		return;
	}
	if (ph->cpu >= 0 && (rc = runner_pin_cpu(ph->cpu)) != 0) {
		runner_phase_fail(res, false, "cannot pin to CPU %d: %s", ph->cpu, strerror(-rc));
		return;
	}
	if (w->per_sample_memory) {
		runner_fresh_phase(ph, ctx, res);
		record_steal(res, steal0, total0);
		res->wall_ms = (double)(timing_now_ns() - phase_t0) / 1e6;
		return;
	}
	struct counter_set *cs = ctx->counters;
	if (cs && runner_open_counters(res, cs) != 0) {
		runner_phase_fail(res, true, "out of memory for counters");
		cs = NULL;
	}
	/* Fixed --iters: exactly --realloc allocations. Auto: at least those, then more while they pay. */
	for (unsigned a = 0; res->status == PHASE_OK; a++) {
		if (a >= allocations && (!ph->iterations_auto || extend_one || !another_allocation(ph, res, a, cap, phase_t0, kept != NULL)))
			break;
		if (kept)
			runner_kept_release(ph, kept);
		if (!runner_allocation(ph, ctx, res, cs, a, extend_one, cap, phase_t0, kept))
			break;
	}
	if (!res->stop_reason)
		res->stop_reason = ph->iterations_auto ? "budget" : "samples";
	res->precision_reached = stats_precision(res->samples_ns, res->sample_alloc, res->n_samples);
	if (cs) {
		uint64_t t0 = timing_now_ns();
		counter_set_read(cs, res->counters);
		res->counter_read_us = (double)(timing_now_ns() - t0) / 1e3;
		/* read() may have marked events multiplexed: refresh the statuses. */
		for (size_t i = 0; i < res->n_counters; i++)
			res->counter_info[i] = *counter_set_info(cs, i);
		counter_set_close(cs);
	}
	if (res->status == PHASE_OK && runner_stop_requested(ctx)) {
		res->stop_reason = "interrupted";
		runner_phase_fail(res, false, "interrupted after %zu samples", res->n_samples);
	} else if (res->status == PHASE_OK && !ph->iterations_auto && res->n_samples < (size_t)ph->repeat * allocations) {
		runner_phase_fail(res, false, "only %zu of %u samples", res->n_samples, ph->repeat * allocations);
	}
	record_steal(res, steal0, total0);
	res->wall_ms = (double)(timing_now_ns() - phase_t0) / 1e6;
}

/* The memory tlbprof may still take: MemAvailable, or less where a memory cgroup's limit leaves less. 0: unknown. */
static uint64_t memory_room(void)
{
	uint64_t room = region_mem_available();
	struct cgroup_memory cg;

	if (cgroup_memory_read(&cg) == 0 && cg.limited && (!room || cg.room_bytes < room))
		room = cg.room_bytes;
	return room;
}

/*
 * The most memory a phase of the plan maps at once (hugetlb pages aside:
 * the pool is neither MemAvailable nor a cgroup's), with tlbprof's margin.
 */
static uint64_t largest_phase(const struct plan *plan)
{
	uint64_t most = 0;

	for (size_t i = 0; i < plan->n; i++) {
		const struct phase_spec *ph = &plan->phases[i];
		uint64_t need = ph->size_bytes + cgroup_margin_bytes(ph->size_bytes);
		if (ph->page.kind != PAGE_HUGETLB && need > most)
			most = need;
	}
	return most;
}

/*
 * Whether phase res may keep its last allocation for its second passes: it
 * takes them, its pages are not a hugetlb pool's (a later phase may need the
 * pool), and with it kept the memory left (MemAvailable, or a memory
 * cgroup's room where that is less; the kept allocation is already out of
 * it) still holds twice the largest phase of the plan: every later phase,
 * and any fresh allocation a second pass draws while the others are kept,
 * fits as it did when only one region was ever mapped. Unknown room: no.
 */
static bool may_keep(const struct run_context *ctx, const struct phase_result *res, const struct runner_kept *k,
		     uint64_t largest)
{
	uint64_t room;

	if (!k->held || runner_no_pass_why(ctx, res) || k->region.page.kind == PAGE_HUGETLB)
		return false;
	room = memory_room();
	return room && room / 2 >= largest;
}

int runner_run(const struct plan *plan, const struct run_context *ctx, struct run_results *out)
{
	memset(out, 0, sizeof(*out));
	out->started_unix_s = (int64_t)time(NULL);
	out->phases = calloc(plan->n ? plan->n : 1, sizeof(*out->phases));
	uint64_t *started = calloc(plan->n ? plan->n : 1, sizeof(*started));
	struct runner_kept *kept = calloc(plan->n ? plan->n : 1, sizeof(*kept));
	if (!out->phases || !started || !kept) {
		free(out->phases);
		free(started);
		free(kept);
		out->phases = NULL;
		return -ENOMEM;
	}
	uint64_t largest = largest_phase(plan);
	for (size_t i = 0; i < plan->n; i++) {
		const struct phase_spec *ph = &plan->phases[i];
		if (runner_stop_requested(ctx)) {
			out->interrupted = true;
			break;
		}
		if (ctx->progress)
			ctx->progress(ctx->progress_arg, i, plan->n, ph->name);
		started[i] = timing_now_ns();
		run_phase(ph, ctx, &out->phases[i], runner_spec_no_pass_why(ph) ? NULL : &kept[i]);
		if (!may_keep(ctx, &out->phases[i], &kept[i], largest))
			runner_kept_release(ph, &kept[i]);
		out->n = i + 1;
	}
	runner_second_passes(ctx, out->phases, out->n, started, kept);
	free(started);
	free(kept);
	if (runner_stop_requested(ctx))
		out->interrupted = true;
	if (ctx->progress)
		ctx->progress(ctx->progress_arg, out->n, plan->n, NULL);
	return 0;
}

void run_results_free(struct run_results *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->phases[i].samples_ns);
		free(r->phases[i].sample_alloc);
		free(r->phases[i].rerun_ns);
		free(r->phases[i].rerun_pass);
		free(r->phases[i].counter_info);
		free(r->phases[i].counters);
		free(r->phases[i].prefault_counters);
		free(r->phases[i].fault_samples);
		if (r->phases[i].target)
			free(r->phases[i].target->wall_ns);
		free(r->phases[i].target);
	}
	free(r->phases);
	memset(r, 0, sizeof(*r));
}
