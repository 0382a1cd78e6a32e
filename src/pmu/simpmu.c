/* SPDX-License-Identifier: MIT */
/* A simulated core PMU that schedules counters as the kernel does (simpmu.h says what it models). */
#include "pmu/simpmu.h"

#include "pmu/backend.h"
#include "pmu/counters.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The kernel's default multiplexing interval (perf_event_mux_interval_ms). */
#define MUX_NS 4000000ull
#define MAX_EVENTS 64
#define MAX_COUNTERS 16

struct model {
	const char *name;
	const char *pfm_pmu;
	unsigned generic;		/* generic counters per thread */
	bool intel;			/* architectural fixed counters, and the 0-3 masks */
	/* The TLBs its counts per access come from (documented, as src/machine/cores.c): entries. */
	unsigned l1_4k, stlb_4k, stlb_2m, stlb_1g;
	unsigned walk_cycles;		/* cycles with a walk in flight, per completed walk */
	uint64_t l3_bytes;
};

static const struct model models[] = {
	/* Skylake-SP with SMT on: 4 generic counters per thread; the STLB's 1536 entries serve 4K and 2M. */
	{ "skx-smt", "skx", 4, true, 64, 1536, 1536, 16, 30, 22ull << 20 },
	{ "skx", "skx", 8, true, 64, 1536, 1536, 16, 30, 22ull << 20 },	/* SMT off: the core's 8 */
	{ "icx", "icx", 8, true, 64, 2048, 1024, 1024, 30, 48ull << 20 },
	{ "spr", "spr", 8, true, 96, 2048, 2048, 1024, 30, 105ull << 20 },
	{ "emr", "spr", 8, true, 96, 2048, 2048, 1024, 30, 260ull << 20 },	/* Sapphire Rapids' core PMU */
	{ "zen3", "amd64_fam19h_zen3", 6, false, 64, 2048, 2048, 64, 30, 32ull << 20 },
	{ "zen4", "amd64_fam19h_zen4", 6, false, 72, 3072, 3072, 64, 30, 32ull << 20 },
};

/* What an encoding counts, for the model's counts per access. */
enum kind { K_OTHER, K_CYCLES, K_INSTRUCTIONS, K_LOADS, K_MISSES, K_WALK_ACTIVE, K_STLB_HITS, K_LLC_MISSES };

struct rate {
	uint64_t key;
	double per_ns;
};

struct sim_event {
	bool used, pinned;
	int fd, leader;			/* leader: index of the group leader (itself for one) */
	struct perf_event_attr attr;
	bool enabled;			/* a leader's state; members follow it */
	uint64_t enabled_ns, running_ns;
	double value, truth;
	int counter;			/* in this interval: 0..generic-1 generic, 100+k fixed k, -1 none */
	uint64_t noted_enabled, noted_running;	/* times at the last hint_accesses */
	uint64_t id;			/* what PERF_EVENT_IOC_ID answers, unique since simpmu_configure() */
};

static struct {
	const struct model *m;
	bool watchdog;
	unsigned others;
	struct sim_event ev[MAX_EVENTS];
	int order[MAX_EVENTS];		/* flexible leaders in rotation order */
	size_t n_order;
	struct rate rates[32];
	size_t n_rates;
	uint64_t (*now)(void);
	uint64_t last_ns;
	uint64_t next_id;
	bool phase_known;		/* hint_phase() said what the phase is */
	double per_access[K_LLC_MISSES + 1];	/* counts per access of each kind, from the phase */
	double ghz;			/* cycles per ns */
} sim;

const char *simpmu_model_at(size_t i)
{
	return i < sizeof(models) / sizeof(models[0]) ? models[i].name : NULL;
}

const char *simpmu_pfm_pmu(void)
{
	return sim.m ? sim.m->pfm_pmu : NULL;
}

uint64_t simpmu_event_key(uint32_t type, uint64_t config)
{
	return ((uint64_t)type << 40) | (type == PERF_TYPE_RAW ? config & 0xffffull : config & 0xffffffffffull);
}

void simpmu_set_rate(uint64_t key, double per_ns)
{
	for (size_t i = 0; i < sim.n_rates; i++)
		if (sim.rates[i].key == key) {
			sim.rates[i].per_ns = per_ns;
			return;
		}
	if (sim.n_rates < sizeof(sim.rates) / sizeof(sim.rates[0]))
		sim.rates[sim.n_rates++] = (struct rate){ key, per_ns };
}

static enum kind kind_of(const struct perf_event_attr *a)
{
	unsigned code = (unsigned)(a->config & 0xff), umask = (unsigned)((a->config >> 8) & 0xff);

	if (a->type == PERF_TYPE_HARDWARE)
		return a->config == PERF_COUNT_HW_CPU_CYCLES ? K_CYCLES
		     : a->config == PERF_COUNT_HW_INSTRUCTIONS ? K_INSTRUCTIONS : K_OTHER;
	if (a->type != PERF_TYPE_RAW)
		return K_OTHER;
	if (code == 0xc0)
		return K_INSTRUCTIONS;
	if (sim.m->intel) {
		if (code == 0x3c)
			return K_CYCLES;
		if (code == 0x08 || code == 0x12)
			return umask == 0x0e ? K_MISSES : umask == 0x10 ? K_WALK_ACTIVE : umask == 0x20 ? K_STLB_HITS : K_OTHER;
		return code == 0xd0 ? K_LOADS : code == 0xd1 ? K_LLC_MISSES : K_OTHER;
	}
	return code == 0x76 ? K_CYCLES : code == 0x45 ? K_MISSES : code == 0x43 ? K_LLC_MISSES : K_OTHER;
}

/* Per ns: a rate the caller set, else the core clock for cycles once a phase said it. */
static double rate_of(const struct perf_event_attr *a)
{
	uint64_t key = simpmu_event_key(a->type, a->config);

	for (size_t i = 0; i < sim.n_rates; i++)
		if (sim.rates[i].key == key)
			return sim.rates[i].per_ns;
	return sim.phase_known && kind_of(a) == K_CYCLES ? sim.ghz : 0;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void simpmu_set_clock(uint64_t (*now_ns)(void))
{
	sim.now = now_ns ? now_ns : monotonic_ns;
	sim.last_ns = sim.now();
}

/* ---- which counters an event may use ---- */

/* The fixed counter an Intel event can go on (0 instructions, 1 cycles), or -1. */
static int fixed_counter(const struct perf_event_attr *a)
{
	uint64_t code = a->config & 0xffff, rest = a->config >> 24;	/* cmask, inv, edge: not on a fixed counter */

	if (!sim.m->intel)
		return -1;
	if (a->type == PERF_TYPE_HARDWARE)
		return a->config == PERF_COUNT_HW_INSTRUCTIONS ? 0 : a->config == PERF_COUNT_HW_CPU_CYCLES ? 1 : -1;
	if (a->type != PERF_TYPE_RAW || rest & 0xff)
		return -1;
	return code == 0x00c0 ? 0 : code == 0x003c ? 1 : -1;
}

/* The generic counters an event may use: Intel's dTLB, load and L3-miss events only 0-3. */
static unsigned generic_mask(const struct perf_event_attr *a)
{
	unsigned all = (1u << sim.m->generic) - 1;
	unsigned code = (unsigned)(a->config & 0xff);

	if (sim.m->intel && a->type == PERF_TYPE_RAW &&
	    (code == 0x08 || code == 0x12 || code == 0x49 || code == 0xd0 || code == 0xd1))
		return all & 0x0fu;
	return all;
}

/* Place events idx[k..n) on free counters (busy: bit i generic i, bit 16+j fixed j), backtracking. */
static bool place(const int *idx, size_t k, size_t n, unsigned busy, int *where)
{
	if (k == n)
		return true;
	const struct perf_event_attr *a = &sim.ev[idx[k]].attr;
	int f = fixed_counter(a);
	if (f >= 0 && !(busy & (1u << (16 + f)))) {
		where[k] = 100 + f;
		if (place(idx, k + 1, n, busy | (1u << (16 + f)), where))
			return true;
	}
	unsigned mask = generic_mask(a);
	for (unsigned c = 0; c < sim.m->generic; c++)
		if (mask & (1u << c) && !(busy & (1u << c))) {
			where[k] = (int)c;
			if (place(idx, k + 1, n, busy | (1u << c), where))
				return true;
		}
	return false;
}

/* The members of the group led by leader, leader first, into idx. */
static size_t group_of(int leader, int *idx)
{
	size_t n = 0;

	for (int i = 0; i < MAX_EVENTS; i++)
		if (sim.ev[i].used && sim.ev[i].leader == leader)
			idx[n++] = i;
	return n;
}

/* Try the group on counters beside busy; on success mark its counters and return true. */
static bool schedule_group(int leader, unsigned *busy)
{
	int idx[MAX_EVENTS], where[MAX_EVENTS];
	size_t n = group_of(leader, idx);

	if (!place(idx, 0, n, *busy, where))
		return false;
	for (size_t k = 0; k < n; k++) {
		sim.ev[idx[k]].counter = where[k];
		int w = where[k];
		if (w >= 100 && w < 116)
			*busy |= 1u << (w - 84);	/* fixed counter w - 100 is bit 16 + (w - 100) */
		else if (w >= 0 && w < 16)
			*busy |= 1u << w;
	}
	return true;
}

/* ---- time ---- */

/*
 * One multiplexing interval's schedule: the pinned events first (the
 * watchdog, another user's), then the enabled flexible groups in rotation
 * order until the first that does not fit. Whether one was left out.
 */
static bool schedule(void)
{
	unsigned busy = 0;
	bool left_out = false;

	for (int i = 0; i < MAX_EVENTS; i++)
		sim.ev[i].counter = -1;
	for (int i = 0; i < MAX_EVENTS; i++)
		if (sim.ev[i].used && sim.ev[i].pinned && sim.ev[i].leader == i)
			schedule_group(i, &busy);
	for (size_t k = 0; k < sim.n_order; k++) {
		int l = sim.order[k];
		if (!sim.ev[l].enabled)
			continue;
		if (!schedule_group(l, &busy)) {
			left_out = true;
			break;	/* the first group that does not fit stops the ones after it */
		}
	}
	return left_out;
}

/* Count dt ns under the current schedule. */
static void account(uint64_t dt)
{
	for (int i = 0; i < MAX_EVENTS; i++) {
		struct sim_event *e = &sim.ev[i];
		if (!e->used || e->pinned || !sim.ev[e->leader].enabled)
			continue;
		double r = rate_of(&e->attr);
		e->enabled_ns += dt;
		e->truth += r * (double)dt;
		if (e->counter >= 0) {
			e->running_ns += dt;
			e->value += r * (double)dt;
		}
	}
}

/* Bring every event up to now, interval by interval, rotating where a group was left out. */
static void advance(void)
{
	if (!sim.now)
		simpmu_set_clock(NULL);
	uint64_t now = sim.now();
	while (sim.last_ns < now) {
		uint64_t next = (sim.last_ns / MUX_NS + 1) * MUX_NS;
		uint64_t end = next < now ? next : now;
		bool left_out = schedule();
		account(end - sim.last_ns);
		sim.last_ns = end;
		if (end == next && left_out && sim.n_order > 1) {
			int first = sim.order[0];
			memmove(sim.order, sim.order + 1, (sim.n_order - 1) * sizeof(sim.order[0]));
			sim.order[sim.n_order - 1] = first;
		}
	}
}

/* ---- the backend ---- */

static struct sim_event *find(int fd)
{
	for (int i = 0; i < MAX_EVENTS; i++)
		if (sim.ev[i].used && sim.ev[i].fd == fd)
			return &sim.ev[i];
	return NULL;
}

static int new_slot(const struct perf_event_attr *attr, bool pinned)
{
	for (int i = 0; i < MAX_EVENTS; i++) {
		if (sim.ev[i].used)
			continue;
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);	/* a real, unique fd number */
		if (fd < 0)
			return -1;
		sim.ev[i] = (struct sim_event){ .used = true, .pinned = pinned, .fd = fd, .leader = i, .attr = *attr,
						.enabled = pinned, .counter = -1, .id = 1000 + ++sim.next_id };
		return i;
	}
	errno = EMFILE;
	return -1;
}

static void free_slot(int i)
{
	close(sim.ev[i].fd);
	sim.ev[i].used = false;
	for (size_t k = 0; k < sim.n_order; k++)
		if (sim.order[k] == i) {
			memmove(sim.order + k, sim.order + k + 1, (sim.n_order - k - 1) * sizeof(sim.order[0]));
			sim.n_order--;
			break;
		}
}

/* Whether the group led by leader, with attr added, fits the model with every counter free (validate_group). */
static bool fits_empty(int leader, const struct perf_event_attr *attr)
{
	int idx[MAX_EVENTS], where[MAX_EVENTS];
	size_t n = leader >= 0 ? group_of(leader, idx) : 0;
	int slot = -1;

	for (int i = 0; i < MAX_EVENTS && slot < 0; i++)
		if (!sim.ev[i].used)
			slot = i;
	if (slot < 0)
		return false;
	sim.ev[slot].attr = *attr;	/* a scratch entry, not marked used */
	idx[n++] = slot;
	return place(idx, 0, n, 0, where);
}

static int sim_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	if (attr->type == PERF_TYPE_SOFTWARE)
		return pmu_backend_kernel.open(attr, pid, cpu, group_fd, flags);
	if (attr->type != PERF_TYPE_RAW && attr->type != PERF_TYPE_HARDWARE) {
		errno = ENOENT;
		return -1;
	}
	advance();
	struct sim_event *leader = group_fd >= 0 ? find(group_fd) : NULL;
	if (group_fd >= 0 && (!leader || leader->leader != leader - sim.ev)) {
		errno = EINVAL;	/* a software or unknown leader, or a member as leader */
		return -1;
	}
	if (!fits_empty(leader ? (int)(leader - sim.ev) : -1, attr)) {
		errno = EINVAL;	/* the group can never be scheduled */
		return -1;
	}
	int i = new_slot(attr, false);
	if (i < 0)
		return -1;
	sim.ev[i].enabled = !attr->disabled;
	if (leader)
		sim.ev[i].leader = (int)(leader - sim.ev);
	else
		sim.order[sim.n_order++] = i;
	return sim.ev[i].fd;
}

static int sim_ioctl(int fd, unsigned long request, unsigned long arg)
{
	struct sim_event *e = find(fd);

	if (!e)
		return pmu_backend_kernel.ioctl(fd, request, arg);
	if (request == PERF_EVENT_IOC_ID) {
		memcpy((void *)arg, &e->id, sizeof(e->id));
		return 0;
	}
	advance();
	int l = e->leader;
	for (int i = 0; i < MAX_EVENTS; i++) {
		struct sim_event *m = &sim.ev[i];
		if (!m->used || (m != e && !(arg & PERF_IOC_FLAG_GROUP && m->leader == l)))
			continue;
		if (request == PERF_EVENT_IOC_ENABLE && m->leader == i)
			m->enabled = true;
		else if (request == PERF_EVENT_IOC_DISABLE && m->leader == i)
			m->enabled = false;
		else if (request == PERF_EVENT_IOC_RESET)
			m->value = m->truth = 0;
	}
	return 0;
}

/*
 * read(2) as the kernel answers it for the event's read_format: without
 * PERF_FORMAT_GROUP { value, [enabled], [running], [id] } (the fields its
 * format asks for, in that order); with it, from any member, the whole group
 * as perf_read_group() writes it: { nr, [enabled], [running], { value, [id] }
 * [nr] }, the leader first and the times the leader's. ENOSPC when buf is too
 * small, as the kernel's perf_read() refuses a short buffer.
 */
static ssize_t sim_read(int fd, void *buf, size_t len)
{
	struct sim_event *e = find(fd);

	if (!e)
		return pmu_backend_kernel.read(fd, buf, len);
	advance();
	uint64_t fmt = e->attr.read_format, v[3 + 2 * MAX_EVENTS];
	size_t n = 0;
	if (fmt & PERF_FORMAT_GROUP) {
		int idx[MAX_EVENTS];
		const struct sim_event *l = &sim.ev[e->leader];
		size_t members = group_of(e->leader, idx);
		v[n++] = members;
		if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED)
			v[n++] = l->enabled_ns;
		if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)
			v[n++] = l->running_ns;
		/* The leader first, then its siblings (group_of() lists slots in order, the leader among them). */
		for (int pass = 0; pass < 2; pass++)
			for (size_t k = 0; k < members; k++) {
				const struct sim_event *m = &sim.ev[idx[k]];
				if ((m == l) != (pass == 0))
					continue;
				v[n++] = (uint64_t)(m->value + 0.5);
				if (fmt & PERF_FORMAT_ID)
					v[n++] = m->id;
			}
	} else {
		v[n++] = (uint64_t)(e->value + 0.5);
		if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED)
			v[n++] = e->enabled_ns;
		if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)
			v[n++] = e->running_ns;
		if (fmt & PERF_FORMAT_ID)
			v[n++] = e->id;
	}
	if (len < n * sizeof(v[0])) {
		errno = ENOSPC;
		return -1;
	}
	memcpy(buf, v, n * sizeof(v[0]));
	return (ssize_t)(n * sizeof(v[0]));
}

static int sim_close(int fd)
{
	struct sim_event *e = find(fd);

	if (!e)
		return pmu_backend_kernel.close(fd);
	advance();
	int i = (int)(e - sim.ev);
	/* Closing a leader leaves its members as groups of their own, as the kernel does. */
	for (int k = 0; k < MAX_EVENTS; k++)
		if (k != i && sim.ev[k].used && sim.ev[k].leader == i) {
			sim.ev[k].leader = k;
			sim.ev[k].enabled = sim.ev[i].enabled;
			sim.order[sim.n_order++] = k;
		}
	free_slot(i);
	return 0;
}

static bool sim_has_core_pmu(void)
{
	return true;
}

/*
 * A random chase over the phase's pages, on the model's TLBs: each access's
 * page is uniform over them, so a page outside the L1 dTLB's reach misses it
 * with probability 1 - entries/pages, and the STLB's likewise; a completed
 * walk holds walk_cycles; the lines (one per slot, and a PTE line per 8
 * pages) miss the L3 beyond its size.
 */
static void sim_hint_phase(const struct counter_phase_hint *h)
{
	double pages = h->page_bytes ? ceil((double)h->size_bytes / (double)h->page_bytes) : 1;
	double l1 = h->page_bytes >= (1ull << 30) ? 4 : h->page_bytes >= (2ull << 20) ? 32 : sim.m->l1_4k;
	double stlb = h->page_bytes >= (1ull << 30) ? sim.m->stlb_1g
		    : h->page_bytes >= (2ull << 20) ? sim.m->stlb_2m : sim.m->stlb_4k;
	double slots = h->stride_bytes ? (double)h->size_bytes / (double)h->stride_bytes : 1;
	double lines = slots * 64 + (double)h->size_bytes / 4096 * 8;
	double miss = pages > stlb ? 1 - stlb / pages : 0, l1_miss = pages > l1 ? 1 - l1 / pages : 0;

	advance();
	memset(sim.per_access, 0, sizeof(sim.per_access));
	sim.per_access[K_LOADS] = 1;
	sim.per_access[K_INSTRUCTIONS] = 1 + 2.0 / 16;	/* a load each, a compare and branch per 16 */
	sim.per_access[K_MISSES] = miss;
	sim.per_access[K_WALK_ACTIVE] = miss * sim.m->walk_cycles;
	sim.per_access[K_STLB_HITS] = l1_miss > miss ? l1_miss - miss : 0;
	sim.per_access[K_LLC_MISSES] = lines > (double)sim.m->l3_bytes ? 1 - (double)sim.m->l3_bytes / lines : 0;
	sim.ghz = h->core_ghz > 0 ? h->core_ghz : 3.0;
	sim.phase_known = true;
}

/* n accesses happened: each enabled event counts its share of them, as far as it was on a counter meanwhile. */
static void sim_hint_accesses(uint64_t n)
{
	advance();
	for (int i = 0; i < MAX_EVENTS; i++) {
		struct sim_event *e = &sim.ev[i];
		if (!e->used || e->pinned)
			continue;
		uint64_t de = e->enabled_ns - e->noted_enabled, dr = e->running_ns - e->noted_running;
		double per = sim.phase_known ? sim.per_access[kind_of(&e->attr)] : 0;
		if (kind_of(&e->attr) == K_CYCLES)
			per = 0;	/* cycles count by time */
		if (sim.ev[e->leader].enabled && per > 0) {
			double share = de ? (double)dr / (double)de : 1;
			e->truth += per * (double)n;
			e->value += per * (double)n * share;
		}
		e->noted_enabled = e->enabled_ns;
		e->noted_running = e->running_ns;
	}
}

static const struct pmu_backend backend = {
	.name = "simulated",
	.open = sim_open,
	.ioctl = sim_ioctl,
	.read = sim_read,
	.close = sim_close,
	.has_core_pmu = sim_has_core_pmu,
	.hint_phase = sim_hint_phase,
	.hint_accesses = sim_hint_accesses,
};

const struct pmu_backend *simpmu_backend(void)
{
	return &backend;
}

bool simpmu_true_count(int fd, double *count)
{
	struct sim_event *e = find(fd);

	if (!e)
		return false;
	advance();
	*count = e->truth;
	return true;
}

/* A pinned cycles event (the watchdog) or a pinned generic event of another user. */
static void add_pinned(bool cycles)
{
	struct perf_event_attr a = { .size = sizeof(a), .pinned = 1 };

	a.type = cycles ? PERF_TYPE_HARDWARE : PERF_TYPE_RAW;
	a.config = cycles ? PERF_COUNT_HW_CPU_CYCLES : 0x01c4;	/* BR_INST_RETIRED: any generic counter */
	if (new_slot(&a, true) < 0)
		fprintf(stderr, "simpmu: no room for a pinned event\n");
}

int simpmu_configure(const char *spec, char *why, size_t why_len)
{
	char buf[128], *save = NULL;

	for (int i = 0; i < MAX_EVENTS; i++)
		if (sim.ev[i].used)
			close(sim.ev[i].fd);
	memset(&sim, 0, sizeof(sim));
	snprintf(buf, sizeof(buf), "%s", spec ? spec : "");
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		unsigned n;
		if (!sim.m) {
			for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
				if (strcmp(w, models[i].name) == 0)
					sim.m = &models[i];
			if (!sim.m) {
				snprintf(why, why_len, "unknown PMU model '%s'", w);
				return -EINVAL;
			}
		} else if (strcmp(w, "watchdog") == 0) {
			sim.watchdog = true;
		} else if (sscanf(w, "others=%u", &n) == 1 && n <= 8) {
			sim.others = n;
		} else {
			snprintf(why, why_len, "'%s': want watchdog or others=N", w);
			return -EINVAL;
		}
	}
	if (!sim.m) {
		snprintf(why, why_len, "no PMU model given");
		return -EINVAL;
	}
	if (sim.watchdog)
		add_pinned(true);
	for (unsigned k = 0; k < sim.others; k++)
		add_pinned(false);
	simpmu_set_clock(sim.now);
	return 0;
}
