/* SPDX-License-Identifier: MIT */
/* tlbprof run: start someone else's benchmark, follow its phase markers or perf control commands, measure each phase. */
#include "target.h"

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

#include "analysis.h"
#include "chain.h"
#include "environment.h"
#include "marker.h"
#include "region.h"
#include "smaps.h"
#include "symbols.h"
#include "timing.h"
#include "workload.h"

#include "tlbprof/marker.h"

const struct workload_ops target_phase_workload = {
	.name = "run",
	.description = "a phase of someone else's benchmark, marked by it (tlbprof run)",
	.latency = true,
};

const struct workload_ops target_command_workload = {
	.name = "command",
	.description = "someone else's whole benchmark, unmarked (tlbprof run)",
	.faults_expected = true,	/* a whole program maps and touches its memory: faults are part of it */
};

#define TARGET_MAX_PHASES 256
#define TARGET_KILL_GRACE_MS 2000
/* A declared region is copied into tlbprof to walk its chain: at most this, and half of MemAvailable. */
#define TARGET_CHAIN_COPY_MAX (4ull << 30)
#define WINDOW_NAME "enabled"

/* A channel the command talks on: the marker FIFOs, or the user's perf-style control. */
struct channel {
	int ctl, ack;			/* ack -1: nothing is acknowledged */
	char buf[2 * MARKER_LINE_MAX];
	size_t len;
	bool discarding;		/* inside an overlong line, until its newline */
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
	struct counter_reading *snap_begin, *snap_end;
	long open_phase;		/* index in out->phases, -1: none */
	uint64_t begin_ns, begin_steal;
	uint64_t pending_accesses;	/* declared at begin */
	double *handling_us;
	size_t n_handling, cap_handling;
	/* --sample: the session, what it collected, and each phase window to attribute samples to. */
	struct sample_session *sampler;
	struct sample_list samples;
	struct symbols *syms;
	struct sample_sink sink;
	struct sample_collector collector;
	struct window {
		size_t phase;
		uint64_t begin_ns, end_ns;
	} *windows;
	size_t n_windows, cap_windows;
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

static void reply(const struct channel *c, const char *text)
{
	if (c->ack < 0)
		return;
	size_t len = strlen(text), off = 0;
	while (off < len) {
		ssize_t n = write(c->ack, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;	/* the command stopped reading: it will see its own error */
		off += (size_t)n;
	}
}

/* Read the whole /proc/PID/smaps (NUL-terminated, caller frees), or NULL. */
static char *read_smaps(pid_t pid)
{
	char path[64];
	size_t cap = 1 << 16, len = 0;
	char *text = malloc(cap);
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !text) {
		if (fd >= 0)
			close(fd);
		free(text);
		return NULL;
	}
	for (;;) {
		if (len + 4096 + 1 > cap) {
			char *bigger = realloc(text, cap * 2);
			if (!bigger) {
				free(text);
				close(fd);
				return NULL;
			}
			text = bigger;
			cap *= 2;
		}
		ssize_t n = read(fd, text + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	text[len] = '\0';
	return text;
}

/* The declared page size against what the kernel gave the declared region (smaps, at phase end). */
static void verify_region(struct target_state *st, struct phase_result *r)
{
	struct target_phase *tp = r->target;
	struct region_backing b;
	char *text = read_smaps(st->pid);

	if (!text)
		return;
	int rc = smaps_summarize(text, (uintptr_t)tp->region_addr, (uintptr_t)(tp->region_addr + tp->region_bytes),
				 4096, &b);
	free(text);
	if (rc != 0)
		return;
	/* "2m" names the size the benchmark intends; a 2 MiB hugetlb region is what it asked for too. */
	if (r->spec.page.bytes == (2ull << 20) && b.kind == PAGE_HUGETLB && b.kernel_page_bytes == r->spec.page.bytes)
		page_request_parse("2m:hugetlb", &r->spec.page);
	r->backing = b;
	r->backing_known = true;
}

/* Copy the declared region out of the command and walk its chain with the chase's self-checks. */
static void inspect_chain(struct target_state *st, struct phase_result *r)
{
	struct target_phase *tp = r->target;
	uint64_t avail = region_mem_available();
	struct self_check checks[2];
	struct chain_walk walk;

	if (tp->region_bytes > TARGET_CHAIN_COPY_MAX || (avail && tp->region_bytes > avail / 2)) {
		r->self_checks[r->n_self_checks] = (struct self_check){ .id = "single_cycle", .status = CHECK_SKIP };
		snprintf(r->self_checks[r->n_self_checks++].message, sizeof(r->self_checks[0].message),
			 "not inspected: the %llu-byte region is too large to copy", (unsigned long long)tp->region_bytes);
		return;
	}
	char *copy = malloc(tp->region_bytes);
	uint64_t done = 0;
	while (copy && done < tp->region_bytes) {
		size_t chunk = (size_t)(tp->region_bytes - done < (64u << 20) ? tp->region_bytes - done : (64u << 20));
		struct iovec local = { copy + done, chunk };
		struct iovec remote = { (void *)(uintptr_t)(tp->region_addr + done), chunk };
		ssize_t n = process_vm_readv(st->pid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			break;
		done += (uint64_t)n;
	}
	if (!copy || done < tp->region_bytes) {
		r->self_checks[r->n_self_checks] = (struct self_check){ .id = "single_cycle", .status = CHECK_SKIP };
		snprintf(r->self_checks[r->n_self_checks++].message, sizeof(r->self_checks[0].message),
			 "not inspected: could not read the region from the process (%s)",
			 copy ? strerror(errno) : "out of memory");
		free(copy);
		return;
	}
	if (chain_check_foreign(copy, tp->region_addr, tp->region_bytes, tp->chain_addr, tp->slots_declared, checks,
				&walk) == 0) {
		r->self_checks[r->n_self_checks++] = checks[0];
		r->self_checks[r->n_self_checks++] = checks[1];
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
	s->workload = &target_phase_workload;
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
		if (m->slots && m->has_region)
			s->stride_bytes = m->region_bytes / m->slots;
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

static void begin_window(struct target_state *st, size_t index, uint64_t accesses)
{
	st->open_phase = (long)index;
	st->pending_accesses = accesses;
	if (st->n_counters)
		counter_set_read(st->ctx->counters, st->snap_begin);
	st->begin_steal = environment_steal_ticks();
	st->begin_ns = timing_now_ns();
}

/* Close the open window at now_ns: counts, wall time, the region's backing. */
static void end_window(struct target_state *st, uint64_t now_ns, const struct marker_msg *m, bool at_exit)
{
	struct phase_result *r = &st->out->phases[st->open_phase];
	struct target_phase *tp = r->target;
	struct counter_set *cs = st->ctx->counters;

	if (st->n_counters) {
		counter_set_read(cs, st->snap_end);
		for (size_t i = 0; i < st->n_counters; i++) {
			const struct counter_info *ci = counter_set_info(cs, i);
			counter_reading_add_delta(&r->counters[i], &st->snap_begin[i], &st->snap_end[i], ci->hardware);
			/* Keep the worst status seen (a multiplexed window makes the phase multiplexed). */
			if (r->counter_info[i].status == COUNTER_OK || ci->status != COUNTER_OK)
				r->counter_info[i] = *ci;
		}
	}
	r->steal_ticks += environment_steal_ticks() - st->begin_steal;
	r->steal_ms = ms_of_ticks(r->steal_ticks);
	double seen_ns = (double)(now_ns - st->begin_ns);
	if (st->sampler) {
		if (st->n_windows == st->cap_windows) {
			size_t cap = st->cap_windows ? 2 * st->cap_windows : 64;
			struct window *bigger = realloc(st->windows, cap * sizeof(*bigger));
			if (bigger) {
				st->windows = bigger;
				st->cap_windows = cap;
			}
		}
		if (st->n_windows < st->cap_windows)
			st->windows[st->n_windows++] = (struct window){ (size_t)st->open_phase, st->begin_ns, now_ns };
		/* The stack and other mappings no mmap record announces, read while the command waits. */
		if (tp->occurrences == 0)
			symbols_maps_read(st->syms, st->pid);
	}
	double wall = m && m->has_ns ? (double)m->ns : seen_ns;
	uint64_t accesses = m && m->has_accesses ? m->accesses : st->pending_accesses;
	tp->tlbprof_ns_total += seen_ns;
	append(&tp->wall_ns, &tp->n_wall, wall);
	r->timed_ns += wall;
	tp->occurrences++;
	r->spec.repeat = tp->occurrences;
	if (m && m->timings)
		r->spec.timings = m->timings > r->spec.timings ? m->timings : r->spec.timings;
	if (accesses) {
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
	 * later (khugepaged) without taxing every boundary.
	 */
	if (tp->has_region && tp->has_page && !at_exit && (tp->occurrences & (tp->occurrences - 1)) == 0)
		verify_region(st, r);
	if (at_exit) {
		tp->open_at_exit = true;
		if (r->spec.workload == &target_phase_workload)
			snprintf(r->reason, sizeof(r->reason), "the command exited inside the phase: its last "
				 "occurrence ends at the exit");
	}
	r->precision_reached = analysis_median_ci(r->samples_ns, r->n_samples);
	st->open_phase = -1;
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
		reply(c, c == &st->ch[0] ? "err bad message\n" : "ack\n");
		return;
	}
	const struct phase_result *open = st->open_phase >= 0 ? &st->out->phases[st->open_phase] : NULL;
	switch (m.type) {
	case MARKER_BEGIN: {
		st->tr->markers_seen = true;
		if (open) {
			note_error(st, shown, "phase '%s' is still open (phases do not nest)", open->spec.name);
			reply(c, "err a phase is open\n");
			return;
		}
		struct phase_result *r = phase_for(st, &m, m.name, &fresh);
		if (!r) {
			note_error(st, shown, "more than %d phase names, or out of memory", TARGET_MAX_PHASES);
			reply(c, "err too many phases\n");
			return;
		}
		/* Inspect before the snapshot: the command is blocked on the ack, nothing of it is counted. */
		if (fresh && m.has_chain)
			inspect_chain(st, r);
		begin_window(st, (size_t)(r - st->out->phases), m.has_accesses ? m.accesses : 0);
		break;
	}
	case MARKER_END:
		if (!open || open->spec.workload != &target_phase_workload) {
			note_error(st, shown, "no phase is open");
			reply(c, "err no phase is open\n");
			return;
		}
		end_window(st, t_read, &m, false);
		break;
	case MARKER_ENABLE:
		st->tr->control_seen = true;
		if (!open) {
			struct phase_result *r = phase_for(st, NULL, WINDOW_NAME, &fresh);
			if (r)
				begin_window(st, (size_t)(r - st->out->phases), 0);
		}
		break;
	case MARKER_DISABLE:
		st->tr->control_seen = true;
		if (open && strcmp(open->spec.name, WINDOW_NAME) == 0)
			end_window(st, t_read, NULL, false);
		break;
	case MARKER_PING:
		st->tr->control_seen = true;
		break;
	}
	reply(c, "ack\n");
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

/* Read what channel c has and handle each whole line. */
static void drain_channel(struct target_state *st, struct channel *c)
{
	for (;;) {
		ssize_t n = read(c->ctl, c->buf + c->len, sizeof(c->buf) - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		c->len += (size_t)n;
		char *start = c->buf, *nl;
		while ((nl = memchr(start, '\n', c->len - (size_t)(start - c->buf))) != NULL) {
			if (c->discarding)
				c->discarding = false;
			else
				handle_line(st, c, start, (size_t)(nl - start));
			start = nl + 1;
		}
		c->len -= (size_t)(start - c->buf);
		memmove(c->buf, start, c->len);
		if (c->len > MARKER_LINE_MAX) {
			/* No newline within a line's limit: refuse it and skip to its end. */
			note_error(st, "(overlong line)", "longer than %d bytes", MARKER_LINE_MAX);
			reply(c, c == &st->ch[0] ? "err line too long\n" : "ack\n");
			c->discarding = true;
			c->len = 0;
		}
	}
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
		if (o->ack_path && (c->ack = open(o->ack_path, O_RDWR | O_CLOEXEC)) < 0)
			return -errno;
	} else if (o->ctl_fd >= 0) {
		c->ctl = dup(o->ctl_fd);
		if (c->ctl < 0 || fcntl(c->ctl, F_SETFL, fcntl(c->ctl, F_GETFL) | O_NONBLOCK) != 0 ||
		    fcntl(c->ctl, F_SETFD, FD_CLOEXEC) != 0)
			return -errno;
		if (o->ack_fd >= 0 && (c->ack = fcntl(o->ack_fd, F_DUPFD_CLOEXEC, 0)) < 0)
			return -errno;
	}
	return 0;
}

/* The child between fork and exec: only async-signal-safe calls, plus setenv (tlbprof is single-threaded). */
static void child_exec(struct target_state *st, int go_fd, int err_fd)
{
	char c;
	int e;

	if (st->opt->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(st->opt->cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	setenv(TLBPROF_MARKER_ENV_CTL, st->ctl_path, 1);
	setenv(TLBPROF_MARKER_ENV_ACK, st->ack_path, 1);
	/* Wait until the parent has attached the counters (it closes its end: read returns 0). */
	while (read(go_fd, &c, 1) < 0 && errno == EINTR)
		;
	execvp(st->opt->argv[0], st->opt->argv);
	e = errno;
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

/* Stop the command: SIGINT, then SIGKILL after the grace period. Returns when it has exited. */
static void stop_child(struct target_state *st, siginfo_t *si)
{
	kill(st->pid, SIGINT);
	for (int waited = 0; waited < TARGET_KILL_GRACE_MS; waited += 50) {
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
				st->out->phases[i].spec.workload == &target_command_workload ? (int64_t)st->samples.count : 0;
	/* Windows do not overlap and were closed in time order: one binary search per sample. */
	for (size_t k = 0; k < st->samples.count; k++) {
		uint64_t t = st->samples.items[k].time_ns;
		size_t lo = 0, hi = st->n_windows;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (st->windows[mid].end_ns < t)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < st->n_windows && st->windows[lo].begin_ns <= t)
			st->out->phases[st->windows[lo].phase].target->samples_in_phase++;
	}
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* After the exit: the whole command's counters, and its one phase when it marked none. */
static void finish(struct target_state *st, uint64_t exec_ns, uint64_t exit_ns, uint64_t steal0)
{
	struct target_result *tr = st->tr;
	struct counter_set *cs = st->ctx->counters;
	bool fresh;

	tr->wall_ns = (double)(exit_ns - exec_ns);
	if (st->open_phase >= 0)
		end_window(st, exit_ns, NULL, true);
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
	if (st->out->n == 0 && tr->started) {
		struct phase_result *r = phase_for(st, NULL, "command", &fresh);
		if (r) {
			r->spec.workload = &target_command_workload;
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
		qsort(st->handling_us, st->n_handling, sizeof(double), compare_double);
		tr->handling_us_median = st->handling_us[st->n_handling / 2];
	}
	if (st->sampler)
		finish_sampling(st);
}

int target_run(const struct target_options *opt, const struct run_context *ctx, struct run_results *out,
	       struct target_result *tr)
{
	struct target_state st = { .opt = opt, .ctx = ctx, .out = out, .tr = tr, .pid = -1, .pidfd = -1,
				   .open_phase = -1 };
	int go[2] = { -1, -1 }, errp[2] = { -1, -1 }, rc = 0;
	siginfo_t si;

	memset(out, 0, sizeof(*out));
	memset(tr, 0, sizeof(*tr));
	tr->pid = -1;
	for (int i = 0; i < 2; i++)
		st.ch[i].ctl = st.ch[i].ack = -1;
	out->phases = calloc(TARGET_MAX_PHASES, sizeof(*out->phases));
	st.n_counters = counter_set_size(ctx->counters);
	st.snap_begin = calloc(st.n_counters + 1, sizeof(*st.snap_begin));
	st.snap_end = calloc(st.n_counters + 1, sizeof(*st.snap_end));
	if (!out->phases || !st.snap_begin || !st.snap_end) {
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
	/* Attach before exec: inherit covers every thread and child the command makes from its first instruction. */
	if (ctx->counters)
		counter_set_open_task(ctx->counters, st.pid, true, true);
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
		if (r)
			begin_window(&st, (size_t)(r - out->phases), 0);
	}

	bool exited = false;
	while (!exited) {
		struct pollfd p[4] = { { st.pidfd, POLLIN, 0 }, { st.ch[0].ctl, POLLIN, 0 }, { st.ch[1].ctl, POLLIN, 0 },
				       { st.sampler ? sample_poll_fd(st.sampler) : -1, POLLIN, 0 } };
		if (ctx->stop && *ctx->stop) {
			stop_child(&st, &si);
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
		for (int i = 0; i < 2; i++)
			if (p[1 + i].revents & POLLIN)
				drain_channel(&st, &st.ch[i]);
		if (st.pidfd < 0 || (p[0].revents & POLLIN)) {
			memset(&si, 0, sizeof(si));
			if (waitid(P_PID, (id_t)st.pid, &si, WEXITED | (st.pidfd < 0 ? WNOHANG : 0)) == 0 &&
			    si.si_pid == st.pid)
				exited = true;
		}
	}
	uint64_t exit_ns = timing_now_ns();
	record_exit(tr, &si);
	/* Lines the command wrote just before it exited (a perf-style "disable" needs no ack). */
	for (int i = 0; i < 2; i++)
		if (st.ch[i].ctl >= 0)
			drain_channel(&st, &st.ch[i]);
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
	free(st.snap_begin);
	free(st.snap_end);
	free(st.handling_us);
	sample_close(st.sampler);
	sample_list_free(&st.samples);
	symbols_delete(st.syms);
	free(st.windows);
	return rc;
}

void target_result_free(struct target_result *tr)
{
	sample_summary_free(&tr->sample_summary);
	free(tr->counter_info);
	free(tr->counters);
	memset(tr, 0, sizeof(*tr));
}
