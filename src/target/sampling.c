/* SPDX-License-Identifier: MIT */
/* tlbprof run --sample: open the sampler on the command, and share its samples out among the phases after the exit. */
#include "target/internal.h"

#include <stdio.h>

#include "measure/workload.h"
#include "pmu/symbols.h"

void target_sampling_open(struct target_state *st)
{
	const struct target_options *opt = st->opt;
	struct target_result *tr = st->tr;
	struct sample_options so = { .enable_on_exec = true };

	if (opt->sample_event) {
		so.custom_event = true;
		so.type = opt->sample_event->type;
		so.config = opt->sample_event->config;
		so.config1 = opt->sample_event->config1;
		so.config2 = opt->sample_event->config2;
		so.precise_ip = opt->sample_event->precise_ip;
		so.name = opt->sample_event->event;
		so.exclude_kernel = opt->sample_event->exclude_kernel;
		so.exclude_hv = opt->sample_event->exclude_hv;
		so.ibs_op = opt->sample_event->ibs_op;
		so.no_data_addr = opt->sample_event->no_data_addr;
		so.note = opt->sample_event->note;
	}
	st->syms = symbols_new();
	st->collector = (struct sample_collector){ .list = &st->samples, .syms = st->syms,
						   .cap = so.custom_event ? 0 : SAMPLE_KEEP_MAX };
	sample_collector_sink(&st->collector, &st->sink);
	if (!st->syms)
		snprintf(tr->sample_error, sizeof(tr->sample_error), "out of memory");
	else if (sample_open(&st->sampler, st->pid, &so, tr->sample_error, sizeof(tr->sample_error)) != 0)
		st->sampler = NULL;
}

void target_sampling_finish(struct target_state *st)
{
	struct target_result *tr = st->tr;

	sample_drain(st->sampler, &st->sink, true);
	sample_info_get(st->sampler, &tr->sample_info);
	tr->sampled = true;
	if (sample_summarize(st->samples.items, st->samples.count, tr->sample_info.lost, st->syms, st->opt->sample_top,
			     &tr->sample_summary) != 0)
		snprintf(tr->sample_error, sizeof(tr->sample_error), "out of memory summarising the samples");
	sample_summary_scale(&tr->sample_summary, &st->collector);
	for (size_t i = 0; i < st->out->n; i++)
		if (st->out->phases[i].target)
			st->out->phases[i].target->samples_in_phase =
				st->out->phases[i].spec.workload == &workload_command ? (int64_t)st->collector.seen : 0;
	/* A slot's windows do not overlap and were closed in time order: one binary search per sample and slot. */
	uint64_t x = sample_collector_one_in(&st->collector);	/* what a kept sample stands for */
	for (int k = 0; k < 2; k++) {
		const struct slot *sl = &st->slot[k];
		for (size_t j = 0; j < st->samples.count; j++) {
			uint64_t t = st->samples.items[j].time_ns;
			size_t lo = 0, hi = sl->n_windows;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (sl->windows[mid].end_ns < t)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < sl->n_windows && sl->windows[lo].begin_ns <= t)
				st->out->phases[sl->windows[lo].phase].target->samples_in_phase += (int64_t)x;
		}
	}
}

void target_sampling_close(struct target_state *st)
{
	sample_close(st->sampler);
	sample_list_free(&st->samples);
	symbols_delete(st->syms);
	st->sampler = NULL;
	st->syms = NULL;
}
