/* SPDX-License-Identifier: MIT */
/* Expand a config into the ordered list of phases to run (pure). */
#pragma once

#include <stdbool.h>
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
 * with each other run next to each other in time). With with_controls, each
 * size whose stride is at least 128 B is preceded by a "packed" control: the
 * same number of slots at a 64 B stride on 4 KiB pages, i.e. the same
 * cache-line footprint on stride/64 times fewer pages, so that its latency
 * is the cache part alone. Returns 0 or -ENOMEM.
 */
int plan_build(const struct tlbprof_config *cfg, bool with_controls, struct plan *out);
void plan_free(struct plan *p);
