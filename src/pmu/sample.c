/* SPDX-License-Identifier: MIT */
/* Counters layer, sampling side: perf_event_open on another process, per-CPU rings merged in time order, summary. */
#include "pmu/sample.h"

#include "grow.h"
#include "pmu/paranoid.h"
#include "pmu/perf_open.h"
#include "pmu/symbols.h"

#include <errno.h>
#include <fcntl.h>
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

/* One CPU's event and ring. */
struct ring {
	int fd;				/* -1 for a ring of sample_session_over_rings() */
	struct perf_event_mmap_page *meta;
	void *base;			/* the mapping (one metadata page, then the data), NULL when not ours */
	size_t map_bytes;
	unsigned char *data;
	size_t data_size;		/* a power of two */
};

/* A record copied out of a ring, waiting to be handed over in time order. */
struct pending {
	uint64_t time_ns, seq;		/* seq: arrival order, for equal times */
	size_t off;			/* into the arena */
	uint16_t size;
};

struct sample_session {
	struct ring *rings;
	size_t n_rings;
	int epoll_fd;
	unsigned char *arena;		/* pending records' bytes */
	size_t arena_len, arena_cap;
	struct pending *pend;
	size_t n_pend, cap_pend;
	uint64_t seq;
	struct sample_info info;
};

/* ---- opening ------------------------------------------------------------ */

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
	s = cpus ? session_new(n_cpus) : NULL;
	if (!s) {
		free(cpus);
		snprintf(reason, reason_size, "sampling: %s", strerror(ENOMEM));
		return -ENOMEM;
	}

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	if (opts->custom_event) {
		attr.type = opts->type;
		attr.config = opts->config;
		attr.config1 = opts->config1;
		attr.config2 = opts->config2;
		attr.precise_ip = opts->precise_ip;
		attr.sample_period = opts->period ? opts->period : SAMPLE_DEFAULT_PERIOD;
		if (opts->name)
			snprintf(s->info.event, sizeof(s->info.event), "%s", opts->name);
		else
			snprintf(s->info.event, sizeof(s->info.event), "%" PRIu32 ":0x%" PRIx64, opts->type, opts->config);
	} else {
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_PAGE_FAULTS;
		attr.sample_period = opts->period ? opts->period : 1;
		snprintf(s->info.event, sizeof(s->info.event), "page-faults");
	}
	/* For a page fault, PERF_SAMPLE_ADDR is the faulting address (do_user_addr_fault passes it). */
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR;
	/* Side-band records end with {pid, tid, time} too, so all records of all rings merge by time. */
	attr.sample_id_all = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;	/* NMI-safe, and comparable with clock_gettime() for the hold-back */
	/*
	 * inherit: threads and children created after the open get events of
	 * their own that write into these rings. disabled + enable_on_exec: the
	 * kernel enables the events in the target's execve(), before the new
	 * program's ELF loader maps it, so the MMAP2 records of the executable,
	 * the interpreter and the libraries all arrive (as perf record learns
	 * them); a disabled event gets no side-band records.
	 */
	attr.inherit = 1;
	attr.disabled = opts->enable_on_exec;
	attr.enable_on_exec = opts->enable_on_exec;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.mmap_data = 1;	/* data mappings too (anonymous ones as "//anon"), for the data regions */
	attr.comm = 1;
	attr.comm_exec = 1;	/* marks the COMM record of an exec: the address space is new */
	attr.task = 1;

	s->info.type = attr.type;
	s->info.config = attr.config;
	s->info.period = attr.sample_period;
	s->info.precise_ip = opts->precise_ip;

	for (;;) {
		err = rings_open(s, &attr, pid, cpus, n_cpus, pages, page_size, &mmap_failed);
		/*
		 * At perf_event_paranoid >= 2 an unprivileged user may only sample
		 * user space: retry without the kernel (and hypervisor) side, as
		 * perf record does, and say so.
		 */
		if (err && !mmap_failed && perf_open_classify(-err, 0, NULL, 0) == PERF_OPEN_DENIED &&
		    !attr.exclude_kernel) {
			attr.exclude_kernel = 1;
			attr.exclude_hv = 1;
			s->info.exclude_kernel = s->info.exclude_hv = true;
			snprintf(s->info.note, sizeof(s->info.note),
				 "user space only: sampling the kernel side was denied (perf_event_paranoid=%d)",
				 paranoid_level());
			continue;
		}
		/*
		 * The events opened but the rings could not all be locked
		 * (perf_event_mlock_kb per CPU plus RLIMIT_MEMLOCK): again with
		 * smaller rings, so that the watermark fits the rings used.
		 */
		if ((err == -EPERM || err == -ENOMEM) && mmap_failed && pages > SAMPLE_MIN_RING_PAGES) {
			pages /= 2;
			continue;
		}
		break;
	}
	free(cpus);
	if (!err) {
		s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
		if (s->epoll_fd < 0)
			err = -errno;
		for (size_t i = 0; i < s->n_rings && !err; i++) {
			struct epoll_event ev = { .events = EPOLLIN, .data.u64 = i };

			if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->rings[i].fd, &ev) != 0)
				err = -errno;
		}
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

	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		s->rings[i] = (struct ring){ .fd = -1, .meta = metas[i], .data = datas[i], .data_size = data_size };
	s->n_rings = n;
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

/* sample_id_all's trailer {u32 pid, tid; u64 time} (TID and TIME are the sample type's id fields). */
#define SAMPLE_ID_BYTES 16

/*
 * The time of a record: in the body of a sample (after ip and pid/tid), at
 * the end of every other record. 0 when the record is too short for it.
 */
static uint64_t record_time(const struct perf_event_header *hdr, const unsigned char *rec)
{
	uint64_t t = 0;

	if (hdr->type == PERF_RECORD_SAMPLE) {
		if (hdr->size >= sizeof(*hdr) + 24)
			memcpy(&t, rec + sizeof(*hdr) + 16, 8);
	} else if (hdr->size >= sizeof(*hdr) + SAMPLE_ID_BYTES) {
		memcpy(&t, rec + hdr->size - 8, 8);
	}
	return t;
}

/* Hand one record (header included, contiguous) to the sink. */
static int dispatch(const struct perf_event_header *hdr, const unsigned char *rec, struct sample_info *info,
		    const struct sample_sink *sink)
{
	struct cursor c = { .p = rec + sizeof(*hdr), .left = hdr->size - sizeof(*hdr) };
	char text[4096];
	int ret = 0;

	/* Side-band records end with the sample_id trailer: their own fields are what comes before it. */
	if (hdr->type != PERF_RECORD_SAMPLE) {
		if (c.left < SAMPLE_ID_BYTES) {
			info->bad_records++;
			return 0;
		}
		c.left -= SAMPLE_ID_BYTES;
	}
	switch (hdr->type) {
	case PERF_RECORD_SAMPLE: {
		/* The fields in sample_type's bit order: IP, TID, TIME, ADDR. */
		struct sample_record r;

		r.ip = get_u64(&c);
		r.pid = get_u32(&c);
		r.tid = get_u32(&c);
		r.time_ns = get_u64(&c);
		r.addr = get_u64(&c);
		if (c.short_read)
			break;
		info->samples++;
		if (sink->sample)
			ret = sink->sample(sink->ctx, &r);
		return ret;
	}
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		struct sample_mmap m = { .time_ns = record_time(hdr, rec) };

		m.pid = get_u32(&c);
		m.tid = get_u32(&c);
		m.start = get_u64(&c);
		m.len = get_u64(&c);
		m.pgoff = get_u64(&c);
		if (hdr->type == PERF_RECORD_MMAP2) {
			m.major = get_u32(&c);
			m.minor = get_u32(&c);
			m.inode = get_u64(&c);
			(void)get_u64(&c);	/* ino_generation */
			m.prot = get_u32(&c);
			m.flags = get_u32(&c);
			/* With attr.build_id the device and inode carry a build-id instead (not asked for). */
			if (hdr->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
				m.major = m.minor = 0;
				m.inode = 0;
			}
			m.executable = (m.prot & PROT_EXEC) != 0;
		} else {
			m.executable = !(hdr->misc & PERF_RECORD_MISC_MMAP_DATA);
		}
		if (c.short_read || c.left == 0)
			break;
		m.filename = get_string(&c, text, sizeof(text));
		info->mmaps++;
		if (sink->mmap)
			ret = sink->mmap(sink->ctx, &m);
		return ret;
	}
	case PERF_RECORD_COMM: {
		struct sample_task t = { .kind = SAMPLE_TASK_EXEC, .time_ns = record_time(hdr, rec) };

		t.pid = get_u32(&c);
		t.tid = get_u32(&c);
		if (c.short_read || c.left == 0)
			break;
		t.comm = get_string(&c, text, sizeof(text));
		/* A renamed thread (prctl PR_SET_NAME) keeps its address space: only an exec matters. */
		if (!(hdr->misc & PERF_RECORD_MISC_COMM_EXEC)) {
			info->other_records++;
			return 0;
		}
		info->tasks++;
		if (sink->task)
			ret = sink->task(sink->ctx, &t);
		return ret;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		struct sample_task t = { .kind = hdr->type == PERF_RECORD_FORK ? SAMPLE_TASK_FORK : SAMPLE_TASK_EXIT };

		t.pid = get_u32(&c);
		t.ppid = get_u32(&c);
		t.tid = get_u32(&c);
		t.ptid = get_u32(&c);
		t.time_ns = get_u64(&c);
		if (c.short_read)
			break;
		info->tasks++;
		if (sink->task)
			ret = sink->task(sink->ctx, &t);
		return ret;
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
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	int ret = 0;

	while (tail != head) {
		struct perf_event_header hdr;
		size_t off = (size_t)(tail & (r->data_size - 1)), first = r->data_size - off;
		uint64_t avail = head - tail;
		unsigned char *dst;

		if (avail < sizeof(hdr) || avail > r->data_size) {
			s->info.bad_records++;
			ret = -EIO;
			break;
		}
		/* The kernel keeps records 8-byte aligned, so a header never wraps; a ring made by hand may. */
		memcpy(&hdr, r->data + off, first < sizeof(hdr) ? first : sizeof(hdr));
		if (first < sizeof(hdr))
			memcpy((unsigned char *)&hdr + first, r->data, sizeof(hdr) - first);
		if (hdr.size < sizeof(hdr) || hdr.size > avail) {
			s->info.bad_records++;
			ret = -EIO;
			break;
		}
		if (!array_grow((void **)&s->arena, &s->arena_cap, s->arena_len + hdr.size, 1, 64) ||
		    !array_grow((void **)&s->pend, &s->cap_pend, s->n_pend + 1, sizeof(*s->pend), 64)) {
			ret = -ENOMEM;
			break;
		}
		dst = s->arena + s->arena_len;
		memcpy(dst, r->data + off, first < hdr.size ? first : hdr.size);
		if (first < hdr.size)
			memcpy(dst + first, r->data, hdr.size - first);
		s->pend[s->n_pend++] = (struct pending){
			.time_ns = record_time(&hdr, dst), .seq = s->seq++, .off = s->arena_len, .size = hdr.size,
		};
		s->arena_len += hdr.size;
		tail += hdr.size;
	}
	/* A corrupt ring cannot be walked further: drop what is left rather than read garbage again. */
	if (ret == -EIO)
		tail = head;
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
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
		ret = dispatch(&hdr, rec, &s->info, sink);
		done++;
		if (ret)
			break;
	}
	pending_drop(s, done);
	return ret ? ret : read_ret;
}

/* ---- collecting ---------------------------------------------------------- */

int sample_list_append(struct sample_list *list, const struct sample_record *r)
{
	if (list->count == list->capacity) {
		size_t cap = list->capacity ? list->capacity * 2 : 4096;
		struct sample_record *items = realloc(list->items, cap * sizeof(*items));

		if (!items)
			return -ENOMEM;
		list->items = items;
		list->capacity = cap;
	}
	list->items[list->count++] = *r;
	return 0;
}

void sample_list_free(struct sample_list *list)
{
	free(list->items);
	*list = (struct sample_list){ 0 };
}

static int collect_sample(void *ctx, const struct sample_record *r)
{
	struct sample_collector *c = ctx;

	return c->list ? sample_list_append(c->list, r) : 0;
}

static int collect_mmap(void *ctx, const struct sample_mmap *m)
{
	struct sample_collector *c = ctx;
	struct symbols_mapping map = {
		.start = m->start, .end = m->start + m->len, .offset = m->pgoff,
		.dev_major = m->major, .dev_minor = m->minor, .inode = m->inode, .path = m->filename,
	};

	if (!c->syms || m->len == 0 || map.end < map.start)
		return 0;
	if (m->prot || m->flags)
		snprintf(map.perms, sizeof(map.perms), "%c%c%c%c", m->prot & PROT_READ ? 'r' : '-',
			 m->prot & PROT_WRITE ? 'w' : '-', m->prot & PROT_EXEC ? 'x' : '-',
			 m->flags & MAP_SHARED ? 's' : 'p');
	return symbols_mapping_add(c->syms, (pid_t)m->pid, &map) == -ENOMEM ? -ENOMEM : 0;
}

static int collect_task(void *ctx, const struct sample_task *t)
{
	struct sample_collector *c = ctx;

	if (!c->syms)
		return 0;
	if (t->kind == SAMPLE_TASK_EXEC)
		symbols_exec(c->syms, (pid_t)t->pid);
	else if (t->kind == SAMPLE_TASK_FORK && t->pid != t->ppid)
		return symbols_fork(c->syms, (pid_t)t->ppid, (pid_t)t->pid);
	return 0;
}

void sample_collector_sink(struct sample_collector *c, struct sample_sink *sink)
{
	*sink = (struct sample_sink){
		.sample = collect_sample, .mmap = collect_mmap, .task = collect_task, .ctx = c,
	};
}

/* ---- the summary ----------------------------------------------------------- */

/*
 * One sample's group: interned names (owned by the symbolizer, so equal
 * names are equal pointers) and, for regions, the mapping's start. The end
 * rides along: a region's name and start fix its mapping.
 */
struct group_key {
	const char *a, *b;		/* functions: object, function; regions: name, NULL */
	uint64_t start, end;
	bool anonymous;
};

static int key_cmp(const void *x, const void *y)
{
	const struct group_key *p = x, *q = y;

	if (p->a != q->a)
		return (uintptr_t)p->a < (uintptr_t)q->a ? -1 : 1;
	if (p->b != q->b)
		return (uintptr_t)p->b < (uintptr_t)q->b ? -1 : 1;
	if (p->start != q->start)
		return p->start < q->start ? -1 : 1;
	return 0;
}

struct group {
	struct group_key key;
	uint64_t count;
};

/* Most samples first; ties by name (function, then object) and start, so the order is the same every run. */
static int group_cmp(const void *x, const void *y)
{
	const struct group *p = x, *q = y;
	int c;

	if (p->count != q->count)
		return p->count > q->count ? -1 : 1;
	if (p->key.b && q->key.b && (c = strcmp(p->key.b, q->key.b)) != 0)
		return c;
	if ((c = strcmp(p->key.a, q->key.a)) != 0)
		return c;
	if (p->key.start != q->key.start)
		return p->key.start < q->key.start ? -1 : 1;
	return 0;
}

/* Sort keys, count runs into groups (allocated, *n_groups), then order the groups by count. NULL: no memory. */
static struct group *count_groups(struct group_key *keys, size_t n, size_t *n_groups)
{
	struct group *groups;
	size_t g = 0;

	*n_groups = 0;
	qsort(keys, n, sizeof(*keys), key_cmp);
	groups = calloc(n ? n : 1, sizeof(*groups));
	if (!groups)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (g && key_cmp(&groups[g - 1].key, &keys[i]) == 0) {
			groups[g - 1].count++;
			continue;
		}
		groups[g].key = keys[i];
		groups[g].count = 1;
		g++;
	}
	qsort(groups, g, sizeof(*groups), group_cmp);
	*n_groups = g;
	return groups;
}

void sample_summary_free(struct sample_summary *summary)
{
	if (!summary)
		return;
	for (size_t i = 0; summary->functions && i < summary->n_functions; i++) {
		free(summary->functions[i].object);
		free(summary->functions[i].function);
	}
	for (size_t i = 0; summary->regions && i < summary->n_regions; i++)
		free(summary->regions[i].name);
	free(summary->functions);
	free(summary->regions);
	*summary = (struct sample_summary){ 0 };
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

int sample_summarize(const struct sample_record *samples, size_t n, uint64_t lost, struct symbols *syms,
		     size_t top_n, struct sample_summary *out)
{
	struct group_key *fkeys = calloc(n ? n : 1, sizeof(*fkeys)), *rkeys = calloc(n ? n : 1, sizeof(*rkeys));
	struct group *fgroups = NULL, *rgroups = NULL;
	size_t nf = 0, nr = 0;
	int err = -ENOMEM;

	*out = (struct sample_summary){ .samples = n, .lost = lost };
	if (!fkeys || !rkeys)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct symbols_location loc;
		struct symbols_region region = { .name = SYMBOLS_UNKNOWN };

		symbols_resolve(syms, (pid_t)samples[i].pid, samples[i].ip, &loc);
		if (!loc.resolved)
			out->unresolved_ip++;
		fkeys[i] = (struct group_key){ .a = loc.object, .b = loc.function };
		/* Address 0: the event gives none (or a NULL dereference, which no mapping holds either). */
		if (samples[i].addr)
			symbols_classify(syms, (pid_t)samples[i].pid, samples[i].addr, &region);
		if (region.start == 0 && region.end == 0)
			out->unresolved_addr++;
		rkeys[i] = (struct group_key){
			.a = region.name, .start = region.start, .end = region.end, .anonymous = region.anonymous,
		};
	}
	fgroups = count_groups(fkeys, n, &nf);
	rgroups = count_groups(rkeys, n, &nr);
	if (!fgroups || !rgroups)
		goto out;
	out->distinct_functions = nf;
	out->distinct_regions = nr;
	out->functions = calloc(min_size(nf, top_n) + 1, sizeof(*out->functions));
	out->regions = calloc(min_size(nr, top_n) + 1, sizeof(*out->regions));
	if (!out->functions || !out->regions)
		goto out;
	for (size_t i = 0; i < min_size(nf, top_n); i++) {
		struct sample_function_count *f = &out->functions[i];

		f->object = strdup(fgroups[i].key.a);
		f->function = strdup(fgroups[i].key.b);
		out->n_functions++;	/* counted first, so a failure below frees what was made */
		if (!f->object || !f->function)
			goto out;
		f->count = fgroups[i].count;
		f->share = (double)f->count / (double)n;
	}
	for (size_t i = 0; i < min_size(nr, top_n); i++) {
		struct sample_region_count *r = &out->regions[i];

		r->name = strdup(rgroups[i].key.a);
		out->n_regions++;
		if (!r->name)
			goto out;
		r->start = rgroups[i].key.start;
		r->end = rgroups[i].key.end;
		r->anonymous = rgroups[i].key.anonymous;
		r->count = rgroups[i].count;
		r->share = (double)r->count / (double)n;
	}
	err = 0;
out:
	if (err)
		sample_summary_free(out);
	free(fkeys);
	free(rkeys);
	free(fgroups);
	free(rgroups);
	return err;
}
