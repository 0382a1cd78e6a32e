/* SPDX-License-Identifier: MIT */
/*
 * What every dashboard format (gbench, openmetrics, junit, csv) reads off a
 * report: its workload, which phases were measured and how, their
 * statistics, counters and comparisons, and numbers as text that reads back.
 */
#include <jansson.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"
#include "report/report.h"
#include "measure/workload.h"

/*
 * The workload the report is about: the phases' own ("run" or "command" for
 * tlbprof run, whose configuration keeps the measuring default "chase"); a
 * report without phases names its command.
 */
const char *report_workload_of(const struct report_input *in)
{
	if (in->results->n && in->results->phases[0].spec.workload)
		return in->results->phases[0].spec.workload->name;
	if (in->target || (in->source && json_object_get((const json_t *)in->source, "target")))
		return "run";
	return in->workload ? in->workload->name : "";
}

/* Whether a phase has timed samples (status ok and something measured). */
bool report_phase_measured(const struct phase_result *r)
{
	return r->status == PHASE_OK && r->n_samples > 0;
}

/* Why a phase has no measurement: its reason, or what its status says. */
const char *report_phase_why(const struct phase_result *r)
{
	return *r->reason ? r->reason : r->status == PHASE_OK ? "no samples" : "no reason given";
}

/* The wall time per occurrence of a report_phase_wall_only() phase, in ns. */
struct stats_summary report_phase_wall_stats(const struct phase_result *r)
{
	struct stats_summary st;

	stats_summarize(r->target->wall_ns, r->target->n_wall, &st);
	return st;
}

/* The ns-per-access statistics of phase i: the analysis has them; recomputed if it does not. */
struct stats_summary report_phase_stats(const struct report_input *in, size_t i)
{
	struct stats_summary st;

	if (i < in->analysis->n_phases)
		return in->analysis->phases[i].ns;
	stats_summarize(in->results->phases[i].samples_ns, in->results->phases[i].n_samples, &st);
	return st;
}

/* Timed accesses of a phase over all its samples (pages touched for pagefault; what a run phase declared). */
double report_phase_accesses(const struct phase_result *r)
{
	return r->spec.accesses_total ? (double)r->spec.accesses_total : (double)r->spec.iterations * (double)r->n_samples;
}

/* A tlbprof run phase that declared no accesses: measured, but only as wall time per occurrence. */
bool report_phase_wall_only(const struct phase_result *r)
{
	return r->status == PHASE_OK && !r->n_samples && r->target && r->target->n_wall;
}

/* The comparison whose variant is phase i, or NULL. */
const struct comparison *report_comparison_of(const struct analysis *a, size_t i)
{
	for (size_t k = 0; k < a->n_comparisons; k++)
		if (a->comparisons[k].variant == i)
			return &a->comparisons[k];
	return NULL;
}

/* A counter that produced a value in this phase (ok or multiplexed, and scheduled at all). */
bool report_counter_counted(const struct counter_info *ci, const struct counter_reading *cr)
{
	return counter_counting(ci) && !(cr->running_ns == 0 && cr->enabled_ns);
}

/*
 * The kernel's two clock events count nanoseconds, not occurrences: task-clock
 * (what tlbprof counts as METRIC_TASK_CLOCK) and cpu-clock, which -e may name.
 * A report read back keeps the event as written but not its encoding, so the
 * names libpfm4 and perf give them count too.
 */
bool report_counter_is_time(const struct counter_info *ci)
{
	static const char *const clocks[] = { "task-clock", "cpu-clock", "perf::PERF_COUNT_SW_TASK_CLOCK",
					      "perf::PERF_COUNT_SW_CPU_CLOCK", "perf::task-clock", "perf::cpu-clock" };

	if (ci->metric == METRIC_TASK_CLOCK)
		return true;
	if (ci->encoded && ci->type == PERF_TYPE_SOFTWARE)
		return ci->config == PERF_COUNT_SW_CPU_CLOCK || ci->config == PERF_COUNT_SW_TASK_CLOCK;
	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++)
		if (strcmp(ci->event, clocks[i]) == 0)
			return true;
	return false;
}

/* Share of the enabled time a counter ran: 1 when not multiplexed. */
double report_counter_running(const struct counter_reading *cr)
{
	return cr->enabled_ns ? (double)cr->running_ns / (double)cr->enabled_ns : 1.0;
}

/*
 * A number as text: the shortest of 15 to 17 significant digits that reads
 * back exactly ("47.12", not "47.119999999999997"); never "-0".
 */
const char *report_num_text(double v, char *buf, size_t len)
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
