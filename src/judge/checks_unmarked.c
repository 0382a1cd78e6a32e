/* SPDX-License-Identifier: MIT */
/* Checks of an unmarked command (tlbprof run), from what watching it found: smaps, affinity, cpu-clock, faults. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "judge/analysis_internal.h"
#include "pmu/symbols.h"

/* Fewer faults or first touches than this say nothing about a pattern (a library's data, a stack). */
#define UNMARKED_MIN_FAULTS 64
/* The hot loop took this share of a region's faults: it is the memory's first touch. */
#define FIRST_TOUCH_LOOP_SHARE 0.5
/* Timed faults in at most 1/FEW_FAULTED_WINDOWS of FEW_FAULTED_MIN_WINDOWS or more windows: not every timing's. */
#define FEW_FAULTED_WINDOWS 3
#define FEW_FAULTED_MIN_WINDOWS 3
/* This share of the hot loop's first touches kept one step between pages: a constant-stride scan. */
#define SEQUENTIAL_STEP_SHARE 0.8
/* This share of them at one 64-byte line of their page: the accesses alias into 1/64 of the cache sets. */
#define SAME_OFFSET_SHARE 0.9
/* Rss below this share of a region's faulted pages: the pages were read, never written (the shared zero page). */
#define ZERO_PAGE_RESIDENT_SHARE 0.1
/* AnonHugePages above this share of a region's Rss: it is, in good part, on transparent huge pages. */
#define THP_RSS_SHARE 0.1
/* The hot thread's share of known-mask samples on a one-CPU mask that counts as pinned. */
#define PINNED_SHARE 0.9
/*
 * The mask is judged when the polls saw it over at least this share of the hot thread's samples from its first
 * in the hot function on, and over this many samples: a run of a few polls can otherwise be judged on a handful
 * of samples around a change of mask.
 */
#define AFFINITY_MIN_COVER 0.5
#define AFFINITY_MIN_SAMPLES 10

static double mib(uint64_t bytes)
{
	return (double)bytes / (double)(1u << 20);
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0;
}

/* Whether the hot loop is in the executable's code that no symbol or unwind entry covers (named as perf does). */
static bool uncovered(const struct sample_profile *p)
{
	return strcmp(p->hot_exe_function, SYMBOLS_UNKNOWN) == 0;
}

/*
 * Whether the hot loop is code compiled at run time that no perf map names: all of it is one group, so the loop's
 * range, which holds most of its samples, may hold another compiled function too, as the one that first touches
 * the memory (node's chase and the loop that built its chain).
 */
static bool unnamed_jit(const struct sample_profile *p)
{
	return p->hot_jit && uncovered(p);
}

/* The function without its object path, for messages. */
const char *checks_short_fn(const struct sample_profile *p)
{
	if (unnamed_jit(p))
		return "code compiled at run time";
	if (uncovered(p))
		return "code no symbol covers";
	return *p->hot_exe_function ? p->hot_exe_function : "?";
}

/*
 * The object's file name for a message: "libc.so.6:memset" from "/usr/lib/x86_64-linux-gnu/libc.so.6:memset".
 * Only the object's directories go, those before the first ':': a JIT's function names a script by its path
 * ("[anon]:JS:*build /tmp/js/chase.js:12:15").
 */
static const char *base_name(const char *path)
{
	const char *colon = strchr(path, ':'), *s = NULL;

	for (const char *q = path; *q && (!colon || q < colon); q++)
		if (*q == '/')
			s = q;
	return s ? s + 1 : path;
}

void checks_hot_loop(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct sample_profile *p = in->profile;
	struct analysis_check *c;
	bool lib = *p->hot_library;
	char timed[160] = "";

	if (checks_no_clock(def, p, a))
		return;
	if (*p->untimed_function)
		snprintf(timed, sizeof(timed), ", the code timed: %.60s (%.0f %%) ran more, outside the hot thread's "
			 "clock reads", p->untimed_function, 100 * share(p->untimed_count, p->clock_samples));
	double n = (double)p->clock_samples, kernel = (double)p->clock_kernel / n, own = (double)p->clock_own / n;
	double vdso = (double)p->clock_vdso / n, libs = (double)p->clock_libs / n;
	if (p->hot_jit)
		c = checks_add(a, def, CHECK_PASS,
			       "the hot loop is in code compiled at run time (a JIT), in %s, which no file holds: %s (%.0f %% "
			       "of the CPU time, instructions 0x%llx-0x%llx)%s; own code %.0f %%, libraries %.0f %%, [vdso] "
			       "clock reads %.0f %%, kernel %.0f %%%s", p->hot_library,
			       uncovered(p) ? "no symbol names it, so all of it counts as one function (a perf map, "
					      "/tmp/perf-PID.map, names its functions: node --perf-basic-prof, java "
					      "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit)"
					    : p->hot_exe_function,
			       100 * share(p->hot_exe_count, p->clock_samples), (unsigned long long)p->hot_lo,
			       (unsigned long long)p->hot_hi, timed, 100 * own, 100 * libs, 100 * vdso, 100 * kernel,
			       p->clock_user_only ? " (user space only: perf_event_paranoid kept the kernel out)" : "");
	else if (!*p->hot_exe_function)
		c = checks_add(a, def, CHECK_SKIP,
			       "could not tell where the hot loop is, because no cpu-clock sample resolved to a function of "
			       "the program's own executable (own %.0f %%, libraries %.0f %%, [vdso] %.0f %%, kernel %.0f %%)",
			       100 * own, 100 * libs, 100 * vdso, 100 * kernel);
	else
		c = checks_add(a, def, CHECK_PASS,
			       "the hot loop is in %s%s%s%s%s (%.0f %% of the CPU time, instructions 0x%llx-0x%llx)%s; own "
			       "code %.0f %%, libraries %.0f %%, [vdso] clock reads %.0f %%, kernel %.0f %%%s",
			       uncovered(p) ? "the executable's code that no symbol or unwind entry covers" : checks_short_fn(p),
			       p->hot_exe_unnamed ? ", which no symbol names (stripped: bounded by its .eh_frame entry)"
			       : uncovered(p) ? " (hand-written assembly without CFI directives, in a stripped file; perf "
						"shows [unknown])" : "",
			       lib ? ", in " : "", lib ? base_name(p->hot_library) : "",
			       lib ? ": the busiest process's own code had too few samples to locate a loop there (an "
				     "interpreter, or a program whose code is in shared libraries)" : "",
			       100 * share(p->hot_exe_count, p->clock_samples), (unsigned long long)p->hot_lo,
			       (unsigned long long)p->hot_hi, timed, 100 * own, 100 * libs, 100 * vdso, 100 * kernel,
			       p->clock_user_only ? " (user space only: perf_event_paranoid kept the kernel out)" : "");
	checks_evidence(c, "samples", n);
	checks_evidence(c, "own_share", own);
	checks_evidence(c, "vdso_share", vdso);
	checks_evidence(c, "kernel_share", kernel);
	checks_evidence(c, "libraries_share", libs);
	checks_evidence(c, "hot_function_share", share(p->hot_exe_count, p->clock_samples));
	checks_evidence(c, "untimed_function_share", *p->untimed_function ? share(p->untimed_count, p->clock_samples)
									     : NAN);
}

/* What the fault checks need: fault samples, a hot loop, and a region that took faults. Adds a skip when not. */
static bool no_faults(const struct analysis_check_def *def, const struct sample_profile *p, struct analysis *a)
{
	if (!p->faults_sampled) {
		checks_add(a, def, CHECK_SKIP, "could not tell, because the command's page faults were not sampled: %s",
			   *p->faults_error ? p->faults_error : "not opened");
		return true;
	}
	if (!p->clock_sampled || p->clock_samples < UNMARKED_MIN_CLOCK_SAMPLES || !p->hot_hi ||
	    checks_clock_unaccounted(p)) {
		checks_add(a, def, CHECK_SKIP, "could not tell, because the hot loop was not located (see hot_loop), so "
			   "no fault can be placed inside or outside it");
		return true;
	}
	return false;
}

/*
 * Whether the hot thread's clock reads were seen from the first to the last: two or more, no function stopped
 * at its budget, tracing not stopped for too many threads, and the thread traced before it ran.
 */
static bool span_seen(const struct sample_profile *p)
{
	const struct sample_clocks *c = &p->clocks;

	return c->traced && c->libc_mapped && c->windows && checks_clock_stopped_fn(c) < 0 && !c->threads_capped &&
	       !c->hot_samples_untraced;
}

/*
 * Whether the clock reads say which faults were timed: the span seen, and the
 * faults of the hot thread's process on the region placed in time. Then a fault in a window
 * the hot loop ran in is a timed one, whatever instruction took it; a window
 * around other work (an interpreter starting, a log line) times nothing the
 * check speaks of, and a hot loop in no window is untimed. A report from
 * before the windows were recorded: a fault between the first and last read.
 */
static bool timed_by_clock(const struct sample_profile *p)
{
	return span_seen(p) && p->clocks.region_faults >= UNMARKED_MIN_FAULTS;
}

/* "inside the clock windows its hot loop ran in (3 of its 236)", or for an older report the span. */
static const char *timed_where(const struct sample_clocks *c, bool inside, char *buf, size_t len)
{
	if (c->measured_known && !c->measured_windows)
		snprintf(buf, len, "outside every clock window (its hot loop ran in none of its %llu)",
			 (unsigned long long)c->windows);
	else if (c->measured_known)
		snprintf(buf, len, "%s the clock windows its hot loop ran in (%llu of its %llu windows)",
			 inside ? "inside" : "outside", (unsigned long long)c->measured_windows,
			 (unsigned long long)c->windows);
	else
		snprintf(buf, len, "%s (%.4g ms)", inside ? "between its first and last clock read" :
			 "outside its clock reads' span", (double)c->span_ns / 1e6);
	return buf;
}

/*
 * ", 320 of them between a stop and the next start of a timer (...)": the faults a timer's start/stop pairs left
 * out (struct sample_clocks, paired_fn), "" where none did.
 */
static const char *gap_clause(const struct sample_clocks *c, char *buf, size_t len)
{
	char clock[64];

	*buf = 0;
	if (!c->pairs_known || c->paired_fn < 0 || !c->region_faults_in_gaps)
		return buf;
	checks_paired_clock(c, clock, sizeof(clock));
	snprintf(buf, len,
		 ", %llu of them between a stop and the next start of a timer (its %llu %s reads start and stop it in "
		 "turn: the hot function ran %.0f %% of its time between them, %.0f %% of that in the timed code)",
		 (unsigned long long)c->region_faults_in_gaps, (unsigned long long)c->paired_reads, clock,
		 100 * c->gap_weight_share, 100 * c->gap_code_overlap);
	return buf;
}

/*
 * Whether the fault records the kernel dropped could carry a share of faults
 * across threshold: part of whole seen, with every lost one on either side.
 */
static bool lost_could_flip(uint64_t part, uint64_t whole, uint64_t lost, double threshold)
{
	return lost && share(part, whole + lost) < threshold && share(part + lost, whole + lost) >= threshold;
}

/* The could-not-tell of a share the lost fault records could carry either way. */
static struct analysis_check *lost_skip(const struct analysis_check_def *def, const struct sample_profile *p,
					uint64_t part, uint64_t whole, const char *what, struct analysis *a)
{
	return checks_add(a, def, CHECK_SKIP,
			  "could not tell, because %llu page-fault records were lost (the ring filled before tlbprof "
			  "drained it): %llu of the %llu faults seen %s, and with the lost ones the share lies anywhere "
			  "from %.0f %% to %.0f %%, either side of half", (unsigned long long)p->faults_lost,
			  (unsigned long long)part, (unsigned long long)whole, what,
			  100 * share(part, whole + p->faults_lost), 100 * share(part + p->faults_lost, whole + p->faults_lost));
}

/* The process's faults on the region that the timing holds: in the windows its hot loop ran in, else in the span. */
static uint64_t timed_faults(const struct sample_clocks *c)
{
	return c->measured_known ? c->region_faults_measured : c->region_faults_in_span;
}

/*
 * How to take a first touch out of the timing. Where the command's probe saw
 * a trap per populated page (shadow paging, environment.first_access), only a
 * write from user space does: MAP_POPULATE leaves every page to trap on its
 * first access, with no fault to show for it.
 */
static const char *untimed_first_touch(const struct environment *env, char *buf, size_t len)
{
	if (env && env_shadow_paging(env))
		snprintf(buf, len, "write every page before the clock starts (an init pass, memset); prefaulting "
			 "(MAP_POPULATE, MADV_POPULATE_WRITE) is not enough here, where the first write to each populated "
			 "page still took %.1f µs (shadow_paging)", env->first_access.ns_per_page / 1e3);
	else
		snprintf(buf, len, "write every page before the clock starts (an init pass, memset) or prefault it "
			 "(MAP_POPULATE, MADV_POPULATE_WRITE)");
	return buf;
}

/*
 * The largest anonymous region on base pages made resident without page
 * faults: 16 MiB or more resident, under a quarter of its 4 KiB pages faulted,
 * every fault sample kept and none lost. MAP_POPULATE, MADV_POPULATE_WRITE
 * and mlock fill memory that way; THP (a fault per 2 MiB), hugetlb and files
 * (fault-around maps 16 pages a fault) are left out. NULL when none.
 */
#define POPULATED_MIN_BYTES (16ull << 20)
static const struct sample_watch_region *populated_region(const struct sample_profile *p)
{
	const struct sample_watch_region *best = NULL;

	if (p->faults_one_in > 1 || p->faults_lost)
		return NULL;
	for (size_t i = 0; i < p->n_regions && i < SAMPLE_WATCH_MAX_REGIONS; i++) {
		const struct sample_watch_region *r = &p->regions[i];
		if (r->anonymous && !r->anon_huge_max && !r->hugetlb_max && r->kernel_page_bytes <= 4096 &&
		    r->rss_max >= POPULATED_MIN_BYTES && r->fault_pages * 4 < r->rss_max / 4096 &&
		    (!best || r->rss_max > best->rss_max))
			best = r;
	}
	return best;
}

/*
 * No big region took faults, but under shadow paging (environment.first_access)
 * a region the kernel populated still traps on each page's first write, which
 * no fault shows: whether the timed loop is that write, nothing here tells.
 */
static bool populated_unseen(const struct analysis_check_def *def, const struct analysis_input *in,
			     struct analysis *a)
{
	const struct environment *env = in->env;
	const struct sample_watch_region *r = populated_region(in->profile);

	if (!env || !env_shadow_paging(env) || !r)
		return false;
	char name[200];
	uint64_t pages = r->rss_max / 4096;
	if (r->name[0])
		snprintf(name, sizeof(name), "%s", r->name);
	else
		snprintf(name, sizeof(name), "anonymous memory at 0x%llx", (unsigned long long)r->start);
	struct analysis_check *c =
		checks_add(a, def, CHECK_SKIP,
			   "could not tell, because %s (%.1f MiB resident) took page faults on %llu of its %llu pages: it "
			   "was populated by the kernel (MAP_POPULATE, MADV_POPULATE_WRITE or mlock), and here the first "
			   "write to each such page still traps, %.1f µs (shadow_paging), with no fault to show for it. If "
			   "the timed loop is its first write, it times about %.0f ms of traps with the accesses; write "
			   "every page before the clock starts (an init pass, memset)",
			   name, mib(r->rss_max), (unsigned long long)r->fault_pages, (unsigned long long)pages,
			   env->first_access.ns_per_page / 1e3, (double)pages * env->first_access.ns_per_page / 1e6);
	checks_evidence(c, "populated_pages", (double)pages);
	checks_evidence(c, "populated_faulted_pages", (double)r->fault_pages);
	checks_evidence(c, "first_access_ns_per_page", env->first_access.ns_per_page);
	return true;
}

/* first_touch_in_timed_loop from the clock reads: the faults between the hot thread's first and last read. */
static struct analysis_check *first_touch_timed(const struct analysis_check_def *def, const struct analysis_input *in,
						struct analysis *a)
{
	const struct sample_profile *p = in->profile;
	const struct sample_clocks *c = &p->clocks;
	uint64_t timed = timed_faults(c);
	char where[120], fix[240], gaps[300];

	if (lost_could_flip(timed, c->region_faults, p->faults_lost, FIRST_TOUCH_LOOP_SHARE))
		return lost_skip(def, p, timed, c->region_faults, "were timed", a);
	/*
	 * The timed faults fell in a few of many windows the loop ran in, and not from the loop: a read at the
	 * program's start (for a total it prints) opens a window around its memset and warm-up, which a correct
	 * benchmark's first rep then closes; a timed first touch faults in every window, or from the loop itself.
	 */
	if (share(timed, c->region_faults) >= FIRST_TOUCH_LOOP_SHARE && c->faulted_known &&
	    c->measured_windows >= FEW_FAULTED_MIN_WINDOWS &&
	    FEW_FAULTED_WINDOWS * (double)c->measured_windows_faulted <= (double)c->measured_windows &&
	    share(p->faults.in_hot_loop, p->faults.faults) < FIRST_TOUCH_LOOP_SHARE)
		return checks_add(a, def, CHECK_SKIP, "could not tell, because the %llu timed page faults on %s fell "
				  "in %llu of the %llu clock windows its hot loop ran in, most from %s, not the loop "
				  "(%llu of them): a window around setup and an untimed pass, as a read at the program's "
				  "start for a total it prints opens, or a timed setup; the loop's other %llu windows took "
				  "none", (unsigned long long)timed, p->fault_region,
				  (unsigned long long)c->measured_windows_faulted,
				  (unsigned long long)c->measured_windows,
				  *p->faults.function ? base_name(p->faults.function) : "?",
				  (unsigned long long)p->faults.in_hot_loop,
				  (unsigned long long)(c->measured_windows - c->measured_windows_faulted));
	if (share(timed, c->region_faults) >= FIRST_TOUCH_LOOP_SHARE)
		return checks_add(a, def, CHECK_WARN,
				  "%llu of the %llu page faults of the hot thread's process on %s (%.1f MiB, %.2f faults "
				  "per page) "
				  "came %s, most from %s: the timed code is the memory's first touch, so it times page "
				  "faults (about a microsecond each) with the accesses; %s",
				  (unsigned long long)timed, (unsigned long long)c->region_faults, p->fault_region,
				  mib(p->fault_region_end - p->fault_region_start), p->faults.faults_per_page,
				  timed_where(c, true, where, sizeof(where)),
				  *p->faults.function ? base_name(p->faults.function) : "?",
				  untimed_first_touch(in->env, fix, sizeof(fix)));
	return checks_add(a, def, CHECK_PASS,
			  "%llu of the %llu page faults of the hot thread's process on %s came %s, most from %s%s: the "
			  "memory was first touched before the timing",
			  (unsigned long long)(c->region_faults - timed), (unsigned long long)c->region_faults,
			  p->fault_region, timed_where(c, false, where, sizeof(where)),
			  *p->faults.function ? base_name(p->faults.function) : "?",
			  *gap_clause(c, gaps, sizeof(gaps)) ? gaps
			  : share(p->faults.in_hot_loop, p->faults.faults) >= FIRST_TOUCH_LOOP_SHARE
				  ? ", the hottest loop of the run, untimed"
				  : "");
}

/*
 * The hot loop ran only while it took its faults: 90 % or more of the hot function's weight (5 ms at least) lies
 * between its first and last fault on the region. One pass over fresh memory looks the same as an initialisation
 * and as a timed first pass: mbw fills its arrays once (make_array()) and copies them with memcpy and a loop of its
 * own, and on a guest whose first touches wait for the host the fill was the hot loop, so that without its clock
 * reads (gettimeofday is the vDSO's, untraceable) the fill was taken for the timed loop.
 */
#define ONE_PASS_SHARE 0.9
#define ONE_PASS_MIN_WEIGHT 20
static bool one_pass(const struct sample_profile *p)
{
	const struct sample_fault_pattern *f = &p->faults;

	return f->weight_known && f->hot_weight >= ONE_PASS_MIN_WEIGHT &&
	       share(f->hot_weight_faulting, f->hot_weight) >= ONE_PASS_SHARE;
}

void checks_first_touch_in_timed_loop(const struct analysis_check_def *def, const struct analysis_input *in,
				      struct analysis *a)
{
	const struct sample_profile *p = in->profile;
	const struct sample_fault_pattern *f = &p->faults;
	/* Without the clock reads: half or more of the region's faults came from the hot loop. */
	bool from_loop = f->in_hot_loop >= UNMARKED_MIN_FAULTS && share(f->in_hot_loop, f->faults) >= FIRST_TOUCH_LOOP_SHARE;
	struct analysis_check *c;
	char fix[240];

	if (no_faults(def, p, a))
		return;
	if ((!p->has_pattern || f->faults < UNMARKED_MIN_FAULTS) && populated_unseen(def, in, a))
		return;
	if (!p->has_pattern || f->faults < UNMARKED_MIN_FAULTS)
		c = checks_add(a, def, CHECK_PASS, "no big region took %d or more page faults (%llu faults sampled): "
			       "nothing was first touched in bulk", UNMARKED_MIN_FAULTS,
			       (unsigned long long)p->fault_samples);
	else if (timed_by_clock(p))
		c = first_touch_timed(def, in, a);
	else if (lost_could_flip(f->in_hot_loop, f->faults, p->faults_lost, FIRST_TOUCH_LOOP_SHARE))
		c = lost_skip(def, p, f->in_hot_loop, f->faults, "came from the hot loop", a);
	else if (from_loop && unnamed_jit(p))
		c = checks_add(a, def, CHECK_SKIP,
			       "could not tell, because the hot loop is code compiled at run time in %s that no symbol "
			       "divides into functions: %llu of the %llu page faults on %s came from the range of its "
			       "instructions, which may hold the compiled code that first touched the memory as well, and no "
			       "clock read was traced to place them in time (a perf map names the JIT's functions: node "
			       "--perf-basic-prof, java -XX:+DumpPerfMapAtExit)", p->hot_library,
			       (unsigned long long)f->in_hot_loop, (unsigned long long)f->faults, p->fault_region);
	else if (from_loop && one_pass(p))
		c = checks_add(a, def, CHECK_SKIP,
			       "could not tell, because the %llu page faults of the hot loop in %s on %s are all it did "
			       "(%.0f %% of its CPU time came while it took them): one pass over fresh memory, as an "
			       "initialisation makes, or a timed first touch; no clock read was traced to tell which",
			       (unsigned long long)f->in_hot_loop, checks_short_fn(p), p->fault_region,
			       100 * share(f->hot_weight_faulting, f->hot_weight));
	else if (from_loop)
		c = checks_add(a, def, CHECK_WARN,
			       "%llu of the %llu page faults on %s (%.1f MiB, %.2f faults per page) came from the hot loop in "
			       "%s: the timed loop is the memory's first touch, so it times page faults (about a "
			       "microsecond each) with the accesses; %s",
			       (unsigned long long)f->in_hot_loop, (unsigned long long)f->faults, p->fault_region,
			       mib(p->fault_region_end - p->fault_region_start), f->faults_per_page, checks_short_fn(p),
			       untimed_first_touch(in->env, fix, sizeof(fix)));
	else
		c = checks_add(a, def, CHECK_PASS,
			       "the %llu page faults on %s came from %s%s, not from the hot loop in %s: %s",
			       (unsigned long long)f->faults, p->fault_region, *f->function ? base_name(f->function) : "?",
			       /* the top function is the hot one: it has no more faults than the hot function took */
			       f->in_hot_function && f->in_hot_function >= f->function_faults
			       ? " (in the hot function, outside the hot loop's instructions)" : "",
			       checks_short_fn(p), span_seen(p) ? "the memory was first touched before the measurement"
			       : "the hot loop did not first touch the memory; whether other code did inside the timing, "
				 "no clock read seen can tell (see empty_timed_window)");
	checks_evidence(c, "faults", (double)f->faults);
	checks_evidence(c, "pages", (double)f->pages);
	checks_evidence(c, "faults_per_page", f->faults_per_page);
	checks_evidence(c, "in_hot_loop", (double)f->in_hot_loop);
	checks_evidence(c, "in_hot_function", (double)f->in_hot_function);
	checks_evidence(c, "lost_records", (double)p->faults_lost);
	checks_evidence(c, "hot_share_while_faulting", f->weight_known && f->hot_weight
							      ? share(f->hot_weight_faulting, f->hot_weight) : NAN);
	if (timed_by_clock(p)) {
		checks_evidence(c, "process_faults", (double)p->clocks.region_faults);
		checks_evidence(c, "faults_between_clock_reads", (double)p->clocks.region_faults_in_span);
		if (p->clocks.measured_known) {
			checks_evidence(c, "measured_windows", (double)p->clocks.measured_windows);
			checks_evidence(c, "faults_in_measured_windows", (double)p->clocks.region_faults_measured);
		}
		if (p->clocks.pairs_known)
			checks_evidence(c, "faults_in_timer_gaps", (double)p->clocks.region_faults_in_gaps);
	}
}

/* The first touches the hot loop took are the only accesses of it whose addresses are seen without a PMU. */
static bool no_loop_touches(const struct analysis_check_def *def, const struct sample_profile *p, struct analysis *a)
{
	if (no_faults(def, p, a))
		return true;
	if (!p->has_pattern || p->faults.loop_touches < UNMARKED_MIN_FAULTS) {
		checks_add(a, def, CHECK_SKIP, "could not tell, because the hot loop first touched %llu pages (fewer than "
			   "%d): its memory was touched before it ran, and without a PMU the addresses of its accesses "
			   "are seen only through the faults it takes", (unsigned long long)p->faults.loop_touches,
			   UNMARKED_MIN_FAULTS);
		return true;
	}
	/*
	 * Where the clock reads place the faults in time, a loop whose faults the timing does not hold is not the
	 * timed one: broken-rust_correct's write of every page, which on a Zen 5 guest outweighed the 8 ms its timed
	 * loop ran, so that its order was taken for the timed accesses'.
	 */
	if (!timed_by_clock(p) && unnamed_jit(p)) {
		checks_add(a, def, CHECK_SKIP, "could not tell, because the hot loop is code compiled at run time in %s "
			   "that no symbol divides into functions: its %llu first touches of %s may be another compiled "
			   "function's (the one that wrote the memory first), and no clock read was traced to place them "
			   "in time", p->hot_library, (unsigned long long)p->faults.loop_touches, p->fault_region);
		return true;
	}
	if (!timed_by_clock(p) && one_pass(p)) {
		checks_add(a, def, CHECK_SKIP, "could not tell, because the hot loop's %llu first touches of %s are all it "
			   "did (%.0f %% of its CPU time came while it took them): one pass over fresh memory, as an "
			   "initialisation makes, or a timed pass; no clock read was traced to tell which",
			   (unsigned long long)p->faults.loop_touches, p->fault_region,
			   100 * share(p->faults.hot_weight_faulting, p->faults.hot_weight));
		return true;
	}
	const struct sample_clocks *c = &p->clocks;
	uint64_t timed = timed_faults(c);
	if (timed_by_clock(p) && timed < UNMARKED_MIN_FAULTS) {
		char why[160];
		if (c->measured_known && !c->measured_windows)
			snprintf(why, sizeof(why), "it ran in none of the hot thread's %llu clock windows",
				 (unsigned long long)c->windows);
		else
			snprintf(why, sizeof(why), "%llu of the %llu page faults of the hot thread's process on it were "
				 "timed", (unsigned long long)timed, (unsigned long long)c->region_faults);
		checks_add(a, def, CHECK_SKIP, "could not tell, because the hot loop's %llu first touches of %s are not "
			   "the timed code's: %s, so the timed accesses' addresses are not seen (without a PMU, only "
			   "first touches show them)", (unsigned long long)p->faults.loop_touches, p->fault_region, why);
		return true;
	}
	return false;
}

void checks_sequential_page_order(const struct analysis_check_def *def, const struct analysis_input *in,
				  struct analysis *a)
{
	const struct sample_profile *p = in->profile;
	const struct sample_fault_pattern *f = &p->faults;
	struct analysis_check *c;

	if (no_loop_touches(def, p, a))
		return;
	double mode = share(f->step_mode_count, f->steps);
	/* A loop whose loads take no address from a load is a sweep (STREAM, a Fortran array loop): in order by design. */
	bool sweep = p->code.decoded && p->code.loads && !p->code.chained_loads;
	if (f->steps && mode >= SEQUENTIAL_STEP_SHARE)
		c = checks_add(a, def, CHECK_WARN,
			       "the hot loop in %s first touched %llu pages of %s with a constant step of %lld page%s (%.0f %% "
			       "of its steps): it walks its pages in %s order, which prefetchers and page-table "
			       "lines already in the cache serve without the walks %s", checks_short_fn(p),
			       (unsigned long long)f->loop_touches, p->fault_region, (long long)f->step_mode_pages,
			       f->step_mode_pages == 1 || f->step_mode_pages == -1 ? "" : "s", 100 * mode,
			       f->step_mode_pages == 1 ? "ascending" : "constant-stride", sweep
			       ? "a translation cost is made of: a sweep (its loads take no address from a load) measures "
				 "bandwidth by design, and tells nothing of that cost; to time it, chase the pages in a "
				 "random order (a random single-cycle pointer chase)"
			       : "it means to time; visit the pages in a random order (a random single-cycle pointer chase)");
	else
		c = checks_add(a, def, CHECK_PASS,
			       "the hot loop's %llu first touches of %s follow no constant step (the most common, %lld pages, "
			       "is %.0f %% of them; the next page %.0f %%)", (unsigned long long)f->loop_touches,
			       p->fault_region, (long long)f->step_mode_pages, 100 * mode,
			       100 * share(f->steps_next_page, f->steps));
	checks_evidence(c, "steps", (double)f->steps);
	checks_evidence(c, "step_mode_pages", (double)f->step_mode_pages);
	checks_evidence(c, "step_mode_share", mode);
	checks_evidence(c, "next_page_share", share(f->steps_next_page, f->steps));
}

/*
 * The first touches same_page_offset judges: those no scan explains (a report from before scan_touches: all).
 * A scan meets each page at its first line going up and its last going down, one line of it read or all.
 */
static void judged_offsets(const struct sample_fault_pattern *f, struct sample_touch_offsets *o)
{
	if (f->scan_known) {
		*o = f->other;
		return;
	}
	*o = (struct sample_touch_offsets){ f->loop_touches, f->offset_mode, f->offset_mode_count, f->distinct_lines };
}

void checks_same_page_offset(const struct analysis_check_def *def, const struct analysis_input *in,
			     struct analysis *a)
{
	const struct sample_profile *p = in->profile;
	const struct sample_fault_pattern *f = &p->faults;
	struct sample_touch_offsets o;
	struct analysis_check *c;
	char scans[96] = "";

	if (no_loop_touches(def, p, a))
		return;
	judged_offsets(f, &o);
	double mode = share(o.mode_count, o.touches);
	if (f->scan_known && f->scan_touches)
		snprintf(scans, sizeof(scans), " (and %llu a scan's, not judged)",
			 (unsigned long long)f->scan_touches);
	if (o.touches < UNMARKED_MIN_FAULTS)
		c = checks_add(a, def, CHECK_SKIP, "could not tell, because %llu of the hot loop's %llu first touches of %s "
			       "continue a scan (each at the edge line of a page beside one its thread first touched just "
			       "before or after): a scan meets every page there whether it reads one line of it or all, and "
			       "the %llu others are too few (under %d)", (unsigned long long)f->scan_touches,
			       (unsigned long long)f->loop_touches, p->fault_region, (unsigned long long)o.touches,
			       UNMARKED_MIN_FAULTS);
	else if (mode >= SAME_OFFSET_SHARE)
		c = checks_add(a, def, CHECK_WARN,
			       "%.0f %% of the hot loop's %llu first touches of %s%s were at byte %llu of their page: accesses "
			       "at one page offset use 1/64 of the cache sets (cache-set aliasing), so lines that would fit "
			       "thrash and the latency is DRAM's, hiding the TLB's share; rotate each access's line inside "
			       "its page (offset (i mod 64) x 64)", 100 * mode, (unsigned long long)o.touches,
			       p->fault_region, scans, (unsigned long long)o.mode);
	else
		c = checks_add(a, def, CHECK_PASS,
			       "the hot loop's %llu first touches of %s%s spread over %u of the 64 line offsets of a page "
			       "(the most common holds %.0f %%)", (unsigned long long)o.touches, p->fault_region, scans,
			       o.distinct_lines, 100 * mode);
	checks_evidence(c, "first_touches", (double)f->loop_touches);
	checks_evidence(c, "scan_first_touches", f->scan_known ? (double)f->scan_touches : NAN);
	checks_evidence(c, "judged_first_touches", (double)o.touches);
	checks_evidence(c, "offset_mode_bytes", (double)o.mode);
	checks_evidence(c, "offset_mode_share", mode);
	checks_evidence(c, "distinct_lines", o.distinct_lines);
}

static bool no_regions(const struct analysis_check_def *def, const struct sample_profile *p, struct analysis *a)
{
	if (!p->polls) {
		checks_add(a, def, CHECK_SKIP, "could not tell, because /proc/PID/smaps was never read: the command ended "
			   "before the first poll");
		return true;
	}
	/* Regions were watched, but maybe not the benchmark's: no hot thread in a process polled. */
	if (p->processes_unwatched && (!*p->program || !p->program_watched)) {
		checks_add(a, def, CHECK_SKIP, "could not tell, because the command started %u processes the watch did "
			   "not poll (more at once than it polls), and no hot thread was found in one it did",
			   p->processes_unwatched);
		return true;
	}
	if (!p->n_regions) {
		checks_add(a, def, CHECK_SKIP, "could not tell, because the command mapped no region of 1 MiB or more "
			   "(%u polls of its smaps)", p->polls);
		return true;
	}
	return false;
}

void checks_zero_page_reads(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct sample_profile *p = in->profile;
	const struct sample_watch_region *worst = NULL;
	double worst_share = 0;
	struct analysis_check *c;

	if (!p->faults_sampled) {
		checks_add(a, def, CHECK_SKIP, "could not tell, because the command's page faults were not sampled (a read "
			   "of memory never written faults once and stays out of Rss): %s",
			   *p->faults_error ? p->faults_error : "not opened");
		return;
	}
	if (no_regions(def, p, a))
		return;
	for (size_t i = 0; i < p->n_regions; i++) {
		const struct sample_watch_region *r = &p->regions[i];
		if (!r->anonymous || r->fault_pages < UNMARKED_MIN_FAULTS || r->hugetlb_max)
			continue;
		double s = share(r->rss_max, r->fault_pages * 4096);
		if (!worst || s < worst_share) {
			worst_share = s;
			worst = r;
		}
	}
	if (worst && worst_share < ZERO_PAGE_RESIDENT_SHARE)
		c = checks_add(a, def, CHECK_WARN,
			       "the %.1f MiB region at 0x%llx took page faults on %llu pages, but its Rss never exceeded %.0f "
			       "KiB (%.1f %% of them) at %u polls: those pages were read and never written, so each maps the "
			       "kernel's one shared zero page and the caches see 4 KiB, not the region; write the memory "
			       "(build the chain, memset it) before reading it", mib(worst->end - worst->start),
			       (unsigned long long)worst->start, (unsigned long long)worst->fault_pages,
			       (double)worst->rss_max / 1024, 100 * worst_share, p->polls);
	else if (worst)
		c = checks_add(a, def, CHECK_PASS, "no big region that took faults reads the zero page: the least resident "
			       "had %.0f %% of its faulted pages in Rss at its peak (a region read and never written has "
			       "about none; under %.0f %% warns)", 100 * (worst_share > 1 ? 1 : worst_share),
			       100 * ZERO_PAGE_RESIDENT_SHARE);
	else
		c = checks_add(a, def, CHECK_PASS, "no big anonymous region took %d or more page faults",
			       UNMARKED_MIN_FAULTS);
	checks_evidence(c, "resident_share", worst ? worst_share : 1);
	checks_evidence(c, "fault_pages", worst ? (double)worst->fault_pages : 0);
	checks_evidence(c, "rss_max_bytes", worst ? (double)worst->rss_max : 0);
}

void checks_thp_backed_region(const struct analysis_check_def *def, const struct analysis_input *in,
			      struct analysis *a)
{
	const struct sample_profile *p = in->profile;
	const struct sample_watch_region *thp = NULL;
	struct analysis_check *c;
	size_t declared = 0;

	if (no_regions(def, p, a))
		return;
	for (size_t i = 0; i < p->n_regions && !thp; i++) {
		const struct sample_watch_region *r = &p->regions[i];
		if (!r->anonymous || !r->rss_max || share(r->anon_huge_max, r->rss_max) < THP_RSS_SHARE)
			continue;
		if (checks_declared_verified(in, r->start, r->end))
			declared++;
		else
			thp = r;
	}
	if (thp)
		c = checks_add(a, def, CHECK_WARN,
			       "the %.1f MiB region at 0x%llx was %.1f MiB on transparent huge pages (%.0f %% of its Rss; %s): "
			       "a 4 KiB measurement on it times 2 MiB translations; if it stands for 4 KiB pages, advise it "
			       "MADV_NOHUGEPAGE (or set THP to madvise or never); if huge pages are what it measures, this "
			       "is expected", mib(thp->end - thp->start), (unsigned long long)thp->start, mib(thp->anon_huge_max),
			       100 * share(thp->anon_huge_max, thp->rss_max),
			       thp->vm_nh   ? "despite VmFlags nh: collapsed before MADV_NOHUGEPAGE"
			       : thp->vm_hg ? "VmFlags hg: the program advised it MADV_HUGEPAGE"
					    : "without MADV_HUGEPAGE: THP 'always', or khugepaged");
	else if (declared)
		c = checks_add(a, def, CHECK_PASS, "the %zu of the %zu big regions on transparent huge pages %s "
			       "declared by a phase, whose backing control_thp_contamination and huge_pages_granted "
			       "judge against the page declared; no undeclared region was (%u polls of smaps)", declared,
			       p->n_regions,
			       declared == 1 ? "was" : "were each", p->polls);
	else
		c = checks_add(a, def, CHECK_PASS, "none of the %zu big regions was on transparent huge pages (%u polls of "
			       "smaps)", p->n_regions, p->polls);
	checks_evidence(c, "anon_huge_bytes", thp ? (double)thp->anon_huge_max : 0);
	checks_evidence(c, "rss_bytes", thp ? (double)thp->rss_max : 0);
	checks_evidence(c, "vm_hg", thp && thp->vm_hg);
	checks_evidence(c, "vm_nh", thp && thp->vm_nh);
	if (declared)
		checks_evidence(c, "declared_regions", (double)declared);
}

/*
 * The polls saw the hot thread's mask over enough of its samples to judge it. A report from before
 * hot_samples (0 with samples known) is judged as it was then, on any sample.
 */
static bool affinity_covered(const struct sample_profile *p)
{
	if (!p->affinity_hot)
		return p->affinity_samples > 0;
	return p->affinity_samples >= AFFINITY_MIN_SAMPLES &&
	       share(p->affinity_samples, p->affinity_hot) >= AFFINITY_MIN_COVER;
}

void checks_pinning(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct sample_profile *p = in->profile;
	struct analysis_check *c;

	if (checks_no_clock(def, p, a))
		return;
	if (!p->hot_tid || !p->affinity_samples) {
		checks_add(a, def, CHECK_SKIP, "could not tell, because %s", !p->hot_tid
			   ? "no hot thread was found (see hot_loop)"
			   : "no poll read the hot thread's Cpus_allowed_list while its samples were taken");
		return;
	}
	if (!affinity_covered(p)) {
		c = checks_add(a, def, CHECK_SKIP, "could not tell, because the polls saw the hot thread's "
			       "Cpus_allowed_list hold over %llu of its %llu cpu-clock samples from its hot function on (%.0f "
			       "%%; %d and %.0f %% are needed): the mask may have changed unseen in the rest (a short "
			       "run, a benchmark that pins itself between two polls)", (unsigned long long)p->affinity_samples,
			       (unsigned long long)p->affinity_hot, 100 * share(p->affinity_samples, p->affinity_hot),
			       AFFINITY_MIN_SAMPLES, 100 * AFFINITY_MIN_COVER);
		checks_evidence(c, "samples", (double)p->affinity_samples);
		checks_evidence(c, "hot_samples", (double)p->affinity_hot);
		return;
	}
	double single = share(p->affinity_single, p->affinity_samples);
	if (single < PINNED_SHARE)
		c = checks_add(a, def, CHECK_WARN,
			       "the hot thread %u ran %.0f %% of its sampled CPU time from its hot function on with a "
			       "Cpus_allowed_list of %u CPUs: "
			       "not pinned, so the scheduler may move it mid-measurement and its caches and TLB go cold; pin "
			       "it (tlbprof run --cpu N, taskset -c N, or sched_setaffinity in the benchmark)", p->hot_tid,
			       100 * (1 - single), p->cpus_allowed_last > 1 ? p->cpus_allowed_last : p->cpus_allowed_first);
	else
		c = checks_add(a, def, CHECK_PASS, "the hot thread %u held a one-CPU Cpus_allowed_list for %.0f %% of its "
			       "sampled CPU time from its hot function on%s", p->hot_tid, 100 * single, p->cpus_allowed_first > 1
			       ? ": the mask narrowed after the command started (the benchmark, or a wrapper, pinned it), "
				 "and a move that pinning causes is no warning"
			       : ", at every poll that saw it");
	checks_evidence(c, "samples", (double)p->affinity_samples);
	checks_evidence(c, "hot_samples", (double)p->affinity_hot);
	checks_evidence(c, "single_cpu_share", single);
	checks_evidence(c, "cpus_allowed_first", p->cpus_allowed_first);
	checks_evidence(c, "cpus_allowed_last", p->cpus_allowed_last);
}

void checks_exec_image(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct sample_profile *p = in->profile;
	struct analysis_check *c;
	char chain[400] = "";

	if (!p->n_execs) {
		checks_add(a, def, CHECK_SKIP, "could not tell which image ran, because the cpu-clock sampler recorded no "
			   "exec (%s)", p->clock_sampled ? "no COMM record" : p->clock_error);
		return;
	}
	for (size_t i = 0; i < p->n_execs; i++) {
		size_t len = strlen(chain);
		snprintf(chain + len, sizeof(chain) - len, "%s%s", i ? " -> " : "", base_name(p->execs[i]));
	}
	if (*p->program && strcmp(p->program, p->execs[p->n_execs - 1]) != 0)
		c = checks_add(a, def, CHECK_PASS, "the hot thread ran in process %u, which the command (%s) started: "
			       "provenance (build_optimised) and symbols are those of %s, the image it ran", p->program_pid,
			       chain, p->program);
	else if (p->n_execs == 1)
		c = checks_add(a, def, CHECK_PASS, "the command exec'd %s itself: its provenance and symbols are that image's",
			       p->execs[0]);
	else
		c = checks_add(a, def, CHECK_PASS, "the command ran through a wrapper (%s): provenance (build_optimised) and "
			       "symbols are those of %s, the image finally exec'd", chain, p->execs[p->n_execs - 1]);
	checks_evidence(c, "execs", (double)p->n_execs);
	checks_evidence(c, "processes", (double)p->processes);
	if (p->program_pid)
		checks_evidence(c, "program_pid", (double)p->program_pid);
}

/*
 * cpu_migrations counts the whole command's moves. Where the hot thread's clock
 * reads were seen to the last and its cpu-clock samples say their CPU, what
 * matters is whether a thread of its process moved between its first and last
 * read: a move there is timed (a parallel loop's worker moving mid-loop), one
 * before (a benchmark that pins itself, its setup, a worker started on its
 * CPU) is not.
 */
static void rejudge_migrations_timed(const struct sample_profile *p, struct analysis_check *c)
{
	const struct sample_clocks *k = &p->clocks;

	/* Enough samples in the span: the hot thread's own, or its process's in the hot function (a joining timer). */
	uint64_t in_span = k->hot_samples_in_span > k->loop_weight_in_span ? k->hot_samples_in_span : k->loop_weight_in_span;
	if (!span_seen(p) || !k->cpus_known || in_span < UNMARKED_MIN_CLOCK_SAMPLES)
		return;
	if (!k->cpu_moves_in_span) {
		c->status = CHECK_PASS;
		analysis_text(c->message, sizeof(c->message),
			      "the moves counted fell outside the hot thread's timed span: the cpu-clock samples of its process "
			      "saw its threads move %llu time(s) in all, and none between its first and last clock read (%llu "
			      "samples there) on another CPU than the same thread's before", (unsigned long long)k->cpu_moves,
			      (unsigned long long)in_span);
	} else {
		analysis_text(c->message, sizeof(c->message),
			      "the hot thread's process moved its threads between CPUs %llu time(s) between the hot thread's "
			      "first and last clock read (of %llu moves its cpu-clock samples saw): timed moves, so caches and "
			      "TLBs went cold mid-measurement; pin it (tlbprof run --cpu N, taskset -c N, or sched_setaffinity "
			      "in the benchmark)", (unsigned long long)k->cpu_moves_in_span, (unsigned long long)k->cpu_moves);
	}
	checks_evidence(c, "moves_between_clock_reads", (double)k->cpu_moves_in_span);
	checks_evidence(c, "moves_seen", (double)k->cpu_moves);
}

/*
 * A thread that pins itself at startup can be moved once by that very
 * call; cpu_migrations then counts a move the benchmark asked for. A thread
 * whose mask holds one CPU cannot be moved, so when the hot thread held such
 * a mask for its sampled time (and at the last poll), the moves counted
 * happened before it was pinned or in other threads: that check's warning is
 * replaced by what the mask shows.
 */
static void rejudge_migrations(const struct sample_profile *p, struct analysis *a)
{
	double single = share(p->affinity_single, p->affinity_samples);
	bool pinned = affinity_covered(p) && single >= PINNED_SHARE && p->cpus_allowed_last == 1;

	for (size_t i = 0; i < a->n_checks; i++) {
		struct analysis_check *c = &a->checks[i];
		if (strcmp(c->id, "cpu_migrations") != 0 || c->status != CHECK_WARN)
			continue;
		if (!pinned) {
			rejudge_migrations_timed(p, c);
			continue;
		}
		c->status = CHECK_PASS;
		analysis_text(c->message, sizeof(c->message),
			      "the moves counted happened before the hot thread was pinned (the benchmark pinning itself at "
			      "startup) or in other threads: the hot thread held a one-CPU Cpus_allowed_list, under which no "
			      "move can happen, for %.0f %% of its sampled CPU time from its hot function on (see pinning)",
			      100 * single);
		checks_evidence(c, "pinned_share", single);
	}
}

int analysis_check_unmarked(struct analysis *a, const struct phase_result *results, size_t n,
			    const struct environment *env, const struct sample_profile *profile)
{
	const struct analysis_input in = { .results = results, .n = n, .env = env, .profile = profile };

	if (!a->checks || a->n_checks >= MAX_CHECKS)
		return -ENOMEM;
	checks_run(&in, ANALYSIS_CHECK_BY_UNMARKED, a);
	rejudge_migrations(profile, a);
	checks_rejudge_build(profile, a);
	checks_rejudge_declared(profile, a);
	analysis_finish(results, a);
	return 0;
}
