/* SPDX-License-Identifier: MIT */
/* Expand a config into the ordered list of phases to run (pure). */
#pragma once

#include <stddef.h>

#include "config.h"
#include "phase.h"

struct plan {
	struct phase_spec *phases;	/* owned; plan_free() */
	size_t n;
};

/*
 * One phase per working-set size x page size, sizes in the order given and
 * page sizes in the order given inside each size (so the phases compared
 * with each other run next to each other in time). Returns 0 or -ENOMEM.
 */
int plan_build(const struct tlbprof_config *cfg, struct plan *out);
void plan_free(struct plan *p);
