/* SPDX-License-Identifier: MIT */
/* Pure: turns the environment facts of tlbprof env into what can be measured and problems with their fixes. */
#include "machine/diagnose.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "parse.h"
#include "pmu/paranoid.h"

/* The unstable check of the analysis flags a phase above the same 1 % of stolen CPU time. */
static const double STEAL_FRACTION_MAX = 0.01;

const char *diagnose_severity_name(enum diagnose_severity s)
{
	return s == DIAGNOSE_WARN ? "warn" : "info";
}

/* Add a problem; command and advice may be NULL. The list is long enough for every id below. */
__attribute__((format(printf, 6, 7)))
static void add(struct diagnosis *d, const char *id, enum diagnose_severity sev, const char *command,
		const char *advice, const char *fmt, ...)
{
	va_list ap;

	if (d->n_problems >= DIAGNOSE_MAX_PROBLEMS)
		return;
	struct diagnose_problem *p = &d->problems[d->n_problems++];
	p->id = id;
	p->severity = sev;
	va_start(ap, fmt);
	vsnprintf(p->message, sizeof(p->message), fmt, ap);
	va_end(ap);
	snprintf(p->command, sizeof(p->command), "%s", command ? command : "");
	snprintf(p->advice, sizeof(p->advice), "%s", advice ? advice : "");
}

/*
 * The command that writes value to a sysfs/procfs file: "echo V > FILE" as
 * root, "echo V | sudo tee FILE" otherwise (a plain "sudo echo V > FILE"
 * would open FILE in the unprivileged shell).
 */
static void write_command(char *buf, size_t len, const char *value, const char *path, bool root)
{
	if (root)
		snprintf(buf, len, "echo %s > %s", value, path);
	else
		snprintf(buf, len, "echo %s | sudo tee %s", value, path);
}

static const struct counter_info *find_counter(const struct diagnose_input *in, enum metric m)
{
	for (size_t i = 0; in->counters && i < in->n_counters; i++)
		if (in->counters[i].metric == m)
			return &in->counters[i];
	return NULL;
}

static bool counter_opens(const struct counter_info *ci)
{
	return ci && counter_counting(ci);
}

/* Append name to a ", "-separated list in buf. */
static void list_append(char *buf, size_t len, const char *name)
{
	size_t n = strlen(buf);

	snprintf(buf + n, len - n, "%s%s", n ? ", " : "", name);
}

static bool privileged(const struct environment *env)
{
	return env->euid == 0 ||
	       (env->cap_known && (env->cap_effective >> ENV_CAP_PERFMON & 1 || env->cap_effective >> ENV_CAP_SYS_ADMIN & 1));
}

static void diagnose_counters(const struct diagnose_input *in, struct diagnosis *d)
{
	const struct environment *env = in->env;
	bool vm = env->hypervisor[0] != '\0';
	bool hw_resolved = false, hw_open = false, hw_denied = false;

	if (!in->counters) {
		add(d, "counters_unavailable", DIAGNOSE_WARN, NULL,
		    "check the map files (--events-dir, events/README.md) and that libpfm4 is installed",
		    "no counter could be resolved: %s; timings still work, every count is missing",
		    in->counters_error ? in->counters_error : "unknown reason");
		return;
	}
	for (size_t i = 0; i < in->n_counters; i++) {
		const struct counter_info *ci = &in->counters[i];
		if (!ci->hardware || !ci->source[0])
			continue;
		hw_resolved = true;
		hw_open |= counter_opens(ci);
		hw_denied |= ci->status == COUNTER_DENIED;
	}
	if (hw_resolved && !hw_open && !hw_denied) {
		if (vm)
			add(d, "pmu_hidden", DIAGNOSE_WARN, NULL,
			    "on the host: give the guest a vPMU (QEMU -cpu host,pmu=on; libvirt <cpu "
			    "mode='host-passthrough'/> with <pmu state='on'/>), or use a bare-metal instance",
			    "the hypervisor (%s) hides the PMU: hardware events (dTLB misses, page-walk cycles, "
			    "cycles, LLC misses) do not open; software events (page faults, task-clock) do, and "
			    "comparisons use the differential method with packed controls", env->hypervisor);
		else
			add(d, "pmu_unavailable", DIAGNOSE_WARN, NULL,
			    "check 'dmesg | grep -i \"performance events\"' and that libpfm4 knows this CPU "
			    "(a newer libpfm4)",
			    "no hardware event opens (PMU %s): dTLB misses, page-walk cycles and cycles are missing",
			    in->pmu_name ? in->pmu_name : "none");
	}
	/* A known PMU without its own map measures TLB misses through the kernel's generic events only. */
	if (in->pmu_name && strcmp(in->pmu_name, "none") != 0) {
		bool mapped = false;
		for (size_t i = 0; i < in->n_counters; i++)
			mapped |= strcmp(in->counters[i].source, in->pmu_name) == 0;
		if (!mapped) {
			char advice[256];
			snprintf(advice, sizeof(advice),
				 "write events/%s.events from the vendor's event list (events/README.md) and add "
				 "its golden rows to tests/unit/test-counters.c", in->pmu_name);
			add(d, "pmu_no_map", DIAGNOSE_WARN, NULL, advice,
			    "no event map for PMU %s: page-walk cycles and STLB hits are not measured, dTLB "
			    "misses come from the kernel's generic event", in->pmu_name);
		}
	}
}

static void diagnose_privileges(const struct diagnose_input *in, struct diagnosis *d)
{
	const struct environment *env = in->env;
	bool root = env->euid == 0;
	char denied[256] = "", user_only[256] = "";

	for (size_t i = 0; in->counters && i < in->n_counters; i++) {
		const struct counter_info *ci = &in->counters[i];
		if (ci->status == COUNTER_DENIED)
			list_append(denied, sizeof(denied), ci->name);
		else if (counter_opens(ci) && strncmp(ci->reason, "user space only", 15) == 0)
			list_append(user_only, sizeof(user_only), ci->name);
	}
	bool restricted = env->perf_event_paranoid > 1 && !privileged(env);
	if (!denied[0] && !user_only[0] && !(restricted && !in->counters))
		return;

	char effect[560];
	snprintf(effect, sizeof(effect), "%s%s%s%s%s", denied[0] ? "denied: " : "", denied,
		 denied[0] && user_only[0] ? "; " : "", user_only[0] ? "user space only: " : "", user_only);
	if (env->perf_event_paranoid > 1 || env->perf_event_paranoid == PARANOID_UNKNOWN) {
		char level[16], fix[64];
		paranoid_level_text(env->perf_event_paranoid, level, sizeof(level));
		paranoid_fix(1, root, fix, sizeof(fix));
		add(d, "perf_event_paranoid", DIAGNOSE_WARN, fix,
		    "or, without changing the system: sudo setcap cap_perfmon+ep \"$(command -v tlbprof)\" "
		    "(Linux >= 5.8); kernel.perf_event_paranoid=1 in /etc/sysctl.d/ keeps it after a reboot",
		    "perf_event_paranoid=%s%s: %s", level,
		    privileged(env) ? "" : " and no CAP_PERFMON",
		    effect[0] ? effect : "kernel-side counting of software events is denied");
	} else {
		/* paranoid allows it, yet the kernel said no: a container's seccomp filter or an LSM. */
		add(d, "perf_event_denied", DIAGNOSE_WARN, NULL,
		    "a container or security module denies perf_event_open: run the container with "
		    "--cap-add PERFMON and a seccomp profile that allows perf_event_open",
		    "perf_event_paranoid=%d allows counting, but the kernel denied it: %s",
		    env->perf_event_paranoid, effect);
	}
}

static void diagnose_thp(const struct diagnose_input *in, struct diagnosis *d)
{
	const struct environment *env = in->env;
	bool root = env->euid == 0;
	char cmd[256];

	if (!env->thp_enabled[0]) {
		add(d, "thp_unavailable", DIAGNOSE_WARN, NULL,
		    "use --pages 4k,2m:hugetlb with a reserved pool, or a kernel with CONFIG_TRANSPARENT_HUGEPAGE",
		    "no /sys/kernel/mm/transparent_hugepage: this kernel has no transparent huge pages, so "
		    "--pages 2m (THP) phases fail");
		return;
	}
	if (strcmp(env->thp_enabled, "never") == 0) {
		write_command(cmd, sizeof(cmd), "madvise", "/sys/kernel/mm/transparent_hugepage/enabled", root);
		add(d, "thp_never", DIAGNOSE_WARN, cmd, "madvise lets tlbprof ask for huge pages per region and "
		    "changes nothing for other programs; 2m:hugetlb works without THP",
		    "transparent huge pages are disabled (never): --pages 2m (THP) phases fail");
		return;
	}
	if (strcmp(env->thp_defrag, "never") == 0 || strcmp(env->thp_defrag, "defer") == 0) {
		write_command(cmd, sizeof(cmd), "madvise", "/sys/kernel/mm/transparent_hugepage/defrag", root);
		add(d, "thp_defrag", DIAGNOSE_INFO, cmd, NULL,
		    "THP defrag is %s: a MADV_HUGEPAGE fault does not compact memory, so on fragmented memory "
		    "2m regions get 4 KiB pages and their phases fail verification", env->thp_defrag);
	}
}

/* Pages of page_bytes a working set needs: at least one. */
static uint64_t pages_needed(uint64_t working_set_bytes, uint64_t page_bytes)
{
	uint64_t n = (working_set_bytes + page_bytes - 1) / page_bytes;

	return n ? n : 1;
}

static void diagnose_pool(const struct diagnose_input *in, struct diagnosis *d, uint64_t page_bytes, const char *id,
			  struct diagnose_page *page)
{
	const struct environment *env = in->env;
	const struct env_hugepool *pool = environment_pool(env, page_bytes);
	uint64_t need = pages_needed(in->working_set_bytes, page_bytes);
	char ws[SIZE_TEXT], psz[16];
	bool vm = env->hypervisor[0] != '\0';

	format_size(in->working_set_bytes, ws, sizeof(ws));
	if (page_bytes >= 1ull << 30)
		snprintf(psz, sizeof(psz), "%llu G", (unsigned long long)(page_bytes >> 30));
	else
		snprintf(psz, sizeof(psz), "%llu M", (unsigned long long)(page_bytes >> 20));
	if (!pool) {
		page->available = false;
		snprintf(page->reason, sizeof(page->reason), "no %siB hugetlb pool", psz);
		if (page_bytes == 1ull << 30)
			add(d, id, DIAGNOSE_INFO, NULL,
			    vm ? "on the host: show the guest a CPU model with 1 GiB pages (QEMU -cpu host)" : NULL,
			    "no 1 GiB pages: the CPU%s lacks pdpe1gb or the kernel has no 1 GiB hugetlb size, so "
			    "--pages 1g cannot run", vm ? " the hypervisor shows" : "");
		else
			add(d, id, DIAGNOSE_INFO, NULL, "a kernel with CONFIG_HUGETLBFS",
			    "no %siB hugetlb pool in /sys/kernel/mm/hugepages: --pages %s:hugetlb cannot run", psz,
			    page->label);
		return;
	}
	/* The runner's definition (region.c): what a new mapping can get, reserved pages left out. */
	uint64_t have = environment_pool_unreserved(pool);
	long resv = pool->resv > 0 ? pool->resv : 0;
	char have_words[48];
	if (resv)
		snprintf(have_words, sizeof(have_words), "%llu unreserved of %ld free", (unsigned long long)have,
			 pool->free);
	else
		snprintf(have_words, sizeof(have_words), "%llu free", (unsigned long long)have);
	if (have >= need) {
		page->available = true;
		snprintf(page->reason, sizeof(page->reason), "pool: %s", have_words);
		return;
	}
	page->available = false;
	snprintf(page->reason, sizeof(page->reason), "pool: %s, %llu needed for --size %s", have_words,
		 (unsigned long long)need, ws);
	/* Grow the pool by what is missing: nr_hugepages is the pool's total, the unreserved free pages are part of it. */
	uint64_t total = environment_pool_target(pool, need);
	char value[24], path[96], cmd[256], advice[256];
	snprintf(value, sizeof(value), "%llu", (unsigned long long)total);
	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%llukB/nr_hugepages",
		 (unsigned long long)(page_bytes >> 10));
	write_command(cmd, sizeof(cmd), value, path, env->euid == 0);
	if (page_bytes >= 1ull << 30)
		snprintf(advice, sizeof(advice),
			 "at run time the kernel may find no free 1 GiB blocks (check nr_hugepages afterwards); "
			 "booting with hugepagesz=1G hugepages=%llu reserves them early", (unsigned long long)total);
	else
		snprintf(advice, sizeof(advice),
			 "the pool lasts until reboot (vm.nr_hugepages in /etc/sysctl.d/ keeps the default size's); "
			 "check nr_hugepages afterwards: fragmented memory may give fewer");
	char reserved[64] = "";
	if (resv)
		snprintf(reserved, sizeof(reserved), " (%ld of them reserved by other mappings)", resv);
	add(d, id, DIAGNOSE_INFO, cmd, advice,
	    "the %siB hugetlb pool has %ld free of %ld pages%s: --pages %s at --size %s needs %llu%s", psz,
	    pool->free < 0 ? 0 : pool->free, pool->nr < 0 ? 0 : pool->nr, reserved, page->label, ws,
	    (unsigned long long)need, resv ? " unreserved" : "");
}

static void diagnose_virtualisation(const struct diagnose_input *in, struct diagnosis *d)
{
	const struct environment *env = in->env;
	bool vm = env->hypervisor[0] != '\0';

	if (vm)
		add(d, "nested_paging", DIAGNOSE_INFO, NULL,
		    "on the host: back the guest with huge pages (libvirt <memoryBacking><hugepages/>; QEMU "
		    "-mem-path /dev/hugepages)",
		    "running under %s: a TLB miss walks the guest's and the host's page tables, and guest huge "
		    "pages save the full cost only where the host backs guest memory with huge pages too",
		    env->hypervisor);
	if (env_shadow_paging(env))
		add(d, "shadow_paging", DIAGNOSE_INFO, NULL,
		    "warm up over every page before timing (tlbprof does); for the hardware's own translation, "
		    "a guest with EPT/NPT (hardware nested paging) or bare metal",
		    "the first write to each 4 KiB page the kernel had populated took %.1f µs (median of 64-page "
		    "chunks, %llu pages), a TLB miss well under 1 µs: %s maps each page on first use (shadow "
		    "paging): a first pass over fresh memory pays this per page even when prefaulted, and TLB misses "
		    "walk the tables it keeps",
		    env->first_access.ns_per_page / 1e3, (unsigned long long)env->first_access.pages,
		    vm ? "the hypervisor" : "something below this kernel");
	if (!env->tlb.source[0] || strcmp(env->tlb.source, "none") == 0)
		add(d, "tlb_geometry", DIAGNOSE_INFO, NULL,
		    vm ? "on the host: pass the host CPU model through (QEMU -cpu host; libvirt "
			 "host-passthrough)" : NULL,
		    "CPUID reports no TLB geometry%s: tlbsize knees cannot be matched to TLB capacities, and "
		    "the reach checks assume 4096 entries", vm ? " (hypervisors often zero leaf 0x18)" : "");
	if (in->steal && in->steal->total_ticks && in->steal->fraction > STEAL_FRACTION_MAX)
		add(d, "steal", DIAGNOSE_WARN, NULL,
		    "a dedicated or pinned vCPU, or a quieter host; tlbprof keeps every sample and its "
		    "unstable check names phases with steal",
		    "the hypervisor stole %.1f %% of the CPU time over %u ms: timed samples include pauses "
		    "of this guest", 100 * in->steal->fraction, in->steal->window_ms);
}

static void diagnose_frequency(const struct diagnose_input *in, struct diagnosis *d)
{
	const struct environment *env = in->env;
	bool root = env->euid == 0;
	char cmd[256];

	if (env->cpufreq_governor[0] && strcmp(env->cpufreq_governor, "performance") != 0)
		add(d, "cpufreq_governor", DIAGNOSE_WARN,
		    root ? "cpupower frequency-set -g performance" : "sudo cpupower frequency-set -g performance",
		    "without cpupower: echo performance | sudo tee "
		    "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",
		    "the %s governor (%s) changes the clock with the load: a phase may run before the clock has "
		    "ramped up, and ns per access then varies between runs", env->cpufreq_governor,
		    env->cpufreq_driver[0] ? env->cpufreq_driver : "cpufreq");
	if (env->turbo == 1) {
		/* intel_pstate and intel_cpufreq (its passive mode) have no_turbo; the others have boost. */
		if (strncmp(env->cpufreq_driver, "intel_", 6) == 0)
			write_command(cmd, sizeof(cmd), "1", "/sys/devices/system/cpu/intel_pstate/no_turbo", root);
		else
			write_command(cmd, sizeof(cmd), "0", "/sys/devices/system/cpu/cpufreq/boost", root);
		add(d, "turbo", DIAGNOSE_INFO, cmd, "turn it back on after measuring",
		    "turbo/boost is on: the clock depends on temperature and on how many cores are busy, so "
		    "cycles per access and ns per access drift between runs");
	}
}

static void diagnose_pages(const struct diagnose_input *in, struct diagnosis *d)
{
	const struct environment *env = in->env;
	static const char *const labels[DIAGNOSE_PAGES] = { "4k", "2m", "2m:hugetlb", "1g" };

	for (size_t i = 0; i < DIAGNOSE_PAGES; i++)
		d->pages[i].label = labels[i];
	d->pages[0].available = true;
	snprintf(d->pages[0].reason, sizeof(d->pages[0].reason), "base pages (MADV_NOHUGEPAGE)");
	d->pages[1].available = strcmp(env->thp_enabled, "always") == 0 || strcmp(env->thp_enabled, "madvise") == 0;
	if (env->thp_enabled[0])
		snprintf(d->pages[1].reason, sizeof(d->pages[1].reason), "THP %s", env->thp_enabled);
	else
		snprintf(d->pages[1].reason, sizeof(d->pages[1].reason), "no THP in this kernel");
}

void diagnose_environment(const struct diagnose_input *in, struct diagnosis *out)
{
	memset(out, 0, sizeof(*out));
	out->tlb_misses = counter_opens(find_counter(in, METRIC_DTLB_LOAD_MISSES));
	out->walk_cycles = counter_opens(find_counter(in, METRIC_WALK_ACTIVE));
	out->hardware_cycles = counter_opens(find_counter(in, METRIC_CYCLES));
	out->page_faults = counter_opens(find_counter(in, METRIC_PAGE_FAULTS));
	out->attribution = out->tlb_misses ? "counters" : "differential";
	diagnose_pages(in, out);

	diagnose_counters(in, out);
	diagnose_privileges(in, out);
	diagnose_thp(in, out);
	diagnose_pool(in, out, 2ull << 20, "hugetlb_pool_2m", &out->pages[2]);
	diagnose_pool(in, out, 1ull << 30, "hugetlb_pool_1g", &out->pages[3]);
	diagnose_virtualisation(in, out);
	diagnose_frequency(in, out);
}

const struct diagnose_problem *diagnosis_find(const struct diagnosis *d, const char *id)
{
	for (size_t i = 0; i < d->n_problems; i++)
		if (strcmp(d->problems[i].id, id) == 0)
			return &d->problems[i];
	return NULL;
}
