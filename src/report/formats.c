/* SPDX-License-Identifier: MIT */
/* The report for dashboards and CI: Google Benchmark JSON, OpenMetrics text, JUnit XML and perf-stat-like CSV. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "parse.h"
#include "report/report.h"
#include "report/internal.h"
#include "version.h"
#include "measure/workload.h"

static const char *const file_names[OUTPUT_FORMATS] = {
	[OUTPUT_JSON] = "tlbprof.json",
	[OUTPUT_GBENCH] = "tlbprof.gbench.json",
	[OUTPUT_OPENMETRICS] = "tlbprof.prom",
	[OUTPUT_JUNIT] = "tlbprof.junit.xml",
	[OUTPUT_CSV] = "tlbprof.csv",
};

const char *report_format_file_name(enum output_format fmt)
{
	return (unsigned)fmt < OUTPUT_FORMATS ? file_names[fmt] : NULL;
}

/* ---- What every format reads off a phase ---- */

/*
 * The workload the report is about: the phases' own ("run" or "command" for
 * tlbprof run, whose configuration keeps the measuring default "chase"); a
 * report without phases names its command.
 */
static const char *workload_of(const struct report_input *in)
{
	if (in->results->n && in->results->phases[0].spec.workload)
		return in->results->phases[0].spec.workload->name;
	if (in->target || (in->source && json_object_get((const json_t *)in->source, "target")))
		return "run";
	return in->workload ? in->workload->name : "";
}

/* Whether phase i has timed samples (status ok and something measured). */
static bool phase_measured(const struct phase_result *r)
{
	return r->status == PHASE_OK && r->n_samples > 0;
}

/* Why a phase has no measurement: its reason, or what its status says. */
static const char *phase_why(const struct phase_result *r)
{
	return *r->reason ? r->reason : r->status == PHASE_OK ? "no samples" : "no reason given";
}

/* The wall time per occurrence of a phase_wall_only() phase, in ns. */
static struct stats_summary phase_wall_stats(const struct phase_result *r)
{
	struct stats_summary st;

	stats_summarize(r->target->wall_ns, r->target->n_wall, &st);
	return st;
}

/* The ns-per-access statistics of phase i: the analysis has them; recomputed if it does not. */
static struct stats_summary phase_stats(const struct report_input *in, size_t i)
{
	struct stats_summary st;

	if (i < in->analysis->n_phases)
		return in->analysis->phases[i].ns;
	stats_summarize(in->results->phases[i].samples_ns, in->results->phases[i].n_samples, &st);
	return st;
}

/* Timed accesses of a phase over all its samples (pages touched for pagefault; what a run phase declared). */
static double phase_accesses(const struct phase_result *r)
{
	return r->spec.accesses_total ? (double)r->spec.accesses_total : (double)r->spec.iterations * (double)r->n_samples;
}

/* A tlbprof run phase that declared no accesses: measured, but only as wall time per occurrence. */
static bool phase_wall_only(const struct phase_result *r)
{
	return r->status == PHASE_OK && !r->n_samples && r->target && r->target->n_wall;
}

/* The comparison whose variant is phase i, or NULL. */
static const struct comparison *comparison_of(const struct analysis *a, size_t i)
{
	for (size_t k = 0; k < a->n_comparisons; k++)
		if (a->comparisons[k].variant == i)
			return &a->comparisons[k];
	return NULL;
}

/* A counter that produced a value in this phase (ok or multiplexed, and scheduled at all). */
static bool counter_counted(const struct counter_info *ci, const struct counter_reading *cr)
{
	return (ci->status == COUNTER_OK || ci->status == COUNTER_MULTIPLEXED) && !(cr->running_ns == 0 && cr->enabled_ns);
}

/* Share of the enabled time a counter ran: 1 when not multiplexed. */
static double counter_running(const struct counter_reading *cr)
{
	return cr->enabled_ns ? (double)cr->running_ns / (double)cr->enabled_ns : 1.0;
}

/*
 * A number as text: the shortest of 15 to 17 significant digits that reads
 * back exactly ("47.12", not "47.119999999999997"); never "-0".
 */
static const char *num_text(double v, char *buf, size_t len)
{
	if (isnan(v)) {
		snprintf(buf, len, "NaN");
	} else if (isinf(v)) {
		snprintf(buf, len, "%sInf", v < 0 ? "-" : "+");
	} else {
		for (int digits = 15; digits <= 17; digits++) {
			snprintf(buf, len, "%.*g", digits, v == 0 ? 0.0 : v);
			if (strtod(buf, NULL) == v)
				break;
		}
	}
	return buf;
}

/* ---- Google Benchmark JSON ---- */

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
	json_object_set_new(c, "workload", json_string(workload_of(in)));
	json_object_set_new(c, "cpu_model", report_json_text(env->cpu_model_name));
	json_object_set_new(c, "kernel", report_json_text(env->kernel));
	json_object_set_new(c, "hypervisor", report_json_text(env->hypervisor));
	json_object_set_new(c, "thp_enabled", report_json_text(env->thp_enabled));
	json_object_set_new(c, "verdict", json_string(verdict_name(in->analysis->verdict)));
	/* The phases that were not measured have no benchmark entry (see gb_benchmark()): each is named here. */
	for (size_t i = 0; i < in->results->n; i++) {
		const struct phase_result *r = &in->results->phases[i];
		char *key = NULL, *why = NULL;
		if (phase_measured(r) || phase_wall_only(r))
			continue;
		if (asprintf(&key, "not_measured:%s", r->spec.name) < 0)
			key = NULL;
		else if (asprintf(&why, "%s: %s", phase_status_name(r->status), phase_why(r)) < 0)
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
	if (phase_wall_only(r)) {
		/* One gbench iteration per occurrence of the phase: its median wall time. */
		const struct stats_summary w = phase_wall_stats(r);
		json_object_set_new(o, "iterations", json_integer((json_int_t)r->target->n_wall));
		json_object_set_new(o, "real_time", json_real(w.median));
		json_object_set_new(o, "cpu_time", json_real(w.median));
		json_object_set_new(o, "time_unit", json_string("ns"));
		gb_counter(o, "samples", (double)r->target->n_wall);
		return o;
	}
	const struct stats_summary st = phase_stats(in, i);
	/* CPU time: the measuring thread's task-clock where that software counter counted, else the wall time. */
	if (!analysis_per_access(r, METRIC_TASK_CLOCK, &cpu))
		cpu = st.median;
	json_object_set_new(o, "iterations", json_integer((json_int_t)phase_accesses(r)));
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
		if (!counter_counted(ci, &r->counters[k]))
			continue;
		snprintf(key, sizeof(key), "%s_per_access", metric_name(ci->metric));
		gb_counter(o, key, r->counters[k].scaled / phase_accesses(r));
	}
	const struct comparison *c = comparison_of(in->analysis, i);
	if (c) {
		gb_counter(o, "speedup", c->speedup);
		gb_counter(o, "delta_ns", c->delta_ns);
		if (c->ns_per_tlb_miss > 0)
			gb_counter(o, "ns_per_tlb_miss", c->ns_per_tlb_miss);
	}
	char label[48];
	report_backing_label(r, label, sizeof(label));
	json_object_set_new(o, "label", report_json_text(label));
	return o;
}

static int write_gbench(const struct report_input *in, FILE *f)
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
		if (phase_measured(&in->results->phases[i]) || phase_wall_only(&in->results->phases[i]))
			json_array_append_new(list, gb_benchmark(in, i, json_array_size(list)));
	json_object_set_new(root, "benchmarks", list);
	rc = report_json_dumpf(root, f);
	json_decref(root);
	return rc;
}

/* ---- OpenMetrics (and Prometheus text) ---- */

/*
 * One metric family. Everything is a gauge: the values describe one run and
 * the file is replaced by the next, and the Prometheus text format that
 * node_exporter's textfile collector reads knows neither stateset nor info
 * (it reads "# UNIT" and "# EOF" as comments). The header is written with the
 * first sample, so a family without samples leaves no trace.
 */
struct om_family {
	FILE *f;
	const char *name, *help, *unit;	/* unit: the name's suffix, or NULL */
	bool started;
	bool labelled;			/* the current sample has opened its braces */
};

static void om_begin(struct om_family *m)
{
	if (!m->started) {
		fprintf(m->f, "# HELP %s %s\n# TYPE %s gauge\n", m->name, m->help, m->name);
		if (m->unit)
			fprintf(m->f, "# UNIT %s %s\n", m->name, m->unit);
		m->started = true;
	}
	fputs(m->name, m->f);
	m->labelled = false;
}

/* A label: the value as well-formed UTF-8 with backslash, double quote and line feed escaped (both formats). */
static void om_label(struct om_family *m, const char *key, const char *value)
{
	fprintf(m->f, "%s%s=\"", m->labelled ? "," : "{", key);
	report_put_text(m->f, value, REPORT_TEXT_OPENMETRICS);
	fputc('"', m->f);
	m->labelled = true;
}

static void om_end(struct om_family *m, double v)
{
	char buf[40];

	fprintf(m->f, "%s %s\n", m->labelled ? "}" : "", num_text(v, buf, sizeof(buf)));
}

/* The labels that name a phase. */
static void om_phase(struct om_family *m, const struct phase_result *r)
{
	char sz[16];

	om_begin(m);
	om_label(m, "phase", r->spec.name);
	om_label(m, "workload", r->spec.workload ? r->spec.workload->name : "");
	om_label(m, "page", r->spec.page.label);
	om_label(m, "size", format_size(r->spec.size_bytes, sz, sizeof(sz)));
}

/* Median, min and max of statistics in ns, as one sample each in seconds with a "stat" label. */
static void om_seconds(struct om_family *m, const struct phase_result *r, const struct stats_summary *st)
{
	const struct {
		const char *stat;
		double ns;
	} stats[] = { { "median", st->median }, { "min", st->min }, { "max", st->max } };

	for (size_t s = 0; s < sizeof(stats) / sizeof(stats[0]); s++) {
		if (!isfinite(stats[s].ns))
			continue;
		om_phase(m, r);
		om_label(m, "stat", stats[s].stat);
		om_end(m, stats[s].ns / 1e9);
	}
}

/* One state of a state set, written as a gauge: 1 for the current state, 0 for the others (both formats accept it). */
static void om_state(struct om_family *m, const char *key, const char *state, const char *current)
{
	om_label(m, key, state);
	om_end(m, strcmp(state, current) == 0);
}

static int write_openmetrics(const struct report_input *in, FILE *f)
{
	const struct run_results *rr = in->results;
	const struct analysis *a = in->analysis;
	const struct environment *env = in->env;
	static const char *const verdicts[] = { "ok", "warn", "fail" };
	static const char *const check_states[] = { "pass", "warn", "fail", "skip" };
	static const char *const phase_states[] = { "ok", "failed", "skipped" };

	struct om_family info = {
		.f = f,
		/* Not "_info": OpenMetrics reserves that suffix for its info type, which the textfile collector refuses. */
		.name = "tlbprof_run",
		.help = "The run this file reports: tool version, workload and machine (always 1).",
	};
	om_begin(&info);
	om_label(&info, "version", TLBPROF_VERSION);
	om_label(&info, "schema", REPORT_SCHEMA);
	om_label(&info, "workload", workload_of(in));
	om_label(&info, "cpu", env->cpu_model_name);
	om_label(&info, "kernel", env->kernel);
	om_label(&info, "hypervisor", env->hypervisor);
	om_label(&info, "pmu", in->pmu_name ? in->pmu_name : "none");
	om_label(&info, "thp", env->thp_enabled);
	om_end(&info, 1);

	struct om_family verdict = {
		.f = f,
		.name = "tlbprof_verdict",
		.help = "Verdict of the checks: 1 for the current one of ok, warn, fail.",
	};
	for (size_t s = 0; s < sizeof(verdicts) / sizeof(verdicts[0]); s++) {
		om_begin(&verdict);
		om_state(&verdict, "verdict", verdicts[s], verdict_name(a->verdict));
	}

	struct om_family checks = {
		.f = f,
		.name = "tlbprof_check_status",
		.help = "Each check of the measurement: 1 for its current status of pass, warn, fail, skip.",
	};
	for (size_t i = 0; i < a->n_checks; i++)
		for (size_t s = 0; s < sizeof(check_states) / sizeof(check_states[0]); s++) {
			om_begin(&checks);
			om_label(&checks, "check", a->checks[i].id);
			om_state(&checks, "status", check_states[s], check_status_name(a->checks[i].status));
		}

	struct om_family status = {
		.f = f,
		.name = "tlbprof_phase_status",
		.help = "Each phase: 1 for its current status of ok, failed, skipped.",
	};
	for (size_t i = 0; i < rr->n; i++)
		for (size_t s = 0; s < sizeof(phase_states) / sizeof(phase_states[0]); s++) {
			om_phase(&status, &rr->phases[i]);
			om_state(&status, "status", phase_states[s], phase_status_name(rr->phases[i].status));
		}

	struct om_family lat = {
		.f = f,
		.name = "tlbprof_access_latency_seconds",
		.help = "Time per access of each phase (per page touched for pagefault): median, min and max of "
			  "its samples.",
		.unit = "seconds",
	};
	struct om_family cyc = {
		.f = f,
		.name = "tlbprof_access_latency_cycles",
		.help = "Core cycles per access, median (from the calibrated core clock).",
		.unit = "cycles",
	};
	struct om_family spread = {
		.f = f,
		.name = "tlbprof_access_latency_spread_ratio",
		.help = "Spread of the samples of each phase: (max - min) / median.",
		.unit = "ratio",
	};
	struct om_family samples = {
		.f = f,
		.name = "tlbprof_phase_samples",
		.help = "Timed samples of each phase.",
	};
	struct om_family accesses = {
		.f = f,
		.name = "tlbprof_phase_accesses",
		.help = "Timed accesses of each phase over all its samples (pages touched for pagefault).",
	};
	struct om_family trans = {
		.f = f,
		.name = "tlbprof_translation_seconds",
		.help = "Address translation part of the time per access: the phase minus its packed control.",
		.unit = "seconds",
	};
	struct om_family wall = {
		.f = f,
		.name = "tlbprof_phase_wall_seconds",
		.help = "Wall time per occurrence of a tlbprof run phase that declared no accesses (median, min, max).",
		.unit = "seconds",
	};
	struct om_family occurrences = {
		.f = f,
		.name = "tlbprof_phase_occurrences",
		.help = "Occurrences of a tlbprof run phase that declared no accesses.",
	};
	struct om_family *per_phase[] = { &lat, &cyc, &spread, &samples, &accesses, &trans, &wall, &occurrences };
	for (size_t k = 0; k < sizeof(per_phase) / sizeof(per_phase[0]); k++) {
		struct om_family *m = per_phase[k];
		for (size_t i = 0; i < rr->n; i++) {
			const struct phase_result *r = &rr->phases[i];
			double v = NAN;	/* what the family says of this phase; not finite: nothing */
			if (phase_wall_only(r)) {
				const struct stats_summary w = phase_wall_stats(r);
				if (m == &wall)
					om_seconds(m, r, &w);
				else if (m == &occurrences)
					v = (double)r->target->n_wall;
			} else if (phase_measured(r)) {
				const struct stats_summary st = phase_stats(in, i);
				if (m == &lat)
					om_seconds(m, r, &st);
				else if (m == &cyc && r->cycles_per_ns > 0)
					v = st.median * r->cycles_per_ns;
				else if (m == &spread)
					v = st.rel_spread;
				else if (m == &samples)
					v = (double)r->n_samples;
				else if (m == &accesses)
					v = phase_accesses(r);
				else if (m == &trans && i < a->n_phases && a->phases[i].has_control)
					v = a->phases[i].translation_ns / 1e9;
			}
			if (isfinite(v)) {
				om_phase(m, r);
				om_end(m, v);
			}
		}
	}

	struct om_family value = {
		.f = f,
		.name = "tlbprof_counter_value",
		.help = "perf_event counter totals over the timed samples (a run phase: its occurrences), scaled "
			  "when multiplexed; a counter that could not count is absent, never 0.",
	};
	struct om_family rate = {
		.f = f,
		.name = "tlbprof_counter_per_access",
		.help = "perf_event counter per timed access.",
	};
	struct om_family running = {
		.f = f,
		.name = "tlbprof_counter_running_ratio",
		.help = "Share of the enabled time each counter ran, as perf stat shows it; a multiplexed "
			  "counter is scaled by it.",
		.unit = "ratio",
	};
	struct om_family *per_counter[] = { &value, &rate, &running };
	for (size_t k = 0; k < sizeof(per_counter) / sizeof(per_counter[0]); k++) {
		struct om_family *m = per_counter[k];
		for (size_t i = 0; i < rr->n; i++) {
			const struct phase_result *r = &rr->phases[i];
			/* A phase measured by wall time alone has counter totals, but no rate per access. */
			if (!phase_measured(r) && !(phase_wall_only(r) && m != &rate))
				continue;
			for (size_t j = 0; j < r->n_counters; j++) {
				const struct counter_info *ci = &r->counter_info[j];
				const struct counter_reading *cr = &r->counters[j];
				double v = m == &value ? cr->scaled : m == &rate ? cr->scaled / phase_accesses(r) : counter_running(cr);
				if (!counter_counted(ci, cr) || !isfinite(v))
					continue;
				om_phase(m, r);
				om_label(m, "counter", ci->name);
				om_label(m, "metric", metric_name(ci->metric));
				om_end(m, v);
			}
		}
	}

	struct om_family speedup = {
		.f = f,
		.name = "tlbprof_comparison_speedup_ratio",
		.help = "Speedup of the variant over the baseline at the same size: baseline median / variant "
			  "median.",
		.unit = "ratio",
	};
	struct om_family delta = {
		.f = f,
		.name = "tlbprof_comparison_delta_seconds",
		.help = "Baseline minus variant median time per access.",
		.unit = "seconds",
	};
	struct om_family miss = {
		.f = f,
		.name = "tlbprof_tlb_miss_cost_seconds",
		.help = "Time per avoided dTLB miss, where counters measured the misses.",
		.unit = "seconds",
	};
	struct om_family *per_comparison[] = { &speedup, &delta, &miss };
	for (size_t k = 0; k < sizeof(per_comparison) / sizeof(per_comparison[0]); k++) {
		struct om_family *m = per_comparison[k];
		for (size_t i = 0; i < a->n_comparisons; i++) {
			const struct comparison *c = &a->comparisons[i];
			char sz[16];
			double v = m == &speedup ? c->speedup : m == &delta ? c->delta_ns / 1e9 : c->ns_per_tlb_miss / 1e9;
			if ((m == &miss && !(c->ns_per_tlb_miss > 0)) || !isfinite(v))
				continue;
			om_begin(m);
			om_label(m, "baseline", rr->phases[c->baseline].spec.name);
			om_label(m, "variant", rr->phases[c->variant].spec.name);
			om_label(m, "size", format_size(rr->phases[c->variant].spec.size_bytes, sz, sizeof(sz)));
			om_label(m, "method", c->method ? c->method : "");
			om_end(m, v);
		}
	}
	fputs("# EOF\n", f);
	return 0;
}

/* ---- JUnit XML ---- */

/* Text for XML 1.0 (report_put_text(): markup escaped, what XML cannot carry and invalid bytes as U+FFFD). */
static void xml_text(FILE *f, const char *s, bool attr)
{
	report_put_text(f, s, attr ? REPORT_TEXT_XML_ATTR : REPORT_TEXT_XML);
}

static void xml_attr(FILE *f, const char *key, const char *value)
{
	fprintf(f, " %s=\"", key);
	xml_text(f, value, true);
	fputc('"', f);
}

static void xml_property(FILE *f, const char *name, const char *value)
{
	fputs("      <property", f);
	xml_attr(f, "name", name);
	xml_attr(f, "value", value);
	fputs("/>\n", f);
}

/* Whether a check is a failed test: fail always, warn when --fail-on warn makes it fail the run. */
static bool junit_check_fails(enum check_status s, enum fail_on fail_on)
{
	return s == CHECK_FAIL || (s == CHECK_WARN && fail_on == FAIL_ON_WARN);
}

static void junit_suite_open(FILE *f, const char *name, size_t tests, size_t failures, size_t skipped, double time_s)
{
	fputs("  <testsuite", f);
	xml_attr(f, "name", name);
	fprintf(f, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\">\n", tests, failures,
		skipped, time_s);
}

static void junit_case_open(FILE *f, const char *classname, const char *name, double time_s)
{
	fputs("    <testcase", f);
	xml_attr(f, "classname", classname);
	xml_attr(f, "name", name);
	fprintf(f, " time=\"%.3f\">\n", time_s);
}

/*
 * What a measured phase found, for its <system-out>: ns per access, or for a
 * run phase that declared no accesses its occurrences and their wall time.
 */
static void junit_phase_out(const struct report_input *in, size_t i, FILE *f)
{
	const struct phase_result *r = &in->results->phases[i];
	bool wall_only = phase_wall_only(r);
	struct stats_summary st;
	char buf[64], back[48];

	if (wall_only) {
		st = phase_wall_stats(r);
		fprintf(f, "%zu occurrence%s: wall time median %s ns", r->target->n_wall, r->target->n_wall == 1 ? "" : "s",
			num_text(st.median, buf, sizeof(buf)));
	} else {
		st = phase_stats(in, i);
		fprintf(f, "%s ns per %s: median of %zu samples", num_text(st.median, buf, sizeof(buf)),
			r->spec.fault_case != FAULT_NONE ? "page" : "access", r->n_samples);
	}
	report_backing_label(r, back, sizeof(back));
	fprintf(f, ", min %s", num_text(st.min, buf, sizeof(buf)));
	fprintf(f, ", max %s\nbacking: ", num_text(st.max, buf, sizeof(buf)));
	xml_text(f, back, false);
	fputc('\n', f);
	for (size_t k = 0; k < r->n_self_checks; k++) {
		fprintf(f, "self-check %s: %s", r->self_checks[k].id, check_status_name(r->self_checks[k].status));
		if (*r->self_checks[k].message) {
			fputs(" (", f);
			xml_text(f, r->self_checks[k].message, false);
			fputc(')', f);
		}
		fputc('\n', f);
	}
	for (size_t k = 0; k < r->n_counters; k++) {
		if (!counter_counted(&r->counter_info[k], &r->counters[k]))
			continue;
		fprintf(f, "%s: %s", r->counter_info[k].name, num_text(r->counters[k].scaled, buf, sizeof(buf)));
		/* A rate only where the accesses are known. */
		if (!wall_only && phase_accesses(r) > 0)
			fprintf(f, " (%s per access)", num_text(r->counters[k].scaled / phase_accesses(r), buf, sizeof(buf)));
		fputc('\n', f);
	}
}

static int write_junit(const struct report_input *in, FILE *f)
{
	const struct run_results *rr = in->results;
	const struct analysis *a = in->analysis;
	enum fail_on fail_on = in->fail_on;
	size_t check_fail = 0, check_skip = 0, phase_fail = 0, phase_skip = 0;
	double phase_time = 0;
	char buf[64];

	for (size_t i = 0; i < a->n_checks; i++) {
		check_fail += junit_check_fails(a->checks[i].status, fail_on);
		check_skip += a->checks[i].status == CHECK_SKIP;
	}
	for (size_t i = 0; i < rr->n; i++) {
		phase_skip += rr->phases[i].status == PHASE_SKIPPED;
		phase_fail += rr->phases[i].status != PHASE_SKIPPED && !phase_measured(&rr->phases[i]) &&
			      !phase_wall_only(&rr->phases[i]);
		phase_time += rr->phases[i].timed_ns > 0 ? rr->phases[i].timed_ns / 1e9 : 0;
	}

	/*
	 * <testsuites> takes name, tests, failures, errors and time only: the
	 * Jenkins junit-10.xsd (xunit plugin) refuses "skipped" there; the skipped
	 * counts are on each <testsuite>.
	 */
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"tlbprof\"", f);
	fprintf(f, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" time=\"%.3f\">\n", a->n_checks + rr->n,
		check_fail + phase_fail, phase_time);

	/* The checks: what CI should fail on. */
	junit_suite_open(f, "tlbprof.checks", a->n_checks, check_fail, check_skip, 0);
	fputs("    <properties>\n", f);
	xml_property(f, "tlbprof.version", TLBPROF_VERSION);
	xml_property(f, "schema", REPORT_SCHEMA);
	char *cmd = NULL;
	size_t cmd_len = 0;
	FILE *cs = open_memstream(&cmd, &cmd_len);
	for (int i = 0; cs && i < in->argc; i++)
		fprintf(cs, "%s%s", i ? " " : "", in->argv[i]);
	if (!cs || fclose(cs) != 0) {
		free(cmd);
		return -ENOMEM;
	}
	xml_property(f, "command", cmd);
	free(cmd);
	xml_property(f, "workload", workload_of(in));
	xml_property(f, "cpu", in->env->cpu_model_name);
	xml_property(f, "kernel", in->env->kernel);
	xml_property(f, "hypervisor", in->env->hypervisor);
	xml_property(f, "fail_on", fail_on_name(fail_on));
	xml_property(f, "verdict", verdict_name(a->verdict));
	xml_property(f, "summary", a->summary);
	xml_property(f, "interrupted", rr->interrupted ? "true" : "false");
	fputs("    </properties>\n", f);
	for (size_t i = 0; i < a->n_checks; i++) {
		const struct analysis_check *c = &a->checks[i];
		junit_case_open(f, "tlbprof.checks", c->id, 0);
		if (c->status == CHECK_SKIP) {
			fputs("      <skipped", f);
			xml_attr(f, "message", c->message);
			fputs("/>\n", f);
		} else if (junit_check_fails(c->status, fail_on)) {
			fputs("      <failure", f);
			xml_attr(f, "message", c->message);
			xml_attr(f, "type", check_status_name(c->status));
			fputc('>', f);
			xml_text(f, c->message, false);
			for (size_t k = 0; k < c->evidence.n; k++)
				if (isfinite(c->evidence.items[k].value))
					fprintf(f, "\n%s = %s", c->evidence.items[k].key,
						num_text(c->evidence.items[k].value, buf, sizeof(buf)));
			fputs("</failure>\n", f);
		} else {
			/* A pass, or a warning that does not fail the run: passing, the message kept. */
			fprintf(f, "      <system-out>%s", c->status == CHECK_WARN ? "warning: " : "");
			xml_text(f, c->message, false);
			fputs("</system-out>\n", f);
		}
		fputs("    </testcase>\n", f);
	}
	fputs("  </testsuite>\n", f);

	/* The phases: one that could not be measured is a failed test, a skipped one skipped. */
	junit_suite_open(f, "tlbprof.phases", rr->n, phase_fail, phase_skip, phase_time);
	for (size_t i = 0; i < rr->n; i++) {
		const struct phase_result *r = &rr->phases[i];
		const char *why = *r->reason ? r->reason : phase_status_name(r->status);
		junit_case_open(f, "tlbprof.phases", r->spec.name, r->timed_ns > 0 ? r->timed_ns / 1e9 : 0);
		if (r->status == PHASE_SKIPPED) {
			fputs("      <skipped", f);
			xml_attr(f, "message", why);
			fputs("/>\n", f);
		} else if (!phase_measured(r) && !phase_wall_only(r)) {
			if (r->status == PHASE_OK)
				why = "no samples";
			fputs("      <failure", f);
			xml_attr(f, "message", why);
			xml_attr(f, "type", r->unavailable ? "unavailable" : "failed");
			fputc('>', f);
			xml_text(f, why, false);
			fputs("</failure>\n", f);
		} else {
			fputs("      <system-out>", f);
			junit_phase_out(in, i, f);
			fputs("</system-out>\n", f);
		}
		fputs("    </testcase>\n", f);
	}
	fputs("  </testsuite>\n</testsuites>\n", f);
	return 0;
}

/* ---- CSV ---- */

/* One field, RFC 4180: quoted (with doubled quotes) when it holds a comma, a quote or a line break; UTF-8. */
static void csv_field(FILE *f, const char *s, bool last)
{
	bool quote = strpbrk(s, ",\"\r\n") != NULL;

	if (quote)
		fputc('"', f);
	report_put_text(f, s, quote ? REPORT_TEXT_CSV_QUOTED : REPORT_TEXT_PLAIN);
	if (quote)
		fputc('"', f);
	fputc(last ? '\n' : ',', f);
}

/* One row: phase, value, unit, metric, running %, note. */
static void csv_row(FILE *f, const char *phase, const char *value, const char *unit, const char *metric,
		    const char *running, const char *note)
{
	csv_field(f, phase, false);
	csv_field(f, value, false);
	csv_field(f, unit, false);
	csv_field(f, metric, false);
	csv_field(f, running, false);
	csv_field(f, note, true);
}

/* A row with a number; one that is not finite (nothing to say) is left out, never written as NaN. */
static void csv_num(FILE *f, const char *phase, double v, const char *unit, const char *metric, const char *note)
{
	char buf[40];

	if (!isfinite(v))
		return;
	csv_row(f, phase, num_text(v, buf, sizeof(buf)), unit, metric, "", note);
}

/*
 * The counters of a phase as perf stat -x prints them: the count, its unit,
 * the event, the share of time counted; with per_access, each rate per
 * access after it.
 */
static void csv_counters(FILE *f, const struct phase_result *r, bool per_access)
{
	char buf[40], pct[16], key[96];

	for (size_t k = 0; k < r->n_counters; k++) {
		const struct counter_info *ci = &r->counter_info[k];
		const struct counter_reading *cr = &r->counters[k];
		const char *unit = ci->metric == METRIC_TASK_CLOCK ? "ns" : "";
		if (!counter_counted(ci, cr)) {
			csv_row(f, r->spec.name, ci->status == COUNTER_UNSUPPORTED ? "<not supported>" : "<not counted>", unit,
				ci->name, "", ci->reason);
			continue;
		}
		snprintf(pct, sizeof(pct), "%.2f", 100 * counter_running(cr));
		csv_row(f, r->spec.name, num_text(cr->scaled, buf, sizeof(buf)), unit, ci->name, pct,
			ci->status == COUNTER_MULTIPLEXED ? "multiplexed, scaled" : "");
		if (!per_access)
			continue;
		snprintf(key, sizeof(key), "%s_per_access", metric_name(ci->metric));
		csv_row(f, r->spec.name, num_text(cr->scaled / phase_accesses(r), buf, sizeof(buf)), "", key, pct, "");
	}
}

static int write_csv(const struct report_input *in, FILE *f)
{
	const struct run_results *rr = in->results;
	const struct analysis *a = in->analysis;
	char buf[40], note[600];

	fputs("# phase,value,unit,metric,running_pct,note\n", f);
	for (size_t i = 0; i < rr->n; i++) {
		const struct phase_result *r = &rr->phases[i];
		const char *name = r->spec.name;
		if (phase_wall_only(r)) {
			/* A run phase that declared no accesses: its wall time per occurrence and its counter totals. */
			const struct stats_summary w = phase_wall_stats(r);
			snprintf(note, sizeof(note), "median of %zu occurrence%s", r->target->n_wall,
				 r->target->n_wall == 1 ? "" : "s");
			csv_num(f, name, w.median, "ns", "wall_ns", note);
			csv_num(f, name, w.min, "ns", "wall_ns_min", "");
			csv_num(f, name, w.max, "ns", "wall_ns_max", "");
			csv_num(f, name, (double)r->target->n_wall, "", "occurrences", "");
			csv_counters(f, r, false);
			continue;
		}
		if (!phase_measured(r)) {
			snprintf(note, sizeof(note), "%s: %s", phase_status_name(r->status), phase_why(r));
			csv_row(f, name, "<not counted>", "ns", "ns_per_access", "", note);
			continue;
		}
		const struct stats_summary st = phase_stats(in, i);
		snprintf(note, sizeof(note), "median of %zu samples%s", r->n_samples,
			 r->spec.fault_case != FAULT_NONE ? ", per page touched" : "");
		csv_num(f, name, st.median, "ns", "ns_per_access", note);
		csv_num(f, name, st.min, "ns", "ns_per_access_min", "");
		csv_num(f, name, st.max, "ns", "ns_per_access_max", "");
		csv_num(f, name, 100 * st.rel_spread, "%", "spread", "(max - min) / median");
		if (r->cycles_per_ns > 0) {
			snprintf(note, sizeof(note), "calibrated core clock %s GHz", num_text(r->cycles_per_ns, buf, sizeof(buf)));
			csv_num(f, name, st.median * r->cycles_per_ns, "cycles", "cycles_per_access", note);
		}
		if (i < a->n_phases && a->phases[i].has_control) {
			snprintf(note, sizeof(note), "minus the control %s", rr->phases[a->phases[i].control].spec.name);
			csv_num(f, name, a->phases[i].translation_ns, "ns", "translation_ns", note);
		}
		csv_num(f, name, phase_accesses(r), "", "accesses", "timed, over all samples");
		csv_counters(f, r, phase_accesses(r) > 0);
		const struct comparison *c = comparison_of(a, i);
		if (c) {
			snprintf(note, sizeof(note), "vs %s (%s)", rr->phases[c->baseline].spec.name, c->method ? c->method : "");
			csv_num(f, name, c->speedup, "x", "speedup", note);
			csv_num(f, name, c->delta_ns, "ns", "delta_ns", note);
			if (c->ns_per_tlb_miss > 0)
				csv_num(f, name, c->ns_per_tlb_miss, "ns", "ns_per_tlb_miss", note);
		}
	}
	return 0;
}

int report_format_write(const struct report_input *in, enum output_format fmt, FILE *f)
{
	switch (fmt) {
	case OUTPUT_JSON: {
		json_t *root = report_json_build(in);
		if (!root)
			return -ENOMEM;
		int rc = report_json_dumpf(root, f);
		json_decref(root);
		return rc;
	}
	case OUTPUT_GBENCH:
		return write_gbench(in, f);
	case OUTPUT_OPENMETRICS:
		return write_openmetrics(in, f);
	case OUTPUT_JUNIT:
		return write_junit(in, f);
	case OUTPUT_CSV:
		return write_csv(in, f);
	case OUTPUT_FORMATS:
		break;
	}
	return -EINVAL;
}

int report_write_json(const struct report_input *in, const char *path, char *err, size_t err_len)
{
	return report_write_format(in, OUTPUT_JSON, path, "--json", err, err_len);
}

/* A format as the stream writer of report_write_file(). */
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
