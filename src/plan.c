/* SPDX-License-Identifier: MIT */
/* Expand a config into the ordered list of phases to run (pure). */
#include "plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "parse.h"
#include "workload.h"

int plan_build(const struct tlbprof_config *cfg, struct plan *out)
{
	size_t n = cfg->n_sizes * cfg->n_pages, k = 0;

	out->n = 0;
	out->phases = calloc(n ? n : 1, sizeof(*out->phases));
	if (!out->phases)
		return -ENOMEM;
	for (size_t s = 0; s < cfg->n_sizes; s++) {
		for (size_t p = 0; p < cfg->n_pages; p++, k++) {
			struct phase_spec *ph = &out->phases[k];
			char size[16];

			ph->index = (unsigned)k;
			ph->run = 0;
			ph->workload = cfg->workload;
			ph->page = cfg->pages[p];
			ph->size_bytes = cfg->sizes_bytes[s];
			ph->stride_bytes = cfg->stride_bytes;
			ph->iterations = cfg->iterations;
			ph->warmup_iterations = (uint64_t)((double)cfg->iterations * cfg->warmup_frac + 0.5);
			ph->repeat = cfg->repeat;
			ph->seed = cfg->seed;
			ph->cpu = cfg->cpu;
			ph->layout = cfg->layout;
			snprintf(ph->name, sizeof(ph->name), "%s/%s/%s/r%u", cfg->workload->name, ph->page.label,
				 format_size(ph->size_bytes, size, sizeof(size)), ph->run);
		}
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
