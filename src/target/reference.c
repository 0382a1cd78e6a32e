/* SPDX-License-Identifier: MIT */
/* tlbprof run: tlbprof's own chase of each declared phase's shape, after the exit, for the plausibility check. */
#include "target/internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "machine/timing.h"
#include "measure/chain.h"
#include "measure/region.h"

/* The largest region tlbprof maps for a reference chase, and how long it times one (in accesses). */
#define REFERENCE_MAX_BYTES (1ull << 30)
#define REFERENCE_ACCESSES (1u << 20)
/*
 * Warm-up before timing, as a benchmark that warms up would, until steady: passes around the chain (at least
 * REFERENCE_WARMUP_MIN_PASS accesses each) until REFERENCE_WARMUP_PATIENCE in a row are no more than 0.5 %
 * faster than the best before them, at most REFERENCE_WARMUP_MAX_PASSES or REFERENCE_WARMUP_MAX_NS. A fresh
 * region on a KVM guest keeps getting faster for 10 or more passes (runner.c's warm-up measured it); two
 * fixed passes left the reference slow by up to 2x now and then, and a correct benchmark "3x faster" than it.
 */
#define REFERENCE_WARMUP_MIN_PASS 20000u
#define REFERENCE_WARMUP_PATIENCE 3
#define REFERENCE_WARMUP_MAX_PASSES 32
#define REFERENCE_WARMUP_MAX_NS 300000000ull

static void *volatile reference_sink;

/* This thread's CPU time in ns (what it ran, not what it waited while preempted). */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return UINT64_MAX;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Time n dependent loads from p; returns ns per access on a CPU: the wall
 * time, or the thread's CPU time where that is less (it was preempted; a
 * loaded machine otherwise slows the reference by its share of the CPU).
 */
static double chase_ns(void *p, uint64_t n)
{
	uint64_t c0 = thread_cpu_ns(), t0 = timing_now_ns();
	for (uint64_t i = 0; i < n; i++)
		p = *(void **)p;
	uint64_t t1 = timing_now_ns(), c1 = thread_cpu_ns();
	reference_sink = p;
	uint64_t ns = t1 - t0;
	if (c0 != UINT64_MAX && c1 != UINT64_MAX && c1 >= c0 && c1 - c0 < ns)
		ns = c1 - c0;
	return (double)ns / (double)n;
}

/* Passes around a chain of slots until one is no longer faster (see REFERENCE_WARMUP_PATIENCE). */
static void warm_up(void *start, uint64_t slots)
{
	uint64_t pass = slots > REFERENCE_WARMUP_MIN_PASS ? slots : REFERENCE_WARMUP_MIN_PASS, t0 = timing_now_ns();
	double best = 0;
	int stale = 0;

	for (int i = 0; i < REFERENCE_WARMUP_MAX_PASSES && stale < REFERENCE_WARMUP_PATIENCE &&
			timing_now_ns() - t0 < REFERENCE_WARMUP_MAX_NS;
	     i++) {
		double ns = chase_ns(start, pass);
		if (i == 0 || ns < best * 0.995) {
			best = ns;
			stale = 0;
		} else {
			stale++;
		}
	}
}

/* The largest power of two at most v (v >= 1). */
static uint64_t pow2_floor(uint64_t v)
{
	return 1ull << (63 - __builtin_clzll(v));
}

/* The shapes chased so far: phases of one shape share one chase. */
#define MAX_SHAPES 16
struct shapes {
	const struct phase_result *of[MAX_SHAPES];
	double ns[MAX_SHAPES];
	size_t n;
};

/*
 * The bytes its chain spans: an inspected chain's own span where it is less than the region (a 64 MiB region whose
 * 4096-slot chain fills its first 16 MiB is chased over 16 MiB: spread over 64 MiB at a 16 KiB stride, the
 * reference on a Zen 5 guest read 2-3 times slower, and under a full suite's load the honest chase was "3x faster"
 * than it), else the region's.
 */
static uint64_t shape_bytes(const struct target_phase *tp)
{
	if (tp->chain_inspected && tp->chain_span_bytes && tp->chain_span_bytes < tp->region_bytes)
		return tp->chain_span_bytes;
	return tp->region_bytes;
}

/* A phase's shape (slots, bytes spanned, page size, layout) chased by tlbprof: tp->reference_ns, or why not. */
static void reference_one(struct phase_result *r, struct shapes *sh)
{
	struct target_phase *tp = r->target;
	uint64_t slots = tp->chain_inspected && tp->chain_cycle_slots ? tp->chain_cycle_slots : tp->slots_declared;
	uint64_t bytes = shape_bytes(tp);

	if (!tp->has_accesses || r->spec.throughput || !r->n_samples) {
		snprintf(tp->reference_why, sizeof(tp->reference_why), "%s",
			 r->spec.throughput ? "a throughput phase has no latency to compare"
					    : "the phase declared no accesses");
		return;
	}
	if (!tp->has_region || slots < 2) {
		snprintf(tp->reference_why, sizeof(tp->reference_why),
			 "the phase declared no region with a chain or slots: its shape is unknown");
		return;
	}
	if (tp->region_bytes > REFERENCE_MAX_BYTES) {
		snprintf(tp->reference_why, sizeof(tp->reference_why), "the %llu-byte region is over the 1 GiB tlbprof "
			 "maps for a reference", (unsigned long long)tp->region_bytes);
		return;
	}
	for (size_t i = 0; i < sh->n; i++) {
		const struct phase_result *c = sh->of[i];
		const struct target_phase *o = c->target;
		if (shape_bytes(o) == bytes && c->spec.page.bytes == r->spec.page.bytes &&
		    c->spec.page.kind == r->spec.page.kind && c->spec.layout == r->spec.layout &&
		    (o->chain_inspected && o->chain_cycle_slots ? o->chain_cycle_slots : o->slots_declared) == slots) {
			tp->reference_ns = sh->ns[i];
			return;
		}
	}
	if (sh->n == MAX_SHAPES) {
		snprintf(tp->reference_why, sizeof(tp->reference_why), "more than %d shapes to chase", MAX_SHAPES);
		return;
	}
	struct chain_geom g = { .stride_bytes = pow2_floor(bytes / slots ? bytes / slots : 1), .layout = r->spec.layout };
	if (g.stride_bytes < 8)
		g.stride_bytes = 8;
	g.slots = bytes / g.stride_bytes < slots ? bytes / g.stride_bytes : slots;
	struct page_request page = r->spec.page;
	if (!tp->has_page)
		page_request_parse("4k", &page);
	struct region reg = { 0 };
	char why[200];
	if (g.slots < 2 || region_map(&reg, &page, chain_slot_offset(&g, g.slots - 1) + 8, why, sizeof(why)) != 0) {
		snprintf(tp->reference_why, sizeof(tp->reference_why), "could not map the reference region: %.100s",
			 g.slots < 2 ? "fewer than 2 slots" : why);
		return;
	}
	region_populate(&reg);
	void *start = chain_build(reg.base, &g, 1);
	warm_up(start, g.slots);
	uint64_t n = g.slots * 4 > REFERENCE_ACCESSES ? g.slots * 4 : REFERENCE_ACCESSES;
	/* The fastest of three: the reference is a floor the benchmark cannot honestly beat by 3x. */
	double best = 0;
	for (int i = 0; i < 3; i++) {
		double ns = chase_ns(start, n);
		best = i == 0 || ns < best ? ns : best;
	}
	region_unmap(&reg);
	tp->reference_ns = best;
	sh->of[sh->n] = r;
	sh->ns[sh->n++] = best;
}

void target_reference_chase(struct target_state *st)
{
	struct shapes sh = { .n = 0 };

	for (size_t i = 0; i < st->out->n; i++) {
		struct phase_result *r = &st->out->phases[i];
		if (!r->target || r->spec.workload != &workload_marked)
			continue;
		if (st->ctx->stop && *st->ctx->stop)
			snprintf(r->target->reference_why, sizeof(r->target->reference_why), "tlbprof was interrupted");
		else
			reference_one(r, &sh);
	}
}
