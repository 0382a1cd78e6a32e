/* SPDX-License-Identifier: MIT */
/* The command line: defaults, good values, and one-line errors that name the option and value. */
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cmd/command.h"
#include "cmd/options.h"
#include "measure/workload.h"

#define MAX_ARGS 12

static const struct {
	int line;
	const char *args[MAX_ARGS];
	enum option_result want;
	const char *msg_has;	/* substring of the one-line error */
} rows[] = {
	{ __LINE__, { "--workload", "chase", "--pages", "4k,2m" }, OPTION_OK, NULL },
	{ __LINE__, { "--pages", "4k,2m:hugetlb,1g" }, OPTION_OK, NULL },
	{ __LINE__, { "--size", "64M,128M", "--stride", "64" }, OPTION_OK, NULL },
	{ __LINE__, { "--iters", "1k", "--repeat", "3", "--warmup-frac", "0", "--seed", "9" }, OPTION_OK, NULL },
	{ __LINE__, { "--layout", "aligned", "--cpu", "0", "-q", "--json", "-" }, OPTION_OK, NULL },
	/* -q with no file to write: nothing would come of the work (item 8 of issue 19). */
	{ __LINE__, { "--layout", "aligned", "-q" }, OPTION_USAGE, "--quiet: nothing to write" },
	{ __LINE__, { "-q", "--format", "csv", "--output", "-" }, OPTION_OK, NULL },
	{ __LINE__, { "-q", "--output", "csv=-" }, OPTION_OK, NULL },
	{ __LINE__, { "analyze", "/dev/null", "-q" }, OPTION_USAGE, "--quiet: nothing to write" },
	{ __LINE__, { "analyze", "/dev/null", "-q", "--fail-on", "warn" }, OPTION_USAGE, "--quiet: nothing to write" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--quiet" }, OPTION_USAGE, "--quiet: nothing to write" },
	{ __LINE__, { "env", "-q" }, OPTION_USAGE, "--quiet: nothing to write" },
	{ __LINE__, { "events", "-q" }, OPTION_USAGE, "--quiet: nothing to write" },
	{ __LINE__, { "run", "-q", "true" }, OPTION_USAGE, "--quiet: nothing to write" },
	{ __LINE__, { "--json", "-" }, OPTION_OK, NULL },
	{ __LINE__, { "--controls", "none", "--fail-on", "warn" }, OPTION_OK, NULL },
	{ __LINE__, { "--controls", "always", "--fail-on", "never" }, OPTION_OK, NULL },
	{ __LINE__, { "--controls", "sometimes" }, OPTION_USAGE, "--controls 'sometimes'" },
	{ __LINE__, { "--iters", "auto", "--precision", "0.005", "--time-budget", "2", "--realloc", "5" }, OPTION_OK, NULL },
	{ __LINE__, { "--precision", "0" }, OPTION_USAGE, "--precision '0'" },
	{ __LINE__, { "--precision", "1.5" }, OPTION_USAGE, "--precision '1.5'" },
	{ __LINE__, { "--time-budget", "-1" }, OPTION_USAGE, "--time-budget '-1'" },
	{ __LINE__, { "--realloc", "0" }, OPTION_USAGE, "--realloc '0'" },
	{ __LINE__, { "--iters", "automatic" }, OPTION_USAGE, "--iters 'automatic'" },
	{ __LINE__, { "--fail-on", "error" }, OPTION_USAGE, "--fail-on 'error'" },
	{ __LINE__, { "analyze", "/dev/null" }, OPTION_OK, NULL },
	{ __LINE__, { "analyze", "/dev/null", "--json", "-", "--fail-on", "warn", "-q" }, OPTION_OK, NULL },
	{ __LINE__, { "analyze" }, OPTION_USAGE, "analyze: give the report" },
	{ __LINE__, { "analyze", "/dev/null", "/dev/zero" }, OPTION_USAGE, "'/dev/zero'" },
	{ __LINE__, { "analyze", "/no/such/report.json" }, OPTION_USAGE, "'/no/such/report.json'" },
	{ __LINE__, { "analyze", "/dev/null", "--size", "4K" }, OPTION_USAGE, "'--size' applies only to measuring" },
	{ __LINE__, { "analyze", "--controls=none", "/dev/null" }, OPTION_USAGE, "'--controls'" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null" }, OPTION_OK, NULL },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--threshold", "2.5", "--fail-on", "never", "--json", "-", "-q" },
	  OPTION_OK, NULL },
	{ __LINE__, { "compare", "--threshold=999.9", "/dev/null", "/dev/null" }, OPTION_OK, NULL },
	{ __LINE__, { "compare", "/dev/null" }, OPTION_USAGE, "compare: give two reports" },
	{ __LINE__, { "compare" }, OPTION_USAGE, "compare: give two reports" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "/dev/zero" }, OPTION_USAGE, "'/dev/zero'" },
	{ __LINE__, { "compare", "/dev/null", "/no/such/new.json" }, OPTION_USAGE, "'/no/such/new.json'" },
	{ __LINE__, { "compare", "/no/such/base.json", "/dev/null" }, OPTION_USAGE, "'/no/such/base.json'" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--threshold", "0" }, OPTION_USAGE, "--threshold '0'" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--threshold", "1000" }, OPTION_USAGE, "--threshold '1000'" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--threshold", "-5" }, OPTION_USAGE, "--threshold '-5'" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--threshold", "5%" }, OPTION_USAGE, "--threshold '5%'" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--threshold", "nan" }, OPTION_USAGE, "--threshold 'nan'" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--threshold" }, OPTION_USAGE, "'--threshold' needs a value" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--fail-on", "error" }, OPTION_USAGE, "--fail-on 'error'" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--size", "4K" }, OPTION_USAGE, "'--size' applies only to measuring" },
	{ __LINE__, { "compare", "/dev/null", "/dev/null", "--json", "/nonexistent/dir/c.json" }, OPTION_NO_OUTPUT,
	  "--json '/nonexistent/dir/c.json'" },
	{ __LINE__, { "--threshold", "5" }, OPTION_USAGE, "'--threshold'" },
	{ __LINE__, { "analyze", "/dev/null", "--threshold", "5" }, OPTION_USAGE, "'--threshold'" },
	{ __LINE__, { "env" }, OPTION_OK, NULL },
	{ __LINE__, { "env", "--json", "-", "-q" }, OPTION_OK, NULL },
	{ __LINE__, { "env", "extra" }, OPTION_USAGE, "env: unexpected argument 'extra'" },
	{ __LINE__, { "env", "--pages", "4k" }, OPTION_USAGE, "'--pages' applies only to measuring" },
	{ __LINE__, { "env", "--events-dir", "/no/such/dir" }, OPTION_USAGE, "--events-dir '/no/such/dir'" },
	{ __LINE__, { "events" }, OPTION_OK, NULL },
	{ __LINE__, { "events", "--pmu", "skl", "--json", "-" }, OPTION_OK, NULL },
	{ __LINE__, { "events", "--pmu", "amd64_fam19h_zen4", "-q", "--json", "-" }, OPTION_OK, NULL },
	{ __LINE__, { "events", "--pmu", "zen9" }, OPTION_USAGE, "--pmu 'zen9': no map" },
	{ __LINE__, { "events", "--pmu", "zen9" }, OPTION_USAGE, "(known: amd64_fam17h_zen2, amd64_fam19h_zen3," },
	{ __LINE__, { "events", "--pmu", "generic" }, OPTION_USAGE, "--pmu 'generic': generic is the fallback map, not a PMU" },
	{ __LINE__, { "events", "--pmu", "generic" }, OPTION_USAGE, "known PMUs: amd64_fam17h_zen2, amd64_fam19h_zen3," },
	{ __LINE__, { "events", "--pmu", "../events/skl" }, OPTION_USAGE, "--pmu '../events/skl'" },
	{ __LINE__, { "events", "--pmu" }, OPTION_USAGE, "needs a value" },
	{ __LINE__, { "events", "--stride", "64" }, OPTION_USAGE, "'--stride' applies only to measuring" },
	{ __LINE__, { "--pmu", "skl" }, OPTION_USAGE, "unknown option '--pmu'" },
	{ __LINE__, { "run", "--", "true" }, OPTION_OK, NULL },
	{ __LINE__, { "run", "-q", "--json", "-", "--fail-on", "warn", "true", "--size", "1M" }, OPTION_OK, NULL },
	{ __LINE__, { "run" }, OPTION_USAGE, "run: give the command" },
	{ __LINE__, { "run", "--", "/no/such/cmd" }, OPTION_USAGE, "'/no/such/cmd'" },
	{ __LINE__, { "run", "--control", "fd:x", "true" }, OPTION_USAGE, "--control 'fd:x'" },
	{ __LINE__, { "run", "--control", "fifo:", "true" }, OPTION_USAGE, "--control 'fifo:'" },
	{ __LINE__, { "run", "--delay", "-2", "true" }, OPTION_USAGE, "--delay '-2'" },
	{ __LINE__, { "run", "--realloc", "3", "true" }, OPTION_USAGE, "'--realloc' applies only to measuring" },
	/* run's own -r/--repeat (perf stat -r): runs of the command, not a workload's samples per allocation. */
	{ __LINE__, { "run", "--repeat", "3", "true" }, OPTION_OK, NULL },
	{ __LINE__, { "run", "-r", "0", "true" }, OPTION_USAGE, "--repeat '0'" },
	{ __LINE__, { "plot", "/dev/null", "-o", "-" }, OPTION_OK, NULL },
	{ __LINE__, { "plot", "-o", "/tmp/tlbprof-test-cli.svg", "/dev/null" }, OPTION_OK, NULL },
	{ __LINE__, { "plot", "/dev/null", "--output", "-" }, OPTION_OK, NULL },
	{ __LINE__, { "plot", "/dev/null", "--output=-" }, OPTION_OK, NULL },
	{ __LINE__, { "plot" }, OPTION_USAGE, "plot: give the report" },
	{ __LINE__, { "plot", "/dev/null" }, OPTION_USAGE, "plot: -o FILE is required" },
	{ __LINE__, { "plot", "/dev/null", "-o" }, OPTION_USAGE, "'-o' needs a value" },
	{ __LINE__, { "plot", "/dev/null", "-o", "" }, OPTION_USAGE, "-o ''" },
	{ __LINE__, { "plot", "/dev/null", "/dev/zero", "-o", "-" }, OPTION_USAGE, "'/dev/zero'" },
	{ __LINE__, { "plot", "/no/such/report.json", "-o", "-" }, OPTION_USAGE, "'/no/such/report.json'" },
	{ __LINE__, { "plot", "/dev/null", "-o", "/nonexistent/dir/p.svg" }, OPTION_NO_OUTPUT, "-o '/nonexistent/dir/p.svg'" },
	{ __LINE__, { "plot", "/dev/null", "-o", "/tmp" }, OPTION_NO_OUTPUT, "-o '/tmp'" },
	{ __LINE__, { "plot", "/dev/null", "-o", "/dev/null" }, OPTION_USAGE, "the report being drawn" },
	{ __LINE__, { "plot", "/dev/null", "-o", "-", "--size", "4K" }, OPTION_USAGE, "'--size'" },
	{ __LINE__, { "plot", "/dev/null", "-o", "-", "-q" }, OPTION_USAGE, "'-q'" },
	{ __LINE__, { "--workload", "nope" }, OPTION_USAGE, "--workload 'nope'" },
	{ __LINE__, { "--pages", "4k,,2m" }, OPTION_USAGE, "--pages '4k,,2m'" },
	{ __LINE__, { "--pages", "3m" }, OPTION_USAGE, "'3m'" },
	{ __LINE__, { "--pages", "4k,4k" }, OPTION_USAGE, "listed twice" },
	{ __LINE__, { "--pages", "" }, OPTION_USAGE, "--pages" },
	{ __LINE__, { "--size", "12Q" }, OPTION_USAGE, "--size '12Q'" },
	{ __LINE__, { "--size", "0" }, OPTION_USAGE, "--size '0'" },
	{ __LINE__, { "--size", "99999999999T" }, OPTION_USAGE, "out of range" },
	{ __LINE__, { "--stride", "3000" }, OPTION_USAGE, "--stride '3000'" },
	{ __LINE__, { "--stride", "4" }, OPTION_USAGE, "--stride '4'" },
	{ __LINE__, { "--stride", "1G" }, OPTION_USAGE, "--stride '1G'" },
	{ __LINE__, { "--size", "8K", "--stride", "8K" }, OPTION_USAGE, "--stride '8K'" },
	{ __LINE__, { "--iters", "0" }, OPTION_USAGE, "--iters '0'" },
	{ __LINE__, { "--iters", "many" }, OPTION_USAGE, "--iters 'many'" },
	{ __LINE__, { "--warmup-frac", "2" }, OPTION_USAGE, "--warmup-frac '2'" },
	{ __LINE__, { "--warmup-frac", "-0.1" }, OPTION_USAGE, "--warmup-frac '-0.1'" },
	{ __LINE__, { "--repeat", "0" }, OPTION_USAGE, "--repeat '0'" },
	{ __LINE__, { "--repeat", "1001" }, OPTION_USAGE, "--repeat '1001'" },
	{ __LINE__, { "--seed", "-1" }, OPTION_USAGE, "--seed '-1'" },
	{ __LINE__, { "--cpu", "4096" }, OPTION_USAGE, "--cpu '4096'" },
	{ __LINE__, { "--cpu", "x" }, OPTION_USAGE, "--cpu 'x'" },
	{ __LINE__, { "--layout", "diagonal" }, OPTION_USAGE, "--layout 'diagonal'" },
	{ __LINE__, { "--events-dir", "/nonexistent/dir" }, OPTION_USAGE, "--events-dir '/nonexistent/dir'" },
	{ __LINE__, { "--json", "/nonexistent/dir/r.json" }, OPTION_NO_OUTPUT, "--json '/nonexistent/dir/r.json'" },
	{ __LINE__, { "--format", "gbench,openmetrics,junit,csv,json", "--output", "/tmp" }, OPTION_OK, NULL },
	{ __LINE__, { "--format", "csv", "--output", "-" }, OPTION_OK, NULL },
	{ __LINE__, { "--output", "-" }, OPTION_OK, NULL },
	{ __LINE__, { "--format", "json", "--json", "-" }, OPTION_OK, NULL },
	{ __LINE__, { "--json", "-", "--format", "junit", "--output", "/tmp/" }, OPTION_OK, NULL },
	{ __LINE__, { "analyze", "/dev/null", "--format", "junit", "--output", "-" }, OPTION_OK, NULL },
	{ __LINE__, { "--format", "nope", "--output", "-" }, OPTION_USAGE, "--format 'nope'" },
	{ __LINE__, { "--format", "csv,csv", "--output", "/tmp" }, OPTION_USAGE, "--format 'csv,csv': 'csv' listed twice" },
	{ __LINE__, { "--format", "json,,csv", "--output", "/tmp" }, OPTION_USAGE, "--format 'json,,csv'" },
	{ __LINE__, { "--format", "csv" }, OPTION_USAGE, "--format 'csv': give --output" },
	{ __LINE__, { "--format", "json,csv", "--json", "-" }, OPTION_USAGE, "--format 'json,csv'" },
	{ __LINE__, { "--format", "csv,junit", "--output", "/tmp/r.csv" }, OPTION_USAGE, "--output '/tmp/r.csv'" },
	{ __LINE__, { "--format", "csv,junit", "--output", "-" }, OPTION_USAGE, "--output '-'" },
	{ __LINE__, { "--output", "/nonexistent/dir/" }, OPTION_USAGE, "--output '/nonexistent/dir/'" },
	{ __LINE__, { "--output", "-", "--json", "-" }, OPTION_USAGE, "--output '-'" },
	{ __LINE__, { "--output", "/tmp/r.json", "--json", "/tmp/r.json" }, OPTION_USAGE, "--output '/tmp/r.json'" },
	{ __LINE__, { "--output", "" }, OPTION_USAGE, "--output ''" },
	{ __LINE__, { "--output", "/nonexistent/dir/r.prom" }, OPTION_NO_OUTPUT, "--output '/nonexistent/dir/r.prom'" },
	{ __LINE__, { "analyze", "/dev/null", "--format", "gbench" }, OPTION_USAGE, "--format 'gbench'" },
	/* --output FORMAT=PATH: each format to its own file. */
	{ __LINE__, { "--output", "junit=/tmp/j.xml,gbench=/tmp/g,1.json" }, OPTION_OK, NULL },
	{ __LINE__, { "--output", "junit=/tmp/j.xml", "--output", "csv=-" }, OPTION_OK, NULL },
	{ __LINE__, { "--format", "junit", "--output", "junit=/tmp/j.xml" }, OPTION_OK, NULL },
	{ __LINE__, { "--format", "csv", "--output", "./junit=x.csv" }, OPTION_OK, NULL },
	{ __LINE__, { "analyze", "/dev/null", "--output", "openmetrics=/tmp/n.prom" }, OPTION_OK, NULL },
	{ __LINE__, { "--format", "junit,csv", "--output", "junit=/tmp/j.xml" }, OPTION_USAGE, "csv has no --output csv=PATH" },
	{ __LINE__, { "--format", "csv", "--output", "junit=/tmp/j.xml,csv=/tmp/c" }, OPTION_USAGE,
	  "--output 'junit=/tmp/j.xml': --format 'csv' does not name junit" },
	{ __LINE__, { "--output", "junit=/tmp/j.xml,csv=/tmp/j.xml" }, OPTION_USAGE,
	  "--output 'csv=/tmp/j.xml': the same file as junit" },
	{ __LINE__, { "--output", "junit=-,csv=-" }, OPTION_USAGE, "--output 'csv=-': the same stdout as junit" },
	{ __LINE__, { "--output", "junit=-", "--json", "-" }, OPTION_USAGE, "--output 'junit=-': the same stdout as --json" },
	{ __LINE__, { "--output", "json=/tmp/r.json", "--json", "/tmp/r.json" }, OPTION_USAGE, "the same file as --json" },
	{ __LINE__, { "--output", "junit=/tmp" }, OPTION_USAGE, "--output 'junit=/tmp': a directory" },
	{ __LINE__, { "--output", "junit=/nonexistent/" }, OPTION_USAGE, "--output 'junit=/nonexistent/': a directory" },
	{ __LINE__, { "--output", "junit=" }, OPTION_USAGE, "--output 'junit=': no path for junit" },
	{ __LINE__, { "--output", "junit=/tmp/a,csv=" }, OPTION_USAGE, "no path for csv" },
	{ __LINE__, { "--output", "junit=/tmp/a", "--output", "junit=/tmp/b" }, OPTION_USAGE, "junit given twice" },
	{ __LINE__, { "--output", "/tmp", "--output", "junit=/tmp/b" }, OPTION_USAGE, "cannot be combined with --output '/tmp'" },
	{ __LINE__, { "--output", "junit=/tmp/b", "--output", "/tmp" }, OPTION_USAGE, "--output '/tmp': cannot be combined" },
	{ __LINE__, { "--output", "junit=/nonexistent/dir/j.xml" }, OPTION_NO_OUTPUT,
	  "--output 'junit=/nonexistent/dir/j.xml'" },
	{ __LINE__, { "--bogus" }, OPTION_USAGE, "'--bogus'" },
	{ __LINE__, { "-x" }, OPTION_USAGE, "'-x'" },
	{ __LINE__, { "--size" }, OPTION_USAGE, "'--size' needs a value" },
	{ __LINE__, { "extra" }, OPTION_USAGE, "'extra'" },
};

/* Parse argv as main does; *cmd and *options get the command and its options (freed at the next call). */
static enum option_result parse(int argc, char **argv, const struct command **cmd, void **options, char *msg,
				size_t len)
{
	static void *last;

	free(last);
	last = NULL;
	msg[0] = '\0';
	enum option_result r = command_parse(argc, argv, cmd, options, msg, len);
	last = *options;
	return r;
}

int main(void)
{
	const struct command *cmd;
	void *opts;
	char msg[512];
	char *argv0[] = { "tlbprof", NULL };

	/* Defaults. */
	CHECK(parse(1, argv0, &cmd, &opts, msg, sizeof(msg)) == OPTION_OK, "no options runs: %s", msg);
	const struct measure_options *m = opts;
	const struct plan_request *req = &m->plan;
	CHECK(cmd == &command_measure, "no command: measuring");
	CHECK(req->workload && strcmp(req->workload->name, "chase") == 0, "default workload chase");
	CHECK(req->n_pages == 2 && strcmp(req->pages[0].label, "4k") == 0 && strcmp(req->pages[1].label, "2m") == 0,
	      "default pages 4k,2m");
	CHECK(req->n_sizes == 1 && req->sizes_bytes[0] == 256ull << 20, "default size 256M");
	CHECK(req->stride_bytes == 4096, "default stride 4K");
	CHECK(req->iterations_auto, "default iters auto");
	CHECK(req->precision == 0.01 && req->time_budget_s == 0.5 && req->allocations == 3, "auto defaults");
	CHECK(req->warmup_frac == 0.1, "default warmup 0.1");
	CHECK(req->repeat == 5 && req->seed == 1 && req->cpu == -1 && req->layout == LAYOUT_COLORED, "other defaults");
	CHECK(req->n_strides == 5 && req->strides_bytes[4] == 8192 && req->n_cases == 5 && req->processes == 5 &&
		      !req->dir && !req->child,
	      "workload defaults");
	CHECK(m->out.json_path == NULL && !m->out.quiet, "no json, not quiet");
	CHECK(m->controls == CONTROLS_AUTO && m->fail_on == FAIL_ON_FAIL && !m->is_child, "controls auto, fail-on fail");

	/* A workload's own defaults, unless the command line gives the option. */
	char *pf[] = { "tlbprof", "--workload", "pagefault", NULL };
	CHECK(parse(3, pf, &cmd, &opts, msg, sizeof(msg)) == OPTION_OK, "pagefault: %s", msg);
	req = &((const struct measure_options *)opts)->plan;
	CHECK(req->n_sizes == 1 && req->sizes_bytes[0] == 128ull << 20, "pagefault touches 128M");
	char *pf2[] = { "tlbprof", "--size", "8M", "--workload", "pagefault", NULL };
	CHECK(parse(5, pf2, &cmd, &opts, msg, sizeof(msg)) == OPTION_OK, "pagefault --size: %s", msg);
	req = &((const struct measure_options *)opts)->plan;
	CHECK(req->n_sizes == 1 && req->sizes_bytes[0] == 8ull << 20, "--size before --workload still counts");
	char *ts[] = { "tlbprof", "--workload", "tlbsize", NULL };
	CHECK(parse(3, ts, &cmd, &opts, msg, sizeof(msg)) == OPTION_OK, "tlbsize: %s", msg);
	req = &((const struct measure_options *)opts)->plan;
	CHECK(!req->iterations_auto && req->iterations == 200000, "tlbsize: 200k accesses a sample");
	char *ts2[] = { "tlbprof", "--workload", "tlbsize", "--iters", "auto", NULL };
	CHECK(parse(5, ts2, &cmd, &opts, msg, sizeof(msg)) == OPTION_OK, "tlbsize --iters auto: %s", msg);
	CHECK(((const struct measure_options *)opts)->plan.iterations_auto, "tlbsize with --iters auto");
	char *ch[] = { "tlbprof", "--internal-child", "3:7:/tmp/f", NULL };
	CHECK(parse(3, ch, &cmd, &opts, msg, sizeof(msg)) == OPTION_OK, "--internal-child: %s", msg);
	m = opts;
	CHECK(m->is_child && m->plan.child == &m->child && m->child.phase == 3 && m->child.fd == 7 &&
		      strcmp(m->child.file, "/tmp/f") == 0,
	      "the child protocol");

	/* analyze takes its report and keeps the command as typed (getopt must not permute argv). */
	char *an[] = { "tlbprof", "analyze", "r.json", "--json", "-", NULL };
	char *an_copy[] = { "tlbprof", "analyze", "r.json", "--json", "-", NULL };
	CHECK(parse(5, an, &cmd, &opts, msg, sizeof(msg)) == OPTION_USAGE, "r.json does not exist here: %s", msg);
	for (int i = 0; i < 5; i++)
		CHECK(strcmp(an[i], an_copy[i]) == 0, "argv[%d] unchanged: %s", i, an[i]);
	char *an2[] = { "tlbprof", "analyze", "--fail-on", "warn", "/dev/null", NULL };
	CHECK(parse(5, an2, &cmd, &opts, msg, sizeof(msg)) == OPTION_OK, "analyze parses: %s", msg);
	const struct analyze_options *ao = opts;
	CHECK(strcmp(cmd->name, "analyze") == 0 && strcmp(ao->input_path, "/dev/null") == 0 && ao->fail_on == FAIL_ON_WARN,
	      "analyze options");
	char *pl[] = { "tlbprof", "plot", "/dev/null", "-o", "-", NULL };
	CHECK(parse(5, pl, &cmd, &opts, msg, sizeof(msg)) == OPTION_OK, "plot parses: %s", msg);
	const struct plot_options *po = opts;
	CHECK(strcmp(cmd->name, "plot") == 0 && strcmp(po->input_path, "/dev/null") == 0 &&
		      strcmp(po->output_path, "-") == 0,
	      "plot options");

	/* compare takes two reports; by default only a check that now fails fails it (--fail-on fail). */
	char *cm[] = { "tlbprof", "compare", "/dev/null", "/dev/zero", NULL };
	CHECK(parse(4, cm, &cmd, &opts, msg, sizeof(msg)) == OPTION_OK, "compare parses: %s", msg);
	const struct compare_options *co = opts;
	CHECK(strcmp(cmd->name, "compare") == 0 && strcmp(co->base_path, "/dev/null") == 0 &&
		      strcmp(co->new_path, "/dev/zero") == 0 && co->fail_on == FAIL_ON_FAIL && co->threshold_pct == 5,
	      "compare options");
	char *cm2[] = { "tlbprof", "compare", "--threshold", "2", "--fail-on", "warn", "/dev/null", "/dev/zero", NULL };
	CHECK(parse(8, cm2, &cmd, &opts, msg, sizeof(msg)) == OPTION_OK, "compare options: %s", msg);
	co = opts;
	CHECK(co->threshold_pct == 2 && co->fail_on == FAIL_ON_WARN, "compare threshold and fail-on");
	/* --threshold twice: the last one counts (tlbprof-compare(1) says so). */
	char *cm3[] = { "tlbprof", "compare", "--threshold", "50", "--threshold", "7", "/dev/null", "/dev/zero", NULL };
	CHECK(parse(8, cm3, &cmd, &opts, msg, sizeof(msg)) == OPTION_OK, "--threshold twice: %s", msg);
	CHECK(((const struct compare_options *)opts)->threshold_pct == 7, "the last --threshold");
	/* run: CMD's own options stay CMD's; its argv points into the caller's argv and ends in NULL. */
	char *rn[] = { "tlbprof", "run", "--cpu", "0", "true", "--json", "x", NULL };
	CHECK(parse(7, rn, &cmd, &opts, msg, sizeof(msg)) == OPTION_OK, "run parses: %s", msg);
	const struct run_options *ro = opts;
	CHECK(strcmp(cmd->name, "run") == 0 && ro->argv == rn + 4 && ro->out.json_path == NULL && ro->cpu == 0 &&
		      ro->ctl_fd == -1 && !ro->start_disabled && ro->sample == SAMPLE_NONE,
	      "run options");
	/* --format LIST in its order; --output alone is json; a directory takes one file per format. */
	char *fo[] = { "tlbprof", "--format", "junit,gbench", "--output", "/tmp", NULL };
	CHECK(parse(5, fo, &cmd, &opts, msg, sizeof(msg)) == OPTION_OK, "formats parse: %s", msg);
	const struct report_outputs *out = &((const struct measure_options *)opts)->out;
	CHECK(out->n_formats == 2 && out->formats[0] == OUTPUT_JUNIT && out->formats[1] == OUTPUT_GBENCH && out->output_dir,
	      "two formats into a directory");
	char *fo2[] = { "tlbprof", "--output", "-", NULL };
	CHECK(parse(3, fo2, &cmd, &opts, msg, sizeof(msg)) == OPTION_OK, "--output alone: %s", msg);
	out = &((const struct measure_options *)opts)->out;
	CHECK(out->n_formats == 1 && out->formats[0] == OUTPUT_JSON && !out->output_dir, "--output alone is json to a file");
	/* --output FORMAT=PATH: the formats in the order named; a comma ends a path only before the next FORMAT=. */
	char *fm[] = { "tlbprof", "--output", "junit=/tmp/j.xml,gbench=/tmp/g,1.json", "--output", "csv=-", NULL };
	CHECK(parse(5, fm, &cmd, &opts, msg, sizeof(msg)) == OPTION_OK, "FORMAT=PATH parses: %s", msg);
	out = &((const struct measure_options *)opts)->out;
	CHECK(out->n_formats == 3 && out->formats[0] == OUTPUT_JUNIT && out->formats[1] == OUTPUT_GBENCH &&
		      out->formats[2] == OUTPUT_CSV && !out->output_dir && !out->output_path,
	      "three formats, each to its own file");
	CHECK(strcmp(out->format_paths[OUTPUT_JUNIT], "/tmp/j.xml") == 0 &&
		      strcmp(out->format_paths[OUTPUT_GBENCH], "/tmp/g,1.json") == 0 &&
		      strcmp(out->format_paths[OUTPUT_CSV], "-") == 0 && !out->format_paths[OUTPUT_JSON],
	      "paths: %s %s", out->format_paths[OUTPUT_JUNIT], out->format_paths[OUTPUT_GBENCH]);
	/* A dangling symlink is checked where the write lands: the directory of the file it names. */
	char link_dir[] = "/tmp/tlbprof-cli-XXXXXX", link[64], lost[64];
	CHECK(mkdtemp(link_dir) != NULL, "mkdtemp");
	snprintf(link, sizeof(link), "%s/r.json", link_dir);
	snprintf(lost, sizeof(lost), "%s/r.prom", link_dir);
	CHECK(symlink("missing/r.json", link) == 0 && symlink("r.prom.new", lost) == 0, "symlinks");
	char *dl[] = { "tlbprof", "--json", link, NULL };
	CHECK(parse(3, dl, &cmd, &opts, msg, sizeof(msg)) == OPTION_NO_OUTPUT, "a link into a missing directory: %s", msg);
	char *dl2[] = { "tlbprof", "--output", lost, "--format", "openmetrics", NULL };
	CHECK(parse(5, dl2, &cmd, &opts, msg, sizeof(msg)) == OPTION_OK, "a dangling link whose file can be made: %s", msg);
	unlink(link);
	unlink(lost);
	rmdir(link_dir);
	char *fo3[] = { "tlbprof", "--format", "json", "--json", "r.json", NULL };
	CHECK(parse(5, fo3, &cmd, &opts, msg, sizeof(msg)) == OPTION_OK, "--format json --json: %s", msg);
	out = &((const struct measure_options *)opts)->out;
	CHECK(out->n_formats == 0 && strcmp(out->json_path, "r.json") == 0, "--format json --json FILE is --json FILE");

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *argv[MAX_ARGS + 2] = { "tlbprof" };
		int argc = 1;
		for (int k = 0; k < MAX_ARGS && rows[i].args[k]; k++)
			argv[argc++] = (char *)rows[i].args[k];
		argv[argc] = NULL;
		enum option_result r = parse(argc, argv, &cmd, &opts, msg, sizeof(msg));
		CHECK_ROW(rows[i].line, r == rows[i].want, "result %d, want %d (%s)", r, rows[i].want, msg);
		if (rows[i].msg_has) {
			CHECK_ROW(rows[i].line, strstr(msg, rows[i].msg_has) != NULL, "message '%s' lacks '%s'", msg,
				  rows[i].msg_has);
			CHECK_ROW(rows[i].line, strchr(msg, '\n') == NULL, "one line: '%s'", msg);
		}
	}
	parse(1, argv0, &cmd, &opts, msg, sizeof(msg));
	free(opts);
	return check_finish();
}
