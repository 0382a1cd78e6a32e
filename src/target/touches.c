/* SPDX-License-Identifier: MIT */
/*
 * The pattern of the first touches the hot loop took: without a PMU, the
 * only addresses of its accesses that are seen. A scan (memset, memcpy, a
 * STREAM kernel, a page-by-page walk) first touches each page at its first
 * line going up and at its last going down, whatever it reads after; only
 * the first touches it does not explain say where in a page the loop reads.
 */
#include "target/watch.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

static int touch_time_cmp(const void *x, const void *y)
{
	const struct watch_touch *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->t < b->t ? -1 : a->t > b->t;
}

static int i64_cmp(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * Touch i (of n) is a scan's: at line 0 with the page below among its thread's last WATCH_SCAN_STREAMS first
 * touches or the page above at line 0 among its next, or the same going down at line 63. In any code: the hot
 * loop's range may leave out a scan's head or tail; both ways: where samples were kept in blocks
 * (sample_list_decimate()), a block's first page has no predecessor kept.
 */
static bool continues_scan(const struct watch_touch *t, size_t n, size_t i)
{
	unsigned last = 4096 / 64 - 1, line = t[i].line;
	int dir = line == 0 ? 1 : line == last ? -1 : 0;	/* +1: a scan going up meets the page at line 0 */

	if (!dir)
		return false;
	for (size_t j = i, k = 0; j-- > 0 && k < WATCH_SCAN_STREAMS && t[j].tid == t[i].tid; k++)
		if (t[j].page + (uint64_t)(int64_t)dir == t[i].page)
			return true;
	for (size_t j = i + 1, k = 0; j < n && k < WATCH_SCAN_STREAMS && t[j].tid == t[i].tid; j++, k++)
		if (t[j].line == line && t[i].page + (uint64_t)(int64_t)dir == t[j].page)
			return true;
	return false;
}

/* The most common of 64 line counts into *mode (bytes) and *count; the lines with any. */
static unsigned line_mode(const uint64_t lines[64], uint64_t *mode, uint64_t *count)
{
	unsigned distinct = 0;

	*mode = 0;
	*count = 0;
	for (unsigned k = 0; k < 64; k++) {
		distinct += lines[k] > 0;
		if (lines[k] > *count) {
			*count = lines[k];
			*mode = k * 64u;
		}
	}
	return distinct;
}

int watch_touch_pattern(struct watch_touch *t, size_t n, struct sample_fault_pattern *f)
{
	int64_t *steps = malloc((n ? n : 1) * sizeof(*steps));
	uint64_t lines[64] = { 0 }, other[64] = { 0 }, m = 0;
	size_t s = 0, prev = SIZE_MAX;	/* prev: the thread's last first touch in the loop */

	if (!steps)
		return -ENOMEM;
	qsort(t, n, sizeof(*t), touch_time_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && t[i].tid != t[i - 1].tid)
			prev = SIZE_MAX;
		if (!t[i].in_loop)
			continue;
		m++;
		lines[t[i].line % 64]++;
		if (continues_scan(t, n, i))
			f->scan_touches++;
		else
			other[t[i].line % 64]++;
		if (prev != SIZE_MAX)
			steps[s++] = (int64_t)(t[i].page - t[prev].page);
		prev = i;
	}
	f->loop_touches = m;
	f->distinct_lines = line_mode(lines, &f->offset_mode, &f->offset_mode_count);
	f->other.touches = m - f->scan_touches;
	f->other.distinct_lines = line_mode(other, &f->other.mode, &f->other.mode_count);
	f->scan_known = true;
	qsort(steps, s, sizeof(*steps), i64_cmp);
	f->steps = s;
	for (size_t i = 0, j; i < s; i = j) {
		for (j = i; j < s && steps[j] == steps[i]; j++)
			;
		if (steps[i] == 1)
			f->steps_next_page = j - i;
		if (j - i > f->step_mode_count) {
			f->step_mode_count = j - i;
			f->step_mode_pages = steps[i];
		}
	}
	free(steps);
	return 0;
}
