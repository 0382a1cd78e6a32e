/* SPDX-License-Identifier: MIT */
/* Sampling, opening side: one perf_event and ring per online CPU on the target, its session, and closing it. */
#include "pmu/sample.h"

#include "pmu/paranoid.h"
#include "pmu/perf_open.h"
#include "pmu/sample_session.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* The smallest ring tried when the locked-memory allowance is short. */
#define SAMPLE_MIN_RING_PAGES 8
/* CPUs considered when /sys/devices/system/cpu/online cannot be read. */
#define SAMPLE_MAX_CPUS 4096

/*
 * The online CPUs ("0-3,6\n" in /sys/devices/system/cpu/online) into cpus
 * (capacity max). Falls back to 0 .. nprocs-1 when the file is unreadable.
 * Returns the number of CPUs.
 */
static size_t online_cpus(int *cpus, size_t max)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	char text[4096];
	size_t n = 0;
	long conf;

	if (f) {
		bool ok = fgets(text, sizeof(text), f) != NULL;

		fclose(f);
		for (char *p = text; ok && *p && *p != '\n' && n < max;) {
			char *end;
			long lo = strtol(p, &end, 10), hi = lo;

			if (end == p || lo < 0)
				break;
			p = end;
			if (*p == '-') {
				hi = strtol(p + 1, &end, 10);
				if (end == p + 1 || hi < lo)
					break;
				p = end;
			}
			for (long c = lo; c <= hi && n < max; c++)
				cpus[n++] = (int)c;
			if (*p == ',')
				p++;
		}
		if (n)
			return n;
	}
	conf = sysconf(_SC_NPROCESSORS_CONF);
	for (long c = 0; c < (conf > 0 ? conf : 1) && n < max; c++)
		cpus[n++] = (int)c;
	return n;
}

static void rings_close(struct sample_session *s)
{
	for (size_t i = 0; i < s->n_rings; i++) {
		struct ring *r = &s->rings[i];

		if (r->fd >= 0)
			ioctl(r->fd, PERF_EVENT_IOC_DISABLE, 0);
		if (r->base)
			munmap(r->base, r->map_bytes);
		if (r->fd >= 0)
			close(r->fd);
	}
	s->n_rings = 0;
}

/*
 * Open attr on pid for every CPU in cpus and map a ring of pages data pages
 * for each. All or nothing. Returns 0, or -errno with *mmap_failed telling
 * whether the events opened and a ring could not be mapped.
 */
static int rings_open(struct sample_session *s, struct perf_event_attr *attr, pid_t pid, const int *cpus,
		      size_t n_cpus, size_t pages, size_t page_size, bool *mmap_failed)
{
	*mmap_failed = false;
	/* Wake poll() when a quarter of a ring is full: time to drain before it overflows. */
	attr->watermark = 1;
	attr->wakeup_watermark = (uint32_t)(pages * page_size / 4);
	for (size_t i = 0; i < n_cpus; i++) {
		struct ring *r = &s->rings[s->n_rings];
		int err;

		*r = (struct ring){ .fd = perf_open(attr, pid, cpus[i], -1, PERF_FLAG_FD_CLOEXEC) };
		if (r->fd < 0) {
			err = -errno;
			rings_close(s);
			return err;
		}
		s->n_rings++;
		r->map_bytes = (pages + 1) * page_size;
		r->base = mmap(NULL, r->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		if (r->base == MAP_FAILED) {
			err = -errno;
			r->base = NULL;
			rings_close(s);
			*mmap_failed = true;
			return err;
		}
		r->meta = r->base;
		r->data = (unsigned char *)r->base + page_size;
		r->data_size = pages * page_size;
	}
	return 0;
}

static struct sample_session *session_new(size_t n_rings)
{
	struct sample_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->epoll_fd = -1;
	s->rings = calloc(n_rings ? n_rings : 1, sizeof(*s->rings));
	if (!s->rings) {
		free(s);
		return NULL;
	}
	return s;
}

/* Append text to info's note, "; " between. */
static void note_add(struct sample_info *info, const char *text)
{
	size_t len = strlen(info->note);

	snprintf(info->note + len, sizeof(info->note) - len, "%s%s", len ? "; " : "", text);
}

/*
 * rings_open(), stepping back where the machine allows less: user space
 * only when the kernel side is refused, smaller rings (*pages halved) when
 * they cannot all be locked. Returns 0 or the last -errno, *mmap_failed as
 * rings_open() left it.
 */
static int rings_open_fitting(struct sample_session *s, struct perf_event_attr *attr, pid_t pid, const int *cpus,
			      size_t n_cpus, size_t *pages, size_t page_size, bool *mmap_failed)
{
	for (;;) {
		int err = rings_open(s, attr, pid, cpus, n_cpus, *pages, page_size, mmap_failed);
		/*
		 * At perf_event_paranoid >= 2 an unprivileged user may only sample
		 * user space: retry without the kernel (and hypervisor) side, as
		 * perf record does, and say so.
		 */
		if (err && !*mmap_failed && perf_open_classify(-err, 0, NULL, 0) == PERF_OPEN_DENIED &&
		    !attr->exclude_kernel) {
			char note[96];

			attr->exclude_kernel = 1;
			attr->exclude_hv = 1;
			s->info.exclude_kernel = s->info.exclude_hv = true;
			snprintf(note, sizeof(note),
				 "user space only: sampling the kernel side was denied (perf_event_paranoid=%d)",
				 paranoid_level());
			note_add(&s->info, note);
			continue;
		}
		/*
		 * The events opened but the rings could not all be locked
		 * (perf_event_mlock_kb per CPU plus RLIMIT_MEMLOCK): again with
		 * smaller rings, so that the watermark fits the rings used.
		 */
		if ((err == -EPERM || err == -ENOMEM) && *mmap_failed && *pages > SAMPLE_MIN_RING_PAGES) {
			*pages /= 2;
			continue;
		}
		return err;
	}
}

/* One epoll set over the session's rings, for sample_poll_fd(). 0 or -errno. */
static int rings_poll_init(struct sample_session *s)
{
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epoll_fd < 0)
		return -errno;
	for (size_t i = 0; i < s->n_rings; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = i };

		if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->rings[i].fd, &ev) != 0)
			return -errno;
	}
	return 0;
}

int sample_open(struct sample_session **out, pid_t pid, const struct sample_options *opts, char *reason,
		size_t reason_size)
{
	static const struct sample_options defaults = { 0 };
	const size_t page_size = (size_t)sysconf(_SC_PAGESIZE);
	struct perf_event_attr attr;
	struct sample_session *s;
	bool mmap_failed;
	size_t pages, n_cpus;
	int *cpus, err;

	*out = NULL;
	if (reason_size)
		reason[0] = '\0';
	if (!opts)
		opts = &defaults;
	pages = opts->ring_pages ? opts->ring_pages : SAMPLE_DEFAULT_RING_PAGES;
	/* pid -1 would sample every process on the CPUs: not what this is for. */
	if ((pages & (pages - 1)) != 0 || opts->precise_ip > 3 || pid < 0) {
		snprintf(reason, reason_size, "sampling: %s",
			 pid < 0			 ? "no process given"
			 : (pages & (pages - 1)) != 0 ? "ring pages must be a power of two"
						      : "precise_ip must be 0..3");
		return -EINVAL;
	}
	cpus = calloc(SAMPLE_MAX_CPUS, sizeof(*cpus));
	n_cpus = cpus ? online_cpus(cpus, SAMPLE_MAX_CPUS) : 0;
	if (cpus && opts->per_task) {
		cpus[0] = -1;
		n_cpus = 1;
	}
	s = cpus ? session_new(n_cpus) : NULL;
	if (!s) {
		free(cpus);
		snprintf(reason, reason_size, "sampling: %s", strerror(ENOMEM));
		return -ENOMEM;
	}

	sample_attr_build(&attr, opts, &s->info);
	err = rings_open_fitting(s, &attr, pid, cpus, n_cpus, &pages, page_size, &mmap_failed);
	if (!err && !attr.use_clockid && !sample_clock_calibrate(s)) {
		/* No TSC conversion offered: CLOCK_MONOTONIC from the kernel, at the cost of large PEBS. */
		rings_close(s);
		attr.use_clockid = 1;
		attr.clockid = CLOCK_MONOTONIC;
		s->info.use_clockid = true;
		s->info.large_pebs = false;
		note_add(&s->info, "timestamps on CLOCK_MONOTONIC (no large PEBS): the kernel offers no TSC "
			 "conversion (cap_user_time_zero)");
		err = rings_open_fitting(s, &attr, pid, cpus, n_cpus, &pages, page_size, &mmap_failed);
	}
	free(cpus);
	if (!err) {
		err = rings_poll_init(s);
		if (err)
			snprintf(reason, reason_size, "sampling %s on pid %ld: epoll: %s", s->info.event, (long)pid,
				 strerror(-err));
	} else if (mmap_failed) {
		snprintf(reason, reason_size, "sampling %s on pid %ld: mapping a %zu KiB ring per CPU: %s",
			 s->info.event, (long)pid, (pages + 1) * page_size / 1024, strerror(-err));
	} else {
		/* Level 2 lets a user sample user space, all the retry without the kernel side needs. */
		char why[256];

		perf_open_classify(-err, 2, why, sizeof(why));
		snprintf(reason, reason_size, "sampling %s on pid %ld: %s", s->info.event, (long)pid, why);
	}
	if (err) {
		sample_close(s);
		return err;
	}
	s->info.rings = s->n_rings;
	s->info.ring_bytes = pages * page_size;
	*out = s;
	return 0;
}

struct sample_session *sample_session_over_rings(void *const *metas, unsigned char *const *datas, size_t n,
						 size_t data_size)
{
	struct sample_session *s = session_new(n);
	struct perf_event_attr attr;

	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		s->rings[i] = (struct ring){ .fd = -1, .meta = metas[i], .data = datas[i], .data_size = data_size };
	s->n_rings = n;
	/* Records as a page-fault session writes them (IP, TID, TIME, ADDR), unless a test sets info otherwise. */
	sample_attr_build(&attr, NULL, &s->info);
	s->info.rings = n;
	s->info.ring_bytes = data_size;
	snprintf(s->info.event, sizeof(s->info.event), "rings");
	return s;
}

int sample_poll_fd(const struct sample_session *s)
{
	return s->epoll_fd;
}

void sample_info_get(const struct sample_session *s, struct sample_info *out)
{
	*out = s->info;
}

int sample_set_period(struct sample_session *s, uint64_t period)
{
	int rc = 0;

	for (size_t i = 0; i < s->n_rings; i++)
		if (s->rings[i].fd >= 0 && ioctl(s->rings[i].fd, PERF_EVENT_IOC_PERIOD, &period) != 0 && !rc)
			rc = -errno;
	return rc;
}

void sample_close(struct sample_session *s)
{
	if (!s)
		return;
	rings_close(s);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	free(s->rings);
	free(s->arena);
	free(s->pend);
	free(s);
}

const char *sample_clock_fn_name(int fn)
{
	static const char *const names[SAMPLE_CLOCK_FNS] = { "clock_gettime", "gettimeofday", "time", "clock",
							     "times" };

	return fn >= 0 && fn < SAMPLE_CLOCK_FNS ? names[fn] : "?";
}

const char *sample_clock_id_name(int id)
{
	static const char *const names[SAMPLE_CLOCK_IDS] = {
		"CLOCK_REALTIME", "CLOCK_MONOTONIC", "CLOCK_PROCESS_CPUTIME_ID", "CLOCK_THREAD_CPUTIME_ID",
		"CLOCK_MONOTONIC_RAW", "CLOCK_REALTIME_COARSE", "CLOCK_MONOTONIC_COARSE", "CLOCK_BOOTTIME", "other",
	};

	return id >= 0 && id < SAMPLE_CLOCK_IDS ? names[id] : "none";
}
