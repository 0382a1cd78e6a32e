/* SPDX-License-Identifier: MIT */
/* The native tlbprof.report/1 document: environment, counters, phases, analysis and, for tlbprof run, the command. */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parse.h"
#include "pmu/elfinfo.h"
#include "report/internal.h"
#include "report/report.h"
#include "target/target.h"
#include "version.h"
#include "measure/workload.h"

static json_t *stats_json(const struct stats_summary *st, const double *samples, size_t n, double scale)
{
	json_t *o = json_object(), *arr = json_array();

	json_object_set_new(o, "median", report_json_num(st->median * scale));
	json_object_set_new(o, "min", report_json_num(st->min * scale));
	json_object_set_new(o, "max", report_json_num(st->max * scale));
	json_object_set_new(o, "mean", report_json_num(st->mean * scale));
	json_object_set_new(o, "stddev", report_json_num(st->stddev * scale));
	json_object_set_new(o, "rel_spread", report_json_num(st->rel_spread));
	for (size_t i = 0; samples && i < n; i++)
		json_array_append_new(arr, report_json_num(samples[i] * scale));
	json_object_set_new(o, "samples", arr);
	return o;
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
	json_object_set_new(o, "elapsed_ns", report_json_num(r->prefault_ns));
	json_object_set_new(o, "ns_per_page", r->prefault_pages ? report_json_num(r->prefault_ns / (double)r->prefault_pages)
							      : json_null());
	for (size_t i = 0; r->prefault_counters && i < r->n_counters; i++) {
		const struct counter_info *ci = &r->counter_info[i];
		if (!counter_counting(ci))
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
	json_object_set_new(o, "resident_before", report_json_num(fm.valid ? fm.resident_before : r->skipped_resident));
	json_object_set_new(o, "fault_samples", samples);
	if (!fm.valid) {
		json_object_set_new(o, "faults", json_null());
		json_object_set_new(o, "ns_per_fault", json_null());
		json_object_set_new(o, "ns_per_page", json_null());
		json_object_set_new(o, "cpu_time", json_null());
		return;
	}
	json_object_set_new(o, "faults", json_pack("{s:o, s:o, s:s, s:b}", "minor", report_json_num(fm.minor), "major", report_json_num(fm.major),
						   "source", fm.from_counters ? "perf" : "getrusage", "rusage_agrees",
						   fm.rusage_agrees));
	json_object_set_new(o, "ns_per_fault", fault_stats_json(r, sample_ns_per_fault));
	json_object_set_new(o, "ns_per_page", fault_stats_json(r, sample_ns_per_page));
	json_object_set_new(o, "pages_per_fault", fm.pages_per_fault.n ? report_json_num(fm.pages_per_fault.median) : json_null());
	json_object_set_new(o, "mib_per_s", report_json_num(fm.mib_per_s.median));
	/* Totals over all samples (and processes); divide by "samples" for one touch. */
	json_object_set_new(o, "cpu_time", json_pack("{s:o, s:o, s:o, s:i}", "user_s", report_json_num(fm.user_s), "sys_s",
						     report_json_num(fm.sys_s), "wall_s", report_json_num(fm.wall_s), "samples",
						     (int)r->n_fault_samples));
	json_object_set_new(o, "process_spread", report_json_num(fm.process_spread));
	for (size_t i = 0; i < r->n_fault_samples; i++) {
		const struct fault_sample *s = &r->fault_samples[i];
		json_array_append_new(samples, json_pack("{s:i, s:o, s:I, s:o, s:o, s:I, s:I, s:o, s:o, s:o}", "process",
							 (int)s->process, "elapsed_ns", report_json_num(s->elapsed_ns), "pages",
							 (json_int_t)s->pages, "minor", s->minor >= 0 ? report_json_num(s->minor) : json_null(),
							 "major", s->major >= 0 ? report_json_num(s->major) : json_null(), "minor_rusage",
							 (json_int_t)s->minor_rusage, "major_rusage", (json_int_t)s->major_rusage,
							 "user_ns", report_json_num(s->user_ns), "sys_ns", report_json_num(s->sys_ns), "resident_before",
							 report_json_num(s->resident_before)));
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
	json_object_set_new(o, "accesses", tp->has_accesses && r->spec.accesses_total
					   ? json_integer((json_int_t)r->spec.accesses_total) : json_null());
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
		json_object_set_new(o, "chain_pages_covered", report_json_num(tp->chain_pages_covered));
	}
	json_object_set_new(o, "open_at_exit", json_boolean(tp->open_at_exit));
	/* The declared range's backing clipped to it, and tlbprof's own chase of the same shape. */
	json_object_set_new(o, "resident_fraction", tp->resident_fraction >= 0 ? report_json_num(tp->resident_fraction) : json_null());
	json_object_set_new(o, "zero_page_fraction", tp->resident_fraction >= 0 ? report_json_num(tp->zero_fraction) : json_null());
	json_object_set_new(o, "backing_source", tp->resident_fraction < 0 ? json_null()
					       : json_string(tp->backing_exact ? "pagemap" : "smaps"));
	json_object_set_new(o, "vm_nohugepage", json_boolean(tp->vm_nh));
	json_object_set_new(o, "vm_hugepage", json_boolean(tp->vm_hg));
	json_object_set_new(o, "reference_ns_per_access", tp->reference_ns > 0 ? report_json_num(tp->reference_ns) : json_null());
	json_object_set_new(o, "reference_why", report_json_text(tp->reference_why));
	json_object_set_new(o, "samples_in_phase", tp->samples_in_phase >= 0 ? json_integer(tp->samples_in_phase) : json_null());
	for (size_t i = 0; i < tp->n_wall; i++)
		json_array_append_new(wall, report_json_num(tp->wall_ns[i]));
	json_object_set_new(o, "wall_ns", wall);
	json_object_set_new(o, "tlbprof_window_ns", report_json_num(tp->tlbprof_ns_total));
	return o;
}

/* What was asked of the page size and, where smaps verified it, what backed the region. */
static json_t *page_json(const struct phase_result *r)
{
	const struct phase_spec *s = &r->spec;
	json_t *page = json_object();

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
		json_object_set_new(page, "huge_fraction", report_json_num(r->backing.huge_fraction));
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
	return page;
}

/* The phase's parameters: region, stride, iterations, placement. */
static json_t *params_json(const struct phase_result *r)
{
	const struct phase_spec *s = &r->spec;
	json_t *params = json_object();

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
	json_object_set_new(params, "accesses_per_page", report_json_num((double)page_bytes / (double)s->stride_bytes));
	return params;
}

/*
 * How the phase was measured, into o: setup times, the counters' own cost,
 * how sampling ended, the warmup, and which allocation each sample timed.
 */
static void method_json(json_t *o, const struct phase_result *r)
{
	const struct phase_spec *s = &r->spec;

	json_object_set_new(o, "prepare_ms", report_json_num(r->prepare_ms));
	json_object_set_new(o, "build_ms", report_json_num(r->build_ms));
	/* Where the phase's wall time went, beside prepare_ms, warmup.ms and timed_ns (not for tlbprof run's phases). */
	bool allocates = !r->target && s->workload && !s->workload->per_sample_memory;
	json_object_set_new(o, "wall_ms", !r->target && r->wall_ms > 0 ? report_json_num(r->wall_ms) : json_null());
	json_object_set_new(o, "populate_ms", allocates ? report_json_num(r->populate_ms) : json_null());
	/* The first user write to each page the kernel had populated (the allocations after the first). */
	json_object_set_new(o, "first_access", report_first_access_json(allocates ? r->first_access_pages : 0,
									r->first_access_pages ? r->first_access_ns /
									(double)r->first_access_pages : 0));
	json_object_set_new(o, "overhead_us", json_pack("{s:o, s:o}", "counter_open", report_json_num(r->counter_open_us),
							"counter_read", report_json_num(r->counter_read_us)));
	/* How the sampling ended: the median's 95 % CI (relative half-width) against the target. */
	json_t *prec = json_pack("{s:o, s:o, s:s, s:i}", "target", s->iterations_auto ? report_json_num(s->precision) : json_null(),
				 "reached", report_json_num(r->precision_reached), "stop",
				 r->stop_reason ? r->stop_reason : "samples", "allocations", (int)r->allocations_run);
	/* What the phase claims: its own half-width and, with second passes, the host's part from their spread. */
	json_object_set_new(prec, "between_runs", r->n_rerun ? report_json_num(r->precision_between) : json_null());
	json_object_set_new(prec, "host", r->n_rerun ? report_json_num(r->precision_host) : json_null());
	json_object_set_new(prec, "claimed", r->precision_claimed > 0 ? report_json_num(r->precision_claimed) : json_null());
	json_object_set_new(o, "precision", prec);
	if (allocates) {
		json_t *pass = json_object(), *arr = json_array(), *tags = json_array(), *after = json_array();
		for (size_t i = 0; i < r->n_rerun; i++) {
			json_array_append_new(arr, report_json_num(r->rerun_ns[i]));
			json_array_append_new(tags, json_integer(r->rerun_pass ? r->rerun_pass[i] : 1));
		}
		for (unsigned i = 0; i < r->n_passes && i < PHASE_SECOND_PASSES; i++)
			json_array_append_new(after, report_json_num(r->pass_after_s[i]));
		json_object_set_new(pass, "samples", arr);
		json_object_set_new(pass, "sample_passes", tags);
		json_object_set_new(pass, "after_s", r->n_rerun ? report_json_num(r->pass_after_s[0]) : json_null());
		json_object_set_new(pass, "passes_after_s", after);
		json_object_set_new(pass, "ms", r->n_rerun ? report_json_num(r->pass_ms) : json_null());
		/* A report from before they were recorded (read back with passes) still does not have them. */
		if (r->pass_warmup_known || !r->n_rerun) {
			json_t *warm = json_array();
			for (unsigned i = 0; i < r->n_passes && i < PHASE_SECOND_PASSES; i++)
				json_array_append_new(warm, json_integer(r->pass_warmup_passes[i]));
			json_object_set_new(pass, "warmup_passes", warm);
			json_object_set_new(pass, "unsettled", r->n_rerun ? json_integer(r->pass_unsettled) : json_null());
		}
		json_object_set_new(pass, "kept", r->n_rerun ? json_boolean(r->rerun_kept) : json_null());
		json_object_set_new(pass, "reason", report_json_str_or_null(r->rerun_why));
		json_object_set_new(o, "second_pass", pass);
	}
	/* How each allocation was warmed before its samples (page-fault and run phases warm nothing). */
	if (!r->target && s->workload && !s->workload->per_sample_memory) {
		bool steady = s->iterations_auto;
		json_t *warm = json_pack("{s:s, s:I, s:o}", "method", steady ? "steady" : "fraction", "accesses",
					 (json_int_t)r->warmup_accesses, "ms", report_json_num(r->warmup_ms));
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
}

/* The time per access into o: ns_per_access and cycles_per_access (null for a phase without samples). */
static void latency_json(json_t *o, const struct phase_result *r, double accesses)
{
	struct stats_summary st;
	json_t *cyc;
	double cycles;

	if (!r->n_samples) {
		json_object_set_new(o, "ns_per_access", json_null());
		json_object_set_new(o, "cycles_per_access", json_null());
		return;
	}
	stats_summarize(r->samples_ns, r->n_samples, &st);
	json_object_set_new(o, "ns_per_access", stats_json(&st, r->samples_ns, r->n_samples, 1.0));
	if (r->cycles_per_ns > 0) {
		cyc = stats_json(&st, r->samples_ns, r->n_samples, r->cycles_per_ns);
		json_object_set_new(cyc, "method", json_string("calibrated_clock"));
		json_object_set_new(cyc, "core_clock_ghz", report_json_num(r->cycles_per_ns));
	} else {
		cyc = json_object();
		json_object_set_new(cyc, "median", json_null());
		json_object_set_new(cyc, "method", json_string("unavailable"));
	}
	if (analysis_counter(r, METRIC_CYCLES, &cycles) && accesses > 0)
		json_object_set_new(cyc, "counter_mean", report_json_num(cycles / accesses));
	json_object_set_new(o, "cycles_per_access", cyc);
}

/* Only counters that counted; the rest are listed with their status at the top level. */
static json_t *phase_counters_json(const struct phase_result *r, double accesses)
{
	json_t *ctrs = json_object();

	for (size_t i = 0; i < r->n_counters; i++) {
		const struct counter_info *ci = &r->counter_info[i];
		const struct counter_reading *cr = &r->counters[i];
		if (!counter_counting(ci))
			continue;
		json_t *c = json_object();
		json_object_set_new(c, "value", json_integer((json_int_t)(cr->scaled + 0.5)));
		json_object_set_new(c, "raw", json_integer((json_int_t)cr->value));
		json_object_set_new(c, "per_access", accesses > 0 ? report_json_num(cr->scaled / accesses) : json_null());
		json_object_set_new(c, "enabled_ns", json_integer((json_int_t)cr->enabled_ns));
		json_object_set_new(c, "running_ns", json_integer((json_int_t)cr->running_ns));
		json_object_set_new(c, "multiplexed", json_boolean(ci->status == COUNTER_MULTIPLEXED));
		json_object_set_new(c, "metric", json_string(metric_name(ci->metric)));
		json_object_set_new(ctrs, ci->name, c);
	}
	return ctrs;
}

/* One entry of "phases": what ran, on what pages, how it was measured, what it measured and its self-checks. */
static json_t *phase_json(const struct phase_result *r)
{
	const struct phase_spec *s = &r->spec;
	json_t *o = json_object(), *checks = json_array();
	double accesses = s->accesses_total ? (double)s->accesses_total : (double)s->iterations * (double)r->n_samples;

	json_object_set_new(o, "name", report_json_text(s->name));
	json_object_set_new(o, "workload", json_string(s->workload->name));
	json_object_set_new(o, "role", json_string(phase_role_name(s->role)));
	if (s->role == PHASE_ROLE_CONTROL)
		json_object_set_new(o, "controls", json_pack("{s:I, s:I}", "size_bytes", (json_int_t)s->controls_size_bytes,
							     "stride_bytes", (json_int_t)s->controls_stride_bytes));
	json_object_set_new(o, "status", json_string(phase_status_name(r->status)));
	json_object_set_new(o, "reason", report_json_text(r->reason));
	json_object_set_new(o, "unavailable", json_boolean(r->unavailable));
	json_object_set_new(o, "page", page_json(r));
	json_object_set_new(o, "params", params_json(r));
	method_json(o, r);
	latency_json(o, r, accesses);
	json_object_set_new(o, "counters", phase_counters_json(r, accesses));
	if (s->fault_case != FAULT_NONE)
		fault_json(o, r);
	else
		json_object_set_new(o, "prefault", prefault_json(r));
	json_object_set_new(o, "rusage", json_pack("{s:I, s:I}", "minor_faults", (json_int_t)r->rusage_minflt,
						   "major_faults", (json_int_t)r->rusage_majflt));
	json_object_set_new(o, "steal_ticks", json_integer((json_int_t)r->steal_ticks));
	json_object_set_new(o, "steal_ms", report_json_num(r->steal_ms));
	json_object_set_new(o, "stat_ticks", r->stat_ticks ? json_integer((json_int_t)r->stat_ticks) : json_null());
	json_object_set_new(o, "timed_ns", report_json_num(r->timed_ns));
	for (size_t i = 0; i < r->n_self_checks; i++)
		json_array_append_new(checks, json_pack("{s:s, s:s, s:o}", "id", r->self_checks[i].id, "status",
							check_status_name(r->self_checks[i].status), "message",
							report_json_text(r->self_checks[i].message)));
	json_object_set_new(o, "self_checks", checks);
	if (r->target)
		json_object_set_new(o, "declared", declared_json(r));
	return o;
}


/* A capacity a knee was compared with: a TLB level in entries or a cache level in bytes; null when none is known. */
static json_t *knee_capacity_json(const struct knee_capacity *c)
{
	if (!c->level)
		return json_null();
	return json_pack("{s:s, s:I, s:o, s:s, s:o, s:b}", "level", c->level, c->is_cache ? "bytes" : "entries",
			 (json_int_t)c->count, "pages", report_json_num(c->pages), "source", c->source ? c->source : "",
			 "relative_error", report_json_num(c->relative_error), "fits", c->fits);
}

/* A check's or finding's evidence; values past ANALYSIS_MAX_EVIDENCE were dropped, and it says how many. */
static json_t *evidence_json(const struct analysis_evidence *e)
{
	json_t *ev = json_object();

	for (size_t k = 0; k < e->n; k++)
		json_object_set_new(ev, e->items[k].key, report_json_num(e->items[k].value));
	if (e->dropped)
		json_object_set_new(ev, "evidence_dropped", json_integer(e->dropped));
	return ev;
}

static json_t *analysis_json(const struct report_input *in)
{
	const struct analysis *a = in->analysis;
	const struct phase_result *ph = in->results->phases;
	json_t *o = json_object(), *cmps = report_comparisons_json(a, ph), *checks = json_array();
	json_t *phases = json_array();
	json_t *findings = json_array();

	for (size_t i = 0; i < a->n_checks; i++) {
		const struct analysis_check *c = &a->checks[i];
		json_array_append_new(checks, json_pack("{s:s, s:s, s:o, s:o}", "id", c->id, "status",
							check_status_name(c->status), "message", report_json_text(c->message),
							"evidence", evidence_json(&c->evidence)));
	}
	for (size_t i = 0; i < a->n_phases; i++) {
		const struct phase_analysis *pa = &a->phases[i];
		json_t *j = json_object();
		json_object_set_new(j, "name", report_json_text(ph[i].spec.name));
		json_object_set_new(j, "control", pa->has_control ? report_json_text(ph[pa->control].spec.name) : json_null());
		json_object_set_new(j, "translation_ns", pa->has_control ? report_json_num(pa->translation_ns) : json_null());
		json_object_set_new(j, "allocations", json_integer(pa->allocations));
		json_object_set_new(j, "between_allocations", report_json_num(pa->between_allocations));
		json_object_set_new(j, "within_allocation", report_json_num(pa->within_allocation));
		json_array_append_new(phases, j);
	}
	for (size_t i = 0; i < a->n_findings; i++) {
		const struct analysis_finding *f = &a->findings[i];
		json_array_append_new(findings, json_pack("{s:s, s:o, s:o}", "id", f->id, "message", report_json_text(f->message),
							  "evidence", evidence_json(&f->evidence)));
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
		json_object_set_new(j, "delta_ns", report_json_num(st->delta_ns));
		json_object_set_new(j, "delta_cycles", report_json_num(st->delta_cycles));
		json_object_set_new(j, "noise_ns", report_json_num(st->noise_ns));
		json_object_set_new(j, "huge_page_step",
				    st->huge != SIZE_MAX
					    ? json_pack("{s:o, s:o}", "from", report_json_text(ph[a->stride_steps[st->huge].from].spec.name),
							"delta_ns", report_json_num(a->stride_steps[st->huge].delta_ns))
					    : json_null());
		json_object_set_new(j, "tlb_ns", isfinite(st->tlb_ns) ? report_json_num(st->tlb_ns) : json_null());
		json_object_set_new(j, "dtlb_misses_per_access",
				    st->have_misses ? json_pack("{s:o, s:o}", "from", report_json_num(st->misses_from), "to",
								report_json_num(st->misses_to))
						    : json_null());
		json_array_append_new(steps, j);
	}
	json_object_set_new(o, "stride_steps", steps);
	json_t *knees = json_array();
	for (size_t i = 0; i < a->n_knees; i++) {
		const struct tlb_knee *tk = &a->knees[i];
		json_t *j = json_object();
		json_object_set_new(j, "pages", report_json_num(tk->knee.x_before));
		json_object_set_new(j, "pages_after", report_json_num(tk->knee.x_after));
		json_object_set_new(j, "page", report_json_text(tk->page_label));
		json_object_set_new(j, "before_ns", report_json_num(tk->knee.before_ns));
		json_object_set_new(j, "after_ns", report_json_num(tk->knee.after_ns));
		json_object_set_new(j, "step_ns", report_json_num(tk->knee.step_ns));
		json_object_set_new(j, "confidence", report_json_num(tk->knee.confidence));
		json_object_set_new(j, "shape", json_string(tk->knee.ramp ? "ramp" : "step"));
		json_object_set_new(j, "kind", json_string(knee_kind_name(tk->kind)));
		json_object_set_new(j, "level", tk->kind == KNEE_TLB     ? json_string(tk->tlb.level)
						: tk->kind == KNEE_CACHE ? json_string(tk->cache.level)
									 : json_null());
		json_object_set_new(j, "tlb", knee_capacity_json(&tk->tlb));
		json_object_set_new(j, "cache", knee_capacity_json(&tk->cache));
		json_object_set_new(j, "evidence", report_json_text(tk->evidence));
		json_object_set_new(j, "cpuid",
				    tk->cpuid_level ? json_pack("{s:s, s:i, s:o, s:b}", "level", tk->cpuid_level, "entries",
								(int)tk->cpuid_entries, "relative_error",
								report_json_num(tk->relative_error), "matches", tk->matches)
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
	static const char *const sources[] = {
		[SAMPLE_SOURCE_SOFTWARE] = "software", [SAMPLE_SOURCE_HARDWARE] = "pmu", [SAMPLE_SOURCE_IBS_OP] = "ibs_op",
	};
	bool tlb = si->data_source;
	json_t *levels = json_object();

	json_object_set_new(o, "source", json_string(sources[si->source]));
	json_object_set_new(o, "period", json_integer((json_int_t)si->period));
	json_object_set_new(o, "period_initial", json_integer((json_int_t)si->period_initial));
	json_object_set_new(o, "period_raises", json_integer((json_int_t)si->period_raises));
	json_object_set_new(o, "clock", json_string(si->use_clockid ? "CLOCK_MONOTONIC" : "perf_clock_via_tsc"));
	json_object_set_new(o, "large_pebs", json_boolean(si->large_pebs));
	json_object_set_new(o, "exclude_kernel", json_boolean(si->exclude_kernel));
	json_object_set_new(o, "note", report_json_text(si->note));
	json_object_set_new(o, "samples", json_integer((json_int_t)sum->samples));
	json_object_set_new(o, "kept_one_in", json_integer((json_int_t)(sum->kept_one_in ? sum->kept_one_in : 1)));
	json_object_set_new(o, "lost", json_integer((json_int_t)si->lost));
	json_object_set_new(o, "throttled", json_integer((json_int_t)si->throttled));
	json_object_set_new(o, "not_missed", json_integer((json_int_t)si->not_missed));
	json_object_set_new(o, "unresolved_ip", json_integer((json_int_t)sum->unresolved_ip));
	json_object_set_new(o, "unresolved_addr", json_integer((json_int_t)sum->unresolved_addr));
	for (int l = 0; tlb && l < SAMPLE_TLB_LEVELS; l++)
		json_object_set_new(levels, sample_tlb_level_name((enum sample_tlb_level)l),
				    json_integer((json_int_t)sum->tlb_levels[l]));
	json_object_set_new(o, "tlb_levels", tlb ? levels : json_null());
	if (!tlb)
		json_decref(levels);
	fns = json_array();
	regions = json_array();
	for (size_t i = 0; i < sum->n_functions; i++)
		json_array_append_new(fns, json_pack("{s:o, s:o, s:I, s:o, s:o, s:o}", "object",
						     report_json_text(sum->functions[i].object), "function",
						     report_json_text(sum->functions[i].function), "count",
						     (json_int_t)sum->functions[i].count, "share", report_json_num(sum->functions[i].share),
						     "walks", tlb ? json_integer((json_int_t)sum->functions[i].walks)
								  : json_null(), "source",
						     sum->functions[i].source ? report_json_text(sum->functions[i].source)
									      : json_null()));
	for (size_t i = 0; i < sum->n_regions; i++) {
		char start[32], end[32];
		snprintf(start, sizeof(start), "0x%llx", (unsigned long long)sum->regions[i].start);
		snprintf(end, sizeof(end), "0x%llx", (unsigned long long)sum->regions[i].end);
		json_array_append_new(regions, json_pack("{s:o, s:s, s:s, s:b, s:I, s:o, s:o}", "name",
							 report_json_text(sum->regions[i].name),
							 "start", start, "end", end, "anonymous",
							 sum->regions[i].anonymous, "count",
							 (json_int_t)sum->regions[i].count, "share",
							 report_json_num(sum->regions[i].share), "walks",
							 tlb ? json_integer((json_int_t)sum->regions[i].walks)
							     : json_null()));
	}
	json_object_set_new(o, "top_functions", fns);
	json_object_set_new(o, "top_regions", regions);
	return o;
}

/* run -r: each run's exit and wall time (one run: the command's own), and how many were asked for. */
static json_t *repeats_json(const struct target_result *tr)
{
	json_t *runs = json_array();
	struct target_repeat one = { tr->wall_ns, tr->exited, tr->exit_code, tr->term_signal };
	size_t n = tr->n_repeats ? tr->n_repeats : 1;

	for (size_t i = 0; i < n; i++) {
		const struct target_repeat *r = tr->n_repeats ? &tr->repeats[i] : &one;
		json_array_append_new(runs, json_pack("{s:o, s:o, s:o}", "wall_ns", report_json_num(r->wall_ns), "exit_code",
						      r->exited ? json_integer(r->exit_code) : json_null(), "signal",
						      r->term_signal ? json_string(report_signal_name(r->term_signal))
								     : json_null()));
	}
	return json_pack("{s:i, s:o}", "requested", tr->repeats_requested ? (int)tr->repeats_requested : 1, "runs",
			 runs);
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
	json_object_set_new(o, "signal", tr->term_signal ? json_string(report_signal_name(tr->term_signal)) : json_null());
	json_object_set_new(o, "core_dumped", json_boolean(tr->core_dumped));
	json_object_set_new(o, "wall_ns", report_json_num(tr->wall_ns));
	json_object_set_new(o, "repeats", repeats_json(tr));
	json_object_set_new(o, "intervals", report_intervals_json(tr));
	json_object_set_new(o, "attached", report_attached_json(tr));
	json_object_set_new(o, "per_thread", report_per_thread_json(tr));
	json_object_set_new(o, "interrupted", json_boolean(tr->interrupted));
	json_object_set_new(o, "protocol", json_string(TARGET_PROTOCOL));
	for (unsigned i = 0; i < tr->errors && i < TARGET_MAX_ERRORS; i++)
		json_array_append_new(errors, report_json_text(tr->error_lines[i]));
	json_object_set_new(o, "markers", json_pack("{s:b, s:b, s:i, s:i, s:i, s:o, s:o}", "phase_markers",
						    tr->markers_seen, "perf_control", tr->control_seen, "messages",
						    tr->messages, "caller_reads", tr->caller_reads, "refused", tr->errors,
						    "refusals", errors, "handling_us_median",
						    tr->messages ? report_json_num(tr->handling_us_median) : json_null()));
	for (size_t i = 0; i < tr->n_counters && tr->counters; i++) {
		const struct counter_info *ci = &tr->counter_info[i];
		if (!counter_counting(ci))
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
	if (tr->watched)
		json_object_set_new(o, "watch", report_watch_json(&tr->profile));
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

bool report_utc_format(int64_t s, char *buf, size_t len)
{
	time_t t = (time_t)s;
	struct tm tm;

	if (len)
		buf[0] = '\0';
	return s > 0 && gmtime_r(&t, &tm) && strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 20;
}

int64_t report_utc_parse(const char *text)
{
	struct tm tm = { 0 };
	const char *end = text ? strptime(text, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
	char again[32];

	if (!end || *end || strlen(text) != 20)
		return 0;
	int64_t s = (int64_t)timegm(&tm);
	/* strptime takes 2026-02-31 as March 3rd: the time must print back as it was written. */
	return report_utc_format(s, again, sizeof(again)) && strcmp(again, text) == 0 ? s : 0;
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
	char at[32];
	json_object_set_new(root, "measured_at", report_utc_format(in->results->started_unix_s, at, sizeof(at))
							 ? json_string(at) : json_null());
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
