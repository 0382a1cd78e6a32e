/* SPDX-License-Identifier: MIT */
/* tlbprof compare BASE.json NEW.json: compare two saved reports phase by phase, judged from their samples. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/command.h"
#include "cmd/options.h"
#include "cmd/common.h"
#include "judge/analysis.h"
#include "judge/compare.h"
#include "report/report.h"

#define MAX_THRESHOLD_PCT 1000


static const struct option_spec compare_specs[] = {
	{ .name = "threshold", .value = "PCT",
	  .help = "the smallest change that counts, percent, above 0 and\nbelow " OPTION_STR(MAX_THRESHOLD_PCT),
	  .def = "5", .set = option_set_double, .offset = offsetof(struct compare_options, threshold_pct), .min = 0,
	  .max = MAX_THRESHOLD_PCT, .flags = OPTION_MIN_OPEN | OPTION_MAX_OPEN,
	  .range_help = "a percentage above 0 and below " OPTION_STR(MAX_THRESHOLD_PCT) },
	/* A check that merely got worse (pass -> warn) is flagged; by default only one that now fails fails CI. */
	CLI_OPTION_FAIL_ON(struct compare_options, fail_on,
			   "besides a regression, exit 1 when a check got worse:\n"
			   "fail (it fails now), warn (pass -> warn or fail,\n"
			   "warn -> fail), never (no exit 1)"),
	CLI_OPTION_JSON(struct compare_options, out, "write the comparison (tlbprof.compare/1) to FILE, or\nstdout with -"),
	CLI_OPTION_QUIET(struct compare_options, out, "no table on stdout"),
	CLI_OPTION_HELP,
	{ 0 },
};

static void compare_usage(FILE *f)
{
	fputs("Usage: tlbprof compare [OPTIONS] BASE.json NEW.json\n"
	      "Compare two saved tlbprof.report/1 files phase by phase (matched by name):\n"
	      "ns per access (per page for page faults), page-size speedups, ns per dTLB\n"
	      "miss, counter rates and checks, old against new. A change counts when it\n"
	      "exceeds the threshold and is beyond noise: Mann-Whitney U p < 0.01, a 99%\n"
	      "hierarchical bootstrap interval (allocations or processes, then samples)\n"
	      "without 0, and larger than the spread between each run's own allocations;\n"
	      "a phase that moved with its packed control moved with the machine. Fewer\n"
	      "than 5 samples a side are not judged.\n"
	      "Both reports are re-analysed with this version; environments (CPU, kernel,\n"
	      "THP, hypervisor, PMU, clock, hugetlb pools) and phase parameters that differ\n"
	      "and interrupted runs are warned about.\n"
	      "\n"
	      "Options:\n",
	      f);
	option_print_table(f, compare_specs);
	fputs("\n"
	      "Exit status: 0 no regression, 1 a regression beyond noise and threshold or a\n"
	      "check that got worse at the --fail-on level, 2 usage error or unreadable\n"
	      "report, 3 nothing could be judged (no phase matched with enough samples),\n"
	      "4 output could not be written. See tlbprof-compare(1).\n",
	      f);
}

static enum option_result compare_parse(int argc, char **argv, void *options, char *msg, size_t len)
{
	struct compare_options *o = options;
	struct option_parser p = {
		.command = "compare",
		.tables = { { compare_specs, o } },
		.usage = compare_usage,
		.measuring_has = command_measure_has_option,
	};
	enum option_result r = option_parse(&p, argc, argv, msg, len);

	if (r != OPTION_OK)
		return r;
	if (p.n_operands < 2)
		return option_error(msg, len, "compare: give two reports (tlbprof compare BASE.json NEW.json)");
	if (p.n_operands > 2)
		return option_error(msg, len, "compare: unexpected argument '%s' (two reports: BASE.json NEW.json)",
				    p.operands[2]);
	o->base_path = p.operands[0];
	o->new_path = p.operands[1];
	for (int i = 0; i < 2; i++) {
		const char *path = i ? o->new_path : o->base_path;
		if (access(path, R_OK) != 0)
			return option_error(msg, len, "compare: '%s': %s", path, strerror(errno));
	}
	return cli_check_outputs(&o->out, msg, len);
}

/*
 * Both reports are re-analysed with this tlbprof rather than trusting the
 * analyses stored in them: the two sides are then judged by the same rules
 * (a report from an older version may have other checks or thresholds), so
 * a check that changes status changed because the measurement did. The
 * samples, which decide significance, are read as stored.
 */
static int compare_cmd_run(const void *options, const struct command_context *ctx)
{
	const struct compare_options *o = options;
	struct report_doc base, new;
	struct analysis ab = { 0 }, an = { 0 };
	struct compare_result cmp = { 0 };
	char msg[512];
	int status;

	if (report_read_json(o->base_path, &base, msg, sizeof(msg)) != 0) {
		report_error(msg);
		return EXIT_USAGE;
	}
	if (report_read_json(o->new_path, &new, msg, sizeof(msg)) != 0) {
		report_error(msg);
		report_doc_free(&base);
		return EXIT_USAGE;
	}
	struct compare_side sb = { .results = &base.results, .analysis = &ab, .env = &base.env, .clock = &base.clock,
				   .pmu_name = *base.pmu_name ? base.pmu_name : "none" };
	struct compare_side sn = { .results = &new.results, .analysis = &an, .env = &new.env, .clock = &new.clock,
				   .pmu_name = *new.pmu_name ? new.pmu_name : "none" };
	if (command_analyse_doc(&base, &ab) != 0 || command_analyse_doc(&new, &an) != 0 ||
	    compare_run(&sb, &sn, o->threshold_pct / 100, &cmp) != 0) {
		report_error("out of memory");
		status = EXIT_UNAVAILABLE;
		goto out;
	}
	struct report_compare_input in = {
		.cmp = &cmp,
		.base_path = o->base_path,
		.new_path = o->new_path,
		.base = &base,
		.new = &new,
		.base_analysis = &ab,
		.new_analysis = &an,
		.fail_on = (enum fail_on)o->fail_on,
		.fails = compare_fails(&cmp, (enum fail_on)o->fail_on),
		.argc = ctx->argc,
		.argv = ctx->argv,
	};
	/* Nothing judged is not "no regression": the question asked could not be answered (exit 3). */
	status = !compare_judged_any(&cmp) ? EXIT_UNAVAILABLE : in.fails ? EXIT_CHECK_FAILED : EXIT_OK;
	in.status = status;
	if (report_compare_emit(&in, &o->out) != 0)
		status = EXIT_OUTPUT;
out:
	compare_free(&cmp);
	analysis_free(&ab);
	analysis_free(&an);
	report_doc_free(&base);
	report_doc_free(&new);
	return status;
}

const struct command command_compare = {
	.name = "compare",
	.summary = "compare two saved reports; exit 1 on a regression",
	.specs = compare_specs,
	.options_size = sizeof(struct compare_options),
	.usage = compare_usage,
	.parse = compare_parse,
	.run = compare_cmd_run,
};
