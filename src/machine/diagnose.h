/* SPDX-License-Identifier: MIT */
/* Pure: what a machine can measure, and each problem with the command that fixes it (tlbprof env). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/counters.h"
#include "machine/environment.h"

/* The facts tlbprof env collected; all borrowed. */
struct diagnose_input {
	const struct environment *env;
	const char *pmu_name;			/* libpfm4's core PMU, "none" */
	const struct counter_info *counters;	/* after one open attempt; NULL when none resolved */
	size_t n_counters;
	const char *counters_error;		/* why no counter set could be made, or NULL */
	const struct env_steal *steal;		/* NULL when not sampled */
	uint64_t working_set_bytes;		/* sizes the hugetlb pools to reserve (the default --size) */
};

enum diagnose_severity {
	DIAGNOSE_INFO,	/* matters only for an optional measurement (hugetlb pools, 1 GiB pages) */
	DIAGNOSE_WARN,	/* the default measurement loses a metric or gets noisier */
};

/* "info", "warn". */
const char *diagnose_severity_name(enum diagnose_severity s);

struct diagnose_problem {
	const char *id;			/* stable key: "pmu_hidden", "hugetlb_pool_2m", ... */
	enum diagnose_severity severity;
	char message[384];		/* what is wrong and what it costs the measurement */
	char command[256];		/* the shell command that fixes it on this machine; "" when none can */
	char advice[256];		/* what to do elsewhere (the host, the kernel command line); "" when none */
};

/* One page size and whether a phase on it can run here. */
struct diagnose_page {
	const char *label;		/* --pages spelling: "4k", "2m", "2m:hugetlb", "1g" */
	bool available;
	char reason[128];		/* why not, or how ("THP madvise", "pool: 3 free") */
};

#define DIAGNOSE_MAX_PROBLEMS 24
#define DIAGNOSE_PAGES 4

struct diagnosis {
	struct diagnose_page pages[DIAGNOSE_PAGES];
	bool tlb_misses;		/* dtlb_load_misses opens */
	bool walk_cycles;		/* walk_active opens */
	bool hardware_cycles;		/* cycles opens (else: the calibrated clock) */
	bool page_faults;		/* page_faults opens */
	const char *attribution;	/* "counters" or "differential" (with packed controls) */
	struct diagnose_problem problems[DIAGNOSE_MAX_PROBLEMS];
	size_t n_problems;
};

/*
 * Turn the facts into what can be measured and the problems, each with the
 * exact command that fixes it ("sudo " prefixed unless env->euid is 0).
 * Pure: no I/O; out is fully overwritten. Problems come in a fixed order:
 * counters, privileges, THP, hugetlb pools, virtualisation, frequency.
 */
void diagnose_environment(const struct diagnose_input *in, struct diagnosis *out);

/* The problem with this id, or NULL. */
const struct diagnose_problem *diagnosis_find(const struct diagnosis *d, const char *id);
