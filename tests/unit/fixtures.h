/* SPDX-License-Identifier: MIT */
/* Phase results built from published measurements, shared by the analysis and report tests. */
#pragma once

#include <stdlib.h>
#include <string.h>

#include "phase.h"
#include "workload.h"

/* A finished chase phase with the given samples and, when misses >= 0, dTLB counts. */
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
	r->status = PHASE_OK;
	r->slots = size_bytes / 4096;
	r->samples_ns = malloc(n * sizeof(double));
	memcpy(r->samples_ns, samples, n * sizeof(double));
	r->n_samples = n;
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

	/* Counters: page faults (software, ok), dTLB loads/misses (hardware, ok or unsupported). */
	r->n_counters = 3;
	r->counter_info = calloc(3, sizeof(*r->counter_info));
	r->counters = calloc(3, sizeof(*r->counters));
	r->counter_info[0] = (struct counter_info){ .metric = METRIC_PAGE_FAULTS, .name = "page-faults",
						    .status = COUNTER_OK };
	r->counter_info[1] = (struct counter_info){ .metric = METRIC_DTLB_LOADS, .name = "dTLB-loads",
						    .hardware = true, .status = COUNTER_OK };
	r->counter_info[2] = (struct counter_info){ .metric = METRIC_DTLB_LOAD_MISSES, .name = "dTLB-load-misses",
						    .hardware = true, .status = COUNTER_OK };
	r->counters[0] = (struct counter_reading){ 0, 1000, 1000, 0.0 };
	if (misses >= 0) {
		r->counters[1] = (struct counter_reading){ (uint64_t)loads, 1000, 1000, loads };
		r->counters[2] = (struct counter_reading){ (uint64_t)misses, 1000, 1000, misses };
	} else {
		for (int i = 1; i < 3; i++) {
			r->counter_info[i].status = COUNTER_UNSUPPORTED;
			strcpy(r->counter_info[i].reason, "no hardware PMU");
		}
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
