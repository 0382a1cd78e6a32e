/* SPDX-License-Identifier: MIT */
/* Expand a plan request into the ordered list of phases to run (pure). */
#include "measure/plan.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/runner.h"
#include "measure/workload.h"
#include "parse.h"

/* A packed control's slots: one line of every 128 B pair, as the phase's lone lines are to the pair prefetcher. */
#define PACKED_STRIDE 128u
/* The repetition part of every phase name (plan.h says why it is always 0). */
#define PHASE_REPETITION "r0"

void plan_name(struct phase_spec *ph, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(ph->name, sizeof(ph->name), fmt, ap);
	va_end(ap);
	if (len >= 0 && (size_t)len < sizeof(ph->name))
		snprintf(ph->name + len, sizeof(ph->name) - (size_t)len, "/%s", PHASE_REPETITION);
}

struct phase_spec *plan_add(struct plan *p, const struct plan_request *req, const struct page_request *page,
			    uint64_t size_bytes)
{
	struct phase_spec *ph;
	char size[SIZE_TEXT];

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
		.workload = req->workload,
		.page = *page,
		.size_bytes = size_bytes,
		.stride_bytes = req->stride_bytes,
		.iterations = req->iterations,
		.warmup_iterations = (uint64_t)((double)req->iterations * req->warmup_frac + 0.5),
		.repeat = req->repeat,
		.seed = req->seed,
		.cpu = req->cpu,
		.layout = req->layout,
		.role = PHASE_ROLE_MEASURE,
		.iterations_auto = req->iterations_auto,
		.precision = req->precision,
		.time_budget_s = req->time_budget_s,
		.allocations = req->allocations,
		.fault_case = FAULT_NONE,
		.processes = 1,
		.dir = req->dir,
		.file = req->child ? req->child->file : NULL,
		.drop_caches = req->drop_caches,
	};
	plan_name(ph, "%s/%s/%s", req->workload->name, page->label, format_size(size_bytes, size, sizeof(size)));
	return ph;
}

int plan_grid(const struct plan_request *req, const struct plan_context *ctx, struct plan *out)
{
	bool controls = ctx && ctx->with_controls && req->stride_bytes >= 2 * PACKED_STRIDE;
	struct page_request base;

	page_request_parse("4k", &base);
	for (size_t s = 0; s < req->n_sizes; s++) {
		if (controls) {
			uint64_t slots = req->sizes_bytes[s] / req->stride_bytes;
			struct phase_spec *ph = plan_add(out, req, &base, slots * PACKED_STRIDE);
			char size[SIZE_TEXT];
			if (!ph)
				return -ENOMEM;
			ph->stride_bytes = PACKED_STRIDE;
			ph->role = PHASE_ROLE_CONTROL;
			ph->controls_size_bytes = req->sizes_bytes[s];
			ph->controls_stride_bytes = req->stride_bytes;
			plan_name(ph, "%s/4k:packed/%s", req->workload->name, format_size(req->sizes_bytes[s], size, sizeof(size)));
		}
		for (size_t l = 0; l < (req->n_layouts ? req->n_layouts : 1); l++)
			for (size_t p = 0; p < req->n_pages; p++) {
				struct phase_spec *ph = plan_add(out, req, &req->pages[p], req->sizes_bytes[s]);
				char size[SIZE_TEXT];
				if (!ph)
					return -ENOMEM;
				if (!l)
					continue;
				/* The second layout, next to the first: its name says which it is. */
				ph->layout = req->layouts[l];
				plan_name(ph, "%s/%s:%s/%s", req->workload->name, req->pages[p].label, layout_name(ph->layout),
					  format_size(req->sizes_bytes[s], size, sizeof(size)));
			}
	}
	return 0;
}

int plan_build(const struct plan_request *req, const struct plan_context *ctx, struct plan *out)
{
	int rc;

	*out = (struct plan){ 0 };
	rc = req->workload->expand ? req->workload->expand(req, ctx, out) : plan_grid(req, ctx, out);
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
