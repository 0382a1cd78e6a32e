/* SPDX-License-Identifier: MIT */
/* Phase results built from published measurements, shared by the analysis and report tests. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/phase.h"
#include "measure/workload.h"

static const char *const fixture_counter_names[METRIC_COUNT] = {
	[METRIC_DTLB_LOADS] = "dTLB-loads", [METRIC_DTLB_LOAD_MISSES] = "dTLB-load-misses",
	[METRIC_PAGE_FAULTS] = "page-faults", [METRIC_MINOR_FAULTS] = "minor-faults",
	[METRIC_MAJOR_FAULTS] = "major-faults", [METRIC_CYCLES] = "cycles", [METRIC_INSTRUCTIONS] = "instructions",
	[METRIC_LLC_LOAD_MISSES] = "LLC-load-misses", [METRIC_WALK_ACTIVE] = "walk-active",
	[METRIC_WALK_COMPLETED] = "walk-completed", [METRIC_STLB_HITS] = "stlb-hits", [METRIC_TASK_CLOCK] = "task-clock",
	[METRIC_CONTEXT_SWITCHES] = "context-switches", [METRIC_CPU_MIGRATIONS] = "cpu-migrations",
};

static inline bool fixture_is_software(enum metric m)
{
	return m == METRIC_PAGE_FAULTS || m == METRIC_MINOR_FAULTS || m == METRIC_MAJOR_FAULTS ||
	       m == METRIC_TASK_CLOCK || m == METRIC_CONTEXT_SWITCHES || m == METRIC_CPU_MIGRATIONS;
}

/* Give metric m a reading (status ok) in phase r. */
static inline void fixture_set_counter(struct phase_result *r, enum metric m, double value)
{
	r->counter_info[m].status = COUNTER_OK;
	r->counter_info[m].reason[0] = '\0';
	r->counters[m] = (struct counter_reading){ (uint64_t)value, 1000, 1000, value };
}

/*
 * A finished chase phase with the given samples. Software counters read 0 and
 * hardware ones are unsupported (a VM without PMU), except that misses >= 0
 * gives dTLB loads and misses (a machine with a PMU).
 */
static inline void fixture_phase(struct phase_result *r, const char *name, const char *page, uint64_t size_bytes,
				 uint64_t iterations, const double *samples, size_t n, double loads, double misses)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->spec.name, sizeof(r->spec.name), "%s", name);
	r->spec.workload = workload_find("chase");
	page_request_parse(page, &r->spec.page);
	r->spec.size_bytes = size_bytes;
	r->spec.stride_bytes = 4096;
	r->spec.iterations = iterations;
	r->spec.warmup_iterations = iterations / 10;
	r->spec.repeat = (unsigned)n;
	r->spec.seed = 1;
	r->spec.cpu = -1;
	r->spec.layout = LAYOUT_COLORED;
	r->status = PHASE_OK;
	r->slots = size_bytes / 4096;
	r->samples_ns = malloc(n * sizeof(double));
	memcpy(r->samples_ns, samples, n * sizeof(double));
	r->n_samples = n;
	r->timed_ns = 0;
	for (size_t i = 0; i < n; i++)
		r->timed_ns += samples[i] * (double)iterations;
	r->cycles_per_ns = 3.9;
	r->backing_known = true;
	r->backing.kind = r->spec.page.kind;
	r->backing.kernel_page_bytes = r->spec.page.kind == PAGE_HUGETLB ? r->spec.page.bytes : 4096;
	r->backing.rss_bytes = size_bytes;
	r->backing.anon_huge_bytes = r->spec.page.kind == PAGE_THP ? size_bytes : 0;
	r->backing.huge_fraction = r->spec.page.kind == PAGE_BASE ? 0.0 : 1.0;
	r->n_self_checks = 2;
	r->self_checks[0] = (struct self_check){ .id = "single_cycle", .status = CHECK_PASS };
	r->self_checks[1] = (struct self_check){ .id = "strides_not_constant", .status = CHECK_PASS };

	/* One entry per metric, indexed by the metric. */
	r->n_counters = METRIC_COUNT;
	r->counter_info = calloc(METRIC_COUNT, sizeof(*r->counter_info));
	r->counters = calloc(METRIC_COUNT, sizeof(*r->counters));
	for (int m = 0; m < METRIC_COUNT; m++) {
		struct counter_info *ci = &r->counter_info[m];
		ci->metric = (enum metric)m;
		snprintf(ci->name, sizeof(ci->name), "%s", fixture_counter_names[m]);
		ci->hardware = !fixture_is_software((enum metric)m);
		if (ci->hardware) {
			ci->status = COUNTER_UNSUPPORTED;
			snprintf(ci->reason, sizeof(ci->reason), "no hardware PMU visible");
		} else {
			fixture_set_counter(r, (enum metric)m, 0);
		}
	}
	if (misses >= 0) {
		fixture_set_counter(r, METRIC_DTLB_LOADS, loads);
		fixture_set_counter(r, METRIC_DTLB_LOAD_MISSES, misses);
	}
}

static inline void fixture_free(struct phase_result *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].samples_ns);
		free(r[i].counter_info);
		free(r[i].counters);
	}
}
