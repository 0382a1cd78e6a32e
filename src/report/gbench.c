/* SPDX-License-Identifier: MIT */
/* The report as Google Benchmark JSON (--benchmark_format=json), for benchmark dashboards. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report/internal.h"
#include "report/report.h"
#include "version.h"

/* A user counter: gbench writes them as plain numbers next to the fixed fields; non-finite ones are left out. */
static void gb_counter(json_t *o, const char *key, double v)
{
	if (isfinite(v))
		json_object_set_new(o, key, json_real(v));
}

/* The run as --benchmark_format=json describes it (date, host, CPUs, caches, build); tlbprof's facts as strings. */
static json_t *gb_context(const struct report_input *in)
{
	const struct environment *env = in->env;
	json_t *c = json_object(), *caches = json_array();
	char date[40] = "", host[256];
	time_t now = time(NULL);
	struct tm tm;

	/* ISO 8601 with a colon in the offset, as gbench writes it ("2024-05-01T12:00:00+02:00"). */
	if (localtime_r(&now, &tm) && strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S%z", &tm) == 24) {
		memmove(date + 23, date + 22, 3);
		date[22] = ':';
	}
	json_object_set_new(c, "date", json_string(date));
	/* The host that measured; a re-analysis does not know it (the report does not record it). */
	if (!in->source && gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		json_object_set_new(c, "host_name", report_json_text(host));
	}
	json_object_set_new(c, "executable", report_json_text(in->argc > 0 ? in->argv[0] : "tlbprof"));
	json_object_set_new(c, "num_cpus", json_integer(env->logical_cpus));
	json_object_set_new(c, "mhz_per_cpu",
			    json_integer(in->clock->core_clock_ghz > 0 ? llround(in->clock->core_clock_ghz * 1000) : 0));
	json_object_set_new(c, "cpu_scaling_enabled",
			    json_boolean(*env->cpufreq_governor && strcmp(env->cpufreq_governor, "performance") != 0));
	for (size_t i = 0; i < env->n_caches; i++) {
		const struct env_cache *ec = &env->caches[i];
		json_array_append_new(caches, json_pack("{s:s, s:i, s:I, s:i}", "type", ec->type, "level", (int)ec->level,
							"size", (json_int_t)ec->size_bytes, "num_sharing", 0));
	}
	json_object_set_new(c, "caches", caches);
	if (*env->build_type)
		json_object_set_new(c, "library_build_type",
				    json_string(strcmp(env->build_type, "debug") == 0 ? "debug" : "release"));
	/* Extra context, as --benchmark_context=KEY=VALUE adds it: strings. */
	json_object_set_new(c, "tlbprof_version", json_string(TLBPROF_VERSION));
	json_object_set_new(c, "workload", json_string(report_workload_of(in)));
	json_object_set_new(c, "cpu_model", report_json_text(env->cpu_model_name));
	json_object_set_new(c, "kernel", report_json_text(env->kernel));
	json_object_set_new(c, "hypervisor", report_json_text(env->hypervisor));
	json_object_set_new(c, "thp_enabled", report_json_text(env->thp_enabled));
	json_object_set_new(c, "verdict", json_string(verdict_name(in->analysis->verdict)));
	/* The phases that were not measured have no benchmark entry (see gb_benchmark()): each is named here. */
	for (size_t i = 0; i < in->results->n; i++) {
		const struct phase_result *r = &in->results->phases[i];
		char *key = NULL, *why = NULL;
		if (report_phase_measured(r) || report_phase_wall_only(r))
			continue;
		if (asprintf(&key, "not_measured:%s", r->spec.name) < 0)
			key = NULL;
		else if (asprintf(&why, "%s: %s", phase_status_name(r->status), report_phase_why(r)) < 0)
			why = NULL;
		char *clean = key && why ? report_utf8_dup(key) : NULL;
		if (clean)
			json_object_set_new(c, clean, report_json_text(why));
		free(clean);
		free(key);
		free(why);
	}
	return c;
}

/*
 * One benchmark per measured phase, as gbench writes a run: real_time is the
 * median ns per access, iterations the timed accesses. A phase that was not
 * measured (failed, skipped) has no entry: gbench writes such runs with zero
 * times and error_occurred, which github-action-benchmark and Bencher do not
 * filter, so a dashboard would record a fake 0 ns. gb_context() names them.
 */
static json_t *gb_benchmark(const struct report_input *in, size_t i, size_t family)
{
	const struct phase_result *r = &in->results->phases[i];
	json_t *o = json_object();
	double cpu;

	json_object_set_new(o, "name", report_json_text(r->spec.name));
	json_object_set_new(o, "family_index", json_integer((json_int_t)family));
	json_object_set_new(o, "per_family_instance_index", json_integer(0));
	json_object_set_new(o, "run_name", report_json_text(r->spec.name));
	json_object_set_new(o, "run_type", json_string("iteration"));
	json_object_set_new(o, "repetitions", json_integer(1));
	json_object_set_new(o, "repetition_index", json_integer(0));
	json_object_set_new(o, "threads", json_integer(1));
	if (report_phase_wall_only(r)) {
		/* One gbench iteration per occurrence of the phase: its median wall time. */
		const struct stats_summary w = report_phase_wall_stats(r);
		json_object_set_new(o, "iterations", json_integer((json_int_t)r->target->n_wall));
		json_object_set_new(o, "real_time", json_real(w.median));
		json_object_set_new(o, "cpu_time", json_real(w.median));
		json_object_set_new(o, "time_unit", json_string("ns"));
		gb_counter(o, "samples", (double)r->target->n_wall);
		return o;
	}
	const struct stats_summary st = report_phase_stats(in, i);
	/* CPU time: the measuring thread's task-clock where that software counter counted, else the wall time. */
	if (!analysis_per_access(r, METRIC_TASK_CLOCK, &cpu))
		cpu = st.median;
	json_object_set_new(o, "iterations", json_integer((json_int_t)report_phase_accesses(r)));
	json_object_set_new(o, "real_time", json_real(st.median));
	json_object_set_new(o, "cpu_time", json_real(cpu));
	json_object_set_new(o, "time_unit", json_string("ns"));
	gb_counter(o, "ns_per_access_min", st.min);
	gb_counter(o, "ns_per_access_max", st.max);
	gb_counter(o, "rel_spread", st.rel_spread);
	gb_counter(o, "samples", (double)r->n_samples);
	if (r->cycles_per_ns > 0)
		gb_counter(o, "cycles_per_access", st.median * r->cycles_per_ns);
	if (i < in->analysis->n_phases && in->analysis->phases[i].has_control)
		gb_counter(o, "translation_ns", in->analysis->phases[i].translation_ns);
	gb_counter(o, "size_bytes", (double)r->spec.size_bytes);
	gb_counter(o, "page_bytes", (double)r->spec.page.bytes);
	for (size_t k = 0; k < r->n_counters; k++) {
		const struct counter_info *ci = &r->counter_info[k];
		char key[96];
		if (!report_counter_counted(ci, &r->counters[k]))
			continue;
		/* A user's event (-e) by its own name: there may be several. */
		snprintf(key, sizeof(key), "%s_per_access", ci->metric == METRIC_USER ? ci->name : metric_name(ci->metric));
		gb_counter(o, key, r->counters[k].scaled / report_phase_accesses(r));
	}
	const struct comparison *c = report_comparison_of(in->analysis, i);
	if (c) {
		gb_counter(o, "speedup", c->speedup);
		if (c->interval_known && isfinite(c->speedup_lo) && isfinite(c->speedup_hi)) {
			gb_counter(o, "speedup_lo", c->speedup_lo);
			gb_counter(o, "speedup_hi", c->speedup_hi);
		}
		gb_counter(o, "speedup_comparable", c->comparable);
		if (c->translation.known) {
			gb_counter(o, "translation_lo_ns", c->translation.lo_ns);
			if (isfinite(c->translation.hi_ns))
				gb_counter(o, "translation_hi_ns", c->translation.hi_ns);
			gb_counter(o, "translation_proven", c->translation.proven);
		}
		gb_counter(o, "delta_ns", c->delta_ns);
		if (c->ns_per_tlb_miss > 0)
			gb_counter(o, "ns_per_tlb_miss", c->ns_per_tlb_miss);
	}
	char label[48];
	report_backing_label(r, label, sizeof(label));
	json_object_set_new(o, "label", report_json_text(label));
	return o;
}

int report_gbench_write(const struct report_input *in, FILE *f)
{
	json_t *root = json_object(), *list = json_array();
	int rc = 0;

	if (!root || !list) {
		json_decref(root);
		json_decref(list);
		return -ENOMEM;
	}
	json_object_set_new(root, "context", gb_context(in));
	for (size_t i = 0; i < in->results->n; i++)
		if (report_phase_measured(&in->results->phases[i]) || report_phase_wall_only(&in->results->phases[i]))
			json_array_append_new(list, gb_benchmark(in, i, json_array_size(list)));
	json_object_set_new(root, "benchmarks", list);
	rc = report_json_dumpf(root, f);
	json_decref(root);
	return rc;
}
