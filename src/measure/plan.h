/* SPDX-License-Identifier: MIT */
/* Expand a config into the ordered list of phases to run (pure). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "machine/environment.h"
#include "measure/phase.h"

struct plan {
	struct phase_spec *phases;	/* owned; plan_free() */
	size_t n, cap;
};

/* What the plan may depend on besides the config: facts, passed in so planning stays pure. */
struct plan_context {
	bool with_controls;		/* add packed control phases (chase) */
	int current_cpu;		/* the CPU main runs on, for workloads that pin by default; -1 unknown */
	const struct env_tlb *tlb;	/* CPUID TLB geometry (may be NULL): where to plan dense points */
};

/*
 * Build the plan: each workload expands the config into its phases through
 * its expand hook; without one, one phase per working-set size x page size,
 * sizes in the order given and page sizes in the order given inside each
 * size (so the phases compared with each other run next to each other in
 * time). With ctx->with_controls, the chase adds before each size whose
 * stride is at least 128 B a "packed" control: the same number of slots at a
 * 64 B stride on 4 KiB pages, i.e. the same cache-line footprint on
 * stride/64 times fewer pages, so that its latency is the cache part alone.
 * Phase indices are set in run order. Returns 0 or -ENOMEM.
 */
int plan_build(const struct tlbprof_config *cfg, const struct plan_context *ctx, struct plan *out);
void plan_free(struct plan *p);

/* For expand hooks: append a phase filled from cfg for page and size (name set); NULL on -ENOMEM. */
struct phase_spec *plan_add(struct plan *p, const struct tlbprof_config *cfg, const struct page_request *page,
			    uint64_t size_bytes);
/* The default expansion: sizes x page sizes, with the packed controls described above. */
int plan_grid(const struct tlbprof_config *cfg, const struct plan_context *ctx, struct plan *out);
