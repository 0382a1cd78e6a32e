/* SPDX-License-Identifier: MIT */
/* Clocks: a monotonic nanosecond clock, its measured overhead, and a calibrated core clock. */
#include "machine/timing.h"

#include <stdlib.h>
#include <string.h>

#include "stats.h"

uint64_t timing_add_chain(uint64_t n)
{
	uint64_t x = 0;
	volatile uint64_t one_src = 1;
	uint64_t one = one_src;

	/*
	 * 100 adds per iteration, each depending on the previous one through x:
	 * they cannot overlap, so they take 100 cycles; the loop's own counter
	 * and branch execute in parallel on other ports and add nothing. The
	 * addend is a register, not an immediate: recent Intel cores (Golden
	 * Cove and later) fold chains of add-immediate at rename and would run
	 * them faster than one per cycle.
	 */
	for (uint64_t i = 0; i < n / 100; i++) {
#if defined(__x86_64__) || defined(__i386__)
		__asm__ volatile(".rept 100\n\tadd %1, %0\n\t.endr" : "+r"(x) : "r"(one));
#elif defined(__aarch64__)
		__asm__ volatile(".rept 100\n\tadd %0, %0, %1\n\t.endr" : "+r"(x) : "r"(one));
#else
		x += one;
#endif
	}
	return x;
}

uint64_t timing_add_imm_chain(uint64_t n)
{
	uint64_t x = 0;

	/* The same chain with an immediate addend: Golden Cove and later fold these at rename. */
	for (uint64_t i = 0; i < n / 100; i++) {
#if defined(__x86_64__) || defined(__i386__)
		__asm__ volatile(".rept 100\n\tadd $1, %0\n\t.endr" : "+r"(x));
#elif defined(__aarch64__)
		__asm__ volatile(".rept 100\n\tadd %0, %0, #1\n\t.endr" : "+r"(x));
#else
		x += 1;
#endif
	}
	return x;
}

static int have_add_chain(void)
{
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
	return 1;
#else
	return 0;
#endif
}

enum { CLOCK_RUNS = 15 };
static const uint64_t CLOCK_ADDS = 2000000;	/* ~0.5 ms at 4 GHz */

/* Warm the core for warm_ns on the add chain, then time CLOCK_RUNS chains: median GHz and IQR / median. */
static void add_chain_clock(uint64_t warm_ns, double *ghz_median, double *spread)
{
	double ghz[CLOCK_RUNS];

	for (uint64_t t0 = timing_now_ns(); timing_now_ns() - t0 < warm_ns;)
		timing_add_chain(CLOCK_ADDS);
	for (unsigned r = 0; r < CLOCK_RUNS; r++) {
		uint64_t t0 = timing_now_ns();
		timing_add_chain(CLOCK_ADDS);
		uint64_t t1 = timing_now_ns();
		ghz[r] = (double)CLOCK_ADDS / (double)(t1 - t0);
	}
	stats_sort(ghz, CLOCK_RUNS);
	*ghz_median = stats_median_sorted(ghz, CLOCK_RUNS);
	/* Interquartile range: one run the hypervisor preempted must not look like a moving clock. */
	*spread = (stats_quantile_sorted(ghz, CLOCK_RUNS, 0.75) - stats_quantile_sorted(ghz, CLOCK_RUNS, 0.25)) /
		  *ghz_median;
}

void timing_calibrate(struct timing_calibration *out)
{
	enum { PAIRS = 2001 };
	double pairs[PAIRS], ghz[CLOCK_RUNS];
	struct timespec res;

	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < PAIRS; i++) {
		uint64_t a = timing_now_ns();
		uint64_t b = timing_now_ns();
		pairs[i] = (double)(b - a);
	}
	out->clock_overhead_ns = stats_median_inplace(pairs, PAIRS);
	if (clock_getres(CLOCK_MONOTONIC, &res) == 0)
		out->clock_resolution_ns = (double)res.tv_sec * 1e9 + (double)res.tv_nsec;

	out->core_clock_method = "unavailable";
	if (!have_add_chain())
		return;
	/* Warm-up: ~20 ms of the same code so the core leaves any idle frequency. */
	add_chain_clock(20000000, &out->core_clock_ghz, &out->core_clock_spread);
	out->core_clock_runs = CLOCK_RUNS;
	out->core_clock_method = "dependent_add_chain";
	/* The immediate chain at the same clock: adds per cycle (1 on a plain adder, more where rename folds them). */
	for (unsigned r = 0; r < CLOCK_RUNS; r++) {
		uint64_t t0 = timing_now_ns();
		timing_add_imm_chain(CLOCK_ADDS);
		uint64_t t1 = timing_now_ns();
		ghz[r] = (double)CLOCK_ADDS / (double)(t1 - t0);
	}
	out->add_imm_per_cycle = stats_median_inplace(ghz, CLOCK_RUNS) / out->core_clock_ghz;
}

void timing_recheck(struct timing_calibration *c)
{
	c->core_clock_end_ghz = 0;
	c->core_clock_end_spread = 0;
	if (c->core_clock_ghz <= 0 || !have_add_chain())
		return;
	/* The core has just measured: 5 ms of warm-up is enough to leave a short idle gap behind. */
	add_chain_clock(5000000, &c->core_clock_end_ghz, &c->core_clock_end_spread);
}

double timing_clock_ratio(const struct timing_calibration *c)
{
	return c && c->core_clock_ghz > 0 && c->core_clock_end_ghz > 0 ? c->core_clock_end_ghz / c->core_clock_ghz : 0;
}
