/* SPDX-License-Identifier: MIT */
/*
 * The counting path on a simulated PMU that schedules as the kernel does
 * (pmu/simpmu.h): one run per model (argv[1]), since libpfm4 can be forced to
 * one PMU per process. The needed events form one group that counts without
 * multiplexing on every model, with and without the NMI watchdog; a PMU
 * crowded by another user leaves it "not counted", as perf says; opening
 * every event (the old default) multiplexes; and a read takes a whole group at
 * once (PERF_FORMAT_GROUP), one read() per group, as the kernel answers it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmu/backend.h"
#include "pmu/counter_set.h"
#include "pmu/counters.h"
#include "pmu/simpmu.h"
#include "check.h"

static uint64_t fake_ns;

static uint64_t fake_clock(void)
{
	return fake_ns;
}

/* Rates per ns for a chase on 4 KiB pages at ~1 access per 70 ns, 3 GHz. */
static double rate_for(enum metric m)
{
	switch (m) {
	case METRIC_CYCLES: return 3.0;
	case METRIC_INSTRUCTIONS: return 0.5;
	case METRIC_DTLB_LOADS: return 1.0 / 70;
	case METRIC_DTLB_LOAD_MISSES: case METRIC_WALK_COMPLETED: return 0.95 / 70;
	case METRIC_WALK_ACTIVE: return 0.6;
	case METRIC_STLB_HITS: return 0.03 / 70;
	case METRIC_LLC_LOAD_MISSES: return 0.1 / 70;
	default: return 0;
	}
}

/* Configure the model, give every hardware event of set its rate, open, count 100 ms and read. */
static void count(struct counter_set *set, const char *spec, struct counter_reading *r)
{
	char why[128];

	CHECK(simpmu_configure(spec, why, sizeof(why)) == 0, "configure %s: %s", spec, why);
	simpmu_set_clock(fake_clock);
	for (size_t i = 0; i < counter_set_size(set); i++) {
		const struct counter_info *ci = counter_set_info(set, i);
		if (ci->hardware && ci->encoded)
			simpmu_set_rate(simpmu_event_key(ci->type, ci->config), rate_for(ci->metric));
	}
	counter_set_open(set);
	counter_set_reset(set);
	counter_set_enable(set);
	fake_ns += 100000000;	/* 100 ms: 25 multiplexing intervals */
	counter_set_disable(set);
	counter_set_read(set, r);
}

/* Every needed hardware event counted all the time, and scaled equals the true count. */
static void check_clean(struct counter_set *set, const char *spec)
{
	struct counter_reading r[METRIC_COUNT];
	size_t hw = 0;

	count(set, spec, r);
	for (size_t i = 0; i < counter_set_size(set); i++) {
		const struct counter_info *ci = counter_set_info(set, i);
		struct counter_event *ev = &set->events[i];
		double truth = 0;
		if (!ci->hardware || !ci->encoded)
			continue;
		hw++;
		CHECK(ci->status == COUNTER_OK, "%s: %s is %s: %s", spec, ci->name, counter_status_name(ci->status), ci->reason);
		CHECK(r[i].running_ns == r[i].enabled_ns && r[i].enabled_ns == 100000000, "%s: %s ran %llu of %llu ns", spec,
		      ci->name, (unsigned long long)r[i].running_ns, (unsigned long long)r[i].enabled_ns);
		CHECK(simpmu_true_count(ev->fd, &truth) && fabs(r[i].scaled - truth) <= 1 + 1e-9 * truth,
		      "%s: %s scaled %.0f, true %.0f", spec, ci->name, r[i].scaled, truth);
	}
	CHECK(hw >= 3, "%s: the needed hardware events encode (%zu)", spec, hw);
	counter_set_close(set);
}

/* A backend that counts the read() calls reaching the model, and passes everything on to it. */
static const struct pmu_backend *model_backend;
static unsigned reads;

static ssize_t counting_read(int fd, void *buf, size_t len)
{
	reads++;
	return model_backend->read(fd, buf, len);
}

/*
 * The layout perf_read_group() writes, from the model directly: { nr,
 * enabled, running, { value, id }[nr] }, the leader first, from any member's
 * fd; without PERF_FORMAT_GROUP the one event's { value, enabled, running, id }.
 * Then through the counters: one read() per open group, and every value the
 * true count (check_clean's own checks).
 */
static void group_read(struct counter_set *set, const char *model)
{
	char why[128];
	const struct pmu_backend *b = simpmu_backend();

	CHECK(simpmu_configure(model, why, sizeof(why)) == 0, "configure %s: %s", model, why);
	simpmu_set_clock(fake_clock);
	simpmu_set_rate(simpmu_event_key(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES), 3.0);
	simpmu_set_rate(simpmu_event_key(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS), 0.5);
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_CPU_CYCLES,
				     .disabled = 1, .read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
				     PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING };
	int leader = b->open(&a, 0, -1, -1, 0);
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	a.disabled = 0;
	int member = b->open(&a, 0, -1, leader, 0);
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
	a.disabled = 1;
	int alone = b->open(&a, 0, -1, -1, 0);
	CHECK(leader >= 0 && member >= 0 && alone >= 0, "%s: open the group and a single event", model);
	uint64_t id_l = 0, id_m = 0, id_a = 0, v[8] = { 0 };
	CHECK(b->ioctl(leader, PERF_EVENT_IOC_ID, (unsigned long)&id_l) == 0 &&
	      b->ioctl(member, PERF_EVENT_IOC_ID, (unsigned long)&id_m) == 0 &&
	      b->ioctl(alone, PERF_EVENT_IOC_ID, (unsigned long)&id_a) == 0 && id_l != id_m && id_m != id_a,
	      "%s: distinct ids %llu %llu %llu", model, (unsigned long long)id_l, (unsigned long long)id_m,
	      (unsigned long long)id_a);
	b->ioctl(leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	b->ioctl(alone, PERF_EVENT_IOC_ENABLE, 0);
	fake_ns += 1000000;
	for (int k = 0; k < 2; k++) {
		ssize_t n = b->read(k ? member : leader, v, sizeof(v));
		CHECK(n == 7 * 8 && v[0] == 2 && v[1] == 1000000 && v[2] == 1000000 && v[3] == 3000000 && v[4] == id_l &&
		      v[5] == 500000 && v[6] == id_m, "%s: group read from the %s: %zd bytes, nr %llu, times %llu %llu, "
		      "values %llu (id %llu) %llu (id %llu)", model, k ? "member" : "leader", n, (unsigned long long)v[0],
		      (unsigned long long)v[1], (unsigned long long)v[2], (unsigned long long)v[3],
		      (unsigned long long)v[4], (unsigned long long)v[5], (unsigned long long)v[6]);
	}
	errno = 0;
	CHECK(b->read(leader, v, 6 * 8) < 0 && errno == ENOSPC, "%s: a buffer short of the group is refused", model);
	CHECK(b->read(alone, v, sizeof(v)) == 4 * 8 && v[0] == 500000 && v[1] == 1000000 && v[3] == id_a,
	      "%s: a single event's read: %llu, enabled %llu, id %llu", model, (unsigned long long)v[0],
	      (unsigned long long)v[1], (unsigned long long)v[3]);
	b->close(alone);
	b->close(member);
	b->close(leader);

	/* Through the counters: one read() per group leader, whatever the group's size. */
	struct pmu_backend counting = *b;
	counting.read = counting_read;
	model_backend = b;
	pmu_backend_set(&counting);
	struct counter_reading r[METRIC_COUNT];
	count(set, model, r);
	size_t leaders = 0, open = 0;
	for (size_t i = 0; i < counter_set_size(set); i++) {
		open += set->events[i].fd >= 0;
		leaders += set->events[i].fd >= 0 && set->events[i].leader;
	}
	reads = 0;
	CHECK(counter_set_read(set, r) == 0, "%s: read", model);
	CHECK(reads == leaders && leaders < open, "%s: %u read() calls for %zu groups of %zu open events", model, reads,
	      leaders, open);
	counter_set_close(set);
	pmu_backend_set(b);
}

int main(int argc, char **argv)
{
	const char *model = argc > 1 ? argv[1] : "skx-smt";
	const char *dir = getenv("TLBPROF_TEST_EVENTS_DIR");
	char why[256], spec[96];
	bool want[METRIC_COUNT];
	struct counter_set *set = NULL, *all = NULL;

	CHECK(simpmu_configure(model, why, sizeof(why)) == 0, "configure %s: %s", model, why);
	CHECK(counters_force_pmu(simpmu_pfm_pmu()) == 0, "force %s", simpmu_pfm_pmu());
	pmu_backend_set(simpmu_backend());
	counters_default_want(want);
	CHECK(counter_set_new(&set, dir, want, why, sizeof(why)) == 0, "counter set: %s", why);
	CHECK(counter_set_new(&all, dir, NULL, why, sizeof(why)) == 0, "full counter set: %s", why);
	if (!set || !all)
		return 1;

	/* The needed group, with the watchdog and without. */
	check_clean(set, model);
	snprintf(spec, sizeof(spec), "%s,watchdog", model);
	check_clean(set, spec);
	group_read(set, model);

	/*
	 * Crowded: the watchdog and another user's pinned events leave fewer
	 * generic counters than the group needs. It never runs: "not counted",
	 * never a zero, and the reason names a busy PMU.
	 */
	unsigned generic = strncmp(model, "skx-smt", 7) == 0 ? 4 : strncmp(model, "zen", 3) == 0 ? 6 : 4;
	snprintf(spec, sizeof(spec), "%s,watchdog,others=%u", model, generic - 1);
	struct counter_reading r[METRIC_COUNT];
	count(set, spec, r);
	for (size_t i = 0; i < counter_set_size(set); i++) {
		const struct counter_info *ci = counter_set_info(set, i);
		if (!ci->hardware || !ci->encoded)
			continue;
		CHECK(ci->status == COUNTER_ERROR && strstr(ci->reason, "not counted") && strstr(ci->reason, "PMU busy"),
		      "%s: %s is %s (%s), want not counted", spec, ci->name, counter_status_name(ci->status), ci->reason);
		CHECK(r[i].running_ns == 0 && r[i].scaled == 0, "%s: %s never ran", spec, ci->name);
	}
	counter_set_close(set);

	/* Every event opened (today's full set): the extra groups rotate with the needed one, which multiplexes. */
	snprintf(spec, sizeof(spec), "%s,watchdog", model);
	struct counter_reading ra[METRIC_COUNT];
	count(all, spec, ra);
	size_t multiplexed = 0;
	for (size_t i = 0; i < counter_set_size(all); i++) {
		const struct counter_info *ci = counter_set_info(all, i);
		double truth = 0;
		if (!ci->hardware || !ci->encoded)
			continue;
		multiplexed += ci->status == COUNTER_MULTIPLEXED;
		if (ci->status == COUNTER_MULTIPLEXED)
			CHECK(simpmu_true_count(all->events[i].fd, &truth) && fabs(ra[i].scaled - truth) <= 0.02 * truth + 1,
			      "%s: multiplexed %s scaled %.0f, true %.0f (within the rotation's 2 %%)", spec, ci->name,
			      ra[i].scaled, truth);
	}
	CHECK(multiplexed > 0, "%s: opening every event multiplexes (%zu multiplexed)", spec, multiplexed);
	counter_set_close(all);

	counter_set_delete(set);
	counter_set_delete(all);
	pmu_backend_set(NULL);
	return check_finish();
}
