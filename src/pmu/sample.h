/* SPDX-License-Identifier: MIT */
/* Sampling of a process with perf_event_open: page faults (or a given event) with instruction and data address. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct symbols;

/*
 * The period policy (sample_period_initial, sample_period_raise). A fixed
 * period, not perf record's -F frequency mode: the kernel adjusts a
 * frequency by reprogramming the period at every tick, and on Intel a
 * precise event in frequency mode loses PEBS auto-reload and with it large
 * PEBS (intel_pmu_hw_config: both need !attr.freq). So the first period
 * aims at SAMPLE_TARGET_HZ samples per second per CPU at the highest rate
 * the event plausibly reaches, and each drain that finds PERF_RECORD_THROTTLE
 * records (the kernel stopped sampling for the rest of a tick because the
 * samples came faster than perf_event_max_sample_rate) doubles it through
 * PERF_EVENT_IOC_PERIOD, as the kernel's own frequency mode would have
 * lengthened it. The report gives the first and the last period and the
 * raises.
 */
#define SAMPLE_TARGET_HZ 4000		/* perf record's default -F */
/* Retired loads that missed the STLB, per second and CPU, at most: one every 50 ns (a chase that misses on every
 * load takes 80-100 ns each; overlapping independent misses are bounded by the page walkers). */
#define SAMPLE_PRECISE_MAX_HZ 20000000ull
/* IBS op: 0xffff0, the largest period every IBS op counter holds (IbsOpMaxCnt is 16 bits of period / 16 without
 * the OpCntExt extension); 5-10 k samples a second at 5-10 G dispatched ops or cycles a second. */
#define SAMPLE_IBS_OP_PERIOD 0xffff0ull
/* No period is raised beyond this (one sample in 2^31 events). */
#define SAMPLE_MAX_PERIOD (1ull << 31)
/* Period of a custom event when the caller gives none: the first prime at or above this, so it does not beat with a
 * loop's trip count. */
#define SAMPLE_DEFAULT_PERIOD (SAMPLE_PRECISE_MAX_HZ / SAMPLE_TARGET_HZ)
/* Data pages of each CPU's ring when the caller gives none: 512 KiB, what perf_event_mlock_kb (516 per CPU) lets
 * any user lock. */
#define SAMPLE_DEFAULT_RING_PAGES 128
/*
 * A drain hands over only records older than this (unless it is the final
 * one): a record becomes visible in its CPU's ring within microseconds of its
 * timestamp, so anything older has arrived in every ring, and records of
 * different CPUs can be handed over in time order (an exec's COMM before the
 * new program's mmaps, whichever CPU each was written on).
 */
#define SAMPLE_HOLDBACK_NS 10000000ull

/* What to sample. All zero: every software page fault of the target, user and kernel side. */
struct sample_options {
	/*
	 * Another event instead of page faults (a PMU's precise dTLB-miss loads,
	 * say, where the hardware gives their data addresses): perf_event_attr
	 * type, config, config1, config2 and precise_ip as given. An event the
	 * machine lacks fails sample_open() with its errno and the reason.
	 */
	bool custom_event;
	uint32_t type;
	uint64_t config, config1, config2;
	unsigned precise_ip;		/* 0..3 */
	const char *name;		/* the custom event's name for the report (copied); NULL: "TYPE:CONFIG" */
	bool ibs_op;			/* the custom event is AMD IBS op sampling (sample_ibs_op_event) */
	bool exclude_kernel, exclude_hv;/* as the custom event is encoded: a user-only event stays user-only */
	bool no_data_addr;		/* the kernel fills no data address or source for this event (IBS op before
					 * Linux 6.1): PERF_SAMPLE_ADDR and DATA_SRC are not asked for */
	const char *note;		/* what the event's source wants said in info.note (copied); NULL: nothing */
	uint64_t period;		/* one sample every period events; 0: 1 for page faults (software events
					 * with period 1 are never throttled), sample_period_initial() otherwise */
	/*
	 * Start counting at the target's next execve() (it was forked, waits, and
	 * is opened before it execs): mapping records of the new program then
	 * arrive from its first mmap on. Otherwise counting starts at open.
	 */
	bool enable_on_exec;
	bool cpu;			/* each sample says the CPU it was taken on (PERF_SAMPLE_CPU) */
	bool context_switch;		/* PERF_RECORD_SWITCH too: when each thread left its CPU and came back */
	/*
	 * Each sample carries its event's count (PERF_SAMPLE_READ, read_format 0):
	 * with inherit, the count of the thread's own event on that CPU (Linux
	 * 6.12 on; older kernels refuse inherit with it, EINVAL). For the
	 * cpu-clock, the CPU time the thread ran there since its event began, so
	 * that two samples' difference is the CPU time the later one stands for.
	 */
	bool read_count;
	size_t ring_pages;		/* data pages of each CPU's ring, a power of two; 0: SAMPLE_DEFAULT_RING_PAGES */
	/*
	 * The user registers each sample carries (PERF_SAMPLE_REGS_USER, bits of
	 * asm/perf_regs.h: 1 << PERF_REG_X86_DI for a function's first argument
	 * at a uprobe), at most SAMPLE_MAX_REGS of them; 0: none.
	 */
	uint64_t regs_user;
	/*
	 * One event and ring following the task on any CPU (cpu -1) instead of
	 * one per online CPU: for events costly to close (a uprobe's is
	 * unregistered, an RCU grace period, per event). The kernel maps no ring
	 * for an inherited event on cpu -1, so it is not inherited: threads and
	 * children created later are not followed.
	 */
	bool per_task;
};

/* Registers a sample can carry (sample_options.regs_user). */
#define SAMPLE_MAX_REGS 4

/* What a session samples: it decides the attributes (sample_attr_build) and the period policy. */
enum sample_source {
	SAMPLE_SOURCE_SOFTWARE,		/* page faults */
	SAMPLE_SOURCE_HARDWARE,		/* a PMU event (precise_ip > 0: Intel PEBS) */
	SAMPLE_SOURCE_IBS_OP,		/* AMD IBS op sampling */
};

/* How a session was opened, and what it has read so far. */
struct sample_info {
	char event[64];			/* "page-faults", or the custom event's name */
	enum sample_source source;
	uint32_t type;
	uint64_t config, period;	/* period: the one in force (raised after throttling) */
	uint64_t period_initial;	/* the period the events were opened with */
	unsigned period_raises;		/* times throttling made the sampler raise the period */
	uint64_t sample_type;		/* PERF_SAMPLE_* the samples carry */
	uint64_t regs_user;		/* the user registers they carry (sample_regs_user) */
	bool data_source;		/* they carry PERF_SAMPLE_DATA_SRC (so the TLB level) */
	unsigned precise_ip;
	bool use_clockid;		/* the kernel stamps records on CLOCK_MONOTONIC; false: on its perf clock,
					 * converted to CLOCK_MONOTONIC through the TSC (large PEBS needs that) */
	bool large_pebs;		/* the attributes meet the kernel's conditions for large PEBS (precise, fixed
					 * period, sample_type within the PEBS record, no use_clockid); whether the
					 * CPU has it is the kernel's business */
	bool exclude_kernel, exclude_hv;/* kernel (and hypervisor) side not sampled */
	char note[320];			/* why they are excluded, what the event's source cannot see ("" when
					 * nothing is to be said) */
	size_t rings;			/* one event and ring per online CPU */
	size_t ring_bytes;		/* data part of each ring as mapped (smaller than asked when the
					 * locked-memory allowance was short) */
	uint64_t samples;		/* PERF_RECORD_SAMPLE handed over */
	uint64_t mmaps, tasks;		/* mapping records; fork, exit and exec records handed over */
	uint64_t switches;		/* PERF_RECORD_SWITCH handed over (sample_options.context_switch) */
	uint64_t lost;			/* records the kernel dropped because the ring was full (PERF_RECORD_LOST
					 * and PERF_RECORD_LOST_SAMPLES; for page faults, at the final drain, the
					 * faults the event counted beyond the samples handed over, which a ring
					 * that filled at the end reports in no record): drain more often, or a
					 * bigger ring */
	uint64_t throttled;		/* PERF_RECORD_THROTTLE: the kernel stopped sampling for a tick */
	uint64_t not_missed;		/* IBS op samples not handed over: no load or store, or an L1 dTLB hit */
	uint64_t other_records;		/* records of other types, skipped */
	uint64_t bad_records;		/* records too short for their type, skipped */
};

/* A sample's instruction address from here up is the kernel's (x86-64 and arm64 alike). */
#define SAMPLE_KERNEL_HALF 0x8000000000000000ull

/* One sample. */
struct sample_record {
	uint32_t pid, tid;		/* process and thread */
	uint64_t ip;			/* instruction address */
	uint64_t addr;			/* data address (PERF_SAMPLE_ADDR): the faulting address of a page
					 * fault; 0 for events that give none */
	uint64_t time_ns;		/* CLOCK_MONOTONIC, comparable with clock_gettime() */
	uint64_t data_src;		/* PERF_SAMPLE_DATA_SRC (union perf_mem_data_src); 0 when not asked for */
	int32_t cpu;			/* PERF_SAMPLE_CPU; -1 when not asked for */
	uint64_t regs[SAMPLE_MAX_REGS];	/* the user registers of sample_options.regs_user, lowest bit first */
	unsigned n_regs;		/* how many came (0: none asked for, or a kernel thread's sample) */
	uint64_t count;			/* its event's count when taken (sample_options.read_count); 0 without */
	bool counted;			/* count came with the sample */
	uint64_t period;		/* the CPU time (ns) a cpu-clock sample of tlbprof run stands for: counted
					 * (since its event's sample before) or as its thread's event was set
					 * (watch_clock_periods()); 0 elsewhere */
	bool spread;			/* a copy standing for CPU time before a slower-rate sample
					 * (watch_clock_resample()): its time is a guess within that period */
};

/* A mapping record (PERF_RECORD_MMAP2, or PERF_RECORD_MMAP from old kernels). */
struct sample_mmap {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;	/* [start, start + len) maps the file from byte pgoff */
	uint32_t major, minor;		/* device (0:0 when unknown) */
	uint64_t inode;
	uint32_t prot, flags;		/* PROT_* and MAP_* (0 from an old MMAP record) */
	uint64_t time_ns;		/* CLOCK_MONOTONIC */
	bool executable;		/* PROT_EXEC (old records: not marked as data) */
	const char *filename;		/* path, "//anon", "[heap]", ...; valid during the callback only */
};

enum sample_task_kind {
	SAMPLE_TASK_FORK,		/* pid/tid created by ppid/ptid (a thread when pid == ppid) */
	SAMPLE_TASK_EXIT,
	SAMPLE_TASK_EXEC,		/* pid execs comm: its address space is new */
	SAMPLE_TASK_SWITCH_OUT,		/* tid left its CPU (sample_options.context_switch) */
	SAMPLE_TASK_SWITCH_IN,		/* tid came back onto a CPU */
};

struct sample_task {
	enum sample_task_kind kind;
	uint32_t pid, ppid, tid, ptid;	/* ppid and ptid for FORK and EXIT only */
	uint64_t time_ns;		/* CLOCK_MONOTONIC */
	const char *comm;		/* EXEC: the new command name; valid during the callback only */
	bool preempted;			/* SWITCH_OUT: it was preempted (still runnable), not blocked */
	int32_t cpu;			/* the CPU (SWITCH_OUT: it left; SWITCH_IN: it came to); -1 when unknown */
};

/*
 * Where drained records go. Every hook is optional. A hook that returns
 * non-zero (a -errno) stops the drain, which returns that value; the record
 * counts as consumed.
 */
struct sample_sink {
	int (*sample)(void *ctx, const struct sample_record *r);
	int (*mmap)(void *ctx, const struct sample_mmap *m);
	int (*task)(void *ctx, const struct sample_task *t);
	void *ctx;
};

struct sample_session;
struct perf_event_attr;

/*
 * The attributes sample_open() opens with, for opts (NULL: page faults), and
 * info's event, source, type, config, periods, sample_type, clock and
 * exclusions as they follow from them. Pure. Every sample records IP, TID,
 * TIME and ADDR; a hardware or IBS event also DATA_SRC (the TLB level of the
 * access). A precise hardware event has no use_clockid: the kernel allows
 * large PEBS (many records per interrupt) only when sample_type lies within
 * the PEBS record's fields (intel_pmu_large_pebs_flags), and with use_clockid
 * TIME does not, since the PEBS record's TSC converts to the perf clock only;
 * its times are converted to CLOCK_MONOTONIC after the fact
 * (sample_perf_time_from_tsc). The event's own user-only encoding is kept.
 */
void sample_attr_build(struct perf_event_attr *attr, const struct sample_options *opts, struct sample_info *info);

/* The first period of source (see SAMPLE_TARGET_HZ): 1 for page faults, a prime for a PMU event, a multiple of 16
 * for IBS (its counter ignores the low 4 bits). */
uint64_t sample_period_initial(enum sample_source source);
/* The period after throttling: twice period, the next prime (PMU) or multiple of 16 (IBS), at most
 * SAMPLE_MAX_PERIOD; page faults keep period. */
uint64_t sample_period_raise(enum sample_source source, uint64_t period);

/*
 * The kernel's perf clock at TSC value tsc, as the perf_event_mmap_page's
 * time_zero, time_mult and time_shift define it (cap_user_time_zero):
 * time_zero + (tsc >> shift) * mult + (((tsc & (2^shift - 1)) * mult) >> shift). Pure.
 */
uint64_t sample_perf_time_from_tsc(uint64_t tsc, uint64_t time_zero, uint32_t time_mult, uint16_t time_shift);

/* A sample's dTLB level, from PERF_SAMPLE_DATA_SRC's mem_dtlb bits (PERF_MEM_TLB_*, shifted by 26). */
enum sample_tlb_level {
	SAMPLE_TLB_NA,			/* not available (0, PERF_MEM_TLB_NA, or HIT without a level) */
	SAMPLE_TLB_L1_HIT,		/* HIT | L1: the first-level dTLB (AMD IBS) */
	SAMPLE_TLB_L2_HIT,		/* HIT | L2: missed the L1 dTLB, hit the second level (AMD IBS) */
	SAMPLE_TLB_L1_OR_L2_HIT,	/* HIT | L1 | L2: no STLB miss, either level (Intel PEBS) */
	SAMPLE_TLB_WALK,		/* MISS (the last level named missed) or WK: the page walker served it */
	SAMPLE_TLB_OS_FAULT,		/* OS: the OS fault handler served it (a software-managed TLB) */
	SAMPLE_TLB_LEVELS
};
enum sample_tlb_level sample_tlb_level(uint64_t data_src);
/* "not_available", "l1_hit", "l2_hit", "l1_or_l2_hit", "walk", "os_fault"; NULL out of range. */
const char *sample_tlb_level_name(enum sample_tlb_level level);
/* Whether an IBS op sample with this data source is a dTLB miss to keep: an L2 dTLB hit, a walk or an OS fault. */
bool sample_ibs_op_is_miss(uint64_t data_src);

/* AMD IBS op sampling as this machine's kernel offers it (sample_ibs_op_event). */
struct sample_ibs_op {
	uint32_t type;			/* ROOT/bus/event_source/devices/ibs_op/type */
	uint64_t config, config2;
	bool cnt_ctl;			/* format/cnt_ctl: the period counts dispatched ops, not cycles */
	bool swfilt;			/* format/swfilt (Linux 6.14): the kernel filters the kernel side out in
					 * software; without it IBS refuses exclude_kernel */
	bool data_addr;			/* Linux 6.1 or later: the kernel fills PERF_SAMPLE_ADDR (IbsDcLinAd) and
					 * DATA_SRC (IbsOpData3's dTLB bits) */
	char note[256];			/* what this IBS cannot do, for info.note ("" when nothing) */
};

/* Linux major.minor of release ("6.1.0-18-amd64"; NULL: this kernel's, uname's) at least want_major.want_minor. */
bool sample_release_at_least(const char *release, long want_major, long want_minor);

/*
 * AMD IBS op sampling: the ibs_op PMU's type from
 * SYSFS_ROOT/bus/event_source/devices/ibs_op/type (sysfs_root NULL: "/sys"),
 * config with the format fields the kernel documents there (cnt_ctl
 * "config:19", swfilt "config2:0", bits as the files say), and whether
 * kernel_release ("6.1.0-18-amd64"; NULL: uname's) fills data addresses.
 * Reads files only. Returns 0, -ENOENT (no IBS op PMU: why says so) or
 * another -errno with why.
 */
int sample_ibs_op_event(const char *sysfs_root, const char *kernel_release, struct sample_ibs_op *out, char *why,
			size_t why_len);

/*
 * Open sampling on pid (a process, with its threads and the children it
 * creates after the open: inherit; 0 is the caller, negative is -EINVAL). The kernel refuses to mmap an inherited
 * event that follows a task across CPUs (cpu -1), so, as perf record does,
 * there is one event per online CPU for that pid, each with its own ring;
 * inherited children write into the ring of the CPU they run on. The event
 * records IP, TID, TIME and ADDR; the mapping (MMAP2, data mappings too),
 * COMM (exec) and FORK/EXIT records a symbolizer needs carry a time too
 * (sample_id_all), on CLOCK_MONOTONIC. Kernel side is tried first; when
 * perf_event_paranoid refuses it (EACCES/EPERM) the open is retried
 * user-side only and info.note says so. Returns 0 and *out, or -errno with
 * reason (size reason_size) saying why in one line, naming the event and the
 * errno ("Permission denied (perf_event_paranoid=3...)", "No such file or
 * directory (the event is not supported here...)"). The caller owns *out:
 * sample_close() it.
 */
int sample_open(struct sample_session **out, pid_t pid, const struct sample_options *opts, char *reason,
		size_t reason_size);


/*
 * A file descriptor to poll() for POLLIN (an epoll set of the rings): ready
 * when a ring is a quarter full (attr.watermark), so draining then keeps the
 * rings from overflowing unless the target outruns the reader. -1 for a
 * session made by sample_session_over_rings().
 */
int sample_poll_fd(const struct sample_session *s);

/*
 * Empty the rings (their space is free again at once) and hand the records
 * to sink in time order across CPUs. Records younger than SAMPLE_HOLDBACK_NS
 * are kept for the next drain, because an older one may still be arriving
 * in another CPU's ring; final hands over everything (the target has exited
 * or sampling is disabled). Call it repeatedly while the target runs and
 * once with final after it exited (the rings outlive the target). Records
 * that wrap around a ring's end are reassembled. Returns 0, a hook's
 * non-zero value (the records not yet handed over stay for the next drain),
 * -ENOMEM, or -EIO when a ring holds a record that cannot be walked (the
 * rest of that ring is dropped and counted in bad_records).
 */
int sample_drain(struct sample_session *s, const struct sample_sink *sink, bool final);

/* What the session was opened with and has read (counts so far). */
void sample_info_get(const struct sample_session *s, struct sample_info *out);
/* A new sampling period for every event of s (PERF_EVENT_IOC_PERIOD). Returns 0 or -errno (the first failure). */
int sample_set_period(struct sample_session *s, uint64_t period);

/* Stop sampling, unmap the rings, close the events. NULL is allowed. */
void sample_close(struct sample_session *s);

/*
 * A session without events over rings the caller made (tests feed it
 * records that wrap, or arrive out of order across rings): metas[i] is a
 * struct perf_event_mmap_page, datas[i] its data area of data_size bytes (a
 * power of two). Records must carry sample_id_all's {pid, tid, time}
 * trailer. The rings stay the caller's. NULL when out of memory.
 */
struct sample_session *sample_session_over_rings(void *const *metas, unsigned char *const *datas, size_t n,
						 size_t data_size);

/* A growing array of samples (zero-initialised is empty). */
struct sample_list {
	struct sample_record *items;
	size_t count, capacity;
};

/* Append r. Returns 0 or -ENOMEM. */
int sample_list_append(struct sample_list *list, const struct sample_record *r);
/* Free the items; the list is empty again. */
void sample_list_free(struct sample_list *list);
/*
 * Keep every other block of `block` samples of list (the 1st, 3rd, ...), in
 * order: half of them, each run of consecutive samples within a block kept
 * whole. Pure.
 */
void sample_list_decimate(struct sample_list *list, size_t block);

/*
 * The most samples a collector with a cap keeps (25 MiB of records), and the
 * blocks it keeps them in. Past the cap it keeps one block of
 * SAMPLE_KEEP_BLOCK consecutive samples in 2, then in 4, and so on: each kept
 * sample then stands for one_in, and a run of consecutive faults (a loop's
 * ascending pages, a read fault and the write after it) stays whole in its
 * block. Every page fault is a sample: 4 GiB first-touched on 4 KiB pages is
 * a million of them, which held 259 MB of tlbprof's memory, and a database's
 * 100 GiB buffer pool would have held 6 GB beside the benchmark.
 */
#define SAMPLE_KEEP_MAX (1u << 18)
#define SAMPLE_KEEP_BLOCK 256u

/*
 * A ready sink: samples are appended to list; mapping records are added to
 * syms and fork/exec records applied to it (syms may be NULL). Both are the
 * caller's; they must outlive the drains. With cap (a multiple of
 * 2 * SAMPLE_KEEP_BLOCK; 0: none), at most cap samples are kept, as above.
 */
struct sample_collector {
	struct sample_list *list;
	struct symbols *syms;
	size_t cap;
	uint64_t seen;		/* samples handed to it */
	uint64_t one_in;	/* each kept sample stands for this many: read it with sample_collector_one_in() */
};

/* What each sample c kept stands for: 1 until its cap was reached, then 2, 4, ... */
uint64_t sample_collector_one_in(const struct sample_collector *c);

void sample_collector_sink(struct sample_collector *c, struct sample_sink *sink);

/* A function that samples hit, with its count and share of all samples. */
struct sample_function_count {
	char *object;			/* mapping path, "[anon]", "[kernel]" or "[unknown]" */
	char *function;			/* symbol name or "[unknown]" */
	uint64_t count;
	double share;			/* count / samples */
	uint64_t walks;			/* of count, samples whose data source says the page walker served them */
	/*
	 * Its hottest instruction's source line, "FILE:LINE" from DWARF, and
	 * where inlined, " (inlined into FN at FILE:LINE)"; NULL without line
	 * information (no -g, a stripped object without its debug file).
	 */
	char *source;
};

/* A data region samples hit. */
struct sample_region_count {
	char *name;			/* "[heap]", "[stack]", "[anon]", a file's path, "[unknown]" */
	uint64_t start, end;		/* the mapping (0, 0 for "[unknown]") */
	bool anonymous;
	uint64_t count;
	double share;
	uint64_t walks;			/* as for functions */
};

struct sample_summary {
	uint64_t samples;		/* samples summarised (all handed over, where a capped collector kept some) */
	uint64_t kept_one_in;		/* each sample summarised stood for this many (sample_summary_scale()) */
	uint64_t lost;			/* records lost, as given */
	uint64_t unresolved_ip;		/* samples whose instruction address has no function */
	uint64_t unresolved_addr;	/* samples whose data address is 0 or in no known mapping */
	uint64_t tlb_levels[SAMPLE_TLB_LEVELS];	/* samples by sample_tlb_level() of their data source */
	size_t distinct_functions, distinct_regions;
	struct sample_function_count *functions;	/* the top n_functions, most samples first */
	size_t n_functions;
	struct sample_region_count *regions;		/* the top n_regions, most samples first */
	size_t n_regions;
};

/*
 * Summarise samples: resolve every instruction address and classify every
 * data address with syms, then the top_n functions (object + function) and
 * the top_n data regions (mapping name + start) by count, ties by name then
 * start, with their share of all samples, and the totals. No output; syms
 * may read ELF files on first use. Returns 0 or -ENOMEM (out is then empty).
 * Free out with sample_summary_free().
 */
int sample_summarize(const struct sample_record *samples, size_t n, uint64_t lost, struct symbols *syms,
		     size_t top_n, struct sample_summary *out);
void sample_summary_free(struct sample_summary *summary);
/*
 * The counts of a summary of a capped collector's kept samples as counts of
 * all (c->seen of them, each kept one standing for c->one_in): shares stay.
 */
void sample_summary_scale(struct sample_summary *summary, const struct sample_collector *c);

/* ---- watching an unmarked command (tlbprof run): what its samples and its /proc files showed ---------------- */

/*
 * The cpu-clock event tlbprof run samples the command with: the kernel's
 * hrtimer-driven software clock (no PMU), one sample every
 * SAMPLE_CPU_CLOCK_PERIOD_NS of CPU time per thread, as perf record -F 4000
 * would take, for the first SAMPLE_CPU_CLOCK_FAST_NS of the command; then
 * every SAMPLE_CPU_CLOCK_SLOW_PERIOD_NS (100 Hz, the rate gperftools,
 * async-profiler and py-spy sample at by default). Each sample is a timer
 * interrupt, which in a KVM guest is an exit and, for a loop that misses the
 * TLB, a refill: about 26 us of a 32 MiB chase per sample here (4 kHz
 * throughout: +10 %), so 250 Hz took 0.65 % of every second and 100 Hz takes
 * 0.26 %. The samples are brought to one
 * rate afterwards, the early ones thinned (a long command) or the slow ones
 * spread (a short one), so that every sample kept stands for the same CPU
 * time (sample_profile.clock_period_ns).
 */
#define SAMPLE_CPU_CLOCK_PERIOD_NS 250000ull
#define SAMPLE_CPU_CLOCK_SLOW_PERIOD_NS 10000000ull
#define SAMPLE_CPU_CLOCK_FAST_NS 100000000ull
/* Regions smaller than this are not watched: a benchmark's working set is megabytes, its libraries' data is not. */
#define SAMPLE_WATCH_MIN_REGION_BYTES (1ull << 20)
#define SAMPLE_WATCH_MAX_REGIONS 8	/* the largest regions, by size */
#define SAMPLE_WATCH_MAX_POINTS 24	/* Rss over time, per region: evenly thinned when there are more polls */
#define SAMPLE_WATCH_MAX_EXECS 4	/* the images the command's process exec'd, in order */

/* A region's Rss at one poll. */
struct sample_watch_point {
	uint64_t t_ns;			/* CLOCK_MONOTONIC */
	uint64_t rss_bytes, anon_huge_bytes;
};

/* A big mapping of the command, as /proc/PID/smaps showed it over the run. */
struct sample_watch_region {
	uint32_t pid;			/* the process it is in (the command's, or one it started) */
	uint64_t start, end;
	char name[160];			/* a file's path, "[heap]", "[stack]", "" for anonymous memory */
	bool anonymous;
	bool vm_hg, vm_nh;		/* VmFlags hg (MADV_HUGEPAGE) and nh (MADV_NOHUGEPAGE), at any poll */
	uint64_t kernel_page_bytes;	/* KernelPageSize: > 4096 for hugetlb */
	uint64_t rss_max, anon_huge_max, hugetlb_max;	/* the largest values seen */
	uint64_t first_seen_ns;		/* the first poll that showed it */
	int64_t resident_ns;		/* the first poll at which Rss reached half of rss_max (-1: never resident) */
	size_t n_points;
	struct sample_watch_point points[SAMPLE_WATCH_MAX_POINTS];
	uint64_t faults;		/* page-fault samples whose address fell in it */
	uint64_t fault_pages;		/* distinct pages among them */
};

/* How the fault samples on the most faulted big region were laid out (sample_profile.faults). */
struct sample_fault_pattern {
	uint64_t faults;		/* fault samples on the region */
	uint64_t pages;			/* distinct 4 KiB pages faulted */
	double faults_per_page;
	uint64_t in_hot_loop;		/* of faults, those whose IP lies in the hot loop (sample_profile.hot) */
	uint64_t in_hot_function;	/* of faults, those whose IP lies in the hot function */
	char function[160];		/* the function most of its faults came from ("OBJECT:FUNCTION") */
	uint64_t function_faults;
	/* Over the first touches taken in the hot loop, in time order per thread: */
	uint64_t steps;			/* consecutive pairs of first touches */
	uint64_t steps_next_page;	/* of steps, to the next page (+1): an ascending sequential scan */
	int64_t step_mode_pages;	/* the most common step, in pages */
	uint64_t step_mode_count;
	uint64_t loop_touches;		/* first touches in the hot loop (the in-page offsets below are of these) */
	uint64_t offset_mode;		/* the most common in-page offset, to its 64-byte line */
	uint64_t offset_mode_count;
	unsigned distinct_lines;	/* distinct 64-byte line offsets among them (of 64) */
	/*
	 * Of loop_touches, those a scan explains (watch_touch_pattern()): at the
	 * first line of a page whose page below the thread first touched among its
	 * last WATCH_SCAN_STREAMS first touches, or at the last line of one whose
	 * page above it did. A scan meets every page there, whether it reads one
	 * line of it or all of them.
	 */
	uint64_t scan_touches;
	bool scan_known;		/* false: a report written before scan_touches */
	struct sample_touch_offsets {	/* the in-page offsets of the others (loop_touches - scan_touches) */
		uint64_t touches, mode, mode_count;
		unsigned distinct_lines;
	} other;
	/*
	 * The hot function's cpu-clock weight in the hot thread's process (in
	 * fast-rate periods), and its part between the hot loop's first and last
	 * fault on the region: a loop that ran only while it faulted made one
	 * pass over fresh memory, as an initialisation does. weight_known: false
	 * in a report from before them.
	 */
	uint64_t hot_weight, hot_weight_faulting;
	bool weight_known;
};

/* A function of the cpu-clock profile. */
struct sample_hot_function {
	char object[160], function[96];
	uint64_t count;
	double share;			/* of all cpu-clock samples */
};

/*
 * The hot loop's machine code, decoded (target/code.c): the marks an
 * unoptimised build leaves, for when the ELF records no optimisation level.
 */
/* Bytes read past the loop's end, where the file has them, for its jump back. */
#define SAMPLE_CODE_LATCH_BYTES 256u
/* Loop bodies longer than this (an interpreter's dispatch loop) are not followed. */
#define SAMPLE_CODE_MAX_BODY 4096u
struct sample_code {
	bool decoded;			/* the loop's bytes were read from the executable and decoded */
	char error[160];		/* why not ("" when decoded) */
	uint64_t function_start;	/* the hot function and loop, in the executable's own (ELF) addresses */
	uint64_t loop_start, loop_end;	/* [loop_start, loop_end) */
	bool frame_pointer;		/* the function opens with push rbp; mov rbp, rsp (after an endbr64) */
	unsigned instructions;		/* decoded in the loop */
	unsigned stack_accesses;	/* of those, loads and stores of a stack slot ([rbp-k] behind a frame
					 * pointer, [rsp+k]); lea is no access */
	unsigned slots;			/* distinct stack slots the loop touches */
	unsigned reloaded_slots;	/* slots the loop both stores and loads: variables kept in memory */
	unsigned tsc_reads;		/* rdtsc and rdtscp from the function's start to the loop's end: the time
					 * stamp counter read directly, which no uprobe sees */
	uint64_t tsc_read_at;		/* the first of them, in ELF addresses (0: none) */
	uint64_t loop_head;		/* the nearest target before loop_start of a jump in the loop (0: none),
					 * in ELF addresses: not in the report */
	/*
	 * What its loads wait on (code_loads()): the loop's body is the code
	 * from the target of its jump back to that jump; a load is chained
	 * when its address comes from a load of an earlier pass (p = *p,
	 * i = next[i]), so each waits for the one before, as a latency
	 * benchmark's must; independent loads overlap.
	 */
	bool body_recorded;		/* the load analysis ran (false: a report written before it) */
	uint64_t body_start, body_end;	/* [body_start, body_end), ELF addresses; 0, 0: no jump back found */
	unsigned body_instructions;
	bool body_followed;		/* false: longer than SAMPLE_CODE_MAX_BODY instructions, not followed */
	unsigned loads;			/* memory reads in the body other than the loop's own variables (stack
					 * slots and cells at fixed addresses); prefetches are no load */
	unsigned chained_loads;		/* of those, the ones whose address comes from an earlier pass's load */
	unsigned stores;		/* memory writes in the body other than to the loop's own variables */
	uint64_t chained_at;		/* the first chained load (0: none) */
	unsigned calls;			/* calls in the body: code whose loads are not followed */
	uint64_t call_at;		/* the first of them (0: none) */
};

/* The libc clock functions tlbprof run traces with uprobes (target/clocks.c). */
enum sample_clock_fn {
	SAMPLE_CLOCK_GETTIME,		/* clock_gettime(clockid, ts): the clock id is its first argument */
	SAMPLE_CLOCK_GETTIMEOFDAY,
	SAMPLE_CLOCK_TIME,
	SAMPLE_CLOCK_CLOCK,		/* clock(): CLOCK_PROCESS_CPUTIME_ID */
	SAMPLE_CLOCK_TIMES,		/* times(): CLK_TCK ticks */
	SAMPLE_CLOCK_FNS
};

/* Clock ids told apart (CLOCK_REALTIME 0 .. CLOCK_BOOTTIME 7); others count as SAMPLE_CLOCK_IDS - 1. */
#define SAMPLE_CLOCK_IDS 9

/* One traced clock function. */
struct sample_clock_function {
	bool traced;			/* a uprobe was attached */
	char why[160];			/* why not (an IFUNC resolved to the vDSO, no symbol, the open's error) */
	uint64_t calls;			/* calls seen (until stopped) */
	uint64_t lost;			/* records the ring dropped */
	bool stopped;			/* tracing stopped after SAMPLE_CLOCK_BUDGET calls, to bound its cost */
	uint64_t stopped_ms;		/* when, since the start */
};

/* What the uprobes on the command's libc clock functions saw (tlbprof run). */
struct sample_clocks {
	bool traced;			/* at least one function was traced */
	char why[200];			/* why nothing or not everything was ("" when all were) */
	char libc[160];			/* the file probed: tlbprof's libc, or the command itself if linked statically */
	bool libc_mapped;		/* the command mapped that file (false: another libc, a static program behind a
					 * wrapper) */
	struct sample_clock_function fn[SAMPLE_CLOCK_FNS];
	/*
	 * A uprobe traps every thread of a process whose address space holds it, traced or not, so the probes
	 * follow the threads of the command's processes as they start, SAMPLE_CLOCK_THREADS alive at once and
	 * SAMPLE_CLOCK_FOLLOWED in all; one more stops tracing for all (threads_capped, at threads_capped_ms
	 * since the start). pid: the command's own, whose first thread is traced from its exec.
	 */
	uint32_t pid;			/* the process whose threads were traced (0: none) */
	unsigned threads;		/* its threads traced, the first included */
	bool threads_capped;
	uint64_t threads_capped_ms;
	bool hot_traced;		/* the hot thread was among the threads traced */
	/*
	 * The hot thread's cpu-clock samples before its probes opened (0 for the first thread, traced from its
	 * exec): a thread followed after it started may have read the clock unseen, so its first read seen is
	 * not known to be its first.
	 */
	uint64_t hot_samples_untraced;
	uint64_t id_calls[SAMPLE_CLOCK_IDS];	/* clock_gettime calls by clock id, of the hot thread */
	uint64_t id_resolution_ns[SAMPLE_CLOCK_IDS];	/* clock_getres() here; 0 for an id not seen */
	/* the hot thread's reads, all functions merged in time order, and the windows between them */
	uint64_t hot_reads;
	uint64_t windows;		/* intervals between consecutive reads */
	uint64_t window_min_ns, window_median_ns, window_max_ns;	/* min: about the probe's own trap */
	uint64_t window_p90_ns;		/* the 90th percentile: the long windows, a preempted one or two aside */
	/*
	 * The hot thread's page faults inside its clock calls that fell in its windows (a process's first read faults
	 * in the vDSO's data pages, its first probe hit maps the single-step page), and the time from those windows'
	 * reads to the last such fault, taken out of them: the read's own cost, which the benchmark's clock, read at
	 * the call's end, never sees (struct clocks_own).
	 */
	uint64_t window_call_faults, window_call_ns;
	/*
	 * Each window's time beyond the tenth percentile of the SAMPLE_CLOCK_FLOOR_WINDOWS around it (the probes' traps
	 * as they cost at that moment, which moves with the host), at the upper quartile: what the windows time
	 * besides the traps. A read around every access leaves next to nothing in every window; timing a loop
	 * between two reads leaves its loop in half the windows or more.
	 */
	uint64_t window_work_p75_ns;
	/*
	 * From the hot thread's context switches (PERF_RECORD_SWITCH), exact where the cpu-clock samples are a
	 * count every 250 us whose times can part from the probes' by a millisecond: its time on a CPU in the
	 * longest window (less the spells it was switched out) and in all its windows end to end.
	 */
	bool switches_known;		/* the switches were recorded, none lost */
	uint64_t window_max_on_cpu_ns, span_on_cpu_ns;
	double reads_per_s;		/* over the hot thread's first to last read */
	uint64_t coarsest_ns;		/* the coarsest resolution among the clocks the hot thread read */
	int coarsest_id;		/* its clock id (-1: a function without one: time(), times()) */
	int coarsest_fn;		/* enum sample_clock_fn */
	/* What happened between the hot thread's first and last read (its windows, end to end): */
	uint64_t first_read_ns, last_read_ns;	/* CLOCK_MONOTONIC, as the samples' time */
	uint64_t span_ns;		/* last_read_ns - first_read_ns */
	uint64_t hot_samples;		/* the hot thread's cpu-clock samples, in all */
	uint64_t hot_samples_in_span;	/* of those, between its first and last read: the timed CPU time */
	uint64_t hot_kernel_in_span;	/* of those, in the kernel: its faults, and the probes' traps around each read */
	/*
	 * The cpu-clock samples of the hot thread's process's other threads between its first and last read: the
	 * CPU time that CLOCK_PROCESS_CPUTIME_ID (clock()) adds to its own there (others_known: recorded).
	 */
	bool others_known;
	uint64_t others_in_span;
	/*
	 * The span ended before the cpu-clock sampler slowed to 100 Hz, the samples were kept at 4 kHz, and none was
	 * lost or throttled away: one every 250 us the thread ran, none a spread copy, so their count in the span
	 * measures its time there.
	 */
	bool span_fast_rate;
	uint64_t region_faults;		/* the page faults of the hot thread's process on the fault region (its
					 * other threads' too: a parallel loop's workers), in all */
	uint64_t region_faults_in_span;	/* of those, between its first and last read */
	/*
	 * The windows the hot loop ran in: those holding a cpu-clock sample of the hot thread in the hot function,
	 * or a page fault it took there. A program that reads the clock besides timing its loop (an interpreter
	 * starting up, a log line) has windows around its other work too, and a fault in one is not timed.
	 */
	bool measured_known;		/* worked out (reports before it was recorded: not) */
	uint64_t measured_windows;	/* of windows */
	uint64_t measured_window_median_ns;	/* the length of the one holding the loop's median sample (by
						 * weight): whole loops, or a read around each access */
	uint64_t region_faults_measured;	/* of region_faults, inside those windows: timed faults */
	/*
	 * Of measured_windows, those that held a timed fault: one of ten (a read at the program's start, before
	 * its memset and warm-up, for a total it prints) is not a timed loop's first touch the way every one is.
	 */
	bool faulted_known;		/* worked out (reports before it was recorded: not) */
	uint64_t measured_windows_faulted;
	/*
	 * A timer's start/stop pairs (target/clocks.h, clocks_pairs()): a harness that times each run between two reads
	 * of a clock and sets up between a run's stop and the next start (Google Benchmark's loop, its PauseTiming()
	 * and ResumeTiming()) leaves its setup in windows no timer measures, which are not windows the hot loop ran
	 * in (gap_windows), whatever the hot function did there; the region's faults in them (region_faults_in_gaps)
	 * are untimed. The clock with the most reads of those read in pairs (paired_fn, enum sample_clock_fn, -1:
	 * none; paired_id, -1: none) and its reads; of the hot function's weight in its pairs and gaps, the gaps'
	 * share, and of that, the share that ran the pairs' code: the evidence that its reads start and stop a timer.
	 */
	bool pairs_known;		/* worked out (reports before it was recorded: not) */
	int paired_fn, paired_id;
	uint64_t paired_reads, gap_windows, region_faults_in_gaps;
	double gap_weight_share, gap_code_overlap;
	/*
	 * The clock's pairs hold none of the hot code's weight and nothing but their own reads, with the hot code in the
	 * gaps (CLOCKS_PAIRS_EMPTY_NS): it times nothing, its loop deleted; pair_work_p75_ns, the upper quartile of the
	 * time a pair's longest window held beyond its least (a window of the reads' own cost). A report from before it
	 * was recorded: not empty.
	 */
	bool pairs_empty;
	uint64_t pair_work_p75_ns;
	/*
	 * The reads of a clock read alone at each start and stop whose pairs hold nothing but a read (three in four or
	 * more; none of the hot code's cpu-clock samples in any), with a gap longer than a bare pair may be (0: none; reports before
	 * it was recorded: 0): a timer around a deleted loop, its setup between runs, reads so, and so do a total's reads
	 * around back-to-back reps. Without a second clock at each start and stop, no window measures a read's own cost
	 * inside a pair, so which it is cannot be told.
	 */
	uint64_t bare_reads;
	/*
	 * Where the hot thread was while those windows ran, from the context switches of every task of the command
	 * (waits_known: recorded, none lost): the windows end to end (measured_span_ns), and in them its time off a
	 * CPU while runnable (preempted: waiting for a CPU), of that the time another task of the command ran on the
	 * CPU it left (preempted_own: its own threads or processes took its turn; where the switches carry no CPU,
	 * the time as many of them ran as it may use CPUs, command_cpus), its time blocked (asleep: I/O, a
	 * timer, a lock, a pipe, its workers), and of that the time no other task of the command was on a CPU or
	 * preempted from one (idle: the whole command waited, on a sleep, a disk or another program; a task woken
	 * and waiting for its turn is not seen as waiting for a CPU, so on a busy machine idle holds that too).
	 */
	bool waits_known;
	unsigned command_cpus;
	uint64_t measured_span_ns, measured_preempted_ns, measured_preempted_own_ns, measured_blocked_ns,
		measured_idle_ns;
	/*
	 * The cpu-clock samples of the hot thread's process in the hot function (any thread; a slow-rate one
	 * weighing what it stands for), and of them those between the hot thread's first and last read: a thread
	 * that starts workers and joins them between two reads times their loop, which it runs none of.
	 */
	uint64_t loop_weight, loop_weight_in_span;
	bool cpus_known;		/* the cpu-clock samples said their CPU */
	uint64_t cpu_moves;		/* samples of a thread of the hot thread's process on another CPU than that
					 * thread's sample before, in all (the hot thread's own, before) */
	uint64_t cpu_moves_in_span;	/* of those, both samples between the hot thread's first and last read:
					 * timed moves */
};

/* "clock_gettime", "gettimeofday", "time", "clock", "times"; "?" out of range. */
const char *sample_clock_fn_name(int fn);
/* "CLOCK_MONOTONIC" for 1, ... "CLOCK_BOOTTIME" for 7, "other" for SAMPLE_CLOCK_IDS - 1, "none" for -1. */
const char *sample_clock_id_name(int id);

/* Calls of one clock function traced before its uprobe is closed: each costs a trap (about a microsecond). */
#define SAMPLE_CLOCK_BUDGET 5000u
/*
 * Threads of the command's process traced, the first included: each costs an event per clock function, and
 * closing one waits for the kernel to unregister it (60-100 ms here, one after the other).
 */
#define SAMPLE_CLOCK_THREADS 4u
/* Threads followed in all, those that ended included (their probes are closed at the end, each a grace period). */
#define SAMPLE_CLOCK_FOLLOWED 8u
/* The neighbourhood whose shortest window is a window's trap cost (window_work_p75_ns): a millisecond or so. */
#define SAMPLE_CLOCK_FLOOR_WINDOWS 64

/* What watching an unmarked command found (tlbprof run). Plain data: the judge reads it. */
struct sample_profile {
	/* cpu-clock samples */
	bool clock_sampled;		/* the cpu-clock event opened */
	char clock_error[256];		/* why not */
	bool clock_user_only;		/* perf_event_paranoid kept the kernel side out */
	uint64_t clock_period_ns;	/* the CPU time each sample kept stands for (0: not sampled) */
	uint64_t clock_samples;
	uint64_t clock_lost;		/* cpu-clock records the kernel dropped, its ring full */
	bool clock_counted;		/* each sample's CPU time counted by its event (PERF_SAMPLE_READ); false:
					 * the period its thread's event was set to */
	/*
	 * The command's CPU time as its task-clock counter counted it over the
	 * same run (every thread and child, exec to exit); 0 where it did not
	 * count. The samples times their period should come near it: where they
	 * do not, the profile is not the command's (samples lost, thinned by the
	 * kernel, or weighed wrongly), and the checks that read it say so.
	 */
	uint64_t clock_task_ns;
	uint64_t clock_own, clock_vdso, clock_kernel, clock_libs, clock_unknown;	/* by where the IP was */
	struct sample_hot_function hot[5];	/* most samples first */
	size_t n_hot;
	char hot_exe_function[96];	/* the hottest function of the program's own executable ("": none), or of
					 * hot_library */
	char hot_library[160];		/* "": the hot function is the executable's own; else the shared object
					 * holding it, where the executable's own code had too few samples to
					 * locate a loop (an interpreter built --enable-shared) */
	bool hot_exe_unnamed;		/* no symbol covers it: named by its unwind entry's start (sub_...) */
	bool hot_jit;			/* it is code compiled at run time: hot_library names the anonymous
					 * memory it ran from ("[anon]", a memfd), which no file holds */
	uint64_t hot_exe_count;
	/*
	 * "": none. Else the function of the program's own code that held the most
	 * samples but fewer than hot_exe_function between the hot thread's first and
	 * last clock read (its initialisation, say): the hot function is the timed one.
	 */
	char untimed_function[96];
	uint64_t untimed_count;		/* its samples, in all */
	uint64_t hot_lo, hot_hi;	/* the hot loop: the smallest IP range of that function holding 90 % of
					 * its samples (runtime addresses of hot_tid's process) */
	uint32_t hot_pid, hot_tid;	/* the thread with the most samples in it */
	struct sample_code code;	/* the hot loop's machine code */
	/* page-fault samples */
	bool faults_sampled;
	char faults_error[256];
	uint64_t fault_samples;		/* handed over by the kernel, kept or not */
	uint64_t faults_one_in;		/* each fault sample kept stands for this many (SAMPLE_KEEP_MAX): the
					 * fault counts below are the kept ones times it; 0 or 1: all kept */
	uint64_t faults_lost;		/* page-fault records the kernel dropped, its ring full: the faults seen
					 * are fewer than the faults taken */
	bool has_pattern;
	struct sample_fault_pattern faults;	/* on the big region with the most faults */
	char fault_region[160];
	uint64_t fault_region_start, fault_region_end;
	/* /proc/PID/smaps and status polls */
	unsigned polls;
	double poll_interval_ms;
	double poll_us_median;		/* tlbprof's time per poll */
	size_t n_regions;
	struct sample_watch_region regions[SAMPLE_WATCH_MAX_REGIONS];
	/* the hot thread's affinity (/proc/PID/task/TID/status Cpus_allowed_list), over its cpu-clock samples */
	uint64_t affinity_hot;		/* the hot thread's samples from its first in the hot function on (all without one;
					 * 0 in a report from before the field) */
	uint64_t affinity_samples;	/* of those, the ones with a known mask */
	uint64_t affinity_single;	/* of those, taken while the mask held one CPU */
	unsigned cpus_allowed_first, cpus_allowed_last;	/* CPUs in the hot thread's mask at its first and last poll */
	/* the clock reads, from uprobes on the command's libc */
	struct sample_clocks clocks;
	/* the images exec'd, from the sampler's COMM records (a wrapper: env, taskset, numactl, then the program) */
	size_t n_execs;
	char execs[SAMPLE_WATCH_MAX_EXECS][160];	/* the executable's path after each exec, in order */
	/*
	 * The program: the image the hot thread's process ran last, the command's own or that of a process it
	 * started (a shell, a script, make or GNU time forks the benchmark rather than exec it); "" when no hot
	 * thread was found. processes: how many the watch followed, the command's included.
	 */
	char program[160];
	uint32_t program_pid;
	bool program_watched;		/* its process's smaps and threads were polled */
	unsigned processes;		/* every process the command started, itself included */
	unsigned processes_unwatched;	/* of those, the ones never polled (WATCH_MAX_PROCS live ones were) */
};
