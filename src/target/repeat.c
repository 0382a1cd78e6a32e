/* SPDX-License-Identifier: MIT */
/*
 * tlbprof run -r N, as perf stat -r N: the command runs N times, and each
 * run's phases join the phases of the same name. The samples of run k are
 * tagged as allocation k, so the judge sees the runs as it sees a workload's
 * allocations: the interval of a median is over the runs' medians, and the
 * spread between runs is the spread it reports and checks.
 */
#include "target/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int push_repeat(struct target_result *tr, const struct target_result *run)
{
	struct target_repeat *bigger = realloc(tr->repeats, (tr->n_repeats + 1) * sizeof(*bigger));

	if (!bigger)
		return -ENOMEM;
	tr->repeats = bigger;
	tr->repeats[tr->n_repeats++] = (struct target_repeat){ .wall_ns = run->wall_ns, .exited = run->exited,
							       .exit_code = run->exit_code,
							       .term_signal = run->term_signal };
	return 0;
}

int target_repeat_begin(struct target_result *tr, unsigned requested)
{
	tr->repeats_requested = requested;
	return push_repeat(tr, tr);
}

/* v[0..*n-1] followed by add[0..n_add-1]; -ENOMEM leaves v as it was. */
static int append_doubles(double **v, size_t *n, const double *add, size_t n_add)
{
	if (!n_add)
		return 0;
	double *bigger = realloc(*v, (*n + n_add) * sizeof(*bigger));
	if (!bigger)
		return -ENOMEM;
	memcpy(bigger + *n, add, n_add * sizeof(*add));
	*v = bigger;
	*n += n_add;
	return 0;
}

/* Counts of one event over two runs: summed, rescaled as one count (counter_reading_add_delta from zero). */
static void add_counts(struct counter_reading *into, struct counter_info *info, const struct counter_reading *from,
		       const struct counter_info *from_info, size_t n)
{
	static const struct counter_reading zero;

	for (size_t i = 0; i < n; i++) {
		counter_reading_add_delta(&into[i], &zero, &from[i], info[i].hardware);
		/* The worst status either run saw (one multiplexed run makes the sum multiplexed). */
		if (from_info && info[i].status == COUNTER_OK && from_info[i].status != COUNTER_OK)
			info[i] = from_info[i];
	}
}

/* Phase from (of run `run`, 0-based) added to phase into of the same name. */
static int add_phase(struct phase_result *into, const struct phase_result *from, unsigned run)
{
	struct target_phase *ti = into->target;
	const struct target_phase *tf = from->target;
	size_t n0 = into->n_samples;

	if (append_doubles(&into->samples_ns, &into->n_samples, from->samples_ns, from->n_samples) != 0)
		return -ENOMEM;
	unsigned *alloc = realloc(into->sample_alloc, (into->n_samples ? into->n_samples : 1) * sizeof(*alloc));
	if (!alloc)
		return -ENOMEM;
	into->sample_alloc = alloc;
	for (size_t i = n0; i < into->n_samples; i++)
		alloc[i] = run;
	if (append_doubles(&ti->wall_ns, &ti->n_wall, tf->wall_ns, tf->n_wall) != 0)
		return -ENOMEM;
	/* The runs that held the phase, as a workload's allocations (params.allocations, precision.allocations). */
	into->allocations_run = (into->allocations_run ? into->allocations_run : 1) + 1;
	into->spec.allocations = into->allocations_run;
	if (into->status == PHASE_OK && from->status != PHASE_OK) {
		into->status = from->status;
		into->unavailable = from->unavailable;
		memcpy(into->reason, from->reason, sizeof(into->reason));
	}
	if (into->n_counters == from->n_counters && into->counters && from->counters)
		add_counts(into->counters, into->counter_info, from->counters, from->counter_info, into->n_counters);
	into->rusage_minflt += from->rusage_minflt;
	into->rusage_majflt += from->rusage_majflt;
	into->steal_ticks += from->steal_ticks;
	into->steal_ms += from->steal_ms;
	into->stat_ticks += from->stat_ticks;
	into->timed_ns += from->timed_ns;
	if (into->spec.accesses_total <= UINT64_MAX - from->spec.accesses_total)
		into->spec.accesses_total += from->spec.accesses_total;
	ti->occurrences += tf->occurrences;
	into->spec.repeat = ti->occurrences;
	if (from->spec.timings > into->spec.timings)
		into->spec.timings = from->spec.timings;
	ti->has_accesses |= tf->has_accesses;
	ti->open_at_exit |= tf->open_at_exit;
	ti->region_changed |= tf->region_changed;
	ti->tlbprof_ns_total += tf->tlbprof_ns_total;
	if (ti->samples_in_phase >= 0 && tf->samples_in_phase >= 0)
		ti->samples_in_phase += tf->samples_in_phase;
	/* The worst backing any run had: the least resident, the most zero pages, either VmFlag. */
	if (tf->resident_fraction >= 0 && (ti->resident_fraction < 0 || tf->resident_fraction < ti->resident_fraction))
		ti->resident_fraction = tf->resident_fraction;
	if (tf->zero_fraction > ti->zero_fraction)
		ti->zero_fraction = tf->zero_fraction;
	ti->vm_nh |= tf->vm_nh;
	ti->vm_hg |= tf->vm_hg;
	return 0;
}

/* A phase only later runs had: moved into into's table, its samples tagged with its run. */
static int move_phase(struct run_results *into, struct phase_result *from, unsigned run)
{
	if (into->n >= TARGET_MAX_PHASES)
		return 0;	/* as a single run: phases beyond the table are not kept */
	struct phase_result *r = &into->phases[into->n];
	*r = *from;
	memset(from, 0, sizeof(*from));
	r->spec.index = (unsigned)into->n++;
	for (size_t i = 0; r->sample_alloc && i < r->n_samples; i++)
		r->sample_alloc[i] = run;
	r->allocations_run = r->spec.allocations = 1;
	return 0;
}

int target_repeat_add(struct run_results *into, struct target_result *tr, struct run_results *from,
		      struct target_result *tr_from)
{
	unsigned run = (unsigned)tr->n_repeats;

	if (!into->phases)
		return -ENOMEM;
	for (size_t i = 0; i < from->n; i++) {
		struct phase_result *f = &from->phases[i], *match = NULL;
		for (size_t j = 0; j < into->n && !match; j++)
			if (strcmp(into->phases[j].spec.name, f->spec.name) == 0)
				match = &into->phases[j];
		if ((match ? add_phase(match, f, run) : move_phase(into, f, run)) != 0)
			return -ENOMEM;
	}
	for (size_t i = 0; i < into->n; i++)
		into->phases[i].precision_reached = stats_precision(into->phases[i].samples_ns,
								    into->phases[i].sample_alloc,
								    into->phases[i].n_samples);
	into->interrupted |= from->interrupted;
	if (push_repeat(tr, tr_from) != 0)
		return -ENOMEM;
	/* The whole command's counts summed; how it ended, the last run's; the watch and samples stay run 1's. */
	if (tr->n_counters == tr_from->n_counters && tr->counters && tr_from->counters)
		add_counts(tr->counters, tr->counter_info, tr_from->counters, tr_from->counter_info, tr->n_counters);
	tr->wall_ns += tr_from->wall_ns;
	tr->exited = tr_from->exited;
	tr->exit_code = tr_from->exit_code;
	tr->term_signal = tr_from->term_signal;
	tr->core_dumped = tr_from->core_dumped;
	tr->interrupted |= tr_from->interrupted;
	for (unsigned i = 0; i < tr_from->errors && tr->errors + i < TARGET_MAX_ERRORS; i++)
		memcpy(tr->error_lines[tr->errors + i], tr_from->error_lines[i], sizeof(tr->error_lines[0]));
	tr->messages += tr_from->messages;
	tr->caller_reads += tr_from->caller_reads;
	tr->errors += tr_from->errors;
	tr->markers_seen |= tr_from->markers_seen;
	tr->control_seen |= tr_from->control_seen;
	return 0;
}
