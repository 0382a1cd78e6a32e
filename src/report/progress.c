/* SPDX-License-Identifier: MIT */
/* The progress line of a measurement on a terminal: one line on stderr, redrawn in place, cleared at the end. */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "report/report.h"
#include "machine/timing.h"

/* A run shorter than this never shows a line: most runs would only flicker. */
#define PROGRESS_AFTER_S 1.0
/* Redraws inside a phase at most this often: a clock that moves in steps of 0.25 s reads as alive. */
#define PROGRESS_TICK_NS 250000000ull
/* "\r" returns to column 0 and "ESC [ K" clears to the end of the line (ECMA-48 EL). */
#define PROGRESS_CLEAR "\r\033[K"
#define ELLIPSIS "..."

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

/* Step back from byte i of s to the start of its UTF-8 character, so a cut never splits one. */
static size_t char_start(const char *s, size_t i)
{
	while (i > 0 && ((unsigned char)s[i] & 0xc0) == 0x80)
		i--;
	return i;
}

/*
 * name shortened to at most room bytes by taking out its middle (the end of
 * a phase name, its size and allocation, says the most): "chase/4k/...M/r0".
 */
static void shorten_name(char *out, size_t out_len, const char *name, size_t room)
{
	size_t len = strlen(name);

	if (len <= room) {
		snprintf(out, out_len, "%s", name);
		return;
	}
	size_t keep = room - strlen(ELLIPSIS), head = char_start(name, keep / 3);
	size_t tail = len - (keep - keep / 3);
	while (tail < len && ((unsigned char)name[tail] & 0xc0) == 0x80)
		tail++;
	snprintf(out, out_len, "%.*s" ELLIPSIS "%s", (int)head, name, name + tail);
}

size_t report_progress_format(char *buf, size_t len, size_t index, size_t n, const char *name, double elapsed_s,
			      double phase_s)
{
	char left[64] = "", prefix[64], suffix[128], short_name[256];

	if (len == 0)
		return 0;
	/*
	 * The phases done so far set the pace; before the first one ends there
	 * is nothing to go by. Inside a phase its time so far counts as done,
	 * but never more than the pace gives it: an overrunning phase leaves
	 * the estimate for the phases after it.
	 */
	if (index > 0 && index < n) {
		double done_s = elapsed_s - phase_s, pace = done_s / (double)index;
		double rest = pace * (double)(n - index) - phase_s, floor = pace * (double)(n - index - 1);
		char d[48];
		if (rest < floor)
			rest = floor;
		if (rest >= 0.5) {
			format_duration(d, sizeof(d), rest);
			snprintf(left, sizeof(left), ", about %s left", d);
		}
	}
	snprintf(prefix, sizeof(prefix), "tlbprof: phase %zu/%zu", index + 1, n);
	snprintf(suffix, sizeof(suffix), ", %.1f s elapsed%s", elapsed_s, left);
	size_t fixed = strlen(prefix) + strlen(suffix), room = len - 1;
	int w;
	/* Too wide for the terminal: the phase name gives way first, then "tlbprof: "; i/N, elapsed and ETA stay. */
	if (fixed + 1 + strlen(name) <= room)
		w = snprintf(buf, len, "%s %s%s", prefix, name, suffix);
	else if (fixed + 1 + 8 <= room) {
		shorten_name(short_name, sizeof(short_name), name, room - fixed - 1);
		w = snprintf(buf, len, "%s %s%s", prefix, short_name, suffix);
	} else if (fixed <= room)
		w = snprintf(buf, len, "%s%s", prefix, suffix);
	else
		w = snprintf(buf, len, "%s%s", prefix + strlen("tlbprof: "), suffix);
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

/* Draw the line for the current phase at now_ns, once the run has lasted a second. */
static void draw(struct report_progress *p, uint64_t now_ns)
{
	double elapsed_s = (double)(now_ns - p->start_ns) / 1e9, phase_s = (double)(now_ns - p->phase_start_ns) / 1e9;
	char line[512];

	if (elapsed_s <= PROGRESS_AFTER_S)
		return;
	size_t room = p->width - 1 < sizeof(line) ? p->width - 1 : sizeof(line);	/* the cursor needs a column */
	report_progress_format(line, room, p->index, p->n, p->name, elapsed_s, phase_s);
	fprintf(p->f, PROGRESS_CLEAR "%s", line);
	fflush(p->f);
	p->shown = true;
	p->last_draw_ns = now_ns;
}

void report_progress_phase(void *arg, size_t index, size_t n, const char *name)
{
	struct report_progress *p = arg;
	uint64_t now = timing_now_ns();

	if (!name) {
		if (p->shown)
			fputs(PROGRESS_CLEAR, p->f);
		fflush(p->f);
		p->shown = false;
		return;
	}
	p->index = index;
	p->n = n;
	p->phase_start_ns = now;
	snprintf(p->name, sizeof(p->name), "%s", name);
	draw(p, now);
}

void report_progress_tick(void *arg)
{
	struct report_progress *p = arg;
	uint64_t now = timing_now_ns();

	if (!p->name[0] || now - p->last_draw_ns < PROGRESS_TICK_NS)
		return;
	draw(p, now);
}
