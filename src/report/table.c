/* SPDX-License-Identifier: MIT */
/* The table for people: the run's header, a row per phase, then comparisons, faults, steps, knees, findings, checks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "pmu/elfinfo.h"
#include "report/internal.h"
#include "report/report.h"
#include "target/target.h"
#include "version.h"
#include "measure/workload.h"

/* A per-access counter rate, or "n/a" when the counter did not count. */
static void rate_label(const struct phase_result *r, enum metric m, char *buf, size_t len)
{
	double v;

	if (analysis_per_access(r, m, &v))
		snprintf(buf, len, "%.3g", v);
	else
		snprintf(buf, len, "n/a");
}

static void count_label(const struct phase_result *r, enum metric m, char *buf, size_t len)
{
	double v;

	if (analysis_counter(r, m, &v))
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "n/a");
}

/* Table order: run order, except that a tlbsize sweep is listed by pages touched. */
static int cmp_table_order(const void *pa, const void *pb, void *ctx)
{
	const struct phase_result *ph = ctx;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	const struct phase_spec *x = &ph[a].spec, *y = &ph[b].spec;

	if (x->workload == y->workload && x->workload->sweep == WORKLOAD_SWEEP_PAGE_COUNTS && x->size_bytes != y->size_bytes)
		return x->size_bytes < y->size_bytes ? -1 : 1;
	return (a > b) - (a < b);
}

/* tlbprof run: the command's line of the table header. */
/* The header of a table of the command's counts: lead (the row label's header), then each counting counter. */
static void print_counts_header(const struct target_result *tr, const char *lead, FILE *f)
{
	fprintf(f, "%s", lead);
	for (size_t c = 0; c < tr->n_counters; c++)
		if (counter_counting(&tr->counter_info[c]))
			fprintf(f, " %16s", tr->counter_info[c].name);
	fputc('\n', f);
}

/* One row of it: the counting counters' values of row[0..n_counters-1], after the label already printed. */
static void print_counts_row(const struct target_result *tr, const struct counter_reading *row, FILE *f)
{
	for (size_t c = 0; c < tr->n_counters; c++)
		if (counter_counting(&tr->counter_info[c]))
			fprintf(f, " %16.0f", row[c].scaled);
	fputc('\n', f);
}

/* run -I: each interval's counts, one row each, as perf stat -I prints them (the counting counters only). */
static void print_intervals(const struct target_result *tr, FILE *f)
{
	char lead[64];

	if (!tr->interval_ms || !tr->counter_info || !tr->interval_counts)
		return;
	snprintf(lead, sizeof(lead), "intervals (-I %u ms, counts in each):\n  %12s", tr->interval_ms, "time ms");
	print_counts_header(tr, lead, f);
	for (size_t i = 0; i < tr->n_intervals; i++) {
		fprintf(f, "  %12.3f", tr->interval_end_ns[i] / 1e6);
		print_counts_row(tr, tr->interval_counts + i * tr->n_counters, f);
	}
}

/*
 * --per-thread: each thread's counts, a row each, as perf stat --per-thread (the counting counters only); a
 * started command's tasks by pid and tid, the first thread's marked where a lost exit left its counts inexact.
 */
static void print_threads(const struct target_result *tr, FILE *f)
{
	char lead[128];

	if (tr->per_thread_started && *tr->per_thread_error)
		term_note(f, "per thread: could not tell, because %s\n", tr->per_thread_error);
	if (!tr->threads || !tr->counter_info)
		return;
	if (tr->per_thread_started)
		snprintf(lead, sizeof(lead), "threads (--per-thread: each task's own counts, reported at its exit):\n"
			 "  %-16s %8s %8s", "comm", "pid", "tid");
	else
		snprintf(lead, sizeof(lead), "threads (--per-thread):\n  %-16s %8s", "comm", "tid");
	print_counts_header(tr, lead, f);
	for (size_t k = 0; k < tr->n_threads; k++) {
		const struct target_thread *th = &tr->threads[k];
		if (tr->per_thread_started)
			fprintf(f, "  %-16s %8d %8d", *th->comm ? th->comm : "-", (int)th->pid, (int)th->tid);
		else
			fprintf(f, "  %-16s %8d", th->comm, (int)th->tid);
		print_counts_row(tr, th->counts, f);
	}
	if (tr->per_thread_started && tr->per_thread_lost)
		term_note(f, "per thread: %llu exit record%s lost: those tasks' counts stay in the first thread's, which is "
			  "not exact\n", (unsigned long long)tr->per_thread_lost, tr->per_thread_lost == 1 ? "" : "s");
}

static void print_target(const struct target_report *t, FILE *f)
{
	const struct target_result *tr = t->result;
	char how[64];

	if (tr->term_signal)
		snprintf(how, sizeof(how), "was killed by %s", report_signal_name(tr->term_signal));
	else if (tr->exited)
		snprintf(how, sizeof(how), "exited %d", tr->exit_code);
	else
		snprintf(how, sizeof(how), "did not start");
	/* The command's name, its process's and a refused line are the user's: their control bytes as escapes. */
	const char *path = *t->path ? t->path : t->argv[0];
	if (tr->attached) {
		fprintf(f, "attached: pid %d (", (int)tr->pid);
		report_put_visible(f, tr->attached_comm, strlen(tr->attached_comm), true);
		fprintf(f, ") for %.3f s, %zu thread%s, ended by %s", tr->wall_ns / 1e9, tr->threads_attached,
			tr->threads_attached == 1 ? "" : "s",
			strcmp(tr->ended_by, "signal") == 0 ? "tlbprof's SIGINT/SIGTERM"
			: strcmp(tr->ended_by, "exit") == 0 ? "its exit" : "the timing command's exit");
	} else {
		fputs("command: ", f);
		report_put_visible(f, path, strlen(path), true);
		if (tr->repeats_requested > 1)
			fprintf(f, ", %zu of %u runs (-r), the last %s, %.3f s in all (the watch and the samples: run "
				"1's); %u marker/control message%s", tr->n_repeats, tr->repeats_requested, how,
				tr->wall_ns / 1e9, tr->messages, tr->messages == 1 ? "" : "s");
		else
			fprintf(f, " %s after %.3f s; %u marker/control message%s", how, tr->wall_ns / 1e9, tr->messages,
				tr->messages == 1 ? "" : "s");
	}
	if (tr->errors) {
		fprintf(f, " (%u refused, first: ", tr->errors);
		report_put_visible(f, tr->error_lines[0], strlen(tr->error_lines[0]), true);
		fputc(')', f);
	}
	if (tr->messages)
		fprintf(f, ", %.1f us handling each", tr->handling_us_median);
	if (tr->caller_reads)
		fprintf(f, " (counters read by the benchmark's own marker at %u)", tr->caller_reads);
	fputc('\n', f);
	print_intervals(tr, f);
	print_threads(tr, f);
	if (tr->watched && (tr->profile.faults_lost || tr->profile.clock_lost))
		term_note(f, "watch: %llu page-fault and %llu cpu-clock record%s lost (a ring full before tlbprof drained "
			  "it): the checks that count them say so\n", (unsigned long long)tr->profile.faults_lost,
			  (unsigned long long)tr->profile.clock_lost,
			  tr->profile.faults_lost + tr->profile.clock_lost == 1 ? "" : "s");
	if (tr->watched && tr->profile.faults_one_in > 1)
		term_note(f, "watch: %llu page faults sampled, 1 block of %u in %llu kept (%u records at most): the "
			  "fault counts are the kept ones times %llu\n", (unsigned long long)tr->profile.fault_samples,
			  SAMPLE_KEEP_BLOCK, (unsigned long long)tr->profile.faults_one_in, SAMPLE_KEEP_MAX,
			  (unsigned long long)tr->profile.faults_one_in);
	if (tr->sampled) {
		const struct sample_summary *sum = &tr->sample_summary;
		term_note(f, "%s sampled: %llu (%llu lost)%s%s\n", tr->sample_requested, (unsigned long long)sum->samples,
			(unsigned long long)tr->sample_info.lost, *tr->sample_info.note ? "; " : "", tr->sample_info.note);
		if (sum->kept_one_in > 1)
			term_note(f, "  1 block of %u in %llu kept (%u records at most): the counts below are the kept "
				  "ones times %llu\n", SAMPLE_KEEP_BLOCK, (unsigned long long)sum->kept_one_in,
				  SAMPLE_KEEP_MAX, (unsigned long long)sum->kept_one_in);
		if (tr->sample_info.source != SAMPLE_SOURCE_SOFTWARE) {
			char raised[96] = "";

			if (tr->sample_info.period_raises)
				snprintf(raised, sizeof(raised), " (raised %u times after throttling, from %llu)",
					 tr->sample_info.period_raises, (unsigned long long)tr->sample_info.period_initial);
			fprintf(f, "  period %llu%s%s\n", (unsigned long long)tr->sample_info.period, raised,
				tr->sample_info.large_pebs ? ", large PEBS allowed" : "");
		}
		for (int l = 0; tr->sample_info.data_source && sum->samples && l < SAMPLE_TLB_LEVELS; l++)
			if (sum->tlb_levels[l])
				fprintf(f, "  %5.1f%%  dTLB %s\n", 100.0 * (double)sum->tlb_levels[l] / (double)sum->samples,
					sample_tlb_level_name((enum sample_tlb_level)l));
		for (size_t i = 0; i < sum->n_functions && i < 5; i++)
			fprintf(f, "  %5.1f%%  %s in %s%s%s%s\n", 100 * sum->functions[i].share, sum->functions[i].function,
				sum->functions[i].object, sum->functions[i].source ? " (" : "",
				sum->functions[i].source ? sum->functions[i].source : "", sum->functions[i].source ? ")" : "");
		for (size_t i = 0; i < sum->n_regions && i < 5; i++)
			fprintf(f, "  %5.1f%%  of faults in %s 0x%llx-0x%llx (%.1f MiB)\n", 100 * sum->regions[i].share,
				sum->regions[i].name, (unsigned long long)sum->regions[i].start,
				(unsigned long long)sum->regions[i].end,
				(double)(sum->regions[i].end - sum->regions[i].start) / (1 << 20));
	} else if (*tr->sample_error) {
		term_note(f, "%s not sampled: %s\n", tr->sample_requested, tr->sample_error);
	}
	/* A program the command forked (a shell, a script, GNU time): the binary line is its image's. */
	if (tr->watched && *tr->profile.program && strcmp(tr->profile.program, t->path) != 0) {
		fputs("program: ", f);
		report_put_visible(f, tr->profile.program, strlen(tr->profile.program), true);
		fprintf(f, " (process %u, which the command started: the hot thread ran there)\n",
			tr->profile.program_pid);
	}
	if (t->binary)
		fprintf(f, "binary: %s; optimisation %s%s%s%s\n",
			*t->binary->comment ? t->binary->comment : "compiler not recorded",
			*t->binary->opt_level ? t->binary->opt_level : "not recorded",
			strcmp(t->binary->opt_level, "mixed") == 0 ? " " : "", strcmp(t->binary->opt_level, "mixed") == 0
			? t->binary->opt_levels : "", *t->binary->opt_level ? (t->binary->opt_source == ELF_OPT_SOURCE_COMMAND_LINE
			? " (.GCC.command.line)" : " (DWARF producer)") : "");
	else
		fprintf(f, "binary: not read (%s)\n", t->binary_error);
}

/* The summary, then what ran where: tool, workload, machine, clock, counters and, for tlbprof run, the command. */
static void print_header(const struct report_input *in, FILE *f)
{
	const struct environment *env = in->env;
	const struct run_results *rr = in->results;
	size_t ok = 0, hw = 0, total = 0, busy = 0;

	term_note(f, "%s%s.\n\n", rr->interrupted ? "interrupted: " : "", in->analysis->summary);
	term_note(f, "tlbprof %s: %s on %s%s%s%s, kernel %s\n", TLBPROF_VERSION,
		  in->target || !in->workload ? "run" : in->workload->name,
		  *env->cpu_model_name ? env->cpu_model_name : "unknown CPU", *env->hypervisor ? " (" : "",
		  env->hypervisor, *env->hypervisor ? " guest)" : "", env->kernel);
	if (in->clock->core_clock_ghz > 0)
		term_note(f, "core clock %.2f GHz (dependent adds, IQR %.1f%%), clock overhead %.0f ns, THP %s\n",
			in->clock->core_clock_ghz, 100 * in->clock->core_clock_spread, in->clock->clock_overhead_ns,
			*env->thp_enabled ? env->thp_enabled : "unknown");
	for (size_t i = 0; i < rr->n && !total; i++) {
		for (size_t j = 0; j < rr->phases[i].n_counters; j++) {
			const struct counter_info *ci = &rr->phases[i].counter_info[j];
			total++;
			ok += counter_counting(ci);
			hw += ci->hardware && counter_counting(ci);
			busy += counter_not_counted(ci);
		}
	}
	if (total && !hw && busy)
		term_note(f, "counters: %zu of %zu counting (PMU %s); %zu hardware events opened but never counted (PMU busy: "
			"NMI watchdog or another perf user): software counters only, cycles from the calibrated clock\n",
			ok, total, in->pmu_name ? in->pmu_name : "none", busy);
	else if (total)
		term_note(f, "counters: %zu of %zu counting (PMU %s)%s\n", ok, total, in->pmu_name ? in->pmu_name : "none",
			hw ? "" : "; no hardware events: software counters only, cycles from the calibrated clock");
	if (in->target)
		print_target(in->target, f);
}

/* The row of phase i in the phase table; w: the phase column's width. */
static void print_phase_row(const struct report_input *in, size_t i, int w, FILE *f)
{
	const struct phase_result *r = &in->results->phases[i];
	char back[32], faults[24], miss[24];
	size_t pass = 0;

	report_backing_label(r, back, sizeof(back));
	if (r->status == PHASE_OK && !r->n_samples && r->target) {
		/* A marked phase that declared no accesses: its wall time is all there is per occurrence. */
		struct stats_summary wst;
		count_label(r, METRIC_PAGE_FAULTS, faults, sizeof(faults));
		stats_summarize(r->target->wall_ns, r->target->n_wall, &wst);
		fprintf(f, "%-*s %-12s %u occurrence%s, wall median %.3f ms (spread %.1f%%), %s page faults\n", w,
			r->spec.name, back, r->target->occurrences, r->target->occurrences == 1 ? "" : "s",
			wst.median / 1e6, 100 * wst.rel_spread, faults);
		return;
	}
	if (r->status != PHASE_OK || !r->n_samples) {
		fprintf(f, "%-*s %-12s %s: %s\n", w, r->spec.name, back, phase_status_name(r->status), r->reason);
		return;
	}
	/* The analysis already has each phase's statistics. */
	const struct stats_summary st = in->analysis->phases[i].ns;
	count_label(r, METRIC_PAGE_FAULTS, faults, sizeof(faults));
	rate_label(r, METRIC_DTLB_LOAD_MISSES, miss, sizeof(miss));
	size_t ran = 0;	/* a skipped self-check (too few slots to judge) is neither */
	for (size_t k = 0; k < r->n_self_checks; k++) {
		pass += r->self_checks[k].status == CHECK_PASS;
		ran += r->self_checks[k].status != CHECK_SKIP;
	}
	/* The claim, as perf stat's "( +- x% )" and pyperf's "+- std dev" stand beside a mean. */
	double claim = in->analysis->phases[i].precision;
	char pm[16] = "n/a";
	if (isfinite(claim))
		snprintf(pm, sizeof(pm), claim < 1 ? "±%.1f%%" : "±%.0f%%", 100 * claim);
	fprintf(f, "%-*s %-12s %10.2f %*s %6.1f%% %8.1f %8s %10s  %zu/%zu pass\n", w, r->spec.name, back, st.median,
		/* "±" is two bytes and one column */ (int)(7 + (strncmp(pm, "±", 2) == 0)), pm, 100 * st.rel_spread,
		st.median * r->cycles_per_ns, faults, miss, pass, ran);
}

/* The phase table: a row per phase in table order (cmp_table_order()), with its legend. */
static void print_phases(const struct report_input *in, FILE *f)
{
	const struct run_results *rr = in->results;
	int w = 5;	/* the phase column fits the longest name */

	for (size_t i = 0; i < rr->n; i++)
		if ((int)strlen(rr->phases[i].spec.name) > w)
			w = (int)strlen(rr->phases[i].spec.name);
	fprintf(f, "\n%-*s %-12s %10s %8s %7s %8s %8s %10s  %s\n", w, "phase", "backing", "ns/access", "±95%",
		"spread", "cycles", "faults", "dTLB-miss", "self-checks");
	/* A tlbsize sweep runs in random order; people read it as a curve, by pages. */
	size_t *order = malloc((rr->n ? rr->n : 1) * sizeof(*order));
	for (size_t i = 0; order && i < rr->n; i++)
		order[i] = i;
	if (order)
		qsort_r(order, rr->n, sizeof(*order), cmp_table_order, (void *)rr->phases);
	for (size_t row = 0; row < rr->n; row++)
		print_phase_row(in, order ? order[row] : row, w, f);
	free(order);
	term_note(f, "(ns/access: median of all samples of all allocations; ±95%%: the 95 %% interval the median claims, "
		"its allocations' part and, with second passes, the host's; spread: (max-min)/median "
		"of the samples; faults: page faults during the timed samples; dTLB-miss: per access)\n");
}

/* Whether a comparison before the i-th has the same baseline (its translation note is said once). */
static bool said_before(const struct analysis *a, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (a->comparisons[j].baseline == a->comparisons[i].baseline)
			return true;
	return false;
}

/* Baseline against variant at each size: the time per access, the speedup and the translation part. */
static void print_comparisons(const struct report_input *in, FILE *f)
{
	const struct run_results *rr = in->results;
	const struct analysis *a = in->analysis;

	if (!a->n_comparisons)
		return;
	fprintf(f, "\n%-8s %-16s %10s %10s %9s %8s %-11s %11s  %s\n", "size", "pages", "base ns", "variant ns",
		"delta ns", "speedup", "95% CI", "translation", "method");
	for (size_t i = 0; i < a->n_comparisons; i++) {
		const struct comparison *c = &a->comparisons[i];
		const struct phase_spec *b = &rr->phases[c->baseline].spec, *v = &rr->phases[c->variant].spec;
		const struct phase_analysis *pb = &a->phases[c->baseline];
		char label[48], sz[SIZE_TEXT], tr[24] = "n/a", ci[24] = "n/a";
		if (b->fault_case != FAULT_NONE)
			snprintf(label, sizeof(label), "%s -> %s %s", b->page.label, v->page.label,
				 fault_case_name(b->fault_case));
		else if (b->workload->sweep == WORKLOAD_SWEEP_STRIDES)
			snprintf(label, sizeof(label), "%s -> %s s%s", b->page.label, v->page.label,
				 format_size(b->stride_bytes, sz, sizeof(sz)));
		else if (b->layout != LAYOUT_COLORED)
			snprintf(label, sizeof(label), "%s -> %s %s", b->page.label, v->page.label, layout_name(b->layout));
		else
			snprintf(label, sizeof(label), "%s -> %s", b->page.label, v->page.label);
		const struct translation_share *t = &c->translation;
		if (!c->comparable)
			;	/* the difference is inside a phase's own noise: no share, as the answer says */
		else if (t->proven)
			snprintf(tr, sizeof(tr), "%.1f ns", t->lo_ns);
		else if (t->known && isfinite(t->hi_ns))
			snprintf(tr, sizeof(tr), "%.1f-%.1f", t->lo_ns, t->hi_ns);
		else if (t->known)
			snprintf(tr, sizeof(tr), ">= %.1f", t->lo_ns);
		if (!c->comparable)
			snprintf(ci, sizeof(ci), "none");
		else if (c->interval_known && isfinite(c->speedup_lo) && isfinite(c->speedup_hi))
			snprintf(ci, sizeof(ci), "%.2f-%.2f", c->speedup_lo, c->speedup_hi);
		fprintf(f, "%-8s %-16s %10.2f %10.2f %9.2f %7.2fx %-11s %11s  %s",
			format_size(v->size_bytes, sz, sizeof(sz)), label, pb->ns.median, a->phases[c->variant].ns.median,
			c->delta_ns, c->speedup, ci, tr, c->method);
		if (c->ns_per_tlb_miss > 0)
			fprintf(f, ", %.1f ns (%.0f cycles) per dTLB miss", c->ns_per_tlb_miss, c->cycles_per_tlb_miss);
		if (isfinite(c->baseline_cycles_per_walk))
			fprintf(f, ", %.0f cycles per walk at %s", c->baseline_cycles_per_walk, b->page.label);
		fputc('\n', f);
		if (c->adds_up == 0)
			term_paragraph(f, 4, "  does not add up: %s\n", c->inconsistency);
		if (!c->comparable)
			term_paragraph(f, 4, "  not comparable: %s\n", c->doubt);
		if (c->comparable && t->known && !t->proven && isfinite(t->hi_ns) && !said_before(a, i))
			term_paragraph(f, 4, "  translation at %s: %s\n", b->page.label, t->evidence);
	}
	term_note(f, "(95%% CI: of the speedup, hierarchical bootstrap over allocations; none: a phase's own interval is "
		   "wider than the delta; translation: the baseline minus a phase proven walk-free, else the range from "
		   "the baseline minus its largest pages to the baseline minus its packed control)\n");
}

/* The page-fault cases: time per page and per fault, the faults, and where the time went (user, sys, wall). */
static void print_faults(const struct report_input *in, FILE *f)
{
	const struct run_results *rr = in->results;
	const struct analysis *a = in->analysis;
	bool faults = false;

	for (size_t i = 0; i < a->n_phases; i++)
		faults |= a->phases[i].faults.valid;
	if (!faults)
		return;
	fprintf(f, "\n%-14s %-5s %9s %10s %11s %9s %7s %8s %8s %8s %6s %5s\n", "case", "pages", "ns/page", "ns/fault",
		"pages/fault", "minor", "major", "user ms", "sys ms", "wall ms", "MiB/s", "procs");
	for (size_t i = 0; i < a->n_phases; i++) {
		const struct fault_metrics *fm = &a->phases[i].faults;
		const struct phase_spec *sp = &rr->phases[i].spec;
		if (!fm->valid || rr->phases[i].status != PHASE_OK)
			continue;
		fprintf(f, "%-14s %-5s %9.1f %10.0f %11.3g %9.0f %7.0f %8.1f %8.1f %8.1f %6.0f %5u\n",
			fault_case_name(sp->fault_case), sp->page.label, fm->ns_per_page.median,
			fm->ns_per_fault.n ? fm->ns_per_fault.median : 0.0,
			fm->pages_per_fault.n ? fm->pages_per_fault.median : 0.0, fm->minor, fm->major,
			1e3 * fm->user_s, 1e3 * fm->sys_s, 1e3 * fm->wall_s, fm->mib_per_s.median, fm->processes);
	}
	term_note(f, "(ns, pages/fault, faults and MiB/s: medians per sample over all processes; user, sys and wall "
		   "ms: totals over all samples; faults from %s. A minor fault burns kernel CPU "
		   "(sys close to wall); a major fault waits on I/O (wall far above user + sys). file_warm maps "
		   "several page-cache pages per fault (fault-around, %s).)\n",
		"the perf software counters, cross-checked with getrusage",
		in->env->fault_around_bytes > 0 ? "see fault_around_bytes" : "fault_around_bytes unreadable here");
}

/* A stride sweep: what each step to a larger stride cost, and whether the cache or the TLB paid it. */
static void print_steps(const struct report_input *in, FILE *f)
{
	const struct run_results *rr = in->results;
	const struct analysis *a = in->analysis;

	if (!a->n_stride_steps)
		return;
	fprintf(f, "\n%-8s %-6s %-16s %10s %8s  %-12s %8s  %s\n", "size", "pages", "stride", "delta ns", "cycles",
		"step", "tlb ns", "dTLB misses/access");
	for (size_t i = 0; i < a->n_stride_steps; i++) {
		const struct stride_step *st = &a->stride_steps[i];
		const struct phase_spec *fr = &rr->phases[st->from].spec, *to = &rr->phases[st->to].spec;
		char sz[SIZE_TEXT], s1[SIZE_TEXT], s2[SIZE_TEXT], label[40], miss[48] = "n/a", tlb[16] = "";
		snprintf(label, sizeof(label), "%sB -> %sB", format_size(fr->stride_bytes, s1, sizeof(s1)),
			 format_size(to->stride_bytes, s2, sizeof(s2)));
		if (st->have_misses)
			snprintf(miss, sizeof(miss), "%.3g -> %.3g", st->misses_from, st->misses_to);
		if (isfinite(st->tlb_ns))
			snprintf(tlb, sizeof(tlb), "%.2f", st->tlb_ns);
		else if (strcmp(st->label, "tlb") == 0 || strcmp(st->label, "cache+tlb") == 0)
			snprintf(tlb, sizeof(tlb), "?");
		fprintf(f, "%-8s %-6s %-16s %10.2f %8.1f  %-12s %8s  %s\n", format_size(fr->size_bytes, sz, sizeof(sz)),
			fr->page.label, label, st->delta_ns, st->delta_cycles, st->label, tlb, miss);
	}
	term_note(f, "(cache: more new lines per access; tlb: same lines, more pages per access; flat: one access "
		   "per page either way; within-page: huge pages, still many accesses per page; none: no rise beyond "
		   "the phases' own 95 %% intervals; tlb ns: the step minus the same step on huge pages, ?: no "
		   "huge-page sweep)\n");
}

/* A page-count sweep: each knee of the curve, what it is, and the evidence. */
static void print_knees(const struct analysis *a, FILE *f)
{
	if (!a->n_knees)
		return;
	fprintf(f, "\n%-10s %-10s %-5s %10s %10s %10s  %-7s %s\n", "knee at", "next", "shape", "before ns", "after ns",
		"confidence", "kind", "level");
	for (size_t i = 0; i < a->n_knees; i++) {
		const struct tlb_knee *tk = &a->knees[i];
		const char *level = tk->kind == KNEE_TLB ? tk->tlb.level : tk->kind == KNEE_CACHE ? tk->cache.level : "-";
		fprintf(f, "%-10.0f %-10.0f %-5s %10.2f %10.2f %10.1f  %-7s %s\n", tk->knee.x_before, tk->knee.x_after,
			tk->knee.ramp ? "ramp" : "step", tk->knee.before_ns, tk->knee.after_ns, tk->knee.confidence,
			knee_kind_name(tk->kind), level);
		fprintf(f, "  %s\n", tk->evidence);
	}
	term_note(f, "(pages: 4 KiB pages touched; a knee is tlb or cache when only that capacity fills in its rise)\n");
}

/*
 * Each check of the measurement, then the verdict. On a terminal the status
 * words are in colour and a long message wraps under its own column.
 */
static void print_checks(const struct report_input *in, FILE *f)
{
	const struct analysis *a = in->analysis;
	struct term_style ts;

	term_style_for(f, &ts);
	fprintf(f, "\nchecks:\n");
	for (size_t i = 0; i < a->n_checks; i++) {
		fprintf(f, "  ");
		term_put_status(f, &ts, check_status_name(a->checks[i].status), 5);
		int col = fprintf(f, " %-26s ", a->checks[i].id);
		/* A message quotes what the command named (a path, a function): its control bytes as escapes. */
		char *msg = report_visible_dup(a->checks[i].message);
		term_put_wrapped(f, msg ? msg : a->checks[i].message, col > 0 ? (size_t)col + 7 : 0, 35, ts.width);
		free(msg);
	}
	fprintf(f, "verdict: ");
	term_put_status(f, &ts, verdict_name(a->verdict), 0);
	fprintf(f, "%s\n", in->results->interrupted ? " (interrupted)" : "");
}

void report_print_text(const struct report_input *in, FILE *f)
{
	const struct analysis *a = in->analysis;

	print_header(in, f);
	print_phases(in, f);
	print_comparisons(in, f);
	print_faults(in, f);
	print_steps(in, f);
	print_knees(a, f);
	for (size_t i = 0; i < a->n_findings; i++) {
		fprintf(f, "\nfinding %s: ", a->findings[i].id);
		report_put_visible(f, a->findings[i].message, strlen(a->findings[i].message), true);
		fputc('\n', f);
	}
	print_checks(in, f);
}
