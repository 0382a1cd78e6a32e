/* SPDX-License-Identifier: MIT */
/* tlbprof run's phases: each occurrence and window from its begin snapshot to its end, aggregated per phase name. */
#include "target/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine/environment.h"
#include "machine/timing.h"
#include "measure/workload.h"
#include "pmu/symbols.h"
#include "stats.h"

static double ms_of_ticks(uint64_t ticks)
{
	long hz = sysconf(_SC_CLK_TCK);
	return (double)ticks * 1000.0 / (double)(hz > 0 ? hz : 100);
}

static void append(double **v, size_t *n, double x)
{
	double *bigger = realloc(*v, (*n + 1) * sizeof(**v));
	if (!bigger)
		return;
	bigger[(*n)++] = x;
	*v = bigger;
}

/* What a phase's first begin declares: its region, page size, chain and accesses. */
static void declare(struct phase_result *r, const struct marker_msg *m)
{
	struct phase_spec *s = &r->spec;
	struct target_phase *tp = r->target;

	tp->has_accesses = m->has_accesses;
	tp->has_region = m->has_region;
	tp->region_addr = m->region_addr;
	tp->region_bytes = m->region_bytes;
	tp->has_page = m->has_page;
	tp->has_chain = m->has_chain;
	tp->chain_addr = m->chain_addr;
	tp->slots_declared = m->slots;
	if (m->has_page)
		s->page = m->page;
	s->size_bytes = m->has_region ? m->region_bytes : 0;
	if (m->slots && m->has_region) {
		s->stride_bytes = m->region_bytes / m->slots;
		r->slots = m->slots;	/* the declared working set, until a chain walk measures it */
	}
}

/* The result for phase name, created on first sight from what its begin declares. NULL: too many phases. */
static struct phase_result *phase_for(struct target_state *st, const struct marker_msg *m, const char *name,
				      bool *fresh)
{
	struct run_results *out = st->out;

	*fresh = false;
	if (!out->phases)
		return NULL;
	for (size_t i = 0; i < out->n; i++)
		if (strcmp(out->phases[i].spec.name, name) == 0)
			return &out->phases[i];
	if (out->n >= TARGET_MAX_PHASES)
		return NULL;
	struct phase_result *r = &out->phases[out->n];
	memset(r, 0, sizeof(*r));
	r->target = calloc(1, sizeof(*r->target));
	if (st->n_counters) {
		r->counter_info = calloc(st->n_counters, sizeof(*r->counter_info));
		r->counters = calloc(st->n_counters, sizeof(*r->counters));
	}
	if (!r->target || (st->n_counters && (!r->counter_info || !r->counters))) {
		free(r->target);
		free(r->counter_info);
		free(r->counters);
		memset(r, 0, sizeof(*r));
		return NULL;
	}
	struct phase_spec *s = &r->spec;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->index = (unsigned)out->n;
	s->workload = &workload_marked;
	s->cpu = st->opt->cpu;
	s->repeat = 0;
	s->throughput = m && m->throughput;
	r->n_counters = st->n_counters;
	for (size_t i = 0; i < st->n_counters; i++)
		r->counter_info[i] = *counter_set_info(st->ctx->counters, i);
	r->status = PHASE_OK;
	r->target->samples_in_phase = -1;
	r->target->resident_fraction = -1;
	r->stop_reason = "samples";
	r->precision_reached = INFINITY;
	r->cycles_per_ns = st->ctx->clock ? st->ctx->clock->core_clock_ghz : 0;
	if (m)
		declare(r, m);
	out->n++;
	*fresh = true;
	return r;
}

/*
 * /proc/stat's steal ticks, read at most once per clock tick (1/USER_HZ, its
 * resolution): one read costs ~17 µs, most of a marker call's handling.
 * Boundaries closer together share a reading, so a window shorter than a tick
 * gets the steal of the tick it lies in or none, and the total over
 * consecutive windows stays what /proc/stat says.
 */
static uint64_t steal_now(struct target_state *st)
{
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t now = timing_now_ns(), tick_ns = 1000000000u / (uint64_t)(hz > 0 ? hz : 100);

	if (!st->steal_read_ns || now - st->steal_read_ns >= tick_ns) {
		st->steal_ticks = environment_steal_ticks();
		st->steal_read_ns = now;
	}
	return st->steal_ticks;
}

/*
 * The counters at a boundary: as the benchmark's marker read them for this
 * message (on its own CPU, see tlbprof/marker.h), or read here when it sent
 * none or they do not decode as this set's groups.
 */
static void read_counters(struct target_state *st, struct counter_reading *out)
{
	if (st->given_words && counter_set_read_given(st->ctx->counters, st->given, st->given_words, out) == 0) {
		st->tr->caller_reads++;
		return;
	}
	counter_set_read(st->ctx->counters, out);
}

static void begin_window(struct target_state *st, int k, size_t index, uint64_t accesses)
{
	struct slot *sl = &st->slot[k];

	sl->phase = (long)index;
	sl->accesses = accesses;
	if (st->n_counters)
		read_counters(st, sl->snap);
	sl->begin_steal = steal_now(st);
	sl->begin_ns = timing_now_ns();
}

static void add_window(struct slot *sl, uint64_t now_ns)
{
	if (sl->n_windows == sl->cap_windows) {
		size_t cap = sl->cap_windows ? 2 * sl->cap_windows : 64;
		struct window *bigger = realloc(sl->windows, cap * sizeof(*bigger));
		if (!bigger)
			return;
		sl->windows = bigger;
		sl->cap_windows = cap;
	}
	sl->windows[sl->n_windows++] = (struct window){ (size_t)sl->phase, sl->begin_ns, now_ns };
}

bool target_phase_begin_marked(struct target_state *st, const struct marker_msg *m)
{
	bool fresh;
	struct phase_result *r = phase_for(st, m, m->name, &fresh);

	if (!r)
		return false;
	struct target_phase *tp = r->target;
	/* Another region than the phase's first: verify this occurrence's own, and walk its chain too. */
	if (!fresh && m->has_region && (m->region_addr != tp->region_addr || m->region_bytes != tp->region_bytes)) {
		tp->region_addr = m->region_addr;
		tp->region_bytes = m->region_bytes;
		tp->has_region = true;
		tp->region_changed = true;
	}
	bool new_chain = m->has_chain && (fresh || !tp->chain_inspected || m->chain_addr != tp->chain_addr);
	if (new_chain) {
		tp->has_chain = true;
		tp->chain_addr = m->chain_addr;
		/*
		 * Inspected at this occurrence's end, while the command waits for
		 * that ack: copying the region out runs it through tlbprof's caches,
		 * which slowed the sample after it by 25-60 % here. After the end,
		 * that is the second sample, which warmup_insufficient leaves out,
		 * and the first sample, the one a warm-up shows in, stays the
		 * benchmark's own.
		 */
		tp->chain_pending = true;
	}
	begin_window(st, SLOT_MARKER, (size_t)(r - st->out->phases), m->has_accesses ? m->accesses : 0);
	return true;
}

void target_window_open(struct target_state *st)
{
	bool fresh;
	struct phase_result *r = phase_for(st, NULL, WINDOW_NAME, &fresh);

	if (r) {
		st->window_count++;
		begin_window(st, SLOT_WINDOW, (size_t)(r - st->out->phases), 0);
	}
}

/* Add slot sl's counts since its begin snapshot to r, keeping each counter's worst status. */
static void add_counts(struct target_state *st, const struct slot *sl, struct phase_result *r)
{
	struct counter_set *cs = st->ctx->counters;

	read_counters(st, st->snap_end);
	for (size_t i = 0; i < st->n_counters; i++) {
		const struct counter_info *ci = counter_set_info(cs, i);
		counter_reading_add_delta(&r->counters[i], &sl->snap[i], &st->snap_end[i], ci->hardware);
		/* Keep the worst status seen (a multiplexed window makes the phase multiplexed). */
		if (r->counter_info[i].status == COUNTER_OK || ci->status != COUNTER_OK)
			r->counter_info[i] = *ci;
	}
}

/* One finished occurrence's wall time and accesses, as one sample of r (seen_ns: as tlbprof saw it). */
static void add_occurrence(struct target_state *st, const struct slot *sl, struct phase_result *r, double seen_ns,
			   const struct marker_msg *m)
{
	struct target_phase *tp = r->target;

	/*
	 * The benchmark's own wall time (from the acknowledged begin to its end
	 * call) lies inside tlbprof's window (from the begin snapshot to the end
	 * line read). One that does not is not this occurrence's: use tlbprof's.
	 */
	double wall = seen_ns;
	if (m && m->has_ns && (double)m->ns <= seen_ns)
		wall = (double)m->ns;
	else if (m && m->has_ns)
		target_note_error(st, "phase end", "ns=%llu is longer than the %.0f ns tlbprof saw for the occurrence "
				  "of '%s': ignored", (unsigned long long)m->ns, seen_ns, r->spec.name);
	uint64_t accesses = m && m->has_accesses ? m->accesses : sl->accesses;
	tp->tlbprof_ns_total += seen_ns;
	append(&tp->wall_ns, &tp->n_wall, wall);
	r->timed_ns += wall;
	tp->occurrences++;
	r->spec.repeat = tp->occurrences;
	if (m && m->timings)
		r->spec.timings = m->timings > r->spec.timings ? m->timings : r->spec.timings;
	/* Totals stay within what a report holds (a signed 64-bit integer). */
	if (accesses && r->spec.accesses_total <= (uint64_t)INT64_MAX - accesses) {
		tp->has_accesses = true;
		r->spec.accesses_total += accesses;
		if (!r->spec.iterations)
			r->spec.iterations = accesses;
		size_t n = r->n_samples;
		append(&r->samples_ns, &r->n_samples, wall / (double)accesses);
		if (r->n_samples > n) {
			unsigned *a = realloc(r->sample_alloc, r->n_samples * sizeof(*a));
			if (a) {
				a[r->n_samples - 1] = 0;
				r->sample_alloc = a;
			}
		}
		r->allocations_run = 1;
	}
}

/*
 * Close slot k at now_ns: counts, wall time, the region's backing. m is the
 * end line (NULL: a perf window, or the exit). A marked occurrence that the
 * command's exit cut short is not a sample: its accesses never finished.
 */
void target_slot_end(struct target_state *st, int k, uint64_t now_ns, const struct marker_msg *m, bool at_exit)
{
	struct slot *sl = &st->slot[k];
	struct phase_result *r = &st->out->phases[sl->phase];
	struct target_phase *tp = r->target;

	if (at_exit && k == SLOT_MARKER) {
		tp->open_at_exit = true;
		/*
		 * Its only occurrence cut short: nothing was measured, and the phase failed, where it said ok with no
		 * sample (and its report broke its own schema: a review of the real consumers found it).
		 */
		if (!tp->occurrences)
			r->status = PHASE_FAILED;
		snprintf(r->reason, sizeof(r->reason), "the command exited inside %s: %s",
			 tp->occurrences ? "an occurrence of this phase" : "the only occurrence of this phase",
			 tp->occurrences ? "that occurrence is not counted" : "nothing of it was measured");
		sl->phase = -1;
		return;
	}
	if (st->n_counters)
		add_counts(st, sl, r);
	r->steal_ticks += steal_now(st) - sl->begin_steal;
	r->steal_ms = ms_of_ticks(r->steal_ticks);
	if (st->sampler) {
		add_window(sl, now_ns);
		/* The stack and other mappings no mmap record announces, read while the command waits. */
		if (tp->occurrences == 0)
			symbols_maps_read(st->syms, st->pid);
	}
	add_occurrence(st, sl, r, (double)(now_ns - sl->begin_ns), m);
	if (tp->chain_pending) {
		tp->chain_pending = false;
		target_declared_inspect_chain(st, r);
	}
	target_declared_verify(st, r);
	sl->phase = -1;
}

/* The unmarked command as its one phase "command", from exec to exit, with the whole command's counters. */
static void add_command_phase(struct target_state *st, uint64_t steal0)
{
	struct target_result *tr = st->tr;
	bool fresh;
	struct phase_result *r = phase_for(st, NULL, COMMAND_NAME, &fresh);

	if (!r)
		return;
	r->spec.workload = &workload_command;
	r->target->occurrences = 1;
	r->spec.repeat = 1;
	append(&r->target->wall_ns, &r->target->n_wall, tr->wall_ns);
	r->target->tlbprof_ns_total = tr->wall_ns;
	r->timed_ns = tr->wall_ns;
	r->steal_ticks = environment_steal_ticks() - steal0;
	r->steal_ms = ms_of_ticks(r->steal_ticks);
	for (size_t i = 0; i < st->n_counters && tr->counters; i++)
		r->counters[i] = tr->counters[i];
	if (tr->counter_info)
		memcpy(r->counter_info, tr->counter_info, st->n_counters * sizeof(*r->counter_info));
}

/* --per-thread on a started command: its first thread, then each task that exited, from the exit records. */
static void per_thread(struct target_state *st, struct counter_set *cs)
{
	struct target_result *tr = st->tr;
	struct counter_threads_info info;
	struct counter_thread *t;
	size_t n;

	tr->per_thread_started = true;
	if (counter_set_threads(cs, tr->counters, &t, &n, &info) != 0) {
		snprintf(tr->per_thread_error, sizeof(tr->per_thread_error), "%s", info.error);
		return;
	}
	tr->per_thread_lost = info.lost + info.bad;
	tr->threads = calloc(n + 1, sizeof(*tr->threads));
	for (size_t k = 0; tr->threads && k < n; k++) {
		struct target_thread *th = &tr->threads[tr->n_threads++];
		th->pid = (pid_t)t[k].pid;
		th->tid = (pid_t)t[k].tid;
		th->first = t[k].first;
		th->exact = t[k].known;
		th->counts = t[k].counts;
		t[k].counts = NULL;	/* moved (the first thread's name comes once the watch is done: target_run()) */
	}
	counter_threads_free(t, n);
}

void target_phases_finish(struct target_state *st, uint64_t exec_ns, uint64_t exit_ns, uint64_t steal0)
{
	struct target_result *tr = st->tr;
	struct counter_set *cs = st->ctx->counters;

	tr->wall_ns = (double)(exit_ns - exec_ns);
	for (int k = 0; k < 2; k++)
		if (st->slot[k].phase >= 0)
			target_slot_end(st, k, exit_ns, NULL, true);
	if (st->n_counters) {
		tr->n_counters = st->n_counters;
		tr->counter_info = calloc(st->n_counters, sizeof(*tr->counter_info));
		tr->counters = calloc(st->n_counters, sizeof(*tr->counters));
		if (tr->counter_info && tr->counters) {
			counter_set_read(cs, tr->counters);
			for (size_t i = 0; i < st->n_counters; i++)
				tr->counter_info[i] = *counter_set_info(cs, i);
			if (st->opt->per_thread)
				per_thread(st, cs);
		}
	}
	/* Each phase's 95 % CI of its median, once: at every end it would make many short phases quadratic. */
	for (size_t i = 0; i < st->out->n; i++)
		st->out->phases[i].precision_reached =
			stats_median_ci(st->out->phases[i].samples_ns, st->out->phases[i].n_samples);
	/*
	 * An unmarked command is one phase, from exec to exit; not when perf-style
	 * control kept counting off from the start (-D -1) and never enabled it.
	 */
	bool kept_off = st->opt->start_disabled && st->window_count == 0;
	if (st->out->n == 0 && tr->started && !kept_off)
		add_command_phase(st, steal0);
	if (st->n_handling) {
		tr->handling_us_median = stats_median_inplace(st->handling_us, st->n_handling);
	}
}
