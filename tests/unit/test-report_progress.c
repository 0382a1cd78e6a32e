/* SPDX-License-Identifier: MIT */
/* The progress line's text: phase i/N, elapsed, the time left from the pace so far, and the cut to the terminal. */
#include <string.h>

#include "check.h"
#include "report.h"

static void test_format(void)
{
	static const struct {
		int line;
		size_t index, n;
		double elapsed_s;
		size_t len;
		const char *want;
	} rows[] = {
		/* Before the first phase ends there is no pace to extrapolate. */
		{ __LINE__, 0, 3, 1.25, 256, "tlbprof: phase 1/3 chase/4k/256M/r0, 1.2 s elapsed" },
		/* 2 of 5 done in 4 s: 3 more at 2 s each. */
		{ __LINE__, 2, 5, 4.0, 256, "tlbprof: phase 3/5 chase/4k/256M/r0, 4.0 s elapsed, about 6 s left" },
		{ __LINE__, 1, 60, 3.0, 256, "tlbprof: phase 2/60 chase/4k/256M/r0, 3.0 s elapsed, about 2 min 57 s left" },
		{ __LINE__, 1, 5000, 3.0, 256, "tlbprof: phase 2/5000 chase/4k/256M/r0, 3.0 s elapsed, about 4 h 09 min left" },
		/* The last phase: nothing left to extrapolate. */
		{ __LINE__, 4, 5, 9.0, 256, "tlbprof: phase 5/5 chase/4k/256M/r0, 9.0 s elapsed, about 2 s left" },
		/* Cut to the terminal: len - 1 characters. */
		{ __LINE__, 2, 5, 4.0, 19, "tlbprof: phase 3/5" },
		{ __LINE__, 2, 5, 4.0, 1, "" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char buf[256];
		size_t n = report_progress_format(buf, rows[i].len, rows[i].index, rows[i].n, "chase/4k/256M/r0",
						  rows[i].elapsed_s);
		CHECK_ROW(rows[i].line, strcmp(buf, rows[i].want) == 0, "'%s', expected '%s'", buf, rows[i].want);
		CHECK_ROW(rows[i].line, n == strlen(rows[i].want), "length %zu, expected %zu", n, strlen(rows[i].want));
	}
}

/*
 * Drawn into a file (not a terminal: 80 columns assumed): nothing in the
 * first second, and nothing to clear at the end when nothing was drawn.
 */
static void test_quiet_first_second(void)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	struct report_progress p;

	CHECK(f != NULL, "open_memstream");
	if (!f)
		return;
	report_progress_start(&p, f);
	CHECK(p.width == 80, "width %zu for a non-terminal", p.width);
	report_progress_phase(&p, 0, 3, "chase/4k/256M/r0");
	report_progress_phase(&p, 1, 3, "chase/2m/256M/r0");
	report_progress_phase(&p, 3, 3, NULL);
	fclose(f);
	CHECK(size == 0, "%zu bytes drawn within the first second: '%s'", size, text);
	free(text);

	/* A run that has lasted longer: drawn in place, then cleared. */
	f = open_memstream(&text, &size);
	if (!f)
		return;
	report_progress_start(&p, f);
	p.start_ns -= 2000000000ull;
	report_progress_phase(&p, 1, 4, "chase/2m/256M/r0");
	report_progress_phase(&p, 4, 4, NULL);
	fclose(f);
	/* The elapsed time is 2 s and however long this test was descheduled: only its form is checked. */
	const char *want = "\r\033[Ktlbprof: phase 2/4 chase/2m/256M/r0, ";
	CHECK(strncmp(text, want, strlen(want)) == 0 && strstr(text, " s elapsed, about ") != NULL, "drawn: '%s'", text);
	CHECK(size >= 4 && strcmp(text + size - 4, "\r\033[K") == 0, "not cleared at the end: '%s'", text);
	CHECK(!p.shown, "still marked shown");
	free(text);
}

int main(void)
{
	test_format();
	test_quiet_first_second();
	return check_finish();
}
