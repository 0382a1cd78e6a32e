/* SPDX-License-Identifier: MIT */
/* The table of checks (id, the function that adds it, what it catches) and what every check uses to add itself. */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "judge/analysis_internal.h"

/*
 * The order of this table is the order of the report's checks (and of the
 * man page's CHECKS, which test-analysis compares with it): analysis_run()'s,
 * then the two tlbprof run adds.
 */
const struct analysis_check_def analysis_checks[] = {
	{ .id = "phases_completed", .fn = checks_phases_completed, .doc = "a phase failed" },
	{ .id = "workload_self_checks", .fn = checks_workload_self_checks,
	  .doc = "the chain is not one random cycle, or its strides are constant" },
	{ .id = "control_thp_contamination", .fn = checks_control_thp_contamination,
	  .doc = "a 4k region was (partly) on huge pages" },
	{ .id = "huge_pages_granted", .fn = checks_huge_pages_granted,
	  .doc = "a huge-page phase did not get its pages" },
	{ .id = "declared_region_resident", .fn = checks_declared_region_resident,
	  .doc = "tlbprof run: a declared region was under 90 % resident (never written, or on the zero page)" },
	{ .id = "cache_set_aliasing", .fn = checks_cache_set_aliasing,
	  .doc = "aligned slots use a fraction of the cache sets, and the touched lines no longer fit" },
	{ .id = "timer_resolution", .fn = checks_timer_resolution,
	  .doc = "a timed sample is less than 100 times the clock overhead" },
	{ .id = "too_fast", .fn = checks_too_fast, .doc = "faster than an L1 hit: the loop was optimised away" },
	{ .id = "declared_accesses_plausible", .fn = checks_declared_accesses_plausible,
	  .doc = "tlbprof run: a phase is 3x faster per declared access than tlbprof's own chase of its shape" },
	{ .id = "tlb_pressure_expected", .fn = checks_tlb_pressure_expected,
	  .doc = "a 4k working set far beyond the TLB reach shows almost no dTLB misses" },
	{ .id = "multiplexed_counters", .fn = checks_multiplexed_counters,
	  .doc = "a counter ran part of the time and was scaled" },
	{ .id = "pmu_unavailable", .fn = checks_pmu_unavailable,
	  .doc = "which method replaced the hardware counters; warns when they opened but were never counted" },
	{ .id = "counters_plausible", .fn = checks_counters_plausible,
	  .doc = "more dTLB misses than loads, walk cycles beyond cycles, or cycles per walk no walker can take" },
	{ .id = "attribution_adds_up", .fn = checks_attribution_adds_up,
	  .doc = "a part of the attribution is negative or exceeds the delta beyond the noise" },
	{ .id = "unstable", .fn = checks_unstable,
	  .doc = "a median is uncertain by more than ±10 %, steal over 1 % of a phase, or the clock moved 5 %" },
	{ .id = "cpu_migrations", .fn = checks_cpu_migrations,
	  .doc = "the thread moved between CPUs during a timed sample" },
	{ .id = "warmup_insufficient", .fn = checks_warmup_insufficient,
	  .doc = "the first sample of an allocation is slower than its others by 10 % and 3x their own spread" },
	{ .id = "faults_in_timed_phase", .fn = checks_faults_in_timed_phase,
	  .doc = "page faults inside timed samples" },
	{ .id = "frequency_scaling", .fn = checks_frequency_scaling,
	  .doc = "the core clock moved during calibration, the governor is not performance, or turbo is on" },
	{ .id = "huge_pages_ineffective", .fn = checks_huge_pages_ineffective,
	  .doc = "granted huge pages far beyond the 4 KiB TLB reach are not faster beyond noise" },
	{ .id = "tlb_geometry", .fn = checks_tlb_geometry,
	  .doc = "CPUID reports no TLB, an implausible one, or none that matches a tlbsize knee" },
	{ .id = "anon_cold_faults_per_page", .fn = checks_anon_cold_faults_per_page,
	  .doc = "a first touch did not fault once per page (once per 2 MiB with THP)" },
	{ .id = "anon_prefault_no_faults", .fn = checks_anon_prefault_no_faults, .doc = "a prefaulted touch faulted" },
	{ .id = "file_cold_major_faults", .fn = checks_file_cold_major_faults,
	  .doc = "file_cold took no major fault although its file was evicted" },
	{ .id = "fault_counts_agree", .fn = checks_fault_counts_agree,
	  .doc = "the perf fault counters and getrusage disagree" },
	{ .id = "process_spread", .fn = checks_process_spread,
	  .doc = "the processes' medians differ by more than 10 %" },
	{ .id = "build_optimised", .fn = checks_build_optimised, .by = ANALYSIS_CHECK_BY_BUILD,
	  .doc = "tlbprof run: the benchmark was compiled -O0, as its ELF file records or its hot loop's code shows" },
	{ .id = "marker_protocol", .fn = checks_marker_protocol, .by = ANALYSIS_CHECK_BY_MARKERS,
	  .doc = "tlbprof run: tlbprof refused marker or control lines the command sent" },
	{ .id = "command_exit", .fn = checks_command_exit, .by = ANALYSIS_CHECK_BY_MARKERS,
	  .doc = "tlbprof run: the command exited non-zero or died of a signal tlbprof did not send" },
	{ .id = "hot_loop", .fn = checks_hot_loop, .by = ANALYSIS_CHECK_BY_UNMARKED,
	  .doc = "tlbprof run: where the CPU time went (cpu-clock samples): the hot loop, [vdso] and the kernel" },
	{ .id = "load_dependence", .fn = checks_load_dependence, .by = ANALYSIS_CHECK_BY_UNMARKED,
	  .doc = "tlbprof run: latency declared, but no load in the hot loop takes its address from a load" },
	{ .id = "first_touch_in_timed_loop", .fn = checks_first_touch_in_timed_loop, .by = ANALYSIS_CHECK_BY_UNMARKED,
	  .doc = "tlbprof run: half of a big region's page faults were timed: the timed loop is its first touch" },
	{ .id = "sequential_page_order", .fn = checks_sequential_page_order, .by = ANALYSIS_CHECK_BY_UNMARKED,
	  .doc = "tlbprof run: the hot loop first touched pages with one constant step (a sequential scan)" },
	{ .id = "same_page_offset", .fn = checks_same_page_offset, .by = ANALYSIS_CHECK_BY_UNMARKED,
	  .doc = "tlbprof run: the hot loop's first touches were at one offset of their pages (cache-set aliasing)" },
	{ .id = "zero_page_reads", .fn = checks_zero_page_reads, .by = ANALYSIS_CHECK_BY_UNMARKED,
	  .doc = "tlbprof run: a big region took faults but never became resident (reads of the zero page)" },
	{ .id = "thp_backed_region", .fn = checks_thp_backed_region, .by = ANALYSIS_CHECK_BY_UNMARKED,
	  .doc = "tlbprof run: a big region was on transparent huge pages" },
	{ .id = "pinning", .fn = checks_pinning, .by = ANALYSIS_CHECK_BY_UNMARKED,
	  .doc = "tlbprof run: the hot thread's Cpus_allowed_list held more than one CPU while it ran" },
	{ .id = "exec_image", .fn = checks_exec_image, .by = ANALYSIS_CHECK_BY_UNMARKED,
	  .doc = "tlbprof run: the image finally exec'd (through env, taskset, numactl), whose provenance is read" },
	{ .id = "coarse_clock", .fn = checks_coarse_clock, .by = ANALYSIS_CHECK_BY_UNMARKED,
	  .doc = "tlbprof run: the hot thread's clock (uprobes on libc) is coarse for its longest timed window" },
	{ .id = "cpu_time_clock", .fn = checks_cpu_time_clock, .by = ANALYSIS_CHECK_BY_UNMARKED,
	  .doc = "tlbprof run: the hot thread timed with the process's CPU time (clock()) while its other threads ran" },
	{ .id = "clock_per_access", .fn = checks_clock_per_access, .by = ANALYSIS_CHECK_BY_UNMARKED,
	  .doc = "tlbprof run: the hot thread read the clock around every access or few (uprobes on libc)" },
	{ .id = "empty_timed_window", .fn = checks_empty_timed_window, .by = ANALYSIS_CHECK_BY_UNMARKED,
	  .doc = "tlbprof run: the clock reads, or a timer's start/stop pairs, time next to nothing (a deleted loop)" },
	{ .id = "off_cpu_in_timed_window", .fn = checks_off_cpu_in_timed_window, .by = ANALYSIS_CHECK_BY_UNMARKED,
	  .doc = "tlbprof run: the hot loop's timed windows held the command asleep, or its thread waiting for a CPU" },
};
const size_t analysis_n_checks = sizeof(analysis_checks) / sizeof(analysis_checks[0]);

_Static_assert(sizeof(analysis_checks) / sizeof(analysis_checks[0]) <= MAX_CHECKS, "every check has room");

void checks_run(const struct analysis_input *in, enum analysis_check_by by, struct analysis *a)
{
	for (size_t i = 0; i < analysis_n_checks; i++) {
		const struct analysis_check_def *def = &analysis_checks[i];
		size_t before = a->n_checks;
		if (def->by != by)
			continue;
		def->fn(def, in, a);
		/* Each function adds exactly its own check (none is added past MAX_CHECKS). */
		assert(a->n_checks == before + 1 || before == MAX_CHECKS);
	}
}

const char *checks_phases_word(size_t n)
{
	return n == 1 ? "phase" : "phases";
}

__attribute__((format(printf, 4, 5)))
struct analysis_check *checks_add(struct analysis *a, const struct analysis_check_def *def, enum check_status st,
				  const char *fmt, ...)
{
	static struct analysis_check overflow;
	struct analysis_check *c = a->n_checks < MAX_CHECKS ? &a->checks[a->n_checks++] : &overflow;
	va_list ap;

	memset(c, 0, sizeof(*c));
	c->id = def->id;
	c->status = st;
	va_start(ap, fmt);
	analysis_vtext(c->message, sizeof(c->message), fmt, ap);
	va_end(ap);
	return c;
}

void checks_evidence(struct analysis_check *c, const char *key, double value)
{
	analysis_evidence_add(&c->evidence, key, value);
}
