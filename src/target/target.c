/* SPDX-License-Identifier: MIT */
/* tlbprof run: start someone else's benchmark, follow its phase markers or perf control commands, measure each phase. */
#include "target/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"
#include "machine/environment.h"
#include "machine/timing.h"

#include "tlbprof/marker.h"

#define TARGET_KILL_GRACE_MS 2000

/*
 * Where the command's copies of the counter fds go: high, out of the way of
 * a program that counts on its first open() being fd 3, below 1024 so that
 * a huge RLIMIT_NOFILE does not grow its fd table.
 */
static int high_fd_base(void)
{
	struct rlimit rl;
	rlim_t top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1024 ? rl.rlim_cur : 1024;

	return top > 64 ? (int)top - 32 : 3;
}

/*
 * Wait for the go-ahead (the parent closes its end: recvmsg returns 0). The
 * counter groups' fds may come first, with their ids as data: moved high,
 * they stay open across the exec, and TLBPROF_MARKER_COUNTERS names them, so
 * the marker can read its own counters (tlbprof/marker.h). Returns 0 or an
 * errno.
 */
static int child_wait(int go_fd)
{
	char env[TLBPROF_MARKER_GROUPS_MAX * 48] = "";
	size_t used = 0;

	for (;;) {
		uint64_t ids[TLBPROF_MARKER_GROUPS_MAX];
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(int) * TLBPROF_MARKER_GROUPS_MAX)];
		} u;
		struct iovec iov = { ids, sizeof(ids) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
				     .msg_controllen = sizeof(u.buf) };
		ssize_t n = recvmsg(go_fd, &mh, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int fds[TLBPROF_MARKER_GROUPS_MAX];
		if (nfd > TLBPROF_MARKER_GROUPS_MAX)
			nfd = TLBPROF_MARKER_GROUPS_MAX;
		memcpy(fds, CMSG_DATA(cm), nfd * sizeof(int));
		int base = high_fd_base();
		for (size_t i = 0; i < nfd; i++) {
			int high = fcntl(fds[i], F_DUPFD, base);
			close(fds[i]);
			if (high >= 0 && i < (size_t)n / sizeof(uint64_t) && used < sizeof(env))
				used += (size_t)snprintf(env + used, sizeof(env) - used, "%s%d:%llu", used ? "," : "", high,
							 (unsigned long long)ids[i]);
		}
	}
	return *env && used < sizeof(env) && setenv(TLBPROF_MARKER_ENV_COUNTERS, env, 1) != 0 ? errno : 0;
}

/*
 * The child between fork and exec: only async-signal-safe calls, plus setenv
 * (tlbprof is single-threaded). Whatever fails before the command runs is
 * sent to the parent as an errno on err_fd, which it reports as "cannot
 * execute".
 */
static void child_exec(struct target_state *st, int go_fd, int err_fd)
{
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
	/* A report on tlbprof's stdout (--json -) stays parseable: what the command prints goes to stderr. */
	if (!e && st->opt->stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		e = errno;
	if (!e && (setenv(TLBPROF_MARKER_ENV_CTL, st->ctl_path, 1) != 0 ||
		   setenv(TLBPROF_MARKER_ENV_ACK, st->ack_path, 1) != 0 ||
		   (st->shm && setenv(TLBPROF_MARKER_ENV_SHM, st->shm_path, 1) != 0)))
		e = errno;
	/* Wait until the parent has attached the counters. */
	if (!e)
		e = child_wait(go_fd);
	if (!e) {
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
 * Send sig to every process whose parent chain leads to root, by /proc/PID/stat's parent field (a shell's children,
 * a daemon's, whatever process group or session they moved to); root itself not included. Returns how many.
 */
static size_t signal_descendants(pid_t root, int sig)
{
	pid_t(*pp)[2] = NULL, *tree = NULL;
	size_t n = 0, cap = 0, n_tree = 0, sent = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[64], buf[512];
		long pid = strtol(e->d_name, NULL, 10);
		int fd;
		ssize_t r;
		snprintf(path, sizeof(path), "/proc/%.20s/stat", e->d_name);
		if (pid <= 0 || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		char *end = r > 0 ? (buf[r] = '\0', strrchr(buf, ')')) : NULL;	/* the name may hold ')' */
		int ppid;
		char state;
		if (!end || sscanf(end + 1, " %c %d", &state, &ppid) != 2)
			continue;
		if (n == cap && !array_grow((void **)&pp, &cap, n + 1, sizeof(*pp), 256))
			break;
		pp[n][0] = (pid_t)pid;
		pp[n++][1] = (pid_t)ppid;
	}
	if (d)
		closedir(d);
	tree = calloc(n + 1, sizeof(*tree));
	if (tree)
		tree[n_tree++] = root;
	for (size_t k = 0; tree && k < n_tree; k++)	/* breadth first: each one's children after it */
		for (size_t i = 0; i < n; i++)
			if (pp[i][1] == tree[k] && pp[i][0] != root && n_tree <= n) {
				tree[n_tree++] = pp[i][0];
				sent += kill(pp[i][0], sig) == 0;
			}
	free(tree);
	free(pp);
	return sent;
}

/*
 * Stop the command: the signal tlbprof got (SIGINT, SIGTERM or SIGHUP: a
 * hung-up terminal hangs up the command too, never orphans it), to it and to
 * every process it started, then SIGKILL after the grace period, or at once
 * when a second signal reaches tlbprof (*stop counts them). Returns when it
 * has exited; whatever it started and left behind (reparented to tlbprof, its
 * subreaper, as the command died) is killed and reaped too, never left running
 * under PID 1 (a shell's `sleep` was: a review of the edges found it).
 */
static void stop_child(struct target_state *st, siginfo_t *si, volatile sig_atomic_t *stop)
{
	int sig = st->opt->stop_signal ? *st->opt->stop_signal : 0;

	memset(si, 0, sizeof(*si));
	sig = sig == SIGTERM || sig == SIGHUP ? sig : SIGINT;
	signal_descendants(st->pid, sig);
	kill(st->pid, sig);
	for (int waited = 0; waited < TARGET_KILL_GRACE_MS && *stop < 2; waited += 50) {
		memset(si, 0, sizeof(*si));
		if (waitid(P_PID, (id_t)st->pid, si, WEXITED | WNOHANG) == 0 && si->si_pid == st->pid)
			break;
		struct pollfd p = { st->pidfd, POLLIN, 0 };
		poll(&p, st->pidfd >= 0 ? 1 : 0, 50);
	}
	if (si->si_pid != st->pid) {
		signal_descendants(st->pid, SIGKILL);
		kill(st->pid, SIGKILL);
		while (waitid(P_PID, (id_t)st->pid, si, WEXITED) != 0 && errno == EINTR)
			;
	}
	/* Those the command left: tlbprof's children now. A few rounds for any that forked meanwhile. */
	siginfo_t other;
	for (int round = 0; round < 50 && signal_descendants(getpid(), SIGKILL); round++) {
		poll(NULL, 0, 10);
		while (memset(&other, 0, sizeof(other)), waitid(P_ALL, 0, &other, WEXITED | WNOHANG) == 0 &&
		       other.si_pid > 0)
			;
	}
}

/* Empty results, the state's fds closed, the slots' snapshots and the phase table allocated. Returns 0 or -ENOMEM. */
static int state_init(struct target_state *st)
{
	struct run_results *out = st->out;

	memset(out, 0, sizeof(*out));
	out->started_unix_s = (int64_t)time(NULL);
	memset(st->tr, 0, sizeof(*st->tr));
	st->tr->pid = -1;
	for (int i = 0; i < 2; i++)
		st->ch[i].ctl = st->ch[i].ack = st->go[i] = st->errp[i] = -1;
	out->phases = calloc(TARGET_MAX_PHASES, sizeof(*out->phases));
	st->n_counters = counter_set_size(st->ctx->counters);
	for (int k = 0; k < 2; k++)
		st->slot[k].snap = calloc(st->n_counters + 1, sizeof(*st->slot[k].snap));
	st->snap_end = calloc(st->n_counters + 1, sizeof(*st->snap_end));
	if (!out->phases || !st->slot[0].snap || !st->slot[1].snap || !st->snap_end)
		return -ENOMEM;
	return 0;
}

/* Fork the child, which waits for the go-ahead before its exec. Returns 0 or -errno. */
static int spawn(struct target_state *st)
{
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, st->go) != 0 || pipe2(st->errp, O_CLOEXEC) != 0)
		return -errno;
	st->pid = fork();
	if (st->pid < 0)
		return -errno;
	if (st->pid == 0) {
		close(st->go[1]);
		close(st->errp[0]);
		child_exec(st, st->go[0], st->errp[1]);
	}
	st->tr->pid = st->pid;
	close(st->go[0]);
	close(st->errp[1]);
	st->go[0] = st->errp[1] = -1;
	/* A pidfd wakes poll() at the child's exit; without one (ENOSYS: Linux < 5.3, valgrind) poll more often. */
	st->pidfd = (int)syscall(SYS_pidfd_open, st->pid, 0);
	return 0;
}

/*
 * Send the command copies of the counter groups' fds with their ids, so that
 * its markers can take each boundary's snapshot themselves: only where the
 * shared page can carry the snapshots. Without them (none open, a simulated
 * PMU, a send that fails) tlbprof reads at each boundary, as before.
 */
static void hand_over_counters(struct target_state *st)
{
	int fds[TLBPROF_MARKER_GROUPS_MAX];
	uint64_t ids[TLBPROF_MARKER_GROUPS_MAX];
	size_t n = st->shm_snap && st->shm_snap->magic ? counter_set_leaders(st->ctx->counters, fds, ids,
									    TLBPROF_MARKER_GROUPS_MAX) : 0;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * TLBPROF_MARKER_GROUPS_MAX)];
	} u;

	if (!n)
		return;
	memset(&u, 0, sizeof(u));
	struct iovec iov = { ids, n * sizeof(*ids) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = CMSG_SPACE(n * sizeof(int)) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
	while (sendmsg(st->go[1], &mh, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

/*
 * Attach before exec: inherit covers every thread and child the command
 * makes from its first instruction. How many events opened does not
 * matter here: each one's status and reason go into the report.
 */
static void attach(struct target_state *st)
{
	if (st->ctx->counters) {
		/* --per-thread: each thread and child process reports its own counts as it exits. */
		counter_set_track_threads(st->ctx->counters, st->opt->per_thread);
		(void)counter_set_open_task(st->ctx->counters, st->pid, true, true);
	}
	hand_over_counters(st);
	if (st->opt->sample)
		target_sampling_open(st);
	target_watch_open(st);
}

/* Give the child the go-ahead and learn whether its exec succeeded. Returns 0, or -ENOENT (tr->exec_errno). */
static int release(struct target_state *st)
{
	int exec_err = 0;
	ssize_t n;

	close(st->go[1]);
	st->go[1] = -1;
	while ((n = read(st->errp[0], &exec_err, sizeof(exec_err))) < 0 && errno == EINTR)
		;
	if (n > 0) {
		st->tr->exec_errno = exec_err;
		waitpid(st->pid, NULL, 0);
		return -ENOENT;
	}
	st->tr->started = true;
	return 0;
}

/*
 * Serve the channels (and drain the sample rings) until the command exits or tlbprof is asked to stop. Returns
 * when it exited (before the watch's last read of it).
 */
static uint64_t serve(struct target_state *st, siginfo_t *si)
{
	const struct run_context *ctx = st->ctx;

	for (;;) {
		struct pollfd p[6] = { { st->pidfd, POLLIN, 0 }, { st->ch[0].ctl, POLLIN, 0 }, { st->ch[1].ctl, POLLIN, 0 },
				       { st->sampler ? sample_poll_fd(st->sampler) : -1, POLLIN, 0 },
				       { target_watch_poll_fd(st, 0), POLLIN, 0 }, { target_watch_poll_fd(st, 1), POLLIN, 0 } };
		if (ctx->stop && *ctx->stop) {
			stop_child(st, si, ctx->stop);
			st->tr->interrupted = st->out->interrupted = true;
			break;
		}
		/* A bounded wait: a signal between the stop test and poll is seen within 100 ms. */
		int ready = poll(p, 6, target_intervals_timeout_ms(st, target_watch_timeout_ms(st, st->pidfd >= 0 ? 100
												       : 10)));
		if (ready < 0)
			continue;
		target_intervals_tick(st, false);
		/* Drain the sample rings whenever they fill, and at least every 100 ms, so none overflows. */
		if (st->sampler)
			sample_drain(st->sampler, &st->sink, false);
		if (st->opt->per_thread)
			counter_set_threads_drain(ctx->counters);
		target_watch_tick(st);
		for (int i = 0; i < 2; i++)
			target_channel_ready(st, &st->ch[i], p[1 + i].revents);
		if (st->pidfd < 0 || (p[0].revents & POLLIN)) {
			/* Exited: the zombie's last word (target_watch_exiting), then reaped. */
			memset(si, 0, sizeof(*si));
			if (waitid(P_PID, (id_t)st->pid, si, WEXITED | WNOWAIT | (st->pidfd < 0 ? WNOHANG : 0)) == 0 &&
			    si->si_pid == st->pid) {
				uint64_t exit_ns = timing_now_ns();
				target_watch_exiting(st);
				while (waitid(P_PID, (id_t)st->pid, si, WEXITED) != 0 && errno == EINTR)
					;
				return exit_ns;
			}
		}
	}
	return timing_now_ns();
}

/* Close and free what the run holds; tolerates a partial setup. */
static void state_free(struct target_state *st)
{
	if (st->ctx->counters)
		counter_set_close(st->ctx->counters);
	for (int i = 0; i < 2; i++) {
		if (st->go[i] >= 0)
			close(st->go[i]);
		if (st->errp[i] >= 0)
			close(st->errp[i]);
	}
	target_channels_close(st);
	if (st->pidfd >= 0)
		close(st->pidfd);
	for (int k = 0; k < 2; k++) {
		free(st->slot[k].snap);
		free(st->slot[k].windows);
	}
	free(st->snap_end);
	free(st->handling_us);
	target_sampling_close(st);
	target_watch_close(st);
	target_intervals_close(st);
}

int target_run(const struct target_options *opt, const struct run_context *ctx, struct run_results *out,
	       struct target_result *tr)
{
	struct target_state st = { .opt = opt, .ctx = ctx, .out = out, .tr = tr, .pid = -1, .pidfd = -1,
				   .slot = { { .phase = -1 }, { .phase = -1 } } };
	siginfo_t si;
	int rc;

	/* What the command starts and leaves behind comes back to tlbprof, so that an interruption can end it too. */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	if ((rc = state_init(&st)) != 0 || (rc = target_channels_open(&st)) != 0 || (rc = spawn(&st)) != 0)
		goto out;
	attach(&st);
	uint64_t steal0 = environment_steal_ticks();
	/* The command's wall time starts at the go-ahead: its counters start at the exec that follows. */
	uint64_t exec_ns = timing_now_ns();
	if ((rc = release(&st)) != 0)
		goto out;
	target_intervals_start(&st, exec_ns);
	/* perf stat without -D -1 counts from the start: an "enabled" window opens at exec. */
	if ((opt->ctl_path || opt->ctl_fd >= 0) && !opt->start_disabled)
		target_window_open(&st);
	uint64_t exit_ns = serve(&st, &si);
	target_watch_exited(&st);
	/*
	 * Ctrl-C reaches the whole process group: the command may die of it
	 * before tlbprof's loop sees its own flag. It is still an interruption.
	 */
	if (ctx->stop && *ctx->stop)
		tr->interrupted = out->interrupted = true;
	record_exit(tr, &si);
	target_intervals_tick(&st, true);
	target_channels_drain_pending(&st);
	target_phases_finish(&st, exec_ns, exit_ns, steal0);
	if (!opt->no_reference)
		target_reference_chase(&st);
	if (st.sampler)
		target_sampling_finish(&st);
	target_watch_finish(&st);
	/*
	 * --per-thread: the first thread's name, which no exit record carries: the program exec'd last as the
	 * watch saw it (under a wrapper, such as env or taskset, the program it ran), else the command's.
	 */
	if (tr->per_thread_started && tr->n_threads && tr->threads[0].first) {
		const char *exe = tr->profile.n_execs ? tr->profile.execs[tr->profile.n_execs - 1] : opt->argv[0];
		const char *slash = strrchr(exe, '/');
		snprintf(tr->threads[0].comm, sizeof(tr->threads[0].comm), "%s", slash ? slash + 1 : exe);
	}
out:
	state_free(&st);
	return rc;
}

void target_result_free(struct target_result *tr)
{
	sample_summary_free(&tr->sample_summary);
	free(tr->counter_info);
	free(tr->counters);
	free(tr->repeats);
	free(tr->interval_end_ns);
	free(tr->interval_counts);
	for (size_t i = 0; i < tr->n_threads; i++)
		free(tr->threads[i].counts);
	free(tr->threads);
	memset(tr, 0, sizeof(*tr));
}
