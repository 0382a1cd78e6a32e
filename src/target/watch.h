/* SPDX-License-Identifier: MIT */
/* Private to src/target/: watching an unmarked command (its smaps, affinity, cpu-clock and page-fault samples). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pmu/sample.h"
#include "target/clocks.h"

/* How often the command's /proc files are read while it runs... */
#define WATCH_POLL_INTERVAL_NS 20000000ull
/* ...after a start at this interval, doubled at each poll (1, 2, 4, 8, 16 ms): a short command is seen too. */
#define WATCH_FIRST_INTERVAL_NS 1000000ull
/* The full smaps is read when the process's VmRSS moved, and at least on every WATCH_FULL_EVERY-th poll. */
#define WATCH_FULL_EVERY 5
/* Big regions followed over the run (the report keeps the SAMPLE_WATCH_MAX_REGIONS largest). */
#define WATCH_MAX_TRACKED 64
/* Points kept per region while watching: halved (every other one dropped) when full. */
#define WATCH_MAX_POINTS 256
/* The page-fault session's ring per CPU, at most (512 pages: 2 MiB), and all CPUs' rings together, at most. */
#define WATCH_FAULT_RING_PAGES 512
#define WATCH_FAULT_RINGS_BYTES (32ull << 20)

/* One VMA of an smaps file, as watch_smaps_parse() hands it over. */
struct watch_vma {
	uint64_t start, end;
	const char *name;		/* points into the parsed text, name_len bytes; "" for anonymous memory */
	size_t name_len;
	uint64_t rss_bytes, anon_huge_bytes, hugetlb_bytes, kernel_page_bytes;
	bool vm_hg, vm_nh;
	bool anonymous;			/* no file (inode 0) */
};

/*
 * Parse smaps text (len bytes) and call fn for each VMA with its fields.
 * Pure. Returns the number of VMAs, or -EINVAL for text that is not smaps.
 */
int watch_smaps_parse(const char *text, size_t len, void (*fn)(void *ctx, const struct watch_vma *v), void *ctx);
/* VmRSS (bytes) of /proc/PID/status text. Pure. Returns 0, or -EINVAL when it has none (a thread that exited). */
int watch_status_rss(const char *text, size_t len, uint64_t *rss_bytes);

struct watch_region {
	struct sample_watch_region r;	/* points thinned into r.points at the end */
	struct sample_watch_point *pts;
	size_t n_pts;
	uint64_t stride;		/* keep every stride-th point (doubles when pts is full) */
	uint64_t seen;
	/*
	 * A later poll showed its addresses in a mapping of another start: mmap
	 * places a new anonymous mapping just below the last and the kernel merges
	 * them, so the merged one starts lower and this entry, keyed by its start,
	 * saw its memory only before it was written. Its faults and Rss are the
	 * newer entry's.
	 */
	bool superseded;
};

/* A thread's mask, as the polls from t_first to t_last saw it (a mask held from one change to the next). */
struct watch_affinity {
	uint64_t t_first, t_last;
	uint32_t tid;
	unsigned cpus;
};

/* One sampling session of the watch with its own symbolizer (mappings come from its own records). */
struct watch_session {
	struct sample_session *s;
	struct symbols *syms;
	struct sample_list samples;
	struct sample_collector collector;
	struct sample_sink sink, wrapped;	/* wrapped: the collector's; sink also notes the execs */
	struct target_watch *w;
	char error[256];
};

/*
 * Processes followed: the command's, and each it starts, from the cpu-clock session's fork records. Every one's
 * image is kept (a sample's own code is its process's); at most this many live ones are polled at once.
 */
#define WATCH_MAX_PROCS 16
/*
 * Processes known at once (each kept for its image, a gone one until its place is needed); one started beyond
 * them is counted, not followed.
 */
#define WATCH_MAX_KNOWN_PROCS 1024
/*
 * A process the command started is traced for clock reads once a poll sees it this old: a script's short
 * children (/bin/true, a compiler) would each take a thread's probes, whose close costs a grace period each.
 */
#define WATCH_CLOCK_CHILD_AGE_NS 20000000ull

/* A process of the command's: its smaps and threads are polled, its image is known. */
struct watch_proc {
	pid_t pid;
	uint64_t start_ns;		/* when its fork record was seen */
	bool polled;			/* started while fewer than WATCH_MAX_PROCS live ones were polled */
	bool clock_traced;		/* its threads are followed by the clock probes (the command's from the start; one
					 * it started once a poll saw it WATCH_CLOCK_CHILD_AGE_NS old) */
	bool gone;			/* its /proc files are gone */
	bool exec_pending;		/* it exec'd, and its new executable has not been mapped yet */
	uint64_t rss, last_rss;		/* VmRSS at this poll and the one before (bytes) */
	bool rss_known;			/* this poll read a VmRSS */
	uint32_t smaps_tid;		/* a live thread, whose task directory its smaps is read from (0: none) */
	char exe[160];			/* its image since its last exec (a forked child: its parent's until it execs) */
};

struct target_watch {
	pid_t pid;			/* the command's process, procs[0] */
	/* The hot function as the clock symbolizer names it, whole (profile.c): the profile's hot_exe_function is a
	 * copy cut to its buffer, which a C++ template's name outgrows, so faults are matched against this. */
	const char *hot_function;
	const char *hot_library;	/* its shared object, as the clock symbolizer names it; NULL: the executable */
	/* When the hot thread ran the hot function: its cpu-clock samples there and the faults it took there
	 * (CLOCK_MONOTONIC ns, unsorted), for the clock windows it ran in (clocks_measured). */
	struct clocks_mark *hot_marks;
	size_t n_hot_marks;
	struct watch_proc *procs;
	size_t n_procs, cap_procs;
	unsigned procs_seen;		/* every process started, the command's included */
	unsigned procs_dropped;		/* of those, the ones never polled (WATCH_MAX_PROCS live ones were) */
	pid_t cur_pid;			/* the process whose smaps is being parsed, for on_vma() */
	uint64_t start_ns;		/* the command's start (the go-ahead before its exec) */
	uint64_t next_ns;		/* the next poll */
	unsigned polls;
	double *poll_us;
	size_t n_poll_us, cap_poll_us;
	struct watch_region regions[WATCH_MAX_TRACKED];
	size_t n_regions;
	struct watch_affinity *aff;
	size_t n_aff, cap_aff;
	char *buf;
	size_t buf_cap;
	struct watch_session clock, faults;
	uint64_t clock_slow_ns;		/* when cpu-clock went to SAMPLE_CPU_CLOCK_SLOW_PERIOD_NS (0: never) */
	bool clock_read_count;		/* the clock session opened with each sample's count (PERF_SAMPLE_READ) */
	/*
	 * uprobes on the libc clock functions, one session each on the first thread (none when the kernel or
	 * privileges refuse), and on each later thread of its process that clock_follow() saw start; every
	 * session of a function collects into clockfn[fn].samples.
	 */
	struct watch_session clockfn[SAMPLE_CLOCK_FNS];
	struct clock_probe probes[SAMPLE_CLOCK_FNS];
	int uprobe_type;
	struct watch_clock_thread {
		uint32_t tid;
		uint64_t opened_ns;	/* when its probes opened: its reads before were not seen */
		bool traced;		/* a probe opened on it */
		bool ended;		/* it exited: its probes were closed, its place is free */
		struct watch_session fn[SAMPLE_CLOCK_FNS];
	} **clock_threads;		/* every thread followed, ended ones included (each allocated: a session's
					 * sink points at it) */
	size_t n_clock_threads, cap_clock_threads;
	unsigned clock_live;		/* of those, the ones not ended */
	/* probes being closed in the background (each close waits for the kernel to unregister it) */
	struct watch_closer *closers;
	uint64_t clock_lost_closed[SAMPLE_CLOCK_FNS];	/* records the closed sessions of each function lost */
	struct sample_clocks clocks;	/* what is known before the profile: libc, per function traced or why not */
	bool own_faults;		/* faults is the watch's own session (not --sample page-faults) */
	/* the execs of the command's process, from the clock session's records */
	size_t n_execs;
	char execs[SAMPLE_WATCH_MAX_EXECS][160];
	/* the command's threads' switches off their CPUs and back, from the clock session (context_switch) */
	struct sample_task *switches;
	size_t n_switches, cap_switches;
	bool switches_short;		/* one did not fit in memory: the on-CPU figures are unknown */
	unsigned command_cpus;		/* the CPUs the command may use as it starts: 1 with --cpu, else tlbprof's */
	bool clock_switches;		/* the clock session records switches (its third try does not) */
	uint64_t now_ns;		/* of the current poll, for the parser's callback */
};

struct target_state;

/* The process pid as the watch knows it (the newest entry first), or NULL. Shared with profile.c. */
struct watch_proc *watch_proc_find(const struct target_watch *w, pid_t pid);
/* Shared by watch.c and watch_clocks.c: a session on pid collecting into `into` (its own list when NULL). */
void watch_session_open_into(struct target_watch *w, struct watch_session *ws, pid_t pid,
			     const struct sample_options *so, struct sample_list *into);
void watch_session_close(struct watch_session *ws);
/* The clock probes (watch_clocks.c): opened before the exec (on program's own clock functions where it is
 * linked statically, else on tlbprof's libc), a new thread followed, a thread's exit noted, drained (closed at
 * their budget), judged for the profile, closed. */
void watch_clocks_open(struct target_watch *w, pid_t pid, const char *program);
void watch_clock_follow(struct target_watch *w, uint32_t tid);
void watch_clock_thread_ended(struct target_watch *w, uint32_t tid);
void watch_clocks_tick(struct target_watch *w);
void watch_clocks_release(struct target_watch *w);
void watch_clocks_finish(struct target_watch *w, const struct sample_list *faults, const struct symbols *fsyms,
			 struct sample_profile *p);
void watch_clocks_close(struct target_watch *w);

/* Open the cpu-clock (and, unless --sample page-faults, a page-fault) sampler on the child before its exec. */
void target_watch_open(struct target_state *st);
/* The poll() timeout (ms) until the next poll, at most max_ms. */
int target_watch_timeout_ms(const struct target_state *st, int max_ms);
/* While the command runs: drain the rings; read its /proc files when a poll is due. */
void target_watch_tick(struct target_state *st);
/* File descriptors to poll() for ring watermarks (-1 when none). */
int target_watch_poll_fd(const struct target_state *st, int which);
/*
 * The command exited and is not reaped yet: its zombie leader keeps the mask it exited with, so the mask the
 * last poll saw is known to the exit (a short benchmark's hot loop often runs after the last poll). The other
 * threads are gone by then.
 */
void target_watch_exiting(struct target_state *st);
/* The command exited: start closing the clock probes, whose waits then overlap what follows. */
void target_watch_exited(struct target_state *st);
/* After the exit: the last records, then the profile into the result. */
void target_watch_finish(struct target_state *st);
/* Free everything; tolerates one never opened. */
void target_watch_close(struct target_state *st);

/* A thread's samples in the hot function. */
struct watch_thread_hits {
	uint64_t key;		/* (tid << 32) | pid */
	size_t weight;		/* samples, spread copies included: its CPU time there, at one rate */
	size_t taken;		/* of them, the samples the kernel took: the evidence behind the weight */
	bool reads;		/* the thread read a clock */
	double bracketed;	/* the share of the heaviest thread's samples taken there that lie between
				 * this thread's first and last clock read */
};

/* A reader whose reads bracket this share of the heaviest thread's samples in the hot function times them. */
#define WATCH_HOT_BRACKETED 0.9

/*
 * The hot thread's key from its threads' hits t[0..n): the one with the most
 * weight; but where it reads no clock, the heaviest thread of its process
 * that does and either has a quarter of its weight or more, or reads around
 * WATCH_HOT_BRACKETED of its samples. A parallel loop's threads run it alike
 * and one of them times it: OpenMP's master runs its share and reads
 * omp_get_wtime(), where the busiest worker reads no clock and the clock
 * checks could not tell. A quarter: with other work on the machine the
 * master's share fell under half in 1 run of 10. Under a quarter only where
 * the samples taken say so (the log of the ratio below log 1/4 by two
 * standard errors, sqrt(1/taken + 1/taken)): after 100 ms the rate is 100 Hz,
 * and a 55 ms parallel loop kept 1 to 9 samples a thread, each spread 40
 * times, so master and worker differed 5 to 1 by chance and a rule on the
 * weight alone picked the worker in 1 run of 6. Around the samples: the
 * master's share then sometimes holds none at all (in a full suite run here),
 * and a main thread that starts workers, reads the clock, joins them and
 * reads it again runs none of the loop either. Pure; 0 when no thread has
 * weight.
 */
uint64_t watch_hot_thread(const struct watch_thread_hits *t, size_t n);

/* The cpu-clock samples at one rate (clock_rate.c). */
/*
 * Each sample's period (sample_record.period), the CPU time it stands for.
 * Where the samples carry their event's count (sample_record.counted), the
 * count since the sample before of the same thread and CPU, at most slow_ns
 * (more: samples between were lost, and their time is no one's): measured,
 * with nothing to guess about which threads the lowered rate reached.
 * Otherwise as set: fast_ns before from_ns (when the rate was lowered; 0:
 * never, all fast_ns), and after it slow_ns, but
 * fast_ns for a thread with two samples after from_ns + slow_ns less than
 * slow_ns / 2 apart. PERF_EVENT_IOC_PERIOD reaches only the events tlbprof
 * opened, on the command's first thread: a thread or process started before
 * it keeps the fast period in its inherited event (OpenMP's worker: a sample
 * every 0.33 ms where its master took one every 14 ms), and PERF_SAMPLE_PERIOD
 * goes on saying the old one either way. Pure. Returns 0 or -ENOMEM.
 */
int watch_clock_periods(struct sample_list *l, uint64_t from_ns, uint64_t fast_ns, uint64_t slow_ns);
/*
 * Every thread's samples to one per period_ns of its CPU time: in order, each
 * adds its period to its thread's sum (half a period to start with), and is
 * kept once for each whole period_ns the sum then holds, the copies period_ns
 * apart before it (same thread, IP and CPU; marked spread). So the fast ones
 * are thinned and the slow ones spread, by CPU time, not wall time (a thread
 * that shared its CPU ran half of each wall period). Pure. Returns 0,
 * -EINVAL (period_ns 0) or -ENOMEM (l is then unchanged).
 */
int watch_clock_resample(struct sample_list *l, uint64_t period_ns);
/*
 * Below this many samples at the slow rate (10 s of CPU), the samples are
 * resampled to the fast period, the slow ones spread: at most 40 000 copies
 * (4 MB); above, to the slow one. At 100 (1 s), a command that ran a shell's
 * second of CPU before its benchmark kept 5 samples of a 55 ms parallel loop
 * in all, too few to tell its threads apart.
 */
#define WATCH_CLOCK_THIN_MIN_SLOW 1000u

/* One page's first touch by the hot loop, from a page-fault sample. */
struct watch_touch {
	uint64_t page;			/* the address / 4096 */
	uint64_t t;			/* ns */
	uint32_t tid;
	unsigned line;			/* its 64-byte line in the page, 0 to 63 */
	bool in_loop;			/* taken in the hot loop; the others only explain a scan */
};
/*
 * How far back in a thread's first touches a scan's previous page may lie:
 * a loop over this many arrays at once (a STREAM triad has three, memcpy two)
 * first touches each array's pages in turn.
 */
#define WATCH_SCAN_STREAMS 8
/*
 * The pattern of the hot loop's first touches into f, from the region's
 * first touches t (any order; sorted here by thread, then time): the steps
 * between a thread's consecutive ones in the loop, their in-page offsets,
 * and which of them a scan explains (sample_fault_pattern.scan_touches),
 * with the offsets of the others. Pure. Returns 0 or -ENOMEM.
 */
int watch_touch_pattern(struct watch_touch *t, size_t n, struct sample_fault_pattern *f);

/*
 * The profile from what was watched (profile.c): the cpu-clock shares and the
 * hot loop, the fault pattern on the most faulted big region and its cross with
 * the hot loop, the regions, the hot thread's affinity, the execs.
 */
int watch_profile_build(struct target_watch *w, const struct sample_list *faults, struct symbols *fault_syms,
			struct sample_profile *out);
