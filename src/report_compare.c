/* SPDX-License-Identifier: MIT */
/* The output of tlbprof compare: the table for people and the tlbprof.compare/1 JSON. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_internal.h"
#include "version.h"

/* The counters the table shows (the JSON has every counter that counted). */
static const enum metric key_metrics[] = {
	METRIC_DTLB_LOAD_MISSES, METRIC_WALK_ACTIVE, METRIC_LLC_LOAD_MISSES, METRIC_PAGE_FAULTS, METRIC_MAJOR_FAULTS,
};

/* json_real() for finite numbers, null otherwise (JSON has no NaN or infinity). */
static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static double pct(double fraction)
{
	return 100 * fraction;
}

static const char *tool_version(const struct report_doc *doc)
{
	json_t *v = json_object_get(json_object_get((json_t *)doc->source, "tool"), "version");

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static const struct phase_result *side_phase(const struct report_doc *doc, size_t idx)
{
	return idx == SIZE_MAX ? NULL : &doc->results.phases[idx];
}

/* ---- JSON ---- */

static json_t *samples_json(const struct compare_samples *s, bool higher_is_better)
{
	json_t *o = json_object();

	json_object_set_new(o, "base", num(s->base));
	json_object_set_new(o, "new", num(s->new));
	json_object_set_new(o, "n_base", json_integer((json_int_t)s->n_base));
	json_object_set_new(o, "n_new", json_integer((json_int_t)s->n_new));
	json_object_set_new(o, "change_pct", num(pct(s->change)));
	json_object_set_new(o, "interval_pct", isfinite(s->ratio_lo) && isfinite(s->ratio_hi)
						       ? json_pack("[o, o]", num(pct(s->ratio_lo - 1)), num(pct(s->ratio_hi - 1)))
						       : json_null());
	json_object_set_new(o, "p_value", num(s->p));
	json_object_set_new(o, "exact", json_boolean(s->exact));
	json_object_set_new(o, "test", s->test ? json_string(s->test) : json_null());
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
		json_object_set_new(o, "name", json_string(cp->name));
		json_object_set_new(o, "match", json_string(compare_match_name(cp->match)));
		json_object_set_new(o, "status", json_pack("{s:o, s:o}", "base", phase_status_json(side_phase(in->base, cp->base)),
							   "new", phase_status_json(side_phase(in->new, cp->new))));
		json_object_set_new(o, "metric", json_string(cp->faults ? "ns_per_page"
							     : cp->wall ? "wall_ns_per_occurrence"
									: "ns_per_access"));
		json_object_set_new(o, "ns", samples_json(&cp->ns, false));
		json_object_set_new(o, "ns_per_fault", cp->faults ? samples_json(&cp->ns_per_fault, false) : json_null());
		for (size_t k = 0; k < cp->n_rates; k++) {
			const struct compare_rate *r = &cp->rates[k];
			json_array_append_new(rates, json_pack("{s:s, s:o, s:o, s:o}", "metric", metric_name(r->metric), "base",
							       num(r->base), "new", num(r->new), "change_pct",
							       num(pct(r->change))));
		}
		json_object_set_new(o, "counters_per_access", rates);
		json_object_set_new(o, "regression", json_boolean(cp->ns.verdict == COMPARE_REGRESSION));
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *pairs_json(const struct compare_result *c)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < c->n_pairs; i++) {
		const struct compare_pair *cp = &c->pairs[i];
		double tlb_change = cp->base_ns_per_tlb_miss > 0 ? cp->new_ns_per_tlb_miss / cp->base_ns_per_tlb_miss - 1 : NAN;
		json_t *o = json_object();
		json_object_set_new(o, "baseline", json_string(cp->baseline));
		json_object_set_new(o, "variant", json_string(cp->variant));
		json_object_set_new(o, "match", json_string(compare_match_name(cp->match)));
		json_object_set_new(o, "speedup", samples_json(&cp->speedup, true));
		json_object_set_new(o, "delta_ns", json_pack("{s:o, s:o}", "base", num(cp->base_delta_ns), "new",
							     num(cp->new_delta_ns)));
		json_object_set_new(o, "ns_per_tlb_miss", json_pack("{s:o, s:o, s:o}", "base", num(cp->base_ns_per_tlb_miss),
								    "new", num(cp->new_ns_per_tlb_miss), "change_pct",
								    num(pct(tlb_change))));
		json_object_set_new(o, "method", json_pack("{s:o, s:o}", "base",
							   cp->base_method ? json_string(cp->base_method) : json_null(),
							   "new", cp->new_method ? json_string(cp->new_method) : json_null()));
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
				       hn && cc->new_message ? json_string(cc->new_message) : json_null()));
	}
	return arr;
}

static json_t *side_json(const char *path, const struct report_doc *doc, const struct analysis *a)
{
	const char *v = tool_version(doc);

	return json_pack("{s:s, s:o, s:s, s:I}", "path", path, "tool_version", v ? json_string(v) : json_null(),
			 "verdict", verdict_name(a->verdict), "phases", (json_int_t)doc->results.n);
}

/* "regression", "checks_worse" or "ok": what decided the exit status. */
static const char *overall(const struct report_compare_input *in)
{
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
		json_array_append_new(cmd, json_string(in->argv[i]));
	json_object_set_new(root, "command", cmd);
	json_object_set_new(root, "base", side_json(in->base_path, in->base, in->base_analysis));
	json_object_set_new(root, "new", side_json(in->new_path, in->new, in->new_analysis));
	json_object_set_new(root, "method",
			    json_pack("{s:f, s:f, s:i, s:s, s:s, s:i, s:I}", "threshold_pct", pct(c->threshold), "alpha",
				      COMPARE_ALPHA, "min_samples", COMPARE_MIN_SAMPLES, "test", "mann_whitney_u",
				      "speedup_test", "bootstrap", "bootstrap_resamples", COMPARE_BOOTSTRAP_RESAMPLES,
				      "bootstrap_seed", (json_int_t)COMPARE_BOOTSTRAP_SEED));
	for (size_t i = 0; i < c->n_env; i++)
		json_array_append_new(env, json_pack("{s:s, s:s, s:s}", "field", c->env[i].field, "base", c->env[i].base,
						     "new", c->env[i].new));
	json_object_set_new(root, "environment_differences", env);
	json_object_set_new(root, "phases", phases_json(in));
	json_object_set_new(root, "comparisons", pairs_json(c));
	json_object_set_new(root, "checks", checks_json(c));
	json_object_set_new(root, "regressions", json_integer((json_int_t)c->regressions));
	json_object_set_new(root, "improvements", json_integer((json_int_t)c->improvements));
	json_object_set_new(root, "checks_worse", json_integer((json_int_t)c->checks_worse));
	json_object_set_new(root, "checks_now_failing", json_integer((json_int_t)c->checks_now_failing));
	json_object_set_new(root, "fail_on", json_string(fail_on_name(in->fail_on)));
	json_object_set_new(root, "verdict", json_string(overall(in)));
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

static const char *fmt_pct(double fraction, char *buf, size_t len)
{
	if (!isfinite(fraction))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%+.1f%%", pct(fraction));
	return buf;
}

static const char *fmt_interval(const struct compare_samples *s, char *buf, size_t len)
{
	if (!isfinite(s->ratio_lo) || !isfinite(s->ratio_hi))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "[%+.1f%%, %+.1f%%]", pct(s->ratio_lo - 1), pct(s->ratio_hi - 1));
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

/* The verdict column of a phase: why it is not compared, or what the samples say. */
static const char *phase_verdict(const struct report_compare_input *in, const struct compare_phase *cp, char *buf,
				 size_t len)
{
	const struct phase_result *b = side_phase(in->base, cp->base), *n = side_phase(in->new, cp->new);

	if (cp->match == COMPARE_REMOVED)
		snprintf(buf, len, "only in base");
	else if (cp->match == COMPARE_ADDED)
		snprintf(buf, len, "only in new");
	else if (b->status != PHASE_OK || n->status != PHASE_OK)
		snprintf(buf, len, "not comparable: %s in base, %s in new", phase_status_name(b->status),
			 phase_status_name(n->status));
	else if (cp->ns.verdict == COMPARE_NOT_COMPARABLE)
		snprintf(buf, len, "not comparable: measured differently");
	else
		snprintf(buf, len, "%s", compare_verdict_label(cp->ns.verdict, false));
	return buf;
}

static void print_row(FILE *f, int w, const char *name, const char *metric, const struct compare_samples *s,
		      const char *suffix, const char *verdict)
{
	char b[32], n[32], ch[24], iv[48], p[16], cnt[32];

	snprintf(cnt, sizeof(cnt), "%zu/%zu", s->n_base, s->n_new);
	fprintf(f, "%-*s %-9s %10s %10s %8s  %-18s %7s %9s  %s\n", w, name, metric, fmt_value(s->base, suffix, b, sizeof(b)),
		fmt_value(s->new, suffix, n, sizeof(n)), fmt_pct(s->change, ch, sizeof(ch)),
		fmt_interval(s, iv, sizeof(iv)), fmt_p(s, p, sizeof(p)), cnt, verdict);
}

static bool key_metric(enum metric m)
{
	for (size_t i = 0; i < sizeof(key_metrics) / sizeof(key_metrics[0]); i++)
		if (key_metrics[i] == m)
			return true;
	return false;
}

void report_compare_print_text(const struct report_compare_input *in, FILE *f)
{
	const struct compare_result *c = in->cmp;
	const char *vb = tool_version(in->base), *vn = tool_version(in->new);
	char buf[160];
	int w = 5;

	fprintf(f, "tlbprof compare: %s -> %s\n", in->base_path, in->new_path);
	fprintf(f, "base: %zu phases, verdict %s (tlbprof %s); new: %zu phases, verdict %s (tlbprof %s)\n",
		in->base->results.n, verdict_name(in->base_analysis->verdict), vb ? vb : "?", in->new->results.n,
		verdict_name(in->new_analysis->verdict), vn ? vn : "?");
	fprintf(f, "a change counts when it exceeds the %.3g%% threshold and the samples make it significant: p < %.2g "
		   "(Mann-Whitney U; speedups: bootstrap) and a %.0f%% interval without 0\n",
		pct(c->threshold), COMPARE_ALPHA, pct(1 - COMPARE_ALPHA));
	if (c->n_env) {
		fprintf(f, "\nwarning: the environments differ, so a change may be the machine's, not the code's:\n");
		for (size_t i = 0; i < c->n_env; i++)
			fprintf(f, "  %-18s '%s' -> '%s'\n", c->env[i].field, c->env[i].base, c->env[i].new);
	}

	bool wall = false;
	for (size_t i = 0; i < c->n_phases; i++) {
		if ((int)strlen(c->phases[i].name) > w)
			w = (int)strlen(c->phases[i].name);
		wall |= c->phases[i].wall;
	}
	fprintf(f, "\n%-*s %-9s %10s %10s %8s  %-18s %7s %9s  %s\n", w, "phase", "metric", "base", "new", "change",
		"interval", "p", "samples", "verdict");
	for (size_t i = 0; i < c->n_phases; i++) {
		const struct compare_phase *cp = &c->phases[i];
		print_row(f, w, cp->name, cp->faults ? "ns/page" : cp->wall ? "ns/occur" : "ns/access", &cp->ns, "",
			  phase_verdict(in, cp, buf, sizeof(buf)));
		if (cp->faults && cp->match == COMPARE_MATCHED && cp->ns_per_fault.n_base && cp->ns_per_fault.n_new)
			print_row(f, w, "", "ns/fault", &cp->ns_per_fault, "",
				  compare_verdict_label(cp->ns_per_fault.verdict, false));
	}
	fprintf(f, "(base and new: medians of the samples%s; interval: of the new/base ratio of medians, bootstrap; "
		   "fewer than %d samples on a side are not judged)\n",
		wall ? ", ns/occur: wall time per occurrence of a phase that declared no accesses" : "", COMPARE_MIN_SAMPLES);

	if (c->n_pairs) {
		int pw = 10;
		char label[2][200];
		for (size_t i = 0; i < c->n_pairs; i++) {
			snprintf(label[0], sizeof(label[0]), "%s -> %s", c->pairs[i].baseline, c->pairs[i].variant);
			if ((int)strlen(label[0]) > pw)
				pw = (int)strlen(label[0]);
		}
		fprintf(f, "\n%-*s %-9s %10s %10s %8s  %-18s %7s %9s  %s\n", pw, "page sizes", "metric", "base", "new",
			"change", "interval", "p", "samples", "verdict");
		for (size_t i = 0; i < c->n_pairs; i++) {
			const struct compare_pair *cp = &c->pairs[i];
			snprintf(label[0], sizeof(label[0]), "%s -> %s", cp->baseline, cp->variant);
			snprintf(label[1], sizeof(label[1]), "%s",
				 cp->match == COMPARE_MATCHED ? compare_verdict_label(cp->speedup.verdict, true)
				 : cp->match == COMPARE_ADDED ? "only in new"
							      : "only in base");
			print_row(f, pw, label[0], "speedup", &cp->speedup, "x", label[1]);
			if (isfinite(cp->base_ns_per_tlb_miss) || isfinite(cp->new_ns_per_tlb_miss)) {
				char b[32], n[32], ch[24];
				double change = cp->base_ns_per_tlb_miss > 0
							? cp->new_ns_per_tlb_miss / cp->base_ns_per_tlb_miss - 1
							: NAN;
				fprintf(f, "%-*s %-9s %10s %10s %8s\n", pw, "", "ns/miss",
					fmt_value(cp->base_ns_per_tlb_miss, "", b, sizeof(b)),
					fmt_value(cp->new_ns_per_tlb_miss, "", n, sizeof(n)), fmt_pct(change, ch, sizeof(ch)));
			}
		}
		fprintf(f, "(speedup: baseline median / variant median; a smaller speedup is worse; ns/miss: the delta "
			   "per avoided dTLB miss, where dTLB misses were counted)\n");
	}

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
				fmt_pct(r->change, ch, sizeof(ch)));
		}
	}
	if (header)
		fprintf(f, "(totals over the timed samples, so no significance; page faults are per page in page-fault "
			   "phases; every counter is in the JSON)\n");

	size_t unchanged = 0;
	header = false;
	for (size_t i = 0; i < c->n_checks; i++) {
		const struct compare_check *cc = &c->checks[i];
		if (cc->match == COMPARE_MATCHED && cc->base == cc->new) {
			unchanged++;
			continue;
		}
		if (!header) {
			fprintf(f, "\nchecks that changed:\n");
			header = true;
		}
		if (cc->match != COMPARE_MATCHED) {
			fprintf(f, "  %-26s %s\n", cc->id, cc->match == COMPARE_ADDED ? "only in new" : "only in base");
			continue;
		}
		fprintf(f, "  %-26s %-4s -> %s", cc->id, check_status_name(cc->base), check_status_name(cc->new));
		if (cc->worse)
			fprintf(f, "  worse%s%s", cc->new_message && *cc->new_message ? ": " : "",
				cc->new_message ? cc->new_message : "");
		fputc('\n', f);
	}
	fprintf(f, "%s%zu check%s unchanged\n", header ? "" : "\n", unchanged, unchanged == 1 ? "" : "s");

	fprintf(f, "\nresult: ");
	if (c->regressions) {
		fprintf(f, "%zu regression%s beyond noise and the %.3g%% threshold:", c->regressions,
			c->regressions == 1 ? "" : "s", pct(c->threshold));
		const char *sep = " ";
		for (size_t i = 0; i < c->n_phases; i++) {
			if (c->phases[i].ns.verdict != COMPARE_REGRESSION)
				continue;
			fprintf(f, "%s%s %+.1f%%", sep, c->phases[i].name, pct(c->phases[i].ns.change));
			sep = ", ";
		}
		for (size_t i = 0; i < c->n_pairs; i++) {
			if (c->pairs[i].speedup.verdict != COMPARE_REGRESSION)
				continue;
			fprintf(f, "%sspeedup %s -> %s %+.1f%%", sep, c->pairs[i].baseline, c->pairs[i].variant,
				pct(c->pairs[i].speedup.change));
			sep = ", ";
		}
		fprintf(f, "%s", c->checks_worse ? "; " : "");
	} else if (!c->checks_worse) {
		fprintf(f, "no regression beyond noise and the %.3g%% threshold", pct(c->threshold));
	}
	if (c->checks_worse) {
		fprintf(f, "%zu check%s worse:", c->checks_worse, c->checks_worse == 1 ? "" : "s");
		for (size_t i = 0; i < c->n_checks; i++)
			if (c->checks[i].worse)
				fprintf(f, " %s", c->checks[i].id);
	}
	if (c->improvements)
		fprintf(f, "; %zu improvement%s", c->improvements, c->improvements == 1 ? "" : "s");
	fprintf(f, " (%s, exit %d)\n", in->fails ? "fails" : "passes", in->fails ? 1 : 0);
}

int report_compare_emit(const struct report_compare_input *in, const struct tlbprof_config *cfg)
{
	bool json_stdout = cfg->json_path && strcmp(cfg->json_path, "-") == 0;
	char msg[512];

	if (!cfg->quiet) {
		FILE *f = json_stdout ? stderr : stdout;
		report_compare_print_text(in, f);
		if (fflush(f) != 0 || ferror(f)) {
			snprintf(msg, sizeof(msg), "cannot write the comparison to %s: %s", json_stdout ? "stderr" : "stdout",
				 strerror(errno));
			report_error(msg);
			return -1;
		}
	}
	if (cfg->json_path && report_compare_write_json(in, cfg->json_path, msg, sizeof(msg)) != 0) {
		report_error(msg);
		return -1;
	}
	return 0;
}
