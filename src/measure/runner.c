/* SPDX-License-Identifier: MIT */
/* Execute a plan: per phase allocate, prepare, verify pages, warm up, time with counters, collect. */
#include "measure/runner.h"
#include "measure/runner_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "stats.h"
#include "machine/environment.h"
#include "measure/region.h"
#include "measure/timed.h"
#include "measure/workload.h"

__attribute__((format(printf, 3, 4)))
static void phase_fail(struct phase_result *res, bool unavailable, const char *fmt, ...)
{
	va_list ap;

	res->status = PHASE_FAILED;
	res->unavailable = unavailable;
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
}

static bool stop_requested(const struct run_context *ctx)
{
	return ctx->stop && *ctx->stop;
}

/*
 * A safe point for the progress line: between timed samples and around the
 * untimed steps of a phase, never inside a timed sample. The hook costs a
 * clock read when it does not draw; drawing (a few hundred bytes to a
 * terminal, at most four times a second) happens while no sample runs.
 */
static void progress_tick(const struct run_context *ctx)
{
	if (ctx->progress_tick)
		ctx->progress_tick(ctx->progress_arg);
}

static int pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static void rusage_faults(uint64_t *minflt, uint64_t *majflt)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		*minflt = (uint64_t)ru.ru_minflt;
		*majflt = (uint64_t)ru.ru_majflt;
	} else {
		*minflt = *majflt = 0;
	}
}

/*
 * Open the set for this phase and keep a copy of the per-event infos, so
 * statuses are per phase. Returns 0 or -ENOMEM.
 */
static int open_counters(struct phase_result *res, struct counter_set *cs)
{
	size_t n = counter_set_size(cs);

	res->counter_info = calloc(n ? n : 1, sizeof(*res->counter_info));
	res->counters = calloc(n ? n : 1, sizeof(*res->counters));
	res->prefault_counters = calloc(n ? n : 1, sizeof(*res->prefault_counters));
	if (!res->counter_info || !res->counters || !res->prefault_counters)
		return -ENOMEM;
	uint64_t t0 = timing_now_ns();
	counter_set_open(cs);
	res->counter_open_us = (double)(timing_now_ns() - t0) / 1e3;
	res->n_counters = n;
	for (size_t i = 0; i < n; i++)
		res->counter_info[i] = *counter_set_info(cs, i);
	const struct counter_phase_hint hint = { .page_bytes = res->spec.page.bytes, .size_bytes = res->spec.size_bytes,
						 .stride_bytes = res->spec.stride_bytes, .core_ghz = res->cycles_per_ns };
	counter_set_hint_phase(cs, &hint);
	return 0;
}

/* First touch of every page, counted: real fault counts, and no faults left for the timed part. */
static void prefault(struct region *region, struct counter_set *cs, struct phase_result *res)
{
	if (cs) {
		counter_set_reset(cs);
		counter_set_enable(cs);
	}
	uint64_t t0 = timing_now_ns();
	res->prefault_pages = region_prefault(region);
	res->prefault_ns = (double)(timing_now_ns() - t0);
	if (cs) {
		counter_set_disable(cs);
		counter_set_read(cs, res->prefault_counters);
	}
}

/* One timed sample: counters enabled around the workload's run only (measure/timed.c). Returns the elapsed ns. */
static uint64_t timed_run(const struct workload_ops *w, void *state, uint64_t accesses, struct counter_set *cs)
{
	return timed_sample(w, state, accesses, cs, NULL);
}

/*
 * The hypervisor's steal time since steal0 (all CPUs), in ticks and ms, and
 * every CPU tick since total0 (0 when /proc/stat could not be read at both
 * ends): the share of CPU time stolen is steal over those.
 */
static void record_steal(struct phase_result *res, uint64_t steal0, uint64_t total0)
{
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t total1 = 0, steal1 = 0;

	if (environment_stat_ticks(&total1, &steal1) != 0)
		steal1 = environment_steal_ticks();
	res->steal_ticks = steal1 >= steal0 ? steal1 - steal0 : 0;
	res->stat_ticks = total0 && total1 > total0 ? total1 - total0 : 0;
	res->steal_ms = (double)res->steal_ticks * 1000.0 / (double)(hz > 0 ? hz : 100);
}

static double timeval_ns(struct timeval tv)
{
	return (double)tv.tv_sec * 1e9 + (double)tv.tv_usec * 1e3;
}

static double metric_delta(const struct phase_result *res, const struct counter_reading *before, enum metric m)
{
	for (size_t i = 0; i < res->n_counters; i++) {
		const struct counter_info *ci = &res->counter_info[i];
		if (ci->metric == m && counter_counting(ci))
			return res->counters[i].scaled - before[i].scaled;
	}
	return -1;
}

static int add_fault_sample(struct phase_result *res, const struct fault_sample *fs, size_t cap)
{
	if (res->n_fault_samples == cap || res->n_samples == cap)
		return -E2BIG;
	res->fault_samples[res->n_fault_samples++] = *fs;
	res->samples_ns[res->n_samples++] = fs->pages ? fs->elapsed_ns / (double)fs->pages : 0;
	res->timed_ns += fs->elapsed_ns;
	return 0;
}

/*
 * Fresh memory per sample (pagefault): untimed setup, the timed touch with
 * counters enabled around it only, per-sample fault counts from the counters
 * (read before and after; they are never reset in between, so the final read
 * is the phase total) and from getrusage, untimed teardown.
 */
static void fresh_samples(const struct phase_spec *ph, void *state, struct counter_set *cs,
			  const struct run_context *ctx, struct phase_result *res, unsigned process, size_t cap)
{
	const struct workload_ops *w = ph->workload;
	struct counter_reading *before = calloc(res->n_counters + 1, sizeof(*before));
	char why[400];

	if (cs)
		counter_set_reset(cs);
	for (unsigned r = 0; r < ph->repeat && !stop_requested(ctx); r++) {
		struct fault_sample fs = { .process = process, .pages = ph->iterations };
		struct rusage ru0, ru1;
		int rc;

		why[0] = '\0';
		rc = w->sample_setup(state, &fs, why, sizeof(why));
		if (rc == -EAGAIN) {
			res->status = PHASE_SKIPPED;
			res->skipped_resident = fs.resident_before;
			snprintf(res->reason, sizeof(res->reason), "%s", why);
			break;
		}
		if (rc) {
			phase_fail(res, rc == -ENOMEM || rc == -EOPNOTSUPP, "%s", *why ? why : strerror(-rc));
			break;
		}
		if (cs && before)
			counter_set_read(cs, before);
		getrusage(RUSAGE_THREAD, &ru0);
		fs.elapsed_ns = (double)timed_run(w, state, ph->iterations, cs);
		getrusage(RUSAGE_THREAD, &ru1);
		fs.minor = fs.major = -1;
		if (cs && before) {
			counter_set_read(cs, res->counters);
			fs.minor = metric_delta(res, before, METRIC_MINOR_FAULTS);
			fs.major = metric_delta(res, before, METRIC_MAJOR_FAULTS);
		}
		fs.minor_rusage = (uint64_t)(ru1.ru_minflt - ru0.ru_minflt);
		fs.major_rusage = (uint64_t)(ru1.ru_majflt - ru0.ru_majflt);
		fs.user_ns = timeval_ns(ru1.ru_utime) - timeval_ns(ru0.ru_utime);
		fs.sys_ns = timeval_ns(ru1.ru_stime) - timeval_ns(ru0.ru_stime);
		if (w->sample_teardown(state, &res->backing))
			res->backing_known = true;
		add_fault_sample(res, &fs, cap);
		if (res->backing_known && region_check_backing(&ph->page, &res->backing, why, sizeof(why)) != 0) {
			phase_fail(res, true, "%s", why);
			break;
		}
		progress_tick(ctx);
	}
	if (cs)
		for (size_t i = 0; i < res->n_counters; i++)
			res->counter_info[i] = *counter_set_info(cs, i);
	free(before);
}

/* ---- child processes: one re-executed tlbprof per process, talking a line protocol over a pipe ---- */

static void child_write(int fd, const struct phase_result *res)
{
	FILE *f = fdopen(fd, "w");
	const struct region_backing *b = &res->backing;

	if (!f)
		return;
	fprintf(f, "backing %d %d %llu %llu %llu %llu %.17g %u\n", res->backing_known, (int)b->kind,
		(unsigned long long)b->kernel_page_bytes, (unsigned long long)b->rss_bytes,
		(unsigned long long)b->anon_huge_bytes, (unsigned long long)b->hugetlb_bytes, b->huge_fraction, b->vmas);
	for (size_t i = 0; i < res->n_counters; i++)
		fprintf(f, "counter %zu %llu %llu %llu %.17g\n", i, (unsigned long long)res->counters[i].value,
			(unsigned long long)res->counters[i].enabled_ns, (unsigned long long)res->counters[i].running_ns,
			res->counters[i].scaled);
	for (size_t i = 0; i < res->n_fault_samples; i++) {
		const struct fault_sample *s = &res->fault_samples[i];
		fprintf(f, "sample %.17g %llu %.17g %.17g %llu %llu %.17g %.17g %.17g\n", s->elapsed_ns,
			(unsigned long long)s->pages, s->minor, s->major, (unsigned long long)s->minor_rusage,
			(unsigned long long)s->major_rusage, s->user_ns, s->sys_ns, s->resident_before);
	}
	fprintf(f, "skipped_resident %.17g\n", res->skipped_resident);
	/* Last: the reason may contain anything but a newline. */
	fprintf(f, "status %d %d %s\n", (int)res->status, res->unavailable, res->reason);
	fclose(f);
}

/* Merge what one child reported into res. Returns 0, or -EPROTO on a line that does not parse. */
static int child_merge(struct phase_result *res, char *text, unsigned process, size_t cap)
{
	bool status_seen = false;

	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, "sample ", 7) == 0) {
			struct fault_sample s = { .process = process };
			unsigned long long pages, minru, majru;
			if (sscanf(line + 7, "%lg %llu %lg %lg %llu %llu %lg %lg %lg", &s.elapsed_ns, &pages, &s.minor, &s.major,
				   &minru, &majru, &s.user_ns, &s.sys_ns, &s.resident_before) != 9)
				return -EPROTO;
			s.pages = pages;
			s.minor_rusage = minru;
			s.major_rusage = majru;
			add_fault_sample(res, &s, cap);
		} else if (strncmp(line, "counter ", 8) == 0) {
			size_t i;
			unsigned long long v, ena, run;
			double scaled;
			if (sscanf(line + 8, "%zu %llu %llu %llu %lg", &i, &v, &ena, &run, &scaled) != 5)
				return -EPROTO;
			if (i < res->n_counters) {
				res->counters[i].value += v;
				res->counters[i].enabled_ns += ena;
				res->counters[i].running_ns += run;
				res->counters[i].scaled += scaled;
			}
		} else if (strncmp(line, "backing ", 8) == 0) {
			int known, kind;
			unsigned long long kps, rss, huge, tlb;
			struct region_backing b = { 0 };
			if (sscanf(line + 8, "%d %d %llu %llu %llu %llu %lg %u", &known, &kind, &kps, &rss, &huge, &tlb,
				   &b.huge_fraction, &b.vmas) != 8)
				return -EPROTO;
			if (known) {
				b.kind = (enum page_kind)kind;
				b.kernel_page_bytes = kps;
				b.rss_bytes = rss;
				b.anon_huge_bytes = huge;
				b.hugetlb_bytes = tlb;
				res->backing = b;
				res->backing_known = true;
			}
		} else if (strncmp(line, "skipped_resident ", 17) == 0) {
			double v;
			if (sscanf(line + 17, "%lg", &v) != 1)
				return -EPROTO;
			if (v > res->skipped_resident)
				res->skipped_resident = v;
		} else if (strncmp(line, "status ", 7) == 0) {
			int st, unavailable, off = 0;
			if (sscanf(line + 7, "%d %d %n", &st, &unavailable, &off) != 2)
				return -EPROTO;
			status_seen = true;
			if (st != PHASE_OK && res->status == PHASE_OK) {
				res->status = st == PHASE_SKIPPED ? PHASE_SKIPPED : PHASE_FAILED;
				res->unavailable = unavailable;
				snprintf(res->reason, sizeof(res->reason), "process %u: %s", process, line + 7 + off);
			}
		}
	}
	return status_seen ? 0 : -EPROTO;
}

/* Run the phase's samples in a fresh tlbprof process; merge its report. */
static void spawn_child(const struct phase_spec *ph, const struct run_context *ctx, const char *data_file,
			struct phase_result *res, unsigned process, size_t cap)
{
	extern char **environ;
	int fds[2];
	char arg[4200], **argv = calloc((size_t)ctx->argc + 4, sizeof(*argv));
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int rc, status = 0;

	if (!argv || pipe2(fds, O_CLOEXEC) != 0) {
		phase_fail(res, true, "cannot start process %u: %s", process, strerror(errno));
		free(argv);
		return;
	}
	/* The child writes to fd 3: dup2 in the child clears close-on-exec for it. */
	snprintf(arg, sizeof(arg), "%u:3:%s", ph->index, data_file ? data_file : "");
	for (int i = 0; i < ctx->argc; i++)
		argv[i] = ctx->argv[i];
	argv[ctx->argc] = "--internal-child";
	argv[ctx->argc + 1] = arg;
	argv[ctx->argc + 2] = "--quiet";
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 3);
	/*
	 * Re-execute the program as it was started when argv[0] names it by path
	 * (under valgrind, /proc/self/exe is valgrind's own tool), else /proc/self/exe.
	 */
	const char *self = strchr(ctx->argv[0], '/') && access(ctx->argv[0], X_OK) == 0 ? ctx->argv[0] : "/proc/self/exe";
	rc = posix_spawn(&pid, self, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	free(argv);
	if (rc) {
		close(fds[0]);
		phase_fail(res, true, "cannot start process %u: %s", process, strerror(rc));
		return;
	}
	size_t len = 0, size = 1 << 16;
	char *text = malloc(size);
	for (ssize_t n; text;) {
		if (len + 1 == size) {
			char *t = realloc(text, size *= 2);
			if (!t) {
				free(text);
				text = NULL;
				break;
			}
			text = t;
		}
		n = read(fds[0], text + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!text) {
		phase_fail(res, true, "out of memory reading process %u", process);
		return;
	}
	text[len] = '\0';
	if (child_merge(res, text, process, cap) != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (res->status == PHASE_OK)
			phase_fail(res, false, "process %u ended with %s %d and no complete report", process,
				   WIFSIGNALED(status) ? "signal" : "status",
				   WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	}
	res->processes_run++;
	free(text);
}

static void run_fresh_phase(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res)
{
	const struct workload_ops *w = ph->workload;
	struct counter_set *cs = ctx->counters;
	size_t cap = (size_t)ph->repeat * (ph->processes ? ph->processes : 1);
	void *state = NULL;
	char why[400] = "";
	int rc;

	free(res->samples_ns);
	free(res->sample_alloc);
	res->sample_alloc = NULL;	/* every page-fault sample is its own allocation */
	res->stop_reason = "samples";
	res->samples_ns = calloc(cap, sizeof(*res->samples_ns));
	res->fault_samples = calloc(cap, sizeof(*res->fault_samples));
	if (!res->samples_ns || !res->fault_samples) {
		phase_fail(res, true, "out of memory for %zu samples", cap);
		return;
	}
	uint64_t t0 = timing_now_ns();
	struct prepare_info info = { 0 };
	rc = w->prepare(&state, ph, NULL, res->self_checks, &res->n_self_checks, &info, why, sizeof(why));
	res->slots = info.units;
	res->prepare_ms = (double)(timing_now_ns() - t0) / 1e6;
	if (rc) {
		phase_fail(res, rc == -ENOMEM || rc == -ENOSPC, "%s", *why ? why : strerror(-rc));
		return;
	}
	if (cs && open_counters(res, cs) != 0) {
		phase_fail(res, true, "out of memory for counters");
		cs = NULL;
	}
	if (res->status == PHASE_OK && ph->processes > 1 && ctx->argv) {
		/* The parent only counts what its children report. */
		if (cs)
			counter_set_close(cs);
		for (size_t i = 0; i < res->n_counters; i++)
			res->counters[i] = (struct counter_reading){ 0 };
		for (unsigned p = 0; p < ph->processes && res->status == PHASE_OK && !stop_requested(ctx); p++) {
			spawn_child(ph, ctx, w->data_file ? w->data_file(state) : NULL, res, p, cap);
			progress_tick(ctx);
		}
	} else if (res->status == PHASE_OK) {
		fresh_samples(ph, state, cs, ctx, res, 0, cap);
		res->processes_run = 1;
	}
	if (cs)
		counter_set_close(cs);
	if (res->status == PHASE_OK && res->n_samples < cap)
		phase_fail(res, false, "interrupted after %zu of %zu samples", res->n_samples, cap);
	workload_release(w, state);
}

int runner_run_child(const struct plan *plan, const struct runner_child *child, const struct run_context *ctx)
{
	struct phase_result res = { 0 };
	struct run_results rr = { .phases = &res, .n = 1 };

	if (child->phase >= plan->n)
		return -EINVAL;
	res.spec = plan->phases[child->phase];
	res.spec.processes = 1;
	res.status = PHASE_OK;
	if (res.spec.cpu >= 0)
		pin_cpu(res.spec.cpu);
	run_fresh_phase(&res.spec, ctx, &res);
	child_write(child->fd, &res);
	rr.phases = malloc(sizeof(res));
	if (rr.phases)
		rr.phases[0] = res;
	else
		rr.n = 0;
	run_results_free(&rr);
	return 0;
}

/* --iters auto: a sample lasts at least this long, and at least 1000x the clock overhead. */
static const double SAMPLE_MIN_NS = 1e6;
/* --iters auto: at most this many samples on a single allocation, and this many allocations. */
enum { MAX_AUTO_SAMPLES = 2000, MAX_AUTO_ALLOCATIONS = 100 };
/*
 * Warm-up in auto mode: passes around the structure until one is no longer
 * faster. In a quiet hour here, a chain whose slots sit on many pages kept
 * getting faster for 10 to 15 passes after its region was faulted in
 * (256 MiB on 4 KiB pages: 158 ns on the first pass, 89 ns from about the
 * 12th; 4 MiB packed on few pages is steady from the first), so a fixed two
 * passes measured the transient; with none, this stops after four. Steady:
 * WARMUP_PATIENCE passes in a row not WARMUP_GAIN faster than the best
 * before them. At least WARMUP_MIN_PASSES, at most WARMUP_MAX_PASSES or a
 * quarter of the time budget per allocation. A pass is
 * one trip around the structure, but at least WARMUP_MIN_PASS accesses (to
 * outlast the clock) and at most WARMUP_MAX_PASS (a 16 M-slot chain is timed
 * in parts, so the caps and a stop request are seen within 0.2 s or so).
 */
enum { WARMUP_MIN_PASSES = 2, WARMUP_PATIENCE = 3, WARMUP_MAX_PASSES = 64 };
static const double WARMUP_GAIN = 0.005;
static const uint64_t WARMUP_MIN_PASS = 20000, WARMUP_MAX_PASS = 2000000;

/*
 * The batch for --iters auto: time growing probes (without counters) until
 * one lasts 100 us, then scale to SAMPLE_MIN_NS or 1000x the clock overhead,
 * whichever is longer, so the clock's cost and resolution vanish in a sample.
 * Sized with BATCH_MARGIN: a 100 us probe on a noisy host, or a chain still
 * settling, can read 30 % slow, and the samples must still last that long.
 */
static const double BATCH_MARGIN = 1.5;
static uint64_t auto_batch(const struct workload_ops *w, void *state, const struct run_context *ctx)
{
	double overhead = ctx->clock ? fmax(ctx->clock->clock_overhead_ns, ctx->clock->clock_resolution_ns) : 100;
	uint64_t n = 1000, ns;

	for (;;) {
		ns = timed_run(w, state, n, NULL);
		if (ns >= 100000 || n >= (1ull << 34))
			break;
		n *= 4;
	}
	double per = (double)ns / (double)n, target = BATCH_MARGIN * fmax(SAMPLE_MIN_NS, 1000 * overhead);
	uint64_t batch = (uint64_t)ceil(target / (per > 0 ? per : 1));
	return batch < 1000 ? 1000 : batch;
}

/*
 * Auto warm-up: run passes of `units` accesses until WARMUP_PATIENCE passes
 * in a row are not WARMUP_GAIN faster than the best before them (true), or
 * the pass or time cap comes first, or a stop is requested (false); the time
 * cap only after WARMUP_MIN_PASSES. *passes and *accesses: what ran.
 */
static bool warm_until_steady(const struct workload_ops *w, void *state, uint64_t units, double cap_s,
			      const struct run_context *ctx, unsigned *passes, uint64_t *accesses)
{
	uint64_t pass = units, t0 = timing_now_ns();
	double best = INFINITY;
	unsigned stale = 0;

	if (pass < WARMUP_MIN_PASS)
		pass = WARMUP_MIN_PASS;
	if (pass > WARMUP_MAX_PASS)
		pass = WARMUP_MAX_PASS;
	*passes = 0;
	*accesses = 0;
	while (*passes < WARMUP_MAX_PASSES && !stop_requested(ctx)) {
		double per = (double)timed_run(w, state, pass, NULL) / (double)pass;
		++*passes;
		*accesses += pass;
		progress_tick(ctx);
		if (per < best * (1 - WARMUP_GAIN)) {
			best = per;
			stale = 0;
		} else if (++stale >= WARMUP_PATIENCE) {
			return true;	/* 1 + WARMUP_PATIENCE >= WARMUP_MIN_PASSES passes by now */
		}
		if (*passes >= WARMUP_MIN_PASSES && (double)(timing_now_ns() - t0) / 1e9 >= cap_s)
			return false;
	}
	return false;
}

static void add_sample(struct phase_result *res, uint64_t ns, uint64_t accesses, unsigned alloc)
{
	res->samples_ns[res->n_samples] = (double)ns / (double)accesses;
	res->sample_alloc[res->n_samples] = alloc;
	res->n_samples++;
	res->timed_ns += (double)ns;
}

/* A fresh region for allocation a, faulted in: the first allocation's prefault counted, the others' not. */
static bool map_allocation(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res,
			   struct counter_set *cs, unsigned a, struct region *region)
{
	char why[400] = "";
	int rc = region_map(region, &ph->page, ph->size_bytes, why, sizeof(why));

	if (rc) {
		phase_fail(res, rc == -ENOMEM || rc == -EOPNOTSUPP, "%s", why);
		return false;
	}
	if (a == 0)
		prefault(region, cs, res);
	else
		region_populate(region);
	progress_tick(ctx);
	return true;
}

/*
 * Prepare the workload on the region (a fresh chain, seeded per allocation),
 * then verify it: every self-check and the page backing must pass. The first
 * allocation's preparation times and self-checks are the ones reported.
 * *state: the workload's state, also on failure (release it). *units: what
 * the workload says one pass is. Returns false when the phase failed.
 */
static bool prepare_verified(const struct phase_spec *ph, struct phase_result *res, unsigned a,
			     struct region *region, void **state, uint64_t *units)
{
	const struct workload_ops *w = ph->workload;
	struct phase_spec spec = *ph;
	struct self_check checks[PHASE_MAX_SELF_CHECKS];
	size_t n_checks = 0;
	char why[400] = "";
	struct prepare_info info = { 0 };
	int rc;

	/* A fresh chain: another seed per allocation, the same for the same --seed. */
	spec.seed = ph->seed + a * 0x9e3779b97f4a7c15ull;
	uint64_t t0 = timing_now_ns();
	rc = w->prepare(state, &spec, region, checks, &n_checks, &info, why, sizeof(why));
	if (a == 0) {
		res->prepare_ms = (double)(timing_now_ns() - t0) / 1e6;
		res->build_ms = info.build_ms;
	}
	*units = info.units;
	if (rc) {
		phase_fail(res, rc == -ENOMEM, "preparing %s failed: %s", w->name, *why ? why : strerror(-rc));
		return false;
	}
	if (a == 0) {
		memcpy(res->self_checks, checks, sizeof(checks));
		res->n_self_checks = n_checks;
		res->slots = info.units;
	}
	for (size_t i = 0; i < n_checks; i++) {
		if (checks[i].status == CHECK_FAIL) {
			phase_fail(res, false, "self-check %s failed on allocation %u: %s", checks[i].id, a,
				   checks[i].message);
			return false;
		}
	}
	rc = region_verify(region, &res->backing);
	if (rc) {
		phase_fail(res, false, "cannot verify the page backing from /proc/self/smaps: %s", strerror(-rc));
		return false;
	}
	res->backing_known = true;
	if (region_check_backing(&ph->page, &res->backing, why, sizeof(why)) != 0) {
		phase_fail(res, true, "%s", why);
		return false;
	}
	return true;
}

/*
 * Warm-up on the very same code path: caches, TLBs, page walks, branch
 * predictors, core clock. Auto: until steady, and on the first allocation
 * the batch is chosen after it. Returns the batch of a timed sample.
 */
static uint64_t warm_up(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res,
			void *state, uint64_t units)
{
	const struct workload_ops *w = ph->workload;
	uint64_t wt0 = timing_now_ns(), warm;

	if (ph->iterations_auto) {
		unsigned passes = 0;
		bool steady = warm_until_steady(w, state, units, ph->time_budget_s / 4, ctx, &passes, &warm);
		res->warmup_passes += passes;
		if (passes > res->warmup_max_passes)
			res->warmup_max_passes = passes;
		res->warmup_unsettled += !steady;
	} else {
		warm = timed_run_chunks(w, state, ph->warmup_iterations, ctx->stop);	/* --iters 1T: 100 G */
	}
	res->warmup_accesses += warm;
	res->warmup_ms += (double)(timing_now_ns() - wt0) / 1e6;
	if (ph->iterations_auto && res->spec.iterations == 0) {
		res->spec.iterations = auto_batch(w, state, ctx);
		res->spec.warmup_iterations = warm;
	}
	return res->spec.iterations;
}

/*
 * The timed samples of allocation a, batch accesses each: --repeat of them,
 * or (extend: auto with one allocation) more until the median is precise
 * enough, the time budget is spent or cap samples are taken. The counters
 * count from the first allocation's first sample on; the rusage faults of
 * the samples are added up.
 */
static void take_samples(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res,
			 struct counter_set *cs, void *state, uint64_t batch, unsigned a, bool extend, size_t cap,
			 uint64_t phase_t0)
{
	uint64_t min0, maj0, min1, maj1;

	if (a == 0 && cs)
		counter_set_reset(cs);
	rusage_faults(&min0, &maj0);
	for (unsigned r = 0; res->n_samples < cap && !stop_requested(ctx); r++) {
		if (r >= ph->repeat) {
			/* --repeat samples per allocation; auto with one allocation: more on it, until precise. */
			if (!extend)
				break;
			res->precision_reached = stats_median_ci(res->samples_ns, res->n_samples);
			if (res->precision_reached <= ph->precision) {
				res->stop_reason = "precision";
				break;
			}
			if ((double)(timing_now_ns() - phase_t0) / 1e9 >= ph->time_budget_s) {
				res->stop_reason = "budget";
				break;
			}
		}
		uint64_t ns = timed_sample(ph->workload, state, batch, cs, ctx->stop);
		if (ns == TIMED_STOPPED)
			break;	/* cut short by Ctrl-C: dropped, and the phase ends as interrupted */
		add_sample(res, ns, batch, a);
		progress_tick(ctx);
	}
	if (res->n_samples >= cap && extend && !res->stop_reason)
		res->stop_reason = "max_samples";
	rusage_faults(&min1, &maj1);
	res->rusage_minflt += min1 - min0;
	res->rusage_majflt += maj1 - maj0;
	res->allocations_run = a + 1;
}

/* Check the backing again after the samples: khugepaged may collapse or split pages while the phase runs. */
static void verify_after(const struct phase_spec *ph, struct phase_result *res, const struct region *region)
{
	struct region_backing after;
	char why[400] = "";

	if (region_verify(region, &after) == 0 && region_check_backing(&ph->page, &after, why, sizeof(why)) != 0) {
		res->backing = after;
		phase_fail(res, true, "the page backing changed during the timed run: %s", why);
	}
}

/*
 * One allocation of a phase: a fresh region and a fresh chain (seeded per
 * allocation), verified, warmed up, then sampled. The first allocation's
 * prefault is counted and its self-checks are reported; every allocation's
 * self-checks and backing must pass. Returns false when the phase must stop.
 */
bool runner_allocation(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res,
		       struct counter_set *cs, unsigned a, bool extend, size_t cap, uint64_t phase_t0)
{
	struct region region = { 0 };
	void *state = NULL;
	uint64_t units = 0;

	if (!map_allocation(ph, ctx, res, cs, a, &region))
		return false;
	if (prepare_verified(ph, res, a, &region, &state, &units)) {
		/* Before the warm-up, not after: whatever drawing the line touches is warmed over again. */
		progress_tick(ctx);
		uint64_t batch = warm_up(ph, ctx, res, state, units);
		take_samples(ph, ctx, res, cs, state, batch, a, extend, cap, phase_t0);
		verify_after(ph, res, &region);
	}
	workload_release(ph->workload, state);
	region_unmap(&region);
	return res->status == PHASE_OK && !stop_requested(ctx);
}

/*
 * Whether auto mode draws allocation a (a >= the --realloc least): not when
 * the allocations' interval is precise enough (over MIN_PRECISE_ALLOCATIONS
 * at least: three that agree by luck make a narrow t interval too often to
 * stop on), when another allocation, at the mean cost of those so far, would
 * pass the time budget, or when the samples or allocations run out. Sets
 * res->stop_reason when it stops.
 */
enum { MIN_PRECISE_ALLOCATIONS = 5 };
static bool another_allocation(const struct phase_spec *ph, struct phase_result *res, unsigned a, size_t cap,
			       uint64_t phase_t0)
{
	double elapsed = (double)(timing_now_ns() - phase_t0) / 1e9;

	res->precision_reached = stats_precision(res->samples_ns, res->sample_alloc, res->n_samples);
	if (res->precision_reached <= ph->precision && a >= MIN_PRECISE_ALLOCATIONS)
		res->stop_reason = "precision";
	else if (elapsed + elapsed / a > ph->time_budget_s)
		res->stop_reason = "budget";
	else if (a >= MAX_AUTO_ALLOCATIONS || res->n_samples + ph->repeat > cap)
		res->stop_reason = "max_samples";
	return !res->stop_reason;
}

static void run_phase(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res)
{
	const struct workload_ops *w = ph->workload;
	unsigned allocations = ph->allocations ? ph->allocations : 1;
	/* Auto with one allocation extends it; with several, it draws more allocations. */
	bool extend_one = ph->iterations_auto && allocations == 1;
	/* Auto: --repeat samples on each of up to MAX_AUTO_ALLOCATIONS allocations, or more on a single one. */
	size_t cap = (size_t)ph->repeat * (ph->iterations_auto && allocations > 1 && allocations < MAX_AUTO_ALLOCATIONS
						   ? MAX_AUTO_ALLOCATIONS
						   : allocations) +
		     (extend_one ? MAX_AUTO_SAMPLES : 0);
	uint64_t total0 = 0, steal0 = 0, phase_t0 = timing_now_ns();
	int rc;

	if (environment_stat_ticks(&total0, &steal0) != 0) {
		total0 = 0;
		steal0 = environment_steal_ticks();
	}
	res->spec = *ph;
	res->status = PHASE_OK;
	res->cycles_per_ns = ctx->clock ? ctx->clock->core_clock_ghz : 0.0;
	if (ph->iterations_auto)
		res->spec.iterations = 0;	/* chosen on the first allocation */
	res->samples_ns = calloc(cap, sizeof(*res->samples_ns));
	res->sample_alloc = calloc(cap, sizeof(*res->sample_alloc));
	if (!res->samples_ns || !res->sample_alloc) {
		phase_fail(res, true, "out of memory for %zu samples", cap);
		return;
	}
	if (ph->cpu >= 0 && (rc = pin_cpu(ph->cpu)) != 0) {
		phase_fail(res, false, "cannot pin to CPU %d: %s", ph->cpu, strerror(-rc));
		return;
	}
	if (w->per_sample_memory) {
		run_fresh_phase(ph, ctx, res);
		record_steal(res, steal0, total0);
		return;
	}
	struct counter_set *cs = ctx->counters;
	if (cs && open_counters(res, cs) != 0) {
		phase_fail(res, true, "out of memory for counters");
		cs = NULL;
	}
	/* Fixed --iters: exactly --realloc allocations. Auto: at least those, then more while they pay. */
	for (unsigned a = 0; res->status == PHASE_OK; a++) {
		if (a >= allocations && (!ph->iterations_auto || extend_one || !another_allocation(ph, res, a, cap, phase_t0)))
			break;
		if (!runner_allocation(ph, ctx, res, cs, a, extend_one, cap, phase_t0))
			break;
	}
	if (!res->stop_reason)
		res->stop_reason = ph->iterations_auto ? "budget" : "samples";
	res->precision_reached = stats_precision(res->samples_ns, res->sample_alloc, res->n_samples);
	if (cs) {
		uint64_t t0 = timing_now_ns();
		counter_set_read(cs, res->counters);
		res->counter_read_us = (double)(timing_now_ns() - t0) / 1e3;
		/* read() may have marked events multiplexed: refresh the statuses. */
		for (size_t i = 0; i < res->n_counters; i++)
			res->counter_info[i] = *counter_set_info(cs, i);
		counter_set_close(cs);
	}
	if (res->status == PHASE_OK && stop_requested(ctx)) {
		res->stop_reason = "interrupted";
		phase_fail(res, false, "interrupted after %zu samples", res->n_samples);
	} else if (res->status == PHASE_OK && !ph->iterations_auto && res->n_samples < (size_t)ph->repeat * allocations) {
		phase_fail(res, false, "only %zu of %u samples", res->n_samples, ph->repeat * allocations);
	}
	record_steal(res, steal0, total0);
}

int runner_run(const struct plan *plan, const struct run_context *ctx, struct run_results *out)
{
	memset(out, 0, sizeof(*out));
	out->started_unix_s = (int64_t)time(NULL);
	out->phases = calloc(plan->n ? plan->n : 1, sizeof(*out->phases));
	uint64_t *started = calloc(plan->n ? plan->n : 1, sizeof(*started));
	if (!out->phases || !started) {
		free(out->phases);
		free(started);
		out->phases = NULL;
		return -ENOMEM;
	}
	for (size_t i = 0; i < plan->n; i++) {
		if (stop_requested(ctx)) {
			out->interrupted = true;
			break;
		}
		if (ctx->progress)
			ctx->progress(ctx->progress_arg, i, plan->n, plan->phases[i].name);
		started[i] = timing_now_ns();
		run_phase(&plan->phases[i], ctx, &out->phases[i]);
		out->n = i + 1;
	}
	/* In plan order again, so every phase's second pass is about one run's length after its first. */
	for (size_t i = 0; i < out->n; i++)
		runner_rerun_phase(ctx, &out->phases[i], started[i]);
	free(started);
	if (stop_requested(ctx))
		out->interrupted = true;
	if (ctx->progress)
		ctx->progress(ctx->progress_arg, out->n, plan->n, NULL);
	return 0;
}

void run_results_free(struct run_results *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->phases[i].samples_ns);
		free(r->phases[i].sample_alloc);
		free(r->phases[i].rerun_ns);
		free(r->phases[i].counter_info);
		free(r->phases[i].counters);
		free(r->phases[i].prefault_counters);
		free(r->phases[i].fault_samples);
		if (r->phases[i].target)
			free(r->phases[i].target->wall_ns);
		free(r->phases[i].target);
	}
	free(r->phases);
	memset(r, 0, sizeof(*r));
}
