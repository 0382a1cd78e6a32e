/* SPDX-License-Identifier: MIT */
/* The command line: defaults, good values, and one-line errors that name the option and value. */
#include <string.h>

#include "check.h"
#include "cli.h"
#include "workload.h"

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
