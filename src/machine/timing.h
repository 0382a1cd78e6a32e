/* SPDX-License-Identifier: MIT */
/* Clocks: a monotonic nanosecond clock, its measured overhead, and a calibrated core clock. */
#pragma once

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t timing_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct timing_calibration {
	double clock_overhead_ns;	/* median cost of one timing_now_ns() pair, ns */
	double clock_resolution_ns;	/* clock_getres(CLOCK_MONOTONIC) */
	double core_clock_ghz;		/* median of the dependent-add runs; 0 when not calibrated */
	double core_clock_spread;	/* interquartile range / median over the runs */
	unsigned core_clock_runs;
	const char *core_clock_method;	/* "dependent_add_chain" or "unavailable" */
	/*
	 * Dependent add reg, imm retired per cycle at that clock: 1 on a plain
	 * adder; Golden Cove and later fold chains of them at rename and run
	 * them several times faster. 0 when not measured. Evidence for which
	 * core this is when the model number is masked.
	 */
	double add_imm_per_cycle;
	/* The same clock measured again at the end of the run (timing_recheck()); 0 when not measured. */
	double core_clock_end_ghz;
	double core_clock_end_spread;	/* interquartile range / median of those runs */
};

/*
 * Measure the clock overhead (median of many back-to-back reads) and calibrate
 * the core clock: a chain of dependent integer adds retires one add per cycle
 * on every modern x86 and Arm core, so adds / ns = GHz. Warms the core up first
 * so a frequency ramp does not bias the first runs. Takes about 50 ms.
 */
void timing_calibrate(struct timing_calibration *out);

/*
 * Measure the core clock again, with the same dependent-add runs as the
 * calibration (after a 5 ms warm-up instead of 20: the core has just been
 * busy), into c->core_clock_end_ghz and _spread; both 0 when the start was
 * not calibrated. About 15 ms. The calibrated clock is left as it was.
 */
void timing_recheck(struct timing_calibration *c);

/* Pure: the end clock over the calibrated one (1: unchanged); 0 when either was not measured. */
double timing_clock_ratio(const struct timing_calibration *c);

/* Run n dependent adds (n rounded down to a multiple of 100); for tests. Returns the chain value. */
uint64_t timing_add_chain(uint64_t n);
/* The same with an immediate addend (add reg, 1). */
uint64_t timing_add_imm_chain(uint64_t n);
