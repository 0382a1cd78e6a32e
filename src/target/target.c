/* SPDX-License-Identifier: MIT */
/* tlbprof run: start someone else's benchmark, follow its phase markers or perf control commands, measure each phase. */
#include "target/target.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure/chain.h"
#include "machine/environment.h"
#include "target/marker.h"
#include "measure/region.h"
#include "measure/smaps.h"
#include "pmu/symbols.h"
#include "machine/timing.h"
#include "measure/workload.h"
#include "stats.h"

#include "tlbprof/marker.h"

#define TARGET_MAX_PHASES 256
#define TARGET_KILL_GRACE_MS 2000
/* A declared region is copied into tlbprof to walk its chain: at most this, and half of MemAvailable. */
#define TARGET_CHAIN_COPY_MAX (4ull << 30)
#define WINDOW_NAME "enabled"
#define COMMAND_NAME "command"

/* A channel the command talks on: the marker FIFOs, or the user's perf-style control. */
struct channel {
	int ctl, ack;			/* ack -1: nothing is acknowledged */
	char buf[2 * MARKER_LINE_MAX];
	size_t len;
	bool discarding;		/* inside an overlong line, until its newline */
	bool nonblocking;		/* our own open (O_NONBLOCK): read until empty; a caller's fd: once per poll */
};

enum { SLOT_MARKER, SLOT_WINDOW };

/* A closed window of a slot, for attributing samples to phases. */
struct window {
	size_t phase;
	uint64_t begin_ns, end_ns;
};

struct target_state {
	const struct target_options *opt;
	const struct run_context *ctx;
	struct run_results *out;
	struct target_result *tr;
	pid_t pid;
	int pidfd;
	char dir[PATH_MAX - 16];
	char ctl_path[PATH_MAX], ack_path[PATH_MAX];
	struct channel ch[2];		/* [0] markers, [1] --control */
	size_t n_counters;
	struct counter_reading *snap_end;
	/*
	 * What is open: [SLOT_MARKER] a phase the benchmark marked, [SLOT_WINDOW]
	 * a perf stat enable..disable window. They are independent (a marked
	 * phase may run inside a window), each with its own begin snapshot.
	 */
	struct slot {
		long phase;			/* index in out->phases, -1: closed */
		struct counter_reading *snap;	/* counters at the begin */
		uint64_t begin_ns, begin_steal;
		uint64_t accesses;		/* declared at begin, 0: none */
		struct window *windows;		/* every closed window of this slot, in time order (--sample) */
		size_t n_windows, cap_windows;
	} slot[2];
	unsigned window_count;		/* perf windows opened, ever */
	double *handling_us;
	size_t n_handling, cap_handling;
	/* --sample: the session, what it collected, and each phase window to attribute samples to. */
	struct sample_session *sampler;
	struct sample_list samples;
	struct symbols *syms;
	struct sample_sink sink;
	struct sample_collector collector;
};

static double ms_of_ticks(uint64_t ticks)
{
	long hz = sysconf(_SC_CLK_TCK);
	return (double)ticks * 1000.0 / (double)(hz > 0 ? hz : 100);
}

__attribute__((format(printf, 3, 4)))
static void note_error(struct target_state *st, const char *line, const char *fmt, ...)
{
	struct target_result *tr = st->tr;
	char why[120];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (tr->errors < TARGET_MAX_ERRORS)
		snprintf(tr->error_lines[tr->errors], sizeof(tr->error_lines[0]), "'%.40s': %s", line, why);
	tr->errors++;
}

/*
 * Answer on c's ack channel (none: nothing to answer). The ack fd is
 * non-blocking: a benchmark that never reads its acks fills the FIFO, and
 * then loses acks instead of hanging tlbprof.
 */
static void reply(const struct channel *c, const char *text, size_t len)
{
	size_t off = 0;
	struct pollfd p = { c->ack, POLLOUT, 0 };

	if (c->ack < 0)
		return;
	/*
	 * Room for the whole answer (POLLOUT on a pipe means PIPE_BUF bytes
	 * free), or none is written: a caller's fd stays blocking as the caller
	 * left it, and a benchmark that never reads its acks cannot hang tlbprof.
	 */
	if (poll(&p, 1, 0) != 1 || !(p.revents & POLLOUT))
		return;
	while (off < len) {
		ssize_t n = write(c->ack, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;	/* full or closed: the command will see its own error */
		off += (size_t)n;
	}
}

/* The declared page size against what the kernel gave the declared region (smaps, at phase end). */
static void verify_region(struct target_state *st, struct phase_result *r)
{
	struct target_phase *tp = r->target;
	struct region_backing b;

	if (smaps_read(st->pid, tp->region_addr, tp->region_bytes, &b) != 0)
		return;
	/* "2m" names the size the benchmark intends; a 2 MiB hugetlb region is what it asked for too. */
	if (r->spec.page.bytes == (2ull << 20) && b.kind == PAGE_HUGETLB && b.kernel_page_bytes == r->spec.page.bytes)
		page_request_parse("2m:hugetlb", &r->spec.page);
	r->backing = b;
	r->backing_known = true;
	/* Not what the benchmark declared: the phase's reason says what it got and how to get the declared size. */
	char why[400];
	if (region_check_backing(&r->spec.page, &b, why, sizeof(why)) != 0)
		snprintf(r->reason, sizeof(r->reason), "declared page=%s: %s", r->spec.page.label, why);
}

/* How much a self-check outcome says against the chain: a failure, then a pass, then a skip. */
static int check_weight(enum check_status s)
{
	return s == CHECK_FAIL ? 3 : s == CHECK_WARN ? 2 : s == CHECK_PASS ? 1 : 0;
}

/* Record check c on r: one entry per id, the worst outcome over the chains a phase declared. */
static void put_self_check(struct phase_result *r, const struct self_check *c)
{
	for (size_t i = 0; i < r->n_self_checks; i++) {
		if (strcmp(r->self_checks[i].id, c->id) != 0)
			continue;
		if (check_weight(c->status) > check_weight(r->self_checks[i].status))
			r->self_checks[i] = *c;
		return;
	}
	if (r->n_self_checks < PHASE_MAX_SELF_CHECKS)
		r->self_checks[r->n_self_checks++] = *c;
}

__attribute__((format(printf, 2, 3)))
static void not_inspected(struct phase_result *r, const char *fmt, ...)
{
	struct self_check c = { .id = "single_cycle", .status = CHECK_SKIP };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c.message, sizeof(c.message), fmt, ap);
	va_end(ap);
	put_self_check(r, &c);
}

/*
 * Copy the declared region out of the command and walk its chain with the
 * chase's self-checks (each distinct chain a phase declares; the worst
 * outcome stays).
 */
static void inspect_chain(struct target_state *st, struct phase_result *r)
{
	struct target_phase *tp = r->target;
	uint64_t avail = region_mem_available();
	struct self_check checks[2];
	struct chain_walk walk;

	if (tp->region_bytes > TARGET_CHAIN_COPY_MAX || (avail && tp->region_bytes > avail / 2)) {
		not_inspected(r, "not inspected: the %llu-byte region is too large to copy",
			      (unsigned long long)tp->region_bytes);
		return;
	}
	char *copy = malloc(tp->region_bytes);
	uint64_t done = 0;
	int err = 0;
	while (copy && done < tp->region_bytes) {
		size_t chunk = (size_t)(tp->region_bytes - done < (64u << 20) ? tp->region_bytes - done : (64u << 20));
		struct iovec local = { copy + done, chunk };
		struct iovec remote = { (void *)(uintptr_t)(tp->region_addr + done), chunk };
		ssize_t n = process_vm_readv(st->pid, &local, 1, &remote, 1, 0);
		if (n <= 0) {
			err = n < 0 ? errno : EFAULT;	/* 0 bytes: the region ends before its declared length */
			break;
		}
		done += (uint64_t)n;
	}
	if (!copy || done < tp->region_bytes) {
		not_inspected(r, "not inspected: could not read the region from the process (%s)",
			      copy ? strerror(err) : "out of memory");
		free(copy);
		return;
	}
	if (chain_check_foreign(copy, tp->region_addr, tp->region_bytes, tp->chain_addr, tp->slots_declared, checks,
				&walk) == 0) {
		put_self_check(r, &checks[0]);
		put_self_check(r, &checks[1]);
		tp->chain_inspected = true;
		tp->chain_cycle_slots = walk.cycle_slots;
		tp->chain_pages_covered = walk.pages_covered;
		if (!tp->slots_declared && walk.expected_slots > 1)
			r->spec.stride_bytes = tp->region_bytes / walk.expected_slots;
		r->spec.layout = walk.aligned ? LAYOUT_ALIGNED : LAYOUT_COLORED;
		r->slots = walk.cycle_slots;
	}
	free(copy);
}

/* The result for phase name, created on first sight from what its begin declares. NULL: too many phases. */
static struct phase_result *phase_for(struct target_state *st, const struct marker_msg *m, const char *name,
				      bool *fresh)
{
	struct run_results *out = st->out;

	*fresh = false;
	if (!out->phases)
		return NULL;
	for (size_t i = 0; i < out->n; i++)
		if (strcmp(out->phases[i].spec.name, name) == 0)
			return &out->phases[i];
	if (out->n >= TARGET_MAX_PHASES)
		return NULL;
	struct phase_result *r = &out->phases[out->n];
	memset(r, 0, sizeof(*r));
	r->target = calloc(1, sizeof(*r->target));
	if (st->n_counters) {
		r->counter_info = calloc(st->n_counters, sizeof(*r->counter_info));
		r->counters = calloc(st->n_counters, sizeof(*r->counters));
	}
	if (!r->target || (st->n_counters && (!r->counter_info || !r->counters))) {
		free(r->target);
		free(r->counter_info);
		free(r->counters);
		memset(r, 0, sizeof(*r));
		return NULL;
	}
	struct phase_spec *s = &r->spec;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->index = (unsigned)out->n;
	s->workload = &workload_marked;
	s->cpu = st->opt->cpu;
	s->repeat = 0;
	s->throughput = m && m->throughput;
	r->n_counters = st->n_counters;
	for (size_t i = 0; i < st->n_counters; i++)
		r->counter_info[i] = *counter_set_info(st->ctx->counters, i);
	r->status = PHASE_OK;
	r->target->samples_in_phase = -1;
	r->stop_reason = "samples";
	r->precision_reached = INFINITY;
	r->cycles_per_ns = st->ctx->clock ? st->ctx->clock->core_clock_ghz : 0;
	struct target_phase *tp = r->target;
	if (m) {
		tp->has_accesses = m->has_accesses;
		tp->has_region = m->has_region;
		tp->region_addr = m->region_addr;
		tp->region_bytes = m->region_bytes;
		tp->has_page = m->has_page;
		tp->has_chain = m->has_chain;
		tp->chain_addr = m->chain_addr;
		tp->slots_declared = m->slots;
		if (m->has_page)
			s->page = m->page;
		s->size_bytes = m->has_region ? m->region_bytes : 0;
		if (m->slots && m->has_region) {
			s->stride_bytes = m->region_bytes / m->slots;
			r->slots = m->slots;	/* the declared working set, until a chain walk measures it */
		}
	}
	out->n++;
	*fresh = true;
	return r;
}

static void append(double **v, size_t *n, double x)
{
	double *bigger = realloc(*v, (*n + 1) * sizeof(**v));
	if (!bigger)
		return;
	bigger[(*n)++] = x;
	*v = bigger;
}

static void begin_window(struct target_state *st, int k, size_t index, uint64_t accesses)
{
	struct slot *sl = &st->slot[k];

	sl->phase = (long)index;
	sl->accesses = accesses;
	if (st->n_counters)
		counter_set_read(st->ctx->counters, sl->snap);
	sl->begin_steal = environment_steal_ticks();
	sl->begin_ns = timing_now_ns();
}

static void add_window(struct slot *sl, uint64_t now_ns)
{
	if (sl->n_windows == sl->cap_windows) {
		size_t cap = sl->cap_windows ? 2 * sl->cap_windows : 64;
		struct window *bigger = realloc(sl->windows, cap * sizeof(*bigger));
		if (!bigger)
			return;
		sl->windows = bigger;
		sl->cap_windows = cap;
	}
	sl->windows[sl->n_windows++] = (struct window){ (size_t)sl->phase, sl->begin_ns, now_ns };
}

/* Whether backing b is worse than a for a region declared on page size p (more THP on 4k, less on huge). */
static bool backing_worse(const struct page_request *p, const struct region_backing *a, const struct region_backing *b)
{
	if (p->kind == PAGE_BASE)
		return b->kind != PAGE_BASE && (a->kind == PAGE_BASE || b->huge_fraction > a->huge_fraction);
	return b->huge_fraction < a->huge_fraction || (b->kind != p->kind && a->kind == p->kind);
}

/*
 * Close slot k at now_ns: counts, wall time, the region's backing. m is the
 * end line (NULL: a perf window, or the exit). A marked occurrence that the
 * command's exit cut short is not a sample: its accesses never finished.
 */
static void end_window(struct target_state *st, int k, uint64_t now_ns, const struct marker_msg *m, bool at_exit)
{
	struct slot *sl = &st->slot[k];
	struct phase_result *r = &st->out->phases[sl->phase];
	struct target_phase *tp = r->target;
	struct counter_set *cs = st->ctx->counters;
	double seen_ns = (double)(now_ns - sl->begin_ns);

	if (at_exit && k == SLOT_MARKER) {
		tp->open_at_exit = true;
		snprintf(r->reason, sizeof(r->reason), "the command exited inside an occurrence of this phase: that "
			 "occurrence is not counted");
		sl->phase = -1;
		return;
	}
	if (st->n_counters) {
		counter_set_read(cs, st->snap_end);
		for (size_t i = 0; i < st->n_counters; i++) {
			const struct counter_info *ci = counter_set_info(cs, i);
			counter_reading_add_delta(&r->counters[i], &sl->snap[i], &st->snap_end[i], ci->hardware);
			/* Keep the worst status seen (a multiplexed window makes the phase multiplexed). */
			if (r->counter_info[i].status == COUNTER_OK || ci->status != COUNTER_OK)
				r->counter_info[i] = *ci;
		}
	}
	r->steal_ticks += environment_steal_ticks() - sl->begin_steal;
	r->steal_ms = ms_of_ticks(r->steal_ticks);
	if (st->sampler) {
		add_window(sl, now_ns);
		/* The stack and other mappings no mmap record announces, read while the command waits. */
		if (tp->occurrences == 0)
			symbols_maps_read(st->syms, st->pid);
	}
	/*
	 * The benchmark's own wall time (from the acknowledged begin to its end
	 * call) lies inside tlbprof's window (from the begin snapshot to the end
	 * line read). One that does not is not this occurrence's: use tlbprof's.
	 */
	double wall = seen_ns;
	if (m && m->has_ns && (double)m->ns <= seen_ns)
		wall = (double)m->ns;
	else if (m && m->has_ns)
		note_error(st, "phase end", "ns=%llu is longer than the %.0f ns tlbprof saw for the occurrence of '%s': "
			   "ignored", (unsigned long long)m->ns, seen_ns, r->spec.name);
	uint64_t accesses = m && m->has_accesses ? m->accesses : sl->accesses;
	tp->tlbprof_ns_total += seen_ns;
	append(&tp->wall_ns, &tp->n_wall, wall);
	r->timed_ns += wall;
	tp->occurrences++;
	r->spec.repeat = tp->occurrences;
	if (m && m->timings)
		r->spec.timings = m->timings > r->spec.timings ? m->timings : r->spec.timings;
	/* Totals stay within what a report holds (a signed 64-bit integer). */
	if (accesses && r->spec.accesses_total <= (uint64_t)INT64_MAX - accesses) {
		tp->has_accesses = true;
		r->spec.accesses_total += accesses;
		if (!r->spec.iterations)
			r->spec.iterations = accesses;
		size_t n = r->n_samples;
		append(&r->samples_ns, &r->n_samples, wall / (double)accesses);
		if (r->n_samples > n) {
			unsigned *a = realloc(r->sample_alloc, r->n_samples * sizeof(*a));
			if (a) {
				a[r->n_samples - 1] = 0;
				r->sample_alloc = a;
			}
		}
		r->allocations_run = 1;
	}
	/*
	 * The command waits for the ack while smaps is read: verify on the 1st,
	 * 2nd, 4th, 8th ... occurrence, which catches a backing that changes
	 * later (khugepaged) without taxing every boundary; an occurrence that
	 * declared another region is verified at once. The worst backing seen
	 * is kept: one contaminated occurrence contaminates the phase.
	 */
	if (tp->has_region && tp->has_page &&
	    ((tp->occurrences & (tp->occurrences - 1)) == 0 || tp->region_changed)) {
		struct region_backing before = r->backing;
		bool known = r->backing_known;
		verify_region(st, r);
		if (known && r->backing_known && !backing_worse(&r->spec.page, &before, &r->backing))
			r->backing = before;
		tp->region_changed = false;
	}
	sl->phase = -1;
}

/* Answer text (without its NUL) on c. */
static void reply_text(const struct channel *c, const char *text)
{
	reply(c, text, strlen(text));
}

/* The ack of channel c: the marker FIFOs answer "ack\n"; perf stat answers sizeof("ack\n"), its NUL included. */
static void ack(const struct target_state *st, const struct channel *c)
{
	if (c == &st->ch[0])
		reply(c, "ack\n", 4);
	else
		reply(c, "ack\n", 5);	/* with its NUL, as perf stat writes it */
}

/* Begin slot SLOT_MARKER for m: find or make the phase, inspect what it declares, snapshot. */
static void marker_begin(struct target_state *st, const struct channel *c, const struct marker_msg *m,
			 const char *shown)
{
	bool fresh;

	if (st->slot[SLOT_MARKER].phase >= 0) {
		note_error(st, shown, "phase '%s' is still open (phases do not nest)",
			   st->out->phases[st->slot[SLOT_MARKER].phase].spec.name);
		reply_text(c, "err a phase is open\n");
		return;
	}
	if (strcmp(m->name, WINDOW_NAME) == 0 || strcmp(m->name, COMMAND_NAME) == 0) {
		note_error(st, shown, "'%s' is tlbprof's own phase name", m->name);
		reply_text(c, "err reserved name\n");
		return;
	}
	struct phase_result *r = phase_for(st, m, m->name, &fresh);
	if (!r) {
		note_error(st, shown, "more than %d phase names, or out of memory", TARGET_MAX_PHASES);
		reply_text(c, "err too many phases\n");
		return;
	}
	struct target_phase *tp = r->target;
	/* Another region than the phase's first: verify this occurrence's own, and walk its chain too. */
	if (!fresh && m->has_region && (m->region_addr != tp->region_addr || m->region_bytes != tp->region_bytes)) {
		tp->region_addr = m->region_addr;
		tp->region_bytes = m->region_bytes;
		tp->has_region = true;
		tp->region_changed = true;
	}
	bool new_chain = m->has_chain && (fresh || !tp->chain_inspected || m->chain_addr != tp->chain_addr);
	if (new_chain) {
		tp->has_chain = true;
		tp->chain_addr = m->chain_addr;
		/* Inspect before the snapshot: the command is blocked on the ack, nothing of it is counted. */
		inspect_chain(st, r);
	}
	begin_window(st, SLOT_MARKER, (size_t)(r - st->out->phases), m->has_accesses ? m->accesses : 0);
	ack(st, c);
}

/* Handle one line from channel c. */
static void handle_line(struct target_state *st, struct channel *c, const char *line, size_t len)
{
	uint64_t t_read = timing_now_ns();
	struct marker_msg m;
	char err[200], shown[64];
	bool fresh;

	snprintf(shown, sizeof(shown), "%.*s", (int)(len < 60 ? len : 60), line);
	st->tr->messages++;
	if (marker_parse(line, len, &m, err, sizeof(err)) != 0) {
		note_error(st, shown, "%s", err);
		/* A perf-style controller waits for "ack" whatever it sent; a marker caller gets the reason. */
		if (c == &st->ch[0])
			reply_text(c, "err bad message\n");
		else
			ack(st, c);
		return;
	}
	struct slot *mk = &st->slot[SLOT_MARKER], *win = &st->slot[SLOT_WINDOW];
	switch (m.type) {
	case MARKER_BEGIN:
		st->tr->markers_seen = true;
		marker_begin(st, c, &m, shown);
		break;
	case MARKER_END:
		st->tr->markers_seen = true;
		if (mk->phase < 0) {
			note_error(st, shown, "no phase is open");
			reply_text(c, "err no phase is open\n");
			break;
		}
		end_window(st, SLOT_MARKER, t_read, &m, false);
		ack(st, c);
		break;
	case MARKER_ENABLE:
		st->tr->control_seen = true;
		if (win->phase < 0) {
			struct phase_result *r = phase_for(st, NULL, WINDOW_NAME, &fresh);
			if (r) {
				st->window_count++;
				begin_window(st, SLOT_WINDOW, (size_t)(r - st->out->phases), 0);
			}
		}
		ack(st, c);
		break;
	case MARKER_DISABLE:
		st->tr->control_seen = true;
		if (win->phase >= 0)
			end_window(st, SLOT_WINDOW, t_read, NULL, false);
		ack(st, c);
		break;
	case MARKER_PING:
		st->tr->control_seen = true;
		ack(st, c);
		break;
	}
	double us = (double)(timing_now_ns() - t_read) / 1e3;
	if (st->n_handling == st->cap_handling) {
		size_t cap = st->cap_handling ? 2 * st->cap_handling : 64;
		double *bigger = realloc(st->handling_us, cap * sizeof(*bigger));
		if (!bigger)
			return;
		st->handling_us = bigger;
		st->cap_handling = cap;
	}
	st->handling_us[st->n_handling++] = us;
}

/* The end of the next line in buf[0..len): '\n', or '\0' as perf stat also accepts; NULL when none yet. */
static char *line_end(char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\n' || buf[i] == '\0')
			return buf + i;
	return NULL;
}

/*
 * Read once from channel c (poll said it is readable, so the read does not
 * block even on a caller's fd left blocking) and handle each whole line. A
 * line longer than the protocol allows is refused once and skipped to its
 * end. End of file (an fd: channel whose writers closed) closes the channel.
 */
static ssize_t drain_once(struct target_state *st, struct channel *c);

static void drain_channel(struct target_state *st, struct channel *c)
{
	for (;;) {
		if (drain_once(st, c) <= 0 || !c->nonblocking || c->ctl < 0)
			return;
	}
}

/* One read from c and the lines it completes. Returns the bytes read (0: end of file or nothing, < 0: error). */
static ssize_t drain_once(struct target_state *st, struct channel *c)
{
	ssize_t n;

	do
		n = read(c->ctl, c->buf + c->len, sizeof(c->buf) - c->len);
	while (n < 0 && errno == EINTR);
	if (n == 0 && c != &st->ch[0]) {
		close(c->ctl);
		c->ctl = -1;
		return 0;
	}
	if (n <= 0)
		return n;
	c->len += (size_t)n;
	char *start = c->buf, *end;
	while ((end = line_end(start, c->len - (size_t)(start - c->buf))) != NULL) {
		/* perf sends "cmd\0" or "cmd\n"; "cmd\n\0" is one line, not an empty one after it. */
		bool empty_after_newline = end == start && *end == '\0' && start > c->buf && start[-1] == '\n';
		if (c->discarding)
			c->discarding = false;
		else if (!empty_after_newline && !(end == start && *end == '\0'))
			handle_line(st, c, start, (size_t)(end - start));
		start = end + 1;
	}
	c->len -= (size_t)(start - c->buf);
	memmove(c->buf, start, c->len);
	if (c->len > MARKER_LINE_MAX) {
		if (!c->discarding) {
			/* No end within a line's limit: refuse it once and skip to its end. */
			st->tr->messages++;
			note_error(st, "(overlong line)", "longer than %d bytes", MARKER_LINE_MAX);
			if (c == &st->ch[0])
				reply_text(c, "err line too long\n");
			else
				ack(st, c);
			c->discarding = true;
		}
		c->len = 0;
	}
	return n;
}

static int make_fifos(struct target_state *st)
{
	const char *tmp = st->opt->tmpdir && *st->opt->tmpdir ? st->opt->tmpdir : "/tmp";

	if ((size_t)snprintf(st->dir, sizeof(st->dir), "%s/tlbprof-run.XXXXXX", tmp) >= sizeof(st->dir))
		return -ENAMETOOLONG;
	/* mkdtemp makes the directory 0700: nobody else can open, replace or read the FIFOs. */
	if (!mkdtemp(st->dir)) {
		st->dir[0] = '\0';
		return -errno;
	}
	snprintf(st->ctl_path, sizeof(st->ctl_path), "%s/ctl", st->dir);
	snprintf(st->ack_path, sizeof(st->ack_path), "%s/ack", st->dir);
	if (mkfifo(st->ctl_path, 0600) != 0 || mkfifo(st->ack_path, 0600) != 0)
		return -errno;
	/*
	 * Opened read-write: a FIFO open blocks until the other side opens, unless
	 * the opener holds both ends. So the command's open never blocks, and
	 * tlbprof never sees end-of-file when the command closes its end.
	 */
	st->ch[0].ctl = open(st->ctl_path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	st->ch[0].nonblocking = true;
	st->ch[0].ack = open(st->ack_path, O_RDWR | O_CLOEXEC);
	if (st->ch[0].ctl < 0 || st->ch[0].ack < 0)
		return -errno;
	return 0;
}

static int open_control(struct target_state *st)
{
	const struct target_options *o = st->opt;
	struct channel *c = &st->ch[1];

	if (o->ctl_path) {
		c->ctl = open(o->ctl_path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (c->ctl < 0)
			return -errno;
		c->nonblocking = true;
		if (o->ack_path && (c->ack = open(o->ack_path, O_RDWR | O_CLOEXEC)) < 0)
			return -errno;
	} else if (o->ctl_fd >= 0) {
		/*
		 * The caller's file description is shared: its flags stay as they
		 * are (drain_channel reads once per readiness, which never blocks).
		 */
		c->ctl = fcntl(o->ctl_fd, F_DUPFD_CLOEXEC, 0);
		if (c->ctl < 0)
			return -errno;
		if (o->ack_fd >= 0 && (c->ack = fcntl(o->ack_fd, F_DUPFD_CLOEXEC, 0)) < 0)
			return -errno;
	}
	return 0;
}

/*
 * The child between fork and exec: only async-signal-safe calls, plus setenv
 * (tlbprof is single-threaded). Whatever fails before the command runs is
 * sent to the parent as an errno on err_fd, which it reports as "cannot
 * execute".
 */
static void child_exec(struct target_state *st, int go_fd, int err_fd)
{
	char c;
	int e = 0;

	if (st->opt->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(st->opt->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) != 0)
			e = errno;
	}
	/* tlbprof ignores SIGPIPE; an ignored signal would stay ignored across exec. */
	signal(SIGPIPE, SIG_DFL);
	if (!e && (setenv(TLBPROF_MARKER_ENV_CTL, st->ctl_path, 1) != 0 ||
		   setenv(TLBPROF_MARKER_ENV_ACK, st->ack_path, 1) != 0))
		e = errno;
	if (!e) {
		/* Wait until the parent has attached the counters (it closes its end: read returns 0). */
		while (read(go_fd, &c, 1) < 0 && errno == EINTR)
			;
		execvp(st->opt->argv[0], st->opt->argv);
		e = errno;
	}
	while (write(err_fd, &e, sizeof(e)) < 0 && errno == EINTR)
		;
	_exit(127);
}

static void record_exit(struct target_result *tr, const siginfo_t *si)
{
	if (si->si_code == CLD_EXITED) {
		tr->exited = true;
		tr->exit_code = si->si_status;
	} else {
		tr->term_signal = si->si_status;
		tr->core_dumped = si->si_code == CLD_DUMPED;
	}
}

/*
 * Stop the command: SIGINT, then SIGKILL after the grace period, or at once
 * when a second signal reaches tlbprof (*stop counts them). Returns when it
 * has exited.
 */
static void stop_child(struct target_state *st, siginfo_t *si, volatile sig_atomic_t *stop)
{
	kill(st->pid, SIGINT);
	for (int waited = 0; waited < TARGET_KILL_GRACE_MS && *stop < 2; waited += 50) {
		memset(si, 0, sizeof(*si));
		if (waitid(P_PID, (id_t)st->pid, si, WEXITED | WNOHANG) == 0 && si->si_pid == st->pid)
			return;
		struct pollfd p = { st->pidfd, POLLIN, 0 };
		poll(&p, st->pidfd >= 0 ? 1 : 0, 50);
	}
	kill(st->pid, SIGKILL);
	while (waitid(P_PID, (id_t)st->pid, si, WEXITED) != 0 && errno == EINTR)
		;
}

/* After the exit: the last records, the summary, and each phase's share of the samples. */
static void finish_sampling(struct target_state *st)
{
	struct target_result *tr = st->tr;

	sample_drain(st->sampler, &st->sink, true);
	sample_info_get(st->sampler, &tr->sample_info);
	tr->sampled = true;
	if (sample_summarize(st->samples.items, st->samples.count, tr->sample_info.lost, st->syms, st->opt->sample_top,
			     &tr->sample_summary) != 0)
		snprintf(tr->sample_error, sizeof(tr->sample_error), "out of memory summarising the samples");
	for (size_t i = 0; i < st->out->n; i++)
		if (st->out->phases[i].target)
			st->out->phases[i].target->samples_in_phase =
				st->out->phases[i].spec.workload == &workload_command ? (int64_t)st->samples.count : 0;
	/* A slot's windows do not overlap and were closed in time order: one binary search per sample and slot. */
	for (int k = 0; k < 2; k++) {
		const struct slot *sl = &st->slot[k];
		for (size_t j = 0; j < st->samples.count; j++) {
			uint64_t t = st->samples.items[j].time_ns;
			size_t lo = 0, hi = sl->n_windows;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (sl->windows[mid].end_ns < t)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < sl->n_windows && sl->windows[lo].begin_ns <= t)
				st->out->phases[sl->windows[lo].phase].target->samples_in_phase++;
		}
	}
}

/* After the exit: the whole command's counters, and its one phase when it marked none. */
static void finish(struct target_state *st, uint64_t exec_ns, uint64_t exit_ns, uint64_t steal0)
{
	struct target_result *tr = st->tr;
	struct counter_set *cs = st->ctx->counters;
	bool fresh;

	tr->wall_ns = (double)(exit_ns - exec_ns);
	for (int k = 0; k < 2; k++)
		if (st->slot[k].phase >= 0)
			end_window(st, k, exit_ns, NULL, true);
	if (st->n_counters) {
		tr->n_counters = st->n_counters;
		tr->counter_info = calloc(st->n_counters, sizeof(*tr->counter_info));
		tr->counters = calloc(st->n_counters, sizeof(*tr->counters));
		if (tr->counter_info && tr->counters) {
			counter_set_read(cs, tr->counters);
			for (size_t i = 0; i < st->n_counters; i++)
				tr->counter_info[i] = *counter_set_info(cs, i);
		}
	}
	/* Each phase's 95 % CI of its median, once: at every end it would make many short phases quadratic. */
	for (size_t i = 0; i < st->out->n; i++)
		st->out->phases[i].precision_reached =
			stats_median_ci(st->out->phases[i].samples_ns, st->out->phases[i].n_samples);
	/*
	 * An unmarked command is one phase, from exec to exit; not when perf-style
	 * control kept counting off from the start (-D -1) and never enabled it.
	 */
	bool kept_off = st->opt->start_disabled && st->window_count == 0;
	if (st->out->n == 0 && tr->started && !kept_off) {
		struct phase_result *r = phase_for(st, NULL, COMMAND_NAME, &fresh);
		if (r) {
			r->spec.workload = &workload_command;
			r->target->occurrences = 1;
			r->spec.repeat = 1;
			append(&r->target->wall_ns, &r->target->n_wall, tr->wall_ns);
			r->target->tlbprof_ns_total = tr->wall_ns;
			r->timed_ns = tr->wall_ns;
			r->steal_ticks = environment_steal_ticks() - steal0;
			r->steal_ms = ms_of_ticks(r->steal_ticks);
			for (size_t i = 0; i < st->n_counters && tr->counters; i++)
				r->counters[i] = tr->counters[i];
			if (tr->counter_info)
				memcpy(r->counter_info, tr->counter_info, st->n_counters * sizeof(*r->counter_info));
		}
	}
	if (st->n_handling) {
		tr->handling_us_median = stats_median_inplace(st->handling_us, st->n_handling);
	}
	if (st->sampler)
		finish_sampling(st);
}

int target_run(const struct target_options *opt, const struct run_context *ctx, struct run_results *out,
	       struct target_result *tr)
{
	struct target_state st = { .opt = opt, .ctx = ctx, .out = out, .tr = tr, .pid = -1, .pidfd = -1,
				   .slot = { { .phase = -1 }, { .phase = -1 } } };
	int go[2] = { -1, -1 }, errp[2] = { -1, -1 }, rc = 0;
	siginfo_t si;

	memset(out, 0, sizeof(*out));
	memset(tr, 0, sizeof(*tr));
	tr->pid = -1;
	for (int i = 0; i < 2; i++)
		st.ch[i].ctl = st.ch[i].ack = -1;
	out->phases = calloc(TARGET_MAX_PHASES, sizeof(*out->phases));
	st.n_counters = counter_set_size(ctx->counters);
	for (int k = 0; k < 2; k++)
		st.slot[k].snap = calloc(st.n_counters + 1, sizeof(*st.slot[k].snap));
	st.snap_end = calloc(st.n_counters + 1, sizeof(*st.snap_end));
	if (!out->phases || !st.slot[0].snap || !st.slot[1].snap || !st.snap_end) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = make_fifos(&st)) != 0 || (rc = open_control(&st)) != 0)
		goto out;
	if (pipe2(go, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
		rc = -errno;
		goto out;
	}
	st.pid = fork();
	if (st.pid < 0) {
		rc = -errno;
		goto out;
	}
	if (st.pid == 0) {
		close(go[1]);
		close(errp[0]);
		child_exec(&st, go[0], errp[1]);
	}
	tr->pid = st.pid;
	close(go[0]);
	close(errp[1]);
	go[0] = errp[1] = -1;
	/* A pidfd wakes poll() at the child's exit; without one (ENOSYS: Linux < 5.3, valgrind) poll more often. */
	st.pidfd = (int)syscall(SYS_pidfd_open, st.pid, 0);
	/*
	 * Attach before exec: inherit covers every thread and child the command
	 * makes from its first instruction. How many events opened does not
	 * matter here: each one's status and reason go into the report.
	 */
	if (ctx->counters)
		(void)counter_set_open_task(ctx->counters, st.pid, true, true);
	if (opt->sample) {
		struct sample_options so = { .enable_on_exec = true };
		if (opt->sample_event) {
			so.custom_event = true;
			so.type = opt->sample_event->type;
			so.config = opt->sample_event->config;
			so.config1 = opt->sample_event->config1;
			so.config2 = opt->sample_event->config2;
			so.precise_ip = opt->sample_event->precise_ip;
			so.name = opt->sample_event->event;
		}
		st.syms = symbols_new();
		st.collector = (struct sample_collector){ .list = &st.samples, .syms = st.syms };
		sample_collector_sink(&st.collector, &st.sink);
		if (!st.syms)
			snprintf(tr->sample_error, sizeof(tr->sample_error), "out of memory");
		else if (sample_open(&st.sampler, st.pid, &so, tr->sample_error, sizeof(tr->sample_error)) != 0)
			st.sampler = NULL;
	}
	uint64_t steal0 = environment_steal_ticks();
	/* The command's wall time starts at the go-ahead: its counters start at the exec that follows. */
	uint64_t exec_ns = timing_now_ns();
	close(go[1]);
	go[1] = -1;
	int exec_err = 0;
	ssize_t n;
	while ((n = read(errp[0], &exec_err, sizeof(exec_err))) < 0 && errno == EINTR)
		;
	if (n > 0) {
		tr->exec_errno = exec_err;
		waitpid(st.pid, NULL, 0);
		rc = -ENOENT;
		goto out;
	}
	tr->started = true;
	/* perf stat without -D -1 counts from the start: an "enabled" window opens at exec. */
	if ((opt->ctl_path || opt->ctl_fd >= 0) && !opt->start_disabled) {
		bool fresh;
		struct phase_result *r = phase_for(&st, NULL, WINDOW_NAME, &fresh);
		if (r) {
			st.window_count++;
			begin_window(&st, SLOT_WINDOW, (size_t)(r - out->phases), 0);
		}
	}

	bool exited = false;
	while (!exited) {
		struct pollfd p[4] = { { st.pidfd, POLLIN, 0 }, { st.ch[0].ctl, POLLIN, 0 }, { st.ch[1].ctl, POLLIN, 0 },
				       { st.sampler ? sample_poll_fd(st.sampler) : -1, POLLIN, 0 } };
		if (ctx->stop && *ctx->stop) {
			stop_child(&st, &si, ctx->stop);
			tr->interrupted = out->interrupted = true;
			break;
		}
		/* A bounded wait: a signal between the stop test and poll is seen within 100 ms. */
		int ready = poll(p, 4, st.pidfd >= 0 ? 100 : 10);
		if (ready < 0)
			continue;
		/* Drain the sample rings whenever they fill, and at least every 100 ms, so none overflows. */
		if (st.sampler)
			sample_drain(st.sampler, &st.sink, false);
		for (int i = 0; i < 2; i++) {
			if (p[1 + i].revents & POLLIN) {
				drain_channel(&st, &st.ch[i]);
			} else if ((p[1 + i].revents & (POLLHUP | POLLERR | POLLNVAL)) && i == 1) {
				/* The controller closed its end (an fd: pipe): nothing more will come, stop polling it. */
				close(st.ch[1].ctl);
				st.ch[1].ctl = -1;
			}
		}
		if (st.pidfd < 0 || (p[0].revents & POLLIN)) {
			memset(&si, 0, sizeof(si));
			if (waitid(P_PID, (id_t)st.pid, &si, WEXITED | (st.pidfd < 0 ? WNOHANG : 0)) == 0 &&
			    si.si_pid == st.pid)
				exited = true;
		}
	}
	uint64_t exit_ns = timing_now_ns();
	/*
	 * Ctrl-C reaches the whole process group: the command may die of it
	 * before tlbprof's loop sees its own flag. It is still an interruption.
	 */
	if (ctx->stop && *ctx->stop)
		tr->interrupted = out->interrupted = true;
	record_exit(tr, &si);
	/*
	 * Lines the command wrote just before it exited (a perf-style "disable"
	 * needs no ack), while there are any: a caller's fd stays blocking, so
	 * only a channel poll calls readable is read.
	 */
	for (int rounds = 0; rounds < 64; rounds++) {
		struct pollfd q[2] = { { st.ch[0].ctl, POLLIN, 0 }, { st.ch[1].ctl, POLLIN, 0 } };
		if (poll(q, 2, 0) <= 0 || !((q[0].revents | q[1].revents) & POLLIN))
			break;
		for (int i = 0; i < 2; i++)
			if (q[i].revents & POLLIN)
				drain_channel(&st, &st.ch[i]);
	}
	finish(&st, exec_ns, exit_ns, steal0);
out:
	if (ctx->counters)
		counter_set_close(ctx->counters);
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	for (int i = 0; i < 2; i++) {
		if (st.ch[i].ctl >= 0)
			close(st.ch[i].ctl);
		if (st.ch[i].ack >= 0)
			close(st.ch[i].ack);
	}
	if (st.pidfd >= 0)
		close(st.pidfd);
	if (*st.dir) {
		unlink(st.ctl_path);
		unlink(st.ack_path);
		rmdir(st.dir);
	}
	for (int k = 0; k < 2; k++) {
		free(st.slot[k].snap);
		free(st.slot[k].windows);
	}
	free(st.snap_end);
	free(st.handling_us);
	sample_close(st.sampler);
	sample_list_free(&st.samples);
	symbols_delete(st.syms);
	return rc;
}

void target_result_free(struct target_result *tr)
{
	sample_summary_free(&tr->sample_summary);
	free(tr->counter_info);
	free(tr->counters);
	memset(tr, 0, sizeof(*tr));
}
