/* SPDX-License-Identifier: MIT */
/* tlbprof env's diagnosis on fixture machines: which problems fire, in order, with which exact fix command. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "machine/diagnose.h"
#include "fixtures.h"

/* A fixture machine: its facts, its counters as one open attempt left them, and the steal sample. */
struct machine {
	struct environment env;
	struct counter_info counters[METRIC_COUNT];
	size_t n_counters;
	bool no_counters;		/* counter_set_new failed */
	const char *pmu_name;
	struct env_steal steal;
	bool have_steal;
	uint64_t working_set_bytes;
};

/*
 * The quiet baseline: bare-metal Skylake-SP with every event of its map
 * open, run as root, THP madvise, both pools holding enough free pages,
 * performance governor, turbo off, 0 % steal. No problem fires.
 */
static void machine_baseline(struct machine *m)
{
	memset(m, 0, sizeof(*m));
	struct environment *e = &m->env;
	snprintf(e->cpu_vendor, sizeof(e->cpu_vendor), "GenuineIntel");
	e->cpu_family = 6;
	e->cpu_model = 0x55;
	snprintf(e->thp_enabled, sizeof(e->thp_enabled), "madvise");
	snprintf(e->thp_defrag, sizeof(e->thp_defrag), "madvise");
	e->pools[0] = (struct env_hugepool){ 2ull << 20, 128, 128, 0, 0 };
	e->pools[1] = (struct env_hugepool){ 1ull << 30, 1, 1, 0, 0 };
	e->n_pools = 2;
	e->perf_event_paranoid = 2;
	e->euid = 0;
	e->cap_known = true;
	e->cap_effective = UINT64_C(0x1ffffffffff);
	e->tlb.l1d_4k_entries = 64;
	e->tlb.l2d_4k_entries = 1536;
	snprintf(e->tlb.source, sizeof(e->tlb.source), "cpuid 0x18");
	snprintf(e->cpufreq_driver, sizeof(e->cpufreq_driver), "intel_pstate");
	snprintf(e->cpufreq_governor, sizeof(e->cpufreq_governor), "performance");
	e->turbo = 0;
	m->pmu_name = "skx";
	for (int i = 0; i < METRIC_COUNT; i++) {
		struct counter_info *ci = &m->counters[i];
		ci->metric = (enum metric)i;
		snprintf(ci->name, sizeof(ci->name), "%s", fixture_counter_names[i]);
		ci->hardware = !fixture_is_software((enum metric)i);
		snprintf(ci->source, sizeof(ci->source), "%s", ci->hardware ? "skx" : "generic");
		ci->encoded = true;
		ci->status = COUNTER_OK;
	}
	m->n_counters = METRIC_COUNT;
	m->have_steal = true;
	m->steal = (struct env_steal){ 200, 0, 40, 0.0 };
	m->working_set_bytes = 256ull << 20;
}

/* A KVM guest whose hypervisor hides the PMU and zeroes CPUID leaf 0x18 (the development VM). */
static void kvm_no_pmu(struct machine *m)
{
	snprintf(m->env.hypervisor, sizeof(m->env.hypervisor), "KVM");
	memset(&m->env.tlb, 0, sizeof(m->env.tlb));
	snprintf(m->env.tlb.source, sizeof(m->env.tlb.source), "none");
	m->env.cpufreq_driver[0] = m->env.cpufreq_governor[0] = '\0';
	m->env.turbo = -1;
	m->pmu_name = "none";
	for (size_t i = 0; i < m->n_counters; i++) {
		struct counter_info *ci = &m->counters[i];
		if (!ci->hardware)
			continue;
		snprintf(ci->source, sizeof(ci->source), "generic");
		ci->status = COUNTER_UNSUPPORTED;
		snprintf(ci->reason, sizeof(ci->reason), "no hardware PMU visible (hypervisor hides it?)");
	}
	/* generic.events has no page-walk events. */
	const enum metric walk[] = { METRIC_WALK_ACTIVE, METRIC_WALK_COMPLETED, METRIC_STLB_HITS };
	for (size_t i = 0; i < 3; i++) {
		m->counters[walk[i]].source[0] = '\0';
		m->counters[walk[i]].encoded = false;
	}
}

/* An unprivileged user at paranoid 2: faults and task-clock user-only, switches and migrations denied. */
static void unprivileged(struct machine *m)
{
	m->env.euid = 1000;
	m->env.cap_effective = 0;
	for (size_t i = 0; i < m->n_counters; i++) {
		struct counter_info *ci = &m->counters[i];
		if (ci->metric == METRIC_CONTEXT_SWITCHES || ci->metric == METRIC_CPU_MIGRATIONS) {
			ci->status = COUNTER_DENIED;
			snprintf(ci->reason, sizeof(ci->reason), "Permission denied");
		} else if (!ci->hardware) {
			snprintf(ci->reason, sizeof(ci->reason), "user space only: counting kernel side denied");
		}
	}
}

static void setup_none(struct machine *m) { (void)m; }
static void setup_kvm(struct machine *m) { kvm_no_pmu(m); }
static void setup_kvm_user(struct machine *m) { kvm_no_pmu(m); unprivileged(m); }
static void setup_user(struct machine *m) { unprivileged(m); }

/* CAP_PERFMON without root: paranoid 2 restricts nothing, even before any counter was resolved. */
static void setup_perfmon_no_counters(struct machine *m)
{
	m->env.euid = 1000;
	m->env.cap_effective = UINT64_C(1) << ENV_CAP_PERFMON;
	m->no_counters = true;
}

/* Unprivileged and no counter set: paranoid 2 is still a problem ahead of time. */
static void setup_user_no_counters(struct machine *m)
{
	m->env.euid = 1000;
	m->env.cap_effective = 0;
	m->no_counters = true;
}

/* paranoid 1 allows it, yet denied: a container's seccomp or an LSM. */
static void setup_denied_in_container(struct machine *m)
{
	unprivileged(m);
	m->env.perf_event_paranoid = 1;
}

static void setup_thp_never(struct machine *m)
{
	snprintf(m->env.thp_enabled, sizeof(m->env.thp_enabled), "never");
}

static void setup_thp_defer_user(struct machine *m)
{
	snprintf(m->env.thp_defrag, sizeof(m->env.thp_defrag), "defer");
	m->env.euid = 1000;
	m->env.cap_effective = UINT64_C(1) << ENV_CAP_PERFMON;
}

static void setup_no_thp(struct machine *m)
{
	m->env.thp_enabled[0] = m->env.thp_defrag[0] = '\0';
}

/* 10 pages reserved, 4 free: the pool must grow by 124 to hold 128 free. */
static void setup_pool_short(struct machine *m)
{
	m->env.pools[0].nr = 10;
	m->env.pools[0].free = 4;
}

/*
 * 128 pages free but 100 of them reserved by another mapping (a database that
 * mapped its hugetlb region and has not touched it yet): 28 are left for a
 * new mapping, as the runner counts them, so the pool must grow by 100.
 */
static void setup_pool_reserved(struct machine *m)
{
	m->env.pools[0] = (struct env_hugepool){ 2ull << 20, 128, 128, 100, 0 };
}

/* 300 free, 100 reserved: 200 unreserved are enough for 128. */
static void setup_pool_reserved_enough(struct machine *m)
{
	m->env.pools[0] = (struct env_hugepool){ 2ull << 20, 300, 300, 100, 0 };
}

/* The 1 GiB page is free but reserved: --pages 1g cannot map it, as an unprivileged user. */
static void setup_pool_1g_reserved_user(struct machine *m)
{
	m->env.pools[1] = (struct env_hugepool){ 1ull << 30, 1, 1, 1, 0 };
	m->env.euid = 1000;
	m->env.cap_effective = UINT64_C(1) << ENV_CAP_PERFMON;
}

/* No 1 GiB pool directory at all (a CPU without pdpe1gb), in a VM. */
static void setup_no_1g_vm(struct machine *m)
{
	m->env.n_pools = 1;
	snprintf(m->env.hypervisor, sizeof(m->env.hypervisor), "KVM");
}

/* A 1 GiB working set: 512 pages of 2 MiB, one of 1 GiB (the baseline has 128 and 1). */
static void setup_big_working_set(struct machine *m)
{
	m->working_set_bytes = 1ull << 30;
}

static void setup_steal(struct machine *m)
{
	m->steal = (struct env_steal){ 200, 2, 40, 0.05 };
}

static void setup_steal_small(struct machine *m)
{
	m->steal = (struct env_steal){ 200, 0, 400, 0.005 };
}

/*
 * The first write to each populated 4 KiB page: 4.4 µs on a PVM guest here (a
 * trap per page), 1.0 µs at the line, 999 ns under it, 60 ns natively.
 */
static void setup_shadow_pvm(struct machine *m)
{
	kvm_no_pmu(m);
	snprintf(m->env.hypervisor, sizeof(m->env.hypervisor), "bhyve");
	m->env.first_access = (struct env_first_access){ 4096, 4398.0 };
}

static void setup_shadow_line(struct machine *m) { m->env.first_access = (struct env_first_access){ 4096, 1000.0 }; }
static void setup_shadow_under(struct machine *m) { m->env.first_access = (struct env_first_access){ 4096, 999.0 }; }
static void setup_shadow_native(struct machine *m) { m->env.first_access = (struct env_first_access){ 4096, 60.0 }; }

static void setup_powersave_user(struct machine *m)
{
	snprintf(m->env.cpufreq_governor, sizeof(m->env.cpufreq_governor), "powersave");
	m->env.turbo = 1;
	m->env.euid = 1000;
}

static void setup_acpi_boost_root(struct machine *m)
{
	snprintf(m->env.cpufreq_driver, sizeof(m->env.cpufreq_driver), "acpi-cpufreq");
	m->env.turbo = 1;
}

/* libpfm4 knows the PMU but there is no events/<pmu>.events: everything from generic. */
static void setup_no_map(struct machine *m)
{
	m->pmu_name = "icx";
	for (size_t i = 0; i < m->n_counters; i++)
		if (m->counters[i].hardware)
			snprintf(m->counters[i].source, sizeof(m->counters[i].source), "generic");
}

/* Bare metal, libpfm4 knows no PMU and the kernel has none either. */
static void setup_bare_no_pmu(struct machine *m)
{
	kvm_no_pmu(m);
	m->env.hypervisor[0] = '\0';
	snprintf(m->env.tlb.source, sizeof(m->env.tlb.source), "cpuid 0x18");
}

struct diagnose_row {
	int line;
	void (*setup)(struct machine *m);
	const char *ids;		/* the problems expected, in order, comma-separated; "" = none */
	const char *id;			/* a problem whose fix is checked, or NULL */
	const char *command;		/* its exact command ("" = none) */
	const char *advice_has;		/* a phrase of its advice, or NULL */
};

static const struct diagnose_row rows[] = {
	{ __LINE__, setup_none, "", NULL, NULL, NULL },
	{ __LINE__, setup_kvm, "pmu_hidden,nested_paging,tlb_geometry", "pmu_hidden", "", "pmu=on" },
	{ __LINE__, setup_kvm, "pmu_hidden,nested_paging,tlb_geometry", "tlb_geometry", "", "-cpu host" },
	{ __LINE__, setup_kvm_user, "pmu_hidden,perf_event_paranoid,nested_paging,tlb_geometry",
	  "perf_event_paranoid", "sudo sysctl kernel.perf_event_paranoid=1", "cap_perfmon+ep" },
	{ __LINE__, setup_user, "perf_event_paranoid", "perf_event_paranoid", "sudo sysctl kernel.perf_event_paranoid=1",
	  NULL },
	{ __LINE__, setup_perfmon_no_counters, "counters_unavailable", "counters_unavailable", "", "--events-dir" },
	{ __LINE__, setup_user_no_counters, "counters_unavailable,perf_event_paranoid", "perf_event_paranoid",
	  "sudo sysctl kernel.perf_event_paranoid=1", NULL },
	{ __LINE__, setup_denied_in_container, "perf_event_denied", "perf_event_denied", "", "seccomp" },
	{ __LINE__, setup_thp_never, "thp_never", "thp_never",
	  "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled", NULL },
	{ __LINE__, setup_thp_defer_user, "thp_defrag", "thp_defrag",
	  "echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/defrag", NULL },
	{ __LINE__, setup_no_thp, "thp_unavailable", "thp_unavailable", "", "2m:hugetlb" },
	{ __LINE__, setup_pool_short, "hugetlb_pool_2m", "hugetlb_pool_2m",
	  "echo 134 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", NULL },
	{ __LINE__, setup_pool_reserved, "hugetlb_pool_2m", "hugetlb_pool_2m",
	  "echo 228 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", NULL },
	{ __LINE__, setup_pool_reserved_enough, "", NULL, NULL, NULL },
	{ __LINE__, setup_pool_1g_reserved_user, "hugetlb_pool_1g", "hugetlb_pool_1g",
	  "echo 2 | sudo tee /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages", "hugepages=2" },
	{ __LINE__, setup_no_1g_vm, "hugetlb_pool_1g,nested_paging", "hugetlb_pool_1g", "", "-cpu host" },
	{ __LINE__, setup_big_working_set, "hugetlb_pool_2m", "hugetlb_pool_2m",
	  "echo 512 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", NULL },
	{ __LINE__, setup_steal, "steal", "steal", "", "pinned vCPU" },
	{ __LINE__, setup_shadow_pvm, "pmu_hidden,nested_paging,shadow_paging,tlb_geometry", "shadow_paging", "",
	  "EPT/NPT" },
	{ __LINE__, setup_shadow_line, "shadow_paging", "shadow_paging", "", "warm up over every page" },
	{ __LINE__, setup_shadow_under, "", NULL, NULL, NULL },
	{ __LINE__, setup_shadow_native, "", NULL, NULL, NULL },
	{ __LINE__, setup_steal_small, "", NULL, NULL, NULL },
	{ __LINE__, setup_powersave_user, "cpufreq_governor,turbo", "cpufreq_governor",
	  "sudo cpupower frequency-set -g performance", NULL },
	{ __LINE__, setup_powersave_user, "cpufreq_governor,turbo", "turbo",
	  "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo", NULL },
	{ __LINE__, setup_acpi_boost_root, "turbo", "turbo", "echo 0 > /sys/devices/system/cpu/cpufreq/boost", NULL },
	{ __LINE__, setup_no_map, "pmu_no_map", "pmu_no_map", "", "events/icx.events" },
	{ __LINE__, setup_bare_no_pmu, "pmu_unavailable", "pmu_unavailable", "", "libpfm4" },
};

static void diagnose_machine(const struct machine *m, struct diagnosis *d)
{
	struct diagnose_input in = {
		.env = &m->env,
		.pmu_name = m->no_counters ? NULL : m->pmu_name,
		.counters = m->no_counters ? NULL : m->counters,
		.n_counters = m->no_counters ? 0 : m->n_counters,
		.counters_error = m->no_counters ? "generic.events: no such file" : NULL,
		.steal = m->have_steal ? &m->steal : NULL,
		.working_set_bytes = m->working_set_bytes,
	};
	diagnose_environment(&in, d);
}

static void test_rows(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct diagnose_row *r = &rows[i];
		struct machine m;
		struct diagnosis d;
		char got[512] = "";

		machine_baseline(&m);
		r->setup(&m);
		diagnose_machine(&m, &d);
		for (size_t k = 0; k < d.n_problems; k++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", k ? "," : "", d.problems[k].id);
		CHECK_ROW(r->line, strcmp(got, r->ids) == 0, "problems '%s', expected '%s'", got, r->ids);
		for (size_t k = 0; k < d.n_problems; k++) {
			const struct diagnose_problem *p = &d.problems[k];
			CHECK_ROW(r->line, p->message[0] != '\0', "%s: no message", p->id);
			CHECK_ROW(r->line, p->command[0] || p->advice[0], "%s: neither a command nor advice", p->id);
		}
		if (!r->id)
			continue;
		const struct diagnose_problem *p = diagnosis_find(&d, r->id);
		CHECK_ROW(r->line, p != NULL, "no problem %s", r->id);
		if (!p)
			continue;
		CHECK_ROW(r->line, strcmp(p->command, r->command) == 0, "%s: command '%s', expected '%s'", r->id,
			  p->command, r->command);
		if (r->advice_has)
			CHECK_ROW(r->line, strstr(p->advice, r->advice_has) != NULL, "%s: advice '%s' lacks '%s'", r->id,
				  p->advice, r->advice_has);
	}
}

/* shadow_paging's message: the figure, its method, and who maps (no hypervisor named: something below the kernel). */
static void test_shadow_message(void)
{
	struct machine m;
	struct diagnosis d;
	const struct diagnose_problem *p;

	machine_baseline(&m);
	setup_shadow_pvm(&m);
	diagnose_machine(&m, &d);
	p = diagnosis_find(&d, "shadow_paging");
	CHECK(p && p->severity == DIAGNOSE_INFO &&
		      strstr(p->message, "took 4.4 µs (median of 64-page chunks, 4096 pages), a TLB miss well under 1 µs: "
					 "the hypervisor maps each page on first use (shadow paging)") &&
		      strstr(p->message, "even when prefaulted"),
	      "pvm: %s", p ? p->message : "(none)");
	machine_baseline(&m);
	setup_shadow_line(&m);
	diagnose_machine(&m, &d);
	p = diagnosis_find(&d, "shadow_paging");
	CHECK(p && strstr(p->message, "1.0 µs") && strstr(p->message, "something below this kernel maps each page"),
	      "bare: %s", p ? p->message : "(none)");
}

/* What can be measured: the page sizes and the metrics that decide the attribution method. */
static void test_can_measure(void)
{
	struct machine m;
	struct diagnosis d;

	machine_baseline(&m);
	diagnose_machine(&m, &d);
	CHECK(d.tlb_misses && d.walk_cycles && d.hardware_cycles && d.page_faults, "baseline counts everything");
	CHECK(strcmp(d.attribution, "counters") == 0, "attribution %s", d.attribution);
	for (size_t i = 0; i < DIAGNOSE_PAGES; i++)
		CHECK(d.pages[i].available, "baseline page %s: %s", d.pages[i].label, d.pages[i].reason);
	CHECK(strcmp(d.pages[2].label, "2m:hugetlb") == 0 && strcmp(d.pages[3].label, "1g") == 0, "page labels");

	machine_baseline(&m);
	kvm_no_pmu(&m);
	setup_thp_never(&m);
	setup_pool_short(&m);
	diagnose_machine(&m, &d);
	CHECK(!d.tlb_misses && !d.walk_cycles && !d.hardware_cycles && d.page_faults, "KVM counts faults only");
	CHECK(strcmp(d.attribution, "differential") == 0, "attribution %s", d.attribution);
	CHECK(d.pages[0].available && !d.pages[1].available && !d.pages[2].available && d.pages[3].available,
	      "pages 4k %d 2m %d 2m:hugetlb %d 1g %d", d.pages[0].available, d.pages[1].available,
	      d.pages[2].available, d.pages[3].available);
	CHECK(strstr(d.pages[1].reason, "never") != NULL, "2m reason '%s'", d.pages[1].reason);
	CHECK(strstr(d.pages[2].reason, "4 free, 128 needed") != NULL, "2m:hugetlb reason '%s'", d.pages[2].reason);

	/* Reserved pages are not free for a new mapping: env agrees with the runner (region.c). */
	machine_baseline(&m);
	setup_pool_reserved(&m);
	diagnose_machine(&m, &d);
	CHECK(!d.pages[2].available && d.pages[3].available, "reserved 2m pool: 2m:hugetlb %d 1g %d",
	      d.pages[2].available, d.pages[3].available);
	CHECK(strcmp(d.pages[2].reason, "pool: 28 unreserved of 128 free, 128 needed for --size 256M") == 0,
	      "reserved pool reason '%s'", d.pages[2].reason);
	const struct diagnose_problem *pool = diagnosis_find(&d, "hugetlb_pool_2m");
	CHECK(pool && strstr(pool->message, "128 free of 128 pages (100 of them reserved by other mappings)") &&
		      strstr(pool->message, "needs 128 unreserved"),
	      "reserved pool message '%s'", pool ? pool->message : "(none)");
	machine_baseline(&m);
	setup_pool_reserved_enough(&m);
	diagnose_machine(&m, &d);
	CHECK(d.pages[2].available && strcmp(d.pages[2].reason, "pool: 200 unreserved of 300 free") == 0,
	      "enough unreserved: %d '%s'", d.pages[2].available, d.pages[2].reason);

	/* A multiplexed event still counts (scaled). */
	machine_baseline(&m);
	m.counters[METRIC_DTLB_LOAD_MISSES].status = COUNTER_MULTIPLEXED;
	diagnose_machine(&m, &d);
	CHECK(d.tlb_misses && d.n_problems == 0, "multiplexed dTLB misses: %d, %zu problems", d.tlb_misses,
	      d.n_problems);
}

/* Every severity has a name, and a problem list that would overflow stops at the cap. */
static void test_names(void)
{
	CHECK(strcmp(diagnose_severity_name(DIAGNOSE_WARN), "warn") == 0, "warn");
	CHECK(strcmp(diagnose_severity_name(DIAGNOSE_INFO), "info") == 0, "info");

	struct machine m;
	struct diagnosis d;
	machine_baseline(&m);
	kvm_no_pmu(&m);
	unprivileged(&m);
	setup_no_thp(&m);
	m.env.n_pools = 0;
	setup_steal(&m);
	snprintf(m.env.cpufreq_governor, sizeof(m.env.cpufreq_governor), "powersave");
	m.env.turbo = 1;
	diagnose_machine(&m, &d);
	CHECK(d.n_problems == 10 && d.n_problems <= DIAGNOSE_MAX_PROBLEMS, "%zu problems on the worst machine",
	      d.n_problems);
	CHECK(diagnosis_find(&d, "no_such_problem") == NULL, "find of an unknown id");
}

/* The one definition of a pool's usable pages (shared with the runner's check in region.c). */
static void test_pool_unreserved(void)
{
	static const struct {
		int line;
		struct env_hugepool pool;
		uint64_t need, unreserved, target;
	} pool_rows[] = {
		{ __LINE__, { 2ull << 20, 10, 4, 0, 0 }, 128, 4, 134 },
		{ __LINE__, { 2ull << 20, 128, 128, 100, 0 }, 128, 28, 228 },
		{ __LINE__, { 2ull << 20, 300, 300, 100, 0 }, 128, 200, 300 },
		/* More reserved than free cannot happen, but a racy read must not wrap around. */
		{ __LINE__, { 2ull << 20, 8, 2, 5, 0 }, 4, 0, 12 },
		/* Unreadable counts (-1): nothing usable, the target from zero. */
		{ __LINE__, { 2ull << 20, -1, -1, -1, -1 }, 3, 0, 3 },
		{ __LINE__, { 1ull << 30, 1, 1, 1, 0 }, 1, 0, 2 },
	};

	for (size_t i = 0; i < sizeof(pool_rows) / sizeof(pool_rows[0]); i++) {
		uint64_t u = environment_pool_unreserved(&pool_rows[i].pool), t = environment_pool_target(&pool_rows[i].pool, pool_rows[i].need);
		CHECK_ROW(pool_rows[i].line, u == pool_rows[i].unreserved, "unreserved %llu, expected %llu", (unsigned long long)u,
			  (unsigned long long)pool_rows[i].unreserved);
		CHECK_ROW(pool_rows[i].line, t == pool_rows[i].target, "target %llu, expected %llu", (unsigned long long)t,
			  (unsigned long long)pool_rows[i].target);
	}
	CHECK(environment_pool_unreserved(NULL) == 0 && environment_pool_target(NULL, 5) == 5, "NULL pool");
}

int main(void)
{
	test_pool_unreserved();
	test_rows();
	test_shadow_message();
	test_can_measure();
	test_names();
	return check_finish();
}
