/* SPDX-License-Identifier: MIT */
/* What differs between two reports besides their samples: each matched phase's parameters, the environment facts. */
#include "judge/compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "parse.h"

/* ---- parameters ---- */

static void param_diff(struct compare_phase *cp, const char *param, const char *b, const char *n)
{
	if (strcmp(b, n) == 0 || cp->n_params >= COMPARE_MAX_PARAM_DIFFS)
		return;
	struct compare_param_diff *d = &cp->params[cp->n_params++];
	snprintf(d->param, sizeof(d->param), "%s", param);
	snprintf(d->base, sizeof(d->base), "%s", b);
	snprintf(d->new, sizeof(d->new), "%s", n);
}

static void param_u64(struct compare_phase *cp, const char *param, uint64_t b, uint64_t n)
{
	char sb[24], sn[24];

	snprintf(sb, sizeof(sb), "%llu", (unsigned long long)b);
	snprintf(sn, sizeof(sn), "%llu", (unsigned long long)n);
	param_diff(cp, param, sb, sn);
}

static const char *cpu_text(int cpu, char *buf, size_t len)
{
	if (cpu < 0)
		snprintf(buf, len, "not pinned");
	else
		snprintf(buf, len, "%d", cpu);
	return buf;
}

void compare_parameters(const struct phase_result *b, const struct phase_result *n, struct compare_phase *cp)
{
	const struct phase_spec *sb = &b->spec, *sn = &n->spec;
	char x[48], y[48];

	cp->n_params = 0;
	param_diff(cp, "page", sb->page.label, sn->page.label);
	param_diff(cp, "layout", layout_name(sb->layout), layout_name(sn->layout));
	param_u64(cp, "stride_bytes", sb->stride_bytes, sn->stride_bytes);
	param_diff(cp, "iterations_mode", sb->iterations_auto ? "auto" : "fixed", sn->iterations_auto ? "auto" : "fixed");
	/* Auto mode sizes its batches to the clock on each run: only fixed counts are parameters. */
	if (!sb->iterations_auto && !sn->iterations_auto && !b->target && !n->target)
		param_u64(cp, "iterations", sb->iterations, sn->iterations);
	if (!b->target && !n->target)
		param_u64(cp, "repeat", sb->repeat, sn->repeat);
	param_u64(cp, "allocations", sb->allocations ? sb->allocations : 1, sn->allocations ? sn->allocations : 1);
	param_diff(cp, "cpu", cpu_text(sb->cpu, x, sizeof(x)), cpu_text(sn->cpu, y, sizeof(y)));
	param_u64(cp, "processes", sb->processes ? sb->processes : 1, sn->processes ? sn->processes : 1);
	/* What a tlbprof run phase declared: the figures ns per access and the checks rest on. */
	if (b->target || n->target) {
		param_u64(cp, "declared.accesses", sb->accesses_total, sn->accesses_total);
		param_u64(cp, "declared.region", b->target ? b->target->region_bytes : 0,
			  n->target ? n->target->region_bytes : 0);
		param_u64(cp, "declared.timings", sb->timings, sn->timings);
		param_diff(cp, "declared.kind", sb->throughput ? "throughput" : "latency",
			   sn->throughput ? "throughput" : "latency");
	}
}

/* ---- environment ---- */

static void env_diff(struct compare_result *out, const char *field, const char *b, const char *n)
{
	if (strcmp(b, n) == 0 || out->n_env >= COMPARE_MAX_ENV_DIFFS)
		return;
	struct compare_env_diff *d = &out->env[out->n_env++];
	snprintf(d->field, sizeof(d->field), "%s", field);
	snprintf(d->base, sizeof(d->base), "%s", b);
	snprintf(d->new, sizeof(d->new), "%s", n);
}

static const char *or_unknown(const char *s)
{
	return s && *s ? s : "unknown";
}

/* Whether a hugetlb pool of page_bytes holds pages, and in words how it stands. */
static bool pool_state(const struct environment *env, uint64_t page_bytes, char *buf, size_t len)
{
	const struct env_hugepool *p = environment_pool(env, page_bytes);

	if (!p || p->nr <= 0) {
		snprintf(buf, len, "not available (%s)", p ? "empty pool" : "no pool");
		return false;
	}
	snprintf(buf, len, "available (%ld page%s)", p->nr, p->nr == 1 ? "" : "s");
	return true;
}

/*
 * The first write to populated memory (environment.first_access), in words:
 * a trap a page (shadow paging) or a TLB miss. Only a change of kind is
 * another machine state, and only where both sides measured it.
 */
static bool first_access_trap(const struct environment *e, char *buf, size_t len)
{
	bool trap = env_shadow_paging(e);

	snprintf(buf, len, "%.0f ns a page: %s", e->first_access.ns_per_page,
		 trap ? "a trap each (shadow paging)" : "a TLB miss");
	return trap;
}

void compare_environments(const struct compare_side *base, const struct compare_side *new, struct compare_result *out)
{
	const struct environment *eb = base->env, *en = new->env;
	double gb = base->clock ? base->clock->core_clock_ghz : 0, gn = new->clock ? new->clock->core_clock_ghz : 0;
	char b[64], n[64];

	out->n_env = 0;
	env_diff(out, "cpu.model_name", or_unknown(eb->cpu_model_name), or_unknown(en->cpu_model_name));
	env_diff(out, "kernel", or_unknown(eb->kernel), or_unknown(en->kernel));
	env_diff(out, "thp.enabled", or_unknown(eb->thp_enabled), or_unknown(en->thp_enabled));
	env_diff(out, "thp.defrag", or_unknown(eb->thp_defrag), or_unknown(en->thp_defrag));
	env_diff(out, "hypervisor", *eb->hypervisor ? eb->hypervisor : "none", *en->hypervisor ? en->hypervisor : "none");
	env_diff(out, "cpu.pmu", or_unknown(base->pmu_name), or_unknown(new->pmu_name));
	env_diff(out, "cpufreq.governor", or_unknown(eb->cpufreq_governor), or_unknown(en->cpufreq_governor));
	/* The clock is a measurement: only a difference beyond its own noise is a different machine state. */
	if (gb > 0 && gn > 0 ? fabs(gn / gb - 1) > COMPARE_CLOCK_TOLERANCE : (gb > 0) != (gn > 0)) {
		snprintf(b, sizeof(b), gb > 0 ? "%.2f GHz" : "not calibrated", gb);
		snprintf(n, sizeof(n), gn > 0 ? "%.2f GHz" : "not calibrated", gn);
		env_diff(out, "core_clock_ghz", b, n);
	}
	if (eb->first_access.pages && en->first_access.pages &&
	    first_access_trap(eb, b, sizeof(b)) != first_access_trap(en, n, sizeof(n)))
		env_diff(out, "first_access", b, n);
	/* Page sizes: a hugetlb pool that holds pages on one side only changes what could be measured. */
	const struct environment *sides[] = { eb, en };
	for (size_t s = 0; s < 2; s++) {
		for (size_t i = 0; i < sides[s]->n_pools; i++) {
			uint64_t bytes = sides[s]->pools[i].page_bytes;
			char field[32], sz[SIZE_TEXT];
			if (s == 1 && environment_pool(eb, bytes))
				continue;	/* already compared from the base side */
			/* Only availability matters: 512 pages against 1024 measure the same page size. */
			if (pool_state(eb, bytes, b, sizeof(b)) == pool_state(en, bytes, n, sizeof(n)))
				continue;
			snprintf(field, sizeof(field), "hugepages.%s", format_size(bytes, sz, sizeof(sz)));
			env_diff(out, field, b, n);
		}
	}
}
