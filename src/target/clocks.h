/* SPDX-License-Identifier: MIT */
/* Private to src/target/: the command's clock reads, traced with uprobes on its clock functions (libc's, or its own). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/sample.h"

/* Where a uprobe goes: a clock function of the file probed, as a file offset. */
struct clock_probe {
	bool found;			/* the symbol is in the file's .dynsym or .symtab */
	bool ifunc;			/* STT_GNU_IFUNC: resolved at load time (to the vDSO), so never called itself */
	uint64_t offset;		/* its file offset (what the uprobe PMU's config2 takes) */
};

/* The libc this process runs (dl_iterate_phdr): the one a dynamically linked command maps too. Returns 0 or -ENOENT. */
int clocks_libc_path(char *buf, size_t size);

/*
 * The clock functions of the ELF file at path (a libc, or a statically
 * linked program), from its .dynsym, then its .symtab (STT_FUNC or
 * STT_GNU_IFUNC, the first of a name) through its PT_LOAD headers to file
 * offsets. Returns 0, -errno, or -EINVAL for a file that is not ELF.
 */
int clocks_probes(const char *path, struct clock_probe probes[SAMPLE_CLOCK_FNS]);

/* Whether path is a program linked statically (an ELF executable with an entry point and no PT_INTERP). */
bool clocks_static_program(const char *path);

/* The uprobe PMU's type (/sys/bus/event_source/devices/uprobe/type), or -errno. */
int clocks_uprobe_type(void);

/* The command's tasks' switches off their CPUs and back, and their exits, in the order they were drained. */
struct clocks_switches {
	const struct sample_task *items;	/* SWITCH_OUT, SWITCH_IN and EXIT */
	size_t count;
	unsigned cpus;			/* the CPUs the command may use (0: unknown, taken as 1) */
	bool preempt_marked;		/* a switch out says whether it was a preemption (Linux 4.17 on) */
};

/*
 * The times of the hot thread's page faults inside its clock calls (their code in the vDSO, or the probes'
 * single-step page, [uprobes]), in time order: a process's first clock read faults in the vDSO's data pages, and
 * its first probe hit maps the kernel's single-step area, which a guest's fresh pages can make 0.1-1 ms. A probe
 * fires at a call's entry, so that cost lands in the window after the read; the benchmark's own clock, read at
 * the call's end, never sees it. clock_own_faults() (watch_clocks.c) finds them.
 */
struct clocks_own {
	const uint64_t *t;
	size_t count;
};

/*
 * The hot thread's clock reads (lists[fn]: each function's samples; a
 * clock_gettime sample's regs[0] is its clock id) into out: reads, the
 * windows between consecutive reads, clock ids and their resolutions
 * (resolution_ns[id], 0 when unknown), the coarsest clock read, and with sw
 * (NULL: no switches were recorded) the windows' time on a CPU. With own
 * (NULL: none known), a window starts at the last fault of the read's own
 * call in it. Pure but for the caller's resolutions.
 */
void clocks_profile(const struct sample_list lists[SAMPLE_CLOCK_FNS], uint32_t hot_tid,
		    const uint64_t resolution_ns[SAMPLE_CLOCK_IDS], uint64_t tick_ns, const struct clocks_switches *sw,
		    const struct clocks_own *own, struct sample_clocks *out);

/* When the hot thread ran the hot function: a cpu-clock sample there, or a page fault it took there. */
struct clocks_mark {
	uint64_t t;			/* CLOCK_MONOTONIC ns: a sample's own time, not a spread copy's guess */
	uint32_t weight;		/* the CPU time it stands for, in fast-rate periods (a slow-rate sample and
					 * its spread copies: 40); 0 for a fault */
	uint64_t ip;			/* the instruction: the sample's, or the one that faulted */
};

/* A read's clock id: clock_gettime's first argument (SAMPLE_CLOCK_IDS - 1 for any other); -1 for a function without. */
int clocks_read_id(int fn, const struct sample_record *r);

/* The window (reads[w], reads[w + 1]) of sorted reads[0..k) that holds t; k when none does. */
size_t clocks_window_of(const uint64_t *reads, size_t k, uint64_t t);

/* A read's clock as one number: its function and its id (clocks_read_id(), -1 included). */
#define CLOCKS_KEYS (SAMPLE_CLOCK_FNS * (SAMPLE_CLOCK_IDS + 1))
#define CLOCKS_KEY(fn, id) ((unsigned)((fn) * (SAMPLE_CLOCK_IDS + 1) + (id) + 1))

/*
 * Start/stop pairs (clocks_pairs.c): a clock the hot thread read an even number of times, CLOCKS_PAIRS_MIN_READS or
 * more, whose reads the hot code's marks show to be a timer's starts and stops. Its pairs are the windows from each
 * odd read (the first, third, ...) to the next read of that clock, its gaps those from each even read to the next.
 * It is read in pairs where the hot code ran in the pairs and took no fault in a gap in the pairs' own code (a
 * block of CLOCKS_PAIRS_CODE_BYTES holding CLOCKS_PAIRS_CODE_SHARE of the pairs' weight or more, and a larger share
 * of theirs than of the gaps'), and in the gaps either ran at most CLOCKS_PAIRS_GAP_SHARE of its weight there, or
 * other code: at most CLOCKS_PAIRS_OVERLAP of the gaps' weight ran in the pairs' blocks (each side's share of a
 * block, the smaller), with CLOCKS_PAIRS_TIMED_SHARE of the weight in the pairs. A loop timed between every two
 * consecutive reads runs alike in both (0.9 of its weight or more in the same blocks); the quarters leave room for
 * one sample placed on the wrong side of a read (a guest's sample times part from the probes' by up to a
 * millisecond, and at 100 Hz a handful of samples is all a run of short windows has).
 */
#define CLOCKS_PAIRS_MIN_READS 4
#define CLOCKS_PAIRS_CODE_BYTES 16
#define CLOCKS_PAIRS_CODE_SHARE 0.25
#define CLOCKS_PAIRS_GAP_SHARE 0.1
#define CLOCKS_PAIRS_OVERLAP 0.25
#define CLOCKS_PAIRS_TIMED_SHARE 0.1
/*
 * A clock whose pairs hold none of the hot code's weight is a timer's all the same where its pairs hold nothing but
 * their reads (the other clock a timer reads at each start and stop among them) and the hot code ran in the gaps:
 * the loop it timed was deleted (pairs_empty). A pair holds nothing where no window in it is longer than
 * CLOCKS_PAIRS_EMPTY_TIMES its least one plus CLOCKS_PAIRS_EMPTY_NS (on a guest one read can cost several times
 * another: a syscall's clock beside a vDSO one, a first call's faults); three pairs in four must, since one may hold
 * a preemption.
 */
#define CLOCKS_PAIRS_EMPTY_TIMES 4
#define CLOCKS_PAIRS_EMPTY_NS 5000

/*
 * The windows in the gaps of every clock read in pairs (gap[w] for the window from read w of k in time order,
 * reads[i] the time of read i and keys[i] its clock, CLOCKS_KEY()), from the hot code's marks[0..n_marks), each
 * in its window mark_window[i] (clocks_window_of(): k for none); the clock with the most
 * reads of those, its reads, its gaps' share of the hot code's weight and how much of it ran the pairs' code,
 * whether its pairs are empty and the upper quartile of the time their longest window held beyond their least,
 * the reads of a clock whose one-window pairs hold nothing but a read, and the windows in gaps: out->paired_fn
 * (-1: none), paired_id, paired_reads, gap_weight_share, gap_code_overlap, pairs_empty, pair_work_p75_ns,
 * bare_reads, gap_windows and pairs_known. Pure; false when out of memory.
 */
bool clocks_pairs(const unsigned *keys, const uint64_t *reads, size_t k, const struct clocks_mark *marks,
		  const size_t *mark_window, size_t n_marks, bool *gap, struct sample_clocks *out);

/* The hot loop's windows hold at least this share of the weight of its cpu-clock marks in windows. */
#define CLOCKS_MEASURED_SHARE 0.9

/*
 * The windows between the hot thread's consecutive reads (lists, as for
 * clocks_profile) that the hot loop ran in, from marks[0..n_marks): the
 * windows holding the most weight of its cpu-clock marks, from the heaviest,
 * until they hold CLOCKS_MEASURED_SHARE of all the weight in windows (a stray
 * sample of the hot function in a window of other work, an interpreter's eval
 * loop calling a 64 MiB memset, is not its timed loop), and every window
 * holding a fault it took (a window too short for a sample), but none in a gap
 * of a timer's pairs (clocks_pairs(), whatever ran there); and the page
 * faults of the hot thread's process hot_pid on [lo, hi) (faults; NULL: none
 * sampled; a parallel loop's workers fault inside the timer's windows) inside those
 * windows: out->measured_windows, region_faults_measured and measured_known;
 * and the marks' weight, in all and between the first and last read
 * (loop_weight, loop_weight_in_span); with sw (the switches of every task of
 * the command; NULL: not recorded, or some lost), where the hot thread was
 * in those windows: preempted, blocked, and blocked with the whole command
 * off a CPU (waits_known); and the region's faults in the gaps
 * (region_faults_in_gaps). Pure; false when out of memory.
 */
bool clocks_measured(const struct sample_list lists[SAMPLE_CLOCK_FNS], uint32_t hot_tid, uint32_t hot_pid,
		     const struct clocks_mark *marks, size_t n_marks, const struct sample_list *faults, uint64_t lo,
		     uint64_t hi, const struct clocks_switches *sw, struct sample_clocks *out);

/*
 * What lies between the hot thread's first and last read (out->first_read_ns
 * and last_read_ns, from clocks_profile): its cpu-clock samples (cpu) and the
 * page faults of its process hot_pid on [lo, hi) (faults; NULL: none sampled),
 * in all and in that span, and the moves between CPUs of the process's threads
 * (consecutive samples of one thread, in time order, on different CPUs; the
 * first CLOCKS_MOVE_THREADS threads), in all and inside the span: a parallel
 * loop's worker that moves inside the timer's span is a timed move. Pure.
 */
#define CLOCKS_MOVE_THREADS 64
void clocks_span(const struct sample_list *cpu, const struct sample_list *faults, uint64_t lo, uint64_t hi,
		 uint32_t hot_tid, uint32_t hot_pid, struct sample_clocks *out);
