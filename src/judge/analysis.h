/* SPDX-License-Identifier: MIT */
/* Pure analysis: phase statistics, page-size comparisons and the checks that catch a broken measurement. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "pmu/counters.h"
#include "machine/environment.h"
#include "judge/knees.h"
#include "stats.h"
#include "measure/phase.h"
#include "machine/timing.h"

#define ANALYSIS_MAX_EVIDENCE 16

/* The measured values a check or finding rests on, by name. */
struct analysis_evidence {
	size_t n;
	unsigned dropped;		/* values past ANALYSIS_MAX_EVIDENCE: the report says how many were lost */
	struct {
		const char *key;	/* static string */
		double value;
	} items[ANALYSIS_MAX_EVIDENCE];
};

/*
 * The value of metric m in a phase result, scaled, and whether it counted
 * (status ok or multiplexed). Returns false when the phase has no usable
 * reading of m.
 */
bool analysis_counter(const struct phase_result *r, enum metric m, double *value);

/* A per-access rate of metric m over the phase's timed accesses; false when unavailable. */
bool analysis_per_access(const struct phase_result *r, enum metric m, double *rate);

/* What a page-fault phase's samples say (pagefault workload). */
struct fault_metrics {
	bool valid;
	struct stats_summary ns_per_fault, ns_per_page, pages_per_fault, mib_per_s;
	double minor, major;		/* faults per sample, medians */
	bool from_counters;		/* fault counts from perf software counters, else getrusage */
	bool rusage_agrees;		/* getrusage counted the same faults (within 1 % + 2) */
	double user_s, sys_s;		/* CPU time over all samples */
	double wall_s;			/* wall time of the timed touches together */
	double resident_before;		/* the largest resident fraction before a timed touch */
	unsigned processes;
	double process_spread;		/* (max - min) / median of the per-process medians of ns per page */
};

/* Derive fault metrics from samples (pure; valid = false when there are none). */
void analysis_fault_metrics(const struct fault_sample *s, size_t n, struct fault_metrics *out);

/* Per-phase derived values, parallel to the results. */
struct phase_analysis {
	struct fault_metrics faults;	/* pagefault phases */
	unsigned allocations;		/* allocations that contributed samples */
	double between_allocations;	/* (max - min) / median of the allocations' medians; 0 with one */
	double within_allocation;	/* median over allocations of their samples' stddev / mean */
	/* How precise the median is: its own 95 % half-width and, with a second pass, what moved between runs. */
	double precision_within;	/* stats_median_halfwidth() of the samples, relative; INFINITY: none */
	bool second_pass;		/* the runner's second passes were recorded (phase_result.rerun_ns) */
	unsigned passes;		/* how many */
	double between_runs;		/* (their median - median) / median; 0 without them */
	double host;			/* stats_precision_host(): the host's part of the claim; 0 without them */
	double precision;		/* the claim: stats_precision_runs(precision_within, host) */
	struct stats_summary ns;		/* ns per access over the samples */
	bool has_control;
	size_t control;			/* index of the packed control for this phase's size */
	double translation_ns;		/* median - control median: the translation part (has_control) */
};

/*
 * The translation part of a comparison's baseline (ns per access), and how
 * well it is known (translation.c, ARCHITECTURE.md "Translation share"). A
 * single number only where a phase at the same size is proven walk-free;
 * else the range between the defensible estimates.
 */
struct translation_share {
	bool known;			/* lo_ns is set (a phase on larger pages at the same size, or a control) */
	bool proven;			/* lo_ns == hi_ns: the baseline minus a phase proven walk-free */
	double lo_ns, hi_ns;		/* hi_ns NAN: no high estimate (no packed control) */
	const char *lo_basis, *hi_basis;	/* what each end subtracts: "2m", "1g", "packed control" (static) */
	size_t free_phase;		/* the proven walk-free phase; SIZE_MAX: none */
	double control_vs_free_ns;	/* control median - free phase median (both present), else NAN */
	char evidence[320];		/* why proven, or why no control could be */
};

/* One page size compared with the smallest page size measured at the same working-set size. */
struct comparison {
	size_t baseline, variant;	/* indices into the results */
	double delta_ns;		/* baseline median - variant median, ns per access */
	double speedup;			/* baseline median / variant median */
	bool have_tlb_counts;		/* dTLB miss counts available for both */
	double delta_tlb_misses_per_access;
	double ns_per_tlb_miss, cycles_per_tlb_miss;
	double tlb_ns, cache_ns, unexplained_ns;
	bool have_walk_cycles;		/* walk_active used for tlb_ns */
	bool has_control;		/* both sides were measured against a packed control */
	double baseline_translation_ns, variant_translation_ns;	/* median - control median, per side */
	const char *method;		/* "counters" or "differential" */
	const char *assumption;		/* what the method takes for granted */
	/* How the parts were reached and how far they can be trusted (attribution.c, ARCHITECTURE.md "Attribution"). */
	double baseline_cycles_per_walk, variant_cycles_per_walk;	/* walk_active / walks completed; NAN: unknown */
	double baseline_clock_ghz, variant_clock_ghz;	/* cycles per ns that turned each side's walk cycles into ns */
	bool clock_counted;		/* both clocks are the phases' own counted cycles / timed ns, else calibrated */
	bool have_stlb_hits;		/* STLB hits counted on both sides and used in tlb_ns */
	double stlb_ns;			/* variant's minus baseline's STLB-hit time per access (inside tlb_ns), else 0 */
	const char *llc_change;		/* "changed", "within_noise", "unknown" (no interval); NULL: LLC not counted */
	double llc_cache_bound_ns;	/* the most the LLC change can cost: |delta LLC misses| x max ns per miss */
	double noise_ns;		/* 95 % half-width of delta_ns (the two phases' in quadrature); NAN: unknown */
	int adds_up;			/* 1: no part is impossible beyond noise_ns, 0: one is, -1: could not tell */
	char inconsistency[200];	/* adds_up 0 or -1: which part and by how much; "" otherwise */
	char cannot_see[480];		/* what the method cannot see, in words */
	/* How sure: the speedup's interval, and each phase's own against the difference. */
	double speedup_lo, speedup_hi;	/* 95 % hierarchical bootstrap interval (allocations, then samples); NAN: none */
	double baseline_halfwidth_ns, variant_halfwidth_ns;	/* each median's 95 % half-width (stats_precision) */
	bool interval_known;		/* both half-widths are finite (each phase has the samples for one) */
	bool comparable;		/* not shown otherwise: both half-widths smaller than |delta_ns|, or unknown */
	char doubt[240];		/* why not comparable, or why there is no interval; "" otherwise */
	struct translation_share translation;	/* differential comparisons of latency workloads */
};

/* One step of a stride sweep: from one stride to the next at the same size and page size. */
struct stride_step {
	size_t from, to;		/* indices into the results */
	const char *label;		/* "cache", "tlb", "cache+tlb", "flat", "within-page"; "none": no rise past noise_ns */
	double delta_ns, delta_cycles;	/* per access, to - from */
	double noise_ns;		/* the larger of the two phases' 95 % half-widths (0 where unknown) */
	size_t huge;			/* tlb steps: the same step on huge pages (index into stride_steps); SIZE_MAX: none */
	double tlb_ns;			/* tlb steps: delta_ns minus the huge-page step's; NAN without one */
	bool have_misses;
	double misses_from, misses_to;	/* dTLB misses per access */
};

/* What a knee of the tlbsize curve is: a TLB filling, a cache filling, or not told apart by the geometry. */
enum knee_kind { KNEE_UNKNOWN, KNEE_TLB, KNEE_CACHE };

/* "tlb", "cache", "unknown". */
const char *knee_kind_name(enum knee_kind k);

/* A capacity a knee is compared with: a TLB level (entries) or a cache level (bytes). */
struct knee_capacity {
	const char *level;		/* "L1 dTLB", "L2 TLB", "L1d", "L2", "L3"; NULL: none known */
	bool is_cache;			/* count is bytes (a cache), else entries (a TLB) */
	double count;			/* entries or bytes */
	double pages;			/* the pages of the chase that fill it (one line and 1/8 PTE line each for a cache) */
	const char *source;		/* "cpuid ...", "documented: CORE", "sysfs" */
	double relative_error;		/* distance of pages from the knee's rise [x_before, x_after], relative to pages */
	bool fits;			/* within what the level's fill allows (see knee_match.c) */
};

/* A knee of the tlbsize curve, what fits its rise, and the label that follows. */
struct tlb_knee {
	struct knee knee;		/* x in pages */
	const char *page_label;		/* the page size the curve was measured on ("4k") */
	enum knee_kind kind;
	struct knee_capacity tlb;	/* the nearest TLB level (CPUID's, else the documented core's) */
	struct knee_capacity cache;	/* the nearest data cache level (sysfs) */
	char evidence[300];		/* one sentence: what fits, what does not, or why it could not tell */
	/* The CPUID level only, as reports have always carried it. */
	const char *cpuid_level;	/* "l1d_4k_entries", "l2d_4k_entries", or NULL when CPUID reports none */
	unsigned cpuid_entries;
	double relative_error;		/* distance of entries from [x_before, x_after], relative to entries */
	bool matches;			/* within the resolution of the page-count grid */
};

/* A statement about several phases together (e.g. a size sweep). */
struct analysis_finding {
	const char *id;
	char message[1024];
	struct analysis_evidence evidence;
};

struct analysis_check {
	const char *id;
	enum check_status status;
	char message[1024];		/* a longer one ends in "…" (analysis_text()) */
	struct analysis_evidence evidence;
};

enum verdict { VERDICT_OK, VERDICT_WARN, VERDICT_FAIL };
/* "ok", "warn", "fail". */
const char *verdict_name(enum verdict v);

struct analysis {
	struct phase_analysis *phases;	/* owned, one per result */
	size_t n_phases;
	struct comparison *comparisons;	/* owned */
	size_t n_comparisons;
	struct stride_step *stride_steps;	/* owned */
	size_t n_stride_steps;
	struct tlb_knee *knees;			/* owned */
	size_t n_knees;
	struct analysis_finding *findings;	/* owned */
	size_t n_findings;
	char summary[640];		/* the plain-language answer the text output opens with */
	struct analysis_check *checks;	/* owned */
	size_t n_checks;
	enum verdict verdict;
};

struct analysis_input;	/* what a check reads; private to src/judge/ (analysis_internal.h) */

/* Which call adds a check: analysis_run(), or one of the two that tlbprof run makes with input only it has. */
enum analysis_check_by {
	ANALYSIS_CHECK_BY_RUN,		/* analysis_run(), on any phases */
	ANALYSIS_CHECK_BY_BUILD,	/* analysis_check_build(): the benchmark's build */
	ANALYSIS_CHECK_BY_MARKERS,	/* analysis_check_markers(): the marker lines the benchmark sent */
	ANALYSIS_CHECK_BY_UNMARKED,	/* analysis_check_unmarked(): what watching the command found */
};

/* One check of a measurement, as data: the one place its id is written. */
struct analysis_check_def {
	const char *id;			/* as the report, the summary and the man page's CHECKS name it */
	/* Adds exactly one check, with def->id, to a; called by the function that by names. */
	void (*fn)(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a);
	enum analysis_check_by by;
	const char *doc;		/* one line: what the check catches */
};

/* Every check, in the order the report lists them: analysis_run()'s, then tlbprof run's two. */
extern const struct analysis_check_def analysis_checks[];
extern const size_t analysis_n_checks;

/* Whether a verdict makes the exit status 1 under --fail-on. */
bool analysis_fails(enum verdict v, enum fail_on fail_on);

/*
 * Analyse finished phases (results[0..n-1]). env and clock may be NULL
 * (re-analysis without them skips the checks that need them).
 * Returns 0 or -ENOMEM; free with analysis_free().
 */
int analysis_run(const struct phase_result *results, size_t n, const struct environment *env,
		 const struct timing_calibration *clock, struct analysis *out);
void analysis_free(struct analysis *a);

/* How someone else's benchmark was built (tlbprof run), as its ELF file records it. */
struct analysis_build {
	const char *binary;		/* the executable's path */
	const char *opt_level;		/* "-O0" ... "-Ofast", "mixed", or "" when nothing is recorded */
	const char *opt_levels;		/* with "mixed": the distinct levels, space-separated */
	const char *source;		/* where the level was read: "gcc-command-line", "dwarf-producer", "none" */
	bool defaulted;			/* switches recorded without any -O: the compiler's default, -O0 */
	const char *unreadable;		/* why the executable could not be read as ELF (a script), or NULL */
};

/*
 * Add the check build_optimised (the analysis_checks entry by BUILD) for a
 * benchmark's build to a, then derive the verdict and the summary again
 * over results[0..n-1]: warn when the benchmark (or part of it) was compiled
 * -O0, whose loads and stores around every access measure the compiler
 * rather than the memory system; skip when no level is recorded. Pure.
 * Returns 0, or -ENOMEM when a has no room left for a check.
 */
int analysis_check_build(struct analysis *a, const struct phase_result *results, size_t n,
			 const struct analysis_build *build);

/* How a tlbprof run command ended (command_exit). */
struct analysis_command_end {
	bool attached;			/* run -p: a process tlbprof did not start, whose end is its parent's */
	bool interrupted;		/* tlbprof stopped it (SIGINT, SIGTERM, SIGHUP) */
	unsigned runs;			/* run -r: how many ran (1 otherwise) */
	unsigned failed;		/* of those, how many exited non-zero or died of a signal */
	bool exited;			/* the last run exited (else a signal ended it) */
	int exit_code;			/* its status, where it exited */
	const char *signal;		/* the signal that ended it ("SIGABRT"), NULL: none */
	bool core_dumped;
};

/*
 * Add the checks by MARKERS (the analysis_checks entries) for a tlbprof run:
 * marker_protocol warns when the command sent lines tlbprof refused (bad
 * syntax, nested or unknown phases, more than 256 phase names): its report
 * then lacks what those lines marked; first is the first refusal ("LINE:
 * reason"). command_exit fails when the command (a run of it, under -r)
 * exited non-zero or died of a signal tlbprof did not send, or tlbprof was
 * interrupted and stopped it: its phases may be partial and its own output
 * wrong, whatever they measured; end NULL: not
 * known (a report from before it was judged). Derives the verdict and the
 * summary again. Pure. Returns 0, or -ENOMEM when a has no room left.
 */
int analysis_check_markers(struct analysis *a, const struct phase_result *results, size_t n, unsigned messages,
			   unsigned refused, const char *first, const struct analysis_command_end *end);

struct sample_profile;	/* pmu/sample.h */

/*
 * Add the checks by UNMARKED (checks_unmarked.c) from what watching a
 * tlbprof run command found: the hot loop (cpu-clock shares), a first touch
 * inside it, the page order and in-page offset of its first touches, reads
 * of the zero page, regions on transparent huge pages, the hot thread's
 * pinning, the image finally exec'd. A cpu_migrations warning is judged
 * again from the hot thread's mask (a self-pinning benchmark's own move is
 * no warning). Derives the verdict and the summary again. Pure. Returns 0,
 * or -ENOMEM when a has no room left.
 */
int analysis_check_unmarked(struct analysis *a, const struct phase_result *results, size_t n,
			    const struct environment *env, const struct sample_profile *profile);
