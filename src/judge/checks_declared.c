/* SPDX-License-Identifier: MIT */
/* Checks of what a tlbprof run phase declared: its region resident, and its access count plausible. */
#include <math.h>
#include <string.h>

#include "judge/analysis_internal.h"
#include "measure/workload.h"

/*
 * A declared region less resident than this at a phase's end was partly
 * never touched (or given back): its chase reads the shared zero page or
 * faults inside the phase, and the working set is smaller than declared. 90 %
 * leaves room for a region declared a little larger than what is chased.
 */
static const double RESIDENT_MIN = 0.90;
/*
 * A phase this many times faster per access than tlbprof's own chase of the
 * same shape (slots, region bytes, page size, layout) has fewer accesses than
 * it declares: a latency chase cannot be sped up 3x by the benchmark's code,
 * while this VM moves a chase by 10-30 % between runs, and a loaded one by
 * up to 4x between minutes (both sides are floors: phase_floor_ns()).
 */
static const double PLAUSIBLE_FASTER_MAX = 3.0;

bool checks_declared_verified(const struct analysis_input *in, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < in->n; i++) {
		const struct phase_result *r = &in->results[i];
		const struct target_phase *tp = r->target;
		if (tp && tp->has_region && r->backing_known && tp->region_addr < end &&
		    start < tp->region_addr + tp->region_bytes)
			return true;
	}
	return false;
}

/* A tlbprof run phase that declared a region and had its backing read. */
static bool resident_known(const struct phase_result *r)
{
	return r->target && r->target->has_region && r->target->resident_fraction >= 0;
}

void checks_declared_region_resident(const struct analysis_check_def *def, const struct analysis_input *in,
				     struct analysis *a)
{
	const struct phase_result *worst = NULL;
	size_t declared = 0;

	for (size_t i = 0; i < in->n; i++) {
		const struct phase_result *r = &in->results[i];
		if (r->target && r->target->has_region)
			declared++;
		if (resident_known(r) && (!worst || r->target->resident_fraction < worst->target->resident_fraction))
			worst = r;
	}
	struct analysis_check *c;
	if (!worst) {
		c = checks_add(a, def, CHECK_SKIP, declared ? "could not tell, because the declared regions' smaps "
				"could not be read" : "no phase declared a region");
		checks_evidence(c, "declared_regions", (double)declared);
		return;
	}
	const struct target_phase *tp = worst->target;
	const char *how = tp->backing_exact ? "per page from /proc/PID/pagemap" : "from smaps, prorated to the range";
	if (tp->resident_fraction < RESIDENT_MIN)
		c = checks_add(a, def, CHECK_WARN,
			       "%s: only %.1f %% of its declared %.0f MiB region was resident at a phase end (%s)%s: the "
			       "chase %s; write every page of the region before the first timed phase",
			       worst->spec.name, 100 * tp->resident_fraction, (double)tp->region_bytes / (1 << 20), how,
			       tp->zero_fraction > 0 ? ", the rest on the shared zero page" : "",
			       tp->zero_fraction > 0 ? "reads one physical page of zeros, whatever its addresses"
						     : "faults inside the phase or covers less memory than declared");
	else
		c = checks_add(a, def, CHECK_PASS, "every declared region was at least %.0f %% resident (least: %s, "
			       "%.1f %%, %s)", 100 * RESIDENT_MIN, worst->spec.name, 100 * tp->resident_fraction, how);
	checks_evidence(c, "resident_fraction", tp->resident_fraction);
	checks_evidence(c, "zero_page_fraction", tp->zero_fraction);
	checks_evidence(c, "exact", tp->backing_exact);
}

/*
 * The fastest a phase demonstrably ran per declared access: its fastest
 * occurrence by wall time, or the task-clock over the declared accesses
 * where that is less (the command was preempted inside its windows). The
 * reference is the fastest of its chases on a CPU (target/reference.c takes
 * the thread's CPU time the same way): a floor against a floor, so that a
 * loaded or moving machine, which stretches some windows, neither hides an
 * inflated count nor makes an honest one look fast. Task-clock counts every
 * thread of the command, so it never undercounts the chasing thread: a
 * worker pool only makes it larger, and the wall time wins.
 */
static double phase_floor_ns(const struct phase_result *r, const struct phase_analysis *pa, bool *cpu)
{
	double per;

	*cpu = false;
	if (analysis_per_access(r, METRIC_TASK_CLOCK, &per) && per > 0 && per < pa->ns.min) {
		*cpu = true;
		return per;
	}
	return pa->ns.min;
}

void checks_declared_accesses_plausible(const struct analysis_check_def *def, const struct analysis_input *in,
					struct analysis *a)
{
	const struct phase_result *worst = NULL, *unknown = NULL;
	double worst_ratio = 0, worst_ns = 0;
	bool worst_cpu = false;
	size_t compared = 0;

	for (size_t i = 0; i < in->n; i++) {
		const struct phase_result *r = &in->results[i];
		if (!r->target || !r->target->has_accesses || r->spec.throughput || !r->n_samples)
			continue;
		if (r->target->reference_ns <= 0) {
			unknown = unknown ? unknown : r;
			continue;
		}
		bool cpu;
		double ns = phase_floor_ns(r, &a->phases[i], &cpu);
		if (!(ns > 0))
			continue;
		compared++;
		double ratio = r->target->reference_ns / ns;
		if (!worst || ratio > worst_ratio) {
			worst = r;
			worst_ratio = ratio;
			worst_ns = ns;
			worst_cpu = cpu;
		}
	}
	const char *how = worst_cpu ? "on a CPU over its occurrences, by task-clock" : "its fastest occurrence";
	struct analysis_check *c;
	if (!worst && unknown)
		c = checks_add(a, def, CHECK_SKIP, "could not tell, because %s has no reference chase: %s",
			       unknown->spec.name, *unknown->target->reference_why ? unknown->target->reference_why : "none");
	else if (!worst)
		c = checks_add(a, def, CHECK_SKIP, "no latency phase declared its accesses");
	else if (worst_ratio > PLAUSIBLE_FASTER_MAX)
		c = checks_add(a, def, CHECK_WARN,
			       "%s: %.2f ns per declared access (%s) is %.1fx faster than tlbprof's own chase of the same "
			       "shape (%.2f ns: its slots, region and page size): the phase made fewer accesses than it "
			       "declares (accesses= counts what the loop does, not what it was meant to do), or it overlaps "
			       "independent loads; check the count, or declare kind=throughput",
			       worst->spec.name, worst_ns, how, worst_ratio, worst->target->reference_ns);
	else
		c = checks_add(a, def, CHECK_PASS, "no declared phase is %.0fx faster than tlbprof's own chase of its "
			       "shape (fastest: %s at %.2fx the reference's speed, %.2f ns per declared access, %s)",
			       PLAUSIBLE_FASTER_MAX, worst->spec.name, worst_ratio, worst_ns, how);
	checks_evidence(c, "phases_compared", (double)compared);
	if (worst) {
		checks_evidence(c, "faster_than_reference", worst_ratio);
		checks_evidence(c, "reference_ns_per_access", worst->target->reference_ns);
		checks_evidence(c, "ns_per_access", worst_ns);
		checks_evidence(c, "on_cpu", worst_cpu);
	}
}
