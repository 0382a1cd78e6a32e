/* SPDX-License-Identifier: MIT */
/* The second passes of the phases after the whole run, and the precision they let each phase claim. */
#include <stdio.h>
#include <stdlib.h>

#include "stats.h"
#include "measure/runner_internal.h"
#include "measure/workload.h"

#define REALLOC_1 "--realloc 1: one allocation extended, no second pass"

/*
 * A pass on a kept allocation warms up until steady with its fastest pass
 * within this factor of the phase's median, the level the same allocation
 * was measured at (measure/warmup.c): past it, a plateau (caches refilling
 * after the other phases) is not taken for steady. Twice: the refill here
 * read 1.2x on the 4 KiB chase's first pass again and 8x on the packed
 * control's, and the host's own moves take the warm-up to its cap, no
 * further.
 */
static const double KEPT_SETTLE = 2.0;

/*
 * The claimed precision of a phase: its median's own half-width, and with
 * second passes the host's part, from how far their medians spread about
 * the phase's (stats_precision_host()).
 */
static void claim_precision(struct phase_result *res)
{
	struct stats_claim c;

	stats_claim(res->samples_ns, res->sample_alloc, res->n_samples, res->rerun_ns, res->rerun_pass, res->n_rerun,
		    &c);
	res->precision_between = c.between;
	res->precision_host = c.host;
	res->precision_claimed = res->n_samples ? c.claimed : 0;
}

const char *runner_spec_no_pass_why(const struct phase_spec *ph)
{
	if (!ph->iterations_auto || ph->workload->per_sample_memory || ph->workload->foreign)
		return "only --iters auto phases on allocations take a second pass";
	if (ph->allocations < 2)
		return REALLOC_1;
	return NULL;
}

const char *runner_no_pass_why(const struct run_context *ctx, const struct phase_result *res)
{
	const char *why;

	if (res->status != PHASE_OK || !res->n_samples)
		return "the phase did not finish";
	if ((why = runner_spec_no_pass_why(&res->spec)))
		return why;
	if (res->allocations_run < 2)
		return REALLOC_1;
	if (ctx->stop && *ctx->stop)
		return "interrupted";
	return NULL;
}

/*
 * Pass p (1-based) of phase res: --repeat samples on its kept allocation,
 * or on a fresh one (the next seed) where none is kept, appended to
 * rerun_ns. Returns false with rerun_why set when the pass failed.
 */
static bool second_pass(const struct run_context *ctx, struct phase_result *res, struct runner_kept *k, unsigned p,
			uint64_t started_ns)
{
	const struct phase_spec *ph = &res->spec;
	struct phase_result tmp = { .spec = res->spec, .status = PHASE_OK };
	bool ok, steady = true;
	uint64_t t0 = timing_now_ns();

	res->pass_after_s[p - 1] = (double)(t0 - started_ns) / 1e9;
	tmp.samples_ns = calloc(ph->repeat, sizeof(*tmp.samples_ns));
	tmp.sample_alloc = calloc(ph->repeat, sizeof(*tmp.sample_alloc));
	if (!tmp.samples_ns || !tmp.sample_alloc) {
		snprintf(res->rerun_why, sizeof(res->rerun_why), "out of memory for the second pass");
		ok = false;
	} else {
		if (k->held)
			runner_pass_kept(ph, ctx, &tmp, k, KEPT_SETTLE * stats_median(res->samples_ns, res->n_samples),
					 &steady);
		else
			runner_allocation(ph, ctx, &tmp, NULL, res->allocations_run + p - 1, false, ph->repeat,
					  timing_now_ns(), NULL);
		res->first_access_pages += tmp.first_access_pages;	/* a fresh allocation's, where none was kept */
		res->first_access_ns += tmp.first_access_ns;
		ok = tmp.status == PHASE_OK && tmp.n_samples == ph->repeat;
		if (ok) {
			for (size_t i = 0; i < tmp.n_samples; i++) {
				res->rerun_ns[res->n_rerun] = tmp.samples_ns[i];
				res->rerun_pass[res->n_rerun++] = p;
			}
			res->pass_warmup_passes[p - 1] = tmp.warmup_passes;
			res->pass_unsettled += !steady;
			res->pass_warmup_known = true;
			res->n_passes = p;
		} else if (runner_stop_requested(ctx)) {
			snprintf(res->rerun_why, sizeof(res->rerun_why), "interrupted in second pass %u", p);
		} else {
			snprintf(res->rerun_why, sizeof(res->rerun_why), "second pass %u failed: %.170s", p,
				 *tmp.reason ? tmp.reason : "too few samples");
		}
	}
	free(tmp.samples_ns);
	free(tmp.sample_alloc);
	res->pass_ms += (double)(timing_now_ns() - t0) / 1e6;
	return ok;
}

/*
 * The second passes, in rounds: every phase's first, then every phase's
 * second, and so on, in plan order, so each phase's passes are spread over
 * the time the others take. In a quiet hour here the allocations of one
 * phase agreed within 1 % while whole runs moved 2-10 %: allocations back
 * to back share one run's conditions, so only passes at other times can
 * see what moves between runs, and with one pass its spread is a guess
 * from two draws (stats_precision_host()). A pass on the kept allocation
 * costs a warm-up and --repeat samples, without the populate and chain
 * build of a fresh one. Only --iters auto phases with several allocations
 * take them (a fixed --iters run is exactly what was asked; page faults
 * and tlbprof run phases have no allocation to repeat); the others say
 * why they have none.
 */
void runner_second_passes(const struct run_context *ctx, struct phase_result *phases, size_t n,
			  const uint64_t *started, struct runner_kept *kept)
{
	bool *on = calloc(n ? n : 1, sizeof(*on));

	for (size_t i = 0; i < n; i++) {
		struct phase_result *res = &phases[i];
		const char *why = runner_no_pass_why(ctx, res);
		size_t cap = (size_t)PHASE_SECOND_PASSES * res->spec.repeat;
		if (!why && (!on || !(res->rerun_ns = calloc(cap, sizeof(*res->rerun_ns))) ||
			     !(res->rerun_pass = calloc(cap, sizeof(*res->rerun_pass)))))
			why = "out of memory for the second pass";
		if (why)
			snprintf(res->rerun_why, sizeof(res->rerun_why), "%s", why);
		else
			on[i] = true;
		res->rerun_kept = !why && kept[i].held;
	}
	for (unsigned p = 1; on && p <= PHASE_SECOND_PASSES; p++) {
		for (size_t i = 0; i < n; i++) {
			if (on[i] && (runner_no_pass_why(ctx, &phases[i]) ||
				      !second_pass(ctx, &phases[i], &kept[i], p, started[i]))) {
				on[i] = false;
				if (!*phases[i].rerun_why)
					snprintf(phases[i].rerun_why, sizeof(phases[i].rerun_why), "interrupted");
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		runner_kept_release(&phases[i].spec, &kept[i]);
		claim_precision(&phases[i]);
	}
	free(on);
}
