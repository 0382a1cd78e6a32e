/* SPDX-License-Identifier: MIT */
/*
 * tlbprof run -p PID, as perf stat -p: count a process that is already
 * running. A perf event follows one task and the tasks it creates after the
 * open (inherit), never the threads that exist beside it, so each thread the
 * process has at the start gets a counter set of its own (a closed copy of
 * the run's), and the whole count is their sum. tlbprof never signals the
 * attached process: the count ends when it exits, when the timing command
 * exits (perf stat -p PID -- sleep 5), or when tlbprof is asked to stop.
 */
#include "target/internal.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "machine/environment.h"
#include "machine/timing.h"
#include "measure/workload.h"

extern char **environ;

/* The threads counted at most: beyond them the rest go uncounted, and the report says how many were counted. */
enum { ATTACH_MAX_THREADS = 1024 };

struct attached {
	pid_t tid;
	char comm[16];
	struct counter_set *set;	/* the run's own for the first thread, a clone for the others */
};

static void read_comm(pid_t pid, pid_t tid, char *out, size_t len)
{
	char path[64], buf[64] = "";

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	if (env_read_text(path, buf, sizeof(buf)) == 0)
		buf[strcspn(buf, "\n")] = '\0';
	snprintf(out, len, "%s", buf);
}

/* Each thread of pid now, with a counter set open on it and enabled. Returns how many, or -errno. */
static long attach_threads(pid_t pid, struct counter_set *first, struct attached *t)
{
	char path[64];
	struct dirent *d;
	long n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir)) && n < ATTACH_MAX_THREADS) {
		char *end;
		long tid = strtol(d->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		struct counter_set *set = first;
		if (n && counter_set_clone(first, &set) != 0)
			break;
		(void)counter_set_open_task(set, (pid_t)tid, true, false);
		counter_set_enable(set);
		t[n].tid = (pid_t)tid;
		t[n].set = set;
		read_comm(pid, (pid_t)tid, t[n].comm, sizeof(t[n].comm));
		n++;
	}
	closedir(dir);
	return n;
}

/* Whether pid is gone (exited, reaped or a zombie): its pidfd polled readable, or no /proc entry left. */
static bool gone(pid_t pid, int pidfd)
{
	char path[64], state[512];

	if (pidfd >= 0) {
		struct pollfd p = { pidfd, POLLIN, 0 };
		return poll(&p, 1, 0) == 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (env_read_text(path, state, sizeof(state)) != 0)
		return true;
	const char *close_paren = strrchr(state, ')');
	return close_paren && (close_paren[2] == 'Z' || close_paren[2] == 'X');
}

/* Wait until pid exits, the timer child exits, or a stop: which one ended it. */
static const char *wait_end(pid_t pid, pid_t timer, const struct run_context *ctx)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), timerfd = timer > 0 ? (int)syscall(SYS_pidfd_open, timer, 0)
										: -1;
	const char *why = NULL;

	while (!why) {
		struct pollfd p[2] = { { pidfd, POLLIN, 0 }, { timerfd, POLLIN, 0 } };
		(void)poll(p, 2, 100);
		if (ctx->stop && *ctx->stop)
			why = "signal";
		else if (gone(pid, pidfd))
			why = "exit";
		else if (timer > 0 && waitpid(timer, NULL, WNOHANG) == timer)
			why = "command";
	}
	if (pidfd >= 0)
		close(pidfd);
	if (timerfd >= 0)
		close(timerfd);
	return why;
}

/* The one phase "attached": the whole count over the whole time, as an unmarked command's phase. */
static int add_phase(struct run_results *out, const struct target_result *tr, size_t n_counters, uint64_t steal)
{
	struct phase_result *r = calloc(1, sizeof(*r));

	out->phases = r;
	if (!r || !(r->target = calloc(1, sizeof(*r->target))) ||
	    (n_counters && (!(r->counter_info = calloc(n_counters, sizeof(*r->counter_info))) ||
			    !(r->counters = calloc(n_counters, sizeof(*r->counters))))) ||
	    !(r->target->wall_ns = calloc(1, sizeof(double))))
		return -ENOMEM;
	out->n = 1;
	snprintf(r->spec.name, sizeof(r->spec.name), "attached");
	r->spec.workload = &workload_command;
	r->spec.repeat = 1;
	r->spec.cpu = -1;
	r->status = PHASE_OK;
	r->stop_reason = "samples";
	r->n_counters = n_counters;
	r->target->occurrences = 1;
	r->target->samples_in_phase = -1;
	r->target->resident_fraction = -1;
	r->target->wall_ns[r->target->n_wall++] = tr->wall_ns;
	r->target->tlbprof_ns_total = tr->wall_ns;
	r->timed_ns = tr->wall_ns;
	r->steal_ticks = steal;
	long hz = sysconf(_SC_CLK_TCK);
	r->steal_ms = (double)steal * 1000.0 / (double)(hz > 0 ? hz : 100);
	if (n_counters) {
		memcpy(r->counters, tr->counters, n_counters * sizeof(*r->counters));
		memcpy(r->counter_info, tr->counter_info, n_counters * sizeof(*r->counter_info));
	}
	return 0;
}

/* Every thread's counts read, summed into tr, kept per thread where asked; the clones deleted. */
static int collect(const struct target_options *opt, struct counter_set *first, struct attached *t, long n,
		   struct target_result *tr)
{
	static const struct counter_reading zero;
	size_t nc = counter_set_size(first);
	struct counter_reading *now = calloc(nc + 1, sizeof(*now));
	int rc = 0;

	tr->n_counters = nc;
	tr->counters = calloc(nc + 1, sizeof(*tr->counters));
	tr->counter_info = calloc(nc + 1, sizeof(*tr->counter_info));
	if (opt->per_thread)
		tr->threads = calloc((size_t)n + 1, sizeof(*tr->threads));
	if (!now || !tr->counters || !tr->counter_info || (opt->per_thread && !tr->threads))
		rc = -ENOMEM;
	for (size_t i = 0; !rc && i < nc; i++)
		tr->counter_info[i] = *counter_set_info(first, i);
	for (long k = 0; k < n; k++) {
		if (!rc && counter_set_read(t[k].set, now) == 0) {
			for (size_t i = 0; i < nc; i++)
				counter_reading_add_delta(&tr->counters[i], &zero, &now[i], tr->counter_info[i].hardware);
			struct target_thread *th = opt->per_thread ? &tr->threads[tr->n_threads] : NULL;
			if (th && (th->counts = calloc(nc + 1, sizeof(*th->counts)))) {
				th->tid = t[k].tid;
				memcpy(th->comm, t[k].comm, sizeof(th->comm));
				memcpy(th->counts, now, nc * sizeof(*now));
				tr->n_threads++;
			}
		}
		counter_set_close(t[k].set);
		if (t[k].set != first)
			counter_set_delete(t[k].set);
	}
	free(now);
	return rc;
}

/* The timing command (perf stat -p PID -- sleep 5): started without counters; its exit ends the count. */
static pid_t start_timer(char *const *argv)
{
	pid_t child;

	if (!argv || !argv[0])
		return 0;
	return posix_spawnp(&child, argv[0], NULL, NULL, argv, environ) == 0 ? child : -1;
}

int target_attach(const struct target_options *opt, const struct run_context *ctx, struct run_results *out,
		  struct target_result *tr)
{
	struct attached *t = calloc(ATTACH_MAX_THREADS, sizeof(*t));
	pid_t pid = opt->attach_pid;

	memset(out, 0, sizeof(*out));
	out->started_unix_s = (int64_t)time(NULL);
	memset(tr, 0, sizeof(*tr));
	tr->pid = pid;
	tr->attached = true;
	if (!t)
		return -ENOMEM;
	read_comm(pid, pid, tr->attached_comm, sizeof(tr->attached_comm));
	if (!ctx->counters) {
		free(t);
		return -ENODEV;
	}
	long n = attach_threads(pid, ctx->counters, t);
	if (n <= 0) {
		free(t);
		return n < 0 && n != -ENOENT ? (int)n : -ESRCH;
	}
	tr->threads_attached = (size_t)n;
	tr->started = true;
	uint64_t steal0 = environment_steal_ticks(), start = timing_now_ns();
	pid_t timer = start_timer(opt->argv);
	tr->ended_by = timer < 0 ? "command" : wait_end(pid, timer, ctx);
	tr->wall_ns = (double)(timing_now_ns() - start);
	if (timer > 0 && waitpid(timer, NULL, WNOHANG) == 0) {
		/* Stopped before the timing command ended: it is tlbprof's own child, so it goes too. */
		kill(timer, SIGTERM);
		waitpid(timer, NULL, 0);
	}
	int rc = collect(opt, ctx->counters, t, n, tr);
	free(t);
	if (!rc)
		rc = add_phase(out, tr, tr->n_counters, environment_steal_ticks() - steal0);
	return rc;
}
