/* SPDX-License-Identifier: MIT */
/* The verdict and the plain-language summary the text output opens with. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "judge/analysis_internal.h"
#include "parse.h"

/* Append formatted text to the NUL-terminated s of capacity cap (truncating). */
__attribute__((format(printf, 3, 4)))
static void appendf(char *s, size_t cap, const char *fmt, ...)
{
	size_t len = strlen(s);
	va_list ap;

	if (len + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(s + len, cap - len, fmt, ap);
	va_end(ap);
}

/* "N checks failed (a, b)" / "N warnings (c)" for the checks at status st; nothing when none. */
static void append_checks(const struct analysis *a, enum check_status st, const char *one, const char *many, char *s,
			  size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < a->n_checks; i++)
		n += a->checks[i].status == st;
	if (!n)
		return;
	appendf(s, cap, "%s%zu %s (", *s ? "; " : "", n, n > 1 ? many : one);
	for (size_t i = 0, k = 0; i < a->n_checks; i++)
		if (a->checks[i].status == st)
			appendf(s, cap, "%s%s", k++ ? ", " : "", a->checks[i].id);
	appendf(s, cap, ")");
}

/* ", colored" or ", aligned" when the phases ran in more than one layout (--layout colored,aligned), else "". */
static const char *layout_tag(const struct phase_result *res, const struct analysis *a, const struct phase_spec *s)
{
	static const char *const tags[] = { [LAYOUT_COLORED] = " (colored)", [LAYOUT_ALIGNED] = " (aligned)" };

	for (size_t i = 0; i < a->n_phases; i++)
		if (res[i].spec.layout != s->layout && res[i].spec.role == PHASE_ROLE_MEASURE)
			return (unsigned)s->layout < sizeof(tags) / sizeof(tags[0]) ? tags[s->layout] : "";
	return "";
}

/* Whether the summary states a translation share (a proven one, or a range) rather than what pages remove. */
static bool gives_share(const struct translation_share *t)
{
	return t->proven || (t->known && isfinite(t->hi_ns));
}

/* Whether a comparison before the i-th, of the same baseline, already gave its translation share. */
static bool said_translation(const struct analysis *a, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (a->comparisons[j].baseline == a->comparisons[i].baseline &&
		    gives_share(&a->comparisons[j].translation) && a->comparisons[j].comparable)
			return true;
	return false;
}

static void summarise(const struct phase_result *res, struct analysis *a)
{
	char *s = a->summary;
	size_t cap = sizeof(a->summary);

	*s = '\0';
	unsigned said_no_interval = 0;
	for (size_t i = 0; i < a->n_comparisons; i++) {
		const struct comparison *c = &a->comparisons[i];
		const struct phase_result *b = &res[c->baseline], *v = &res[c->variant];
		const struct phase_analysis *pb = &a->phases[c->baseline];
		char sz[SIZE_TEXT];
		if (a->n_stride_steps || res[c->baseline].spec.fault_case != FAULT_NONE)
			continue;	/* stride and fault sweeps are summed up by their own figures */
		format_bytes(v->spec.size_bytes, sz, sizeof(sz));
		if (!c->comparable) {
			/* A number inside its own noise is not a finding: say that it could not be told, and why. */
			appendf(s, cap, "%sat %s%s, %s and %s pages could not be compared: %s", *s ? "; " : "", sz,
				layout_tag(res, a, &b->spec), b->spec.page.label, v->spec.page.label, c->doubt);
			continue;
		}
		bool faster = c->speedup >= 1;
		double k = faster ? c->speedup : (c->speedup > 0 ? 1 / c->speedup : 0);
		double lo = faster ? c->speedup_lo : 1 / c->speedup_hi, hi = faster ? c->speedup_hi : 1 / c->speedup_lo;
		appendf(s, cap, "%sat %s%s, %s pages are %.2f× ", *s ? "; " : "", sz, layout_tag(res, a, &b->spec),
			v->spec.page.label, k);
		if (c->interval_known && isfinite(lo) && isfinite(hi))
			appendf(s, cap, "(%.2f–%.2f) ", lo, hi);
		appendf(s, cap, "%s than %s", faster ? "faster" : "slower", b->spec.page.label);
		if (!c->interval_known)
			appendf(s, cap, " (%s)", said_no_interval++ ? "no interval" : c->doubt);
		const struct translation_share *t = &c->translation;
		if (gives_share(t) && said_translation(a, i))
			;	/* one translation share per baseline phase */
		else if (t->proven)
			appendf(s, cap, "; address translation is %.1f of %.1f ns per access at %s (%s - %s, walk-free)",
				t->lo_ns, pb->ns.median, b->spec.page.label, b->spec.page.label, t->lo_basis);
		else if (t->known && isfinite(t->hi_ns))
			appendf(s, cap, "; address translation is %.1f–%.1f of %.1f ns per access at %s (%s - %s to %s - %s; "
				"no control proven)", t->lo_ns, t->hi_ns, pb->ns.median, b->spec.page.label,
				b->spec.page.label, t->lo_basis, b->spec.page.label, t->hi_basis);
		else if (c->have_walk_cycles)
			appendf(s, cap, "; page walks account for %.1f of %.1f ns per access at %s", c->tlb_ns,
				pb->ns.median, b->spec.page.label);
		else if (c->delta_ns > 0)
			appendf(s, cap, "; %s pages remove %.1f of %.1f ns per access", v->spec.page.label, c->delta_ns,
				pb->ns.median);
	}
	for (size_t i = 0; i < a->n_stride_steps; i++) {
		const struct stride_step *st = &a->stride_steps[i];
		const struct phase_spec *f = &res[st->from].spec, *t = &res[st->to].spec;
		char sz[SIZE_TEXT], s1[SIZE_TEXT], s2[SIZE_TEXT];
		if (strcmp(st->label, "tlb") != 0)
			continue;
		appendf(s, cap, "%sat %s on %s pages the TLB step (%sB -> %sB stride) ", *s ? "; " : "",
			format_bytes(f->size_bytes, sz, sizeof(sz)), f->page.label, format_size(f->stride_bytes, s1, sizeof(s1)),
			format_size(t->stride_bytes, s2, sizeof(s2)));
		if (st->huge == SIZE_MAX) {
			appendf(s, cap, "adds %.2f ns (%.1f cycles) per access, of which the translation part could not be "
				"told: no huge-page sweep to subtract (--pages %s,2m)", st->delta_ns, st->delta_cycles,
				f->page.label);
			continue;
		}
		const struct stride_step *h = &a->stride_steps[st->huge];
		double ratio = st->delta_ns != 0 ? st->delta_cycles / st->delta_ns : 0;
		if (st->tlb_ns > st->noise_ns)
			appendf(s, cap, "adds %.2f ns (%.1f cycles) of translation per access: %.2f ns on %s less the %+.2f ns "
				"the same step costs on %s pages, which have no TLB step there", st->tlb_ns, st->tlb_ns * ratio,
				st->delta_ns, f->page.label, h->delta_ns, res[h->from].spec.page.label);
		else
			appendf(s, cap, "adds %.2f ns per access, no more than the same step on %s pages (%.2f ns): no "
				"translation part beyond the noise", st->delta_ns, res[h->from].spec.page.label, h->delta_ns);
	}
	for (size_t i = 0; i < a->n_phases; i++) {
		const struct fault_metrics *fm = &a->phases[i].faults;
		if (!analysis_measured_ok(&res[i]) || !fm->valid)
			continue;
		appendf(s, cap, "%s%s on %s: %.0f ns per page", *s ? "; " : "", fault_case_name(res[i].spec.fault_case),
			res[i].spec.page.label, fm->ns_per_page.median);
		if (fm->ns_per_fault.n)
			appendf(s, cap, ", %.0f ns per fault, %.3g pages per fault", fm->ns_per_fault.median,
				fm->pages_per_fault.median);
		else
			appendf(s, cap, ", no faults");
	}
	if (a->n_knees) {
		appendf(s, cap, "%sknees at", *s ? "; " : "");
		for (size_t i = 0; i < a->n_knees; i++) {
			const struct tlb_knee *tk = &a->knees[i];
			const struct knee_capacity *c = tk->kind == KNEE_TLB ? &tk->tlb : &tk->cache;
			appendf(s, cap, "%s %.0f..%.0f pages (%.1f -> %.1f ns, %s", i ? "," : "", tk->knee.x_before,
				tk->knee.x_after, tk->knee.before_ns, tk->knee.after_ns,
				tk->kind == KNEE_UNKNOWN ? "unknown" : c->level);
			if (tk->kind == KNEE_CACHE)
				appendf(s, cap, " cache");
			appendf(s, cap, ")");
		}
	}
	if (!a->n_comparisons && !a->n_stride_steps && !a->n_knees)
		for (size_t i = 0; i < a->n_phases; i++) {
			const struct target_phase *tp = res[i].target;
			if (analysis_measured_ok(&res[i]) && !a->phases[i].faults.valid) {
				appendf(s, cap, "%s%s: %.1f ns per access", *s ? "; " : "", res[i].spec.name,
					a->phases[i].ns.median);
			} else if (res[i].status == PHASE_OK && tp && !res[i].n_samples && tp->n_wall) {
				/* A run phase without declared accesses: its wall time per occurrence. */
				struct stats_summary w;
				stats_summarize(tp->wall_ns, tp->n_wall, &w);
				/* Three significant digits in ms, or in s from a second on (%.3g would say 1e+03 ms). */
				bool secs = w.median >= 1e9;
				appendf(s, cap, "%s%s: %.3g %s%s", *s ? "; " : "", res[i].spec.name,
					secs ? w.median / 1e9 : w.median / 1e6, secs ? "s" : "ms",
					tp->n_wall > 1 ? " per occurrence (median)" : "");
			}
		}
	if (a->verdict == VERDICT_OK) {
		appendf(s, cap, "%sall checks passed", *s ? "; " : "");
		return;
	}
	append_checks(a, CHECK_FAIL, "check failed", "checks failed", s, cap);
	append_checks(a, CHECK_WARN, "warning", "warnings", s, cap);
}

/* The verdict (the worst check) and the plain-language summary, from the checks as they stand. */
void analysis_finish(const struct phase_result *results, struct analysis *out)
{
	out->verdict = VERDICT_OK;
	for (size_t i = 0; i < out->n_checks; i++) {
		if (out->checks[i].status == CHECK_FAIL)
			out->verdict = VERDICT_FAIL;
		else if (out->checks[i].status == CHECK_WARN && out->verdict == VERDICT_OK)
			out->verdict = VERDICT_WARN;
	}
	summarise(results, out);
}
