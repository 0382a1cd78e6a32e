/* SPDX-License-Identifier: MIT */
/* tlbprof run: start someone else's benchmark, follow its phase markers or perf control commands, measure each phase. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pmu/counters.h"
#include "measure/runner.h"
#include "pmu/sample.h"

struct workload_ops;

/* The foreign workloads of run phases (measure/workloads/run.c, in the registry, never a --workload). */
extern const struct workload_ops workload_marked;	/* "run": a phase the benchmark marked */
extern const struct workload_ops workload_command;	/* "command": the whole command, unmarked */

/* How to start and follow the command. */
struct target_options {
	char *const *argv;		/* the command; argv[0] is looked up in PATH; no shell */
	const char *program;		/* argv[0] as found in PATH (NULL: not known): where it is linked statically,
					 * its own clock functions are probed, as it maps no libc */
	int cpu;			/* pin the command to this CPU, -1: not pinned */
	/* perf stat --control compatibility: fifo paths or inherited fds (-1 / NULL when not given). */
	const char *ctl_path, *ack_path;
	int ctl_fd, ack_fd;
	bool start_disabled;		/* --delay -1: no window until the first "enable" */
	const char *tmpdir;		/* where the private directory of the marker FIFOs goes */
	volatile sig_atomic_t *stop_signal;	/* the signal that asked to stop, passed on to the command; NULL: SIGINT */
	bool sample;			/* --sample: sample the command with its addresses and IPs */
	const struct counter_sample_event *sample_event;	/* the event; NULL: every page fault */
	size_t sample_top;		/* functions and regions to keep in the summary */
	bool no_reference;		/* no reference chase after the exit (run -r: the first run's stands for all) */
	unsigned interval_ms;		/* -I: the whole command's counts every interval_ms, as perf stat -I (0: none) */
	pid_t attach_pid;		/* -p: count this running process instead (argv: NULL, or a command that times it) */
	bool per_thread;		/* --per-thread: keep each thread's counts (tr->threads) */
	bool stdout_to_stderr;		/* tlbprof's stdout carries a document: the command's stdout is its stderr */
};

#define TARGET_PROTOCOL "tlbprof-marker/1"
#define TARGET_MAX_ERRORS 8
/* run -r: the most runs of the command one report holds. */
#define TARGET_MAX_REPEATS 1000

/* One run of the command under run -r: how it ended and how long it took. */
struct target_repeat {
	double wall_ns;			/* exec .. exit */
	bool exited;
	int exit_code;
	int term_signal;
};

/* run -p --per-thread: one thread of the attached process and its counts (owned, n_counters of them). */
struct target_thread {
	pid_t pid, tid;			/* a started command's child processes have pids of their own */
	char comm[16];			/* "" where not known (a started command's tasks report no name at exit) */
	bool first;			/* a started command's first thread: the total less every exit reported */
	bool exact;			/* first: every other exit was reported, so the difference is exact */
	struct counter_reading *counts;
};

/* What happened to the command as a whole. */
struct target_result {
	pid_t pid;
	bool started;			/* execve succeeded */
	int exec_errno;			/* why it did not */
	int fifo_errno;			/* the marker FIFOs' private directory could not be made in tmpdir (0: it was) */
	bool exited;			/* exited normally (exit_code is valid) */
	int exit_code;
	int term_signal;		/* killed by this signal (0: not) */
	bool core_dumped;
	double wall_ns;			/* exec .. exit */
	bool interrupted;		/* tlbprof was asked to stop and stopped the command */
	unsigned messages;		/* marker and control lines received */
	unsigned caller_reads;		/* boundaries whose counters the benchmark's marker read itself */
	unsigned errors;		/* lines refused */
	char error_lines[TARGET_MAX_ERRORS][200];	/* the first refusals: "LINE: reason" */
	bool markers_seen;		/* phase begin/end were used */
	bool control_seen;		/* enable/disable/ping were used */
	double handling_us_median;	/* tlbprof's work per message, from the line read to the ack written */
	/* --sample: samples with their data address and IP, symbolised after the exit. */
	char sample_requested[24];	/* what --sample asked for ("page-faults", "dtlb-misses"); "" without */
	bool sampled;			/* sampling ran */
	char sample_error[256];		/* why it could not ("" when it ran or was not asked for) */
	struct sample_info sample_info;
	struct sample_summary sample_summary;	/* owned */
	/* What watching the command found (smaps over time, affinity, cpu-clock and fault samples, execs). */
	bool watched;
	struct sample_profile profile;
	/* The whole command's counters (exec .. exit), also when its phases were marked. */
	size_t n_counters;
	struct counter_info *counter_info;	/* owned */
	struct counter_reading *counters;	/* owned */
	/*
	 * run -r N: each run of the command in order (owned; n_repeats of the
	 * repeats_requested ran). The fields above are then the runs together:
	 * counts and messages summed, the exit the last run's, the watch and the
	 * samples the first run's. 0 and NULL for a single run.
	 */
	struct target_repeat *repeats;
	size_t n_repeats;
	unsigned repeats_requested;
	/*
	 * -I MS: the whole command's counts in each interval from exec, the last
	 * one cut short by the exit (run -r: the first run's). interval_counts
	 * holds n_intervals rows of n_counters deltas, scaled where multiplexed
	 * (owned); interval_end_ns[i] is row i's end, ns after exec (owned).
	 */
	unsigned interval_ms;
	size_t n_intervals;
	double *interval_end_ns;
	struct counter_reading *interval_counts;
	/*
	 * run -p: tlbprof attached to process pid rather than start it; ended_by
	 * says what ended the count: "exit" (pid exited), "command" (the timing
	 * command exited), "signal" (tlbprof's SIGINT or SIGTERM).
	 */
	bool attached;
	char attached_comm[16];
	const char *ended_by;
	size_t threads_attached;	/* threads counted (those of the start, with the threads they made) */
	struct target_thread *threads;	/* --per-thread: each of them (owned) */
	size_t n_threads;
	/*
	 * --per-thread on a started command: each task's own counts as it exited
	 * (counter_set_threads()); what the kernel dropped, or why there are none.
	 */
	bool per_thread_started;
	uint64_t per_thread_lost;
	char per_thread_error[160];
};

/*
 * Run opt->argv as a child: create a private directory with the marker
 * FIFOs (TLBPROF_MARKER_CTL/ACK in the child's environment), fork, open
 * ctx->counters on the child (inherited by its threads and children, enabled
 * at exec), exec the command without a shell, and serve its markers and
 * control commands until it exits. Each phase name becomes one result (its
 * occurrences aggregated); an unmarked command is one phase "command". On
 * *ctx->stop the command gets the signal of *opt->stop_signal (SIGINT without
 * one; SIGKILL 2 s later) and out->interrupted is set. Returns 0 (also when
 * the command failed: see *tr), -ENOENT (...) when the command could not be
 * executed (tr->exec_errno), or -errno when tlbprof could not set up: the
 * FIFO directory in opt->tmpdir (tr->fifo_errno), a FIFO, fork; free with target_result_free()
 * and run_results_free().
 */
int target_run(const struct target_options *opt, const struct run_context *ctx, struct run_results *out,
	       struct target_result *tr);
void target_result_free(struct target_result *tr);

/*
 * run -p PID, as perf stat -p: count each thread pid has now (and the threads
 * they make from now on, inherited) from now until pid exits, the timing
 * command opt->argv exits (when given: perf stat -p PID -- sleep 5), or
 * *ctx->stop, whichever comes first; the attached process is never
 * signalled. The result is one phase "attached" with the whole count; with
 * opt->per_thread each thread's counts in tr->threads. Returns 0, -ESRCH
 * when pid is gone before any thread could be counted, or -errno.
 */
int target_attach(const struct target_options *opt, const struct run_context *ctx, struct run_results *out,
		  struct target_result *tr);

/*
 * run -r N, as perf stat -r: the first run (into, tr, as target_run() left
 * them) becomes run 1 of requested. Returns 0 or -ENOMEM.
 */
int target_repeat_begin(struct target_result *tr, unsigned requested);
/*
 * Add the next run (from, tr_from) to into and tr: each phase's occurrences,
 * samples and counts join the phase of its name (a new name is added), the
 * samples of run k tagged as allocation k, so that the judge's spread and
 * interval between allocations are the spread between runs. from and tr_from
 * are left to free. Returns 0 or -ENOMEM.
 */
int target_repeat_add(struct run_results *into, struct target_result *tr, struct run_results *from,
		      struct target_result *tr_from);
