/* SPDX-License-Identifier: MIT */
/* The output of tlbprof compare: the table for people and the tlbprof.compare/1 JSON (compare_md.c: markdown). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/internal.h"
#include "version.h"

/* The counters the table shows (the JSON has every counter that counted). */
static const enum metric key_metrics[] = {
	METRIC_DTLB_LOAD_MISSES, METRIC_WALK_ACTIVE, METRIC_LLC_LOAD_MISSES, METRIC_PAGE_FAULTS, METRIC_MAJOR_FAULTS,
};

static const char *tool_version(const struct report_doc *doc)
{
	json_t *v = json_object_get(json_object_get((json_t *)doc->source, "tool"), "version");

	return json_is_string(v) ? json_string_value(v) : NULL;
}

const char *const report_compare_format_names[] = { [REPORT_COMPARE_TEXT] = "text",
						   [REPORT_COMPARE_MARKDOWN] = "markdown", NULL };

/* How many reports a side has (1 for compare BASE NEW). */
static size_t side_runs(const struct report_compare_input *in, bool base)
{
	return !in->n_base ? 1 : base ? in->n_base : in->n_new;
}

/* Report run of a side, its path and its analysis. */
static const struct report_doc *side_doc(const struct report_compare_input *in, bool base, size_t run)
{
	return !in->n_base ? (base ? in->base : in->new) : base ? in->base_docs[run] : in->new_docs[run];
}

static const char *side_path(const struct report_compare_input *in, bool base, size_t run)
{
	return !in->n_base ? (base ? in->base_path : in->new_path) : base ? in->base_paths[run] : in->new_paths[run];
}

static const struct analysis *side_analysis(const struct report_compare_input *in, bool base, size_t run)
{
	return !in->n_base ? (base ? in->base_analysis : in->new_analysis)
			   : base ? in->base_analyses[run] : in->new_analyses[run];
}

/* A compared phase on one side: the measurement its figures come from, NULL on the side that lacks it. */
static const struct phase_result *side_phase(const struct report_compare_input *in, const struct compare_phase *cp,
					     bool base)
{
	size_t idx = base ? cp->base : cp->new;

	return idx == SIZE_MAX ? NULL : &side_doc(in, base, base ? cp->base_run : cp->new_run)->results.phases[idx];
}

/* ---- JSON ---- */

/* The reports of a side that a mask names (bit r: report r), as their paths. */
static json_t *masked_paths(const struct report_compare_input *in, bool base, uint64_t mask)
{
	json_t *arr = json_array();

	for (size_t r = 0; r < side_runs(in, base) && r < 64; r++)
		if (mask >> r & 1)
			json_array_append_new(arr, report_json_text(side_path(in, base, r)));
	return arr;
}

/* Which reports of each side lack a phase or comparison. */
static json_t *missing_json(const struct report_compare_input *in, uint64_t base, uint64_t new)
{
	return json_pack("{s:o, s:o}", "base", masked_paths(in, true, base), "new", masked_paths(in, false, new));
}

static json_t *samples_json(const struct compare_samples *s, bool higher_is_better, bool between_runs)
{
	json_t *o = json_object();
	/* Within runs (one report a side) each side with samples is one run. */
	size_t runs_base = between_runs ? s->runs_base : s->n_base > 0, runs_new = between_runs ? s->runs_new : s->n_new > 0;

	json_object_set_new(o, "base", report_json_num(s->base));
	json_object_set_new(o, "new", report_json_num(s->new));
	json_object_set_new(o, "n_base", json_integer((json_int_t)s->n_base));
	json_object_set_new(o, "n_new", json_integer((json_int_t)s->n_new));
	json_object_set_new(o, "change_pct", report_json_num(report_pct(s->change)));
	json_object_set_new(o, "interval_pct", isfinite(s->ratio_lo) && isfinite(s->ratio_hi)
						       ? json_pack("[o, o]", report_json_num(report_pct(s->ratio_lo - 1)), report_json_num(report_pct(s->ratio_hi - 1)))
						       : json_null());
	json_object_set_new(o, "p_value", report_json_num(s->p));
	json_object_set_new(o, "noise_floor_pct", report_json_num(report_pct(s->noise_floor)));
	json_object_set_new(o, "clusters", json_pack("{s:I, s:I}", "base", (json_int_t)s->clusters_base, "new",
						     (json_int_t)s->clusters_new));
	json_object_set_new(o, "exact", json_boolean(s->exact));
	json_object_set_new(o, "test", s->test ? json_string(s->test) : json_null());
	json_object_set_new(o, "runs", json_pack("{s:I, s:I}", "base", (json_int_t)runs_base, "new",
						 (json_int_t)runs_new));
	json_object_set_new(o, "run_spread_pct", json_pack("{s:o, s:o}", "base", report_json_num(report_pct(s->run_spread_base)), "new",
							   report_json_num(report_pct(s->run_spread_new))));
	json_object_set_new(o, "t", report_json_num(s->t));
	json_object_set_new(o, "df", report_json_num(s->df));
	json_object_set_new(o, "verdict", json_string(compare_verdict_name(s->verdict)));
	json_object_set_new(o, "label", json_string(compare_verdict_label(s->verdict, higher_is_better)));
	return o;
}

static json_t *phase_status_json(const struct phase_result *r)
{
	return r ? json_string(phase_status_name(r->status)) : json_null();
}

static json_t *phases_json(const struct report_compare_input *in)
{
	const struct compare_result *c = in->cmp;
	json_t *arr = json_array();

	for (size_t i = 0; i < c->n_phases; i++) {
		const struct compare_phase *cp = &c->phases[i];
		json_t *o = json_object(), *rates = json_array();
		json_object_set_new(o, "name", report_json_text(cp->name));
		json_object_set_new(o, "match", json_string(compare_match_name(cp->match)));
		json_object_set_new(o, "status", json_pack("{s:o, s:o}", "base", phase_status_json(side_phase(in, cp, true)),
							   "new", phase_status_json(side_phase(in, cp, false))));
		json_object_set_new(o, "missing", missing_json(in, cp->missing_mask_base, cp->missing_mask_new));
		json_object_set_new(o, "metric", json_string(cp->faults ? "ns_per_page"
							     : cp->wall ? "wall_ns_per_occurrence"
									: "ns_per_access"));
		json_object_set_new(o, "ns", samples_json(&cp->ns, false, c->between_runs));
		json_object_set_new(o, "ns_per_fault",
				    cp->faults ? samples_json(&cp->ns_per_fault, false, c->between_runs) : json_null());
		json_object_set_new(o, "control", json_boolean(cp->control));
		if (cp->control_name) {
			json_t *vc = samples_json(&cp->vs_control, false, c->between_runs);
			json_object_set_new(vc, "control", report_json_text(cp->control_name));
			json_object_set_new(o, "against_control", vc);
		} else {
			json_object_set_new(o, "against_control", json_null());
		}
		json_t *params = json_array();
		for (size_t k = 0; k < cp->n_params; k++)
			json_array_append_new(params, json_pack("{s:s, s:o, s:o}", "param", cp->params[k].param, "base",
								report_json_text(cp->params[k].base), "new",
								report_json_text(cp->params[k].new)));
		json_object_set_new(o, "parameters_differ", params);
		for (size_t k = 0; k < cp->n_rates; k++) {
			const struct compare_rate *r = &cp->rates[k];
			json_array_append_new(rates, json_pack("{s:s, s:o, s:o, s:o}", "metric", metric_name(r->metric), "base",
							       report_json_num(r->base), "new", report_json_num(r->new), "change_pct",
							       report_json_num(report_pct(r->change))));
		}
		json_object_set_new(o, "counters_per_access", rates);
		json_object_set_new(o, "verdict", json_string(compare_verdict_name(cp->verdict)));
		json_object_set_new(o, "label", json_string(compare_verdict_label(cp->verdict, false)));
		json_object_set_new(o, "checked_against_control", json_boolean(cp->against_control));
		json_object_set_new(o, "control_inconclusive", json_boolean(cp->control_inconclusive));
		json_object_set_new(o, "regression", json_boolean(cp->verdict == COMPARE_REGRESSION));
		json_array_append_new(arr, o);
	}
	return arr;
}

/*
 * One report's own 95 % interval of its speedup, whether it was comparable,
 * and why not: null for a side without the pair.
 */
static json_t *side_interval_json(const struct comparison *c)
{
	if (!c)
		return json_null();
	bool ci = c->interval_known && isfinite(c->speedup_lo) && isfinite(c->speedup_hi);
	return json_pack("{s:o, s:o, s:b, s:o}", "lo", ci ? report_json_num(c->speedup_lo) : json_null(), "hi",
			 ci ? report_json_num(c->speedup_hi) : json_null(), "comparable", c->comparable, "doubt",
			 *c->doubt ? report_json_text(c->doubt) : json_null());
}

static json_t *pairs_json(const struct report_compare_input *in)
{
	const struct compare_result *c = in->cmp;
	json_t *arr = json_array();

	for (size_t i = 0; i < c->n_pairs; i++) {
		const struct compare_pair *cp = &c->pairs[i];
		double tlb_change = cp->base_ns_per_tlb_miss > 0 ? cp->new_ns_per_tlb_miss / cp->base_ns_per_tlb_miss - 1 : NAN;
		json_t *o = json_object();
		json_object_set_new(o, "baseline", report_json_text(cp->baseline));
		json_object_set_new(o, "variant", report_json_text(cp->variant));
		json_object_set_new(o, "match", json_string(compare_match_name(cp->match)));
		json_object_set_new(o, "missing", missing_json(in, cp->missing_mask_base, cp->missing_mask_new));
		json_object_set_new(o, "speedup", samples_json(&cp->speedup, true, c->between_runs));
		json_object_set_new(o, "speedup_interval", json_pack("{s:o, s:o}", "base", side_interval_json(cp->base_cmp),
								     "new", side_interval_json(cp->new_cmp)));
		json_object_set_new(o, "delta_ns", json_pack("{s:o, s:o}", "base", report_json_num(cp->base_delta_ns), "new",
							     report_json_num(cp->new_delta_ns)));
		json_object_set_new(o, "ns_per_tlb_miss", json_pack("{s:o, s:o, s:o}", "base", report_json_num(cp->base_ns_per_tlb_miss),
								    "new", report_json_num(cp->new_ns_per_tlb_miss), "change_pct",
								    report_json_num(report_pct(tlb_change))));
		json_object_set_new(o, "method", json_pack("{s:o, s:o}", "base",
							   cp->base_method ? report_json_text(cp->base_method) : json_null(),
							   "new", cp->new_method ? report_json_text(cp->new_method) : json_null()));
		json_object_set_new(o, "regression", json_boolean(cp->speedup.verdict == COMPARE_REGRESSION));
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *checks_json(const struct compare_result *c)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < c->n_checks; i++) {
		const struct compare_check *cc = &c->checks[i];
		bool hb = cc->match != COMPARE_ADDED, hn = cc->match != COMPARE_REMOVED;
		json_array_append_new(
			arr, json_pack("{s:s, s:s, s:o, s:o, s:b, s:b, s:o}", "id", cc->id, "match",
				       compare_match_name(cc->match), "base",
				       hb ? json_string(check_status_name(cc->base)) : json_null(), "new",
				       hn ? json_string(check_status_name(cc->new)) : json_null(), "changed",
				       hb && hn && cc->base != cc->new, "worse", cc->worse, "message",
				       hn && cc->new_message ? report_json_text(cc->new_message) : json_null()));
	}
	return arr;
}

static json_t *run_json(const char *path, const struct report_doc *doc, const struct analysis *a)
{
	const char *v = tool_version(doc);

	return json_pack("{s:o, s:o, s:s, s:I, s:b}", "path", report_json_text(path), "tool_version",
			 v ? report_json_text(v) : json_null(),
			 "verdict", verdict_name(a->verdict), "phases", (json_int_t)doc->results.n, "interrupted",
			 doc->results.interrupted);
}

/* A side: its first report's path, version and phases, the worst verdict, any interrupted, and every report. */
static json_t *side_json(const struct report_compare_input *in, bool base)
{
	json_t *o = run_json(side_path(in, base, 0), side_doc(in, base, 0), side_analysis(in, base, 0));
	json_t *runs = json_array();
	enum verdict worst = VERDICT_OK;
	bool interrupted = false;

	for (size_t r = 0; r < side_runs(in, base); r++) {
		const struct analysis *a = side_analysis(in, base, r);
		json_array_append_new(runs, run_json(side_path(in, base, r), side_doc(in, base, r), a));
		worst = a->verdict > worst ? a->verdict : worst;
		interrupted |= side_doc(in, base, r)->results.interrupted;
	}
	json_object_set_new(o, "verdict", json_string(verdict_name(worst)));
	json_object_set_new(o, "interrupted", json_boolean(interrupted));
	json_object_set_new(o, "runs", runs);
	return o;
}

/* "nothing_judged", "regression", "checks_worse" or "ok": what decided the exit status. */
static const char *overall(const struct report_compare_input *in)
{
	if (!compare_judged_any(in->cmp))
		return "nothing_judged";
	if (in->cmp->regressions)
		return "regression";
	return in->fails ? "checks_worse" : "ok";
}

static json_t *compare_json(const struct report_compare_input *in)
{
	const struct compare_result *c = in->cmp;
	json_t *root = json_object(), *cmd = json_array(), *env = json_array();

	json_object_set_new(root, "schema", json_string(REPORT_COMPARE_SCHEMA));
	json_object_set_new(root, "tool", json_pack("{s:s, s:s}", "name", "tlbprof", "version", TLBPROF_VERSION));
	for (int i = 0; i < in->argc; i++)
		json_array_append_new(cmd, report_json_text(in->argv[i]));
	json_object_set_new(root, "command", cmd);
	json_object_set_new(root, "base", side_json(in, true));
	json_object_set_new(root, "new", side_json(in, false));
	json_t *method = json_pack("{s:f, s:f, s:i, s:s, s:s, s:s, s:s, s:s, s:i, s:I}", "threshold_pct",
				   report_pct(c->threshold), "alpha", COMPARE_ALPHA, "min_samples", COMPARE_MIN_SAMPLES, "test",
				   "mann_whitney_u", "interval", "hierarchical_bootstrap", "clusters",
				   "allocations; processes for page faults in several", "noise_floor",
				   "spread_between_clusters", "speedup_test", "bootstrap", "bootstrap_resamples",
				   COMPARE_BOOTSTRAP_RESAMPLES, "bootstrap_seed", (json_int_t)COMPARE_BOOTSTRAP_SEED);
	json_object_set_new(method, "against_control", json_true());
	json_object_set_new(method, "between_runs", json_boolean(c->between_runs));
	json_object_set_new(method, "runs_test", c->between_runs ? json_string("welch_t_log_run_values") : json_null());
	json_object_set_new(method, "min_runs", json_integer(COMPARE_MIN_RUNS));
	json_object_set_new(method, "speedup_counts", json_string("only_with_a_slower_phase"));
	json_object_set_new(root, "method", method);
	for (size_t i = 0; i < c->n_env; i++)
		json_array_append_new(env, json_pack("{s:s, s:o, s:o}", "field", c->env[i].field, "base",
						     report_json_text(c->env[i].base), "new", report_json_text(c->env[i].new)));
	json_object_set_new(root, "environment_differences", env);
	json_object_set_new(root, "phases", phases_json(in));
	json_object_set_new(root, "comparisons", pairs_json(in));
	json_object_set_new(root, "checks", checks_json(c));
	json_object_set_new(root, "judged",
			    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "phases", (json_int_t)c->phases_judged,
				      "phases_total", (json_int_t)c->n_phases, "phases_insufficient",
				      (json_int_t)c->phases_insufficient, "comparisons", (json_int_t)c->pairs_judged,
				      "comparisons_total", (json_int_t)c->n_pairs, "comparisons_insufficient",
				      (json_int_t)c->pairs_insufficient));
	json_object_set_new(root, "interrupted", json_pack("{s:b, s:b}", "base", c->interrupted_base, "new",
							   c->interrupted_new));
	json_object_set_new(root, "phases_parameters_differ", json_integer((json_int_t)c->phases_params_differ));
	json_object_set_new(root, "regressions", json_integer((json_int_t)c->regressions));
	json_object_set_new(root, "improvements", json_integer((json_int_t)c->improvements));
	json_object_set_new(root, "machine_shifts", json_integer((json_int_t)c->machine_shifts));
	json_object_set_new(root, "speedups_uncounted", json_integer((json_int_t)c->speedups_uncounted));
	json_object_set_new(root, "checks_worse", json_integer((json_int_t)c->checks_worse));
	json_object_set_new(root, "checks_now_failing", json_integer((json_int_t)c->checks_now_failing));
	json_object_set_new(root, "too_few_runs", json_integer((json_int_t)c->too_few_runs));
	json_object_set_new(root, "missing_from_runs", json_integer((json_int_t)c->missing_from_runs));
	json_object_set_new(root, "fail_on", json_string(fail_on_name(in->fail_on)));
	json_object_set_new(root, "verdict", json_string(overall(in)));
	json_object_set_new(root, "exit_status", json_integer(in->status));
	return root;
}

int report_compare_write_json(const struct report_compare_input *in, const char *path, char *err, size_t err_len)
{
	json_t *root = compare_json(in);
	int rc;

	if (!root) {
		snprintf(err, err_len, "out of memory building the comparison");
		return -ENOMEM;
	}
	rc = report_json_dump(root, path, err, err_len);
	json_decref(root);
	return rc;
}

/* ---- text ---- */

/* A median for the table: "-" when the side has none; 4 significant digits from 10 000 up, so it fits. */
static const char *fmt_value(double v, const char *suffix, char *buf, size_t len)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else if (fabs(v) >= 1e4)
		snprintf(buf, len, "%.4g%s", v, suffix);
	else
		snprintf(buf, len, "%.2f%s", v, suffix);
	return buf;
}

static const char *fmt_report_pct(double fraction, char *buf, size_t len)
{
	if (!isfinite(fraction))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%+.1f%%", report_pct(fraction));
	return buf;
}

static const char *fmt_interval(const struct compare_samples *s, char *buf, size_t len)
{
	if (!isfinite(s->ratio_lo) || !isfinite(s->ratio_hi))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "[%+.1f%%, %+.1f%%]", report_pct(s->ratio_lo - 1), report_pct(s->ratio_hi - 1));
	return buf;
}

static const char *fmt_p(const struct compare_samples *s, char *buf, size_t len)
{
	if (isnan(s->p))
		snprintf(buf, len, "-");
	else if (s->p < 0.001)
		snprintf(buf, len, "<0.001");
	else
		snprintf(buf, len, "%.3f", s->p);
	return buf;
}

const char *report_compare_verdict_text(const struct compare_samples *s, bool higher_is_better, char *buf, size_t len)
{
	if (s->verdict != COMPARE_TOO_FEW_RUNS)
		snprintf(buf, len, "%s", compare_verdict_label(s->verdict, higher_is_better));
	else if (s->runs_base < COMPARE_MIN_RUNS || s->runs_new < COMPARE_MIN_RUNS)
		snprintf(buf, len, "could not tell, because %zu %s run%s measured it (%d a side needed)",
			 s->runs_base < COMPARE_MIN_RUNS ? s->runs_base : s->runs_new,
			 s->runs_base < COMPARE_MIN_RUNS ? "base" : "new",
			 (s->runs_base < COMPARE_MIN_RUNS ? s->runs_base : s->runs_new) == 1 ? "" : "s", COMPARE_MIN_RUNS);
	else
		snprintf(buf, len, "could not tell, because the runs of each side agree exactly (copies of one run?)");
	return buf;
}

const char *report_compare_phase_verdict(const struct report_compare_input *in, const struct compare_phase *cp,
					 char *buf, size_t len)
{
	const struct phase_result *b = side_phase(in, cp, true), *n = side_phase(in, cp, false);

	if (cp->verdict == COMPARE_TOO_FEW_RUNS)
		report_compare_verdict_text(&cp->ns, false, buf, len);
	else if (cp->match == COMPARE_REMOVED)
		snprintf(buf, len, "only in base");
	else if (cp->match == COMPARE_ADDED)
		snprintf(buf, len, "only in new");
	else if (b->status != PHASE_OK || n->status != PHASE_OK)
		snprintf(buf, len, "not comparable: %s in base, %s in new", phase_status_name(b->status),
			 phase_status_name(n->status));
	else if (cp->ns.verdict == COMPARE_NOT_COMPARABLE)
		snprintf(buf, len, "not comparable: measured differently");
	else if (cp->control && (cp->verdict == COMPARE_MACHINE_SLOWER || cp->verdict == COMPARE_MACHINE_FASTER))
		snprintf(buf, len, "%s (the control: the machine)",
			 cp->verdict == COMPARE_MACHINE_SLOWER ? "slower" : "faster");
	else if (cp->control_inconclusive)
		snprintf(buf, len, "%s; its control noisy, agrees", compare_verdict_label(cp->verdict, false));
	else if (cp->control_name && !cp->against_control && cp->vs_control.verdict == COMPARE_REGRESSION)
		snprintf(buf, len, "%s; slower against its control only", compare_verdict_label(cp->verdict, false));
	else if (cp->against_control && (cp->verdict == COMPARE_REGRESSION || cp->verdict == COMPARE_BETTER))
		snprintf(buf, len, "%s, also against its control", compare_verdict_label(cp->verdict, false));
	else
		snprintf(buf, len, "%s", compare_verdict_label(cp->verdict, false));
	return buf;
}

/*
 * The noise floor column: the larger spread between a side's own
 * allocations or processes; between runs, the larger spread between a
 * side's runs.
 */
static const char *fmt_floor(const struct compare_samples *s, bool runs, char *buf, size_t len)
{
	double spread = isnan(s->run_spread_base) || s->run_spread_new > s->run_spread_base ? s->run_spread_new
											      : s->run_spread_base;

	if (runs)
		snprintf(buf, len, isfinite(spread) ? "%.1f%%" : "-", report_pct(spread));
	else if (!isfinite(s->noise_floor) || (s->clusters_base < 2 && s->clusters_new < 2))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", report_pct(s->noise_floor));
	return buf;
}

#define ROW_FORMAT "%-*s %-9s %10s %10s %8s  %-18s %7s %6s %9s  %s\n"

/* The colour of a verdict on a terminal (terminal.c): a regression red, the machine's move yellow, a gain green. */
static const char *verdict_tone(enum compare_verdict v)
{
	switch (v) {
	case COMPARE_REGRESSION: return "fail";
	case COMPARE_MACHINE_SLOWER:
	case COMPARE_MACHINE_FASTER: return "warn";
	case COMPARE_BETTER: return "pass";
	default: return NULL;
	}
}

/*
 * One row, its verdict in the colour of tone's verdict on a terminal; runs:
 * judged between runs (the count column is runs, the floor column their spread).
 */
static void print_row(FILE *f, int w, const char *name, const char *metric, const struct compare_samples *s,
		      const char *suffix, const char *verdict, enum compare_verdict tone, bool runs)
{
	char b[32], n[32], ch[24], iv[48], p[16], fl[16], cnt[48], coloured[224];
	struct term_style ts;
	const char *t = verdict_tone(tone);

	term_style_for(f, &ts);
	snprintf(coloured, sizeof(coloured), "%s%s%s", term_start(&ts, t), verdict, term_end(&ts, t));
	snprintf(cnt, sizeof(cnt), "%zu/%zu", runs ? s->runs_base : s->n_base, runs ? s->runs_new : s->n_new);
	fprintf(f, ROW_FORMAT, w, name, metric, fmt_value(s->base, suffix, b, sizeof(b)),
		fmt_value(s->new, suffix, n, sizeof(n)), fmt_report_pct(s->change, ch, sizeof(ch)),
		fmt_interval(s, iv, sizeof(iv)), fmt_p(s, p, sizeof(p)), fmt_floor(s, runs, fl, sizeof(fl)), cnt, coloured);
}

static bool key_metric(enum metric m)
{
	for (size_t i = 0; i < sizeof(key_metrics) / sizeof(key_metrics[0]); i++)
		if (key_metrics[i] == m)
			return true;
	return false;
}

/* The warnings before the tables: environments, interrupted runs, phases measured with other parameters. */
static void print_warnings(const struct report_compare_input *in, FILE *f)
{
	const struct compare_result *c = in->cmp;

	if (c->n_env) {
		fprintf(f, "\nwarning: the environments differ, so a change may be the machine's, not the code's:\n");
		for (size_t i = 0; i < c->n_env; i++)
			fprintf(f, "  %-18s '%s' -> '%s'\n", c->env[i].field, c->env[i].base, c->env[i].new);
	}
	if (c->interrupted_base || c->interrupted_new)
		fprintf(f, "\nwarning: the %s run%s interrupted: %s fewer phases than planned, and its last phase may "
			   "have fewer samples\n",
			c->interrupted_base && c->interrupted_new ? "base and the new" : c->interrupted_base ? "base" : "new",
			c->interrupted_base && c->interrupted_new ? "s were" : " was",
			c->interrupted_base && c->interrupted_new ? "they may hold" : "it may hold");
	if (c->phases_params_differ) {
		fprintf(f, "\nwarning: %zu phase%s measured with other parameters, so a change may be the parameters':\n",
			c->phases_params_differ, c->phases_params_differ == 1 ? " was" : "s were");
		for (size_t i = 0; i < c->n_phases; i++)
			for (size_t k = 0; k < c->phases[i].n_params; k++)
				fprintf(f, "  %s: %-18s '%s' -> '%s'\n", c->phases[i].name, c->phases[i].params[k].param,
					c->phases[i].params[k].base, c->phases[i].params[k].new);
	}
}

static void print_phases(const struct report_compare_input *in, FILE *f, int w)
{
	const struct compare_result *c = in->cmp;
	bool wall = false, control = false, runs = c->between_runs;
	char buf[160];

	for (size_t i = 0; i < c->n_phases; i++)
		wall |= c->phases[i].wall;
	fprintf(f, "\n" ROW_FORMAT, w, "phase", "metric", "base", "new", "change", "interval", "p", runs ? "spread" : "floor",
		runs ? "runs" : "samples", "verdict");
	for (size_t i = 0; i < c->n_phases; i++) {
		const struct compare_phase *cp = &c->phases[i];
		print_row(f, w, cp->name, cp->faults ? "ns/page" : cp->wall ? "ns/occur" : "ns/access", &cp->ns, "",
			  report_compare_phase_verdict(in, cp, buf, sizeof(buf)), cp->verdict, runs);
		if (cp->faults && cp->match == COMPARE_MATCHED && cp->ns_per_fault.n_base && cp->ns_per_fault.n_new)
			print_row(f, w, "", "ns/fault", &cp->ns_per_fault, "",
				  report_compare_verdict_text(&cp->ns_per_fault, false, buf, sizeof(buf)), cp->ns_per_fault.verdict,
				  runs);
		if (cp->control_name) {
			print_row(f, w, "", "/control", &cp->vs_control, "x",
				  report_compare_verdict_text(&cp->vs_control, false, buf, sizeof(buf)), cp->vs_control.verdict,
				  runs);
			control = true;
		}
	}
	if (runs)
		term_note(f, "(between runs, each run one observation: base and new are the geometric means of the runs' "
			   "medians%s; interval: the %.0f%% interval of the new/base ratio from Welch's t-test on the "
			   "logarithms of the runs' medians, whose p it shows; spread: the larger (max - min) / median of "
			   "one side's runs; runs: how many runs of each side measured it; with fewer than %d a side, compare "
			   "could not tell)\n",
			wall ? ", ns/occur: wall time per occurrence of a phase that declared no accesses" : "",
			report_pct(1 - COMPARE_ALPHA), COMPARE_MIN_RUNS);
	else
		term_note(f, "(base and new: medians of the samples%s; interval: of the new/base ratio of medians, hierarchical "
			   "bootstrap over allocations (processes for page faults) and their samples; floor: the larger spread "
			   "between one run's own allocations or processes, which a change must exceed; fewer than %d samples on "
			   "a side are not judged)\n",
			wall ? ", ns/occur: wall time per occurrence of a phase that declared no accesses" : "",
			COMPARE_MIN_SAMPLES);
	if (control)
		term_note(f, "(/control: the phase's median over its packed control's, which ran next to it: what moves "
			   "both is the machine; a phase is a regression only when it is slower beyond noise and threshold "
			   "both by itself and against its control)\n");
}

/* "1.60-1.70", "not comparable", "no interval", "" for a side without the pair. */
static const char *side_interval_text(const struct comparison *c, char *buf, size_t cap)
{
	if (!c)
		snprintf(buf, cap, "%s", "");
	else if (!c->comparable)
		snprintf(buf, cap, "not comparable");
	else if (!c->interval_known || !isfinite(c->speedup_lo) || !isfinite(c->speedup_hi))
		snprintf(buf, cap, "no interval");
	else
		snprintf(buf, cap, "%.2f-%.2f", c->speedup_lo, c->speedup_hi);
	return buf;
}

static void print_pairs(const struct compare_result *c, FILE *f)
{
	int pw = 10;
	char label[2][200];

	if (!c->n_pairs)
		return;
	for (size_t i = 0; i < c->n_pairs; i++) {
		snprintf(label[0], sizeof(label[0]), "%s -> %s", c->pairs[i].baseline, c->pairs[i].variant);
		if ((int)strlen(label[0]) > pw)
			pw = (int)strlen(label[0]);
	}
	fprintf(f, "\n" ROW_FORMAT, pw, "page sizes", "metric", "base", "new", "change", "interval", "p",
		c->between_runs ? "spread" : "floor", c->between_runs ? "runs" : "samples", "verdict");
	for (size_t i = 0; i < c->n_pairs; i++) {
		const struct compare_pair *cp = &c->pairs[i];
		snprintf(label[0], sizeof(label[0]), "%s -> %s", cp->baseline, cp->variant);
		if (cp->match == COMPARE_MATCHED)
			report_compare_verdict_text(&cp->speedup, true, label[1], sizeof(label[1]));
		else
			snprintf(label[1], sizeof(label[1]), "%s", cp->match == COMPARE_ADDED ? "only in new" : "only in base");
		print_row(f, pw, label[0], "speedup", &cp->speedup, "x", label[1],
			  cp->match == COMPARE_MATCHED ? cp->speedup.verdict : COMPARE_NOT_COMPARABLE, c->between_runs);
		if (cp->base_cmp || cp->new_cmp) {
			char b[40], n[40];
			fprintf(f, "%-*s %-9s %10s %10s\n", pw, "", "95% CI", side_interval_text(cp->base_cmp, b, sizeof(b)),
				side_interval_text(cp->new_cmp, n, sizeof(n)));
		}
		if (isfinite(cp->base_ns_per_tlb_miss) || isfinite(cp->new_ns_per_tlb_miss)) {
			char b[32], n[32], ch[24];
			double change =
				cp->base_ns_per_tlb_miss > 0 ? cp->new_ns_per_tlb_miss / cp->base_ns_per_tlb_miss - 1 : NAN;
			fprintf(f, "%-*s %-9s %10s %10s %8s\n", pw, "", "ns/miss",
				fmt_value(cp->base_ns_per_tlb_miss, "", b, sizeof(b)),
				fmt_value(cp->new_ns_per_tlb_miss, "", n, sizeof(n)), fmt_report_pct(change, ch, sizeof(ch)));
		}
	}
	term_note(f, "(speedup: baseline median / variant median, with each report's own 95%% interval; a smaller speedup "
		   "is worse, and a regression only when "
		   "its baseline or variant phase is itself slower beyond noise; ns/miss: the delta per avoided dTLB "
		   "miss, where dTLB misses were counted)\n");
}

static void print_rates(const struct compare_result *c, FILE *f, int w)
{
	bool header = false;

	for (size_t i = 0; i < c->n_phases; i++) {
		const struct compare_phase *cp = &c->phases[i];
		for (size_t k = 0; k < cp->n_rates; k++) {
			const struct compare_rate *r = &cp->rates[k];
			char b[32], n[32], ch[24];
			/* Rows that say nothing (no value, or zero on both sides) stay in the JSON only. */
			if (!key_metric(r->metric) || (!(isfinite(r->base) && r->base != 0) && !(isfinite(r->new) && r->new != 0)))
				continue;
			if (!header) {
				fprintf(f, "\n%-*s %-18s %12s %12s %8s\n", w, "counters", "per access", "base", "new", "change");
				header = true;
			}
			snprintf(b, sizeof(b), isfinite(r->base) ? "%.4g" : "-", r->base);
			snprintf(n, sizeof(n), isfinite(r->new) ? "%.4g" : "-", r->new);
			fprintf(f, "%-*s %-18s %12s %12s %8s\n", w, cp->name, metric_name(r->metric), b, n,
				fmt_report_pct(r->change, ch, sizeof(ch)));
		}
	}
	if (header)
		term_note(f, "(totals over the timed samples, so no significance; page faults are per page in page-fault "
			   "phases; every counter is in the JSON)\n");
}

/* Between runs: each side's reports, their verdicts and versions, one line a side. */
static void print_sides(const struct report_compare_input *in, FILE *f)
{
	for (int side = 0; side < 2; side++) {
		bool base = side == 0;
		fprintf(f, "%s: %zu run%s:", base ? "base" : "new", side_runs(in, base), report_plural(side_runs(in, base)));
		for (size_t r = 0; r < side_runs(in, base); r++) {
			const char *v = tool_version(side_doc(in, base, r));
			fprintf(f, "%s %s (%zu phase%s, verdict %s, tlbprof %s)", r ? "," : "", side_path(in, base, r),
				side_doc(in, base, r)->results.n, report_plural(side_doc(in, base, r)->results.n),
				verdict_name(side_analysis(in, base, r)->verdict), v ? v : "?");
		}
		fputc('\n', f);
	}
}

/* Between runs: the phases and comparisons that some report of a side lacks, and which reports. */
static void print_missing(const struct report_compare_input *in, FILE *f)
{
	const struct compare_result *c = in->cmp;

	if (!c->missing_from_runs)
		return;
	fprintf(f, "\nwarning: %zu phase%s or comparison%s missing from some runs (judged on the runs that hold %s):\n",
		c->missing_from_runs, report_plural(c->missing_from_runs), c->missing_from_runs == 1 ? " is" : "s are",
		c->missing_from_runs == 1 ? "it" : "them");
	for (size_t i = 0; i < c->n_phases + c->n_pairs; i++) {
		bool phase = i < c->n_phases;
		const struct compare_phase *cp = phase ? &c->phases[i] : NULL;
		const struct compare_pair *pp = phase ? NULL : &c->pairs[i - c->n_phases];
		enum compare_match m = phase ? cp->match : pp->match;
		uint64_t mask[2] = { phase ? cp->missing_mask_base : pp->missing_mask_base,
				     phase ? cp->missing_mask_new : pp->missing_mask_new };
		if (m != COMPARE_MATCHED || !(mask[0] | mask[1]))
			continue;
		if (phase)
			fprintf(f, "  %s: not in", cp->name);
		else
			fprintf(f, "  %s -> %s: not in", pp->baseline, pp->variant);
		const char *sep = " ";
		for (int side = 0; side < 2; side++)
			for (size_t r = 0; r < side_runs(in, side == 0) && r < 64; r++)
				if (mask[side] >> r & 1) {
					fprintf(f, "%s%s", sep, side_path(in, side == 0, r));
					sep = ", ";
				}
		fputc('\n', f);
	}
}

void report_compare_print_text(const struct report_compare_input *in, FILE *f)
{
	const struct compare_result *c = in->cmp;
	const char *vb = tool_version(in->base), *vn = tool_version(in->new);
	int w = 5;

	if (c->between_runs) {
		fprintf(f, "tlbprof compare: %zu base run%s -> %zu new run%s\n", side_runs(in, true),
			report_plural(side_runs(in, true)), side_runs(in, false), report_plural(side_runs(in, false)));
		print_sides(in, f);
		term_note(f, "judged between runs, each run one observation: a change counts when it exceeds the %.3g%% "
			   "threshold and is beyond the spread between runs: Welch's t-test on the logarithms of the runs' "
			   "medians (speedups: of their speedups), p < %.2g, and its %.0f%% interval without 0; fewer than %d "
			   "runs a side: could not tell\n",
			report_pct(c->threshold), COMPARE_ALPHA, report_pct(1 - COMPARE_ALPHA), COMPARE_MIN_RUNS);
	} else {
		fprintf(f, "tlbprof compare: %s -> %s\n", in->base_path, in->new_path);
		fprintf(f, "base: %zu phase%s, verdict %s (tlbprof %s); new: %zu phase%s, verdict %s (tlbprof %s)\n",
			in->base->results.n, report_plural(in->base->results.n), verdict_name(in->base_analysis->verdict),
			vb ? vb : "?", in->new->results.n, report_plural(in->new->results.n),
			verdict_name(in->new_analysis->verdict), vn ? vn : "?");
		term_note(f, "a change counts when it exceeds the %.3g%% threshold and is beyond noise: p < %.2g (Mann-Whitney "
			   "U; speedups: bootstrap), a %.0f%% hierarchical bootstrap interval without 0, and larger than the "
			   "floor\n",
			report_pct(c->threshold), COMPARE_ALPHA, report_pct(1 - COMPARE_ALPHA));
	}
	print_warnings(in, f);
	print_missing(in, f);
	for (size_t i = 0; i < c->n_phases; i++)
		if ((int)strlen(c->phases[i].name) > w)
			w = (int)strlen(c->phases[i].name);
	print_phases(in, f, w);
	print_pairs(c, f);
	print_rates(c, f, w);
	report_compare_print_checks(c, f);
	report_compare_print_result(in, f);
}

/* The chosen format onto a stream, as report_write_file() writes it. */
static int compare_stream(FILE *f, const void *ctx)
{
	const struct report_compare_input *in = ctx;

	if (in->format == REPORT_COMPARE_MARKDOWN)
		return report_compare_markdown_write(in, f);
	report_compare_print_text(in, f);
	return 0;
}

int report_compare_emit(const struct report_compare_input *in, const struct report_outputs *out)
{
	bool json_stdout = out->json_path && strcmp(out->json_path, "-") == 0;
	bool to_file = in->output_path && strcmp(in->output_path, "-") != 0;
	/* --output - names stdout as what is written: -q does not silence it (as analyze --output -). */
	bool named = in->output_path != NULL;
	char msg[512];
	int rc = 0;

	/*
	 * A failed table costs the JSON nothing (report_emit()). The table for
	 * people on stdout is printed as it always was (to stderr when the JSON
	 * takes stdout); markdown, or anything --output names, goes through the
	 * one writer.
	 */
	if (named || (!out->quiet && in->format == REPORT_COMPARE_MARKDOWN)) {
		if (report_write_file(to_file ? in->output_path : "-", "--output", "comparison", compare_stream, in, msg,
				      sizeof(msg)) != 0) {
			report_error(msg);
			rc = -1;
		}
	} else if (!out->quiet) {
		FILE *f = json_stdout ? stderr : stdout;
		errno = 0;
		report_compare_print_text(in, f);
		if (fflush(f) != 0 || ferror(f)) {
			snprintf(msg, sizeof(msg), "cannot write the comparison to %s: %s", json_stdout ? "stderr" : "stdout",
				 strerror(errno ? errno : EIO));
			report_error(msg);
			clearerr(f);
			rc = -1;
		}
	}
	if (out->json_path && report_compare_write_json(in, out->json_path, msg, sizeof(msg)) != 0) {
		report_error(msg);
		rc = -1;
	}
	return rc;
}
