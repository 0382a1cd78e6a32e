/* SPDX-License-Identifier: MIT */
/* tlbprof analyze REPORT.json: read a saved report, recompute its analysis, report again. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/command.h"
#include "cmd/options.h"
#include "cmd/common.h"
#include "judge/analysis.h"
#include "report/report.h"


static const struct option_spec analyze_specs[] = {
	CLI_OPTION_JSON(struct analyze_options, out, "write the re-analysed JSON report to FILE, or stdout with -\n"),
	CLI_OPTION_FORMAT(struct analyze_options, out),
	CLI_OPTION_OUTPUT(struct analyze_options, out),
	CLI_OPTION_FAIL_ON(struct analyze_options, fail_on, CLI_FAIL_ON_HELP),
	CLI_OPTION_QUIET(struct analyze_options, out, "no table on stdout"),
	CLI_OPTION_HELP,
	{ 0 },
};

static void analyze_usage(FILE *f)
{
	fputs("Usage: tlbprof analyze [OPTIONS] REPORT.json\n"
	      "Read a saved tlbprof.report/1 file, recompute its analysis (comparisons,\n"
	      "attribution, checks) and report again; every field of the file is kept.\n"
	      "\n"
	      "Options:\n",
	      f);
	option_print_table(f, analyze_specs);
	fputs("\n"
	      "Exit status: 0 success, 1 a check failed, 2 usage error or unreadable report,\n"
	      "4 output could not be written. See tlbprof-analyze(1).\n",
	      f);
}

static enum option_result analyze_parse(int argc, char **argv, void *options, char *msg, size_t len)
{
	struct analyze_options *o = options;
	struct option_parser p = {
		.command = "analyze",
		.tables = { { analyze_specs, o } },
		.usage = analyze_usage,
		.measuring_has = command_measure_has_option,
	};
	enum option_result r = option_parse(&p, argc, argv, msg, len);

	if (r != OPTION_OK)
		return r;
	if (p.n_operands < 1)
		return option_error(msg, len, "analyze: give the report to analyse (tlbprof analyze FILE)");
	if (p.n_operands > 1)
		return option_error(msg, len, "analyze: unexpected argument '%s' (one report at a time)", p.operands[1]);
	o->input_path = p.operands[0];
	if (access(o->input_path, R_OK) != 0)
		return option_error(msg, len, "analyze: '%s': %s", o->input_path, strerror(errno));
	r = cli_check_outputs(&o->out, msg, len);
	const char *inputs[] = { o->input_path };
	/* The re-analysed report may replace its source (it holds all of it); another format may not. */
	return r == OPTION_OK ? cli_check_inputs(inputs, 1, &o->out, true, msg, len) : r;
}

static int analyze_run(const void *options, const struct command_context *ctx)
{
	const struct analyze_options *o = options;
	struct report_doc doc;
	struct analysis analysis;
	char msg[512];
	int status;

	if (report_read_json(o->input_path, &doc, msg, sizeof(msg)) != 0) {
		report_error(msg);
		return EXIT_USAGE;
	}
	if (command_analyse_doc(&doc, &analysis) != 0) {
		report_error("out of memory");
		report_doc_free(&doc);
		return EXIT_UNAVAILABLE;
	}
	/* The outputs and the --fail-on of this command (JUnit marks warnings by it), the rest as recorded. */
	struct report_input in = {
		.argc = doc.argc,
		.argv = doc.argv,
		.workload = doc.workload,
		.fail_on = (enum fail_on)o->fail_on,
		.env = &doc.env,
		.clock = &doc.clock,
		.results = &doc.results,
		.analysis = &analysis,
		.pmu_name = *doc.pmu_name ? doc.pmu_name : "none",
		.reanalyzed_from = o->input_path,
		.analyze_argc = ctx->argc,
		.analyze_argv = ctx->argv,
		.source = doc.source,
	};
	status = analysis_fails(analysis.verdict, (enum fail_on)o->fail_on) ? EXIT_CHECK_FAILED : EXIT_OK;
	int emitted = report_emit(&in, &o->out);
	if (emitted != 0)
		status = emitted == -EINTR ? EXIT_INTERRUPTED : EXIT_OUTPUT;
	analysis_free(&analysis);
	report_doc_free(&doc);
	return status;
}

const struct command command_analyze = {
	.name = "analyze",
	.summary = "recompute the analysis of a saved report",
	.specs = analyze_specs,
	.options_size = sizeof(struct analyze_options),
	.usage = analyze_usage,
	.parse = analyze_parse,
	.run = analyze_run,
};
