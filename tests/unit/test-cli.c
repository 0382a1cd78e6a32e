/* SPDX-License-Identifier: MIT */
/* The command line: defaults, good values, and one-line errors that name the option and value. */
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cmd/cli.h"
#include "measure/workload.h"

#define MAX_ARGS 12

static const struct {
	int line;
	const char *args[MAX_ARGS];
	enum cli_result want;
	const char *msg_has;	/* substring of the one-line error */
} rows[] = {
	{ __LINE__, { "--workload", "chase", "--pages", "4k,2m" }, CLI_RUN, NULL },
	{ __LINE__, { "--pages", "4k,2m:hugetlb,1g" }, CLI_RUN, NULL },
	{ __LINE__, { "--size", "64M,128M", "--stride", "64" }, CLI_RUN, NULL },
	{ __LINE__, { "--iters", "1k", "--repeat", "3", "--warmup-frac", "0", "--seed", "9" }, CLI_RUN, NULL },
	{ __LINE__, { "--layout", "aligned", "--cpu", "0", "-q" }, CLI_RUN, NULL },
	{ __LINE__, { "--json", "-" }, CLI_RUN, NULL },
	{ __LINE__, { "--controls", "none", "--fail-on", "warn" }, CLI_RUN, NULL },
	{ __LINE__, { "--controls", "always", "--fail-on", "never" }, CLI_RUN, NULL },
	{ __LINE__, { "--controls", "sometimes" }, CLI_USAGE, "--controls 'sometimes'" },
	{ __LINE__, { "--iters", "auto", "--precision", "0.005", "--time-budget", "2", "--realloc", "5" }, CLI_RUN, NULL },
	{ __LINE__, { "--precision", "0" }, CLI_USAGE, "--precision '0'" },
	{ __LINE__, { "--precision", "1.5" }, CLI_USAGE, "--precision '1.5'" },
	{ __LINE__, { "--time-budget", "-1" }, CLI_USAGE, "--time-budget '-1'" },
	{ __LINE__, { "--realloc", "0" }, CLI_USAGE, "--realloc '0'" },
	{ __LINE__, { "--iters", "automatic" }, CLI_USAGE, "--iters 'automatic'" },
	{ __LINE__, { "--fail-on", "error" }, CLI_USAGE, "--fail-on 'error'" },
	{ __LINE__, { "analyze", "/dev/null" }, CLI_RUN, NULL },
	{ __LINE__, { "analyze", "/dev/null", "--json", "-", "--fail-on", "warn", "-q" }, CLI_RUN, NULL },
	{ __LINE__, { "analyze" }, CLI_USAGE, "analyze: give the report" },
	{ __LINE__, { "analyze", "/dev/null", "/dev/zero" }, CLI_USAGE, "'/dev/zero'" },
	{ __LINE__, { "analyze", "/no/such/report.json" }, CLI_USAGE, "'/no/such/report.json'" },
	{ __LINE__, { "analyze", "/dev/null", "--size", "4K" }, CLI_USAGE, "'--size' applies only to measuring" },
	{ __LINE__, { "analyze", "--controls=none", "/dev/null" }, CLI_USAGE, "'--controls'" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null" }, CLI_RUN, NULL },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--threshold", "2.5", "--fail-on", "never", "--json", "-", "-q" },
	  CLI_RUN, NULL },
	{ __LINE__, { "compare", "--threshold=999.9", "/dev/null", "/dev/null" }, CLI_RUN, NULL },
	{ __LINE__, { "compare", "/dev/null" }, CLI_USAGE, "compare: give two reports" },
	{ __LINE__, { "compare" }, CLI_USAGE, "compare: give two reports" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "/dev/zero" }, CLI_USAGE, "'/dev/zero'" },
	{ __LINE__, { "compare", "/dev/null", "/no/such/new.json" }, CLI_USAGE, "'/no/such/new.json'" },
	{ __LINE__, { "compare", "/no/such/base.json", "/dev/null" }, CLI_USAGE, "'/no/such/base.json'" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--threshold", "0" }, CLI_USAGE, "--threshold '0'" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--threshold", "1000" }, CLI_USAGE, "--threshold '1000'" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--threshold", "-5" }, CLI_USAGE, "--threshold '-5'" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--threshold", "5%" }, CLI_USAGE, "--threshold '5%'" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--threshold", "nan" }, CLI_USAGE, "--threshold 'nan'" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--threshold" }, CLI_USAGE, "'--threshold' needs a value" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--fail-on", "error" }, CLI_USAGE, "--fail-on 'error'" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--size", "4K" }, CLI_USAGE, "'--size' applies only to measuring" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--json", "/nonexistent/dir/c.json" }, CLI_NO_OUTPUT,
	  "--json '/nonexistent/dir/c.json'" },
	{ __LINE__, { "--threshold", "5" }, CLI_USAGE, "'--threshold'" },
	{ __LINE__, { "analyze", "/dev/null", "--threshold", "5" }, CLI_USAGE, "'--threshold'" },
	{ __LINE__, { "env" }, CLI_RUN, NULL },
	{ __LINE__, { "env", "--json", "-", "-q" }, CLI_RUN, NULL },
	{ __LINE__, { "env", "extra" }, CLI_USAGE, "env: unexpected argument 'extra'" },
	{ __LINE__, { "env", "--pages", "4k" }, CLI_USAGE, "'--pages' applies only to measuring" },
	{ __LINE__, { "env", "--events-dir", "/no/such/dir" }, CLI_USAGE, "--events-dir '/no/such/dir'" },
	{ __LINE__, { "events" }, CLI_RUN, NULL },
	{ __LINE__, { "events", "--pmu", "skl", "--json", "-" }, CLI_RUN, NULL },
	{ __LINE__, { "events", "--pmu", "amd64_fam19h_zen4", "-q" }, CLI_RUN, NULL },
	{ __LINE__, { "events", "--pmu", "zen9" }, CLI_USAGE, "--pmu 'zen9': no map" },
	{ __LINE__, { "events", "--pmu", "zen9" }, CLI_USAGE, "(known: amd64_fam17h_zen2, amd64_fam19h_zen3," },
	{ __LINE__, { "events", "--pmu", "generic" }, CLI_USAGE, "--pmu 'generic': generic is the fallback map, not a PMU" },
	{ __LINE__, { "events", "--pmu", "generic" }, CLI_USAGE, "known PMUs: amd64_fam17h_zen2, amd64_fam19h_zen3," },
	{ __LINE__, { "events", "--pmu", "../events/skl" }, CLI_USAGE, "--pmu '../events/skl'" },
	{ __LINE__, { "events", "--pmu" }, CLI_USAGE, "needs a value" },
	{ __LINE__, { "events", "--stride", "64" }, CLI_USAGE, "'--stride' applies only to measuring" },
	{ __LINE__, { "--pmu", "skl" }, CLI_USAGE, "unknown option '--pmu'" },
	{ __LINE__, { "run", "--", "true" }, CLI_RUN, NULL },
	{ __LINE__, { "run", "-q", "--fail-on", "warn", "true", "--size", "1M" }, CLI_RUN, NULL },
	{ __LINE__, { "run" }, CLI_USAGE, "run: give the command" },
	{ __LINE__, { "run", "--", "/no/such/cmd" }, CLI_USAGE, "'/no/such/cmd'" },
	{ __LINE__, { "run", "--control", "fd:x", "true" }, CLI_USAGE, "--control 'fd:x'" },
	{ __LINE__, { "run", "--control", "fifo:", "true" }, CLI_USAGE, "--control 'fifo:'" },
	{ __LINE__, { "run", "--delay", "-2", "true" }, CLI_USAGE, "--delay '-2'" },
	{ __LINE__, { "run", "--repeat", "3", "true" }, CLI_USAGE, "'--repeat' applies only to measuring" },
	{ __LINE__, { "plot", "/dev/null", "-o", "-" }, CLI_RUN, NULL },
	{ __LINE__, { "plot", "-o", "/tmp/tlbprof-test-cli.svg", "/dev/null" }, CLI_RUN, NULL },
	{ __LINE__, { "plot", "/dev/null", "--output", "-" }, CLI_RUN, NULL },
	{ __LINE__, { "plot", "/dev/null", "--output=-" }, CLI_RUN, NULL },
	{ __LINE__, { "plot" }, CLI_USAGE, "plot: give the report" },
	{ __LINE__, { "plot", "/dev/null" }, CLI_USAGE, "plot: -o FILE is required" },
	{ __LINE__, { "plot", "/dev/null", "-o" }, CLI_USAGE, "'-o' needs a value" },
	{ __LINE__, { "plot", "/dev/null", "-o", "" }, CLI_USAGE, "-o ''" },
	{ __LINE__, { "plot", "/dev/null", "/dev/zero", "-o", "-" }, CLI_USAGE, "'/dev/zero'" },
	{ __LINE__, { "plot", "/no/such/report.json", "-o", "-" }, CLI_USAGE, "'/no/such/report.json'" },
	{ __LINE__, { "plot", "/dev/null", "-o", "/nonexistent/dir/p.svg" }, CLI_NO_OUTPUT, "-o '/nonexistent/dir/p.svg'" },
	{ __LINE__, { "plot", "/dev/null", "-o", "/tmp" }, CLI_NO_OUTPUT, "-o '/tmp'" },
	{ __LINE__, { "plot", "/dev/null", "-o", "/dev/null" }, CLI_USAGE, "the report being drawn" },
	{ __LINE__, { "plot", "/dev/null", "-o", "-", "--size", "4K" }, CLI_USAGE, "'--size'" },
	{ __LINE__, { "plot", "/dev/null", "-o", "-", "-q" }, CLI_USAGE, "'-q'" },
	{ __LINE__, { "--workload", "nope" }, CLI_USAGE, "--workload 'nope'" },
	{ __LINE__, { "--pages", "4k,,2m" }, CLI_USAGE, "--pages '4k,,2m'" },
	{ __LINE__, { "--pages", "3m" }, CLI_USAGE, "'3m'" },
	{ __LINE__, { "--pages", "4k,4k" }, CLI_USAGE, "listed twice" },
	{ __LINE__, { "--pages", "" }, CLI_USAGE, "--pages" },
	{ __LINE__, { "--size", "12Q" }, CLI_USAGE, "--size '12Q'" },
	{ __LINE__, { "--size", "0" }, CLI_USAGE, "--size '0'" },
	{ __LINE__, { "--size", "99999999999T" }, CLI_USAGE, "out of range" },
	{ __LINE__, { "--stride", "3000" }, CLI_USAGE, "--stride '3000'" },
	{ __LINE__, { "--stride", "4" }, CLI_USAGE, "--stride '4'" },
	{ __LINE__, { "--stride", "1G" }, CLI_USAGE, "--stride '1G'" },
	{ __LINE__, { "--size", "8K", "--stride", "8K" }, CLI_USAGE, "--stride '8K'" },
	{ __LINE__, { "--iters", "0" }, CLI_USAGE, "--iters '0'" },
	{ __LINE__, { "--iters", "many" }, CLI_USAGE, "--iters 'many'" },
	{ __LINE__, { "--warmup-frac", "2" }, CLI_USAGE, "--warmup-frac '2'" },
	{ __LINE__, { "--warmup-frac", "-0.1" }, CLI_USAGE, "--warmup-frac '-0.1'" },
	{ __LINE__, { "--repeat", "0" }, CLI_USAGE, "--repeat '0'" },
	{ __LINE__, { "--repeat", "1001" }, CLI_USAGE, "--repeat '1001'" },
	{ __LINE__, { "--seed", "-1" }, CLI_USAGE, "--seed '-1'" },
	{ __LINE__, { "--cpu", "4096" }, CLI_USAGE, "--cpu '4096'" },
	{ __LINE__, { "--cpu", "x" }, CLI_USAGE, "--cpu 'x'" },
	{ __LINE__, { "--layout", "diagonal" }, CLI_USAGE, "--layout 'diagonal'" },
	{ __LINE__, { "--events-dir", "/nonexistent/dir" }, CLI_USAGE, "--events-dir '/nonexistent/dir'" },
	{ __LINE__, { "--json", "/nonexistent/dir/r.json" }, CLI_NO_OUTPUT, "--json '/nonexistent/dir/r.json'" },
	{ __LINE__, { "--format", "gbench,openmetrics,junit,csv,json", "--output", "/tmp" }, CLI_RUN, NULL },
	{ __LINE__, { "--format", "csv", "--output", "-" }, CLI_RUN, NULL },
	{ __LINE__, { "--output", "-" }, CLI_RUN, NULL },
	{ __LINE__, { "--format", "json", "--json", "-" }, CLI_RUN, NULL },
	{ __LINE__, { "--json", "-", "--format", "junit", "--output", "/tmp/" }, CLI_RUN, NULL },
	{ __LINE__, { "analyze", "/dev/null", "--format", "junit", "--output", "-" }, CLI_RUN, NULL },
	{ __LINE__, { "--format", "nope", "--output", "-" }, CLI_USAGE, "--format 'nope'" },
	{ __LINE__, { "--format", "csv,csv", "--output", "/tmp" }, CLI_USAGE, "--format 'csv,csv': 'csv' listed twice" },
	{ __LINE__, { "--format", "json,,csv", "--output", "/tmp" }, CLI_USAGE, "--format 'json,,csv'" },
	{ __LINE__, { "--format", "csv" }, CLI_USAGE, "--format 'csv': give --output" },
	{ __LINE__, { "--format", "json,csv", "--json", "-" }, CLI_USAGE, "--format 'json,csv'" },
	{ __LINE__, { "--format", "csv,junit", "--output", "/tmp/r.csv" }, CLI_USAGE, "--output '/tmp/r.csv'" },
	{ __LINE__, { "--format", "csv,junit", "--output", "-" }, CLI_USAGE, "--output '-'" },
	{ __LINE__, { "--output", "/nonexistent/dir/" }, CLI_USAGE, "--output '/nonexistent/dir/'" },
	{ __LINE__, { "--output", "-", "--json", "-" }, CLI_USAGE, "--output '-'" },
	{ __LINE__, { "--output", "/tmp/r.json", "--json", "/tmp/r.json" }, CLI_USAGE, "--output '/tmp/r.json'" },
	{ __LINE__, { "--output", "" }, CLI_USAGE, "--output ''" },
	{ __LINE__, { "--output", "/nonexistent/dir/r.prom" }, CLI_NO_OUTPUT, "--output '/nonexistent/dir/r.prom'" },
	{ __LINE__, { "analyze", "/dev/null", "--format", "gbench" }, CLI_USAGE, "--format 'gbench'" },
	/* --output FORMAT=PATH: each format to its own file. */
	{ __LINE__, { "--output", "junit=/tmp/j.xml,gbench=/tmp/g,1.json" }, CLI_RUN, NULL },
	{ __LINE__, { "--output", "junit=/tmp/j.xml", "--output", "csv=-" }, CLI_RUN, NULL },
	{ __LINE__, { "--format", "junit", "--output", "junit=/tmp/j.xml" }, CLI_RUN, NULL },
	{ __LINE__, { "--format", "csv", "--output", "./junit=x.csv" }, CLI_RUN, NULL },
	{ __LINE__, { "analyze", "/dev/null", "--output", "openmetrics=/tmp/n.prom" }, CLI_RUN, NULL },
	{ __LINE__, { "--format", "junit,csv", "--output", "junit=/tmp/j.xml" }, CLI_USAGE, "csv has no --output csv=PATH" },
	{ __LINE__, { "--format", "csv", "--output", "junit=/tmp/j.xml,csv=/tmp/c" }, CLI_USAGE,
	  "--output 'junit=/tmp/j.xml': --format 'csv' does not name junit" },
	{ __LINE__, { "--output", "junit=/tmp/j.xml,csv=/tmp/j.xml" }, CLI_USAGE,
	  "--output 'csv=/tmp/j.xml': the same file as junit" },
	{ __LINE__, { "--output", "junit=-,csv=-" }, CLI_USAGE, "--output 'csv=-': the same stdout as junit" },
	{ __LINE__, { "--output", "junit=-", "--json", "-" }, CLI_USAGE, "--output 'junit=-': the same stdout as --json" },
	{ __LINE__, { "--output", "json=/tmp/r.json", "--json", "/tmp/r.json" }, CLI_USAGE, "the same file as --json" },
	{ __LINE__, { "--output", "junit=/tmp" }, CLI_USAGE, "--output 'junit=/tmp': a directory" },
	{ __LINE__, { "--output", "junit=/nonexistent/" }, CLI_USAGE, "--output 'junit=/nonexistent/': a directory" },
	{ __LINE__, { "--output", "junit=" }, CLI_USAGE, "--output 'junit=': no path for junit" },
	{ __LINE__, { "--output", "junit=/tmp/a,csv=" }, CLI_USAGE, "no path for csv" },
	{ __LINE__, { "--output", "junit=/tmp/a", "--output", "junit=/tmp/b" }, CLI_USAGE, "junit given twice" },
	{ __LINE__, { "--output", "/tmp", "--output", "junit=/tmp/b" }, CLI_USAGE, "cannot be combined with --output '/tmp'" },
	{ __LINE__, { "--output", "junit=/tmp/b", "--output", "/tmp" }, CLI_USAGE, "--output '/tmp': cannot be combined" },
	{ __LINE__, { "--output", "junit=/nonexistent/dir/j.xml" }, CLI_NO_OUTPUT,
	  "--output 'junit=/nonexistent/dir/j.xml'" },
	{ __LINE__, { "--bogus" }, CLI_USAGE, "'--bogus'" },
	{ __LINE__, { "-x" }, CLI_USAGE, "'-x'" },
	{ __LINE__, { "--size" }, CLI_USAGE, "'--size' needs a value" },
	{ __LINE__, { "extra" }, CLI_USAGE, "'extra'" },
};

int main(void)
{
	struct tlbprof_config cfg;
	char msg[512];
	char *argv0[] = { "tlbprof", NULL };

	/* Defaults. */
	CHECK(cli_parse(1, argv0, &cfg, msg, sizeof(msg)) == CLI_RUN, "no options runs: %s", msg);
	CHECK(cfg.workload && strcmp(cfg.workload->name, "chase") == 0, "default workload chase");
	CHECK(cfg.n_pages == 2 && strcmp(cfg.pages[0].label, "4k") == 0 && strcmp(cfg.pages[1].label, "2m") == 0,
	      "default pages 4k,2m");
	CHECK(cfg.n_sizes == 1 && cfg.sizes_bytes[0] == 256ull << 20, "default size 256M");
	CHECK(cfg.stride_bytes == 4096, "default stride 4K");
	CHECK(cfg.iterations == 20000000 && cfg.iterations_auto && !cfg.iterations_set, "default iters auto");
	CHECK(cfg.precision == 0.01 && cfg.time_budget_s == 0.5 && cfg.allocations == 3, "auto defaults");
	CHECK(cfg.warmup_frac == 0.1, "default warmup 0.1");
	CHECK(cfg.repeat == 5 && cfg.seed == 1 && cfg.cpu == -1 && cfg.layout == LAYOUT_COLORED, "other defaults");
	CHECK(cfg.json_path == NULL && !cfg.quiet, "no json, not quiet");
	CHECK(cfg.controls == CONTROLS_AUTO && cfg.fail_on == FAIL_ON_FAIL && cfg.command == COMMAND_MEASURE,
	      "controls auto, fail-on fail, run");

	/* analyze takes its report and keeps the command as typed (getopt must not permute argv). */
	char *an[] = { "tlbprof", "analyze", "r.json", "--json", "-", NULL };
	char *an_copy[] = { "tlbprof", "analyze", "r.json", "--json", "-", NULL };
	CHECK(cli_parse(5, an, &cfg, msg, sizeof(msg)) == CLI_USAGE, "r.json does not exist here: %s", msg);
	for (int i = 0; i < 5; i++)
		CHECK(strcmp(an[i], an_copy[i]) == 0, "argv[%d] unchanged: %s", i, an[i]);
	char *an2[] = { "tlbprof", "analyze", "--fail-on", "warn", "/dev/null", NULL };
	CHECK(cli_parse(5, an2, &cfg, msg, sizeof(msg)) == CLI_RUN, "analyze parses: %s", msg);
	CHECK(cfg.command == COMMAND_ANALYZE && strcmp(cfg.input_path, "/dev/null") == 0 && cfg.fail_on == FAIL_ON_WARN,
	      "analyze config");
	char *pl[] = { "tlbprof", "plot", "/dev/null", "-o", "-", NULL };
	CHECK(cli_parse(5, pl, &cfg, msg, sizeof(msg)) == CLI_RUN, "plot parses: %s", msg);
	CHECK(cfg.command == COMMAND_PLOT && strcmp(cfg.input_path, "/dev/null") == 0 && strcmp(cfg.output_path, "-") == 0,
	      "plot config");

	/* compare takes two reports; by default only a check that now fails fails it (--fail-on fail). */
	char *cm[] = { "tlbprof", "compare", "/dev/null", "/dev/zero", NULL };
	CHECK(cli_parse(4, cm, &cfg, msg, sizeof(msg)) == CLI_RUN, "compare parses: %s", msg);
	CHECK(cfg.command == COMMAND_COMPARE && strcmp(cfg.input_path, "/dev/null") == 0 &&
		      strcmp(cfg.compare_path, "/dev/zero") == 0 && cfg.fail_on == FAIL_ON_FAIL && cfg.threshold_pct == 5,
	      "compare config");
	char *cm2[] = { "tlbprof", "compare", "--threshold", "2", "--fail-on", "warn", "/dev/null", "/dev/zero", NULL };
	CHECK(cli_parse(8, cm2, &cfg, msg, sizeof(msg)) == CLI_RUN && cfg.threshold_pct == 2 && cfg.fail_on == FAIL_ON_WARN,
	      "compare options: %s", msg);
	/* --threshold twice: the last one counts (tlbprof-compare(1) says so). */
	char *cm3[] = { "tlbprof", "compare", "--threshold", "50", "--threshold", "7", "/dev/null", "/dev/zero", NULL };
	CHECK(cli_parse(8, cm3, &cfg, msg, sizeof(msg)) == CLI_RUN && cfg.threshold_pct == 7, "--threshold twice: %g",
	      cfg.threshold_pct);
	/* run: CMD's own options stay CMD's; run_argv points into the caller's argv and ends in NULL. */
	char *rn[] = { "tlbprof", "run", "--cpu", "0", "true", "--json", "x", NULL };
	CHECK(cli_parse(7, rn, &cfg, msg, sizeof(msg)) == CLI_RUN, "run parses: %s", msg);
	CHECK(cfg.command == COMMAND_RUN && cfg.run_argv == rn + 4 && cfg.json_path == NULL && cfg.cpu == 0 &&
	      cfg.control_ctl_fd == -1, "run config");
	/* --format LIST in its order; --output alone is json; a directory takes one file per format. */
	char *fo[] = { "tlbprof", "--format", "junit,gbench", "--output", "/tmp", NULL };
	CHECK(cli_parse(5, fo, &cfg, msg, sizeof(msg)) == CLI_RUN, "formats parse: %s", msg);
	CHECK(cfg.n_formats == 2 && cfg.formats[0] == OUTPUT_JUNIT && cfg.formats[1] == OUTPUT_GBENCH && cfg.output_dir,
	      "two formats into a directory");
	char *fo2[] = { "tlbprof", "--output", "-", NULL };
	CHECK(cli_parse(3, fo2, &cfg, msg, sizeof(msg)) == CLI_RUN, "--output alone: %s", msg);
	CHECK(cfg.n_formats == 1 && cfg.formats[0] == OUTPUT_JSON && !cfg.output_dir, "--output alone is json to a file");
	/* --output FORMAT=PATH: the formats in the order named; a comma ends a path only before the next FORMAT=. */
	char *fm[] = { "tlbprof", "--output", "junit=/tmp/j.xml,gbench=/tmp/g,1.json", "--output", "csv=-", NULL };
	CHECK(cli_parse(5, fm, &cfg, msg, sizeof(msg)) == CLI_RUN, "FORMAT=PATH parses: %s", msg);
	CHECK(cfg.n_formats == 3 && cfg.formats[0] == OUTPUT_JUNIT && cfg.formats[1] == OUTPUT_GBENCH &&
		      cfg.formats[2] == OUTPUT_CSV && !cfg.output_dir && !cfg.output_path,
	      "three formats, each to its own file");
	CHECK(strcmp(cfg.format_paths[OUTPUT_JUNIT], "/tmp/j.xml") == 0 &&
		      strcmp(cfg.format_paths[OUTPUT_GBENCH], "/tmp/g,1.json") == 0 &&
		      strcmp(cfg.format_paths[OUTPUT_CSV], "-") == 0 && !cfg.format_paths[OUTPUT_JSON],
	      "paths: %s %s", cfg.format_paths[OUTPUT_JUNIT], cfg.format_paths[OUTPUT_GBENCH]);
	/* A dangling symlink is checked where the write lands: the directory of the file it names. */
	char link_dir[] = "/tmp/tlbprof-cli-XXXXXX", link[64], lost[64];
	CHECK(mkdtemp(link_dir) != NULL, "mkdtemp");
	snprintf(link, sizeof(link), "%s/r.json", link_dir);
	snprintf(lost, sizeof(lost), "%s/r.prom", link_dir);
	CHECK(symlink("missing/r.json", link) == 0 && symlink("r.prom.new", lost) == 0, "symlinks");
	char *dl[] = { "tlbprof", "--json", link, NULL };
	CHECK(cli_parse(3, dl, &cfg, msg, sizeof(msg)) == CLI_NO_OUTPUT, "a link into a missing directory: %s", msg);
	char *dl2[] = { "tlbprof", "--output", lost, "--format", "openmetrics", NULL };
	CHECK(cli_parse(5, dl2, &cfg, msg, sizeof(msg)) == CLI_RUN, "a dangling link whose file can be made: %s", msg);
	unlink(link);
	unlink(lost);
	rmdir(link_dir);
	char *fo3[] = { "tlbprof", "--format", "json", "--json", "r.json", NULL };
	CHECK(cli_parse(5, fo3, &cfg, msg, sizeof(msg)) == CLI_RUN, "--format json --json: %s", msg);
	CHECK(cfg.n_formats == 0 && strcmp(cfg.json_path, "r.json") == 0, "--format json --json FILE is --json FILE");

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *argv[MAX_ARGS + 2] = { "tlbprof" };
		int argc = 1;
		for (int k = 0; k < MAX_ARGS && rows[i].args[k]; k++)
			argv[argc++] = (char *)rows[i].args[k];
		argv[argc] = NULL;
		msg[0] = '\0';
		enum cli_result r = cli_parse(argc, argv, &cfg, msg, sizeof(msg));
		CHECK_ROW(rows[i].line, r == rows[i].want, "result %d, want %d (%s)", r, rows[i].want, msg);
		if (rows[i].msg_has) {
			CHECK_ROW(rows[i].line, strstr(msg, rows[i].msg_has) != NULL, "message '%s' lacks '%s'", msg,
				  rows[i].msg_has);
			CHECK_ROW(rows[i].line, strchr(msg, '\n') == NULL, "one line: '%s'", msg);
		}
	}
	return check_finish();
}
