/* SPDX-License-Identifier: MIT */
/* Checks that the phases ran and their access patterns are what they claim. */
#include "judge/analysis_internal.h"

void checks_phases_completed(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct phase_result *res = in->results;
	size_t n = in->n;
	size_t failed = 0, unavailable = 0;

	for (size_t i = 0; i < n; i++) {
		failed += res[i].status == PHASE_FAILED;
		unavailable += res[i].status == PHASE_FAILED && res[i].unavailable;
	}
	struct analysis_check *c;
	if (!n)
		/* Every run plans a phase: none means none began (a run stopped that early), not that all completed. */
		c = checks_add(a, def, CHECK_FAIL, "no phase ran: nothing was measured (a run interrupted before its "
			       "first phase began)");
	else if (failed)
		c = checks_add(a, def, CHECK_FAIL, "%zu of %zu %s failed (see %s)", failed, n,
			       checks_phases_word(n), failed == 1 ? "its reason" : "their reasons");
	else if (n == 1)
		c = checks_add(a, def, CHECK_PASS, "the 1 phase completed");
	else
		c = checks_add(a, def, CHECK_PASS, "all %zu phases completed", n);
	checks_evidence(c, "phases", (double)n);
	checks_evidence(c, "failed", (double)failed);
	checks_evidence(c, "unavailable", (double)unavailable);
}

void checks_workload_self_checks(const struct analysis_check_def *def, const struct analysis_input *in,
				 struct analysis *a)
{
	const struct phase_result *res = in->results;
	size_t n = in->n;
	size_t pass = 0, fail = 0, total = 0;
	const char *first = NULL, *where = NULL;

	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < res[i].n_self_checks; j++) {
			total++;
			pass += res[i].self_checks[j].status == CHECK_PASS;
			if (res[i].self_checks[j].status == CHECK_FAIL) {
				fail++;
				if (!first) {
					first = res[i].self_checks[j].id;
					where = res[i].spec.name;
				}
			}
		}
	}
	struct analysis_check *c;
	if (!total)
		c = checks_add(a, def, CHECK_SKIP, "no phase ran a self-check");
	else if (fail)
		c = checks_add(a, def, CHECK_FAIL,
			       "%zu of %zu self-checks failed (first: %s in %s): the access pattern is not what it "
			       "claims to be, so its latency means nothing", fail, total, first, where);
	else
		c = checks_add(a, def, CHECK_PASS,
			       "%zu self-checks passed (every chain is one random cycle with non-constant strides)", pass);
	checks_evidence(c, "total", (double)total);
	checks_evidence(c, "failed", (double)fail);
}
