/* SPDX-License-Identifier: MIT */
/* Private to src/target/: the state of one tlbprof run, shared by its channels, phases, checks and sampling. */
#pragma once

#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/marker.h"
#include "target/target.h"
#include "target/watch.h"

struct tlbprof_marker_shm;
struct tlbprof_marker_snap;

#define TARGET_MAX_PHASES 256
/* tlbprof's own phase names: a perf-style enable..disable window, and the whole unmarked command. */
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
	int go[2], errp[2];		/* the start pipes: the parent's go-ahead, the child's exec errno */
	char dir[PATH_MAX - 16];
	char ctl_path[PATH_MAX], ack_path[PATH_MAX];
	struct channel ch[2];		/* [0] markers, [1] --control */
	/* The markers' shared page (channel.c; NULL: none), its path, and whether to spin for the next request. */
	struct tlbprof_marker_shm *shm;
	char shm_path[PATH_MAX];
	bool shm_spin;
	/*
	 * The callers' own counter reads (NULL: not offered), and those of the
	 * request being handled, copied out (given_words 0: none, read here).
	 */
	struct tlbprof_marker_snap *shm_snap;
	uint64_t *given;
	size_t given_words;
	cpu_set_t *shm_allowed;			/* the CPUs tlbprof may use, as it started */
	uint64_t steal_ticks, steal_read_ns;	/* /proc/stat's steal at its last read (phases.c, at most every tick) */
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
	struct target_watch *watch;	/* watch.c: smaps, affinity, cpu-clock and fault samples */
	/* intervals.c (-I): exec's time, the next interval's end, and the counts at the last one. */
	uint64_t interval_start_ns, interval_next_ns;
	struct counter_reading *interval_prev;
};

/* channel.c: the marker FIFOs and the perf-style control, their lines and their answers. */

/* Record a refused line (the first TARGET_MAX_ERRORS are kept, all are counted). */
__attribute__((format(printf, 3, 4)))
void target_note_error(struct target_state *st, const char *line, const char *fmt, ...);
/* Make the private FIFO directory and open both channels. Returns 0 or -errno. */
int target_channels_open(struct target_state *st);
/* Act on what poll() said of channel c: read its lines, or stop polling a controller that hung up. */
void target_channel_ready(struct target_state *st, struct channel *c, short revents);
/* After the exit: the lines still waiting on either channel. */
void target_channels_drain_pending(struct target_state *st);
/* Close both channels and remove the FIFOs with their directory; tolerates a partial open. */
void target_channels_close(struct target_state *st);

/* phases.c: each phase's occurrences and windows, their counters and times, and the totals after the exit. */

/* Begin an occurrence of the marked phase m names (made on first sight). Returns false: too many phases. */
bool target_phase_begin_marked(struct target_state *st, const struct marker_msg *m);
/* Open a perf-style "enabled" window (no-op when there is no room for it). */
void target_window_open(struct target_state *st);
/* Close slot k at now_ns; m is the end line (NULL: a perf window, or the exit). */
void target_slot_end(struct target_state *st, int k, uint64_t now_ns, const struct marker_msg *m, bool at_exit);
/* After the exit: close what is open, the whole command's counters, each phase's precision, the unmarked phase. */
void target_phases_finish(struct target_state *st, uint64_t exec_ns, uint64_t exit_ns, uint64_t steal0);

/* declared.c: what a phase declares about its memory, checked against the command's. */

/* At an occurrence's end: the declared region's page backing from smaps (on the 1st, 2nd, 4th ... occurrence). */
void target_declared_verify(struct target_state *st, struct phase_result *r);
/* Copy the declared region out of the command and walk its chain with the chase's self-checks. */
void target_declared_inspect_chain(struct target_state *st, struct phase_result *r);

/* reference.c: after the exit, tlbprof's own chase of each declared phase's shape (target_phase.reference_ns). */
void target_reference_chase(struct target_state *st);

/* Milliseconds from now until deadline_ns for poll(), rounded up, at most max_ms (0: due). */
static inline int target_ms_until(uint64_t deadline_ns, uint64_t now_ns, int max_ms)
{
	if (now_ns >= deadline_ns)
		return 0;
	uint64_t ms = (deadline_ns - now_ns + 999999) / 1000000;
	return ms < (uint64_t)max_ms ? (int)ms : max_ms;
}

/* intervals.c: -I MS, the whole command's counts in each interval (tr->interval_*). */

/* At exec (exec_ns): start the intervals, when -I asked for them and there are counters. */
void target_intervals_start(struct target_state *st, uint64_t exec_ns);
/* poll()'s timeout: max_ms, or less where the next interval ends sooner. */
int target_intervals_timeout_ms(const struct target_state *st, int max_ms);
/* Record each interval that has ended by now; at_exit: the last, cut short, too. */
void target_intervals_tick(struct target_state *st, bool at_exit);
/* Free what the intervals hold in st (not the result's rows). */
void target_intervals_close(struct target_state *st);

/* sampling.c: --sample around the command. */

/* Open the sampler on the child before its exec (errors go to tr->sample_error). */
void target_sampling_open(struct target_state *st);
/* After the exit: the last records, the summary, and each phase's share of the samples. */
void target_sampling_finish(struct target_state *st);
/* Close the session and free what it collected; tolerates one never opened. */
void target_sampling_close(struct target_state *st);
