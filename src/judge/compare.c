/* SPDX-License-Identifier: MIT */
/* Pure comparison of two analysed reports: phases by name, page-size comparisons by their two names, checks by id. */
#include "judge/compare.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "judge/analysis_internal.h"
#include "judge/compare_internal.h"

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

/* Two lists of keys, the base side's and the new side's, and how match_keys() pairs them. */
struct key_match {
	const char **kb, **kn;	/* the keys (filled by the caller) */
	size_t nb, nn;
	size_t *b_to_n;		/* each base key's index among the new ones, SIZE_MAX: none */
	bool *n_used;		/* whether a new key was paired */
};

/* Room for nb and nn keys. 0 or -ENOMEM; free with key_match_free() either way. */
static int key_match_new(struct key_match *m, size_t nb, size_t nn)
{
	*m = (struct key_match){ .nb = nb, .nn = nn };
	m->kb = calloc(nb + 1, sizeof(*m->kb));
	m->kn = calloc(nn + 1, sizeof(*m->kn));
	m->b_to_n = malloc((nb + 1) * sizeof(*m->b_to_n));
	m->n_used = malloc((nn + 1) * sizeof(*m->n_used));
	return m->kb && m->kn && m->b_to_n && m->n_used ? 0 : -ENOMEM;
}

static int key_match_pair(struct key_match *m)
{
	return match_keys(m->kb, m->nb, m->kn, m->nn, m->b_to_n, m->n_used);
}

static void key_match_free(struct key_match *m)
{
	free(m->kb);
	free(m->kn);
	free(m->b_to_n);
	free(m->n_used);
}

/* ---- phases ---- */

bool compare_phase_measured(const struct phase_result *r)
{
	return r->status == PHASE_OK && r->n_samples > 0;
}

size_t compare_fault_samples_of(const struct phase_result *r, double *v, unsigned *c)
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
		struct stats_set sb = { vb, cb, compare_fault_samples_of(b, vb, cb) };
		struct stats_set sn = { vn, cn, compare_fault_samples_of(n, vn, cn) };
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
		bool hb = b && compare_phase_measured(b) && analysis_per_access(b, (enum metric)m, &vb);
		bool hn = n && compare_phase_measured(n) && analysis_per_access(n, (enum metric)m, &vn);
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
bool compare_phase_wall(const struct phase_result *r)
{
	return r->status == PHASE_OK && !r->n_samples && r->target && r->target->n_wall > 0;
}

int compare_phase_set(const struct phase_result *r, bool wall, struct stats_set *s, unsigned **owned)
{
	*s = (struct stats_set){ 0 };
	*owned = NULL;
	if (wall) {
		s->n = compare_phase_wall(r) ? r->target->n_wall : 0;
		s->v = s->n ? r->target->wall_ns : NULL;
		return 0;
	}
	s->n = compare_phase_measured(r) ? r->n_samples : 0;
	s->v = r->samples_ns;
	return s->n ? analysis_sample_clusters(r, &s->cluster, owned) : 0;
}

/* One side's figures alone (the phase is missing, or unmeasured or measured otherwise on the other). */
static void one_side(const struct phase_result *r, bool wall, bool is_base, struct compare_samples *s)
{
	unsigned *owned = NULL;
	struct stats_set set = { 0 };
	double m = NAN;

	/* Only the values are needed here: without memory for the clusters the median is still right. */
	if (r)
		(void)compare_phase_set(r, wall, &set, &owned);
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

void compare_phase_describe(const struct phase_result *b, const struct phase_result *n, struct compare_phase *cp)
{
	compare_samples_clear(&cp->ns);
	compare_samples_clear(&cp->ns_per_fault);
	compare_samples_clear(&cp->vs_control);
	cp->faults = (b && b->spec.fault_case != FAULT_NONE) || (n && n->spec.fault_case != FAULT_NONE);
	cp->control = (b && b->spec.role == PHASE_ROLE_CONTROL) || (n && n->spec.role == PHASE_ROLE_CONTROL);
	/* Wall time per occurrence only where no side has samples per access: like is compared with like. */
	cp->wall = (!b || compare_phase_wall(b)) && (!n || compare_phase_wall(n));
	phase_rates(b, n, cp);
	if (b && n)
		compare_parameters(b, n, cp);
}

static int compare_phase_pair(const struct phase_result *b, const struct phase_result *n, double threshold,
			      struct compare_phase *cp)
{
	int rc = 0;

	compare_phase_describe(b, n, cp);
	if (b && n && ((compare_phase_measured(b) && compare_phase_measured(n)) || cp->wall)) {
		unsigned *ob = NULL, *on = NULL;
		struct stats_set sb, sn;
		if (!(rc = compare_phase_set(b, cp->wall, &sb, &ob)) && !(rc = compare_phase_set(n, cp->wall, &sn, &on)))
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

	if (cp->control || cp->wall || !pb->has_control || !pn->has_control || !compare_phase_measured(rb) ||
	    !compare_phase_measured(rn))
		return 0;
	const struct phase_result *cb = &base->results->phases[pb->control], *cn = &new->results->phases[pn->control];
	if (strcmp(cb->spec.name, cn->spec.name) != 0 || !compare_phase_measured(cb) || !compare_phase_measured(cn))
		return 0;
	const struct phase_result *order[4] = { rb, cb, rn, cn };
	struct stats_set sets[4];
	for (size_t k = 0; k < 4 && !rc; k++)
		rc = compare_phase_set(order[k], false, &sets[k], &owned[k]);
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
	struct key_match m;
	int rc = key_match_new(&m, rb->n, rn->n);

	out->phases = calloc(rb->n + rn->n + 1, sizeof(*out->phases));
	if (rc || !out->phases) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < rb->n; i++)
		m.kb[i] = rb->phases[i].spec.name;
	for (size_t i = 0; i < rn->n; i++)
		m.kn[i] = rn->phases[i].spec.name;
	if ((rc = key_match_pair(&m)))
		goto out;
	for (size_t i = 0; i < rb->n; i++) {
		struct compare_phase *cp = &out->phases[out->n_phases++];
		size_t j = m.b_to_n[i];
		cp->name = rb->phases[i].spec.name;
		cp->base = i;
		cp->new = j;
		cp->match = j == SIZE_MAX ? COMPARE_REMOVED : COMPARE_MATCHED;
		cp->missing_new = j == SIZE_MAX;
		cp->missing_mask_new = j == SIZE_MAX;
		if ((rc = compare_phase_pair(&rb->phases[i], j == SIZE_MAX ? NULL : &rn->phases[j], out->threshold, cp)))
			goto out;
		if (j != SIZE_MAX && (rc = compare_against_control(base, new, i, j, out->threshold, cp)))
			goto out;
	}
	for (size_t j = 0; j < rn->n; j++) {
		if (m.n_used[j])
			continue;
		struct compare_phase *cp = &out->phases[out->n_phases++];
		cp->name = rn->phases[j].spec.name;
		cp->base = SIZE_MAX;
		cp->new = j;
		cp->match = COMPARE_ADDED;
		cp->missing_base = 1;
		cp->missing_mask_base = 1;
		if ((rc = compare_phase_pair(NULL, &rn->phases[j], out->threshold, cp)))
			goto out;
	}
	rc = 0;
out:
	key_match_free(&m);
	return rc;
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

void compare_pair_side(const struct compare_side *s, size_t idx, bool is_base, struct compare_pair *cp)
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
		cp->base_cmp = c;
		cp->speedup.base = c->speedup;
	} else {
		cp->new_delta_ns = c->delta_ns;
		cp->new_ns_per_tlb_miss = tlb;
		cp->new_method = c->method;
		cp->new_cmp = c;
		cp->speedup.new = c->speedup;
	}
}

static int compare_pairs(const struct compare_side *base, const struct compare_side *new, struct compare_result *out)
{
	size_t nb = base->analysis->n_comparisons, nn = new->analysis->n_comparisons;
	char **kb = pair_keys(base), **kn = pair_keys(new);
	struct key_match m;
	int rc = key_match_new(&m, nb, nn);
	size_t *b_to_n = m.b_to_n;
	bool *n_used = m.n_used;

	out->pairs = calloc(nb + nn + 1, sizeof(*out->pairs));
	if (rc || !kb || !kn || !out->pairs) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(m.kb, kb, nb * sizeof(*kb));
	memcpy(m.kn, kn, nn * sizeof(*kn));
	if ((rc = key_match_pair(&m)))
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
		cp->missing_base = cp->missing_mask_base = !from_base;
		cp->missing_new = cp->missing_mask_new = from_base && j == SIZE_MAX;
		cp->base_delta_ns = cp->new_delta_ns = NAN;
		cp->base_ns_per_tlb_miss = cp->new_ns_per_tlb_miss = NAN;
		compare_samples_clear(&cp->speedup);
		if (cp->match == COMPARE_MATCHED) {
			const struct comparison *cb = &base->analysis->comparisons[i], *cn = &new->analysis->comparisons[j];
			const struct phase_result *order[4] = {
				&base->results->phases[cb->baseline], &base->results->phases[cb->variant],
				&new->results->phases[cn->baseline], &new->results->phases[cn->variant],
			};
			unsigned *owned[4] = { NULL };
			struct stats_set sets[4];
			for (size_t q = 0; q < 4 && !rc; q++)
				rc = compare_phase_set(order[q], false, &sets[q], &owned[q]);
			if (!rc)
				rc = compare_ratio(sets, out->threshold, true, &cp->speedup);
			for (size_t q = 0; q < 4; q++)
				free(owned[q]);
			if (rc)
				goto out;
		}
		if (i != SIZE_MAX)
			compare_pair_side(base, i, true, cp);
		if (j != SIZE_MAX)
			compare_pair_side(new, j, false, cp);
	}
	rc = 0;
out:
	free_keys(kb, nb);
	free_keys(kn, nn);
	key_match_free(&m);
	return rc;
}

/* ---- checks ---- */

bool compare_check_worse(enum check_status from, enum check_status to)
{
	if (from == CHECK_SKIP || to == CHECK_SKIP)
		return false;
	return (from == CHECK_PASS && (to == CHECK_WARN || to == CHECK_FAIL)) || (from == CHECK_WARN && to == CHECK_FAIL);
}

static int compare_checks(const struct compare_side *base, const struct compare_side *new, struct compare_result *out)
{
	const struct analysis *ab = base->analysis, *an = new->analysis;
	struct key_match m;
	int rc = key_match_new(&m, ab->n_checks, an->n_checks);

	out->checks = calloc(ab->n_checks + an->n_checks + 1, sizeof(*out->checks));
	if (rc || !out->checks) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ab->n_checks; i++)
		m.kb[i] = ab->checks[i].id;
	for (size_t i = 0; i < an->n_checks; i++)
		m.kn[i] = an->checks[i].id;
	if ((rc = key_match_pair(&m)))
		goto out;
	for (size_t i = 0; i < ab->n_checks; i++) {
		struct compare_check *cc = &out->checks[out->n_checks++];
		size_t j = m.b_to_n[i];
		cc->id = ab->checks[i].id;
		cc->base = ab->checks[i].status;
		cc->base_message = ab->checks[i].message;
		cc->match = j == SIZE_MAX ? COMPARE_REMOVED : COMPARE_MATCHED;
		if (j == SIZE_MAX)
			continue;
		cc->new = an->checks[j].status;
		cc->new_message = an->checks[j].message;
		cc->worse = compare_check_worse(cc->base, cc->new);
		out->checks_worse += cc->worse;
		out->checks_now_failing += cc->worse && cc->new == CHECK_FAIL;
	}
	for (size_t j = 0; j < an->n_checks; j++) {
		if (m.n_used[j])
			continue;
		struct compare_check *cc = &out->checks[out->n_checks++];
		cc->id = an->checks[j].id;
		cc->match = COMPARE_ADDED;
		cc->new = an->checks[j].status;
		cc->new_message = an->checks[j].message;
	}
	rc = 0;
out:
	key_match_free(&m);
	return rc;
}

/* ---- the whole comparison ---- */

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
	out->runs_base = out->runs_new = 1;	/* compare_samples' runs stay 0: the test is within the runs */
	compare_environments(base, new, out);
	out->interrupted_base = base->results->interrupted;
	out->interrupted_new = new->results->interrupted;
	compare_apply_rules(out);
	return 0;
}

void compare_free(struct compare_result *r)
{
	free(r->phases);
	free(r->pairs);
	free(r->checks);
	memset(r, 0, sizeof(*r));
}
