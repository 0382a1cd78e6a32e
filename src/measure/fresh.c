/* SPDX-License-Identifier: MIT */
/*
 * Fresh memory per sample (the pagefault workload): in this process, or in
 * one re-executed tlbprof per process talking a line protocol over a pipe.
 */
#include "measure/runner.h"
#include "measure/runner_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stats.h"
#include "measure/region.h"
#include "measure/timed.h"
#include "measure/workload.h"

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
	for (unsigned r = 0; r < ph->repeat && !runner_stop_requested(ctx); r++) {
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
			runner_phase_fail(res, rc == -ENOMEM || rc == -EOPNOTSUPP, "%s", *why ? why : strerror(-rc));
			break;
		}
		if (cs && before)
			counter_set_read(cs, before);
		getrusage(RUSAGE_THREAD, &ru0);
		fs.elapsed_ns = (double)runner_timed_run(w, state, ph->iterations, cs);
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
			runner_phase_fail(res, true, "%s", why);
			break;
		}
		runner_progress_tick(ctx);
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
		runner_phase_fail(res, true, "cannot start process %u: %s", process, strerror(errno));
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
		runner_phase_fail(res, true, "cannot start process %u: %s", process, strerror(rc));
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
		runner_phase_fail(res, true, "out of memory reading process %u", process);
		return;
	}
	text[len] = '\0';
	if (child_merge(res, text, process, cap) != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (res->status == PHASE_OK)
			runner_phase_fail(res, false, "process %u ended with %s %d and no complete report", process,
				   WIFSIGNALED(status) ? "signal" : "status",
				   WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	}
	res->processes_run++;
	free(text);
}

void runner_fresh_phase(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res)
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
		runner_phase_fail(res, true, "out of memory for %zu samples", cap);
		return;
	}
	uint64_t t0 = timing_now_ns();
	struct prepare_info info = { 0 };
	rc = w->prepare(&state, ph, NULL, res->self_checks, &res->n_self_checks, &info, why, sizeof(why));
	res->slots = info.units;
	res->prepare_ms = (double)(timing_now_ns() - t0) / 1e6;
	if (rc) {
		runner_phase_fail(res, rc == -ENOMEM || rc == -ENOSPC, "%s", *why ? why : strerror(-rc));
		return;
	}
	if (cs && runner_open_counters(res, cs) != 0) {
		runner_phase_fail(res, true, "out of memory for counters");
		cs = NULL;
	}
	if (res->status == PHASE_OK && ph->processes > 1 && ctx->argv) {
		/* The parent only counts what its children report. */
		if (cs)
			counter_set_close(cs);
		for (size_t i = 0; i < res->n_counters; i++)
			res->counters[i] = (struct counter_reading){ 0 };
		for (unsigned p = 0; p < ph->processes && res->status == PHASE_OK && !runner_stop_requested(ctx); p++) {
			spawn_child(ph, ctx, w->data_file ? w->data_file(state) : NULL, res, p, cap);
			runner_progress_tick(ctx);
		}
	} else if (res->status == PHASE_OK) {
		fresh_samples(ph, state, cs, ctx, res, 0, cap);
		res->processes_run = 1;
	}
	if (cs)
		counter_set_close(cs);
	if (res->status == PHASE_OK && res->n_samples < cap)
		runner_phase_fail(res, false, "interrupted after %zu of %zu samples", res->n_samples, cap);
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
		runner_pin_cpu(res.spec.cpu);
	runner_fresh_phase(&res.spec, ctx, &res);
	child_write(child->fd, &res);
	rr.phases = malloc(sizeof(res));
	if (rr.phases)
		rr.phases[0] = res;
	else
		rr.n = 0;
	run_results_free(&rr);
	return 0;
}
