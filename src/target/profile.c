/* SPDX-License-Identifier: MIT */
/* tlbprof run: the profile of a watched command: cpu-clock shares and hot loop, the fault pattern, regions, affinity. */
#include "target/watch.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmu/symbols.h"
#include "pmu/symbols_jit.h"
#include "stats.h"
#include "target/code.h"

/* The hot loop is the smallest IP range of the hot function that holds this share of its samples... */
#define HOT_LOOP_SHARE 0.9
/* ...widened by this on each side: a timer interrupt lands next to the stalled load, not on it. */
#define HOT_LOOP_SLACK_BYTES 16
#define PAGE_BYTES 4096ull
/* Fewer samples than this (of 250 us) in a process's own code do not locate a loop there: 5 ms of CPU time. */
#define HOT_LOOP_MIN_SAMPLES 20

enum where { WHERE_OWN, WHERE_VDSO, WHERE_KERNEL, WHERE_LIBS, WHERE_UNKNOWN };

struct clock_hit {
	const char *object, *function;	/* interned by the clock session's symbolizer */
	bool unnamed;			/* function is an unwind entry's range, not a symbol */
	const struct sample_record *r;
	enum where where;
};

static int hit_cmp(const void *x, const void *y)
{
	const struct clock_hit *a = x, *b = y;

	if (a->object != b->object)
		return (uintptr_t)a->object < (uintptr_t)b->object ? -1 : 1;
	if (a->function != b->function)
		return (uintptr_t)a->function < (uintptr_t)b->function ? -1 : 1;
	return 0;
}

/* The image process pid ran last: the command's (its last exec), or one it started; "" when not followed. */
static const char *exe_of(const struct target_watch *w, uint32_t pid)
{
	const struct watch_proc *pr = watch_proc_find(w, (pid_t)pid);

	return pr ? pr->exe : "";
}

static enum where classify(const struct symbols_location *loc, uint64_t ip, const char *exe)
{
	if (ip >= SAMPLE_KERNEL_HALF || strcmp(loc->object, SYMBOLS_KERNEL) == 0)
		return WHERE_KERNEL;
	if (strcmp(loc->object, "[vdso]") == 0)
		return WHERE_VDSO;
	if (*exe && strcmp(loc->object, exe) == 0)
		return WHERE_OWN;
	return loc->object[0] == '/' ? WHERE_LIBS : WHERE_UNKNOWN;
}

/* The smallest range of sorted ips[0..n-1] that holds HOT_LOOP_SHARE of them. */
static void hot_range(const uint64_t *ips, size_t n, uint64_t *lo, uint64_t *hi)
{
	size_t k = (size_t)((double)n * HOT_LOOP_SHARE + 0.999);
	size_t best = 0;

	if (k < 1)
		k = 1;
	for (size_t i = 0; i + k <= n; i++)
		if (ips[i + k - 1] - ips[i] < ips[best + k - 1] - ips[best])
			best = i;
	*lo = ips[best] - HOT_LOOP_SLACK_BYTES;
	*hi = ips[best + k - 1] + HOT_LOOP_SLACK_BYTES;
}

/*
 * The hot thread's samples against its Cpus_allowed_list observations (each holds between the polls that saw
 * it), from its first sample in the hot function on (all of them without one): the loader and the C runtime's
 * start, before the program's own code runs, are not the measurement.
 */
static void affinity_profile(const struct target_watch *w, const struct clock_hit *hits, size_t n,
			     const struct clock_hit *hot_group, struct sample_profile *p)
{
	const struct watch_affinity *first = NULL, *last = NULL;
	uint64_t from = UINT64_MAX;

	for (size_t j = 0; j < n; j++) {
		const struct sample_record *r = hits[j].r;
		if (r->tid == p->hot_tid && (!hot_group || hit_cmp(&hits[j], hot_group) == 0) && r->time_ns < from)
			from = r->time_ns;
	}
	for (size_t i = 0; i < w->n_aff; i++)
		if (w->aff[i].tid == p->hot_tid) {
			if (!first)
				first = &w->aff[i];
			last = &w->aff[i];
		}
	if (first) {
		p->cpus_allowed_first = first->cpus;
		p->cpus_allowed_last = last->cpus;
	}
	for (size_t j = 0; j < n; j++) {
		if (hits[j].r->tid != p->hot_tid || hits[j].r->time_ns < from)
			continue;
		p->affinity_hot++;
		/*
		 * The mask a poll saw holds from that poll to the last poll that saw it
		 * again (the command's exit is the last for its leader thread: see
		 * target_watch_exiting). A sample before the first poll, after the
		 * last, or between the last poll of one mask and the first of the
		 * next is not counted: the mask may have changed there unseen (a
		 * benchmark that pins itself after the first poll).
		 */
		uint64_t t = hits[j].r->time_ns;
		const struct watch_affinity *mask = NULL;
		for (size_t i = 0; i < w->n_aff && !mask; i++)
			if (w->aff[i].tid == p->hot_tid && t >= w->aff[i].t_first && t <= w->aff[i].t_last)
				mask = &w->aff[i];
		if (!mask)
			continue;
		p->affinity_samples++;
		p->affinity_single += mask->cpus == 1;
	}
}

/*
 * "OBJECT:FUNCTION" (or FUNCTION, object "") into a field of the profile: a
 * C++ template's name, demangled, can outgrow it, and is then cut with "..."
 * to say so rather than silently (the watch matches the whole name).
 */
static void shown_name(char *out, size_t len, const char *object, const char *function)
{
	int n = snprintf(out, len, "%s%s%s", object, *object ? ":" : "", function);

	if (n >= 0 && (size_t)n >= len && len > 4)
		memcpy(out + len - 4, "...", 4);
}

/*
 * The hot loop's machine code, in the executable's own addresses: from the
 * samples at its ends (hot_lo and hot_hi less the slack), widened by the
 * slack again but not before the function's start.
 */
static void loop_code(struct target_watch *w, struct sample_profile *p)
{
	struct symbols_location first, last;
	uint64_t gap_lo, gap_hi;

	if (p->hot_jit) {
		snprintf(p->code.error, sizeof(p->code.error), "the hot loop is code compiled at run time, in %.40s: no "
			 "file holds its bytes, and they went with the process", p->hot_library);
		return;
	}
	symbols_resolve(w->clock.syms, (pid_t)p->hot_pid, p->hot_lo + HOT_LOOP_SLACK_BYTES, &first);
	symbols_resolve(w->clock.syms, (pid_t)p->hot_pid, p->hot_hi - HOT_LOOP_SLACK_BYTES, &last);
	if (!first.resolved && !last.resolved && first.elf_addr && first.object == last.object &&
	    symbols_gap(w->clock.syms, (pid_t)p->hot_pid, p->hot_lo + HOT_LOOP_SLACK_BYTES, &gap_lo, &gap_hi) &&
	    last.elf_addr < gap_hi) {
		/*
		 * Code no symbol or unwind entry covers has no known start: decode from the loop's lowest sample, an
		 * instruction's first byte (a timer interrupt stops between instructions), not from a guess that
		 * could cut one, and not past the covered code above it.
		 */
		uint64_t hi = last.elf_addr + HOT_LOOP_SLACK_BYTES < gap_hi ? last.elf_addr + HOT_LOOP_SLACK_BYTES : gap_hi;
		(void)code_read(first.object, first.elf_addr, first.elf_addr, hi, &p->code);
		/* Its jump back, to a first instruction no sample fell on, is a start known to be one too. */
		uint64_t head = p->code.loop_head;
		if (p->code.decoded && head >= gap_lo && head < first.elf_addr)
			(void)code_read(first.object, head, head, hi, &p->code);
		return;
	}
	if (!first.resolved || !last.resolved || !first.elf_addr || first.function != last.function ||
	    first.object != last.object) {
		snprintf(p->code.error, sizeof(p->code.error), "the hot loop's ends did not resolve to one function of "
			 "the executable, nor to one stretch of code between its functions");
		return;
	}
	uint64_t start = first.elf_addr - first.offset;
	uint64_t lo = first.elf_addr - start < HOT_LOOP_SLACK_BYTES ? start : first.elf_addr - HOT_LOOP_SLACK_BYTES;
	(void)code_read(first.object, start, lo, last.elf_addr + HOT_LOOP_SLACK_BYTES, &p->code);
}

/* The value most often in sorted v[0..n) (the first of a tie) and, in *count, how often; 0 and 0 when n is 0. */
static uint64_t most_common(const uint64_t *v, size_t n, size_t *count)
{
	size_t run = 0;
	uint64_t value = 0;

	*count = 0;
	for (size_t i = 0; i < n; i++) {
		run = i > 0 && v[i] == v[i - 1] ? run + 1 : 1;
		if (run > *count) {
			*count = run;
			value = v[i];
		}
	}
	return value;
}

/*
 * The process with the most samples in user space (its own code and its libraries), 0 when none: the
 * benchmark, not the shell or version manager's shim that started it, whose own code the benchmark's may
 * not outweigh where it lives in shared libraries. tmp holds n values.
 */
static uint32_t busiest_process(const struct clock_hit *hits, size_t n, uint64_t *tmp)
{
	size_t m = 0, count;

	for (size_t i = 0; i < n; i++)
		if (hits[i].where == WHERE_OWN || hits[i].where == WHERE_LIBS)
			tmp[m++] = hits[i].r->pid;
	qsort(tmp, m, sizeof(*tmp), stats_cmp_u64);
	return (uint32_t)most_common(tmp, m, &count);
}

/*
 * The times the hot thread's process ran the hot function, from the cpu-clock samples of any of its threads there
 * (into w->hot_marks): a parallel loop's workers run it inside the windows of the thread that times it, which may
 * hold none of its samples (watch_hot_thread()). A slow-rate sample's spread copies (watch_clock_resample(): just
 * before it in the list) add to its weight at its own time: their times are guesses over the 10 ms before it, and
 * fell before the read that started the timing (python3.11: up to 8 ms of its timed loop's samples before its
 * perf_counter()).
 */
static void mark_hot(struct target_watch *w, const struct clock_hit *hits, size_t n, const struct clock_hit *hot_group,
		     uint32_t hot_pid)
{
	uint32_t copies = 0;

	free(w->hot_marks);
	w->n_hot_marks = 0;
	w->hot_marks = hot_group ? malloc((n ? n : 1) * sizeof(*w->hot_marks)) : NULL;
	for (size_t i = 0; i < n && w->hot_marks; i++) {
		if (hits[i].r->spread) {
			copies++;
			continue;
		}
		if (hits[i].r->pid == hot_pid && hit_cmp(&hits[i], hot_group) == 0)
			w->hot_marks[w->n_hot_marks++] = (struct clocks_mark){ hits[i].r->time_ns, copies + 1,
										 hits[i].r->ip };
		copies = 0;
	}
}

/* A thread that the clock probes saw read a clock, and its first and last read. */
struct reader {
	uint32_t tid, pid;
	uint64_t first, last;
};

static int reader_cmp(const void *x, const void *y)
{
	const struct reader *a = x, *b = y;

	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* The threads that read a clock, sorted by tid and unique, with their read spans, into *out (n of them); -ENOMEM. */
static int clock_readers(const struct target_watch *w, struct reader **out, size_t *n)
{
	size_t all = 0, k = 0;
	struct reader *r;

	for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++)
		all += w->clockfn[fn].samples.count;
	*n = 0;
	if (!(*out = r = malloc((all ? all : 1) * sizeof(*r))))
		return -ENOMEM;
	for (int fn = 0; fn < SAMPLE_CLOCK_FNS; fn++)
		for (size_t i = 0; i < w->clockfn[fn].samples.count; i++) {
			const struct sample_record *x = &w->clockfn[fn].samples.items[i];
			r[k++] = (struct reader){ x->tid, x->pid, x->time_ns, x->time_ns };
		}
	qsort(r, k, sizeof(*r), reader_cmp);
	for (size_t i = 0; i < k; i++) {
		if (*n && r[*n - 1].tid == r[i].tid) {
			r[*n - 1].first = r[i].first < r[*n - 1].first ? r[i].first : r[*n - 1].first;
			r[*n - 1].last = r[i].last > r[*n - 1].last ? r[i].last : r[*n - 1].last;
		} else {
			r[(*n)++] = r[i];
		}
	}
	return 0;
}

/* Whether time t lies between rd's first and last read (rd NULL: no reads, never). */
static bool reads_bracket(const struct reader *rd, uint64_t t)
{
	return rd && t >= rd->first && t <= rd->last;
}

static const struct reader *reader_of(uint32_t tid, const struct reader *readers, size_t n_readers)
{
	const struct reader key = { .tid = tid };

	return n_readers ? bsearch(&key, readers, n_readers, sizeof(*readers), reader_cmp) : NULL;
}

static int share_key_cmp(const void *x, const void *y)
{
	const struct watch_thread_hits *a = x, *b = y;

	return a->key < b->key ? -1 : a->key > b->key;
}

/*
 * Each thread's share of times[0..n_times) (the heaviest thread's samples in the hot function) that lie between
 * its first and last clock read, into t[k].bracketed.
 */
static void bracket_heaviest(struct watch_thread_hits *t, size_t m, const struct reader *readers, size_t n_readers,
			     const uint64_t *times, size_t n_times)
{
	for (size_t k = 0; k < m; k++) {
		const struct reader *rd = reader_of((uint32_t)(t[k].key >> 32), readers, n_readers);
		size_t in = 0;
		for (size_t i = 0; rd && i < n_times; i++)
			in += reads_bracket(rd, times[i]);
		t[k].bracketed = n_times ? (double)in / (double)n_times : 0;
	}
}

/*
 * The hot thread's key ((tid << 32) | pid) from the samples in the hot function (keys[0..n), sorted; hits for
 * which of them the kernel took, not spread copies, whose times are real where a copy's are guesses), and the
 * threads of the heaviest one's process that read a clock and ran none of them; 0 when none.
 */
static uint64_t choose_hot_thread(const struct target_watch *w, const uint64_t *keys, size_t n,
				  const struct clock_hit *hits, size_t n_hits, const struct clock_hit *hot_group)
{
	struct reader *readers = NULL;
	size_t n_readers = 0, m = 0, n_times = 0;
	uint64_t key;

	if (clock_readers(w, &readers, &n_readers) != 0)
		return most_common(keys, n, &m);	/* out of memory: the busiest, as without probes */
	struct watch_thread_hits *tmp = malloc((n + n_readers + 1) * sizeof(*tmp));
	uint64_t *times = malloc((n ? n : 1) * sizeof(*times));	/* the heaviest's taken samples: at most n */
	if (!tmp || !times) {
		free(readers);
		free(tmp);
		free(times);
		return most_common(keys, n, &m);
	}
	const struct watch_thread_hits *heaviest = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!m || tmp[m - 1].key != keys[i])
			tmp[m++] = (struct watch_thread_hits){ keys[i], 0, 0,
							       reader_of((uint32_t)(keys[i] >> 32), readers, n_readers),
							       0 };
		tmp[m - 1].weight++;
	}
	for (size_t i = 0; i < m; i++)
		if (!heaviest || tmp[i].weight > heaviest->weight)
			heaviest = &tmp[i];
	for (size_t i = 0; i < n_hits; i++) {
		if (hits[i].r->spread || (hot_group && hit_cmp(&hits[i], hot_group) != 0))
			continue;
		struct watch_thread_hits k = { .key = ((uint64_t)hits[i].r->tid << 32) | hits[i].r->pid };
		struct watch_thread_hits *t = bsearch(&k, tmp, m, sizeof(*tmp), share_key_cmp);
		if (t)
			t->taken++;
		if (t && t == heaviest)
			times[n_times++] = hits[i].r->time_ns;
	}
	/* The readers that ran none of the hot function's samples: a master whose share fell between samples. */
	size_t with_samples = m;
	for (size_t i = 0; i < n_readers; i++) {
		struct watch_thread_hits k = { .key = ((uint64_t)readers[i].tid << 32) | readers[i].pid };
		if (!bsearch(&k, tmp, with_samples, sizeof(*tmp), share_key_cmp))
			tmp[m++] = (struct watch_thread_hits){ k.key, 0, 0, true, 0 };
	}
	bracket_heaviest(tmp, m, readers, n_readers, times, n_times);
	key = watch_hot_thread(tmp, m);
	free(readers);
	free(tmp);
	free(times);
	return key;
}

uint64_t watch_hot_thread(const struct watch_thread_hits *t, size_t n)
{
	const struct watch_thread_hits *best = NULL, *timing = NULL;

	for (size_t i = 0; i < n; i++)
		if (!best || t[i].weight > best->weight)
			best = &t[i];
	if (!best || best->reads || !best->weight)
		return best && best->weight ? best->key : 0;
	for (size_t i = 0; i < n; i++) {
		if (!t[i].reads || (uint32_t)t[i].key != (uint32_t)best->key)
			continue;
		/* Under a quarter only where the samples the kernel took say so, two standard errors of the log ratio. */
		bool share = t[i].taken && t[i].weight && best->taken &&
			     log((double)t[i].weight / (double)best->weight) >=
				     log(0.25) - 2 * sqrt(1.0 / (double)t[i].taken + 1.0 / (double)best->taken);
		if ((share || t[i].bracketed >= WATCH_HOT_BRACKETED) &&
		    (!timing || t[i].weight > timing->weight ||
		     (t[i].weight == timing->weight && t[i].bracketed > timing->bracketed)))
			timing = &t[i];
	}
	return (timing ? timing : best)->key;
}

/*
 * The top functions into p->hot, and the hot function's group of sorted[0..n) (hits[0..n) in sample order): the
 * busiest process's hottest of its own code, or of its busiest library where its own code had too few samples to
 * locate a loop (hot_library), or its code compiled at run time where that had more than either (hot_jit). NULL
 * when none.
 */
static const struct clock_hit *rank_groups(struct target_watch *w, const struct clock_hit *sorted,
					   const struct clock_hit *hits, size_t n, uint32_t busiest, struct sample_profile *p)
{
	const struct clock_hit *hot_group = NULL, *hot_lib = NULL, *jit = NULL;
	uint64_t own_in = 0, lib_in = 0, lib_object_in = 0, jit_in = 0, jit_count = 0;
	struct lib_run {
		const char *object;
		uint64_t in, best_in;
		const struct clock_hit *best;
	} lib_run = { 0 };
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t in = 0;
		for (j = i; j < n && hit_cmp(&sorted[i], &sorted[j]) == 0; j++)
			in += sorted[j].r->pid == busiest;
		uint64_t count = j - i;
		/*
		 * The hot function is the busiest process's. The program's own code no symbol or unwind entry covers
		 * counts too: hand-written assembly without CFI directives in a stripped executable (likwid-bench's
		 * kernels) is where such a benchmark spends its time, and leaving it out named a function of a few
		 * samples (its initialisation) the hot loop.
		 */
		if (sorted[i].where == WHERE_OWN && in > own_in) {
			own_in = in;
			hot_group = &sorted[i];
			p->hot_exe_count = count;
		}
		/*
		 * A library's hot function is the busiest library's (its samples in all, in the busiest process): an
		 * interpreter's time spreads over many functions of libpython, where one memset of libc can hold more
		 * than any one of them. Groups of one object are contiguous, sorted.
		 */
		if (symbols_jit_memory(sorted[i].object) && in > jit_in) {
			jit_in = in;
			jit = &sorted[i];
			jit_count = count;
		}
		if (sorted[i].where == WHERE_LIBS && !symbols_jit_memory(sorted[i].object)) {
			if (sorted[i].object != lib_run.object)
				lib_run = (struct lib_run){ .object = sorted[i].object };
			lib_run.in += in;
			if (strcmp(sorted[i].function, SYMBOLS_UNKNOWN) != 0 && in > lib_run.best_in) {
				lib_run.best_in = in;
				lib_run.best = &sorted[i];
			}
			if (lib_run.best && lib_run.in > lib_object_in) {
				lib_object_in = lib_run.in;
				lib_in = lib_run.best_in;
				hot_lib = lib_run.best;
			}
		}
		size_t at = p->n_hot;
		while (at > 0 && p->hot[at - 1].count < count)
			at--;
		if (at >= sizeof(p->hot) / sizeof(p->hot[0]))
			continue;
		if (p->n_hot < sizeof(p->hot) / sizeof(p->hot[0]))
			p->n_hot++;
		memmove(&p->hot[at + 1], &p->hot[at], (p->n_hot - 1 - at) * sizeof(p->hot[0]));
		snprintf(p->hot[at].object, sizeof(p->hot[at].object), "%s", sorted[i].object);
		shown_name(p->hot[at].function, sizeof(p->hot[at].function), "", sorted[i].function);
		p->hot[at].count = count;
		p->hot[at].share = (double)count / (double)n;
	}
	/*
	 * Where the busiest process's own code had too few samples to locate a loop and a library function more,
	 * the program's code is in its libraries (an interpreter built --enable-shared: python3.11 is a launcher that
	 * calls libpython): that function is the hot one.
	 */
	if (hot_lib && lib_in > own_in && own_in < HOT_LOOP_MIN_SAMPLES) {
		hot_group = hot_lib;
		p->hot_exe_count = 0;
		for (size_t i = 0; i < n; i++)
			p->hot_exe_count += hit_cmp(&hits[i], hot_lib) == 0;
		snprintf(p->hot_library, sizeof(p->hot_library), "%s", hot_lib->object);
		w->hot_library = hot_lib->object;
	}
	/*
	 * Code a JIT compiled (V8, HotSpot, LuaJIT) runs from anonymous memory: node's chase loop held 51 % of the
	 * CPU time there, and the hottest function of node's own code, 1.7 %, had been named the hot loop. Without a
	 * perf map (/tmp/perf-PID.map, which names it) all of it is one group, whose loop hot_range() finds by its
	 * samples. It is the hot code where it has more samples than the own or library function chosen.
	 */
	if (jit && jit_in >= HOT_LOOP_MIN_SAMPLES && jit_in > own_in && jit_in > lib_in) {
		hot_group = jit;
		p->hot_exe_count = jit_count;
		p->hot_jit = true;
		snprintf(p->hot_library, sizeof(p->hot_library), "%s", jit->object);
		w->hot_library = jit->object;
	}
	return hot_group;
}

/*
 * The hot thread into p: the one with the most samples in the hot function (a thread's samples are contiguous
 * after sorting by tid), or a clock-reading thread of its process (choose_hot_thread()). Where no sample fell in
 * the program's own code (a run spent in the kernel's fault path, an interpreter), the thread with the most
 * samples anywhere: the clock and affinity checks still speak of it, and the hot loop stays unknown. keys: room
 * for n values.
 */
static void pick_thread(const struct target_watch *w, const struct clock_hit *hits, size_t n_hits,
			const struct clock_hit *hot_group, uint64_t *keys, struct sample_profile *p)
{
	size_t n = 0;

	for (size_t i = 0; i < n_hits; i++)
		if (!hot_group || hit_cmp(&hits[i], hot_group) == 0)
			keys[n++] = ((uint64_t)hits[i].r->tid << 32) | hits[i].r->pid;
	qsort(keys, n, sizeof(*keys), stats_cmp_u64);
	if (n) {
		uint64_t key = choose_hot_thread(w, keys, n, hits, n_hits, hot_group);
		p->hot_tid = (uint32_t)(key >> 32);
		p->hot_pid = (uint32_t)key;
	}
}

/*
 * The function the timing holds, where it is not the hot function: of the hot thread's process's own code, the
 * one with the most samples (spread copies counted, as everywhere in the choice) between the hot thread's first
 * and last clock read, where that holds HOT_LOOP_MIN_SAMPLES of them and more than the hot function does. A
 * benchmark's initialisation can outweigh the loop it times: on a Zen 5 guest, whose first touches wait for the
 * host, broken-joined's main (writing three arrays) held 35 % of the CPU time and none of its samples between the
 * reads, its workers' triad all of theirs, and the checks judged the initialisation. NULL otherwise (a library's
 * hot function, as an interpreter's, is left as it is); *count: the group's samples in all, as rank_groups() counts.
 */
static const struct clock_hit *timed_group(const struct target_watch *w, const struct clock_hit *sorted, size_t n,
					   const struct clock_hit *hot_group, const struct sample_profile *p,
					   uint64_t *count)
{
	struct reader *readers = NULL;
	size_t n_readers = 0;
	const struct clock_hit *best = NULL;
	uint64_t best_in = 0, hot_in = 0;

	if (!hot_group || hot_group->where != WHERE_OWN || *p->hot_library || !p->hot_tid ||
	    clock_readers(w, &readers, &n_readers) != 0)
		return NULL;
	const struct reader *rd = reader_of(p->hot_tid, readers, n_readers);
	/*
	 * A hot thread that reads no clock, as an OpenMP worker running the parallel initialisation that outweighed
	 * the triad (broken-parallel: 540 samples in main._omp_fn.1, in 1 run of 10 on a Zen 5 guest): the reader of
	 * its process whose reads span the longest, as the master around its parallel regions.
	 */
	bool hot_reads = rd != NULL;
	for (size_t i = 0; !hot_reads && i < n_readers; i++)
		if (readers[i].pid == p->hot_pid && (!rd || readers[i].last - readers[i].first > rd->last - rd->first))
			rd = &readers[i];
	for (size_t i = 0, j; rd && rd->last > rd->first && i < n; i = j) {
		uint64_t in = 0;
		for (j = i; j < n && hit_cmp(&sorted[i], &sorted[j]) == 0; j++)
			in += sorted[j].r->pid == p->hot_pid && reads_bracket(rd, sorted[j].r->time_ns);
		if (hit_cmp(&sorted[i], hot_group) == 0) {
			hot_in = in;
		} else if (sorted[i].where == WHERE_OWN && in > best_in) {
			best_in = in;
			best = &sorted[i];
			*count = j - i;
		}
	}
	free(readers);
	return best && best_in >= HOT_LOOP_MIN_SAMPLES && best_in > hot_in ? best : NULL;
}

/* Group g is the hot function: its name (as shown), whether a symbol names it, and its samples. */
static void name_hot(struct target_watch *w, struct sample_profile *p, const struct clock_hit *g, uint64_t count)
{
	shown_name(p->hot_exe_function, sizeof(p->hot_exe_function), "", g->function);
	w->hot_function = g->function;
	p->hot_exe_unnamed = g->unnamed;
	p->hot_exe_count = count;
}

/* The top functions, the hot function of the program's own executable, its hot loop and hot thread. */
static int clock_profile(struct target_watch *w, struct sample_profile *p)
{
	const struct sample_list *l = &w->clock.samples;
	struct clock_hit *hits = calloc(l->count ? l->count : 1, sizeof(*hits));
	uint64_t *ips = calloc(l->count ? l->count : 1, sizeof(*ips));
	uint64_t *by_where[] = { &p->clock_own, &p->clock_vdso, &p->clock_kernel, &p->clock_libs, &p->clock_unknown };

	if (!hits || !ips) {
		free(hits);
		free(ips);
		return -ENOMEM;
	}
	p->clock_samples = l->count;
	for (size_t i = 0; i < l->count; i++) {
		struct symbols_location loc;
		symbols_resolve(w->clock.syms, (pid_t)l->items[i].pid, l->items[i].ip, &loc);
		/* Own code: the image the sample's own process ran (the command's, or one it started). */
		hits[i] = (struct clock_hit){ loc.object, loc.function, loc.unnamed, &l->items[i],
					      classify(&loc, l->items[i].ip, exe_of(w, l->items[i].pid)) };
		(*by_where[hits[i].where])++;
	}
	/* Group by function; keep the top ones (insertion into a short sorted list). */
	struct clock_hit *sorted = malloc((l->count ? l->count : 1) * sizeof(*sorted));
	if (!sorted) {
		free(hits);
		free(ips);
		return -ENOMEM;
	}
	memcpy(sorted, hits, l->count * sizeof(*sorted));
	qsort(sorted, l->count, sizeof(*sorted), hit_cmp);
	uint32_t busiest = busiest_process(hits, l->count, ips);
	const struct clock_hit *hot_group = rank_groups(w, sorted, hits, l->count, busiest, p);
	if (hot_group || l->count) {
		if (hot_group)
			name_hot(w, p, hot_group, p->hot_exe_count);
		pick_thread(w, hits, l->count, hot_group, ips, p);
		uint64_t timed_count = 0;
		const struct clock_hit *timed = timed_group(w, sorted, l->count, hot_group, p, &timed_count);
		if (timed) {
			snprintf(p->untimed_function, sizeof(p->untimed_function), "%s", p->hot_exe_function);
			p->untimed_count = p->hot_exe_count;
			hot_group = timed;
			name_hot(w, p, hot_group, timed_count);
			pick_thread(w, hits, l->count, hot_group, ips, p);
		}
		size_t n = 0;
		for (size_t i = 0; i < l->count && hot_group; i++)
			if (hit_cmp(&hits[i], hot_group) == 0 && hits[i].r->pid == p->hot_pid)
				ips[n++] = hits[i].r->ip;
		mark_hot(w, hits, l->count, hot_group, p->hot_pid);
		qsort(ips, n, sizeof(*ips), stats_cmp_u64);
		snprintf(p->program, sizeof(p->program), "%s", exe_of(w, p->hot_pid));
		p->program_pid = p->hot_pid;
		const struct watch_proc *hot = watch_proc_find(w, (pid_t)p->hot_pid);
		p->program_watched = hot && hot->polled;
		if (n) {
			hot_range(ips, n, &p->hot_lo, &p->hot_hi);
			loop_code(w, p);
		}
		affinity_profile(w, hits, l->count, hot_group, p);
	}
	free(sorted);
	free(hits);
	free(ips);
	return 0;
}

struct fault_hit {
	uint64_t page, t;
	uint32_t tid;
	unsigned line;
	bool in_loop;
	const char *object, *function;	/* interned by the fault session's symbolizer */
};

static int fault_page_cmp(const void *x, const void *y)
{
	const struct fault_hit *a = x, *b = y;

	if (a->page != b->page)
		return a->page < b->page ? -1 : 1;
	return a->t < b->t ? -1 : a->t > b->t;
}

static int fault_fn_cmp(const void *x, const void *y)
{
	const struct fault_hit *a = x, *b = y;

	if (a->object != b->object)
		return (uintptr_t)a->object < (uintptr_t)b->object ? -1 : 1;
	return (uintptr_t)a->function < (uintptr_t)b->function ? -1 : (uintptr_t)a->function > (uintptr_t)b->function;
}

/* The pattern of the first touches the hot loop took (hits sorted by page, then time): watch_touch_pattern(). */
static int loop_pattern(const struct fault_hit *hits, size_t n, struct sample_fault_pattern *f)
{
	struct watch_touch *first = malloc((n ? n : 1) * sizeof(*first));
	size_t m = 0;

	if (!first)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || hits[i].page != hits[i - 1].page)
			first[m++] = (struct watch_touch){ hits[i].page, hits[i].t, hits[i].tid, hits[i].line, hits[i].in_loop };
	int rc = watch_touch_pattern(first, m, f);
	free(first);
	return rc;
}

/* The counts of a pattern found on the kept samples, as counts of all: each kept one stands for x. */
static void scale_pattern(struct sample_fault_pattern *f, uint64_t x)
{
	f->faults *= x;
	f->pages *= x;
	f->in_hot_loop *= x;
	f->in_hot_function *= x;
	f->function_faults *= x;
	f->loop_touches *= x;
	f->steps *= x;
	f->steps_next_page *= x;
	f->step_mode_count *= x;
	f->offset_mode_count *= x;
	f->scan_touches *= x;
	f->other.touches *= x;
	f->other.mode_count *= x;
}

/* The hot function's cpu-clock weight (w->hot_marks of a sample), all and between the hot loop's first and last fault. */
static void loop_weight(const struct target_watch *w, const struct fault_hit *hits, size_t n,
			struct sample_fault_pattern *f)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (size_t i = 0; i < n; i++)
		if (hits[i].in_loop) {
			lo = hits[i].t < lo ? hits[i].t : lo;
			hi = hits[i].t > hi ? hits[i].t : hi;
		}
	for (size_t i = 0; w->hot_marks && i < w->n_hot_marks; i++) {
		f->hot_weight += w->hot_marks[i].weight;
		f->hot_weight_faulting += w->hot_marks[i].t >= lo && w->hot_marks[i].t <= hi ? w->hot_marks[i].weight : 0;
	}
	f->weight_known = true;
}

/*
 * Per watched region, its faults; for the most faulted one, the pattern and its cross with the hot loop. Past
 * SAMPLE_KEEP_MAX, l holds one block of consecutive faults in p->faults_one_in: counts are the kept ones times it,
 * and each ratio (faults per page, a step's share, a share inside the hot loop) is the kept samples' own.
 */
static int fault_profile(struct target_watch *w, const struct sample_list *l, struct symbols *syms,
			 struct sample_profile *p)
{
	uint64_t counts[WATCH_MAX_TRACKED] = { 0 };
	size_t best = WATCH_MAX_TRACKED;

	/* A fault counts for the region holding it that no later poll superseded, where there is one. */
	for (size_t i = 0; i < l->count; i++) {
		size_t at = WATCH_MAX_TRACKED;
		for (size_t k = 0; k < w->n_regions; k++)
			if (l->items[i].pid == w->regions[k].r.pid && l->items[i].addr >= w->regions[k].r.start &&
			    l->items[i].addr < w->regions[k].r.end &&
			    (at == WATCH_MAX_TRACKED || (w->regions[at].superseded && !w->regions[k].superseded)))
				at = k;
		if (at < WATCH_MAX_TRACKED)
			counts[at]++;
	}
	uint64_t x = p->faults_one_in;	/* what a kept sample stands for: 1 or more (target_watch_finish()) */
	for (size_t k = 0; k < w->n_regions; k++) {
		w->regions[k].r.faults = x * counts[k];
		if (counts[k] && (best == WATCH_MAX_TRACKED || counts[k] > counts[best]))
			best = k;
	}
	if (best == WATCH_MAX_TRACKED)
		return 0;
	struct sample_watch_region *reg = &w->regions[best].r;
	/* Room for every record: regions can overlap (one polled twice as it grew), so a record that counted for
	 * another region may still lie in this one's range. */
	struct fault_hit *hits = calloc(l->count, sizeof(*hits));
	size_t n = 0;
	if (!hits)
		return -ENOMEM;
	struct sample_fault_pattern *f = &p->faults;
	/* Faults in the hot function mark it running too: a window too short for a cpu-clock sample. */
	struct clocks_mark *marks = w->hot_marks ? realloc(w->hot_marks, (w->n_hot_marks + l->count + 1) * sizeof(*marks))
						 : NULL;
	if (marks)
		w->hot_marks = marks;
	for (size_t i = 0; i < l->count; i++) {
		const struct sample_record *r = &l->items[i];
		if (r->pid != reg->pid || r->addr < reg->start || r->addr >= reg->end)
			continue;
		const char *exe = exe_of(w, r->pid);
		struct symbols_location loc;
		symbols_resolve(syms, (pid_t)r->pid, r->ip, &loc);
		const char *in = w->hot_library ? w->hot_library : exe;
		bool fn = w->hot_function && *in && strcmp(loc.object, in) == 0 && strcmp(loc.function, w->hot_function) == 0;
		/* In the hot loop: in the hot function (a neighbouring function may lie inside the slack) and its range. */
		bool loop = fn && p->hot_hi && r->pid == p->hot_pid && r->ip >= p->hot_lo && r->ip <= p->hot_hi;
		hits[n++] = (struct fault_hit){ r->addr / PAGE_BYTES, r->time_ns, r->tid,
						(unsigned)((r->addr % PAGE_BYTES) / 64), loop, loc.object, loc.function };
		f->in_hot_loop += loop;
		f->in_hot_function += fn;
		if (fn && marks && r->pid == p->hot_pid)
			w->hot_marks[w->n_hot_marks++] = (struct clocks_mark){ r->time_ns, 0, r->ip };
	}
	f->faults = n;
	loop_weight(w, hits, n, f);
	/* The function most faults came from. */
	qsort(hits, n, sizeof(*hits), fault_fn_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && fault_fn_cmp(&hits[i], &hits[j]) == 0; j++)
			;
		if (j - i > f->function_faults) {
			f->function_faults = j - i;
			shown_name(f->function, sizeof(f->function), hits[i].object, hits[i].function);
		}
	}
	qsort(hits, n, sizeof(*hits), fault_page_cmp);
	for (size_t i = 0; i < n; i++)
		f->pages += i == 0 || hits[i].page != hits[i - 1].page;
	f->faults_per_page = f->pages ? (double)f->faults / (double)f->pages : 0;
	int rc = loop_pattern(hits, n, f);
	free(hits);
	scale_pattern(f, x);
	reg->fault_pages = f->pages;
	p->has_pattern = rc == 0;
	snprintf(p->fault_region, sizeof(p->fault_region), "%s", *reg->name ? reg->name : SYMBOLS_ANON);
	p->fault_region_start = reg->start;
	p->fault_region_end = reg->end;
	return rc;
}

/* The largest regions (SAMPLE_WATCH_MAX_REGIONS) in address order, their points thinned evenly. */
static void regions_profile(struct target_watch *w, uint64_t start_ns, struct sample_profile *p)
{
	bool taken[WATCH_MAX_TRACKED] = { false };

	while (p->n_regions < SAMPLE_WATCH_MAX_REGIONS) {
		size_t best = w->n_regions;
		for (size_t k = 0; k < w->n_regions; k++)
			if (!taken[k] && !w->regions[k].superseded &&
			    (best == w->n_regions ||
			     w->regions[k].r.end - w->regions[k].r.start > w->regions[best].r.end - w->regions[best].r.start))
				best = k;
		if (best == w->n_regions)
			break;
		taken[best] = true;
		p->n_regions++;
	}
	size_t out = 0;
	for (size_t k = 0; k < w->n_regions; k++) {
		if (!taken[k])
			continue;
		const struct watch_region *wr = &w->regions[k];
		struct sample_watch_region *r = &p->regions[out++];
		*r = wr->r;
		r->first_seen_ns -= start_ns;
		r->n_points = wr->n_pts < SAMPLE_WATCH_MAX_POINTS ? wr->n_pts : SAMPLE_WATCH_MAX_POINTS;
		for (size_t i = 0; i < r->n_points; i++) {
			size_t from = r->n_points > 1 ? i * (wr->n_pts - 1) / (r->n_points - 1) : 0;
			r->points[i] = wr->pts[from];
			r->points[i].t_ns -= start_ns;
		}
		for (size_t i = 0; i < wr->n_pts && r->rss_max; i++)
			if (wr->pts[i].rss_bytes * 2 >= r->rss_max) {
				r->resident_ns = (int64_t)(wr->pts[i].t_ns - start_ns);
				break;
			}
	}
}

int watch_profile_build(struct target_watch *w, const struct sample_list *faults, struct symbols *fault_syms,
			struct sample_profile *p)
{
	p->n_execs = w->n_execs;
	memcpy(p->execs, w->execs, sizeof(p->execs));
	p->processes = 1 + w->procs_seen;
	p->processes_unwatched = w->procs_dropped;
	if (w->clock.s && clock_profile(w, p) != 0)
		return -ENOMEM;
	if (faults && fault_syms && fault_profile(w, faults, fault_syms, p) != 0)
		return -ENOMEM;
	regions_profile(w, w->start_ns, p);
	return 0;
}
