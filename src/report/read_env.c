/* SPDX-License-Identifier: MIT */
/* Read a saved report's environment back: the CPU, the kernel's settings, the clock, and the host facts. */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "report/internal.h"
#include "report/read_internal.h"

/* The features a report recorded (cpu.identification.features); none known in reports from before them. */
static void read_features(struct environment *env, json_t *cpu)
{
	json_t *id = json_object_get(cpu, "identification");
	json_t *list = json_is_object(id) ? json_object_get(id, "features") : NULL;

	env->features_known = json_is_array(list);
	env->cpu_features = 0;
	for (size_t i = 0; env->features_known && i < json_array_size(list); i++) {
		const char *name = json_string_value(json_array_get(list, i));
		for (int f = 0; name && f < CPU_FEATURES; f++)
			if (strcmp(name, cpu_feature_name((enum cpu_feature)f)) == 0)
				env->cpu_features |= CPU_BIT(f);
	}
}

/* An optional count: null or absent leaves *known false; anything but a non-negative integer is an error. */
static int opt_count(struct reader *rd, json_t *o, const char *key, const char *where, bool *known, uint64_t *v)
{
	json_t *j = json_object_get(o, key);

	*known = false;
	*v = 0;
	if (!j || json_is_null(j))
		return 0;
	if (rd_get_u64(rd, o, key, where, v))
		return -EINVAL;
	*known = true;
	return 0;
}

static int read_host_snapshot(struct reader *rd, json_t *h, const char *key, struct host_snapshot *s)
{
	char where[48];
	json_t *o;
	bool steal_known;

	snprintf(where, sizeof(where), "environment.host");
	if (rd_get_obj(rd, h, key, where, &o))
		return -EINVAL;
	snprintf(where, sizeof(where), "environment.host.%s", key);
	if (opt_count(rd, o, "total_ticks", where, &s->stat_known, &s->total_ticks) ||
	    opt_count(rd, o, "steal_ticks", where, &steal_known, &s->steal_ticks) ||
	    opt_count(rd, o, "full_scans", where, &s->khugepaged_present, &s->full_scans) ||
	    opt_count(rd, o, "pages_collapsed", where, &s->collapsed_known, &s->pages_collapsed))
		return -EINVAL;
	s->stat_known = s->stat_known && steal_known;
	rd_copy_str(s->khugepaged_why, sizeof(s->khugepaged_why), o, "khugepaged_reason");
	return 0;
}

static int read_host_damon(struct reader *rd, json_t *h, const char *key, struct host_damon *d)
{
	char where[48];
	json_t *o, *actions;

	if (rd_get_obj(rd, h, key, "environment.host", &o))
		return -EINVAL;
	snprintf(where, sizeof(where), "environment.host.%s", key);
	d->present = json_is_true(json_object_get(o, "present"));
	rd_copy_str(d->why, sizeof(d->why), o, "reason");
	d->kdamonds = rd_opt_uint(o, "kdamonds");
	d->running = rd_opt_uint(o, "running");
	d->schemes_active = rd_opt_uint(o, "schemes_active");
	actions = json_object_get(o, "actions");
	if (!json_is_array(actions))
		return rd_bad(rd, "%s.actions: missing or not an array", where);
	for (size_t i = 0; i < json_array_size(actions); i++) {
		json_t *a = json_array_get(actions, i);
		size_t len = strlen(d->actions);
		if (!json_is_string(a))
			return rd_bad(rd, "%s.actions[%zu]: not a string", where, i);
		snprintf(d->actions + len, sizeof(d->actions) - len, "%s%s", len ? "," : "", json_string_value(a));
	}
	return 0;
}

/* The host facts of a measuring run (environment.host); a report from before them has none: not recorded. */
static int read_host(struct reader *rd, json_t *h, struct host_facts *out)
{
	if (!json_is_object(h))
		return rd_bad(rd, "environment.host: not an object");
	if (read_host_snapshot(rd, h, "before", &out->before) || read_host_snapshot(rd, h, "after", &out->after) ||
	    read_host_damon(rd, h, "damon_before", &out->damon_before) ||
	    read_host_damon(rd, h, "damon_after", &out->damon_after))
		return -EINVAL;
	out->recorded = true;
	return 0;
}

int rd_environment(struct reader *rd, json_t *root)
{
	struct environment *env = &rd->doc->env;
	struct timing_calibration *clk = &rd->doc->clock;
	json_t *e, *cpu, *v;
	int rc;

	if ((rc = rd_get_obj(rd, root, "environment", "report", &e)) || (rc = rd_get_obj(rd, e, "cpu", "environment", &cpu)))
		return rc;
	rd_copy_str(env->cpu_vendor, sizeof(env->cpu_vendor), cpu, "vendor");
	rd_copy_str(env->cpu_model_name, sizeof(env->cpu_model_name), cpu, "model_name");
	rd_copy_str(env->core_name, sizeof(env->core_name), cpu, "core");
	rd_copy_str(rd->doc->pmu_name, sizeof(rd->doc->pmu_name), cpu, "pmu");
	env->cpu_family = rd_opt_uint(cpu, "family");
	env->cpu_model = rd_opt_uint(cpu, "model");
	env->cpu_stepping = rd_opt_uint(cpu, "stepping");
	env->logical_cpus = (int)rd_opt_uint(cpu, "logical_cpus");
	env->l1_latency_cycles = rd_opt_uint(cpu, "l1_latency_cycles");
	json_t *caches = json_object_get(cpu, "caches");
	for (size_t i = 0; json_is_array(caches) && i < json_array_size(caches) && env->n_caches < ENV_MAX_CACHES; i++) {
		json_t *c = json_array_get(caches, i);
		struct env_cache *ec = &env->caches[env->n_caches];
		if (!json_is_object(c))
			return rd_bad(rd, "environment.cpu.caches[%zu]: not an object", i);
		ec->level = rd_opt_uint(c, "level");
		rd_copy_str(ec->type, sizeof(ec->type), c, "type");
		v = json_object_get(c, "size_bytes");
		ec->size_bytes = json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
		ec->ways = rd_opt_uint(c, "ways");
		ec->line_bytes = rd_opt_uint(c, "line_bytes");
		ec->sets = rd_opt_uint(c, "sets");
		env->n_caches++;
	}
	json_t *tlb = json_object_get(e, "tlb");
	if (json_is_object(tlb)) {
#define TLB_FIELD(f) env->tlb.f = rd_opt_uint(tlb, #f);
		ENV_TLB_FIELDS(TLB_FIELD)
#undef TLB_FIELD
		rd_copy_str(env->tlb.source, sizeof(env->tlb.source), tlb, "source");
	}
	rd_copy_str(env->kernel, sizeof(env->kernel), e, "kernel");
	rd_copy_str(env->hypervisor, sizeof(env->hypervisor), e, "hypervisor");
	if ((rc = rd_first_access(rd, e, "environment", &env->first_access.pages, &env->first_access.ns_per_page)))
		return rc;
	json_t *thp = json_object_get(e, "thp");
	if (json_is_object(thp)) {
		rd_copy_str(env->thp_enabled, sizeof(env->thp_enabled), thp, "enabled");
		rd_copy_str(env->thp_defrag, sizeof(env->thp_defrag), thp, "defrag");
	}
	json_t *freq = json_object_get(e, "cpufreq");
	env->turbo = -1;
	if (json_is_object(freq)) {
		rd_copy_str(env->cpufreq_driver, sizeof(env->cpufreq_driver), freq, "driver");
		rd_copy_str(env->cpufreq_governor, sizeof(env->cpufreq_governor), freq, "governor");
		v = json_object_get(freq, "turbo");
		if (json_is_boolean(v))
			env->turbo = json_is_true(v);
	}
	/* Hugetlb pools (tlbprof compare says when the page sizes available differ); the analysis does not use them. */
	json_t *pools = json_object_get(e, "hugepages"), *pv;
	const char *key;
	if (json_is_object(pools)) {
		json_object_foreach(pools, key, pv) {
			v = json_object_get(pv, "page_bytes");
			if (env->n_pools >= ENV_MAX_POOLS || !json_is_integer(v) || json_integer_value(v) <= 0)
				continue;
			struct env_hugepool *hp = &env->pools[env->n_pools++];
			hp->page_bytes = (uint64_t)json_integer_value(v);
			hp->nr = rd_opt_long(pv, "nr");
			hp->free = rd_opt_long(pv, "free");
			hp->resv = rd_opt_long(pv, "resv");
			hp->surplus = rd_opt_long(pv, "surplus");
		}
	}
	v = json_object_get(e, "perf_event_paranoid");
	env->perf_event_paranoid = json_is_integer(v) ? (int)json_integer_value(v) : INT32_MIN;

	if ((rc = rd_get_num(rd, e, "core_clock_ghz", "environment", true, 0, &clk->core_clock_ghz)) ||
	    (rc = rd_get_num(rd, e, "clock_overhead_ns", "environment", false, 0, &clk->clock_overhead_ns)))
		return rc;
	clk->core_clock_method = clk->core_clock_ghz > 0 ? "dependent_add_chain" : "unavailable";
	json_t *cc = json_object_get(e, "core_clock");
	if (json_is_object(cc)) {
		rd_get_num(rd, cc, "rel_spread", "environment.core_clock", true, 0, &clk->core_clock_spread);
		rd_get_num(rd, cc, "clock_resolution_ns", "environment.core_clock", true, 0, &clk->clock_resolution_ns);
		clk->core_clock_runs = rd_opt_uint(cc, "runs");
		rd_get_num(rd, cc, "add_imm_per_cycle", "environment.core_clock", true, 0, &clk->add_imm_per_cycle);
		if ((rc = rd_get_num(rd, cc, "end_ghz", "environment.core_clock", true, 0, &clk->core_clock_end_ghz)) ||
		    (rc = rd_get_num(rd, cc, "end_rel_spread", "environment.core_clock", true, 0,
				  &clk->core_clock_end_spread)))
			return rc;
	}
	json_t *host = json_object_get(e, "host");
	if (host && !json_is_null(host) && (rc = read_host(rd, host, &env->host)))
		return rc;
	read_features(env, cpu);
	/* The core again, with this tlbprof's table: a report from an older one keeps its evidence, not its verdict. */
	environment_identify_core(env, clk->add_imm_per_cycle);
	return 0;
}
