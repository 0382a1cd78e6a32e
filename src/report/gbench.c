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
#include "stats.h"
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
	/* When the phases were measured, where the report says (a re-analysis keeps it); else now. */
	time_t now = in->results->started_unix_s > 0 ? (time_t)in->results->started_unix_s : time(NULL);
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
	/* How the entries were made (tlbprof-report(5), GOOGLE BENCHMARK JSON). */
	json_object_set_new(c, "repetitions",
			    json_string("one per allocation (page faults in several processes: per process; tlbprof run: "
					"per occurrence), its median ns per access"));
	json_object_set_new(c, "cpu_time",
			    json_string("real_time x the phase's task-clock / wall time of its timed samples (real_time "
					"where no clock event counted)"));
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
 * The repetitions of a phase, gbench's unit of --benchmark_repetitions: one per
 * allocation. Samples of one allocation share its physical pages, page-table
 * pages and cache-set placement, so they vary together; allocations are the
 * independent draws, as in tlbprof's own statistics (the precision and the
 * bootstrap take allocations as the unit). An entry per sample would hand
 * compare.py's Mann-Whitney U test dependent values as if independent and
 * overstate every p-value's confidence. A page-fault phase run in several
 * processes repeats per process (analysis_sample_clusters() in the judge: its
 * samples each map fresh memory, so the process is what they share); a
 * tlbprof run phase per occurrence (the command's own repetitions). The real
 * time of a repetition is the median ns per access of its samples.
 */
struct gb_rep {
	double real_ns, cpu_ns;
	double accesses;	/* timed accesses of the repetition */
};

/*
 * CPU time over wall time of the phase's timed samples: the task-clock (or
 * cpu-clock) of the measuring thread over their wall time. It scales each
 * repetition's real time into its CPU time, so cpu_time is the same statistic
 * as real_time: a thread that waited (on I/O, or preempted) shows it. Not
 * above 1 for tlbprof's one measuring thread (the excess is the counters' own
 * enable and disable inside the window); a run phase's command may have
 * threads. 1 when no clock event counted (then cpu_time is the real time, and
 * the context says so).
 */
static double gb_cpu_share(const struct phase_result *r, bool *known)
{
	*known = false;
	if (!(r->timed_ns > 0))
		return 1;
	for (size_t k = 0; k < r->n_counters; k++) {
		const struct counter_info *ci = &r->counter_info[k];
		if (!report_counter_is_time(ci) || !report_counter_counted(ci, &r->counters[k]))
			continue;
		double share = r->counters[k].scaled / r->timed_ns;
		if (!isfinite(share) || share <= 0)
			continue;
		*known = true;
		return r->target ? share : fmin(share, 1.0);
	}
	return 1;
}

/* The repetitions of phase r into *out (caller frees): their count, 0 on OOM or without samples. */
static size_t gb_repetitions(const struct phase_result *r, struct gb_rep **out)
{
	bool known;
	double share = gb_cpu_share(r, &known);
	size_t n = 0;

	*out = NULL;
	if (report_phase_wall_only(r)) {
		/* One repetition per occurrence: its wall time, a single "iteration" of the region. */
		if (!(*out = calloc(r->target->n_wall, sizeof(**out))))
			return 0;
		for (size_t i = 0; i < r->target->n_wall; i++)
			(*out)[n++] = (struct gb_rep){ r->target->wall_ns[i], r->target->wall_ns[i] * share, 1 };
		return n;
	}
	const unsigned *tag = r->sample_alloc;
	unsigned *owned = NULL;
	struct stats_groups g;
	if (r->processes_run > 1 && r->n_fault_samples == r->n_samples && r->n_samples) {
		if (!(owned = malloc(r->n_samples * sizeof(*owned))))
			return 0;
		for (size_t i = 0; i < r->n_samples; i++)
			owned[i] = r->fault_samples[i].process;
		tag = owned;
	} else if (r->target && r->n_samples) {
		if (!(owned = malloc(r->n_samples * sizeof(*owned))))
			return 0;
		for (size_t i = 0; i < r->n_samples; i++)
			owned[i] = (unsigned)i;
		tag = owned;
	}
	if (stats_group(r->samples_ns, tag, r->n_samples, &g) == 0) {
		double per_sample = report_phase_accesses(r) / (double)r->n_samples;
		if ((*out = calloc(g.k, sizeof(**out))))
			for (size_t c = 0; c < g.k; c++) {
				double m = stats_median(g.v + g.start[c], g.len[c]);
				(*out)[n++] = (struct gb_rep){ m, m * share, per_sample * (double)g.len[c] };
			}
		stats_groups_free(&g);
	}
	free(owned);
	return n;
}

/* The fields every entry of a phase has, as gbench writes them, up to threads. */
static json_t *gb_entry(const char *run_name, const char *name, size_t family, size_t reps, bool aggregate)
{
	json_t *o = json_object();

	json_object_set_new(o, "name", report_json_text(name));
	json_object_set_new(o, "family_index", json_integer((json_int_t)family));
	json_object_set_new(o, "per_family_instance_index", json_integer(0));
	json_object_set_new(o, "run_name", report_json_text(run_name));
	json_object_set_new(o, "run_type", json_string(aggregate ? "aggregate" : "iteration"));
	json_object_set_new(o, "repetitions", json_integer((json_int_t)reps));
	return o;
}

/*
 * The phase's own figures as user counters: tlbprof's statistics over all
 * samples, cycles, each counter per access, and on the variant of a
 * comparison the speedup and what goes with it. They are the phase's, not one
 * repetition's, so they go on the _median aggregate (on the only entry when
 * there is one repetition).
 */
static void gb_phase_counters(const struct report_input *in, size_t i, json_t *o)
{
	const struct phase_result *r = &in->results->phases[i];

	if (report_phase_wall_only(r)) {
		gb_counter(o, "samples", (double)r->target->n_wall);
		return;
	}
	const struct stats_summary st = report_phase_stats(in, i);
	gb_counter(o, "ns_per_access_median", st.median);
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
}

/* gbench's four aggregates of a value over the repetitions (statistics.cc): mean, median, stddev (n - 1), cv. */
enum gb_aggregate { GB_MEAN, GB_MEDIAN, GB_STDDEV, GB_CV };

static double gb_aggregate_of(enum gb_aggregate a, const double *v, size_t n)
{
	struct stats_summary s;

	stats_summarize(v, n, &s);
	switch (a) {
	case GB_MEAN:
		return s.mean;
	case GB_MEDIAN:
		return s.median;
	case GB_STDDEV:
		return s.stddev;
	case GB_CV:
		return s.mean > 0 ? s.stddev / s.mean : 0;
	}
	return NAN;
}

/*
 * The name phase i goes by: its own, or NAME/phase where it is another phase's aggregate's name (a marked phase
 * "x_mean" beside "x", whose NAME_mean it would be): compare.py groups entries by name, and mixed the two series
 * (a review of the real consumers found it). Within one report a name so extended is not an aggregate's.
 */
static const char *gb_base(const struct report_input *in, size_t i, char *buf, size_t len)
{
	static const char *const suffixes[] = { "_mean", "_median", "_stddev", "_cv" };
	const char *name = in->results->phases[i].spec.name;

	for (size_t j = 0; j < in->results->n; j++) {
		const char *other = in->results->phases[j].spec.name;
		size_t n = strlen(other);
		if (j == i || strncmp(name, other, n) != 0)
			continue;
		for (size_t s = 0; s < sizeof(suffixes) / sizeof(suffixes[0]); s++)
			if (strcmp(name + n, suffixes[s]) == 0) {
				snprintf(buf, len, "%s/phase", name);
				return buf;
			}
	}
	return name;
}

/*
 * A measured phase as gbench writes a benchmark run with repetitions: one
 * "iteration" entry per repetition (real_time its median ns per access,
 * iterations its timed accesses), then, with two or more, the aggregates
 * NAME_mean, NAME_median, NAME_stddev and NAME_cv over them (cv a fraction
 * with aggregate_unit "percentage", as gbench). A phase that was not measured
 * (failed, skipped) has no entry: gbench writes such runs with zero times and
 * error_occurred, which github-action-benchmark and Bencher do not filter, so
 * a dashboard would record a fake 0 ns. gb_context() names them.
 */
static int gb_phase(const struct report_input *in, size_t i, size_t family, json_t *list)
{
	static const struct {
		const char *name;
		enum gb_aggregate a;
	} aggregates[] = { { "mean", GB_MEAN }, { "median", GB_MEDIAN }, { "stddev", GB_STDDEV }, { "cv", GB_CV } };
	const struct phase_result *r = &in->results->phases[i];
	struct gb_rep *reps;
	size_t n = gb_repetitions(r, &reps);
	char label[48] = "", own[sizeof(r->spec.name) + 8];
	const char *base = gb_base(in, i, own, sizeof(own));

	if (!n)
		return -ENOMEM;
	if (!report_phase_wall_only(r))
		report_backing_label(r, label, sizeof(label));
	for (size_t k = 0; k < n; k++) {
		json_t *o = gb_entry(base, base, family, n, false);
		json_object_set_new(o, "repetition_index", json_integer((json_int_t)k));
		json_object_set_new(o, "threads", json_integer(1));
		json_object_set_new(o, "iterations", json_integer((json_int_t)llround(reps[k].accesses)));
		json_object_set_new(o, "real_time", json_real(reps[k].real_ns));
		json_object_set_new(o, "cpu_time", json_real(reps[k].cpu_ns));
		json_object_set_new(o, "time_unit", json_string("ns"));
		if (n == 1)
			gb_phase_counters(in, i, o);
		if (*label)
			json_object_set_new(o, "label", report_json_text(label));
		json_array_append_new(list, o);
	}
	double *real = n > 1 ? malloc(2 * n * sizeof(*real)) : NULL, *cpu = real ? real + n : NULL;
	for (size_t k = 0; real && k < n; k++) {
		real[k] = reps[k].real_ns;
		cpu[k] = reps[k].cpu_ns;
	}
	for (size_t a = 0; real && a < sizeof(aggregates) / sizeof(aggregates[0]); a++) {
		char *name = NULL;
		if (asprintf(&name, "%s_%s", base, aggregates[a].name) < 0)
			break;
		json_t *o = gb_entry(base, name, family, n, true);
		free(name);
		json_object_set_new(o, "threads", json_integer(1));
		json_object_set_new(o, "aggregate_name", json_string(aggregates[a].name));
		json_object_set_new(o, "aggregate_unit", json_string(aggregates[a].a == GB_CV ? "percentage" : "time"));
		json_object_set_new(o, "iterations", json_integer((json_int_t)n));
		json_object_set_new(o, "real_time", json_real(gb_aggregate_of(aggregates[a].a, real, n)));
		json_object_set_new(o, "cpu_time", json_real(gb_aggregate_of(aggregates[a].a, cpu, n)));
		json_object_set_new(o, "time_unit", json_string("ns"));
		if (aggregates[a].a == GB_MEDIAN)
			gb_phase_counters(in, i, o);
		if (*label)
			json_object_set_new(o, "label", report_json_text(label));
		json_array_append_new(list, o);
	}
	int rc = n > 1 && !real ? -ENOMEM : 0;
	free(real);
	free(reps);
	return rc;
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
	json_object_set_new(root, "benchmarks", list);
	for (size_t i = 0, family = 0; i < in->results->n && !rc; i++)
		if (report_phase_measured(&in->results->phases[i]) || report_phase_wall_only(&in->results->phases[i]))
			rc = gb_phase(in, i, family++, list);
	/*
	 * A tlbprof run command that crashed, failed or was cut short (command_exit failed): each entry is what
	 * gbench writes of a benchmark that called SkipWithError, its times kept. compare.py and dashboards had
	 * read it as an ordinary result (a review of the real consumers found it).
	 */
	const struct analysis *a = in->analysis;
	for (size_t i = 0; !rc && a && i < a->n_checks; i++) {
		if (strcmp(a->checks[i].id, "command_exit") != 0 || a->checks[i].status != CHECK_FAIL)
			continue;
		for (size_t k = 0; k < json_array_size(list); k++) {
			json_t *e = json_array_get(list, k);
			json_object_set_new(e, "error_occurred", json_true());
			json_object_set_new(e, "error_message", report_json_text(a->checks[i].message));
		}
	}
	if (!rc)
		rc = report_json_dumpf(root, f);
	json_decref(root);
	return rc;
}
