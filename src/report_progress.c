/* SPDX-License-Identifier: MIT */
/* The progress line of a measurement on a terminal: one line on stderr, redrawn at each phase, cleared at the end. */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "report.h"
#include "timing.h"

/* A run shorter than this never shows a line: most runs would only flicker. */
#define PROGRESS_AFTER_S 1.0
/* "\r" returns to column 0 and "ESC [ K" clears to the end of the line (ECMA-48 EL). */
#define PROGRESS_CLEAR "\r\033[K"

/* "12 s", "4 min 05 s", "2 h 03 min": short enough to read at a glance. */
static void format_duration(char *buf, size_t len, double s)
{
	if (s < 0)
		s = 0;
	unsigned long t = (unsigned long)(s + 0.5);

	if (t < 90)
		snprintf(buf, len, "%lu s", t);
	else if (t < 90 * 60)
		snprintf(buf, len, "%lu min %02lu s", t / 60, t % 60);
	else
		snprintf(buf, len, "%lu h %02lu min", t / 3600, t / 60 % 60);
}

size_t report_progress_format(char *buf, size_t len, size_t index, size_t n, const char *name, double elapsed_s)
{
	char left[64] = "";

	if (len == 0)
		return 0;
	/* The phases done so far set the pace; before the first one ends there is nothing to go by. */
	if (index > 0 && index < n) {
		char d[48];
		format_duration(d, sizeof(d), elapsed_s / (double)index * (double)(n - index));
		snprintf(left, sizeof(left), ", about %s left", d);
	}
	int w = snprintf(buf, len, "tlbprof: phase %zu/%zu %s, %.1f s elapsed%s", index + 1, n, name, elapsed_s, left);
	return w < 0 ? 0 : (size_t)w >= len ? len - 1 : (size_t)w;
}

void report_progress_start(struct report_progress *p, FILE *f)
{
	struct winsize ws;

	memset(p, 0, sizeof(*p));
	p->f = f;
	p->start_ns = timing_now_ns();
	/* A line wider than the terminal wraps, and "\r" then clears only its last row. */
	p->width = ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col : 80;
}

void report_progress_phase(void *arg, size_t index, size_t n, const char *name)
{
	struct report_progress *p = arg;
	double elapsed_s = (double)(timing_now_ns() - p->start_ns) / 1e9;
	char line[512];

	if (!name) {
		if (p->shown)
			fputs(PROGRESS_CLEAR, p->f);
		fflush(p->f);
		p->shown = false;
		return;
	}
	if (elapsed_s <= PROGRESS_AFTER_S)
		return;
	size_t room = p->width - 1 < sizeof(line) ? p->width - 1 : sizeof(line);	/* the cursor needs a column */
	report_progress_format(line, room, index, n, name, elapsed_s);
	fprintf(p->f, PROGRESS_CLEAR "%s", line);
	fflush(p->f);
	p->shown = true;
}
