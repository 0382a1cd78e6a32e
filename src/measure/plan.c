/* SPDX-License-Identifier: MIT */
/* Expand a config into the ordered list of phases to run (pure). */
#include "measure/plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "parse.h"
#include "measure/workload.h"

#define PACKED_STRIDE 64u

struct phase_spec *plan_add(struct plan *p, const struct tlbprof_config *cfg, const struct page_request *page,
			    uint64_t size_bytes)
{
	struct phase_spec *ph;
	char size[16];

	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		struct phase_spec *t = realloc(p->phases, cap * sizeof(*t));
		if (!t)
			return NULL;
		p->phases = t;
		p->cap = cap;
	}
	ph = &p->phases[p->n++];
	*ph = (struct phase_spec){
		.workload = cfg->workload,
		.page = *page,
		.size_bytes = size_bytes,
		.stride_bytes = cfg->stride_bytes,
		.iterations = cfg->iterations,
		.warmup_iterations = (uint64_t)((double)cfg->iterations * cfg->warmup_frac + 0.5),
		.repeat = cfg->repeat,
		.seed = cfg->seed,
		.cpu = cfg->cpu,
		.layout = cfg->layout,
		.role = PHASE_ROLE_MEASURE,
		.iterations_auto = cfg->iterations_auto,
		.precision = cfg->precision,
		.time_budget_s = cfg->time_budget_s,
		.allocations = cfg->allocations,
		.fault_case = FAULT_NONE,
		.processes = 1,
		.dir = cfg->dir,
		.file = cfg->child_file,
		.drop_caches = cfg->drop_caches,
	};
	snprintf(ph->name, sizeof(ph->name), "%s/%s/%s/r%u", cfg->workload->name, page->label,
		 format_size(size_bytes, size, sizeof(size)), ph->run);
	return ph;
}

int plan_grid(const struct tlbprof_config *cfg, const struct plan_context *ctx, struct plan *out)
{
	bool controls = ctx && ctx->with_controls && cfg->stride_bytes >= 2 * PACKED_STRIDE;
	struct page_request base;

	page_request_parse("4k", &base);
	for (size_t s = 0; s < cfg->n_sizes; s++) {
		if (controls) {
			uint64_t slots = cfg->sizes_bytes[s] / cfg->stride_bytes;
			struct phase_spec *ph = plan_add(out, cfg, &base, slots * PACKED_STRIDE);
			char size[16];
			if (!ph)
				return -ENOMEM;
			ph->stride_bytes = PACKED_STRIDE;
			ph->role = PHASE_ROLE_CONTROL;
			ph->controls_size_bytes = cfg->sizes_bytes[s];
			ph->controls_stride_bytes = cfg->stride_bytes;
			snprintf(ph->name, sizeof(ph->name), "%s/4k:packed/%s/r%u", cfg->workload->name,
				 format_size(cfg->sizes_bytes[s], size, sizeof(size)), ph->run);
		}
		for (size_t p = 0; p < cfg->n_pages; p++)
			if (!plan_add(out, cfg, &cfg->pages[p], cfg->sizes_bytes[s]))
				return -ENOMEM;
	}
	return 0;
}

int plan_build(const struct tlbprof_config *cfg, const struct plan_context *ctx, struct plan *out)
{
	int rc;

	*out = (struct plan){ 0 };
	rc = cfg->workload->expand ? cfg->workload->expand(cfg, ctx, out) : plan_grid(cfg, ctx, out);
	if (rc) {
		plan_free(out);
		return rc;
	}
	for (size_t i = 0; i < out->n; i++)
		out->phases[i].index = (unsigned)i;
	return 0;
}

void plan_free(struct plan *p)
{
	free(p->phases);
	*p = (struct plan){ 0 };
}
