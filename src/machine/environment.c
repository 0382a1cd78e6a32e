/* SPDX-License-Identifier: MIT */
/* Reads the machine facts a measurement depends on (CPUID, sysfs, procfs, the build's own ELF) without changing any. */
#include "machine/environment.h"

#include "machine/env_text.h"
#include "pmu/elfinfo.h"
#include "pmu/paranoid.h"

/* Meson's generated version.h carries TLBPROF_BUILD_FLAGS and TLBPROF_BUILD_TYPE; a bare compile has neither. */
#if defined(__has_include)
#if __has_include("version.h")
#include "version.h"
#endif
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Files                                                                     */

/*
 * Read up to size - 1 bytes of a (proc/sys) file into buf, NUL-terminated.
 * Returns 0 or -errno of the failing open/read. A longer file is cut: callers
 * only need its beginning (/proc/stat's first line, /proc/cpuinfo's first CPU).
 */
static int read_text(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd, err = 0;

	if (size == 0)
		return -EINVAL;
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < size - 1) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return err;
}

int env_read_text(const char *path, char *buf, size_t size)
{
	return read_text(path, buf, size);
}

/* ------------------------------------------------------------------------ */
/* Collection                                                                */


/* Fields CPUID gives on x86, read from /proc/cpuinfo elsewhere (arm64: "CPU implementer" etc.). */
static void collect_cpu_cpuinfo(struct environment *env, const char *cpuinfo)
{
	char v[80];

	if (env_parse_cpuinfo_field(cpuinfo, "vendor_id", v, sizeof(v)) == 0 ||
	    env_parse_cpuinfo_field(cpuinfo, "CPU implementer", v, sizeof(v)) == 0)
		env_copy_trunc(env->cpu_vendor, sizeof(env->cpu_vendor), v);
	if (env_parse_cpuinfo_field(cpuinfo, "cpu family", v, sizeof(v)) == 0 ||
	    env_parse_cpuinfo_field(cpuinfo, "CPU architecture", v, sizeof(v)) == 0)
		env->cpu_family = (unsigned)strtoul(v, NULL, 0);
	if (env_parse_cpuinfo_field(cpuinfo, "model", v, sizeof(v)) == 0 ||
	    env_parse_cpuinfo_field(cpuinfo, "CPU part", v, sizeof(v)) == 0)
		env->cpu_model = (unsigned)strtoul(v, NULL, 0);
	if (env_parse_cpuinfo_field(cpuinfo, "stepping", v, sizeof(v)) == 0 ||
	    env_parse_cpuinfo_field(cpuinfo, "CPU revision", v, sizeof(v)) == 0)
		env->cpu_stepping = (unsigned)strtoul(v, NULL, 0);
}

static void collect_cpu(struct environment *env)
{
	char cpuinfo[16384], name[sizeof(env->cpu_model_name)];
	long n;

	env_copy_trunc(env->tlb.source, sizeof(env->tlb.source), "none");
	bool have_cpuid = env_cpuid_collect(env);
	/* The first CPU's block is all that is needed; the buffer may cut later ones. */
	if (read_text("/proc/cpuinfo", cpuinfo, sizeof(cpuinfo)) == 0) {
		if (env_parse_cpuinfo_field(cpuinfo, "model name", name, sizeof(name)) == 0 && name[0])
			env_copy_trunc(env->cpu_model_name, sizeof(env->cpu_model_name), name);
		if (!have_cpuid)
			collect_cpu_cpuinfo(env, cpuinfo);
	}
	n = sysconf(_SC_NPROCESSORS_ONLN);
	env->logical_cpus = n > 0 && n <= INT_MAX ? (int)n : 0;

	/* Without a CPUID signature (or on other architectures), Xen PV guests still say so here. */
	if (env->hypervisor[0] == '\0') {
		char type[32];

		if (read_text("/sys/hypervisor/type", type, sizeof(type)) == 0) {
			env_trim(type);
			env_copy_trunc(env->hypervisor, sizeof(env->hypervisor), type);
		}
	}
}

static int cache_cmp(const void *pa, const void *pb)
{
	const struct env_cache *a = pa, *b = pb;

	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	return strcmp(a->type, b->type);	/* "Data" before "Unified" */
}

/* Read the small sysfs file dir/name into buf; 0 or -errno (-ENAMETOOLONG when the path does not fit). */
static int read_attr(const char *dir, const char *name, char *buf, size_t size)
{
	char path[512];
	int n = snprintf(path, sizeof(path), "%s/%s", dir, name);

	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	return read_text(path, buf, size);
}

/* A small sysfs value as an unsigned; 0 when unreadable or malformed. */
static unsigned read_unsigned(const char *dir, const char *name)
{
	char text[64];
	long v;

	if (read_attr(dir, name, text, sizeof(text)) != 0 || env_parse_long(text, &v) != 0 || v < 0 ||
	    (unsigned long)v > UINT_MAX)
		return 0;
	return (unsigned)v;
}

static void collect_caches(struct environment *env)
{
	static const char base[] = "/sys/devices/system/cpu/cpu0/cache";
	struct env_cache found[16];
	size_t n = 0;
	DIR *dir = opendir(base);
	struct dirent *de;

	if (!dir)
		return;
	while ((de = readdir(dir)) != NULL && n < sizeof(found) / sizeof(found[0])) {
		struct env_cache *c = &found[n];
		char dpath[512], text[64];
		unsigned idx;
		char tail;

		if (sscanf(de->d_name, "index%u%c", &idx, &tail) != 1)
			continue;
		if (snprintf(dpath, sizeof(dpath), "%s/%s", base, de->d_name) >= (int)sizeof(dpath))
			continue;
		memset(c, 0, sizeof(*c));
		if (read_attr(dpath, "type", text, sizeof(text)) != 0)
			continue;
		env_trim(text);
		if (strcmp(text, "Data") != 0 && strcmp(text, "Unified") != 0)
			continue;	/* instruction caches do not hold the chased data */
		env_copy_trunc(c->type, sizeof(c->type), text);
		c->level = read_unsigned(dpath, "level");
		if (c->level == 0)
			continue;
		if (read_attr(dpath, "size", text, sizeof(text)) != 0 ||
		    env_parse_cache_size(text, &c->size_bytes) != 0)
			c->size_bytes = 0;
		c->ways = read_unsigned(dpath, "ways_of_associativity");
		c->line_bytes = read_unsigned(dpath, "coherency_line_size");
		c->sets = read_unsigned(dpath, "number_of_sets");
		n++;
	}
	closedir(dir);
	qsort(found, n, sizeof(found[0]), cache_cmp);
	env->n_caches = n < ENV_MAX_CACHES ? n : ENV_MAX_CACHES;
	memcpy(env->caches, found, env->n_caches * sizeof(found[0]));
}

/* A pool counter file; -1 when unreadable. */
static long read_pool_count(const char *dir, const char *name)
{
	char text[64];
	long v;

	if (read_attr(dir, name, text, sizeof(text)) != 0 || env_parse_long(text, &v) != 0)
		return -1;
	return v;
}

static int pool_cmp(const void *pa, const void *pb)
{
	const struct env_hugepool *a = pa, *b = pb;

	return a->page_bytes < b->page_bytes ? -1 : a->page_bytes > b->page_bytes;
}

/* The four counts of the pool in directory dpath. */
static void read_pool(const char *dpath, struct env_hugepool *p)
{
	p->nr = read_pool_count(dpath, "nr_hugepages");
	p->free = read_pool_count(dpath, "free_hugepages");
	p->resv = read_pool_count(dpath, "resv_hugepages");
	p->surplus = read_pool_count(dpath, "surplus_hugepages");
}

int environment_pool_read(uint64_t page_bytes, struct env_hugepool *out)
{
	char dpath[96];

	memset(out, 0, sizeof(*out));
	out->page_bytes = page_bytes;
	snprintf(dpath, sizeof(dpath), "/sys/kernel/mm/hugepages/hugepages-%llukB",
		 (unsigned long long)(page_bytes >> 10));
	read_pool(dpath, out);
	return out->free < 0 ? -ENOENT : 0;
}

uint64_t environment_pool_unreserved(const struct env_hugepool *pool)
{
	if (!pool || pool->free <= 0)
		return 0;
	/* resv_hugepages counts pages promised to mappings that have not touched them yet: they are in free too. */
	uint64_t resv = pool->resv > 0 ? (uint64_t)pool->resv : 0;
	return (uint64_t)pool->free > resv ? (uint64_t)pool->free - resv : 0;
}

uint64_t environment_pool_target(const struct env_hugepool *pool, uint64_t need)
{
	uint64_t nr = pool && pool->nr > 0 ? (uint64_t)pool->nr : 0, have = environment_pool_unreserved(pool);

	return have >= need ? nr : nr + (need - have);
}

static void collect_pools(struct environment *env)
{
	static const char base[] = "/sys/kernel/mm/hugepages";
	struct env_hugepool found[16];
	size_t n = 0;
	DIR *dir = opendir(base);
	struct dirent *de;

	if (!dir)
		return;
	while ((de = readdir(dir)) != NULL && n < sizeof(found) / sizeof(found[0])) {
		struct env_hugepool *p = &found[n];
		char dpath[512];

		if (env_parse_hugepages_dirname(de->d_name, &p->page_bytes) != 0)
			continue;
		if (snprintf(dpath, sizeof(dpath), "%s/%s", base, de->d_name) >= (int)sizeof(dpath))
			continue;
		read_pool(dpath, p);
		n++;
	}
	closedir(dir);
	qsort(found, n, sizeof(found[0]), pool_cmp);
	env->n_pools = n < ENV_MAX_POOLS ? n : ENV_MAX_POOLS;
	memcpy(env->pools, found, env->n_pools * sizeof(found[0]));
}

/* Governor and turbo state: a "powersave" governor or turbo makes the clock move under a measurement. */
static void collect_cpufreq(struct environment *env)
{
	char text[64];
	long v;

	if (read_text("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver", text, sizeof(text)) == 0) {
		env_trim(text);
		env_copy_trunc(env->cpufreq_driver, sizeof(env->cpufreq_driver), text);
	}
	if (read_text("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", text, sizeof(text)) == 0) {
		env_trim(text);
		env_copy_trunc(env->cpufreq_governor, sizeof(env->cpufreq_governor), text);
	}
	env->turbo = -1;
	/* intel_pstate says "no_turbo"; acpi-cpufreq and amd-pstate say "boost". */
	if (read_text("/sys/devices/system/cpu/intel_pstate/no_turbo", text, sizeof(text)) == 0 &&
	    env_parse_long(text, &v) == 0)
		env->turbo = v == 0;
	else if (read_text("/sys/devices/system/cpu/cpufreq/boost", text, sizeof(text)) == 0 &&
		 env_parse_long(text, &v) == 0)
		env->turbo = v != 0;
}

static void collect_kernel(struct environment *env)
{
	struct utsname u;
	char text[256];
	long v;

	if (uname(&u) == 0) {
		int n = snprintf(env->kernel, sizeof(env->kernel), "%s %s %s %s", u.sysname, u.release,
				 u.version, u.machine);

		if (n < 0)
			env->kernel[0] = '\0';	/* a longer one is cut, which is fine for a label */
	}
	if (read_text("/sys/kernel/mm/transparent_hugepage/enabled", text, sizeof(text)) == 0)
		env_parse_thp_selected(text, env->thp_enabled, sizeof(env->thp_enabled));
	if (read_text("/sys/kernel/mm/transparent_hugepage/defrag", text, sizeof(text)) == 0)
		env_parse_thp_selected(text, env->thp_defrag, sizeof(env->thp_defrag));
	collect_pools(env);
	env->perf_event_paranoid = paranoid_level();
	env->euid = (unsigned)geteuid();
	/* /proc/self/status is a few KiB; CapEff is in its first half. */
	char status[4096];
	env->cap_known = read_text("/proc/self/status", status, sizeof(status)) == 0 &&
			 env_parse_cap_eff(status, &env->cap_effective) == 0;
	env->steal_ticks = environment_steal_ticks();
	collect_cpufreq(env);
	/* How many bytes a file read fault maps around the faulting page (debugfs: root, when mounted). */
	env->fault_around_bytes = -1;
	env->fault_around_why[0] = '\0';
	int rc = read_text("/sys/kernel/debug/fault_around_bytes", text, sizeof(text));
	if (rc == 0 && env_parse_long(text, &v) == 0) {
		env->fault_around_bytes = v;
	} else {
		/* Which of the reasons it is: the fix differs (mount it, or be root). */
		struct statfs sfs;
		bool mounted = statfs("/sys/kernel/debug", &sfs) == 0 && (uint64_t)sfs.f_type == ENV_DEBUGFS_MAGIC;
		snprintf(env->fault_around_why, sizeof(env->fault_around_why), "%s",
			 env_fault_around_why(rc ? -rc : EINVAL, mounted, env->euid));
	}
}

const char *env_fault_around_why(int err, bool debugfs_mounted, unsigned euid)
{
	if (!debugfs_mounted)
		return euid == 0 ? "debugfs is not mounted (mount -t debugfs none /sys/kernel/debug)"
				 : "debugfs is not mounted (sudo mount -t debugfs none /sys/kernel/debug)";
	if ((err == EACCES || err == EPERM) && euid != 0)
		return "debugfs is readable by root only";
	if (err == EACCES || err == EPERM)
		return "debugfs denies it even to root (kernel lockdown?)";
	if (err == ENOENT)
		return "this kernel's debugfs has no fault_around_bytes";
	return "fault_around_bytes in debugfs is unreadable";
}

static void collect_build(struct environment *env)
{
	struct elf_provenance prov;

	if (elf_provenance_read("/proc/self/exe", &prov) == 0)
		env_copy_trunc(env->compiler, sizeof(env->compiler), prov.comment);
#ifdef TLBPROF_BUILD_FLAGS
	env_copy_trunc(env->build_flags, sizeof(env->build_flags), TLBPROF_BUILD_FLAGS);
#endif
#ifdef TLBPROF_BUILD_TYPE
	env_copy_trunc(env->build_type, sizeof(env->build_type), TLBPROF_BUILD_TYPE);
#endif
}

/*
 * L1 load-to-use latency of a dependent pointer chase ("mov (%rax), %rax"),
 * from the vendors' optimisation manuals: 4 cycles on Zen and on Intel cores
 * up to Skylake, 5 cycles from Sunny Cove (Ice Lake) on. model 0 with
 * any_model matches every model of the family.
 */
void environment_identify_core(struct environment *env, double add_imm_per_cycle)
{
	const struct env_cache *l1 = environment_data_cache(env, 1), *l2 = environment_data_cache(env, 2);
	struct core_signature sig = {
		.vendor = env->cpu_vendor,
		.family = env->cpu_family,
		.model = env->cpu_model,
		.stepping = env->cpu_stepping,
		.features_known = env->features_known,
		.features = env->cpu_features,
		.l1d_kib = l1 ? (unsigned)(l1->size_bytes >> 10) : 0,
		.l2_kib = l2 ? (unsigned)(l2->size_bytes >> 10) : 0,
		.add_imm_per_cycle = add_imm_per_cycle,
	};
	const struct core_row *r;

	cores_identify(&sig, &env->core);
	r = env->core.row;
	snprintf(env->core_name, sizeof(env->core_name), "%s", r ? env->core.name : "");
	env->l1_latency_cycles = r ? r->l1_latency_cycles : 0;
	memset(&env->documented_tlb, 0, sizeof(env->documented_tlb));
	if (!r)
		return;
	env->documented_tlb = (struct env_tlb){
		.l1d_4k_entries = r->l1d_4k, .l1d_2m_entries = r->l1d_2m, .l1d_1g_entries = r->l1d_1g,
		.l2d_4k_entries = r->l2_4k, .l2d_2m_entries = r->l2_2m, .l2d_1g_entries = r->l2_1g,
	};
	snprintf(env->documented_tlb.source, sizeof(env->documented_tlb.source), "documented: %s", r->name);
}

/* CPUID's count c and the documented d disagree: both known, apart by more than ENV_TLB_AGREE either way. */
static bool entries_disagree(unsigned c, unsigned d)
{
	return c && d && ((double)c > ENV_TLB_AGREE * d || (double)d > ENV_TLB_AGREE * c);
}

bool environment_tlb_disagrees(const struct environment *env)
{
	const struct env_tlb *c = &env->tlb, *d = &env->documented_tlb;

	return *env->hypervisor && (entries_disagree(c->l1d_4k_entries, d->l1d_4k_entries) ||
				    entries_disagree(c->l2d_4k_entries, d->l2d_4k_entries));
}

const struct env_tlb *environment_expected_tlb(const struct environment *env)
{
	if (!env->documented_tlb.l1d_4k_entries || environment_tlb_disagrees(env))
		return env->documented_tlb.l1d_4k_entries ? &env->documented_tlb : &env->tlb;
	if (env->tlb.l1d_4k_entries || env->tlb.l2d_4k_entries)
		return &env->tlb;
	return &env->documented_tlb;
}

unsigned env_tlb_entries(const struct env_tlb *t, unsigned level, uint64_t page_bytes)
{
	if (!t)
		return 0;
	if (page_bytes >= (1ull << 30))
		return level == 1 ? t->l1d_1g_entries : t->l2d_1g_entries;
	if (page_bytes >= (2ull << 20))
		return level == 1 ? t->l1d_2m_entries : t->l2d_2m_entries;
	return level == 1 ? t->l1d_4k_entries : t->l2d_4k_entries;
}

void environment_collect(struct environment *env)
{
	memset(env, 0, sizeof(*env));
	collect_cpu(env);
	collect_caches(env);
	environment_identify_core(env, 0);
	collect_kernel(env);
	collect_build(env);
}

const struct env_hugepool *environment_pool(const struct environment *env, uint64_t page_bytes)
{
	for (size_t i = 0; i < env->n_pools && i < ENV_MAX_POOLS; i++)
		if (env->pools[i].page_bytes == page_bytes)
			return &env->pools[i];
	return NULL;
}

const struct env_cache *environment_data_cache(const struct environment *env, unsigned level)
{
	for (size_t i = 0; i < env->n_caches && i < ENV_MAX_CACHES; i++) {
		const struct env_cache *c = &env->caches[i];

		if (c->level == level && (strcmp(c->type, "Data") == 0 || strcmp(c->type, "Unified") == 0))
			return c;
	}
	return NULL;
}

uint64_t environment_steal_ticks(void)
{
	/* The aggregate "cpu " line comes first; 8 KiB holds it on any machine. */
	char text[8192];
	uint64_t steal;

	if (read_text("/proc/stat", text, sizeof(text)) != 0 || env_parse_proc_stat_steal(text, &steal) != 0)
		return 0;
	return steal;
}

/* The aggregate CPU line of /proc/stat: total and steal ticks. */
static int read_stat_cpu(uint64_t *total, uint64_t *steal)
{
	char text[8192];
	int rc = read_text("/proc/stat", text, sizeof(text));

	return rc ? rc : env_parse_proc_stat_cpu(text, total, steal);
}

int environment_stat_ticks(uint64_t *total, uint64_t *steal)
{
	return read_stat_cpu(total, steal);
}

int environment_steal_sample(unsigned window_ms, struct env_steal *out)
{
	uint64_t total0, steal0, total1, steal1;
	struct timespec ts = { .tv_sec = window_ms / 1000, .tv_nsec = (long)(window_ms % 1000) * 1000000L };
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = read_stat_cpu(&total0, &steal0)) != 0)
		return rc;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	if ((rc = read_stat_cpu(&total1, &steal1)) != 0)
		return rc;
	/* The counters only grow; a smaller value means a CPU went offline in between (its ticks left the sum). */
	if (total1 <= total0 || steal1 < steal0)
		return -EAGAIN;
	out->window_ms = window_ms;
	out->total_ticks = total1 - total0;
	out->steal_ticks = steal1 - steal0;
	out->fraction = (double)out->steal_ticks / (double)out->total_ticks;
	return 0;
}
