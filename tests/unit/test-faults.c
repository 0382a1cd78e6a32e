/* SPDX-License-Identifier: MIT */
/* Page-fault metrics derived from samples, and the page-fault checks firing and staying quiet. */
#include <string.h>

#include "judge/analysis.h"
#include "check.h"
#include "fixtures.h"

static void test_metrics(void)
{
	/* Two processes, two samples each: 51200 pages, one fault per page, 1.3 us per fault. */
	struct fault_sample s[4];
	struct fault_metrics fm;

	for (int i = 0; i < 4; i++)
		s[i] = (struct fault_sample){ .elapsed_ns = 51200 * (1300.0 + 100 * i), .pages = 51200, .minor = 51200,
					      .major = 0, .minor_rusage = 51200, .user_ns = 1e6, .sys_ns = 60e6,
					      .process = (unsigned)i / 2 };
	analysis_fault_metrics(s, 4, &fm);
	CHECK(fm.valid && fm.from_counters && fm.rusage_agrees, "counted, and getrusage agrees");
	CHECK_NEAR(fm.ns_per_fault.median, 1450, 1e-9);
	CHECK_NEAR(fm.ns_per_page.median, 1450, 1e-9);
	CHECK_NEAR(fm.pages_per_fault.median, 1, 1e-12);
	CHECK_NEAR(fm.minor, 51200, 1e-9);
	CHECK_NEAR(fm.user_s, 4e-3, 1e-12);
	CHECK_NEAR(fm.sys_s, 0.24, 1e-12);
	CHECK_NEAR(fm.mib_per_s.median, (200.0 / (51200 * 1400e-9) + 200.0 / (51200 * 1500e-9)) / 2, 1e-6);
	CHECK(fm.processes == 2, "two processes");
	/* Per-process medians 1350 and 1550: spread 200 / 1450. */
	CHECK_NEAR(fm.process_spread, 200.0 / 1450.0, 1e-12);

	/* File warm: fault-around maps 16 pages per fault. */
	struct fault_sample w = { .elapsed_ns = 3.2e6, .pages = 51200, .minor = 3200, .major = 0, .minor_rusage = 3200 };
	analysis_fault_metrics(&w, 1, &fm);
	CHECK_NEAR(fm.pages_per_fault.median, 16, 1e-12);
	CHECK_NEAR(fm.ns_per_fault.median, 1000, 1e-9);
	CHECK_NEAR(fm.ns_per_page.median, 62.5, 1e-9);

	/* No perf counters: getrusage stands in. */
	struct fault_sample r = { .elapsed_ns = 1e6, .pages = 1000, .minor = -1, .major = -1, .minor_rusage = 990,
				  .major_rusage = 10 };
	analysis_fault_metrics(&r, 1, &fm);
	CHECK(!fm.from_counters && fm.minor == 990 && fm.major == 10, "getrusage counts");
	CHECK_NEAR(fm.ns_per_fault.median, 1000, 1e-9);

	/* The counters and getrusage disagree. */
	struct fault_sample d = { .elapsed_ns = 1e6, .pages = 1000, .minor = 1000, .major = 0, .minor_rusage = 500 };
	analysis_fault_metrics(&d, 1, &fm);
	CHECK(!fm.rusage_agrees, "disagreement noticed");

	/* A prefaulted touch: no faults, no ns per fault. */
	struct fault_sample z = { .elapsed_ns = 1e6, .pages = 51200, .minor = 0, .major = 0 };
	analysis_fault_metrics(&z, 1, &fm);
	CHECK(fm.ns_per_fault.n == 0 && fm.pages_per_fault.n == 0, "no faults: no per-fault figures");

	analysis_fault_metrics(NULL, 0, &fm);
	CHECK(!fm.valid, "no samples");
}

/* A page-fault phase for case c with n samples of the given faults per sample. */
static void fault_phase(struct phase_result *r, int c, const char *page, double minor, double major, double resident,
			unsigned processes, double spread)
{
	const double ns[] = { 1000, 1000, 1000, 1000 };
	char name[64];

	snprintf(name, sizeof(name), "pagefault/%s/200M/%s/r0", page, fault_case_name(c));
	fixture_phase(r, name, page, 200u << 20, 51200, ns, 4, 0, -1);
	r->spec.workload = workload_find("pagefault");
	r->spec.fault_case = c;
	r->n_fault_samples = 4;
	r->fault_samples = calloc(4, sizeof(*r->fault_samples));
	for (unsigned i = 0; i < 4; i++) {
		unsigned p = processes > 1 ? i % processes : 0;
		r->fault_samples[i] = (struct fault_sample){
			.elapsed_ns = 51200 * 1000.0 * (1 + (p && spread > 0 ? spread : 0)), .pages = 51200, .minor = minor,
			.major = major, .minor_rusage = (uint64_t)(spread < 0 ? minor / 2 : minor), .major_rusage = (uint64_t)major,
			.resident_before = resident, .process = p };
	}
}

static const struct analysis_check *find_check(const struct analysis *a, const char *id)
{
	for (size_t i = 0; i < a->n_checks; i++)
		if (strcmp(a->checks[i].id, id) == 0)
			return &a->checks[i];
	return NULL;
}

static void free_faults(struct phase_result *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(r[i].fault_samples);
	fixture_free(r, n);
}

static const struct {
	int line;
	int fault_case;
	const char *page;
	double minor, major, resident;
	unsigned processes;
	double spread;
	const char *id;
	enum check_status want;
} rows[] = {
	{ __LINE__, FAULT_ANON_COLD, "4k", 51200, 0, 0, 1, 0, "anon_cold_faults_per_page", CHECK_PASS },
	{ __LINE__, FAULT_ANON_COLD, "2m", 100, 0, 0, 1, 0, "anon_cold_faults_per_page", CHECK_PASS },
	{ __LINE__, FAULT_ANON_COLD, "4k", 3200, 0, 0, 1, 0, "anon_cold_faults_per_page", CHECK_WARN },
	{ __LINE__, FAULT_ANON_PREFAULT, "4k", 0, 0, 0, 1, 0, "anon_prefault_no_faults", CHECK_PASS },
	{ __LINE__, FAULT_ANON_PREFAULT, "4k", 12, 0, 0, 1, 0, "anon_prefault_no_faults", CHECK_FAIL },
	{ __LINE__, FAULT_FILE_COLD, "4k", 3000, 200, 0.001, 1, 0, "file_cold_major_faults", CHECK_PASS },
	{ __LINE__, FAULT_FILE_COLD, "4k", 3200, 0, 0.0, 1, 0, "file_cold_major_faults", CHECK_FAIL },
	{ __LINE__, FAULT_ANON_COLD, "4k", 51200, 0, 0, 2, 0.02, "process_spread", CHECK_PASS },
	{ __LINE__, FAULT_ANON_COLD, "4k", 51200, 0, 0, 2, 0.30, "process_spread", CHECK_WARN },
	{ __LINE__, FAULT_ANON_COLD, "4k", 51200, 0, 0, 1, 0, "process_spread", CHECK_SKIP },
	{ __LINE__, FAULT_ANON_COLD, "4k", 51200, 0, 0, 1, 0, "fault_counts_agree", CHECK_PASS },
	{ __LINE__, FAULT_ANON_COLD, "4k", 51200, 0, 0, 1, -1, "fault_counts_agree", CHECK_WARN },
	{ __LINE__, FAULT_ANON_COLD, "2m:hugetlb", 100, 0, 0, 1, 0, "anon_cold_faults_per_page", CHECK_PASS },
	{ __LINE__, FAULT_ANON_COLD, "4k", 51200, 0, 0, 1, 0, "faults_in_timed_phase", CHECK_SKIP },
};

static void test_checks(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct phase_result r;
		struct analysis a;
		fault_phase(&r, rows[i].fault_case, rows[i].page, rows[i].minor, rows[i].major, rows[i].resident,
			    rows[i].processes, rows[i].spread);
		analysis_run(&r, 1, NULL, NULL, &a);
		const struct analysis_check *c = find_check(&a, rows[i].id);
		CHECK_ROW(rows[i].line, c && c->status == rows[i].want, "%s: %s, want %s: %s", rows[i].id,
			  c ? check_status_name(c->status) : "missing", check_status_name(rows[i].want), c ? c->message : "");
		analysis_free(&a);
		free_faults(&r, 1);
	}

	/* A file_cold phase skipped because the file stayed resident. */
	struct phase_result r;
	struct analysis a;
	fault_phase(&r, FAULT_FILE_COLD, "4k", 0, 0, 1.0, 1, 0);
	r.status = PHASE_SKIPPED;
	strcpy(r.reason, "could not evict the data file: 100.0 % still resident");
	analysis_run(&r, 1, NULL, NULL, &a);
	const struct analysis_check *c = find_check(&a, "file_cold_major_faults");
	CHECK(c && c->status == CHECK_SKIP && strstr(c->message, "evicted"), "skipped file_cold: %s", c ? c->message : "");
	analysis_free(&a);
	free_faults(&r, 1);

	/* Comparisons pair a case with the same case only. */
	struct phase_result two[3];
	fault_phase(&two[0], FAULT_ANON_COLD, "4k", 51200, 0, 0, 1, 0);
	fault_phase(&two[1], FAULT_ANON_REFAULT, "2m", 100, 0, 0, 1, 0);
	fault_phase(&two[2], FAULT_ANON_COLD, "2m", 100, 0, 0, 1, 0);
	analysis_run(two, 3, NULL, NULL, &a);
	CHECK(a.n_comparisons == 1 && a.comparisons[0].baseline == 0 && a.comparisons[0].variant == 2,
	      "anon_cold 4k vs anon_cold 2m only: %zu", a.n_comparisons);
	CHECK(strstr(a.summary, "anon_cold on 4k: 1000 ns per page, 1000 ns per fault"), "summary: %s", a.summary);
	analysis_free(&a);
	free_faults(two, 3);
}

int main(void)
{
	test_metrics();
	test_checks();
	return check_finish();
}
