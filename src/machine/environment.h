/* SPDX-License-Identifier: MIT */
/* Facts about the machine a measurement ran on: CPU, caches and TLBs, kernel, THP, hugepage pools, perf, VM. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "machine/cores.h"

#include "machine/cpuid.h"
#include "machine/host.h"

/* One cache level as the OS (sysfs) or CPUID reports it; 0 fields are unknown. */
struct env_cache {
	unsigned level;		/* 1, 2, 3 */
	char type[16];		/* "Data", "Unified" */
	uint64_t size_bytes;
	unsigned ways;
	unsigned line_bytes;
	unsigned sets;
};

/* One hugetlb pool (/sys/kernel/mm/hugepages/hugepages-<kB>kB); a count is -1 when unreadable. */
struct env_hugepool {
	uint64_t page_bytes;
	long nr, free, resv, surplus;
};

/* Capability bits of CapEff (linux/capability.h); CAP_PERFMON exists since Linux 5.8. */
#define ENV_CAP_SYS_ADMIN 21
#define ENV_CAP_PERFMON 38

#define ENV_MAX_CACHES 4
#define ENV_MAX_POOLS 4

/*
 * The first write from user space to each 4 KiB page the kernel had just
 * populated (MADV_POPULATE_WRITE): natively, and under EPT/NPT, a TLB miss,
 * tens to hundreds of ns; where the hypervisor maps pages on their first use
 * (shadow paging: PVM, KVM without EPT/NPT) a trap each, microseconds. From
 * ENV_SHADOW_NS_PER_PAGE a page, tlbprof env's problem and a run's finding
 * shadow_paging say so.
 */
struct env_first_access {
	uint64_t pages;		/* pages written; 0: not measured */
	double ns_per_page;	/* the median 64-page chunk's ns per page, one thread */
};
#define ENV_SHADOW_NS_PER_PAGE 1000.0

struct environment {
	/* CPU */
	char cpu_vendor[16];		/* "GenuineIntel", "AuthenticAMD" */
	char cpu_model_name[80];	/* /proc/cpuinfo "model name" or CPUID brand string */
	unsigned cpu_family, cpu_model, cpu_stepping;
	int logical_cpus;		/* online CPUs */
	char hypervisor[24];		/* "KVM", "VMware", ...; "" on bare metal */
	struct env_first_access first_access;	/* the command's probe (tlbprof env, run, a measurement) */
	struct env_cache caches[ENV_MAX_CACHES];
	size_t n_caches;
	struct env_tlb tlb;
	/* Kernel and memory management */
	char kernel[160];		/* uname sysname release version machine */
	char thp_enabled[24];		/* selected value: "always", "madvise", "never", "" if unreadable */
	char thp_defrag[24];
	struct env_hugepool pools[ENV_MAX_POOLS];
	size_t n_pools;
	int perf_event_paranoid;	/* INT32_MIN when unreadable */
	/* Privileges: root and capabilities decide what perf_event_paranoid still forbids. */
	unsigned euid;
	bool cap_known;			/* cap_effective was read from /proc/self/status */
	uint64_t cap_effective;		/* CapEff bit mask (ENV_CAP_PERFMON, ENV_CAP_SYS_ADMIN) */
	uint64_t steal_ticks;		/* /proc/stat cpu steal (USER_HZ ticks) at collection time */
	/* Frequency scaling, where the kernel exposes it (cpufreq is absent in most VMs). */
	char cpufreq_driver[32];	/* cpu0 scaling_driver, "" when unreadable */
	char cpufreq_governor[32];	/* cpu0 scaling_governor, "" when unreadable */
	int turbo;			/* 1 turbo/boost on, 0 off, -1 unknown */
	long fault_around_bytes;	/* debugfs fault_around_bytes (root), -1 when unreadable */
	char fault_around_why[96];	/* why it is unreadable (env_fault_around_why), "" otherwise; not in reports */
	/* Build provenance of tlbprof itself */
	char compiler[160];		/* from the ELF .comment of /proc/self/exe (libelf) */
	char build_flags[256];		/* recorded at build time (TLBPROF_BUILD_FLAGS) */
	char build_type[32];		/* meson buildtype */
	/* CPUID leaf 7 features that tell cores apart (machine/cores.h CPU_BIT), when features_known. */
	bool features_known;
	uint32_t cpu_features;
	/* Which documented core this is (environment_identify_core()), and what that row expects. */
	struct core_identity core;
	struct env_tlb documented_tlb;	/* the row's TLB entries (source "documented: NAME"); zero without a row */
	/* Documented L1 load-to-use latency of this core for a pointer chase, 0 when unknown. */
	unsigned l1_latency_cycles;
	char core_name[48];		/* the identified core ("Zen 4", "Raptor Cove or Golden Cove"), "" when unknown */
	char pmu_basis[240];		/* why the counters use their PMU's map (counter_set_pmu_basis()), "" unknown */
	/* Host facts before the first phase and after the last (measuring commands only; host.h). */
	struct host_facts host;
};

/*
 * Whether env's probe measured a trap per populated page (shadow paging); false where it measured nothing.
 * env is not NULL: a NULL test here lets gcc -O2 with the sanitizers assume every caller's env may be NULL
 * (-Wstringop-overread on diagnose.c's strcmp of env->tlb.source).
 */
static inline bool env_shadow_paging(const struct environment *env)
{
	return env->first_access.pages && env->first_access.ns_per_page >= ENV_SHADOW_NS_PER_PAGE;
}

/*
 * Read up to size - 1 bytes of a (proc/sys) file into buf, NUL-terminated:
 * the one small-file reader of machine facts (measure/ reads meminfo and the
 * THP mode with it too). Returns 0 or -errno of the failing open/read.
 */
int env_read_text(const char *path, char *buf, size_t size);

/*
 * Collect every fact that can be read without privileges. Never fails as a
 * whole: an unreadable fact is left empty/zero (or INT32_MIN for the paranoid
 * level). Pure reads: nothing on the system is changed.
 */
void environment_collect(struct environment *env);

/*
 * Identify env's core from its CPUID signature, features and caches (and,
 * when add_imm_per_cycle > 0, the measured folding of add reg, imm: see
 * timing.h) and fill env->core, env->core_name, env->l1_latency_cycles and
 * env->documented_tlb from the row. environment_collect() calls it without
 * the measurement; a measuring command again after calibrating the clock.
 */
void environment_identify_core(struct environment *env, double add_imm_per_cycle);

/*
 * The TLB geometry expectations rest on: CPUID's where it reports any 4 KiB
 * entries, else the documented row's (env->documented_tlb, its source says
 * "documented: CORE"); its source names which. In a VM whose CPUID disagrees
 * with the documented row (environment_tlb_disagrees()), the row's: bhyve on
 * a Zen 5 host reports an L2 TLB of 128 entries, where the row (AMD's guide)
 * says 4096, and a tlbsize sweep here rises at 4096..4871 pages and at none
 * near 128. Never NULL.
 */
const struct env_tlb *environment_expected_tlb(const struct environment *env);

/* CPUID's and the documented row's counts for a level agree within this ratio either way. */
#define ENV_TLB_AGREE 1.25
/*
 * Whether env runs under a hypervisor and CPUID's 4 KiB entries at the L1 or
 * the L2 are more than ENV_TLB_AGREE apart from the documented row's (both
 * known): hypervisors zero these leaves or invent them. On bare metal CPUID
 * is the CPU's own word, and a disagreement says more of the row chosen.
 */
bool environment_tlb_disagrees(const struct environment *env);

/* t's entries for pages of page_bytes (4 KiB, 2 MiB or 1 GiB and up) at level 1 (L1 dTLB) or 2 (STLB); 0: not known. */
unsigned env_tlb_entries(const struct env_tlb *t, unsigned level, uint64_t page_bytes);

/* The pool for page_bytes, or NULL when the kernel has no such pool. */
const struct env_hugepool *environment_pool(const struct environment *env, uint64_t page_bytes);

/*
 * Read the pool of page_bytes pages from /sys/kernel/mm/hugepages now (the
 * runner checks it just before mapping). Returns 0, or -ENOENT when the
 * kernel has no such pool (*out then has free -1).
 */
int environment_pool_read(uint64_t page_bytes, struct env_hugepool *out);

/*
 * Pure: the pages of a pool a new MAP_HUGETLB mapping can get: free minus
 * reserved (resv_hugepages are free pages promised to mappings that have not
 * touched them yet). 0 for a NULL pool or unreadable counts. The one
 * definition the runner's pool check and tlbprof env share.
 */
uint64_t environment_pool_unreserved(const struct env_hugepool *pool);

/*
 * Pure: the nr_hugepages that leaves need unreserved free pages in pool
 * (its total grown by what is missing; the total itself when nothing is).
 */
uint64_t environment_pool_target(const struct env_hugepool *pool, uint64_t need);

/* The cache of the given level that holds data ("Data" or "Unified"), or NULL. */
const struct env_cache *environment_data_cache(const struct environment *env, unsigned level);


/* Read the current /proc/stat aggregate steal ticks; 0 when unavailable. */
uint64_t environment_steal_ticks(void);

/* The aggregate cpu line of /proc/stat now: all ticks (user .. steal) and steal. 0 or -errno (-EINVAL: unparsable). */
int environment_stat_ticks(uint64_t *total, uint64_t *steal);

/* Steal time over a short window, all CPUs together. */
struct env_steal {
	unsigned window_ms;	/* how long it was sampled */
	uint64_t steal_ticks;	/* steal ticks in the window */
	uint64_t total_ticks;	/* all CPU ticks in the window (user .. steal) */
	double fraction;	/* steal / total, 0 to 1 */
};

/*
 * Sample /proc/stat twice, window_ms apart (the calling thread sleeps), and
 * report the share of CPU time the hypervisor stole in between. Returns 0, or
 * -errno when /proc/stat cannot be read or parsed, or -EAGAIN when no tick
 * passed (window too short); *out is then zeroed.
 */
int environment_steal_sample(unsigned window_ms, struct env_steal *out);

/*
 * Pure parsers behind environment_collect, exposed for the unit tests. Each
 * returns 0 or -EINVAL (malformed text); those that write a string return
 * -ERANGE when it does not fit into out (out is then "").
 */

/* Selected value of a THP sysfs file: "always [madvise] never" -> "madvise". Exactly one [word]. */
int env_parse_thp_selected(const char *text, char *out, size_t out_size);

/* Aggregate steal ticks: the 8th value of the "cpu " line of /proc/stat text. */
int env_parse_proc_stat_steal(const char *text, uint64_t *steal_ticks);

/* The same line's total (the sum of its first eight values: guest time is already in user) and steal. */
int env_parse_proc_stat_cpu(const char *text, uint64_t *total_ticks, uint64_t *steal_ticks);

/* The CapEff mask of /proc/self/status text ("CapEff:\t000001ffffffffff"); -ENOENT without that line. */
int env_parse_cap_eff(const char *text, uint64_t *cap_effective);

/* statfs() f_type of debugfs (linux/magic.h DEBUGFS_MAGIC). */
#define ENV_DEBUGFS_MAGIC 0x64626720u

/*
 * Why debugfs's fault_around_bytes could not be read, as a phrase: err is
 * the positive errno of the open/read (EINVAL: the text did not parse),
 * debugfs_mounted whether /sys/kernel/debug is a debugfs. A static string.
 */
const char *env_fault_around_why(int err, bool debugfs_mounted, unsigned euid);

/* Page size of a hugetlb pool directory name: "hugepages-2048kB" -> 2097152. */
int env_parse_hugepages_dirname(const char *name, uint64_t *page_bytes);

/* A sysfs cache size: "48K" -> 49152, "2M", "64" (bytes); surrounding whitespace allowed. */
int env_parse_cache_size(const char *text, uint64_t *bytes);

/* A decimal integer file such as perf_event_paranoid: "2\n" -> 2, "-1" -> -1. */
int env_parse_long(const char *text, long *value);

/*
 * The value of "key" in /proc/cpuinfo text (first occurrence; the key must
 * match exactly, so "model" does not match "model name"): whitespace trimmed.
 * -ENOENT when no line has that key.
 */
int env_parse_cpuinfo_field(const char *text, const char *key, char *out, size_t out_size);
