/* SPDX-License-Identifier: MIT */
/* Sampling, draining side: records copied out of every CPU's ring, decoded and handed to a sink in time order. */
#include "pmu/sample.h"

#include "grow.h"
#include "pmu/perf_ring.h"
#include "pmu/sample_session.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* ---- records ------------------------------------------------------------- */

/* Little readers over a record's body, bounds-checked. */
struct cursor {
	const unsigned char *p;
	size_t left;
	bool short_read;
};

static uint64_t get_u64(struct cursor *c)
{
	uint64_t v = 0;

	if (c->left < 8) {
		c->short_read = true;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	c->left -= 8;
	return v;
}

static uint32_t get_u32(struct cursor *c)
{
	uint32_t v = 0;

	if (c->left < 4) {
		c->short_read = true;
		return 0;
	}
	memcpy(&v, c->p, 4);
	c->p += 4;
	c->left -= 4;
	return v;
}

/* A NUL-terminated string at the cursor (the rest of the body), copied into buf; cut at the body's end. */
static const char *get_string(struct cursor *c, char *buf, size_t size)
{
	size_t n = strnlen((const char *)c->p, c->left);

	if (n >= size)
		n = size - 1;
	memcpy(buf, c->p, n);
	buf[n] = '\0';
	c->p += c->left;
	c->left = 0;
	return buf;
}

/*
 * sample_id_all's trailer: {u32 pid, tid; u64 time} (TID and TIME are the sample type's id fields), then
 * {u32 cpu, res} where the sample type has CPU.
 */
static size_t sample_id_bytes(uint64_t sample_type)
{
	return 16 + (sample_type & PERF_SAMPLE_CPU ? 8 : 0);
}

/*
 * The time of a record: in the body of a sample (after ip and pid/tid), in
 * the trailer of every other record. 0 when the record is too short for it.
 */
static uint64_t record_time(const struct perf_event_header *hdr, const unsigned char *rec, uint64_t sample_type)
{
	size_t id = sample_id_bytes(sample_type);
	uint64_t t = 0;

	if (hdr->type == PERF_RECORD_SAMPLE) {
		if (hdr->size >= sizeof(*hdr) + 24)
			memcpy(&t, rec + sizeof(*hdr) + 16, 8);
	} else if (hdr->size >= sizeof(*hdr) + id) {
		memcpy(&t, rec + hdr->size - id + 8, 8);
	}
	return t;
}

/*
 * A PERF_RECORD_SAMPLE body: the fields in sample_type's bit order, IP, TID,
 * TIME, then ADDR, CPU (a u32 and a reserved u32), READ (one u64, read_format
 * 0), REGS_USER (an ABI word, then one word per register of the mask unless
 * the ABI is PERF_SAMPLE_REGS_ABI_NONE) and DATA_SRC where sample_type has
 * them (WEIGHT and STACK_USER are never asked for). false when too short, or
 * with more registers than a record holds.
 */
static bool decode_sample(struct cursor *c, const struct sample_info *info, struct sample_record *r)
{
	uint64_t sample_type = info->sample_type;

	r->ip = get_u64(c);
	r->pid = get_u32(c);
	r->tid = get_u32(c);
	r->time_ns = get_u64(c);
	r->addr = sample_type & PERF_SAMPLE_ADDR ? get_u64(c) : 0;
	r->cpu = -1;
	if (sample_type & PERF_SAMPLE_CPU) {
		r->cpu = (int32_t)get_u32(c);
		(void)get_u32(c);	/* reserved */
	}
	/* PERIOD (never asked for) would come here; then READ, read_format 0: one value. */
	if (sample_type & PERF_SAMPLE_READ) {
		r->count = get_u64(c);
		r->counted = true;
	}
	r->n_regs = 0;
	if (sample_type & PERF_SAMPLE_REGS_USER && get_u64(c) != PERF_SAMPLE_REGS_ABI_NONE) {
		unsigned n = (unsigned)__builtin_popcountll(info->regs_user);
		if (n > SAMPLE_MAX_REGS)
			return false;
		for (unsigned i = 0; i < n; i++)
			r->regs[i] = get_u64(c);
		r->n_regs = n;
	}
	r->data_src = sample_type & PERF_SAMPLE_DATA_SRC ? get_u64(c) : 0;
	return !c->short_read;
}

/* A PERF_RECORD_MMAP or MMAP2 body; the file name goes into text. false when too short or without a name. */
static bool decode_mmap(const struct perf_event_header *hdr, struct cursor *c, struct sample_mmap *m, char *text,
			size_t text_size)
{
	m->pid = get_u32(c);
	m->tid = get_u32(c);
	m->start = get_u64(c);
	m->len = get_u64(c);
	m->pgoff = get_u64(c);
	if (hdr->type == PERF_RECORD_MMAP2) {
		m->major = get_u32(c);
		m->minor = get_u32(c);
		m->inode = get_u64(c);
		(void)get_u64(c);	/* ino_generation */
		m->prot = get_u32(c);
		m->flags = get_u32(c);
		/* With attr.build_id the device and inode carry a build-id instead (not asked for). */
		if (hdr->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			m->major = m->minor = 0;
			m->inode = 0;
		}
		m->executable = (m->prot & PROT_EXEC) != 0;
	} else {
		m->executable = !(hdr->misc & PERF_RECORD_MISC_MMAP_DATA);
	}
	if (c->short_read || c->left == 0)
		return false;
	m->filename = get_string(c, text, text_size);
	return true;
}

/* A PERF_RECORD_COMM body; the command name goes into text. false when too short or without a name. */
static bool decode_comm(struct cursor *c, struct sample_task *t, char *text, size_t text_size)
{
	t->pid = get_u32(c);
	t->tid = get_u32(c);
	if (c->short_read || c->left == 0)
		return false;
	t->comm = get_string(c, text, text_size);
	return true;
}

/* A side-band record's CPU, from its sample_id trailer (after {pid, tid} and time); -1 when not asked for. */
static int32_t trailer_cpu(const struct perf_event_header *hdr, const unsigned char *rec, size_t id,
			   uint64_t sample_type)
{
	int32_t cpu = -1;

	if (sample_type & PERF_SAMPLE_CPU)
		memcpy(&cpu, rec + hdr->size - id + 16, 4);
	return cpu;
}

/* A PERF_RECORD_FORK or EXIT body. false when too short. */
static bool decode_fork_exit(struct cursor *c, struct sample_task *t)
{
	t->pid = get_u32(c);
	t->ppid = get_u32(c);
	t->tid = get_u32(c);
	t->ptid = get_u32(c);
	t->time_ns = get_u64(c);
	return !c->short_read;
}

/* Hand one record (header included, contiguous) to the sink, its times moved by off (the perf clock's offset). */
static int dispatch(const struct perf_event_header *hdr, const unsigned char *rec, struct sample_info *info,
		    const struct sample_sink *sink, uint64_t off)
{
	struct cursor c = { .p = rec + sizeof(*hdr), .left = hdr->size - sizeof(*hdr) };
	size_t id = sample_id_bytes(info->sample_type);
	uint64_t time = record_time(hdr, rec, info->sample_type) + off;
	char text[4096];

	/* Side-band records end with the sample_id trailer: their own fields are what comes before it. */
	if (hdr->type != PERF_RECORD_SAMPLE) {
		if (c.left < id) {
			info->bad_records++;
			return 0;
		}
		c.left -= id;
	}
	switch (hdr->type) {
	case PERF_RECORD_SAMPLE: {
		struct sample_record r = { 0 };	/* period and spread are the watch's, not the record's */

		if (!decode_sample(&c, info, &r))
			break;
		r.time_ns += off;
		/* IBS samples every kind of op: a dTLB-miss sampler keeps the loads and stores that missed the L1 dTLB. */
		if (info->source == SAMPLE_SOURCE_IBS_OP && (info->sample_type & PERF_SAMPLE_DATA_SRC) &&
		    !sample_ibs_op_is_miss(r.data_src)) {
			info->not_missed++;
			return 0;
		}
		info->samples++;
		return sink->sample ? sink->sample(sink->ctx, &r) : 0;
	}
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		struct sample_mmap m = { .time_ns = time };

		if (!decode_mmap(hdr, &c, &m, text, sizeof(text)))
			break;
		info->mmaps++;
		return sink->mmap ? sink->mmap(sink->ctx, &m) : 0;
	}
	case PERF_RECORD_COMM: {
		struct sample_task t = { .kind = SAMPLE_TASK_EXEC, .time_ns = time, .cpu = -1 };

		if (!decode_comm(&c, &t, text, sizeof(text)))
			break;
		/* A renamed thread (prctl PR_SET_NAME) keeps its address space: only an exec matters. */
		if (!(hdr->misc & PERF_RECORD_MISC_COMM_EXEC)) {
			info->other_records++;
			return 0;
		}
		info->tasks++;
		return sink->task ? sink->task(sink->ctx, &t) : 0;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		struct sample_task t = { .kind = hdr->type == PERF_RECORD_FORK ? SAMPLE_TASK_FORK : SAMPLE_TASK_EXIT,
					 .cpu = trailer_cpu(hdr, rec, id, info->sample_type) };

		if (!decode_fork_exit(&c, &t))
			break;
		t.time_ns += off;
		info->tasks++;
		return sink->task ? sink->task(sink->ctx, &t) : 0;
	}
	case PERF_RECORD_SWITCH: {
		/* No body: the trailer says whose switch it was, and when. */
		struct sample_task t = {
			.kind = hdr->misc & PERF_RECORD_MISC_SWITCH_OUT ? SAMPLE_TASK_SWITCH_OUT : SAMPLE_TASK_SWITCH_IN,
			.preempted = (hdr->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0, .time_ns = time,
			.cpu = trailer_cpu(hdr, rec, id, info->sample_type),
		};

		memcpy(&t.pid, rec + hdr->size - id, 4);
		memcpy(&t.tid, rec + hdr->size - id + 4, 4);
		info->switches++;
		return sink->task ? sink->task(sink->ctx, &t) : 0;
	}
	case PERF_RECORD_LOST: {
		uint64_t lost;

		(void)get_u64(&c);	/* id */
		lost = get_u64(&c);
		if (c.short_read)
			break;
		info->lost += lost;
		return 0;
	}
	case PERF_RECORD_LOST_SAMPLES: {
		uint64_t lost = get_u64(&c);

		if (c.short_read)
			break;
		info->lost += lost;
		return 0;
	}
	case PERF_RECORD_THROTTLE:
		info->throttled++;
		return 0;
	default:
		info->other_records++;
		return 0;
	}
	info->bad_records++;
	return 0;
}

/* ---- rings and the time-ordered hand-over ----------------------------------- */

/*
 * Copy the records of one ring into the pending list and free their space.
 * The kernel writes records, then data_head (release); reading data_head
 * with acquire orders the record reads after it, and storing data_tail with
 * release tells the kernel the space is free only after the copies are done
 * (as tools/include/linux/ring_buffer.h does). Returns 0, -ENOMEM (what was
 * copied stays copied, the rest stays in the ring), -EIO (a record that
 * cannot be walked: the rest of the ring is dropped).
 */
static int ring_read(struct sample_session *s, struct ring *r)
{
	const struct perf_ring pr = { .meta = r->meta, .data = r->data, .data_size = r->data_size };
	uint64_t head = perf_ring_head(&pr), tail = perf_ring_tail(&pr);
	int ret = 0;

	for (;;) {
		struct perf_event_header hdr;
		unsigned char *dst;

		ret = perf_ring_peek(&pr, tail, head, &hdr);
		if (ret == -ENODATA) {
			ret = 0;
			break;
		}
		if (ret) {
			s->info.bad_records++;
			break;
		}
		if (!array_grow((void **)&s->arena, &s->arena_cap, s->arena_len + hdr.size, 1, 64) ||
		    !array_grow((void **)&s->pend, &s->cap_pend, s->n_pend + 1, sizeof(*s->pend), 64)) {
			ret = -ENOMEM;
			break;
		}
		dst = s->arena + s->arena_len;
		perf_ring_copy(&pr, tail, dst, hdr.size);
		s->pend[s->n_pend++] = (struct pending){
			.time_ns = record_time(&hdr, dst, s->info.sample_type) + (uint64_t)s->clock_offset_ns,
			.seq = s->seq++,
			.off = s->arena_len, .size = hdr.size,
		};
		s->arena_len += hdr.size;
		tail += hdr.size;
	}
	/* A corrupt ring cannot be walked further: drop what is left rather than read garbage again. */
	if (ret == -EIO)
		tail = head;
	perf_ring_release(&pr, tail);
	return ret;
}

static int pending_cmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Drop the first n pending records, moving the rest (and their bytes) to the front. */
static void pending_drop(struct sample_session *s, size_t n)
{
	size_t len = 0;

	if (n == 0)
		return;
	memmove(s->pend, s->pend + n, (s->n_pend - n) * sizeof(*s->pend));
	s->n_pend -= n;
	/* The survivors' bytes are scattered (sorted by time, not by offset): pack them anew. */
	if (s->n_pend) {
		unsigned char *packed = malloc(s->arena_len);

		if (packed) {
			for (size_t i = 0; i < s->n_pend; i++) {
				memcpy(packed + len, s->arena + s->pend[i].off, s->pend[i].size);
				s->pend[i].off = len;
				len += s->pend[i].size;
			}
			free(s->arena);
			s->arena = packed;
			s->arena_cap = s->arena_len;
			s->arena_len = len;
		}
		return;	/* without memory the arena keeps its holes until the next drop */
	}
	s->arena_len = 0;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The period policy's second half (SAMPLE_TARGET_HZ): when the kernel
 * throttled since the period was last set, raise it on every CPU's event
 * (PERF_EVENT_IOC_PERIOD takes effect at the next overflow) and count the
 * raise. A ring without an event (a test's) only records the decision.
 */
static void period_follow_throttling(struct sample_session *s)
{
	uint64_t period;

	if (s->info.throttled == s->throttled_seen || s->info.source == SAMPLE_SOURCE_SOFTWARE)
		return;
	s->throttled_seen = s->info.throttled;
	period = sample_period_raise(s->info.source, s->info.period);
	if (period == s->info.period)
		return;
	for (size_t i = 0; i < s->n_rings; i++)
		if (s->rings[i].fd >= 0 && ioctl(s->rings[i].fd, PERF_EVENT_IOC_PERIOD, &period) != 0)
			return;	/* the old period stays in force where it was not changed; the report keeps it */
	s->info.period = period;
	s->info.period_raises++;
}

#if defined(__x86_64__) || defined(__i386__)
bool sample_clock_calibrate(struct sample_session *s)
{
	const struct perf_event_mmap_page *pc = s->n_rings ? s->rings[0].meta : NULL;
	uint64_t best_gap = UINT64_MAX;

	if (!pc)
		return false;
	/* Three tries: the one whose TSC read sits in the narrowest CLOCK_MONOTONIC bracket wins. */
	for (int i = 0; i < 3; i++) {
		uint64_t time_zero, before, after, tsc;
		uint32_t seq, mult;
		uint16_t shift;
		bool cap;

		do {
			seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
			cap = pc->cap_user_time_zero;
			time_zero = pc->time_zero;
			mult = pc->time_mult;
			shift = pc->time_shift;
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
		} while (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) != seq || (seq & 1));
		if (!cap)
			return false;
		before = monotonic_ns();
		tsc = __rdtsc();
		after = monotonic_ns();
		if (after - before < best_gap) {
			best_gap = after - before;
			s->clock_offset_ns = (int64_t)(before + (after - before) / 2) -
					     (int64_t)sample_perf_time_from_tsc(tsc, time_zero, mult, shift);
		}
	}
	s->convert_time = true;
	return true;
}
#else
bool sample_clock_calibrate(struct sample_session *s)
{
	(void)s;
	return false;
}
#endif

/*
 * A ring that filled is reported lost by a PERF_RECORD_LOST only when a later
 * record finds room, so a burst at the end of a run (the command's last 500 MiB
 * first touched while tlbprof was descheduled) went unreported. The page-fault
 * event samples every fault: its count (read() with inherit: the command's
 * exited children's too) less the samples handed over is what was dropped.
 */
static void lost_by_count(struct sample_session *s)
{
	uint64_t counted = 0, v;

	if (s->info.source != SAMPLE_SOURCE_SOFTWARE)
		return;
	for (size_t i = 0; i < s->n_rings; i++)
		if (s->rings[i].fd < 0 || read(s->rings[i].fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
			return;
		else
			counted += v;
	if (counted > s->info.samples + s->info.lost)
		s->info.lost = counted - s->info.samples;
}

int sample_drain(struct sample_session *s, const struct sample_sink *sink, bool final)
{
	static const struct sample_sink nothing = { 0 };
	/* Taken before the rings are read: whatever is older has arrived by then. */
	uint64_t now = monotonic_ns();
	uint64_t cutoff = final ? UINT64_MAX : now > SAMPLE_HOLDBACK_NS ? now - SAMPLE_HOLDBACK_NS : 0;
	size_t done = 0;
	int ret = 0, read_ret = 0;

	if (!sink)
		sink = &nothing;
	/* The perf clock and CLOCK_MONOTONIC drift apart (NTP slews only the latter): measure again. */
	if (s->convert_time)
		sample_clock_calibrate(s);
	for (size_t i = 0; i < s->n_rings; i++) {
		int r = ring_read(s, &s->rings[i]);

		if (r && !read_ret)
			read_ret = r;
	}
	if (s->n_pend)
		qsort(s->pend, s->n_pend, sizeof(*s->pend), pending_cmp);
	while (done < s->n_pend && s->pend[done].time_ns <= cutoff) {
		const unsigned char *rec = s->arena + s->pend[done].off;
		struct perf_event_header hdr;

		memcpy(&hdr, rec, sizeof(hdr));
		ret = dispatch(&hdr, rec, &s->info, sink, (uint64_t)s->clock_offset_ns);
		done++;
		if (ret)
			break;
	}
	pending_drop(s, done);
	period_follow_throttling(s);
	if (final)
		lost_by_count(s);
	return ret ? ret : read_ret;
}
