/* SPDX-License-Identifier: MIT */
/* Checks on page faults: none inside timed accesses, and the pagefault workload's counts mean what its case says. */
#include <math.h>
#include <stdint.h>

#include "judge/analysis_internal.h"
#include "measure/workload.h"

/*
 * A fault costs a microsecond or so, a huge page's zeroing up to a few tens: at this much each, faults that add up to
 * under FAULTS_NEGLIGIBLE_SHARE of a tlbprof run phase's timed time cannot move its ns per access past its noise. A
 * marked benchmark's first clock read faults in the vDSO's data page inside its first phase, and every such
 * benchmark was warned of "1 page fault" (a review of foreign benchmarks found it). tlbprof's own phases run on
 * prefaulted memory, where any fault means the region was reclaimed: each is still warned about.
 */
#define FAULT_COST_MAX_NS 100e3
#define FAULTS_NEGLIGIBLE_SHARE 0.01

void checks_faults_in_timed_phase(const struct analysis_check_def *def, const struct analysis_input *in,
				  struct analysis *a)
{
	const struct phase_result *res = in->results;
	size_t n = in->n;
	double total = 0, v, negligible = 0, negligible_share = 0;
	size_t counted = 0;
	const struct phase_result *where = NULL;
	bool from_rusage = false;

	for (size_t i = 0; i < n; i++) {
		if (res[i].status != PHASE_OK || res[i].spec.workload->faults_expected)
			continue;
		if (analysis_counter(&res[i], METRIC_PAGE_FAULTS, &v)) {
			counted++;
		} else if (res[i].n_samples) {
			v = (double)(res[i].rusage_minflt + res[i].rusage_majflt);
			from_rusage = true;
			counted++;
		} else {
			continue;
		}
		double share = res[i].timed_ns > 0 ? v * FAULT_COST_MAX_NS / res[i].timed_ns : INFINITY;
		if (v > 0 && res[i].target && share < FAULTS_NEGLIGIBLE_SHARE) {
			negligible += v;
			negligible_share = fmax(negligible_share, share);
			continue;
		}
		if (v > 0 && !where)
			where = &res[i];
		total += v;
	}
	struct analysis_check *c;
	bool measured = false;
	for (size_t i = 0; i < n; i++)
		measured |= res[i].spec.workload->faults_expected;
	if (!counted)
		c = checks_add(a, def, CHECK_SKIP,
			       measured ? "page faults are what this workload measures" : "no fault count available");
	else if (total > 0)
		c = checks_add(a, def, CHECK_WARN,
			       "%.0f page faults happened inside timed samples (first in %s, from %s): each costs "
			       "microseconds and inflates ns per access; the region was not fully prefaulted or was "
			       "reclaimed", total, where->spec.name, from_rusage ? "getrusage" : "the page-faults counter");
	else if (negligible > 0)
		c = checks_add(a, def, CHECK_PASS, "%.0f page fault%s inside the timed samples of the command's "
			       "phases, at most %.2g %% of a phase's timed time at %.0f us each (a first clock read's "
			       "vDSO page, say): too few to move ns per access", negligible, negligible == 1 ? "" : "s",
			       100 * negligible_share, FAULT_COST_MAX_NS / 1e3);
	else
		c = checks_add(a, def, CHECK_PASS, "no page fault inside the timed samples");
	checks_evidence(c, "faults", total);
	if (negligible > 0)
		checks_evidence(c, "negligible_faults", negligible);
}

/* A process-to-process spread above this: page-cache or allocator state differs between processes. */
static const double PROCESS_SPREAD_MAX = 0.10;
/* Faults per page within this fraction of one fault per page (per 2 MiB on THP). */
static const double FAULTS_PER_PAGE_TOLERANCE = 0.10;

/*
 * The pagefault workload's own checks (the five below): fault counts mean
 * what the case says. Each judges the phases of a fault case that ran with
 * samples: their fault metrics, or NULL for any other phase.
 */
static const struct fault_metrics *ran_faults(const struct phase_result *r, const struct phase_analysis *pa)
{
	if (r->spec.fault_case == FAULT_NONE || r->status != PHASE_OK || !pa->faults.valid)
		return NULL;
	return &pa->faults;
}

void checks_anon_cold_faults_per_page(const struct analysis_check_def *def, const struct analysis_input *in,
				      struct analysis *a)
{
	size_t cold = 0, cold_bad = 0;
	double worst_ratio = 1;
	const char *cold_where = NULL;

	for (size_t i = 0; i < in->n; i++) {
		const struct phase_result *r = &in->results[i];
		const struct fault_metrics *fm = ran_faults(r, &a->phases[i]);
		if (!fm || r->spec.fault_case != FAULT_ANON_COLD)
			continue;
		/* One fault per page, one per huge page when THP backs it. */
		uint64_t pages = r->fault_samples[0].pages;
		uint64_t per = r->backing_known && r->backing.kind != PAGE_BASE ? r->spec.page.bytes / 4096 : 1;
		double ratio = (fm->minor + fm->major) / ((double)pages / (double)per);
		cold++;
		if (fabs(ratio - 1) > FAULTS_PER_PAGE_TOLERANCE) {
			cold_bad++;
			if (fabs(ratio - 1) > fabs(worst_ratio - 1)) {
				worst_ratio = ratio;
				cold_where = r->spec.name;
			}
		}
	}
	struct analysis_check *c;
	if (!cold)
		c = checks_add(a, def, CHECK_SKIP, "no anon_cold phase ran");
	else if (cold_bad)
		c = checks_add(a, def, CHECK_WARN,
			       "%s: %.2f faults per expected fault (one per base page, one per 2 MiB with THP): the "
			       "first touch did not fault as the case defines (fault-around, THP collapse, or reclaim)",
			       cold_where, worst_ratio);
	else
		c = checks_add(a, def, CHECK_PASS,
			       "every anon_cold sample faulted once per page (once per 2 MiB with THP), within %.0f %%",
			       100 * FAULTS_PER_PAGE_TOLERANCE);
	checks_evidence(c, "phases", (double)cold);
	checks_evidence(c, "worst_ratio", worst_ratio);
}

void checks_anon_prefault_no_faults(const struct analysis_check_def *def, const struct analysis_input *in,
				    struct analysis *a)
{
	size_t pre = 0, pre_bad = 0;
	double pre_faults = 0;

	for (size_t i = 0; i < in->n; i++) {
		const struct fault_metrics *fm = ran_faults(&in->results[i], &a->phases[i]);
		if (!fm || in->results[i].spec.fault_case != FAULT_ANON_PREFAULT)
			continue;
		pre++;
		if (fm->minor + fm->major > 0) {
			pre_bad++;
			pre_faults = fmax(pre_faults, fm->minor + fm->major);
		}
	}
	struct analysis_check *c;
	if (!pre)
		c = checks_add(a, def, CHECK_SKIP, "no anon_prefault phase ran");
	else if (pre_bad)
		c = checks_add(a, def, CHECK_FAIL,
			       "a prefaulted region still took %.0f faults per timed touch: the prefault did not stick "
			       "(memory pressure, or a THP split)", pre_faults);
	else
		c = checks_add(a, def, CHECK_PASS,
			       "prefaulted touches took no fault: the timed loop costs ns per page, not per fault");
	checks_evidence(c, "faults", pre_faults);
}

void checks_file_cold_major_faults(const struct analysis_check_def *def, const struct analysis_input *in,
				   struct analysis *a)
{
	size_t file = 0, file_bad = 0, file_skip = 0;
	double resident = 0;
	const char *file_where = NULL;

	for (size_t i = 0; i < in->n; i++) {
		const struct phase_result *r = &in->results[i];
		if (r->spec.fault_case != FAULT_FILE_COLD)
			continue;
		if (r->status == PHASE_SKIPPED) {
			file_skip++;
			file_where = r->spec.name;
			continue;
		}
		const struct fault_metrics *fm = ran_faults(r, &a->phases[i]);
		if (!fm)
			continue;
		file++;
		resident = fmax(resident, fm->resident_before);
		if (fm->major <= 0) {
			file_bad++;
			file_where = r->spec.name;
		}
	}
	struct analysis_check *c;
	if (!file && !file_skip)
		c = checks_add(a, def, CHECK_SKIP, "no file_cold phase ran");
	else if (file_skip && !file)
		c = checks_add(a, def, CHECK_SKIP,
			       "%s was skipped: its file could not be evicted from the page cache (see its reason)",
			       file_where);
	else if (file_bad)
		c = checks_add(a, def, CHECK_FAIL,
			       "%s took no major fault although the file was evicted (%.1f %% resident before): the "
			       "reads did not go to the device", file_where, 100 * resident);
	else
		c = checks_add(a, def, CHECK_PASS,
			       "file_cold took major faults with at most %.1f %% of the file resident before timing",
			       100 * resident);
	checks_evidence(c, "resident_before", resident);
}

void checks_fault_counts_agree(const struct analysis_check_def *def, const struct analysis_input *in,
			       struct analysis *a)
{
	size_t rusage_n = 0, rusage_bad = 0;

	for (size_t i = 0; i < in->n; i++) {
		const struct fault_metrics *fm = ran_faults(&in->results[i], &a->phases[i]);
		if (!fm || !fm->from_counters)
			continue;
		rusage_n++;
		rusage_bad += !fm->rusage_agrees;
	}
	struct analysis_check *c;
	if (!rusage_n)
		c = checks_add(a, def, CHECK_SKIP, "no fault counts from both perf and getrusage");
	else if (rusage_bad)
		c = checks_add(a, def, CHECK_WARN,
			       "in %zu of %zu phases the perf fault counters and getrusage disagree: one of them missed "
			       "faults (another thread, or counting limited to user space)", rusage_bad, rusage_n);
	else
		c = checks_add(a, def, CHECK_PASS,
			       "perf software counters and getrusage count the same faults (%zu %s)", rusage_n,
			       checks_phases_word(rusage_n));
	checks_evidence(c, "disagree", (double)rusage_bad);
}

void checks_process_spread(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	size_t spread_n = 0;
	double worst_spread = 0;
	const char *spread_where = NULL;

	for (size_t i = 0; i < in->n; i++) {
		const struct fault_metrics *fm = ran_faults(&in->results[i], &a->phases[i]);
		if (!fm || fm->processes <= 1)
			continue;
		spread_n++;
		if (fm->process_spread > worst_spread) {
			worst_spread = fm->process_spread;
			spread_where = in->results[i].spec.name;
		}
	}
	struct analysis_check *c;
	if (!spread_n)
		c = checks_add(a, def, CHECK_SKIP, "no phase ran in several processes");
	else if (worst_spread > PROCESS_SPREAD_MAX)
		c = checks_add(a, def, CHECK_WARN,
			       "%s: the processes' medians differ by %.0f %% (limit %.0f %%): page-cache, allocator or "
			       "host state changes between runs; report the median of processes, not one run",
			       spread_where, 100 * worst_spread, 100 * PROCESS_SPREAD_MAX);
	else
		c = checks_add(a, def, CHECK_PASS, "the processes agree within %.0f %%", 100 * worst_spread);
	checks_evidence(c, "worst_spread", worst_spread);
}
