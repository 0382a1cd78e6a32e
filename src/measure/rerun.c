/* SPDX-License-Identifier: MIT */
/* The second, short pass of a phase after the whole run, and the precision it lets the phase claim. */
#include <stdio.h>
#include <stdlib.h>

#include "stats.h"
#include "measure/runner_internal.h"
#include "measure/workload.h"

/*
 * The claimed precision of a phase: its median's own half-width, and with a
 * second pass the term for what moved between the two (stats_precision_runs()).
 */
static void claim_precision(struct phase_result *res)
{
	double within = stats_median_halfwidth(res->samples_ns, res->sample_alloc, res->n_samples);

	res->precision_between = 0;
	if (res->n_rerun) {
		struct stats_summary a, b;
		stats_summarize(res->samples_ns, res->n_samples, &a);
		stats_summarize(res->rerun_ns, res->n_rerun, &b);
		res->precision_between = a.median > 0 ? (b.median - a.median) / a.median : 0;
	}
	res->precision_claimed = res->n_samples ? stats_precision_runs(within, res->precision_between) : 0;
}

/*
 * The second, short pass of a phase, after every phase of the run: one more
 * allocation (a fresh region and chain, the next seed) with the phase's own
 * batch, warmed up the same way, --repeat samples, no counters. In a quiet
 * hour here the allocations of one phase agreed within 1 % while whole runs
 * moved 2-10 %: allocations back to back share one run's conditions, so only
 * a pass at another time can see what moves between runs. Only --iters auto
 * phases with several allocations take one (a fixed --iters run is exactly
 * what was asked; page faults and tlbprof run phases have no allocation to
 * repeat); the others say why they have none.
 */
void runner_rerun_phase(const struct run_context *ctx, struct phase_result *res, uint64_t started_ns)
{
	const struct phase_spec *ph = &res->spec;
	struct phase_result tmp = { .spec = res->spec, .status = PHASE_OK };
	const char *why = NULL;

	if (res->status != PHASE_OK || !res->n_samples)
		why = "the phase did not finish";
	else if (!ph->iterations_auto || ph->workload->per_sample_memory || ph->workload->foreign)
		why = "only --iters auto phases on allocations take a second pass";
	else if (res->allocations_run < 2 || !ph->allocations || ph->allocations < 2)
		why = "--realloc 1: one allocation extended, no second pass";
	else if (ctx->stop && *ctx->stop)
		why = "interrupted";
	if (why) {
		snprintf(res->rerun_why, sizeof(res->rerun_why), "%s", why);
		claim_precision(res);
		return;
	}
	uint64_t t0 = timing_now_ns();
	res->rerun_after_s = (double)(t0 - started_ns) / 1e9;
	tmp.samples_ns = calloc(ph->repeat, sizeof(*tmp.samples_ns));
	tmp.sample_alloc = calloc(ph->repeat, sizeof(*tmp.sample_alloc));
	if (!tmp.samples_ns || !tmp.sample_alloc) {
		snprintf(res->rerun_why, sizeof(res->rerun_why), "out of memory for the second pass");
	} else {
		runner_allocation(ph, ctx, &tmp, NULL, res->allocations_run, false, ph->repeat, t0);
		if (tmp.status == PHASE_OK && tmp.n_samples == ph->repeat) {
			res->rerun_ns = tmp.samples_ns;
			res->n_rerun = tmp.n_samples;
			tmp.samples_ns = NULL;
		} else {
			snprintf(res->rerun_why, sizeof(res->rerun_why), "the second pass failed: %.170s",
				 *tmp.reason ? tmp.reason : "too few samples");
		}
	}
	free(tmp.samples_ns);
	free(tmp.sample_alloc);
	claim_precision(res);
}

