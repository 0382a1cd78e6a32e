/* SPDX-License-Identifier: MIT */
/* Unit tests for sample: the ring reader on hand-made records, the summary, and a real child sampled for page faults. */
#include "check.h"
#include "pmu/sample.h"
#include "pmu/symbols.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the ring reader ------------------------------------------------------ */

/* A record being built: header plus body, padded to 8 bytes as the kernel writes them. */
struct rec {
	unsigned char b[256];
	size_t len;
};

static void rec_begin(struct rec *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = 0 };

	memset(r, 0, sizeof(*r));
	memcpy(r->b, &h, sizeof(h));
	r->len = sizeof(h);
}

static void rec_put(struct rec *r, const void *p, size_t n)
{
	memcpy(r->b + r->len, p, n);
	r->len += n;
}

static void rec_u32(struct rec *r, uint32_t v)
{
	rec_put(r, &v, sizeof(v));
}

static void rec_u64(struct rec *r, uint64_t v)
{
	rec_put(r, &v, sizeof(v));
}

static void rec_end(struct rec *r)
{
	uint16_t size;

	r->len = (r->len + 7) & ~(size_t)7;
	size = (uint16_t)r->len;
	memcpy(r->b + 6, &size, sizeof(size));	/* perf_event_header.size */
}

/* A fake ring: the metadata page and the data, with data_head/data_tail counting bytes forever. */
struct fake_ring {
	struct perf_event_mmap_page meta;
	unsigned char data[1024];
};

static void ring_write(struct fake_ring *ring, const struct rec *r)
{
	for (size_t i = 0; i < r->len; i++)
		ring->data[(ring->meta.data_head + i) % sizeof(ring->data)] = r->b[i];
	ring->meta.data_head += r->len;
}

/* A session reading the given fake rings (they stay ours). */
static struct sample_session *over(struct fake_ring **rings, size_t n)
{
	void *metas[4];
	unsigned char *datas[4];

	for (size_t i = 0; i < n && i < 4; i++) {
		metas[i] = &rings[i]->meta;
		datas[i] = rings[i]->data;
	}
	return sample_session_over_rings(metas, datas, n, sizeof(rings[0]->data));
}

/* What a sink saw, in order. */
struct seen {
	struct sample_record samples[8];
	size_t n_samples;
	struct sample_mmap mmaps[4];
	char filenames[4][64];
	size_t n_mmaps;
	struct sample_task tasks[4];
	char comms[4][32];
	size_t n_tasks;
	uint64_t times[32];		/* every record's time, in the order handed over */
	size_t n_times;
	int fail_at_sample;		/* return -ENOMEM from this sample (1-based), 0: never */
};

static void seen_time(struct seen *s, uint64_t t)
{
	if (s->n_times < ARRAY_SIZE(s->times))
		s->times[s->n_times++] = t;
}

static int seen_sample(void *ctx, const struct sample_record *r)
{
	struct seen *s = ctx;

	if (s->n_samples < ARRAY_SIZE(s->samples))
		s->samples[s->n_samples] = *r;
	s->n_samples++;
	seen_time(s, r->time_ns);
	return s->fail_at_sample && (int)s->n_samples == s->fail_at_sample ? -ENOMEM : 0;
}

static int seen_mmap(void *ctx, const struct sample_mmap *m)
{
	struct seen *s = ctx;

	if (s->n_mmaps < ARRAY_SIZE(s->mmaps)) {
		s->mmaps[s->n_mmaps] = *m;
		snprintf(s->filenames[s->n_mmaps], sizeof(s->filenames[0]), "%s", m->filename);
		s->mmaps[s->n_mmaps].filename = s->filenames[s->n_mmaps];
	}
	s->n_mmaps++;
	seen_time(s, m->time_ns);
	return 0;
}

static int seen_task(void *ctx, const struct sample_task *t)
{
	struct seen *s = ctx;

	if (s->n_tasks < ARRAY_SIZE(s->tasks)) {
		s->tasks[s->n_tasks] = *t;
		snprintf(s->comms[s->n_tasks], sizeof(s->comms[0]), "%s", t->comm ? t->comm : "");
		s->tasks[s->n_tasks].comm = s->comms[s->n_tasks];
	}
	s->n_tasks++;
	seen_time(s, t->time_ns);
	return 0;
}

/* sample_id_all's trailer of side-band records: {pid, tid, time}. */
static void rec_trailer(struct rec *r, uint32_t pid, uint64_t time)
{
	rec_u32(r, pid);
	rec_u32(r, pid);
	rec_u64(r, time);
}

static void put_sample(struct fake_ring *ring, uint32_t pid, uint32_t tid, uint64_t ip, uint64_t addr, uint64_t time)
{
	struct rec r;

	rec_begin(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rec_u64(&r, ip);
	rec_u32(&r, pid);
	rec_u32(&r, tid);
	rec_u64(&r, time);
	rec_u64(&r, addr);
	rec_end(&r);
	ring_write(ring, &r);
}

static void put_mmap2(struct fake_ring *ring, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		      uint32_t prot, const char *name, uint64_t time)
{
	struct rec r;

	rec_begin(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	rec_u32(&r, pid);
	rec_u32(&r, pid);
	rec_u64(&r, start);
	rec_u64(&r, len);
	rec_u64(&r, pgoff);
	rec_u32(&r, 8);		/* major */
	rec_u32(&r, 1);		/* minor */
	rec_u64(&r, 4242);	/* inode */
	rec_u64(&r, 0);		/* ino_generation */
	rec_u32(&r, prot);
	rec_u32(&r, MAP_PRIVATE);
	rec_put(&r, name, strlen(name) + 1);
	r.len = (r.len + 7) & ~(size_t)7;	/* the name is padded before the trailer */
	rec_trailer(&r, pid, time);
	rec_end(&r);
	ring_write(ring, &r);
}

static void put_comm(struct fake_ring *ring, uint32_t pid, const char *comm, bool exec, uint64_t time)
{
	struct rec r;

	rec_begin(&r, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	rec_u32(&r, pid);
	rec_u32(&r, pid);
	rec_put(&r, comm, strlen(comm) + 1);
	r.len = (r.len + 7) & ~(size_t)7;
	rec_trailer(&r, pid, time);
	rec_end(&r);
	ring_write(ring, &r);
}

static void put_fork(struct fake_ring *ring, uint32_t type, uint32_t pid, uint32_t ppid, uint64_t time)
{
	struct rec r;

	rec_begin(&r, type, 0);
	rec_u32(&r, pid);
	rec_u32(&r, ppid);
	rec_u32(&r, pid);
	rec_u32(&r, ppid);
	rec_u64(&r, time);
	rec_trailer(&r, pid, time);
	rec_end(&r);
	ring_write(ring, &r);
}

static void put_lost(struct fake_ring *ring, uint64_t lost, uint64_t time)
{
	struct rec r;

	rec_begin(&r, PERF_RECORD_LOST, 0);
	rec_u64(&r, 1);		/* id */
	rec_u64(&r, lost);
	rec_trailer(&r, 0, time);
	rec_end(&r);
	ring_write(ring, &r);
}

/* A record of type with body bytes of zeros, then the trailer. */
static void put_bare(struct fake_ring *ring, uint32_t type, size_t body, uint64_t time)
{
	struct rec r;

	rec_begin(&r, type, 0);
	r.len += body;
	if (type != PERF_RECORD_SAMPLE)
		rec_trailer(&r, 0, time);
	rec_end(&r);
	ring_write(ring, &r);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Every record type, starting at several places in a 1 KiB ring, so that
 * records, their bodies and (at odd starts the kernel never uses) their
 * headers wrap around the end.
 */
static void test_ring(void)
{
	static const struct {
		int line;
		uint64_t start;		/* data_tail = data_head at the start; absolute, so a multiple of the size wraps */
	} rows[] = {
		{ __LINE__, 0 },
		{ __LINE__, 1024 * 3 + 1000 },	/* the first sample (40 bytes) wraps */
		{ __LINE__, 1024 + 904 },	/* the mmap record wraps in its file name */
		{ __LINE__, 2044 },		/* the header of the first record wraps (4 + 4 bytes) */
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		static struct fake_ring ring;
		struct fake_ring *rings[] = { &ring };
		struct seen seen = { 0 };
		const struct sample_sink sink = { seen_sample, seen_mmap, seen_task, &seen };
		struct sample_session *s = over(rings, 1);
		struct sample_info info;
		int ret;

		if (!s)
			return;
		memset(&ring, 0, sizeof(ring));
		ring.meta.data_head = ring.meta.data_tail = rows[i].start;
		put_sample(&ring, 10, 11, 0x401000, 0x7f0000001000, 100);
		put_mmap2(&ring, 10, 0x7f1000000000, 0x21000, 0x1000, PROT_READ | PROT_EXEC, "/usr/lib/libfoo.so.1", 101);
		put_comm(&ring, 10, "bench", true, 102);
		put_comm(&ring, 10, "renamed", false, 103);	/* a thread rename, not an exec */
		put_fork(&ring, PERF_RECORD_FORK, 12, 10, 104);
		put_lost(&ring, 5, 105);
		put_bare(&ring, PERF_RECORD_THROTTLE, 24, 106);
		put_bare(&ring, 99, 8, 107);			/* a type this reader does not know */
		put_bare(&ring, PERF_RECORD_SAMPLE, 24, 0);	/* too short for its sample type */
		put_sample(&ring, 12, 13, 0x402000, 0, 109);
		put_fork(&ring, PERF_RECORD_EXIT, 12, 10, 110);
		CHECK_ROW(rows[i].line, ring.meta.data_head - ring.meta.data_tail < sizeof(ring.data), "test ring too small");

		ret = sample_drain(s, &sink, true);
		sample_info_get(s, &info);
		CHECK_ROW(rows[i].line, ret == 0, "drain: %d", ret);
		CHECK_ROW(rows[i].line, ring.meta.data_tail == ring.meta.data_head, "tail %" PRIu64 " head %" PRIu64,
			  (uint64_t)ring.meta.data_tail, (uint64_t)ring.meta.data_head);
		CHECK_ROW(rows[i].line, seen.n_samples == 2 && info.samples == 2, "samples %zu", seen.n_samples);
		CHECK_ROW(rows[i].line, seen.samples[0].pid == 10 && seen.samples[0].tid == 11 &&
			  seen.samples[0].ip == 0x401000 && seen.samples[0].addr == 0x7f0000001000 &&
			  seen.samples[0].time_ns == 100, "first sample");
		CHECK_ROW(rows[i].line, seen.samples[1].pid == 12 && seen.samples[1].ip == 0x402000 &&
			  seen.samples[1].addr == 0, "second sample");
		CHECK_ROW(rows[i].line, seen.n_mmaps == 1 && seen.mmaps[0].start == 0x7f1000000000 &&
			  seen.mmaps[0].len == 0x21000 && seen.mmaps[0].pgoff == 0x1000 && seen.mmaps[0].major == 8 &&
			  seen.mmaps[0].minor == 1 && seen.mmaps[0].inode == 4242 && seen.mmaps[0].executable &&
			  seen.mmaps[0].time_ns == 101 && strcmp(seen.filenames[0], "/usr/lib/libfoo.so.1") == 0,
			  "mmap \"%s\"", seen.filenames[0]);
		CHECK_ROW(rows[i].line, seen.n_tasks == 3 && seen.tasks[0].kind == SAMPLE_TASK_EXEC &&
			  strcmp(seen.comms[0], "bench") == 0 && seen.tasks[0].time_ns == 102 &&
			  seen.tasks[1].kind == SAMPLE_TASK_FORK && seen.tasks[1].pid == 12 && seen.tasks[1].ppid == 10 &&
			  seen.tasks[1].time_ns == 104 && seen.tasks[2].kind == SAMPLE_TASK_EXIT, "tasks: %zu", seen.n_tasks);
		CHECK_ROW(rows[i].line, info.lost == 5 && info.throttled == 1 && info.other_records == 2 &&
			  info.bad_records == 1 && info.mmaps == 1 && info.tasks == 3,
			  "lost %" PRIu64 " throttled %" PRIu64 " other %" PRIu64 " bad %" PRIu64, info.lost,
			  info.throttled, info.other_records, info.bad_records);
		/* Nothing new: a second drain hands over nothing. */
		ret = sample_drain(s, &sink, true);
		CHECK_ROW(rows[i].line, ret == 0 && seen.n_samples == 2, "second drain");
		sample_close(s);
	}
}

/*
 * Two CPUs' rings: records come out in time order across them (an exec's
 * COMM on one CPU before the mmaps its program made after migrating), and
 * young records wait for a later drain.
 */
static void test_ring_order(void)
{
	static struct fake_ring a, b;
	struct fake_ring *rings[] = { &a, &b };
	struct seen seen = { 0 };
	const struct sample_sink sink = { seen_sample, seen_mmap, seen_task, &seen };
	struct sample_session *s = over(rings, 2);
	uint64_t t0 = now_ns() - 1000000000ull, young = now_ns() + 60000000000ull;
	int ret;

	if (!s)
		return;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	put_sample(&a, 5, 5, 0x1000, 0x2000, t0 + 40);
	put_mmap2(&a, 5, 0x1000, 0x1000, 0, PROT_READ | PROT_EXEC, "/bin/new", t0 + 20);
	put_sample(&a, 5, 5, 0x1000, 0x2000, young);
	put_comm(&b, 5, "new", true, t0 + 10);
	put_sample(&b, 5, 5, 0x1000, 0x2000, t0 + 30);
	ret = sample_drain(s, &sink, false);
	CHECK(ret == 0 && seen.n_times == 4, "first drain: %d, %zu records", ret, seen.n_times);
	for (size_t i = 0; i < seen.n_times && i < 4; i++)
		CHECK(seen.times[i] == t0 + 10 * (i + 1), "record %zu at +%" PRIu64, i, seen.times[i] - t0);
	CHECK(a.meta.data_tail == a.meta.data_head && b.meta.data_tail == b.meta.data_head,
	      "ring space freed even for the record held back");
	/* The young one waits until the final drain, and records written meanwhile join in order. */
	put_sample(&b, 5, 5, 0x1000, 0x2000, t0 + 50);
	ret = sample_drain(s, &sink, false);
	CHECK(ret == 0 && seen.n_times == 5 && seen.times[4] == t0 + 50, "second drain: %zu", seen.n_times);
	ret = sample_drain(s, &sink, true);
	CHECK(ret == 0 && seen.n_times == 6 && seen.times[5] == young, "final drain: %zu", seen.n_times);
	CHECK(sample_poll_fd(s) == -1, "no poll fd without events");
	sample_close(s);

	/* A hook's error stops the hand-over after that record; the rest waits for the next drain. */
	{
		struct seen failing = { .fail_at_sample = 1 };
		const struct sample_sink fail_sink = { seen_sample, NULL, NULL, &failing };
		struct sample_info info;

		s = over(rings, 1);
		if (!s)
			return;
		memset(&a, 0, sizeof(a));
		put_sample(&a, 1, 1, 1, 1, 1);
		put_sample(&a, 2, 2, 2, 2, 2);
		ret = sample_drain(s, &fail_sink, true);
		CHECK(ret == -ENOMEM && failing.n_samples == 1, "hook error: %d", ret);
		ret = sample_drain(s, &fail_sink, true);
		CHECK(ret == 0 && failing.n_samples == 2 && failing.samples[1].pid == 2, "after the hook error: %d", ret);
		/* No sink at all: records are consumed and counted. */
		put_sample(&a, 3, 3, 3, 3, 3);
		ret = sample_drain(s, NULL, true);
		sample_info_get(s, &info);
		CHECK(ret == 0 && info.samples == 3, "NULL sink: %d, %" PRIu64, ret, info.samples);
		sample_close(s);
	}

	/* A record of size 0 (or larger than what was published) cannot be walked past: -EIO, the rest dropped. */
	{
		struct sample_info info;
		struct rec r;

		s = over(rings, 1);
		if (!s)
			return;
		memset(&a, 0, sizeof(a));
		rec_begin(&r, PERF_RECORD_SAMPLE, 0);
		r.len = 16;	/* header.size stays 0 */
		ring_write(&a, &r);
		put_sample(&a, 1, 1, 1, 1, 1);
		ret = sample_drain(s, NULL, true);
		sample_info_get(s, &info);
		CHECK(ret == -EIO && info.bad_records == 1 && a.meta.data_tail == a.meta.data_head && info.samples == 0,
		      "corrupt ring: %d", ret);
		memset(&a, 0, sizeof(a));
		put_sample(&a, 1, 1, 1, 1, 1);
		a.meta.data_head -= 8;	/* the record claims more than was published */
		ret = sample_drain(s, NULL, true);
		CHECK(ret == -EIO, "record past data_head: %d", ret);
		sample_close(s);
	}
}

/* The collector feeds mapping, exec and fork records to a symbolizer and samples to a list. */
static void test_collector(void)
{
	static struct fake_ring ring;
	struct fake_ring *rings[] = { &ring };
	struct sample_list list = { 0 };
	struct symbols *syms = symbols_new();
	struct sample_collector c = { .list = &list, .syms = syms };
	struct sample_session *s = over(rings, 1);
	struct sample_sink sink;
	const struct symbols_mapping *m;

	if (!syms || !s) {
		symbols_delete(syms);
		sample_close(s);
		return;
	}
	sample_collector_sink(&c, &sink);
	memset(&ring, 0, sizeof(ring));
	put_mmap2(&ring, 20, 0x10000, 0x1000, 0, PROT_READ, "/old/program", 1);
	put_comm(&ring, 20, "new", true, 2);
	put_mmap2(&ring, 20, 0x20000, 0x3000, 0x2000, PROT_READ | PROT_EXEC, "/new/program", 3);
	put_mmap2(&ring, 20, 0x30000, 0x100000, 0, PROT_READ | PROT_WRITE, "//anon", 4);
	put_fork(&ring, PERF_RECORD_FORK, 21, 20, 5);	/* a child process: a copy of the space */
	put_fork(&ring, PERF_RECORD_FORK, 20, 20, 6);	/* a thread (pid == ppid): nothing to copy */
	put_sample(&ring, 21, 21, 0x20010, 0x30010, 7);
	CHECK(sample_drain(s, &sink, true) == 0, "drain");
	CHECK(list.count == 1 && list.items[0].pid == 21 && list.items[0].addr == 0x30010, "list: %zu", list.count);
	CHECK(symbols_mapping_find(syms, 20, 0x10000) == NULL, "exec forgot the old program");
	m = symbols_mapping_find(syms, 20, 0x20000);
	CHECK(m && strcmp(m->path, "/new/program") == 0 && m->offset == 0x2000 && strcmp(m->perms, "r-xp") == 0 &&
	      m->inode == 4242, "mapping of the new program: %s %s", m ? m->path : "-", m ? m->perms : "-");
	m = symbols_mapping_find(syms, 21, 0x30010);
	CHECK(m && m->path[0] == '\0' && strcmp(m->perms, "rw-p") == 0, "anonymous mapping copied to the child");
	CHECK(symbols_mapping_count(syms, 21) == 2, "child mappings: %zu", symbols_mapping_count(syms, 21));
	sample_list_free(&list);
	CHECK(list.count == 0 && list.items == NULL, "list freed");
	sample_close(s);
	symbols_delete(syms);
}

/* ---- the summary ------------------------------------------------------------ */

static int __attribute__((noinline)) summary_hot_function(int n)
{
	static volatile int sink;

	for (int i = 0; i < n; i++)
		sink += i;
	return sink;
}

static int __attribute__((noinline)) summary_cold_function(int n)
{
	static volatile int sink;

	for (int i = 0; i < n; i++)
		sink ^= i;
	return sink;
}

/*
 * A collector with a cap of four blocks, fed 40 blocks in order: the kept samples are whole blocks whose index is a
 * multiple of one_in, and each stands for one_in of the samples handed over; a summary of them counts all.
 */
static void test_collector_cap(void)
{
	struct sample_list list = { 0 };
	struct sample_collector c = { .list = &list, .cap = 4 * SAMPLE_KEEP_BLOCK };
	struct sample_sink sink;
	const size_t n = 40 * SAMPLE_KEEP_BLOCK + 7;

	sample_collector_sink(&c, &sink);
	for (size_t i = 0; i < n; i++) {
		struct sample_record r = { .pid = 1, .tid = 1, .ip = i, .addr = 0x1000 };
		CHECK(sink.sample(sink.ctx, &r) == 0, "sample %zu taken", i);
	}
	/* Full at 1 in 1, 2, 4 and 8 (blocks up to 3, 6, 12, 24), then at 1 in 16 blocks 0, 16 and 32 (of 41). */
	CHECK(c.seen == n && sample_collector_one_in(&c) == 16, "seen %llu, one in %llu", (unsigned long long)c.seen,
	      (unsigned long long)c.one_in);
	CHECK(list.count == 3 * SAMPLE_KEEP_BLOCK, "kept %zu", list.count);
	bool whole = true;
	for (size_t i = 0; i < list.count; i++)
		whole &= list.items[i].ip == (i / SAMPLE_KEEP_BLOCK) * 16 * SAMPLE_KEEP_BLOCK + i % SAMPLE_KEEP_BLOCK;
	CHECK(whole, "the kept samples are blocks 0, 16 and 32, whole and in order");

	struct sample_summary sum;
	CHECK(sample_summarize(list.items, list.count, 0, NULL, 4, &sum) == 0, "summarised");
	sample_summary_scale(&sum, &c);
	CHECK(sum.samples == n && sum.kept_one_in == 16 && sum.unresolved_ip == 16 * list.count,
	      "the summary counts all: %llu samples, %llu unresolved", (unsigned long long)sum.samples,
	      (unsigned long long)sum.unresolved_ip);
	sample_summary_free(&sum);

	/* Without a cap every sample is kept. */
	struct sample_list all = { 0 };
	struct sample_collector u = { .list = &all };
	sample_collector_sink(&u, &sink);
	for (size_t i = 0; i < n; i++) {
		struct sample_record r = { .pid = 1, .tid = 1, .ip = i };
		CHECK(sink.sample(sink.ctx, &r) == 0, "sample %zu taken", i);
	}
	CHECK(all.count == n && sample_collector_one_in(&u) == 1, "uncapped: %zu kept", all.count);
	sample_list_free(&list);
	sample_list_free(&all);
}

static void test_summary(void)
{
	const size_t region_bytes = 1u << 20;
	struct symbols *syms = symbols_new();
	struct sample_record samples[64];
	struct sample_summary sum;
	pid_t pid = getpid();
	size_t n = 0;
	char *a, *b;
	int ret;

	if (!syms)
		return;
	a = mmap(NULL, region_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b = mmap(NULL, region_bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);	/* not mergeable with a */
	CHECK(a != MAP_FAILED && b != MAP_FAILED, "mmap");
	CHECK(summary_hot_function(2) + summary_cold_function(2) >= 0, "called");
	CHECK(symbols_maps_read(syms, pid) > 0, "maps");
	/* 30 in the hot function touching a, 10 in the cold one touching b, 5 at ip 0 with no data address. */
	for (int i = 0; i < 30; i++)
		samples[n++] = (struct sample_record){ .pid = (uint32_t)pid, .tid = (uint32_t)pid,
						       .ip = (uint64_t)(uintptr_t)&summary_hot_function + 4,
						       .addr = (uint64_t)(uintptr_t)a + 4096u * (unsigned)i };
	for (int i = 0; i < 10; i++)
		samples[n++] = (struct sample_record){ .pid = (uint32_t)pid, .tid = (uint32_t)pid,
						       .ip = (uint64_t)(uintptr_t)&summary_cold_function,
						       .addr = (uint64_t)(uintptr_t)b + 8u * (unsigned)i };
	for (int i = 0; i < 5; i++)
		samples[n++] = (struct sample_record){ .pid = (uint32_t)pid, .tid = (uint32_t)pid };

	ret = sample_summarize(samples, n, 7, syms, 2, &sum);
	CHECK(ret == 0, "summarize: %d", ret);
	CHECK(sum.samples == 45 && sum.lost == 7 && sum.unresolved_ip == 5 && sum.unresolved_addr == 5,
	      "totals: %" PRIu64 " lost %" PRIu64 " unresolved ip %" PRIu64 " addr %" PRIu64, sum.samples, sum.lost,
	      sum.unresolved_ip, sum.unresolved_addr);
	CHECK(sum.distinct_functions == 3 && sum.distinct_regions == 3 && sum.n_functions == 2 && sum.n_regions == 2,
	      "distinct %zu/%zu, top %zu/%zu", sum.distinct_functions, sum.distinct_regions, sum.n_functions,
	      sum.n_regions);
	if (sum.n_functions == 2 && sum.n_regions == 2) {
		CHECK(strcmp(sum.functions[0].function, "summary_hot_function") == 0 && sum.functions[0].count == 30 &&
		      strstr(sum.functions[0].object, "test-sample"), "top function %s:%s %" PRIu64,
		      sum.functions[0].object, sum.functions[0].function, sum.functions[0].count);
		CHECK_NEAR(sum.functions[0].share, 30.0 / 45.0, 1e-12);
		CHECK(strcmp(sum.functions[1].function, "summary_cold_function") == 0 && sum.functions[1].count == 10,
		      "second function %s", sum.functions[1].function);
		CHECK(sum.regions[0].start <= (uint64_t)(uintptr_t)a && (uint64_t)(uintptr_t)a < sum.regions[0].end &&
		      sum.regions[0].count == 30 && sum.regions[0].anonymous && strcmp(sum.regions[0].name, "[anon]") == 0,
		      "top region %s %" PRIx64 " %" PRIu64, sum.regions[0].name, sum.regions[0].start,
		      sum.regions[0].count);
		CHECK(sum.regions[1].start <= (uint64_t)(uintptr_t)b && (uint64_t)(uintptr_t)b < sum.regions[1].end &&
		      sum.regions[1].count == 10, "second region %" PRIx64, sum.regions[1].start);
		CHECK_NEAR(sum.regions[1].share, 10.0 / 45.0, 1e-12);
	}
	sample_summary_free(&sum);

	/* All of them, and none. */
	CHECK(sample_summarize(samples, n, 0, syms, 100, &sum) == 0 && sum.n_functions == 3 && sum.n_regions == 3 &&
	      strcmp(sum.functions[2].function, "[unknown]") == 0 && strcmp(sum.regions[2].name, "[unknown]") == 0,
	      "top 100");
	sample_summary_free(&sum);
	CHECK(sample_summarize(samples, 0, 0, syms, 5, &sum) == 0 && sum.samples == 0 && sum.n_functions == 0 &&
	      sum.n_regions == 0, "no samples");
	sample_summary_free(&sum);
	if (a != MAP_FAILED)
		munmap(a, region_bytes);
	if (b != MAP_FAILED)
		munmap(b, region_bytes);
	symbols_delete(syms);
}

/* ---- opening --------------------------------------------------------------- */

/* Refused opens come back as an errno and one line of reason, never a crash. */
static void test_open_errors(void)
{
	struct sample_session *s = NULL;
	char reason[256];
	int ret;

	{
		struct sample_options opts = { .ring_pages = 3 };

		ret = sample_open(&s, getpid(), &opts, reason, sizeof(reason));
		CHECK(ret == -EINVAL && s == NULL && strstr(reason, "power of two"), "ring pages 3: %d %s", ret, reason);
		ret = sample_open(&s, -1, NULL, reason, sizeof(reason));
		CHECK(ret == -EINVAL && s == NULL && strstr(reason, "no process"), "pid -1: %d %s", ret, reason);
	}
	{
		/* No PMU has this type. */
		struct sample_options opts = { .custom_event = true, .type = 0x7ffffff0, .config = 1, .name = "nonsense" };

		ret = sample_open(&s, getpid(), &opts, reason, sizeof(reason));
		printf("nonsense event: %d %s\n", ret, reason);
		CHECK(ret < 0 && s == NULL && strstr(reason, "nonsense") && !strchr(reason, '\n'), "nonsense: %d %s", ret,
		      reason);
	}
	{
		/* Precise cycles: a PMU with PEBS/IBS may accept it; a KVM guest without a PMU refuses. */
		struct sample_options opts = { .custom_event = true, .type = PERF_TYPE_HARDWARE,
					       .config = PERF_COUNT_HW_CPU_CYCLES, .precise_ip = 2, .period = 100003,
					       .name = "cycles:pp" };

		ret = sample_open(&s, getpid(), &opts, reason, sizeof(reason));
		printf("precise cycles: %d %s\n", ret, ret ? reason : "opened");
		CHECK(ret == 0 ? s != NULL : s == NULL && strstr(reason, "cycles:pp") != NULL, "precise: %d %s", ret,
		      reason);
		sample_close(s);
		s = NULL;
	}
	{
		struct sample_options opts = { 0 };

		ret = sample_open(&s, 0x7ffffffe, &opts, reason, sizeof(reason));
		CHECK(ret == -ESRCH && strstr(reason, "no such process"), "no such pid: %d %s", ret, reason);
	}
	sample_close(NULL);
}

/* ---- a real child ----------------------------------------------------------- */

#define TOUCHED_PAGES 2048
/*
 * A chunk's 512 samples (40 bytes each) fit one 32 KiB ring even with the
 * exec's records, and fill at least one CPU's ring past its quarter-full
 * watermark however they are spread over two CPUs. All 2048 do not fit the
 * rings of two CPUs: the drains in between are needed.
 */
#define CHUNK_PAGES 512
#define LIVE_RING_PAGES 8

/* The live session's side-band records, checked on their way to the collector. */
struct side_band {
	struct sample_sink inner;
	uint64_t t0, t1;		/* CLOCK_MONOTONIC around the run; t1 set after the last drain */
	uint64_t outs, ins, foreign, bad_times;
	pid_t pid;
};

static uint64_t monotonic_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void band_time(struct side_band *b, uint64_t t)
{
	/* t1 is not known until the end: a record after the clock read here cannot be (the drain is later). */
	if (t < b->t0 || t > monotonic_now_ns())
		b->bad_times++;
}

static int band_sample(void *ctx, const struct sample_record *r)
{
	struct side_band *b = ctx;

	return b->inner.sample(b->inner.ctx, r);
}

static int band_mmap(void *ctx, const struct sample_mmap *m)
{
	struct side_band *b = ctx;

	band_time(b, m->time_ns);
	return b->inner.mmap(b->inner.ctx, m);
}

static int band_task(void *ctx, const struct sample_task *t)
{
	struct side_band *b = ctx;

	band_time(b, t->time_ns);
	if (t->kind == SAMPLE_TASK_SWITCH_OUT || t->kind == SAMPLE_TASK_SWITCH_IN) {
		b->outs += t->kind == SAMPLE_TASK_SWITCH_OUT;
		b->ins += t->kind == SAMPLE_TASK_SWITCH_IN;
		b->foreign += (pid_t)t->pid != b->pid;
	}
	return b->inner.task(b->inner.ctx, t);
}

/*
 * Fork a child that waits on a pipe, open page-fault sampling on it with
 * enable_on_exec, let it exec sample-target (built by meson), which touches
 * its pages in chunks and waits after each until the rings were drained;
 * drain once more after it exited, then symbolise. Returns false when the
 * machine does not let us sample (the reason is printed): the caller exits
 * 77.
 */
static bool test_live(void)
{
	const char *target = getenv("TLBPROF_TEST_SAMPLE_TARGET");
	/* CPU and context switches too: their side-band records then end with a longer trailer. */
	struct sample_options opts = { .enable_on_exec = true, .ring_pages = LIVE_RING_PAGES, .cpu = true,
				       .context_switch = true };
	struct side_band band = { .t0 = monotonic_now_ns() };
	struct sample_session *s = NULL;
	struct sample_list list = { 0 };
	struct symbols *syms = symbols_new();
	struct sample_collector c = { .list = &list, .syms = syms };
	struct sample_summary sum = { 0 };
	struct sample_info info;
	struct sample_sink sink;
	int go[2], in[2], out[2], status = 0, ret, drains = 0;
	char reason[256], line[256], pages_arg[16], chunk_arg[16];
	void *buffer = NULL;
	size_t buffer_bytes = 0;
	FILE *from_child;
	pid_t pid;

	CHECK(target != NULL, "TLBPROF_TEST_SAMPLE_TARGET unset");
	if (!target || !syms || pipe2(go, O_CLOEXEC) != 0 || pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
		symbols_delete(syms);
		return true;
	}
	snprintf(pages_arg, sizeof(pages_arg), "%d", TOUCHED_PAGES);
	snprintf(chunk_arg, sizeof(chunk_arg), "%d", CHUNK_PAGES);
	pid = fork();
	if (pid == 0) {
		char byte;

		close(go[1]);	/* else the parent closing its end would not be EOF here */
		close(in[1]);
		close(out[0]);
		if (read(go[0], &byte, 1) != 1)
			_exit(126);	/* the parent gave up */
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		execl(target, target, pages_arg, chunk_arg, (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	close(in[0]);
	close(out[1]);
	band.pid = pid;
	CHECK(pid > 0, "fork");
	if (pid < 0)
		return true;

	ret = sample_open(&s, pid, &opts, reason, sizeof(reason));
	if (ret) {
		close(go[1]);	/* the child reads EOF and exits */
		close(in[1]);
		close(out[0]);
		waitpid(pid, &status, 0);
		symbols_delete(syms);
		fprintf(stderr, "%s\n", reason);
		if (ret == -EACCES || ret == -EPERM || ret == -ENOSYS || ret == -ENOENT)
			return false;
		CHECK(0, "sample_open: %d %s", ret, reason);
		return true;
	}
	sample_collector_sink(&c, &band.inner);
	sink = (struct sample_sink){ .sample = band_sample, .mmap = band_mmap, .task = band_task, .ctx = &band };
	CHECK(write(go[1], "x", 1) == 1, "release the child");
	close(go[1]);
	/* Every line the target prints: the buffer first, then "chunk" each time it waits for a drain. */
	from_child = fdopen(out[0], "r");
	while (from_child && fgets(line, sizeof(line), from_child)) {
		struct pollfd pfd = { .fd = sample_poll_fd(s), .events = POLLIN };

		if (sscanf(line, "buffer %p %zu", &buffer, &buffer_bytes) == 2)
			continue;
		/* The watermark's wake-up reaches the epoll set (delivered by irq_work: allow it time). */
		CHECK(poll(&pfd, 1, 5000) == 1 && (pfd.revents & POLLIN), "poll after a chunk: revents %#x", pfd.revents);
		ret = sample_drain(s, &sink, false);
		CHECK(ret == 0, "drain: %d", ret);
		drains++;
		CHECK(write(in[1], "x", 1) == 1, "let the target go on");
	}
	if (from_child)
		fclose(from_child);
	close(in[1]);
	waitpid(pid, &status, 0);
	ret = sample_drain(s, &sink, true);
	CHECK(ret == 0, "last drain: %d", ret);
	sample_info_get(s, &info);
	sample_close(s);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "target status %#x", status);
	CHECK(buffer && buffer_bytes == (size_t)TOUCHED_PAGES * (size_t)sysconf(_SC_PAGESIZE), "buffer %p %zu",
	      buffer, buffer_bytes);
	CHECK(drains == TOUCHED_PAGES / CHUNK_PAGES - 1, "%d drains", drains);

	printf("live: %d drains; event %s period %" PRIu64 " exclude_kernel %d %zu rings of %zu B; samples %" PRIu64
	       " mmaps %" PRIu64 " tasks %" PRIu64 " lost %" PRIu64 " throttled %" PRIu64 " other %" PRIu64 " bad %" PRIu64
	       "%s%s\n",
	       drains, info.event, info.period, info.exclude_kernel, info.rings, info.ring_bytes, info.samples, info.mmaps,
	       info.tasks, info.lost, info.throttled, info.other_records, info.bad_records, info.note[0] ? "; " : "",
	       info.note);
	CHECK(info.ring_bytes == LIVE_RING_PAGES * (size_t)sysconf(_SC_PAGESIZE) && info.rings >= 1, "rings");
	CHECK(info.samples >= TOUCHED_PAGES && info.samples == list.count, "samples %" PRIu64 ", listed %zu",
	      info.samples, list.count);
	CHECK(info.mmaps >= 3 && info.tasks >= 1, "the exec's records: %" PRIu64 " mmaps, %" PRIu64 " tasks", info.mmaps,
	      info.tasks);
	CHECK(info.lost == 0 && info.bad_records == 0, "lost %" PRIu64 ", bad %" PRIu64, info.lost, info.bad_records);
	/* The target blocks at every chunk until drained: each wait is a switch out and back, all of them its own. */
	band.t1 = monotonic_now_ns();
	CHECK(band.outs >= (uint64_t)drains && band.ins >= (uint64_t)drains && info.switches == band.outs + band.ins &&
		      band.foreign == 0,
	      "switches: %" PRIu64 " out, %" PRIu64 " in, %" PRIu64 " of another pid, for %d waits", band.outs, band.ins,
	      band.foreign, drains);
	/* Times from the trailer, which ends with the CPU here: every side-band record within the run. */
	CHECK(band.bad_times == 0, "%" PRIu64 " side-band records timed outside the run (%" PRIu64 " .. %" PRIu64 ")",
	      band.bad_times, band.t0, band.t1);
	CHECK(strcmp(info.event, "page-faults") == 0 && info.period == 1, "event %s", info.event);
	for (size_t i = 1; i < list.count; i++) {
		const struct sample_record *p = &list.items[i - 1], *q = &list.items[i];

		if (q->time_ns < p->time_ns || (q->time_ns == p->time_ns && q->tid == p->tid && q->ip == p->ip &&
						 q->addr == p->addr)) {
			CHECK(0, "sample %zu handed over out of time order, or twice", i);
			break;
		}
	}
	/* Every page of the buffer faulted once: each must be among the samples (none lost, none made up). */
	{
		const size_t page_size = (size_t)sysconf(_SC_PAGESIZE);
		unsigned char seen_page[TOUCHED_PAGES] = { 0 };
		uint64_t buf = (uint64_t)(uintptr_t)buffer;
		size_t distinct = 0, in_buffer = 0;

		for (size_t i = 0; buffer && i < list.count; i++) {
			uint64_t a = list.items[i].addr;

			if (a < buf || a - buf >= (uint64_t)TOUCHED_PAGES * page_size)
				continue;
			in_buffer++;
			if (!seen_page[(a - buf) / page_size]++)
				distinct++;
		}
		CHECK(distinct == TOUCHED_PAGES, "%zu of %d pages sampled (%zu samples in the buffer)", distinct,
		      TOUCHED_PAGES, in_buffer);
	}

	ret = sample_summarize(list.items, list.count, info.lost, syms, 5, &sum);
	CHECK(ret == 0 && sum.n_functions > 0 && sum.n_regions > 0, "summarize: %d", ret);
	for (size_t i = 0; i < sum.n_functions; i++)
		printf("  function %5" PRIu64 " %5.1f%% %s:%s\n", sum.functions[i].count, 100 * sum.functions[i].share,
		       sum.functions[i].object, sum.functions[i].function);
	for (size_t i = 0; i < sum.n_regions; i++)
		printf("  region   %5" PRIu64 " %5.1f%% %s @ 0x%" PRIx64 "-0x%" PRIx64 "\n", sum.regions[i].count,
		       100 * sum.regions[i].share, sum.regions[i].name, sum.regions[i].start, sum.regions[i].end);
	printf("  unresolved: ip %" PRIu64 ", addr %" PRIu64 " of %" PRIu64 "\n", sum.unresolved_ip,
	       sum.unresolved_addr, sum.samples);
	if (sum.n_functions > 0 && sum.n_regions > 0) {
		uint64_t buf = (uint64_t)(uintptr_t)buffer;

		CHECK(strcmp(sum.functions[0].function, "touch_pages_for_sampling") == 0 &&
		      sum.functions[0].count >= TOUCHED_PAGES && strstr(sum.functions[0].object, "sample-target"),
		      "top function %s:%s with %" PRIu64, sum.functions[0].object, sum.functions[0].function,
		      sum.functions[0].count);
		CHECK(sum.regions[0].anonymous && sum.regions[0].start <= buf && buf < sum.regions[0].end &&
		      sum.regions[0].end - sum.regions[0].start >= buffer_bytes && sum.regions[0].count >= TOUCHED_PAGES,
		      "top region %s 0x%" PRIx64 "-0x%" PRIx64 " (%" PRIu64 "), buffer %p", sum.regions[0].name,
		      sum.regions[0].start, sum.regions[0].end, sum.regions[0].count, buffer);
	}
	sample_summary_free(&sum);
	sample_list_free(&list);
	symbols_delete(syms);
	return true;
}

int main(void)
{
	bool sampled;

	test_ring();
	test_ring_order();
	test_collector();
	test_summary();
	test_collector_cap();
	test_open_errors();
	sampled = test_live();
	if (check_failures == 0 && !sampled) {
		fprintf(stderr, "skipped: this machine does not let this user sample another process\n");
		check_finish();
		return CHECK_EXIT_SKIP;
	}
	return check_finish();
}
