/* SPDX-License-Identifier: MIT */
/* tlbprof plot REPORT.json -o FILE.svg|FILE.png: draw a saved report, with its analysis recomputed, as one picture. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
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
	{ .name = "output", .short_name = 'o', .value = "FILE|-",
	  .help = "the picture to write (required): an SVG, or stdout\nwith -; a name ending in .png gets a PNG",
	  .set = set_svg, .complete = OPTION_COMPLETE_FILE },
	{ .name = "width", .value = "PX", .help = "the picture's width in px (the height follows)", .def = "960",
	  .set = option_set_count, .offset = offsetof(struct plot_options, width_px), .min = 160, .max = 8192 },
	CLI_OPTION_HELP,
	{ 0 },
};

static void plot_usage(FILE *f)
{
	fputs("Usage: tlbprof plot REPORT.json -o FILE.svg|FILE.png [--width PX]\n"
	      "Draw a saved tlbprof.report/1 file as one standalone SVG (or PNG): ns per access\n"
	      "against the working set per page size (a size sweep; one working set: a bar per\n"
	      "page size), the tlbsize curve with its knees and the TLB capacities CPUID\n"
	      "reports, ns per access against the stride with the step labels, ns per page per\n"
	      "page-fault case. The analysis is recomputed from the phases, as analyze does.\n"
	      "A footer on the picture names the machine, kernel, command, report and date.\n"
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
	size_t n = strlen(o->output_path);
	o->png = n > 4 && strcasecmp(o->output_path + n - 4, ".png") == 0;
	char why[256];
	if (o->png && !report_png_available(why, sizeof(why)))
		return option_error(msg, len, "-o '%s': %s; write an .svg", o->output_path, why);
	if (access(o->input_path, R_OK) != 0)
		return option_error(msg, len, "plot: '%s': %s", o->input_path, strerror(errno));
	/* Writing the SVG over the report it is drawn from would lose the measurement. */
	if (strcmp(o->output_path, "-") != 0 && stat(o->input_path, &in_st) == 0 && stat(o->output_path, &out_st) == 0 &&
	    in_st.st_dev == out_st.st_dev && in_st.st_ino == out_st.st_ino)
		return option_error(msg, len, "-o '%s': that is the report being drawn; write the SVG elsewhere",
				    o->output_path);
	return cli_check_output_target("-o", o->output_path, msg, len);
}

/* The command that measured, as a shell would take it back: words with spaces or quotes in single quotes. */
static const char *join_command(int argc, char **argv, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; i < argc && at + 1 < len; i++) {
		const char *w = argv[i];
		bool quote = !*w || strpbrk(w, " \t'\"\\$`*?[]{}()<>|&;!#~") != NULL;
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? " " : "", quote ? "'" : "");
		for (const char *c = w; *c && at + 5 < len; c++)
			at += (size_t)(*c == '\'' ? snprintf(buf + at, len - at, "'\\''") : snprintf(buf + at, len - at, "%c", *c));
		if (quote && at + 1 < len)
			at += (size_t)snprintf(buf + at, len - at, "'");
	}
	return buf;
}

/* Seconds since the epoch as the footer prints a date, UTC; NULL for 0 (not known). */
static const char *footer_date(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (t <= 0 || !gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M UTC", &tm))
		return NULL;
	return buf;
}

/*
 * When the report's file was written: its modification time, the fallback
 * for a report from before measured_at (measuring writes it as it ends).
 * NULL when the file cannot be stat'ed.
 */
static const char *report_date(const char *path, char *buf, size_t len)
{
	struct stat st;

	return stat(path, &st) == 0 ? footer_date(st.st_mtime, buf, len) : NULL;
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
	char command[2048], date[40], measured[40];
	struct plot_input in = {
		.phases = doc.results.phases,
		.n = doc.results.n,
		.analysis = &analysis,
		.env = &doc.env,
		.interrupted = doc.results.interrupted,
		.source = o->input_path,
		.command = join_command(doc.argc, doc.argv, command, sizeof(command)),
		.measured_at = footer_date((time_t)doc.results.started_unix_s, measured, sizeof(measured)),
		.date = report_date(o->input_path, date, sizeof(date)),
		.measured_by = doc.tool_version,
		.version = TLBPROF_VERSION,
		.intervals = doc.intervals,
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
	plot.render_width_px = o->width_px;
	if ((o->png ? report_write_png : report_write_svg)(&plot, o->output_path, msg, sizeof(msg)) != 0) {
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
