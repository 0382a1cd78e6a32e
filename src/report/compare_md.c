/* SPDX-License-Identifier: MIT */
/* tlbprof compare --format markdown: the verdict, then GitHub-flavoured tables a CI bot posts on a pull request. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"
#include "report/report.h"
#include "version.h"

/*
 * Text from outside (phase names, paths, check messages) in a table cell:
 * well-formed UTF-8, one line, and nothing markdown would read as markup.
 * ASCII punctuation that is markup takes a backslash (CommonMark lets any
 * be escaped; Python-Markdown knows these); < > & become entities, so no
 * HTML gets through; | is escaped so a cell never splits.
 */
static int md_text(FILE *f, const char *s)
{
	char *clean = report_utf8_dup(s ? s : "");

	if (!clean)
		return -ENOMEM;
	for (const char *p = clean; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c < 0x20 || c == 0x7f)
			fputc(' ', f);
		else if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '&')
			fputs("&amp;", f);
		else if (strchr("\\`*_[]{}()#+-.!|~", c))
			fprintf(f, "\\%c", c);
		else
			fputc(c, f);
	}
	free(clean);
	return 0;
}

/* A median or speedup with its unit ("86.50 ns", "1.10x"), an en dash where the side has none. */
static void md_value(FILE *f, double v, bool speedup)
{
	if (!isfinite(v))
		fputs("\xe2\x80\x93", f);
	else if (speedup)
		fprintf(f, "%.2f\xc3\x97", v);
	else if (fabs(v) >= 1e4)
		fprintf(f, "%.4g ns", v);
	else
		fprintf(f, "%.2f ns", v);
}

/* The change with its interval: "+20.0 % [+15.1 %, +25.2 %]". */
static void md_change(FILE *f, const struct compare_samples *s)
{
	if (!isfinite(s->change)) {
		fputs("\xe2\x80\x93", f);
		return;
	}
	fprintf(f, "%+.1f %%", report_pct(s->change));
	if (isfinite(s->ratio_lo) && isfinite(s->ratio_hi))
		fprintf(f, " [%+.1f %%, %+.1f %%]", report_pct(s->ratio_lo - 1), report_pct(s->ratio_hi - 1));
}

/* The verdict a row shows, bold where it counts: a regression, an improvement, or could not tell. */
static int md_verdict(FILE *f, const char *text, enum compare_verdict v)
{
	bool bold = v == COMPARE_REGRESSION || v == COMPARE_BETTER || v == COMPARE_TOO_FEW_RUNS;
	int rc;

	fputs(bold ? "**" : "", f);
	rc = md_text(f, text);
	fputs(bold ? "**" : "", f);
	return rc;
}

/* The samples (or, between runs, the runs) each side gave: "30/30". */
static void md_count(FILE *f, const struct compare_samples *s, bool runs)
{
	fprintf(f, "%zu/%zu", runs ? s->runs_base : s->n_base, runs ? s->runs_new : s->n_new);
}

static int md_phase_row(FILE *f, const struct report_compare_input *in, const struct compare_phase *cp)
{
	char verdict[200];
	int rc;

	fputs("| ", f);
	if ((rc = md_text(f, cp->name)))
		return rc;
	fprintf(f, " (%s) | ", cp->faults ? "ns/page" : cp->wall ? "ns/occurrence" : "ns/access");
	md_value(f, cp->ns.base, false);
	fputs(" | ", f);
	md_value(f, cp->ns.new, false);
	fputs(" | ", f);
	md_change(f, &cp->ns);
	fputs(" | ", f);
	if ((rc = md_verdict(f, report_compare_phase_verdict(in, cp, verdict, sizeof(verdict)), cp->verdict)))
		return rc;
	fputs(" | ", f);
	md_count(f, &cp->ns, in->cmp->between_runs);
	fputs(" |\n", f);
	return 0;
}

static int md_pair_row(FILE *f, const struct compare_result *c, const struct compare_pair *cp)
{
	char verdict[200];
	int rc;

	fputs("| speedup ", f);
	if ((rc = md_text(f, cp->baseline)))
		return rc;
	fputs(" \xe2\x86\x92 ", f);
	if ((rc = md_text(f, cp->variant)))
		return rc;
	fputs(" | ", f);
	md_value(f, cp->speedup.base, true);
	fputs(" | ", f);
	md_value(f, cp->speedup.new, true);
	fputs(" | ", f);
	md_change(f, &cp->speedup);
	fputs(" | ", f);
	if (cp->match == COMPARE_MATCHED)
		report_compare_verdict_text(&cp->speedup, true, verdict, sizeof(verdict));
	else
		snprintf(verdict, sizeof(verdict), "%s", cp->match == COMPARE_ADDED ? "only in new" : "only in base");
	if ((rc = md_verdict(f, verdict, cp->speedup.verdict)))
		return rc;
	fputs(" | ", f);
	md_count(f, &cp->speedup, c->between_runs);
	fputs(" |\n", f);
	return 0;
}

/* The first line: the verdict and the exit status, then what decided it. */
static void md_heading(FILE *f, const struct report_compare_input *in)
{
	const struct compare_result *c = in->cmp;
	const char *verdict = !compare_judged_any(c) ? "could not tell" : c->regressions ? "regression"
							      : in->fails		 ? "a check got worse"
										 : "no regression";

	fprintf(f, "## tlbprof compare: %s (exit %d)\n\n", verdict, in->status);
	if (!compare_judged_any(c))
		fprintf(f, "Nothing could be judged (no phase or page-size comparison on both sides with enough %s), so "
			   "compare cannot say whether anything regressed.\n\n", c->between_runs ? "runs" : "samples");
	else
		fprintf(f, "%zu regression%s and %zu improvement%s beyond noise and the %.3g %% threshold; %zu check%s "
			   "worse; %zu of %zu phases and %zu of %zu page-size comparisons judged.\n\n",
			c->regressions, c->regressions == 1 ? "" : "s", c->improvements, c->improvements == 1 ? "" : "s",
			report_pct(c->threshold), c->checks_worse, c->checks_worse == 1 ? "" : "s", c->phases_judged, c->n_phases,
			c->pairs_judged, c->n_pairs);
}

/* Which reports each side had, and how they were judged. */
static int md_sides(FILE *f, const struct report_compare_input *in)
{
	const struct compare_result *c = in->cmp;
	int rc = 0;

	for (int side = 0; side < 2 && !rc; side++) {
		bool base = side == 0;
		size_t n = !in->n_base ? 1 : base ? in->n_base : in->n_new;
		fprintf(f, "%s**%s** (%zu run%s):", side ? " \xc2\xb7 " : "", base ? "old" : "new", n, n == 1 ? "" : "s");
		for (size_t r = 0; r < n && !rc; r++) {
			const char *path = !in->n_base ? (base ? in->base_path : in->new_path)
						       : base ? in->base_paths[r] : in->new_paths[r];
			fputs(r ? ", " : " ", f);
			rc = md_text(f, path);
		}
	}
	if (rc)
		return rc;
	if (c->between_runs)
		fprintf(f, "\n\nJudged between runs, each run one observation: Welch's t-test on the logarithms of the "
			   "runs' medians, p < %.2g, and its %.0f %% interval of new/old without 0; old and new are the "
			   "geometric means of the runs' medians; with fewer than %d runs a side, compare could not tell.\n\n",
			COMPARE_ALPHA, report_pct(1 - COMPARE_ALPHA), COMPARE_MIN_RUNS);
	else
		fprintf(f, "\n\nOld and new are medians of the samples; a change counts beyond noise: Mann-Whitney U "
			   "p < %.2g, a %.0f %% hierarchical bootstrap interval of new/old without 0, and larger than the "
			   "spread between a run's own allocations.\n\n", COMPARE_ALPHA, report_pct(1 - COMPARE_ALPHA));
	return 0;
}

/* What may make a change the machine's: environments, interrupted runs, other parameters, runs that lack phases. */
static int md_warnings(FILE *f, const struct compare_result *c)
{
	int rc = 0;

	for (size_t i = 0; i < c->n_env && !rc; i++) {
		fprintf(f, "- **warning**: the environments differ: %s ", c->env[i].field);
		if (!(rc = md_text(f, c->env[i].base))) {
			fputs(" \xe2\x86\x92 ", f);
			rc = md_text(f, c->env[i].new);
		}
		fputc('\n', f);
	}
	if (c->interrupted_base || c->interrupted_new)
		fprintf(f, "- **warning**: a run of the %s side was interrupted (fewer phases than planned)\n",
			c->interrupted_base && c->interrupted_new ? "old and the new" : c->interrupted_base ? "old" : "new");
	if (c->phases_params_differ)
		fprintf(f, "- **warning**: %zu phase%s measured with other parameters\n", c->phases_params_differ,
			c->phases_params_differ == 1 ? " was" : "s were");
	if (c->missing_from_runs)
		fprintf(f, "- **warning**: %zu phase%s or comparison%s missing from some runs (judged on the runs that "
			   "hold them)\n", c->missing_from_runs, c->missing_from_runs == 1 ? "" : "s",
			c->missing_from_runs == 1 ? " is" : "s are");
	if (!rc && (c->n_env || c->interrupted_base || c->interrupted_new || c->phases_params_differ ||
		    c->missing_from_runs))
		fputc('\n', f);
	return rc;
}

static int md_checks(FILE *f, const struct compare_result *c)
{
	size_t changed = 0;
	int rc = 0;

	for (size_t i = 0; i < c->n_checks; i++)
		changed += c->checks[i].match != COMPARE_MATCHED || c->checks[i].base != c->checks[i].new;
	if (!changed) {
		fprintf(f, "No check changed (%zu unchanged).\n", c->n_checks);
		return 0;
	}
	fprintf(f, "Checks that changed (%zu of %zu):\n\n| check | old | new | message |\n|---|---|---|---|\n", changed,
		c->n_checks);
	for (size_t i = 0; i < c->n_checks && !rc; i++) {
		const struct compare_check *cc = &c->checks[i];
		if (cc->match == COMPARE_MATCHED && cc->base == cc->new)
			continue;
		fputs("| ", f);
		if ((rc = md_text(f, cc->id)))
			break;
		fprintf(f, " | %s | %s%s%s | ", cc->match == COMPARE_ADDED ? "\xe2\x80\x93" : check_status_name(cc->base),
			cc->worse ? "**" : "", cc->match == COMPARE_REMOVED ? "\xe2\x80\x93" : check_status_name(cc->new),
			cc->worse ? " (worse)**" : "");
		rc = md_text(f, cc->match == COMPARE_REMOVED ? "only in old" : cc->new_message);
		fputs(" |\n", f);
	}
	return rc;
}

int report_compare_markdown_write(const struct report_compare_input *in, FILE *f)
{
	const struct compare_result *c = in->cmp;
	int rc;

	md_heading(f, in);
	if ((rc = md_sides(f, in)) || (rc = md_warnings(f, c)))
		return rc;
	fprintf(f, "| phase | old | new | change [%.0f %% interval] | verdict | %s |\n"
		   "|---|---:|---:|---:|---|---:|\n", report_pct(1 - COMPARE_ALPHA), c->between_runs ? "runs" : "samples");
	for (size_t i = 0; i < c->n_phases; i++)
		if ((rc = md_phase_row(f, in, &c->phases[i])))
			return rc;
	for (size_t i = 0; i < c->n_pairs; i++)
		if ((rc = md_pair_row(f, c, &c->pairs[i])))
			return rc;
	fputc('\n', f);
	if ((rc = md_checks(f, c)))
		return rc;
	fprintf(f, "\n<sub>tlbprof %s compare, threshold %.3g %%, --fail-on %s</sub>\n", TLBPROF_VERSION,
		report_pct(c->threshold), fail_on_name(in->fail_on));
	return 0;
}
