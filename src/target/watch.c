/* SPDX-License-Identifier: MIT */
/* tlbprof run: watch an unmarked command: its smaps over time, its threads' affinity, cpu-clock and fault samples. */
#include "target/internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <asm/perf_regs.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <linux/perf_event.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "parse.h"
#include "readall.h"
#include "machine/timing.h"
#include "pmu/symbols.h"
#include "stats.h"

/* ---- pure parsers ------------------------------------------------------------ */

/* The value in kB of "Key:   123 kB" at line (key given with its colon), in bytes; false when the line is another. */
static bool kb_field(const char *line, const char *eol, const char *key, uint64_t *out)
{
	size_t k = strlen(key);

	if ((size_t)(eol - line) <= k || strncmp(line, key, k) != 0)
		return false;
	uint64_t v = 0;
	const char *p = line + k;
	while (p < eol && (*p == ' ' || *p == '\t'))	/* smaps pads with spaces, status with a tab first */
		p++;
	if (p == eol || !isdigit((unsigned char)*p))
		return false;
	while (p < eol && isdigit((unsigned char)*p))
		v = v * 10 + (uint64_t)(*p++ - '0');
	*out = v * 1024;
	return true;
}

/* A VMA header line: "start-end perms offset dev inode [name]". */
static bool vma_header(const char *line, const char *eol, struct watch_vma *v)
{
	unsigned long long start, end, off, inode;
	char perms[8], dev[16];
	int used = 0;
	char tmp[256];
	size_t n = (size_t)(eol - line) < sizeof(tmp) - 1 ? (size_t)(eol - line) : sizeof(tmp) - 1;

	memcpy(tmp, line, n);
	tmp[n] = '\0';
	if (sscanf(tmp, "%llx-%llx %7s %llx %15s %llu %n", &start, &end, perms, &off, dev, &inode, &used) < 6 ||
	    end <= start)
		return false;
	memset(v, 0, sizeof(*v));
	v->start = start;
	v->end = end;
	v->anonymous = inode == 0;
	/* The name is the rest of the line, after the header's padding (it may hold spaces). */
	const char *name = line;
	int fields = 0;
	for (const char *p = line; p < eol && fields < 5; fields++) {
		while (p < eol && *p != ' ')
			p++;
		while (p < eol && *p == ' ')
			p++;
		name = p;
	}
	v->name = fields == 5 ? name : eol;
	v->name_len = (size_t)(eol - v->name);
	(void)used;
	return true;
}

int watch_smaps_parse(const char *text, size_t len, void (*fn)(void *ctx, const struct watch_vma *v), void *ctx)
{
	const char *p = text, *end = text + len;
	struct watch_vma v;
	bool open = false;
	int n = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		uint64_t val;
		/* A header starts with a hex digit and has a '-' in its first word; a field starts with a capital. */
		if (isxdigit((unsigned char)*p) && !isupper((unsigned char)*p) && memchr(p, '-', (size_t)(eol - p))) {
			struct watch_vma next;
			if (vma_header(p, eol, &next)) {
				if (open)
					fn(ctx, &v);
				v = next;
				open = true;
				n++;
			}
		} else if (open) {
			if (kb_field(p, eol, "Rss:", &val))
				v.rss_bytes = val;
			else if (kb_field(p, eol, "AnonHugePages:", &val))
				v.anon_huge_bytes = val;
			else if (kb_field(p, eol, "Private_Hugetlb:", &val) || kb_field(p, eol, "Shared_Hugetlb:", &val))
				v.hugetlb_bytes += val;
			else if (kb_field(p, eol, "KernelPageSize:", &val))
				v.kernel_page_bytes = val;
			else if ((size_t)(eol - p) > 8 && strncmp(p, "VmFlags:", 8) == 0) {
				for (const char *f = p + 8; f + 1 < eol; f++)
					if (f[-1] == ' ' && (f + 2 == eol || f[2] == ' ')) {
						v.vm_hg |= f[0] == 'h' && f[1] == 'g';
						v.vm_nh |= f[0] == 'n' && f[1] == 'h';
					}
			}
		}
		p = eol + 1;
	}
	if (open)
		fn(ctx, &v);
	return n || len == 0 ? n : -EINVAL;
}

int watch_status_rss(const char *text, size_t len, uint64_t *rss_bytes)
{
	const char *p = text, *end = text + len;

	*rss_bytes = 0;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if (kb_field(p, eol, "VmRSS:", rss_bytes))
			return 0;
		p = eol + 1;
	}
	return -EINVAL;
}

/* ---- reading /proc ------------------------------------------------------------ */

/* The most of one /proc file read: a process's smaps with 100 000 mappings is some 30 MB. */
#define WATCH_PROC_MAX_BYTES (256u << 20)

/* Read a whole /proc file into w->buf (NUL-terminated). Returns its length or -errno. */
static ssize_t read_proc(struct target_watch *w, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	ssize_t n = read_all(fd, &w->buf, &w->buf_cap, WATCH_PROC_MAX_BYTES);
	close(fd);
	return n;
}

static void region_point(struct watch_region *wr, const struct sample_watch_point *pt)
{
	if (!wr->pts && !(wr->pts = calloc(WATCH_MAX_POINTS, sizeof(*wr->pts))))
		return;
	if (wr->stride == 0)
		wr->stride = 1;
	if (wr->seen++ % wr->stride != 0)
		return;
	if (wr->n_pts == WATCH_MAX_POINTS) {
		for (size_t i = 0; i < WATCH_MAX_POINTS / 2; i++)
			wr->pts[i] = wr->pts[2 * i];
		wr->n_pts = WATCH_MAX_POINTS / 2;
		wr->stride *= 2;
	}
	wr->pts[wr->n_pts++] = *pt;
}

/*
 * The table is full: the region of a process that is gone with the least Rss gives its place (a script's
 * short-lived children each map a libc of over 1 MiB). NULL when no process is gone.
 */
static struct watch_region *region_evict(struct target_watch *w)
{
	struct watch_region *best = NULL;

	for (size_t i = 0; i < w->n_regions; i++) {
		const struct watch_proc *pr = watch_proc_find(w, (pid_t)w->regions[i].r.pid);
		/* No entry: its process was gone and gave its place. */
		if ((!pr || pr->gone) && (!best || w->regions[i].r.rss_max < best->r.rss_max))
			best = &w->regions[i];
	}
	return best;
}

static void on_vma(void *ctx, const struct watch_vma *v)
{
	struct target_watch *w = ctx;
	struct watch_region *wr = NULL;

	if (v->end - v->start < SAMPLE_WATCH_MIN_REGION_BYTES)
		return;
	for (size_t i = 0; i < w->n_regions && !wr; i++)
		if (w->regions[i].r.start == v->start && w->regions[i].r.pid == (uint32_t)w->cur_pid)
			wr = &w->regions[i];
	if (!wr) {
		if (w->n_regions == WATCH_MAX_TRACKED && !(wr = region_evict(w)))
			return;
		if (!wr)
			wr = &w->regions[w->n_regions++];
		free(wr->pts);
		memset(wr, 0, sizeof(*wr));
		wr->r.pid = (uint32_t)w->cur_pid;
		wr->r.start = v->start;
		wr->r.first_seen_ns = w->now_ns;
		wr->r.resident_ns = -1;
	}
	wr->superseded = false;
	for (size_t i = 0; i < w->n_regions; i++)
		if (&w->regions[i] != wr && w->regions[i].r.pid == (uint32_t)w->cur_pid &&
		    w->regions[i].r.start < v->end && w->regions[i].r.end > v->start)
			w->regions[i].superseded = true;
	struct sample_watch_region *r = &wr->r;
	r->end = v->end;
	snprintf(r->name, sizeof(r->name), "%.*s", (int)v->name_len, v->name);
	r->anonymous = v->anonymous;
	r->vm_hg |= v->vm_hg;
	r->vm_nh |= v->vm_nh;
	r->kernel_page_bytes = v->kernel_page_bytes;
	uint64_t rss = v->rss_bytes + v->hugetlb_bytes;
	if (rss > r->rss_max)
		r->rss_max = rss;
	if (v->anon_huge_bytes > r->anon_huge_max)
		r->anon_huge_max = v->anon_huge_bytes;
	if (v->hugetlb_bytes > r->hugetlb_max)
		r->hugetlb_max = v->hugetlb_bytes;
	region_point(wr, &(struct sample_watch_point){ w->now_ns, rss, v->anon_huge_bytes });
}

static void affinity_note(struct target_watch *w, uint32_t tid, unsigned cpus)
{
	/* Only changes are kept: the mask of a thread holds from its observation to the next. */
	for (size_t i = w->n_aff; i-- > 0;)
		if (w->aff[i].tid == tid) {
			if (w->aff[i].cpus == cpus) {
				w->aff[i].t_last = w->now_ns;
				return;
			}
			break;
		}
	if (w->n_aff == w->cap_aff) {
		size_t cap = w->cap_aff ? w->cap_aff * 2 : 64;
		struct watch_affinity *a = realloc(w->aff, cap * sizeof(*a));
		if (!a)
			return;
		w->aff = a;
		w->cap_aff = cap;
	}
	w->aff[w->n_aff++] = (struct watch_affinity){ w->now_ns, w->now_ns, tid, cpus };
}

struct watch_proc *watch_proc_find(const struct target_watch *w, pid_t pid)
{
	for (size_t i = w->n_procs; i-- > 0;)	/* the newest first: most records are of recent processes */
		if (w->procs[i].pid == pid)
			return &w->procs[i];
	return NULL;
}

/* Whether a thread's /proc/PID/task/TID/status (in buf) says it runs: State neither Z (zombie) nor X (dead). */
static bool task_live(const char *buf)
{
	const char *state = strstr(buf, "\nState:");

	if (!state)
		return false;
	state += strlen("\nState:");
	state += strspn(state, " \t");
	return *state && !strchr("ZX", *state);
}

/*
 * Each thread of process pid: its /proc/PID/task/TID/status read into
 * w->buf, then fn(w, tid, ctx), which returns false to stop. Returns false
 * when the process is gone.
 */
static bool each_task(struct target_watch *w, pid_t pid, bool (*fn)(struct target_watch *w, uint32_t tid, void *ctx),
		      void *ctx)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	struct dirent *e;

	if (!d)
		return false;
	while ((e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		char spath[96];
		snprintf(spath, sizeof(spath), "/proc/%d/task/%.20s/status", (int)pid, e->d_name);
		if (read_proc(w, spath) > 0 && !fn(w, (uint32_t)strtoul(e->d_name, NULL, 10), ctx))
			break;
	}
	closedir(d);
	return true;
}

/* The Cpus_allowed_list in a thread's status (in w->buf). */
static bool mask_task(struct target_watch *w, uint32_t tid, void *ctx)
{
	const char *l = strstr(w->buf, "\nCpus_allowed_list:");

	(void)ctx;
	if (l) {
		l += strlen("\nCpus_allowed_list:");
		while (*l == ' ' || *l == '\t')
			l++;
		unsigned cpus = parse_cpulist(l, NULL);
		if (cpus)
			affinity_note(w, tid, cpus);
	}
	return true;
}

/*
 * A thread's Cpus_allowed_list; the first live thread is the one whose task
 * directory the smaps is read from (the leader first: past its exit, with
 * pthread_exit in main, its smaps is empty, a live thread's is not); the
 * clock probes follow the threads of a traced process.
 */
static bool affinity_task(struct target_watch *w, uint32_t tid, void *ctx)
{
	struct watch_proc *pr = ctx;

	if (!pr->smaps_tid && task_live(w->buf)) {
		pr->smaps_tid = tid;
		pr->rss_known = watch_status_rss(w->buf, strlen(w->buf), &pr->rss) == 0;
	}
	(void)mask_task(w, tid, NULL);
	/* The fork records' backstop: a thread whose record was lost, or no cpu-clock session at all. */
	if (pr->clock_traced)
		watch_clock_follow(w, tid);
	return true;
}

/* Every thread's Cpus_allowed_list of process pr. Returns false when it is gone. */
static bool poll_affinity(struct target_watch *w, struct watch_proc *pr)
{
	pr->smaps_tid = 0;
	pr->rss_known = false;	/* a VmRSS only from a thread live at this poll */
	return each_task(w, pr->pid, affinity_task, pr);
}

/*
 * One process's threads, then its smaps, read through a live thread: when
 * its VmRSS (in the live thread's status, which the threads' masks read
 * anyway: a counter, no page-table walk) moved, and on every
 * WATCH_FULL_EVERY-th poll, for what moves without the Rss (khugepaged
 * collapsing a region's pages into huge ones). smaps_rollup walks every
 * page table as smaps does (0.43 ms against 0.53 ms for a 32 MiB chase
 * here): it was no cheaper test.
 */
static void poll_proc(struct target_watch *w, struct watch_proc *pr)
{
	char path[96];
	bool full = w->polls % WATCH_FULL_EVERY == 0;

	/* Old enough to be more than a script's /bin/true: its threads get clock probes too. */
	if (!pr->clock_traced && w->now_ns - pr->start_ns >= WATCH_CLOCK_CHILD_AGE_NS)
		pr->clock_traced = true;
	/* The command's own process stays until it is reaped; one it started is dropped once gone. */
	if (!poll_affinity(w, pr) && pr != &w->procs[0]) {
		pr->gone = true;
		return;
	}
	uint32_t tid = pr->smaps_tid ? pr->smaps_tid : (uint32_t)pr->pid;
	if (!pr->rss_known || pr->rss != pr->last_rss)
		full = true;
	pr->last_rss = pr->rss;
	if (full) {
		snprintf(path, sizeof(path), "/proc/%d/task/%u/smaps", (int)pr->pid, tid);
		ssize_t n = read_proc(w, path);
		w->cur_pid = pr->pid;
		if (n > 0)
			(void)watch_smaps_parse(w->buf, (size_t)n, on_vma, w);
	}
}

static void poll_now(struct target_watch *w)
{
	uint64_t t0 = timing_now_ns();

	w->now_ns = t0;
	for (size_t i = 0; i < w->n_procs; i++)
		if (w->procs[i].polled && !w->procs[i].gone)
			poll_proc(w, &w->procs[i]);
	w->polls++;
	if (w->n_poll_us == w->cap_poll_us) {
		size_t cap = w->cap_poll_us ? w->cap_poll_us * 2 : 256;
		double *p = realloc(w->poll_us, cap * sizeof(*p));
		if (!p)
			return;
		w->poll_us = p;
		w->cap_poll_us = cap;
	}
	w->poll_us[w->n_poll_us++] = (double)(timing_now_ns() - t0) / 1e3;
}

/* ---- the samplers ------------------------------------------------------------- */

static bool alive_task(struct target_watch *w, uint32_t tid, void *ctx)
{
	bool *alive = ctx;

	(void)tid;
	*alive = task_live(w->buf);
	return !*alive;
}

/*
 * Whether process pid still runs: a thread of it is neither zombie nor dead.
 * Its main thread's exit is not its end (a main that calls pthread_exit while
 * its workers run is a zombie), so every thread is looked at.
 */
static bool proc_alive(struct target_watch *w, pid_t pid)
{
	bool alive = false;

	return each_task(w, pid, alive_task, &alive) && alive;
}

/* Forget the regions of process pid (a pid used again is a new process). */
static void regions_drop_pid(struct target_watch *w, uint32_t pid)
{
	size_t k = 0;

	for (size_t i = 0; i < w->n_regions; i++) {
		if (w->regions[i].r.pid == pid) {
			free(w->regions[i].pts);
			continue;
		}
		w->regions[k++] = w->regions[i];
	}
	w->n_regions = k;
}

/*
 * Every fork record of the cpu-clock session is of a descendant of the
 * command (its events are inherited by them alone), whether its parent is
 * still known or not.
 */
static void note_fork(struct target_watch *w, const struct sample_task *t)
{
	const struct watch_proc *parent = watch_proc_find(w, (pid_t)t->ppid);
	struct watch_proc *known;

	if (t->tid != t->pid) {
		/* A new thread of a traced process: its own clock calls trap too. */
		const struct watch_proc *pr = watch_proc_find(w, (pid_t)t->pid);
		if (pr && pr->clock_traced)
			watch_clock_follow(w, t->tid);
		return;
	}
	if (t->pid == (uint32_t)w->pid)
		return;
	w->procs_seen++;
	/* A pid used again: its fork record proves a new process; the old one's entry and regions go. */
	if ((known = watch_proc_find(w, (pid_t)t->pid))) {
		regions_drop_pid(w, t->pid);
		memmove(known, known + 1, (size_t)(&w->procs[w->n_procs] - (known + 1)) * sizeof(*w->procs));
		w->n_procs--;
		parent = watch_proc_find(w, (pid_t)t->ppid);
	}
	size_t live = 0;
	for (size_t i = 0; i < w->n_procs; i++)
		live += w->procs[i].polled && !w->procs[i].gone;
	/* Full: a process that ran between two polls (a script's /bin/true) may be gone unseen. */
	for (size_t i = 1; i < w->n_procs && live >= WATCH_MAX_PROCS; i++)
		if (w->procs[i].polled && !w->procs[i].gone && !proc_alive(w, w->procs[i].pid)) {
			w->procs[i].gone = true;
			live--;
		}
	char exe[sizeof(w->procs[0].exe)] = "";
	if (parent)
		memcpy(exe, parent->exe, sizeof(exe));	/* the parent's image until it execs */
	/* All places taken: the oldest process gone gives its place (a script's thousands of /bin/true). */
	for (size_t i = 1; i < w->n_procs && w->n_procs == WATCH_MAX_KNOWN_PROCS; i++)
		if (w->procs[i].gone) {
			memmove(&w->procs[i], &w->procs[i + 1], (w->n_procs - i - 1) * sizeof(*w->procs));
			w->n_procs--;
		}
	if (w->n_procs == WATCH_MAX_KNOWN_PROCS ||
	    !array_grow((void **)&w->procs, &w->cap_procs, w->n_procs + 1, sizeof(*w->procs), 16)) {
		w->procs_dropped++;
		return;
	}
	struct watch_proc *pr = &w->procs[w->n_procs++];
	*pr = (struct watch_proc){ .pid = (pid_t)t->pid, .start_ns = timing_now_ns(),
				   .polled = live < WATCH_MAX_PROCS };
	memcpy(pr->exe, exe, sizeof(pr->exe));
	w->procs_dropped += !pr->polled;
}

/*
 * The clock session's records say which processes the command starts (every
 * one is followed: a shell, a script, make or GNU time forks the benchmark
 * rather than exec it), which threads they start (the clock probes follow
 * them), and which images each exec'd (a wrapper, then the program).
 */
static int note_task(void *ctx, const struct sample_task *t)
{
	struct watch_session *ws = ctx;
	struct target_watch *w = ws->w;
	struct watch_proc *pr;

	/*
	 * Switches, and exits: a task's last switch out comes after its events are gone, so its exit ends its last
	 * spell on a CPU.
	 */
	if (ws == &w->clock && (t->kind == SAMPLE_TASK_SWITCH_OUT || t->kind == SAMPLE_TASK_SWITCH_IN ||
				t->kind == SAMPLE_TASK_EXIT)) {
		if (!array_grow((void **)&w->switches, &w->cap_switches, w->n_switches + 1, sizeof(*w->switches), 256))
			w->switches_short = true;
		else
			w->switches[w->n_switches++] = (struct sample_task){ .kind = t->kind, .pid = t->pid,
									    .tid = t->tid, .time_ns = t->time_ns,
									    .preempted = t->preempted, .cpu = t->cpu };
		if (t->kind != SAMPLE_TASK_EXIT)
			return 0;
	}
	if (ws == &w->clock && t->kind == SAMPLE_TASK_FORK)
		note_fork(w, t);
	/*
	 * A task's exit: a followed thread's place is free. The main thread's
	 * (tid == pid) ends its process's polls only if no thread of it is left.
	 */
	if (ws == &w->clock && t->kind == SAMPLE_TASK_EXIT) {
		watch_clock_thread_ended(w, t->tid);
		if (t->tid == t->pid && (pr = watch_proc_find(w, (pid_t)t->pid)) && pr != &w->procs[0] &&
		    !proc_alive(w, pr->pid))
			pr->gone = true;
	}
	if (ws == &w->clock && t->kind == SAMPLE_TASK_EXEC && (pr = watch_proc_find(w, (pid_t)t->pid))) {
		snprintf(pr->exe, sizeof(pr->exe), "%s", t->comm ? t->comm : "");
		pr->exec_pending = true;
		if (pr == &w->procs[0]) {
			if (w->n_execs == SAMPLE_WATCH_MAX_EXECS) {
				memmove(w->execs[1], w->execs[2], sizeof(w->execs[0]) * (SAMPLE_WATCH_MAX_EXECS - 2));
				w->n_execs--;
			}
			snprintf(w->execs[w->n_execs++], sizeof(w->execs[0]), "%s", t->comm ? t->comm : "");
		}
	}
	return ws->wrapped.task ? ws->wrapped.task(ws->wrapped.ctx, t) : 0;
}

/* The first file the kernel's ELF loader maps after an exec is the new program (ld.so comes after it). */
static int note_mmap(void *ctx, const struct sample_mmap *m)
{
	struct watch_session *ws = ctx;
	struct target_watch *w = ws->w;
	struct watch_proc *pr = ws == &w->clock ? watch_proc_find(w, (pid_t)m->pid) : NULL;

	if (pr && pr->exec_pending && m->filename && m->filename[0] == '/') {
		snprintf(pr->exe, sizeof(pr->exe), "%s", m->filename);
		pr->exec_pending = false;
		if (pr == &w->procs[0])
			snprintf(w->execs[w->n_execs - 1], sizeof(w->execs[0]), "%s", m->filename);
	}
	return ws->wrapped.mmap ? ws->wrapped.mmap(ws->wrapped.ctx, m) : 0;
}

static int note_sample(void *ctx, const struct sample_record *r)
{
	struct watch_session *ws = ctx;

	return ws->wrapped.sample ? ws->wrapped.sample(ws->wrapped.ctx, r) : 0;
}

void watch_session_open_into(struct target_watch *w, struct watch_session *ws, pid_t pid,
			     const struct sample_options *so, struct sample_list *into)
{
	ws->w = w;
	ws->syms = symbols_new();
	ws->collector = (struct sample_collector){ .list = into ? into : &ws->samples, .syms = ws->syms,
						   .cap = so && !so->custom_event ? SAMPLE_KEEP_MAX : 0 };
	sample_collector_sink(&ws->collector, &ws->wrapped);
	ws->sink = (struct sample_sink){ .sample = note_sample, .mmap = note_mmap, .task = note_task, .ctx = ws };
	if (!ws->syms)
		snprintf(ws->error, sizeof(ws->error), "out of memory");
	else if (sample_open(&ws->s, pid, so, ws->error, sizeof(ws->error)) != 0)
		ws->s = NULL;
}

static void session_open(struct target_watch *w, struct watch_session *ws, pid_t pid, const struct sample_options *so)
{
	watch_session_open_into(w, ws, pid, so, NULL);
}

void watch_session_close(struct watch_session *ws)
{
	sample_close(ws->s);
	sample_list_free(&ws->samples);
	symbols_delete(ws->syms);
	ws->s = NULL;
	ws->syms = NULL;
}

/*
 * The fault session's ring pages per CPU: faults come in bursts (python3.11 zeroing 64 MiB took 16384 faults in
 * about 50 ms, 1.3 MB of records on one CPU, and with the default 512 KiB rings a drain a little late lost 6831 of
 * them in 1 run of 12 here). 2 MiB per CPU where all the CPUs' rings stay within WATCH_FAULT_RINGS_BYTES, else
 * less, never below the default; the open halves them again where the locked-memory allowance is short.
 */
static size_t fault_ring_pages(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), page = sysconf(_SC_PAGESIZE);
	size_t pages = WATCH_FAULT_RING_PAGES;

	while (pages > SAMPLE_DEFAULT_RING_PAGES && cpus > 0 && page > 0 &&
	       (uint64_t)cpus * pages * (uint64_t)page > WATCH_FAULT_RINGS_BYTES)
		pages /= 2;
	return pages;
}

void target_watch_open(struct target_state *st)
{
	struct target_watch *w = calloc(1, sizeof(*w));
	/* The kernel's hrtimer clock, a software event: no PMU needed. IP and time only (no data address). */
	const struct sample_options clock = {
		.enable_on_exec = true, .custom_event = true, .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK, .period = SAMPLE_CPU_CLOCK_PERIOD_NS, .name = "cpu-clock",
		.no_data_addr = true, .cpu = true, .context_switch = true, .read_count = true,
	};
	const struct sample_options faults = { .enable_on_exec = true, .ring_pages = fault_ring_pages() };

	st->watch = w;
	if (!w)
		return;
	w->pid = st->pid;
	if (!array_grow((void **)&w->procs, &w->cap_procs, 1, sizeof(*w->procs), 16)) {
		free(w);
		st->watch = NULL;
		return;
	}
	w->procs[0] = (struct watch_proc){ .pid = st->pid, .start_ns = timing_now_ns(), .polled = true,
					   .clock_traced = true };
	w->n_procs = 1;
	cpu_set_t mask;
	w->command_cpus = st->opt->cpu >= 0 ? 1
			: sched_getaffinity(0, sizeof(mask), &mask) == 0 ? (unsigned)CPU_COUNT(&mask) : 0;
	w->start_ns = timing_now_ns();
	w->next_ns = w->start_ns + WATCH_FIRST_INTERVAL_NS;
	/*
	 * Each sample's count, so that the CPU time it stands for is measured (Linux 6.12 on); before, without it,
	 * the time is the period its thread's event was set to. A kernel without PERF_RECORD_SWITCH (before 4.3):
	 * samples still, and no on-CPU figures.
	 */
	struct sample_options tries[3] = { clock, clock, clock };
	tries[1].read_count = tries[2].read_count = false;
	tries[2].context_switch = false;
	for (size_t i = 0; i < 3 && !w->clock.s; i++) {
		if (i) {
			watch_session_close(&w->clock);
			w->clock.error[0] = '\0';
		}
		session_open(w, &w->clock, st->pid, &tries[i]);
		w->clock_read_count = w->clock.s && tries[i].read_count;
		w->clock_switches = w->clock.s && tries[i].context_switch;
	}
	/* --sample page-faults already takes every fault: the watch reads that session's samples at the end. */
	w->own_faults = !(st->opt->sample && !st->opt->sample_event);
	if (w->own_faults)
		session_open(w, &w->faults, st->pid, &faults);
	watch_clocks_open(w, st->pid, st->opt->program);
}

int target_watch_timeout_ms(const struct target_state *st, int max_ms)
{
	const struct target_watch *w = st->watch;

	return w ? target_ms_until(w->next_ns, timing_now_ns(), max_ms) : max_ms;
}

int target_watch_poll_fd(const struct target_state *st, int which)
{
	const struct target_watch *w = st->watch;
	const struct sample_session *s = !w ? NULL : which == 0 ? w->clock.s : w->faults.s;

	return s ? sample_poll_fd(s) : -1;
}

void target_watch_tick(struct target_state *st)
{
	struct target_watch *w = st->watch;

	if (!w)
		return;
	if (w->clock.s)
		sample_drain(w->clock.s, &w->clock.sink, false);
	if (w->faults.s)
		sample_drain(w->faults.s, &w->faults.sink, false);
	watch_clocks_tick(w);
	uint64_t now = timing_now_ns();
	/* Past the first SAMPLE_CPU_CLOCK_FAST_NS: the slow rate (see SAMPLE_CPU_CLOCK_PERIOD_NS). */
	if (w->clock.s && !w->clock_slow_ns && now - w->start_ns >= SAMPLE_CPU_CLOCK_FAST_NS &&
	    sample_set_period(w->clock.s, SAMPLE_CPU_CLOCK_SLOW_PERIOD_NS) == 0)
		w->clock_slow_ns = now;
	if (now < w->next_ns)
		return;
	poll_now(w);
	uint64_t step = w->polls < 16 ? WATCH_FIRST_INTERVAL_NS << (w->polls - 1) : WATCH_POLL_INTERVAL_NS;
	w->next_ns = now + (step < WATCH_POLL_INTERVAL_NS ? step : WATCH_POLL_INTERVAL_NS);
}

/*
 * The samples at one rate, so that each stands for the same CPU time: each
 * one's period counted or as set (watch_clock_periods), then resampled to the
 * slow rate where the command ran long enough at it (WATCH_CLOCK_THIN_MIN_SLOW
 * samples, 10 s of CPU); otherwise to the fast one, since a command of
 * 0.1-10 s thinned would keep too few samples of a short hot loop to find it
 * or its thread.
 */
static void clock_one_rate(struct target_watch *w, struct sample_profile *p)
{
	size_t slow = 0;
	uint64_t period = SAMPLE_CPU_CLOCK_PERIOD_NS;

	p->clock_period_ns = w->clock.s ? period : 0;
	p->clock_counted = w->clock_read_count;	/* the session's, so that a run without samples says it too */
	if (!w->clock.s || watch_clock_periods(&w->clock.samples, w->clock_slow_ns,
				       SAMPLE_CPU_CLOCK_PERIOD_NS, SAMPLE_CPU_CLOCK_SLOW_PERIOD_NS) != 0)
		return;	/* out of memory: the samples as taken, the closer figure */
	for (size_t i = 0; i < w->clock.samples.count; i++)
		slow += w->clock.samples.items[i].period >= SAMPLE_CPU_CLOCK_SLOW_PERIOD_NS / 2;
	if (slow >= WATCH_CLOCK_THIN_MIN_SLOW)
		period = SAMPLE_CPU_CLOCK_SLOW_PERIOD_NS;
	if (watch_clock_resample(&w->clock.samples, period) == 0)
		p->clock_period_ns = period;
}

void target_watch_exiting(struct target_state *st)
{
	struct target_watch *w = st->watch;

	if (!w || !w->n_procs)
		return;
	w->now_ns = timing_now_ns();
	(void)each_task(w, w->procs[0].pid, mask_task, NULL);
}

void target_watch_exited(struct target_state *st)
{
	if (st->watch)
		watch_clocks_release(st->watch);
}

void target_watch_finish(struct target_state *st)
{
	struct target_watch *w = st->watch;
	struct sample_profile *p = &st->tr->profile;

	if (!w)
		return;
	if (w->clock.s)
		sample_drain(w->clock.s, &w->clock.sink, true);
	if (w->faults.s)
		sample_drain(w->faults.s, &w->faults.sink, true);
	const struct sample_list *faults = w->own_faults ? &w->faults.samples : &st->samples;
	struct symbols *fsyms = w->own_faults ? w->faults.syms : st->syms;
	bool faults_ok = w->own_faults ? w->faults.s != NULL : st->sampler != NULL;
	memset(p, 0, sizeof(*p));
	p->clock_sampled = w->clock.s != NULL;
	snprintf(p->clock_error, sizeof(p->clock_error), "%s", w->clock.error);
	p->faults_sampled = faults_ok;
	snprintf(p->faults_error, sizeof(p->faults_error), "%s", w->own_faults ? w->faults.error : st->tr->sample_error);
	if (w->clock.s) {
		struct sample_info info;
		sample_info_get(w->clock.s, &info);
		p->clock_user_only = info.exclude_kernel;
		p->clock_lost = info.lost;
	}
	/* Records the kernel dropped with a ring full: the faults seen are then not all of them (the checks say so). */
	if (w->own_faults && w->faults.s) {
		struct sample_info info;
		sample_info_get(w->faults.s, &info);
		p->faults_lost = info.lost;
	} else if (!w->own_faults) {
		p->faults_lost = st->tr->sample_info.lost;
	}
	const struct sample_collector *fc = w->own_faults ? &w->faults.collector : &st->collector;
	p->fault_samples = fc->seen;
	p->faults_one_in = sample_collector_one_in(fc);
	clock_one_rate(w, p);
	for (size_t i = 0; i < st->tr->n_counters && st->tr->counters && st->tr->counter_info; i++)
		if (st->tr->counter_info[i].metric == METRIC_TASK_CLOCK && counter_counting(&st->tr->counter_info[i]))
			p->clock_task_ns = (uint64_t)(st->tr->counters[i].scaled + 0.5);
	p->polls = w->polls;
	p->poll_interval_ms = (double)WATCH_POLL_INTERVAL_NS / 1e6;
	p->poll_us_median = w->n_poll_us ? stats_median(w->poll_us, w->n_poll_us) : 0;
	if (watch_profile_build(w, faults_ok ? faults : NULL, fsyms, p) == 0)
		st->tr->watched = true;
	watch_clocks_finish(w, faults_ok ? faults : NULL, fsyms, p);
	/* The clock windows' faults, as the pattern's (fault_profile()): the kept ones stand for faults_one_in each. */
	p->clocks.region_faults *= p->faults_one_in;
	p->clocks.region_faults_in_span *= p->faults_one_in;
	p->clocks.region_faults_measured *= p->faults_one_in;
	p->clocks.region_faults_in_gaps *= p->faults_one_in;
}

void target_watch_close(struct target_state *st)
{
	struct target_watch *w = st->watch;

	if (!w)
		return;
	watch_session_close(&w->clock);
	watch_session_close(&w->faults);
	watch_clocks_close(w);
	for (size_t i = 0; i < w->n_regions; i++)
		free(w->regions[i].pts);
	free(w->poll_us);
	free(w->hot_marks);
	free(w->procs);
	free(w->switches);
	free(w->aff);
	free(w->buf);
	free(w);
	st->watch = NULL;
}
