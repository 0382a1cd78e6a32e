/* SPDX-License-Identifier: MIT */
/* Expand a config into the ordered list of phases to run (pure). */
#include "plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "parse.h"
#include "workload.h"

#define PACKED_STRIDE 64u

static void fill(struct phase_spec *ph, const struct tlbprof_config *cfg, unsigned index,
		 const struct page_request *page, uint64_t size_bytes)
{
	char size[16];

	ph->index = index;
	ph->run = 0;
	ph->workload = cfg->workload;
	ph->page = *page;
	ph->size_bytes = size_bytes;
	ph->stride_bytes = cfg->stride_bytes;
	ph->iterations = cfg->iterations;
	ph->warmup_iterations = (uint64_t)((double)cfg->iterations * cfg->warmup_frac + 0.5);
	ph->repeat = cfg->repeat;
	ph->seed = cfg->seed;
	ph->cpu = cfg->cpu;
	ph->layout = cfg->layout;
	ph->role = PHASE_ROLE_MEASURE;
	snprintf(ph->name, sizeof(ph->name), "%s/%s/%s/r%u", cfg->workload->name, page->label,
		 format_size(size_bytes, size, sizeof(size)), ph->run);
}

int plan_build(const struct tlbprof_config *cfg, bool with_controls, struct plan *out)
{
	bool controls = with_controls && cfg->stride_bytes >= 2 * PACKED_STRIDE;
	size_t n = cfg->n_sizes * (cfg->n_pages + (controls ? 1 : 0)), k = 0;
	struct page_request base;

	out->n = 0;
	out->phases = calloc(n ? n : 1, sizeof(*out->phases));
	if (!out->phases)
		return -ENOMEM;
	page_request_parse("4k", &base);
	for (size_t s = 0; s < cfg->n_sizes; s++) {
		if (controls) {
			struct phase_spec *ph = &out->phases[k];
			uint64_t slots = cfg->sizes_bytes[s] / cfg->stride_bytes;
			char size[16];

			fill(ph, cfg, (unsigned)k++, &base, slots * PACKED_STRIDE);
			ph->stride_bytes = PACKED_STRIDE;
			ph->role = PHASE_ROLE_CONTROL;
			ph->controls_size_bytes = cfg->sizes_bytes[s];
			ph->controls_stride_bytes = cfg->stride_bytes;
			snprintf(ph->name, sizeof(ph->name), "%s/4k:packed/%s/r%u", cfg->workload->name,
				 format_size(cfg->sizes_bytes[s], size, sizeof(size)), ph->run);
		}
		for (size_t p = 0; p < cfg->n_pages; p++, k++)
			fill(&out->phases[k], cfg, (unsigned)k, &cfg->pages[p], cfg->sizes_bytes[s]);
	}
	out->n = n;
	return 0;
}

void plan_free(struct plan *p)
{
	free(p->phases);
	p->phases = NULL;
	p->n = 0;
}
