/* SPDX-License-Identifier: MIT */
/*
 * tlbprof run: the watch's uprobes on the command's libc clock functions: opened on its first thread before its
 * exec, following the threads of its processes as they start, closed at a budget of calls or a thread too many,
 * and what they saw, judged per thread (target/clocks.c) for the profile.
 */
#include "target/internal.h"

#include <asm/perf_regs.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"
#include "machine/timing.h"
#include "pmu/symbols.h"

/*
 * The uprobe on clock function fn for one thread: on the first before its
 * exec (enabled by it), on a later thread at once. Never inherited: the
 * kernel copies an inherited event at each clone(), and a uprobe event's copy
 * reads its path from the new task's memory at the address given here, which
 * fails the clone (pthread_create returns EFAULT).
 */
static struct sample_options clock_probe_options(const struct target_watch *w, int fn, bool at_exec, char *name,
						 size_t name_size)
{
	snprintf(name, name_size, "uprobe:%s", sample_clock_fn_name(fn));
	return (struct sample_options){
		.enable_on_exec = at_exec, .custom_event = true, .type = (uint32_t)w->uprobe_type,
		.config1 = (uint64_t)(uintptr_t)w->clocks.libc, .config2 = w->probes[fn].offset, .period = 1,
		.name = name, .no_data_addr = true, .ring_pages = 16, .per_task = true,
		.regs_user = fn == SAMPLE_CLOCK_GETTIME ? 1ull << PERF_REG_X86_DI : 0,
	};
}

/*
 * A uprobe on each clock function of the libc tlbprof runs (the one a
 * dynamically linked command maps too), or, for a command linked statically
 * (multichase as its Makefile builds it), of the program itself, which maps
 * no libc: attached to the child before its exec, as the perf uprobe PMU
 * takes the file and offset, no tracefs needed. clock_gettime's samples carry
 * %rdi, its clock id. Later threads of the process are followed by
 * clock_follow().
 */
void watch_clocks_open(struct target_watch *w, pid_t pid, const char *program)
{
	struct sample_clocks *c = &w->clocks;
	struct clock_probe *probes = w->probes;
	char file[PATH_MAX], real[PATH_MAX];
	int type = clocks_uprobe_type(), rc;

	if (type < 0) {
		snprintf(c->why, sizeof(c->why), "this kernel has no perf uprobe PMU "
			 "(/sys/bus/event_source/devices/uprobe/type: %s)", strerror(-type));
		return;
	}
	bool own = clocks_static_program(program);
	if (own)
		snprintf(file, sizeof(file), "%s", program);
	/* realpath() writes up to PATH_MAX bytes: never into the report's shorter field (fortify aborts). */
	if ((!own && clocks_libc_path(file, sizeof(file)) != 0) || !realpath(file, real) ||
	    strlen(real) >= sizeof(c->libc)) {
		snprintf(c->why, sizeof(c->why), own ? "the static program's path is too long to probe"
						     : "tlbprof found no libc of its own to probe");
		return;
	}
	memcpy(c->libc, real, strlen(real) + 1);
	w->uprobe_type = type;
	if ((rc = clocks_probes(c->libc, probes)) != 0) {
		snprintf(c->why, sizeof(c->why), "%.120s: %s", c->libc, strerror(-rc));
		return;
	}
	for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++) {
		struct sample_clock_function *f = &c->fn[fn];
		char name[48];
		if (!probes[fn].found) {
			snprintf(f->why, sizeof(f->why), own ? "not among the static program's symbols (stripped, or not "
				 "linked in)" : "not among libc's dynamic symbols");
			continue;
		}
		if (probes[fn].ifunc) {
			snprintf(f->why, sizeof(f->why), "an IFUNC: the loader binds it to the vDSO, so its calls never "
				 "enter libc and no uprobe sees them");
			continue;
		}
		const struct sample_options so = clock_probe_options(w, fn, true, name, sizeof(name));
		watch_session_open_into(w, &w->clockfn[fn], pid, &so, NULL);
		f->traced = w->clockfn[fn].s != NULL;
		if (!f->traced)
			snprintf(f->why, sizeof(f->why), "%s", w->clockfn[fn].error);
		c->traced |= f->traced;
	}
	if (!c->traced && !*c->why)
		snprintf(c->why, sizeof(c->why), "no clock function could be traced (%s)", c->fn[0].why);
	if (c->traced) {
		c->pid = (uint32_t)pid;
		c->threads = 1;
	}
}

/*
 * One clock function's sessions (the first thread's and every followed
 * one's), closed by a thread of their own, since each uprobe event's close
 * waits for its unregistration.
 */
struct watch_closer {
	pthread_t thread;
	size_t n;
	struct sample_session *s[1 + SAMPLE_CLOCK_FOLLOWED];
	struct watch_closer *next;
};

static void *closer_run(void *arg)
{
	struct watch_closer *c = arg;

	for (size_t i = 0; i < c->n; i++)
		sample_close(c->s[i]);
	return NULL;
}

/* Drain ws's last records into its list, then hand its session to c, to be closed in the background. */
static void close_later(struct watch_closer *c, struct watch_session *ws)
{
	if (!ws->s || c->n == sizeof(c->s) / sizeof(c->s[0]))
		return;	/* none, or (never: clock_follow() keeps to SAMPLE_CLOCK_FOLLOWED) closed at the end */
	sample_drain(ws->s, &ws->sink, true);
	c->s[c->n++] = ws->s;
	ws->s = NULL;
}

/* Start closing what c holds; closes it here when no thread can be started. */
static void closer_start(struct target_watch *w, struct watch_closer *c)
{
	if (!c->n || pthread_create(&c->thread, NULL, closer_run, c) != 0) {
		closer_run(c);
		free(c);
		return;
	}
	c->next = w->closers;
	w->closers = c;
}

/* The records ws's session lost so far (0 without one). */
static uint64_t session_lost(const struct watch_session *ws)
{
	struct sample_info info = { 0 };

	if (ws->s)
		sample_info_get(ws->s, &info);
	return info.lost;
}

/* Close every session of clock function fn, first thread and later ones, keeping what they saw and lost. */
static void clock_fn_stop(struct target_watch *w, int fn)
{
	struct watch_closer *c = calloc(1, sizeof(*c));
	struct watch_closer here = { 0 };

	if (!c)
		c = &here;	/* closed in place, below */
	w->clock_lost_closed[fn] += session_lost(&w->clockfn[fn]);
	close_later(c, &w->clockfn[fn]);
	for (size_t i = 0; i < w->n_clock_threads; i++) {
		w->clock_lost_closed[fn] += session_lost(&w->clock_threads[i]->fn[fn]);
		close_later(c, &w->clock_threads[i]->fn[fn]);
	}
	if (c == &here)
		closer_run(c);
	else
		closer_start(w, c);
}

/*
 * A followed thread exited: its place is free. Its probes stay open until
 * the end: on a dead task they trap nothing, and a close now would hold up
 * the next thread's open behind the kernel's unregistration (80 ms or more
 * per event, one after the other), long enough to miss a short thread.
 */
void watch_clock_thread_ended(struct target_watch *w, uint32_t tid)
{
	for (size_t i = 0; i < w->n_clock_threads; i++) {
		struct watch_clock_thread *t = w->clock_threads[i];
		if (t->tid == tid && !t->ended) {
			t->ended = true;
			w->clock_live--;
			return;
		}
	}
}

/*
 * A thread of a traced process seen for the first time (its fork record, or
 * /proc/PID/task): the probes still open follow it, since its calls trap
 * whether traced or not. One thread more than SAMPLE_CLOCK_THREADS alive at
 * once stops all tracing instead: untraced, its calls would each cost a
 * trap for nothing, and without end.
 */
void watch_clock_follow(struct target_watch *w, uint32_t tid)
{
	struct sample_clocks *c = &w->clocks;
	bool open = false;

	if (!c->traced || c->threads_capped || tid == (uint32_t)w->pid)
		return;	/* the first thread has its probes since before its exec */
	for (size_t i = 0; i < w->n_clock_threads; i++)
		if (w->clock_threads[i]->tid == tid)
			return;
	for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++)
		open |= w->clockfn[fn].s != NULL;
	if (!open)
		return;	/* every probe stopped at its budget: nothing traps any more */
	/* The first thread is one of SAMPLE_CLOCK_THREADS alive and of SAMPLE_CLOCK_FOLLOWED in all. */
	if (w->clock_live + 1 >= SAMPLE_CLOCK_THREADS || w->n_clock_threads + 1 >= SAMPLE_CLOCK_FOLLOWED) {
		c->threads_capped = true;
		c->threads_capped_ms = (timing_now_ns() - w->start_ns) / 1000000u;
		for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++)
			clock_fn_stop(w, fn);
		return;
	}
	struct watch_clock_thread *t = calloc(1, sizeof(*t));
	if (!t || !array_grow((void **)&w->clock_threads, &w->cap_clock_threads, w->n_clock_threads + 1,
			      sizeof(struct watch_clock_thread *), 8)) {
		free(t);
		return;
	}
	w->clock_threads[w->n_clock_threads++] = t;
	bool any = false;
	t->tid = tid;
	t->opened_ns = timing_now_ns();
	for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++) {
		char name[48];
		if (!w->clockfn[fn].s)
			continue;
		const struct sample_options so = clock_probe_options(w, fn, false, name, sizeof(name));
		watch_session_open_into(w, &t->fn[fn], (pid_t)tid, &so, &w->clockfn[fn].samples);
		any |= t->fn[fn].s != NULL;
	}
	if (!any) {
		/* The thread was gone already: it takes no place. */
		for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++)
			watch_session_close(&t->fn[fn]);
		free(t);
		w->n_clock_threads--;
		return;
	}
	t->traced = true;
	w->clock_live++;
	c->threads++;
}

/*
 * Drain the clock probes; close a function's probes on every thread when
 * their calls, all threads together, reached its budget (each call is a
 * trap), keeping what they saw.
 */
void watch_clocks_tick(struct target_watch *w)
{
	for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++) {
		struct watch_session *ws = &w->clockfn[fn];
		if (!ws->s)
			continue;
		sample_drain(ws->s, &ws->sink, false);
		for (size_t i = 0; i < w->n_clock_threads; i++) {
			struct watch_session *t = &w->clock_threads[i]->fn[fn];
			if (t->s)
				sample_drain(t->s, &t->sink, false);
		}
		if (ws->samples.count < SAMPLE_CLOCK_BUDGET)
			continue;
		clock_fn_stop(w, fn);
		w->clocks.fn[fn].stopped = true;
		w->clocks.fn[fn].stopped_ms = (timing_now_ns() - w->start_ns) / 1000000u;
	}
}

/*
 * The command is gone: every probe still open is drained and its close
 * started in the background, so that the kernel's unregistrations (one after
 * the other, 70-90 ms each here) overlap the profile's work rather than
 * follow it. What they saw and lost is kept for watch_clocks_finish().
 * Once done, nothing is open: a second call does nothing.
 */
void watch_clocks_release(struct target_watch *w)
{
	for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++)
		clock_fn_stop(w, fn);
}

static int time_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* Whether ip or addr of process pid lies in a clock call's own pages: the vDSO's code, or the probes' [uprobes]. */
static bool in_clock_call(const struct symbols *syms, uint32_t pid, uint64_t ip, uint64_t addr)
{
	static const char *const pages[] = { "[vdso]", "[uprobes]" };
	const struct symbols_mapping *m[] = { symbols_mapping_find(syms, (pid_t)pid, ip),
					      symbols_mapping_find(syms, (pid_t)pid, addr) };

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		for (size_t k = 0; m[i] && k < sizeof(pages) / sizeof(pages[0]); k++)
			if (strcmp(m[i]->path, pages[k]) == 0)
				return true;
	return false;
}

/*
 * The times of the hot thread's page faults inside its clock calls (struct clocks_own), sorted, into *out (NULL
 * and 0 where none or out of memory: the windows as read). The fault session's mappings, from its mmap records,
 * name the vDSO and the single-step page.
 */
static size_t clock_own_faults(const struct sample_list *faults, const struct symbols *syms, uint32_t hot_tid,
			       uint64_t **out)
{
	size_t n = 0, cap = 0;

	*out = NULL;
	for (size_t i = 0; faults && syms && i < faults->count; i++) {
		const struct sample_record *r = &faults->items[i];
		if (r->tid != hot_tid || !in_clock_call(syms, r->pid, r->ip, r->addr))
			continue;
		if (!array_grow((void **)out, &cap, n + 1, sizeof(**out), 8)) {
			free(*out);
			*out = NULL;
			return 0;
		}
		(*out)[n++] = r->time_ns;
	}
	if (n)
		qsort(*out, n, sizeof(**out), time_cmp);
	return n;
}

/* After the profile (it names the hot thread): the hot thread's reads, windows and clocks. */
void watch_clocks_finish(struct target_watch *w, const struct sample_list *faults, const struct symbols *fsyms,
			 struct sample_profile *p)
{
	struct sample_list lists[SAMPLE_CLOCK_FNS];
	uint64_t res[SAMPLE_CLOCK_IDS] = { 0 };
	long tck = sysconf(_SC_CLK_TCK);

	/* Their last records, and every loss in clock_lost_closed (target_watch_exited() did it already). */
	watch_clocks_release(w);
	for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++) {
		lists[fn] = w->clockfn[fn].samples;
		w->clocks.fn[fn].calls = w->clockfn[fn].samples.count;
		w->clocks.fn[fn].lost = w->clock_lost_closed[fn];
	}
	for (int id = 0; id < SAMPLE_CLOCK_IDS - 1; id++) {
		struct timespec ts;
		if (clock_getres((clockid_t)id, &ts) == 0)
			res[id] = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	p->clocks = w->clocks;
	p->clocks.hot_traced = w->clocks.traced && p->hot_tid && p->hot_tid == w->clocks.pid;
	for (size_t i = 0; i < w->n_clock_threads; i++)
		p->clocks.hot_traced |= w->clock_threads[i]->traced && w->clock_threads[i]->tid == p->hot_tid;
	/* Switches are exact only where none was lost: a lost switch in would leave the thread off a CPU for good. */
	struct sample_info info = { 0 };
	if (w->clock.s)
		sample_info_get(w->clock.s, &info);
	/* PERF_RECORD_MISC_SWITCH_OUT_PREEMPT from Linux 4.17: before, every switch out reads as a block. */
	const struct clocks_switches sw = { w->switches, w->n_switches, w->command_cpus,
					    sample_release_at_least(NULL, 4, 17) };
	bool sw_known = w->clock.s && w->clock_switches && !info.lost && !w->switches_short;
	uint64_t *own_t;
	size_t n_own = clock_own_faults(faults, fsyms, p->hot_tid, &own_t);
	const struct clocks_own own = { own_t, n_own };
	clocks_profile(lists, p->hot_tid, res, tck > 0 ? 1000000000u / (uint64_t)tck : 10000000u, sw_known ? &sw : NULL,
		       &own, &p->clocks);
	free(own_t);
	clocks_span(&w->clock.samples, p->has_pattern ? faults : NULL, p->fault_region_start, p->fault_region_end,
		    p->hot_tid, p->hot_pid, &p->clocks);
	/* None lost or throttled away: their count in the span measures the hot thread's time there. */
	p->clocks.span_fast_rate = p->clocks.windows && p->clock_period_ns == SAMPLE_CPU_CLOCK_PERIOD_NS &&
				   (!w->clock_slow_ns || p->clocks.last_read_ns < w->clock_slow_ns) && w->clock.s &&
				   !info.lost && !info.throttled;
	(void)clocks_measured(lists, p->hot_tid, p->hot_pid, w->hot_marks, w->n_hot_marks, p->has_pattern ? faults : NULL,
			      p->fault_region_start, p->fault_region_end, sw_known ? &sw : NULL, &p->clocks);
	/* A hot thread followed after it started: its samples before its probes opened may hide unseen reads. */
	for (size_t i = 0; i < w->n_clock_threads && p->hot_tid != w->clocks.pid; i++) {
		const struct watch_clock_thread *t = w->clock_threads[i];
		if (t->tid != p->hot_tid)
			continue;
		for (size_t k = 0; k < w->clock.samples.count; k++)
			p->clocks.hot_samples_untraced += w->clock.samples.items[k].tid == t->tid &&
							  w->clock.samples.items[k].time_ns < t->opened_ns;
	}
	for (size_t i = 0; w->clock.syms && i < symbols_mapping_count(w->clock.syms, (pid_t)p->hot_pid); i++) {
		const struct symbols_mapping *m = symbols_mapping_get(w->clock.syms, (pid_t)p->hot_pid, i);
		p->clocks.libc_mapped |= strcmp(m->path, w->clocks.libc) == 0;
	}
	/*
	 * A probe hit in the hot thread is proof that its process mapped that
	 * libc, even where the mapping record did not reach the clock session
	 * (broken-deleted_loop, 1 run in 150 under the ASan build).
	 */
	p->clocks.libc_mapped |= p->clocks.hot_reads > 0;
}

/*
 * Close what is still open, in the background as watch_clocks_release()
 * does (the kernel's unregistrations of the functions' probes then overlap
 * where they can: 0.59 s against 0.67 s for six events here), and wait for
 * every close started.
 */
void watch_clocks_close(struct target_watch *w)
{
	watch_clocks_release(w);
	for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++)
		watch_session_close(&w->clockfn[fn]);
	for (size_t i = 0; i < w->n_clock_threads; i++) {
		for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++)
			watch_session_close(&w->clock_threads[i]->fn[fn]);
		free(w->clock_threads[i]);
	}
	free(w->clock_threads);
	while (w->closers) {
		struct watch_closer *c = w->closers;
		w->closers = c->next;
		pthread_join(c->thread, NULL);
		free(c);
	}
}

