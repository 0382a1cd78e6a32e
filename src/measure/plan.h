/* SPDX-License-Identifier: MIT */
/* Expand a plan request into the ordered list of phases to run (pure). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "machine/environment.h"
#include "measure/phase.h"
#include "types.h"

#define PLAN_MAX_PAGES 8
#define PLAN_MAX_SIZES 32
#define PLAN_MAX_STRIDES 32

struct workload_ops;
struct runner_child;

/*
 * What to measure: the workload and every value of the measuring options
 * and the workloads' parameters (measure/params.c and each workload's own
 * table fill it). Plain data; the measure command owns it.
 */
struct plan_request {
	const struct workload_ops *workload;
	struct page_request pages[PLAN_MAX_PAGES];
	size_t n_pages;
	uint64_t sizes_bytes[PLAN_MAX_SIZES];
	size_t n_sizes;
	uint64_t stride_bytes;			/* chase: --stride */
	uint64_t strides_bytes[PLAN_MAX_STRIDES];	/* stride: --strides */
	size_t n_strides;
	unsigned max_pages;			/* tlbsize: largest page count, 0 = from CPUID */
	int cases[FAULT_CASES];			/* pagefault: --cases (enum fault_case), in order */
	size_t n_cases;
	unsigned processes;			/* pagefault: separate processes per case */
	const char *dir;			/* pagefault: where the data file lives */
	bool drop_caches;			/* pagefault: also drop the global page cache for file_cold (root) */
	uint64_t iterations;			/* timed accesses per sample (fixed mode) */
	bool iterations_auto;			/* --iters auto */
	double precision;			/* --precision */
	double time_budget_s;			/* --time-budget, per phase */
	unsigned allocations;			/* --realloc */
	double warmup_frac;			/* warm-up accesses = warmup_frac * iterations */
	unsigned repeat;			/* timed samples per allocation */
	uint64_t seed;
	int cpu;				/* CPU to pin to, -1 = not pinned */
	enum chase_layout layout;		/* the first of layouts: what workloads with an expand hook use */
	enum chase_layout layouts[2];		/* --layout colored,aligned: the grid runs each, side by side */
	size_t n_layouts;			/* 1, or 2 (the chase only); 0 counts as 1 (layout) */
	/* This process is a child running one phase for its parent (--internal-child), else NULL. */
	const struct runner_child *child;
};

struct plan {
	struct phase_spec *phases;	/* owned; plan_free() */
	size_t n, cap;
};

/* What the plan may depend on besides the request: facts, passed in so planning stays pure. */
struct plan_context {
	bool with_controls;		/* add packed control phases (chase) */
	int current_cpu;		/* the CPU main runs on, for workloads that pin by default; -1 unknown */
	const struct env_tlb *tlb;	/* CPUID TLB geometry (may be NULL): where to plan dense points */
};

/*
 * Build the plan: the workload expands the request into its phases through
 * its expand hook; without one, one phase per working-set size x page size,
 * sizes in the order given and page sizes in the order given inside each
 * size (so the phases compared with each other run next to each other in
 * time). With ctx->with_controls, the chase adds before each size whose
 * stride is at least 256 B a "packed" control: the same number of slots at a
 * 128 B stride on 4 KiB pages, i.e. as many lines, one of every 128 B pair
 * (the adjacent-line prefetcher fetches the other half of a pair, as it does
 * for the phase's lone lines), on stride/128 times fewer pages. Its latency
 * approximates the cache part; the judge proves it or gives a range
 * (ARCHITECTURE.md, "Translation share"). Phase indices are set in run
 * order. Returns 0 or -ENOMEM.
 */
int plan_build(const struct plan_request *req, const struct plan_context *ctx, struct plan *out);
void plan_free(struct plan *p);

/*
 * For expand hooks: append a phase filled from req for page and size, named
 * plan_name() of its workload, page label and size; NULL on -ENOMEM.
 */
struct phase_spec *plan_add(struct plan *p, const struct plan_request *req, const struct page_request *page,
			    uint64_t size_bytes);
/* The default expansion: sizes x page sizes, with the packed controls described above. */
int plan_grid(const struct plan_request *req, const struct plan_context *ctx, struct plan *out);

/*
 * Name phase ph from the printf format and "/r0": "chase/4k/256M/r0". The
 * last part is the repetition of the phase in its run: the v1 report
 * contract names phases so, and every plan measures each phase once (its
 * allocations are told apart by the samples' allocation, not by name).
 */
__attribute__((format(printf, 2, 3))) void plan_name(struct phase_spec *ph, const char *fmt, ...);
