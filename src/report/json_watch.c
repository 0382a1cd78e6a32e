/* SPDX-License-Identifier: MIT */
/*
 * The report's target.watch: what watching an unmarked command found
 * (regions over time, cpu-clock, faults, execs); and target.intervals, the
 * whole command's counts over time under run -I.
 */
#include <errno.h>
#include <limits.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmu/sample.h"
#include "report/internal.h"
#include "target/target.h"

static json_t *hex(uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
	return json_string(buf);
}

static json_t *count(uint64_t v)
{
	return json_integer((json_int_t)v);
}

const char *report_watch_backing(const struct sample_watch_region *r)
{
	if (r->hugetlb_max || r->kernel_page_bytes > 4096)
		return "hugetlb";
	if (r->anon_huge_max)
		return "thp";
	return r->rss_max ? "base" : "not_resident";
}

const char *report_watch_thp_control(const struct sample_watch_region *r)
{
	return r->vm_nh ? "MADV_NOHUGEPAGE" : r->vm_hg ? "MADV_HUGEPAGE" : "none";
}

static json_t *regions_json(const struct sample_profile *p)
{
	json_t *a = json_array();

	for (size_t i = 0; i < p->n_regions; i++) {
		const struct sample_watch_region *r = &p->regions[i];
		json_t *o = json_object(), *pts = json_array();
		json_object_set_new(o, "pid", count(r->pid));
		json_object_set_new(o, "name", report_json_text(r->name));
		json_object_set_new(o, "start", hex(r->start));
		json_object_set_new(o, "end", hex(r->end));
		json_object_set_new(o, "size_bytes", count(r->end - r->start));
		json_object_set_new(o, "anonymous", json_boolean(r->anonymous));
		json_object_set_new(o, "backing", json_string(report_watch_backing(r)));
		json_object_set_new(o, "thp_control", json_string(report_watch_thp_control(r)));
		json_object_set_new(o, "kernel_page_bytes", count(r->kernel_page_bytes));
		json_object_set_new(o, "rss_max_bytes", count(r->rss_max));
		json_object_set_new(o, "anon_huge_max_bytes", count(r->anon_huge_max));
		json_object_set_new(o, "hugetlb_max_bytes", count(r->hugetlb_max));
		json_object_set_new(o, "first_seen_ms", report_json_num((double)r->first_seen_ns / 1e6));
		json_object_set_new(o, "resident_ms", r->resident_ns >= 0 ? report_json_num((double)r->resident_ns / 1e6) : json_null());
		json_object_set_new(o, "faults", count(r->faults));
		json_object_set_new(o, "fault_pages", count(r->fault_pages));
		for (size_t k = 0; k < r->n_points; k++)
			json_array_append_new(pts, json_pack("[o, I, I]", report_json_num((double)r->points[k].t_ns / 1e6),
							     (json_int_t)r->points[k].rss_bytes,
							     (json_int_t)r->points[k].anon_huge_bytes));
		json_object_set_new(o, "rss", pts);
		json_array_append_new(a, o);
	}
	return a;
}

/* The hot loop's machine code, in the executable's own addresses (what objdump shows). */
static json_t *code_json(const struct sample_code *c)
{
	json_t *o = json_object();

	json_object_set_new(o, "decoded", json_boolean(c->decoded));
	json_object_set_new(o, "error", *c->error ? report_json_text(c->error) : json_null());
	json_object_set_new(o, "function_start", hex(c->function_start));
	json_object_set_new(o, "start", hex(c->loop_start));
	json_object_set_new(o, "end", hex(c->loop_end));
	json_object_set_new(o, "frame_pointer", json_boolean(c->frame_pointer));
	json_object_set_new(o, "instructions", count(c->instructions));
	json_object_set_new(o, "stack_accesses", count(c->stack_accesses));
	json_object_set_new(o, "stack_slots", count(c->slots));
	json_object_set_new(o, "reloaded_slots", count(c->reloaded_slots));
	json_object_set_new(o, "tsc_reads", count(c->tsc_reads));
	json_object_set_new(o, "tsc_read_at", c->tsc_reads ? hex(c->tsc_read_at) : json_null());
	if (c->decoded && c->body_recorded && c->body_end) {
		json_t *b = json_object();
		json_object_set_new(b, "start", hex(c->body_start));
		json_object_set_new(b, "end", hex(c->body_end));
		json_object_set_new(b, "instructions", count(c->body_instructions));
		json_object_set_new(b, "followed", json_boolean(c->body_followed));
		json_object_set_new(b, "loads", count(c->loads));
		json_object_set_new(b, "chained_loads", count(c->chained_loads));
		json_object_set_new(b, "chained_load_at", c->chained_loads ? hex(c->chained_at) : json_null());
		json_object_set_new(b, "stores", count(c->stores));
		json_object_set_new(b, "calls", count(c->calls));
		json_object_set_new(b, "call_at", c->calls ? hex(c->call_at) : json_null());
		json_object_set_new(o, "body", b);
	} else if (c->decoded && c->body_recorded) {
		json_object_set_new(o, "body", json_null());
	}
	return o;
}

static json_t *clock_json(const struct sample_profile *p)
{
	json_t *o = json_object(), *fns = json_array();
	double n = p->clock_samples ? (double)p->clock_samples : NAN;

	json_object_set_new(o, "sampled", json_boolean(p->clock_sampled));
	json_object_set_new(o, "error", *p->clock_error ? report_json_text(p->clock_error) : json_null());
	json_object_set_new(o, "period_ns", count(p->clock_period_ns));
	json_object_set_new(o, "counted", json_boolean(p->clock_counted));
	json_object_set_new(o, "task_clock_ns", p->clock_task_ns ? count(p->clock_task_ns) : json_null());
	json_object_set_new(o, "user_only", json_boolean(p->clock_user_only));
	json_object_set_new(o, "samples", count(p->clock_samples));
	json_object_set_new(o, "lost", count(p->clock_lost));
	json_object_set_new(o, "shares", json_pack("{s:o, s:o, s:o, s:o, s:o}", "own", report_json_num((double)p->clock_own / n),
						   "vdso", report_json_num((double)p->clock_vdso / n), "kernel",
						   report_json_num((double)p->clock_kernel / n), "libraries",
						   report_json_num((double)p->clock_libs / n), "unknown", report_json_num((double)p->clock_unknown / n)));
	for (size_t i = 0; i < p->n_hot; i++)
		json_array_append_new(fns, json_pack("{s:o, s:o, s:I, s:o}", "object", report_json_text(p->hot[i].object),
						     "function", report_json_text(p->hot[i].function), "count",
						     (json_int_t)p->hot[i].count, "share", report_json_num(p->hot[i].share)));
	json_object_set_new(o, "top_functions", fns);
	json_object_set_new(o, "hot_function", *p->hot_exe_function ? report_json_text(p->hot_exe_function) : json_null());
	json_object_set_new(o, "hot_function_unnamed", json_boolean(p->hot_exe_unnamed));
	json_object_set_new(o, "hot_library", *p->hot_library ? report_json_text(p->hot_library) : json_null());
	json_object_set_new(o, "hot_function_jit", json_boolean(p->hot_jit));
	json_object_set_new(o, "hot_function_samples", count(p->hot_exe_count));
	json_object_set_new(o, "untimed_function", *p->untimed_function ? report_json_text(p->untimed_function)
									 : json_null());
	json_object_set_new(o, "untimed_function_samples", count(p->untimed_count));
	json_object_set_new(o, "hot_loop", p->hot_hi ? json_pack("{s:o, s:o}", "start", hex(p->hot_lo), "end",
								 hex(p->hot_hi))
						    : json_null());
	json_object_set_new(o, "hot_loop_code", p->hot_hi ? code_json(&p->code) : json_null());
	json_object_set_new(o, "hot_tid", p->hot_tid ? count(p->hot_tid) : json_null());
	return o;
}

static json_t *faults_json(const struct sample_profile *p)
{
	const struct sample_fault_pattern *f = &p->faults;
	json_t *o = json_object();

	json_object_set_new(o, "sampled", json_boolean(p->faults_sampled));
	json_object_set_new(o, "error", *p->faults_error ? report_json_text(p->faults_error) : json_null());
	json_object_set_new(o, "samples", count(p->fault_samples));
	json_object_set_new(o, "kept_one_in", count(p->faults_one_in > 1 ? p->faults_one_in : 1));
	json_object_set_new(o, "lost", count(p->faults_lost));
	if (!p->has_pattern) {
		json_object_set_new(o, "region", json_null());
		return o;
	}
	json_object_set_new(o, "region", json_pack("{s:o, s:o, s:o}", "name", report_json_text(p->fault_region), "start",
						   hex(p->fault_region_start), "end", hex(p->fault_region_end)));
	json_object_set_new(o, "faults", count(f->faults));
	json_object_set_new(o, "pages", count(f->pages));
	json_object_set_new(o, "faults_per_page", report_json_num(f->faults_per_page));
	json_object_set_new(o, "top_function", report_json_text(f->function));
	json_object_set_new(o, "top_function_faults", count(f->function_faults));
	json_object_set_new(o, "in_hot_function", count(f->in_hot_function));
	json_object_set_new(o, "in_hot_loop", count(f->in_hot_loop));
	json_object_set_new(o, "loop_first_touches", count(f->loop_touches));
	json_object_set_new(o, "steps", count(f->steps));
	json_object_set_new(o, "steps_next_page", count(f->steps_next_page));
	json_object_set_new(o, "step_mode_pages", f->step_mode_count ? json_integer(f->step_mode_pages) : json_null());
	json_object_set_new(o, "step_mode_count", count(f->step_mode_count));
	json_object_set_new(o, "offset_mode_bytes", f->offset_mode_count ? count(f->offset_mode) : json_null());
	json_object_set_new(o, "offset_mode_count", count(f->offset_mode_count));
	json_object_set_new(o, "distinct_lines", count(f->distinct_lines));
	const struct sample_touch_offsets *q = &f->other;
	bool k = f->scan_known;
	json_object_set_new(o, "scan_first_touches", k ? count(f->scan_touches) : json_null());
	json_object_set_new(o, "other_first_touches", k ? count(q->touches) : json_null());
	json_object_set_new(o, "other_offset_mode_bytes", k && q->mode_count ? count(q->mode) : json_null());
	json_object_set_new(o, "other_offset_mode_count", k ? count(q->mode_count) : json_null());
	json_object_set_new(o, "other_distinct_lines", k ? count(q->distinct_lines) : json_null());
	json_object_set_new(o, "hot_weight", f->weight_known ? count(f->hot_weight) : json_null());
	json_object_set_new(o, "hot_weight_faulting", f->weight_known ? count(f->hot_weight_faulting) : json_null());
	return o;
}

/* A timer's start/stop pairs among the hot thread's reads (struct sample_clocks): null where no clock was read so. */
static json_t *paired_json(const struct sample_clocks *c)
{
	if (!c->windows || !c->pairs_known || c->paired_fn < 0)
		return json_null();
	return json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o}", "function", sample_clock_fn_name(c->paired_fn),
			 "clock", c->paired_id >= 0 ? json_string(sample_clock_id_name(c->paired_id)) : json_null(),
			 "reads", count(c->paired_reads), "gap_windows", count(c->gap_windows), "gap_weight_share",
			 report_json_num(c->gap_weight_share), "gap_code_overlap", report_json_num(c->gap_code_overlap),
			 "region_faults_in_gaps", count(c->region_faults_in_gaps), "empty", c->pairs_empty,
			 "pair_work_p75_ns", c->pairs_empty ? count(c->pair_work_p75_ns) : json_null());
}

/* The uprobes on the libc clock functions, and the hot thread's reads. */
static json_t *clocks_json(const struct sample_clocks *c)
{
	json_t *o = json_object(), *fns = json_array(), *ids = json_array();

	json_object_set_new(o, "traced", json_boolean(c->traced));
	json_object_set_new(o, "error", *c->why ? report_json_text(c->why) : json_null());
	json_object_set_new(o, "libc", *c->libc ? report_json_text(c->libc) : json_null());
	json_object_set_new(o, "libc_mapped", json_boolean(c->libc_mapped));
	for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++) {
		const struct sample_clock_function *f = &c->fn[fn];
		json_array_append_new(fns, json_pack("{s:s, s:b, s:o, s:o, s:o, s:o}", "name", sample_clock_fn_name(fn),
						     "traced", f->traced, "why", *f->why ? report_json_text(f->why) : json_null(),
						     "calls", count(f->calls), "lost", count(f->lost), "stopped_at_ms",
						     f->stopped ? count(f->stopped_ms) : json_null()));
	}
	json_object_set_new(o, "functions", fns);
	json_object_set_new(o, "pid", c->pid ? count(c->pid) : json_null());
	json_object_set_new(o, "threads", count(c->threads));
	json_object_set_new(o, "threads_capped_at_ms", c->threads_capped ? count(c->threads_capped_ms) : json_null());
	json_object_set_new(o, "hot_thread_traced", json_boolean(c->hot_traced));
	json_object_set_new(o, "hot_samples_untraced", count(c->hot_samples_untraced));
	for (int id = 0; id < SAMPLE_CLOCK_IDS; id++)
		if (c->id_calls[id])
			json_array_append_new(ids, json_pack("{s:i, s:s, s:o, s:o}", "id", id, "name",
							     sample_clock_id_name(id), "calls", count(c->id_calls[id]),
							     "resolution_ns", c->id_resolution_ns[id]
										? count(c->id_resolution_ns[id])
										: json_null()));
	json_object_set_new(o, "clock_ids", ids);
	json_object_set_new(o, "hot_reads", count(c->hot_reads));
	json_object_set_new(o, "windows", count(c->windows));
	json_object_set_new(o, "window_min_ns", c->windows ? count(c->window_min_ns) : json_null());
	json_object_set_new(o, "window_median_ns", c->windows ? count(c->window_median_ns) : json_null());
	json_object_set_new(o, "window_max_ns", c->windows ? count(c->window_max_ns) : json_null());
	json_object_set_new(o, "window_p90_ns", c->windows ? count(c->window_p90_ns) : json_null());
	json_object_set_new(o, "window_work_p75_ns", c->windows ? count(c->window_work_p75_ns) : json_null());
	json_object_set_new(o, "window_call_faults", c->windows ? count(c->window_call_faults) : json_null());
	json_object_set_new(o, "window_call_ns", c->windows ? count(c->window_call_ns) : json_null());
	json_object_set_new(o, "window_max_on_cpu_ns",
			    c->windows && c->switches_known ? count(c->window_max_on_cpu_ns) : json_null());
	json_object_set_new(o, "span_on_cpu_ns", c->windows && c->switches_known ? count(c->span_on_cpu_ns) : json_null());
	json_object_set_new(o, "reads_per_s", c->windows ? report_json_num(c->reads_per_s) : json_null());
	json_object_set_new(o, "span_ns", c->windows ? count(c->span_ns) : json_null());
	json_object_set_new(o, "cpu_samples", count(c->hot_samples));
	json_object_set_new(o, "cpu_samples_in_span", c->windows ? count(c->hot_samples_in_span) : json_null());
	json_object_set_new(o, "other_threads_samples_in_span",
			    c->windows && c->others_known ? count(c->others_in_span) : json_null());
	json_object_set_new(o, "cpu_samples_in_span_kernel", c->windows ? count(c->hot_kernel_in_span) : json_null());
	json_object_set_new(o, "span_fast_rate", c->windows ? json_boolean(c->span_fast_rate) : json_null());
	json_object_set_new(o, "region_faults", count(c->region_faults));
	json_object_set_new(o, "region_faults_in_span", c->windows ? count(c->region_faults_in_span) : json_null());
	json_object_set_new(o, "measured_windows", c->windows && c->measured_known ? count(c->measured_windows) : json_null());
	json_object_set_new(o, "measured_window_median_ns",
			    c->windows && c->measured_known ? count(c->measured_window_median_ns) : json_null());
	json_object_set_new(o, "loop_samples", c->windows && c->measured_known ? count(c->loop_weight) : json_null());
	json_object_set_new(o, "loop_samples_in_span",
			    c->windows && c->measured_known ? count(c->loop_weight_in_span) : json_null());
	json_object_set_new(o, "region_faults_in_measured_windows",
			    c->windows && c->measured_known ? count(c->region_faults_measured) : json_null());
	json_object_set_new(o, "measured_windows_faulted",
			    c->windows && c->faulted_known ? count(c->measured_windows_faulted) : json_null());
	json_object_set_new(o, "paired_clock", paired_json(c));
	json_object_set_new(o, "bare_pair_reads", c->windows && c->measured_known ? count(c->bare_reads) : json_null());
	bool waits = c->windows && c->waits_known;
	json_object_set_new(o, "measured_windows_span_ns", waits ? count(c->measured_span_ns) : json_null());
	json_object_set_new(o, "command_cpus", waits && c->command_cpus ? count(c->command_cpus) : json_null());
	json_object_set_new(o, "measured_preempted_ns", waits ? count(c->measured_preempted_ns) : json_null());
	json_object_set_new(o, "measured_preempted_own_ns", waits ? count(c->measured_preempted_own_ns) : json_null());
	json_object_set_new(o, "measured_blocked_ns", waits ? count(c->measured_blocked_ns) : json_null());
	json_object_set_new(o, "measured_idle_ns", waits ? count(c->measured_idle_ns) : json_null());
	json_object_set_new(o, "cpu_moves", c->cpus_known ? count(c->cpu_moves) : json_null());
	json_object_set_new(o, "cpu_moves_in_span",
			    c->cpus_known && c->windows ? count(c->cpu_moves_in_span) : json_null());
	json_object_set_new(o, "coarsest_resolution_ns", c->hot_reads ? count(c->coarsest_ns) : json_null());
	json_object_set_new(o, "coarsest_function", c->hot_reads && c->coarsest_fn >= 0
							   ? json_string(sample_clock_fn_name(c->coarsest_fn))
							   : json_null());
	json_object_set_new(o, "coarsest_clock", c->hot_reads && c->coarsest_id >= 0
							? json_string(sample_clock_id_name(c->coarsest_id))
							: json_null());
	return o;
}

json_t *report_watch_json(const struct sample_profile *p)
{
	json_t *o = json_object(), *execs = json_array();

	json_object_set_new(o, "polls", count(p->polls));
	json_object_set_new(o, "poll_interval_ms", report_json_num(p->poll_interval_ms));
	json_object_set_new(o, "poll_us_median", p->polls ? report_json_num(p->poll_us_median) : json_null());
	json_object_set_new(o, "regions", regions_json(p));
	json_object_set_new(o, "cpu_clock", clock_json(p));
	json_object_set_new(o, "page_faults", faults_json(p));
	json_object_set_new(o, "affinity", json_pack("{s:I, s:I, s:I, s:o, s:o}", "hot_samples",
						     (json_int_t)p->affinity_hot, "samples", (json_int_t)p->affinity_samples,
						     "single_cpu", (json_int_t)p->affinity_single, "cpus_allowed_first",
						     p->cpus_allowed_first ? count(p->cpus_allowed_first) : json_null(),
						     "cpus_allowed_last",
						     p->cpus_allowed_last ? count(p->cpus_allowed_last) : json_null()));
	for (size_t i = 0; i < p->n_execs; i++)
		json_array_append_new(execs, report_json_text(p->execs[i]));
	json_object_set_new(o, "execs", execs);
	json_object_set_new(o, "processes", count(p->processes));
	json_object_set_new(o, "processes_unwatched", count(p->processes_unwatched));
	json_object_set_new(o, "program", *p->program ? report_json_text(p->program) : json_null());
	json_object_set_new(o, "program_pid", p->program_pid ? count(p->program_pid) : json_null());
	json_object_set_new(o, "program_watched", json_boolean(p->program_watched));
	json_object_set_new(o, "clocks", clocks_json(&p->clocks));
	return o;
}

/* ---- reading it back (tlbprof analyze of a run report: the unmarked checks judge it again) ---------------- */

/*
 * The reader is strict, as the rest of analyze's is: a field that is
 * present, not null and of the wrong type is the report's error (exit 2,
 * named), never a quiet 0 that a check would then judge. Absent or null
 * fields read as 0, false or "", as reports before them hold none. The
 * first bad field is kept with the section it was read in (one reader per
 * thread).
 */
static _Thread_local struct {
	char section[48];
	char bad[200];
} wr;

/* Where the fields read next are: name, or name[i] for an array's element (i >= 0). */
static void section(const char *name, long i)
{
	if (i < 0)
		snprintf(wr.section, sizeof(wr.section), "%s", name);
	else
		snprintf(wr.section, sizeof(wr.section), "%s[%ld]", name, i);
}

static void bad_field(const char *key, const char *want)
{
	if (!wr.bad[0])
		snprintf(wr.bad, sizeof(wr.bad), "target.watch%s%s%s%s: not %s", *wr.section ? "." : "", wr.section,
			 *key ? "." : "", key, want);
}

/* The field, or NULL where it is absent or null. */
static const json_t *field(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_null(v) ? NULL : v;
}

static uint64_t get_u64(const json_t *o, const char *key)
{
	const json_t *v = field(o, key);

	if (v && !(json_is_integer(v) && json_integer_value(v) >= 0))
		bad_field(key, "a count (a non-negative integer)");
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

/* A count kept in an unsigned: one beyond it is as wrong as a negative one. */
static unsigned get_count(const json_t *o, const char *key)
{
	uint64_t n = get_u64(o, key);

	if (n > UINT_MAX)
		bad_field(key, "a count below 2^32");
	return n > UINT_MAX ? 0 : (unsigned)n;
}

static uint64_t get_hex(const json_t *o, const char *key)
{
	const json_t *v = field(o, key);
	const char *s = json_string_value(v);

	if (v && !report_hex_address(s))
		bad_field(key, REPORT_HEX_ADDRESS);
	return s ? strtoull(s, NULL, 16) : 0;
}

static void get_str(char *buf, size_t size, const json_t *o, const char *key)
{
	const json_t *v = field(o, key);
	const char *s = json_string_value(v);

	if (v && !s)
		bad_field(key, "a string");
	snprintf(buf, size, "%s", s ? s : "");
}

static bool get_bool(const json_t *o, const char *key)
{
	const json_t *v = field(o, key);

	if (v && !json_is_boolean(v))
		bad_field(key, "true or false");
	return json_is_true(v);
}

/* A finite number; 0 where absent or null. */
static double get_num(const json_t *o, const char *key)
{
	const json_t *v = field(o, key);

	if (v && (!json_is_number(v) || !isfinite(json_number_value(v))))
		bad_field(key, "a number");
	return json_number_value(v);
}

/* A share of n samples back into a count (they were written as count / n). */
static uint64_t get_share(const json_t *shares, const char *key, uint64_t n)
{
	double v = get_num(shares, key);

	if (v < 0 || v > 1)
		bad_field(key, "a share from 0 to 1");
	return v >= 0 && v <= 1 ? (uint64_t)(v * (double)n + 0.5) : 0;
}

static void read_regions(const json_t *a, struct sample_profile *p)
{
	for (size_t i = 0; i < json_array_size(a) && p->n_regions < SAMPLE_WATCH_MAX_REGIONS; i++) {
		const json_t *o = json_array_get(a, i);
		struct sample_watch_region *r = &p->regions[p->n_regions++];
		section("regions", (long)i);
		char thp[24];
		get_str(thp, sizeof(thp), o, "thp_control");
		r->pid = (uint32_t)get_u64(o, "pid");
		get_str(r->name, sizeof(r->name), o, "name");
		r->start = get_hex(o, "start");
		r->end = get_hex(o, "end");
		r->anonymous = get_bool(o, "anonymous");
		r->vm_hg = strcmp(thp, "MADV_HUGEPAGE") == 0;
		r->vm_nh = strcmp(thp, "MADV_NOHUGEPAGE") == 0;
		r->kernel_page_bytes = get_u64(o, "kernel_page_bytes");
		r->rss_max = get_u64(o, "rss_max_bytes");
		r->anon_huge_max = get_u64(o, "anon_huge_max_bytes");
		r->hugetlb_max = get_u64(o, "hugetlb_max_bytes");
		r->first_seen_ns = (uint64_t)(get_num(o, "first_seen_ms") * 1e6);
		/* Null: never resident. Otherwise ms since the start, as first_seen_ms. */
		r->resident_ns = field(o, "resident_ms") ? (int64_t)(get_num(o, "resident_ms") * 1e6) : -1;
		r->faults = get_u64(o, "faults");
		r->fault_pages = get_u64(o, "fault_pages");
	}
}

static void read_clock(const json_t *c, struct sample_profile *p)
{
	const json_t *shares = json_object_get(c, "shares"), *loop = json_object_get(c, "hot_loop");
	const json_t *fns = json_object_get(c, "top_functions");

	section("cpu_clock", -1);
	p->clock_sampled = get_bool(c, "sampled");
	get_str(p->clock_error, sizeof(p->clock_error), c, "error");
	p->clock_user_only = get_bool(c, "user_only");
	p->clock_samples = get_u64(c, "samples");
	p->clock_lost = get_u64(c, "lost");	/* absent before it was recorded: 0 */
	p->clock_period_ns = get_u64(c, "period_ns");
	p->clock_counted = get_bool(c, "counted");	/* absent before it was recorded: false */
	p->clock_task_ns = get_u64(c, "task_clock_ns");	/* absent or null: not counted, no cross-check */
	section("cpu_clock.shares", -1);
	p->clock_own = get_share(shares, "own", p->clock_samples);
	p->clock_vdso = get_share(shares, "vdso", p->clock_samples);
	p->clock_kernel = get_share(shares, "kernel", p->clock_samples);
	p->clock_libs = get_share(shares, "libraries", p->clock_samples);
	p->clock_unknown = get_share(shares, "unknown", p->clock_samples);
	section("cpu_clock", -1);
	for (size_t i = 0; i < json_array_size(fns) && p->n_hot < sizeof(p->hot) / sizeof(p->hot[0]); i++) {
		const json_t *f = json_array_get(fns, i);
		struct sample_hot_function *h = &p->hot[p->n_hot++];
		section("cpu_clock.top_functions", (long)i);
		get_str(h->object, sizeof(h->object), f, "object");
		get_str(h->function, sizeof(h->function), f, "function");
		h->count = get_u64(f, "count");
		h->share = get_num(f, "share");
	}
	section("cpu_clock", -1);
	get_str(p->hot_exe_function, sizeof(p->hot_exe_function), c, "hot_function");
	p->hot_exe_unnamed = get_bool(c, "hot_function_unnamed");
	get_str(p->hot_library, sizeof(p->hot_library), c, "hot_library");
	p->hot_jit = get_bool(c, "hot_function_jit");	/* absent before: false */
	p->hot_exe_count = get_u64(c, "hot_function_samples");
	get_str(p->untimed_function, sizeof(p->untimed_function), c, "untimed_function");
	p->untimed_count = get_u64(c, "untimed_function_samples");
	section("cpu_clock.hot_loop", -1);
	p->hot_lo = get_hex(loop, "start");
	p->hot_hi = get_hex(loop, "end");
	section("cpu_clock", -1);
	p->hot_tid = (uint32_t)get_u64(c, "hot_tid");
	const json_t *code = json_object_get(c, "hot_loop_code");
	if (json_is_object(code)) {
		section("cpu_clock.hot_loop_code", -1);
		p->code.decoded = get_bool(code, "decoded");
		get_str(p->code.error, sizeof(p->code.error), code, "error");
		p->code.function_start = get_hex(code, "function_start");
		p->code.loop_start = get_hex(code, "start");
		p->code.loop_end = get_hex(code, "end");
		p->code.frame_pointer = get_bool(code, "frame_pointer");
		p->code.instructions = get_count(code, "instructions");
		p->code.stack_accesses = get_count(code, "stack_accesses");
		p->code.slots = get_count(code, "stack_slots");
		p->code.reloaded_slots = get_count(code, "reloaded_slots");
		p->code.tsc_reads = get_count(code, "tsc_reads");
		p->code.tsc_read_at = get_hex(code, "tsc_read_at");
		const json_t *body = json_object_get(code, "body");
		p->code.body_recorded = body != NULL;
		if (body && !json_is_object(body) && !json_is_null(body))
			bad_field("body", "an object or null");
		if (json_is_object(body)) {
			section("cpu_clock.hot_loop_code.body", -1);
			p->code.body_start = get_hex(body, "start");
			p->code.body_end = get_hex(body, "end");
			p->code.body_instructions = get_count(body, "instructions");
			p->code.body_followed = get_bool(body, "followed");
			p->code.loads = get_count(body, "loads");
			p->code.chained_loads = get_count(body, "chained_loads");
			p->code.chained_at = get_hex(body, "chained_load_at");
			p->code.stores = get_count(body, "stores");
			p->code.calls = get_count(body, "calls");
			p->code.call_at = get_hex(body, "call_at");
			if (p->code.chained_loads > p->code.loads || p->code.body_start >= p->code.body_end)
				bad_field(p->code.chained_loads > p->code.loads ? "chained_loads" : "end",
					  p->code.chained_loads > p->code.loads ? "at most loads" : "past start");
		}
	}
}

static void read_faults(const json_t *f, struct sample_profile *p)
{
	const json_t *region = json_object_get(f, "region");
	struct sample_fault_pattern *q = &p->faults;

	section("page_faults", -1);
	p->faults_sampled = get_bool(f, "sampled");
	get_str(p->faults_error, sizeof(p->faults_error), f, "error");
	p->fault_samples = get_u64(f, "samples");
	p->faults_one_in = get_u64(f, "kept_one_in");	/* absent before the cap: 0, all kept */
	p->faults_lost = get_u64(f, "lost");
	if (!json_is_object(region))
		return;
	p->has_pattern = true;
	section("page_faults.region", -1);
	get_str(p->fault_region, sizeof(p->fault_region), region, "name");
	p->fault_region_start = get_hex(region, "start");
	p->fault_region_end = get_hex(region, "end");
	section("page_faults", -1);
	q->faults = get_u64(f, "faults");
	q->pages = get_u64(f, "pages");
	q->faults_per_page = get_num(f, "faults_per_page");
	get_str(q->function, sizeof(q->function), f, "top_function");
	q->function_faults = get_u64(f, "top_function_faults");
	q->in_hot_function = get_u64(f, "in_hot_function");
	q->in_hot_loop = get_u64(f, "in_hot_loop");
	q->loop_touches = get_u64(f, "loop_first_touches");
	q->steps = get_u64(f, "steps");
	q->steps_next_page = get_u64(f, "steps_next_page");
	q->step_mode_pages = json_integer_value(json_object_get(f, "step_mode_pages"));
	q->step_mode_count = get_u64(f, "step_mode_count");
	q->offset_mode = get_u64(f, "offset_mode_bytes");
	q->offset_mode_count = get_u64(f, "offset_mode_count");
	q->distinct_lines = get_count(f, "distinct_lines");
	q->scan_known = json_is_integer(json_object_get(f, "scan_first_touches"));
	q->scan_touches = get_u64(f, "scan_first_touches");
	q->other.touches = get_u64(f, "other_first_touches");
	q->other.mode = get_u64(f, "other_offset_mode_bytes");
	q->other.mode_count = get_u64(f, "other_offset_mode_count");
	q->other.distinct_lines = get_count(f, "other_distinct_lines");
	q->weight_known = json_is_integer(json_object_get(f, "hot_weight"));
	q->hot_weight = get_u64(f, "hot_weight");
	q->hot_weight_faulting = get_u64(f, "hot_weight_faulting");
}

/* The index i < n whose namer(i) is name; -1 for none (or no name). */
static int name_index(const char *name, const char *(*namer)(int), int n)
{
	for (int i = 0; name && i < n; i++)
		if (strcmp(namer(i), name) == 0)
			return i;
	return -1;
}

static void read_clocks(const json_t *o, struct sample_clocks *c)
{
	const json_t *fns = json_object_get(o, "functions"), *ids = json_object_get(o, "clock_ids"), *v;
	size_t i;

	c->coarsest_fn = c->coarsest_id = -1;
	if (!json_is_object(o))
		return;
	section("clocks", -1);
	c->traced = get_bool(o, "traced");
	get_str(c->why, sizeof(c->why), o, "error");
	get_str(c->libc, sizeof(c->libc), o, "libc");
	c->libc_mapped = get_bool(o, "libc_mapped");
	json_array_foreach(fns, i, v) {
		int fn = name_index(json_string_value(json_object_get(v, "name")), sample_clock_fn_name,
				    SAMPLE_CLOCK_FNS);
		if (fn < 0)
			continue;
		struct sample_clock_function *f = &c->fn[fn];
		section("clocks.functions", (long)i);
		f->traced = get_bool(v, "traced");
		get_str(f->why, sizeof(f->why), v, "why");
		f->calls = get_u64(v, "calls");
		f->lost = get_u64(v, "lost");
		f->stopped = json_is_integer(json_object_get(v, "stopped_at_ms"));
		f->stopped_ms = get_u64(v, "stopped_at_ms");
	}
	section("clocks", -1);
	c->pid = (uint32_t)get_u64(o, "pid");
	c->threads = get_count(o, "threads");
	c->threads_capped = json_is_integer(json_object_get(o, "threads_capped_at_ms"));
	c->threads_capped_ms = get_u64(o, "threads_capped_at_ms");
	/* A report from before the field: unknown, so the checks say what they said then. */
	c->hot_traced = !json_is_boolean(json_object_get(o, "hot_thread_traced")) ||
			get_bool(o, "hot_thread_traced");
	c->hot_samples_untraced = get_u64(o, "hot_samples_untraced");
	json_array_foreach(ids, i, v) {
		json_int_t id = json_integer_value(json_object_get(v, "id"));
		if (id < 0 || id >= SAMPLE_CLOCK_IDS)
			continue;
		section("clocks.clock_ids", (long)i);
		c->id_calls[id] = get_u64(v, "calls");
		c->id_resolution_ns[id] = get_u64(v, "resolution_ns");
	}
	section("clocks", -1);
	c->hot_reads = get_u64(o, "hot_reads");
	c->windows = get_u64(o, "windows");
	c->window_min_ns = get_u64(o, "window_min_ns");
	c->window_median_ns = get_u64(o, "window_median_ns");
	c->window_max_ns = get_u64(o, "window_max_ns");
	c->window_p90_ns = get_u64(o, "window_p90_ns");
	c->window_work_p75_ns = get_u64(o, "window_work_p75_ns");
	c->window_call_faults = get_u64(o, "window_call_faults");	/* absent before: none taken out */
	c->window_call_ns = get_u64(o, "window_call_ns");
	c->switches_known = json_is_integer(json_object_get(o, "span_on_cpu_ns"));
	c->window_max_on_cpu_ns = get_u64(o, "window_max_on_cpu_ns");
	c->span_on_cpu_ns = get_u64(o, "span_on_cpu_ns");
	c->reads_per_s = get_num(o, "reads_per_s");
	c->span_ns = get_u64(o, "span_ns");
	c->hot_samples = get_u64(o, "cpu_samples");
	c->hot_samples_in_span = get_u64(o, "cpu_samples_in_span");
	c->others_known = json_is_integer(json_object_get(o, "other_threads_samples_in_span"));	/* absent before */
	c->others_in_span = get_u64(o, "other_threads_samples_in_span");
	c->hot_kernel_in_span = get_u64(o, "cpu_samples_in_span_kernel");	/* absent in older reports: 0, not judged */
	c->span_fast_rate = get_bool(o, "span_fast_rate");	/* absent before: not judged by it */
	c->region_faults = get_u64(o, "region_faults");
	c->region_faults_in_span = get_u64(o, "region_faults_in_span");
	c->measured_known = json_is_integer(json_object_get(o, "measured_windows"));	/* absent before: the span */
	c->measured_windows = get_u64(o, "measured_windows");
	c->measured_window_median_ns = get_u64(o, "measured_window_median_ns");	/* absent before: 0, not judged */
	c->loop_weight = get_u64(o, "loop_samples");	/* absent before: 0, the process's loop unknown */
	c->loop_weight_in_span = get_u64(o, "loop_samples_in_span");
	c->region_faults_measured = get_u64(o, "region_faults_in_measured_windows");
	c->faulted_known = json_is_integer(json_object_get(o, "measured_windows_faulted"));	/* absent before */
	c->measured_windows_faulted = get_u64(o, "measured_windows_faulted");
	const json_t *pairs = json_object_get(o, "paired_clock");	/* absent before, null where none */
	c->paired_fn = c->paired_id = -1;
	if ((c->pairs_known = json_is_object(pairs))) {
		section("clocks.paired_clock", -1);
		c->paired_fn = name_index(json_string_value(json_object_get(pairs, "function")), sample_clock_fn_name,
					  SAMPLE_CLOCK_FNS);
		c->paired_id = name_index(json_string_value(json_object_get(pairs, "clock")), sample_clock_id_name,
					  SAMPLE_CLOCK_IDS);
		c->paired_reads = get_u64(pairs, "reads");
		c->gap_windows = get_u64(pairs, "gap_windows");
		c->gap_weight_share = get_num(pairs, "gap_weight_share");
		c->gap_code_overlap = get_num(pairs, "gap_code_overlap");
		c->region_faults_in_gaps = get_u64(pairs, "region_faults_in_gaps");
		c->pairs_empty = get_bool(pairs, "empty");	/* absent before: judged by the span */
		c->pair_work_p75_ns = get_u64(pairs, "pair_work_p75_ns");
		section("clocks", -1);
	}
	c->bare_reads = get_u64(o, "bare_pair_reads");	/* absent before: 0, judged by the span */
	c->waits_known = json_is_integer(json_object_get(o, "measured_windows_span_ns"));	/* absent before */
	c->measured_span_ns = get_u64(o, "measured_windows_span_ns");
	c->command_cpus = get_count(o, "command_cpus");
	c->measured_preempted_ns = get_u64(o, "measured_preempted_ns");
	c->measured_preempted_own_ns = get_u64(o, "measured_preempted_own_ns");
	c->measured_blocked_ns = get_u64(o, "measured_blocked_ns");
	c->measured_idle_ns = get_u64(o, "measured_idle_ns");
	c->cpus_known = json_is_integer(json_object_get(o, "cpu_moves"));
	c->cpu_moves = get_u64(o, "cpu_moves");
	c->cpu_moves_in_span = get_u64(o, "cpu_moves_in_span");
	c->coarsest_ns = get_u64(o, "coarsest_resolution_ns");
	c->coarsest_fn = name_index(json_string_value(json_object_get(o, "coarsest_function")), sample_clock_fn_name,
				    SAMPLE_CLOCK_FNS);
	c->coarsest_id = name_index(json_string_value(json_object_get(o, "coarsest_clock")), sample_clock_id_name,
				    SAMPLE_CLOCK_IDS);
}

int report_watch_read(const json_t *w, struct sample_profile *p)
{
	const json_t *aff = json_object_get(w, "affinity"), *execs = json_object_get(w, "execs");

	memset(p, 0, sizeof(*p));
	memset(&wr, 0, sizeof(wr));
	if (!json_is_object(w)) {
		bad_field("", "an object");
		return -EINVAL;
	}
	p->polls = get_count(w, "polls");
	p->poll_interval_ms = get_num(w, "poll_interval_ms");
	p->poll_us_median = get_num(w, "poll_us_median");
	read_regions(json_object_get(w, "regions"), p);
	read_clock(json_object_get(w, "cpu_clock"), p);
	read_faults(json_object_get(w, "page_faults"), p);
	section("affinity", -1);
	p->affinity_samples = get_u64(aff, "samples");
	p->affinity_hot = get_u64(aff, "hot_samples");	/* 0 in a report from before it: see affinity_covered() */
	p->affinity_single = get_u64(aff, "single_cpu");
	p->cpus_allowed_first = get_count(aff, "cpus_allowed_first");
	p->cpus_allowed_last = get_count(aff, "cpus_allowed_last");
	for (size_t i = 0; i < json_array_size(execs) && p->n_execs < SAMPLE_WATCH_MAX_EXECS; i++)
		snprintf(p->execs[p->n_execs++], sizeof(p->execs[0]), "%s",
			 json_string_value(json_array_get(execs, i)) ? json_string_value(json_array_get(execs, i)) : "");
	section("", -1);
	p->processes = get_count(w, "processes");
	p->processes_unwatched = get_count(w, "processes_unwatched");
	get_str(p->program, sizeof(p->program), w, "program");
	p->program_pid = (uint32_t)get_u64(w, "program_pid");
	p->program_watched = get_bool(w, "program_watched");
	read_clocks(json_object_get(w, "clocks"), &p->clocks);
	return wr.bad[0] ? -EINVAL : 0;
}

const char *report_watch_error(void)
{
	return wr.bad;
}

json_t *report_intervals_json(const struct target_result *tr)
{
	if (!tr->interval_ms)
		return json_null();
	json_t *ends = json_array(), *ctrs = json_object();

	for (size_t i = 0; i < tr->n_intervals; i++)
		json_array_append_new(ends, report_json_num(tr->interval_end_ns[i]));
	for (size_t c = 0; c < tr->n_counters && tr->counter_info && tr->interval_counts; c++) {
		const struct counter_info *ci = &tr->counter_info[c];
		if (!counter_counting(ci))
			continue;
		json_t *values = json_array();
		for (size_t i = 0; i < tr->n_intervals; i++)
			json_array_append_new(values, count((uint64_t)(tr->interval_counts[i * tr->n_counters + c].scaled +
								       0.5)));
		json_object_set_new(ctrs, ci->name, json_pack("{s:s, s:o}", "metric", metric_name(ci->metric), "values",
							    values));
	}
	return json_pack("{s:i, s:o, s:o}", "interval_ms", (int)tr->interval_ms, "end_ns", ends, "counters", ctrs);
}

void report_intervals_free(struct plot_intervals *iv)
{
	if (!iv)
		return;
	for (size_t s = 0; s < iv->n_series; s++)
		free(iv->series[s].values);
	free(iv->series);
	free(iv->end_ns);
	free(iv);
}

/* The n numbers of arr into out[0..n-1]. 0, or -EINVAL where one is not a number. */
static int read_numbers(const json_t *arr, double *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const json_t *v = json_array_get(arr, i);
		if (!json_is_number(v))
			return -EINVAL;
		out[i] = json_number_value(v);
	}
	return 0;
}

/* Fill iv from target.intervals, whose end_ns holds n values and each counter n values too. */
static int intervals_fill(const json_t *ends, const json_t *ctrs, struct plot_intervals *iv)
{
	const char *name;
	const json_t *c;

	iv->n = json_array_size(ends);
	iv->end_ns = calloc(iv->n + 1, sizeof(*iv->end_ns));
	iv->series = calloc(json_object_size(ctrs) + 1, sizeof(*iv->series));
	if (!iv->end_ns || !iv->series)
		return -ENOMEM;
	if (read_numbers(ends, iv->end_ns, iv->n) != 0)
		return -EINVAL;
	json_object_foreach((json_t *)ctrs, name, c) {
		const json_t *values = json_object_get(c, "values");
		if (!json_is_array(values) || json_array_size(values) != iv->n)
			return -EINVAL;
		struct plot_interval_series *s = &iv->series[iv->n_series++];
		snprintf(s->name, sizeof(s->name), "%s", name);
		if (!(s->values = calloc(iv->n + 1, sizeof(*s->values))))
			return -ENOMEM;
		if (read_numbers(values, s->values, iv->n) != 0)
			return -EINVAL;
	}
	return 0;
}

int report_intervals_read(const json_t *iv, struct plot_intervals **out)
{
	const json_t *ms = json_object_get(iv, "interval_ms"), *ends = json_object_get(iv, "end_ns");
	const json_t *ctrs = json_object_get(iv, "counters");

	*out = NULL;
	if (!json_is_object(iv) || !json_is_integer(ms) || json_integer_value(ms) <= 0 || !json_is_array(ends) ||
	    !json_is_object(ctrs))
		return -EINVAL;
	struct plot_intervals *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->interval_ms = (unsigned)(json_integer_value(ms) > 3600000 ? 3600000 : json_integer_value(ms));
	int rc = intervals_fill(ends, ctrs, r);
	if (rc) {
		report_intervals_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

/* One thread's counts by counter name: the counting counters only, rounded as the whole run's are. */
static json_t *thread_counters(const struct target_result *tr, const struct target_thread *th)
{
	json_t *ctrs = json_object();

	for (size_t c = 0; c < tr->n_counters && tr->counter_info; c++) {
		const struct counter_info *ci = &tr->counter_info[c];
		if (counter_counting(ci))
			json_object_set_new(ctrs, ci->name, count((uint64_t)(th->counts[c].scaled + 0.5)));
	}
	return ctrs;
}

json_t *report_per_thread_json(const struct target_result *tr)
{
	if (!tr->per_thread_started)
		return json_null();
	json_t *threads = json_array();

	for (size_t k = 0; k < tr->n_threads; k++) {
		const struct target_thread *th = &tr->threads[k];
		json_array_append_new(threads, json_pack("{s:i, s:i, s:o, s:b, s:o, s:o}", "pid", (int)th->pid, "tid",
							 (int)th->tid, "comm", *th->comm ? report_json_text(th->comm)
											: json_null(),
							 "first", th->first, "exact", th->first ? json_boolean(th->exact)
												: json_true(),
							 "counters", thread_counters(tr, th)));
	}
	return json_pack("{s:o, s:I, s:o}", "error", *tr->per_thread_error ? report_json_text(tr->per_thread_error)
									 : json_null(),
			 "lost_records", (json_int_t)tr->per_thread_lost, "threads", threads);
}

json_t *report_attached_json(const struct target_result *tr)
{
	if (!tr->attached)
		return json_null();
	json_t *threads = json_null();

	if (tr->threads) {
		threads = json_array();
		for (size_t k = 0; k < tr->n_threads; k++)
			json_array_append_new(threads, json_pack("{s:i, s:o, s:o}", "tid", (int)tr->threads[k].tid, "comm",
								 report_json_text(tr->threads[k].comm), "counters",
								 thread_counters(tr, &tr->threads[k])));
	}
	return json_pack("{s:i, s:o, s:s, s:I, s:o}", "pid", (int)tr->pid, "comm", report_json_text(tr->attached_comm),
			 "ended_by", tr->ended_by ? tr->ended_by : "exit", "threads", (json_int_t)tr->threads_attached,
			 "per_thread", threads);
}
