/* SPDX-License-Identifier: MIT */
/* The progress line's text: phase i/N, elapsed, the time left from the pace so far, and the cut to the terminal. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report/report.h"

static void test_format(void)
{
	static const struct {
		int line;
		size_t index, n;
		const char *name;
		double elapsed_s, phase_s;
		size_t len;
		const char *want;
	} rows[] = {
		/* Before the first phase ends there is no pace to extrapolate. */
		{ __LINE__, 0, 3, "chase/4k/256M/r0", 1.25, 0, 256, "tlbprof: phase 1/3 chase/4k/256M/r0, 1.2 s elapsed" },
		/* 2 of 5 done in 4 s: 3 more at 2 s each. */
		{ __LINE__, 2, 5, "chase/4k/256M/r0", 4.0, 0, 256,
		  "tlbprof: phase 3/5 chase/4k/256M/r0, 4.0 s elapsed, about 6 s left" },
		{ __LINE__, 1, 60, "chase/4k/256M/r0", 3.0, 0, 256,
		  "tlbprof: phase 2/60 chase/4k/256M/r0, 3.0 s elapsed, about 2 min 57 s left" },
		{ __LINE__, 1, 5000, "chase/4k/256M/r0", 3.0, 0, 256,
		  "tlbprof: phase 2/5000 chase/4k/256M/r0, 3.0 s elapsed, about 4 h 09 min left" },
		/* The last phase: its own pace is all that is left. */
		{ __LINE__, 4, 5, "chase/4k/256M/r0", 9.0, 0, 256,
		  "tlbprof: phase 5/5 chase/4k/256M/r0, 9.0 s elapsed, about 2 s left" },
		/* Inside a phase: 2 done in 4 s, 1 s into the third: 1 s of it and 2 more phases left. */
		{ __LINE__, 2, 5, "chase/4k/256M/r0", 5.0, 1.0, 256,
		  "tlbprof: phase 3/5 chase/4k/256M/r0, 5.0 s elapsed, about 5 s left" },
		/* A phase overrunning the pace leaves the estimate for the phases after it. */
		{ __LINE__, 2, 5, "chase/4k/256M/r0", 10.0, 6.0, 256,
		  "tlbprof: phase 3/5 chase/4k/256M/r0, 10.0 s elapsed, about 4 s left" },
		/* ... and nothing once the last phase has overrun it. */
		{ __LINE__, 4, 5, "chase/4k/256M/r0", 12.0, 4.0, 256, "tlbprof: phase 5/5 chase/4k/256M/r0, 12.0 s elapsed" },
		/* One long phase: nothing to extrapolate, the elapsed time grows. */
		{ __LINE__, 0, 1, "chase/4k/64M/r0", 2.75, 2.5, 256, "tlbprof: phase 1/1 chase/4k/64M/r0, 2.8 s elapsed" },
		/*
		 * Cut to the terminal (len - 1 characters): the name gives way
		 * first (its middle), the time left stays whole.
		 */
		{ __LINE__, 2, 5, "chase/2m:hugetlb/256M/r0", 4.0, 0, 64,
		  "tlbprof: phase 3/5 cha...256M/r0, 4.0 s elapsed, about 6 s left" },
		{ __LINE__, 2, 5, "chase/4k/256M/r0", 4.0, 0, 53, "tlbprof: phase 3/5, 4.0 s elapsed, about 6 s left" },
		{ __LINE__, 2, 5, "chase/4k/256M/r0", 4.0, 0, 43, "phase 3/5, 4.0 s elapsed, about 6 s left" },
		{ __LINE__, 2, 5, "chase/4k/256M/r0", 4.0, 0, 19, "phase 3/5, 4.0 s e" },
		{ __LINE__, 2, 5, "chase/4k/256M/r0", 4.0, 0, 1, "" },
		/* A name is never cut inside a UTF-8 character. */
		{ __LINE__, 0, 1, "\xc3\xa9\xc3\xa9\xc3\xa9-phase-\xc3\xaf\xc3\xaf\xc3\xaf\xc3\xafx", 1.5, 1.5, 49,
		  "tlbprof: phase 1/1 \xc3\xa9...\xc3\xaf\xc3\xaf\xc3\xafx, 1.5 s elapsed" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char buf[256];
		size_t n = report_progress_format(buf, rows[i].len, rows[i].index, rows[i].n, rows[i].name,
						  rows[i].elapsed_s, rows[i].phase_s);
		CHECK_ROW(rows[i].line, strcmp(buf, rows[i].want) == 0, "'%s', expected '%s'", buf, rows[i].want);
		CHECK_ROW(rows[i].line, n == strlen(rows[i].want), "length %zu, expected %zu", n, strlen(rows[i].want));
		CHECK_ROW(rows[i].line, n < rows[i].len || rows[i].len == 0, "length %zu for room %zu", n, rows[i].len);
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

/* Count the drawings of the line in text. */
static size_t draws(const char *text)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, "\r\033[Ktlbprof: phase")) != NULL; p++)
		n++;
	return n;
}

/*
 * Inside a phase the runner ticks between samples: the line is redrawn with
 * the time now, at most every 250 ms, and never before the first second.
 */
static void test_tick(void)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	struct report_progress p;

	CHECK(f != NULL, "open_memstream");
	if (!f)
		return;
	report_progress_start(&p, f);
	report_progress_tick(&p);	/* before any phase: nothing to draw */
	report_progress_phase(&p, 0, 1, "chase/4k/64M/r0");
	report_progress_tick(&p);	/* within the first second */
	fflush(f);
	CHECK(size == 0, "drawn before the first second: '%s'", text);

	/* Two seconds later: the tick draws, an immediate second tick does not. */
	p.start_ns -= 2000000000ull;
	p.phase_start_ns -= 2000000000ull;
	report_progress_tick(&p);
	report_progress_tick(&p);
	fflush(f);
	CHECK(draws(text) == 1, "%zu drawings after two ticks in a row: '%s'", draws(text), text);
	CHECK(strstr(text, "phase 1/1 chase/4k/64M/r0, 2.") != NULL, "tick drew '%s'", text);

	/* 300 ms after the last drawing the next tick draws again, with a later time. */
	p.start_ns -= 300000000ull;
	p.phase_start_ns -= 300000000ull;
	p.last_draw_ns -= 300000000ull;
	report_progress_tick(&p);
	fflush(f);
	CHECK(draws(text) == 2, "%zu drawings after 300 ms: '%s'", draws(text), text);
	const char *second = strrchr(text, '\r');
	CHECK(second && strstr(second, "phase 1/1 chase/4k/64M/r0, 2.") != NULL, "second drawing '%s'",
	      second ? second : "");
	double t1 = 0, t2 = 0;
	const char *a = strstr(text, "r0, "), *b = second ? strstr(second, "r0, ") : NULL;
	if (a && b) {
		t1 = strtod(a + 4, NULL);
		t2 = strtod(b + 4, NULL);
	}
	CHECK(t2 >= t1 + 0.2, "elapsed %.1f then %.1f: the second drawing should be 0.3 s later", t1, t2);
	report_progress_phase(&p, 1, 1, NULL);
	fclose(f);
	CHECK(size >= 4 && strcmp(text + size - 4, "\r\033[K") == 0, "not cleared at the end");
	free(text);
}

int main(void)
{
	test_format();
	test_quiet_first_second();
	test_tick();
	return check_finish();
}
