/* SPDX-License-Identifier: MIT */
/* A phase (one workload x page size x working-set size x repetition) and what measuring it produced. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"
#include "pmu/counters.h"

/* Why a phase runs: a measurement, or a control that the analysis compares measurements with. */
enum phase_role {
	PHASE_ROLE_MEASURE,
	PHASE_ROLE_CONTROL,	/* "packed": the cache-line footprint of a measured size on few pages */
};
/* "measure", "control". */
extern const char *const phase_role_names[];
const char *phase_role_name(enum phase_role r);

/* What the plan asks for: everything needed to run one phase. Plain data. */
struct phase_spec {
	char name[64];			/* "chase/4k/256M/r0" (plan_name()) */
	unsigned index;			/* position in the plan */
	const struct workload_ops *workload;
	struct page_request page;
	uint64_t size_bytes;
	uint64_t stride_bytes;
	uint64_t iterations;		/* timed accesses per sample */
	uint64_t warmup_iterations;
	unsigned repeat;
	uint64_t seed;
	int cpu;			/* -1: not pinned */
	enum chase_layout layout;
	enum phase_role role;
	uint64_t controls_size_bytes;	/* control: the measured working-set size it stands for; else 0 */
	uint64_t controls_stride_bytes;	/* control: the measured stride it stands for; else 0 */
	/* Adaptive measurement (iterations_auto): batch so a sample lasts >= SAMPLE_MIN, then repeat samples
	 * on each of at least `allocations` fresh allocations, and more allocations (one: more samples) until
	 * stats_precision() is within precision or the next one would pass time_budget_s. */
	bool iterations_auto;
	double precision;		/* relative half-width of the 95 % CI (stats_precision) to stop at */
	double time_budget_s;		/* wall time of one phase, its allocations included */
	unsigned allocations;		/* fresh region and chain per allocation (--realloc); auto: the least */
	/* pagefault */
	int fault_case;			/* enum fault_case, FAULT_NONE for other workloads */
	unsigned processes;		/* separate processes to run the samples in (1: this one) */
	const char *dir;		/* where the data file lives (borrowed) */
	const char *file;		/* an existing data file to use (child of a parent that made it), or NULL */
	bool drop_caches;
	/* tlbprof run: what the benchmark declared for the phase (zero for workload phases). */
	uint64_t accesses_total;	/* when nonzero: the timed accesses (summed over occurrences) */
	uint64_t timings;		/* separately clocked intervals per sample (0 or 1: the sample is one) */
	bool throughput;		/* independent accesses: ns per access is no latency, no L1 floor */
};

enum phase_status { PHASE_OK, PHASE_FAILED, PHASE_SKIPPED };
/* "ok", "failed", "skipped" (phase.c). */
extern const char *const phase_status_names[];
const char *phase_status_name(enum phase_status s);

enum check_status { CHECK_PASS, CHECK_WARN, CHECK_FAIL, CHECK_SKIP };
/* "pass", "warn", "fail", "skip" (phase.c). */
extern const char *const check_status_names[];
const char *check_status_name(enum check_status s);

/* A self-check a workload ran on its own data structure. */
struct self_check {
	const char *id;			/* static string: "single_cycle", "strides_not_constant" */
	enum check_status status;
	char message[200];
};

#define PHASE_MAX_SELF_CHECKS 8
/* Second passes of a phase, each a round over every phase after the run (phase_result.rerun_ns). */
#define PHASE_SECOND_PASSES 3

/* The verified backing of a region, from /proc/self/smaps. */
struct region_backing {
	enum page_kind kind;		/* what the kernel really gave */
	uint64_t kernel_page_bytes;	/* KernelPageSize (the largest seen over the region's VMAs) */
	uint64_t mapped_bytes;		/* the VMA bytes that overlap the region */
	uint64_t rss_bytes;		/* resident (Rss, or hugetlb bytes for hugetlb VMAs) */
	uint64_t anon_huge_bytes;	/* AnonHugePages */
	uint64_t hugetlb_bytes;		/* Private_Hugetlb + Shared_Hugetlb */
	double huge_fraction;		/* bytes on huge pages / resident bytes */
	unsigned vmas;
};

/* One timed touch of the page-fault workload, with what it cost. */
struct fault_sample {
	double elapsed_ns;		/* wall time of the touch loop */
	uint64_t pages;			/* base pages touched */
	double minor, major;		/* faults from the perf software counters (-1: not counted) */
	uint64_t minor_rusage, major_rusage;	/* the same from getrusage, as a cross-check */
	double user_ns, sys_ns;		/* CPU time of the measuring thread during the touch */
	double resident_before;		/* fraction of the mapping resident before timing (file cases) */
	unsigned process;		/* which process took it (0 .. processes-1) */
};

/* A phase of someone else's benchmark (tlbprof run): what it declared and how its occurrences went. */
struct target_phase {
	unsigned occurrences;		/* begin..end pairs completed */
	bool open_at_exit;		/* the command exited (or was stopped) inside this phase */
	bool has_accesses;
	bool has_region;
	uint64_t region_addr, region_bytes;	/* the last region declared */
	bool region_changed;		/* an occurrence declared another region: verify it at its end */
	bool has_page;			/* spec.page is the declared page size */
	bool has_chain;
	bool chain_pending;		/* declared at this occurrence's begin: copied out and walked at its end */
	uint64_t chain_addr;
	uint64_t slots_declared;	/* 0: not declared */
	bool chain_inspected;		/* the chain was read from the process and self-checked */
	uint64_t chain_cycle_slots;	/* slots on the cycle through chain_addr (0 when it never returned) */
	double chain_pages_covered;	/* share of the region's 4 KiB pages the cycle touches */
	uint64_t chain_span_bytes;	/* from its lowest slot to past its highest (not in reports) */
	double *wall_ns;		/* wall time of each occurrence (owned) */
	size_t n_wall;
	double tlbprof_ns_total;	/* the same windows as tlbprof saw them (begin ack .. end line), summed */
	int64_t samples_in_phase;	/* --sample: samples inside this phase's windows; -1: not sampled */
	/* The declared region's backing clipped to its range (target/backing.c), the worst occurrence's. */
	bool backing_exact;		/* per page from /proc/PID/pagemap + /proc/kpageflags (root), else smaps */
	double resident_fraction;	/* of the declared range's 4 KiB pages, resident; -1: never read */
	double zero_fraction;		/* of them, mapped to the shared zero page (exact only, else 0) */
	bool vm_nh, vm_hg;		/* some VMA of the range has VmFlags nh (MADV_NOHUGEPAGE) / hg (MADV_HUGEPAGE) */
	/* tlbprof's own chase of the same shape after the exit (target/reference.c): ns per access; 0: none. */
	double reference_ns;
	char reference_why[160];	/* why there is none ("" when there is) */
};

/* Everything a phase produced. Owned by the runner's result list. */
struct phase_result {
	struct phase_spec spec;
	enum phase_status status;
	bool unavailable;		/* failed because the machine cannot provide it (exit 3) */
	char reason[512];
	bool backing_known;
	struct region_backing backing;
	uint64_t slots;			/* workload units (chase: slots in the chain) */
	double prepare_ms;		/* building the workload's structure (chain) and its self-checks */
	double build_ms;		/* building the structure alone */
	double wall_ms;			/* the phase from its start to its end, second passes not included */
	double populate_ms;		/* mapping and faulting in every allocation's region */
	/*
	 * The allocations after the first, populated by the kernel: the first
	 * write from user space to each base page after it (region_populated),
	 * summed. Per page: a TLB miss natively, microseconds under shadow paging.
	 */
	uint64_t first_access_pages;
	double first_access_ns;
	double counter_open_us;		/* opening the counter set for the phase */
	double counter_read_us;		/* reading every counter once */
	double *samples_ns;		/* samples, ns per access, in order taken (owned) */
	unsigned *sample_alloc;		/* the allocation each sample was taken on (owned) */
	size_t n_samples;
	unsigned allocations_run;
	/* Warm-up over the allocations: auto warms in passes until one is no longer faster, fixed by --warmup-frac. */
	uint64_t warmup_accesses;	/* all allocations together */
	unsigned warmup_passes;		/* auto: passes around the structure, all allocations together */
	unsigned warmup_max_passes;	/* auto: the most passes one allocation took */
	unsigned warmup_unsettled;	/* auto: allocations whose warm-up hit its cap still getting faster */
	double warmup_ms;		/* all allocations together */
	double precision_reached;	/* stats_precision(): allocations as the unit when there are several */
	/*
	 * The second passes (--iters auto with several allocations): after
	 * every phase of the run has finished, PHASE_SECOND_PASSES rounds over
	 * the phases, each a pass of --repeat samples on the phase's last
	 * allocation, kept (or on a fresh one where it could not be kept), so
	 * the claimed precision has a term for what moves between runs
	 * (stats_precision_host()). Not part of the samples or the median.
	 */
	double *rerun_ns;		/* their samples, ns per access, in order (owned); NULL when none */
	unsigned *rerun_pass;		/* the pass each sample was taken in, 1..n_passes (owned); NULL: all in pass 1 */
	size_t n_rerun;
	unsigned n_passes;		/* second passes that ran */
	double pass_after_s[PHASE_SECOND_PASSES];	/* seconds from the phase's start to each pass's start */
	bool rerun_kept;		/* the passes ran on the phase's last allocation (false: each on a fresh one) */
	unsigned pass_warmup_passes[PHASE_SECOND_PASSES];	/* each pass's warm-up passes around the structure */
	unsigned pass_unsettled;	/* passes whose warm-up hit its cap before it was steady */
	bool pass_warmup_known;		/* the two above were recorded (false: a report from before them) */
	double pass_ms;			/* the second passes' wall time, all together */
	char rerun_why[200];		/* why there is no second pass, or why they stopped short; "" otherwise */
	double precision_between;	/* (their median - the phase's median) / the phase's median; 0 without them */
	double precision_host;		/* stats_precision_host(): the host's part of the claim; 0 without passes */
	double precision_claimed;	/* stats_precision_runs(median half-width, precision_host); 0: none */
	const char *stop_reason;	/* "samples" (fixed count), "precision", "budget", "max_samples", "interrupted" */
	double cycles_per_ns;		/* calibrated core clock used for cycles (GHz) */
	/* Counters summed over the timed samples only (enabled around them). */
	size_t n_counters;
	struct counter_info *counter_info;	/* copies (owned) */
	struct counter_reading *counters;	/* owned */
	/* The prefault pass (first touch of every base page), counted with the same set. */
	struct counter_reading *prefault_counters;	/* owned; NULL when no counters */
	uint64_t prefault_pages;	/* base pages touched */
	double prefault_ns;		/* wall time of the pass */
	uint64_t rusage_minflt;		/* getrusage minor faults over the timed samples */
	uint64_t rusage_majflt;
	uint64_t steal_ticks;		/* /proc/stat steal over the phase (all CPUs, USER_HZ ticks) */
	double steal_ms;		/* the same in milliseconds */
	uint64_t stat_ticks;		/* all ticks of all CPUs over the phase (user .. steal); 0 when unread */
	double timed_ns;		/* wall time of the timed samples together */
	struct self_check self_checks[PHASE_MAX_SELF_CHECKS];
	size_t n_self_checks;
	struct fault_sample *fault_samples;	/* pagefault: one per timed touch (owned) */
	size_t n_fault_samples;
	unsigned processes_run;		/* pagefault: processes that contributed samples */
	double skipped_resident;	/* pagefault: resident fraction that made a sample unmeasurable */
	struct target_phase *target;	/* tlbprof run phases (owned), NULL otherwise */
};

/* Accesses timed in total: iterations * repeat, or what a run phase's occurrences declared together. */
static inline uint64_t phase_timed_accesses(const struct phase_spec *s)
{
	return s->accesses_total ? s->accesses_total : s->iterations * s->repeat;
}
