/* SPDX-License-Identifier: MIT */
/* What the files of the analysis (src/judge/analysis.c, attribution.c, checks*.c, ...) share; not for other modules. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "judge/analysis.h"

/* Room in an analysis, allocated by analysis_run(). */
enum {
	MAX_CHECKS = 32,
	MAX_FINDINGS = 4,
};

/* A measured phase that completed with samples: what comparisons, sweeps and most checks look at. */
bool analysis_measured_ok(const struct phase_result *r);

/* The core clock to turn ns into cycles: the calibrated one (clock may be NULL), else the phase's own. */
double analysis_clock_ghz(const struct timing_calibration *clock, const struct phase_result *r);

/*
 * Compare every page size with the smallest measured at the same working-set
 * size (a->comparisons), and every stride with the next larger one
 * (a->stride_steps), from a->phases. Return 0 or -ENOMEM.
 */
int analysis_build_comparisons(const struct phase_result *res, size_t n, const struct timing_calibration *clock,
			       struct analysis *a);
int analysis_build_stride_steps(const struct phase_result *res, size_t n, const struct timing_calibration *clock,
				struct analysis *a);

/* A knee this close to a CPUID capacity matches it: the grid is 2^(1/4) apart, ~19 %, plus noise. */
static const double KNEE_MATCH_TOLERANCE = 0.25;

/* The knees of the tlbsize curve in res (a->knees), matched with env's CPUID TLB (env may be NULL). 0 or -ENOMEM. */
int analysis_build_knees(const struct phase_result *res, size_t n, const struct environment *env, struct analysis *a);

/* "phase" or "phases" for a count of n: messages say "1 phase", never "1 phases". */
const char *checks_phases_word(size_t n);

/*
 * Add a check with id, status st and a printf message to a; returns it for
 * its evidence. Past MAX_CHECKS the check goes to a scratch slot and is lost.
 */
__attribute__((format(printf, 4, 5)))
struct analysis_check *checks_add(struct analysis *a, const char *id, enum check_status st, const char *fmt, ...);

/* Add key = value to e; past ANALYSIS_MAX_EVIDENCE items it is dropped. key is a static string. */
void analysis_evidence_add(struct analysis_evidence *e, const char *key, double value);

/* Add key = value to the evidence of check c. */
void checks_evidence(struct analysis_check *c, const char *key, double value);

/* The checks, as analysis_run() calls them in the report's order. */
void checks_phases(const struct phase_result *res, size_t n, struct analysis *a);
void checks_self_checks(const struct phase_result *res, size_t n, struct analysis *a);
void checks_backing(const struct phase_result *res, size_t n, struct analysis *a);
void checks_set_aliasing(const struct phase_result *res, size_t n, const struct environment *env,
			 struct analysis *a);
void checks_timer(const struct phase_result *res, size_t n, const struct timing_calibration *clock,
		  struct analysis *a);
void checks_too_fast(const struct phase_result *res, size_t n, const struct environment *env,
		     const struct timing_calibration *clock, struct analysis *a);
void checks_tlb_pressure(const struct phase_result *res, size_t n, const struct environment *env,
			 struct analysis *a);
void checks_multiplexed(const struct phase_result *res, size_t n, struct analysis *a);
void checks_pmu(const struct phase_result *res, size_t n, struct analysis *a);
void checks_unstable(const struct phase_result *res, size_t n, struct analysis *a);
void checks_migrations(const struct phase_result *res, size_t n, struct analysis *a);
void checks_warmup(const struct phase_result *res, size_t n, struct analysis *a);
void checks_faults(const struct phase_result *res, size_t n, struct analysis *a);
void checks_frequency(const struct environment *env, const struct timing_calibration *clock,
		      struct analysis *a);
void checks_huge_ineffective(const struct phase_result *res, const struct environment *env,
			     struct analysis *a);
void checks_tlb_geometry(const struct phase_result *res, size_t n, const struct environment *env,
			 struct analysis *a);
void checks_page_faults(const struct phase_result *res, size_t n, struct analysis *a);

/* Findings over several phases (a->findings), from the comparisons. */
void analysis_find_shrinking_speedup(const struct phase_result *res, struct analysis *a);

/* The verdict (the worst check) and the plain-language summary, from the checks as they stand. */
void analysis_finish(const struct phase_result *results, struct analysis *a);
