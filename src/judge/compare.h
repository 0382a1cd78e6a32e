/* SPDX-License-Identifier: MIT */
/* Pure comparison of two analysed reports: per phase and per page-size comparison, judged from the samples. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "judge/analysis.h"
#include "machine/environment.h"
#include "measure/runner.h"
#include "machine/timing.h"

/* A change is significant below this p-value (two-sided); the bootstrap intervals are 1 - alpha. */
#define COMPARE_ALPHA 0.01
/* Fewer samples than this on either side: too few to judge, never a regression. */
#define COMPARE_MIN_SAMPLES 5
/*
 * Several reports a side (compare A1 A2 -- B1 B2): each run is one
 * observation, and the test between runs needs a variance on each side, so
 * at least this many runs a side hold a phase, or it is not judged ("could
 * not tell"). Two give the t-test one degree of freedom a side: it can
 * judge only runs that agree closely, as it should.
 */
#define COMPARE_MIN_RUNS 2
/* Reports a side, at most (a bit each in a uint64_t). */
#define COMPARE_MAX_RUNS 64
/*
 * Bootstrap resamples: at alpha 0.01 the interval's ends are the values at
 * 0-based indices 20 and 3979 of the sorted resamples (the 21st and the
 * 3980th).
 */
#define COMPARE_BOOTSTRAP_RESAMPLES 4000
/* A fixed seed: the same two reports always give the same intervals and verdicts. */
#define COMPARE_BOOTSTRAP_SEED 0x746c6270726f66ull	/* "tlbprof" */
/* The core clocks of the two runs differ when they are this far apart (relative). */
#define COMPARE_CLOCK_TOLERANCE 0.05
#define COMPARE_MAX_ENV_DIFFS 16
/* Parameters that differ between the two measurements of one phase, at most. */
#define COMPARE_MAX_PARAM_DIFFS 8
/*
 * A change within this much of the threshold counts as equal to it: 1.1 / 1
 * - 1 is 0.10000000000000009 in doubles, and an exact +10 % must not be
 * "beyond" a 10 % threshold.
 */
#define COMPARE_THRESHOLD_TOLERANCE 1e-9

/*
 * Percentile bootstrap interval, at level 1 - alpha, of the ratio of the
 * medians median(b) / median(a), hierarchical: each resample draws, on each
 * side, as many clusters as it has with replacement and then as many samples
 * as each drawn cluster holds from that cluster with replacement (with one
 * cluster this is the ordinary bootstrap), COMPARE_BOOTSTRAP_RESAMPLES times
 * from seed, so the interval is the same on every run. The spread between
 * the clusters enters the interval: a change smaller than the difference
 * between a run's own allocations keeps 1 inside it. *p_value (may be NULL)
 * gets the bootstrap's two-sided p-value of "the ratio is 1". Returns 0,
 * -EINVAL (an empty side, a median that is not above 0) or -ENOMEM.
 */
int compare_bootstrap_ratio(const struct stats_set *a, const struct stats_set *b, double alpha, uint64_t seed,
			    double *lo, double *hi, double *p_value);

/* What a change means, for a metric where lower is better (ns) or higher is better (speedup). */
enum compare_verdict {
	COMPARE_INSUFFICIENT,		/* fewer than COMPARE_MIN_SAMPLES on a side: not judged */
	COMPARE_NO_CHANGE,		/* not beyond noise, within the threshold */
	COMPARE_NOISE,			/* beyond the threshold, but not beyond noise */
	COMPARE_BETTER_SMALL,		/* beyond noise, better, within the threshold */
	COMPARE_WORSE_SMALL,		/* beyond noise, worse, within the threshold */
	COMPARE_BETTER,			/* beyond noise and better beyond the threshold */
	COMPARE_REGRESSION,		/* beyond noise and worse beyond the threshold */
	COMPARE_NOT_COMPARABLE,		/* a side did not measure it (failed or skipped phase, no comparison) */
	COMPARE_MACHINE_SLOWER,		/* slower beyond noise and threshold, and so is its packed control: the machine */
	COMPARE_MACHINE_FASTER,		/* faster ..., and so is its packed control */
	COMPARE_SMALLER_UNCOUNTED,	/* a speedup smaller beyond noise and threshold, but neither phase slower */
	COMPARE_TOO_FEW_RUNS,		/* between runs: fewer than COMPARE_MIN_RUNS runs on a side hold it: not judged */
};

/* "insufficient_samples", "no_change", ..., "regression", "not_comparable", "machine_slower", "too_few_runs" (JSON). */
const char *compare_verdict_name(enum compare_verdict v);
/* For people: "faster", "slower (regression)", ...; higher_is_better picks the words of a speedup. */
const char *compare_verdict_label(enum compare_verdict v, bool higher_is_better);
/* Whether the verdict is a judgement of the samples (not insufficient, too few runs or "not comparable"). */
bool compare_verdict_judged(enum compare_verdict v);

/*
 * The verdict of a relative change (new / old - 1) with its p-value, the
 * (1 - alpha) interval [lo, hi] of the ratio new / old and the noise floor
 * (a fraction: the larger spread between the clusters of either side), on
 * n_base and n_new samples, against threshold (a fraction, 0.05 = 5 %).
 * Beyond noise means all of: p < COMPARE_ALPHA, an interval that excludes 1
 * (no interval: never beyond noise; a rank test can call two sets different
 * while the medians' interval still holds "no change", and a verdict must
 * not contradict the interval printed next to it), and |change| > floor.
 * Beyond the threshold means |change| > threshold (with
 * COMPARE_THRESHOLD_TOLERANCE). Pure; the rule every comparison of this
 * module follows.
 */
enum compare_verdict compare_judge(double change, double p, double lo, double hi, double floor, size_t n_base,
				   size_t n_new, double threshold, bool higher_is_better);

/* One metric, old against new, from samples. NAN where a side has no value. */
struct compare_samples {
	size_t n_base, n_new;
	size_t clusters_base, clusters_new;	/* allocations or processes the samples came from */
	double base, new;		/* medians */
	double change;			/* new / base - 1 */
	double ratio_lo, ratio_hi;	/* the (1 - alpha) bootstrap interval of new / base; NAN when not judged */
	double p;			/* two-sided p-value; NAN when not judged */
	double noise_floor;		/* the larger cluster spread of the two sides (fraction); NAN when not judged */
	bool exact;			/* p is exact (Mann-Whitney on small samples) */
	const char *test;		/* "mann_whitney_u", "bootstrap", "welch_t_runs", or NULL when not judged */
	enum compare_verdict verdict;
	/*
	 * Between runs (several reports a side; 0 and NAN otherwise): how many
	 * runs of each side gave a value, the spread of those values, (max -
	 * min) / median, and Welch's t and its degrees of freedom.
	 */
	size_t runs_base, runs_new;
	double run_spread_base, run_spread_new;
	double t, df;
};

/*
 * Judge between runs, as a benchmark harness does with repeated processes:
 * base[0..nb-1] and new[0..nn-1] are one value per run (a phase's median, a
 * speedup, a phase over its control), each run one independent
 * observation. Welch's two-sample t-test on the logarithms of the values
 * (a change is a ratio; the runs of the two sides may differ in number and
 * spread): base and new are the geometric means, change their ratio - 1,
 * p the two-sided p-value of the t statistic, [ratio_lo, ratio_hi] the
 * (1 - COMPARE_ALPHA) interval of the ratio from the same t; the verdict as
 * compare_judge() gives it without a floor (the t-test holds the spread
 * between runs), COMPARE_TOO_FEW_RUNS with fewer than COMPARE_MIN_RUNS on a
 * side, COMPARE_NOT_COMPARABLE with none. A value that is not above 0 is
 * left out. n_base and n_new are left for the caller (samples). Pure.
 */
void compare_between_runs(const double *base, size_t nb, const double *new, size_t nn, double threshold,
			  bool higher_is_better, struct compare_samples *out);

/*
 * The two-sided p-value of Student's t statistic t with df degrees of
 * freedom (df > 0, not necessarily whole: Welch's), from the regularized
 * incomplete beta function; and the t whose two-sided p-value is p (0 < p <
 * 1). Pure; NAN for a df that is not above 0.
 */
double compare_t_p_value(double t, double df);
double compare_t_quantile(double p, double df);

/*
 * Compare two sample sets of a metric where lower is better: medians, the
 * change, a Mann-Whitney p-value (the evidence within the runs), the
 * hierarchical bootstrap interval of the ratio of medians and the noise
 * floor between clusters (the evidence between allocations or processes),
 * and the verdict. Returns 0 or -ENOMEM.
 */
int compare_samples(const struct stats_set *base, const struct stats_set *new, double threshold,
		    struct compare_samples *out);

/*
 * Compare the ratio x/y of the old run (sets[0] = x, sets[1] = y) with that
 * of the new run (sets[2], sets[3]): the medians' ratios, the change, and the
 * hierarchical bootstrap p-value and interval of new ratio / old ratio (all
 * four sets resampled); the noise floor is the largest cluster spread of the
 * four. higher_is_better: a speedup (baseline / variant); otherwise a
 * slowdown such as phase / control. Returns 0 or -ENOMEM.
 */
int compare_ratio(const struct stats_set sets[4], double threshold, bool higher_is_better,
		  struct compare_samples *out);

/* A counter's rate per access (per page for page faults), old against new; NAN where a side did not count. */
struct compare_rate {
	enum metric metric;
	double base, new;
	double change;		/* new / base - 1; NAN when base is 0 or a side is missing */
};

enum compare_match {
	COMPARE_MATCHED,	/* in both reports */
	COMPARE_REMOVED,	/* only in the base report */
	COMPARE_ADDED,		/* only in the new report */
};
/* "matched", "removed", "added". */
const char *compare_match_name(enum compare_match m);

/* A measurement parameter of a phase that differs between the two reports. */
struct compare_param_diff {
	char param[24];			/* "layout", "stride_bytes", "iterations_mode", "cpu", "declared.accesses", ... */
	char base[48], new[48];
};

/* One phase, matched by name. */
struct compare_phase {
	const char *name;		/* borrowed from the reports */
	enum compare_match match;
	size_t base, new;		/* indices into the results; SIZE_MAX on the side that lacks it */
	/*
	 * Which report of each side base and new index (the first that holds
	 * the phase; 0 with one report a side), and how many reports of each
	 * side lack the phase (with one a side: 1 on the side it is not in),
	 * and which: bit r of a mask is report r of that side.
	 */
	size_t base_run, new_run;
	size_t missing_base, missing_new;
	uint64_t missing_mask_base, missing_mask_new;
	bool faults;			/* a page-fault phase: the metric is ns per page */
	bool wall;			/* a tlbprof run phase without declared accesses: ns per occurrence */
	bool control;			/* a packed control: the machine's reference, never a regression itself */
	struct compare_samples ns;	/* ns per access (per page for page faults, per occurrence for wall) */
	struct compare_samples ns_per_fault;	/* page-fault phases; verdict COMPARE_NOT_COMPARABLE otherwise */
	/*
	 * (phase / its packed control) new against old, where both sides have
	 * the same control: the change that the machine (which moves the
	 * control as well) does not explain. verdict COMPARE_NOT_COMPARABLE
	 * without one.
	 */
	struct compare_samples vs_control;
	const char *control_name;	/* borrowed; NULL without a control on both sides */
	/*
	 * What counts for the phase: ns's verdict, except that a REGRESSION or
	 * BETTER of a phase with vs_control needs vs_control to agree (the same
	 * verdict, or COMPARE_NOISE in the same direction), else it is
	 * COMPARE_MACHINE_SLOWER/FASTER; a control's own is always
	 * COMPARE_MACHINE_SLOWER/FASTER.
	 */
	enum compare_verdict verdict;
	bool against_control;		/* a move of ns was checked against vs_control */
	bool control_inconclusive;	/* ... and vs_control, COMPARE_NOISE, agreed only in direction */
	struct compare_rate rates[METRIC_COUNT];
	size_t n_rates;
	struct compare_param_diff params[COMPARE_MAX_PARAM_DIFFS];
	size_t n_params;
};

/* One page-size comparison (baseline vs variant phase), matched by the two names. */
struct compare_pair {
	const char *baseline, *variant;	/* borrowed */
	enum compare_match match;
	size_t base, new;		/* indices into the analyses' comparisons; SIZE_MAX when absent */
	size_t base_run, new_run;	/* the reports they index, as a phase's */
	size_t missing_base, missing_new;
	uint64_t missing_mask_base, missing_mask_new;
	struct compare_samples speedup;	/* base and new are the two speedups */
	double base_delta_ns, new_delta_ns;
	double base_ns_per_tlb_miss, new_ns_per_tlb_miss;	/* NAN without dTLB counts */
	const char *base_method, *new_method;			/* NULL on a side that lacks it */
	const struct comparison *base_cmp, *new_cmp;		/* each side's (interval, comparable, doubt); borrowed */
};

/* One check of the analysis, matched by id. */
struct compare_check {
	const char *id;			/* borrowed */
	enum compare_match match;
	enum check_status base, new;	/* with several reports a side: the worst of the side's reports */
	bool worse;			/* pass -> warn or fail, warn -> fail */
	const char *base_message, *new_message;	/* borrowed; NULL on a side that lacks it */
};

/* A fact of the environment that differs between the two runs. */
struct compare_env_diff {
	char field[32];			/* "cpu.model_name", "kernel", "thp.enabled", "hugepages.2M", ... */
	char base[192], new[192];
};

/* One side of a comparison; all borrowed. */
struct compare_side {
	const struct run_results *results;
	const struct analysis *analysis;	/* analysis_run() over results */
	const struct environment *env;
	const struct timing_calibration *clock;
	const char *pmu_name;			/* "none" when no PMU */
};

struct compare_result {
	double threshold;		/* fraction */
	size_t runs_base, runs_new;	/* reports a side */
	bool between_runs;		/* more than one on a side: judged between runs (compare_between_runs()) */
	struct compare_phase *phases;	/* owned: the base's order, then the added ones */
	size_t n_phases;
	struct compare_pair *pairs;	/* owned */
	size_t n_pairs;
	struct compare_check *checks;	/* owned */
	size_t n_checks;
	struct compare_env_diff env[COMPARE_MAX_ENV_DIFFS];
	size_t n_env;
	bool interrupted_base, interrupted_new;	/* a side's run was interrupted: it holds fewer phases */
	size_t phases_judged;		/* matched phases whose verdict judged the samples */
	size_t phases_insufficient;	/* matched phases with too few samples on a side */
	size_t pairs_judged;		/* matched comparisons whose speedup verdict judged the samples */
	size_t pairs_insufficient;
	size_t phases_params_differ;	/* matched phases measured with other parameters */
	size_t regressions;		/* phases (their verdict) and pairs with COMPARE_REGRESSION */
	size_t improvements;		/* ... with COMPARE_BETTER */
	size_t machine_shifts;		/* phases with COMPARE_MACHINE_SLOWER or _FASTER (controls included) */
	size_t speedups_uncounted;	/* pairs with COMPARE_SMALLER_UNCOUNTED */
	size_t checks_worse;		/* checks that went from pass to warn/fail or from warn to fail */
	size_t checks_now_failing;	/* of those, the ones that are fail now */
	size_t too_few_runs;		/* matched phases and pairs with COMPARE_TOO_FEW_RUNS */
	size_t missing_from_runs;	/* matched phases and pairs that some report of a side lacks */
};

/*
 * Compare base with new: phases by name (with their samples and their
 * clusters), page-size comparisons by baseline and variant names, checks by
 * id, the environments field by field, the measurement parameters of each
 * matched phase. threshold is a fraction (0.05). Then the rules that need
 * more than one metric: a phase measured against the same packed control on
 * both sides regresses (improves) only when its change against that control
 * agrees (what moves both is the machine: such a phase is
 * COMPARE_MACHINE_SLOWER or _FASTER, and a control's own move is always
 * that), and a smaller speedup
 * counts as a regression only when its baseline or variant phase got slower
 * beyond noise itself (else COMPARE_SMALLER_UNCOUNTED).
 * Pure: no I/O. Returns 0 or -ENOMEM; free with compare_free(). out borrows
 * names from both sides.
 */
int compare_run(const struct compare_side *base, const struct compare_side *new, double threshold,
		struct compare_result *out);

/*
 * Several reports a side (n_base, n_new >= 1): with one each, compare_run().
 * Otherwise every run is one observation. Phases are matched by name (the
 * k-th of a name with the k-th) across all reports, comparisons by their
 * two names; a side holds one when any of its reports does, and the reports
 * that lack it are counted (missing_base, missing_new), not dropped. Each
 * phase's median in each report that measured it, each comparison's
 * speedup and each phase's median over its packed control's go to
 * compare_between_runs(). Parameters, counter rates and each side's figures
 * of a comparison come from the first report of a side that holds it;
 * environments from each side's first report; a check's status on a side
 * is the worst of its reports'. Then the rules of compare_run(). Pure;
 * returns 0, -EINVAL (a side with no report, more than COMPARE_MAX_RUNS) or
 * -ENOMEM; free with compare_free().
 */
int compare_run_many(const struct compare_side *base, size_t n_base, const struct compare_side *new, size_t n_new,
		     double threshold, struct compare_result *out);
void compare_free(struct compare_result *r);

/* Whether anything was judged: a matched phase or comparison with a verdict on its samples. */
bool compare_judged_any(const struct compare_result *r);

/*
 * Whether the comparison makes the exit status 1: a regression beyond noise
 * and the threshold, or (fail_on warn) a check that got worse, or (fail_on
 * fail) a check that fails now and did not before. Never with FAIL_ON_NEVER.
 */
bool compare_fails(const struct compare_result *r, enum fail_on fail_on);

/*
 * The environment facts that differ: CPU model, kernel, THP mode and defrag,
 * hypervisor, PMU, core clock (beyond COMPARE_CLOCK_TOLERANCE), hugetlb pool
 * availability per page size. Pure; fills out->env and out->n_env.
 */
void compare_environments(const struct compare_side *base, const struct compare_side *new, struct compare_result *out);

/*
 * The measurement parameters of one phase that differ between b and n:
 * layout, stride, iterations mode (and the iterations when both are fixed),
 * repeat, allocations, CPU pinning, processes, page size, and what a tlbprof
 * run phase declared (accesses, region, timings, kind). Pure; fills
 * cp->params and cp->n_params (at most COMPARE_MAX_PARAM_DIFFS).
 */
void compare_parameters(const struct phase_result *b, const struct phase_result *n, struct compare_phase *cp);
