/* SPDX-License-Identifier: MIT */
/* tlbprof compare BASE.json NEW.json (or A1 A2 -- B1 B2): compare saved reports phase by phase, from their samples. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	{ .name = "format", .value = "FORMAT",
	  .help = "what compare writes: text (the table) or markdown\n(a summary a CI bot posts on a pull request)",
	  .def = "text", .set = option_set_choice, .offset = offsetof(struct compare_options, format),
	  .choices = report_compare_format_names, .complete = OPTION_COMPLETE_WORD },
	{ .name = "output", .value = "FILE|-", .help = "write --format to FILE (atomically) instead of\nstdout",
	  .def_help = "stdout", .set = option_set_string, .offset = offsetof(struct compare_options, output_path),
	  .complete = OPTION_COMPLETE_FILE },
	CLI_OPTION_JSON(struct compare_options, out, "write the comparison (tlbprof.compare/1) to FILE, or\nstdout with -"),
	CLI_OPTION_QUIET(struct compare_options, out, "nothing on stdout"),
	CLI_OPTION_HELP,
	{ 0 },
};

static void compare_usage(FILE *f)
{
	fputs("Usage: tlbprof compare [OPTIONS] BASE.json NEW.json\n"
	      "       tlbprof compare [OPTIONS] A1.json A2.json... -- B1.json B2.json...\n"
	      "Compare two saved tlbprof.report/1 files phase by phase (matched by name):\n"
	      "ns per access (per page for page faults), page-size speedups, ns per dTLB\n"
	      "miss, counter rates and checks, old against new. A change counts when it\n"
	      "exceeds the threshold and is beyond noise: Mann-Whitney U p < 0.01, a 99%\n"
	      "hierarchical bootstrap interval (allocations or processes, then samples)\n"
	      "without 0, and larger than the spread between each run's own allocations;\n"
	      "a phase that moved with its packed control moved with the machine. Fewer\n"
	      "than 5 samples a side are not judged.\n"
	      "Several reports a side (-- between the sides) are judged between runs: each\n"
	      "run is one observation (its median of a phase, its speedup), compared by\n"
	      "Welch's t-test on their logarithms, p < 0.01 and a 99% interval without 0;\n"
	      "with fewer than 2 runs a side holding a phase, compare could not tell.\n"
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

/* The spec of a long option as getopt_long takes it: its name, or a prefix of one name only; NULL otherwise. */
static const struct option_spec *long_spec(const struct option_parser *p, const char *name, size_t n)
{
	const struct option_spec *found = NULL;

	for (size_t t = 0; t < OPTION_MAX_TABLES && p->tables[t].specs; t++) {
		for (const struct option_spec *o = p->tables[t].specs; o->name; o++) {
			if (strncmp(o->name, name, n) != 0)
				continue;
			if (!o->name[n])
				return o;
			found = found ? (const struct option_spec *)-1 : o;
		}
	}
	return found == (const struct option_spec *)-1 ? NULL : found;
}

static const struct option_spec *short_spec(const struct option_parser *p, char c)
{
	for (size_t t = 0; t < OPTION_MAX_TABLES && p->tables[t].specs; t++)
		for (const struct option_spec *o = p->tables[t].specs; o->name; o++)
			if (o->short_name == c)
				return o;
	return NULL;
}

/*
 * The operands of argv in order, as getopt_long found them, into ops (room
 * for argc), and how many came before the "--" that ended the options
 * (getopt drops it; *before = the count when there is none, *dashdash
 * false). An option that takes its value in the next argument skips it, so
 * "--json --" is a file named "--". Returns the count of operands.
 */
static size_t split_operands(const struct option_parser *p, int argc, char **argv, const char **ops, size_t *before,
			     bool *dashdash)
{
	size_t n = 0;

	*dashdash = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0 && !*dashdash) {
			*dashdash = true;
			*before = n;
			continue;
		}
		if (*dashdash || a[0] != '-' || !a[1]) {
			ops[n++] = a;
			continue;
		}
		if (a[1] == '-') {
			const struct option_spec *o = long_spec(p, a + 2, strcspn(a + 2, "="));
			i += o && o->value && !strchr(a, '=');
			continue;
		}
		for (const char *c = a + 1; *c; c++) {
			const struct option_spec *o = short_spec(p, *c);
			if (o && o->value) {
				i += !c[1];
				break;
			}
		}
	}
	if (!*dashdash)
		*before = n;
	return n;
}

/* Whether two paths name one file: the same text, or the same inode. */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return strcmp(a, b) == 0 ||
	       (stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

/* The reports of each side: BASE NEW, or A1 A2... -- B1 B2...; each readable, none twice on a side. */
static enum option_result compare_sides(const struct option_parser *p, int argc, char **argv,
					struct compare_options *o, char *msg, size_t len)
{
	const char **ops = calloc((size_t)argc + 1, sizeof(*ops));
	size_t before = 0;
	bool dashdash;
	enum option_result r = OPTION_OK;

	if (!ops)
		return option_error(msg, len, "out of memory");
	size_t n = split_operands(p, argc, argv, ops, &before, &dashdash);
	if (n != (size_t)p->n_operands)
		r = option_error(msg, len, "compare: cannot tell the reports from the options; give the options first");
	else if (!dashdash && n < 2)
		r = option_error(msg, len, "compare: give two reports (tlbprof compare BASE.json NEW.json)");
	else if (!dashdash && n > 2)
		r = option_error(msg, len, "compare: unexpected argument '%s' (two reports: BASE.json NEW.json; several a "
				 "side: A1.json A2.json -- B1.json B2.json)", ops[2]);
	else if (dashdash && !n)
		r = option_error(msg, len, "compare: '--' with no report on either side (A1.json A2.json -- B1.json "
				 "B2.json)");
	else if (dashdash && (!before || before == n))
		r = option_error(msg, len, "compare: no report %s '--': the %s side is empty (A1.json A2.json -- B1.json "
				 "B2.json)", before ? "after" : "before", before ? "new" : "base");
	else if (before > COMPARE_MAX_RUNS || n - before > COMPARE_MAX_RUNS)
		r = option_error(msg, len, "compare: '%s': more than %d reports on the %s side", ops[before > COMPARE_MAX_RUNS
				 ? COMPARE_MAX_RUNS : before + COMPARE_MAX_RUNS], COMPARE_MAX_RUNS,
				 before > COMPARE_MAX_RUNS ? "base" : "new");
	if (!dashdash)
		before = 1;	/* BASE.json NEW.json */
	for (size_t i = 0; r == OPTION_OK && i < n; i++) {
		size_t side = i >= before, k = o->n_paths[side]++;
		o->paths[side][k] = ops[i];
		if (access(ops[i], R_OK) != 0) {
			r = option_error(msg, len, "compare: '%s': %s", ops[i], strerror(errno));
			break;
		}
		for (size_t j = 0; j < k && r == OPTION_OK; j++)
			if (same_file(o->paths[side][j], ops[i]))
				r = option_error(msg, len, "compare: '%s': given twice on the %s side (each report is one run)",
						 ops[i], side ? "new" : "base");
	}
	free(ops);
	if (r == OPTION_OK) {
		o->base_path = o->paths[0][0];
		o->new_path = o->paths[1][0];
	}
	return r;
}

/* --format, --output and --json together: one stream takes one document, --output a file that can be written. */
static enum option_result compare_outputs(struct compare_options *o, char *msg, size_t len)
{
	bool json_stdout = o->out.json_path && strcmp(o->out.json_path, "-") == 0;
	const char *path = o->output_path;

	if (path && !*path)
		return option_error(msg, len, "--output '': give a file name or - for stdout");
	if (o->format == REPORT_COMPARE_MARKDOWN && json_stdout && (!path || strcmp(path, "-") == 0))
		return option_error(msg, len, "--format markdown: --json - already writes to stdout (give --output FILE)");
	if (path && json_stdout && strcmp(path, "-") == 0)
		return option_error(msg, len, "--output '-': --json already writes to stdout");
	if (path && o->out.json_path && strcmp(path, "-") != 0 && cli_same_output(path, o->out.json_path))
		return option_error(msg, len, "--output '%s': the same file as --json", path);
	/* Neither document may replace a report being compared. */
	const char *inputs[2 * COMPARE_MAX_RUNS];
	size_t n_in = 0;
	for (size_t side = 0; side < 2; side++)
		for (size_t i = 0; i < o->n_paths[side]; i++)
			inputs[n_in++] = o->paths[side][i];
	for (size_t i = 0; path && strcmp(path, "-") != 0 && i < n_in; i++)
		if (cli_same_output(path, inputs[i]))
			return option_error(msg, len, "--output '%s': that is the report '%s' being compared; write it "
					    "elsewhere", path, inputs[i]);
	if (cli_check_inputs(inputs, n_in, &o->out, false, msg, len) != OPTION_OK)
		return OPTION_USAGE;
	if (path && cli_check_output_target("--output", path, msg, len) != OPTION_OK)
		return OPTION_NO_OUTPUT;
	/*
	 * --output names what is written, a FILE or - (stdout, as analyze's --output -): -q then silences only
	 * the table around it, and is never "nothing to write".
	 */
	bool quiet = o->out.quiet;
	if (path)
		o->out.quiet = false;
	enum option_result r = cli_check_outputs(&o->out, msg, len);
	o->out.quiet = quiet;
	return r;
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
	if ((r = compare_sides(&p, argc, argv, o, msg, len)) != OPTION_OK)
		return r;
	return compare_outputs(o, msg, len);
}

/* Every report of both sides, read and re-analysed: side 0 the base, side 1 the new. */
struct compare_reports {
	struct report_doc *docs[2];
	struct analysis *analyses[2];
	struct compare_side *sides[2];
	const struct report_doc *doc_ptrs[2][COMPARE_MAX_RUNS];
	const struct analysis *analysis_ptrs[2][COMPARE_MAX_RUNS];
	size_t n[2], read[2];
};

static void compare_reports_free(struct compare_reports *r)
{
	for (int side = 0; side < 2; side++) {
		for (size_t i = 0; i < r->read[side]; i++) {
			analysis_free(&r->analyses[side][i]);
			report_doc_free(&r->docs[side][i]);
		}
		free(r->docs[side]);
		free(r->analyses[side]);
		free(r->sides[side]);
	}
}

/*
 * Read every report before anything is written: one that cannot be read is
 * a one-line error naming it (exit 2). Then each is re-analysed. Returns 0,
 * EXIT_USAGE or EXIT_UNAVAILABLE (out of memory), after its message.
 */
static int compare_reports_load(const struct compare_options *o, struct compare_reports *r)
{
	char msg[512];

	for (int side = 0; side < 2; side++) {
		size_t n = r->n[side] = o->n_paths[side];
		r->docs[side] = calloc(n, sizeof(*r->docs[side]));
		r->analyses[side] = calloc(n, sizeof(*r->analyses[side]));
		r->sides[side] = calloc(n, sizeof(*r->sides[side]));
		if (!r->docs[side] || !r->analyses[side] || !r->sides[side]) {
			report_error("out of memory");
			return EXIT_UNAVAILABLE;
		}
	}
	for (int side = 0; side < 2; side++) {
		for (size_t i = 0; i < r->n[side]; i++) {
			if (report_read_json(o->paths[side][i], &r->docs[side][i], msg, sizeof(msg)) != 0) {
				report_error(msg);
				return EXIT_USAGE;
			}
			r->read[side]++;
		}
	}
	for (int side = 0; side < 2; side++) {
		for (size_t i = 0; i < r->n[side]; i++) {
			struct report_doc *d = &r->docs[side][i];
			if (command_analyse_doc(d, &r->analyses[side][i]) != 0) {
				report_error("out of memory");
				return EXIT_UNAVAILABLE;
			}
			r->sides[side][i] = (struct compare_side){ .results = &d->results, .analysis = &r->analyses[side][i],
								   .env = &d->env, .clock = &d->clock,
								   .pmu_name = *d->pmu_name ? d->pmu_name : "none" };
			r->doc_ptrs[side][i] = d;
			r->analysis_ptrs[side][i] = &r->analyses[side][i];
		}
	}
	return 0;
}

/*
 * Every report is re-analysed with this tlbprof rather than trusting the
 * analyses stored in it: both sides are then judged by the same rules (a
 * report from an older version may have other checks or thresholds), so a
 * check that changes status changed because the measurement did. The
 * samples, which decide significance, are read as stored.
 */
static int compare_cmd_run(const void *options, const struct command_context *ctx)
{
	const struct compare_options *o = options;
	struct compare_reports r = { 0 };
	struct compare_result cmp = { 0 };
	int status = compare_reports_load(o, &r);

	if (status)
		goto out;
	if (compare_run_many(r.sides[0], r.n[0], r.sides[1], r.n[1], o->threshold_pct / 100, &cmp) != 0) {
		report_error("out of memory");
		status = EXIT_UNAVAILABLE;
		goto out;
	}
	struct report_compare_input in = {
		.cmp = &cmp,
		.base_path = o->paths[0][0],
		.new_path = o->paths[1][0],
		.base = r.doc_ptrs[0][0],
		.new = r.doc_ptrs[1][0],
		.base_analysis = r.analysis_ptrs[0][0],
		.new_analysis = r.analysis_ptrs[1][0],
		.n_base = r.n[0],
		.n_new = r.n[1],
		.base_paths = o->paths[0],
		.new_paths = o->paths[1],
		.base_docs = r.doc_ptrs[0],
		.new_docs = r.doc_ptrs[1],
		.base_analyses = r.analysis_ptrs[0],
		.new_analyses = r.analysis_ptrs[1],
		.format = (enum report_compare_format)o->format,
		.output_path = o->output_path,
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
	compare_reports_free(&r);
	return status;
}

const struct command command_compare = {
	.name = "compare",
	.summary = "compare saved reports, one or several a side; exit 1 on a regression",
	.specs = compare_specs,
	.options_size = sizeof(struct compare_options),
	.usage = compare_usage,
	.parse = compare_parse,
	.run = compare_cmd_run,
};
