/* SPDX-License-Identifier: MIT */
/* Hardware and software counters: abstract metrics -> events (events/ maps + libpfm4) -> perf_event groups. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The abstract metrics tlbprof knows. The names (metric_name()) are the keys
 * used in the events/ map files and in the report ("metric").
 */
enum metric {
	METRIC_DTLB_LOADS,
	METRIC_DTLB_LOAD_MISSES,
	METRIC_PAGE_FAULTS,
	METRIC_MINOR_FAULTS,
	METRIC_MAJOR_FAULTS,
	METRIC_CYCLES,
	METRIC_INSTRUCTIONS,
	METRIC_LLC_LOAD_MISSES,
	METRIC_WALK_ACTIVE,
	METRIC_WALK_COMPLETED,
	METRIC_STLB_HITS,
	METRIC_TASK_CLOCK,
	METRIC_CONTEXT_SWITCHES,
	METRIC_CPU_MIGRATIONS,
	METRIC_COUNT,
	METRIC_USER = 64,	/* an event the user asked for by name (-e); not one the analysis reads */
};

/* "dtlb_load_misses", ...; NULL for an out-of-range value. */
const char *metric_name(enum metric m);

/*
 * The metrics a measuring run opens: what the analysis reads (cycles, dTLB
 * load misses, page-walk cycles, LLC load misses) and the software events.
 * The hardware ones form one group that fits every PMU in scope, so that
 * they never multiplex and their ratios come from the same time; dTLB
 * loads, instructions, STLB hits and walk_completed (the same event as
 * dtlb_load_misses in every map) are opened only on request.
 */
bool metric_needed(enum metric m);
/* want[] of counter_set_new() for a measuring run: metric_needed() of each. */
void counters_default_want(bool want[METRIC_COUNT]);
/* Inverse of metric_name(); returns -1 when unknown. */
int metric_from_name(const char *name);

enum counter_status {
	COUNTER_OK,
	COUNTER_UNSUPPORTED,	/* no such event on this machine (no PMU, not encodable) */
	COUNTER_DENIED,		/* EACCES/EPERM: perf_event_paranoid or capabilities */
	COUNTER_MULTIPLEXED,	/* counted only part of the time; value is scaled */
	COUNTER_ERROR,		/* anything else; reason says what */
};

/* "ok", "unsupported", "denied", "multiplexed", "error": by value, NULL-terminated (types.h: name_lookup()). */
extern const char *const counter_status_names[];
const char *counter_status_name(enum counter_status s);

/* One event of a set, as resolved and (after open) as opened. */
struct counter_info {
	enum metric metric;
	char name[64];		/* display name, perf-like: "dTLB-load-misses", "page-faults" */
	char event[160];	/* the event string given to libpfm4, e.g. "perf::PERF_COUNT_SW_PAGE_FAULTS" */
	char source[32];	/* which map resolved it: a PMU map name ("skx") or "generic" */
	bool encoded;		/* libpfm4 encoded it: type and config are valid */
	uint32_t type;		/* perf_event_attr.type of the encoding (0 when not encodable) */
	uint64_t config;	/* perf_event_attr.config of the encoding */
	bool hardware;		/* needs a hardware PMU (not a software event) */
	enum counter_status status;
	char reason[256];	/* why not ok (with the errno text), "" when ok; an ok event
				 * may carry a note ("user space only: ...") */
};

/*
 * perf stat's "<not counted>": a hardware event that opened but never got a
 * counter (status error, reason "not counted: ..."), the PMU held by the NMI
 * watchdog or another user: not a missing PMU.
 */
bool counter_not_counted(const struct counter_info *ci);
/* The event counted: it opened and ran (ok, or multiplexed and scaled), so its count means something. */
bool counter_counting(const struct counter_info *ci);

/* One reading: raw value and the kernel's enabled/running times. */
struct counter_reading {
	uint64_t value;		/* raw count as read */
	uint64_t enabled_ns;	/* PERF_FORMAT_TOTAL_TIME_ENABLED */
	uint64_t running_ns;	/* PERF_FORMAT_TOTAL_TIME_RUNNING */
	double scaled;		/* value * enabled / running (== value when not multiplexed) */
};

/*
 * Scale a multiplexed count the way perf stat does: value * enabled / running.
 * Returns value unchanged when running == enabled, 0 when running == 0 (never counted).
 * Sets *multiplexed (if non-NULL) when 0 < running < enabled.
 */
double counter_scale(uint64_t value, uint64_t enabled_ns, uint64_t running_ns, bool *multiplexed);

/*
 * Add the difference end - begin of two readings of one event to acc and
 * rescale acc (hardware: by its summed enabled/running times; a software
 * event never multiplexes, so its value stands). For counts taken as
 * snapshots around a window while the events keep running.
 */
void counter_reading_add_delta(struct counter_reading *acc, const struct counter_reading *begin,
			       const struct counter_reading *end, bool hardware);

struct counter_set;

/* An event to sample with (not to count): its map entry and its perf_event_attr encoding. */
struct counter_sample_event {
	char event[160];	/* the libpfm4 string from the map ("skl::MEM_INST_RETIRED:STLB_MISS_LOADS:precise=2") */
	char source[32];	/* the map it came from */
	uint32_t type;
	uint64_t config, config1, config2;
	unsigned precise_ip;	/* 0..3: 2 or more makes the hardware record the exact load and its address */
	bool exclude_kernel, exclude_hv;	/* as encoded (PFM_PLM3: user space only, where the measured loads are) */
	bool ibs_op;		/* AMD IBS op sampling (sample_ibs_op_event), not a map entry */
	bool no_data_addr;	/* the kernel gives this event no data addresses (IBS op before Linux 6.1) */
	char note[256];		/* what the event cannot see, for the report ("" when nothing) */
};

/*
 * The PMU's precise dTLB-miss load event for sampling ("sample.dtlb_load_misses"
 * in its map file), encoded; where the map has none, AMD IBS op sampling when
 * /sys offers the ibs_op PMU. Returns 0, or -ENOENT (neither, no PMU) /
 * -errno with a one-line reason in why. Opening it is the sampler's
 * business; a machine whose PMU is hidden fails there.
 */
int counter_set_sample_event(const struct counter_set *set, struct counter_sample_event *out, char *why,
			     size_t why_len);

/*
 * Resolve the wanted metrics for this machine (or the PMU forced with
 * LIBPFM_FORCE_PMU) through the map files in events_dir (NULL: the installed
 * directory, see counters_default_events_dir()) and encode them with libpfm4.
 * Metrics that cannot be resolved or encoded stay in the set with status
 * unsupported and a reason; that is not an error.
 * want[m] selects metric m; want == NULL selects all.
 * Returns 0 and a new set in *out (caller owns; counter_set_delete()), or
 * -errno (libpfm4 could not initialise, map file unreadable or malformed);
 * on error, errmsg (if non-NULL) receives a one-line message naming the cause.
 */
int counter_set_new(struct counter_set **out, const char *events_dir, const bool *want,
		    char *errmsg, size_t errmsg_len);
void counter_set_delete(struct counter_set *set);
/*
 * A closed copy of set: the same events, encodings and PMU, so another task
 * can be counted alike (run -p: a set per thread). Free with
 * counter_set_delete(). Returns 0 or -ENOMEM.
 */
int counter_set_clone(const struct counter_set *set, struct counter_set **out);

/* Number of events in the set and the i-th one (pointer owned by the set). */
size_t counter_set_size(const struct counter_set *set);
const struct counter_info *counter_set_info(const struct counter_set *set, size_t i);

/*
 * Add the event the user named (-e/--event, as perf stat's): a libpfm4 name
 * or perf's raw cpu/event=..,umask=../ or rNNNN (pmu/user_events.h), as
 * metric METRIC_USER named as given. One that does not exist here is kept
 * with status unsupported and the reason; 0 then. -EINVAL with why for raw
 * syntax that does not parse, or a name libpfm4 does not know while it has
 * a core PMU to know it by (a typo, not a machine without one). -ENOMEM.
 * A name the set already counts (task-clock, or one given twice) is not
 * added again (0): the report keeps one counter of each name.
 */
int counter_set_add_user(struct counter_set *set, const char *spec, char *why, size_t why_len);

/* The PMU libpfm4 detected as the default hardware PMU ("skx", "amd64_fam19h_zen4"),
 * or "none" when there is only the kernel's software PMU. Owned by the set. */
const char *counter_set_pmu_name(const struct counter_set *set);
const char *counter_set_pmu_desc(const struct counter_set *set);
/* Why that PMU: forced, the kernel's name for it, the identified core, or libpfm4 (pmu/pmu_choose.h). */
const char *counter_set_pmu_basis(const struct counter_set *set);

/*
 * The core the machine layer identified (cores_identify(): "Raptor Cove",
 * "Zen 4"), whether its model number was masked, and the hypervisor ("" on
 * bare metal): a clue for which PMU map to count with, weighed over
 * libpfm4's model-number detection, and for why no PMU is visible. Before
 * counter_set_new(); without it libpfm4 and sysfs decide.
 */
void counters_set_core(const char *core, bool masked, const char *hypervisor);
/* The hypervisor counters_set_core() was told of: "KVM", "" (bare metal), NULL (not told). */
const char *counters_hypervisor(void);

/*
 * Open every encodable event on the calling thread (pid 0, any cpu), disabled,
 * with PERF_FORMAT_TOTAL_TIME_ENABLED|RUNNING, as perf_event groups. Events
 * that fail get their status and errno reason; the rest stay open. Returns the
 * number of events opened (>= 0); it is not an error when that is 0.
 * Calling it on an open set closes and reopens it (statuses start over).
 */
int counter_set_open(struct counter_set *set);
/*
 * The same on process pid (0: the calling thread). inherit: threads and
 * processes pid creates after the open are counted too (reads sum them).
 * enable_on_exec: the events start disabled and the kernel enables them at
 * pid's next execve(), so a forked child that waits before exec is counted
 * from the new program's first instruction. Needs ptrace access to pid.
 */
int counter_set_open_task(struct counter_set *set, pid_t pid, bool inherit, bool enable_on_exec);

/*
 * Per thread (counters_threads.c): ask, before counter_set_open_task() with
 * inherit, for each task the target creates to report its own counts as it
 * exits (inherit_stat, PERF_RECORD_READ into one ring; perf record -s does
 * the same), so that a started command's threads and child processes are
 * told apart. counter_set_threads_drain() empties the ring; call it at least
 * every 100 ms while the target runs (512 KiB hold about 500 exits of a set
 * of seven events), since what overflows is lost and counted.
 */
void counter_set_track_threads(struct counter_set *set, bool on);
int counter_set_threads_drain(struct counter_set *set);

/* One task's own counts, as its exit reported them (or, for the first, the total less every other). */
struct counter_thread {
	uint32_t pid, tid;
	bool first;			/* the task the set was opened on (it reports no exit of its own) */
	bool known;			/* first: every other exit was reported, so the difference is exact */
	struct counter_reading *counts;	/* one per event of the set, as counter_set_read() orders them */
};

struct counter_threads_info {
	uint64_t lost, bad;		/* exit records the kernel dropped, records that did not decode */
	char error[160];		/* why there are no per-thread counts */
};

/*
 * Every task's counts after the target has exited: the first task's (total,
 * as counter_set_read() gave it, less the others), then one per exit in the
 * order they were reported, into *out (caller frees with
 * counter_threads_free()). Returns 0; -EINVAL when not asked for, -ENOTSUP
 * with info->error when the backend or the kernel cannot report exits, or
 * -ENOMEM.
 */
int counter_set_threads(struct counter_set *set, const struct counter_reading *total, struct counter_thread **out,
			size_t *n_out, struct counter_threads_info *info);
void counter_threads_free(struct counter_thread *t, size_t n);
/* Reset to zero / enable / disable all open events (the group leaders). 0 or -errno. */
int counter_set_reset(struct counter_set *set);
int counter_set_enable(struct counter_set *set);
int counter_set_disable(struct counter_set *set);
/*
 * Read every event into out[0..counter_set_size()-1] (events that are not open
 * read as zero). Times are those since the last counter_set_reset() (or open).
 * Updates statuses to multiplexed where 0 < running < enabled, and to error
 * ("not counted") where enabled > 0 but running == 0; both stick until the
 * next open. Returns 0 or -errno.
 */
int counter_set_read(struct counter_set *set, struct counter_reading *out);
/*
 * The group leaders' fds and kernel ids, in the order their answers go into
 * counter_set_read_given(): at most max, into fd[] and id[]. 0 where the set
 * is not the kernel's (the simulated PMU): then no other process can read it.
 */
size_t counter_set_leaders(const struct counter_set *set, int *fd, uint64_t *id, size_t max);
/*
 * counter_set_read() from answers that another process read from the same
 * events (the benchmark's marker, reading its own counters on its own CPU):
 * given[0..words) holds one PERF_FORMAT_GROUP answer per leader, in leader
 * order, each with its group's ids. -EINVAL, and out untouched, unless it
 * decodes so, with no word left over.
 */
int counter_set_read_given(struct counter_set *set, const uint64_t *given, size_t words, struct counter_reading *out);
/* Close all fds (read first: closing a leader detaches its group). Idempotent. */
void counter_set_close(struct counter_set *set);

/*
 * What a phase is, told to the counters' backend before it counts: the
 * kernel ignores it; the simulated PMU (pmu/simpmu.h) derives its counts per
 * access from it, as a core with the model's TLBs would count them.
 */
struct counter_phase_hint {
	uint64_t page_bytes;		/* the page size the region really got */
	uint64_t size_bytes;		/* working set */
	uint64_t stride_bytes;		/* distance between the accesses' slots */
	double core_ghz;		/* the calibrated core clock, 0 unknown */
};
void counter_set_hint_phase(const struct counter_set *set, const struct counter_phase_hint *h);
/* The accesses a timed run made while the events were enabled (before they are disabled). */
void counter_set_hint_accesses(const struct counter_set *set, uint64_t accesses);

/*
 * Count on the simulated PMU spec ("MODEL[,watchdog][,others=N]", see
 * simpmu.h) instead of the kernel's: forces libpfm4 to the model's PMU and
 * switches the backend. For tests and for trying tlbprof's counting path on
 * a machine without a PMU (TLBPROF_SIMULATE_PMU). Only before the first
 * counter_set_new(). 0, or -errno with why.
 */
int counters_simulate(const char *spec, char *why, size_t why_len);

/*
 * Encode for PMU pmu (a libpfm4 PMU name: "skx", "amd64_fam19h_zen4") instead
 * of this machine's: sets LIBPFM_FORCE_PMU, and LIBPFM_ENCODE_INACTIVE so that
 * the generic perf:: events still encode. Only before the first
 * counter_set_new() of the process (libpfm4 reads the environment once).
 * Events of a forced PMU are for looking at, not for opening here.
 * Returns 0 or -errno.
 */
int counters_force_pmu(const char *pmu);

/* Where a binary's map files are: the build's layout (meson's version.h) as data, so the choice is testable. */
struct events_dir_layout {
	const char *build_root;		/* the build directory, canonical; NULL or "": none */
	const char *source_dir;		/* the source tree's events/, for a binary in build_root */
	const char *bindir_rel;		/* bindir relative to the prefix ("bin") */
	const char *events_rel;		/* the installed maps relative to the prefix ("share/tlbprof/events") */
	const char *installed_dir;	/* the configured absolute path of the installed maps */
};

/*
 * The map directory a tlbprof whose canonical path is exe uses when no
 * --events-dir is given, into buf (size bytes; pure, no I/O): l->source_dir
 * when exe lies directly in l->build_root (how the tests run it); else the
 * installed maps relative to exe (PREFIX/bin/tlbprof reads
 * PREFIX/share/tlbprof/events, so a DESTDIR or relocated copy reads its own,
 * also one staged below the build directory); else l->source_dir for a unit
 * test below l->build_root; else l->installed_dir. An
 * installed binary never gets the source tree, even when its datadir is
 * unreadable: reading the maps then fails and says where. exe may be NULL
 * (no /proc). Returns 0, -EINVAL (size 0) or -ENAMETOOLONG.
 */
int counters_events_dir_locate(const struct events_dir_layout *l, const char *exe, char *buf, size_t size);

/* counters_events_dir_locate() for this process and this build; the string lives until exit. */
const char *counters_default_events_dir(void);
