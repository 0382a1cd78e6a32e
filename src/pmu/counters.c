/* SPDX-License-Identifier: MIT */
/* Counters, counting side: a resolved set's events opened as perf_event groups, enabled, read, scaled and closed. */

#include "pmu/counters.h"

#include "pmu/backend.h"
#include "pmu/counter_set.h"
#include "pmu/paranoid.h"
#include "pmu/perf_open.h"
#include "pmu/simpmu.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* ---- statuses and scaling ---------------------------------------------- */

const char *const counter_status_names[] = {
	[COUNTER_OK] = "ok",
	[COUNTER_UNSUPPORTED] = "unsupported",
	[COUNTER_DENIED] = "denied",
	[COUNTER_MULTIPLEXED] = "multiplexed",
	[COUNTER_ERROR] = "error",
	NULL,
};

const char *counter_status_name(enum counter_status s)
{
	if ((int)s < 0 || (size_t)s > COUNTER_ERROR)
		return "error";
	return counter_status_names[s];
}

/* The reason counter_set_read() gives a hardware event that never ran. */
static const char NOT_COUNTED[] = "not counted";

bool counter_not_counted(const struct counter_info *ci)
{
	return ci->hardware && ci->status == COUNTER_ERROR && strncmp(ci->reason, NOT_COUNTED, strlen(NOT_COUNTED)) == 0;
}

bool counter_counting(const struct counter_info *ci)
{
	return ci->status == COUNTER_OK || ci->status == COUNTER_MULTIPLEXED;
}

double counter_scale(uint64_t value, uint64_t enabled_ns, uint64_t running_ns, bool *multiplexed)
{
	if (multiplexed)
		*multiplexed = false;
	if (running_ns == 0)
		return 0.0;
	if (running_ns >= enabled_ns)
		return (double)value;
	if (multiplexed)
		*multiplexed = true;
	return (double)value * ((double)enabled_ns / (double)running_ns);
}

void counter_reading_add_delta(struct counter_reading *acc, const struct counter_reading *begin,
			       const struct counter_reading *end, bool hardware)
{
	acc->value += end->value - begin->value;
	acc->enabled_ns += end->enabled_ns - begin->enabled_ns;
	acc->running_ns += end->running_ns - begin->running_ns;
	acc->scaled = hardware ? counter_scale(acc->value, acc->enabled_ns, acc->running_ns, NULL) : (double)acc->value;
}

/* ---- perf_event_open ------------------------------------------------- */

/* Record why opening ev failed with errno err (positive). */
static void classify_open_error(const struct counter_set *set, struct counter_event *ev, int err)
{
	static const enum counter_status status_of[] = {
		[PERF_OPEN_UNSUPPORTED] = COUNTER_UNSUPPORTED,
		[PERF_OPEN_DENIED] = COUNTER_DENIED,
		[PERF_OPEN_ERROR] = COUNTER_ERROR,
	};
	struct counter_info *info = &ev->info;
	/* Level 1 lets a user count the kernel side: the command tlbprof env's Problems section gives too. */
	enum perf_open_class class = perf_open_classify(err, 1, info->reason, sizeof(info->reason));

	info->status = status_of[class];
	/*
	 * Without a core PMU every hardware event fails, with ENOENT or EINVAL,
	 * whatever libpfm4 thinks the CPU is: say that rather than blame the
	 * event. (EINVAL with a PMU present is the kernel rejecting the
	 * encoding: a map bug, an error.)
	 */
	if ((class == PERF_OPEN_UNSUPPORTED || err == EINVAL) && info->hardware &&
	    (strcmp(set->pmu_name, "none") == 0 || !pmu_backend()->has_core_pmu())) {
		const char *hv = counters_hypervisor();
		info->status = COUNTER_UNSUPPORTED;
		if (!hv)
			snprintf(info->reason, sizeof(info->reason), "no hardware PMU visible (hypervisor hides it?): %s",
				 strerror(err));
		else if (*hv)
			snprintf(info->reason, sizeof(info->reason), "no hardware PMU visible: the %s hypervisor hides "
				 "it: %s", hv, strerror(err));
		else
			snprintf(info->reason, sizeof(info->reason), "no hardware PMU visible on bare metal: no cpu event "
				 "source in sysfs (a kernel without hardware perf events, or the PMU disabled): %s",
				 strerror(err));
	}
}

/*
 * Software events the kernel records from kernel context (perf_sw_event_sched
 * takes the scheduler's own registers): with exclude_kernel they count 0.
 */
static bool sw_counts_only_in_kernel(uint64_t config)
{
	return config == PERF_COUNT_SW_CONTEXT_SWITCHES || config == PERF_COUNT_SW_CPU_MIGRATIONS;
}

/*
 * What every event reads: PERF_FORMAT_GROUP, so one read() of a leader returns
 * its whole group, { nr, time_enabled, time_running, { value, id }[nr] };
 * the ids (PERF_EVENT_IOC_ID) say which row is which event, whatever order the
 * kernel keeps the siblings in. Linux sums an inherited group's children in
 * that read too (perf_read_group walks each sibling's child_list).
 */
#define READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED | \
		     PERF_FORMAT_TOTAL_TIME_RUNNING)

/* Open ev into group_fd (-1: as a new leader) on the set's target. Returns the fd or -errno. */
static int open_event(const struct counter_set *set, struct counter_event *ev, int group_fd, bool exclude_kernel)
{
	struct perf_event_attr attr = ev->attr;
	/*
	 * Only a leader starts disabled (as in libperf): an enabled member of a
	 * disabled leader does not count, and the kernel then schedules the
	 * group as a unit, so member and leader times match. Members opened
	 * disabled and enabled through PERF_IOC_FLAG_GROUP were seen (Linux
	 * 6.18, software events) to report less running than enabled time,
	 * which would read as multiplexing.
	 */
	attr.disabled = group_fd == -1;
	attr.read_format = READ_FORMAT;
	if (exclude_kernel)
		attr.exclude_kernel = 1;
	/*
	 * inherit: tasks the target creates after the open count into the same
	 * events; a read() of the event sums them (alive or exited), and
	 * ENABLE/DISABLE ioctls reach them too.
	 */
	attr.inherit = set->inherit;
	/* Each inherited task reports its own counts as it exits (counters_threads.c). */
	attr.inherit_stat = set->inherit && set->track_threads;
	attr.enable_on_exec = set->enable_on_exec && group_fd == -1;
	int fd = pmu_backend()->open(&attr, set->pid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	return fd;
}

/* ev is open as fd in the group events[group] leads: learn its id for the group reads. Returns 0 or -errno. */
static int joined(struct counter_set *set, struct counter_event *ev, int fd, size_t group)
{
	uint64_t id = 0;

	if (pmu_backend()->ioctl(fd, PERF_EVENT_IOC_ID, (unsigned long)&id) < 0) {
		int err = errno;
		pmu_backend()->close(fd);
		return -err;
	}
	ev->fd = fd;
	ev->id = id;
	ev->group = group;
	ev->leader = group == (size_t)(ev - set->events);
	return 0;
}

/*
 * Open ev, preferably into the group events[*leader] leads (-1: ev leads a
 * new one). A member that cannot join (the group does not fit the PMU, or the
 * event needs its own constraints) is retried as a group of its own.
 * Unprivileged users at perf_event_paranoid >= 2 may not count kernel side;
 * software events whose user-side count is still meaningful fall back to
 * exclude_kernel, as perf stat does, and say so in the reason.
 * Returns true when ev is open.
 */
static bool open_in_group(struct counter_set *set, struct counter_event *ev, long *leader)
{
	size_t self = (size_t)(ev - set->events);
	int leader_fd = *leader >= 0 ? set->events[*leader].fd : -1;
	bool user_only = false;
	int fd = open_event(set, ev, leader_fd, false);
	if (fd < 0 && leader_fd != -1) {
		int alone = open_event(set, ev, -1, false);
		if (alone >= 0) {
			int err = joined(set, ev, alone, self);
			if (err)
				classify_open_error(set, ev, -err);
			return err == 0;
		}
	}
	if (fd < 0 && perf_open_classify(-fd, 0, NULL, 0) == PERF_OPEN_DENIED && !ev->info.hardware &&
	    !ev->attr.exclude_kernel && !sw_counts_only_in_kernel(ev->attr.config)) {
		int retry = open_event(set, ev, leader_fd, true);
		if (retry >= 0) {
			fd = retry;
			user_only = true;
		}
	}
	if (fd >= 0) {
		int err = joined(set, ev, fd, leader_fd == -1 ? self : (size_t)*leader);
		if (err)
			fd = err;
	}
	if (fd < 0) {
		classify_open_error(set, ev, -fd);
		return false;
	}
	if (ev->leader)
		*leader = (long)self;
	if (user_only) {
		char paranoid[16];
		paranoid_level_text(paranoid_level(), paranoid, sizeof(paranoid));
		snprintf(ev->info.reason, sizeof(ev->info.reason),
			 "user space only: counting kernel side denied (perf_event_paranoid=%s)",
			 paranoid);
	}
	return true;
}

bool metric_needed(enum metric m)
{
	switch (m) {
	case METRIC_CYCLES:
	case METRIC_DTLB_LOAD_MISSES:
	case METRIC_WALK_ACTIVE:
	case METRIC_LLC_LOAD_MISSES:
	case METRIC_PAGE_FAULTS:
	case METRIC_MINOR_FAULTS:
	case METRIC_MAJOR_FAULTS:
	case METRIC_TASK_CLOCK:
	case METRIC_CONTEXT_SWITCHES:
	case METRIC_CPU_MIGRATIONS:
		return true;
	default:
		return false;
	}
}

void counters_default_want(bool want[METRIC_COUNT])
{
	for (int m = 0; m < METRIC_COUNT; m++)
		want[m] = metric_needed((enum metric)m);
}

int counter_set_open(struct counter_set *set)
{
	return counter_set_open_task(set, 0, false, false);
}

int counter_set_open_task(struct counter_set *set, pid_t pid, bool inherit, bool enable_on_exec)
{
	if (!set)
		return 0;
	counter_set_close(set);
	set->pid = pid;
	set->inherit = inherit;
	set->enable_on_exec = enable_on_exec;

	long sw_leader = -1, hw_leader = -1, user_leader = -1;
	int opened = 0;

	/*
	 * Two passes: the needed hardware events as one group (all or nothing on
	 * the PMU, so they count over the same time and never multiplex among
	 * themselves; it fits every PMU in scope, watchdog included, see
	 * ARCHITECTURE.md), then anything else asked for: the user's events (-e)
	 * as one group of their own, any other metric alone. Software events
	 * never compete for counters: one group.
	 */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < set->n; i++) {
			struct counter_event *ev = &set->events[i];
			bool needed = !ev->info.hardware || metric_needed(ev->info.metric);
			if (!ev->encoded || needed != (pass == 0))
				continue;
			ev->info.status = COUNTER_OK;
			ev->info.reason[0] = '\0';
			ev->base_enabled_ns = ev->base_running_ns = 0;

			long alone = -1;
			long *leader = !ev->info.hardware ? &sw_leader
				    : pass == 0 ? &hw_leader
				    : ev->info.metric == METRIC_USER ? &user_leader : &alone;
			bool ok = open_in_group(set, ev, leader);
			opened += ok;
			ev->open_status = ev->info.status;
			memcpy(ev->open_reason, ev->info.reason, sizeof(ev->open_reason));
		}
	counter_threads_open(set);
	return opened;
}

/* ioctl every group leader; PERF_IOC_FLAG_GROUP applies it to the members too. */
static int ioctl_leaders(struct counter_set *set, unsigned long request)
{
	int ret = 0;
	for (size_t i = 0; i < set->n; i++) {
		struct counter_event *ev = &set->events[i];
		if (ev->fd < 0 || !ev->leader)
			continue;
		if (pmu_backend()->ioctl(ev->fd, request, PERF_IOC_FLAG_GROUP) < 0 && ret == 0)
			ret = -errno;
	}
	return ret;
}

/* The most events one group read takes: more than any group the sets open (the software group has 7). */
#define GROUP_READ_MAX 32

/*
 * One group read's answer, buf[0..words), of the group events[g] leads:
 * v gets { value, time_enabled, time_running } for each of its open events,
 * indexed as events[]. Returns the words it took, or -EIO (short, or lacking
 * one of the group's ids).
 */
static long decode_group(const struct counter_set *set, size_t g, const uint64_t *buf, size_t words,
			 uint64_t (*v)[3])
{
	if (words < 3 || buf[0] > GROUP_READ_MAX || words < 3 + 2 * buf[0])
		return -EIO;
	for (size_t i = g; i < set->n; i++) {
		const struct counter_event *ev = &set->events[i];
		if (ev->fd < 0 || ev->group != g)
			continue;
		size_t row = 0;
		while (row < buf[0] && buf[3 + 2 * row + 1] != ev->id)
			row++;
		if (row == buf[0])
			return -EIO;
		v[i][0] = buf[3 + 2 * row];
		v[i][1] = buf[1];
		v[i][2] = buf[2];
	}
	return (long)(3 + 2 * buf[0]);
}

/*
 * Every open event's { value, time_enabled, time_running } into v (n rows)
 * and ok[i] says whose: one read() per group, or (given) from the groups'
 * answers as someone else read them, one after another in leader order;
 * given answers that do not decode, or words left over, are -EIO.
 */
static int read_all(const struct counter_set *set, uint64_t (*v)[3], bool *ok, const uint64_t *given,
		    size_t given_words)
{
	int ret = 0;

	memset(v, 0, set->n * sizeof(*v));
	for (size_t i = 0; i < set->n; i++)
		ok[i] = false;
	for (size_t g = 0; g < set->n; g++) {
		if (set->events[g].fd < 0 || !set->events[g].leader)
			continue;
		uint64_t own[3 + 2 * GROUP_READ_MAX];
		const uint64_t *buf = given;
		size_t words = given_words;
		if (!given) {
			ssize_t n = pmu_backend()->read(set->events[g].fd, own, sizeof(own));
			buf = own;
			words = n < 0 ? 0 : (size_t)n / sizeof(uint64_t);
			if (n < 0 && ret == 0)
				ret = -errno;
		}
		long took = words ? decode_group(set, g, buf, words, v) : -EIO;
		if (took < 0) {
			if (ret == 0)
				ret = (int)took;
			continue;
		}
		if (given) {
			given += took;
			given_words -= (size_t)took;
		}
		for (size_t i = g; i < set->n; i++)
			if (set->events[i].fd >= 0 && set->events[i].group == g)
				ok[i] = true;
	}
	if (given && given_words && ret == 0)
		ret = -EIO;
	return ret;
}

size_t counter_set_leaders(const struct counter_set *set, int *fd, uint64_t *id, size_t max)
{
	size_t n = 0;

	/* Another backend's fds (the simulated PMU's) are not the kernel's: nobody else can read them. */
	if (!set || pmu_backend() != &pmu_backend_kernel)
		return 0;
	for (size_t g = 0; g < set->n && n < max; g++) {
		if (set->events[g].fd < 0 || !set->events[g].leader)
			continue;
		fd[n] = set->events[g].fd;
		id[n++] = set->events[g].id;
	}
	return n;
}

int counter_set_reset(struct counter_set *set)
{
	if (!set)
		return -EINVAL;
	int ret = ioctl_leaders(set, PERF_EVENT_IOC_RESET);
	/*
	 * PERF_EVENT_IOC_RESET zeroes the count but not time_enabled and
	 * time_running, which keep growing over the event's life. Remember them
	 * so that every read reports the times since this reset and a phase is
	 * scaled by its own multiplexing ratio, not by the whole run's.
	 */
	uint64_t v[set->n ? set->n : 1][3];
	bool ok[set->n ? set->n : 1];
	int err = read_all(set, v, ok, NULL, 0);
	if (err && ret == 0)
		ret = err;
	for (size_t i = 0; i < set->n; i++) {
		if (!ok[i])
			continue;
		set->events[i].base_enabled_ns = v[i][1];
		set->events[i].base_running_ns = v[i][2];
	}
	return ret;
}

int counter_set_enable(struct counter_set *set)
{
	if (!set)
		return -EINVAL;
	return ioctl_leaders(set, PERF_EVENT_IOC_ENABLE);
}

int counter_set_disable(struct counter_set *set)
{
	if (!set)
		return -EINVAL;
	return ioctl_leaders(set, PERF_EVENT_IOC_DISABLE);
}

double counter_event_scale(const struct counter_event *ev, uint64_t value, uint64_t enabled_ns, uint64_t running_ns,
			   bool *multiplexed)
{
	/*
	 * The software PMU never runs out of counters, so it never multiplexes.
	 * Its times can still differ slightly: task-clock reports a few
	 * microseconds less running than enabled time per enable/disable cycle.
	 * That skew is not a reason to scale.
	 */
	if (ev->attr.type == PERF_TYPE_SOFTWARE) {
		if (multiplexed)
			*multiplexed = false;
		return (double)value;
	}
	return counter_scale(value, enabled_ns, running_ns, multiplexed);
}

/* Turn what read_all() found into readings and statuses; given answers that do not decode leave out untouched. */
static int readings(struct counter_set *set, struct counter_reading *out, const uint64_t *given, size_t words)
{
	uint64_t v[set->n ? set->n : 1][3];
	bool ok[set->n ? set->n : 1];
	int ret = read_all(set, v, ok, given, words);
	if (given && ret)
		return -EINVAL;
	for (size_t i = 0; i < set->n; i++) {
		struct counter_event *ev = &set->events[i];
		struct counter_reading *r = &out[i];
		memset(r, 0, sizeof(*r));
		if (!ok[i])
			continue;
		r->value = v[i][0];
		r->enabled_ns = v[i][1] - ev->base_enabled_ns;
		r->running_ns = v[i][2] - ev->base_running_ns;

		bool multiplexed;
		r->scaled = counter_event_scale(ev, r->value, r->enabled_ns, r->running_ns, &multiplexed);
		struct counter_info *info = &ev->info;
		info->status = ev->open_status;
		memcpy(info->reason, ev->open_reason, sizeof(info->reason));
		if (multiplexed) {
			info->status = COUNTER_MULTIPLEXED;
			snprintf(info->reason, sizeof(info->reason),
				 "counted %.1f%% of the enabled time; value scaled by enabled/running",
				 100.0 * (double)r->running_ns / (double)r->enabled_ns);
		} else if (ev->attr.type != PERF_TYPE_SOFTWARE && r->enabled_ns > 0 && r->running_ns == 0) {
			/*
			 * perf stat's "<not counted>": a hardware event that never got a
			 * counter. Not a zero. (A software event always runs; a user-only
			 * one may just have seen no user time, e.g. task-clock over a
			 * touch that spent it all in the kernel's fault handler.)
			 */
			info->status = COUNTER_ERROR;
			snprintf(info->reason, sizeof(info->reason),
				 "%s: enabled %llu ns but never on a counter"
				 " (PMU busy: NMI watchdog or another perf user?)",
				 NOT_COUNTED, (unsigned long long)r->enabled_ns);
		}
	}
	return ret;
}

int counter_set_read(struct counter_set *set, struct counter_reading *out)
{
	if (!set || !out)
		return -EINVAL;
	return readings(set, out, NULL, 0);
}

int counter_set_read_given(struct counter_set *set, const uint64_t *given, size_t words, struct counter_reading *out)
{
	if (!set || !out || !given)
		return -EINVAL;
	return readings(set, out, given, words);
}

void counter_set_close(struct counter_set *set)
{
	if (!set)
		return;
	counter_threads_close(set);
	/*
	 * Close members before their leaders: closing a leader first would turn
	 * its members into singleton events for a moment. Callers read before
	 * closing, since a closed event's count is gone.
	 */
	for (size_t i = set->n; i-- > 0;) {
		struct counter_event *ev = &set->events[i];
		if (ev->fd >= 0 && !ev->leader) {
			pmu_backend()->close(ev->fd);
			ev->fd = -1;
		}
	}
	for (size_t i = set->n; i-- > 0;) {
		struct counter_event *ev = &set->events[i];
		if (ev->fd >= 0) {
			pmu_backend()->close(ev->fd);
			ev->fd = -1;
		}
		ev->leader = false;
	}
}

void counter_set_hint_phase(const struct counter_set *set, const struct counter_phase_hint *h)
{
	if (set && pmu_backend()->hint_phase)
		pmu_backend()->hint_phase(h);
}

void counter_set_hint_accesses(const struct counter_set *set, uint64_t accesses)
{
	if (set && pmu_backend()->hint_accesses)
		pmu_backend()->hint_accesses(accesses);
}

int counters_simulate(const char *spec, char *why, size_t why_len)
{
	int rc = simpmu_configure(spec, why, why_len);

	if (rc)
		return rc;
	rc = counters_force_pmu(simpmu_pfm_pmu());
	if (rc) {
		snprintf(why, why_len, "cannot force libpfm4 to %s: %s", simpmu_pfm_pmu(), strerror(-rc));
		return rc;
	}
	pmu_backend_set(simpmu_backend());
	return 0;
}
