/* SPDX-License-Identifier: MIT */
/* What the files of the analysis (src/judge/analysis.c, attribution.c, checks*.c, ...) share; not for other modules. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "judge/analysis.h"
#include "pmu/sample.h"

/* Room in an analysis, allocated by analysis_run(). */
enum {
	MAX_CHECKS = 48,
	MAX_FINDINGS = 8,
};

/* The steps of analysis_run(), each in its own file, and what they share (metrics.c unless said). */

/* Per-phase statistics into a->phases: samples, faults, allocations, the packed control's translation part. */
void analysis_phase_metrics(const struct phase_result *res, size_t n, struct analysis *a);

/* A measured phase that completed with samples: what comparisons, sweeps and most checks look at. */
bool analysis_measured_ok(const struct phase_result *r);

/*
 * The cluster of each sample of a phase into *cluster: the process of a
 * page-fault phase that ran in several (each of its samples maps fresh
 * memory, so the process is what samples share), else the allocation, else
 * NULL (one cluster). *owned is what the caller frees. 0 or -ENOMEM.
 */
int analysis_sample_clusters(const struct phase_result *r, const unsigned **cluster, unsigned **owned);

/* The core clock to turn ns into cycles: the calibrated one (clock may be NULL), else the phase's own. */
double analysis_clock_ghz(const struct timing_calibration *clock, const struct phase_result *r);

/*
 * Compare every page size with the smallest measured at the same working-set
 * size (a->comparisons), and every stride with the next larger one
 * (a->stride_steps), from a->phases. Return 0 or -ENOMEM.
 */
int analysis_build_comparisons(const struct phase_result *res, size_t n, const struct environment *env,
			       const struct timing_calibration *clock, struct analysis *a);

/*
 * The translation share of comparison c's baseline from the phases at its
 * size (translation.c): proven against a walk-free phase, else the range
 * from baseline - largest pages to baseline - packed control. env may be NULL.
 */
void analysis_translation_share(const struct phase_result *res, size_t n, const struct environment *env,
				const struct analysis *a, struct comparison *c);
int analysis_build_stride_steps(const struct phase_result *res, size_t n, const struct timing_calibration *clock,
				struct analysis *a);

/* A knee this close to a CPUID capacity matches it: the grid is 2^(1/4) apart, ~19 %, plus noise. */
static const double KNEE_MATCH_TOLERANCE = 0.25;

/* The knees of the tlbsize curve in res (a->knees), matched with env's CPUID TLB (env may be NULL). 0 or -ENOMEM. */
int analysis_build_knees(const struct phase_result *res, size_t n, const struct environment *env, struct analysis *a);

/* tlbprof run's marker lines, for marker_protocol. */
struct analysis_markers {
	unsigned messages;		/* marker and control lines the command sent */
	unsigned refused;		/* of those, refused */
	const char *first;		/* the first refusal ("LINE: reason"), or NULL */
	const struct analysis_command_end *end;	/* how the command ended; NULL: not known */
};

/* What a check reads. env and clock may be NULL; build and markers are set only for the checks that read them. */
struct analysis_input {
	const struct phase_result *results;
	size_t n;
	const struct environment *env;
	const struct timing_calibration *clock;
	const struct analysis_build *build;	/* ANALYSIS_CHECK_BY_BUILD */
	const struct analysis_markers *markers;	/* ANALYSIS_CHECK_BY_MARKERS */
	const struct sample_profile *profile;	/* ANALYSIS_CHECK_BY_UNMARKED */
};

/* Run the entries of analysis_checks that by names, in the table's order, on in; each adds its one check to a. */
void checks_run(const struct analysis_input *in, enum analysis_check_by by, struct analysis *a);

/*
 * Add the check of def with status st and a printf message to a; returns it
 * for its evidence. Past MAX_CHECKS the check goes to a scratch slot and is lost.
 */
__attribute__((format(printf, 4, 5)))
struct analysis_check *checks_add(struct analysis *a, const struct analysis_check_def *def, enum check_status st,
				  const char *fmt, ...);

/* Add key = value to e; past ANALYSIS_MAX_EVIDENCE items it is dropped and counted in e->dropped. key is static. */
void analysis_evidence_add(struct analysis_evidence *e, const char *key, double value);

/*
 * A message into buf: one that does not fit is cut at a character and ends in "…", so that a reader sees text was
 * lost (the tests fail a report that has one) rather than a sentence that stops mid-word. Returns whether it was cut.
 */
bool analysis_vtext(char *buf, size_t size, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
bool analysis_text(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Add key = value to the evidence of check c. */
void checks_evidence(struct analysis_check *c, const char *key, double value);

/* "phase" or "phases" for a count of n: messages say "1 phase", never "1 phases". */
const char *checks_phases_word(size_t n);

/*
 * The check functions of analysis_checks, one per id, named after it:
 * checks_phases.c, checks_memory.c, checks_timing.c, checks_counters.c, checks_attribution.c,
 * checks_tlb.c, checks_faults.c, checks_target.c, checks_declared.c.
 */
void checks_phases_completed(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
void checks_workload_self_checks(const struct analysis_check_def *def, const struct analysis_input *in,
				 struct analysis *a);
void checks_control_thp_contamination(const struct analysis_check_def *def, const struct analysis_input *in,
				      struct analysis *a);
void checks_huge_pages_granted(const struct analysis_check_def *def, const struct analysis_input *in,
			       struct analysis *a);
void checks_cache_set_aliasing(const struct analysis_check_def *def, const struct analysis_input *in,
			       struct analysis *a);
void checks_timer_resolution(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
void checks_too_fast(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
void checks_tlb_pressure_expected(const struct analysis_check_def *def, const struct analysis_input *in,
				  struct analysis *a);
void checks_multiplexed_counters(const struct analysis_check_def *def, const struct analysis_input *in,
				 struct analysis *a);
void checks_pmu_unavailable(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
void checks_counters_plausible(const struct analysis_check_def *def, const struct analysis_input *in,
			       struct analysis *a);
void checks_attribution_adds_up(const struct analysis_check_def *def, const struct analysis_input *in,
				struct analysis *a);
void checks_unstable(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
void checks_cpu_migrations(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
void checks_warmup_insufficient(const struct analysis_check_def *def, const struct analysis_input *in,
				struct analysis *a);
void checks_faults_in_timed_phase(const struct analysis_check_def *def, const struct analysis_input *in,
				  struct analysis *a);
void checks_frequency_scaling(const struct analysis_check_def *def, const struct analysis_input *in,
			      struct analysis *a);
void checks_huge_pages_ineffective(const struct analysis_check_def *def, const struct analysis_input *in,
				   struct analysis *a);
void checks_tlb_geometry(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
void checks_anon_cold_faults_per_page(const struct analysis_check_def *def, const struct analysis_input *in,
				      struct analysis *a);
void checks_anon_prefault_no_faults(const struct analysis_check_def *def, const struct analysis_input *in,
				    struct analysis *a);
void checks_file_cold_major_faults(const struct analysis_check_def *def, const struct analysis_input *in,
				   struct analysis *a);
void checks_fault_counts_agree(const struct analysis_check_def *def, const struct analysis_input *in,
			       struct analysis *a);
void checks_process_spread(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
void checks_declared_region_resident(const struct analysis_check_def *def, const struct analysis_input *in,
				     struct analysis *a);
void checks_declared_accesses_plausible(const struct analysis_check_def *def, const struct analysis_input *in,
					struct analysis *a);
/*
 * Whether [start, end) overlaps a region that a tlbprof run phase declared and whose backing was verified against
 * the page it declared: control_thp_contamination and huge_pages_granted judge that one by what the benchmark said
 * it measures, so a declared 2m region on transparent huge pages is the point, not a finding (thp_backed_region).
 */
bool checks_declared_verified(const struct analysis_input *in, uint64_t start, uint64_t end);
void checks_build_optimised(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
void checks_marker_protocol(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
void checks_command_exit(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
void checks_cpu_time_clock(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
/* checks_unmarked.c: from what watching a tlbprof run command found (pmu/sample.h's sample_profile). */
/* Fewer cpu-clock samples (of 250 us each) than this do not locate a loop: 5 ms of CPU time. */
#define UNMARKED_MIN_CLOCK_SAMPLES 20
/*
 * checks_clocks.c: skips def (adding it) when the cpu-clock samples cannot locate a loop: no sampling, too few
 * samples, or samples whose CPU time is not the command's (the task-clock of the same run counted otherwise).
 */
bool checks_no_clock(const struct analysis_check_def *def, const struct sample_profile *p, struct analysis *a);
/* The samples' CPU time (samples x period) is not within a quarter of the command's task-clock, where counted. */
bool checks_clock_unaccounted(const struct sample_profile *p);
/* The hot function without its object path, for messages. */
const char *checks_short_fn(const struct sample_profile *p);
void checks_hot_loop(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
void checks_first_touch_in_timed_loop(const struct analysis_check_def *def, const struct analysis_input *in,
				      struct analysis *a);
void checks_sequential_page_order(const struct analysis_check_def *def, const struct analysis_input *in,
				  struct analysis *a);
void checks_same_page_offset(const struct analysis_check_def *def, const struct analysis_input *in,
			     struct analysis *a);
void checks_zero_page_reads(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
void checks_thp_backed_region(const struct analysis_check_def *def, const struct analysis_input *in,
			      struct analysis *a);
void checks_pinning(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
void checks_exec_image(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
/* checks_code.c: from the hot loop's machine code. */
void checks_load_dependence(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
/* Where declared_accesses_plausible warned or too_fast failed, which of their two causes the hot loop's code shows. */
void checks_rejudge_declared(const struct sample_profile *p, struct analysis *a);
/*
 * Where the ELF records no optimisation level (build_optimised skipped), the hot loop's machine code answers
 * instead (checks_code.c): -O0's frame pointer and variables reloaded from stack slots, or registers.
 */
void checks_rejudge_build(const struct sample_profile *p, struct analysis *a);
void checks_coarse_clock(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
/* The first clock function whose tracing stopped at its budget (the reads after it are unseen), or -1. */
int checks_clock_stopped_fn(const struct sample_clocks *c);
/* The clock read in a timer's start/stop pairs, for the messages: "clock_gettime CLOCK_MONOTONIC". */
const char *checks_paired_clock(const struct sample_clocks *c, char *buf, size_t len);
void checks_empty_timed_window(const struct analysis_check_def *def, const struct analysis_input *in,
			       struct analysis *a);
void checks_off_cpu_in_timed_window(const struct analysis_check_def *def, const struct analysis_input *in,
				    struct analysis *a);
void checks_clock_per_access(const struct analysis_check_def *def, const struct analysis_input *in,
			     struct analysis *a);

/* Findings over several phases (a->findings), from the comparisons. */
void analysis_find_shrinking_speedup(const struct phase_result *res, struct analysis *a);

/* Colored and aligned phases side by side (layout_changes_latency): the layout's share of the number. */
void analysis_find_layout_effect(const struct phase_result *res, size_t n, struct analysis *a);

/* Under a hypervisor: huge pages that still read slower than their packed control (nested_paging_translation). */
void analysis_find_nested_paging(const struct phase_result *res, size_t n, const struct environment *env,
				 struct analysis *a);

/* The first user access to kernel-populated 4 KiB pages costing a trap each (shadow_paging). */
void analysis_find_shadow_paging(const struct phase_result *res, size_t n, const struct environment *env,
				 struct analysis *a);

/* The verdict (the worst check) and the plain-language summary, from the checks as they stand. */
void analysis_finish(const struct phase_result *results, struct analysis *a);
