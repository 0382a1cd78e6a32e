/* SPDX-License-Identifier: MIT */
/* The JSON report and the dashboard formats: contract fields, escaping, atomic writes, clean errors. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fixtures.h"
#include "report/report.h"
#include "report/internal.h"

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

#define R "\xef\xbf\xbd"	/* U+FFFD */

/* Arbitrary bytes to well-formed UTF-8 (Unicode Table 3-7), and the escapes of each format. */
static void test_text(void)
{
	static const struct {
		int line;
		const char *in, *out;	/* out == in: valid */
	} utf8[] = {
		{ __LINE__, "", "" },
		{ __LINE__, "plain ascii, <&>", "plain ascii, <&>" },
		{ __LINE__, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
		{ __LINE__, "\xef\xbf\xbf\xf4\x8f\xbf\xbf", "\xef\xbf\xbf\xf4\x8f\xbf\xbf" },	/* U+FFFF, U+10FFFF */
		{ __LINE__, "\xff", R },
		{ __LINE__, "a\xfe\xff b", "a" R R " b" },
		{ __LINE__, "\x80", R },				/* a lone continuation byte */
		{ __LINE__, "\xc0\xaf", R R },			/* overlong '/' */
		{ __LINE__, "\xc1\xbf", R R },
		{ __LINE__, "\xe0\x80\xaf", R R R },		/* overlong, 3 bytes */
		{ __LINE__, "\xf0\x80\x80\xaf", R R R R },	/* overlong, 4 bytes */
		{ __LINE__, "\xed\xa0\x80", R R R },		/* a surrogate (U+D800) */
		{ __LINE__, "\xf4\x90\x80\x80", R R R R },	/* above U+10FFFF */
		{ __LINE__, "\xf5\x80\x80\x80", R R R R },
		{ __LINE__, "\xc3", R },				/* cut short at the end */
		{ __LINE__, "\xe2\x82", R R },
		{ __LINE__, "\xe2\x82x\xc3\xa9", R R "x\xc3\xa9" },	/* cut short before more text */
		{ __LINE__, "we\"ird<&>\x01\xff\xfe dir/tr,ue", "we\"ird<&>\x01" R R " dir/tr,ue" },
	};
	for (size_t i = 0; i < sizeof(utf8) / sizeof(utf8[0]); i++) {
		bool valid = strcmp(utf8[i].in, utf8[i].out) == 0;
		char *got = report_utf8_dup(utf8[i].in);
		CHECK_ROW(utf8[i].line, got && strcmp(got, utf8[i].out) == 0, "'%s'", got ? got : "(null)");
		CHECK_ROW(utf8[i].line, report_utf8_valid(utf8[i].in) == valid, "valid should be %d", valid);
		CHECK_ROW(utf8[i].line, got && report_utf8_valid(got), "the result is valid");
		/* jansson's own check agrees on what is valid, and takes every result. */
		json_t *raw = json_string(utf8[i].in), *j = report_json_text(utf8[i].in);
		CHECK_ROW(utf8[i].line, (raw != NULL) == valid, "jansson disagrees");
		CHECK_ROW(utf8[i].line, j && strcmp(json_string_value(j), utf8[i].out) == 0, "JSON string");
		json_decref(raw);
		json_decref(j);
		free(got);
	}

	static const struct {
		int line;
		enum report_text how;
		const char *in, *out;
	} esc[] = {
		{ __LINE__, REPORT_TEXT_PLAIN, "a,\"b\"\n\xff", "a,\"b\"\n" R },
		{ __LINE__, REPORT_TEXT_XML, "a<b>&\"c\"\n\t\r\x01\xff'", "a&lt;b&gt;&amp;\"c\"\n\t&#13;" R R "'" },
		{ __LINE__, REPORT_TEXT_XML_ATTR, "a<b>&\"c\"\n\t\r\x01\xff", "a&lt;b&gt;&amp;&quot;c&quot;&#10;&#9;&#13;" R R },
		{ __LINE__, REPORT_TEXT_XML, "\xef\xbf\xbe\xef\xbf\xbf\xef\xbf\xbc", R R "\xef\xbf\xbc" },	/* U+FFFE, U+FFFF */
		{ __LINE__, REPORT_TEXT_XML, "caf\xc3\xa9", "caf\xc3\xa9" },
		{ __LINE__, REPORT_TEXT_OPENMETRICS, "a\\b\"c\nd\xff\t", "a\\\\b\\\"c\\nd" R "\t" },
		{ __LINE__, REPORT_TEXT_CSV_QUOTED, "a\"b,\n\xff", "a\"\"b,\n" R },
	};
	for (size_t i = 0; i < sizeof(esc) / sizeof(esc[0]); i++) {
		char *text = NULL;
		size_t len = 0;
		FILE *mf = open_memstream(&text, &len);
		report_put_text(mf, esc[i].in, esc[i].how);
		fclose(mf);
		CHECK_ROW(esc[i].line, text && strcmp(text, esc[i].out) == 0, "'%s'", text ? text : "(null)");
		free(text);
	}
}

/* Written files: the mode a plain write leaves, and symlinks followed to the file they name. */
static int emit_hello(FILE *f, const void *ctx)
{
	(void)ctx;
	return fputs("hello\n", f) == EOF ? -EIO : 0;
}

static void test_files(const char *dir)
{
	char path[300], link[300], target[300], err[300];
	struct stat st;
	mode_t old = umask(027);

	snprintf(path, sizeof(path), "%s/new.txt", dir);
	CHECK(report_write_file(path, "--json", "report", emit_hello, NULL, err, sizeof(err)) == 0, "%s", err);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640, "a new file: 0666 less the umask 027, got %o",
	      (unsigned)(st.st_mode & 0777));
	CHECK(chmod(path, 0600) == 0, "chmod");
	CHECK(report_write_file(path, "--json", "report", emit_hello, NULL, err, sizeof(err)) == 0, "%s", err);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "a replaced file keeps its mode, got %o",
	      (unsigned)(st.st_mode & 0777));
	umask(old);
	unlink(path);

	/* A dangling link (relative, through a second link): its file is created, the links stay links. */
	snprintf(link, sizeof(link), "%s/out.json", dir);
	snprintf(target, sizeof(target), "%s/real.json", dir);
	snprintf(path, sizeof(path), "%s/mid.json", dir);
	CHECK(symlink("mid.json", link) == 0 && symlink("real.json", path) == 0, "symlinks");
	char *t = report_link_target(link);
	CHECK(t && strcmp(t, target) == 0, "the end of the chain: %s", t ? t : "(null)");
	free(t);
	CHECK(report_write_file(link, "--json", "report", emit_hello, NULL, err, sizeof(err)) == 0, "%s", err);
	CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the link stays a link");
	CHECK(lstat(path, &st) == 0 && S_ISLNK(st.st_mode), "the middle link stays a link");
	CHECK(lstat(target, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 6, "its file was written");
	unlink(target);
	unlink(path);
	unlink(link);

	/* A loop of links: one clear error, nothing written. */
	CHECK(symlink("loop.json", link) == 0, "symlink");
	snprintf(path, sizeof(path), "%s/loop.json", dir);
	CHECK(symlink("out.json", path) == 0, "symlink");
	CHECK(report_write_file(link, "--json", "report", emit_hello, NULL, err, sizeof(err)) == -ELOOP, "%s", err);
	CHECK(strstr(err, "--json '") && strstr(err, "out.json"), "the error names the option and the path: %s", err);
	unlink(path);
	unlink(link);
}

int main(void)
{
	struct phase_result r[2];
	const double s4k[] = { 50.9, 50.5, 51.2 }, s2m[] = { 34.3, 34.1, 34.6 };
	struct environment env;
	struct timing_calibration clk = { .clock_overhead_ns = 20, .clock_resolution_ns = 1, .core_clock_ghz = 3.6,
					  .core_clock_method = "dependent_add_chain", .core_clock_runs = 9 };
	char *argv[] = { "tlbprof", "--workload", "chase", "--pages", "4k,2m", NULL };
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
	struct report_input in = { .argc = 5, .argv = argv, .workload = workload_find("chase"), .env = &env,
				   .clock = &clk, .results = &rr, .analysis = &a, .pmu_name = "none" };

	test_text();
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	test_files(dir);
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
		{ __LINE__, OUTPUT_JUNIT, "<testsuites name=\"tlbprof\" tests=\"" },
		{ __LINE__, OUTPUT_JUNIT, "\" failures=\"0\" errors=\"0\" time=\"" },	/* no "skipped" (junit-10.xsd) */
		{ __LINE__, OUTPUT_JUNIT, "<property name=\"workload\" value=\"chase\"/>" },
		{ __LINE__, OUTPUT_OPENMETRICS, "\ntlbprof_run{version=\"" },
		{ __LINE__, OUTPUT_GBENCH, "\"workload\": \"chase\"" },
		{ __LINE__, OUTPUT_CSV, "run,phase,value,unit,metric,running_pct,note\n" },
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
	/* Bytes that are not UTF-8 in the command and a phase name: every format stays UTF-8 and keeps the rest. */
	char *argv_raw[] = { "tlbprof", "--workload", "chase", "--dir", "/tmp/we\"ird<&>\x01\xff\xfe dir", NULL };
	in.argv = argv_raw;
	snprintf(r[0].spec.name, sizeof(r[0].spec.name), "chase/\xff\xfe/r0");
	for (int fmt = 0; fmt < OUTPUT_FORMATS; fmt++) {
		char *text = NULL;
		size_t len = 0;
		FILE *mf = open_memstream(&text, &len);
		int rc = report_format_write(&in, (enum output_format)fmt, mf);
		fclose(mf);
		CHECK(rc == 0 && text && report_utf8_valid(text), "%s: valid UTF-8", output_format_name(fmt));
		CHECK(text && strstr(text, "chase/" R R "/r0"), "%s: the phase name with U+FFFD", output_format_name(fmt));
		if (fmt == OUTPUT_JUNIT || fmt == OUTPUT_JSON || fmt == OUTPUT_GBENCH)
			CHECK(text && !strchr(text, '\x01'), "%s: no raw control character", output_format_name(fmt));
		if (fmt == OUTPUT_JSON) {
			json_t *doc = json_loads(text ? text : "", 0, NULL), *cmd = json_object_get(doc, "command");
			const char *last = json_string_value(json_array_get(cmd, 4));
			CHECK(json_array_size(cmd) == 5 && last && strcmp(last, "/tmp/we\"ird<&>\x01" R R " dir") == 0,
			      "the whole command, the bad bytes as U+FFFD: %s", last ? last : "(missing)");
			json_decref(doc);
		}
		if (fmt == OUTPUT_JUNIT)
			CHECK(text && strstr(text, "/tmp/we&quot;ird&lt;&amp;&gt;" R R R " dir"), "JUnit command property");
		free(text);
	}
	in.argv = argv;
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
