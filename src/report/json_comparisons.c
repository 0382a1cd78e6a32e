/* SPDX-License-Identifier: MIT */
/* The report's comparisons: each page size against the smallest, its attribution and how far it can be trusted. */
#include <jansson.h>
#include <math.h>
#include <stddef.h>

#include "report/internal.h"

/* A value that is meaningful only when positive (a clock, a count), else null. */
static json_t *positive(double v)
{
	return v > 0 ? report_json_num(v) : json_null();
}

/* The baseline's translation share: proven, or the range between the defensible estimates; null when none. */
static json_t *translation_json(const struct comparison *c, const struct phase_result *ph)
{
	const struct translation_share *t = &c->translation;

	if (!t->known)
		return json_null();
	return json_pack("{s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:o}", "lo_ns", report_json_num(t->lo_ns), "hi_ns",
			 isfinite(t->hi_ns) ? report_json_num(t->hi_ns) : json_null(), "proven", t->proven, "lo_basis",
			 report_json_text(t->lo_basis), "hi_basis", t->hi_basis ? report_json_text(t->hi_basis) : json_null(),
			 "walk_free_phase", t->free_phase != SIZE_MAX ? report_json_text(ph[t->free_phase].spec.name) : json_null(),
			 "control_vs_walk_free_ns", isfinite(t->control_vs_free_ns) ? report_json_num(t->control_vs_free_ns) : json_null(),
			 "evidence", report_json_text(t->evidence));
}

/* delta_ns split by cause, with what the parts were judged against and what the method cannot see. */
static json_t *attribution_json(const struct comparison *c)
{
	json_t *o = json_pack("{s:o, s:o, s:o}", "tlb_ns", report_json_num(c->tlb_ns), "cache_ns", report_json_num(c->cache_ns),
			      "unexplained_ns", report_json_num(c->unexplained_ns));

	json_object_set_new(o, "stlb_ns", c->have_stlb_hits ? report_json_num(c->stlb_ns) : json_null());
	json_object_set_new(o, "llc_change", c->llc_change ? json_string(c->llc_change) : json_null());
	json_object_set_new(o, "llc_cache_bound_ns", c->llc_change ? report_json_num(c->llc_cache_bound_ns) : json_null());
	json_object_set_new(o, "noise_ns", report_json_num(c->noise_ns));
	json_object_set_new(o, "adds_up", c->adds_up < 0 ? json_null() : json_boolean(c->adds_up));
	json_object_set_new(o, "inconsistency", *c->inconsistency ? report_json_text(c->inconsistency) : json_null());
	json_object_set_new(o, "cannot_see", report_json_text(c->cannot_see));
	return o;
}

json_t *report_comparisons_json(const struct analysis *a, const struct phase_result *ph)
{
	json_t *cmps = json_array();

	for (size_t i = 0; i < a->n_comparisons; i++) {
		const struct comparison *c = &a->comparisons[i];
		json_t *j = json_object();
		json_object_set_new(j, "baseline", report_json_text(ph[c->baseline].spec.name));
		json_object_set_new(j, "variant", report_json_text(ph[c->variant].spec.name));
		json_object_set_new(j, "size_bytes", json_integer((json_int_t)ph[c->variant].spec.size_bytes));
		json_object_set_new(j, "delta_ns", report_json_num(c->delta_ns));
		json_object_set_new(j, "speedup", report_json_num(c->speedup));
		json_object_set_new(j, "speedup_interval",
				    c->interval_known && isfinite(c->speedup_lo) && isfinite(c->speedup_hi)
					    ? json_pack("{s:o, s:o, s:f, s:s}", "lo", report_json_num(c->speedup_lo), "hi",
							report_json_num(c->speedup_hi), "level", 0.95, "method",
							"hierarchical bootstrap: allocations, then samples")
					    : json_null());
		json_object_set_new(j, "halfwidth_ns", json_pack("{s:o, s:o}", "baseline", report_json_num(c->baseline_halfwidth_ns),
								 "variant", report_json_num(c->variant_halfwidth_ns)));
		json_object_set_new(j, "comparable", json_boolean(c->comparable));
		json_object_set_new(j, "doubt", *c->doubt ? report_json_text(c->doubt) : json_null());
		json_object_set_new(j, "delta_tlb_misses_per_access",
				    c->have_tlb_counts ? report_json_num(c->delta_tlb_misses_per_access) : json_null());
		json_object_set_new(j, "ns_per_tlb_miss", c->ns_per_tlb_miss > 0 ? report_json_num(c->ns_per_tlb_miss) : json_null());
		json_object_set_new(j, "cycles_per_tlb_miss",
				    c->cycles_per_tlb_miss > 0 ? report_json_num(c->cycles_per_tlb_miss) : json_null());
		json_object_set_new(j, "attribution", attribution_json(c));
		json_object_set_new(j, "cycles_per_walk", json_pack("{s:o, s:o}", "baseline",
								    report_json_num(c->baseline_cycles_per_walk), "variant",
								    report_json_num(c->variant_cycles_per_walk)));
		json_object_set_new(j, "clock_ghz", json_pack("{s:o, s:o, s:b}", "baseline", positive(c->baseline_clock_ghz),
							      "variant", positive(c->variant_clock_ghz), "counted",
							      c->clock_counted));
		json_object_set_new(j, "method", report_json_text(c->method));
		json_object_set_new(j, "walk_cycles", json_boolean(c->have_walk_cycles));
		json_object_set_new(j, "baseline_translation_ns", c->has_control ? report_json_num(c->baseline_translation_ns) : json_null());
		json_object_set_new(j, "variant_translation_ns", c->has_control ? report_json_num(c->variant_translation_ns) : json_null());
		json_object_set_new(j, "translation", translation_json(c, ph));
		json_object_set_new(j, "assumption", report_json_text(c->assumption));
		json_array_append_new(cmps, j);
	}
	return cmps;
}
