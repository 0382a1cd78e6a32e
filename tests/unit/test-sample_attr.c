/* SPDX-License-Identifier: MIT */
/* Unit tests for the sampler's pure side: attributes per event, the period policy, TLB levels, IBS op from sysfs. */
#include "check.h"
#include "pmu/sample.h"
#include "pmu/sample_session.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define TLB(bits) ((uint64_t)(bits) << PERF_MEM_TLB_SHIFT)

/* Skylake's MEM_INST_RETIRED.STLB_MISS_LOADS as libpfm4 encodes it with PFM_PLM3 (user space only). */
static struct sample_options pebs_options(void)
{
	return (struct sample_options){
		.custom_event = true, .type = PERF_TYPE_RAW, .config = 0x5111d0, .precise_ip = 2,
		.exclude_kernel = true, .exclude_hv = true, .name = "skl::MEM_INST_RETIRED:STLB_MISS_LOADS:precise=2",
		.enable_on_exec = true,
	};
}

/* A PEBS event: no use_clockid (large PEBS), user space only as encoded, DATA_SRC, a fixed prime period. */
static void test_attr_pebs(void)
{
	struct sample_options o = pebs_options();
	struct sample_info info = { 0 };
	struct perf_event_attr attr;

	sample_attr_build(&attr, &o, &info);
	CHECK(!attr.use_clockid && !attr.freq, "PEBS: use_clockid %u freq %u", attr.use_clockid, attr.freq);
	CHECK(attr.exclude_kernel && attr.exclude_hv, "PEBS: the encoding's user-only flag is kept");
	CHECK(attr.sample_type & PERF_SAMPLE_DATA_SRC, "PEBS: DATA_SRC asked for (%#llx)",
	      (unsigned long long)attr.sample_type);
	CHECK((attr.sample_type & (PERF_SAMPLE_IP | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR)) ==
		      (PERF_SAMPLE_IP | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR), "PEBS: IP, TIME, ADDR");
	CHECK(attr.precise_ip == 2 && attr.type == PERF_TYPE_RAW && attr.config == 0x5111d0, "PEBS: the event");
	CHECK(attr.sample_period == sample_period_initial(SAMPLE_SOURCE_HARDWARE), "PEBS: period %llu",
	      (unsigned long long)attr.sample_period);
	CHECK(info.source == SAMPLE_SOURCE_HARDWARE && info.large_pebs && !info.use_clockid && info.exclude_kernel &&
	      info.data_source && info.period_initial == attr.sample_period && info.period_raises == 0,
	      "PEBS: info says so (large_pebs %d use_clockid %d)", info.large_pebs, info.use_clockid);
	CHECK(strstr(info.note, "user space only") != NULL, "PEBS: note '%s'", info.note);

	/* The same event encoded for user and kernel (PFM_PLM0|3) samples both. */
	o.exclude_kernel = o.exclude_hv = false;
	sample_attr_build(&attr, &o, &info);
	CHECK(!attr.exclude_kernel && !info.exclude_kernel && !*info.note, "PEBS with kernel side: %s", info.note);

	/* A given period wins over the policy. */
	o.period = 1009;
	sample_attr_build(&attr, &o, &info);
	CHECK(attr.sample_period == 1009 && info.period == 1009, "given period");
}

/* Page faults keep CLOCK_MONOTONIC from the kernel and every fault, and ask for no data source. */
static void test_attr_page_faults(void)
{
	struct sample_info info = { 0 };
	struct perf_event_attr attr;

	sample_attr_build(&attr, NULL, &info);
	CHECK(attr.type == PERF_TYPE_SOFTWARE && attr.config == PERF_COUNT_SW_PAGE_FAULTS, "page faults");
	CHECK(attr.use_clockid && attr.clockid == CLOCK_MONOTONIC && attr.sample_period == 1, "clock and period");
	CHECK(!(attr.sample_type & PERF_SAMPLE_DATA_SRC) && !info.data_source && !info.large_pebs, "no DATA_SRC");
	CHECK(!attr.exclude_kernel && info.source == SAMPLE_SOURCE_SOFTWARE, "kernel side too, software");
	CHECK(sample_period_raise(SAMPLE_SOURCE_SOFTWARE, 1) == 1, "page faults are never raised");
}

/* The period policy: a prime near the target rate, doubled to the next prime; IBS in multiples of 16. */
static void test_period_policy(void)
{
	uint64_t p = sample_period_initial(SAMPLE_SOURCE_HARDWARE), q;

	CHECK(p >= SAMPLE_PRECISE_MAX_HZ / SAMPLE_TARGET_HZ && p < SAMPLE_PRECISE_MAX_HZ / SAMPLE_TARGET_HZ + 20,
	      "initial period %llu gives about %d samples/s at %llu events/s", (unsigned long long)p, SAMPLE_TARGET_HZ,
	      SAMPLE_PRECISE_MAX_HZ);
	CHECK(p == 5003, "initial PEBS period %llu", (unsigned long long)p);
	q = sample_period_raise(SAMPLE_SOURCE_HARDWARE, p);
	CHECK(q == 10007, "raised %llu -> %llu (the prime at or above twice)", (unsigned long long)p,
	      (unsigned long long)q);
	CHECK(sample_period_raise(SAMPLE_SOURCE_HARDWARE, SAMPLE_MAX_PERIOD) == SAMPLE_MAX_PERIOD, "capped");
	p = sample_period_initial(SAMPLE_SOURCE_IBS_OP);
	CHECK(p == 0xffff0 && p % 16 == 0, "initial IBS period %#llx", (unsigned long long)p);
	q = sample_period_raise(SAMPLE_SOURCE_IBS_OP, p);
	CHECK(q == 0x1fffe0 && q % 16 == 0, "raised IBS %#llx", (unsigned long long)q);
}

/* ---- drains that see throttling -------------------------------------------- */

struct fake_ring {
	struct perf_event_mmap_page meta;
	unsigned char data[512];
};

static void put_throttle(struct fake_ring *r, uint64_t time)
{
	/* PERF_RECORD_THROTTLE: {time, id, stream_id} and the sample_id trailer {pid, tid, time}. */
	unsigned char rec[8 + 24 + 16] = { 0 };
	struct perf_event_header h = { .type = PERF_RECORD_THROTTLE, .size = sizeof(rec) };

	memcpy(rec, &h, sizeof(h));
	memcpy(rec + 8, &time, 8);
	memcpy(rec + sizeof(rec) - 8, &time, 8);
	memcpy(r->data + r->meta.data_head, rec, sizeof(rec));
	r->meta.data_head += sizeof(rec);
}

/* A sample {ip, pid, tid, time, addr, data_src}. */
static void put_sample(struct fake_ring *r, uint64_t time, uint64_t addr, uint64_t data_src)
{
	unsigned char rec[8 + 40] = { 0 };
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = sizeof(rec) };
	uint64_t ip = 0x401000;
	uint32_t pid = 42;

	memcpy(rec, &h, sizeof(h));
	memcpy(rec + 8, &ip, 8);
	memcpy(rec + 16, &pid, 4);
	memcpy(rec + 20, &pid, 4);
	memcpy(rec + 24, &time, 8);
	memcpy(rec + 32, &addr, 8);
	memcpy(rec + 40, &data_src, 8);
	memcpy(r->data + r->meta.data_head, rec, sizeof(rec));
	r->meta.data_head += sizeof(rec);
}

struct seen {
	uint64_t data_src[4];
	size_t n;
};

static int seen_sample(void *ctx, const struct sample_record *r)
{
	struct seen *s = ctx;

	if (s->n < ARRAY_SIZE(s->data_src))
		s->data_src[s->n++] = r->data_src;
	return 0;
}

/* A session over one fake ring that samples as opts says. */
static struct sample_session *over(struct fake_ring *r, const struct sample_options *opts)
{
	void *metas[1] = { &r->meta };
	unsigned char *datas[1] = { r->data };
	struct sample_session *s = sample_session_over_rings(metas, datas, 1, sizeof(r->data));
	struct perf_event_attr attr;

	if (s)
		sample_attr_build(&attr, opts, &s->info);
	return s;
}

/* THROTTLE records raise the period once per drain that sees them, and the info says so. */
static void test_drain_throttle(void)
{
	static struct fake_ring ring;
	struct sample_options o = pebs_options();
	struct sample_session *s = over(&ring, &o);
	struct sample_info info;

	CHECK(s != NULL, "session");
	if (!s)
		return;
	CHECK(sample_drain(s, NULL, true) == 0, "empty drain");
	sample_info_get(s, &info);
	CHECK(info.period == 5003 && info.period_raises == 0, "no throttling, no raise");
	put_throttle(&ring, 100);
	put_throttle(&ring, 200);
	CHECK(sample_drain(s, NULL, true) == 0, "drain");
	sample_info_get(s, &info);
	CHECK(info.throttled == 2 && info.period == 10007 && info.period_raises == 1 && info.period_initial == 5003,
	      "throttled %llu: period %llu after %u raises", (unsigned long long)info.throttled,
	      (unsigned long long)info.period, info.period_raises);
	CHECK(sample_drain(s, NULL, true) == 0, "drain");
	sample_info_get(s, &info);
	CHECK(info.period == 10007 && info.period_raises == 1, "no new throttling, no new raise");
	put_throttle(&ring, 300);
	sample_drain(s, NULL, true);
	sample_info_get(s, &info);
	CHECK(info.period == 20021 && info.period_raises == 2, "raised again: %llu", (unsigned long long)info.period);
	sample_close(s);
}

/* The data source is decoded from the record; IBS keeps only the ops that missed the L1 dTLB. */
static void test_drain_data_src(void)
{
	static struct fake_ring pebs_ring, ibs_ring;
	struct sample_options o = pebs_options();
	struct sample_session *s = over(&pebs_ring, &o);
	struct seen seen = { 0 };
	struct sample_sink sink = { .sample = seen_sample, .ctx = &seen };
	struct sample_info info;

	CHECK(s != NULL, "session");
	if (!s)
		return;
	put_sample(&pebs_ring, 10, 0x7f0000001000, TLB(PERF_MEM_TLB_MISS | PERF_MEM_TLB_L2));
	sample_drain(s, &sink, true);
	CHECK(seen.n == 1 && seen.data_src[0] == TLB(PERF_MEM_TLB_MISS | PERF_MEM_TLB_L2), "PEBS data_src %#llx",
	      (unsigned long long)seen.data_src[0]);
	sample_close(s);

	o = (struct sample_options){ .custom_event = true, .ibs_op = true, .type = 11, .config = 1ull << 19 };
	s = over(&ibs_ring, &o);
	seen.n = 0;
	if (!s)
		return;
	put_sample(&ibs_ring, 10, 0x1000, TLB(PERF_MEM_TLB_L1 | PERF_MEM_TLB_HIT));
	put_sample(&ibs_ring, 11, 0x2000, TLB(PERF_MEM_TLB_L2 | PERF_MEM_TLB_HIT));
	put_sample(&ibs_ring, 12, 0, TLB(PERF_MEM_TLB_NA));
	put_sample(&ibs_ring, 13, 0x3000, TLB(PERF_MEM_TLB_L2 | PERF_MEM_TLB_MISS));
	sample_drain(s, &sink, true);
	sample_info_get(s, &info);
	CHECK(seen.n == 2 && info.samples == 2 && info.not_missed == 2, "IBS kept %zu, dropped %llu", seen.n,
	      (unsigned long long)info.not_missed);
	CHECK(seen.n == 2 && sample_tlb_level(seen.data_src[0]) == SAMPLE_TLB_L2_HIT &&
	      sample_tlb_level(seen.data_src[1]) == SAMPLE_TLB_WALK, "IBS kept the L2 hit and the walk");
	sample_close(s);
}

/* ---- TLB levels: known mem_dtlb patterns of linux/perf_event.h ------------- */

static void test_tlb_levels(void)
{
	static const struct {
		int line;
		uint64_t data_src;
		enum sample_tlb_level level;
	} rows[] = {
		{ __LINE__, 0, SAMPLE_TLB_NA },
		{ __LINE__, TLB(PERF_MEM_TLB_NA), SAMPLE_TLB_NA },
		/* PERF_MEM_NA: every field not available, as the kernel fills a software event's data source. */
		{ __LINE__, PERF_MEM_S(OP, NA) | PERF_MEM_S(LVL, NA) | PERF_MEM_S(SNOOP, NA) | PERF_MEM_S(LOCK, NA) |
			    PERF_MEM_S(TLB, NA), SAMPLE_TLB_NA },
		/* AMD IBS (perf_ibs_get_tlb_lvl): L1 hit, L2 hit, L2 miss. */
		{ __LINE__, PERF_MEM_S(TLB, L1) | PERF_MEM_S(TLB, HIT), SAMPLE_TLB_L1_HIT },
		{ __LINE__, PERF_MEM_S(TLB, L2) | PERF_MEM_S(TLB, HIT), SAMPLE_TLB_L2_HIT },
		{ __LINE__, PERF_MEM_S(TLB, L2) | PERF_MEM_S(TLB, MISS), SAMPLE_TLB_WALK },
		/* Intel PEBS load latency (pebs_set_tlb_lock): STLB hit in either level, or STLB miss. */
		{ __LINE__, PERF_MEM_S(TLB, HIT) | PERF_MEM_S(TLB, L1) | PERF_MEM_S(TLB, L2), SAMPLE_TLB_L1_OR_L2_HIT },
		{ __LINE__, PERF_MEM_S(TLB, MISS) | PERF_MEM_S(TLB, L2) | PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, L3),
		  SAMPLE_TLB_WALK },
		{ __LINE__, PERF_MEM_S(TLB, WK) | PERF_MEM_S(TLB, HIT), SAMPLE_TLB_WALK },
		{ __LINE__, PERF_MEM_S(TLB, OS), SAMPLE_TLB_OS_FAULT },
		{ __LINE__, PERF_MEM_S(TLB, OS) | PERF_MEM_S(TLB, MISS), SAMPLE_TLB_OS_FAULT },
		{ __LINE__, PERF_MEM_S(TLB, HIT), SAMPLE_TLB_NA },
		/* Other fields alone say nothing about the TLB. */
		{ __LINE__, PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT) | PERF_MEM_S(LVL, L1), SAMPLE_TLB_NA },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		enum sample_tlb_level l = sample_tlb_level(rows[i].data_src);

		CHECK(l == rows[i].level, "line %d: %#llx is %s, not %s", rows[i].line,
		      (unsigned long long)rows[i].data_src, sample_tlb_level_name(l),
		      sample_tlb_level_name(rows[i].level));
	}
	CHECK(strcmp(sample_tlb_level_name(SAMPLE_TLB_WALK), "walk") == 0 &&
	      sample_tlb_level_name(SAMPLE_TLB_LEVELS) == NULL, "names");
	CHECK(!sample_ibs_op_is_miss(PERF_MEM_S(TLB, L1) | PERF_MEM_S(TLB, HIT)) &&
	      sample_ibs_op_is_miss(PERF_MEM_S(TLB, L2) | PERF_MEM_S(TLB, HIT)) &&
	      !sample_ibs_op_is_miss(PERF_MEM_S(TLB, NA)), "IBS misses");
}

/* The summary counts samples per level and walks per group. */
static void test_summary_levels(void)
{
	struct sample_record r[3] = {
		{ .pid = 1, .ip = 0x10, .addr = 0x1000, .data_src = PERF_MEM_S(TLB, MISS) | PERF_MEM_S(TLB, L2) },
		{ .pid = 1, .ip = 0x10, .addr = 0x2000, .data_src = PERF_MEM_S(TLB, MISS) | PERF_MEM_S(TLB, L2) },
		{ .pid = 1, .ip = 0x20, .addr = 0x3000,
		  .data_src = PERF_MEM_S(TLB, HIT) | PERF_MEM_S(TLB, L1) | PERF_MEM_S(TLB, L2) },
	};
	struct sample_summary sum;

	CHECK(sample_summarize(r, 3, 0, NULL, 5, &sum) == 0, "summarize");
	CHECK(sum.tlb_levels[SAMPLE_TLB_WALK] == 2 && sum.tlb_levels[SAMPLE_TLB_L1_OR_L2_HIT] == 1, "levels");
	CHECK(sum.n_regions == 1 && sum.regions[0].count == 3 && sum.regions[0].walks == 2, "region walks %llu",
	      sum.n_regions ? (unsigned long long)sum.regions[0].walks : 0ull);
	sample_summary_free(&sum);
}

/* The perf clock from a TSC, as perf_event.h's formula gives it. */
static void test_tsc_conversion(void)
{
	/* 3 GHz: mult/2^shift = 1/3 ns per tick, shift 10, mult 341.33 -> 341 (the kernel rounds the same way). */
	CHECK(sample_perf_time_from_tsc(0, 1000, 341, 10) == 1000, "time_zero");
	CHECK(sample_perf_time_from_tsc(3000000000ull, 0, 341, 10) == (3000000000ull >> 10) * 341 +
		      (((3000000000ull & 1023) * 341) >> 10), "3e9 ticks");
	CHECK(sample_perf_time_from_tsc(1ull << 40, 5, 1, 0) == (1ull << 40) + 5, "shift 0");
}

/* ---- IBS op from a sysfs fixture ---------------------------------------------- */

static void put_file(const char *root, const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "we");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_ibs_op(void)
{
	char root[] = "/tmp/tlbprof-ibs-XXXXXX", why[256] = "";
	struct sample_ibs_op ibs;
	struct sample_options o;
	struct sample_info info = { 0 };
	struct perf_event_attr attr;
	int err;

	CHECK(mkdtemp(root) != NULL, "mkdtemp");
	err = sample_ibs_op_event(root, "6.1.0-18-amd64", &ibs, why, sizeof(why));
	CHECK(err == -ENOENT && strstr(why, "no IBS op PMU"), "no ibs_op: %d %s", err, why);

	put_file(root, "bus/event_source/devices/ibs_op/type", "11\n");
	put_file(root, "bus/event_source/devices/ibs_op/format/cnt_ctl", "config:19\n");
	err = sample_ibs_op_event(root, "6.1.0-18-amd64", &ibs, why, sizeof(why));
	CHECK(err == 0 && ibs.type == 11 && ibs.config == 1ull << 19 && ibs.cnt_ctl && !ibs.swfilt && ibs.data_addr,
	      "Linux 6.1 IBS op: %d type %u config %#llx", err, ibs.type, (unsigned long long)ibs.config);
	CHECK(strstr(ibs.note, "kernel side is sampled too") != NULL, "no swfilt said: %s", ibs.note);
	o = (struct sample_options){
		.custom_event = true, .ibs_op = true, .type = ibs.type, .config = ibs.config, .config2 = ibs.config2,
		.exclude_kernel = ibs.swfilt, .no_data_addr = !ibs.data_addr, .note = ibs.note,
	};
	sample_attr_build(&attr, &o, &info);
	CHECK(attr.type == 11 && attr.config == 1ull << 19 && !attr.exclude_kernel && attr.precise_ip == 0,
	      "IBS attr: type %u config %#llx", attr.type, (unsigned long long)attr.config);
	CHECK((attr.sample_type & (PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC)) == (PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC),
	      "IBS on 6.1: ADDR and DATA_SRC");
	CHECK(attr.sample_period == 0xffff0 && attr.sample_period % 16 == 0 && !attr.freq, "IBS period");
	CHECK(info.source == SAMPLE_SOURCE_IBS_OP && !info.large_pebs && strstr(info.note, "IBS op"), "IBS info");

	/* Before 6.1 the kernel fills no data address: not asked for. */
	err = sample_ibs_op_event(root, "5.15.0-91-generic", &ibs, why, sizeof(why));
	CHECK(err == 0 && !ibs.data_addr && strstr(ibs.note, "no data addresses"), "5.15: %s", ibs.note);
	o.no_data_addr = !ibs.data_addr;
	sample_attr_build(&attr, &o, &info);
	CHECK(!(attr.sample_type & (PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC)), "IBS on 5.15: no ADDR");

	/* With the software filter (6.14) the event is user space only, through config2. */
	put_file(root, "bus/event_source/devices/ibs_op/format/swfilt", "config2:0\n");
	err = sample_ibs_op_event(root, "6.14.2", &ibs, why, sizeof(why));
	CHECK(err == 0 && ibs.swfilt && ibs.config2 == 1 && !strstr(ibs.note, "kernel side"), "6.14 swfilt");

	put_file(root, "bus/event_source/devices/ibs_op/type", "ibs\n");
	err = sample_ibs_op_event(root, "6.1.0", &ibs, why, sizeof(why));
	CHECK(err == -EINVAL && strstr(why, "not a PMU type"), "bad type: %d %s", err, why);

	/* Clean up the fixture. */
	{
		static const char *const rel[] = {
			"bus/event_source/devices/ibs_op/format/cnt_ctl", "bus/event_source/devices/ibs_op/format/swfilt",
			"bus/event_source/devices/ibs_op/type",		  "bus/event_source/devices/ibs_op/format",
			"bus/event_source/devices/ibs_op",		  "bus/event_source/devices",
			"bus/event_source",				  "bus",
		};
		char path[512];

		for (size_t i = 0; i < ARRAY_SIZE(rel); i++) {
			snprintf(path, sizeof(path), "%s/%s", root, rel[i]);
			remove(path);
		}
		remove(root);
	}
}

int main(void)
{
	test_attr_pebs();
	test_attr_page_faults();
	test_period_policy();
	test_drain_throttle();
	test_drain_data_src();
	test_tlb_levels();
	test_summary_levels();
	test_tsc_conversion();
	test_ibs_op();
	return check_finish();
}
