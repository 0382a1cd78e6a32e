/* SPDX-License-Identifier: MIT */
/* The one list of workloads: adding a workload is its file, one line here and one in meson.build. */
#include <string.h>

#include "measure/workload.h"

extern const struct workload_ops workload_chase;
extern const struct workload_ops workload_stride;
extern const struct workload_ops workload_tlbsize;
extern const struct workload_ops workload_pagefault;
extern const struct workload_ops workload_marked;
extern const struct workload_ops workload_command;

/* --workload's choices first, in --help order; then the foreign phases of tlbprof run. */
const struct workload_ops *const workload_registry[] = {
	&workload_chase,
	&workload_stride,
	&workload_tlbsize,
	&workload_pagefault,
	&workload_marked,
	&workload_command,
	NULL,
};

const struct workload_ops *workload_find(const char *name)
{
	for (size_t i = 0; workload_registry[i]; i++)
		if (strcmp(workload_registry[i]->name, name) == 0)
			return workload_registry[i];
	return NULL;
}

const struct workload_ops *workload_at(size_t i)
{
	size_t k = 0;

	for (size_t j = 0; workload_registry[j]; j++)
		if (!workload_registry[j]->foreign && k++ == i)
			return workload_registry[j];
	return NULL;
}

void workload_release(const struct workload_ops *w, void *state)
{
	if (w && w->release && state)
		w->release(state);
}
