/* SPDX-License-Identifier: MIT */
/* The phases of tlbprof run: what someone else's benchmark marked, and its whole command. target/ measures them. */
#include "measure/workload.h"

const struct workload_ops workload_marked = {
	.name = "run",
	.description = "a phase of someone else's benchmark, marked by it (tlbprof run)",
	.sweep = WORKLOAD_SWEEP_MARKED,
	.latency = true,
	.foreign = true,
};

const struct workload_ops workload_command = {
	.name = "command",
	.description = "someone else's whole benchmark, unmarked (tlbprof run)",
	.sweep = WORKLOAD_SWEEP_COMMAND,
	.faults_expected = true,	/* a whole program maps and touches its memory: faults are part of it */
	.foreign = true,
};
