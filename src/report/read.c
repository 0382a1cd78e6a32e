/* SPDX-License-Identifier: MIT */
/* Read a saved tlbprof.report/1 back into phase results, environment and clock, for `tlbprof analyze` and `compare`. */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"
#include "report/report.h"

#include "target/target.h"
#include "measure/workload.h"

#define REPORT_MAX_PHASES 100000
#define REPORT_MAX_COUNTERS 256
/* A timed access or page beyond 1000 s is no measurement: 1e308 would make every spread infinite. */
#define REPORT_MAX_SAMPLE_NS 1e12

/* Parsing state: the file name and where an error happened. */
struct reader {
	const char *path;
	char *err;
	size_t err_len;
	struct report_doc *doc;
};

__attribute__((format(printf, 2, 3)))
static int bad(struct reader *rd, const char *fmt, ...)
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
static const char *keep(struct report_doc *doc, const char *s)
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
static int get_obj(struct reader *rd, json_t *o, const char *key, const char *where, json_t **out)
{
	*out = json_object_get(o, key);
	if (!json_is_object(*out))
		return bad(rd, "%s.%s: missing or not an object", where, key);
	return 0;
}

static int get_u64(struct reader *rd, json_t *o, const char *key, const char *where, uint64_t *out)
{
	json_t *v = json_object_get(o, key);

	*out = 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return bad(rd, "%s.%s: missing or not a non-negative integer", where, key);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

/* A number (integer or real); absent or null gives dflt when optional. */
static int get_num(struct reader *rd, json_t *o, const char *key, const char *where, bool optional, double dflt,
		   double *out)
{
	json_t *v = json_object_get(o, key);

	*out = dflt;
	if ((!v || json_is_null(v)) && optional)
		return 0;
	if (!json_is_number(v))
		return bad(rd, "%s.%s: missing or not a number", where, key);
	*out = json_number_value(v);
	return 0;
}

static int get_str(struct reader *rd, json_t *o, const char *key, const char *where, bool optional, const char **out)
{
	json_t *v = json_object_get(o, key);

	*out = "";
	if ((!v || json_is_null(v)) && optional)
		return 0;
	if (!json_is_string(v))
		return bad(rd, "%s.%s: missing or not a string", where, key);
	*out = json_string_value(v);
	return 0;
}

static void copy_str(char *dst, size_t len, json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	snprintf(dst, len, "%s", json_is_string(v) ? json_string_value(v) : "");
}

static unsigned opt_uint(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) >= 0 ? (unsigned)json_integer_value(v) : 0;
}

/* A count that may be unreadable: -1 when absent or not an integer. */
static long opt_long(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

/* The features a report recorded (cpu.identification.features); none known in reports from before them. */
static void read_features(struct environment *env, json_t *cpu)
{
	json_t *id = json_object_get(cpu, "identification");
	json_t *list = json_is_object(id) ? json_object_get(id, "features") : NULL;

	env->features_known = json_is_array(list);
	env->cpu_features = 0;
	for (size_t i = 0; env->features_known && i < json_array_size(list); i++) {
		const char *name = json_string_value(json_array_get(list, i));
		for (int f = 0; name && f < CPU_FEATURES; f++)
			if (strcmp(name, cpu_feature_name((enum cpu_feature)f)) == 0)
				env->cpu_features |= CPU_BIT(f);
	}
}

/* An optional count: null or absent leaves *known false; anything but a non-negative integer is an error. */
static int opt_count(struct reader *rd, json_t *o, const char *key, const char *where, bool *known, uint64_t *v)
{
	json_t *j = json_object_get(o, key);

	*known = false;
	*v = 0;
	if (!j || json_is_null(j))
		return 0;
	if (get_u64(rd, o, key, where, v))
		return -EINVAL;
	*known = true;
	return 0;
}

static int read_host_snapshot(struct reader *rd, json_t *h, const char *key, struct host_snapshot *s)
{
	char where[48];
	json_t *o;
	bool steal_known;

	snprintf(where, sizeof(where), "environment.host");
	if (get_obj(rd, h, key, where, &o))
		return -EINVAL;
	snprintf(where, sizeof(where), "environment.host.%s", key);
	if (opt_count(rd, o, "total_ticks", where, &s->stat_known, &s->total_ticks) ||
	    opt_count(rd, o, "steal_ticks", where, &steal_known, &s->steal_ticks) ||
	    opt_count(rd, o, "full_scans", where, &s->khugepaged_present, &s->full_scans) ||
	    opt_count(rd, o, "pages_collapsed", where, &s->collapsed_known, &s->pages_collapsed))
		return -EINVAL;
	s->stat_known = s->stat_known && steal_known;
	copy_str(s->khugepaged_why, sizeof(s->khugepaged_why), o, "khugepaged_reason");
	return 0;
}

static int read_host_damon(struct reader *rd, json_t *h, const char *key, struct host_damon *d)
{
	char where[48];
	json_t *o, *actions;

	if (get_obj(rd, h, key, "environment.host", &o))
		return -EINVAL;
	snprintf(where, sizeof(where), "environment.host.%s", key);
	d->present = json_is_true(json_object_get(o, "present"));
	copy_str(d->why, sizeof(d->why), o, "reason");
	d->kdamonds = opt_uint(o, "kdamonds");
	d->running = opt_uint(o, "running");
	d->schemes_active = opt_uint(o, "schemes_active");
	actions = json_object_get(o, "actions");
	if (!json_is_array(actions))
		return bad(rd, "%s.actions: missing or not an array", where);
	for (size_t i = 0; i < json_array_size(actions); i++) {
		json_t *a = json_array_get(actions, i);
		size_t len = strlen(d->actions);
		if (!json_is_string(a))
			return bad(rd, "%s.actions[%zu]: not a string", where, i);
		snprintf(d->actions + len, sizeof(d->actions) - len, "%s%s", len ? "," : "", json_string_value(a));
	}
	return 0;
}

/* The host facts of a measuring run (environment.host); a report from before them has none: not recorded. */
static int read_host(struct reader *rd, json_t *h, struct host_facts *out)
{
	if (!json_is_object(h))
		return bad(rd, "environment.host: not an object");
	if (read_host_snapshot(rd, h, "before", &out->before) || read_host_snapshot(rd, h, "after", &out->after) ||
	    read_host_damon(rd, h, "damon_before", &out->damon_before) ||
	    read_host_damon(rd, h, "damon_after", &out->damon_after))
		return -EINVAL;
	out->recorded = true;
	return 0;
}

static int read_environment(struct reader *rd, json_t *root)
{
	struct environment *env = &rd->doc->env;
	struct timing_calibration *clk = &rd->doc->clock;
	json_t *e, *cpu, *v;
	int rc;

	if ((rc = get_obj(rd, root, "environment", "report", &e)) || (rc = get_obj(rd, e, "cpu", "environment", &cpu)))
		return rc;
	copy_str(env->cpu_vendor, sizeof(env->cpu_vendor), cpu, "vendor");
	copy_str(env->cpu_model_name, sizeof(env->cpu_model_name), cpu, "model_name");
	copy_str(env->core_name, sizeof(env->core_name), cpu, "core");
	copy_str(rd->doc->pmu_name, sizeof(rd->doc->pmu_name), cpu, "pmu");
	env->cpu_family = opt_uint(cpu, "family");
	env->cpu_model = opt_uint(cpu, "model");
	env->cpu_stepping = opt_uint(cpu, "stepping");
	env->logical_cpus = (int)opt_uint(cpu, "logical_cpus");
	env->l1_latency_cycles = opt_uint(cpu, "l1_latency_cycles");
	json_t *caches = json_object_get(cpu, "caches");
	for (size_t i = 0; json_is_array(caches) && i < json_array_size(caches) && env->n_caches < ENV_MAX_CACHES; i++) {
		json_t *c = json_array_get(caches, i);
		struct env_cache *ec = &env->caches[env->n_caches];
		if (!json_is_object(c))
			return bad(rd, "environment.cpu.caches[%zu]: not an object", i);
		ec->level = opt_uint(c, "level");
		copy_str(ec->type, sizeof(ec->type), c, "type");
		v = json_object_get(c, "size_bytes");
		ec->size_bytes = json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
		ec->ways = opt_uint(c, "ways");
		ec->line_bytes = opt_uint(c, "line_bytes");
		ec->sets = opt_uint(c, "sets");
		env->n_caches++;
	}
	json_t *tlb = json_object_get(e, "tlb");
	if (json_is_object(tlb)) {
#define TLB_FIELD(f) env->tlb.f = opt_uint(tlb, #f);
		ENV_TLB_FIELDS(TLB_FIELD)
#undef TLB_FIELD
		copy_str(env->tlb.source, sizeof(env->tlb.source), tlb, "source");
	}
	copy_str(env->kernel, sizeof(env->kernel), e, "kernel");
	copy_str(env->hypervisor, sizeof(env->hypervisor), e, "hypervisor");
	json_t *thp = json_object_get(e, "thp");
	if (json_is_object(thp)) {
		copy_str(env->thp_enabled, sizeof(env->thp_enabled), thp, "enabled");
		copy_str(env->thp_defrag, sizeof(env->thp_defrag), thp, "defrag");
	}
	json_t *freq = json_object_get(e, "cpufreq");
	env->turbo = -1;
	if (json_is_object(freq)) {
		copy_str(env->cpufreq_driver, sizeof(env->cpufreq_driver), freq, "driver");
		copy_str(env->cpufreq_governor, sizeof(env->cpufreq_governor), freq, "governor");
		v = json_object_get(freq, "turbo");
		if (json_is_boolean(v))
			env->turbo = json_is_true(v);
	}
	/* Hugetlb pools (tlbprof compare says when the page sizes available differ); the analysis does not use them. */
	json_t *pools = json_object_get(e, "hugepages"), *pv;
	const char *key;
	if (json_is_object(pools)) {
		json_object_foreach(pools, key, pv) {
			v = json_object_get(pv, "page_bytes");
			if (env->n_pools >= ENV_MAX_POOLS || !json_is_integer(v) || json_integer_value(v) <= 0)
				continue;
			struct env_hugepool *hp = &env->pools[env->n_pools++];
			hp->page_bytes = (uint64_t)json_integer_value(v);
			hp->nr = opt_long(pv, "nr");
			hp->free = opt_long(pv, "free");
			hp->resv = opt_long(pv, "resv");
			hp->surplus = opt_long(pv, "surplus");
		}
	}
	v = json_object_get(e, "perf_event_paranoid");
	env->perf_event_paranoid = json_is_integer(v) ? (int)json_integer_value(v) : INT32_MIN;

	if ((rc = get_num(rd, e, "core_clock_ghz", "environment", true, 0, &clk->core_clock_ghz)) ||
	    (rc = get_num(rd, e, "clock_overhead_ns", "environment", false, 0, &clk->clock_overhead_ns)))
		return rc;
	clk->core_clock_method = clk->core_clock_ghz > 0 ? "dependent_add_chain" : "unavailable";
	json_t *cc = json_object_get(e, "core_clock");
	if (json_is_object(cc)) {
		get_num(rd, cc, "rel_spread", "environment.core_clock", true, 0, &clk->core_clock_spread);
		get_num(rd, cc, "clock_resolution_ns", "environment.core_clock", true, 0, &clk->clock_resolution_ns);
		clk->core_clock_runs = opt_uint(cc, "runs");
		get_num(rd, cc, "add_imm_per_cycle", "environment.core_clock", true, 0, &clk->add_imm_per_cycle);
		if ((rc = get_num(rd, cc, "end_ghz", "environment.core_clock", true, 0, &clk->core_clock_end_ghz)) ||
		    (rc = get_num(rd, cc, "end_rel_spread", "environment.core_clock", true, 0,
				  &clk->core_clock_end_spread)))
			return rc;
	}
	json_t *host = json_object_get(e, "host");
	if (host && !json_is_null(host) && (rc = read_host(rd, host, &env->host)))
		return rc;
	read_features(env, cpu);
	/* The core again, with this tlbprof's table: a report from an older one keeps its evidence, not its verdict. */
	environment_identify_core(env, clk->add_imm_per_cycle);
	return 0;
}


/* The top-level counter list: one counter_info per event, shared by every phase. */
static int read_counter_infos(struct reader *rd, json_t *root, struct counter_info **out, size_t *n)
{
	json_t *list = json_object_get(root, "counters");

	*out = NULL;
	*n = 0;
	if (!json_is_array(list))
		return bad(rd, "report.counters: missing or not an array");
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
			return bad(rd, "%s: not an object", where);
		if ((rc = get_str(rd, c, "name", where, false, &name)) || (rc = get_str(rd, c, "metric", where, false, &metric)) ||
		    (rc = get_str(rd, c, "status", where, false, &status)))
			return rc;
		m = metric_from_name(metric);
		if (m < 0)
			return bad(rd, "%s.metric: unknown metric '%s'", where, metric);
		ci->metric = (enum metric)m;
		snprintf(ci->name, sizeof(ci->name), "%s", name);
		copy_str(ci->event, sizeof(ci->event), c, "event");
		copy_str(ci->source, sizeof(ci->source), c, "source");
		copy_str(ci->reason, sizeof(ci->reason), c, "reason");
		ci->hardware = json_is_true(json_object_get(c, "hardware"));
		int st = name_lookup(counter_status_names, status);
		if (st < 0)
			return bad(rd, "%s.status: unknown status '%s'", where, status);
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
		return bad(rd, "%s.ns_per_access: not an object", where);
	samples = json_object_get(ns, "samples");
	if (!json_is_array(samples))
		return bad(rd, "%s.ns_per_access.samples: missing or not an array", where);
	r->samples_ns = calloc(json_array_size(samples) + 1, sizeof(double));
	if (!r->samples_ns)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(samples); i++) {
		json_t *v = json_array_get(samples, i);
		if (!json_is_number(v) || !(json_number_value(v) >= 0 && json_number_value(v) <= REPORT_MAX_SAMPLE_NS))
			return bad(rd, "%s.ns_per_access.samples[%zu]: not a number from 0 to %g ns", where, i,
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
		return bad(rd, "%s.counters: missing or not an object", where);
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
			return bad(rd, "%s: not an object", cw);
		if ((rc = get_num(rd, c, "value", cw, false, 0, &value)) || (rc = get_num(rd, c, "raw", cw, true, value, &raw)) ||
		    (rc = get_u64(rd, c, "enabled_ns", cw, &ena)) || (rc = get_u64(rd, c, "running_ns", cw, &run)))
			return rc;
		if (value < 0 || raw < 0)
			return bad(rd, "%s: negative count", cw);
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
		return bad(rd, "%s.case: not a page-fault case", where);
	}
	r->processes_run = opt_uint(p, "processes");
	r->spec.processes = r->processes_run ? r->processes_run : 1;
	get_num(rd, p, "resident_before", where, true, 0, &r->skipped_resident);
	list = json_object_get(p, "fault_samples");
	if (!json_is_array(list))
		return bad(rd, "%s.fault_samples: missing or not an array", where);
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
			return bad(rd, "%s: not an object", sw);
		if ((rc = get_num(rd, s, "elapsed_ns", sw, false, 0, &fs->elapsed_ns)) ||
		    (rc = get_u64(rd, s, "pages", sw, &pages)) || (rc = get_num(rd, s, "minor", sw, true, -1, &fs->minor)) ||
		    (rc = get_num(rd, s, "major", sw, true, -1, &fs->major)) ||
		    (rc = get_u64(rd, s, "minor_rusage", sw, &minru)) || (rc = get_u64(rd, s, "major_rusage", sw, &majru)) ||
		    (rc = get_num(rd, s, "user_ns", sw, true, 0, &fs->user_ns)) ||
		    (rc = get_num(rd, s, "sys_ns", sw, true, 0, &fs->sys_ns)) ||
		    (rc = get_num(rd, s, "resident_before", sw, true, 0, &fs->resident_before)))
			return rc;
		fs->pages = pages;
		fs->minor_rusage = minru;
		fs->major_rusage = majru;
		fs->process = opt_uint(s, "process");
		r->n_fault_samples++;
	}
	if (r->fault_samples && r->n_fault_samples)
		r->skipped_resident = 0;
	return 0;
}

/* tlbprof run: how the benchmark was built (target.binary) and its marker traffic, when the report says. */
static void read_target(struct report_doc *doc, json_t *root)
{
	json_t *target = json_object_get(root, "target");
	json_t *bin = json_is_object(target) ? json_object_get(target, "binary") : NULL;
	json_t *markers = json_is_object(target) ? json_object_get(target, "markers") : NULL;

	if (json_is_object(markers) && json_is_integer(json_object_get(markers, "messages"))) {
		json_t *refusals = json_object_get(markers, "refusals");
		doc->has_markers = true;
		doc->marker_messages = opt_uint(markers, "messages");
		doc->marker_refused = opt_uint(markers, "refused");
		if (json_is_array(refusals) && json_is_string(json_array_get(refusals, 0)))
			snprintf(doc->marker_first_refusal, sizeof(doc->marker_first_refusal), "%s",
				 json_string_value(json_array_get(refusals, 0)));
	}
	if (json_is_object(target) && json_is_object(json_object_get(target, "watch")) &&
	    (doc->watch = calloc(1, sizeof(*doc->watch))))
		(void)report_watch_read(json_object_get(target, "watch"), doc->watch);
	if (json_is_object(target) && json_is_object(json_object_get(target, "intervals")))
		(void)report_intervals_read(json_object_get(target, "intervals"), &doc->intervals);
	if (!json_is_object(bin))
		return;
	if (json_is_string(json_object_get(bin, "error"))) {
		doc->has_build = true;
		copy_str(doc->build_binary, sizeof(doc->build_binary), target, "path");
		copy_str(doc->build_unreadable, sizeof(doc->build_unreadable), bin, "error");
		return;
	}
	if (!json_is_string(json_object_get(bin, "opt_source")))
		return;
	doc->has_build = true;
	copy_str(doc->build_binary, sizeof(doc->build_binary), target, "path");
	copy_str(doc->build_opt_level, sizeof(doc->build_opt_level), bin, "opt_level");
	copy_str(doc->build_opt_levels, sizeof(doc->build_opt_levels), bin, "opt_levels");
	copy_str(doc->build_opt_source, sizeof(doc->build_opt_source), bin, "opt_source");
	doc->build_defaulted = json_is_true(json_object_get(bin, "opt_level_defaulted"));
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
	if ((rc = get_u64(rd, d, "occurrences", dw, &u)))
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
	copy_str(r->target->reference_why, sizeof(r->target->reference_why), d, "reference_why");
	json_t *wall = json_object_get(d, "wall_ns");
	if (!json_is_array(wall))
		return bad(rd, "%s.wall_ns: not an array", dw);
	r->target->wall_ns = calloc(json_array_size(wall) + 1, sizeof(double));
	if (!r->target->wall_ns)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(wall); i++) {
		v = json_array_get(wall, i);
		if (!json_is_number(v) || json_number_value(v) < 0)
			return bad(rd, "%s.wall_ns[%zu]: not a duration", dw, i);
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

	if ((rc = get_str(rd, p, "name", where, false, &name)) || (rc = get_str(rd, p, "workload", where, false, &workload)) ||
	    (rc = get_str(rd, p, "status", where, false, &status)))
		return rc;
	snprintf(r->spec.name, sizeof(r->spec.name), "%s", name);
	r->spec.workload = workload_find(workload);
	if (!r->spec.workload)
		return bad(rd, "%s.workload: unknown workload '%s'", where, workload);
	int st = name_lookup(phase_status_names, status);
	if (st < 0)
		return bad(rd, "%s.status: unknown status '%s'", where, status);
	r->status = (enum phase_status)st;
	copy_str(r->reason, sizeof(r->reason), p, "reason");
	r->unavailable = json_is_true(json_object_get(p, "unavailable"));
	get_str(rd, p, "role", where, true, &str);
	r->spec.role = name_lookup(phase_role_names, str) == PHASE_ROLE_CONTROL ? PHASE_ROLE_CONTROL : PHASE_ROLE_MEASURE;
	v = json_object_get(p, "controls");
	if (r->spec.role == PHASE_ROLE_CONTROL) {
		if (!json_is_object(v) || get_u64(rd, v, "size_bytes", where, &r->spec.controls_size_bytes) ||
		    get_u64(rd, v, "stride_bytes", where, &r->spec.controls_stride_bytes))
			return bad(rd, "%s.controls: a control phase needs size_bytes and stride_bytes", where);
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
	if ((rc = get_obj(rd, p, "page", where, &page)) ||
	    (rc = get_str(rd, page, "requested", where, r->target != NULL, &requested)))
		return rc;
	if (page_request_parse(requested, &r->spec.page) != 0 && !(r->target && !*requested))
		return bad(rd, "%s.page.requested: unknown page size '%s'", where, requested);
	get_str(rd, page, "backing", where, true, &str);
	int kind = name_lookup(page_kind_names, str);
	if (kind >= 0) {
		r->backing_known = true;
		r->backing.kind = (enum page_kind)kind;
	}
	if (r->backing_known) {
		double frac;
		if ((rc = get_u64(rd, page, "kernel_page_bytes", where, &r->backing.kernel_page_bytes)) ||
		    (rc = get_num(rd, page, "huge_fraction", where, false, 0, &frac)))
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
	if ((rc = get_obj(rd, p, "params", where, &params)) ||
	    (rc = get_u64(rd, params, "size_bytes", pw, &r->spec.size_bytes)) ||
	    (rc = get_u64(rd, params, "stride_bytes", pw, &r->spec.stride_bytes)) ||
	    (rc = get_u64(rd, params, "slots", pw, &r->slots)) ||
	    (rc = get_u64(rd, params, "iterations", pw, &r->spec.iterations)) ||
	    (rc = get_u64(rd, params, "warmup_iterations", pw, &r->spec.warmup_iterations)) ||
	    (rc = get_u64(rd, params, "repeat", pw, &u)) || (rc = get_u64(rd, params, "seed", pw, &r->spec.seed)))
		return rc;
	if (u > 1000000)
		return bad(rd, "%s.params.repeat: %llu is implausible", where, (unsigned long long)u);
	r->spec.repeat = (unsigned)u;
	v = json_object_get(params, "cpu");
	r->spec.cpu = json_is_integer(v) ? (int)json_integer_value(v) : -1;
	get_str(rd, params, "layout", where, true, &str);
	r->spec.layout = strcmp(str, "aligned") == 0 ? LAYOUT_ALIGNED : LAYOUT_COLORED;
	/* How the samples were taken (compare warns when they differ); optional, older reports lack them. */
	get_str(rd, params, "iterations_mode", where, true, &str);
	r->spec.iterations_auto = strcmp(str, "auto") == 0;
	r->spec.allocations = opt_uint(params, "allocations");
	return 0;
}

/* Which allocation each sample timed (optional): one index per sample. After read_samples(). */
static int read_sample_allocations(struct reader *rd, json_t *p, const char *where, struct phase_result *r)
{
	json_t *al = json_object_get(p, "sample_allocations");

	if (!json_is_array(al))
		return 0;
	if (json_array_size(al) != r->n_samples)
		return bad(rd, "%s.sample_allocations: %zu entries for %zu samples", where, json_array_size(al),
			   r->n_samples);
	r->sample_alloc = calloc(r->n_samples + 1, sizeof(*r->sample_alloc));
	if (!r->sample_alloc)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_samples; i++) {
		json_t *ai = json_array_get(al, i);
		if (!json_is_integer(ai) || json_integer_value(ai) < 0 || json_integer_value(ai) > 255)
			return bad(rd, "%s.sample_allocations[%zu]: not an allocation index", where, i);
		r->sample_alloc[i] = (unsigned)json_integer_value(ai);
	}
	return 0;
}

/* The phase's self-checks (at most PHASE_MAX_SELF_CHECKS): id, status, message. */
static int read_self_checks(struct reader *rd, json_t *p, const char *where, struct phase_result *r)
{
	json_t *checks = json_object_get(p, "self_checks");

	if (!json_is_array(checks))
		return bad(rd, "%s.self_checks: missing or not an array", where);
	for (size_t i = 0; i < json_array_size(checks) && r->n_self_checks < PHASE_MAX_SELF_CHECKS; i++) {
		json_t *c = json_array_get(checks, i);
		struct self_check *sc = &r->self_checks[r->n_self_checks];
		const char *id, *st;
		if (!json_is_object(c) || get_str(rd, c, "id", where, false, &id) || get_str(rd, c, "status", where, false, &st))
			return bad(rd, "%s.self_checks[%zu]: needs id and status strings", where, i);
		sc->id = keep(rd->doc, id);
		if (!sc->id)
			return -ENOMEM;
		int cs = name_lookup(check_status_names, st);
		if (cs < 0)
			return bad(rd, "%s.self_checks[%zu].status: unknown '%s'", where, i, st);
		sc->status = (enum check_status)cs;
		copy_str(sc->message, sizeof(sc->message), c, "message");
		r->n_self_checks++;
	}
	return 0;
}

/* The second pass and the claimed precision (reports from before them have neither: not recorded). */
static int read_second_pass(struct reader *rd, json_t *p, const char *where, struct phase_result *r)
{
	json_t *pass = json_object_get(p, "second_pass"), *prec = json_object_get(p, "precision"), *samples;
	char w[64];
	int rc;

	if (json_is_object(prec) &&
	    ((rc = get_num(rd, prec, "between_runs", where, true, 0, &r->precision_between)) ||
	     (rc = get_num(rd, prec, "claimed", where, true, 0, &r->precision_claimed))))
		return rc;
	if (!pass || json_is_null(pass))
		return 0;
	snprintf(w, sizeof(w), "%s.second_pass", where);
	if (!json_is_object(pass) || !json_is_array(samples = json_object_get(pass, "samples")))
		return bad(rd, "%s: not an object with a samples array", w);
	copy_str(r->rerun_why, sizeof(r->rerun_why), pass, "reason");
	if ((rc = get_num(rd, pass, "after_s", w, true, 0, &r->rerun_after_s)))
		return rc;
	if (!json_array_size(samples))
		return 0;
	r->rerun_ns = calloc(json_array_size(samples), sizeof(double));
	if (!r->rerun_ns)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(samples); i++) {
		json_t *v = json_array_get(samples, i);
		if (!json_is_number(v) || !(json_number_value(v) >= 0 && json_number_value(v) <= REPORT_MAX_SAMPLE_NS))
			return bad(rd, "%s.samples[%zu]: not a number from 0 to %g ns", w, i, REPORT_MAX_SAMPLE_NS);
		r->rerun_ns[r->n_rerun++] = json_number_value(v);
	}
	return 0;
}

/* Phase idx of the report into r: what it is, what it declared (tlbprof run), its page, params, samples, counters. */
static int read_phase(struct reader *rd, json_t *p, size_t idx, const struct counter_info *infos, size_t n_infos,
		      struct phase_result *r)
{
	char where[32];
	json_t *v;
	int rc;

	snprintf(where, sizeof(where), "phases[%zu]", idx);
	if (!json_is_object(p))
		return bad(rd, "%s: not an object", where);
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
		return bad(rd, "%s: status ok but no samples", where);
	if ((rc = read_sample_allocations(rd, p, where, r)))
		return rc;
	json_t *cyc = json_object_get(p, "cycles_per_access");
	r->cycles_per_ns = 0;
	if (json_is_object(cyc))
		get_num(rd, cyc, "core_clock_ghz", where, true, 0, &r->cycles_per_ns);
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
	get_num(rd, p, "steal_ms", where, true, 0, &r->steal_ms);
	json_t *ticks = json_object_get(p, "stat_ticks");
	if (ticks && !json_is_null(ticks) &&
	    ((rc = get_u64(rd, p, "stat_ticks", where, &r->stat_ticks)) ||
	     (rc = get_u64(rd, p, "steal_ticks", where, &r->steal_ticks))))
		return rc;
	get_num(rd, p, "timed_ns", where, true, 0, &r->timed_ns);
	if ((rc = read_second_pass(rd, p, where, r)))
		return rc;
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
		bad(&rd, "not a tlbprof report (top level is not an object)");
		goto out;
	}
	v = json_object_get(root, "schema");
	if (!json_is_string(v) || strcmp(json_string_value(v), REPORT_SCHEMA) != 0) {
		bad(&rd, "schema is %s%s%s, this tlbprof reads \"%s\"", json_is_string(v) ? "\"" : "",
		    json_is_string(v) ? json_string_value(v) : "missing", json_is_string(v) ? "\"" : "", REPORT_SCHEMA);
		goto out;
	}
	cmd = json_object_get(root, "command");
	if (!json_is_array(cmd) || !json_array_size(cmd)) {
		bad(&rd, "report.command: missing or not a list of strings");
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
			bad(&rd, "report.command[%zu]: not a string", i);
			goto out;
		}
		doc->argv[doc->argc++] = (char *)keep(doc, json_string_value(a));
	}
	if ((rc = read_environment(&rd, root)) || (rc = read_counter_infos(&rd, root, &infos, &n_infos)))
		goto out;
	phases = json_object_get(root, "phases");
	if (!json_is_array(phases)) {
		rc = bad(&rd, "report.phases: missing or not an array");
		goto out;
	}
	/* Bounds far above any real run keep a hostile file from costing gigabytes. */
	if (json_array_size(phases) > REPORT_MAX_PHASES || n_infos > REPORT_MAX_COUNTERS) {
		rc = bad(&rd, "%zu phases and %zu counters: more than a report holds (%d, %d)", json_array_size(phases),
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
		rc = bad(&rd, "report.measured_at: not a UTC time such as 2026-12-05T23:09:45Z");
		goto out;
	}
	v = json_object_get(json_object_get(root, "tool"), "version");
	snprintf(doc->tool_version, sizeof(doc->tool_version), "%s", json_is_string(v) ? json_string_value(v) : "");
	read_target(doc, root);
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
