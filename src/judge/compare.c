/* SPDX-License-Identifier: MIT */
/* Pure comparison of two analysed reports: per phase and per page-size comparison, judged from the samples. */
#include "judge/compare.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "stats.h"
#include "measure/workload.h"

/* median(b) / median(a). */
static double stat_ratio(const double *m)
{
	return m[0] > 0 ? m[1] / m[0] : NAN;
}

/* (new x / new y) / (old x / old y), medians of {old x, old y, new x, new y}. */
static double stat_ratio_of_ratios(const double *m)
{
	return m[0] > 0 && m[1] > 0 && m[3] > 0 ? (m[2] / m[3]) / (m[0] / m[1]) : NAN;
}

int compare_bootstrap_ratio(const struct stats_set *a, const struct stats_set *b, double alpha, uint64_t seed,
			    double *lo, double *hi, double *p_value)
{
	const struct stats_set sets[] = { *a, *b };

	return stats_bootstrap(sets, 2, stat_ratio, alpha, seed, COMPARE_BOOTSTRAP_RESAMPLES, lo, hi, p_value);
}

/* ---- verdicts ---- */

static const char *const verdict_names[] = {
	[COMPARE_INSUFFICIENT] = "insufficient_samples",
	[COMPARE_NO_CHANGE] = "no_change",
	[COMPARE_NOISE] = "noise",
	[COMPARE_BETTER_SMALL] = "better_within_threshold",
	[COMPARE_WORSE_SMALL] = "worse_within_threshold",
	[COMPARE_BETTER] = "better",
	[COMPARE_REGRESSION] = "regression",
	[COMPARE_NOT_COMPARABLE] = "not_comparable",
	[COMPARE_MACHINE_SLOWER] = "machine_slower",
	[COMPARE_MACHINE_FASTER] = "machine_faster",
	[COMPARE_SMALLER_UNCOUNTED] = "smaller_no_phase_slower",
};

const char *compare_verdict_name(enum compare_verdict v)
{
	return (unsigned)v < sizeof(verdict_names) / sizeof(verdict_names[0]) ? verdict_names[v] : "?";
}

const char *compare_verdict_label(enum compare_verdict v, bool higher_is_better)
{
	switch (v) {
	case COMPARE_INSUFFICIENT:
		return "insufficient samples";
	case COMPARE_NO_CHANGE:
		return "no significant change";
	case COMPARE_NOISE:
		return "within noise";
	case COMPARE_BETTER_SMALL:
		return higher_is_better ? "larger, within threshold" : "faster, within threshold";
	case COMPARE_WORSE_SMALL:
		return higher_is_better ? "smaller, within threshold" : "slower, within threshold";
	case COMPARE_BETTER:
		return higher_is_better ? "larger" : "faster";
	case COMPARE_REGRESSION:
		return higher_is_better ? "smaller (regression)" : "slower (regression)";
	case COMPARE_NOT_COMPARABLE:
		return "not comparable";
	case COMPARE_MACHINE_SLOWER:
		return "slower with its control (the machine)";
	case COMPARE_MACHINE_FASTER:
		return "faster with its control (the machine)";
	case COMPARE_SMALLER_UNCOUNTED:
		return "smaller, no phase slower (informational)";
	}
	return "?";
}

bool compare_verdict_judged(enum compare_verdict v)
{
	return v != COMPARE_INSUFFICIENT && v != COMPARE_NOT_COMPARABLE;
}

enum compare_verdict compare_judge(double change, double p, double lo, double hi, double floor, size_t n_base,
				   size_t n_new, double threshold, bool higher_is_better)
{
	if (!n_base || !n_new)
		return COMPARE_NOT_COMPARABLE;
	if (n_base < COMPARE_MIN_SAMPLES || n_new < COMPARE_MIN_SAMPLES)
		return COMPARE_INSUFFICIENT;
	if (!isfinite(change) || isnan(p))
		return COMPARE_NOT_COMPARABLE;
	/* The rank test alone never decides: the interval must exclude 1 and the change exceed the floor. */
	bool interval_excludes_one = isfinite(lo) && isfinite(hi) && (lo > 1 || hi < 1);
	bool above_floor = !(fabs(change) <= (isfinite(floor) ? floor : 0));
	bool significant = p < COMPARE_ALPHA && interval_excludes_one && above_floor;
	bool beyond = fabs(change) - threshold > COMPARE_THRESHOLD_TOLERANCE;
	bool worse = higher_is_better ? change < 0 : change > 0;
	if (significant && change == 0)
		return COMPARE_NO_CHANGE;	/* the shapes differ, the medians do not */
	if (significant && beyond)
		return worse ? COMPARE_REGRESSION : COMPARE_BETTER;
	if (significant)
		return worse ? COMPARE_WORSE_SMALL : COMPARE_BETTER_SMALL;
	return beyond ? COMPARE_NOISE : COMPARE_NO_CHANGE;
}

static void samples_clear(struct compare_samples *s)
{
	*s = (struct compare_samples){ .base = NAN, .new = NAN, .change = NAN, .ratio_lo = NAN, .ratio_hi = NAN,
				       .p = NAN, .noise_floor = NAN, .verdict = COMPARE_NOT_COMPARABLE };
}

/* The cluster count and spread of a set into *k and *spread; *floor becomes the larger spread so far. */
static int floor_of(const struct stats_set *s, size_t *k, double *floor)
{
	double spread;
	int rc = stats_cluster_spread(s, k, &spread);

	if (rc == 0 && (isnan(*floor) || spread > *floor))
		*floor = spread;
	return rc == -ENOMEM ? rc : 0;
}

int compare_samples(const struct stats_set *base, const struct stats_set *new, double threshold,
		    struct compare_samples *out)
{
	struct stats_rank_test mw;
	int rc;

	samples_clear(out);
	out->n_base = base->n;
	out->n_new = new->n;
	out->base = stats_median(base->v, base->n);
	out->new = stats_median(new->v, new->n);
	if (out->base > 0 && isfinite(out->new))
		out->change = out->new / out->base - 1;
	if (base->n >= COMPARE_MIN_SAMPLES && new->n >= COMPARE_MIN_SAMPLES && isfinite(out->change)) {
		rc = stats_mann_whitney(base->v, base->n, new->v, new->n, &mw);
		if (rc == -ENOMEM)
			return rc;
		if (rc == 0) {
			out->p = mw.p;
			out->exact = mw.exact;
			out->test = "mann_whitney_u";
		}
		if ((rc = floor_of(base, &out->clusters_base, &out->noise_floor)) ||
		    (rc = floor_of(new, &out->clusters_new, &out->noise_floor)))
			return rc;
		rc = compare_bootstrap_ratio(base, new, COMPARE_ALPHA, COMPARE_BOOTSTRAP_SEED, &out->ratio_lo,
					     &out->ratio_hi, NULL);
		if (rc == -ENOMEM)
			return rc;
	}
	out->verdict = compare_judge(out->change, out->p, out->ratio_lo, out->ratio_hi, out->noise_floor, out->n_base,
				     out->n_new, threshold, false);
	return 0;
}

int compare_ratio(const struct stats_set sets[4], double threshold, bool higher_is_better,
		  struct compare_samples *out)
{
	double m[4];
	int rc;

	samples_clear(out);
	for (size_t s = 0; s < 4; s++)
		m[s] = stats_median(sets[s].v, sets[s].n);
	/* A ratio rests on the smaller of its two sample sets. */
	out->n_base = sets[0].n < sets[1].n ? sets[0].n : sets[1].n;
	out->n_new = sets[2].n < sets[3].n ? sets[2].n : sets[3].n;
	out->base = m[1] > 0 ? m[0] / m[1] : NAN;
	out->new = m[3] > 0 ? m[2] / m[3] : NAN;
	if (out->base > 0 && isfinite(out->new))
		out->change = out->new / out->base - 1;
	if (out->n_base >= COMPARE_MIN_SAMPLES && out->n_new >= COMPARE_MIN_SAMPLES && isfinite(out->change)) {
		size_t k[4];
		for (size_t s = 0; s < 4; s++)
			if ((rc = floor_of(&sets[s], &k[s], &out->noise_floor)))
				return rc;
		out->clusters_base = k[0] < k[1] ? k[0] : k[1];
		out->clusters_new = k[2] < k[3] ? k[2] : k[3];
		/* The four sets are independent; a ratio of ratios has no rank test, so the bootstrap decides. */
		rc = stats_bootstrap(sets, 4, stat_ratio_of_ratios, COMPARE_ALPHA, COMPARE_BOOTSTRAP_SEED,
				     COMPARE_BOOTSTRAP_RESAMPLES, &out->ratio_lo, &out->ratio_hi, &out->p);
		if (rc == -ENOMEM)
			return rc;
		if (rc == 0)
			out->test = "bootstrap";
	}
	out->verdict = compare_judge(out->change, out->p, out->ratio_lo, out->ratio_hi, out->noise_floor, out->n_base,
				     out->n_new, threshold, higher_is_better);
	return 0;
}

/* ---- matching ---- */

const char *compare_match_name(enum compare_match m)
{
	static const char *const names[] = { [COMPARE_MATCHED] = "matched", [COMPARE_REMOVED] = "removed",
					     [COMPARE_ADDED] = "added" };

	return (unsigned)m < sizeof(names) / sizeof(names[0]) ? names[m] : "?";
}

struct keyed {
	const char *key;
	size_t idx;
};

static int cmp_keyed(const void *pa, const void *pb)
{
	const struct keyed *a = pa, *b = pb;
	int c = strcmp(a->key, b->key);

	return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

/*
 * Pair ka[i] with an equal key of kb: the k-th occurrence of a key in ka with
 * its k-th occurrence in kb. a_to_b[i] gets the index in kb or SIZE_MAX;
 * b_used[j] says whether kb[j] was paired. O((na + nb) log nb).
 */
static int match_keys(const char *const *ka, size_t na, const char *const *kb, size_t nb, size_t *a_to_b, bool *b_used)
{
	struct keyed *sorted = malloc((nb ? nb : 1) * sizeof(*sorted));

	if (!sorted)
		return -ENOMEM;
	for (size_t j = 0; j < nb; j++) {
		sorted[j] = (struct keyed){ kb[j], j };
		b_used[j] = false;
	}
	qsort(sorted, nb, sizeof(*sorted), cmp_keyed);
	for (size_t i = 0; i < na; i++) {
		size_t lo = 0, hi = nb;
		a_to_b[i] = SIZE_MAX;
		while (lo < hi) {	/* the first entry not below the key */
			size_t mid = lo + (hi - lo) / 2;
			if (strcmp(sorted[mid].key, ka[i]) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < nb && strcmp(sorted[lo].key, ka[i]) == 0; lo++) {
			if (!b_used[sorted[lo].idx]) {
				b_used[sorted[lo].idx] = true;
				a_to_b[i] = sorted[lo].idx;
				break;
			}
		}
	}
	free(sorted);
	return 0;
}

/* ---- phases ---- */

static bool phase_measured(const struct phase_result *r)
{
	return r->status == PHASE_OK && r->n_samples > 0;
}

/*
 * The cluster of each sample of a phase into *cluster: the process of a
 * page-fault phase that ran in several (each of its samples maps fresh
 * memory, so the process is what samples share), else the allocation, else
 * NULL (one cluster). *owned is what the caller frees. 0 or -ENOMEM.
 */
static int phase_clusters(const struct phase_result *r, const unsigned **cluster, unsigned **owned)
{
	*owned = NULL;
	*cluster = r->sample_alloc;
	if (r->processes_run > 1 && r->n_fault_samples == r->n_samples && r->n_samples) {
		if (!(*owned = malloc(r->n_samples * sizeof(**owned))))
			return -ENOMEM;
		for (size_t i = 0; i < r->n_samples; i++)
			(*owned)[i] = r->fault_samples[i].process;
		*cluster = *owned;
	}
	return 0;
}

/*
 * Nanoseconds per fault of each fault sample that counted faults (perf
 * counts, else getrusage), with its process as the cluster, into v and c
 * (room for n_fault_samples each). Returns the count.
 */
static size_t ns_per_fault_samples(const struct phase_result *r, double *v, unsigned *c)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_fault_samples; i++) {
		const struct fault_sample *s = &r->fault_samples[i];
		double f = s->minor >= 0 && s->major >= 0 ? s->minor + s->major
							  : (double)(s->minor_rusage + s->major_rusage);
		if (f > 0) {
			c[n] = s->process;
			v[n++] = s->elapsed_ns / f;
		}
	}
	return n;
}

static int compare_fault_samples(const struct phase_result *b, const struct phase_result *n, double threshold,
				 struct compare_samples *out)
{
	double *vb = malloc((b->n_fault_samples + 1) * sizeof(double));
	double *vn = malloc((n->n_fault_samples + 1) * sizeof(double));
	unsigned *cb = malloc((b->n_fault_samples + 1) * sizeof(unsigned));
	unsigned *cn = malloc((n->n_fault_samples + 1) * sizeof(unsigned));
	int rc = -ENOMEM;

	if (vb && vn && cb && cn) {
		struct stats_set sb = { vb, cb, ns_per_fault_samples(b, vb, cb) };
		struct stats_set sn = { vn, cn, ns_per_fault_samples(n, vn, cn) };
		rc = compare_samples(&sb, &sn, threshold, out);
	}
	free(vb);
	free(vn);
	free(cb);
	free(cn);
	return rc;
}

/* The counter rates of a phase, on one or both sides (r == NULL: that side lacks the phase). */
static void phase_rates(const struct phase_result *b, const struct phase_result *n, struct compare_phase *cp)
{
	for (int m = 0; m < METRIC_COUNT; m++) {
		double vb = NAN, vn = NAN;
		bool hb = b && phase_measured(b) && analysis_per_access(b, (enum metric)m, &vb);
		bool hn = n && phase_measured(n) && analysis_per_access(n, (enum metric)m, &vn);
		if (!hb && !hn)
			continue;
		struct compare_rate *cr = &cp->rates[cp->n_rates++];
		cr->metric = (enum metric)m;
		cr->base = hb ? vb : NAN;
		cr->new = hn ? vn : NAN;
		cr->change = hb && hn && vb > 0 ? vn / vb - 1 : NAN;
	}
}

/* A tlbprof run phase that declared no accesses: its wall time per occurrence is what was measured. */
static bool phase_wall(const struct phase_result *r)
{
	return r->status == PHASE_OK && !r->n_samples && r->target && r->target->n_wall > 0;
}

/*
 * The samples a phase is compared on, with their clusters: ns per access
 * (per page), or (wall) ns per occurrence; s->n = 0 if none. *owned is what
 * the caller frees. 0 or -ENOMEM.
 */
static int phase_set(const struct phase_result *r, bool wall, struct stats_set *s, unsigned **owned)
{
	*s = (struct stats_set){ 0 };
	*owned = NULL;
	if (wall) {
		s->n = phase_wall(r) ? r->target->n_wall : 0;
		s->v = s->n ? r->target->wall_ns : NULL;
		return 0;
	}
	s->n = phase_measured(r) ? r->n_samples : 0;
	s->v = r->samples_ns;
	return s->n ? phase_clusters(r, &s->cluster, owned) : 0;
}

/* One side's figures alone (the phase is missing, or unmeasured or measured otherwise on the other). */
static void one_side(const struct phase_result *r, bool wall, bool is_base, struct compare_samples *s)
{
	unsigned *owned = NULL;
	struct stats_set set = { 0 };
	double m = NAN;

	/* Only the values are needed here: without memory for the clusters the median is still right. */
	if (r)
		(void)phase_set(r, wall, &set, &owned);
	if (set.n)
		m = stats_median(set.v, set.n);
	free(owned);
	if (is_base) {
		s->base = m;
		s->n_base = set.n;
	} else {
		s->new = m;
		s->n_new = set.n;
	}
}

static int compare_phase_pair(const struct phase_result *b, const struct phase_result *n, double threshold,
			      struct compare_phase *cp)
{
	int rc = 0;

	samples_clear(&cp->ns);
	samples_clear(&cp->ns_per_fault);
	samples_clear(&cp->vs_control);
	cp->faults = (b && b->spec.fault_case != FAULT_NONE) || (n && n->spec.fault_case != FAULT_NONE);
	cp->control = (b && b->spec.role == PHASE_ROLE_CONTROL) || (n && n->spec.role == PHASE_ROLE_CONTROL);
	/* Wall time per occurrence only where no side has samples per access: like is compared with like. */
	cp->wall = (!b || phase_wall(b)) && (!n || phase_wall(n));
	phase_rates(b, n, cp);
	if (b && n)
		compare_parameters(b, n, cp);
	if (b && n && ((phase_measured(b) && phase_measured(n)) || cp->wall)) {
		unsigned *ob = NULL, *on = NULL;
		struct stats_set sb, sn;
		if (!(rc = phase_set(b, cp->wall, &sb, &ob)) && !(rc = phase_set(n, cp->wall, &sn, &on)))
			rc = compare_samples(&sb, &sn, threshold, &cp->ns);
		free(ob);
		free(on);
		if (!rc && cp->faults)
			rc = compare_fault_samples(b, n, threshold, &cp->ns_per_fault);
		return rc;
	}
	one_side(b, cp->wall, true, &cp->ns);
	one_side(n, cp->wall, false, &cp->ns);
	return 0;
}

/*
 * (phase / its packed control), new against old, when both sides measured
 * the phase against a control of the same name: the control runs next to
 * the phase on the same machine, so what moves both (load, clock, a noisy
 * neighbour) cancels, and what is left is the phase's own change.
 */
static int compare_against_control(const struct compare_side *base, const struct compare_side *new, size_t ib,
				   size_t in, double threshold, struct compare_phase *cp)
{
	const struct phase_analysis *pb = &base->analysis->phases[ib], *pn = &new->analysis->phases[in];
	const struct phase_result *rb = &base->results->phases[ib], *rn = &new->results->phases[in];
	unsigned *owned[4] = { NULL };
	int rc = 0;

	if (cp->control || cp->wall || !pb->has_control || !pn->has_control || !phase_measured(rb) ||
	    !phase_measured(rn))
		return 0;
	const struct phase_result *cb = &base->results->phases[pb->control], *cn = &new->results->phases[pn->control];
	if (strcmp(cb->spec.name, cn->spec.name) != 0 || !phase_measured(cb) || !phase_measured(cn))
		return 0;
	const struct phase_result *order[4] = { rb, cb, rn, cn };
	struct stats_set sets[4];
	for (size_t k = 0; k < 4 && !rc; k++)
		rc = phase_set(order[k], false, &sets[k], &owned[k]);
	if (!rc)
		rc = compare_ratio(sets, threshold, false, &cp->vs_control);
	if (!rc)
		cp->control_name = cb->spec.name;
	for (size_t k = 0; k < 4; k++)
		free(owned[k]);
	return rc;
}

static int compare_phases(const struct compare_side *base, const struct compare_side *new, struct compare_result *out)
{
	const struct run_results *rb = base->results, *rn = new->results;
	const char **kb = malloc((rb->n + 1) * sizeof(*kb)), **kn = malloc((rn->n + 1) * sizeof(*kn));
	size_t *b_to_n = malloc((rb->n + 1) * sizeof(*b_to_n));
	bool *n_used = malloc((rn->n + 1) * sizeof(*n_used));
	int rc = -ENOMEM;

	out->phases = calloc(rb->n + rn->n + 1, sizeof(*out->phases));
	if (!kb || !kn || !b_to_n || !n_used || !out->phases)
		goto out;
	for (size_t i = 0; i < rb->n; i++)
		kb[i] = rb->phases[i].spec.name;
	for (size_t i = 0; i < rn->n; i++)
		kn[i] = rn->phases[i].spec.name;
	if ((rc = match_keys(kb, rb->n, kn, rn->n, b_to_n, n_used)))
		goto out;
	for (size_t i = 0; i < rb->n; i++) {
		struct compare_phase *cp = &out->phases[out->n_phases++];
		size_t j = b_to_n[i];
		cp->name = rb->phases[i].spec.name;
		cp->base = i;
		cp->new = j;
		cp->match = j == SIZE_MAX ? COMPARE_REMOVED : COMPARE_MATCHED;
		if ((rc = compare_phase_pair(&rb->phases[i], j == SIZE_MAX ? NULL : &rn->phases[j], out->threshold, cp)))
			goto out;
		if (j != SIZE_MAX && (rc = compare_against_control(base, new, i, j, out->threshold, cp)))
			goto out;
	}
	for (size_t j = 0; j < rn->n; j++) {
		if (n_used[j])
			continue;
		struct compare_phase *cp = &out->phases[out->n_phases++];
		cp->name = rn->phases[j].spec.name;
		cp->base = SIZE_MAX;
		cp->new = j;
		cp->match = COMPARE_ADDED;
		if ((rc = compare_phase_pair(NULL, &rn->phases[j], out->threshold, cp)))
			goto out;
	}
	rc = 0;
out:
	free(kb);
	free(kn);
	free(b_to_n);
	free(n_used);
	return rc;
}

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

/* ---- page-size comparisons ---- */

/* "baseline\x1fvariant" for every comparison of a side (caller frees each and the array). */
static char **pair_keys(const struct compare_side *s)
{
	const struct analysis *a = s->analysis;
	char **k = calloc(a->n_comparisons + 1, sizeof(*k));

	for (size_t i = 0; k && i < a->n_comparisons; i++) {
		const struct comparison *c = &a->comparisons[i];
		if (asprintf(&k[i], "%s\x1f%s", s->results->phases[c->baseline].spec.name,
			     s->results->phases[c->variant].spec.name) < 0) {
			k[i] = NULL;
			for (size_t j = 0; j < i; j++)
				free(k[j]);
			free(k);
			return NULL;
		}
	}
	return k;
}

static void free_keys(char **k, size_t n)
{
	for (size_t i = 0; k && i < n; i++)
		free(k[i]);
	free(k);
}

/* One side's figures of a comparison. */
static void pair_side(const struct compare_side *s, size_t idx, bool is_base, struct compare_pair *cp)
{
	const struct comparison *c = &s->analysis->comparisons[idx];
	double tlb = c->ns_per_tlb_miss > 0 ? c->ns_per_tlb_miss : NAN;
	size_t nb = s->results->phases[c->baseline].n_samples, nv = s->results->phases[c->variant].n_samples;

	if (is_base)
		cp->speedup.n_base = nb < nv ? nb : nv;
	else
		cp->speedup.n_new = nb < nv ? nb : nv;
	if (is_base) {
		cp->base_delta_ns = c->delta_ns;
		cp->base_ns_per_tlb_miss = tlb;
		cp->base_method = c->method;
		cp->speedup.base = c->speedup;
	} else {
		cp->new_delta_ns = c->delta_ns;
		cp->new_ns_per_tlb_miss = tlb;
		cp->new_method = c->method;
		cp->speedup.new = c->speedup;
	}
}

static int compare_pairs(const struct compare_side *base, const struct compare_side *new, struct compare_result *out)
{
	size_t nb = base->analysis->n_comparisons, nn = new->analysis->n_comparisons;
	char **kb = pair_keys(base), **kn = pair_keys(new);
	size_t *b_to_n = malloc((nb + 1) * sizeof(*b_to_n));
	bool *n_used = malloc((nn + 1) * sizeof(*n_used));
	int rc = -ENOMEM;

	out->pairs = calloc(nb + nn + 1, sizeof(*out->pairs));
	if (!kb || !kn || !b_to_n || !n_used || !out->pairs)
		goto out;
	if ((rc = match_keys((const char *const *)kb, nb, (const char *const *)kn, nn, b_to_n, n_used)))
		goto out;
	for (size_t k = 0; k < nb + nn; k++) {
		bool from_base = k < nb;
		size_t i = from_base ? k : SIZE_MAX, j = from_base ? b_to_n[k] : k - nb;
		if (!from_base && n_used[j])
			continue;
		const struct compare_side *s = from_base ? base : new;
		const struct comparison *c = &s->analysis->comparisons[from_base ? i : j];
		struct compare_pair *cp = &out->pairs[out->n_pairs++];
		cp->baseline = s->results->phases[c->baseline].spec.name;
		cp->variant = s->results->phases[c->variant].spec.name;
		cp->base = i;
		cp->new = j;
		cp->match = !from_base ? COMPARE_ADDED : j == SIZE_MAX ? COMPARE_REMOVED : COMPARE_MATCHED;
		cp->base_delta_ns = cp->new_delta_ns = NAN;
		cp->base_ns_per_tlb_miss = cp->new_ns_per_tlb_miss = NAN;
		samples_clear(&cp->speedup);
		if (cp->match == COMPARE_MATCHED) {
			const struct comparison *cb = &base->analysis->comparisons[i], *cn = &new->analysis->comparisons[j];
			const struct phase_result *order[4] = {
				&base->results->phases[cb->baseline], &base->results->phases[cb->variant],
				&new->results->phases[cn->baseline], &new->results->phases[cn->variant],
			};
			unsigned *owned[4] = { NULL };
			struct stats_set sets[4];
			for (size_t q = 0; q < 4 && !rc; q++)
				rc = phase_set(order[q], false, &sets[q], &owned[q]);
			if (!rc)
				rc = compare_ratio(sets, out->threshold, true, &cp->speedup);
			for (size_t q = 0; q < 4; q++)
				free(owned[q]);
			if (rc)
				goto out;
		}
		if (i != SIZE_MAX)
			pair_side(base, i, true, cp);
		if (j != SIZE_MAX)
			pair_side(new, j, false, cp);
	}
	rc = 0;
out:
	free_keys(kb, nb);
	free_keys(kn, nn);
	free(b_to_n);
	free(n_used);
	return rc;
}

/* ---- checks ---- */

/* pass < warn < fail; skip (could not judge) is outside the order. */
static bool check_worse(enum check_status from, enum check_status to)
{
	if (from == CHECK_SKIP || to == CHECK_SKIP)
		return false;
	return (from == CHECK_PASS && (to == CHECK_WARN || to == CHECK_FAIL)) || (from == CHECK_WARN && to == CHECK_FAIL);
}

static int compare_checks(const struct compare_side *base, const struct compare_side *new, struct compare_result *out)
{
	const struct analysis *ab = base->analysis, *an = new->analysis;
	const char **kb = malloc((ab->n_checks + 1) * sizeof(*kb)), **kn = malloc((an->n_checks + 1) * sizeof(*kn));
	size_t *b_to_n = malloc((ab->n_checks + 1) * sizeof(*b_to_n));
	bool *n_used = malloc((an->n_checks + 1) * sizeof(*n_used));
	int rc = -ENOMEM;

	out->checks = calloc(ab->n_checks + an->n_checks + 1, sizeof(*out->checks));
	if (!kb || !kn || !b_to_n || !n_used || !out->checks)
		goto out;
	for (size_t i = 0; i < ab->n_checks; i++)
		kb[i] = ab->checks[i].id;
	for (size_t i = 0; i < an->n_checks; i++)
		kn[i] = an->checks[i].id;
	if ((rc = match_keys(kb, ab->n_checks, kn, an->n_checks, b_to_n, n_used)))
		goto out;
	for (size_t i = 0; i < ab->n_checks; i++) {
		struct compare_check *cc = &out->checks[out->n_checks++];
		size_t j = b_to_n[i];
		cc->id = ab->checks[i].id;
		cc->base = ab->checks[i].status;
		cc->base_message = ab->checks[i].message;
		cc->match = j == SIZE_MAX ? COMPARE_REMOVED : COMPARE_MATCHED;
		if (j == SIZE_MAX)
			continue;
		cc->new = an->checks[j].status;
		cc->new_message = an->checks[j].message;
		cc->worse = check_worse(cc->base, cc->new);
		out->checks_worse += cc->worse;
		out->checks_now_failing += cc->worse && cc->new == CHECK_FAIL;
	}
	for (size_t j = 0; j < an->n_checks; j++) {
		if (n_used[j])
			continue;
		struct compare_check *cc = &out->checks[out->n_checks++];
		cc->id = an->checks[j].id;
		cc->match = COMPARE_ADDED;
		cc->new = an->checks[j].status;
		cc->new_message = an->checks[j].message;
	}
	rc = 0;
out:
	free(kb);
	free(kn);
	free(b_to_n);
	free(n_used);
	return rc;
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
	/* Page sizes: a hugetlb pool that holds pages on one side only changes what could be measured. */
	const struct environment *sides[] = { eb, en };
	for (size_t s = 0; s < 2; s++) {
		for (size_t i = 0; i < sides[s]->n_pools; i++) {
			uint64_t bytes = sides[s]->pools[i].page_bytes;
			char field[32], sz[16];
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

/* ---- the whole comparison ---- */

/*
 * The verdict that counts for a matched phase. A packed control is the
 * machine's reference, so its own move is the machine's. A phase measured
 * against the same control on both sides must be slower (faster) beyond
 * noise and threshold by its own samples, and its change against the
 * control must say the same, to be a regression (an improvement): the
 * control ran next to the phase, so load, clock or a noisy neighbour move
 * both. Where the control's own samples are too noisy to be sure (the change
 * against it is beyond the threshold but not beyond noise), its direction
 * still has to agree. Otherwise the move is the machine's. The price: a
 * regression that a faster machine hides in the phase's own figures is not
 * counted (the change against the control still shows it).
 */
static void phase_verdict(struct compare_phase *cp)
{
	enum compare_verdict v = cp->ns.verdict, vc = cp->vs_control.verdict;

	cp->verdict = v;
	cp->against_control = false;
	cp->control_inconclusive = false;
	if (v != COMPARE_REGRESSION && v != COMPARE_BETTER)
		return;
	if (cp->control) {
		cp->verdict = v == COMPARE_REGRESSION ? COMPARE_MACHINE_SLOWER : COMPARE_MACHINE_FASTER;
		return;
	}
	if (!cp->control_name || !compare_verdict_judged(vc))
		return;
	cp->against_control = true;
	if (vc == v)
		return;
	if (vc == COMPARE_NOISE && (cp->vs_control.change > 0) == (cp->ns.change > 0)) {
		cp->control_inconclusive = true;
		return;
	}
	cp->verdict = v == COMPARE_REGRESSION ? COMPARE_MACHINE_SLOWER : COMPARE_MACHINE_FASTER;
}

/* Whether a matched phase got slower beyond noise by the measure that counts for it (within the threshold or not). */
static bool phase_got_slower(const struct compare_result *r, const char *name)
{
	for (size_t i = 0; i < r->n_phases; i++) {
		const struct compare_phase *cp = &r->phases[i];
		if (cp->match == COMPARE_MATCHED && strcmp(cp->name, name) == 0)
			return cp->verdict == COMPARE_REGRESSION || cp->verdict == COMPARE_WORSE_SMALL;
	}
	return false;
}

int compare_run(const struct compare_side *base, const struct compare_side *new, double threshold,
		struct compare_result *out)
{
	int rc;

	memset(out, 0, sizeof(*out));
	out->threshold = threshold;
	if ((rc = compare_phases(base, new, out)) || (rc = compare_pairs(base, new, out)) ||
	    (rc = compare_checks(base, new, out))) {
		compare_free(out);
		return rc;
	}
	compare_environments(base, new, out);
	out->interrupted_base = base->results->interrupted;
	out->interrupted_new = new->results->interrupted;
	for (size_t i = 0; i < out->n_phases; i++) {
		struct compare_phase *cp = &out->phases[i];
		phase_verdict(cp);
		if (cp->match != COMPARE_MATCHED)
			continue;
		out->phases_judged += compare_verdict_judged(cp->verdict);
		out->phases_insufficient += cp->verdict == COMPARE_INSUFFICIENT;
		out->phases_params_differ += cp->n_params > 0;
		out->regressions += cp->verdict == COMPARE_REGRESSION;
		out->improvements += cp->verdict == COMPARE_BETTER;
		out->machine_shifts += cp->verdict == COMPARE_MACHINE_SLOWER || cp->verdict == COMPARE_MACHINE_FASTER;
	}
	for (size_t i = 0; i < out->n_pairs; i++) {
		struct compare_pair *cp = &out->pairs[i];
		if (cp->match != COMPARE_MATCHED)
			continue;
		/*
		 * A smaller speedup with no phase slower is the baseline getting
		 * faster: the code or machine improved where huge pages help
		 * least. Worth reading, not a reason to fail.
		 */
		if (cp->speedup.verdict == COMPARE_REGRESSION && !phase_got_slower(out, cp->baseline) &&
		    !phase_got_slower(out, cp->variant))
			cp->speedup.verdict = COMPARE_SMALLER_UNCOUNTED;
		out->pairs_judged += compare_verdict_judged(cp->speedup.verdict);
		out->pairs_insufficient += cp->speedup.verdict == COMPARE_INSUFFICIENT;
		out->regressions += cp->speedup.verdict == COMPARE_REGRESSION;
		out->improvements += cp->speedup.verdict == COMPARE_BETTER;
		out->speedups_uncounted += cp->speedup.verdict == COMPARE_SMALLER_UNCOUNTED;
	}
	return 0;
}

void compare_free(struct compare_result *r)
{
	free(r->phases);
	free(r->pairs);
	free(r->checks);
	memset(r, 0, sizeof(*r));
}

bool compare_judged_any(const struct compare_result *r)
{
	return r->phases_judged + r->pairs_judged > 0;
}

bool compare_fails(const struct compare_result *r, enum fail_on fail_on)
{
	switch (fail_on) {
	case FAIL_ON_NEVER:
		return false;
	case FAIL_ON_WARN:
		return r->regressions > 0 || r->checks_worse > 0;
	case FAIL_ON_FAIL:
		return r->regressions > 0 || r->checks_now_failing > 0;
	}
	return false;
}
