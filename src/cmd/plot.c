/* SPDX-License-Identifier: MIT */
/* tlbprof plot: draw a saved report, with its analysis recomputed, as one SVG. */
#include <errno.h>
#include <stdio.h>

#include "judge/analysis.h"
#include "cmd/commands.h"
#include "judge/plot.h"
#include "report/report.h"

int cmd_plot(const struct tlbprof_config *cfg)
{
	struct report_doc doc;
	struct analysis analysis = { 0 };
	struct plot plot = { 0 };
	char msg[640];
	int rc, status = EXIT_OK;

	if (report_read_json(cfg->input_path, &doc, msg, sizeof(msg)) != 0) {
		report_error(msg);
		return EXIT_USAGE;
	}
	/* Knees, stride steps and controls come from the analysis, recomputed as analyze does. */
	if (analysis_run(doc.results.phases, doc.results.n, &doc.env, &doc.clock, &analysis) != 0) {
		report_error("out of memory");
		status = EXIT_UNAVAILABLE;
		goto out;
	}
	struct plot_input in = {
		.phases = doc.results.phases,
		.n = doc.results.n,
		.analysis = &analysis,
		.env = &doc.env,
		.interrupted = doc.results.interrupted,
		.source = cfg->input_path,
	};
	rc = plot_build(&in, &plot);
	if (rc == -ENODATA) {
		/* An empty chart would pass for a result in a pipeline: refuse it like any unusable input. */
		snprintf(msg, sizeof(msg), "plot: '%s': no phase finished ok (%zu %s), nothing to draw; nothing written",
			 cfg->input_path, doc.results.n, doc.results.n == 1 ? "phase" : "phases");
		report_error(msg);
		status = EXIT_USAGE;
		goto out;
	}
	if (rc != 0) {
		report_error("out of memory");
		status = EXIT_UNAVAILABLE;
		goto out;
	}
	if (report_write_svg(&plot, cfg->output_path, msg, sizeof(msg)) != 0) {
		report_error(msg);
		status = EXIT_OUTPUT;
	}
out:
	plot_free(&plot);
	analysis_free(&analysis);
	report_doc_free(&doc);
	return status;
}
