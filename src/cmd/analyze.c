/* SPDX-License-Identifier: MIT */
/* tlbprof analyze: re-analyse a saved report. */
#include "judge/analysis.h"
#include "cmd/commands.h"
#include "pmu/counters.h"
#include "report/report.h"

int cmd_analyze(const struct tlbprof_config *cfg)
{
	struct report_doc doc;
	struct analysis analysis;
	char msg[512];
	int status;

	if (report_read_json(cfg->input_path, &doc, msg, sizeof(msg)) != 0) {
		report_error(msg);
		return EXIT_USAGE;
	}
	if (tlbprof_analyse_doc(&doc, &analysis) != 0) {
		report_error("out of memory");
		analysis_free(&analysis);
		report_doc_free(&doc);
		return EXIT_UNAVAILABLE;
	}
	/* The outputs and the --fail-on of this command (JUnit marks warnings by it), the rest as recorded. */
	doc.cfg.json_path = cfg->json_path;
	doc.cfg.quiet = cfg->quiet;
	doc.cfg.fail_on = cfg->fail_on;
	struct report_input in = {
		.cfg = &doc.cfg,
		.env = &doc.env,
		.clock = &doc.clock,
		.results = &doc.results,
		.analysis = &analysis,
		.pmu_name = *doc.pmu_name ? doc.pmu_name : "none",
		.reanalyzed_from = cfg->input_path,
		.analyze_argc = cfg->argc,
		.analyze_argv = cfg->argv,
		.source = doc.source,
	};
	status = analysis_fails(analysis.verdict, cfg->fail_on) ? EXIT_CHECK_FAILED : EXIT_OK;
	if (report_emit(&in, cfg) != 0)
		status = EXIT_OUTPUT;
	analysis_free(&analysis);
	report_doc_free(&doc);
	return status;
}

