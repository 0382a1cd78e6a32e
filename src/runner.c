/* SPDX-License-Identifier: MIT */
/* Execute a plan: per phase allocate, prepare, verify pages, warm up, time with counters, collect. */
#include "runner.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "environment.h"
#include "region.h"
#include "workload.h"

__attribute__((format(printf, 3, 4)))
static void phase_fail(struct phase_result *res, bool unavailable, const char *fmt, ...)
{
	va_list ap;

	res->status = PHASE_FAILED;
	res->unavailable = unavailable;
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
}

static bool stop_requested(const struct run_context *ctx)
{
	return ctx->stop && *ctx->stop;
}

static int pin_cpu(int cpu)
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
static int open_counters(struct phase_result *res, struct counter_set *cs)
{
	size_t n = counter_set_size(cs);

	res->counter_info = calloc(n ? n : 1, sizeof(*res->counter_info));
	res->counters = calloc(n ? n : 1, sizeof(*res->counters));
	res->prefault_counters = calloc(n ? n : 1, sizeof(*res->prefault_counters));
	if (!res->counter_info || !res->counters || !res->prefault_counters)
		return -ENOMEM;
	counter_set_open(cs);
	res->n_counters = n;
	for (size_t i = 0; i < n; i++)
		res->counter_info[i] = *counter_set_info(cs, i);
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

/* The timed part: warm-up, then `repeat` samples with counters enabled around each. */
static void measure(const struct phase_spec *ph, const struct workload_ops *w, void *state,
		    struct counter_set *cs, const struct run_context *ctx, struct phase_result *res)
{
	uint64_t min0, maj0, min1, maj1;

	/* Warm-up on the very same code path: caches, TLBs, branch predictors, core clock. */
	w->run(state, ph->warmup_iterations);
	if (cs)
		counter_set_reset(cs);
	rusage_faults(&min0, &maj0);
	for (unsigned r = 0; r < ph->repeat && !stop_requested(ctx); r++) {
		if (cs)
			counter_set_enable(cs);
		uint64_t t0 = timing_now_ns();
		w->run(state, ph->iterations);
		uint64_t t1 = timing_now_ns();
		if (cs)
			counter_set_disable(cs);
		res->samples_ns[res->n_samples++] = (double)(t1 - t0) / (double)ph->iterations;
		res->timed_ns += (double)(t1 - t0);
	}
	rusage_faults(&min1, &maj1);
	res->rusage_minflt = min1 - min0;
	res->rusage_majflt = maj1 - maj0;
	if (cs) {
		counter_set_read(cs, res->counters);
		/* read() may have marked events multiplexed: refresh the statuses. */
		for (size_t i = 0; i < res->n_counters; i++)
			res->counter_info[i] = *counter_set_info(cs, i);
	}
}

static void run_phase(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res)
{
	const struct workload_ops *w = ph->workload;
	struct region region = { 0 };
	char why[400];
	void *state = NULL;
	uint64_t steal0 = environment_steal_ticks();
	int rc;

	res->spec = *ph;
	res->status = PHASE_OK;
	res->cycles_per_ns = ctx->clock ? ctx->clock->core_clock_ghz : 0.0;
	res->samples_ns = calloc(ph->repeat, sizeof(*res->samples_ns));
	if (!res->samples_ns) {
		phase_fail(res, true, "out of memory for %u samples", ph->repeat);
		return;
	}
	if (ph->cpu >= 0 && (rc = pin_cpu(ph->cpu)) != 0) {
		phase_fail(res, false, "cannot pin to CPU %d: %s", ph->cpu, strerror(-rc));
		return;
	}
	rc = region_map(&region, &ph->page, ph->size_bytes, why, sizeof(why));
	if (rc) {
		phase_fail(res, rc == -ENOMEM || rc == -EOPNOTSUPP, "%s", why);
		return;
	}
	struct counter_set *cs = ctx->counters;
	if (cs && open_counters(res, cs) != 0) {
		phase_fail(res, true, "out of memory for counters");
		cs = NULL;
		goto out;
	}
	prefault(&region, cs, res);

	uint64_t t0 = timing_now_ns();
	rc = w->prepare(&state, ph, &region, res->self_checks, &res->n_self_checks, &res->slots);
	res->prepare_ms = (double)(timing_now_ns() - t0) / 1e6;
	if (rc) {
		phase_fail(res, rc == -ENOMEM, "preparing %s failed: %s", w->name, strerror(-rc));
		goto out;
	}
	for (size_t i = 0; i < res->n_self_checks; i++) {
		if (res->self_checks[i].status == CHECK_FAIL) {
			phase_fail(res, false, "self-check %s failed: %s", res->self_checks[i].id,
				   res->self_checks[i].message);
			goto out;
		}
	}

	rc = region_verify(&region, &res->backing);
	if (rc) {
		phase_fail(res, false, "cannot verify the page backing from /proc/self/smaps: %s", strerror(-rc));
		goto out;
	}
	res->backing_known = true;
	if (region_check_backing(&ph->page, &res->backing, why, sizeof(why)) != 0) {
		phase_fail(res, true, "%s", why);
		goto out;
	}

	measure(ph, w, state, cs, ctx, res);

	/* Check again: khugepaged may collapse or split pages while the phase runs. */
	struct region_backing after;
	if (region_verify(&region, &after) == 0 && region_check_backing(&ph->page, &after, why, sizeof(why)) != 0) {
		res->backing = after;
		phase_fail(res, true, "the page backing changed during the timed run: %s", why);
	}
	if (res->n_samples < ph->repeat && res->status == PHASE_OK)
		phase_fail(res, false, "interrupted after %zu of %u samples", res->n_samples, ph->repeat);
out:
	if (cs)
		counter_set_close(cs);
	if (state && w->release)
		w->release(state);
	region_unmap(&region);
	res->steal_ticks = environment_steal_ticks() - steal0;
	long hz = sysconf(_SC_CLK_TCK);
	res->steal_ms = (double)res->steal_ticks * 1000.0 / (double)(hz > 0 ? hz : 100);
}

int runner_run(const struct plan *plan, const struct run_context *ctx, struct run_results *out)
{
	memset(out, 0, sizeof(*out));
	out->phases = calloc(plan->n ? plan->n : 1, sizeof(*out->phases));
	if (!out->phases)
		return -ENOMEM;
	for (size_t i = 0; i < plan->n; i++) {
		if (stop_requested(ctx)) {
			out->interrupted = true;
			break;
		}
		if (ctx->progress)
			fprintf(stderr, "tlbprof: phase %zu/%zu %s\n", i + 1, plan->n, plan->phases[i].name);
		run_phase(&plan->phases[i], ctx, &out->phases[i]);
		out->n = i + 1;
	}
	if (stop_requested(ctx))
		out->interrupted = true;
	return 0;
}

void run_results_free(struct run_results *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->phases[i].samples_ns);
		free(r->phases[i].counter_info);
		free(r->phases[i].counters);
		free(r->phases[i].prefault_counters);
	}
	free(r->phases);
	memset(r, 0, sizeof(*r));
}
