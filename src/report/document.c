/* SPDX-License-Identifier: MIT */
/* The only writer of output: the JSON report (jansson, written atomically) and the table for people. */
#include "report/report.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmu/elfinfo.h"
#include "parse.h"
#include "report/internal.h"
#include "target/target.h"
#include "version.h"
#include "measure/workload.h"

void report_error(const char *msg)
{
	fprintf(stderr, "tlbprof: %s\n", msg);
}

/* json_real() for finite numbers, null otherwise (JSON has no NaN or infinity). */
static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *str_or_null(const char *s)
{
	return s && *s ? report_json_text(s) : json_null();
}

static json_t *stats_json(const struct stats_summary *st, const double *samples, size_t n, double scale)
{
	json_t *o = json_object(), *arr = json_array();

	json_object_set_new(o, "median", num(st->median * scale));
	json_object_set_new(o, "min", num(st->min * scale));
	json_object_set_new(o, "max", num(st->max * scale));
	json_object_set_new(o, "mean", num(st->mean * scale));
	json_object_set_new(o, "stddev", num(st->stddev * scale));
	json_object_set_new(o, "rel_spread", num(st->rel_spread));
	for (size_t i = 0; samples && i < n; i++)
		json_array_append_new(arr, num(samples[i] * scale));
	json_object_set_new(o, "samples", arr);
	return o;
}

json_t *report_environment_json(const struct environment *env, const struct timing_calibration *clk,
				const char *pmu_name)
{
	json_t *e = json_object(), *cpu = json_object(), *caches = json_array(), *tlb = json_object();
	json_t *thp = json_object(), *pools = json_object(), *build = json_object(), *clock = json_object();

	json_object_set_new(cpu, "vendor", str_or_null(env->cpu_vendor));
	json_object_set_new(cpu, "model_name", str_or_null(env->cpu_model_name));
	json_object_set_new(cpu, "family", json_integer(env->cpu_family));
	json_object_set_new(cpu, "model", json_integer(env->cpu_model));
	json_object_set_new(cpu, "stepping", json_integer(env->cpu_stepping));
	json_object_set_new(cpu, "logical_cpus", json_integer(env->logical_cpus));
	json_object_set_new(cpu, "pmu", json_string(pmu_name ? pmu_name : "none"));
	json_object_set_new(cpu, "core", str_or_null(env->core_name));
	json_object_set_new(cpu, "l1_latency_cycles",
			    env->l1_latency_cycles ? json_integer(env->l1_latency_cycles) : json_null());
	for (size_t i = 0; i < env->n_caches; i++) {
		const struct env_cache *c = &env->caches[i];
		json_array_append_new(caches, json_pack("{s:i, s:s, s:I, s:i, s:i, s:i}", "level", (int)c->level,
							"type", c->type, "size_bytes", (json_int_t)c->size_bytes,
							"ways", (int)c->ways, "line_bytes", (int)c->line_bytes,
							"sets", (int)c->sets));
	}
	json_object_set_new(cpu, "caches", caches);
/* 0 means CPUID did not say (KVM often zeroes leaf 0x18): null, never a TLB of 0 entries. */
#define TLB_FIELD(f) json_object_set_new(tlb, #f, env->tlb.f ? json_integer(env->tlb.f) : json_null());
	ENV_TLB_FIELDS(TLB_FIELD)
#undef TLB_FIELD
	json_object_set_new(tlb, "source", str_or_null(env->tlb.source));
	/* Reach: entries x page size per level, the table people draw by hand; null where CPUID is silent. */
	json_t *reach = json_object();
	const struct {
		const char *key;
		unsigned entries;
		uint64_t page;
	} reaches[] = {
		{ "l1d_4k_bytes", env->tlb.l1d_4k_entries, 4096ull },
		{ "l1d_2m_bytes", env->tlb.l1d_2m_entries, 2ull << 20 },
		{ "l1d_1g_bytes", env->tlb.l1d_1g_entries, 1ull << 30 },
		{ "l2d_4k_bytes", env->tlb.l2d_4k_entries, 4096ull },
		{ "l2d_2m_bytes", env->tlb.l2d_2m_entries, 2ull << 20 },
		{ "l2d_1g_bytes", env->tlb.l2d_1g_entries, 1ull << 30 },
	};
	for (size_t i = 0; i < sizeof(reaches) / sizeof(reaches[0]); i++)
		json_object_set_new(reach, reaches[i].key,
				    reaches[i].entries ? json_integer((json_int_t)(reaches[i].entries * reaches[i].page))
						       : json_null());
	json_object_set_new(e, "cpu", cpu);
	json_object_set_new(e, "tlb", tlb);
	json_object_set_new(e, "tlb_reach", reach);
	json_object_set_new(e, "kernel", report_json_text(env->kernel));
	json_object_set_new(thp, "enabled", str_or_null(env->thp_enabled));
	json_object_set_new(thp, "defrag", str_or_null(env->thp_defrag));
	json_object_set_new(e, "thp", thp);
	json_object_set_new(e, "cpufreq", json_pack("{s:o, s:o, s:o}", "driver", str_or_null(env->cpufreq_driver),
						     "governor", str_or_null(env->cpufreq_governor), "turbo",
						     env->turbo < 0 ? json_null() : json_boolean(env->turbo)));
	for (size_t i = 0; i < env->n_pools; i++) {
		const struct env_hugepool *p = &env->pools[i];
		char key[16];
		format_size(p->page_bytes, key, sizeof(key));
		json_object_set_new(pools, key, json_pack("{s:I, s:I, s:I, s:I, s:I}", "page_bytes",
							  (json_int_t)p->page_bytes, "nr", (json_int_t)p->nr, "free",
							  (json_int_t)p->free, "resv", (json_int_t)p->resv, "surplus",
							  (json_int_t)p->surplus));
	}
	json_object_set_new(e, "hugepages", pools);
	json_object_set_new(e, "fault_around_bytes",
			    env->fault_around_bytes >= 0 ? json_integer(env->fault_around_bytes) : json_null());
	json_object_set_new(e, "perf_event_paranoid",
			    env->perf_event_paranoid == INT32_MIN ? json_null() : json_integer(env->perf_event_paranoid));
	json_object_set_new(e, "hypervisor", str_or_null(env->hypervisor));
	json_object_set_new(e, "core_clock_ghz", clk->core_clock_ghz > 0 ? num(clk->core_clock_ghz) : json_null());
	json_object_set_new(e, "clock_overhead_ns", num(clk->clock_overhead_ns));
	json_object_set_new(clock, "method", report_json_text(clk->core_clock_method));
	json_object_set_new(clock, "runs", json_integer(clk->core_clock_runs));
	json_object_set_new(clock, "rel_spread", num(clk->core_clock_spread));
	json_object_set_new(clock, "clock_resolution_ns", num(clk->clock_resolution_ns));
	json_object_set_new(e, "core_clock", clock);
	json_object_set_new(build, "compiler", str_or_null(env->compiler));
	json_object_set_new(build, "flags", str_or_null(env->build_flags));
	json_object_set_new(build, "buildtype", str_or_null(env->build_type));
	json_object_set_new(e, "build", build);
	return e;
}

json_t *report_counter_info_json(const struct counter_info *ci)
{
	json_t *o = json_object();
	char cfg[32];

	snprintf(cfg, sizeof(cfg), "0x%" PRIx64, ci->config);
	json_object_set_new(o, "name", report_json_text(ci->name));
	json_object_set_new(o, "metric", json_string(metric_name(ci->metric)));
	json_object_set_new(o, "event", report_json_text(ci->event));
	json_object_set_new(o, "source", report_json_text(ci->source));
	json_object_set_new(o, "hardware", json_boolean(ci->hardware));
	json_object_set_new(o, "type", json_integer(ci->type));
	json_object_set_new(o, "config", json_string(cfg));
	json_object_set_new(o, "status", json_string(counter_status_name(ci->status)));
	json_object_set_new(o, "reason", report_json_text(ci->reason));
	return o;
}

/* The set-level counter list: the statuses of the first phase that opened counters. */
static json_t *counters_json(const struct report_input *in)
{
	json_t *arr = json_array();
	const struct run_results *rr = in->results;

	for (size_t i = 0; i < rr->n; i++) {
		if (!rr->phases[i].n_counters)
			continue;
		for (size_t j = 0; j < rr->phases[i].n_counters; j++)
			json_array_append_new(arr, report_counter_info_json(&rr->phases[i].counter_info[j]));
		return arr;
	}
	for (size_t j = 0; in->counters && j < counter_set_size(in->counters); j++)
		json_array_append_new(arr, report_counter_info_json(counter_set_info(in->counters, j)));
	return arr;
}

/* The counted first touch of the region: faults per page show the real backing too. */
static json_t *prefault_json(const struct phase_result *r)
{
	json_t *o = json_object(), *ctrs = json_object();

	json_object_set_new(o, "pages", json_integer((json_int_t)r->prefault_pages));
	json_object_set_new(o, "elapsed_ns", num(r->prefault_ns));
	json_object_set_new(o, "ns_per_page", r->prefault_pages ? num(r->prefault_ns / (double)r->prefault_pages)
							      : json_null());
	for (size_t i = 0; r->prefault_counters && i < r->n_counters; i++) {
		const struct counter_info *ci = &r->counter_info[i];
		if (ci->status != COUNTER_OK && ci->status != COUNTER_MULTIPLEXED)
			continue;
		json_object_set_new(ctrs, ci->name, json_integer((json_int_t)(r->prefault_counters[i].scaled + 0.5)));
	}
	json_object_set_new(o, "counters", ctrs);
	return o;
}

/* A stats object over per-sample values computed by fn; samples without a value are left out. */
static json_t *fault_stats_json(const struct phase_result *r, double (*fn)(const struct fault_sample *))
{
	double *v = calloc(r->n_fault_samples + 1, sizeof(double));
	size_t n = 0;
	struct stats_summary st;
	json_t *o;

	for (size_t i = 0; v && i < r->n_fault_samples; i++) {
		double x = fn(&r->fault_samples[i]);
		if (x >= 0)
			v[n++] = x;
	}
	if (!n) {
		free(v);
		return json_null();
	}
	stats_summarize(v, n, &st);
	o = stats_json(&st, v, n, 1.0);
	free(v);
	return o;
}

static double sample_faults(const struct fault_sample *s)
{
	return s->minor >= 0 && s->major >= 0 ? s->minor + s->major : (double)(s->minor_rusage + s->major_rusage);
}

static double sample_ns_per_fault(const struct fault_sample *s)
{
	double f = sample_faults(s);
	return f > 0 ? s->elapsed_ns / f : -1;
}

static double sample_ns_per_page(const struct fault_sample *s)
{
	return s->pages ? s->elapsed_ns / (double)s->pages : -1;
}

/* The page-fault fields of a phase (issue contract: case, pages, faults, ns_per_fault, ns_per_page, cpu_time). */
static void fault_json(json_t *o, const struct phase_result *r)
{
	struct fault_metrics fm;
	json_t *samples = json_array();

	analysis_fault_metrics(r->fault_samples, r->n_fault_samples, &fm);
	json_object_set_new(o, "case", json_string(fault_case_name(r->spec.fault_case)));
	json_object_set_new(o, "pages", json_integer((json_int_t)r->spec.iterations));
	json_object_set_new(o, "processes", json_integer(r->processes_run));
	/* A case that could not be measured still says what it found (file_cold: the resident fraction). */
	json_object_set_new(o, "resident_before", num(fm.valid ? fm.resident_before : r->skipped_resident));
	json_object_set_new(o, "fault_samples", samples);
	if (!fm.valid) {
		json_object_set_new(o, "faults", json_null());
		json_object_set_new(o, "ns_per_fault", json_null());
		json_object_set_new(o, "ns_per_page", json_null());
		json_object_set_new(o, "cpu_time", json_null());
		return;
	}
	json_object_set_new(o, "faults", json_pack("{s:o, s:o, s:s, s:b}", "minor", num(fm.minor), "major", num(fm.major),
						   "source", fm.from_counters ? "perf" : "getrusage", "rusage_agrees",
						   fm.rusage_agrees));
	json_object_set_new(o, "ns_per_fault", fault_stats_json(r, sample_ns_per_fault));
	json_object_set_new(o, "ns_per_page", fault_stats_json(r, sample_ns_per_page));
	json_object_set_new(o, "pages_per_fault", fm.pages_per_fault.n ? num(fm.pages_per_fault.median) : json_null());
	json_object_set_new(o, "mib_per_s", num(fm.mib_per_s.median));
	/* Totals over all samples (and processes); divide by "samples" for one touch. */
	json_object_set_new(o, "cpu_time", json_pack("{s:o, s:o, s:o, s:i}", "user_s", num(fm.user_s), "sys_s",
						     num(fm.sys_s), "wall_s", num(fm.wall_s), "samples",
						     (int)r->n_fault_samples));
	json_object_set_new(o, "process_spread", num(fm.process_spread));
	for (size_t i = 0; i < r->n_fault_samples; i++) {
		const struct fault_sample *s = &r->fault_samples[i];
		json_array_append_new(samples, json_pack("{s:i, s:o, s:I, s:o, s:o, s:I, s:I, s:o, s:o, s:o}", "process",
							 (int)s->process, "elapsed_ns", num(s->elapsed_ns), "pages",
							 (json_int_t)s->pages, "minor", s->minor >= 0 ? num(s->minor) : json_null(),
							 "major", s->major >= 0 ? num(s->major) : json_null(), "minor_rusage",
							 (json_int_t)s->minor_rusage, "major_rusage", (json_int_t)s->major_rusage,
							 "user_ns", num(s->user_ns), "sys_ns", num(s->sys_ns), "resident_before",
							 num(s->resident_before)));
	}
}

static json_t *hex_or_null(bool has, uint64_t v)
{
	char buf[32];

	if (!has)
		return json_null();
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
	return json_string(buf);
}

/* tlbprof run: what the benchmark declared for a phase, and what its occurrences were. */
static json_t *declared_json(const struct phase_result *r)
{
	const struct target_phase *tp = r->target;
	json_t *o = json_object(), *wall = json_array();

	json_object_set_new(o, "occurrences", json_integer(tp->occurrences));
	json_object_set_new(o, "accesses", tp->has_accesses ? json_integer((json_int_t)r->spec.accesses_total) : json_null());
	json_object_set_new(o, "region_address", hex_or_null(tp->has_region, tp->region_addr));
	json_object_set_new(o, "region_bytes", tp->has_region ? json_integer((json_int_t)tp->region_bytes) : json_null());
	json_object_set_new(o, "page", tp->has_page ? report_json_text(r->spec.page.label) : json_null());
	json_object_set_new(o, "chain_address", hex_or_null(tp->has_chain, tp->chain_addr));
	json_object_set_new(o, "slots", tp->slots_declared ? json_integer((json_int_t)tp->slots_declared) : json_null());
	json_object_set_new(o, "kind", json_string(r->spec.throughput ? "throughput" : "latency"));
	json_object_set_new(o, "timings", json_integer((json_int_t)(r->spec.timings ? r->spec.timings : 1)));
	json_object_set_new(o, "chain_inspected", json_boolean(tp->chain_inspected));
	if (tp->chain_inspected) {
		json_object_set_new(o, "chain_cycle_slots", json_integer((json_int_t)tp->chain_cycle_slots));
		json_object_set_new(o, "chain_pages_covered", num(tp->chain_pages_covered));
	}
	json_object_set_new(o, "open_at_exit", json_boolean(tp->open_at_exit));
	json_object_set_new(o, "samples_in_phase", tp->samples_in_phase >= 0 ? json_integer(tp->samples_in_phase) : json_null());
	for (size_t i = 0; i < tp->n_wall; i++)
		json_array_append_new(wall, num(tp->wall_ns[i]));
	json_object_set_new(o, "wall_ns", wall);
	json_object_set_new(o, "tlbprof_window_ns", num(tp->tlbprof_ns_total));
	return o;
}

static json_t *phase_json(const struct phase_result *r)
{
	const struct phase_spec *s = &r->spec;
	json_t *o = json_object(), *page = json_object(), *params = json_object(), *ctrs = json_object();
	json_t *checks = json_array(), *cyc;
	struct stats_summary st;
	double accesses = s->accesses_total ? (double)s->accesses_total : (double)s->iterations * (double)r->n_samples;
	double cycles;

	json_object_set_new(o, "name", report_json_text(s->name));
	json_object_set_new(o, "workload", json_string(s->workload->name));
	json_object_set_new(o, "role", json_string(phase_role_name(s->role)));
	if (s->role == PHASE_ROLE_CONTROL)
		json_object_set_new(o, "controls", json_pack("{s:I, s:I}", "size_bytes", (json_int_t)s->controls_size_bytes,
							     "stride_bytes", (json_int_t)s->controls_stride_bytes));
	json_object_set_new(o, "status", json_string(phase_status_name(r->status)));
	json_object_set_new(o, "reason", report_json_text(r->reason));
	json_object_set_new(o, "unavailable", json_boolean(r->unavailable));

	if (r->target && !r->target->has_page) {
		/* tlbprof run: the phase declared no page size. */
		json_object_set_new(page, "requested", json_null());
		json_object_set_new(page, "requested_bytes", json_null());
		json_object_set_new(page, "requested_backing", json_null());
	} else {
		json_object_set_new(page, "requested", report_json_text(s->page.label));
		json_object_set_new(page, "requested_bytes", json_integer((json_int_t)s->page.bytes));
		json_object_set_new(page, "requested_backing", json_string(page_kind_name(s->page.kind)));
	}
	if (r->backing_known) {
		json_object_set_new(page, "backing", json_string(page_kind_name(r->backing.kind)));
		json_object_set_new(page, "kernel_page_bytes", json_integer((json_int_t)r->backing.kernel_page_bytes));
		json_object_set_new(page, "huge_fraction", num(r->backing.huge_fraction));
		/* THP keeps KernelPageSize at 4 KiB; the TLB sees the huge page. */
		json_object_set_new(page, "effective_page_bytes",
				    json_integer((json_int_t)(r->backing.kind == PAGE_THP && r->backing.huge_fraction >= 0.999
								      ? r->spec.page.bytes
								      : r->backing.kernel_page_bytes)));
		json_object_set_new(page, "rss_bytes", json_integer((json_int_t)r->backing.rss_bytes));
		json_object_set_new(page, "anon_huge_bytes", json_integer((json_int_t)r->backing.anon_huge_bytes));
		json_object_set_new(page, "hugetlb_bytes", json_integer((json_int_t)r->backing.hugetlb_bytes));
		json_object_set_new(page, "vmas", json_integer(r->backing.vmas));
		json_object_set_new(page, "verified_from", json_string(r->target ? "/proc/PID/smaps of the command"
										    : "/proc/self/smaps"));
	} else {
		json_object_set_new(page, "backing", json_null());
		json_object_set_new(page, "kernel_page_bytes", json_null());
		json_object_set_new(page, "huge_fraction", json_null());
	}
	json_object_set_new(o, "page", page);

	json_object_set_new(params, "size_bytes", json_integer((json_int_t)s->size_bytes));
	json_object_set_new(params, "stride_bytes", json_integer((json_int_t)s->stride_bytes));
	json_object_set_new(params, "slots", json_integer((json_int_t)r->slots));
	json_object_set_new(params, "iterations", json_integer((json_int_t)s->iterations));
	json_object_set_new(params, "iterations_mode", json_string(s->iterations_auto ? "auto" : "fixed"));
	json_object_set_new(params, "allocations", json_integer(s->allocations ? s->allocations : 1));
	json_object_set_new(params, "warmup_iterations", json_integer((json_int_t)s->warmup_iterations));
	json_object_set_new(params, "repeat", json_integer(s->repeat));
	json_object_set_new(params, "seed", json_integer((json_int_t)s->seed));
	json_object_set_new(params, "cpu", s->cpu >= 0 ? json_integer(s->cpu) : json_null());
	json_object_set_new(params, "layout", json_string(layout_name(s->layout)));
	/* Accesses that share one page: the TLB reuse the access pattern allows (below 1: pages skipped). */
	uint64_t page_bytes = s->page.bytes;
	json_object_set_new(params, "accesses_per_page", num((double)page_bytes / (double)s->stride_bytes));
	json_object_set_new(o, "params", params);
	json_object_set_new(o, "prepare_ms", num(r->prepare_ms));
	json_object_set_new(o, "build_ms", num(r->build_ms));
	json_object_set_new(o, "overhead_us", json_pack("{s:o, s:o}", "counter_open", num(r->counter_open_us),
							"counter_read", num(r->counter_read_us)));
	/* How the sampling ended: the median's 95 % CI (relative half-width) against the target. */
	json_object_set_new(o, "precision", json_pack("{s:o, s:o, s:s, s:i}", "target",
						      s->iterations_auto ? num(s->precision) : json_null(), "reached",
						      num(r->precision_reached), "stop",
						      r->stop_reason ? r->stop_reason : "samples", "allocations",
						      (int)r->allocations_run));
	/* How each allocation was warmed before its samples (page-fault and run phases warm nothing). */
	if (!r->target && s->workload && !s->workload->per_sample_memory) {
		bool steady = s->iterations_auto;
		json_t *warm = json_pack("{s:s, s:I, s:o}", "method", steady ? "steady" : "fraction", "accesses",
					 (json_int_t)r->warmup_accesses, "ms", num(r->warmup_ms));
		json_object_set_new(warm, "passes", steady ? json_integer(r->warmup_passes) : json_null());
		json_object_set_new(warm, "max_passes", steady ? json_integer(r->warmup_max_passes) : json_null());
		json_object_set_new(warm, "unsettled", steady ? json_integer(r->warmup_unsettled) : json_null());
		json_object_set_new(o, "warmup", warm);
	}
	if (r->sample_alloc) {
		json_t *al = json_array();
		for (size_t i = 0; i < r->n_samples; i++)
			json_array_append_new(al, json_integer(r->sample_alloc[i]));
		json_object_set_new(o, "sample_allocations", al);
	}

	if (r->n_samples) {
		stats_summarize(r->samples_ns, r->n_samples, &st);
		json_object_set_new(o, "ns_per_access", stats_json(&st, r->samples_ns, r->n_samples, 1.0));
		if (r->cycles_per_ns > 0) {
			cyc = stats_json(&st, r->samples_ns, r->n_samples, r->cycles_per_ns);
			json_object_set_new(cyc, "method", json_string("calibrated_clock"));
			json_object_set_new(cyc, "core_clock_ghz", num(r->cycles_per_ns));
		} else {
			cyc = json_object();
			json_object_set_new(cyc, "median", json_null());
			json_object_set_new(cyc, "method", json_string("unavailable"));
		}
		if (analysis_counter(r, METRIC_CYCLES, &cycles) && accesses > 0)
			json_object_set_new(cyc, "counter_mean", num(cycles / accesses));
		json_object_set_new(o, "cycles_per_access", cyc);
	} else {
		json_object_set_new(o, "ns_per_access", json_null());
		json_object_set_new(o, "cycles_per_access", json_null());
	}

	/* Only counters that counted; the rest are listed with their status at the top level. */
	for (size_t i = 0; i < r->n_counters; i++) {
		const struct counter_info *ci = &r->counter_info[i];
		const struct counter_reading *cr = &r->counters[i];
		if (ci->status != COUNTER_OK && ci->status != COUNTER_MULTIPLEXED)
			continue;
		json_t *c = json_object();
		json_object_set_new(c, "value", json_integer((json_int_t)(cr->scaled + 0.5)));
		json_object_set_new(c, "raw", json_integer((json_int_t)cr->value));
		json_object_set_new(c, "per_access", accesses > 0 ? num(cr->scaled / accesses) : json_null());
		json_object_set_new(c, "enabled_ns", json_integer((json_int_t)cr->enabled_ns));
		json_object_set_new(c, "running_ns", json_integer((json_int_t)cr->running_ns));
		json_object_set_new(c, "multiplexed", json_boolean(ci->status == COUNTER_MULTIPLEXED));
		json_object_set_new(c, "metric", json_string(metric_name(ci->metric)));
		json_object_set_new(ctrs, ci->name, c);
	}
	json_object_set_new(o, "counters", ctrs);
	if (s->fault_case != FAULT_NONE)
		fault_json(o, r);
	else
		json_object_set_new(o, "prefault", prefault_json(r));
	json_object_set_new(o, "rusage", json_pack("{s:I, s:I}", "minor_faults", (json_int_t)r->rusage_minflt,
						   "major_faults", (json_int_t)r->rusage_majflt));
	json_object_set_new(o, "steal_ticks", json_integer((json_int_t)r->steal_ticks));
	json_object_set_new(o, "steal_ms", num(r->steal_ms));
	json_object_set_new(o, "timed_ns", num(r->timed_ns));
	for (size_t i = 0; i < r->n_self_checks; i++)
		json_array_append_new(checks, json_pack("{s:s, s:s, s:o}", "id", r->self_checks[i].id, "status",
							check_status_name(r->self_checks[i].status), "message",
							report_json_text(r->self_checks[i].message)));
	json_object_set_new(o, "self_checks", checks);
	if (r->target)
		json_object_set_new(o, "declared", declared_json(r));
	return o;
}

static json_t *analysis_json(const struct report_input *in)
{
	const struct analysis *a = in->analysis;
	const struct phase_result *ph = in->results->phases;
	json_t *o = json_object(), *cmps = json_array(), *checks = json_array(), *phases = json_array();
	json_t *findings = json_array();

	for (size_t i = 0; i < a->n_comparisons; i++) {
		const struct comparison *c = &a->comparisons[i];
		json_t *j = json_object();
		json_object_set_new(j, "baseline", report_json_text(ph[c->baseline].spec.name));
		json_object_set_new(j, "variant", report_json_text(ph[c->variant].spec.name));
		json_object_set_new(j, "size_bytes", json_integer((json_int_t)ph[c->variant].spec.size_bytes));
		json_object_set_new(j, "delta_ns", num(c->delta_ns));
		json_object_set_new(j, "speedup", num(c->speedup));
		json_object_set_new(j, "delta_tlb_misses_per_access",
				    c->have_tlb_counts ? num(c->delta_tlb_misses_per_access) : json_null());
		json_object_set_new(j, "ns_per_tlb_miss", c->ns_per_tlb_miss > 0 ? num(c->ns_per_tlb_miss) : json_null());
		json_object_set_new(j, "cycles_per_tlb_miss",
				    c->cycles_per_tlb_miss > 0 ? num(c->cycles_per_tlb_miss) : json_null());
		json_object_set_new(j, "attribution", json_pack("{s:o, s:o, s:o}", "tlb_ns", num(c->tlb_ns), "cache_ns",
								num(c->cache_ns), "unexplained_ns",
								num(c->unexplained_ns)));
		json_object_set_new(j, "method", report_json_text(c->method));
		json_object_set_new(j, "walk_cycles", json_boolean(c->have_walk_cycles));
		json_object_set_new(j, "baseline_translation_ns", c->has_control ? num(c->baseline_translation_ns) : json_null());
		json_object_set_new(j, "variant_translation_ns", c->has_control ? num(c->variant_translation_ns) : json_null());
		json_object_set_new(j, "assumption", report_json_text(c->assumption));
		json_array_append_new(cmps, j);
	}
	for (size_t i = 0; i < a->n_checks; i++) {
		const struct analysis_check *c = &a->checks[i];
		json_t *ev = json_object();
		for (size_t k = 0; k < c->evidence.n; k++)
			json_object_set_new(ev, c->evidence.items[k].key, num(c->evidence.items[k].value));
		json_array_append_new(checks, json_pack("{s:s, s:s, s:o, s:o}", "id", c->id, "status",
							check_status_name(c->status), "message", report_json_text(c->message),
							"evidence", ev));
	}
	for (size_t i = 0; i < a->n_phases; i++) {
		const struct phase_analysis *pa = &a->phases[i];
		json_t *j = json_object();
		json_object_set_new(j, "name", report_json_text(ph[i].spec.name));
		json_object_set_new(j, "control", pa->has_control ? report_json_text(ph[pa->control].spec.name) : json_null());
		json_object_set_new(j, "translation_ns", pa->has_control ? num(pa->translation_ns) : json_null());
		json_object_set_new(j, "allocations", json_integer(pa->allocations));
		json_object_set_new(j, "between_allocations", num(pa->between_allocations));
		json_object_set_new(j, "within_allocation", num(pa->within_allocation));
		json_array_append_new(phases, j);
	}
	for (size_t i = 0; i < a->n_findings; i++) {
		const struct analysis_finding *f = &a->findings[i];
		json_t *ev = json_object();
		for (size_t k = 0; k < f->evidence.n; k++)
			json_object_set_new(ev, f->evidence.items[k].key, num(f->evidence.items[k].value));
		json_array_append_new(findings, json_pack("{s:s, s:o, s:o}", "id", f->id, "message", report_json_text(f->message),
							  "evidence", ev));
	}
	json_t *steps = json_array();
	for (size_t i = 0; i < a->n_stride_steps; i++) {
		const struct stride_step *st = &a->stride_steps[i];
		json_t *j = json_object();
		json_object_set_new(j, "from", report_json_text(ph[st->from].spec.name));
		json_object_set_new(j, "to", report_json_text(ph[st->to].spec.name));
		json_object_set_new(j, "from_stride_bytes", json_integer((json_int_t)ph[st->from].spec.stride_bytes));
		json_object_set_new(j, "to_stride_bytes", json_integer((json_int_t)ph[st->to].spec.stride_bytes));
		json_object_set_new(j, "label", report_json_text(st->label));
		json_object_set_new(j, "delta_ns", num(st->delta_ns));
		json_object_set_new(j, "delta_cycles", num(st->delta_cycles));
		json_object_set_new(j, "dtlb_misses_per_access",
				    st->have_misses ? json_pack("{s:o, s:o}", "from", num(st->misses_from), "to",
								num(st->misses_to))
						    : json_null());
		json_array_append_new(steps, j);
	}
	json_object_set_new(o, "stride_steps", steps);
	json_t *knees = json_array();
	for (size_t i = 0; i < a->n_knees; i++) {
		const struct tlb_knee *tk = &a->knees[i];
		json_t *j = json_object();
		json_object_set_new(j, "pages", num(tk->knee.x_before));
		json_object_set_new(j, "pages_after", num(tk->knee.x_after));
		json_object_set_new(j, "page", report_json_text(tk->page_label));
		json_object_set_new(j, "before_ns", num(tk->knee.before_ns));
		json_object_set_new(j, "after_ns", num(tk->knee.after_ns));
		json_object_set_new(j, "step_ns", num(tk->knee.step_ns));
		json_object_set_new(j, "confidence", num(tk->knee.confidence));
		json_object_set_new(j, "cpuid",
				    tk->cpuid_level ? json_pack("{s:s, s:i, s:o, s:b}", "level", tk->cpuid_level, "entries",
								(int)tk->cpuid_entries, "relative_error",
								num(tk->relative_error), "matches", tk->matches)
						    : json_null());
		json_array_append_new(knees, j);
	}
	json_object_set_new(o, "knees", knees);
	json_object_set_new(o, "summary", report_json_text(a->summary));
	json_object_set_new(o, "phases", phases);
	json_object_set_new(o, "comparisons", cmps);
	json_object_set_new(o, "findings", findings);
	json_object_set_new(o, "checks", checks);
	return o;
}

static const char *signal_name(int sig)
{
	const char *abbrev = sigabbrev_np(sig);
	static char buf[16];

	if (!abbrev)
		return "?";
	snprintf(buf, sizeof(buf), "SIG%s", abbrev);
	return buf;
}

/* tlbprof run --sample: where the command's page faults came from (functions) and went (regions). */
static json_t *sampling_json(const struct target_result *tr)
{
	const struct sample_info *si = &tr->sample_info;
	const struct sample_summary *sum = &tr->sample_summary;
	json_t *o = json_object(), *fns, *regions;

	json_object_set_new(o, "event", report_json_text(tr->sampled ? si->event : tr->sample_requested));
	json_object_set_new(o, "error", *tr->sample_error ? report_json_text(tr->sample_error) : json_null());
	if (!tr->sampled)
		return o;
	json_object_set_new(o, "period", json_integer((json_int_t)si->period));
	json_object_set_new(o, "exclude_kernel", json_boolean(si->exclude_kernel));
	json_object_set_new(o, "note", report_json_text(si->note));
	json_object_set_new(o, "samples", json_integer((json_int_t)sum->samples));
	json_object_set_new(o, "lost", json_integer((json_int_t)si->lost));
	json_object_set_new(o, "throttled", json_integer((json_int_t)si->throttled));
	json_object_set_new(o, "unresolved_ip", json_integer((json_int_t)sum->unresolved_ip));
	json_object_set_new(o, "unresolved_addr", json_integer((json_int_t)sum->unresolved_addr));
	fns = json_array();
	regions = json_array();
	for (size_t i = 0; i < sum->n_functions; i++)
		json_array_append_new(fns, json_pack("{s:o, s:o, s:I, s:o}", "object", report_json_text(sum->functions[i].object),
						     "function", report_json_text(sum->functions[i].function), "count",
						     (json_int_t)sum->functions[i].count, "share", num(sum->functions[i].share)));
	for (size_t i = 0; i < sum->n_regions; i++) {
		char start[32], end[32];
		snprintf(start, sizeof(start), "0x%llx", (unsigned long long)sum->regions[i].start);
		snprintf(end, sizeof(end), "0x%llx", (unsigned long long)sum->regions[i].end);
		json_array_append_new(regions, json_pack("{s:o, s:s, s:s, s:b, s:I, s:o}", "name",
							 report_json_text(sum->regions[i].name),
							 "start", start, "end", end, "anonymous",
							 sum->regions[i].anonymous, "count",
							 (json_int_t)sum->regions[i].count, "share",
							 num(sum->regions[i].share)));
	}
	json_object_set_new(o, "top_functions", fns);
	json_object_set_new(o, "top_regions", regions);
	return o;
}

/* tlbprof run: the command, its exit, the marker traffic, its whole-run counters and its provenance. */
static json_t *target_json(const struct report_input *in)
{
	const struct target_report *t = in->target;
	const struct target_result *tr = t->result;
	json_t *o = json_object(), *argv = json_array(), *errors = json_array(), *ctrs = json_object();

	for (char **a = t->argv; *a; a++)
		json_array_append_new(argv, report_json_text(*a));
	json_object_set_new(o, "argv", argv);
	json_object_set_new(o, "path", report_json_text(t->path));
	json_object_set_new(o, "pid", json_integer(tr->pid));
	json_object_set_new(o, "started", json_boolean(tr->started));
	json_object_set_new(o, "exit_code", tr->exited ? json_integer(tr->exit_code) : json_null());
	json_object_set_new(o, "signal", tr->term_signal ? json_string(signal_name(tr->term_signal)) : json_null());
	json_object_set_new(o, "core_dumped", json_boolean(tr->core_dumped));
	json_object_set_new(o, "wall_ns", num(tr->wall_ns));
	json_object_set_new(o, "interrupted", json_boolean(tr->interrupted));
	json_object_set_new(o, "protocol", json_string(TARGET_PROTOCOL));
	for (unsigned i = 0; i < tr->errors && i < TARGET_MAX_ERRORS; i++)
		json_array_append_new(errors, report_json_text(tr->error_lines[i]));
	json_object_set_new(o, "markers", json_pack("{s:b, s:b, s:i, s:i, s:o, s:o}", "phase_markers", tr->markers_seen,
						    "perf_control", tr->control_seen, "messages", tr->messages,
						    "refused", tr->errors, "refusals", errors, "handling_us_median",
						    tr->messages ? num(tr->handling_us_median) : json_null()));
	for (size_t i = 0; i < tr->n_counters && tr->counters; i++) {
		const struct counter_info *ci = &tr->counter_info[i];
		if (ci->status != COUNTER_OK && ci->status != COUNTER_MULTIPLEXED)
			continue;
		json_object_set_new(ctrs, ci->name, json_pack("{s:I, s:I, s:I, s:s}", "value",
							    (json_int_t)(tr->counters[i].scaled + 0.5), "enabled_ns",
							    (json_int_t)tr->counters[i].enabled_ns, "running_ns",
							    (json_int_t)tr->counters[i].running_ns, "metric",
							    metric_name(ci->metric)));
	}
	json_object_set_new(o, "counters", ctrs);
	if (tr->sampled || *tr->sample_error)
		json_object_set_new(o, "sampling", sampling_json(tr));
	if (t->binary) {
		const struct elf_provenance *b = t->binary;
		json_t *bin = json_object();
		json_object_set_new(bin, "compiler", report_json_text(b->comment));
		json_object_set_new(bin, "recorded_switches", report_json_text(b->command_line));
		json_object_set_new(bin, "producers", report_json_text(b->producers));
		json_object_set_new(bin, "opt_level", *b->opt_level ? report_json_text(b->opt_level) : json_null());
		json_object_set_new(bin, "opt_levels", report_json_text(b->opt_levels));
		json_object_set_new(bin, "opt_level_defaulted", json_boolean(b->opt_level_defaulted));
		json_object_set_new(bin, "opt_source", json_string(elf_opt_source_name(b->opt_source)));
		json_object_set_new(bin, "pie", json_boolean(b->pie));
		json_object_set_new(bin, "symbols", json_boolean(b->has_symtab));
		json_object_set_new(bin, "debug_info", json_boolean(b->has_debug_info));
		json_object_set_new(bin, "build_id", *b->build_id ? report_json_text(b->build_id) : json_null());
		json_object_set_new(o, "binary", bin);
	} else {
		json_object_set_new(o, "binary", json_pack("{s:n, s:s}", "compiler", "error", t->binary_error));
	}
	return o;
}

/* A re-analysed report: every field as read, with the new analysis and verdict. */
static json_t *reanalysis_json(const struct report_input *in)
{
	json_t *root = json_deep_copy((const json_t *)in->source), *acmd = json_array();

	if (!root)
		return NULL;
	json_object_set_new(root, "analysis", analysis_json(in));
	json_object_set_new(root, "verdict", json_string(verdict_name(in->analysis->verdict)));
	for (int i = 0; i < in->analyze_argc; i++)
		json_array_append_new(acmd, report_json_text(in->analyze_argv[i]));
	json_object_set_new(root, "reanalysis", json_pack("{s:o, s:s, s:o}", "source", report_json_text(in->reanalyzed_from),
							  "tool_version", TLBPROF_VERSION, "command", acmd));
	return root;
}

json_t *report_json_build(const struct report_input *in)
{
	if (in->source)
		return reanalysis_json(in);

	json_t *root = json_object(), *cmd = json_array(), *phases = json_array();

	json_object_set_new(root, "schema", json_string(REPORT_SCHEMA));
	json_object_set_new(root, "tool", json_pack("{s:s, s:s}", "name", "tlbprof", "version", TLBPROF_VERSION));
	for (int i = 0; i < in->argc; i++)
		json_array_append_new(cmd, report_json_text(in->argv[i]));
	json_object_set_new(root, "command", cmd);
	json_object_set_new(root, "environment", report_environment_json(in->env, in->clock, in->pmu_name));
	json_object_set_new(root, "counters", counters_json(in));
	for (size_t i = 0; i < in->results->n; i++)
		json_array_append_new(phases, phase_json(&in->results->phases[i]));
	json_object_set_new(root, "phases", phases);
	json_object_set_new(root, "analysis", analysis_json(in));
	if (in->target)
		json_object_set_new(root, "target", target_json(in));
	json_object_set_new(root, "interrupted", json_boolean(in->results->interrupted));
	json_object_set_new(root, "verdict", json_string(verdict_name(in->analysis->verdict)));
	return root;
}

/* Flush f and turn a failed write into -errno (ENOSPC on /dev/full, EIO when stdio kept no errno). */
static int finish_stream(FILE *f)
{
	errno = 0;
	if (fflush(f) != 0 || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

char *report_link_target(const char *path)
{
	char *cur = strdup(path), buf[4096];

	/* As the kernel does: at most 40 links in a chain, then ELOOP. */
	for (int hops = 0; cur; hops++) {
		struct stat st;
		if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
			return cur;
		ssize_t n = hops < 40 ? readlink(cur, buf, sizeof(buf) - 1) : (errno = ELOOP, -1);
		if (n < 0) {
			free(cur);
			return NULL;
		}
		buf[n] = '\0';
		char *next = NULL, *dir = strdup(cur);
		/* A relative link is relative to the link's own directory. */
		if (!dir || (buf[0] == '/' ? !(next = strdup(buf)) : asprintf(&next, "%s/%s", dirname(dir), buf) < 0)) {
			next = NULL;
			errno = ENOMEM;
		}
		free(dir);
		free(cur);
		cur = next;
	}
	return NULL;
}

int report_write_file(const char *path, const char *option, const char *what,
		      int (*emit)(FILE *f, const void *ctx), const void *ctx, char *err, size_t err_len)
{
	char *tmp = NULL, *dircopy = NULL;
	int rc = 0, fd = -1;
	FILE *f = NULL;

	if (!path) {
		snprintf(err, err_len, "%s: no file to write the %s to", option, what);
		return -EINVAL;
	}
	if (strcmp(path, "-") == 0) {
		if ((rc = emit(stdout, ctx)) == 0)
			rc = finish_stream(stdout);
		if (rc)
			snprintf(err, err_len, "cannot write the %s to stdout: %s", what, strerror(-rc));
		return rc;
	}
	/*
	 * A device, FIFO or socket (/dev/stdout, a pipe) is written in place:
	 * renaming over it would replace the device node with a file.
	 */
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			rc = -EISDIR;
			snprintf(err, err_len, "%s '%s': is a directory", option, path);
		} else if (!(f = fopen(path, "we"))) {
			rc = -errno;
			snprintf(err, err_len, "%s '%s': cannot open: %s", option, path, strerror(-rc));
		} else {
			if ((rc = emit(f, ctx)) == 0)
				rc = finish_stream(f);
			if (fclose(f) != 0 && !rc)
				rc = -errno;
			if (rc)
				snprintf(err, err_len, "%s '%s': cannot write the %s: %s", option, path, what, strerror(-rc));
		}
		return rc;
	}
	/*
	 * A symlink: replace the file it names and keep the link, also when
	 * that file does not exist yet (as a shell's "> link" creates it).
	 */
	char *target = report_link_target(path);
	if (!target) {
		rc = -errno;
		snprintf(err, err_len, "%s '%s': cannot follow the link: %s", option, path, strerror(-rc));
		goto out;
	}
	/* The mode a plain write would leave: the replaced file's, or 0666 less the umask for a new one. */
	mode_t mode;
	if (stat(target, &st) == 0) {
		mode = st.st_mode & 07777;
	} else {
		mode = umask(0);	/* the only way to read it; set back at once */
		umask(mode);
		mode = 0666 & ~mode;
	}
	/* A temporary file next to the target, created exclusively (never through a symlink), then renamed. */
	dircopy = strdup(target);
	if (!dircopy || asprintf(&tmp, "%s/.tlbprof-%s.XXXXXX", dirname(dircopy), what) < 0) {
		tmp = NULL;
		rc = -ENOMEM;
		snprintf(err, err_len, "out of memory");
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, err_len, "%s '%s': cannot create a file in the directory of %s: %s", option, path, target,
			 strerror(-rc));
		free(tmp);
		tmp = NULL;
		goto out;
	}
	f = fdopen(fd, "w");
	if (!f) {
		rc = -errno;
		close(fd);
		goto fail;
	}
	if (fchmod(fd, mode) != 0) {
		rc = -errno;
		fclose(f);
		goto fail;
	}
	if ((rc = emit(f, ctx)) != 0 || (rc = finish_stream(f)) != 0 || (fsync(fd) != 0 && (rc = -errno))) {
		fclose(f);
		goto fail;
	}
	if (fclose(f) != 0) {
		rc = -errno;
		goto fail;
	}
	if (rename(tmp, target) != 0) {
		rc = -errno;
		goto fail;
	}
	goto out;
fail:
	snprintf(err, err_len, "%s '%s': cannot write the %s: %s", option, path, what, strerror(-rc));
	unlink(tmp);
out:
	free(tmp);
	free(dircopy);
	free(target);
	return rc;
}

int report_write_json(const struct report_input *in, const char *path, char *err, size_t err_len)
{
	return report_write_format(in, OUTPUT_JSON, path, "--json", err, err_len);
}

int report_json_dumpf(const json_t *root, FILE *f)
{
	errno = 0;
	if (json_dumpf(root, f, JSON_INDENT(2)) != 0 || fputc('\n', f) == EOF)
		return errno ? -errno : -EIO;
	return 0;
}

/* A JSON document as the stream writer of write_file(). */
static int json_stream(FILE *f, const void *ctx)
{
	return report_json_dumpf((const json_t *)ctx, f);
}

int report_json_dump(json_t *root, const char *path, char *err, size_t err_len)
{
	return report_write_file(path, "--json", "report", json_stream, root, err, err_len);
}

/* A format as the stream writer of write_file(). */
struct format_job {
	const struct report_input *in;
	enum output_format format;
};

static int format_stream(FILE *f, const void *ctx)
{
	const struct format_job *job = ctx;

	return report_format_write(job->in, job->format, f);
}

int report_write_format(const struct report_input *in, enum output_format fmt, const char *path, const char *option,
			char *err, size_t err_len)
{
	const struct format_job job = { .in = in, .format = fmt };
	int rc = report_write_file(path, option, "report", format_stream, &job, err, err_len);

	if (rc == -ENOMEM)
		snprintf(err, err_len, "out of memory building the %s report", output_format_name(fmt));
	return rc;
}

/* A short label of the verified backing: "base 4K", "thp 100% 2M", "-" when unknown. */
void report_backing_label(const struct phase_result *r, char *buf, size_t len)
{
	char sz[16];

	if (!r->backing_known) {
		snprintf(buf, len, "-");
		return;
	}
	if (r->backing.kind == PAGE_THP)
		snprintf(buf, len, "thp %.0f%% 2M", 100.0 * r->backing.huge_fraction);
	else
		snprintf(buf, len, "%s %s", page_kind_name(r->backing.kind),
			 format_size(r->backing.kernel_page_bytes, sz, sizeof(sz)));
}

/* A per-access counter rate, or "n/a" when the counter did not count. */
static void rate_label(const struct phase_result *r, enum metric m, char *buf, size_t len)
{
	double v;

	if (analysis_per_access(r, m, &v))
		snprintf(buf, len, "%.3g", v);
	else
		snprintf(buf, len, "n/a");
}

static void count_label(const struct phase_result *r, enum metric m, char *buf, size_t len)
{
	double v;

	if (analysis_counter(r, m, &v))
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "n/a");
}

/* Table order: run order, except that a tlbsize sweep is listed by pages touched. */
static int cmp_table_order(const void *pa, const void *pb, void *ctx)
{
	const struct phase_result *ph = ctx;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	const struct phase_spec *x = &ph[a].spec, *y = &ph[b].spec;

	if (x->workload == y->workload && x->workload->sweep == WORKLOAD_SWEEP_PAGE_COUNTS && x->size_bytes != y->size_bytes)
		return x->size_bytes < y->size_bytes ? -1 : 1;
	return (a > b) - (a < b);
}

static const char *signal_name(int sig);

/* tlbprof run: the command's line of the table header. */
static void print_target(const struct target_report *t, FILE *f)
{
	const struct target_result *tr = t->result;
	char how[64];

	if (tr->term_signal)
		snprintf(how, sizeof(how), "was killed by %s", signal_name(tr->term_signal));
	else if (tr->exited)
		snprintf(how, sizeof(how), "exited %d", tr->exit_code);
	else
		snprintf(how, sizeof(how), "did not start");
	fprintf(f, "command: %s %s after %.3f s; %u marker/control message%s", *t->path ? t->path : t->argv[0], how,
		tr->wall_ns / 1e9, tr->messages, tr->messages == 1 ? "" : "s");
	if (tr->errors)
		fprintf(f, " (%u refused, first: %s)", tr->errors, tr->error_lines[0]);
	if (tr->messages)
		fprintf(f, ", %.1f us handling each", tr->handling_us_median);
	fputc('\n', f);
	if (tr->sampled) {
		const struct sample_summary *sum = &tr->sample_summary;
		fprintf(f, "%s sampled: %llu (%llu lost)%s%s\n", tr->sample_requested, (unsigned long long)sum->samples,
			(unsigned long long)tr->sample_info.lost, *tr->sample_info.note ? "; " : "", tr->sample_info.note);
		for (size_t i = 0; i < sum->n_functions && i < 5; i++)
			fprintf(f, "  %5.1f%%  %s in %s\n", 100 * sum->functions[i].share, sum->functions[i].function,
				sum->functions[i].object);
		for (size_t i = 0; i < sum->n_regions && i < 5; i++)
			fprintf(f, "  %5.1f%%  of faults in %s 0x%llx-0x%llx (%.1f MiB)\n", 100 * sum->regions[i].share,
				sum->regions[i].name, (unsigned long long)sum->regions[i].start,
				(unsigned long long)sum->regions[i].end,
				(double)(sum->regions[i].end - sum->regions[i].start) / (1 << 20));
	} else if (*tr->sample_error) {
		fprintf(f, "%s not sampled: %s\n", tr->sample_requested, tr->sample_error);
	}
	if (t->binary)
		fprintf(f, "binary: %s; optimisation %s%s%s%s\n",
			*t->binary->comment ? t->binary->comment : "compiler not recorded",
			*t->binary->opt_level ? t->binary->opt_level : "not recorded",
			strcmp(t->binary->opt_level, "mixed") == 0 ? " " : "", strcmp(t->binary->opt_level, "mixed") == 0
			? t->binary->opt_levels : "", *t->binary->opt_level ? (t->binary->opt_source == ELF_OPT_SOURCE_COMMAND_LINE
			? " (.GCC.command.line)" : " (DWARF producer)") : "");
	else
		fprintf(f, "binary: not read (%s)\n", t->binary_error);
}

void report_print_text(const struct report_input *in, FILE *f)
{
	const struct environment *env = in->env;
	const struct run_results *rr = in->results;
	const struct analysis *a = in->analysis;
	size_t ok = 0, hw = 0, total = 0;

	fprintf(f, "%s%s.\n\n", rr->interrupted ? "interrupted: " : "", a->summary);
	fprintf(f, "tlbprof %s: %s on %s%s%s%s, kernel %s\n", TLBPROF_VERSION, in->target || !in->workload ? "run" : in->workload->name,
		*env->cpu_model_name ? env->cpu_model_name : "unknown CPU", *env->hypervisor ? " (" : "",
		env->hypervisor, *env->hypervisor ? " guest)" : "", env->kernel);
	if (in->clock->core_clock_ghz > 0)
		fprintf(f, "core clock %.2f GHz (dependent adds, IQR %.1f%%), clock overhead %.0f ns, THP %s\n",
			in->clock->core_clock_ghz, 100 * in->clock->core_clock_spread, in->clock->clock_overhead_ns,
			*env->thp_enabled ? env->thp_enabled : "unknown");
	for (size_t i = 0; i < rr->n && !total; i++) {
		for (size_t j = 0; j < rr->phases[i].n_counters; j++) {
			const struct counter_info *ci = &rr->phases[i].counter_info[j];
			total++;
			ok += ci->status == COUNTER_OK || ci->status == COUNTER_MULTIPLEXED;
			hw += ci->hardware && (ci->status == COUNTER_OK || ci->status == COUNTER_MULTIPLEXED);
		}
	}
	if (total)
		fprintf(f, "counters: %zu of %zu counting (PMU %s)%s\n", ok, total, in->pmu_name ? in->pmu_name : "none",
			hw ? "" : "; no hardware events: software counters only, cycles from the calibrated clock");
	if (in->target)
		print_target(in->target, f);

	int w = 5;	/* the phase column fits the longest name */
	for (size_t i = 0; i < rr->n; i++)
		if ((int)strlen(rr->phases[i].spec.name) > w)
			w = (int)strlen(rr->phases[i].spec.name);
	fprintf(f, "\n%-*s %-12s %10s %7s %8s %8s %10s  %s\n", w, "phase", "backing", "ns/access", "spread",
		"cycles", "faults", "dTLB-miss", "self-checks");
	/* A tlbsize sweep runs in random order; people read it as a curve, by pages. */
	size_t *order = malloc((rr->n ? rr->n : 1) * sizeof(*order));
	for (size_t i = 0; order && i < rr->n; i++)
		order[i] = i;
	if (order)
		qsort_r(order, rr->n, sizeof(*order), cmp_table_order, (void *)rr->phases);
	for (size_t row = 0; row < rr->n; row++) {
		const struct phase_result *r = &rr->phases[order ? order[row] : row];
		char back[32], faults[24], miss[24];
		size_t pass = 0;

		report_backing_label(r, back, sizeof(back));
		if (r->status == PHASE_OK && !r->n_samples && r->target) {
			/* A marked phase that declared no accesses: its wall time is all there is per occurrence. */
			struct stats_summary wst;
			count_label(r, METRIC_PAGE_FAULTS, faults, sizeof(faults));
			stats_summarize(r->target->wall_ns, r->target->n_wall, &wst);
			fprintf(f, "%-*s %-12s %u occurrence%s, wall median %.3f ms (spread %.1f%%), %s page faults\n", w,
				r->spec.name, back, r->target->occurrences, r->target->occurrences == 1 ? "" : "s",
				wst.median / 1e6, 100 * wst.rel_spread, faults);
			continue;
		}
		if (r->status != PHASE_OK || !r->n_samples) {
			fprintf(f, "%-*s %-12s %s: %s\n", w, r->spec.name, back, phase_status_name(r->status), r->reason);
			continue;
		}
		/* The analysis already has each phase's statistics. */
		const struct stats_summary st = a->phases[order ? order[row] : row].ns;
		count_label(r, METRIC_PAGE_FAULTS, faults, sizeof(faults));
		rate_label(r, METRIC_DTLB_LOAD_MISSES, miss, sizeof(miss));
		size_t ran = 0;	/* a skipped self-check (too few slots to judge) is neither */
		for (size_t k = 0; k < r->n_self_checks; k++) {
			pass += r->self_checks[k].status == CHECK_PASS;
			ran += r->self_checks[k].status != CHECK_SKIP;
		}
		fprintf(f, "%-*s %-12s %10.2f %6.1f%% %8.1f %8s %10s  %zu/%zu pass\n", w, r->spec.name, back, st.median,
			100 * st.rel_spread, st.median * r->cycles_per_ns, faults, miss, pass, ran);
	}
	free(order);
	fprintf(f, "(ns/access: median of all samples of all allocations; spread: (max-min)/median; faults: page "
		"faults during the timed samples; dTLB-miss: per access)\n");

	if (a->n_comparisons) {
		fprintf(f, "\n%-8s %-16s %10s %10s %9s %8s %11s  %s\n", "size", "pages", "base ns", "variant ns",
			"delta ns", "speedup", "translation", "method");
		for (size_t i = 0; i < a->n_comparisons; i++) {
			const struct comparison *c = &a->comparisons[i];
			const struct phase_spec *b = &rr->phases[c->baseline].spec, *v = &rr->phases[c->variant].spec;
			const struct phase_analysis *pb = &a->phases[c->baseline];
			char label[48], sz[16], tr[24] = "n/a";
			if (b->fault_case != FAULT_NONE)
				snprintf(label, sizeof(label), "%s -> %s %s", b->page.label, v->page.label,
					 fault_case_name(b->fault_case));
			else if (b->workload->sweep == WORKLOAD_SWEEP_STRIDES)
				snprintf(label, sizeof(label), "%s -> %s s%s", b->page.label, v->page.label,
					 format_size(b->stride_bytes, sz, sizeof(sz)));
			else
				snprintf(label, sizeof(label), "%s -> %s", b->page.label, v->page.label);
			if (pb->has_control)
				snprintf(tr, sizeof(tr), "%.1f ns", pb->translation_ns);
			fprintf(f, "%-8s %-16s %10.2f %10.2f %9.2f %7.2fx %11s  %s", format_size(v->size_bytes, sz, sizeof(sz)),
				label, pb->ns.median, a->phases[c->variant].ns.median, c->delta_ns, c->speedup, tr, c->method);
			if (c->ns_per_tlb_miss > 0)
				fprintf(f, ", %.1f ns (%.0f cycles) per dTLB miss", c->ns_per_tlb_miss, c->cycles_per_tlb_miss);
			fputc('\n', f);
		}
		fprintf(f, "(translation: %s ns per access minus its packed control's, where a control ran)\n",
			"baseline");
	}
	bool faults = false;
	for (size_t i = 0; i < a->n_phases; i++)
		faults |= a->phases[i].faults.valid;
	if (faults) {
		fprintf(f, "\n%-14s %-5s %9s %10s %11s %9s %7s %8s %8s %8s %6s %5s\n", "case", "pages", "ns/page", "ns/fault",
			"pages/fault", "minor", "major", "user ms", "sys ms", "wall ms", "MiB/s", "procs");
		for (size_t i = 0; i < a->n_phases; i++) {
			const struct fault_metrics *fm = &a->phases[i].faults;
			const struct phase_spec *sp = &rr->phases[i].spec;
			if (!fm->valid || rr->phases[i].status != PHASE_OK)
				continue;
			fprintf(f, "%-14s %-5s %9.1f %10.0f %11.3g %9.0f %7.0f %8.1f %8.1f %8.1f %6.0f %5u\n",
				fault_case_name(sp->fault_case), sp->page.label, fm->ns_per_page.median,
				fm->ns_per_fault.n ? fm->ns_per_fault.median : 0.0,
				fm->pages_per_fault.n ? fm->pages_per_fault.median : 0.0, fm->minor, fm->major,
				1e3 * fm->user_s, 1e3 * fm->sys_s, 1e3 * fm->wall_s, fm->mib_per_s.median, fm->processes);
		}
		fprintf(f, "(ns, pages/fault, faults and MiB/s: medians per sample over all processes; user, sys and wall "
			   "ms: totals over all samples; faults from %s. A minor fault burns kernel CPU "
			   "(sys close to wall); a major fault waits on I/O (wall far above user + sys). file_warm maps "
			   "several page-cache pages per fault (fault-around, %s).)\n",
			"the perf software counters, cross-checked with getrusage",
			in->env->fault_around_bytes > 0 ? "see fault_around_bytes" : "fault_around_bytes unreadable here");
	}
	if (a->n_stride_steps) {
		fprintf(f, "\n%-8s %-6s %-16s %10s %8s  %-12s %s\n", "size", "pages", "stride", "delta ns", "cycles",
			"step", "dTLB misses/access");
		for (size_t i = 0; i < a->n_stride_steps; i++) {
			const struct stride_step *st = &a->stride_steps[i];
			const struct phase_spec *fr = &rr->phases[st->from].spec, *to = &rr->phases[st->to].spec;
			char sz[16], s1[16], s2[16], label[40], miss[48] = "n/a";
			snprintf(label, sizeof(label), "%sB -> %sB", format_size(fr->stride_bytes, s1, sizeof(s1)),
				 format_size(to->stride_bytes, s2, sizeof(s2)));
			if (st->have_misses)
				snprintf(miss, sizeof(miss), "%.3g -> %.3g", st->misses_from, st->misses_to);
			fprintf(f, "%-8s %-6s %-16s %10.2f %8.1f  %-12s %s\n", format_size(fr->size_bytes, sz, sizeof(sz)),
				fr->page.label, label, st->delta_ns, st->delta_cycles, st->label, miss);
		}
		fprintf(f, "(cache: more new lines per access; tlb: same lines, more pages per access; flat: one access "
			   "per page either way; within-page: huge pages, still many accesses per page)\n");
	}
	if (a->n_knees) {
		fprintf(f, "\n%-10s %-10s %10s %10s %10s  %s\n", "knee at", "next", "before ns", "after ns", "confidence",
			"CPUID");
		for (size_t i = 0; i < a->n_knees; i++) {
			const struct tlb_knee *tk = &a->knees[i];
			char cpuid[80] = "not reported";
			if (tk->cpuid_level)
				snprintf(cpuid, sizeof(cpuid), "%s %s %u (%+.0f %%)", tk->matches ? "matches" : "nearest",
					 tk->cpuid_level, tk->cpuid_entries, 100 * tk->relative_error);
			fprintf(f, "%-10.0f %-10.0f %10.2f %10.2f %10.1f  %s\n", tk->knee.x_before, tk->knee.x_after,
				tk->knee.before_ns, tk->knee.after_ns, tk->knee.confidence, cpuid);
		}
		fprintf(f, "(pages: 4 KiB pages touched; a knee is a candidate capacity, confirmed only by CPUID)\n");
	}
	for (size_t i = 0; i < a->n_findings; i++)
		fprintf(f, "\nfinding %s: %s\n", a->findings[i].id, a->findings[i].message);

	fprintf(f, "\nchecks:\n");
	for (size_t i = 0; i < a->n_checks; i++)
		fprintf(f, "  %-5s %-26s %s\n", check_status_name(a->checks[i].status), a->checks[i].id,
			a->checks[i].message);
	fprintf(f, "verdict: %s%s\n", verdict_name(a->verdict), rr->interrupted ? " (interrupted)" : "");
}

int report_emit(const struct report_input *in, const struct report_outputs *out)
{
	bool to_stdout = out->json_path && strcmp(out->json_path, "-") == 0;
	char msg[512];

	for (size_t i = 0; i < out->n_formats; i++) {
		const char *p = out->format_paths[out->formats[i]] ? out->format_paths[out->formats[i]]
			      : out->output_dir ? NULL : out->output_path;
		to_stdout |= p && strcmp(p, "-") == 0;
	}

	if (!out->quiet) {
		FILE *f = to_stdout ? stderr : stdout;
		report_print_text(in, f);
		if (fflush(f) != 0 || ferror(f)) {
			snprintf(msg, sizeof(msg), "cannot write the table to %s: %s", to_stdout ? "stderr" : "stdout",
				 strerror(errno));
			report_error(msg);
			return -1;
		}
	}
	/* Every output is tried, so one that cannot be written does not cost the others. */
	int rc = 0;
	if (out->json_path && report_write_json(in, out->json_path, msg, sizeof(msg)) != 0) {
		report_error(msg);
		rc = -1;
	}
	for (size_t i = 0; i < out->n_formats; i++) {
		char *path = NULL;
		const char *target = out->format_paths[out->formats[i]] ? out->format_paths[out->formats[i]]
									: out->output_path;
		if (!out->format_paths[out->formats[i]] && out->output_dir) {
			size_t n = strlen(out->output_path);
			const char *sep = n && out->output_path[n - 1] == '/' ? "" : "/";
			if (asprintf(&path, "%s%s%s", out->output_path, sep, report_format_file_name(out->formats[i])) < 0) {
				report_error("out of memory");
				return -1;
			}
		}
		if (report_write_format(in, out->formats[i], path ? path : target, "--output", msg, sizeof(msg)) != 0) {
			report_error(msg);
			rc = -1;
		}
		free(path);
	}
	return rc;
}
