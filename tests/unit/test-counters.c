/* SPDX-License-Identifier: MIT */
/* Unit tests for counters: golden encodings per PMU model, map parsing and fallback, scaling, and a live run of software events. */

/*
 * The map directory under test comes from $TLBPROF_TEST_EVENTS_DIR, else
 * argv[1], else "events" (relative to the working directory).
 *
 * libpfm4 state is process-global and reads LIBPFM_FORCE_PMU only at its
 * first initialisation, so every test that creates a counter set runs in a
 * forked child with its own environment; the child sends its check counts
 * back through a pipe.
 */

#include "check.h"
#include "pmu/backend.h"
#include "pmu/counter_set.h"
#include "pmu/counters.h"
#include "pmu/paranoid.h"
#include "pmu/perf_open.h"

#include <errno.h>
#include <grp.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct test_ctx {
	const char *events_dir;	/* the real maps under test */
	char tmp_dir[64];	/* scratch directory for hand-written maps */
};

/* ---- running a test in a child ---------------------------------------- */

/*
 * Run fn(ctx) in a child with LIBPFM_FORCE_PMU = force_pmu (NULL: unset) and
 * LIBPFM_ENCODE_INACTIVE set or unset, and add its checks to ours.
 */
static void run_child(const char *what, const char *force_pmu, bool encode_inactive,
		      void (*fn)(const struct test_ctx *), const struct test_ctx *ctx)
{
	int pipefd[2];
	if (pipe(pipefd) < 0) {
		CHECK(0, "%s: pipe: %s", what, strerror(errno));
		return;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		CHECK(0, "%s: fork: %s", what, strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return;
	}
	if (pid == 0) {
		close(pipefd[0]);
		if (force_pmu)
			setenv("LIBPFM_FORCE_PMU", force_pmu, 1);
		else
			unsetenv("LIBPFM_FORCE_PMU");
		if (encode_inactive)
			setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
		else
			unsetenv("LIBPFM_ENCODE_INACTIVE");
		check_count = 0;
		check_failures = 0;
		fn(ctx);
		int counts[2] = { check_count, check_failures };
		ssize_t w = write(pipefd[1], counts, sizeof(counts));
		fflush(stderr);
		_exit(w == (ssize_t)sizeof(counts) ? 0 : 2);
	}
	close(pipefd[1]);
	int counts[2] = { 0, 0 };
	ssize_t r = read(pipefd[0], counts, sizeof(counts));
	close(pipefd[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	CHECK(r == (ssize_t)sizeof(counts) && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "%s: child died (status %#x)", what, status);
	check_count += counts[0];
	check_failures += counts[1];
	fprintf(stderr, "  %-40s %3d checks, %d failed\n", what, counts[0], counts[1]);
}

static const struct counter_info *find_info(const struct counter_set *set, enum metric m)
{
	for (size_t i = 0; i < counter_set_size(set); i++)
		if (counter_set_info(set, i)->metric == m)
			return counter_set_info(set, i);
	return NULL;
}

static ssize_t find_index(const struct counter_set *set, enum metric m)
{
	for (size_t i = 0; i < counter_set_size(set); i++)
		if (counter_set_info(set, i)->metric == m)
			return (ssize_t)i;
	return -1;
}

/* ---- pure functions --------------------------------------------------- */

/*
 * The one classification of perf_event_open errors (counters and sampler):
 * class and the meaning in the reason. A denial names the level and the fix
 * for the level the caller asks for, sudo unless root.
 */
static void test_open_errors(void)
{
	static const struct {
		int line, err;
		enum perf_open_class class;
		const char *reason_has;
	} rows[] = {
		{ __LINE__, EACCES, PERF_OPEN_DENIED, "kernel.perf_event_paranoid=1' or CAP_PERFMON)" },
		{ __LINE__, EPERM, PERF_OPEN_DENIED, "(perf_event_paranoid=" },
		{ __LINE__, ENOENT, PERF_OPEN_UNSUPPORTED, "(the event is not supported here" },
		{ __LINE__, ENODEV, PERF_OPEN_UNSUPPORTED, "hypervisor hides the PMU)" },
		{ __LINE__, EOPNOTSUPP, PERF_OPEN_UNSUPPORTED, "not supported here" },
		{ __LINE__, EINVAL, PERF_OPEN_ERROR, "the kernel rejects the event's attributes" },
		{ __LINE__, ESRCH, PERF_OPEN_ERROR, "no such process" },
		{ __LINE__, ENOSYS, PERF_OPEN_ERROR, "perf_event_open is not available" },
		{ __LINE__, EBUSY, PERF_OPEN_ERROR, "(perf_event_open failed)" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char reason[256];
		enum perf_open_class class = perf_open_classify(rows[i].err, 1, reason, sizeof(reason));
		CHECK_ROW(rows[i].line, class == rows[i].class, "class %d", (int)class);
		CHECK_ROW(rows[i].line, perf_open_classify(rows[i].err, 1, NULL, 0) == class, "class without a reason");
		/* "<strerror> (<what it means>)" */
		CHECK_ROW(rows[i].line, strstr(reason, strerror(rows[i].err)) == reason, "reason '%s'", reason);
		CHECK_ROW(rows[i].line, strstr(reason, rows[i].reason_has), "reason '%s'", reason);
	}
	char fix[64], reason[256], level[16];
	paranoid_fix(2, false, fix, sizeof(fix));
	CHECK(strcmp(fix, "sudo sysctl kernel.perf_event_paranoid=2") == 0, "fix '%s'", fix);
	paranoid_fix(1, true, fix, sizeof(fix));
	CHECK(strcmp(fix, "sysctl kernel.perf_event_paranoid=1") == 0, "root fix '%s'", fix);
	perf_open_classify(EACCES, 2, reason, sizeof(reason));
	const char *level2 = geteuid() == 0 ? "'sysctl kernel.perf_event_paranoid=2'"
					    : "'sudo sysctl kernel.perf_event_paranoid=2'";
	CHECK(strstr(reason, level2), "level 2 fix: '%s'", reason);
	paranoid_level_text(PARANOID_UNKNOWN, level, sizeof(level));
	CHECK(strcmp(level, "unknown") == 0, "unknown level '%s'", level);
	paranoid_level_text(-1, level, sizeof(level));
	CHECK(strcmp(level, "-1") == 0, "level -1 '%s'", level);
	CHECK(paranoid_level() == paranoid_level(), "the level is read once");
}

static void test_metric_names(void)
{
	static const char *const expected[METRIC_COUNT] = {
		[METRIC_DTLB_LOADS] = "dtlb_loads",
		[METRIC_DTLB_LOAD_MISSES] = "dtlb_load_misses",
		[METRIC_PAGE_FAULTS] = "page_faults",
		[METRIC_MINOR_FAULTS] = "minor_faults",
		[METRIC_MAJOR_FAULTS] = "major_faults",
		[METRIC_CYCLES] = "cycles",
		[METRIC_INSTRUCTIONS] = "instructions",
		[METRIC_LLC_LOAD_MISSES] = "llc_load_misses",
		[METRIC_WALK_ACTIVE] = "walk_active",
		[METRIC_WALK_COMPLETED] = "walk_completed",
		[METRIC_STLB_HITS] = "stlb_hits",
		[METRIC_TASK_CLOCK] = "task_clock",
		[METRIC_CONTEXT_SWITCHES] = "context_switches",
		[METRIC_CPU_MIGRATIONS] = "cpu_migrations",
	};
	for (int m = 0; m < METRIC_COUNT; m++) {
		const char *name = metric_name((enum metric)m);
		CHECK(name && strcmp(name, expected[m]) == 0, "metric %d: '%s' vs '%s'", m,
		      name ? name : "(null)", expected[m]);
		CHECK(metric_from_name(expected[m]) == m, "round trip of '%s'", expected[m]);
	}
	CHECK(metric_name(METRIC_COUNT) == NULL, "out of range metric has a name");
	CHECK(metric_name((enum metric)-1) == NULL, "negative metric has a name");
	CHECK(metric_from_name("dtlb-load-misses") == -1, "display names are not keys");
	CHECK(metric_from_name("") == -1, "empty name");
	CHECK(metric_from_name(NULL) == -1, "NULL name");

	CHECK(strcmp(counter_status_name(COUNTER_OK), "ok") == 0, "ok");
	CHECK(strcmp(counter_status_name(COUNTER_UNSUPPORTED), "unsupported") == 0, "unsupported");
	CHECK(strcmp(counter_status_name(COUNTER_DENIED), "denied") == 0, "denied");
	CHECK(strcmp(counter_status_name(COUNTER_MULTIPLEXED), "multiplexed") == 0, "multiplexed");
	CHECK(strcmp(counter_status_name(COUNTER_ERROR), "error") == 0, "error");

	CHECK(counters_default_events_dir() && counters_default_events_dir()[0],
	      "default events dir is empty");
}

static void test_scale(void)
{
	static const struct {
		int line;
		uint64_t value, enabled, running;
		double scaled;
		bool multiplexed;
	} rows[] = {
		{ __LINE__, 1000, 5000, 5000, 1000.0, false },	/* counted all the time */
		{ __LINE__, 1000, 5000, 2500, 2000.0, true },	/* 50 % of the time */
		{ __LINE__, 300, 4000, 1000, 1200.0, true },	/* 25 % */
		{ __LINE__, 1000, 5000, 0, 0.0, false },	/* never counted */
		{ __LINE__, 0, 0, 0, 0.0, false },		/* never enabled */
		{ __LINE__, 7, 100, 101, 7.0, false },		/* running > enabled: clock skew, no scaling */
		{ __LINE__, UINT64_C(1) << 40, 3000, 1000, 3.0 * (double)(UINT64_C(1) << 40), true },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		bool mux = !rows[i].multiplexed;
		double s = counter_scale(rows[i].value, rows[i].enabled, rows[i].running, &mux);
		CHECK_ROW(rows[i].line, fabs(s - rows[i].scaled) <= 1e-9 * (1.0 + rows[i].scaled),
			  "scaled %g, expected %g", s, rows[i].scaled);
		CHECK_ROW(rows[i].line, mux == rows[i].multiplexed, "multiplexed %d", mux);
		/* The flag is optional. */
		CHECK_ROW(rows[i].line, counter_scale(rows[i].value, rows[i].enabled, rows[i].running, NULL) == s,
			  "differs without the flag");
	}
}

/* ---- golden encodings ------------------------------------------------- */

/*
 * Expected perf_event_attr.config, written from the vendors' documents, not
 * from libpfm4's output:
 * - Intel (SDM vol. 3B, IA32_PERFEVTSELx): event select in bits 0-7, unit mask
 *   in bits 8-15, counter mask in bits 24-31 (USR/OS/EN are not in config:
 *   perf_event sets them from exclude_* itself).
 * - AMD (PPR, PERF_CTLx): event select bits 0-7 and 11:8 of it in bits 32-35,
 *   unit mask in bits 8-15.
 * - PERF_TYPE_HW_CACHE: cache id | op << 8 | result << 16.
 */
#define INTEL(ev, umask, cmask) \
	((uint64_t)(ev) | (uint64_t)(umask) << 8 | (uint64_t)(cmask) << 24)
#define AMD(ev, umask) \
	(((uint64_t)(ev) & 0xff) | (((uint64_t)(ev) >> 8) & 0xf) << 32 | (uint64_t)(umask) << 8)
#define HW_CACHE(id, op, result) ((uint64_t)(id) | (uint64_t)(op) << 8 | (uint64_t)(result) << 16)

struct golden_row {
	int line;
	const char *pmu;	/* LIBPFM_FORCE_PMU */
	enum metric metric;
	const char *event;	/* expected map entry; "" = no map has one */
	const char *source;	/* expected map; "" = unresolved */
	uint32_t type;
	uint64_t config;
};

#define RAW(pmu, m, event, config) { __LINE__, pmu, m, pmu "::" event, pmu, PERF_TYPE_RAW, config }
#define GEN(pmu, m, event, type, config) { __LINE__, pmu, m, "perf::" event, "generic", type, config }
#define MISSING(pmu, m) { __LINE__, pmu, m, "", "", 0, 0 }

static const struct golden_row golden[] = {
	/* Intel Skylake-SP: DTLB_LOAD_MISSES is event 0x08. */
	RAW("skx", METRIC_CYCLES, "UNHALTED_CORE_CYCLES", INTEL(0x3c, 0x00, 0)),
	RAW("skx", METRIC_INSTRUCTIONS, "INSTRUCTION_RETIRED", INTEL(0xc0, 0x00, 0)),
	RAW("skx", METRIC_DTLB_LOADS, "MEM_INST_RETIRED:ALL_LOADS", INTEL(0xd0, 0x81, 0)),
	RAW("skx", METRIC_DTLB_LOAD_MISSES, "DTLB_LOAD_MISSES:WALK_COMPLETED", INTEL(0x08, 0x0e, 0)),
	RAW("skx", METRIC_WALK_COMPLETED, "DTLB_LOAD_MISSES:WALK_COMPLETED", INTEL(0x08, 0x0e, 0)),
	RAW("skx", METRIC_WALK_ACTIVE, "DTLB_LOAD_MISSES:WALK_ACTIVE", INTEL(0x08, 0x10, 1)),
	RAW("skx", METRIC_STLB_HITS, "DTLB_LOAD_MISSES:STLB_HIT", INTEL(0x08, 0x20, 0)),
	RAW("skx", METRIC_LLC_LOAD_MISSES, "MEM_LOAD_RETIRED:L3_MISS", INTEL(0xd1, 0x20, 0)),

	/* Intel Skylake client: same core events as Skylake-SP. */
	RAW("skl", METRIC_CYCLES, "UNHALTED_CORE_CYCLES", INTEL(0x3c, 0x00, 0)),
	RAW("skl", METRIC_INSTRUCTIONS, "INSTRUCTION_RETIRED", INTEL(0xc0, 0x00, 0)),
	RAW("skl", METRIC_DTLB_LOADS, "MEM_INST_RETIRED:ALL_LOADS", INTEL(0xd0, 0x81, 0)),
	RAW("skl", METRIC_DTLB_LOAD_MISSES, "DTLB_LOAD_MISSES:WALK_COMPLETED", INTEL(0x08, 0x0e, 0)),
	RAW("skl", METRIC_WALK_COMPLETED, "DTLB_LOAD_MISSES:WALK_COMPLETED", INTEL(0x08, 0x0e, 0)),
	RAW("skl", METRIC_WALK_ACTIVE, "DTLB_LOAD_MISSES:WALK_ACTIVE", INTEL(0x08, 0x10, 1)),
	RAW("skl", METRIC_STLB_HITS, "DTLB_LOAD_MISSES:STLB_HIT", INTEL(0x08, 0x20, 0)),
	RAW("skl", METRIC_LLC_LOAD_MISSES, "MEM_LOAD_RETIRED:L3_MISS", INTEL(0xd1, 0x20, 0)),

	/* Intel Ice Lake SP. */
	RAW("icx", METRIC_CYCLES, "UNHALTED_CORE_CYCLES", INTEL(0x3c, 0x00, 0)),
	RAW("icx", METRIC_INSTRUCTIONS, "INSTRUCTION_RETIRED", INTEL(0xc0, 0x00, 0)),
	RAW("icx", METRIC_DTLB_LOADS, "MEM_INST_RETIRED:ALL_LOADS", INTEL(0xd0, 0x81, 0)),
	RAW("icx", METRIC_DTLB_LOAD_MISSES, "DTLB_LOAD_MISSES:WALK_COMPLETED", INTEL(0x08, 0x0e, 0)),
	RAW("icx", METRIC_WALK_COMPLETED, "DTLB_LOAD_MISSES:WALK_COMPLETED", INTEL(0x08, 0x0e, 0)),
	RAW("icx", METRIC_WALK_ACTIVE, "DTLB_LOAD_MISSES:WALK_ACTIVE", INTEL(0x08, 0x10, 1)),
	RAW("icx", METRIC_STLB_HITS, "DTLB_LOAD_MISSES:STLB_HIT", INTEL(0x08, 0x20, 0)),
	RAW("icx", METRIC_LLC_LOAD_MISSES, "MEM_LOAD_RETIRED:L3_MISS", INTEL(0xd1, 0x20, 0)),

	/* Intel Ice Lake client. */
	RAW("icl", METRIC_CYCLES, "UNHALTED_CORE_CYCLES", INTEL(0x3c, 0x00, 0)),
	RAW("icl", METRIC_INSTRUCTIONS, "INSTRUCTION_RETIRED", INTEL(0xc0, 0x00, 0)),
	RAW("icl", METRIC_DTLB_LOADS, "MEM_INST_RETIRED:ALL_LOADS", INTEL(0xd0, 0x81, 0)),
	RAW("icl", METRIC_DTLB_LOAD_MISSES, "DTLB_LOAD_MISSES:WALK_COMPLETED", INTEL(0x08, 0x0e, 0)),
	RAW("icl", METRIC_WALK_COMPLETED, "DTLB_LOAD_MISSES:WALK_COMPLETED", INTEL(0x08, 0x0e, 0)),
	RAW("icl", METRIC_WALK_ACTIVE, "DTLB_LOAD_MISSES:WALK_ACTIVE", INTEL(0x08, 0x10, 1)),
	RAW("icl", METRIC_STLB_HITS, "DTLB_LOAD_MISSES:STLB_HIT", INTEL(0x08, 0x20, 0)),
	RAW("icl", METRIC_LLC_LOAD_MISSES, "MEM_LOAD_RETIRED:L3_MISS", INTEL(0xd1, 0x20, 0)),

	/* Intel Sapphire Rapids: DTLB_LOAD_MISSES moved to event 0x12. */
	RAW("spr", METRIC_CYCLES, "UNHALTED_CORE_CYCLES", INTEL(0x3c, 0x00, 0)),
	RAW("spr", METRIC_INSTRUCTIONS, "INSTRUCTION_RETIRED", INTEL(0xc0, 0x00, 0)),
	RAW("spr", METRIC_DTLB_LOADS, "MEM_INST_RETIRED:ALL_LOADS", INTEL(0xd0, 0x81, 0)),
	RAW("spr", METRIC_DTLB_LOAD_MISSES, "DTLB_LOAD_MISSES:WALK_COMPLETED", INTEL(0x12, 0x0e, 0)),
	RAW("spr", METRIC_WALK_COMPLETED, "DTLB_LOAD_MISSES:WALK_COMPLETED", INTEL(0x12, 0x0e, 0)),
	RAW("spr", METRIC_WALK_ACTIVE, "DTLB_LOAD_MISSES:WALK_ACTIVE", INTEL(0x12, 0x10, 1)),
	RAW("spr", METRIC_STLB_HITS, "DTLB_LOAD_MISSES:STLB_HIT", INTEL(0x12, 0x20, 0)),
	RAW("spr", METRIC_LLC_LOAD_MISSES, "MEM_LOAD_RETIRED:L3_MISS", INTEL(0xd1, 0x20, 0)),

	/*
	 * AMD Zen 2: L1 DTLB miss 0x45 (umask 0x0f: L2 DTLB hit, 0xf0: L2 DTLB
	 * miss), LS dispatch 0x29 (0x01 loads), demand fills by source 0x43
	 * (0x08 local DRAM, 0x10 remote cache, 0x40 remote DRAM). No walk-cycle
	 * event.
	 */
	RAW("amd64_fam17h_zen2", METRIC_CYCLES, "CYCLES_NOT_IN_HALT", AMD(0x76, 0x00)),
	RAW("amd64_fam17h_zen2", METRIC_INSTRUCTIONS, "RETIRED_INSTRUCTIONS", AMD(0xc0, 0x00)),
	RAW("amd64_fam17h_zen2", METRIC_DTLB_LOADS, "LS_DISPATCH:LD_DISPATCH", AMD(0x29, 0x01)),
	RAW("amd64_fam17h_zen2", METRIC_DTLB_LOAD_MISSES, "L1_DTLB_MISS:TLB_RELOAD_4K_L2_MISS:TLB_RELOAD_COALESCED_PAGE_MISS:TLB_RELOAD_2M_L2_MISS:TLB_RELOAD_1G_L2_MISS", AMD(0x45, 0xf0)),
	RAW("amd64_fam17h_zen2", METRIC_WALK_COMPLETED, "L1_DTLB_MISS:TLB_RELOAD_4K_L2_MISS:TLB_RELOAD_COALESCED_PAGE_MISS:TLB_RELOAD_2M_L2_MISS:TLB_RELOAD_1G_L2_MISS", AMD(0x45, 0xf0)),
	MISSING("amd64_fam17h_zen2", METRIC_WALK_ACTIVE),
	RAW("amd64_fam17h_zen2", METRIC_STLB_HITS, "L1_DTLB_MISS:TLB_RELOAD_4K_L2_HIT:TLB_RELOAD_COALESCED_PAGE_HIT:TLB_RELOAD_2M_L2_HIT:TLB_RELOAD_1G_L2_HIT", AMD(0x45, 0x0f)),
	RAW("amd64_fam17h_zen2", METRIC_LLC_LOAD_MISSES, "DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_LCL_DRAM:LS_MABRESP_RMT_CACHE:LS_MABRESP_RMT_DRAM", AMD(0x43, 0x58)),

	/* AMD Zen 3: fills by source 0x43 (0x04|0x08|0x10|0x40: beyond this CCX). */
	RAW("amd64_fam19h_zen3", METRIC_CYCLES, "CYCLES_NOT_IN_HALT", AMD(0x76, 0x00)),
	RAW("amd64_fam19h_zen3", METRIC_INSTRUCTIONS, "RETIRED_INSTRUCTIONS", AMD(0xc0, 0x00)),
	RAW("amd64_fam19h_zen3", METRIC_DTLB_LOADS, "LS_DISPATCH:LD_DISPATCH", AMD(0x29, 0x01)),
	RAW("amd64_fam19h_zen3", METRIC_DTLB_LOAD_MISSES, "L1_DTLB_MISS:TLB_RELOAD_4K_L2_MISS:TLB_RELOAD_COALESCED_PAGE_MISS:TLB_RELOAD_2M_L2_MISS:TLB_RELOAD_1G_L2_MISS", AMD(0x45, 0xf0)),
	RAW("amd64_fam19h_zen3", METRIC_WALK_COMPLETED, "L1_DTLB_MISS:TLB_RELOAD_4K_L2_MISS:TLB_RELOAD_COALESCED_PAGE_MISS:TLB_RELOAD_2M_L2_MISS:TLB_RELOAD_1G_L2_MISS", AMD(0x45, 0xf0)),
	MISSING("amd64_fam19h_zen3", METRIC_WALK_ACTIVE),
	RAW("amd64_fam19h_zen3", METRIC_STLB_HITS, "L1_DTLB_MISS:TLB_RELOAD_4K_L2_HIT:TLB_RELOAD_COALESCED_PAGE_HIT:TLB_RELOAD_2M_L2_HIT:TLB_RELOAD_1G_L2_HIT", AMD(0x45, 0x0f)),
	RAW("amd64_fam19h_zen3", METRIC_LLC_LOAD_MISSES, "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:EXT_CACHE_LCL:MEM_IO_LCL:EXT_CACHE_RMT:MEM_IO_RMT", AMD(0x43, 0x5c)),

	/* AMD Zen 4: as Zen 3, plus 0x80 fills from extension memory (CXL). */
	RAW("amd64_fam19h_zen4", METRIC_CYCLES, "CYCLES_NOT_IN_HALT", AMD(0x76, 0x00)),
	RAW("amd64_fam19h_zen4", METRIC_INSTRUCTIONS, "RETIRED_INSTRUCTIONS", AMD(0xc0, 0x00)),
	RAW("amd64_fam19h_zen4", METRIC_DTLB_LOADS, "LS_DISPATCH:LD_DISPATCH", AMD(0x29, 0x01)),
	RAW("amd64_fam19h_zen4", METRIC_DTLB_LOAD_MISSES, "L1_DTLB_MISS:TLB_RELOAD_4K_L2_MISS:TLB_RELOAD_COALESCED_PAGE_MISS:TLB_RELOAD_2M_L2_MISS:TLB_RELOAD_1G_L2_MISS", AMD(0x45, 0xf0)),
	RAW("amd64_fam19h_zen4", METRIC_WALK_COMPLETED, "L1_DTLB_MISS:TLB_RELOAD_4K_L2_MISS:TLB_RELOAD_COALESCED_PAGE_MISS:TLB_RELOAD_2M_L2_MISS:TLB_RELOAD_1G_L2_MISS", AMD(0x45, 0xf0)),
	MISSING("amd64_fam19h_zen4", METRIC_WALK_ACTIVE),
	RAW("amd64_fam19h_zen4", METRIC_STLB_HITS, "L1_DTLB_MISS:TLB_RELOAD_4K_L2_HIT:TLB_RELOAD_COALESCED_PAGE_HIT:TLB_RELOAD_2M_L2_HIT:TLB_RELOAD_1G_L2_HIT", AMD(0x45, 0x0f)),
	RAW("amd64_fam19h_zen4", METRIC_LLC_LOAD_MISSES, "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:NEAR_CACHE_NEAR_FAR:DRAM_IO_NEAR:FAR_CACHE_NEAR_FAR:DRAM_IO_FAR:ALT_MEM_NEAR_FAR", AMD(0x43, 0xdc)),

	/*
	 * No core PMU (forcing libpfm4's "perf" PMU): the hardware metrics come
	 * from generic.events as the kernel's generic events; the TLB-walk ones
	 * have no generic event.
	 */
	GEN("perf", METRIC_CYCLES, "PERF_COUNT_HW_CPU_CYCLES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES),
	GEN("perf", METRIC_INSTRUCTIONS, "PERF_COUNT_HW_INSTRUCTIONS", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS),
	GEN("perf", METRIC_DTLB_LOADS, "PERF_COUNT_HW_CACHE_DTLB:READ:ACCESS", PERF_TYPE_HW_CACHE,
	    HW_CACHE(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS)),
	GEN("perf", METRIC_DTLB_LOAD_MISSES, "PERF_COUNT_HW_CACHE_DTLB:READ:MISS", PERF_TYPE_HW_CACHE,
	    HW_CACHE(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)),
	GEN("perf", METRIC_LLC_LOAD_MISSES, "PERF_COUNT_HW_CACHE_LL:READ:MISS", PERF_TYPE_HW_CACHE,
	    HW_CACHE(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)),
	MISSING("perf", METRIC_WALK_ACTIVE),
	MISSING("perf", METRIC_WALK_COMPLETED),
	MISSING("perf", METRIC_STLB_HITS),
};

/* Software metrics: from generic.events for every PMU (the pmu field is unused). */
static const struct golden_row golden_software[] = {
	GEN("", METRIC_PAGE_FAULTS, "PERF_COUNT_SW_PAGE_FAULTS", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS),
	GEN("", METRIC_MINOR_FAULTS, "PERF_COUNT_SW_PAGE_FAULTS_MIN", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN),
	GEN("", METRIC_MAJOR_FAULTS, "PERF_COUNT_SW_PAGE_FAULTS_MAJ", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ),
	GEN("", METRIC_TASK_CLOCK, "PERF_COUNT_SW_TASK_CLOCK", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK),
	GEN("", METRIC_CONTEXT_SWITCHES, "PERF_COUNT_SW_CONTEXT_SWITCHES", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES),
	GEN("", METRIC_CPU_MIGRATIONS, "PERF_COUNT_SW_CPU_MIGRATIONS", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS),
};

static const char *const golden_pmus[] = {
	"skx", "skl", "icx", "icl", "spr",
	"amd64_fam17h_zen2", "amd64_fam19h_zen3", "amd64_fam19h_zen4", "perf",
};

static const struct {
	enum metric metric;
	const char *display;
} display_names[] = {
	{ METRIC_DTLB_LOADS, "dTLB-loads" },
	{ METRIC_DTLB_LOAD_MISSES, "dTLB-load-misses" },
	{ METRIC_PAGE_FAULTS, "page-faults" },
	{ METRIC_MINOR_FAULTS, "minor-faults" },
	{ METRIC_MAJOR_FAULTS, "major-faults" },
	{ METRIC_CYCLES, "cycles" },
	{ METRIC_INSTRUCTIONS, "instructions" },
	{ METRIC_LLC_LOAD_MISSES, "LLC-load-misses" },
	{ METRIC_WALK_ACTIVE, "walk-active" },
	{ METRIC_WALK_COMPLETED, "walk-completed" },
	{ METRIC_STLB_HITS, "stlb-hits" },
	{ METRIC_TASK_CLOCK, "task-clock" },
	{ METRIC_CONTEXT_SWITCHES, "context-switches" },
	{ METRIC_CPU_MIGRATIONS, "cpu-migrations" },
};

static void check_row(const struct counter_set *set, const struct golden_row *row, const char *pmu)
{
	const struct counter_info *info = find_info(set, row->metric);
	CHECK_ROW(row->line, info != NULL, "[%s] %s missing from the set", pmu, metric_name(row->metric));
	if (!info)
		return;
	const char *m = metric_name(row->metric);
	CHECK_ROW(row->line, strcmp(info->event, row->event) == 0, "[%s] %s event '%s', expected '%s'",
		  pmu, m, info->event, row->event);
	CHECK_ROW(row->line, strcmp(info->source, row->source) == 0, "[%s] %s source '%s', expected '%s'",
		  pmu, m, info->source, row->source);
	if (row->source[0] == '\0') {
		CHECK_ROW(row->line, info->status == COUNTER_UNSUPPORTED && strstr(info->reason, "no event for"),
			  "[%s] %s: status %s, reason '%s'", pmu, m, counter_status_name(info->status),
			  info->reason);
		CHECK_ROW(row->line, info->hardware, "[%s] %s: unresolved hardware metric not marked hardware", pmu, m);
		return;
	}
	CHECK_ROW(row->line, info->status == COUNTER_OK, "[%s] %s: status %s (%s)", pmu, m,
		  counter_status_name(info->status), info->reason);
	CHECK_ROW(row->line, info->type == row->type, "[%s] %s type %u, expected %u", pmu, m, info->type,
		  row->type);
	CHECK_ROW(row->line, info->config == row->config, "[%s] %s config %#llx, expected %#llx", pmu, m,
		  (unsigned long long)info->config, (unsigned long long)row->config);
	CHECK_ROW(row->line, info->hardware == (row->type != PERF_TYPE_SOFTWARE), "[%s] %s hardware flag %d",
		  pmu, m, info->hardware);
}

static void golden_for_pmu(const struct test_ctx *ctx)
{
	const char *pmu = getenv("LIBPFM_FORCE_PMU");
	struct counter_set *set = NULL;
	char err[256];
	int ret = counter_set_new(&set, ctx->events_dir, NULL, err, sizeof(err));
	CHECK(ret == 0 && set, "[%s] counter_set_new: %d %s", pmu, ret, err);
	if (!set)
		return;

	const char *expected_name = strcmp(pmu, "perf") == 0 ? "none" : pmu;
	CHECK(strcmp(counter_set_pmu_name(set), expected_name) == 0, "[%s] PMU '%s'", pmu,
	      counter_set_pmu_name(set));
	CHECK(counter_set_pmu_desc(set)[0] != '\0', "[%s] empty PMU description", pmu);
	CHECK(counter_set_size(set) == METRIC_COUNT, "[%s] %zu events", pmu, counter_set_size(set));

	/* Every metric is covered by exactly one row, and the set is in metric order. */
	int rows_for[METRIC_COUNT] = { 0 };
	for (size_t i = 0; i < sizeof(golden) / sizeof(golden[0]); i++) {
		if (strcmp(golden[i].pmu, pmu) != 0)
			continue;
		rows_for[golden[i].metric]++;
		check_row(set, &golden[i], pmu);
	}
	for (size_t i = 0; i < sizeof(golden_software) / sizeof(golden_software[0]); i++) {
		rows_for[golden_software[i].metric]++;
		check_row(set, &golden_software[i], pmu);
	}
	for (int m = 0; m < METRIC_COUNT; m++) {
		CHECK(rows_for[m] == 1, "[%s] %d golden rows for %s", pmu, rows_for[m], metric_name((enum metric)m));
		const struct counter_info *info = counter_set_info(set, (size_t)m);
		CHECK(info && info->metric == (enum metric)m, "[%s] event %d out of metric order", pmu, m);
	}
	for (size_t i = 0; i < sizeof(display_names) / sizeof(display_names[0]); i++) {
		const struct counter_info *info = find_info(set, display_names[i].metric);
		CHECK(info && strcmp(info->name, display_names[i].display) == 0, "[%s] display name '%s'",
		      pmu, info ? info->name : "(missing)");
	}
	/*
	 * The precise dTLB-miss sampling event: Intel's MEM_INST_RETIRED.STLB_MISS_LOADS
	 * (event 0xd0, umask 0x11) as a raw event with precise_ip 2 (PEBS); AMD's
	 * equivalent is IBS, a PMU of its own, so its maps have none.
	 */
	struct counter_sample_event se;
	char why[320] = "";
	int src = counter_set_sample_event(set, &se, why, sizeof(why));
	if (strncmp(pmu, "amd64", 5) == 0 || strcmp(pmu, "perf") == 0) {
		CHECK(src == -ENOENT && *why, "[%s] no sampling event expected: %d %s", pmu, src, why);
	} else {
		CHECK(src == 0, "[%s] sampling event: %d %s", pmu, src, why);
		CHECK(src != 0 || (se.type == PERF_TYPE_RAW && (se.config & 0xffff) == 0x11d0 && se.precise_ip == 2),
		      "[%s] sampling event type %u config %#llx precise %u", pmu, se.type, (unsigned long long)se.config,
		      se.precise_ip);
	}
	counter_set_delete(set);
}

/*
 * A forced PMU deactivates libpfm4's perf:: PMU: without
 * LIBPFM_ENCODE_INACTIVE the generic events do not encode, and the reason
 * says how to fix that; the model's own events still do.
 */
static void forced_without_inactive(const struct test_ctx *ctx)
{
	struct counter_set *set = NULL;
	char err[256];
	int ret = counter_set_new(&set, ctx->events_dir, NULL, err, sizeof(err));
	CHECK(ret == 0 && set, "counter_set_new: %d %s", ret, err);
	if (!set)
		return;
	const struct counter_info *pf = find_info(set, METRIC_PAGE_FAULTS);
	CHECK(pf && pf->status == COUNTER_UNSUPPORTED && strstr(pf->reason, "not encodable for PMU skx") &&
	      strstr(pf->reason, "LIBPFM_ENCODE_INACTIVE=1"), "page_faults: %s / %s",
	      pf ? counter_status_name(pf->status) : "-", pf ? pf->reason : "-");
	const struct counter_info *wc = find_info(set, METRIC_WALK_COMPLETED);
	CHECK(wc && wc->status == COUNTER_OK && wc->type == PERF_TYPE_RAW &&
	      wc->config == INTEL(0x08, 0x0e, 0), "walk_completed still encodes");
	counter_set_delete(set);
}

/* ---- hand-written maps ------------------------------------------------ */

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -errno;
}

static void remove_file(const char *dir, const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

/* A model map lacking metrics falls back to generic.events; --events-dir points at a temp dir. */
static void fallback_and_override(const struct test_ctx *ctx)
{
	const char *dir = ctx->tmp_dir;
	CHECK(write_file(dir, "generic.events",
			 "# a tiny generic map\n"
			 "page_faults = perf::PERF_COUNT_SW_PAGE_FAULTS\n"
			 "cycles=perf::PERF_COUNT_HW_CPU_CYCLES   # no spaces needed\n"
			 "walk_completed = perf::PERF_COUNT_HW_CACHE_DTLB:READ:MISS\n") == 0, "write");
	CHECK(write_file(dir, "skx.events",
			 "\n   # only one entry, with an attribute that contains '='\n"
			 "\twalk_completed = skx::DTLB_LOAD_MISSES:WALK_COMPLETED:c=2\n") == 0, "write");

	bool want[METRIC_COUNT] = {
		[METRIC_STLB_HITS] = true,
		[METRIC_WALK_COMPLETED] = true,
		[METRIC_CYCLES] = true,
		[METRIC_PAGE_FAULTS] = true,
	};
	struct counter_set *set = NULL;
	char err[256];
	int ret = counter_set_new(&set, dir, want, err, sizeof(err));
	CHECK(ret == 0 && set, "counter_set_new(%s): %d %s", dir, ret, err);
	if (set) {
		CHECK(counter_set_size(set) == 4, "%zu events, wanted 4", counter_set_size(set));
		static const enum metric order[] = { METRIC_PAGE_FAULTS, METRIC_CYCLES,
						     METRIC_WALK_COMPLETED, METRIC_STLB_HITS };
		for (size_t i = 0; i < 4 && i < counter_set_size(set); i++)
			CHECK(counter_set_info(set, i)->metric == order[i], "event %zu is %s", i,
			      metric_name(counter_set_info(set, i)->metric));

		const struct counter_info *wc = find_info(set, METRIC_WALK_COMPLETED);
		CHECK(wc && strcmp(wc->source, "skx") == 0 && wc->type == PERF_TYPE_RAW &&
		      wc->config == INTEL(0x08, 0x0e, 2), "model entry wins over generic: %s %#llx",
		      wc ? wc->source : "-", wc ? (unsigned long long)wc->config : 0ULL);
		const struct counter_info *cy = find_info(set, METRIC_CYCLES);
		CHECK(cy && strcmp(cy->source, "generic") == 0 && cy->status == COUNTER_OK &&
		      cy->type == PERF_TYPE_HARDWARE && cy->config == PERF_COUNT_HW_CPU_CYCLES && cy->hardware,
		      "cycles from generic: %s %s", cy ? cy->source : "-", cy ? cy->reason : "-");
		const struct counter_info *pf = find_info(set, METRIC_PAGE_FAULTS);
		CHECK(pf && strcmp(pf->source, "generic") == 0 && pf->type == PERF_TYPE_SOFTWARE &&
		      !pf->hardware, "page_faults from generic");
		const struct counter_info *sh = find_info(set, METRIC_STLB_HITS);
		CHECK(sh && sh->status == COUNTER_UNSUPPORTED && sh->source[0] == '\0' &&
		      strstr(sh->reason, "skx.events or generic.events"), "stlb_hits: %s",
		      sh ? sh->reason : "-");
		counter_set_delete(set);
	}

	/* No model map at all: everything from generic, not an error. */
	remove_file(dir, "skx.events");
	set = NULL;
	ret = counter_set_new(&set, dir, want, err, sizeof(err));
	CHECK(ret == 0 && set, "without a model map: %d %s", ret, err);
	if (set) {
		const struct counter_info *wc = find_info(set, METRIC_WALK_COMPLETED);
		CHECK(wc && strcmp(wc->source, "generic") == 0 && wc->type == PERF_TYPE_HW_CACHE,
		      "walk_completed falls back to generic");
		counter_set_delete(set);
	}
	remove_file(dir, "generic.events");
}

struct bad_map {
	int line;
	const char *file;	/* which file is broken */
	const char *text;
	int expected_ret;
	const char *expected_msg;	/* substring after "<dir>/" */
};

static const struct bad_map bad_maps[] = {
	{ __LINE__, "generic.events", "# ok\npage_faults = perf::PERF_COUNT_SW_PAGE_FAULTS\nno equals sign here\n",
	  -EINVAL, "generic.events:3: expected 'metric = event'" },
	{ __LINE__, "generic.events", "dtlb_misses = perf::PERF_COUNT_HW_CACHE_DTLB:READ:MISS\n",
	  -EINVAL, "generic.events:1: unknown metric 'dtlb_misses'" },
	{ __LINE__, "generic.events", "cycles = perf::PERF_COUNT_HW_CPU_CYCLES\n\n# again\ncycles = perf::PERF_COUNT_HW_CPU_CYCLES\n",
	  -EINVAL, "generic.events:4: metric 'cycles' given twice (first at line 1)" },
	{ __LINE__, "generic.events", "cycles =    # nothing\n",
	  -EINVAL, "generic.events:1: metric 'cycles' has no event" },
	{ __LINE__, "generic.events", "cycles = perf::PERF_COUNT_HW_CPU_CYCLES perf::PERF_COUNT_HW_INSTRUCTIONS\n",
	  -EINVAL, "generic.events:1: event for 'cycles' contains whitespace" },
	{ __LINE__, "generic.events", "cycles = perf::XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX\n",
	  -EINVAL, "generic.events:1: event for 'cycles' is longer than 159 characters" },
	{ __LINE__, "skx.events", "walk_active = skx::DTLB_LOAD_MISSES:WALK_ACTIVE\nwalk active = skx::DTLB_LOAD_MISSES:WALK_ACTIVE\n",
	  -EINVAL, "skx.events:2: unknown metric 'walk active'" },
};

static void malformed_maps(const struct test_ctx *ctx)
{
	const char *dir = ctx->tmp_dir;
	char err[512];
	struct counter_set *set;

	for (size_t i = 0; i < sizeof(bad_maps) / sizeof(bad_maps[0]); i++) {
		const struct bad_map *b = &bad_maps[i];
		if (strcmp(b->file, "generic.events") != 0)
			write_file(dir, "generic.events", "page_faults = perf::PERF_COUNT_SW_PAGE_FAULTS\n");
		CHECK_ROW(b->line, write_file(dir, b->file, b->text) == 0, "write %s", b->file);

		char expected[256];
		snprintf(expected, sizeof(expected), "%s/%s", dir, b->expected_msg);
		set = (struct counter_set *)&set;	/* must be reset to NULL on error */
		err[0] = '\0';
		int ret = counter_set_new(&set, dir, NULL, err, sizeof(err));
		CHECK_ROW(b->line, ret == b->expected_ret, "returned %d, expected %d", ret, b->expected_ret);
		CHECK_ROW(b->line, set == NULL, "*out not NULL on error");
		CHECK_ROW(b->line, strstr(err, expected) != NULL, "message '%s', expected '%s'", err, expected);
		if (ret == 0)
			counter_set_delete(set);
		remove_file(dir, "generic.events");
		remove_file(dir, "skx.events");
	}

	/* No generic.events: the directory is not an events directory. */
	set = NULL;
	int ret = counter_set_new(&set, dir, NULL, err, sizeof(err));
	char expected[256];
	snprintf(expected, sizeof(expected), "cannot open %s/generic.events: %s", dir, strerror(ENOENT));
	CHECK(ret == -ENOENT && set == NULL && strstr(err, expected), "missing generic.events: %d '%s'", ret, err);
	/* The message is optional. */
	ret = counter_set_new(&set, dir, NULL, NULL, 0);
	CHECK(ret == -ENOENT && set == NULL, "missing generic.events without errmsg: %d", ret);
}

/* ---- live counting ---------------------------------------------------- */

enum { LIVE_PAGES = 256 };

/* Touch `pages` fresh anonymous pages (small pages: one fault each); 0 or -errno. */
static int touch_fresh_pages(size_t pages)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = pages * (size_t)page;
	volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	madvise((void *)p, len, MADV_NOHUGEPAGE);	/* THP would fault 2 MiB at once */
	for (size_t i = 0; i < pages; i++)
		p[i * (size_t)page] = (char)i;
	munmap((void *)p, len);
	return 0;
}

static bool reason_has_errno_text(const char *reason)
{
	static const int errs[] = { ENOENT, EOPNOTSUPP, ENODEV, EINVAL };
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		if (strstr(reason, strerror(errs[i])))
			return true;
	return false;
}

/* Software events never multiplex: status ok and the value not scaled. */
static void check_software_not_multiplexed(const struct counter_set *set, const struct counter_reading *r,
					   const char *what)
{
	for (size_t i = 0; i < counter_set_size(set); i++) {
		const struct counter_info *info = counter_set_info(set, i);
		if (info->hardware || info->event[0] == '\0')
			continue;
		CHECK(info->status == COUNTER_OK && r[i].scaled == (double)r[i].value && r[i].enabled_ns > 0,
		      "%s: %s %s (%s), value %llu scaled %g, enabled %llu running %llu", what, info->name,
		      counter_status_name(info->status), info->reason, (unsigned long long)r[i].value,
		      r[i].scaled, (unsigned long long)r[i].enabled_ns, (unsigned long long)r[i].running_ns);
	}
}

static void live_software_and_hardware(const struct test_ctx *ctx)
{
	struct counter_set *set = NULL;
	char err[256];
	int ret = counter_set_new(&set, ctx->events_dir, NULL, err, sizeof(err));
	CHECK(ret == 0 && set, "counter_set_new: %d %s", ret, err);
	if (!set)
		return;
	size_t n = counter_set_size(set);
	struct counter_reading r[METRIC_COUNT];

	/* Before open every event reads as zero. */
	memset(r, 0xff, sizeof(r));
	CHECK(counter_set_read(set, r) == 0, "read before open");
	CHECK(r[0].value == 0 && r[0].enabled_ns == 0 && r[0].scaled == 0.0, "unopened reads zero");

	int opened = counter_set_open(set);
	CHECK(opened >= 2, "opened %d events", opened);
	fprintf(stderr, "    live PMU: %s (%s), %d of %zu events open\n", counter_set_pmu_name(set),
		counter_set_pmu_desc(set), opened, n);

	ssize_t ipf = find_index(set, METRIC_PAGE_FAULTS), imin = find_index(set, METRIC_MINOR_FAULTS);
	ssize_t itc = find_index(set, METRIC_TASK_CLOCK), icy = find_index(set, METRIC_CYCLES);
	CHECK(ipf >= 0 && imin >= 0 && itc >= 0 && icy >= 0, "metrics missing from the set");
	if (ipf < 0 || imin < 0 || itc < 0 || icy < 0) {
		counter_set_delete(set);
		return;
	}
	const struct counter_info *pf = counter_set_info(set, (size_t)ipf);
	const struct counter_info *tc = counter_set_info(set, (size_t)itc);
	CHECK(pf->status == COUNTER_OK, "page_faults: %s (%s)", counter_status_name(pf->status), pf->reason);
	CHECK(tc->status == COUNTER_OK, "task_clock: %s (%s)", counter_status_name(tc->status), tc->reason);

	/* Counters start disabled: nothing counts before enable. */
	CHECK(touch_fresh_pages(16) == 0, "touch");
	CHECK(counter_set_read(set, r) == 0, "read while disabled");
	CHECK(r[ipf].value == 0 && r[ipf].enabled_ns == 0, "counted while disabled: %llu",
	      (unsigned long long)r[ipf].value);

	CHECK(counter_set_reset(set) == 0, "reset");
	CHECK(counter_set_enable(set) == 0, "enable");
	CHECK(touch_fresh_pages(LIVE_PAGES) == 0, "touch");
	volatile uint64_t spin = 0;
	for (uint64_t i = 0; i < 2000000; i++)
		spin += i;
	(void)spin;
	/* Sleeping switches context: recorded in kernel context, so this checks kernel-side counting. */
	struct timespec nap = { .tv_nsec = 1000000 };
	nanosleep(&nap, NULL);
	CHECK(counter_set_disable(set) == 0, "disable");
	CHECK(counter_set_read(set, r) == 0, "read");

	CHECK(r[ipf].value >= LIVE_PAGES, "page_faults %llu < %d pages touched",
	      (unsigned long long)r[ipf].value, LIVE_PAGES);
	CHECK(r[imin].value >= LIVE_PAGES, "minor_faults %llu < %d", (unsigned long long)r[imin].value,
	      LIVE_PAGES);
	CHECK(r[ipf].enabled_ns > 0 && r[ipf].running_ns == r[ipf].enabled_ns && r[ipf].scaled == (double)r[ipf].value,
	      "software event times: enabled %llu running %llu", (unsigned long long)r[ipf].enabled_ns,
	      (unsigned long long)r[ipf].running_ns);
	CHECK(r[itc].value > 0 && r[itc].value <= r[itc].enabled_ns + 1000000, "task_clock %llu ns, enabled %llu",
	      (unsigned long long)r[itc].value, (unsigned long long)r[itc].enabled_ns);
	ssize_t ics = find_index(set, METRIC_CONTEXT_SWITCHES);
	if (ics >= 0 && counter_set_info(set, (size_t)ics)->status == COUNTER_OK)
		CHECK(r[ics].value >= 1, "context_switches %llu after a sleep", (unsigned long long)r[ics].value);
	fprintf(stderr, "    page-faults %llu, minor-faults %llu, task-clock %llu ns, context-switches %llu\n",
		(unsigned long long)r[ipf].value, (unsigned long long)r[imin].value,
		(unsigned long long)r[itc].value, ics >= 0 ? (unsigned long long)r[ics].value : 0ULL);

	check_software_not_multiplexed(set, r, "one cycle");

	/* Hardware events: counted where a PMU exists, unsupported with the errno text where not. */
	for (size_t i = 0; i < n; i++) {
		const struct counter_info *info = counter_set_info(set, i);
		fprintf(stderr, "    %-17s %-12s %-8s %s\n", info->name, counter_status_name(info->status),
			info->source, info->reason);
		if (!info->hardware)
			continue;
		if (info->event[0] == '\0') {
			CHECK(info->status == COUNTER_UNSUPPORTED, "%s unresolved but %s", info->name,
			      counter_status_name(info->status));
			continue;
		}
		if (strcmp(counter_set_pmu_name(set), "none") == 0)
			CHECK(info->status != COUNTER_OK, "%s ok without a core PMU", info->name);
		if (info->status == COUNTER_UNSUPPORTED)
			CHECK(reason_has_errno_text(info->reason), "%s: reason without errno text: '%s'",
			      info->name, info->reason);
		else
			CHECK(info->status == COUNTER_OK || info->status == COUNTER_MULTIPLEXED,
			      "%s: %s (%s)", info->name, counter_status_name(info->status), info->reason);
	}
	const struct counter_info *cy = counter_set_info(set, (size_t)icy);
	if (cy->status == COUNTER_OK || cy->status == COUNTER_MULTIPLEXED)
		CHECK(r[icy].scaled > 1e6, "cycles %g for 2M adds", r[icy].scaled);

	/* Reset while disabled: counts and the times reported both start over. */
	CHECK(counter_set_reset(set) == 0, "reset");
	CHECK(counter_set_read(set, r) == 0, "read after reset");
	CHECK(r[ipf].value == 0 && r[ipf].enabled_ns == 0 && r[itc].enabled_ns == 0,
	      "after reset: value %llu enabled %llu", (unsigned long long)r[ipf].value,
	      (unsigned long long)r[ipf].enabled_ns);

	/*
	 * A second phase, as the runner times one: several enable/disable
	 * cycles of busy work between reset and read. It counts only its own
	 * faults, and task-clock's small time skew must not read as multiplexing.
	 */
	for (int cycle = 0; cycle < 5; cycle++) {
		CHECK(counter_set_enable(set) == 0, "enable");
		if (cycle == 0)
			CHECK(touch_fresh_pages(LIVE_PAGES / 4) == 0, "touch");
		for (uint64_t i = 0; i < 5000000; i++)
			spin += i;
		CHECK(counter_set_disable(set) == 0, "disable");
	}
	CHECK(counter_set_read(set, r) == 0, "read");
	CHECK(r[ipf].value >= LIVE_PAGES / 4 && r[ipf].value < LIVE_PAGES, "second phase page_faults %llu",
	      (unsigned long long)r[ipf].value);
	CHECK(r[itc].value > 0, "task_clock counted");
	check_software_not_multiplexed(set, r, "five cycles");

	counter_set_close(set);
	counter_set_close(set);	/* idempotent */
	CHECK(counter_set_read(set, r) == 0 && r[ipf].value == 0, "closed events read zero");

	/* Reopening works and starts from zero. */
	CHECK(counter_set_open(set) == opened, "reopen");
	CHECK(counter_set_read(set, r) == 0 && r[ipf].value == 0, "reopened reads zero");
	counter_set_delete(set);
}

static unsigned kernel_reads;

static ssize_t counting_read(int fd, void *buf, size_t len)
{
	kernel_reads++;
	return pmu_backend_kernel.read(fd, buf, len);
}

/*
 * tlbprof run's way: the set attached to another process with inherit, read
 * as groups (PERF_FORMAT_GROUP): one read() per group, and the faults of a
 * grandchild that exited before the read are in it (the kernel sums an
 * inherited group's children into the leader's read).
 */
static void live_inherited_group(const struct test_ctx *ctx)
{
	struct counter_set *set = NULL;
	struct counter_reading r[METRIC_COUNT];
	char err[256];
	int go[2];
	bool want[METRIC_COUNT];

	counters_default_want(want);
	CHECK(counter_set_new(&set, ctx->events_dir, want, err, sizeof(err)) == 0 && set, "counter_set_new: %s", err);
	if (!set || pipe(go) != 0)
		return;
	pid_t child = fork();
	if (child == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		pid_t grandchild = fork();
		if (grandchild == 0)
			_exit(touch_fresh_pages(LIVE_PAGES) == 0 ? 0 : 1);
		int status = 1;
		waitpid(grandchild, &status, 0);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
	}
	close(go[0]);
	struct pmu_backend counting = pmu_backend_kernel;
	counting.read = counting_read;
	pmu_backend_set(&counting);
	CHECK(counter_set_open_task(set, child, true, false) >= 2, "open on the child");
	CHECK(counter_set_enable(set) == 0, "enable");
	close(go[1]);
	int status = 1;
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child and its grandchild ran");
	ssize_t ipf = find_index(set, METRIC_PAGE_FAULTS);
	size_t leaders = 0, open = 0;
	for (size_t i = 0; i < counter_set_size(set); i++) {
		open += set->events[i].fd >= 0;
		leaders += set->events[i].fd >= 0 && set->events[i].leader;
	}
	kernel_reads = 0;
	CHECK(counter_set_read(set, r) == 0, "read");
	CHECK(kernel_reads == leaders && leaders < open, "%u read() calls for %zu groups of %zu open events",
	      kernel_reads, leaders, open);
	CHECK(ipf >= 0 && r[ipf].value >= LIVE_PAGES && r[ipf].enabled_ns > 0, "the grandchild's %d faults counted: %llu",
	      LIVE_PAGES, ipf >= 0 ? (unsigned long long)r[ipf].value : 0ULL);
	pmu_backend_set(NULL);
	counter_set_delete(set);
}

static int read_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = -100;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -100;
		fclose(f);
	}
	return v;
}

/*
 * As an unprivileged user at perf_event_paranoid >= 2, counting kernel side
 * is denied: fault counts fall back to user space (still counting the faults
 * the loop takes), while context switches, which the kernel records in kernel
 * context only, are reported denied rather than as a false zero. Run as
 * nobody when we are root; skipped when neither applies.
 */
static void unprivileged(const struct test_ctx *ctx)
{
	int paranoid = read_paranoid();
	CHECK(paranoid_level() == (paranoid == -100 ? PARANOID_UNKNOWN : paranoid), "paranoid_level() %d, the file %d",
	      paranoid_level(), paranoid);
	if (paranoid < 2) {
		fprintf(stderr, "    perf_event_paranoid=%d allows kernel counting: skipped\n", paranoid);
		return;
	}
	bool want[METRIC_COUNT] = {
		[METRIC_PAGE_FAULTS] = true,
		[METRIC_TASK_CLOCK] = true,
		[METRIC_CONTEXT_SWITCHES] = true,
	};
	/* Resolve with our own rights (the maps may be unreadable to nobody), open as nobody. */
	struct counter_set *set = NULL;
	char err[256];
	int ret = counter_set_new(&set, ctx->events_dir, want, err, sizeof(err));
	CHECK(ret == 0 && set, "counter_set_new: %d %s", ret, err);
	if (!set)
		return;
	if (geteuid() == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0) {
			fprintf(stderr, "    cannot drop to nobody (%s): skipped\n", strerror(errno));
			counter_set_delete(set);
			return;
		}
	}
	counter_set_open(set);
	const struct counter_info *pf = find_info(set, METRIC_PAGE_FAULTS);
	const struct counter_info *cs = find_info(set, METRIC_CONTEXT_SWITCHES);
	const struct counter_info *tc = find_info(set, METRIC_TASK_CLOCK);
	char denied[128];
	snprintf(denied, sizeof(denied), "perf_event_paranoid=%d", paranoid);
	fprintf(stderr, "    as uid %d: page-faults %s (%s); context-switches %s (%s)\n", (int)geteuid(),
		counter_status_name(pf->status), pf->reason, counter_status_name(cs->status), cs->reason);

	CHECK(cs->status == COUNTER_DENIED && strstr(cs->reason, denied) &&
	      strstr(cs->reason, "kernel.perf_event_paranoid=1") && strstr(cs->reason, "CAP_PERFMON"),
	      "context_switches: %s (%s)", counter_status_name(cs->status), cs->reason);
	if (paranoid == 2) {
		CHECK(pf->status == COUNTER_OK && strstr(pf->reason, "user space only"),
		      "page_faults: %s (%s)", counter_status_name(pf->status), pf->reason);
		CHECK(tc->status == COUNTER_OK, "task_clock: %s (%s)", counter_status_name(tc->status), tc->reason);
	} else {
		/* Some distributions' level 3 forbids perf_event_open altogether. */
		CHECK(pf->status == COUNTER_OK || pf->status == COUNTER_DENIED, "page_faults: %s",
		      counter_status_name(pf->status));
	}
	if (pf->status == COUNTER_OK) {
		struct counter_reading r[3];
		counter_set_reset(set);
		counter_set_enable(set);
		CHECK(touch_fresh_pages(LIVE_PAGES) == 0, "touch");
		counter_set_disable(set);
		CHECK(counter_set_read(set, r) == 0, "read");
		CHECK(r[0].value >= LIVE_PAGES, "user-only page_faults %llu < %d",
		      (unsigned long long)r[0].value, LIVE_PAGES);
		CHECK(r[2].value == 0, "denied context_switches read %llu", (unsigned long long)r[2].value);
	}
	counter_set_delete(set);
}

/* Where a binary finds its maps, from its path alone: one row per layout, with the line of each row. */
static void test_events_dir_locate(void)
{
	const struct events_dir_layout l = {
		.build_root = "/src/build", .source_dir = "/src/events", .bindir_rel = "bin",
		.events_rel = "share/tlbprof/events", .installed_dir = "/usr/local/share/tlbprof/events",
	};
	static const struct {
		int line;
		const char *exe, *want;
	} rows[] = {
		{ __LINE__, "/src/build/tlbprof", "/src/events" },			/* the built binary */
		{ __LINE__, "/src/build/tests/test-cli", "/src/events" },		/* a unit test */
		{ __LINE__, "/src/build/stage/usr/local/bin/tlbprof", "/src/build/stage/usr/local/share/tlbprof/events" },
		{ __LINE__, "/opt/t/bin/tlbprof", "/opt/t/share/tlbprof/events" },	/* relocated */
		{ __LINE__, "/usr/bin/tlbprof", "/usr/share/tlbprof/events" },		/* the Debian package */
		{ __LINE__, "/home/u/tlbprof", "/usr/local/share/tlbprof/events" },	/* copied away by hand */
		{ __LINE__, "/src/buildx/tlbprof", "/usr/local/share/tlbprof/events" },	/* beside, not in, the build */
		{ __LINE__, NULL, "/usr/local/share/tlbprof/events" },			/* no /proc */
	};
	char buf[256];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int rc = counters_events_dir_locate(&l, rows[i].exe, buf, sizeof(buf));
		CHECK(rc == 0 && strcmp(buf, rows[i].want) == 0, "row at line %d: %s -> %s (%d), want %s", rows[i].line,
		      rows[i].exe ? rows[i].exe : "(null)", buf, rc, rows[i].want);
	}
	CHECK(counters_events_dir_locate(&l, "/src/build/tlbprof", buf, 4) == -ENAMETOOLONG, "a short buffer");
	CHECK(counters_events_dir_locate(&l, "/src/build/tlbprof", buf, 0) == -EINVAL, "no buffer");
}

int main(int argc, char **argv)
{
	struct test_ctx ctx = { .events_dir = getenv("TLBPROF_TEST_EVENTS_DIR") };
	if (!ctx.events_dir || !ctx.events_dir[0])
		ctx.events_dir = argc > 1 ? argv[1] : "events";
	char probe[512];
	snprintf(probe, sizeof(probe), "%s/generic.events", ctx.events_dir);
	if (access(probe, R_OK) != 0) {
		fprintf(stderr, "cannot read %s (%s); set TLBPROF_TEST_EVENTS_DIR or pass the events dir\n",
			probe, strerror(errno));
		return 1;
	}
	snprintf(ctx.tmp_dir, sizeof(ctx.tmp_dir), "/tmp/tlbprof-test-counters-XXXXXX");
	if (!mkdtemp(ctx.tmp_dir)) {
		fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	fprintf(stderr, "events dir: %s\n", ctx.events_dir);

	test_metric_names();
	test_events_dir_locate();
	test_scale();
	test_open_errors();
	for (size_t i = 0; i < sizeof(golden_pmus) / sizeof(golden_pmus[0]); i++) {
		char what[64];
		snprintf(what, sizeof(what), "golden %s", golden_pmus[i]);
		run_child(what, golden_pmus[i], true, golden_for_pmu, &ctx);
	}
	run_child("forced skx without ENCODE_INACTIVE", "skx", false, forced_without_inactive, &ctx);
	run_child("fallback + events-dir override", "skx", true, fallback_and_override, &ctx);
	run_child("malformed maps", "skx", true, malformed_maps, &ctx);
	run_child("live (this machine)", NULL, false, live_software_and_hardware, &ctx);
	run_child("unprivileged", NULL, false, unprivileged, &ctx);
	run_child("live inherited group", NULL, false, live_inherited_group, &ctx);

	rmdir(ctx.tmp_dir);
	return check_finish();
}
