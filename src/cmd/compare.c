/* SPDX-License-Identifier: MIT */
/* tlbprof compare: compare two saved reports phase by phase, judged from their samples. */
#include <errno.h>

#include "judge/analysis.h"
#include "cmd/commands.h"
#include "judge/compare.h"
#include "report/report.h"

/*
 * Both reports are re-analysed with this tlbprof rather than trusting the
 * analyses stored in them: the two sides are then judged by the same rules
 * (a report from an older version may have other checks or thresholds), so
 * a check that changes status changed because the measurement did. The
 * samples, which decide significance, are read as stored.
 */
int cmd_compare(const struct tlbprof_config *cfg)
{
	struct report_doc base, new;
	struct analysis ab = { 0 }, an = { 0 };
	struct compare_result cmp = { 0 };
	char msg[512];
	int status;

	if (report_read_json(cfg->input_path, &base, msg, sizeof(msg)) != 0) {
		report_error(msg);
		return EXIT_USAGE;
	}
	if (report_read_json(cfg->compare_path, &new, msg, sizeof(msg)) != 0) {
		report_error(msg);
		report_doc_free(&base);
		return EXIT_USAGE;
	}
	struct compare_side sb = { .results = &base.results, .analysis = &ab, .env = &base.env, .clock = &base.clock,
				   .pmu_name = *base.pmu_name ? base.pmu_name : "none" };
	struct compare_side sn = { .results = &new.results, .analysis = &an, .env = &new.env, .clock = &new.clock,
				   .pmu_name = *new.pmu_name ? new.pmu_name : "none" };
	if (tlbprof_analyse_doc(&base, &ab) != 0 || tlbprof_analyse_doc(&new, &an) != 0 ||
	    compare_run(&sb, &sn, cfg->threshold_pct / 100, &cmp) != 0) {
		report_error("out of memory");
		status = EXIT_UNAVAILABLE;
		goto out;
	}
	struct report_compare_input in = {
		.cmp = &cmp,
		.base_path = cfg->input_path,
		.new_path = cfg->compare_path,
		.base = &base,
		.new = &new,
		.base_analysis = &ab,
		.new_analysis = &an,
		.fail_on = cfg->fail_on,
		.fails = compare_fails(&cmp, cfg->fail_on),
		.argc = cfg->argc,
		.argv = cfg->argv,
	};
	/* Nothing judged is not "no regression": the question asked could not be answered (exit 3). */
	status = !compare_judged_any(&cmp) ? EXIT_UNAVAILABLE : in.fails ? EXIT_CHECK_FAILED : EXIT_OK;
	in.status = status;
	if (report_compare_emit(&in, cfg) != 0)
		status = EXIT_OUTPUT;
out:
	compare_free(&cmp);
	analysis_free(&ab);
	analysis_free(&an);
	report_doc_free(&base);
	report_doc_free(&new);
	return status;
}
