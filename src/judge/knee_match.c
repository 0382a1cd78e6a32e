/* SPDX-License-Identifier: MIT */
/*
 * The knees of a tlbsize curve, and what each one is: a TLB filling, a cache
 * filling, or something the geometry cannot tell.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/analysis_internal.h"
#include "machine/cores.h"
#include "measure/workload.h"

enum { MAX_KNEES = 16, MAX_CURVE = 1024 };

/*
 * Cache lines that one page of the tlbsize chase occupies: its one data line,
 * and an eighth of the line that holds its page-table entry (8 entries of 8
 * bytes per line, for consecutive pages; the levels above are 1/512 of that).
 */
static const double LINES_PER_PAGE = 1.0 + 1.0 / 8;
/*
 * How far below its capacity a cache may start to rise. The L1D is indexed
 * by address bits inside the page, which the colored layout spreads evenly:
 * it fills within the grid's resolution, like a TLB. L2 and L3 are indexed
 * by physical bits the kernel chose at random, so the pages fall into their
 * sets unevenly and misses begin well before the capacity (the development
 * VM's 1.25 MiB L2 rose from 0.3-0.7 of its 18204 pages); they also hold the
 * page tables' upper levels, code and the other core's lines.
 */
static const double L1_EARLY = 1 - KNEE_MATCH_TOLERANCE;
static const double OUTER_EARLY = 0.35;

static int cmp_knee_point(const void *pa, const void *pb)
{
	double x = ((const struct knee_point *)pa)->x, y = ((const struct knee_point *)pb)->x;

	return (x > y) - (x < y);
}

/*
 * Distance of capacity e (in pages) from the knee's rise [x_before, x_after],
 * relative to e: 0 inside it, negative when the rise ends before e, positive
 * when it starts after. The capacity lies where the rise happens: a
 * set-associative structure starts missing before it is full.
 */
static double rise_error(const struct knee *k, double e)
{
	if (e > k->x_after)
		return (k->x_after - e) / e;
	if (e < k->x_before)
		return (k->x_before - e) / e;
	return 0;
}

/* Keep cap in *best when it is nearer to the knee than what *best holds. */
static void keep_nearer(struct knee_capacity *best, const struct knee_capacity *cap)
{
	if (!best->level || fabs(cap->relative_error) < fabs(best->relative_error))
		*best = *cap;
}

/* The CPUID level nearest the knee, as reports have always carried it (analysis.knees[].cpuid). */
static void match_cpuid(struct tlb_knee *tk, const struct environment *env)
{
	const struct {
		const char *level;
		unsigned entries;
	} caps[] = {
		{ "l1d_4k_entries", env ? env->tlb.l1d_4k_entries : 0 },
		{ "l2d_4k_entries", env ? env->tlb.l2d_4k_entries : 0 },
	};

	for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		if (!caps[c].entries)
			continue;
		double err = rise_error(&tk->knee, caps[c].entries);
		if (!tk->cpuid_level || fabs(err) < fabs(tk->relative_error)) {
			tk->cpuid_level = caps[c].level;
			tk->cpuid_entries = caps[c].entries;
			tk->relative_error = err;
		}
	}
	tk->matches = tk->cpuid_level && fabs(tk->relative_error) <= KNEE_MATCH_TOLERANCE;
}

/*
 * The TLB level nearest the knee, from the TLB expectations rest on (CPUID's,
 * else the documented core's): it fits within KNEE_MATCH_TOLERANCE either way.
 */
static void match_tlb(struct tlb_knee *tk, const struct env_tlb *tlb)
{
	const struct {
		const char *level;
		unsigned entries;
	} caps[] = {
		{ "L1 dTLB", tlb ? tlb->l1d_4k_entries : 0 },
		{ "L2 TLB", tlb ? tlb->l2d_4k_entries : 0 },
	};

	for (size_t c = 0; tlb && c < sizeof(caps) / sizeof(caps[0]); c++) {
		if (!caps[c].entries)
			continue;
		struct knee_capacity cap = {
			.level = caps[c].level,
			.count = caps[c].entries,
			.pages = caps[c].entries,
			.source = tlb->source,
			.relative_error = rise_error(&tk->knee, caps[c].entries),
		};
		cap.fits = fabs(cap.relative_error) <= KNEE_MATCH_TOLERANCE;
		keep_nearer(&tk->tlb, &cap);
	}
}

/* Whether the OS reported any data cache size (sysfs, or CPUID's cache leaves). */
static bool caches_reported(const struct environment *env)
{
	for (unsigned level = 1; env && level <= 3; level++)
		if (environment_data_cache(env, level) && environment_data_cache(env, level)->size_bytes)
			return true;
	return false;
}

/*
 * The level's data cache bytes and line: the OS's, else, where it reports none (a bhyve guest on a Zen 5 host
 * zeroes leaf 0x8000001d, and the sweep's L1d knee at 724..861 pages was unknown), the identified core's
 * documented L1d, or its L2 where its parts have one size (source "documented: CORE"). 0 when neither.
 */
static uint64_t cache_bytes(const struct environment *env, unsigned level, double *line, const char **source)
{
	const struct env_cache *ch = environment_data_cache(env, level);
	const struct core_row *r = env->core.row;

	*line = ch && ch->line_bytes ? ch->line_bytes : 64;
	*source = "sysfs";
	if (caches_reported(env))
		return ch ? ch->size_bytes : 0;
	*source = env->documented_tlb.source;
	if (!r || level > 2)
		return 0;
	if (level == 1)
		return (uint64_t)r->l1d_kib << 10;
	bool one = !r->l2_kib[0] != !r->l2_kib[1] || r->l2_kib[0] == r->l2_kib[1];
	return one ? (uint64_t)(r->l2_kib[0] ? r->l2_kib[0] : r->l2_kib[1]) << 10 : 0;
}

/*
 * The data cache level nearest the knee, from the caches the OS reports (else
 * the documented core's, cache_bytes()): it fills at size / 64 B /
 * LINES_PER_PAGE pages; the knee fits when its rise ends no earlier than
 * L1_EARLY (L1) or OUTER_EARLY (L2, L3) of that and starts within
 * KNEE_MATCH_TOLERANCE after it.
 */
static void match_cache(struct tlb_knee *tk, const struct environment *env)
{
	static const char *const names[] = { NULL, "L1d", "L2", "L3" };

	for (unsigned level = 1; env && level <= 3; level++) {
		double line;
		const char *source;
		uint64_t size = cache_bytes(env, level, &line, &source);
		if (!size)
			continue;
		double pages = (double)size / line / LINES_PER_PAGE;
		double early = level == 1 ? L1_EARLY : OUTER_EARLY;
		struct knee_capacity cap = {
			.level = names[level],
			.is_cache = true,
			.count = (double)size,
			.pages = pages,
			.source = source,
			.relative_error = rise_error(&tk->knee, pages),
		};
		cap.fits = cap.relative_error >= early - 1 && cap.relative_error <= KNEE_MATCH_TOLERANCE;
		keep_nearer(&tk->cache, &cap);
	}
}

/* "the 64-entry L1 dTLB (documented: Sunny Cove)", "the 48 KiB L1d (full at 683 pages)"; "" when none is known. */
static const char *capacity_text(const struct knee_capacity *c, char *buf, size_t cap)
{
	if (!c->level)
		return "";
	if (c->is_cache && c->source && strcmp(c->source, "sysfs") != 0)
		snprintf(buf, cap, "the %.0f KiB %s (%s; full at %.0f pages)", c->count / 1024, c->level, c->source,
			 c->pages);
	else if (c->is_cache)
		snprintf(buf, cap, "the %.0f KiB %s (full at %.0f pages)", c->count / 1024, c->level, c->pages);
	else
		snprintf(buf, cap, "the %.0f-entry %s (%s)", c->count, c->level, c->source);
	return buf;
}

/* Where the capacity is against the rise: "inside", "30 % before", "6 % past". */
static const char *where_text(const struct knee_capacity *c, char *buf, size_t cap)
{
	if (c->relative_error == 0)
		snprintf(buf, cap, "inside");
	else
		snprintf(buf, cap, "%.0f %% %s", 100 * fabs(c->relative_error), c->relative_error > 0 ? "before" : "past");
	return buf;
}

/*
 * Label the knee from what fits its rise: a TLB and no cache, tlb; a cache
 * and no TLB, cache; both or neither, unknown. Then one sentence of evidence.
 */
static void label(struct tlb_knee *tk, bool tlb_known, bool caches_known)
{
	char t[120], c[120], wt[32], wc[32], rise[48];
	const char *tt = capacity_text(&tk->tlb, t, sizeof(t)), *ct = capacity_text(&tk->cache, c, sizeof(c));
	char *e = tk->evidence;
	size_t cap = sizeof(tk->evidence);

	where_text(&tk->tlb, wt, sizeof(wt));
	where_text(&tk->cache, wc, sizeof(wc));
	snprintf(rise, sizeof(rise), "the rise (%.0f..%.0f pages)", tk->knee.x_before, tk->knee.x_after);
	tk->kind = tk->tlb.fits == tk->cache.fits ? KNEE_UNKNOWN : tk->tlb.fits ? KNEE_TLB : KNEE_CACHE;
	if (tk->kind == KNEE_TLB)
		snprintf(e, cap, "%s fills %s %s; no cache fills near it%s%s%s", tt, wt, rise, *ct ? " (nearest: " : "",
			 ct, *ct ? ")" : "");
	else if (tk->kind == KNEE_CACHE)
		snprintf(e, cap, "%s fills %s %s, with one line and 1/8 page-table line per page; no TLB fills "
			 "near it%s%s%s", ct, wc, rise, *tt ? " (nearest: " : "", tt, *tt ? ")" : "");
	else if (tk->tlb.fits)
		snprintf(e, cap, "could not tell: both %s and %s fill near %s", tt, ct, rise);
	else if (!tlb_known && !caches_known)
		snprintf(e, cap, "could not tell, because neither CPUID nor a documented core gives the TLB, and no "
			 "cache sizes were read");
	else
		snprintf(e, cap, "could not tell: nothing %s fills near %s%s%s%s%s%s%s",
			 !tlb_known ? "of the caches" : !caches_known ? "of the TLB" : "known", rise,
			 *tt || *ct ? " (nearest: " : "", tt, *tt && *ct ? "; " : "", ct, *tt || *ct ? ")" : "",
			 !tlb_known ? "; the TLB is unknown" : !caches_known ? "; no cache sizes were read" : "");
}

const char *knee_kind_name(enum knee_kind k)
{
	return k == KNEE_TLB ? "tlb" : k == KNEE_CACHE ? "cache" : "unknown";
}

int analysis_build_knees(const struct phase_result *res, size_t n, const struct environment *env, struct analysis *a)
{
	struct knee_point *pts = calloc(MAX_CURVE, sizeof(*pts));
	struct knee found[MAX_KNEES];
	const struct env_tlb *tlb = env ? environment_expected_tlb(env) : NULL;
	bool tlb_known = tlb && (tlb->l1d_4k_entries || tlb->l2d_4k_entries), caches_known = false;
	size_t m = 0, k = 0;

	a->knees = calloc(MAX_KNEES, sizeof(*a->knees));
	if (!pts || !a->knees) {
		free(pts);
		return -ENOMEM;
	}
	for (unsigned level = 1; env && level <= 3; level++) {
		double line;
		const char *source;
		caches_known |= cache_bytes(env, level, &line, &source) > 0;
	}
	for (size_t i = 0; i < n && m < MAX_CURVE; i++) {
		if (!analysis_measured_ok(&res[i]) || res[i].spec.workload->sweep != WORKLOAD_SWEEP_PAGE_COUNTS)
			continue;
		pts[m++] = (struct knee_point){ .x = (double)res[i].slots, .median = a->phases[i].ns.median,
						.spread = stats_mad(res[i].samples_ns, res[i].n_samples,
							      a->phases[i].ns.median) };
	}
	qsort(pts, m, sizeof(*pts), cmp_knee_point);
	if (m && knees_detect(pts, m, found, MAX_KNEES, &k) == 0) {
		for (size_t i = 0; i < k && i < MAX_KNEES; i++) {
			struct tlb_knee *tk = &a->knees[a->n_knees++];
			tk->knee = found[i];
			tk->page_label = "4k";
			match_cpuid(tk, env);
			match_tlb(tk, tlb_known ? tlb : NULL);
			match_cache(tk, env);
			label(tk, tlb_known, caches_known);
		}
	}
	free(pts);
	return 0;
}
