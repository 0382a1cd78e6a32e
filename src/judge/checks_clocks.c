/* SPDX-License-Identifier: MIT */
/* Checks of an unmarked command's clock reads (tlbprof run), from uprobes on its libc's clock functions. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "judge/analysis_internal.h"

/* A window between two reads should span at least this many ticks of the clock read: else it rounds the result. */
#define COARSE_WINDOW_TICKS 100
/*
 * The hot thread read the clock at least this often, and three quarters of its windows held less than
 * CLOCK_PER_ACCESS_WORK_NS beyond the short windows around them: a read around every access or few. Every
 * window also holds the probes' own traps (a microsecond or several in a VM); the short windows of a
 * neighbourhood (its tenth percentile), between two reads with next to nothing between them, are about their
 * cost at that moment, and that is taken off (sample_clocks.window_work_p75_ns). The traps' cost moves with
 * the host's load (12-16 us on one host, 19 or 24 us by the minute on another), so the allowance grows to half
 * the shortest window where that is more. The upper quartile, not the median: a benchmark that times a loop between two reads and reads once
 * more to print leaves work in only a third of its windows.
 */
/*
 * The samples' CPU time (samples x period) against the task-clock of the same run: within a few per cent where
 * every sample was kept and weighed right (each thread's last part-period goes unsampled: 1 to 2 % for the JVM's
 * 0.8 s here). Beyond this part of it, the shares are not the command's.
 */
#define CLOCK_ACCOUNTED_GAP 0.25
#define CLOCK_PER_ACCESS_MIN_READS 1000
#define CLOCK_PER_ACCESS_WORK_NS 5000
/*
 * The traps' cost is not one number under load: 10 and 14 us, or 12 and 47, by turns within a second (a worker
 * thread reading around every access, with the test suite running beside it), so the windows alone said "work"
 * where there was none (2 of 20 runs in two .ci/run dry runs). The cpu-clock samples between the first and
 * last read say it directly: where at least CLOCK_TRAPS_KERNEL_SHARE of them are in the kernel (the traps; a
 * read around every access leaves the accesses a few percent), and the windows' work at the upper quartile is
 * within CLOCK_TRAPS_WORK_TRAPS traps' cost, the reads time the traps. A loop timed between two reads holds its
 * loop in user code (a tenth of a millisecond against three traps of 10 us: under a quarter in the kernel), and
 * a loop of page faults timed per window holds more than four traps' worth; either still passes. At least
 * CLOCK_TRAPS_MIN_SAMPLES samples (a 4 ms span at the first rate) are needed to say it.
 */
#define CLOCK_TRAPS_KERNEL_SHARE 0.75
#define CLOCK_TRAPS_WORK_TRAPS 4
#define CLOCK_TRAPS_MIN_SAMPLES 50
/*
 * The windows the hot loop ran in say whether the reads are around its accesses: where they last, at the median,
 * CLOCK_LOOP_TRAPS times a window of nothing but the traps (window_min_ns and their jitter), the reads time whole
 * loops, however many other reads the thread made. A JVM's main thread read the clock 1505 times, its own reads
 * at startup, 18 us apart, and its compiled chase ran in one window of 0.3 s between two System.nanoTime():
 * the windows' upper quartile alone said "a read around every access".
 */
#define CLOCK_LOOP_TRAPS 10
/*
 * A benchmark's clock reads time nothing when under EMPTY_TIMED_SHARE of the
 * hot thread's CPU time lies between its first and last read, and no window
 * reaches EMPTY_WINDOW_NS: a deleted loop's two reads are back to back (the
 * probes' traps, some 10-300 us here; a first call's faults, up to 1 ms on a
 * guest, are taken out by clocks_profile()), while a real
 * chase of even 10^4 accesses spans a millisecond. EMPTY_MIN_CPU_NS of
 * cpu-clock samples (20 at the first rate) is the least that says where the
 * time went.
 */
#define EMPTY_TIMED_SHARE 0.02
#define EMPTY_WINDOW_NS 1000000
#define EMPTY_MIN_CPU_NS 5e6
/*
 * Where this share of the process's cpu-clock samples in the hot function (EMPTY_MIN_CPU_NS of them at least) lies
 * between the hot thread's reads, the reads time that loop, whoever runs it: a main thread that starts workers,
 * reads the clock, joins them and reads it again spends its own CPU time outside the span.
 */
#define EMPTY_LOOP_IN_SPAN 0.9
/*
 * With this many windows or more, the windows themselves say whether the reads time work: a quarter of them
 * holding more than the traps' jitter beyond the traps around them (window_work_p75_ns) is a timed loop,
 * however few cpu-clock samples fell between the reads. A span of many short windows is a few ms in all, a
 * dozen samples, and on a paravirtual guest the samples' times and the probes' were seen to part by up to a
 * millisecond within one run (the samples' IPs stopped matching the windows they fell in), so its samples
 * alone cannot say it is empty. A deleted loop read a hundred times leaves every window at the traps.
 */
#define EMPTY_WORK_MIN_WINDOWS 16
/*
 * A vCPU the host stops (an EPT fault it serves, another guest's turn) stays on a CPU to the guest's scheduler, so
 * the context switches count the stop as the thread's time, while its cpu-clock timer fires at most once, when the
 * vCPU resumes. On a bhyve guest that reports no steal, a fresh page's first touch waits for the host: a process's
 * first clock call took 0.1-1.02 ms in its faults, and once in some 50 runs a deleted loop's one window passed 1 ms
 * that way (clocks_profile() now takes those faults out). A stop elsewhere in the span is weighed here. The
 * guest's own kernel time is sampled: 20 deleted loops' windows of 0.13-0.54 ms held 0-2 samples. Where the samples
 * were taken at the fast rate through the span (span_fast_rate) and, counted one more (a period partly run), saw
 * under STALL_SEEN_SHARE of the switches' time, the samples' measure is the thread's: a thread that ran 1.1 ms has 4
 * samples there, or 3 with the skew of a period.
 */
#define STALL_SEEN_SHARE 0.5
/*
 * The windows the hot loop ran in (measured_windows) are what the benchmark's clock reads time. Where the whole
 * command sat off every CPU for OFF_CPU_IDLE_SHARE of them (and OFF_CPU_MIN_NS at least: a page-cache read or a
 * log line is not the point), they time a sleep, a disk or another program, not memory accesses. Where the hot
 * thread waited for a CPU, runnable, for OFF_CPU_OWN_SHARE of them while another task of the command ran on the
 * CPU it left, the command's own threads outnumber its CPUs; for OFF_CPU_BUSY_SHARE of them, whoever ran, the
 * machine was busy. On two vCPUs, alone, single-threaded benchmarks waited 2-4 % of their windows (python3 -m
 * timeit, correct_main); beside a .ci/run dry run and a build, 68-76 %.
 */
#define OFF_CPU_IDLE_SHARE 0.1
#define OFF_CPU_OWN_SHARE 0.25
#define OFF_CPU_BUSY_SHARE 0.5
#define OFF_CPU_MIN_NS 1000000

/* The functions that could not be traced, for messages: "gettimeofday, time (IFUNCs bound to the vDSO)". */
static void untraced(const struct sample_clocks *c, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int fn = 0; fn < SAMPLE_CLOCK_FNS && len < size; fn++)
		if (!c->fn[fn].traced)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", sample_clock_fn_name(fn));
}

/* The CPU time one kept cpu-clock sample stands for. */
static double clock_period(const struct sample_profile *p)
{
	return (double)(p->clock_period_ns ? p->clock_period_ns : SAMPLE_CPU_CLOCK_PERIOD_NS);
}

/* Whether the probes can speak for the hot thread; adds the skip that says why not. */
static bool clocks_seen(const struct analysis_check_def *def, const struct sample_profile *p, struct analysis *a)
{
	const struct sample_clocks *c = &p->clocks;
	char missing[96];

	untraced(c, missing, sizeof(missing));
	if (!c->traced) {
		checks_add(a, def, CHECK_SKIP, "could not tell, because no clock function was traced: %s",
			   *c->why ? c->why : "uprobes were not opened");
		return false;
	}
	if (!p->hot_tid) {
		checks_add(a, def, CHECK_SKIP, "could not tell, because no hot thread was found (no cpu-clock sample of the "
			   "command's threads): its reads cannot be placed against its CPU time");
		return false;
	}
	if (!c->libc_mapped) {
		checks_add(a, def, CHECK_SKIP, "could not tell, because the command never mapped the file probed (%s): "
			   "another libc, or a static program started through a wrapper", c->libc);
		return false;
	}
	/*
	 * Reads are proof that it was traced (a report written before hot_thread_traced says no more). Tracing
	 * stopped for too many threads: no read seen says nothing either, even of a thread that was traced.
	 */
	if (p->hot_tid && !c->hot_reads && (!c->hot_traced || c->threads_capped)) {
		if (c->threads_capped)
			checks_add(a, def, CHECK_SKIP, "could not tell, because the hot thread (tid %u) was not traced: the "
				   "command started more threads than are followed (%u alive at once, %u in all), so all "
				   "tracing stopped at %llu ms (a uprobe traps every thread of the process, traced or not)",
				   p->hot_tid, SAMPLE_CLOCK_THREADS, SAMPLE_CLOCK_FOLLOWED,
				   (unsigned long long)c->threads_capped_ms);
		else
			checks_add(a, def, CHECK_SKIP, "could not tell, because the hot thread (tid %u, process %u) was not "
				   "traced: it started after every probe had stopped at its budget, ended before one could "
				   "open on it, or ran in a process the watch did not follow", p->hot_tid, p->hot_pid);
		return false;
	}
	if (!p->hot_tid || !c->hot_reads) {
		uint64_t others = 0;
		for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++)
			others += c->fn[fn].calls;
		char elsewhere[160] = "";
		/*
		 * multichase's way: its main thread reads the clock around a count the chasing thread keeps. Or a
		 * parent times the workers it forked: the reads were another process's, not another thread's.
		 */
		if (others && c->pid && p->hot_pid && c->pid != p->hot_pid)
			snprintf(elsewhere, sizeof(elsewhere), "; process %u, which started the hot thread's process %u, "
				 "read the clock %llu times, so another process timed it", c->pid, p->hot_pid,
				 (unsigned long long)others);
		else if (others)
			snprintf(elsewhere, sizeof(elsewhere), "; its other threads read the clock %llu times, so a thread "
				 "that is not the hot one timed it", (unsigned long long)others);
		/* Or the hot function reads the TSC itself (__rdtsc()), as Intel MLC and many TLB benchmarks do. */
		else if (p->code.decoded && p->code.tsc_reads)
			snprintf(elsewhere, sizeof(elsewhere), "; its hot function reads the time stamp counter itself "
				 "(rdtsc at 0x%llx; %u from its start to just past its loop)",
				 (unsigned long long)p->code.tsc_read_at, p->code.tsc_reads);
		checks_add(a, def, CHECK_SKIP, "could not tell, because the hot thread called none of the traced clock "
			   "functions (%s untraceable here; rdtsc and direct vDSO calls are invisible to uprobes)%s",
			   *missing ? missing : "none", elsewhere);
		return false;
	}
	/*
	 * Tracing stopped for a thread too many, and most of the hot loop ran after: the windows seen are the hot
	 * thread's earlier reads, not the loop's. A JVM's main thread read the clock 1390 times before its 9th thread
	 * stopped tracing at 163 ms, 18 us apart, and 1611 of its hot code's 1623 samples came after; clock_per_access
	 * judged those reads "a read around every access". (A probe stopped at its budget is the reads' own doing, as
	 * a read around every access exhausts it, and is judged.)
	 */
	if (c->threads_capped && c->measured_known && (double)c->loop_weight * clock_period(p) >= EMPTY_MIN_CPU_NS &&
	    2 * c->loop_weight_in_span < c->loop_weight) {
		checks_add(a, def, CHECK_SKIP, "could not tell, because all tracing stopped at %llu ms, when the command "
			   "started more threads than are followed (%u alive at once, %u in all), and %llu of the hot "
			   "loop's %llu cpu-clock samples fell outside its first to last read seen: the windows seen are the hot "
			   "thread's earlier reads, not its loop's", (unsigned long long)c->threads_capped_ms,
			   SAMPLE_CLOCK_THREADS, SAMPLE_CLOCK_FOLLOWED,
			   (unsigned long long)(c->loop_weight - c->loop_weight_in_span),
			   (unsigned long long)c->loop_weight);
		return false;
	}
	return true;
}

/*
 * The hot thread timed with CLOCK_PROCESS_CPUTIME_ID (clock() reads it through clock_gettime), the CPU time of every
 * thread of its process: where its other threads ran inside its windows, a reading is their sum, not the time the
 * loop took. An OpenMP loop timed with clock() read about twice its elapsed time on two threads, and coarse_clock
 * passed it on its resolution (a review of foreign benchmarks found it). Judged where that clock is half or more of
 * its reads (a benchmark that also reports its CPU usage times with another), and where the other threads' time is
 * a tenth of its own or more, and 2 ms at least.
 */
#define CPU_TIME_CLOCK_OTHERS_SHARE 0.1
#define CPU_TIME_CLOCK_OTHERS_MIN_NS 2000000.0

void checks_cpu_time_clock(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct sample_profile *p = in->profile;
	const struct sample_clocks *c = &p->clocks;
	struct analysis_check *chk;
	uint64_t cpu_time = c->id_calls[CLOCK_PROCESS_CPUTIME_ID];
	double own = (double)c->hot_samples_in_span * clock_period(p);
	double others = (double)c->others_in_span * clock_period(p);

	if (!clocks_seen(def, p, a))
		return;
	if (!cpu_time || 2 * cpu_time < c->hot_reads)
		chk = checks_add(a, def, CHECK_PASS, "the hot thread timed with elapsed time: %llu of its %llu clock "
				 "reads were CLOCK_PROCESS_CPUTIME_ID (clock() reads it)", (unsigned long long)cpu_time,
				 (unsigned long long)c->hot_reads);
	else if (!c->windows || !c->others_known)
		chk = checks_add(a, def, CHECK_SKIP, "could not tell, because %s", !c->windows
				 ? "the hot thread read its clock only once: no window between two reads"
				 : "the report does not hold its other threads' samples between its reads (an older "
				   "one)");
	else if (others >= CPU_TIME_CLOCK_OTHERS_MIN_NS && others >= CPU_TIME_CLOCK_OTHERS_SHARE * own)
		chk = checks_add(a, def, CHECK_WARN, "the hot thread timed with CLOCK_PROCESS_CPUTIME_ID (clock() reads "
				 "it: %llu of its %llu reads), the CPU time of every thread of its process, and its "
				 "other threads ran %.0f ms on CPUs between its first and last read beside its own %.0f "
				 "ms: a window reads their sum, up to %.1fx the time the loop took; time it with "
				 "CLOCK_MONOTONIC (clock_gettime, omp_get_wtime, std::chrono::steady_clock)",
				 (unsigned long long)cpu_time, (unsigned long long)c->hot_reads, others / 1e6, own / 1e6,
				 own > 0 ? (own + others) / own : 0);
	else
		chk = checks_add(a, def, CHECK_PASS, "the hot thread timed with CLOCK_PROCESS_CPUTIME_ID, and its "
				 "other threads ran %.1f ms between its first and last read beside its own %.0f ms: the "
				 "CPU time it reads is, within a tenth, its own", others / 1e6, own / 1e6);
	checks_evidence(chk, "process_cputime_reads", (double)cpu_time);
	checks_evidence(chk, "reads", (double)c->hot_reads);
	if (c->others_known)
		checks_evidence(chk, "other_threads_ns", others);
}

/* The traps' own jitter: what a window may hold beyond the traps around it and still hold nothing. */
static uint64_t trap_jitter_ns(const struct sample_clocks *c)
{
	return c->window_min_ns / 2 > CLOCK_PER_ACCESS_WORK_NS ? c->window_min_ns / 2 : CLOCK_PER_ACCESS_WORK_NS;
}

static const char *clock_name(const struct sample_clocks *c)
{
	return c->coarsest_id >= 0 ? sample_clock_id_name(c->coarsest_id) : sample_clock_fn_name(c->coarsest_fn);
}

void checks_coarse_clock(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct sample_profile *p = in->profile;
	const struct sample_clocks *c = &p->clocks;
	struct analysis_check *chk;

	if (!clocks_seen(def, p, a))
		return;
	/* The long windows, not the longest: one preempted window is not the benchmark's. */
	double ticks = c->coarsest_ns ? (double)c->window_p90_ns / (double)c->coarsest_ns : 0;
	if (!c->windows)
		chk = checks_add(a, def, CHECK_SKIP, "could not tell, because the hot thread read its clock (%s) only "
				 "once: no window between two reads", clock_name(c));
	else if (!c->coarsest_ns)
		chk = checks_add(a, def, CHECK_SKIP, "could not tell, because the resolution of %s is unknown here",
				 clock_name(c));
	else if (ticks < COARSE_WINDOW_TICKS)
		chk = checks_add(a, def, CHECK_WARN,
				 "the hot thread timed with %s (%s; resolution %.3g ms), and 90 %% of its windows between "
				 "two reads last at most %.3g ms, only %.2g of its ticks: a reading is off by up to a "
				 "tick, %.0f %% of such a window; time a window of 100 ticks or more, or read "
				 "CLOCK_MONOTONIC with clock_gettime", clock_name(c), sample_clock_fn_name(c->coarsest_fn),
				 (double)c->coarsest_ns / 1e6, (double)c->window_p90_ns / 1e6, ticks,
				 100 / (ticks > 1 ? ticks : 1));
	else
		chk = checks_add(a, def, CHECK_PASS,
				 "the hot thread's coarsest clock, %s (resolution %llu ns), is fine for its long "
				 "windows, %.3g ms at the 90th percentile (%.0f ticks)", clock_name(c),
				 (unsigned long long)c->coarsest_ns, (double)c->window_p90_ns / 1e6, ticks);
	checks_evidence(chk, "resolution_ns", (double)c->coarsest_ns);
	checks_evidence(chk, "window_p90_ns", (double)c->window_p90_ns);
	checks_evidence(chk, "window_max_ns", (double)c->window_max_ns);
	checks_evidence(chk, "reads", (double)c->hot_reads);
}

void checks_clock_per_access(const struct analysis_check_def *def, const struct analysis_input *in,
			     struct analysis *a)
{
	const struct sample_profile *p = in->profile;
	const struct sample_clocks *c = &p->clocks;
	struct analysis_check *chk;

	if (!clocks_seen(def, p, a))
		return;
	double vdso = p->clock_samples ? (double)p->clock_vdso / (double)p->clock_samples : 0;
	uint64_t work = c->window_work_p75_ns;
	uint64_t allow = trap_jitter_ns(c);
	double kernel = c->hot_samples_in_span ? (double)c->hot_kernel_in_span / (double)c->hot_samples_in_span : 0;
	bool traps = c->hot_samples_in_span >= CLOCK_TRAPS_MIN_SAMPLES && kernel >= CLOCK_TRAPS_KERNEL_SHARE &&
		     work < CLOCK_TRAPS_WORK_TRAPS * c->window_min_ns;
	bool loop_long = c->measured_known && c->measured_windows &&
			 c->measured_window_median_ns >= CLOCK_LOOP_TRAPS * (c->window_min_ns + allow);
	if (c->hot_reads < CLOCK_PER_ACCESS_MIN_READS)
		chk = checks_add(a, def, CHECK_PASS,
				 "the hot thread read the clock %llu times (median window %.3g ms), too few to be a read "
				 "around every access", (unsigned long long)c->hot_reads, (double)c->window_median_ns / 1e6);
	else if (loop_long)
		chk = checks_add(a, def, CHECK_PASS,
				 "the hot thread read the clock %llu times, but its hot loop ran in %llu of its windows, "
				 "%.3g ms long at the median (over %d times a window of the probes' traps, %.3g us): its "
				 "reads time whole loops; the others (a runtime's own, as a JVM's or an interpreter's "
				 "at startup) are not around its accesses", (unsigned long long)c->hot_reads,
				 (unsigned long long)c->measured_windows, (double)c->measured_window_median_ns / 1e6,
				 CLOCK_LOOP_TRAPS, (double)(c->window_min_ns + allow) / 1e3);
	else if (work < allow)
		chk = checks_add(a, def, CHECK_WARN,
				 "the hot thread read the clock %llu times, and three quarters of its windows between "
				 "reads held at most %.3g us beyond the short windows around them (%.3g us at the "
				 "least, about the probes' own traps; under %.3g us is the traps' own jitter): a read "
				 "around every access or few, so the reads' own cost (tens of ns each; %.0f %% of the "
				 "CPU time was in [vdso]) and their ordering are timed with the accesses; time a whole "
				 "loop of accesses and divide",
				 (unsigned long long)c->hot_reads, (double)work / 1e3, (double)c->window_min_ns / 1e3,
				 (double)allow / 1e3, 100 * vdso);
	else if (traps)
		chk = checks_add(a, def, CHECK_WARN,
				 "the hot thread read the clock %llu times, and %.0f %% of its CPU time between its first "
				 "and last read was in the kernel, the probes' traps around each read (%llu of %llu "
				 "samples; its windows' work at the upper quartile, %.3g us, is within %d traps of %.3g "
				 "us): a read around every access or few, so the reads' own cost and their ordering are "
				 "timed with the accesses; time a whole loop of accesses and divide",
				 (unsigned long long)c->hot_reads, 100 * kernel, (unsigned long long)c->hot_kernel_in_span,
				 (unsigned long long)c->hot_samples_in_span, (double)work / 1e3, CLOCK_TRAPS_WORK_TRAPS,
				 (double)c->window_min_ns / 1e3);
	else
		chk = checks_add(a, def, CHECK_PASS,
				 "the hot thread read the clock %llu times, and a quarter of its windows hold %.3g us or "
				 "more beyond the probes' traps around them (over %.3g us, their jitter): its timed "
				 "windows hold more than a few accesses", (unsigned long long)c->hot_reads,
				 (double)work / 1e3, (double)allow / 1e3);
	checks_evidence(chk, "measured_window_median_ns", c->measured_known ? (double)c->measured_window_median_ns : NAN);
	checks_evidence(chk, "reads", (double)c->hot_reads);
	checks_evidence(chk, "window_median_ns", (double)c->window_median_ns);
	checks_evidence(chk, "window_min_ns", (double)c->window_min_ns);
	checks_evidence(chk, "window_work_p75_ns", (double)work);
	checks_evidence(chk, "kernel_share_in_span", kernel);
	checks_evidence(chk, "vdso_share", vdso);
}

int checks_clock_stopped_fn(const struct sample_clocks *c)
{
	for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++)
		if (c->fn[fn].stopped)
			return fn;
	return -1;
}

const char *checks_paired_clock(const struct sample_clocks *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", sample_clock_fn_name(c->paired_fn), c->paired_id >= 0 ? " " : "",
		 c->paired_id >= 0 ? sample_clock_id_name(c->paired_id) : "");
	return buf;
}

/* How the CPU time between the reads was found, for the messages: "3.2 of its 114 ms on a CPU, by ...". */
static void timed_how(const struct sample_clocks *c, double in_ns, double cpu_ns, char *buf, size_t size)
{
	if (c->switches_known)
		snprintf(buf, size, "%.3g of its %.4g ms on a CPU, by its context switches", in_ns / 1e6, cpu_ns / 1e6);
	else
		snprintf(buf, size, "%llu of its %llu cpu-clock samples", (unsigned long long)c->hot_samples_in_span,
			 (unsigned long long)c->hot_samples);
}

/* The CPU time the cpu-clock samples stand for: each kept one stands for the period they were brought to. */
static double sampled_cpu_ns(const struct sample_profile *p)
{
	return (double)p->clock_samples * (double)p->clock_period_ns;
}

/* The could-not-tell of samples that do not add up to the run's task-clock (checks_clock_unaccounted()). */
static void unaccounted_skip(const struct analysis_check_def *def, const struct sample_profile *p, struct analysis *a)
{
	double sampled = sampled_cpu_ns(p), task = (double)p->clock_task_ns;
	char lost[96] = "no sample record was lost, so";

	if (p->clock_lost)
		snprintf(lost, sizeof(lost), "%llu sample records were lost (a ring filled before tlbprof drained it), or",
			 (unsigned long long)p->clock_lost);
	struct analysis_check *c = checks_add(
		a, def, CHECK_SKIP,
		"could not tell, because the cpu-clock samples stand for %.0f ms of CPU time where the command's "
		"task-clock counted %.0f ms over the same run, so their shares are not the command's: %s the kernel "
		"throttled samples away, %sor much of the time was in threads or processes too brief to take a sample "
		"(each gets its first after 250 us of its own CPU time, or after 10 ms where it started once the rate "
		"was lowered, 100 ms into the run)", sampled / 1e6, task / 1e6, lost,
		p->clock_counted ? "" : "or threads did not keep the period their samples were weighed by (this kernel "
					"gives no count with a sample), ");
	checks_evidence(c, "sampled_cpu_ns", sampled);
	checks_evidence(c, "task_clock_ns", task);
	checks_evidence(c, "lost_records", (double)p->clock_lost);
}

/*
 * Why the hot thread's windows are not all seen (a skip's text, into why): it read once, tracing stopped early,
 * or it was followed after it started. False when they are.
 */
static bool windows_unseen(const struct sample_clocks *c, char *why, size_t len)
{
	int stopped = checks_clock_stopped_fn(c);

	if (!c->windows)
		snprintf(why, len, "could not tell, because the hot thread read its clock only once: no window between two "
			 "reads");
	else if (stopped >= 0)
		snprintf(why, len, "could not tell, because tracing %s stopped after %u calls: the reads after it, and so "
			 "the end of the timed span, are unseen", sample_clock_fn_name(stopped), SAMPLE_CLOCK_BUDGET);
	else if (c->threads_capped)
		snprintf(why, len, "could not tell, because all tracing stopped at %llu ms, when the command started more "
			 "threads than are followed (%u alive at once, %u in all): the reads after it, and so the end of "
			 "the timed span, are unseen", (unsigned long long)c->threads_capped_ms, SAMPLE_CLOCK_THREADS,
			 SAMPLE_CLOCK_FOLLOWED);
	else if (c->hot_samples_untraced)
		snprintf(why, len, "could not tell, because the hot thread ran %llu cpu-clock samples before its probes "
			 "opened (it was followed after it started): its reads before them, and so the start of the timed "
			 "span, are unseen", (unsigned long long)c->hot_samples_untraced);
	else
		return false;
	return true;
}

void checks_empty_timed_window(const struct analysis_check_def *def, const struct analysis_input *in,
			       struct analysis *a)
{
	const struct sample_profile *p = in->profile;
	const struct sample_clocks *c = &p->clocks;
	struct analysis_check *chk;
	char how[256], why[320], clock[64];

	if (!clocks_seen(def, p, a))
		return;
	bool work_timed = c->windows >= EMPTY_WORK_MIN_WINDOWS && c->window_work_p75_ns >= trap_jitter_ns(c);
	/* Bare runs with work between them: the work may be a setup or the timed reps (one clock cannot tell). */
	bool bare = c->measured_known && c->bare_reads;
	bool empty = c->pairs_known && c->paired_fn >= 0 && c->pairs_empty;	/* a timer that times nothing */
	/*
	 * The CPU time between the reads: exact from the hot thread's context switches where they were recorded;
	 * else its samples, but no more than the span (one sample can land in a window far shorter than the
	 * sampling period). Against all its CPU time, by its samples (hundreds of them: a few % either way).
	 */
	double period = clock_period(p);
	double cpu_ns = (double)c->hot_samples * period;
	double in_ns = c->switches_known ? (double)c->span_on_cpu_ns : (double)c->hot_samples_in_span * period;
	if (in_ns > (double)c->span_ns)
		in_ns = (double)c->span_ns;
	uint64_t longest = c->switches_known ? c->window_max_on_cpu_ns : c->window_max_ns;
	double seen = ((double)c->hot_samples_in_span + 1) * period;
	bool stalled = c->switches_known && c->span_fast_rate && !p->clock_user_only && !p->clock_lost &&
		       seen < STALL_SEEN_SHARE * (double)c->span_on_cpu_ns;
	if (stalled) {
		in_ns = seen < in_ns ? seen : in_ns;
		longest = (uint64_t)seen < longest ? (uint64_t)seen : longest;
	}
	double timed = cpu_ns > 0 ? (in_ns < cpu_ns ? in_ns / cpu_ns : 1) : 0;
	/* The hot loop between the reads, run by the process's other threads (a thread that joins its workers). */
	bool others = (double)c->loop_weight * period >= EMPTY_MIN_CPU_NS &&
		      (double)c->loop_weight_in_span >= EMPTY_LOOP_IN_SPAN * (double)c->loop_weight;
	if (stalled)
		snprintf(how, sizeof(how), "at most %.3g of its %.4g ms by its %llu cpu-clock sample(s) there; its context "
			 "switches counted %.3g ms on a CPU, a vCPU the host stopped included", in_ns / 1e6, cpu_ns / 1e6,
			 (unsigned long long)c->hot_samples_in_span, (double)c->span_on_cpu_ns / 1e6);
	else
		timed_how(c, in_ns, cpu_ns, how, sizeof(how));
	if (windows_unseen(c, why, sizeof(why)))
		chk = checks_add(a, def, CHECK_SKIP, "%s", why);
	else if (checks_clock_unaccounted(p)) {
		unaccounted_skip(def, p, a);
		return;
	} else if (cpu_ns < EMPTY_MIN_CPU_NS)
		chk = checks_add(a, def, CHECK_SKIP, "could not tell, because the hot thread ran for only %llu cpu-clock "
				 "samples (%.3g ms): too little to say where its time went",
				 (unsigned long long)c->hot_samples, cpu_ns / 1e6);
	else if (empty)
		chk = checks_add(a, def, CHECK_WARN,
				 "the hot thread's timer times nothing: its %llu %s reads start and stop it in turn, and its "
				 "%llu runs between a start and the stop held nothing but the reads (in three in four or "
				 "more, no window between two reads was over four times the least plus 5 us; at the upper "
				 "quartile the longest was %.3g us over it), while its hot function ran between a stop and "
				 "the next start; the work the benchmark reports is not between its start and stop: at -O2 a loop whose result "
				 "is never used is deleted, so use the result (benchmark::DoNotOptimize(), a store to a "
				 "volatile) and check that the loop is in the compiled code",
				 (unsigned long long)c->paired_reads, checks_paired_clock(c, clock, sizeof(clock)),
				 (unsigned long long)c->paired_reads / 2, (double)c->pair_work_p75_ns / 1e3);
	else if (timed < EMPTY_TIMED_SHARE && longest < EMPTY_WINDOW_NS && others)
		chk = checks_add(a, def, CHECK_PASS,
				 "the hot thread's clock reads time little of its own CPU time (%.1f %% lay between its "
				 "first and last read: %s), but %.0f %% of its process's cpu-clock samples in the hot "
				 "function (%.3g ms) lay between them: it times a loop its other threads run (it starts "
				 "them, or wakes them, and waits)", 100 * timed, how,
				 100 * (double)c->loop_weight_in_span / (double)c->loop_weight,
				 (double)c->loop_weight * period / 1e6);
	else if (timed < EMPTY_TIMED_SHARE && longest < EMPTY_WINDOW_NS && !work_timed)
		chk = checks_add(a, def, CHECK_WARN,
				 "the hot thread's %llu clock reads time next to nothing: %.1f %% of its CPU time (%s) "
				 "fell between its first and last read, and its longest window is %.3g ms%s; the work "
				 "the benchmark reports is not between its clock reads: at -O2 a loop whose result is "
				 "never used is deleted, so use the result (print it, or store it to a volatile), and "
				 "check that the loop is in the compiled code",
				 (unsigned long long)c->hot_reads, 100 * timed, how, (double)longest / 1e6,
				 stalled ? " by its samples" : c->switches_known ? " on a CPU" : "");
	else if (bare)
		chk = checks_add(a, def, CHECK_SKIP,
				 "could not tell, because %llu of the hot thread's clock reads pair into runs that hold "
				 "nothing but a read (three in four or more, none of its hot function's samples in any) with "
				 "work between them (%.1f %% of its CPU time lay between its first and last read: %s): a "
				 "timer around a loop the compiler deleted, its setup between runs, reads so, and so do a "
				 "total's reads around back-to-back timed reps; with one clock read at each start and stop, "
				 "no window inside a run measures a read's own cost, so check that the timed loop is in the "
				 "compiled code",
				 (unsigned long long)c->bare_reads, 100 * timed, how);
	else if (timed < EMPTY_TIMED_SHARE && longest < EMPTY_WINDOW_NS)
		chk = checks_add(a, def, CHECK_PASS,
				 "the hot thread's clock reads time little of its CPU time (%.1f %% lay between its first "
				 "and last read: %s), but a quarter of its %llu windows hold %.3g us or more beyond the "
				 "probes' traps around them (over %.3g us, their jitter): a timed loop is there, only "
				 "short", 100 * timed, how, (unsigned long long)c->windows,
				 (double)c->window_work_p75_ns / 1e3, (double)trap_jitter_ns(c) / 1e3);
	else
		chk = checks_add(a, def, CHECK_PASS,
				 "the hot thread's clock reads time %.0f %% of its CPU time: it lay between its first and "
				 "last read, %.4g ms apart (%s)", 100 * timed, (double)c->span_ns / 1e6, how);
	checks_evidence(chk, "reads", (double)c->hot_reads);
	checks_evidence(chk, "cpu_samples", (double)c->hot_samples);
	checks_evidence(chk, "cpu_samples_in_span", (double)c->hot_samples_in_span);
	checks_evidence(chk, "span_ns", (double)c->span_ns);
	checks_evidence(chk, "window_max_ns", (double)c->window_max_ns);
	checks_evidence(chk, "window_work_p75_ns", (double)c->window_work_p75_ns);
	checks_evidence(chk, "loop_samples", (double)c->loop_weight);
	checks_evidence(chk, "loop_samples_in_span", (double)c->loop_weight_in_span);
	if (c->switches_known) {
		checks_evidence(chk, "span_on_cpu_ns", (double)c->span_on_cpu_ns);
		checks_evidence(chk, "window_max_on_cpu_ns", (double)c->window_max_on_cpu_ns);
	}
	if (stalled)
		checks_evidence(chk, "span_seen_ns", seen);
	if (empty)
		checks_evidence(chk, "pair_work_p75_ns", (double)c->pair_work_p75_ns);
	if (bare)
		checks_evidence(chk, "bare_pair_reads", (double)c->bare_reads);
}

void checks_off_cpu_in_timed_window(const struct analysis_check_def *def, const struct analysis_input *in,
				    struct analysis *a)
{
	const struct sample_clocks *c = &in->profile->clocks;
	struct analysis_check *chk;
	char why[320], cpus[48] = "";

	if (!clocks_seen(def, in->profile, a))
		return;
	if (in->profile->cpus_allowed_last)
		snprintf(cpus, sizeof(cpus), " (%u at its last look)", in->profile->cpus_allowed_last);
	double span = (double)c->measured_span_ns, idle = (double)c->measured_idle_ns;
	double pre = (double)c->measured_preempted_ns, own = (double)c->measured_preempted_own_ns;
	if (windows_unseen(c, why, sizeof(why)))
		chk = checks_add(a, def, CHECK_SKIP, "%s", why);
	else if (!c->measured_known || !c->waits_known)
		chk = checks_add(a, def, CHECK_SKIP, "could not tell, because the context switches of the command's tasks "
				 "were not recorded in full (a kernel before 4.3 records none, one before 4.17 marks no "
				 "preemption; some were lost; or a report from before they were weighed): when the hot "
				 "thread was off a CPU, and why, is unknown");
	else if (!c->measured_windows || span <= 0)
		chk = checks_add(a, def, CHECK_SKIP, "could not tell, because no window between the hot thread's reads "
				 "held its hot loop");
	else if (idle >= OFF_CPU_IDLE_SHARE * span && idle >= OFF_CPU_MIN_NS)
		chk = checks_add(a, def, CHECK_WARN,
				 "the command sat off every CPU for %.0f %% of the windows its hot loop ran in (%.3g of %.4g "
				 "ms): the hot thread was asleep (a sleep, I/O, a lock or a pipe) and none of the command's "
				 "other threads or processes ran; the times it reports hold that wait, not memory accesses. "
				 "Time only the accesses; a wait on another program (a server) is that program's, which "
				 "tlbprof does not watch", 100 * idle / span, idle / 1e6, span / 1e6);
	else if (own >= OFF_CPU_OWN_SHARE * span && own >= OFF_CPU_MIN_NS)
		chk = checks_add(a, def, CHECK_WARN,
				 "the hot thread waited for a CPU, runnable, for %.0f %% of the windows its hot loop ran in "
				 "(%.3g of %.4g ms) while the command's other threads or processes ran in its place: it runs "
				 "more tasks at once than the CPUs it may use%s, and the times it reports hold their turns. "
				 "Run no more threads than CPUs", 100 * own / span, own / 1e6, span / 1e6, cpus);
	else if (pre >= OFF_CPU_BUSY_SHARE * span && pre >= OFF_CPU_MIN_NS)
		chk = checks_add(a, def, CHECK_WARN,
				 "the hot thread waited for a CPU, runnable, for %.0f %% of the windows its hot loop ran in "
				 "(%.3g of %.4g ms; %.3g ms of it while the command's own tasks ran on its CPU): the "
				 "machine was busy, and the times it reports hold that wait. Run it on a quiet machine, or "
				 "pinned to a CPU nothing else uses", 100 * pre / span, pre / 1e6, span / 1e6, own / 1e6);
	else
		chk = checks_add(a, def, CHECK_PASS,
				 "the hot thread was on a CPU for %.0f %% of the windows its hot loop ran in (%.4g ms); "
				 "asleep %.3g ms, the whole command off every CPU for %.3g ms of it (a thread that waits "
				 "for its workers sleeps while they run); waiting for a CPU %.3g ms, %.3g ms of it while "
				 "the command's other tasks ran", 100 * (span - pre - (double)c->measured_blocked_ns) / span,
				 span / 1e6, (double)c->measured_blocked_ns / 1e6, idle / 1e6, pre / 1e6, own / 1e6);
	checks_evidence(chk, "measured_windows_span_ns", span);
	checks_evidence(chk, "measured_idle_ns", idle);
	checks_evidence(chk, "measured_blocked_ns", (double)c->measured_blocked_ns);
	checks_evidence(chk, "measured_preempted_ns", pre);
	checks_evidence(chk, "measured_preempted_own_ns", own);
}

bool checks_clock_unaccounted(const struct sample_profile *p)
{
	double sampled = sampled_cpu_ns(p), task = (double)p->clock_task_ns;

	/* The kernel's side is in the task-clock whatever perf_event_paranoid kept out of the samples. */
	return task > 0 && !p->clock_user_only && fabs(sampled - task) > CLOCK_ACCOUNTED_GAP * task;
}

bool checks_no_clock(const struct analysis_check_def *def, const struct sample_profile *p, struct analysis *a)
{
	if (!p->clock_sampled) {
		checks_add(a, def, CHECK_SKIP, "could not tell, because the cpu-clock event could not sample the command: %s",
			   *p->clock_error ? p->clock_error : "not opened");
		return true;
	}
	if (p->clock_samples < UNMARKED_MIN_CLOCK_SAMPLES) {
		checks_add(a, def, CHECK_SKIP, "could not tell, because the command ran too briefly on a CPU: %llu cpu-clock "
			   "samples of 250 us (at least %d locate a loop)", (unsigned long long)p->clock_samples,
			   UNMARKED_MIN_CLOCK_SAMPLES);
		return true;
	}
	if (checks_clock_unaccounted(p)) {
		unaccounted_skip(def, p, a);
		return true;
	}
	return false;
}
