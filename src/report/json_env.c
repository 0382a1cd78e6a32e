/* SPDX-License-Identifier: MIT */
/* The report's environment: the CPU and the documented core it is, the kernel's settings, the clock, the host facts. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "parse.h"
#include "report/internal.h"
#include "report/report.h"

/* Which documented core this is and why, the features that told, and the row's TLB (what expectations rest on). */
static json_t *core_identification_json(const struct environment *env)
{
	json_t *id = json_object(), *features = json_array(), *tlb = json_null();
	const struct core_row *r = env->core.row;

	for (int f = 0; env->features_known && f < CPU_FEATURES; f++)
		if (env->cpu_features & CPU_BIT(f))
			json_array_append_new(features, json_string(cpu_feature_name((enum cpu_feature)f)));
	json_object_set_new(id, "basis", json_string(env->core.basis ? env->core.basis : "none"));
	json_object_set_new(id, "masked", json_boolean(env->core.masked));
	json_object_set_new(id, "evidence", report_json_str_or_null(env->core.evidence));
	json_object_set_new(id, "features", env->features_known ? features : (json_decref(features), json_null()));
	if (r)
		tlb = json_pack("{s:i, s:i, s:i, s:i, s:i, s:o, s:s}", "l1d_4k_entries", (int)r->l1d_4k,
				"l1d_2m_entries", (int)r->l1d_2m, "l1d_1g_entries", (int)r->l1d_1g, "l2d_4k_entries",
				(int)r->l2_4k, "l2d_2m_entries", (int)r->l2_2m, "l2d_1g_entries",
				r->l2_1g ? json_integer(r->l2_1g) : json_null(), "source", r->source);
	json_object_set_new(id, "documented_tlb", tlb);
	return id;
}

static json_t *u64_or_null(bool known, uint64_t v)
{
	return known ? json_integer((json_int_t)v) : json_null();
}

/* One moment's host facts: /proc/stat ticks and khugepaged's counters, null where unread (with why). */
static json_t *host_snapshot_json(const struct host_snapshot *h)
{
	json_t *o = json_object();

	json_object_set_new(o, "total_ticks", u64_or_null(h->stat_known, h->total_ticks));
	json_object_set_new(o, "steal_ticks", u64_or_null(h->stat_known, h->steal_ticks));
	json_object_set_new(o, "full_scans", u64_or_null(h->khugepaged_present, h->full_scans));
	json_object_set_new(o, "pages_collapsed", u64_or_null(h->collapsed_known, h->pages_collapsed));
	json_object_set_new(o, "khugepaged_reason", report_json_str_or_null(h->khugepaged_why));
	return o;
}

static json_t *host_damon_json(const struct host_damon *d)
{
	json_t *o = json_object(), *actions = json_array();
	char list[sizeof(d->actions)], *save = NULL;

	snprintf(list, sizeof(list), "%s", d->actions);
	for (char *a = strtok_r(list, ",", &save); a; a = strtok_r(NULL, ",", &save))
		json_array_append_new(actions, json_string(a));
	json_object_set_new(o, "present", json_boolean(d->present));
	json_object_set_new(o, "reason", report_json_str_or_null(d->why));
	json_object_set_new(o, "kdamonds", json_integer(d->kdamonds));
	json_object_set_new(o, "running", json_integer(d->running));
	json_object_set_new(o, "schemes_active", json_integer(d->schemes_active));
	json_object_set_new(o, "actions", actions);
	return o;
}

/* The host facts of a measuring run: both moments, and what moved between them (null: could not tell). */
static json_t *host_json(const struct host_facts *h)
{
	json_t *o = json_object();
	double share;
	uint64_t scans, collapsed;
	bool collapsed_known, known = host_khugepaged_delta(h, &scans, &collapsed, &collapsed_known);

	json_object_set_new(o, "before", host_snapshot_json(&h->before));
	json_object_set_new(o, "after", host_snapshot_json(&h->after));
	json_object_set_new(o, "steal_share", host_steal_share(h, &share) ? report_json_num(share) : json_null());
	json_object_set_new(o, "khugepaged_full_scans", u64_or_null(known, scans));
	json_object_set_new(o, "khugepaged_pages_collapsed", u64_or_null(known && collapsed_known, collapsed));
	json_object_set_new(o, "damon_before", host_damon_json(&h->damon_before));
	json_object_set_new(o, "damon_after", host_damon_json(&h->damon_after));
	return o;
}

json_t *report_first_access_json(uint64_t pages, double ns_per_page)
{
	return pages ? json_pack("{s:I, s:o}", "pages", (json_int_t)pages, "ns_per_page", report_json_num(ns_per_page))
		     : json_null();
}

json_t *report_environment_json(const struct environment *env, const struct timing_calibration *clk,
				const char *pmu_name)
{
	json_t *e = json_object(), *cpu = json_object(), *caches = json_array(), *tlb = json_object();
	json_t *thp = json_object(), *pools = json_object(), *build = json_object(), *clock = json_object();

	json_object_set_new(cpu, "vendor", report_json_str_or_null(env->cpu_vendor));
	json_object_set_new(cpu, "model_name", report_json_str_or_null(env->cpu_model_name));
	json_object_set_new(cpu, "family", json_integer(env->cpu_family));
	json_object_set_new(cpu, "model", json_integer(env->cpu_model));
	json_object_set_new(cpu, "stepping", json_integer(env->cpu_stepping));
	json_object_set_new(cpu, "logical_cpus", json_integer(env->logical_cpus));
	json_object_set_new(cpu, "pmu", json_string(pmu_name ? pmu_name : "none"));
	json_object_set_new(cpu, "pmu_basis", report_json_str_or_null(env->pmu_basis));
	json_object_set_new(cpu, "core", report_json_str_or_null(env->core_name));
	json_object_set_new(cpu, "l1_latency_cycles",
			    env->l1_latency_cycles ? json_integer(env->l1_latency_cycles) : json_null());
	json_object_set_new(cpu, "identification", core_identification_json(env));
	for (size_t i = 0; i < env->n_caches; i++) {
		const struct env_cache *c = &env->caches[i];
		json_array_append_new(caches, json_pack("{s:i, s:s, s:I, s:i, s:i, s:i}", "level", (int)c->level,
							"type", c->type, "size_bytes", (json_int_t)c->size_bytes,
							"ways", (int)c->ways, "line_bytes", (int)c->line_bytes,
							"sets", (int)c->sets));
	}
	json_object_set_new(cpu, "caches", caches);
/* 0 means CPUID did not say (KVM often zeroes leaf 0x18): null, never a TLB of 0 entries. */
#define TLB_FIELD(f) json_object_set_new(tlb, #f, env->tlb.f ? json_integer(env->tlb.f) : json_null());
	ENV_TLB_FIELDS(TLB_FIELD)
#undef TLB_FIELD
	json_object_set_new(tlb, "source", report_json_str_or_null(env->tlb.source));
	/* Reach: entries x page size per level, the table people draw by hand; null where CPUID is silent. */
	json_t *reach = json_object();
	const struct {
		const char *key;
		unsigned entries;
		uint64_t page;
	} reaches[] = {
		{ "l1d_4k_bytes", env->tlb.l1d_4k_entries, 4096ull },
		{ "l1d_2m_bytes", env->tlb.l1d_2m_entries, 2ull << 20 },
		{ "l1d_1g_bytes", env->tlb.l1d_1g_entries, 1ull << 30 },
		{ "l2d_4k_bytes", env->tlb.l2d_4k_entries, 4096ull },
		{ "l2d_2m_bytes", env->tlb.l2d_2m_entries, 2ull << 20 },
		{ "l2d_1g_bytes", env->tlb.l2d_1g_entries, 1ull << 30 },
	};
	for (size_t i = 0; i < sizeof(reaches) / sizeof(reaches[0]); i++)
		json_object_set_new(reach, reaches[i].key,
				    reaches[i].entries ? json_integer((json_int_t)(reaches[i].entries * reaches[i].page))
						       : json_null());
	json_object_set_new(e, "cpu", cpu);
	json_object_set_new(e, "tlb", tlb);
	json_object_set_new(e, "tlb_reach", reach);
	json_object_set_new(e, "kernel", report_json_text(env->kernel));
	json_object_set_new(thp, "enabled", report_json_str_or_null(env->thp_enabled));
	json_object_set_new(thp, "defrag", report_json_str_or_null(env->thp_defrag));
	json_object_set_new(e, "thp", thp);
	json_object_set_new(e, "cpufreq", json_pack("{s:o, s:o, s:o}", "driver", report_json_str_or_null(env->cpufreq_driver),
						     "governor", report_json_str_or_null(env->cpufreq_governor), "turbo",
						     env->turbo < 0 ? json_null() : json_boolean(env->turbo)));
	for (size_t i = 0; i < env->n_pools; i++) {
		const struct env_hugepool *p = &env->pools[i];
		char key[SIZE_TEXT];
		format_size(p->page_bytes, key, sizeof(key));
		json_object_set_new(pools, key, json_pack("{s:I, s:I, s:I, s:I, s:I}", "page_bytes",
							  (json_int_t)p->page_bytes, "nr", (json_int_t)p->nr, "free",
							  (json_int_t)p->free, "resv", (json_int_t)p->resv, "surplus",
							  (json_int_t)p->surplus));
	}
	json_object_set_new(e, "hugepages", pools);
	json_object_set_new(e, "fault_around_bytes",
			    env->fault_around_bytes >= 0 ? json_integer(env->fault_around_bytes) : json_null());
	json_object_set_new(e, "perf_event_paranoid",
			    env->perf_event_paranoid == INT32_MIN ? json_null() : json_integer(env->perf_event_paranoid));
	json_object_set_new(e, "hypervisor", report_json_str_or_null(env->hypervisor));
	json_object_set_new(e, "first_access", report_first_access_json(env->first_access.pages,
									 env->first_access.ns_per_page));
	json_object_set_new(e, "core_clock_ghz", clk->core_clock_ghz > 0 ? report_json_num(clk->core_clock_ghz) : json_null());
	json_object_set_new(e, "clock_overhead_ns", report_json_num(clk->clock_overhead_ns));
	json_object_set_new(clock, "method", report_json_text(clk->core_clock_method));
	json_object_set_new(clock, "runs", json_integer(clk->core_clock_runs));
	json_object_set_new(clock, "rel_spread", report_json_num(clk->core_clock_spread));
	json_object_set_new(clock, "clock_resolution_ns", report_json_num(clk->clock_resolution_ns));
	json_object_set_new(clock, "add_imm_per_cycle",
			    clk->add_imm_per_cycle > 0 ? report_json_num(clk->add_imm_per_cycle) : json_null());
	double ratio = timing_clock_ratio(clk);
	json_object_set_new(clock, "end_ghz", clk->core_clock_end_ghz > 0 ? report_json_num(clk->core_clock_end_ghz) : json_null());
	json_object_set_new(clock, "end_rel_spread",
			    clk->core_clock_end_ghz > 0 ? report_json_num(clk->core_clock_end_spread) : json_null());
	json_object_set_new(clock, "end_ratio", ratio > 0 ? report_json_num(ratio) : json_null());
	json_object_set_new(e, "core_clock", clock);
	if (env->host.recorded)
		json_object_set_new(e, "host", host_json(&env->host));
	json_object_set_new(build, "compiler", report_json_str_or_null(env->compiler));
	json_object_set_new(build, "flags", report_json_str_or_null(env->build_flags));
	json_object_set_new(build, "buildtype", report_json_str_or_null(env->build_type));
	json_object_set_new(e, "build", build);
	return e;
}
