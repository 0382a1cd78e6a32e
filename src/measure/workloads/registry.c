/* SPDX-License-Identifier: MIT */
/* The one list of workloads: adding a workload is one file and one line here. */
#include <string.h>

#include "measure/workload.h"

extern const struct workload_ops workload_chase;
extern const struct workload_ops workload_stride;
extern const struct workload_ops workload_tlbsize;
extern const struct workload_ops workload_pagefault;

const struct workload_ops *const workload_registry[] = {
	&workload_chase,
	&workload_stride,
	&workload_tlbsize,
	&workload_pagefault,
	NULL,
};

const struct workload_ops *workload_find(const char *name)
{
	for (size_t i = 0; workload_registry[i]; i++)
		if (strcmp(workload_registry[i]->name, name) == 0)
			return workload_registry[i];
	return NULL;
}
