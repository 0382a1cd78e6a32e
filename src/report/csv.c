/* SPDX-License-Identifier: MIT */
/* The report as CSV (RFC 4180) in the manner of perf stat -x: a row per value of each phase, one header line. */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "report/internal.h"
#include "report/report.h"

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

/*
 * The run id of the first column, so that the rows of reports appended to one
 * file stay apart: FNV-1a (64 bits) over the command line and every phase's
 * name, status and samples (a run phase without accesses: its wall times), as
 * 16 hex digits. A report and its re-analyses share it (the JSON keeps every
 * sample exactly); two runs differ, as their samples do.
 */
struct csv_out {
	FILE *f;
	char run[18];	/* the run id: "r" and 16 hex digits */
};

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

static void csv_run_id(const struct report_input *in, struct csv_out *o)
{
	const struct run_results *rr = in->results;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (int i = 0; i < in->argc; i++)
		h = fnv1a(h, in->argv[i], strlen(in->argv[i]) + 1);
	for (size_t i = 0; i < rr->n; i++) {
		const struct phase_result *r = &rr->phases[i];
		int status = (int)r->status;
		h = fnv1a(h, r->spec.name, strlen(r->spec.name) + 1);
		h = fnv1a(h, &status, sizeof(status));
		if (r->n_samples)
			h = fnv1a(h, r->samples_ns, r->n_samples * sizeof(*r->samples_ns));
		else if (r->target && r->target->n_wall)
			h = fnv1a(h, r->target->wall_ns, r->target->n_wall * sizeof(*r->target->wall_ns));
	}
	/*
	 * A letter first: 16 hex digits alone are all decimal digits once in 1,700 runs (or read like 123e456),
	 * and pandas, R and spreadsheets then take the column for numbers and lose its digits.
	 */
	snprintf(o->run, sizeof(o->run), "r%016" PRIx64, h);
}

/* One row: run, phase, value, unit, metric, running %, note. */
static void csv_row(const struct csv_out *o, const char *phase, const char *value, const char *unit, const char *metric,
		    const char *running, const char *note)
{
	csv_field(o->f, o->run, false);
	csv_field(o->f, phase, false);
	csv_field(o->f, value, false);
	csv_field(o->f, unit, false);
	csv_field(o->f, metric, false);
	csv_field(o->f, running, false);
	csv_field(o->f, note, true);
}

/* A row with a number; one that is not finite (nothing to say) is left out, never written as NaN. */
static void csv_num(const struct csv_out *o, const char *phase, double v, const char *unit, const char *metric,
		    const char *note)
{
	char buf[40];

	if (!isfinite(v))
		return;
	csv_row(o, phase, report_num_text(v, buf, sizeof(buf)), unit, metric, "", note);
}

/*
 * The counters of a phase as perf stat -x prints them: the count, its unit,
 * the event, the share of time counted; with per_access, each rate per
 * access after it.
 */
static void csv_counters(const struct csv_out *o, const struct phase_result *r, bool per_access)
{
	char buf[40], pct[16], key[96];

	for (size_t k = 0; k < r->n_counters; k++) {
		const struct counter_info *ci = &r->counter_info[k];
		const struct counter_reading *cr = &r->counters[k];
		const char *unit = report_counter_is_time(ci) ? "ns" : "";	/* per access too: ns per access */
		if (!report_counter_counted(ci, cr)) {
			csv_row(o, r->spec.name, ci->status == COUNTER_UNSUPPORTED ? "<not supported>" : "<not counted>", unit,
				ci->name, "", ci->reason);
			continue;
		}
		snprintf(pct, sizeof(pct), "%.2f", 100 * report_counter_running(cr));
		csv_row(o, r->spec.name, report_num_text(cr->scaled, buf, sizeof(buf)), unit, ci->name, pct,
			ci->status == COUNTER_MULTIPLEXED ? "multiplexed, scaled" : "");
		if (!per_access)
			continue;
		/* A user's event (-e) by its own name: there may be several. */
		snprintf(key, sizeof(key), "%s_per_access", ci->metric == METRIC_USER ? ci->name : metric_name(ci->metric));
		csv_row(o, r->spec.name, report_num_text(cr->scaled / report_phase_accesses(r), buf, sizeof(buf)), unit, key,
			pct, "");
	}
}

int report_csv_write(const struct report_input *in, FILE *stream)
{
	struct csv_out out = { .f = stream }, *o = &out;

	const struct run_results *rr = in->results;
	const struct analysis *a = in->analysis;
	char buf[40], note[600];

	csv_run_id(in, &out);
	fputs("run,phase,value,unit,metric,running_pct,note\n", stream);
	for (size_t i = 0; i < rr->n; i++) {
		const struct phase_result *r = &rr->phases[i];
		const char *name = r->spec.name;
		if (report_phase_wall_only(r)) {
			/* A run phase that declared no accesses: its wall time per occurrence and its counter totals. */
			const struct stats_summary w = report_phase_wall_stats(r);
			snprintf(note, sizeof(note), "median of %zu occurrence%s", r->target->n_wall,
				 r->target->n_wall == 1 ? "" : "s");
			csv_num(o, name, w.median, "ns", "wall_ns", note);
			csv_num(o, name, w.min, "ns", "wall_ns_min", "");
			csv_num(o, name, w.max, "ns", "wall_ns_max", "");
			csv_num(o, name, (double)r->target->n_wall, "", "occurrences", "");
			csv_counters(o, r, false);
			continue;
		}
		if (!report_phase_measured(r)) {
			snprintf(note, sizeof(note), "%s: %s", phase_status_name(r->status), report_phase_why(r));
			csv_row(o, name, "<not counted>", "ns", "ns_per_access", "", note);
			continue;
		}
		const struct stats_summary st = report_phase_stats(in, i);
		snprintf(note, sizeof(note), "median of %zu samples%s", r->n_samples,
			 r->spec.fault_case != FAULT_NONE ? ", per page touched" : "");
		csv_num(o, name, st.median, "ns", "ns_per_access", note);
		csv_num(o, name, st.min, "ns", "ns_per_access_min", "");
		csv_num(o, name, st.max, "ns", "ns_per_access_max", "");
		csv_num(o, name, st.rel_spread, "ratio", "rel_spread", "(max - min) / median");
		if (r->cycles_per_ns > 0) {
			snprintf(note, sizeof(note), "calibrated core clock %s GHz",
				 report_num_text(r->cycles_per_ns, buf, sizeof(buf)));
			csv_num(o, name, st.median * r->cycles_per_ns, "cycles", "cycles_per_access", note);
		}
		if (i < a->n_phases && a->phases[i].has_control) {
			snprintf(note, sizeof(note), "minus the control %s", rr->phases[a->phases[i].control].spec.name);
			csv_num(o, name, a->phases[i].translation_ns, "ns", "translation_ns", note);
		}
		csv_num(o, name, report_phase_accesses(r), "", "accesses", "timed, over all samples");
		csv_counters(o, r, report_phase_accesses(r) > 0);
		const struct comparison *c = report_comparison_of(a, i);
		if (c) {
			snprintf(note, sizeof(note), "vs %s (%s)", rr->phases[c->baseline].spec.name, c->method ? c->method : "");
			csv_num(o, name, c->speedup, "x", "speedup", note);
			if (c->interval_known && isfinite(c->speedup_lo) && isfinite(c->speedup_hi)) {
				csv_num(o, name, c->speedup_lo, "x", "speedup_lo", "95 % interval, hierarchical bootstrap");
				csv_num(o, name, c->speedup_hi, "x", "speedup_hi", "95 % interval, hierarchical bootstrap");
			}
			csv_num(o, name, c->comparable, "", "comparable", *c->doubt ? c->doubt : "");
			if (c->translation.known) {
				const struct translation_share *t = &c->translation;
				csv_num(o, name, t->lo_ns, "ns", "translation_lo_ns", t->lo_basis);
				if (isfinite(t->hi_ns))
					csv_num(o, name, t->hi_ns, "ns", "translation_hi_ns", t->hi_basis);
				csv_num(o, name, t->proven, "", "translation_proven", t->evidence);
			}
			csv_num(o, name, c->delta_ns, "ns", "delta_ns", note);
			if (c->ns_per_tlb_miss > 0)
				csv_num(o, name, c->ns_per_tlb_miss, "ns", "ns_per_tlb_miss", note);
		}
	}
	return 0;
}
