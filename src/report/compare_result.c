/* SPDX-License-Identifier: MIT */
/*
 * The end of tlbprof compare's table: the checks that changed, and the result
 * line that says what was judged and whether the comparison passes, each
 * status in its colour on a terminal (terminal.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/internal.h"

void report_compare_print_checks(const struct compare_result *c, FILE *f)
{
	size_t unchanged = 0;
	bool header = false;
	struct term_style ts;

	term_style_for(f, &ts);
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
		fprintf(f, "  %-26s ", cc->id);
		term_put_status(f, &ts, check_status_name(cc->base), 4);
		fprintf(f, " -> ");
		term_put_status(f, &ts, check_status_name(cc->new), 0);
		if (!cc->worse) {
			fputc('\n', f);
			continue;
		}
		int col = fprintf(f, "  %sworse%s%s", term_start(&ts, "worse"), term_end(&ts, "worse"),
				  cc->new_message && *cc->new_message ? ": " : "");
		/* The visible columns: the id's, the two statuses' and the arrow's, without the escapes. */
		size_t id = strlen(cc->id) > 26 ? strlen(cc->id) : 26;
		size_t at = 2 + id + 1 + 4 + 4 + strlen(check_status_name(cc->new)) + (size_t)(col > 0 ? col : 0) -
			    strlen(term_start(&ts, "worse")) - strlen(term_end(&ts, "worse"));
		term_put_wrapped(f, cc->new_message ? cc->new_message : "", at, 8, ts.width);
	}
	fprintf(f, "%s%zu check%s unchanged\n", header ? "" : "\n", unchanged, report_plural(unchanged));
}

/* "3 of 3 phases and 1 of 1 page-size comparisons judged" with why the others were not. */
static void print_judged(const struct compare_result *c, FILE *f)
{
	size_t unmatched = 0, insufficient = c->phases_insufficient + c->pairs_insufficient;
	size_t total = c->n_phases + c->n_pairs, judged = c->phases_judged + c->pairs_judged;

	for (size_t i = 0; i < c->n_phases; i++)
		unmatched += c->phases[i].match != COMPARE_MATCHED;
	for (size_t i = 0; i < c->n_pairs; i++)
		unmatched += c->pairs[i].match != COMPARE_MATCHED;
	fprintf(f, "%zu of %zu phase%s", c->phases_judged, c->n_phases, report_plural(c->n_phases));
	if (c->n_pairs)
		fprintf(f, " and %zu of %zu page-size comparison%s", c->pairs_judged, c->n_pairs, report_plural(c->n_pairs));
	fprintf(f, " judged");
	if (judged < total) {
		const char *sep = ": ";
		if (insufficient) {
			fprintf(f, "%s%zu with insufficient samples", sep, insufficient);
			sep = ", ";
		}
		if (c->too_few_runs) {
			fprintf(f, "%s%zu could not be told (too few runs)", sep, c->too_few_runs);
			sep = ", ";
		}
		if (unmatched) {
			fprintf(f, "%s%zu %s only", sep, unmatched, c->between_runs ? "on one side" : "in one report");
			sep = ", ";
		}
		if (total - judged - insufficient - unmatched - c->too_few_runs)
			fprintf(f, "%s%zu not comparable (failed, skipped or measured differently)", sep,
				total - judged - insufficient - unmatched - c->too_few_runs);
	}
}

/* The verdict of the whole comparison; ts colours its last word (the text may go to a buffer first). */
static void print_result(const struct report_compare_input *in, FILE *f, const struct term_style *ts)
{
	const struct compare_result *c = in->cmp;
	const char *how = in->fails ? "fails" : "passes";

	fprintf(f, "\nresult: ");
	print_judged(c, f);
	if (!compare_judged_any(c)) {
		fprintf(f, "; nothing was judged, so compare cannot say whether anything regressed (exit %d)\n", in->status);
		return;
	}
	fprintf(f, "; ");
	if (c->regressions) {
		fprintf(f, "%zu regression%s beyond noise and the %.3g%% threshold:", c->regressions, report_plural(c->regressions),
			report_pct(c->threshold));
		const char *sep = " ";
		for (size_t i = 0; i < c->n_phases; i++) {
			const struct compare_phase *cp = &c->phases[i];
			if (cp->verdict != COMPARE_REGRESSION)
				continue;
			fprintf(f, "%s%s %+.1f%%", sep, cp->name, report_pct(cp->ns.change));
			if (cp->against_control)
				fprintf(f, " (%+.1f%% against its control)", report_pct(cp->vs_control.change));
			sep = ", ";
		}
		for (size_t i = 0; i < c->n_pairs; i++) {
			if (c->pairs[i].speedup.verdict != COMPARE_REGRESSION)
				continue;
			fprintf(f, "%sspeedup %s -> %s %+.1f%%", sep, c->pairs[i].baseline, c->pairs[i].variant,
				report_pct(c->pairs[i].speedup.change));
			sep = ", ";
		}
	} else {
		fprintf(f, "no regression beyond noise and the %.3g%% threshold", report_pct(c->threshold));
	}
	if (c->machine_shifts)
		fprintf(f, "; %zu phase%s moved with %s packed control%s (the machine, not translation)", c->machine_shifts,
			report_plural(c->machine_shifts), c->machine_shifts == 1 ? "its" : "their", report_plural(c->machine_shifts));
	if (c->speedups_uncounted)
		fprintf(f, "; %zu smaller speedup%s with no phase slower (informational)", c->speedups_uncounted,
			report_plural(c->speedups_uncounted));
	if (c->checks_worse) {
		fprintf(f, "; %zu check%s worse:", c->checks_worse, report_plural(c->checks_worse));
		for (size_t i = 0; i < c->n_checks; i++)
			if (c->checks[i].worse)
				fprintf(f, " %s%s", c->checks[i].id, c->checks[i].new == CHECK_FAIL ? " (now fails)" : "");
		if (in->fail_on == FAIL_ON_FAIL && c->checks_now_failing < c->checks_worse)
			fprintf(f, " (only a check that now fails counts at --fail-on fail)");
	}
	if (c->improvements)
		fprintf(f, "; %zu improvement%s", c->improvements, report_plural(c->improvements));
	fprintf(f, " (%s%s%s, exit %d)\n", term_start(ts, how), how, term_end(ts, how), in->status);
}

/* The result line, wrapped on a terminal: it names every regression and worse check, so it runs long. */
void report_compare_print_result(const struct report_compare_input *in, FILE *f)
{
	struct term_style ts;
	char *text = NULL;
	size_t len = 0;
	FILE *mem;

	term_style_for(f, &ts);
	if (!ts.width || !(mem = open_memstream(&text, &len))) {
		print_result(in, f, &ts);
		return;
	}
	print_result(in, mem, &ts);
	if (fclose(mem) == 0 && text)
		term_note(f, "%s", text);
	else
		print_result(in, f, &ts);
	free(text);
}
