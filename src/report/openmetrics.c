/* SPDX-License-Identifier: MIT */
/* The report as OpenMetrics text, which Prometheus and node_exporter's textfile collector read too. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "parse.h"
#include "report/internal.h"
#include "report/report.h"
#include "version.h"
#include "measure/workload.h"

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

	fprintf(m->f, "%s %s\n", m->labelled ? "}" : "", report_num_text(v, buf, sizeof(buf)));
}

/* The labels that name a phase. */
static void om_phase(struct om_family *m, const struct phase_result *r)
{
	char sz[SIZE_TEXT];

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

/* tlbprof_run, the run this file reports (always 1), and tlbprof_verdict, the verdict as a state set. */
static void om_run(const struct report_input *in, FILE *f)
{
	const struct environment *env = in->env;
	struct om_family info = {
		.f = f,
		/* Not "_info": OpenMetrics reserves that suffix for its info type, which the textfile collector refuses. */
		.name = "tlbprof_run",
		.help = "The run this file reports: tool version, workload and machine (always 1).",
	};
	om_begin(&info);
	om_label(&info, "version", TLBPROF_VERSION);
	om_label(&info, "schema", REPORT_SCHEMA);
	om_label(&info, "workload", report_workload_of(in));
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
	for (int v = VERDICT_OK; v <= VERDICT_FAIL; v++) {
		om_begin(&verdict);
		om_state(&verdict, "verdict", verdict_name((enum verdict)v), verdict_name(in->analysis->verdict));
	}
}

/* The state sets of each check and each phase: tlbprof_check_status, tlbprof_phase_status. */
static void om_statuses(const struct report_input *in, FILE *f)
{
	const struct run_results *rr = in->results;
	const struct analysis *a = in->analysis;

	struct om_family checks = {
		.f = f,
		.name = "tlbprof_check_status",
		.help = "Each check of the measurement: 1 for its current status of pass, warn, fail, skip.",
	};
	for (size_t i = 0; i < a->n_checks; i++)
		for (size_t s = 0; check_status_names[s]; s++) {
			om_begin(&checks);
			om_label(&checks, "check", a->checks[i].id);
			om_state(&checks, "status", check_status_names[s], check_status_name(a->checks[i].status));
		}

	struct om_family status = {
		.f = f,
		.name = "tlbprof_phase_status",
		.help = "Each phase: 1 for its current status of ok, failed, skipped.",
	};
	for (size_t i = 0; i < rr->n; i++)
		for (size_t s = 0; phase_status_names[s]; s++) {
			om_phase(&status, &rr->phases[i]);
			om_state(&status, "status", phase_status_names[s], phase_status_name(rr->phases[i].status));
		}
}

/* The families with a sample per phase: its latency, cycles, spread, samples, accesses, translation, wall time. */
static void om_phases(const struct report_input *in, FILE *f)
{
	const struct run_results *rr = in->results;
	const struct analysis *a = in->analysis;

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
		.help = "The phase minus its packed control per access: the high estimate of its address translation "
			  "part (tlbprof_comparison_translation_* give the range, or the proven value).",
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
			if (report_phase_wall_only(r)) {
				const struct stats_summary w = report_phase_wall_stats(r);
				if (m == &wall)
					om_seconds(m, r, &w);
				else if (m == &occurrences)
					v = (double)r->target->n_wall;
			} else if (report_phase_measured(r)) {
				const struct stats_summary st = report_phase_stats(in, i);
				if (m == &lat)
					om_seconds(m, r, &st);
				else if (m == &cyc && r->cycles_per_ns > 0)
					v = st.median * r->cycles_per_ns;
				else if (m == &spread)
					v = st.rel_spread;
				else if (m == &samples)
					v = (double)r->n_samples;
				else if (m == &accesses)
					v = report_phase_accesses(r);
				else if (m == &trans && i < a->n_phases && a->phases[i].has_control)
					v = a->phases[i].translation_ns / 1e9;
			}
			if (isfinite(v)) {
				om_phase(m, r);
				om_end(m, v);
			}
		}
	}
}

/*
 * The families with a sample per perf event of each phase: its total, its rate per access, its running share.
 * Not "counter" in a name: Prometheus reserves the word for its counter type (promtool refuses it). An event
 * that counts time (task-clock, cpu-clock: ns) has families of its own in seconds, so no family mixes units.
 */
static void om_counters(const struct report_input *in, FILE *f)
{
	const struct run_results *rr = in->results;

	struct om_family value = {
		.f = f,
		.name = "tlbprof_event_value",
		.help = "perf_event totals over the timed samples (a run phase: its occurrences), scaled when "
			  "multiplexed; an event that could not count is absent, never 0. Clock events are in "
			  "tlbprof_event_seconds.",
	};
	struct om_family seconds = {
		.f = f,
		.name = "tlbprof_event_seconds",
		.help = "perf_event clock events (task-clock, cpu-clock) over the timed samples, scaled when "
			  "multiplexed.",
		.unit = "seconds",
	};
	struct om_family rate = {
		.f = f,
		.name = "tlbprof_event_per_access",
		.help = "perf_event total per timed access (clock events: tlbprof_event_time_per_access_seconds).",
	};
	struct om_family time_rate = {
		.f = f,
		.name = "tlbprof_event_time_per_access_seconds",
		.help = "perf_event clock event per timed access: the CPU time of one access.",
		.unit = "seconds",
	};
	struct om_family running = {
		.f = f,
		.name = "tlbprof_event_running_ratio",
		.help = "Share of the enabled time each event ran, as perf stat shows it; a multiplexed event is "
			  "scaled by it.",
		.unit = "ratio",
	};
	struct om_family *per_counter[] = { &value, &seconds, &rate, &time_rate, &running };
	for (size_t k = 0; k < sizeof(per_counter) / sizeof(per_counter[0]); k++) {
		struct om_family *m = per_counter[k];
		bool per_access = m == &rate || m == &time_rate;
		for (size_t i = 0; i < rr->n; i++) {
			const struct phase_result *r = &rr->phases[i];
			/* A phase measured by wall time alone has event totals, but no rate per access. */
			if (!report_phase_measured(r) && !(report_phase_wall_only(r) && !per_access))
				continue;
			for (size_t j = 0; j < r->n_counters; j++) {
				const struct counter_info *ci = &r->counter_info[j];
				const struct counter_reading *cr = &r->counters[j];
				bool is_time = report_counter_is_time(ci);
				if (m != &running && is_time != (m == &seconds || m == &time_rate))
					continue;
				double v = m == &running ? report_counter_running(cr)
					   : per_access	 ? cr->scaled / report_phase_accesses(r)
							 : cr->scaled;
				if (is_time && m != &running)
					v /= 1e9;
				if (!report_counter_counted(ci, cr) || !isfinite(v))
					continue;
				om_phase(m, r);
				om_label(m, "event", ci->name);
				om_label(m, "metric", metric_name(ci->metric));
				om_end(m, v);
			}
		}
	}
}

/* The families with a sample per comparison: the speedup and its interval, the difference, the cost of a dTLB miss. */
static void om_comparisons(const struct report_input *in, FILE *f)
{
	const struct run_results *rr = in->results;
	const struct analysis *a = in->analysis;

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
	struct om_family low = {
		.f = f,
		.name = "tlbprof_comparison_speedup_low_ratio",
		.help = "Lower end of the speedup's 95 % interval (hierarchical bootstrap: allocations, then samples).",
		.unit = "ratio",
	};
	struct om_family high = {
		.f = f,
		.name = "tlbprof_comparison_speedup_high_ratio",
		.help = "Upper end of the speedup's 95 % interval.",
		.unit = "ratio",
	};
	struct om_family comparable = {
		.f = f,
		.name = "tlbprof_comparison_comparable",
		.help = "1 when both phases' own 95 % intervals are narrower than their difference, else 0: the speedup "
			  "is then not a finding.",
	};
	struct om_family tr_low = {
		.f = f,
		.name = "tlbprof_comparison_translation_low_seconds",
		.help = "Low end of the baseline's address translation part per access (baseline minus the largest "
			  "pages at its size), or the proven value.",
		.unit = "seconds",
	};
	struct om_family tr_high = {
		.f = f,
		.name = "tlbprof_comparison_translation_high_seconds",
		.help = "High end of the baseline's address translation part per access (baseline minus its packed "
			  "control), or the proven value.",
		.unit = "seconds",
	};
	struct om_family tr_proven = {
		.f = f,
		.name = "tlbprof_comparison_translation_proven",
		.help = "1 when the translation part is proven against a walk-free phase (low = high), else 0: a range.",
	};
	struct om_family *per_comparison[] = { &speedup, &low, &high, &comparable, &delta, &miss, &tr_low, &tr_high,
					       &tr_proven };
	for (size_t k = 0; k < sizeof(per_comparison) / sizeof(per_comparison[0]); k++) {
		struct om_family *m = per_comparison[k];
		for (size_t i = 0; i < a->n_comparisons; i++) {
			const struct comparison *c = &a->comparisons[i];
			char sz[SIZE_TEXT];
			bool ci = c->interval_known;
			double v = m == &speedup      ? c->speedup
				   : m == &low	      ? (ci ? c->speedup_lo : NAN)
				   : m == &high	      ? (ci ? c->speedup_hi : NAN)
				   : m == &comparable ? (double)c->comparable
				   : m == &delta      ? c->delta_ns / 1e9
				   : m == &miss	      ? c->ns_per_tlb_miss / 1e9
				   : !c->translation.known ? NAN
				   : m == &tr_low     ? c->translation.lo_ns / 1e9
				   : m == &tr_high    ? c->translation.hi_ns / 1e9
						      : (double)c->translation.proven;
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
}

int report_openmetrics_write(const struct report_input *in, FILE *f)
{
	om_run(in, f);
	om_statuses(in, f);
	om_phases(in, f);
	om_counters(in, f);
	om_comparisons(in, f);
	fputs("# EOF\n", f);
	return 0;
}
