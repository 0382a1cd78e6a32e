/* SPDX-License-Identifier: MIT */
/* tlbprof plot REPORT.json -o FILE.svg: draw a saved report, with its analysis recomputed, as one SVG. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/command.h"
#include "cmd/options.h"
#include "judge/analysis.h"
#include "judge/plot.h"
#include "report/report.h"


static enum option_result set_svg(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	(void)o;
	if (!*arg)
		return option_error(msg, len, "-o '': give a file name or - for stdout");
	((struct plot_options *)opts)->output_path = arg;
	return OPTION_OK;
}

static const struct option_spec plot_specs[] = {
	{ .name = "output", .short_name = 'o', .value = "FILE|-", .help = "the SVG to write (required), or stdout with -",
	  .set = set_svg, .complete = OPTION_COMPLETE_FILE },
	CLI_OPTION_HELP,
	{ 0 },
};

static void plot_usage(FILE *f)
{
	fputs("Usage: tlbprof plot REPORT.json -o FILE.svg\n"
	      "Draw a saved tlbprof.report/1 file as one standalone SVG: ns per access against\n"
	      "the working set per page size (a size sweep; one working set: a bar per page\n"
	      "size), the tlbsize curve with its knees and the TLB capacities CPUID reports,\n"
	      "ns per access against the stride with the step labels, ns per page per\n"
	      "page-fault case. The analysis is recomputed from the phases, as analyze does.\n"
	      "\n"
	      "Options:\n",
	      f);
	option_print_table(f, plot_specs);
	fputs("\n"
	      "Exit status: 0 success, 2 usage error, an unreadable report or one with no\n"
	      "phase that finished ok, 4 output could not be written. See tlbprof-plot(1).\n",
	      f);
}

static enum option_result plot_parse(int argc, char **argv, void *options, char *msg, size_t len)
{
	struct plot_options *o = options;
	struct option_parser p = {
		.command = "plot",
		.tables = { { plot_specs, o } },
		.usage = plot_usage,
		.measuring_has = command_measure_has_option,
	};
	struct stat in_st, out_st;
	enum option_result r = option_parse(&p, argc, argv, msg, len);

	if (r != OPTION_OK)
		return r;
	if (p.n_operands < 1)
		return option_error(msg, len, "plot: give the report to draw (tlbprof plot REPORT.json -o FILE.svg)");
	if (p.n_operands > 1)
		return option_error(msg, len, "plot: unexpected argument '%s' (one report at a time)", p.operands[1]);
	o->input_path = p.operands[0];
	if (!o->output_path)
		return option_error(msg, len, "plot: -o FILE is required (the SVG to write, or - for stdout)");
	if (access(o->input_path, R_OK) != 0)
		return option_error(msg, len, "plot: '%s': %s", o->input_path, strerror(errno));
	/* Writing the SVG over the report it is drawn from would lose the measurement. */
	if (strcmp(o->output_path, "-") != 0 && stat(o->input_path, &in_st) == 0 && stat(o->output_path, &out_st) == 0 &&
	    in_st.st_dev == out_st.st_dev && in_st.st_ino == out_st.st_ino)
		return option_error(msg, len, "-o '%s': that is the report being drawn; write the SVG elsewhere",
				    o->output_path);
	return cli_check_output_target("-o", o->output_path, msg, len);
}

static int plot_run(const void *options, const struct command_context *ctx)
{
	const struct plot_options *o = options;
	struct report_doc doc;
	struct analysis analysis = { 0 };
	struct plot plot = { 0 };
	char msg[640];
	int rc, status = EXIT_OK;

	(void)ctx;
	if (report_read_json(o->input_path, &doc, msg, sizeof(msg)) != 0) {
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
		.source = o->input_path,
	};
	rc = plot_build(&in, &plot);
	if (rc == -ENODATA) {
		/* An empty chart would pass for a result in a pipeline: refuse it like any unusable input. */
		snprintf(msg, sizeof(msg), "plot: '%s': no phase finished ok (%zu %s), nothing to draw; nothing written",
			 o->input_path, doc.results.n, doc.results.n == 1 ? "phase" : "phases");
		report_error(msg);
		status = EXIT_USAGE;
		goto out;
	}
	if (rc != 0) {
		report_error("out of memory");
		status = EXIT_UNAVAILABLE;
		goto out;
	}
	if (report_write_svg(&plot, o->output_path, msg, sizeof(msg)) != 0) {
		report_error(msg);
		status = EXIT_OUTPUT;
	}
out:
	plot_free(&plot);
	analysis_free(&analysis);
	report_doc_free(&doc);
	return status;
}

const struct command command_plot = {
	.name = "plot",
	.summary = "draw a saved report as an SVG chart",
	.specs = plot_specs,
	.options_size = sizeof(struct plot_options),
	.usage = plot_usage,
	.parse = plot_parse,
	.run = plot_run,
};
