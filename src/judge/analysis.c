/* SPDX-License-Identifier: MIT */
/* Pure analysis: analysis_run() and its steps in order, and the checks tlbprof run adds to a finished analysis. */
#include "judge/analysis.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "judge/analysis_internal.h"

int analysis_run(const struct phase_result *results, size_t n, const struct environment *env,
		 const struct timing_calibration *clock, struct analysis *out)
{
	const struct analysis_input in = { .results = results, .n = n, .env = env, .clock = clock };

	memset(out, 0, sizeof(*out));
	out->checks = calloc(MAX_CHECKS, sizeof(*out->checks));
	out->findings = calloc(MAX_FINDINGS, sizeof(*out->findings));
	out->phases = calloc(n ? n : 1, sizeof(*out->phases));
	if (!out->checks || !out->findings || !out->phases)
		goto oom;
	out->n_phases = n;
	analysis_phase_metrics(results, n, out);
	if (analysis_build_comparisons(results, n, env, clock, out) != 0 ||
	    analysis_build_stride_steps(results, n, clock, out) != 0 || analysis_build_knees(results, n, env, out) != 0)
		goto oom;
	checks_run(&in, ANALYSIS_CHECK_BY_RUN, out);
	analysis_find_shrinking_speedup(results, out);
	analysis_find_nested_paging(results, n, env, out);
	analysis_find_layout_effect(results, n, out);
	analysis_find_shadow_paging(results, n, env, out);
	analysis_finish(results, out);
	return 0;
oom:
	analysis_free(out);
	return -ENOMEM;
}

/* Run the checks that input adds to a (tlbprof run's), then derive the verdict and the summary again. */
static int add_checks(struct analysis *a, const struct analysis_input *in, enum analysis_check_by by)
{
	if (!a->checks || a->n_checks >= MAX_CHECKS)
		return -ENOMEM;
	checks_run(in, by, a);
	analysis_finish(in->results, a);
	return 0;
}

int analysis_check_build(struct analysis *a, const struct phase_result *results, size_t n,
			 const struct analysis_build *build)
{
	const struct analysis_input in = { .results = results, .n = n, .build = build };

	return add_checks(a, &in, ANALYSIS_CHECK_BY_BUILD);
}

int analysis_check_markers(struct analysis *a, const struct phase_result *results, size_t n, unsigned messages,
			   unsigned refused, const char *first, const struct analysis_command_end *end)
{
	const struct analysis_markers markers = { .messages = messages, .refused = refused, .first = first,
						  .end = end };
	const struct analysis_input in = { .results = results, .n = n, .markers = &markers };

	return add_checks(a, &in, ANALYSIS_CHECK_BY_MARKERS);
}

void analysis_free(struct analysis *a)
{
	free(a->phases);
	free(a->comparisons);
	free(a->stride_steps);
	free(a->knees);
	free(a->checks);
	free(a->findings);
	memset(a, 0, sizeof(*a));
}
