/* SPDX-License-Identifier: MIT */
/* Several reports a side: phases, comparisons and checks matched across all of them, each run one observation. */
#include "judge/compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "judge/compare_internal.h"

/* The reports of one side. */
struct side_runs {
	const struct compare_side *s;
	size_t n;
};

/* One thing to match across every report: a phase (name and which of that name), a comparison, a check. */
struct run_key {
	const char *a, *b;	/* a phase's name and NULL; a comparison's baseline and variant; a check's id and NULL */
	size_t k;		/* the k-th phase of that name in a report (0 for the others) */
};

static bool same_key(const struct run_key *x, const struct run_key *y)
{
	return x->k == y->k && strcmp(x->a, y->a) == 0 && (!x->b || strcmp(x->b, y->b) == 0);
}

/* Append key to keys[0..*n-1] unless it is there (a linear search: reports hold hundreds of phases, not more). */
static void key_add(struct run_key *keys, size_t *n, struct run_key key)
{
	for (size_t i = 0; i < *n; i++)
		if (same_key(&keys[i], &key))
			return;
	keys[(*n)++] = key;
}

/* The k-th phase named name in r, or SIZE_MAX. */
static size_t find_phase(const struct run_results *r, const char *name, size_t k)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->phases[i].spec.name, name) == 0 && k-- == 0)
			return i;
	return SIZE_MAX;
}

/* How many phases before phase i of r have its name. */
static size_t occurrence(const struct run_results *r, size_t i)
{
	size_t k = 0;

	for (size_t j = 0; j < i; j++)
		k += strcmp(r->phases[j].spec.name, r->phases[i].spec.name) == 0;
	return k;
}

/* The comparison of s between the phases named baseline and variant, or SIZE_MAX. */
static size_t find_pair(const struct compare_side *s, const char *baseline, const char *variant)
{
	for (size_t i = 0; i < s->analysis->n_comparisons; i++) {
		const struct comparison *c = &s->analysis->comparisons[i];
		if (strcmp(s->results->phases[c->baseline].spec.name, baseline) == 0 &&
		    strcmp(s->results->phases[c->variant].spec.name, variant) == 0)
			return i;
	}
	return SIZE_MAX;
}

/* The median of v[0..n-1] into *m (NAN when n is 0). 0 or -ENOMEM. */
static int median_of(const double *v, size_t n, double *m)
{
	double *copy = malloc((n ? n : 1) * sizeof(*copy));

	if (!copy)
		return -ENOMEM;
	if (n)
		memcpy(copy, v, n * sizeof(*v));
	*m = n ? stats_median_inplace(copy, n) : NAN;
	free(copy);
	return 0;
}

/* The median a phase is compared on in one report (ns per access, per page, or per occurrence); NAN: none. */
static int phase_median(const struct phase_result *r, bool wall, double *m, size_t *n)
{
	*n = wall ? (compare_phase_wall(r) ? r->target->n_wall : 0) : compare_phase_measured(r) ? r->n_samples : 0;
	return median_of(wall ? (*n ? r->target->wall_ns : NULL) : r->samples_ns, *n, m);
}

/* The median ns per fault of a page-fault phase in one report. */
static int fault_median(const struct phase_result *r, double *m, size_t *n)
{
	double *v = malloc((r->n_fault_samples + 1) * sizeof(*v));
	unsigned *c = malloc((r->n_fault_samples + 1) * sizeof(*c));
	int rc = -ENOMEM;

	if (v && c) {
		*n = compare_fault_samples_of(r, v, c);
		rc = median_of(v, *n, m);
	}
	free(v);
	free(c);
	return rc;
}

/* Each run's values of one phase on one side: its median, per fault, over its control. */
struct phase_values {
	double ns[COMPARE_MAX_RUNS], fault[COMPARE_MAX_RUNS], control[COMPARE_MAX_RUNS];
	size_t n_ns, n_fault, n_control;
	size_t samples_ns, samples_fault, samples_control;
};

/*
 * The values of run r's phase i (SIZE_MAX: the run lacks it) into pv;
 * control_name: the control the phase is measured against (NULL: none).
 */
static int run_phase_values(const struct compare_side *r, size_t i, const struct compare_phase *cp,
			    const char *control_name, struct phase_values *pv)
{
	const struct phase_result *ph = &r->results->phases[i];
	double m, mf, mc;
	size_t n, nf, nc;
	int rc;

	if ((rc = phase_median(ph, cp->wall, &m, &n)) || !n)
		return rc;
	pv->ns[pv->n_ns++] = m;
	pv->samples_ns += n;
	if (cp->faults && !(rc = fault_median(ph, &mf, &nf)) && nf) {
		pv->fault[pv->n_fault++] = mf;
		pv->samples_fault += nf;
	}
	const struct phase_analysis *pa = &r->analysis->phases[i];
	if (rc || !control_name || cp->control || cp->wall || !pa->has_control)
		return rc;
	const struct phase_result *ctl = &r->results->phases[pa->control];
	if (strcmp(ctl->spec.name, control_name) != 0 || (rc = phase_median(ctl, false, &mc, &nc)) || !nc)
		return rc;
	pv->control[pv->n_control++] = m / mc;
	pv->samples_control += n < nc ? n : nc;
	return 0;
}

/* The control a phase of report r is measured against, or NULL. */
static const char *control_of(const struct compare_side *r, size_t i)
{
	const struct phase_analysis *pa = &r->analysis->phases[i];

	return pa->has_control ? r->results->phases[pa->control].spec.name : NULL;
}

/* Where each run of a side has the phase, and which run stands for the side (the first that measured it). */
static void locate(const struct side_runs *side, const struct run_key *key, size_t *idx, size_t *rep, size_t *present,
		   uint64_t *missing)
{
	size_t first = SIZE_MAX, measured = SIZE_MAX;

	*present = 0;
	for (size_t r = 0; r < side->n; r++) {
		idx[r] = find_phase(side->s[r].results, key->a, key->k);
		*missing |= (uint64_t)(idx[r] == SIZE_MAX) << r;
		if (idx[r] == SIZE_MAX)
			continue;
		const struct phase_result *ph = &side->s[r].results->phases[idx[r]];
		if (!(*present)++)
			first = r;
		if (measured == SIZE_MAX && (compare_phase_measured(ph) || compare_phase_wall(ph)))
			measured = r;
	}
	*rep = measured != SIZE_MAX ? measured : first;
}

static int phase_many(const struct side_runs *b, const struct side_runs *n, const struct run_key *key,
		      double threshold, struct compare_phase *cp)
{
	size_t ib[COMPARE_MAX_RUNS], in[COMPARE_MAX_RUNS], rb, rn, pb, pn;
	struct phase_values *vb = calloc(1, sizeof(*vb)), *vn = calloc(1, sizeof(*vn));
	int rc = 0;

	if (!vb || !vn) {
		rc = -ENOMEM;
		goto out;
	}
	locate(b, key, ib, &rb, &pb, &cp->missing_mask_base);
	locate(n, key, in, &rn, &pn, &cp->missing_mask_new);
	cp->name = key->a;
	cp->base_run = rb == SIZE_MAX ? 0 : rb;
	cp->new_run = rn == SIZE_MAX ? 0 : rn;
	cp->base = rb == SIZE_MAX ? SIZE_MAX : ib[rb];
	cp->new = rn == SIZE_MAX ? SIZE_MAX : in[rn];
	cp->missing_base = b->n - pb;
	cp->missing_new = n->n - pn;
	cp->match = !pb ? COMPARE_ADDED : !pn ? COMPARE_REMOVED : COMPARE_MATCHED;
	compare_phase_describe(pb ? &b->s[rb].results->phases[cp->base] : NULL,
			       pn ? &n->s[rn].results->phases[cp->new] : NULL, cp);
	/* Against a control only where both sides' first measurements have the same one (as with one report a side). */
	const char *ctl = pb && pn ? control_of(&b->s[rb], cp->base) : NULL;
	if (ctl && (!control_of(&n->s[rn], cp->new) || strcmp(ctl, control_of(&n->s[rn], cp->new)) != 0))
		ctl = NULL;
	for (size_t r = 0; r < b->n && !rc; r++)
		if (ib[r] != SIZE_MAX)
			rc = run_phase_values(&b->s[r], ib[r], cp, ctl, vb);
	for (size_t r = 0; r < n->n && !rc; r++)
		if (in[r] != SIZE_MAX)
			rc = run_phase_values(&n->s[r], in[r], cp, ctl, vn);
	if (rc)
		goto out;
	cp->ns.n_base = vb->samples_ns;
	cp->ns.n_new = vn->samples_ns;
	compare_between_runs(vb->ns, vb->n_ns, vn->ns, vn->n_ns, threshold, false, &cp->ns);
	if (cp->faults) {
		cp->ns_per_fault.n_base = vb->samples_fault;
		cp->ns_per_fault.n_new = vn->samples_fault;
		compare_between_runs(vb->fault, vb->n_fault, vn->fault, vn->n_fault, threshold, false, &cp->ns_per_fault);
	}
	if (ctl && vb->n_control && vn->n_control) {
		cp->control_name = ctl;
		cp->vs_control.n_base = vb->samples_control;
		cp->vs_control.n_new = vn->samples_control;
		compare_between_runs(vb->control, vb->n_control, vn->control, vn->n_control, threshold, false,
				     &cp->vs_control);
	}
out:
	free(vb);
	free(vn);
	return rc;
}

static int phases_many(const struct side_runs *b, const struct side_runs *n, struct compare_result *out)
{
	size_t total = 0, nk = 0;
	int rc = 0;

	for (int side = 0; side < 2; side++)
		for (size_t r = 0; r < (side ? n : b)->n; r++)
			total += (side ? n : b)->s[r].results->n;
	struct run_key *keys = malloc((total + 1) * sizeof(*keys));
	out->phases = calloc(total + 1, sizeof(*out->phases));
	if (!keys || !out->phases) {
		free(keys);
		return -ENOMEM;
	}
	/* The order of the first base report, then what the others add, then what only the new side has. */
	for (int side = 0; side < 2; side++) {
		const struct side_runs *sr = side ? n : b;
		for (size_t r = 0; r < sr->n; r++)
			for (size_t i = 0; i < sr->s[r].results->n; i++)
				key_add(keys, &nk, (struct run_key){ sr->s[r].results->phases[i].spec.name, NULL,
								     occurrence(sr->s[r].results, i) });
	}
	for (size_t i = 0; i < nk && !rc; i++)
		rc = phase_many(b, n, &keys[i], out->threshold, &out->phases[out->n_phases++]);
	free(keys);
	return rc;
}

/* Where each run of a side has the comparison; the first that has it stands for the side. */
static size_t locate_pair(const struct side_runs *side, const struct run_key *key, size_t *idx, size_t *rep,
			  uint64_t *missing)
{
	size_t present = 0;

	*rep = SIZE_MAX;
	for (size_t r = 0; r < side->n; r++) {
		idx[r] = find_pair(&side->s[r], key->a, key->b);
		*missing |= (uint64_t)(idx[r] == SIZE_MAX) << r;
		if (idx[r] != SIZE_MAX && !present++)
			*rep = r;
	}
	return present;
}

/* Each run's speedup of a comparison on one side, and the samples it rests on (the smaller phase's). */
static size_t pair_values(const struct side_runs *side, const size_t *idx, double *v, size_t *samples)
{
	size_t k = 0;

	*samples = 0;
	for (size_t r = 0; r < side->n; r++) {
		if (idx[r] == SIZE_MAX)
			continue;
		const struct compare_side *s = &side->s[r];
		const struct comparison *c = &s->analysis->comparisons[idx[r]];
		size_t nb = s->results->phases[c->baseline].n_samples, nv = s->results->phases[c->variant].n_samples;
		if (!compare_phase_measured(&s->results->phases[c->baseline]) ||
		    !compare_phase_measured(&s->results->phases[c->variant]) || !(c->speedup > 0))
			continue;
		v[k++] = c->speedup;
		*samples += nb < nv ? nb : nv;
	}
	return k;
}

static void pair_many(const struct side_runs *b, const struct side_runs *n, const struct run_key *key,
		      double threshold, struct compare_pair *cp)
{
	size_t ib[COMPARE_MAX_RUNS], in[COMPARE_MAX_RUNS], rb, rn, sb, sn;
	double vb[COMPARE_MAX_RUNS], vn[COMPARE_MAX_RUNS];
	size_t pb = locate_pair(b, key, ib, &rb, &cp->missing_mask_base), pn = locate_pair(n, key, in, &rn,
											    &cp->missing_mask_new);

	cp->baseline = key->a;
	cp->variant = key->b;
	cp->match = !pb ? COMPARE_ADDED : !pn ? COMPARE_REMOVED : COMPARE_MATCHED;
	cp->base_run = pb ? rb : 0;
	cp->new_run = pn ? rn : 0;
	cp->base = pb ? ib[rb] : SIZE_MAX;
	cp->new = pn ? in[rn] : SIZE_MAX;
	cp->missing_base = b->n - pb;
	cp->missing_new = n->n - pn;
	cp->base_delta_ns = cp->new_delta_ns = NAN;
	cp->base_ns_per_tlb_miss = cp->new_ns_per_tlb_miss = NAN;
	compare_samples_clear(&cp->speedup);
	if (pb)
		compare_pair_side(&b->s[rb], cp->base, true, cp);
	if (pn)
		compare_pair_side(&n->s[rn], cp->new, false, cp);
	size_t kb = pair_values(b, ib, vb, &sb), kn = pair_values(n, in, vn, &sn);
	cp->speedup.n_base = sb;
	cp->speedup.n_new = sn;
	compare_between_runs(vb, kb, vn, kn, threshold, true, &cp->speedup);
}

static int pairs_many(const struct side_runs *b, const struct side_runs *n, struct compare_result *out)
{
	size_t total = 0, nk = 0;

	for (int side = 0; side < 2; side++)
		for (size_t r = 0; r < (side ? n : b)->n; r++)
			total += (side ? n : b)->s[r].analysis->n_comparisons;
	struct run_key *keys = malloc((total + 1) * sizeof(*keys));
	out->pairs = calloc(total + 1, sizeof(*out->pairs));
	if (!keys || !out->pairs) {
		free(keys);
		return -ENOMEM;
	}
	for (int side = 0; side < 2; side++) {
		const struct side_runs *sr = side ? n : b;
		for (size_t r = 0; r < sr->n; r++) {
			const struct compare_side *s = &sr->s[r];
			for (size_t i = 0; i < s->analysis->n_comparisons; i++) {
				const struct comparison *c = &s->analysis->comparisons[i];
				key_add(keys, &nk, (struct run_key){ s->results->phases[c->baseline].spec.name,
								     s->results->phases[c->variant].spec.name, 0 });
			}
		}
	}
	for (size_t i = 0; i < nk; i++)
		pair_many(b, n, &keys[i], out->threshold, &out->pairs[out->n_pairs++]);
	free(keys);
	return 0;
}

/* skip < pass < warn < fail: the worst of a side's reports (skip only where every report could not judge). */
static int check_rank(enum check_status s)
{
	return s == CHECK_FAIL ? 3 : s == CHECK_WARN ? 2 : s == CHECK_PASS ? 1 : 0;
}

/* A check's worst status on a side, and the message of the first report with it; false when no report has it. */
static bool side_check(const struct side_runs *side, const char *id, enum check_status *status, const char **message)
{
	bool found = false;

	for (size_t r = 0; r < side->n; r++) {
		const struct analysis *a = side->s[r].analysis;
		for (size_t i = 0; i < a->n_checks; i++) {
			if (strcmp(a->checks[i].id, id) != 0)
				continue;
			if (!found || check_rank(a->checks[i].status) > check_rank(*status)) {
				*status = a->checks[i].status;
				*message = a->checks[i].message;
			}
			found = true;
			break;
		}
	}
	return found;
}

static int checks_many(const struct side_runs *b, const struct side_runs *n, struct compare_result *out)
{
	size_t total = 0, nk = 0;

	for (int side = 0; side < 2; side++)
		for (size_t r = 0; r < (side ? n : b)->n; r++)
			total += (side ? n : b)->s[r].analysis->n_checks;
	struct run_key *keys = malloc((total + 1) * sizeof(*keys));
	out->checks = calloc(total + 1, sizeof(*out->checks));
	if (!keys || !out->checks) {
		free(keys);
		return -ENOMEM;
	}
	for (int side = 0; side < 2; side++) {
		const struct side_runs *sr = side ? n : b;
		for (size_t r = 0; r < sr->n; r++)
			for (size_t i = 0; i < sr->s[r].analysis->n_checks; i++)
				key_add(keys, &nk, (struct run_key){ sr->s[r].analysis->checks[i].id, NULL, 0 });
	}
	for (size_t i = 0; i < nk; i++) {
		struct compare_check *cc = &out->checks[out->n_checks++];
		bool hb = side_check(b, keys[i].a, &cc->base, &cc->base_message);
		bool hn = side_check(n, keys[i].a, &cc->new, &cc->new_message);
		cc->id = keys[i].a;
		cc->match = !hb ? COMPARE_ADDED : !hn ? COMPARE_REMOVED : COMPARE_MATCHED;
		if (cc->match != COMPARE_MATCHED)
			continue;
		cc->worse = compare_check_worse(cc->base, cc->new);
		out->checks_worse += cc->worse;
		out->checks_now_failing += cc->worse && cc->new == CHECK_FAIL;
	}
	free(keys);
	return 0;
}

int compare_run_many(const struct compare_side *base, size_t n_base, const struct compare_side *new, size_t n_new,
		     double threshold, struct compare_result *out)
{
	const struct side_runs b = { base, n_base }, n = { new, n_new };
	int rc;

	memset(out, 0, sizeof(*out));
	if (!n_base || !n_new || n_base > COMPARE_MAX_RUNS || n_new > COMPARE_MAX_RUNS)
		return -EINVAL;
	if (n_base == 1 && n_new == 1)
		return compare_run(base, new, threshold, out);
	out->threshold = threshold;
	out->runs_base = n_base;
	out->runs_new = n_new;
	out->between_runs = true;
	if ((rc = phases_many(&b, &n, out)) || (rc = pairs_many(&b, &n, out)) || (rc = checks_many(&b, &n, out))) {
		compare_free(out);
		return rc;
	}
	/* The environments of each side's first report (how a side's own reports differ is not listed). */
	compare_environments(&base[0], &new[0], out);
	for (size_t r = 0; r < n_base; r++)
		out->interrupted_base |= base[r].results->interrupted;
	for (size_t r = 0; r < n_new; r++)
		out->interrupted_new |= new[r].results->interrupted;
	compare_apply_rules(out);
	return 0;
}
