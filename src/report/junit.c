/* SPDX-License-Identifier: MIT */
/* The report as JUnit XML for CI: the checks as one test suite, the phases as another. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/internal.h"
#include "report/report.h"
#include "version.h"

/* Text for XML 1.0 (report_put_text(): markup escaped, what XML cannot carry and invalid bytes as U+FFFD). */
static void xml_text(FILE *f, const char *s, bool attr)
{
	report_put_text(f, s, attr ? REPORT_TEXT_XML_ATTR : REPORT_TEXT_XML);
}

static void xml_attr(FILE *f, const char *key, const char *value)
{
	fprintf(f, " %s=\"", key);
	xml_text(f, value, true);
	fputc('"', f);
}

static void xml_property(FILE *f, const char *name, const char *value)
{
	fputs("      <property", f);
	xml_attr(f, "name", name);
	xml_attr(f, "value", value);
	fputs("/>\n", f);
}

/* Whether a check is a failed test: fail always, warn when --fail-on warn makes it fail the run. */
static bool junit_check_fails(enum check_status s, enum fail_on fail_on)
{
	return s == CHECK_FAIL || (s == CHECK_WARN && fail_on == FAIL_ON_WARN);
}

static void junit_suite_open(FILE *f, const char *name, size_t tests, size_t failures, size_t skipped, double time_s)
{
	fputs("  <testsuite", f);
	xml_attr(f, "name", name);
	fprintf(f, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\">\n", tests, failures,
		skipped, time_s);
}

static void junit_case_open(FILE *f, const char *classname, const char *name, double time_s)
{
	fputs("    <testcase", f);
	xml_attr(f, "classname", classname);
	xml_attr(f, "name", name);
	fprintf(f, " time=\"%.3f\">\n", time_s);
}

/*
 * What a measured phase found, for its <system-out>: ns per access, or for a
 * run phase that declared no accesses its occurrences and their wall time.
 */
static void junit_phase_out(const struct report_input *in, size_t i, FILE *f)
{
	const struct phase_result *r = &in->results->phases[i];
	bool wall_only = report_phase_wall_only(r);
	struct stats_summary st;
	char buf[64], back[48];

	if (wall_only) {
		st = report_phase_wall_stats(r);
		fprintf(f, "%zu occurrence%s: wall time median %s ns", r->target->n_wall, r->target->n_wall == 1 ? "" : "s",
			report_num_text(st.median, buf, sizeof(buf)));
	} else {
		st = report_phase_stats(in, i);
		fprintf(f, "%s ns per %s: median of %zu samples", report_num_text(st.median, buf, sizeof(buf)),
			r->spec.fault_case != FAULT_NONE ? "page" : "access", r->n_samples);
	}
	report_backing_label(r, back, sizeof(back));
	fprintf(f, ", min %s", report_num_text(st.min, buf, sizeof(buf)));
	fprintf(f, ", max %s\nbacking: ", report_num_text(st.max, buf, sizeof(buf)));
	xml_text(f, back, false);
	fputc('\n', f);
	for (size_t k = 0; k < r->n_self_checks; k++) {
		fprintf(f, "self-check %s: %s", r->self_checks[k].id, check_status_name(r->self_checks[k].status));
		if (*r->self_checks[k].message) {
			fputs(" (", f);
			xml_text(f, r->self_checks[k].message, false);
			fputc(')', f);
		}
		fputc('\n', f);
	}
	for (size_t k = 0; k < r->n_counters; k++) {
		if (!report_counter_counted(&r->counter_info[k], &r->counters[k]))
			continue;
		fprintf(f, "%s: %s", r->counter_info[k].name, report_num_text(r->counters[k].scaled, buf, sizeof(buf)));
		/* A rate only where the accesses are known. */
		if (!wall_only && report_phase_accesses(r) > 0)
			fprintf(f, " (%s per access)",
				report_num_text(r->counters[k].scaled / report_phase_accesses(r), buf, sizeof(buf)));
		fputc('\n', f);
	}
}

/* The run's facts as <properties> of the checks suite: version, command, machine, verdict. -ENOMEM or 0. */
static int junit_properties(const struct report_input *in, FILE *f)
{
	char *cmd = NULL;
	size_t cmd_len = 0;

	fputs("    <properties>\n", f);
	xml_property(f, "tlbprof.version", TLBPROF_VERSION);
	xml_property(f, "schema", REPORT_SCHEMA);
	FILE *cs = open_memstream(&cmd, &cmd_len);
	for (int i = 0; cs && i < in->argc; i++)
		fprintf(cs, "%s%s", i ? " " : "", in->argv[i]);
	if (!cs || fclose(cs) != 0) {
		free(cmd);
		return -ENOMEM;
	}
	xml_property(f, "command", cmd);
	free(cmd);
	xml_property(f, "workload", report_workload_of(in));
	xml_property(f, "cpu", in->env->cpu_model_name);
	xml_property(f, "kernel", in->env->kernel);
	xml_property(f, "hypervisor", in->env->hypervisor);
	xml_property(f, "fail_on", fail_on_name(in->fail_on));
	xml_property(f, "verdict", verdict_name(in->analysis->verdict));
	xml_property(f, "summary", in->analysis->summary);
	xml_property(f, "interrupted", in->results->interrupted ? "true" : "false");
	fputs("    </properties>\n", f);
	return 0;
}

/* The checks: what CI should fail on; failures and skipped as junit_check_fails() and CHECK_SKIP count them. */
static int junit_checks(const struct report_input *in, size_t failures, size_t skipped, FILE *f)
{
	const struct analysis *a = in->analysis;
	char buf[64];
	int rc;

	junit_suite_open(f, "tlbprof.checks", a->n_checks, failures, skipped, 0);
	if ((rc = junit_properties(in, f)) != 0)
		return rc;
	for (size_t i = 0; i < a->n_checks; i++) {
		const struct analysis_check *c = &a->checks[i];
		junit_case_open(f, "tlbprof.checks", c->id, 0);
		if (c->status == CHECK_SKIP) {
			fputs("      <skipped", f);
			xml_attr(f, "message", c->message);
			fputs("/>\n", f);
		} else if (junit_check_fails(c->status, in->fail_on)) {
			fputs("      <failure", f);
			xml_attr(f, "message", c->message);
			xml_attr(f, "type", check_status_name(c->status));
			fputc('>', f);
			xml_text(f, c->message, false);
			for (size_t k = 0; k < c->evidence.n; k++)
				if (isfinite(c->evidence.items[k].value))
					fprintf(f, "\n%s = %s", c->evidence.items[k].key,
						report_num_text(c->evidence.items[k].value, buf, sizeof(buf)));
			fputs("</failure>\n", f);
		} else {
			/* A pass, or a warning that does not fail the run: passing, the message kept. */
			fprintf(f, "      <system-out>%s", c->status == CHECK_WARN ? "warning: " : "");
			xml_text(f, c->message, false);
			fputs("</system-out>\n", f);
		}
		fputs("    </testcase>\n", f);
	}
	fputs("  </testsuite>\n", f);
	return 0;
}

/* The phases: one that could not be measured is a failed test, a skipped one skipped. */
static void junit_phases(const struct report_input *in, size_t failures, size_t skipped, double time_s, FILE *f)
{
	const struct run_results *rr = in->results;

	junit_suite_open(f, "tlbprof.phases", rr->n, failures, skipped, time_s);
	for (size_t i = 0; i < rr->n; i++) {
		const struct phase_result *r = &rr->phases[i];
		const char *why = *r->reason ? r->reason : phase_status_name(r->status);
		junit_case_open(f, "tlbprof.phases", r->spec.name, r->timed_ns > 0 ? r->timed_ns / 1e9 : 0);
		if (r->status == PHASE_SKIPPED) {
			fputs("      <skipped", f);
			xml_attr(f, "message", why);
			fputs("/>\n", f);
		} else if (!report_phase_measured(r) && !report_phase_wall_only(r)) {
			if (r->status == PHASE_OK)
				why = "no samples";
			fputs("      <failure", f);
			xml_attr(f, "message", why);
			xml_attr(f, "type", r->unavailable ? "unavailable" : "failed");
			fputc('>', f);
			xml_text(f, why, false);
			fputs("</failure>\n", f);
		} else {
			fputs("      <system-out>", f);
			junit_phase_out(in, i, f);
			fputs("</system-out>\n", f);
		}
		fputs("    </testcase>\n", f);
	}
	fputs("  </testsuite>\n", f);
}

int report_junit_write(const struct report_input *in, FILE *f)
{
	const struct run_results *rr = in->results;
	const struct analysis *a = in->analysis;
	size_t check_fail = 0, check_skip = 0, phase_fail = 0, phase_skip = 0;
	double phase_time = 0;
	int rc;

	for (size_t i = 0; i < a->n_checks; i++) {
		check_fail += junit_check_fails(a->checks[i].status, in->fail_on);
		check_skip += a->checks[i].status == CHECK_SKIP;
	}
	for (size_t i = 0; i < rr->n; i++) {
		phase_skip += rr->phases[i].status == PHASE_SKIPPED;
		phase_fail += rr->phases[i].status != PHASE_SKIPPED && !report_phase_measured(&rr->phases[i]) &&
			      !report_phase_wall_only(&rr->phases[i]);
		phase_time += rr->phases[i].timed_ns > 0 ? rr->phases[i].timed_ns / 1e9 : 0;
	}

	/*
	 * <testsuites> takes name, tests, failures, errors and time only: the
	 * Jenkins junit-10.xsd (xunit plugin) refuses "skipped" there; the skipped
	 * counts are on each <testsuite>.
	 */
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"tlbprof\"", f);
	fprintf(f, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" time=\"%.3f\">\n", a->n_checks + rr->n,
		check_fail + phase_fail, phase_time);
	if ((rc = junit_checks(in, check_fail, check_skip, f)) != 0)
		return rc;
	junit_phases(in, phase_fail, phase_skip, phase_time, f);
	fputs("</testsuites>\n", f);
	return 0;
}
