/* SPDX-License-Identifier: MIT */
/* Per-phase statistics (latency, faults, allocations, packed control) and what the analysis reads off a phase. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/analysis.h"
#include "judge/analysis_internal.h"

static const struct counter_info *counter_find(const struct phase_result *r, enum metric m, size_t *idx)
{
	for (size_t i = 0; i < r->n_counters; i++) {
		if (r->counter_info[i].metric == m) {
			if (idx)
				*idx = i;
			return &r->counter_info[i];
		}
	}
	return NULL;
}

/* Spread between allocations (their medians) and within them (stddev / mean), from the sample tags. */
static void allocation_spread(const struct phase_result *r, struct phase_analysis *pa)
{
	double med[STATS_MAX_GROUPS], cv[STATS_MAX_GROUPS];
	struct stats_groups g;
	size_t k;

	if (!r->sample_alloc || !r->n_samples) {
		pa->allocations = 0;
		return;
	}
	if (stats_group(r->samples_ns, r->sample_alloc, r->n_samples, &g))
		return;
	k = g.k < STATS_MAX_GROUPS ? g.k : STATS_MAX_GROUPS;
	for (size_t i = 0; i < k; i++) {
		struct stats_summary st;
		stats_summarize(g.v + g.start[i], g.len[i], &st);
		med[i] = st.median;
		cv[i] = st.mean > 0 ? st.stddev / st.mean : 0;
	}
	stats_groups_free(&g);
	pa->allocations = (unsigned)k;
	struct stats_summary sm, sc;
	stats_summarize(med, k, &sm);
	stats_summarize(cv, k, &sc);
	pa->between_allocations = k > 1 ? sm.rel_spread : 0;
	pa->within_allocation = sc.median;
}

/*
 * The precision the median can claim: its own half-width (allocations as
 * the unit) and the host's part from the second passes, from the samples,
 * so a saved report is judged the same as the run that made it.
 */
static void median_precision(const struct phase_result *r, struct phase_analysis *pa)
{
	struct stats_claim c;

	stats_claim(r->samples_ns, r->sample_alloc, r->n_samples, r->rerun_ns, r->rerun_pass, r->n_rerun, &c);
	pa->precision_within = c.within;
	pa->second_pass = r->n_rerun > 0 && pa->ns.median > 0;
	pa->between_runs = pa->second_pass ? c.between : 0;
	pa->host = pa->second_pass ? c.host : 0;
	pa->passes = pa->second_pass ? c.passes : 0;
	pa->precision = c.claimed;
}

bool analysis_counter(const struct phase_result *r, enum metric m, double *value)
{
	size_t i;
	const struct counter_info *ci = counter_find(r, m, &i);

	if (!ci || !counter_counting(ci))
		return false;
	if (r->counters[i].running_ns == 0 && r->counters[i].enabled_ns)
		return false;	/* never scheduled: no information */
	*value = r->counters[i].scaled;
	return true;
}

bool analysis_per_access(const struct phase_result *r, enum metric m, double *rate)
{
	double v, n = r->spec.accesses_total ? (double)r->spec.accesses_total
					     : (double)r->spec.iterations * (double)r->n_samples;

	if (n <= 0 || !analysis_counter(r, m, &v))
		return false;
	*rate = v / n;
	return true;
}

const char *verdict_name(enum verdict v)
{
	static const char *const names[] = { [VERDICT_OK] = "ok", [VERDICT_WARN] = "warn", [VERDICT_FAIL] = "fail" };

	return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "?";
}

bool analysis_fails(enum verdict v, enum fail_on fail_on)
{
	switch (fail_on) {
	case FAIL_ON_FAIL:
		return v == VERDICT_FAIL;
	case FAIL_ON_WARN:
		return v != VERDICT_OK;
	case FAIL_ON_NEVER:
		return false;
	}
	return false;
}

bool analysis_measured_ok(const struct phase_result *r)
{
	return r->status == PHASE_OK && r->spec.role == PHASE_ROLE_MEASURE && r->n_samples;
}

int analysis_sample_clusters(const struct phase_result *r, const unsigned **cluster, unsigned **owned)
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

/* The core clock to turn ns into cycles: the calibrated one, else the phase's own. */
double analysis_clock_ghz(const struct timing_calibration *clock, const struct phase_result *r)
{
	if (clock && clock->core_clock_ghz > 0)
		return clock->core_clock_ghz;
	return r->cycles_per_ns;
}

void analysis_evidence_add(struct analysis_evidence *e, const char *key, double value)
{
	if (e->n < ANALYSIS_MAX_EVIDENCE) {
		e->items[e->n].key = key;
		e->items[e->n].value = value;
		e->n++;
	} else {
		e->dropped++;
	}
}

bool analysis_vtext(char *buf, size_t size, const char *fmt, va_list ap)
{
	static const char mark[] = "\u2026";	/* "…": 3 bytes */
	int len = vsnprintf(buf, size, fmt, ap);

	if (len < 0 || (size_t)len < size || size < sizeof(mark) + 1)
		return false;
	size_t at = size - sizeof(mark);
	while (at > 0 && ((unsigned char)buf[at] & 0xc0) == 0x80)	/* not inside a UTF-8 sequence */
		at--;
	memcpy(buf + at, mark, sizeof(mark));
	return true;
}

bool analysis_text(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bool cut = analysis_vtext(buf, size, fmt, ap);
	va_end(ap);
	return cut;
}

/* ---- page faults ---- */

void analysis_fault_metrics(const struct fault_sample *s, size_t n, struct fault_metrics *out)
{
	double *npf = calloc(n + 1, sizeof(double)), *npp = calloc(n + 1, sizeof(double));
	double *ppf = calloc(n + 1, sizeof(double)), *mbs = calloc(n + 1, sizeof(double));
	double *minor = calloc(n + 1, sizeof(double)), *major = calloc(n + 1, sizeof(double));
	size_t nf = 0;
	unsigned procs = 0;

	memset(out, 0, sizeof(*out));
	if (!n || !npf || !npp || !ppf || !mbs || !minor || !major)
		goto out;
	out->valid = true;
	out->from_counters = true;
	out->rusage_agrees = true;
	for (size_t i = 0; i < n; i++) {
		bool counted = s[i].minor >= 0 && s[i].major >= 0;
		double mi = counted ? s[i].minor : (double)s[i].minor_rusage;
		double ma = counted ? s[i].major : (double)s[i].major_rusage;
		double ru = (double)(s[i].minor_rusage + s[i].major_rusage);
		out->from_counters &= counted;
		if (counted && fabs(ru - (mi + ma)) > 2 + 0.01 * (mi + ma))
			out->rusage_agrees = false;
		minor[i] = mi;
		major[i] = ma;
		npp[i] = s[i].pages ? s[i].elapsed_ns / (double)s[i].pages : 0;
		mbs[i] = s[i].elapsed_ns > 0 ? (double)s[i].pages * 4096.0 / 1048576.0 / (s[i].elapsed_ns / 1e9) : 0;
		if (mi + ma > 0) {
			npf[nf] = s[i].elapsed_ns / (mi + ma);
			ppf[nf] = (double)s[i].pages / (mi + ma);
			nf++;
		}
		out->user_s += s[i].user_ns / 1e9;
		out->sys_s += s[i].sys_ns / 1e9;
		out->wall_s += s[i].elapsed_ns / 1e9;
		out->resident_before = fmax(out->resident_before, s[i].resident_before);
		if (s[i].process + 1 > procs)
			procs = s[i].process + 1;
	}
	stats_summarize(npp, n, &out->ns_per_page);
	stats_summarize(mbs, n, &out->mib_per_s);
	stats_summarize(npf, nf, &out->ns_per_fault);
	stats_summarize(ppf, nf, &out->pages_per_fault);
	struct stats_summary st;
	stats_summarize(minor, n, &st);
	out->minor = st.median;
	stats_summarize(major, n, &st);
	out->major = st.median;
	out->processes = procs;
	/* Per-process medians of ns per page, then their spread. */
	double med[256];
	size_t nm = 0;
	for (unsigned p = 0; p < procs && nm < 256; p++) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (s[i].process == p)
				npf[k++] = npp[i];
		if (!k)
			continue;
		stats_summarize(npf, k, &st);
		med[nm++] = st.median;
	}
	stats_summarize(med, nm, &st);
	out->process_spread = nm > 1 ? st.rel_spread : 0;
out:
	free(npf);
	free(npp);
	free(ppf);
	free(mbs);
	free(minor);
	free(major);
}

/* ---- per-phase statistics and controls ---- */

void analysis_phase_metrics(const struct phase_result *res, size_t n, struct analysis *a)
{
	for (size_t i = 0; i < n; i++) {
		struct phase_analysis *pa = &a->phases[i];
		stats_summarize(res[i].samples_ns, res[i].n_samples, &pa->ns);
		analysis_fault_metrics(res[i].fault_samples, res[i].n_fault_samples, &pa->faults);
		allocation_spread(&res[i], pa);
		median_precision(&res[i], pa);
		if (!analysis_measured_ok(&res[i]))
			continue;
		for (size_t c = 0; c < n; c++) {
			const struct phase_spec *cs = &res[c].spec;
			if (cs->role != PHASE_ROLE_CONTROL || res[c].status != PHASE_OK || !res[c].n_samples ||
			    cs->controls_size_bytes != res[i].spec.size_bytes ||
			    cs->controls_stride_bytes != res[i].spec.stride_bytes || cs->workload != res[i].spec.workload ||
			    cs->layout != res[i].spec.layout)
				continue;
			struct stats_summary cst;
			stats_summarize(res[c].samples_ns, res[c].n_samples, &cst);
			pa->has_control = true;
			pa->control = c;
			pa->translation_ns = pa->ns.median - cst.median;
			break;
		}
	}
}
