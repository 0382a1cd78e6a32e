/* SPDX-License-Identifier: MIT */
/*
 * Counters, per thread: each thread's (and child process's) own counts of an
 * inherited counter set, as the kernel reports them when it exits, so that a
 * started command's threads are told apart (tlbprof run --per-thread).
 *
 * An inherited event sums every task the target creates into one count. With
 * inherit_stat, the kernel also writes a PERF_RECORD_READ of the exiting
 * task's own counts into the event's ring as each inherited task exits
 * (sync_child_event). The kernel refuses to mmap an inherited per-task event
 * (all children writing into one ring), but a child's record goes to its
 * parent event's ring, and PERF_EVENT_IOC_SET_OUTPUT may point a parent at
 * the ring of a plain dummy event on the same task: one ring for every group.
 * Each member's exit writes its group as it is then (the whole group, or
 * what is left of it once the others have gone), so a thread's counts are
 * merged by event id. The thread the set was opened on never exits into a
 * record of its own: its counts are the total less everyone else's.
 */
#include "pmu/counters.h"

#include "pmu/backend.h"
#include "pmu/counter_set.h"
#include "pmu/perf_ring.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "grow.h"

/* 128 data pages (512 KiB): a thread's exit writes about 1 KiB per group of seven; drained every 100 ms. */
enum { RING_PAGES = 128 };

struct thread_counts {
	uint32_t pid, tid;
	uint64_t (*raw)[3];		/* per event of the set: { value, enabled, running } as the exit reported */
	bool *have;			/* per event: a record carried it */
};

struct counter_threads {
	int dummy_fd;			/* the event whose ring every group writes into */
	void *ring;			/* its mapping: the control page, then RING_PAGES data pages */
	size_t page;
	struct thread_counts *t;
	size_t n, cap;
	uint64_t lost;			/* records the kernel dropped (PERF_RECORD_LOST) */
	uint64_t bad;			/* records that did not decode */
	char error[160];		/* why per-thread counts are not available ("" when they are) */
};

void counter_set_track_threads(struct counter_set *set, bool on)
{
	if (set)
		set->track_threads = on;
}

/* The set's entry for tid, made on first sight; NULL without memory. */
static struct thread_counts *thread_of(struct counter_set *set, uint32_t pid, uint32_t tid)
{
	struct counter_threads *th = set->threads;

	for (size_t i = 0; i < th->n; i++)
		if (th->t[i].tid == tid)
			return &th->t[i];
	if (!array_grow((void **)&th->t, &th->cap, th->n + 1, sizeof(*th->t), 16))
		return NULL;
	struct thread_counts *t = &th->t[th->n];
	*t = (struct thread_counts){ .pid = pid, .tid = tid, .raw = calloc(set->n + 1, sizeof(*t->raw)),
				     .have = calloc(set->n + 1, sizeof(*t->have)) };
	if (!t->raw || !t->have) {
		free(t->raw);
		free(t->have);
		return NULL;
	}
	th->n++;
	return t;
}

/* One PERF_RECORD_READ: { pid, tid, nr, time_enabled, time_running, { value, id }[nr] } (no sample_id). */
static void take_read(struct counter_set *set, const unsigned char *body, size_t len)
{
	struct counter_threads *th = set->threads;
	uint32_t ids[2];
	uint64_t head[3];

	if (len < sizeof(ids) + sizeof(head)) {
		th->bad++;
		return;
	}
	memcpy(ids, body, sizeof(ids));
	memcpy(head, body + sizeof(ids), sizeof(head));
	if (head[0] > 64 || len < sizeof(ids) + sizeof(head) + head[0] * 16) {
		th->bad++;
		return;
	}
	struct thread_counts *t = thread_of(set, ids[0], ids[1]);
	if (!t) {
		th->lost++;
		return;
	}
	for (uint64_t r = 0; r < head[0]; r++) {
		uint64_t row[2];
		memcpy(row, body + sizeof(ids) + sizeof(head) + r * 16, sizeof(row));
		/* A child event reports its parent's id (primary_event_id): the set's own event. */
		for (size_t i = 0; i < set->n; i++)
			if (set->events[i].fd >= 0 && set->events[i].id == row[1]) {
				t->raw[i][0] = row[0];
				t->raw[i][1] = head[1];
				t->raw[i][2] = head[2];
				t->have[i] = true;
			}
	}
}

int counter_set_threads_drain(struct counter_set *set)
{
	struct counter_threads *th = set ? set->threads : NULL;

	if (!th || !th->ring)
		return 0;
	const struct perf_ring pr = { .meta = th->ring, .data = (const unsigned char *)th->ring + th->page,
				      .data_size = th->page * RING_PAGES };
	uint64_t head = perf_ring_head(&pr), tail = perf_ring_tail(&pr);
	struct perf_event_header hdr;
	unsigned char rec[4096];
	int rc;

	while ((rc = perf_ring_peek(&pr, tail, head, &hdr)) == 0) {
		if (hdr.size <= sizeof(rec)) {
			perf_ring_copy(&pr, tail, rec, hdr.size);
			if (hdr.type == PERF_RECORD_READ) {
				take_read(set, rec + sizeof(hdr), hdr.size - sizeof(hdr));
			} else if (hdr.type == PERF_RECORD_LOST && hdr.size >= sizeof(hdr) + 16) {
				uint64_t lost;
				memcpy(&lost, rec + sizeof(hdr) + 8, sizeof(lost));
				th->lost += lost;
			}
		} else {
			th->bad++;
		}
		tail += hdr.size;
	}
	/* A ring that cannot be walked further: what is left is dropped and counted, never read again. */
	if (rc == -EIO) {
		th->bad++;
		tail = head;
	}
	perf_ring_release(&pr, tail);
	return 0;
}

/* The ring and its dummy event given back (tolerates either missing). */
static void drop_ring(struct counter_threads *th)
{
	if (th->ring)
		munmap(th->ring, th->page * (RING_PAGES + 1));
	th->ring = NULL;
	if (th->dummy_fd >= 0)
		pmu_backend()->close(th->dummy_fd);
	th->dummy_fd = -1;
}

/* Tracking off, with the reason; what was set up is undone. */
static void give_up(struct counter_set *set, const char *what, int err)
{
	snprintf(set->threads->error, sizeof(set->threads->error), "%s: %s", what, strerror(err));
	drop_ring(set->threads);
}

void counter_threads_open(struct counter_set *set)
{
	counter_threads_close(set);
	if (!set->track_threads || !set->inherit || set->pid <= 0)
		return;
	struct counter_threads *th = calloc(1, sizeof(*th));
	if (!th)
		return;
	set->threads = th;
	th->dummy_fd = -1;
	th->page = (size_t)sysconf(_SC_PAGESIZE);
	if (!pmu_backend()->map) {
		snprintf(th->error, sizeof(th->error), "the %s PMU has no ring buffers to report exits in",
			 pmu_backend()->name);
		return;
	}
	/* A dummy software event on the same task, never inherited: its ring may be mapped. */
	struct perf_event_attr d = { .size = sizeof(d), .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY,
				     .disabled = 1 };
	th->dummy_fd = pmu_backend()->open(&d, set->pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (th->dummy_fd < 0) {
		give_up(set, "the dummy event for the exit records", errno);
		return;
	}
	th->ring = pmu_backend()->map(th->dummy_fd, th->page * (RING_PAGES + 1));
	if (th->ring == MAP_FAILED) {
		th->ring = NULL;
		give_up(set, "mapping the exit records' ring", errno);
		return;
	}
	for (size_t i = 0; i < set->n; i++) {
		struct counter_event *ev = &set->events[i];
		if (ev->fd >= 0 && pmu_backend()->ioctl(ev->fd, PERF_EVENT_IOC_SET_OUTPUT, (unsigned long)th->dummy_fd) < 0) {
			char what[128];
			snprintf(what, sizeof(what), "redirecting %s's exit records", ev->info.name);
			give_up(set, what, errno);
			return;
		}
	}
}

void counter_threads_close(struct counter_set *set)
{
	struct counter_threads *th = set ? set->threads : NULL;

	if (!th)
		return;
	drop_ring(th);
	for (size_t i = 0; i < th->n; i++) {
		free(th->t[i].raw);
		free(th->t[i].have);
	}
	free(th->t);
	free(th);
	set->threads = NULL;
}

/* What one exit reported of events[i], as counter_set_read() gives a count (scaled where multiplexed). */
static void reading_of(const struct counter_event *ev, const uint64_t raw[3], struct counter_reading *r)
{
	r->value = raw[0];
	r->enabled_ns = raw[1];
	r->running_ns = raw[2];
	r->scaled = counter_event_scale(ev, raw[0], raw[1], raw[2], NULL);
}

int counter_set_threads(struct counter_set *set, const struct counter_reading *total, struct counter_thread **out,
			size_t *n_out, struct counter_threads_info *info)
{
	struct counter_threads *th = set ? set->threads : NULL;

	*out = NULL;
	*n_out = 0;
	memset(info, 0, sizeof(*info));
	if (!set || !set->track_threads) {
		snprintf(info->error, sizeof(info->error), "not asked for");
		return -EINVAL;
	}
	if (!th || !th->ring) {
		snprintf(info->error, sizeof(info->error), "%s", th && *th->error ? th->error : "out of memory");
		return -ENOTSUP;
	}
	counter_set_threads_drain(set);
	info->lost = th->lost;
	info->bad = th->bad;
	struct counter_thread *t = calloc(th->n + 1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	/* The thread the set was opened on first: the total less every exit that was reported. */
	t[0] = (struct counter_thread){ .pid = (uint32_t)set->pid, .tid = (uint32_t)set->pid, .first = true,
					.known = !th->lost && !th->bad,
					.counts = calloc(set->n + 1, sizeof(*t[0].counts)) };
	size_t n = 1;
	for (size_t k = 0; k < th->n && t[0].counts; k++) {
		struct counter_thread *c = &t[n];
		c->pid = th->t[k].pid;
		c->tid = th->t[k].tid;
		c->known = true;
		c->counts = calloc(set->n + 1, sizeof(*c->counts));
		if (!c->counts)
			break;
		n++;
		for (size_t i = 0; i < set->n; i++)
			if (th->t[k].have[i])
				reading_of(&set->events[i], th->t[k].raw[i], &c->counts[i]);
	}
	if (!t[0].counts || n < th->n + 1) {
		counter_threads_free(t, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < set->n; i++) {
		struct counter_reading *m = &t[0].counts[i];
		*m = total[i];
		for (size_t k = 1; k < n; k++) {
			const struct counter_reading *c = &t[k].counts[i];
			/* Whole counts of exact events cannot go below 0; a multiplexed estimate is clamped there. */
			m->value = m->value > c->value ? m->value - c->value : 0;
			m->scaled = m->scaled > c->scaled ? m->scaled - c->scaled : 0;
		}
	}
	*out = t;
	*n_out = n;
	return 0;
}

void counter_threads_free(struct counter_thread *t, size_t n)
{
	for (size_t k = 0; t && k < n; k++)
		free(t[k].counts);
	free(t);
}
