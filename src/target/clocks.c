/* SPDX-License-Identifier: MIT */
/*
 * The command's clock reads: the clock functions found for uprobes (in libc, or in a static program itself), and
 * what the probes saw, judged per thread.
 */
#include "target/clocks.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pmu/elfinfo.h"
#include "stats.h"

static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	char **out = data;
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	if (base && strncmp(base + 1, "libc.so", 7) == 0) {
		*out = (char *)info->dlpi_name;
		return 1;
	}
	return 0;
}

int clocks_libc_path(char *buf, size_t size)
{
	char *path = NULL;

	dl_iterate_phdr(find_libc, &path);
	if (!path)
		return -ENOENT;
	/* The loader's name may hold a symlink; the uprobe is keyed by the file's inode, so either serves. */
	snprintf(buf, size, "%s", path);
	return 0;
}

int clocks_uprobe_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	int type = -1;

	if (!f)
		return -errno;
	if (fscanf(f, "%d", &type) != 1)
		type = -EINVAL;
	fclose(f);
	return type;
}

/* The clock functions among the symbols of the sections of type sh_type (.dynsym, .symtab) not found yet. */
static void scan_symbols(Elf *elf, GElf_Word sh_type, struct clock_probe probes[SAMPLE_CLOCK_FNS])
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != sh_type || !(data = elf_getdata(scn, NULL)) ||
		    !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			int type = GELF_ST_TYPE(sym.st_info);
			const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || (type != STT_FUNC && type != STT_GNU_IFUNC))
				continue;
			for (int k = 0; k < SAMPLE_CLOCK_FNS; k++) {
				uint64_t off;
				if (probes[k].found || strcmp(name, sample_clock_fn_name(k)) != 0 ||
				    elf_vaddr_offset(elf, sym.st_value, 1, &off) != 0)
					continue;
				probes[k] = (struct clock_probe){ .found = true, .ifunc = type == STT_GNU_IFUNC,
								  .offset = off };
			}
		}
	}
}

int clocks_probes(const char *path, struct clock_probe probes[SAMPLE_CLOCK_FNS])
{
	int fd, rc = 0;
	Elf *elf;

	memset(probes, 0, sizeof(*probes) * SAMPLE_CLOCK_FNS);
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		rc = -EINVAL;
	} else {
		scan_symbols(elf, SHT_DYNSYM, probes);
		scan_symbols(elf, SHT_SYMTAB, probes);	/* a static program's (libc keeps none) */
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

bool clocks_static_program(const char *path)
{
	/* Not blocking: the command's path is the user's, and a FIFO there must not hang tlbprof before its exec. */
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : -1;
	struct stat st;
	Elf *elf = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	GElf_Ehdr eh;
	size_t phnum = 0;
	bool interp = false, ok = false;

	if (elf_version(EV_CURRENT) != EV_NONE && elf && elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &eh) &&
	    (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) && elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;
			interp |= gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP;
		}
		/* A shared object has no PT_INTERP either, but no entry point to run from. */
		ok = !interp && eh.e_entry != 0;
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return ok;
}

struct read_at {
	uint64_t t;
	uint64_t from;			/* the window that ends here starts: the read before, or its call's last fault */
	int fn, id;
};

static int read_cmp(const void *x, const void *y)
{
	const struct read_at *a = x, *b = y;

	return a->t < b->t ? -1 : a->t > b->t;
}

/* The resolution of what fn reads: clock_gettime's id, else the function's own granularity. */
static uint64_t resolution_of(int fn, int id, const uint64_t resolution_ns[SAMPLE_CLOCK_IDS], uint64_t tick_ns)
{
	switch (fn) {
	case SAMPLE_CLOCK_GETTIME:
		return id >= 0 && id < SAMPLE_CLOCK_IDS ? resolution_ns[id] : 0;
	case SAMPLE_CLOCK_GETTIMEOFDAY:
		return 1000;		/* microseconds */
	case SAMPLE_CLOCK_TIME:
		return 1000000000;	/* seconds */
	case SAMPLE_CLOCK_CLOCK:	/* CLOCK_PROCESS_CPUTIME_ID, in CLOCKS_PER_SEC units (microseconds) */
		return resolution_ns[2] > 1000000000u / CLOCKS_PER_SEC ? resolution_ns[2] : 1000000000u / CLOCKS_PER_SEC;
	default:
		return tick_ns;		/* times(): sysconf(_SC_CLK_TCK) ticks */
	}
}

/*
 * The upper quartile of each window's time beyond the floor of the SAMPLE_CLOCK_FLOOR_WINDOWS centred on it,
 * gaps[0..n) in time order; work[] is scratch of n. The floor is the neighbourhood's tenth percentile, the
 * probes' traps as they cost at that moment: a neighbourhood, not the whole run, since the traps' cost moves
 * with the host (19 and 24 us here in one run); and not its shortest window, since a few fast traps in 64 (9.9
 * us among 12-14 us ones under load) make every window around them look longer than the traps.
 */
static uint64_t local_work_p75(const uint64_t *gaps, size_t n, uint64_t *work)
{
	const size_t half = SAMPLE_CLOCK_FLOOR_WINDOWS / 2;
	uint64_t near[SAMPLE_CLOCK_FLOOR_WINDOWS + 1];

	for (size_t i = 0; i < n; i++) {
		size_t lo = i > half ? i - half : 0, hi = i + half < n ? i + half : n - 1, m = 0;
		for (size_t j = lo; j <= hi && m < sizeof(near) / sizeof(near[0]); j++)
			near[m++] = gaps[j];
		qsort(near, m, sizeof(*near), stats_cmp_u64);
		uint64_t floor = near[m / 10];
		work[i] = gaps[i] > floor ? gaps[i] - floor : 0;
	}
	qsort(work, n, sizeof(*work), stats_cmp_u64);
	return work[n * 3 / 4];
}

/* A switch or exit, with its place in the order drained: records of one task at one time keep that order. */
struct ordered {
	struct sample_task t;
	size_t seq;
};

/* By task, then time, then the order drained. */
static int ordered_cmp(const void *x, const void *y)
{
	const struct ordered *a = x, *b = y;

	if (a->t.tid != b->t.tid)
		return a->t.tid < b->t.tid ? -1 : 1;
	if (a->t.time_ns != b->t.time_ns)
		return a->t.time_ns < b->t.time_ns ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The records of hot_tid (mine) or of every other task, sorted (ordered_cmp) into *n; NULL when out of memory. */
static struct ordered *tasks_sorted(const struct clocks_switches *sw, uint32_t hot_tid, bool mine, size_t *n)
{
	struct ordered *o = calloc(sw->count ? sw->count : 1, sizeof(*o));

	*n = 0;
	if (!o)
		return NULL;
	for (size_t i = 0; i < sw->count; i++)
		if ((sw->items[i].tid == hot_tid) == mine)
			o[(*n)++] = (struct ordered){ sw->items[i], i };
	qsort(o, *n, sizeof(*o), ordered_cmp);
	return o;
}

/* A spell off a CPU, [from, to): preempted (still runnable) or blocked; or another task's spell on one. */
struct spell {
	uint64_t from, to;
	bool preempted;
	int32_t cpu;			/* the CPU the hot thread left (-1: unknown) */
};

/*
 * The hot thread's spells off a CPU, in time order, from its switches: from a switch out to the next switch in;
 * one still open at the end runs to UINT64_MAX. Returns how many (0, *out NULL: none or no memory; the caller
 * then has no on-CPU figures).
 */
static size_t off_cpu_spells(const struct clocks_switches *sw, uint32_t hot_tid, struct spell **out)
{
	size_t k, n = 0;
	struct ordered *mine = tasks_sorted(sw, hot_tid, true, &k);
	struct spell *spells = calloc(k / 2 + 1, sizeof(*spells));
	bool off = false;
	struct spell cur = { 0 };

	*out = NULL;
	if (!mine || !spells) {
		free(mine);
		free(spells);
		return 0;
	}
	for (size_t i = 0; i < k; i++) {
		const struct sample_task *t = &mine[i].t;
		if (t->kind == SAMPLE_TASK_SWITCH_OUT && !off) {
			off = true;
			cur = (struct spell){ .from = t->time_ns, .preempted = t->preempted, .cpu = t->cpu };
		} else if (t->kind == SAMPLE_TASK_SWITCH_IN && off) {
			off = false;
			cur.to = t->time_ns;
			spells[n++] = cur;
		}
	}
	if (off) {
		cur.to = UINT64_MAX;
		spells[n++] = cur;
	}
	free(mine);
	*out = spells;
	return n;
}

/* The time of [a, b) in the sorted, disjoint spells; *at only moves forward as the queries do. */
static uint64_t spells_within(const struct spell *spells, size_t n, size_t *at, uint64_t a, uint64_t b)
{
	uint64_t in = 0;

	while (*at < n && spells[*at].to <= a)
		(*at)++;
	for (size_t i = *at; i < n && spells[i].from < b; i++) {
		uint64_t lo = spells[i].from > a ? spells[i].from : a, hi = spells[i].to < b ? spells[i].to : b;
		in += hi - lo;
	}
	return in;
}

/* The windows' time on a CPU (reads[0..k) in time order): the longest window's and the span's. */
static void on_cpu_windows(const struct read_at *reads, size_t k, const struct clocks_switches *sw, uint32_t hot_tid,
			   struct sample_clocks *out)
{
	struct spell *spells;
	size_t n = off_cpu_spells(sw, hot_tid, &spells), at = 0;

	if (!spells)
		return;
	out->switches_known = true;
	for (size_t i = 1; i < k; i++) {
		uint64_t on = reads[i].t - reads[i].from - spells_within(spells, n, &at, reads[i].from, reads[i].t);
		out->span_on_cpu_ns += on;
		if (on > out->window_max_on_cpu_ns)
			out->window_max_on_cpu_ns = on;
	}
	free(spells);
}

/* A time a task's spell starts (+1) or ends (-1), on cpu (others_spells() with CPUS_APART; else 0). */
struct edge {
	uint64_t t;
	int step;
	int32_t cpu;
};

static int edge_cmp(const void *x, const void *y)
{
	const struct edge *a = x, *b = y;

	if (a->cpu != b->cpu)
		return a->cpu < b->cpu ? -1 : 1;
	return a->t != b->t ? (a->t < b->t ? -1 : 1) : (a->step > b->step) - (a->step < b->step);
}

/* others_spells()'s cpu for every CPU's spells apart, sorted by CPU, then time. */
#define CPUS_APART (-2)

/*
 * When at least depth tasks of the command but the hot thread were on a CPU (active: on one, or preempted and
 * waiting for one; a task woken and waiting for its first turn is not counted), from theirs[0..k) (tasks_sorted):
 * a task's spell runs from a switch in (or the start, where its first record is a switch out or its exit) to its
 * switch out (active: one that blocked), its exit, or the end; on cpu only (-1: any; CPUS_APART: each CPU's
 * apart, each spell with its CPU, sorted by CPU, then time). Sorted, disjoint spells (of a CPU, with CPUS_APART);
 * returns how many; *out NULL when out of memory.
 */
static size_t others_spells(const struct ordered *theirs, size_t k, bool active, unsigned depth, int32_t cpu,
			    struct spell **out)
{
	struct edge *edges = calloc(2 * k + 2, sizeof(*edges));
	struct spell *on = calloc(k + 1, sizeof(*on));
	size_t n = 0, m = 0;

	*out = NULL;
	if (!edges || !on) {
		free(edges);
		free(on);
		return 0;
	}
	bool open = false, apart = cpu == CPUS_APART;
	uint64_t from = 0;
	int32_t on_cpu = -1;
	for (size_t i = 0; i < k; i++) {
		const struct sample_task *t = &theirs[i].t;
		if (!i || theirs[i - 1].t.tid != t->tid) {	/* a task whose first switch is out ran from the start */
			open = t->kind == SAMPLE_TASK_SWITCH_OUT || t->kind == SAMPLE_TASK_EXIT;
			from = 0;
			on_cpu = t->cpu;
		}
		if (t->kind == SAMPLE_TASK_SWITCH_IN && !open) {
			open = true;
			from = t->time_ns;
			on_cpu = t->cpu;
		} else if (open && ((t->kind == SAMPLE_TASK_SWITCH_OUT && !(active && t->preempted)) ||
				    t->kind == SAMPLE_TASK_EXIT)) {	/* an exit: its last switch out is not recorded */
			if ((cpu < 0 || on_cpu == cpu) && from < t->time_ns) {	/* an empty spell: no edges */
				edges[n++] = (struct edge){ from, 1, apart ? on_cpu : 0 };
				edges[n++] = (struct edge){ t->time_ns, -1, apart ? on_cpu : 0 };
			}
			open = false;
		}
		if (open && (i + 1 == k || theirs[i + 1].t.tid != t->tid)) {	/* still open at the end */
			if (cpu < 0 || on_cpu == cpu) {
				edges[n++] = (struct edge){ from, 1, apart ? on_cpu : 0 };
				edges[n++] = (struct edge){ UINT64_MAX, -1, apart ? on_cpu : 0 };
			}
			open = false;
		}
	}
	/* Ends before starts at one time: a task's spells that touch do not count it twice. */
	qsort(edges, n, sizeof(*edges), edge_cmp);
	unsigned level = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned before = level;
		level = (unsigned)((int)level + edges[i].step);
		if (before < depth && level >= depth) {
			on[m].from = edges[i].t;
			on[m].cpu = edges[i].cpu;
		} else if (before >= depth && level < depth && edges[i].t > on[m].from) {
			on[m++].to = edges[i].t;
		}
	}
	free(edges);
	*out = on;
	return m;
}

/* One CPU's spells among others_spells(CPUS_APART)'s, and a cursor into them that moves as the queries do. */
struct cpu_spells {
	int32_t cpu;
	size_t lo, n, at;
};

/*
 * The hot thread's preempted time in the measured windows (pieces[0..n), sorted, disjoint) that another task of the
 * command ran in its place: on the CPU it left, where the switches say their CPU; else while as many others ran as
 * the command may use CPUs. False when out of memory.
 */
static bool preempted_own(const struct clocks_switches *sw, const struct ordered *theirs, size_t k,
			  const struct spell *pieces, size_t n, uint64_t *own)
{
	struct spell *apart, *any = NULL;
	size_t n_apart = others_spells(theirs, k, false, 1, CPUS_APART, &apart), n_any = 0, at_any = 0, n_cpus = 0;
	struct cpu_spells *cpus = calloc(n_apart + 1, sizeof(*cpus));
	bool unknown = false, ok = apart && cpus;

	for (size_t i = 0; i < n; i++)
		unknown |= pieces[i].cpu < 0;
	if (ok && unknown) {	/* no CPU said: as many others running as the command may use CPUs */
		n_any = others_spells(theirs, k, false, sw->cpus ? sw->cpus : 1, -1, &any);
		ok = any != NULL;
	}
	for (size_t i = 0; ok && i < n_apart; i++) {
		if (!n_cpus || cpus[n_cpus - 1].cpu != apart[i].cpu)
			cpus[n_cpus++] = (struct cpu_spells){ apart[i].cpu, i, 0, 0 };
		cpus[n_cpus - 1].n++;
	}
	for (size_t i = 0; ok && i < n; i++) {
		if (pieces[i].cpu < 0) {
			*own += spells_within(any, n_any, &at_any, pieces[i].from, pieces[i].to);
			continue;
		}
		size_t lo = 0, hi = n_cpus;	/* the piece's CPU among cpus[], sorted by CPU */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (cpus[mid].cpu < pieces[i].cpu)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n_cpus && cpus[lo].cpu == pieces[i].cpu)
			*own += spells_within(apart + cpus[lo].lo, cpus[lo].n, &cpus[lo].at, pieces[i].from, pieces[i].to);
	}
	free(apart);
	free(any);
	free(cpus);
	return ok;
}

/* The waits in the measured windows [reads[w], reads[w + 1]) (struct sample_clocks, waits_known). */
static void measured_waits(const uint64_t *reads, size_t k, const bool *measured, const struct clocks_switches *sw,
			   uint32_t hot_tid, struct sample_clocks *out)
{
	struct spell *off = NULL, *active = NULL, *pieces = NULL;
	size_t n_theirs = 0, n_off = 0, n_active = 0, at = 0, at_active = 0, n_pieces = 0;
	uint64_t span = 0, blocked = 0, idle = 0, preempted = 0, own = 0;
	struct ordered *theirs = sw->preempt_marked ? tasks_sorted(sw, hot_tid, false, &n_theirs) : NULL;

	if (theirs) {	/* before Linux 4.17 a preemption reads as a block: nothing here is known */
		n_off = off_cpu_spells(sw, hot_tid, &off);
		n_active = others_spells(theirs, n_theirs, true, 1, -1, &active);
		pieces = calloc(n_off + k + 1, sizeof(*pieces));	/* a spell, cut at each window it crosses */
	}
	if (off && active && pieces) {
		for (size_t w = 0; w + 1 < k; w++) {
			if (!measured[w])
				continue;
			uint64_t a = reads[w], b = reads[w + 1];
			span += b - a;
			while (at < n_off && off[at].to <= a)
				at++;
			for (size_t i = at; i < n_off && off[i].from < b; i++) {
				uint64_t lo = off[i].from > a ? off[i].from : a, hi = off[i].to < b ? off[i].to : b;
				if (off[i].preempted) {
					preempted += hi - lo;
					pieces[n_pieces++] = (struct spell){ lo, hi, true, off[i].cpu };
				} else {
					blocked += hi - lo;
					idle += hi - lo - spells_within(active, n_active, &at_active, lo, hi);
				}
			}
		}
		if (preempted_own(sw, theirs, n_theirs, pieces, n_pieces, &own)) {
			out->waits_known = true;
			out->command_cpus = sw->cpus;
			out->measured_span_ns = span;
			out->measured_blocked_ns = blocked;
			out->measured_idle_ns = idle;
			out->measured_preempted_ns = preempted;
			out->measured_preempted_own_ns = own;
		}
	}
	free(theirs);
	free(off);
	free(active);
	free(pieces);
}

void clocks_profile(const struct sample_list lists[SAMPLE_CLOCK_FNS], uint32_t hot_tid,
		    const uint64_t resolution_ns[SAMPLE_CLOCK_IDS], uint64_t tick_ns, const struct clocks_switches *sw,
		    const struct clocks_own *own, struct sample_clocks *out)
{
	size_t n = 0, k = 0;

	for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++)
		n += lists[fn].count;
	memcpy(out->id_resolution_ns, resolution_ns, sizeof(out->id_resolution_ns));
	out->coarsest_id = -1;
	out->coarsest_fn = -1;
	struct read_at *reads = calloc(n ? n : 1, sizeof(*reads));
	uint64_t *gaps = calloc(n ? n : 1, sizeof(*gaps)), *work = calloc(n ? n : 1, sizeof(*work));
	if (!reads || !gaps || !work) {
		free(reads);
		free(gaps);
		free(work);
		return;
	}
	for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++)
		for (size_t i = 0; i < lists[fn].count; i++) {
			const struct sample_record *r = &lists[fn].items[i];
			if (r->tid != hot_tid)
				continue;
			int id = clocks_read_id(fn, r);
			if (id >= 0)
				out->id_calls[id]++;
			reads[k++] = (struct read_at){ r->time_ns, fn, id };
			uint64_t res = resolution_of(fn, id, resolution_ns, tick_ns);
			if (res > out->coarsest_ns) {
				out->coarsest_ns = res;
				out->coarsest_id = id;
				out->coarsest_fn = fn;
			}
		}
	qsort(reads, k, sizeof(*reads), read_cmp);
	out->hot_reads = k;
	/* Each window from its read, or from the last fault of that read's own call in it (struct clocks_own). */
	for (size_t i = 1, o = 0; i < k; i++) {
		reads[i].from = reads[i - 1].t;
		for (; own && o < own->count && own->t[o] < reads[i].t; o++) {
			if (own->t[o] < reads[i - 1].t)
				continue;
			out->window_call_faults++;
			reads[i].from = own->t[o];
		}
		out->window_call_ns += reads[i].from - reads[i - 1].t;
		gaps[i - 1] = reads[i].t - reads[i].from;
	}
	out->windows = k > 1 ? k - 1 : 0;
	if (out->windows) {
		out->window_work_p75_ns = local_work_p75(gaps, out->windows, work);
		if (sw)
			on_cpu_windows(reads, k, sw, hot_tid, out);
		qsort(gaps, out->windows, sizeof(*gaps), stats_cmp_u64);
		out->window_min_ns = gaps[0];
		out->window_median_ns = gaps[out->windows / 2];
		out->window_max_ns = gaps[out->windows - 1];
		out->window_p90_ns = gaps[out->windows * 9 / 10 < out->windows ? out->windows * 9 / 10 : out->windows - 1];
		out->first_read_ns = reads[0].t;
		out->last_read_ns = reads[k - 1].t;
		out->span_ns = out->last_read_ns - out->first_read_ns;
		out->reads_per_s = out->span_ns ? (double)(k - 1) * 1e9 / (double)out->span_ns : 0;
	}
	free(reads);
	free(gaps);
	free(work);
}

/* Windows by their marks' weight, the heaviest first. */
static int weight_desc(const void *x, const void *y)
{
	uint64_t a = ((const uint64_t *)x)[0], b = ((const uint64_t *)y)[0];

	return a > b ? -1 : a < b;
}

/*
 * The length of the measured window that holds the hot loop's median weight (by[] holds each window's weight and
 * index; those the loop only faulted in weigh nothing): where the loop's time went, a whole loop's one long window
 * rather than a runtime's many short ones that its generated code also ran in (a JVM's interpreter is in the same
 * anonymous memory as its compiled loop). The plain median where none weighs anything; 0 without a window.
 */
static uint64_t weighted_median_window(const uint64_t *reads, size_t k, const uint64_t (*by)[2], const bool *measured)
{
	uint64_t(*lw)[2] = malloc((k ? k : 1) * sizeof(*lw)), total = 0, sum = 0, median = 0;
	size_t m = 0;

	if (!lw)
		return 0;
	for (size_t i = 0; i < k; i++) {
		size_t w = (size_t)by[i][1];
		if (w + 1 < k && measured[w]) {
			lw[m][0] = reads[w + 1] - reads[w];
			lw[m++][1] = by[i][0];
			total += by[i][0];
		}
	}
	qsort(lw, m, sizeof(*lw), stats_cmp_u64);	/* by length, each pair's first */
	for (size_t i = 0; i < m && !median; i++) {
		sum += lw[i][1];
		if (total ? 2 * sum >= total : i == m / 2)
			median = lw[i][0];
	}
	free(lw);
	return median;
}

bool clocks_measured(const struct sample_list lists[SAMPLE_CLOCK_FNS], uint32_t hot_tid, uint32_t hot_pid,
		     const struct clocks_mark *marks, size_t n_marks, const struct sample_list *faults, uint64_t lo,
		     uint64_t hi, const struct clocks_switches *sw, struct sample_clocks *out)
{
	size_t n = 0, k = 0;

	for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++)
		n += lists[fn].count;
	struct read_at *at = malloc((n ? n : 1) * sizeof(*at));
	uint64_t *reads = malloc((n ? n : 1) * sizeof(*reads));
	unsigned *keys = malloc((n ? n : 1) * sizeof(*keys));
	uint64_t(*by)[2] = calloc(n ? n : 1, sizeof(*by));	/* per window: its marks' weight, its index */
	bool *measured = calloc(n ? n : 1, sizeof(*measured)), *faulted = calloc(n ? n : 1, sizeof(*faulted));
	bool *gap = calloc(n ? n : 1, sizeof(*gap));
	size_t *win = malloc((n_marks ? n_marks : 1) * sizeof(*win));	/* each mark's window; k: none */
	bool ok = at && reads && keys && by && measured && faulted && gap && win;
	for (int fn = 0; ok && fn < SAMPLE_CLOCK_FNS; fn++)
		for (size_t i = 0; i < lists[fn].count; i++)
			if (lists[fn].items[i].tid == hot_tid)
				at[k++] = (struct read_at){ lists[fn].items[i].time_ns, 0, fn,
							    clocks_read_id(fn, &lists[fn].items[i]) };
	if (ok) {
		qsort(at, k, sizeof(*at), read_cmp);
		for (size_t i = 0; i < k; i++) {
			reads[i] = at[i].t;
			keys[i] = CLOCKS_KEY(at[i].fn, at[i].id);
		}
		for (size_t i = 0; i < n_marks; i++)
			win[i] = clocks_window_of(reads, k, marks[i].t);
		ok = clocks_pairs(keys, reads, k, marks, win, n_marks, gap, out);
	}
	free(at);
	free(keys);
	if (!ok) {
		free(reads);
		free(by);
		free(measured);
		free(faulted);
		free(gap);
		free(win);
		return false;
	}
	uint64_t total = 0;
	for (size_t w = 0; w < k; w++)
		by[w][1] = w;
	for (size_t i = 0; k && i < n_marks; i++) {
		out->loop_weight += marks[i].weight;
		out->loop_weight_in_span += marks[i].t >= reads[0] && marks[i].t <= reads[k - 1] ? marks[i].weight : 0;
	}
	/* A window in a gap of a timer's pairs is not one the hot loop ran in, whatever ran there. */
	for (size_t i = 0, w; i < n_marks; i++) {
		if ((w = win[i]) >= k || gap[w])
			continue;
		by[w][0] += marks[i].weight;
		total += marks[i].weight;
		measured[w] |= marks[i].weight == 0;	/* the hot loop took a fault there */
	}
	qsort(by, k, sizeof(*by), weight_desc);
	for (size_t i = 0, sum = 0; i < k && by[i][0] && (double)sum < CLOCKS_MEASURED_SHARE * (double)total; i++) {
		sum += by[i][0];
		measured[by[i][1]] = true;
	}
	for (size_t w = 0; w + 1 < k; w++)
		out->measured_windows += measured[w];
	for (size_t i = 0, w = 0; faults && i < faults->count; i++) {
		const struct sample_record *r = &faults->items[i];
		bool in = r->pid == hot_pid && r->addr >= lo && r->addr < hi &&
			  (w = clocks_window_of(reads, k, r->time_ns)) < k, timed = in && measured[w];
		out->region_faults_in_gaps += in && gap[w];
		out->region_faults_measured += timed;
		if (timed)
			faulted[w] = true;
	}
	for (size_t w = 0; w + 1 < k; w++)
		out->measured_windows_faulted += measured[w] && faulted[w];
	out->measured_window_median_ns = weighted_median_window(reads, k, by, measured);
	out->measured_known = out->faulted_known = true;
	if (sw)
		measured_waits(reads, k, measured, sw, hot_tid, out);
	free(reads);
	free(by);
	free(measured);
	free(faulted);
	free(gap);
	free(win);
	return true;
}

/* Whether time t lies between the hot thread's first and last read. */
static bool between_reads(uint64_t t, const struct sample_clocks *c)
{
	return c->windows && t >= c->first_read_ns && t <= c->last_read_ns;
}

/* Whether a sample of thread tid (process pid where tid is 0) lies between the hot thread's first and last read;
 * counts it in *all either way. */
static bool in_span(const struct sample_record *r, uint32_t tid, uint32_t pid, const struct sample_clocks *c,
		    uint64_t *all)
{
	if (tid ? r->tid != tid : r->pid != pid)
		return false;
	(*all)++;
	return between_reads(r->time_ns, c);
}

void clocks_span(const struct sample_list *cpu, const struct sample_list *faults, uint64_t lo, uint64_t hi,
		 uint32_t hot_tid, uint32_t hot_pid, struct sample_clocks *out)
{
	/* Each thread's sample before, for the moves of the process's threads: at most CLOCKS_MOVE_THREADS of them. */
	struct {
		uint32_t tid;
		int32_t cpu;
		bool in;
	} last[CLOCKS_MOVE_THREADS];
	size_t n_last = 0;

	out->others_known = cpu != NULL;
	for (size_t i = 0; cpu && i < cpu->count; i++) {
		const struct sample_record *r = &cpu->items[i];
		bool in = in_span(r, hot_tid, 0, out, &out->hot_samples);
		out->hot_samples_in_span += in;
		out->hot_kernel_in_span += in && r->ip >= SAMPLE_KERNEL_HALF;
		out->others_in_span += r->pid == hot_pid && r->tid != hot_tid && between_reads(r->time_ns, out);
		if (r->pid != hot_pid || r->cpu < 0)
			continue;
		out->cpus_known = true;
		in = between_reads(r->time_ns, out);
		size_t k = 0;
		while (k < n_last && last[k].tid != r->tid)
			k++;
		if (k == n_last && n_last == CLOCKS_MOVE_THREADS)
			continue;
		if (k < n_last && last[k].cpu != r->cpu) {
			out->cpu_moves++;
			out->cpu_moves_in_span += in && last[k].in;
		}
		if (k == n_last)
			n_last++;
		last[k].tid = r->tid;
		last[k].cpu = r->cpu;
		last[k].in = in;
	}
	for (size_t i = 0; faults && i < faults->count; i++) {
		const struct sample_record *r = &faults->items[i];
		if (r->addr >= lo && r->addr < hi)
			out->region_faults_in_span += in_span(r, 0, hot_pid, out, &out->region_faults);
	}
}
