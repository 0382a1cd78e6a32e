/* SPDX-License-Identifier: MIT */
/* The JSON report and the dashboard formats: contract fields, escaping, atomic writes, clean errors. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "fixtures.h"
#include "report.h"

static json_t *get(json_t *o, const char *path)
{
	/* Dotted path lookup: "environment.thp.enabled", array index as a number. */
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *tok = strtok_r(buf, ".", &save); tok && o; tok = strtok_r(NULL, ".", &save))
		o = json_is_array(o) ? json_array_get(o, strtoul(tok, NULL, 10)) : json_object_get(o, tok);
	return o;
}

static int count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.' || strncmp(e->d_name, ".tlbprof", 8) == 0;
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	struct phase_result r[2];
	const double s4k[] = { 50.9, 50.5, 51.2 }, s2m[] = { 34.3, 34.1, 34.6 };
	struct environment env;
	struct timing_calibration clk = { .clock_overhead_ns = 20, .clock_resolution_ns = 1, .core_clock_ghz = 3.6,
					  .core_clock_method = "dependent_add_chain", .core_clock_runs = 9 };
	char *argv[] = { "tlbprof", "--workload", "chase", "--pages", "4k,2m", NULL };
	struct tlbprof_config cfg = { .workload = workload_find("chase"), .argc = 5, .argv = argv };
	struct analysis a;
	char dir[] = "/tmp/tlbprof-report-XXXXXX", path[300], err[300];

	memset(&env, 0, sizeof(env));
	strcpy(env.cpu_vendor, "AuthenticAMD");
	strcpy(env.kernel, "Linux 6.1.0");
	strcpy(env.thp_enabled, "madvise");
	strcpy(env.hypervisor, "KVM");
	env.perf_event_paranoid = 2;
	env.n_pools = 1;
	env.pools[0] = (struct env_hugepool){ .page_bytes = 2u << 20 };
	fixture_phase(&r[0], "chase/4k/256M/r0", "4k", 256ull << 20, 20000000, s4k, 3, 0, -1);
	fixture_phase(&r[1], "chase/2m/256M/r0", "2m", 256ull << 20, 20000000, s2m, 3, 0, -1);
	struct run_results rr = { .phases = r, .n = 2 };
	analysis_run(r, 2, &env, &clk, &a);
	struct report_input in = { .cfg = &cfg, .env = &env, .clock = &clk, .results = &rr, .analysis = &a,
				   .pmu_name = "none" };

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(path, sizeof(path), "%s/r.json", dir);
	CHECK(report_write_json(&in, path, err, sizeof(err)) == 0, "write: %s", err);
	CHECK(count_files(dir) == 1, "exactly the report, no temporary file left (%d)", count_files(dir));

	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr);
	CHECK(root != NULL, "report parses: %s", jerr.text);
	CHECK(json_is_string(get(root, "schema")) && strcmp(json_string_value(get(root, "schema")), REPORT_SCHEMA) == 0,
	      "schema");
	CHECK(strcmp(json_string_value(get(root, "tool.name")), "tlbprof") == 0, "tool.name");
	CHECK(json_array_size(get(root, "command")) == 5, "command recorded");
	CHECK(strcmp(json_string_value(get(root, "environment.hypervisor")), "KVM") == 0, "hypervisor");
	CHECK(json_integer_value(get(root, "environment.perf_event_paranoid")) == 2, "paranoid");
	CHECK(json_is_real(get(root, "environment.core_clock_ghz")), "core clock");
	CHECK(json_is_object(get(root, "environment.hugepages.2M")), "pool keyed by size");
	CHECK(json_array_size(get(root, "phases")) == 2, "two phases");
	CHECK(strcmp(json_string_value(get(root, "phases.0.name")), "chase/4k/256M/r0") == 0, "phase name");
	CHECK(strcmp(json_string_value(get(root, "phases.0.page.backing")), "base") == 0, "4k backing");
	CHECK(json_integer_value(get(root, "phases.0.page.kernel_page_bytes")) == 4096, "kernel page");
	CHECK(strcmp(json_string_value(get(root, "phases.1.page.backing")), "thp") == 0, "2m backing");
	CHECK(json_real_value(get(root, "phases.0.ns_per_access.median")) == 50.9, "median");
	CHECK(json_real_value(get(root, "phases.0.ns_per_access.min")) == 50.5, "min");
	CHECK(json_array_size(get(root, "phases.0.ns_per_access.samples")) == 3, "every sample kept");
	CHECK_NEAR(json_real_value(get(root, "phases.0.cycles_per_access.median")), 50.9 * 3.9, 1e-9);
	CHECK(json_integer_value(get(root, "phases.0.params.size_bytes")) == 256 << 20, "size");
	CHECK(json_is_null(get(root, "phases.0.params.cpu")), "cpu null when not pinned");
	CHECK(json_is_object(get(root, "phases.0.counters.page-faults")), "software counter present");
	CHECK(get(root, "phases.0.counters.dTLB-load-misses") == NULL, "unsupported counter not shown as a value");
	CHECK(strcmp(json_string_value(get(root, "phases.0.self_checks.0.id")), "single_cycle") == 0, "self-check");
	CHECK(json_array_size(get(root, "analysis.comparisons")) == 1, "one comparison");
	CHECK(strcmp(json_string_value(get(root, "analysis.comparisons.0.method")), "differential") == 0, "method");
	CHECK(json_is_null(get(root, "analysis.comparisons.0.ns_per_tlb_miss")), "no per-miss cost: null, not 0");
	CHECK(json_is_object(get(root, "analysis.comparisons.0.attribution")), "attribution");
	CHECK(json_array_size(get(root, "analysis.checks")) >= 5, "checks");
	CHECK(strcmp(json_string_value(get(root, "verdict")), "ok") == 0, "verdict");
	CHECK(json_is_false(get(root, "interrupted")), "not interrupted");
	json_decref(root);

	/* An earlier report survives a failed write; the error names the option. */
	char bad[320];
	snprintf(bad, sizeof(bad), "%s/missing/r.json", dir);
	CHECK(report_write_json(&in, bad, err, sizeof(err)) == -ENOENT, "missing directory: %s", err);
	CHECK(strstr(err, "--json") != NULL, "error names --json: %s", err);
	CHECK(count_files(dir) == 1, "nothing else created");

	/* The other formats, written to memory: the numbers in their places, and hostile names escaped. */
	static const struct {
		int line;
		enum output_format fmt;
		const char *has;
	} rows[] = {
		{ __LINE__, OUTPUT_GBENCH, "\"real_time\": 50.899999999999999," },
		{ __LINE__, OUTPUT_GBENCH, "\"name\": \"chase/\\\"a,b\\\"<c>&\\n\"," },
		{ __LINE__, OUTPUT_GBENCH, "\"time_unit\": \"ns\"" },
		{ __LINE__, OUTPUT_GBENCH, "\"speedup\": " },
		{ __LINE__, OUTPUT_OPENMETRICS,
		  "tlbprof_access_latency_seconds{phase=\"chase/\\\"a,b\\\"<c>&\\n\",workload=\"chase\",page=\"4k\","
		  "size=\"256M\",stat=\"median\"} 5.09e-08\n" },
		{ __LINE__, OUTPUT_OPENMETRICS, "# UNIT tlbprof_access_latency_seconds seconds\n" },
		{ __LINE__, OUTPUT_OPENMETRICS, "tlbprof_verdict{verdict=\"ok\"} 1\n" },
		{ __LINE__, OUTPUT_OPENMETRICS, "\n# EOF\n" },
		{ __LINE__, OUTPUT_JUNIT,
		  "<testcase classname=\"tlbprof.phases\" "
		  "name=\"chase/&quot;a,b&quot;&lt;c&gt;&amp;&#10;\"" },
		{ __LINE__, OUTPUT_JUNIT,
		  "<testsuite name=\"tlbprof.phases\" tests=\"2\" failures=\"0\" errors=\"0\" "
		  "skipped=\"0\"" },
		{ __LINE__, OUTPUT_CSV, "# phase,value,unit,metric,running_pct,note\n" },
		{ __LINE__, OUTPUT_CSV, "\"chase/\"\"a,b\"\"<c>&\n\",50.9,ns,ns_per_access,,median of 3 samples\n" },
		{ __LINE__, OUTPUT_CSV, "chase/2m/256M/r0,<not supported>,,dTLB-load-misses,,no hardware PMU visible\n" },
		{ __LINE__, OUTPUT_JSON, "\"schema\": \"tlbprof.report/1\"" },
	};
	snprintf(r[0].spec.name, sizeof(r[0].spec.name), "chase/\"a,b\"<c>&\n");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *text = NULL;
		size_t len = 0;
		FILE *mf = open_memstream(&text, &len);
		int rc = report_format_write(&in, rows[i].fmt, mf);
		fclose(mf);
		CHECK_ROW(rows[i].line, rc == 0, "%s: %d", output_format_name(rows[i].fmt), rc);
		CHECK_ROW(rows[i].line, text && strstr(text, rows[i].has), "%s lacks '%s'", output_format_name(rows[i].fmt),
			  rows[i].has);
		if (rows[i].fmt == OUTPUT_OPENMETRICS)
			CHECK_ROW(rows[i].line, len > 6 && strcmp(text + len - 6, "# EOF\n") == 0, "ends with # EOF");
		free(text);
	}
	CHECK(strcmp(report_format_file_name(OUTPUT_OPENMETRICS), "tlbprof.prom") == 0, "file names");
	CHECK(strcmp(report_format_file_name(OUTPUT_JUNIT), "tlbprof.junit.xml") == 0, "file names");

	/* Every format goes through the same atomic writer: an error names --output and leaves nothing. */
	snprintf(bad, sizeof(bad), "%s/missing/tlbprof.prom", dir);
	CHECK(report_write_format(&in, OUTPUT_OPENMETRICS, bad, "--output", err, sizeof(err)) == -ENOENT,
	      "missing directory: %s", err);
	CHECK(strstr(err, "--output") != NULL, "error names --output: %s", err);
	char csv[320];
	snprintf(csv, sizeof(csv), "%s/r.csv", dir);
	CHECK(report_write_format(&in, OUTPUT_CSV, csv, "--output", err, sizeof(err)) == 0, "csv: %s", err);
	CHECK(count_files(dir) == 2, "the report and the CSV, no temporary file (%d)", count_files(dir));
	unlink(csv);

	unlink(path);
	rmdir(dir);
	analysis_free(&a);
	fixture_free(r, 2);
	return check_finish();
}
