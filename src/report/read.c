/* SPDX-License-Identifier: MIT */
/* Read a saved tlbprof.report/1 back into phase results, environment and clock, for `tlbprof analyze` and `compare`. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"
#include "report/read_internal.h"
#include "report/report.h"

#include "target/target.h"
#include "measure/workload.h"

#define REPORT_MAX_PHASES 100000
#define REPORT_MAX_COUNTERS 256
/* A timed access or page beyond 1000 s is no measurement: 1e308 would make every spread infinite. */
#define REPORT_MAX_SAMPLE_NS 1e12

int rd_bad(struct reader *rd, const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(rd->err, rd->err_len, "%s: %s", rd->path, what);
	return -EINVAL;
}

/* Keep a copy of s alive as long as the doc; NULL on OOM. */
const char *rd_keep(struct report_doc *doc, const char *s)
{
	if (doc->n_strings == doc->cap_strings) {
		size_t cap = doc->cap_strings ? 2 * doc->cap_strings : 32;
		char **t = realloc(doc->strings, cap * sizeof(*t));
		if (!t)
			return NULL;
		doc->strings = t;
		doc->cap_strings = cap;
	}
	char *copy = strdup(s);
	if (copy)
		doc->strings[doc->n_strings++] = copy;
	return copy;
}

/*
 * The get_* helpers always set *out (to a default on error), so a caller that
 * treats a field as optional and ignores the result never reads garbage.
 */
int rd_get_obj(struct reader *rd, json_t *o, const char *key, const char *where, json_t **out)
{
	*out = json_object_get(o, key);
	if (!json_is_object(*out))
		return rd_bad(rd, "%s.%s: missing or not an object", where, key);
	return 0;
}

int rd_get_u64(struct reader *rd, json_t *o, const char *key, const char *where, uint64_t *out)
{
	json_t *v = json_object_get(o, key);

	*out = 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return rd_bad(rd, "%s.%s: missing or not a non-negative integer", where, key);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

/* A number (integer or real); absent or null gives dflt when optional. */
int rd_get_num(struct reader *rd, json_t *o, const char *key, const char *where, bool optional, double dflt,
		   double *out)
{
	json_t *v = json_object_get(o, key);

	*out = dflt;
	if ((!v || json_is_null(v)) && optional)
		return 0;
	if (!json_is_number(v))
		return rd_bad(rd, "%s.%s: missing or not a number", where, key);
	*out = json_number_value(v);
	return 0;
}

int rd_get_str(struct reader *rd, json_t *o, const char *key, const char *where, bool optional, const char **out)
{
	json_t *v = json_object_get(o, key);

	*out = "";
	if ((!v || json_is_null(v)) && optional)
		return 0;
	if (!json_is_string(v))
		return rd_bad(rd, "%s.%s: missing or not a string", where, key);
	*out = json_string_value(v);
	return 0;
}

void rd_copy_str(char *dst, size_t len, json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	snprintf(dst, len, "%s", json_is_string(v) ? json_string_value(v) : "");
}

unsigned rd_opt_uint(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) >= 0 ? (unsigned)json_integer_value(v) : 0;
}

/* A count that may be unreadable: -1 when absent or not an integer. */
long rd_opt_long(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

/* The top-level counter list: one counter_info per event, shared by every phase. */
static int read_counter_infos(struct reader *rd, json_t *root, struct counter_info **out, size_t *n)
{
	json_t *list = json_object_get(root, "counters");

	*out = NULL;
	*n = 0;
	if (!json_is_array(list))
		return rd_bad(rd, "report.counters: missing or not an array");
	*out = calloc(json_array_size(list) + 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(list); i++) {
		json_t *c = json_array_get(list, i);
		struct counter_info *ci = &(*out)[*n];
		const char *name, *metric, *status;
		char where[32];
		int rc, m;

		snprintf(where, sizeof(where), "counters[%zu]", i);
		if (!json_is_object(c))
			return rd_bad(rd, "%s: not an object", where);
		if ((rc = rd_get_str(rd, c, "name", where, false, &name)) || (rc = rd_get_str(rd, c, "metric", where, false, &metric)) ||
		    (rc = rd_get_str(rd, c, "status", where, false, &status)))
			return rc;
		m = metric_from_name(metric);
		if (m < 0)
			return rd_bad(rd, "%s.metric: unknown metric '%s'", where, metric);
		ci->metric = (enum metric)m;
		snprintf(ci->name, sizeof(ci->name), "%s", name);
		rd_copy_str(ci->event, sizeof(ci->event), c, "event");
		rd_copy_str(ci->source, sizeof(ci->source), c, "source");
		rd_copy_str(ci->reason, sizeof(ci->reason), c, "reason");
		ci->hardware = json_is_true(json_object_get(c, "hardware"));
		int st = name_lookup(counter_status_names, status);
		if (st < 0)
			return rd_bad(rd, "%s.status: unknown status '%s'", where, status);
		ci->status = (enum counter_status)st;
		(*n)++;
	}
	return 0;
}

static int read_samples(struct reader *rd, json_t *p, const char *where, struct phase_result *r)
{
	json_t *ns = json_object_get(p, "ns_per_access"), *samples;

	if (!ns || json_is_null(ns))
		return 0;	/* a phase that never ran */
	if (!json_is_object(ns))
		return rd_bad(rd, "%s.ns_per_access: not an object", where);
	samples = json_object_get(ns, "samples");
	if (!json_is_array(samples))
		return rd_bad(rd, "%s.ns_per_access.samples: missing or not an array", where);
	r->samples_ns = calloc(json_array_size(samples) + 1, sizeof(double));
	if (!r->samples_ns)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(samples); i++) {
		json_t *v = json_array_get(samples, i);
		if (!json_is_number(v) || !(json_number_value(v) >= 0 && json_number_value(v) <= REPORT_MAX_SAMPLE_NS))
			return rd_bad(rd, "%s.ns_per_access.samples[%zu]: not a number from 0 to %g ns", where, i,
				   REPORT_MAX_SAMPLE_NS);
		r->samples_ns[r->n_samples++] = json_number_value(v);
	}
	return 0;
}

static int read_phase_counters(struct reader *rd, json_t *p, const char *where, const struct counter_info *infos,
			       size_t n, struct phase_result *r)
{
	json_t *ctrs = json_object_get(p, "counters");

	if (!json_is_object(ctrs))
		return rd_bad(rd, "%s.counters: missing or not an object", where);
	r->counter_info = calloc(n + 1, sizeof(*r->counter_info));
	r->counters = calloc(n + 1, sizeof(*r->counters));
	if (!r->counter_info || !r->counters)
		return -ENOMEM;
	r->n_counters = n;
	for (size_t i = 0; i < n; i++) {
		json_t *c = json_object_get(ctrs, infos[i].name);
		r->counter_info[i] = infos[i];
		if (!c) {
			/* Counted nowhere in this phase: whatever the set says, there is no value. */
			if (counter_counting(&infos[i])) {
				r->counter_info[i].status = COUNTER_ERROR;
				snprintf(r->counter_info[i].reason, sizeof(r->counter_info[i].reason),
					 "no value in this phase");
			}
			continue;
		}
		char cw[160];
		double value, raw;
		uint64_t ena, run;
		int rc;
		snprintf(cw, sizeof(cw), "%s.counters.%s", where, infos[i].name);
		if (!json_is_object(c))
			return rd_bad(rd, "%s: not an object", cw);
		if ((rc = rd_get_num(rd, c, "value", cw, false, 0, &value)) || (rc = rd_get_num(rd, c, "raw", cw, true, value, &raw)) ||
		    (rc = rd_get_u64(rd, c, "enabled_ns", cw, &ena)) || (rc = rd_get_u64(rd, c, "running_ns", cw, &run)))
			return rc;
		if (value < 0 || raw < 0)
			return rd_bad(rd, "%s: negative count", cw);
		r->counters[i] = (struct counter_reading){ .value = (uint64_t)raw, .enabled_ns = ena, .running_ns = run,
							   .scaled = value };
		if (json_is_true(json_object_get(c, "multiplexed")))
			r->counter_info[i].status = COUNTER_MULTIPLEXED;
		else if (r->counter_info[i].status == COUNTER_MULTIPLEXED)
			r->counter_info[i].status = COUNTER_OK;
	}
	return 0;
}

/* The page-fault fields: the case, the per-sample figures, processes, the resident fraction of a skip. */
static int read_fault_samples(struct reader *rd, json_t *p, const char *where, struct phase_result *r)
{
	json_t *cs = json_object_get(p, "case"), *list;

	if (!cs || json_is_null(cs))
		return 0;
	if (!json_is_string(cs) || (r->spec.fault_case = fault_case_from_name(json_string_value(cs))) < 0) {
		r->spec.fault_case = FAULT_NONE;
		return rd_bad(rd, "%s.case: not a page-fault case", where);
	}
	r->processes_run = rd_opt_uint(p, "processes");
	r->spec.processes = r->processes_run ? r->processes_run : 1;
	rd_get_num(rd, p, "resident_before", where, true, 0, &r->skipped_resident);
	list = json_object_get(p, "fault_samples");
	if (!json_is_array(list))
		return rd_bad(rd, "%s.fault_samples: missing or not an array", where);
	r->fault_samples = calloc(json_array_size(list) + 1, sizeof(*r->fault_samples));
	if (!r->fault_samples)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(list); i++) {
		json_t *s = json_array_get(list, i);
		struct fault_sample *fs = &r->fault_samples[r->n_fault_samples];
		char sw[96];
		uint64_t pages, minru, majru;
		int rc;
		snprintf(sw, sizeof(sw), "%s.fault_samples[%zu]", where, i);
		if (!json_is_object(s))
			return rd_bad(rd, "%s: not an object", sw);
		if ((rc = rd_get_num(rd, s, "elapsed_ns", sw, false, 0, &fs->elapsed_ns)) ||
		    (rc = rd_get_u64(rd, s, "pages", sw, &pages)) || (rc = rd_get_num(rd, s, "minor", sw, true, -1, &fs->minor)) ||
		    (rc = rd_get_num(rd, s, "major", sw, true, -1, &fs->major)) ||
		    (rc = rd_get_u64(rd, s, "minor_rusage", sw, &minru)) || (rc = rd_get_u64(rd, s, "major_rusage", sw, &majru)) ||
		    (rc = rd_get_num(rd, s, "user_ns", sw, true, 0, &fs->user_ns)) ||
		    (rc = rd_get_num(rd, s, "sys_ns", sw, true, 0, &fs->sys_ns)) ||
		    (rc = rd_get_num(rd, s, "resident_before", sw, true, 0, &fs->resident_before)))
			return rc;
		fs->pages = pages;
		fs->minor_rusage = minru;
		fs->major_rusage = majru;
		fs->process = rd_opt_uint(s, "process");
		r->n_fault_samples++;
	}
	if (r->fault_samples && r->n_fault_samples)
		r->skipped_resident = 0;
	return 0;
}

/*
 * tlbprof run: how the benchmark was built (target.binary), its marker
 * traffic and what watching it found, when the report says. Returns 0, or
 * rd_bad()'s -EINVAL for a watch field of the wrong type, which its checks
 * would otherwise judge as 0.
 */
static void read_command_end(struct report_doc *doc, json_t *target)
{
	json_t *code = json_object_get(target, "exit_code"), *sig = json_object_get(target, "signal");
	json_t *runs = json_object_get(json_object_get(target, "repeats"), "runs");
	struct analysis_command_end *e = &doc->end;

	e->attached = json_is_object(json_object_get(target, "attached"));
	/* Neither an exit status nor a signal of a started command: a report that does not say. */
	if (!e->attached && !json_is_integer(code) && !json_is_string(sig))
		return;
	doc->has_end = true;
	e->interrupted = json_is_true(json_object_get(target, "interrupted"));
	e->exited = json_is_integer(code);
	e->exit_code = e->exited ? (int)json_integer_value(code) : 0;
	e->core_dumped = json_is_true(json_object_get(target, "core_dumped"));
	if (json_is_string(sig)) {
		snprintf(doc->end_signal, sizeof(doc->end_signal), "%s", json_string_value(sig));
		e->signal = doc->end_signal;
	}
	e->runs = 1;
	e->failed = e->signal || e->exit_code;
	if (json_is_array(runs) && json_array_size(runs) > 1) {
		e->runs = (unsigned)(json_array_size(runs) > 1000000 ? 1000000 : json_array_size(runs));
		e->failed = 0;
		for (size_t i = 0; i < e->runs; i++) {
			json_t *r = json_array_get(runs, i), *c = json_object_get(r, "exit_code");
			e->failed += json_is_string(json_object_get(r, "signal")) ||
				     (json_is_integer(c) && json_integer_value(c) != 0);
		}
	}
}

static int read_target(struct reader *rd, struct report_doc *doc, json_t *root)
{
	json_t *target = json_object_get(root, "target");
	json_t *bin = json_is_object(target) ? json_object_get(target, "binary") : NULL;
	json_t *markers = json_is_object(target) ? json_object_get(target, "markers") : NULL;

	if (json_is_object(markers) && json_is_integer(json_object_get(markers, "messages"))) {
		json_t *refusals = json_object_get(markers, "refusals");
		doc->has_markers = true;
		doc->marker_messages = rd_opt_uint(markers, "messages");
		doc->marker_refused = rd_opt_uint(markers, "refused");
		if (json_is_array(refusals) && json_is_string(json_array_get(refusals, 0)))
			snprintf(doc->marker_first_refusal, sizeof(doc->marker_first_refusal), "%s",
				 json_string_value(json_array_get(refusals, 0)));
	}
	if (json_is_object(target))
		read_command_end(doc, target);
	if (json_is_object(target) && json_is_object(json_object_get(target, "watch"))) {
		if (!(doc->watch = calloc(1, sizeof(*doc->watch))))
			return -ENOMEM;
		if (report_watch_read(json_object_get(target, "watch"), doc->watch) != 0)
			return rd_bad(rd, "%s", report_watch_error());
	}
	if (json_is_object(target) && json_is_object(json_object_get(target, "intervals")))
		(void)report_intervals_read(json_object_get(target, "intervals"), &doc->intervals);
	if (!json_is_object(bin))
		return 0;
	if (json_is_string(json_object_get(bin, "error"))) {
		doc->has_build = true;
		rd_copy_str(doc->build_binary, sizeof(doc->build_binary), target, "path");
		rd_copy_str(doc->build_unreadable, sizeof(doc->build_unreadable), bin, "error");
		return 0;
	}
	if (!json_is_string(json_object_get(bin, "opt_source")))
		return 0;
	doc->has_build = true;
	rd_copy_str(doc->build_binary, sizeof(doc->build_binary), target, "path");
	rd_copy_str(doc->build_opt_level, sizeof(doc->build_opt_level), bin, "opt_level");
	rd_copy_str(doc->build_opt_levels, sizeof(doc->build_opt_levels), bin, "opt_levels");
	rd_copy_str(doc->build_opt_source, sizeof(doc->build_opt_source), bin, "opt_source");
	doc->build_defaulted = json_is_true(json_object_get(bin, "opt_level_defaulted"));
	return 0;
}

/* tlbprof run: what a phase declared (the "declared" object), back into r->target and the spec. */
static int read_declared(struct reader *rd, json_t *d, const char *where, struct phase_result *r)
{
	char dw[48];
	json_t *v;
	uint64_t u;
	int rc;

	snprintf(dw, sizeof(dw), "%s.declared", where);
	r->target = calloc(1, sizeof(*r->target));
	if (!r->target)
		return -ENOMEM;
	if ((rc = rd_get_u64(rd, d, "occurrences", dw, &u)))
		return rc;
	r->target->occurrences = (unsigned)(u > 1000000000 ? 1000000000 : u);
	v = json_object_get(d, "accesses");
	if (json_is_integer(v) && json_integer_value(v) > 0) {
		r->target->has_accesses = true;
		r->spec.accesses_total = (uint64_t)json_integer_value(v);
	}
	v = json_object_get(d, "timings");
	r->spec.timings = json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
	v = json_object_get(d, "kind");
	r->spec.throughput = json_is_string(v) && strcmp(json_string_value(v), "throughput") == 0;
	r->target->has_page = json_is_string(json_object_get(d, "page"));
	v = json_object_get(d, "region_bytes");
	r->target->has_region = json_is_integer(v);
	r->target->region_bytes = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
	const char *addr = json_string_value(json_object_get(d, "region_address"));	/* null: none declared */
	if (addr && !report_hex_address(addr))
		return rd_bad(rd, "%s.region_address: not " REPORT_HEX_ADDRESS, dw);
	r->target->region_addr = addr ? strtoull(addr, NULL, 16) : 0;
	r->target->chain_inspected = json_is_true(json_object_get(d, "chain_inspected"));
	r->target->open_at_exit = json_is_true(json_object_get(d, "open_at_exit"));
	/* Reports before these fields say nothing of them: not read, no reference (-1 and 0). */
	v = json_object_get(d, "resident_fraction");
	r->target->resident_fraction = json_is_number(v) ? json_number_value(v) : -1;
	v = json_object_get(d, "zero_page_fraction");
	r->target->zero_fraction = json_is_number(v) ? json_number_value(v) : 0;
	v = json_object_get(d, "backing_source");
	r->target->backing_exact = json_is_string(v) && strcmp(json_string_value(v), "pagemap") == 0;
	r->target->vm_nh = json_is_true(json_object_get(d, "vm_nohugepage"));
	r->target->vm_hg = json_is_true(json_object_get(d, "vm_hugepage"));
	v = json_object_get(d, "reference_ns_per_access");
	r->target->reference_ns = json_is_number(v) && json_number_value(v) > 0 ? json_number_value(v) : 0;
	rd_copy_str(r->target->reference_why, sizeof(r->target->reference_why), d, "reference_why");
	json_t *wall = json_object_get(d, "wall_ns");
	if (!json_is_array(wall))
		return rd_bad(rd, "%s.wall_ns: not an array", dw);
	r->target->wall_ns = calloc(json_array_size(wall) + 1, sizeof(double));
	if (!r->target->wall_ns)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(wall); i++) {
		v = json_array_get(wall, i);
		if (!json_is_number(v) || json_number_value(v) < 0)
			return rd_bad(rd, "%s.wall_ns[%zu]: not a duration", dw, i);
		r->target->wall_ns[r->target->n_wall++] = json_number_value(v);
	}
	return 0;
}

/* What a phase is: its name, workload, status and reason, role, and for a control what it controls. */
static int read_phase_status(struct reader *rd, json_t *p, const char *where, struct phase_result *r)
{
	const char *name, *workload, *status, *str;
	json_t *v;
	int rc;

	if ((rc = rd_get_str(rd, p, "name", where, false, &name)) || (rc = rd_get_str(rd, p, "workload", where, false, &workload)) ||
	    (rc = rd_get_str(rd, p, "status", where, false, &status)))
		return rc;
	snprintf(r->spec.name, sizeof(r->spec.name), "%s", name);
	r->spec.workload = workload_find(workload);
	if (!r->spec.workload)
		return rd_bad(rd, "%s.workload: unknown workload '%s'", where, workload);
	int st = name_lookup(phase_status_names, status);
	if (st < 0)
		return rd_bad(rd, "%s.status: unknown status '%s'", where, status);
	r->status = (enum phase_status)st;
	rd_copy_str(r->reason, sizeof(r->reason), p, "reason");
	r->unavailable = json_is_true(json_object_get(p, "unavailable"));
	rd_get_str(rd, p, "role", where, true, &str);
	r->spec.role = name_lookup(phase_role_names, str) == PHASE_ROLE_CONTROL ? PHASE_ROLE_CONTROL : PHASE_ROLE_MEASURE;
	v = json_object_get(p, "controls");
	if (r->spec.role == PHASE_ROLE_CONTROL) {
		if (!json_is_object(v) || rd_get_u64(rd, v, "size_bytes", where, &r->spec.controls_size_bytes) ||
		    rd_get_u64(rd, v, "stride_bytes", where, &r->spec.controls_stride_bytes))
			return rd_bad(rd, "%s.controls: a control phase needs size_bytes and stride_bytes", where);
	}
	return 0;
}

/* The page size asked for and, where the report has it, the backing smaps verified. After read_declared(). */
static int read_page(struct reader *rd, json_t *p, const char *where, struct phase_result *r)
{
	json_t *page, *v;
	const char *requested, *str;
	int rc;

	/* A phase of tlbprof run that declared no page size has none (null). */
	if ((rc = rd_get_obj(rd, p, "page", where, &page)) ||
	    (rc = rd_get_str(rd, page, "requested", where, r->target != NULL, &requested)))
		return rc;
	if (page_request_parse(requested, &r->spec.page) != 0 && !(r->target && !*requested))
		return rd_bad(rd, "%s.page.requested: unknown page size '%s'", where, requested);
	rd_get_str(rd, page, "backing", where, true, &str);
	int kind = name_lookup(page_kind_names, str);
	if (kind >= 0) {
		r->backing_known = true;
		r->backing.kind = (enum page_kind)kind;
	}
	if (r->backing_known) {
		double frac;
		if ((rc = rd_get_u64(rd, page, "kernel_page_bytes", where, &r->backing.kernel_page_bytes)) ||
		    (rc = rd_get_num(rd, page, "huge_fraction", where, false, 0, &frac)))
			return rc;
		r->backing.huge_fraction = frac;
		v = json_object_get(page, "rss_bytes");
		r->backing.rss_bytes = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
		v = json_object_get(page, "anon_huge_bytes");
		r->backing.anon_huge_bytes = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
	}
	return 0;
}

/* The phase's parameters: region, stride, iterations, repeat, seed, CPU, layout and how it sampled. */
static int read_params(struct reader *rd, json_t *p, const char *where, struct phase_result *r)
{
	json_t *params, *v;
	const char *str;
	char pw[48];
	uint64_t u;
	int rc;

	snprintf(pw, sizeof(pw), "%s.params", where);
	if ((rc = rd_get_obj(rd, p, "params", where, &params)) ||
	    (rc = rd_get_u64(rd, params, "size_bytes", pw, &r->spec.size_bytes)) ||
	    (rc = rd_get_u64(rd, params, "stride_bytes", pw, &r->spec.stride_bytes)) ||
	    (rc = rd_get_u64(rd, params, "slots", pw, &r->slots)) ||
	    (rc = rd_get_u64(rd, params, "iterations", pw, &r->spec.iterations)) ||
	    (rc = rd_get_u64(rd, params, "warmup_iterations", pw, &r->spec.warmup_iterations)) ||
	    (rc = rd_get_u64(rd, params, "repeat", pw, &u)) || (rc = rd_get_u64(rd, params, "seed", pw, &r->spec.seed)))
		return rc;
	if (u > 1000000)
		return rd_bad(rd, "%s.params.repeat: %llu is implausible", where, (unsigned long long)u);
	r->spec.repeat = (unsigned)u;
	v = json_object_get(params, "cpu");
	r->spec.cpu = json_is_integer(v) ? (int)json_integer_value(v) : -1;
	rd_get_str(rd, params, "layout", where, true, &str);
	r->spec.layout = strcmp(str, "aligned") == 0 ? LAYOUT_ALIGNED : LAYOUT_COLORED;
	/* How the samples were taken (compare warns when they differ); optional, older reports lack them. */
	rd_get_str(rd, params, "iterations_mode", where, true, &str);
	r->spec.iterations_auto = strcmp(str, "auto") == 0;
	r->spec.allocations = rd_opt_uint(params, "allocations");
	return 0;
}

/* Which allocation each sample timed (optional): one index per sample. After read_samples(). */
static int read_sample_allocations(struct reader *rd, json_t *p, const char *where, struct phase_result *r)
{
	json_t *al = json_object_get(p, "sample_allocations");

	if (!json_is_array(al))
		return 0;
	if (json_array_size(al) != r->n_samples)
		return rd_bad(rd, "%s.sample_allocations: %zu entries for %zu samples", where, json_array_size(al),
			   r->n_samples);
	r->sample_alloc = calloc(r->n_samples + 1, sizeof(*r->sample_alloc));
	if (!r->sample_alloc)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_samples; i++) {
		json_t *ai = json_array_get(al, i);
		if (!json_is_integer(ai) || json_integer_value(ai) < 0 || json_integer_value(ai) > 255)
			return rd_bad(rd, "%s.sample_allocations[%zu]: not an allocation index", where, i);
		r->sample_alloc[i] = (unsigned)json_integer_value(ai);
	}
	return 0;
}

/* The phase's self-checks (at most PHASE_MAX_SELF_CHECKS): id, status, message. */
static int read_self_checks(struct reader *rd, json_t *p, const char *where, struct phase_result *r)
{
	json_t *checks = json_object_get(p, "self_checks");

	if (!json_is_array(checks))
		return rd_bad(rd, "%s.self_checks: missing or not an array", where);
	for (size_t i = 0; i < json_array_size(checks) && r->n_self_checks < PHASE_MAX_SELF_CHECKS; i++) {
		json_t *c = json_array_get(checks, i);
		struct self_check *sc = &r->self_checks[r->n_self_checks];
		const char *id, *st;
		if (!json_is_object(c) || rd_get_str(rd, c, "id", where, false, &id) || rd_get_str(rd, c, "status", where, false, &st))
			return rd_bad(rd, "%s.self_checks[%zu]: needs id and status strings", where, i);
		sc->id = rd_keep(rd->doc, id);
		if (!sc->id)
			return -ENOMEM;
		int cs = name_lookup(check_status_names, st);
		if (cs < 0)
			return rd_bad(rd, "%s.self_checks[%zu].status: unknown '%s'", where, i, st);
		sc->status = (enum check_status)cs;
		rd_copy_str(sc->message, sizeof(sc->message), c, "message");
		r->n_self_checks++;
	}
	return 0;
}

/* Each second pass's warm-up and how many hit their cap (optional: not in reports from before them). */
static int read_pass_warmups(struct reader *rd, json_t *pass, const char *w, struct phase_result *r)
{
	json_t *warm = json_object_get(pass, "warmup_passes"), *unsettled = json_object_get(pass, "unsettled");

	if (!warm && !unsettled)
		return 0;
	if (!json_is_array(warm) || json_array_size(warm) != r->n_passes)
		return rd_bad(rd, "%s.warmup_passes: not one count per pass (%u)", w, r->n_passes);
	for (size_t i = 0; i < r->n_passes; i++) {
		json_t *v = json_array_get(warm, i);
		if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > UINT32_MAX)
			return rd_bad(rd, "%s.warmup_passes[%zu]: not a count of passes", w, i);
		r->pass_warmup_passes[i] = (unsigned)json_integer_value(v);
	}
	if (r->n_passes ? !json_is_integer(unsettled) || json_integer_value(unsettled) < 0 ||
				  json_integer_value(unsettled) > r->n_passes
			: unsettled && !json_is_null(unsettled))
		return rd_bad(rd, "%s.unsettled: not a count from 0 to the %u passes", w, r->n_passes);
	r->pass_unsettled = r->n_passes ? (unsigned)json_integer_value(unsettled) : 0;
	r->pass_warmup_known = true;
	return 0;
}

/*
 * Which second pass each of its samples was taken in (optional; absent: all
 * in one): 1 first, then each the one before or the next, as they are taken.
 */
static int read_sample_passes(struct reader *rd, json_t *pass, const char *w, struct phase_result *r)
{
	json_t *tags = json_object_get(pass, "sample_passes"), *after = json_object_get(pass, "passes_after_s");

	r->n_passes = r->n_rerun ? 1 : 0;
	if (tags && !json_is_array(tags))
		return rd_bad(rd, "%s.sample_passes: not an array", w);
	if (tags && json_array_size(tags) != r->n_rerun)
		return rd_bad(rd, "%s.sample_passes: %zu entries for %zu samples", w, json_array_size(tags), r->n_rerun);
	if (tags && r->n_rerun) {
		r->rerun_pass = calloc(r->n_rerun, sizeof(*r->rerun_pass));
		if (!r->rerun_pass)
			return -ENOMEM;
	}
	for (size_t i = 0; tags && i < r->n_rerun; i++) {
		json_t *t = json_array_get(tags, i);
		json_int_t want = i ? (json_int_t)r->rerun_pass[i - 1] : 1;
		if (!json_is_integer(t) || json_integer_value(t) < want || json_integer_value(t) > want + (i > 0) ||
		    json_integer_value(t) > PHASE_SECOND_PASSES)
			return rd_bad(rd, "%s.sample_passes[%zu]: not pass %d%s (1 to %d, in the order taken)", w, i,
				      (int)want, i ? " or the next" : "", PHASE_SECOND_PASSES);
		r->rerun_pass[i] = (unsigned)json_integer_value(t);
		r->n_passes = r->rerun_pass[i];
	}
	if (after && (!json_is_array(after) || (tags && json_array_size(after) != r->n_passes)))
		return rd_bad(rd, "%s.passes_after_s: not one time per pass (%u)", w, r->n_passes);
	for (size_t i = 0; after && i < json_array_size(after) && i < PHASE_SECOND_PASSES; i++) {
		json_t *v = json_array_get(after, i);
		if (!json_is_number(v) || json_number_value(v) < 0)
			return rd_bad(rd, "%s.passes_after_s[%zu]: not a number of seconds", w, i);
		r->pass_after_s[i] = json_number_value(v);
	}
	return 0;
}

/* The second passes and the claimed precision (reports from before them have neither: not recorded). */
static int read_second_pass(struct reader *rd, json_t *p, const char *where, struct phase_result *r)
{
	json_t *pass = json_object_get(p, "second_pass"), *prec = json_object_get(p, "precision"), *samples;
	char w[64];
	int rc;

	if (json_is_object(prec) &&
	    ((rc = rd_get_num(rd, prec, "between_runs", where, true, 0, &r->precision_between)) ||
	     /* Not in reports from before several passes: not recorded (null when written again), never 0. */
	     (rc = rd_get_num(rd, prec, "host", where, true, NAN, &r->precision_host)) ||
	     (rc = rd_get_num(rd, prec, "claimed", where, true, 0, &r->precision_claimed))))
		return rc;
	if (!pass || json_is_null(pass))
		return 0;
	snprintf(w, sizeof(w), "%s.second_pass", where);
	if (!json_is_object(pass) || !json_is_array(samples = json_object_get(pass, "samples")))
		return rd_bad(rd, "%s: not an object with a samples array", w);
	rd_copy_str(r->rerun_why, sizeof(r->rerun_why), pass, "reason");
	if ((rc = rd_get_num(rd, pass, "after_s", w, true, 0, &r->pass_after_s[0])))
		return rc;
	r->rerun_kept = json_is_true(json_object_get(pass, "kept"));
	if (json_array_size(samples) && !(r->rerun_ns = calloc(json_array_size(samples), sizeof(double))))
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(samples); i++) {
		json_t *v = json_array_get(samples, i);
		if (!json_is_number(v) || !(json_number_value(v) >= 0 && json_number_value(v) <= REPORT_MAX_SAMPLE_NS))
			return rd_bad(rd, "%s.samples[%zu]: not a number from 0 to %g ns", w, i, REPORT_MAX_SAMPLE_NS);
		r->rerun_ns[r->n_rerun++] = json_number_value(v);
	}
	if ((rc = read_sample_passes(rd, pass, w, r)))
		return rc;
	return read_pass_warmups(rd, pass, w, r);
}

/* Phase idx of the report into r: what it is, what it declared (tlbprof run), its page, params, samples, counters. */
/* first_access in o: absent or null (reports from before it, nothing populated) reads as none; else strictly. */
int rd_first_access(struct reader *rd, json_t *o, const char *where, uint64_t *pages, double *ns_per_page)
{
	json_t *fa = json_object_get(o, "first_access");
	char w[64];
	int rc;

	*pages = 0;
	*ns_per_page = 0;
	if (!fa || json_is_null(fa))
		return 0;
	snprintf(w, sizeof(w), "%s.first_access", where);
	if (!json_is_object(fa))
		return rd_bad(rd, "%s: not an object", w);
	if ((rc = rd_get_u64(rd, fa, "pages", w, pages)) || (rc = rd_get_num(rd, fa, "ns_per_page", w, false, 0, ns_per_page)))
		return rc;
	if (!*pages || !(*ns_per_page >= 0 && *ns_per_page <= REPORT_MAX_SAMPLE_NS))
		return rd_bad(rd, "%s: %s", w, !*pages ? "pages: 0 (null when none)" : "ns_per_page: out of range");
	return 0;
}

static int read_phase(struct reader *rd, json_t *p, size_t idx, const struct counter_info *infos, size_t n_infos,
		      struct phase_result *r)
{
	char where[32];
	json_t *v;
	int rc;

	snprintf(where, sizeof(where), "phases[%zu]", idx);
	if (!json_is_object(p))
		return rd_bad(rd, "%s: not an object", where);
	r->spec.index = (unsigned)idx;
	if ((rc = read_phase_status(rd, p, where, r)))
		return rc;
	json_t *declared = json_object_get(p, "declared");
	if (json_is_object(declared) && (rc = read_declared(rd, declared, where, r)))
		return rc;
	if ((rc = read_page(rd, p, where, r)) || (rc = read_params(rd, p, where, r)) ||
	    (rc = read_samples(rd, p, where, r)) || (rc = read_fault_samples(rd, p, where, r)))
		return rc;
	if (r->status == PHASE_OK && !r->n_samples && !(r->target && !r->target->has_accesses))
		return rd_bad(rd, "%s: status ok but no samples", where);
	if ((rc = read_sample_allocations(rd, p, where, r)))
		return rc;
	json_t *cyc = json_object_get(p, "cycles_per_access");
	r->cycles_per_ns = 0;
	if (json_is_object(cyc))
		rd_get_num(rd, cyc, "core_clock_ghz", where, true, 0, &r->cycles_per_ns);
	if (r->cycles_per_ns <= 0)
		r->cycles_per_ns = rd->doc->clock.core_clock_ghz;
	if ((rc = read_phase_counters(rd, p, where, infos, n_infos, r)))
		return rc;
	json_t *ru = json_object_get(p, "rusage");
	if (json_is_object(ru)) {
		v = json_object_get(ru, "minor_faults");
		r->rusage_minflt = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
		v = json_object_get(ru, "major_faults");
		r->rusage_majflt = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
	}
	rd_get_num(rd, p, "steal_ms", where, true, 0, &r->steal_ms);
	json_t *ticks = json_object_get(p, "stat_ticks");
	if (ticks && !json_is_null(ticks) &&
	    ((rc = rd_get_u64(rd, p, "stat_ticks", where, &r->stat_ticks)) ||
	     (rc = rd_get_u64(rd, p, "steal_ticks", where, &r->steal_ticks))))
		return rc;
	rd_get_num(rd, p, "timed_ns", where, true, 0, &r->timed_ns);
	double per;
	if ((rc = rd_first_access(rd, p, where, &r->first_access_pages, &per)) || (rc = read_second_pass(rd, p, where, r)))
		return rc;
	r->first_access_ns = per * (double)r->first_access_pages;
	return read_self_checks(rd, p, where, r);
}

int report_read_json(const char *path, struct report_doc *doc, char *err, size_t err_len)
{
	struct reader rd = { .path = path, .err = err, .err_len = err_len, .doc = doc };
	struct counter_info *infos = NULL;
	size_t n_infos = 0;
	json_t *root, *v, *phases, *cmd;
	int rc;

	memset(doc, 0, sizeof(*doc));
	/* Bounded input (report_json_load()), jansson's depth limit; the counts below bound what is kept. */
	if ((rc = report_json_load(path, &root, err, err_len)) != 0)
		return rc;
	rc = -EINVAL;
	if (!json_is_object(root)) {
		rd_bad(&rd, "not a tlbprof report (top level is not an object)");
		goto out;
	}
	v = json_object_get(root, "schema");
	if (!json_is_string(v) || strcmp(json_string_value(v), REPORT_SCHEMA) != 0) {
		rd_bad(&rd, "schema is %s%s%s, this tlbprof reads \"%s\"", json_is_string(v) ? "\"" : "",
		    json_is_string(v) ? json_string_value(v) : "missing", json_is_string(v) ? "\"" : "", REPORT_SCHEMA);
		goto out;
	}
	cmd = json_object_get(root, "command");
	if (!json_is_array(cmd) || !json_array_size(cmd)) {
		rd_bad(&rd, "report.command: missing or not a list of strings");
		goto out;
	}
	doc->argv = calloc(json_array_size(cmd) + 1, sizeof(char *));
	if (!doc->argv) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < json_array_size(cmd); i++) {
		json_t *a = json_array_get(cmd, i);
		if (!json_is_string(a)) {
			rd_bad(&rd, "report.command[%zu]: not a string", i);
			goto out;
		}
		doc->argv[doc->argc++] = (char *)rd_keep(doc, json_string_value(a));
	}
	if ((rc = rd_environment(&rd, root)) || (rc = read_counter_infos(&rd, root, &infos, &n_infos)))
		goto out;
	phases = json_object_get(root, "phases");
	if (!json_is_array(phases)) {
		rc = rd_bad(&rd, "report.phases: missing or not an array");
		goto out;
	}
	/* Bounds far above any real run keep a hostile file from costing gigabytes. */
	if (json_array_size(phases) > REPORT_MAX_PHASES || n_infos > REPORT_MAX_COUNTERS) {
		rc = rd_bad(&rd, "%zu phases and %zu counters: more than a report holds (%d, %d)", json_array_size(phases),
			 n_infos, REPORT_MAX_PHASES, REPORT_MAX_COUNTERS);
		goto out;
	}
	doc->results.phases = calloc(json_array_size(phases) + 1, sizeof(*doc->results.phases));
	if (!doc->results.phases) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < json_array_size(phases); i++) {
		doc->results.n = i + 1;
		if ((rc = read_phase(&rd, json_array_get(phases, i), i, infos, n_infos, &doc->results.phases[i])))
			goto out;
	}
	doc->results.interrupted = json_is_true(json_object_get(root, "interrupted"));
	/* Optional (a report before it has none); where present, exactly the form tlbprof writes. */
	v = json_object_get(root, "measured_at");
	if (v && !json_is_null(v) &&
	    !(json_is_string(v) && (doc->results.started_unix_s = report_utc_parse(json_string_value(v))) > 0)) {
		rc = rd_bad(&rd, "report.measured_at: not a UTC time such as 2026-12-05T23:09:45Z");
		goto out;
	}
	v = json_object_get(json_object_get(root, "tool"), "version");
	snprintf(doc->tool_version, sizeof(doc->tool_version), "%s", json_is_string(v) ? json_string_value(v) : "");
	if ((rc = read_target(&rd, doc, root)))
		goto out;
	doc->workload = doc->results.n ? doc->results.phases[0].spec.workload : workload_find("chase");
	doc->source = json_incref(root);
	rc = 0;
out:
	if (rc == -ENOMEM)
		snprintf(err, err_len, "%s: out of memory", path);
	free(infos);
	json_decref(root);
	if (rc)
		report_doc_free(doc);
	return rc;
}

void report_doc_free(struct report_doc *doc)
{
	run_results_free(&doc->results);
	json_decref(doc->source);
	free(doc->argv);
	for (size_t i = 0; i < doc->n_strings; i++)
		free(doc->strings[i]);
	free(doc->strings);
	free(doc->watch);
	report_intervals_free(doc->intervals);
	memset(doc, 0, sizeof(*doc));
}
