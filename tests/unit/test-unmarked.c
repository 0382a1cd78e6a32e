/* SPDX-License-Identifier: MIT */
/* Watching an unmarked command: the /proc parsers, and each check of checks_unmarked.c firing and staying quiet. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "judge/analysis.h"
#include "pmu/sample.h"
#include "target/clocks.h"
#include "target/watch.h"
#include "check.h"

static const char smaps_text[] =
	"55d4c0a00000-55d4c0a21000 r--p 00000000 08:01 1234    /usr/bin/bench with space\n"
	"Size:                132 kB\n"
	"Rss:                 128 kB\n"
	"AnonHugePages:         0 kB\n"
	"KernelPageSize:        4 kB\n"
	"VmFlags: rd mr mw me dw sd\n"
	"7f0000000000-7f0002000000 rw-p 00000000 00:00 0 \n"
	"Size:              32768 kB\n"
	"Rss:               30720 kB\n"
	"AnonHugePages:     28672 kB\n"
	"Private_Hugetlb:       0 kB\n"
	"KernelPageSize:        4 kB\n"
	"VmFlags: rd wr mr mw me ac sd hg\n"
	"7f1000000000-7f1000400000 rw-s 00000000 00:0f 99 /anon_hugepage (deleted)\n"
	"Rss:                   0 kB\n"
	"Shared_Hugetlb:     4096 kB\n"
	"KernelPageSize:     2048 kB\n"
	"VmFlags: rd wr sh mr mw me ms de ht sd nh\n";

struct seen {
	struct watch_vma v[4];
	char names[4][64];
	int n;
};

static void on_vma(void *ctx, const struct watch_vma *v)
{
	struct seen *s = ctx;

	if (s->n < 4) {
		s->v[s->n] = *v;
		snprintf(s->names[s->n], sizeof(s->names[0]), "%.*s", (int)v->name_len, v->name);
	}
	s->n++;
}

static void test_parsers(void)
{
	struct seen s = { 0 };
	uint64_t rss;

	CHECK(watch_smaps_parse(smaps_text, strlen(smaps_text), on_vma, &s) == 3 && s.n == 3, "3 VMAs: %d", s.n);
	CHECK(strcmp(s.names[0], "/usr/bin/bench with space") == 0 && !s.v[0].anonymous, "a file: '%s'", s.names[0]);
	CHECK(s.v[0].rss_bytes == 128 * 1024 && !s.v[0].vm_hg && !s.v[0].vm_nh, "its Rss, no THP flags");
	CHECK(s.v[1].anonymous && s.names[1][0] == '\0' && s.v[1].start == 0x7f0000000000ull &&
		      s.v[1].end == 0x7f0002000000ull, "an anonymous region '%s'", s.names[1]);
	CHECK(s.v[1].anon_huge_bytes == 28672ull * 1024 && s.v[1].vm_hg && !s.v[1].vm_nh, "THP advised: hg");
	CHECK(s.v[2].hugetlb_bytes == 4096ull * 1024 && s.v[2].kernel_page_bytes == 2048ull * 1024 && s.v[2].vm_nh,
	      "hugetlb, nh");
	CHECK(watch_smaps_parse("not smaps\n", 10, on_vma, &s) == -EINVAL, "not smaps");
	static const char status[] = "Name:\tbench\nState:\tR (running)\nVmHWM:\t 40960 kB\nVmRSS:\t   34816 kB\n"
				     "RssAnon:\t 32768 kB\n";
	CHECK(watch_status_rss(status, sizeof(status) - 1, &rss) == 0 && rss == 34816ull * 1024, "VmRSS %llu",
	      (unsigned long long)rss);
	CHECK(watch_status_rss("Name:\tbench\nState:\tZ (zombie)\n", strlen("Name:\tbench\nState:\tZ (zombie)\n"), &rss) == -EINVAL && rss == 0,
	      "an exited thread's status has no VmRSS");
}

/* A correct benchmark as watching saw it: chain built in an init function, chased pinned, one 32 MiB region. */
static void correct(struct sample_profile *p)
{
	memset(p, 0, sizeof(*p));
	p->clock_sampled = p->faults_sampled = true;
	p->clock_samples = 600;
	p->clock_own = 520;
	p->clock_kernel = 80;
	p->n_hot = 1;
	snprintf(p->hot[0].object, sizeof(p->hot[0].object), "/bench");
	snprintf(p->hot[0].function, sizeof(p->hot[0].function), "chase");
	p->hot[0].count = 500;
	snprintf(p->hot_exe_function, sizeof(p->hot_exe_function), "chase");
	p->hot_exe_count = 500;
	p->hot_lo = 0x1000;
	p->hot_hi = 0x1040;
	p->hot_pid = p->hot_tid = 42;
	p->fault_samples = 8300;
	p->has_pattern = true;
	p->faults = (struct sample_fault_pattern){ .faults = 8192, .pages = 8192, .faults_per_page = 1,
						   .function_faults = 8192 };
	snprintf(p->faults.function, sizeof(p->faults.function), "/bench:build_chain");
	snprintf(p->fault_region, sizeof(p->fault_region), "[anon]");
	p->fault_region_start = 0x7f0000000000ull;
	p->fault_region_end = p->fault_region_start + (32u << 20);
	p->polls = 20;
	p->n_regions = 1;
	p->regions[0] = (struct sample_watch_region){ .start = p->fault_region_start, .end = p->fault_region_end,
						      .anonymous = true, .vm_nh = true, .kernel_page_bytes = 4096,
						      .rss_max = 32u << 20, .faults = 8192, .fault_pages = 8192 };
	p->affinity_hot = 650;
	p->affinity_samples = 600;
	p->affinity_single = 600;
	p->cpus_allowed_first = p->cpus_allowed_last = 1;
	p->n_execs = 1;
	snprintf(p->execs[0], sizeof(p->execs[0]), "/bench");
}

static void first_touch(struct sample_profile *p)
{
	p->faults.in_hot_loop = p->faults.in_hot_function = 8192;
	p->faults.loop_touches = 8192;
	p->faults.steps = 8191;
	p->faults.step_mode_pages = -17;
	p->faults.step_mode_count = 4;
	p->faults.offset_mode_count = 300;
	p->faults.distinct_lines = 64;
}

static void sequential(struct sample_profile *p)
{
	first_touch(p);
	p->faults.step_mode_pages = 1;
	p->faults.step_mode_count = p->faults.steps_next_page = 8191;
}

/* The same scan by a sweep: its one load takes no address from a load (a Fortran array loop, STREAM). */
static void sequential_sweep(struct sample_profile *p)
{
	sequential(p);
	p->code.decoded = true;
	p->code.loads = 1;
	p->code.chained_loads = 0;
}

static void same_offset(struct sample_profile *p)
{
	first_touch(p);
	p->faults.offset_mode_count = 8192;
	p->faults.distinct_lines = 1;
}

/* A scan over three arrays side by side, each page met at its first line: the offsets say nothing. */
static void stream_scan(struct sample_profile *p)
{
	same_offset(p);
	p->faults.scan_known = true;
	p->faults.scan_touches = 8192;
	p->faults.other = (struct sample_touch_offsets){ 0 };
}

/* Byte 0 of pages in a random order, a few of them beside the one touched before: the trap. */
static void same_offset_scans_known(struct sample_profile *p)
{
	same_offset(p);
	p->faults.scan_known = true;
	p->faults.scan_touches = 12;
	p->faults.other = (struct sample_touch_offsets){ 8180, 0, 8180, 1 };
}

/* A walk at rotating lines: the 1 in 64 at line 0 continue the scan, the others spread. */
static void rotated_scans_known(struct sample_profile *p)
{
	sequential(p);
	p->faults.scan_known = true;
	p->faults.scan_touches = 128;
	p->faults.other = (struct sample_touch_offsets){ 8064, 64, 128, 63 };
}

/* An ascending first touch in one pass, all the loop did, and no clock read traced: mbw's fill of its arrays. */
static void one_pass_fill(struct sample_profile *p)
{
	sequential(p);
	p->faults.weight_known = true;
	p->faults.hot_weight = 570;
	p->faults.hot_weight_faulting = 570;
}

/* The same first touch as the first of many passes: a third of the loop's time came while it faulted. */
static void first_of_many(struct sample_profile *p)
{
	sequential(p);
	p->faults.weight_known = true;
	p->faults.hot_weight = 600;
	p->faults.hot_weight_faulting = 200;
}

/* The timed loop was chosen over the initialisation that ran more, outside the clock reads. */
static void untimed_init(struct sample_profile *p)
{
	snprintf(p->untimed_function, sizeof(p->untimed_function), "main");
	p->untimed_count = 240;
	p->hot_exe_count = 180;
}

static void zero_page(struct sample_profile *p)
{
	p->regions[0].rss_max = 12288;
}

static void thp(struct sample_profile *p)
{
	p->regions[0].vm_nh = false;
	p->regions[0].vm_hg = true;
	p->regions[0].anon_huge_max = 32u << 20;
}

static void unpinned(struct sample_profile *p)
{
	p->affinity_single = 0;
	p->cpus_allowed_first = p->cpus_allowed_last = 2;
}

/* The polls saw the mask over a few samples around a pin (a short run): the wide mask before it says nothing. */
static void mask_glimpsed(struct sample_profile *p)
{
	p->affinity_samples = 9;
	p->affinity_single = 0;
	p->cpus_allowed_first = 2;
}

/* More than 10 samples, but under half of them: the rest is unseen. */
static void mask_half_seen(struct sample_profile *p)
{
	p->affinity_samples = 320;
	p->affinity_single = 0;
	p->cpus_allowed_first = p->cpus_allowed_last = 2;
}

/* A report from before hot_samples (read back as 0): judged as then, on the samples it has. */
static void mask_old_report(struct sample_profile *p)
{
	p->affinity_hot = 0;
	p->affinity_samples = p->affinity_single = 5;
}

/*
 * The samples' CPU time against the run's task-clock: 600 samples of 250 us are 150 ms. Within a quarter of it,
 * as counted (a thread's last part-period unsampled); a third of it, as the JVM's samples were in a CI run
 * (1204 samples, 0.3 s, with the chase all but absent, where every other run of it held 0.8 s); and under
 * perf_event_paranoid 2, where the task-clock holds the kernel's side and the samples do not.
 */
static void accounted(struct sample_profile *p)
{
	correct(p);
	p->clock_period_ns = 250000;
	p->clock_task_ns = 190000000;
}

static void unaccounted(struct sample_profile *p)
{
	accounted(p);
	p->clock_task_ns = 450000000;
}

static void unaccounted_user_only(struct sample_profile *p)
{
	unaccounted(p);
	p->clock_user_only = true;
}

static void overaccounted(struct sample_profile *p)
{
	accounted(p);
	p->clock_task_ns = 100000000;
}

static void wrapped(struct sample_profile *p)
{
	p->n_execs = 2;
	snprintf(p->execs[0], sizeof(p->execs[0]), "/usr/bin/env");
	snprintf(p->execs[1], sizeof(p->execs[1]), "/bench");
}

/* Through a shell that forks the benchmark: the program is the child's image. */
static void forked(struct sample_profile *p)
{
	snprintf(p->execs[0], sizeof(p->execs[0]), "/usr/bin/dash");
	snprintf(p->program, sizeof(p->program), "/bench");
	p->program_pid = 43;
	p->program_watched = true;
	p->hot_pid = p->hot_tid = 43;
	p->processes = 2;
}

/* The command started more processes than the watch polls, and the hot thread was in none it did. */
static void unfollowed(struct sample_profile *p)
{
	p->processes = 1024;
	p->processes_unwatched = 7;
	p->program[0] = '\0';
}

/* The same, the hot thread's process known (its image) but never polled: its regions are not among them. */
static void unpolled(struct sample_profile *p)
{
	forked(p);
	p->processes = 40;
	p->processes_unwatched = 20;
	p->program_watched = false;
}

static void no_clock(struct sample_profile *p)
{
	p->clock_sampled = false;
	snprintf(p->clock_error, sizeof(p->clock_error), "Permission denied");
}

static void no_faults(struct sample_profile *p)
{
	p->faults_sampled = false;
	snprintf(p->faults_error, sizeof(p->faults_error), "Permission denied");
}

static void no_polls(struct sample_profile *p)
{
	p->polls = 0;
	p->n_regions = 0;
}

static enum check_status status_of(const struct analysis *a, const char *id, const char **msg)
{
	for (size_t i = 0; i < a->n_checks; i++)
		if (strcmp(a->checks[i].id, id) == 0) {
			*msg = a->checks[i].message;
			return a->checks[i].status;
		}
	*msg = "(missing)";
	return (enum check_status)-1;
}

/* The first-touch trap, with more fault records lost (a ring full) than faults seen: it could be either way. */
static void records_lost(struct sample_profile *p)
{
	first_touch(p);
	p->faults_lost = 9000;
}

/* A few fault records lost, too few to make the faults seen outside the hot loop half: the pass stands. */
static void few_lost(struct sample_profile *p)
{
	p->faults_lost = 100;
}

/* The first-touch trap in a shared library's function that a launcher executable calls (broken-first_touch_lib). */
static void in_library(struct sample_profile *p)
{
	first_touch(p);
	p->clock_libs = p->clock_own;
	p->clock_own = 0;
	snprintf(p->hot_library, sizeof(p->hot_library), "/usr/lib/libkernel.so.1");
}

/* The first-touch trap in hand-written assembly that no symbol or unwind entry covers (broken-first_touch_asm). */
static void uncovered_code(struct sample_profile *p)
{
	first_touch(p);
	snprintf(p->hot_exe_function, sizeof(p->hot_exe_function), "[unknown]");
}

static void test_checks(void)
{
	static const char *const ids[] = { "hot_loop", "first_touch_in_timed_loop", "sequential_page_order",
					   "same_page_offset", "zero_page_reads", "thp_backed_region", "pinning",
					   "exec_image" };
	enum { N_IDS = sizeof(ids) / sizeof(ids[0]) };
	enum { P = CHECK_PASS, W = CHECK_WARN, S = CHECK_SKIP };
	static const struct {
		int line;
		const char *name;
		void (*change)(struct sample_profile *p);
		int want[N_IDS];	/* in the order of ids */
		const char *says;	/* a word the first warning (or skip) must hold */
	} rows[] = {
		{ __LINE__, "correct", NULL, { P, P, S, S, P, P, P, P }, "could not tell" },
		{ __LINE__, "first touch in the loop", first_touch, { P, W, P, P, P, P, P, P }, "first touch" },
		{ __LINE__, "sequential scan", sequential, { P, W, W, P, P, P, P, P }, "ascending" },
		{ __LINE__, "sequential sweep", sequential_sweep, { P, W, W, P, P, P, P, P }, "bandwidth by design" },
		{ __LINE__, "records lost", records_lost, { P, S, P, P, P, P, P, P }, "anywhere from 48 % to 100 %" },
		{ __LINE__, "a few records lost", few_lost, { P, P, S, S, P, P, P, P }, "could not tell" },
		{ __LINE__, "in a library", in_library, { P, W, P, P, P, P, P, P }, "chase, in libkernel.so.1: the busiest" },
		{ __LINE__, "in code no symbol covers", uncovered_code, { P, W, P, P, P, P, P, P },
		  "hot loop in code no symbol covers" },
		{ __LINE__, "one page offset", same_offset, { P, W, P, W, P, P, P, P }, "1/64" },
		{ __LINE__, "one page offset, scans known", same_offset_scans_known, { P, W, P, W, P, P, P, P },
		  "of [anon] (and 12 a scan's, not judged) were at byte 0" },
		{ __LINE__, "a scan at the first lines", stream_scan, { P, W, P, S, P, P, P, P }, "continue a scan" },
		{ __LINE__, "a walk at rotating lines", rotated_scans_known, { P, W, W, P, P, P, P, P },
		  "8064 first touches of [anon] (and 128 a scan's, not judged) spread over 63" },
		{ __LINE__, "one pass over fresh memory", one_pass_fill, { P, S, S, S, P, P, P, P },
		  "are all it did (100 % of its CPU time came while it took them)" },
		{ __LINE__, "the first of many passes", first_of_many, { P, W, W, P, P, P, P, P }, "first touch" },
		{ __LINE__, "initialisation outweighs the timed loop", untimed_init, { P, P, S, S, P, P, P, P },
		  "(30 % of the CPU time, instructions 0x1000-0x1040), the code timed: main (40 %) ran more, outside" },
		{ __LINE__, "zero page", zero_page, { P, P, S, S, W, P, P, P }, "zero page" },
		{ __LINE__, "THP in a 4k region", thp, { P, P, S, S, P, W, P, P }, "MADV_HUGEPAGE" },
		{ __LINE__, "not pinned", unpinned, { P, P, S, S, P, P, W, P }, "not pinned" },
		{ __LINE__, "mask seen over 9 samples", mask_glimpsed, { P, P, S, S, P, P, S, P }, "over 9 of its 650" },
		{ __LINE__, "mask seen over 49 %", mask_half_seen, { P, P, S, S, P, P, S, P }, "(49 %;" },
		{ __LINE__, "a report from before hot_samples", mask_old_report, { P, P, S, S, P, P, P, P }, "for 100 %" },
		{ __LINE__, "samples of 79 % of the task-clock", accounted, { P, P, S, S, P, P, P, P }, "could not tell" },
		{ __LINE__, "samples of a third of the task-clock", unaccounted, { S, S, S, S, P, P, S, P },
		  "stand for 150 ms of CPU time where the command's task-clock counted 450 ms over the same run" },
		{ __LINE__, "a third, user space only", unaccounted_user_only, { P, P, S, S, P, P, P, P }, "could not tell" },
		{ __LINE__, "samples of 150 % of the task-clock", overaccounted, { S, S, S, S, P, P, S, P },
		  "threads did not keep the period their samples were weighed by" },
		{ __LINE__, "through env", wrapped, { P, P, S, S, P, P, P, P }, "env -> bench" },
		{ __LINE__, "forked by sh", forked, { P, P, S, S, P, P, P, P }, "process 43, which the command (dash)" },
		{ __LINE__, "not followed", unfollowed, { P, P, S, S, S, S, P, P }, "did not poll" },
		{ __LINE__, "not polled", unpolled, { P, P, S, S, S, S, P, P }, "did not poll" },
		{ __LINE__, "no cpu-clock", no_clock, { S, S, S, S, P, P, S, P }, "could not tell" },
		{ __LINE__, "no fault samples", no_faults, { P, S, S, S, S, P, P, P }, "not sampled" },
		{ __LINE__, "no smaps poll", no_polls, { P, P, S, S, S, S, P, P }, "never read" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct sample_profile p;
		struct analysis a;
		bool said = false;
		correct(&p);
		if (rows[i].change)
			rows[i].change(&p);
		CHECK_ROW(rows[i].line, analysis_run(NULL, 0, NULL, NULL, &a) == 0 &&
				  analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "%s: analysed", rows[i].name);
		for (size_t k = 0; k < N_IDS; k++) {
			const char *msg;
			enum check_status st = status_of(&a, ids[k], &msg);
			CHECK_ROW(rows[i].line, st == (enum check_status)rows[i].want[k], "%s: %s is %s: %s", rows[i].name,
				  ids[k], check_status_name(st) ? check_status_name(st) : "?", msg);
			said |= strstr(msg, rows[i].says) != NULL;
		}
		CHECK_ROW(rows[i].line, said, "%s: no message says '%s'", rows[i].name, rows[i].says);
		analysis_free(&a);
	}
}

static void set_status(struct analysis *a, const char *id, enum check_status st)
{
	for (size_t i = 0; i < a->n_checks; i++)
		if (strcmp(a->checks[i].id, id) == 0)
			a->checks[i].status = st;
}

/* A self-pinning benchmark's one move is no cpu_migrations warning once the hot thread's mask is known. */
static void test_rejudge(void)
{
	struct sample_profile p;
	struct analysis a;
	const char *msg;

	correct(&p);
	p.cpus_allowed_first = 2;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0, "analysed");
	/* As analysis_run() would have judged a command that moved once. */
	set_status(&a, "cpu_migrations", CHECK_WARN);
	CHECK(analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "unmarked checks");
	CHECK(status_of(&a, "cpu_migrations", &msg) == CHECK_PASS && strstr(msg, "before the hot thread was pinned"),
	      "rejudged: %s", msg);
	analysis_free(&a);
	unpinned(&p);
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0, "analysed");
	set_status(&a, "cpu_migrations", CHECK_WARN);
	CHECK(analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "unmarked checks");
	CHECK(status_of(&a, "cpu_migrations", &msg) == CHECK_WARN, "an unpinned thread's moves still warn");
	analysis_free(&a);
	/* A one-CPU mask seen over too few of the samples does not clear them either. */
	correct(&p);
	p.affinity_samples = p.affinity_single = 300;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0, "analysed");
	set_status(&a, "cpu_migrations", CHECK_WARN);
	CHECK(analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "unmarked checks");
	CHECK(status_of(&a, "cpu_migrations", &msg) == CHECK_WARN, "a mask seen over 46 %% of the samples: %s", msg);
	analysis_free(&a);
	/* Unpinned, with its clock reads seen: moves outside the timed span pass, moves inside it warn. */
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true, .windows = 1, .hot_reads = 2,
					   .hot_samples = 400, .hot_samples_in_span = 300, .cpus_known = true,
					   .cpu_moves = 2 };
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0, "analysed");
	set_status(&a, "cpu_migrations", CHECK_WARN);
	CHECK(analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "unmarked checks");
	CHECK(status_of(&a, "cpu_migrations", &msg) == CHECK_PASS && strstr(msg, "outside the hot thread's timed span"),
	      "moves before the first read: %s", msg);
	analysis_free(&a);
	p.clocks.cpu_moves_in_span = 1;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0, "analysed");
	set_status(&a, "cpu_migrations", CHECK_WARN);
	CHECK(analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "unmarked checks");
	CHECK(status_of(&a, "cpu_migrations", &msg) == CHECK_WARN && strstr(msg, "1 time(s) between the hot thread's first and last"),
	      "a timed move: %s", msg);
	analysis_free(&a);
}

/* A build that records no level: build_optimised is answered from the hot loop's code, and says it inferred it. */
static void test_rejudge_build(void)
{
	static const struct {
		int line;
		const char *opt_level;
		bool frame_pointer;
		unsigned instructions, stack, reloaded;
		enum check_status want;
		const char *says;
	} rows[] = {
		{ __LINE__, "", true, 10, 6, 2, CHECK_WARN, "inferred from its machine code" },
		{ __LINE__, "", false, 3, 0, 0, CHECK_PASS, "keeps its variables in registers" },
		/* a frame pointer (-fno-omit-frame-pointer) and one spill reloaded: not enough stack traffic */
		{ __LINE__, "", true, 12, 2, 1, CHECK_PASS, "inferred" },
		/* stack-heavy but no frame pointer and nothing reloaded: no -O0 marks */
		{ __LINE__, "", false, 9, 5, 0, CHECK_PASS, "inferred" },
		/* a recorded level is not second-guessed */
		{ __LINE__, "-O2", true, 10, 6, 2, CHECK_PASS, "was compiled -O2" },
		{ __LINE__, "-O0", false, 3, 0, 0, CHECK_WARN, "was compiled -O0" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct sample_profile p;
		struct analysis a;
		const char *msg;
		correct(&p);
		p.code = (struct sample_code){ .decoded = true, .frame_pointer = rows[i].frame_pointer,
					       .instructions = rows[i].instructions, .stack_accesses = rows[i].stack,
					       .reloaded_slots = rows[i].reloaded, .loop_start = 0x11f4, .loop_end = 0x121d };
		struct analysis_build build = { .binary = "/bench", .opt_level = rows[i].opt_level, .opt_levels = "",
						.source = *rows[i].opt_level ? "dwarf-producer" : "none" };
		CHECK_ROW(rows[i].line, analysis_run(NULL, 0, NULL, NULL, &a) == 0 &&
				  analysis_check_build(&a, NULL, 0, &build) == 0 &&
				  analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
		enum check_status st = status_of(&a, "build_optimised", &msg);
		CHECK_ROW(rows[i].line, st == rows[i].want && strstr(msg, rows[i].says), "build_optimised is %s: %s",
			  check_status_name(st) ? check_status_name(st) : "?", msg);
		analysis_free(&a);
	}
	/* No hot loop decoded: the skip and its reason stay. */
	struct sample_profile p;
	struct analysis a;
	const char *msg;
	correct(&p);
	struct analysis_build build = { .binary = "/bench", .opt_level = "", .opt_levels = "", .source = "none" };
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_build(&a, NULL, 0, &build) == 0 &&
	      analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "build_optimised", &msg) == CHECK_SKIP && strstr(msg, "records no optimisation level"),
	      "no code: still skipped: %s", msg);
	analysis_free(&a);
}

/*
 * An ascending first touch by the hot loop, which the clock reads show untimed: the loop is an initialisation
 * (broken-rust_correct's write of every page), and the order checks cannot speak of the timed accesses.
 */
static void test_untimed_touches(void)
{
	struct sample_profile p;
	struct analysis a;
	const char *msg;

	correct(&p);
	sequential(&p);
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true, .windows = 1, .hot_reads = 2,
					   .region_faults = 8192, .measured_known = true };
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "sequential_page_order", &msg) == CHECK_SKIP && strstr(msg, "are not the timed code's: it ran "
	      "in none of the hot thread's 1 clock windows"), "untimed walk: %s", msg);
	CHECK(status_of(&a, "same_page_offset", &msg) == CHECK_SKIP && strstr(msg, "not the timed code's"),
	      "untimed walk, offsets: %s", msg);
	analysis_free(&a);
	/* 40 of 8192 faults timed: still not the timed code's. */
	p.clocks.measured_windows = 1;
	p.clocks.region_faults_measured = 40;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "sequential_page_order", &msg) == CHECK_SKIP && strstr(msg, "40 of the 8192 page faults"),
	      "40 timed: %s", msg);
	analysis_free(&a);
	/* Timed, every fault: the walk is the timed code's, and warned. */
	p.clocks.region_faults_measured = 8192;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "sequential_page_order", &msg) == CHECK_WARN, "timed walk: %s", msg);
	analysis_free(&a);
}

/*
 * The timed faults in one of the ten clock windows the hot loop ran in, none from the loop: a read at the program's
 * start (for a total it prints) opened a window around its memset and warm-up, and the reps that follow took none.
 * first_touch_in_timed_loop could not tell; in every window, or from the loop, or without the count (an older
 * report), it warns as before.
 */
static void test_few_faulted_windows(void)
{
	static const struct {
		int line;
		uint64_t faulted;
		bool known, from_loop;
		enum check_status want;
		const char *says;
	} rows[] = {
		{ __LINE__, 1, true, false, CHECK_SKIP, "fell in 1 of the 10 clock windows its hot loop ran in" },
		{ __LINE__, 3, true, false, CHECK_SKIP, "the loop's other 7 windows took none" },
		{ __LINE__, 4, true, false, CHECK_WARN, "the timed code is the memory's first touch" },
		{ __LINE__, 10, true, false, CHECK_WARN, "the timed code is the memory's first touch" },
		{ __LINE__, 1, false, false, CHECK_WARN, "the timed code is the memory's first touch" },
		{ __LINE__, 1, true, true, CHECK_WARN, "the timed code is the memory's first touch" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct sample_profile p;
		struct analysis a;
		const char *msg = NULL;
		correct(&p);
		if (rows[i].from_loop)
			first_touch(&p);
		p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true, .windows = 20, .hot_reads = 21,
						   .region_faults = 8192, .measured_known = true, .measured_windows = 10,
						   .region_faults_measured = 8192, .faulted_known = rows[i].known,
						   .measured_windows_faulted = rows[i].faulted };
		CHECK_ROW(rows[i].line, analysis_run(NULL, 0, NULL, NULL, &a) == 0 &&
				  analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
		enum check_status st = status_of(&a, "first_touch_in_timed_loop", &msg);
		CHECK_ROW(rows[i].line, st == rows[i].want && msg && strstr(msg, rows[i].says),
			  "%llu of 10 faulted: %s: %s", (unsigned long long)rows[i].faulted,
			  check_status_name(st) ? check_status_name(st) : "?", msg ? msg : "(none)");
		analysis_free(&a);
	}
}

/*
 * cpu_time_clock: the hot thread's reads of CLOCK_PROCESS_CPUTIME_ID (clock() reads it through clock_gettime: 40
 * calls of each, 80 reads) against its other threads' CPU time between its first and last read (samples of 250 us).
 */
static void test_cpu_time_clock(void)
{
	static const struct {
		int line;
		uint64_t cputime_calls, others;	/* its 320 own samples in the span: 80 ms */
		bool known;
		enum check_status want;
		const char *says;
	} rows[] = {
		{ __LINE__, 40, 320, true, CHECK_WARN, "its other threads ran 80 ms on CPUs between its first and last "
		  "read beside its own 80 ms: a window reads their sum, up to 2.0x" },
		{ __LINE__, 40, 16, true, CHECK_PASS,
		  "ran 4.0 ms between its first and last read beside its own 80 ms" },
		{ __LINE__, 40, 4, true, CHECK_PASS, "within a tenth, its own" },	/* 1 ms: under 2 ms */
		{ __LINE__, 10, 320, true, CHECK_PASS, "timed with elapsed time: 10 of its 80" },	/* reports CPU */
		{ __LINE__, 0, 320, true, CHECK_PASS, "timed with elapsed time" },
		{ __LINE__, 40, 0, false, CHECK_SKIP, "an older one" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct sample_profile p;
		struct analysis a;
		const char *msg = NULL;
		correct(&p);
		p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true, .windows = 79, .hot_reads = 80,
						   .hot_samples_in_span = 320, .others_known = rows[i].known,
						   .others_in_span = rows[i].others };
		p.clocks.id_calls[CLOCK_PROCESS_CPUTIME_ID] = rows[i].cputime_calls;
		CHECK_ROW(rows[i].line, analysis_run(NULL, 0, NULL, NULL, &a) == 0 &&
				  analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
		enum check_status st = status_of(&a, "cpu_time_clock", &msg);
		CHECK_ROW(rows[i].line, st == rows[i].want && msg && strstr(msg, rows[i].says), "cpu_time_clock %s: %s",
			  check_status_name(st) ? check_status_name(st) : "?", msg ? msg : "(none)");
		analysis_free(&a);
	}
}

/*
 * Where the hot thread was in the windows its hot loop ran in, from the command's switches (clocks_measured), and
 * off_cpu_in_timed_window's verdicts.
 */
static void test_off_cpu(void)
{
	const uint64_t ms = 1000000, us = 1000;
	static struct sample_record reads[4];
	struct sample_list lists[SAMPLE_CLOCK_FNS] = { { 0 } };
	const uint64_t res[SAMPLE_CLOCK_IDS] = { 1, 1, 1, 1, 1, 4000000, 4000000, 1, 0 };
	/* Reads at 0, 10, 20 and 30 ms; the loop's samples in the first and last windows, none in the middle one. */
	for (size_t i = 0; i < 4; i++)
		reads[i] = (struct sample_record){ .tid = 42, .time_ns = 100 * ms + i * 10 * ms, .regs = { 1 },
						   .n_regs = 1 };
	lists[SAMPLE_CLOCK_GETTIME] = (struct sample_list){ reads, 4, 4 };
	const struct clocks_mark marks[] = { { 101 * ms, 1 }, { 109 * ms, 1 }, { 121 * ms, 1 }, { 129 * ms, 1 } };
#define OUT(id, t, pre) { .kind = SAMPLE_TASK_SWITCH_OUT, .tid = id, .time_ns = 100 * ms + (t), .preempted = pre }
#define IN(id, t) { .kind = SAMPLE_TASK_SWITCH_IN, .tid = id, .time_ns = 100 * ms + (t) }
	struct sample_task sw[] = {
		OUT(45, 1 * ms, false),					/* on a CPU from the start, then asleep */
		IN(47, 2 * ms), { .kind = SAMPLE_TASK_EXIT, .tid = 47, .time_ns = 100 * ms + 4 * ms },	/* then gone */
		OUT(42, 5 * ms, false), IN(42, 8 * ms),			/* asleep 3 ms, nothing else running: idle */
		OUT(42, 12 * ms, false), IN(42, 18 * ms),		/* asleep in the window between two reps */
		IN(46, 15 * ms), OUT(46, 15 * ms, false),		/* a spell of no length */
		IN(43, 21 * ms), OUT(43, 24 * ms, false),		/* 43 runs 21-24 ms */
		OUT(42, 22 * ms, true), IN(42, 25 * ms),		/* preempted 3 ms, 2 of them while 43 ran */
		OUT(42, 26 * ms, false), IN(42, 28 * ms),		/* asleep 2 ms; 44 runs or waits from 26.5 */
		IN(44, 26 * ms + 500 * us), OUT(44, 27 * ms, true), IN(44, 27 * ms + 500 * us), OUT(44, 29 * ms, false),
	};
#undef OUT
#undef IN
	/*
	 * Who took the hot thread's CPU: with the switches' CPUs, 43 only where it ran on the CPU 42 left (0); without
	 * them (-1), 43 counts where as many others ran as the command may use CPUs (1 of 1; not of 2).
	 */
	static const struct {
		int line;
		int32_t cpu_42, cpu_43;
		unsigned cpus;
		uint64_t own_ns;
	} who[] = {
		{ __LINE__, 0, 0, 2, 2000000 }, { __LINE__, 0, 1, 1, 0 }, { __LINE__, -1, -1, 1, 2000000 },
		{ __LINE__, -1, -1, 2, 0 },
	};
	struct sample_profile p;
	correct(&p);
	for (size_t r = 0; r < sizeof(who) / sizeof(who[0]); r++) {
		for (size_t i = 0; i < sizeof(sw) / sizeof(sw[0]); i++)
			sw[i].cpu = sw[i].tid == 43 ? who[r].cpu_43 : sw[i].tid == 42 ? who[r].cpu_42 : who[r].cpu_43 < 0 ? -1 : 1;
		const struct clocks_switches s = { sw, sizeof(sw) / sizeof(sw[0]), who[r].cpus, true };
		p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
		clocks_profile(lists, 42, res, 10000000, &s, NULL, &p.clocks);
		CHECK_ROW(who[r].line, clocks_measured(lists, 42, 42, marks, 4, NULL, 0, 0, &s, &p.clocks) &&
				  p.clocks.waits_known && p.clocks.measured_windows == 2 &&
				  p.clocks.measured_span_ns == 20 * ms && p.clocks.measured_blocked_ns == 5 * ms &&
				  p.clocks.measured_idle_ns == 3 * ms + 500 * us && p.clocks.measured_preempted_ns == 3 * ms &&
				  p.clocks.measured_preempted_own_ns == who[r].own_ns && p.clocks.command_cpus == who[r].cpus,
			  "%llu windows, span %llu, blocked %llu, idle %llu, preempted %llu, own %llu ns",
			  (unsigned long long)p.clocks.measured_windows, (unsigned long long)p.clocks.measured_span_ns,
			  (unsigned long long)p.clocks.measured_blocked_ns, (unsigned long long)p.clocks.measured_idle_ns,
			  (unsigned long long)p.clocks.measured_preempted_ns,
			  (unsigned long long)p.clocks.measured_preempted_own_ns);
	}
	/*
	 * On many CPUs, each its own: the hot thread preempted 2 ms on each of 20 CPUs in turn, another task of the
	 * command running on that CPU meanwhile. Every piece is its own tasks' turn, whichever CPU (a sweep of 16 CPUs
	 * apart and the rest by depth counted 32 of the 40 ms).
	 */
	static struct sample_task many[4 * 20];
	for (int32_t c = 0; c < 20; c++) {
		uint64_t at = 101 * ms + (uint64_t)c * 400 * us;
		many[4 * c] = (struct sample_task){ .kind = SAMPLE_TASK_SWITCH_OUT, .tid = 42, .time_ns = at,
						    .preempted = true, .cpu = c };
		many[4 * c + 1] = (struct sample_task){ .kind = SAMPLE_TASK_SWITCH_IN, .tid = 100 + (uint32_t)c,
							.time_ns = at, .cpu = c };
		many[4 * c + 2] = (struct sample_task){ .kind = SAMPLE_TASK_SWITCH_OUT, .tid = 100 + (uint32_t)c,
							.time_ns = at + 200 * us, .cpu = c };
		many[4 * c + 3] = (struct sample_task){ .kind = SAMPLE_TASK_SWITCH_IN, .tid = 42, .time_ns = at + 200 * us,
							.cpu = c };
	}
	const struct clocks_switches wide = { many, 4 * 20, 20, true };
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, &wide, NULL, &p.clocks);
	CHECK(clocks_measured(lists, 42, 42, marks, 4, NULL, 0, 0, &wide, &p.clocks) && p.clocks.waits_known &&
		      p.clocks.measured_preempted_ns == 4 * ms && p.clocks.measured_preempted_own_ns == 4 * ms,
	      "20 CPUs: preempted %llu ns, by its own tasks %llu ns (want 4 ms each)",
	      (unsigned long long)p.clocks.measured_preempted_ns, (unsigned long long)p.clocks.measured_preempted_own_ns);

	/* Before Linux 4.17 a switch out does not say it was a preemption: every one reads as a block. */
	const struct clocks_switches old = { sw, sizeof(sw) / sizeof(sw[0]), 2, false };
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, &old, NULL, &p.clocks);
	CHECK(clocks_measured(lists, 42, 42, marks, 4, NULL, 0, 0, &old, &p.clocks) && p.clocks.switches_known &&
		      !p.clocks.waits_known && !p.clocks.measured_idle_ns,
	      "no preemption marked: the waits unknown (%d), the time on a CPU known (%d)", p.clocks.waits_known,
	      p.clocks.switches_known);

	static const struct {
		int line;
		uint64_t span_ms, idle_us, pre_us, own_us;	/* blocked: the idle time and 1 ms more */
		bool known;
		uint64_t measured;
		enum check_status want;
		const char *says;
	} rows[] = {
		{ __LINE__, 300, 90000, 0, 0, true, 10, CHECK_WARN, "sat off every CPU for 30 % of the windows" },
		{ __LINE__, 300, 15000, 0, 0, true, 10, CHECK_PASS, "asleep 16 ms, the whole command off every CPU for 15" },
		{ __LINE__, 5, 900, 0, 0, true, 10, CHECK_PASS, "on a CPU for 62 %" },	/* 18 %, but under 1 ms */
		{ __LINE__, 300, 0, 100000, 90000, true, 10, CHECK_WARN, "than the CPUs it may use (2 at its last look)" },
		{ __LINE__, 300, 0, 180000, 0, true, 10, CHECK_WARN, "the machine was busy" },
		{ __LINE__, 300, 0, 120000, 30000, true, 10, CHECK_PASS, "waiting for a CPU 120 ms, 30 ms of it" },
		{ __LINE__, 300, 90000, 0, 0, false, 10, CHECK_SKIP, "context switches of the command's tasks" },
		{ __LINE__, 0, 0, 0, 0, true, 0, CHECK_SKIP, "no window between the hot thread's reads held its hot loop" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct analysis a;
		const char *msg = NULL;
		correct(&p);
		p.cpus_allowed_last = 2;
		p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true, .windows = 19, .hot_reads = 20,
						   .measured_known = true, .waits_known = rows[i].known,
						   .measured_windows = rows[i].measured, .measured_span_ns = rows[i].span_ms * ms,
						   .measured_idle_ns = rows[i].idle_us * us,
						   .measured_blocked_ns = rows[i].idle_us * us + ms,
						   .measured_preempted_ns = rows[i].pre_us * us,
						   .measured_preempted_own_ns = rows[i].own_us * us };
		CHECK_ROW(rows[i].line, analysis_run(NULL, 0, NULL, NULL, &a) == 0 &&
				  analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
		enum check_status st = status_of(&a, "off_cpu_in_timed_window", &msg);
		CHECK_ROW(rows[i].line, st == rows[i].want && msg && strstr(msg, rows[i].says),
			  "off_cpu_in_timed_window %s: %s", check_status_name(st) ? check_status_name(st) : "?",
			  msg ? msg : "(none)");
		analysis_free(&a);
	}
}

/* The hot thread's clock reads merged over functions, and the two checks that read them. */
static void test_clocks(void)
{
	static struct sample_record gettime[3000], times_rec[2];
	struct sample_list lists[SAMPLE_CLOCK_FNS] = { { 0 } };
	const uint64_t res[SAMPLE_CLOCK_IDS] = { 1, 1, 1, 1, 1, 4000000, 4000000, 1, 0 };
	struct sample_profile p;
	struct analysis a;
	const char *msg;

	/*
	 * 3000 reads of CLOCK_MONOTONIC 14.5 or 15.5 us apart (a 14.5 us trap each, and 1 us of work in every other
	 * window), another thread's read, two times(), the hot thread's just before its first clock_gettime.
	 */
	for (size_t i = 0; i < 3000; i++)
		gettime[i] = (struct sample_record){ .tid = 7, .time_ns = 1000000 + i * 15000 + (i % 2) * 500,
						     .regs = { 1 }, .n_regs = 1 };
	gettime[5].tid = 8;
	times_rec[0] = (struct sample_record){ .tid = 7, .time_ns = 999000 };
	times_rec[1] = (struct sample_record){ .tid = 9, .time_ns = 999500 };
	lists[SAMPLE_CLOCK_GETTIME] = (struct sample_list){ gettime, 3000, 3000 };
	lists[SAMPLE_CLOCK_TIMES] = (struct sample_list){ times_rec, 2, 2 };
	correct(&p);
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 7, res, 10000000, NULL, NULL, &p.clocks);
	CHECK(p.clocks.hot_reads == 3000 && p.clocks.windows == 2999 && p.clocks.id_calls[1] == 2999,
	      "reads %llu, windows %llu, CLOCK_MONOTONIC %llu: only the hot thread's", (unsigned long long)p.clocks.hot_reads,
	      (unsigned long long)p.clocks.windows, (unsigned long long)p.clocks.id_calls[1]);
	CHECK(p.clocks.coarsest_ns == 10000000 && p.clocks.coarsest_fn == SAMPLE_CLOCK_TIMES && p.clocks.coarsest_id == -1,
	      "times() is the coarsest: a 10 ms tick (%llu ns)", (unsigned long long)p.clocks.coarsest_ns);
	CHECK(p.clocks.window_min_ns == 1000 && p.clocks.window_median_ns >= 14500 && p.clocks.window_median_ns <= 15500,
	      "windows: min %llu, median %llu", (unsigned long long)p.clocks.window_min_ns,
	      (unsigned long long)p.clocks.window_median_ns);
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(p.clocks.window_work_p75_ns == 1000, "work beyond the traps around each window: %llu ns",
	      (unsigned long long)p.clocks.window_work_p75_ns);
	/* The one 1 us window is not the traps' cost: the windows around each say 14.5 us. */
	CHECK(status_of(&a, "clock_per_access", &msg) == CHECK_WARN && strstr(msg, "every access"),
	      "1 us of work a window, one fast window aside: %s", msg);
	CHECK(status_of(&a, "coarse_clock", &msg) == CHECK_WARN && strstr(msg, "times"),
	      "45 ms windows of a 10 ms tick: %s", msg);
	analysis_free(&a);

	/* Reads 15 us apart with nothing between: the traps' cost only. */
	for (size_t i = 0; i < 3000; i++)
		gettime[i].time_ns = 1000000 + i * 15000;
	lists[SAMPLE_CLOCK_TIMES].count = 0;
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 7, res, 10000000, NULL, NULL, &p.clocks);
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "clock_per_access", &msg) == CHECK_WARN && strstr(msg, "every access"), "per access: %s", msg);
	CHECK(status_of(&a, "coarse_clock", &msg) == CHECK_PASS, "CLOCK_MONOTONIC: %s", msg);
	analysis_free(&a);

	/*
	 * The same 2999 windows of the traps, and a last one of 300 ms: a runtime's own reads at startup, then its
	 * loop between two. The loop's samples (200 of them, every 250 us after the read before it) and two in the
	 * short windows (its interpreter) put its median weight in the long window: whole loops.
	 */
	gettime[2999].time_ns = gettime[2998].time_ns + 300000000;
	static struct clocks_mark loop_marks[202];
	for (size_t i = 0; i < 200; i++)
		loop_marks[i] = (struct clocks_mark){ gettime[2998].time_ns + 1000 + i * 250000, 1 };
	loop_marks[200] = (struct clocks_mark){ gettime[10].time_ns + 100, 1 };
	loop_marks[201] = (struct clocks_mark){ gettime[20].time_ns + 100, 1 };
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 7, res, 10000000, NULL, NULL, &p.clocks);
	CHECK(clocks_measured(lists, 7, 7, loop_marks, 202, NULL, 0, 0, NULL, &p.clocks) &&
		      p.clocks.measured_window_median_ns == 300000000,
	      "the loop's median weight in the 300 ms window: %llu ns, %llu windows",
	      (unsigned long long)p.clocks.measured_window_median_ns, (unsigned long long)p.clocks.measured_windows);
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "clock_per_access", &msg) == CHECK_PASS && strstr(msg, "whole loops"),
	      "3000 reads, the loop in one 300 ms window: %s", msg);
	analysis_free(&a);
	/* Tracing stopped for a thread too many before the loop ran: its samples all after the last read seen. */
	p.clocks.threads_capped = true;
	p.clocks.threads_capped_ms = 163;
	p.clocks.loop_weight_in_span = 12;
	p.clocks.loop_weight = 1623;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "clock_per_access", &msg) == CHECK_SKIP && strstr(msg, "earlier reads") &&
		      status_of(&a, "coarse_clock", &msg) == CHECK_SKIP && strstr(msg, "1611 of the hot loop's 1623"),
	      "capped before the loop: %s", msg);
	analysis_free(&a);
	p.clocks.loop_weight_in_span = 1000;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "clock_per_access", &msg) == CHECK_PASS, "capped, the loop mostly seen: %s", msg);
	analysis_free(&a);
	gettime[2999].time_ns = 1000000 + 2999 * 15000;

	/*
	 * A .ci/run dry run's case: under load a quarter of the windows held 6.4 us beyond the traps around them
	 * (over the 5.2 us allowance), and the windows alone said work. 171 of 179 samples between the first and
	 * last read were in the kernel, the traps: a read around every access. With 40 of 179 in the kernel (a
	 * loop in user code) it passes, as it does with too few samples to say.
	 */
	for (size_t i = 0; i < 3000; i++)
		gettime[i].time_ns = 1000000 + i * 15000;
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 7, res, 10000000, NULL, NULL, &p.clocks);
	p.clocks.window_min_ns = 10360;
	p.clocks.window_work_p75_ns = 6390;
	p.clocks.hot_samples_in_span = 179;
	p.clocks.hot_kernel_in_span = 171;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "clock_per_access", &msg) == CHECK_WARN && strstr(msg, "in the kernel"),
	      "traps of two costs, 96 %% of the timed CPU in the kernel: %s", msg);
	analysis_free(&a);
	p.clocks.hot_kernel_in_span = 40;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "clock_per_access", &msg) == CHECK_PASS, "22 %% in the kernel: a loop in user code: %s", msg);
	analysis_free(&a);
	p.clocks.hot_kernel_in_span = 40;
	p.clocks.hot_samples_in_span = 42;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "clock_per_access", &msg) == CHECK_PASS, "42 samples are too few to say: %s", msg);
	analysis_free(&a);
	p.clocks.hot_samples_in_span = 179;
	p.clocks.hot_kernel_in_span = 171;
	p.clocks.window_work_p75_ns = 100000;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "clock_per_access", &msg) == CHECK_PASS,
	      "100 us of kernel work a window (page faults timed per window) is more than four traps: %s", msg);
	analysis_free(&a);

	/* The traps' cost moves with the host: 12 us a read for the first half, 24 us after; nothing between. */
	for (size_t i = 0; i < 3000; i++)
		gettime[i].time_ns = 1000000 + (i < 1500 ? i * 12000 : 1500 * 12000 + (i - 1500) * 24000);
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 7, res, 10000000, NULL, NULL, &p.clocks);
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "clock_per_access", &msg) == CHECK_WARN && strstr(msg, "every access"),
	      "the median (24 us) is 12 us beyond the shortest window, all of it the traps: %s", msg);
	analysis_free(&a);

	/* A loop of 100 us timed between two reads, and a third read to print it: work in a third of the windows. */
	for (size_t i = 0; i < 3000; i++)
		gettime[i].time_ns = 1000000 + i * 14000 + (i + 2) / 3 * 100000;
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 7, res, 10000000, NULL, NULL, &p.clocks);
	CHECK(p.clocks.window_median_ns == 14000 && p.clocks.window_work_p75_ns == 100000,
	      "median window %llu ns, work at the upper quartile %llu ns", (unsigned long long)p.clocks.window_median_ns,
	      (unsigned long long)p.clocks.window_work_p75_ns);
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "clock_per_access", &msg) == CHECK_PASS && strstr(msg, "more than a few accesses"),
	      "100 us loops, each timed: %s", msg);
	analysis_free(&a);

	/* Nothing traced, or another libc: could not tell, and why. */
	p.clocks = (struct sample_clocks){ .why = "this kernel has no perf uprobe PMU" };
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "coarse_clock", &msg) == CHECK_SKIP && strstr(msg, "uprobe PMU"), "untraced: %s", msg);
	analysis_free(&a);
	p.clocks = (struct sample_clocks){ .traced = true, .libc = "/lib/libc.so.6" };
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "clock_per_access", &msg) == CHECK_SKIP &&
		      strstr(msg, "static program started through a wrapper"),
	      "not mapped: %s", msg);
	analysis_free(&a);
	/* multichase's way: the main thread reads the clock, the hot thread chases. */
	p.clocks = (struct sample_clocks){ .traced = true, .libc = "/usr/bin/multichase", .libc_mapped = true,
					   .hot_traced = true };
	p.clocks.fn[SAMPLE_CLOCK_GETTIME].calls = 5;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "coarse_clock", &msg) == CHECK_SKIP &&
		      strstr(msg, "its other threads read the clock 5 times, so a thread that is not the hot one timed it"),
	      "another thread timed: %s", msg);
	analysis_free(&a);
	/* None read a traced clock, and the hot function reads the TSC itself. */
	p.clocks.fn[SAMPLE_CLOCK_GETTIME].calls = 0;
	p.code = (struct sample_code){ .decoded = true, .tsc_reads = 2, .tsc_read_at = 0x1234 };
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "clock_per_access", &msg) == CHECK_SKIP &&
		      strstr(msg, "its hot function reads the time stamp counter itself (rdtsc at 0x1234; 2 from its start "
				  "to just past its loop)"),
	      "TSC-timed: %s", msg);
	analysis_free(&a);
	p.code = (struct sample_code){ 0 };

	/*
	 * A hot thread the probes did not follow: never "called none", which would say it read no clock. Its
	 * process started more threads than are followed; or it is in a child process; or neither is known.
	 */
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true, .pid = p.hot_pid, .threads = 1,
					   .threads_capped = true, .threads_capped_ms = 52 };
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "clock_per_access", &msg) == CHECK_SKIP && strstr(msg, "was not traced") &&
		      strstr(msg, "more threads than are followed (4 alive at once, 8 in all)") &&
		      strstr(msg, "52 ms") && !strstr(msg, "called none"),
	      "capped: %s", msg);
	analysis_free(&a);
	p.clocks.threads_capped = false;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "coarse_clock", &msg) == CHECK_SKIP && strstr(msg, "was not traced") &&
		      strstr(msg, "did not follow") && !strstr(msg, "called none"),
	      "not followed: %s", msg);
	analysis_free(&a);
	/* The first thread, traced, but tracing stopped for a thread pool before it read: capped, not "none". */
	p.clocks.hot_traced = true;
	p.clocks.threads_capped = true;
	p.clocks.threads_capped_ms = 1;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "clock_per_access", &msg) == CHECK_SKIP && strstr(msg, "more threads than are followed") &&
		      !strstr(msg, "called none"),
	      "traced, then capped: %s", msg);
	analysis_free(&a);
	p.clocks.threads_capped = false;
	/* Traced, and no read: it called none. */
	p.clocks.pid = p.hot_pid;
	p.clocks.hot_traced = true;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_SKIP && strstr(msg, "called none"), "none: %s", msg);
	analysis_free(&a);
}

/*
 * What lies between the hot thread's first and last read: a deleted loop's two
 * back-to-back reads time none of its CPU time (empty_timed_window), and faults
 * between the reads are timed whatever instruction took them, faults before
 * the first read are not (first_touch_in_timed_loop).
 */
/* Where the span between the hot thread's reads is not seen whole: empty_timed_window skips, saying says; the IPs decide. */
static void expect_span_unseen(const struct sample_profile *p, const char *name, const char *says)
{
	struct analysis a;
	const char *msg;

	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_SKIP && strstr(msg, says), "%s: %s", name, msg);
	CHECK(status_of(&a, "first_touch_in_timed_loop", &msg) == CHECK_WARN && strstr(msg, "hot loop"),
	      "%s: from the IPs: %s", name, msg);
	analysis_free(&a);
}

/* first_touch_in_timed_loop on p, with env (the command's first-access probe, or NULL), is want, its message holding says. */
static void expect_first_touch_env(const struct sample_profile *p, const struct environment *env,
				   enum check_status want, const char *says, const char *name)
{
	struct analysis a;
	const char *msg;

	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, env, p) == 0, "analysed");
	CHECK(status_of(&a, "first_touch_in_timed_loop", &msg) == want && strstr(msg, says), "%s: %s", name, msg);
	analysis_free(&a);
}

static void expect_first_touch(const struct sample_profile *p, enum check_status want, const char *says,
			       const char *name)
{
	expect_first_touch_env(p, NULL, want, says, name);
}

/*
 * An interpreter's run (python3.11 timing a loop with perf_counter): reads at startup, a 64 MiB memset between the
 * last of them and the timing's first read, then the timed loop. The faults are between the first and last read,
 * but not in a window the hot loop ran in: one stray sample of it in the memset's window, against the 62 of the
 * timed loop's window, does not make that window timed. Then the same faults taken by the hot loop inside its
 * window: timed.
 */
static void test_clock_measured(void)
{
	static struct sample_record reads[4], cpu[400], faults[8192];
	struct sample_list lists[SAMPLE_CLOCK_FNS] = { { 0 } };
	const uint64_t res[SAMPLE_CLOCK_IDS] = { 1, 1, 1, 1, 1, 4000000, 4000000, 1, 0 };
	const uint64_t base = 0x7f0000000000ull, ms = 1000000;
	static struct clocks_mark marks[8192 + 400];
	size_t n_marks = 0;
	struct sample_profile p;

	const uint64_t at[4] = { 1 * ms, 1 * ms + 100000, 70 * ms, 100 * ms };
	for (size_t i = 0; i < 4; i++)
		reads[i] = (struct sample_record){ .tid = 42, .time_ns = at[i], .regs = { 1 }, .n_regs = 1 };
	lists[SAMPLE_CLOCK_GETTIME] = (struct sample_list){ reads, 4, 4 };
	/* cpu-clock every 250 us from 1.2 ms: 276 in the memset's window, the rest in the timed loop's, half of those
	 * in the hot function; and one stray sample of it in the memset's window. */
	for (size_t i = 0; i < 400; i++) {
		cpu[i] = (struct sample_record){ .tid = 42, .time_ns = 1200000 + i * 250000, .cpu = -1 };
		if ((cpu[i].time_ns > 70 * ms && i % 2) || i == 100)
			marks[n_marks++] = (struct clocks_mark){ cpu[i].time_ns, 1 };
	}
	for (size_t i = 0; i < 8192; i++)
		faults[i] = (struct sample_record){ .tid = 42, .addr = base + i * 4096, .time_ns = 2 * ms + i * 7000 };
	struct sample_list cl = { cpu, 400, 400 }, fl = { faults, 8192, 8192 };
	correct(&p);
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, NULL, NULL, &p.clocks);
	clocks_span(&cl, &fl, base, base + (32u << 20), 42, 0, &p.clocks);
	CHECK(clocks_measured(lists, 42, 0, marks, n_marks, &fl, base, base + (32u << 20), NULL, &p.clocks) &&
		      p.clocks.measured_known && p.clocks.measured_windows == 1 && p.clocks.region_faults_measured == 0 &&
		      p.clocks.region_faults_in_span == 8192 && p.clocks.faulted_known &&
		      p.clocks.measured_windows_faulted == 0,
	      "memset outside the timed window: %llu windows measured, %llu faults in them, %llu in the span",
	      (unsigned long long)p.clocks.measured_windows, (unsigned long long)p.clocks.region_faults_measured,
	      (unsigned long long)p.clocks.region_faults_in_span);
	expect_first_touch(&p, CHECK_PASS, "outside the clock windows its hot loop ran in (1 of its 3 windows)",
			   "an interpreter's memset before its timing");

	/* The same with the loop's samples at the slow rate: one a 10 ms, standing for 40 each, in the timed window. */
	n_marks = 0;
	marks[n_marks++] = (struct clocks_mark){ 30 * ms, 1 };
	for (uint64_t t = 80 * ms; t < 100 * ms; t += 10 * ms)
		marks[n_marks++] = (struct clocks_mark){ t, 40 };
	p.clocks = (struct sample_clocks){ 0 };
	CHECK(clocks_measured(lists, 42, 0, marks, n_marks, &fl, base, base + (32u << 20), NULL, &p.clocks) &&
		      p.clocks.measured_windows == 1 && p.clocks.region_faults_measured == 0,
	      "slow-rate weights: %llu windows, %llu faults", (unsigned long long)p.clocks.measured_windows,
	      (unsigned long long)p.clocks.region_faults_measured);

	/* The hot loop takes the faults itself, inside its window, 3 us apart: each fault marks it running. */
	for (size_t i = 0; i < 8192; i++) {
		faults[i].time_ns = 71 * ms + i * 3000;
		marks[n_marks++] = (struct clocks_mark){ faults[i].time_ns, 0 };
	}
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, NULL, NULL, &p.clocks);
	clocks_span(&cl, &fl, base, base + (32u << 20), 42, 0, &p.clocks);
	CHECK(clocks_measured(lists, 42, 0, marks, n_marks, &fl, base, base + (32u << 20), NULL, &p.clocks) &&
		      p.clocks.measured_windows == 1 && p.clocks.region_faults_measured == 8192 &&
		      p.clocks.measured_windows_faulted == 1,
	      "first touch in the timed window: %llu windows, %llu faults, %llu faulted",
	      (unsigned long long)p.clocks.measured_windows, (unsigned long long)p.clocks.region_faults_measured,
	      (unsigned long long)p.clocks.measured_windows_faulted);
	expect_first_touch(&p, CHECK_WARN, "inside the clock windows", "the timed loop's first touch");

	/* A window too short for a sample (2 us, around one fault the hot loop took) is one it ran in. */
	reads[1].time_ns = faults[0].time_ns - 1000;
	reads[2].time_ns = faults[0].time_ns + 1000;
	p.clocks = (struct sample_clocks){ 0 };
	CHECK(clocks_measured(lists, 42, 0, marks, n_marks, &fl, base, base + (32u << 20), NULL, &p.clocks) &&
		      p.clocks.measured_windows == 2 && p.clocks.measured_windows_faulted == 2,
	      "a window too short for a sample, and the timed loop's: %llu windows, %llu faulted",
	      (unsigned long long)p.clocks.measured_windows, (unsigned long long)p.clocks.measured_windows_faulted);

	/* The hot loop (the initialisation that took the faults) ran before the first read: untimed, as a deleted
	 * timed loop leaves it (broken-deleted_loop). */
	for (size_t i = 0; i < 4; i++)
		reads[i].time_ns = 200 * ms + i * 1000;
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, NULL, NULL, &p.clocks);
	clocks_span(&cl, &fl, base, base + (32u << 20), 42, 0, &p.clocks);
	CHECK(clocks_measured(lists, 42, 0, marks, n_marks, &fl, base, base + (32u << 20), NULL, &p.clocks) &&
		      p.clocks.measured_windows == 0 && p.clocks.region_faults_measured == 0,
	      "no window: %llu", (unsigned long long)p.clocks.measured_windows);
	expect_first_touch(&p, CHECK_PASS, "ran in none of its 3", "a hot loop in no window");
}

/*
 * A timer's start/stop pairs (clocks_pairs()), as Google Benchmark reads them: at each run's start and stop, the
 * elapsed time and the thread's CPU time; between a stop and the next start, the run's setup in the same function
 * (a fresh region's chain written: its first touch) at other instructions than the timed chase. Eight runs of
 * 10 ms, each after 10 ms of setup.
 */
enum { PAIRS_RUNS = 8, PAIRS_READS = 4 * PAIRS_RUNS, PAIRS_FAULTS = 8 * 1024 };

static void pairs_run(struct sample_record *reads, struct clocks_mark *marks, size_t *n_marks,
		      struct sample_record *faults, uint64_t setup_ip, uint64_t fault_ip)
{
	const uint64_t ms = 1000000;

	*n_marks = 0;
	for (size_t r = 0, k = 0; r < PAIRS_RUNS; r++) {
		uint64_t start = (20 * r + 11) * ms, stop = start + 10 * ms;
		for (int clock = 0; clock < 2; clock++) {	/* CLOCK_MONOTONIC, then CLOCK_THREAD_CPUTIME_ID */
			reads[k++] = (struct sample_record){ .tid = 42, .time_ns = start + (uint64_t)clock * 1000,
							     .regs = { clock ? 3 : 1 }, .n_regs = 1 };
			reads[k++] = (struct sample_record){ .tid = 42, .time_ns = stop + (uint64_t)clock * 1000,
							     .regs = { clock ? 3 : 1 }, .n_regs = 1 };
		}
		for (uint64_t t = start + 10000; t < stop; t += 250000)	/* the chase, timed */
			marks[(*n_marks)++] = (struct clocks_mark){ t, 1, 0x1550 };
		for (uint64_t t = start - 10 * ms + 10000; t < start; t += 250000)	/* the setup, before the start */
			marks[(*n_marks)++] = (struct clocks_mark){ t, 1, setup_ip };
	}
	for (size_t i = 0; i < PAIRS_FAULTS; i++) {	/* the first run's setup writes every page */
		faults[i] = (struct sample_record){ .tid = 42, .pid = 42, .addr = 0x7f0000000000ull + i * 4096,
						    .time_ns = 1 * ms + i * 1000, .ip = fault_ip };
		marks[(*n_marks)++] = (struct clocks_mark){ faults[i].time_ns, 0, fault_ip };
	}
}

/* The hot thread's reads[0..k), its samples cl (the hot function's, as marks) judged: p's clocks and a's checks. */
static void judge_reads(struct sample_record *reads, size_t k, const struct clocks_mark *marks, size_t n_marks,
			const struct sample_list *cl, struct sample_profile *p, struct analysis *a)
{
	struct sample_list lists[SAMPLE_CLOCK_FNS] = { { 0 } };
	const uint64_t res[SAMPLE_CLOCK_IDS] = { 1, 1, 1, 1, 1, 4000000, 4000000, 1, 0 }, base = 0x7f0000000000ull;

	lists[SAMPLE_CLOCK_GETTIME] = (struct sample_list){ reads, k, k };
	correct(p);
	p->clock_samples = cl->count;
	p->clock_period_ns = 250000;
	p->clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, NULL, NULL, &p->clocks);
	clocks_span(cl, NULL, base, base + (32u << 20), 42, 42, &p->clocks);
	CHECK(clocks_measured(lists, 42, 42, marks, n_marks, NULL, base, base + (32u << 20), NULL, &p->clocks) &&
		      analysis_run(NULL, 0, NULL, NULL, a) == 0 && analysis_check_unmarked(a, NULL, 0, NULL, p) == 0,
	      "analysed");
}

/*
 * The same timer around a loop -O2 deleted: each run's start and stop back to back (the two clocks' reads 20 us
 * apart, the stop 30 us after the start; in one run 8 us and 42 us, a window over four times another plus 5 us),
 * the setup between them: the pairs hold nothing but their
 * reads, and the timer times nothing. One run preempted for 5 ms is one pair in eight. Then a run of 200 us in each
 * pair, no sample in it (a short timed loop, shorter than the sampling period), is no empty pair; nor are reads of
 * one clock only, back to back, whose pairs hold no window between two reads of one start to weigh them against:
 * those are bare pairs, which a total's reads around back-to-back reps make as well, and the check could not tell.
 */
static void test_clock_pairs_empty(void)
{
	static struct sample_record reads[PAIRS_READS], cpu[PAIRS_RUNS * 40];
	static struct clocks_mark marks[PAIRS_RUNS * 40];
	const uint64_t ms = 1000000, us = 1000;
	struct sample_list cl = { cpu, 0, PAIRS_RUNS * 40 };
	struct sample_profile p;
	struct analysis a;
	const char *msg;
	size_t n_marks = 0;

	for (int variant = 0; variant < 3; variant++) {
		uint64_t run_us = variant == 1 ? 200 : 0;
		size_t k = 0;
		n_marks = cl.count = 0;
		for (size_t r = 0; r < PAIRS_RUNS; r++) {
			uint64_t start = (20 * r + 11) * ms, stop = start + 50 * us + run_us * us;
			stop += r == 3 ? 5 * ms : 0;	/* preempted */
			uint64_t at[4] = { start, start + (r == 5 ? 8 : 20) * us, stop, stop + 20 * us };
			for (int i = 0; i < 4; i++)	/* CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID at each */
				if (variant < 2 || i % 2 == 0)	/* one clock: a read at the start, one at the stop */
					reads[k++] = (struct sample_record){ .tid = 42, .time_ns = at[i],
									     .regs = { i % 2 ? 3 : 1 }, .n_regs = 1 };
			for (uint64_t t = start - 10 * ms + 10000; t < start; t += 250000) {	/* the setup */
				marks[n_marks++] = (struct clocks_mark){ t, 1, 0x1510 };
				cpu[cl.count++] = (struct sample_record){ .tid = 42, .pid = 42, .time_ns = t, .ip = 0x1510,
									  .cpu = -1 };
			}
		}
		judge_reads(reads, k, marks, n_marks, &cl, &p, &a);
		status_of(&a, "empty_timed_window", &msg);
		if (variant == 0)
			CHECK(p.clocks.pairs_empty && p.clocks.paired_reads == 16 &&
				      p.clocks.gap_windows == PAIRS_RUNS - 1 && p.clocks.pair_work_p75_ns == 10 * us &&
				      status_of(&a, "empty_timed_window", &msg) == CHECK_WARN &&
				      strstr(msg, "timer times nothing: its 16 clock_gettime CLOCK_MONOTONIC reads"),
			      "empty pairs: empty %d, %llu reads, %llu gaps, p75 %llu: %s", p.clocks.pairs_empty,
			      (unsigned long long)p.clocks.paired_reads, (unsigned long long)p.clocks.gap_windows,
			      (unsigned long long)p.clocks.pair_work_p75_ns, msg);
		else if (variant == 1)
			CHECK(!p.clocks.pairs_empty && p.clocks.paired_fn < 0 && !p.clocks.bare_reads &&
				      status_of(&a, "empty_timed_window", &msg) != CHECK_WARN,
			      "a 200 us run in each pair: empty %d, fn %d, bare %llu: %s", p.clocks.pairs_empty,
			      p.clocks.paired_fn, (unsigned long long)p.clocks.bare_reads, msg);
		else
			CHECK(!p.clocks.pairs_empty && p.clocks.paired_fn < 0 && p.clocks.bare_reads == 2 * PAIRS_RUNS &&
				      status_of(&a, "empty_timed_window", &msg) == CHECK_SKIP &&
				      strstr(msg, "could not tell, because 16 of the hot thread's clock reads pair"),
			      "one clock: empty %d, fn %d, bare %llu: %s", p.clocks.pairs_empty, p.clocks.paired_fn,
			      (unsigned long long)p.clocks.bare_reads, msg);
		analysis_free(&a);
	}
	/* One clock, its bare runs 100 us apart, all the CPU time before the first: the reads time nothing, warned. */
	size_t k = 0;
	for (size_t r = 0; r < PAIRS_RUNS; r++) {
		uint64_t start = 11 * ms + r * 120 * us;
		reads[k++] = (struct sample_record){ .tid = 42, .time_ns = start, .regs = { 1 }, .n_regs = 1 };
		reads[k++] = (struct sample_record){ .tid = 42, .time_ns = start + 20 * us, .regs = { 1 }, .n_regs = 1 };
	}
	for (cl.count = n_marks = 0; cl.count < 40; cl.count++, n_marks++) {
		marks[n_marks] = (struct clocks_mark){ 1 * ms + cl.count * 250000, 1, 0x1510 };
		cpu[cl.count] = (struct sample_record){ .tid = 42, .pid = 42, .time_ns = marks[n_marks].t, .ip = 0x1510,
							.cpu = -1 };
	}
	judge_reads(reads, k, marks, n_marks, &cl, &p, &a);
	CHECK(p.clocks.bare_reads == 2 * PAIRS_RUNS && status_of(&a, "empty_timed_window", &msg) == CHECK_WARN &&
		      strstr(msg, "time next to nothing"),
	      "bare runs, the CPU time before them: bare %llu: %s", (unsigned long long)p.clocks.bare_reads, msg);
	analysis_free(&a);
}

/*
 * A total's reads around back-to-back timed reps, one clock: a read at the start, 20 ms of setup in the timed
 * function, eight reps of 10 ms each between two reads (the first rep the memory's first touch), the next rep's read
 * 20 us after the last one's, and a read at the end 20 us after the last rep. Anchored at the start's read, its pairs
 * are the setup and the instants between the reps, its gaps the reps; eight pairs of nine hold nothing but a read,
 * so they are no timer's, and the first rep's faults are timed.
 */
static void test_clock_pairs_total(void)
{
	static struct sample_record reads[2 * PAIRS_RUNS + 2], faults[PAIRS_FAULTS];
	static struct clocks_mark marks[PAIRS_FAULTS + 2000];
	struct sample_list lists[SAMPLE_CLOCK_FNS] = { { 0 } };
	struct sample_list fl = { faults, PAIRS_FAULTS, PAIRS_FAULTS };
	const uint64_t res[SAMPLE_CLOCK_IDS] = { 1, 1, 1, 1, 1, 4000000, 4000000, 1, 0 }, base = 0x7f0000000000ull;
	const uint64_t ms = 1000000, us = 1000;
	struct sample_profile p;
	size_t k = 0, n_marks = 0;
	uint64_t t = 1 * ms;

	reads[k++] = (struct sample_record){ .tid = 42, .time_ns = t, .regs = { 1 }, .n_regs = 1 };
	for (t += 10000; t < 21 * ms; t += 250000)	/* the setup, in the timed function */
		marks[n_marks++] = (struct clocks_mark){ t, 1, 0x1510 };
	t = 21 * ms;
	for (size_t r = 0; r < PAIRS_RUNS; r++, t += 20 * us) {
		reads[k++] = (struct sample_record){ .tid = 42, .time_ns = t, .regs = { 1 }, .n_regs = 1 };
		for (uint64_t m = t + 10000; m < t + 10 * ms; m += 250000)
			marks[n_marks++] = (struct clocks_mark){ m, 1, 0x1550 };
		t += 10 * ms;
		reads[k++] = (struct sample_record){ .tid = 42, .time_ns = t, .regs = { 1 }, .n_regs = 1 };
	}
	reads[k++] = (struct sample_record){ .tid = 42, .time_ns = t, .regs = { 1 }, .n_regs = 1 };
	for (size_t i = 0; i < PAIRS_FAULTS; i++) {	/* the first rep's first touches */
		faults[i] = (struct sample_record){ .tid = 42, .pid = 42, .addr = base + i * 4096,
						    .time_ns = 21 * ms + 5000 + i * 1000, .ip = 0x1554 };
		marks[n_marks++] = (struct clocks_mark){ faults[i].time_ns, 0, 0x1554 };
	}
	lists[SAMPLE_CLOCK_GETTIME] = (struct sample_list){ reads, k, k };
	correct(&p);
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, NULL, NULL, &p.clocks);
	CHECK(clocks_measured(lists, 42, 42, marks, n_marks, &fl, base, base + (32u << 20), NULL, &p.clocks) &&
		      p.clocks.pairs_known && p.clocks.paired_fn < 0 && p.clocks.gap_windows == 0 &&
		      p.clocks.region_faults_measured == PAIRS_FAULTS,
	      "a total around back-to-back reps: fn %d, %llu gaps, %llu faults timed", p.clocks.paired_fn,
	      (unsigned long long)p.clocks.gap_windows, (unsigned long long)p.clocks.region_faults_measured);
}

static void test_clock_pairs(void)
{
	static struct sample_record reads[PAIRS_READS], faults[PAIRS_FAULTS];
	static struct clocks_mark marks[PAIRS_FAULTS + 2000];
	struct sample_list lists[SAMPLE_CLOCK_FNS] = { { 0 } };
	struct sample_list fl = { faults, PAIRS_FAULTS, PAIRS_FAULTS };
	const uint64_t res[SAMPLE_CLOCK_IDS] = { 1, 1, 1, 1, 1, 4000000, 4000000, 1, 0 }, base = 0x7f0000000000ull;
	struct sample_profile p;
	size_t n_marks;

	lists[SAMPLE_CLOCK_GETTIME] = (struct sample_list){ reads, PAIRS_READS, PAIRS_READS };
	/* The setup as heavy as the timed chase, at other instructions: the reads are pairs, its faults untimed. */
	pairs_run(reads, marks, &n_marks, faults, 0x1510, 0x1514);
	correct(&p);
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, NULL, NULL, &p.clocks);
	clocks_span(NULL, &fl, base, base + (32u << 20), 42, 42, &p.clocks);
	CHECK(clocks_measured(lists, 42, 42, marks, n_marks, &fl, base, base + (32u << 20), NULL, &p.clocks) &&
		      p.clocks.pairs_known && p.clocks.paired_fn == SAMPLE_CLOCK_GETTIME && p.clocks.paired_reads == 16 &&
		      p.clocks.gap_windows == PAIRS_RUNS - 1 && p.clocks.measured_windows == PAIRS_RUNS &&
		      p.clocks.region_faults_measured == 0 && p.clocks.region_faults_in_gaps == 0 &&
		      p.clocks.gap_weight_share > 0.45 && p.clocks.gap_weight_share < 0.55 &&
		      p.clocks.gap_code_overlap == 0,
	      "gbench's pairs: fn %d, %llu reads, %llu gaps, %llu measured, %llu faults timed, share %.2f, overlap %.2f",
	      p.clocks.paired_fn, (unsigned long long)p.clocks.paired_reads, (unsigned long long)p.clocks.gap_windows,
	      (unsigned long long)p.clocks.measured_windows, (unsigned long long)p.clocks.region_faults_measured,
	      p.clocks.gap_weight_share, p.clocks.gap_code_overlap);
	expect_first_touch(&p, CHECK_PASS, "outside the clock windows its hot loop ran in", "setup before the first run");

	/* One slow-rate sample of the setup (standing for 40) placed inside a run, its time parted from the probes':
	 * still the pairs (the setup's code holds 11 % of the pairs' weight, under a quarter). */
	marks[n_marks++] = (struct clocks_mark){ 75000000, 40, 0x1510 };
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, NULL, NULL, &p.clocks);
	clocks_span(NULL, &fl, base, base + (32u << 20), 42, 42, &p.clocks);
	CHECK(clocks_measured(lists, 42, 42, marks, n_marks, &fl, base, base + (32u << 20), NULL, &p.clocks) &&
		      p.clocks.paired_fn == SAMPLE_CLOCK_GETTIME && p.clocks.gap_windows == PAIRS_RUNS - 1 &&
		      p.clocks.gap_code_overlap > 0.1 && p.clocks.gap_code_overlap < 0.25,
	      "a setup sample in a run: fn %d, %llu gaps, overlap %.2f", p.clocks.paired_fn,
	      (unsigned long long)p.clocks.gap_windows, p.clocks.gap_code_overlap);
	n_marks--;

	/* The first setup between two runs instead: the faults lie in a gap of both clocks. */
	for (size_t i = 0; i < PAIRS_FAULTS; i++)
		faults[i].time_ns += 40100000;
	for (size_t i = 0; i < n_marks; i++)
		marks[i].t += marks[i].weight ? 0 : 40100000;
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, NULL, NULL, &p.clocks);
	clocks_span(NULL, &fl, base, base + (32u << 20), 42, 42, &p.clocks);
	CHECK(clocks_measured(lists, 42, 42, marks, n_marks, &fl, base, base + (32u << 20), NULL, &p.clocks) &&
		      p.clocks.region_faults_measured == 0 && p.clocks.region_faults_in_gaps == PAIRS_FAULTS,
	      "faults in a gap: %llu timed, %llu in gaps", (unsigned long long)p.clocks.region_faults_measured,
	      (unsigned long long)p.clocks.region_faults_in_gaps);
	expect_first_touch(&p, CHECK_PASS, "8192 of them between a stop and the next start of a timer (its 16 "
			   "clock_gettime CLOCK_MONOTONIC reads", "setup between two runs");

	/* The faults from the timed chase's own instructions in a gap: the pairs are not known to be a timer's. */
	pairs_run(reads, marks, &n_marks, faults, 0x1510, 0x1554);
	for (size_t i = 0; i < PAIRS_FAULTS; i++)
		faults[i].time_ns += 40100000;
	for (size_t i = 0; i < n_marks; i++)
		marks[i].t += marks[i].weight ? 0 : 40100000;
	p.clocks = (struct sample_clocks){ 0 };
	CHECK(clocks_measured(lists, 42, 42, marks, n_marks, &fl, base, base + (32u << 20), NULL, &p.clocks) &&
		      p.clocks.paired_fn < 0 && p.clocks.gap_windows == 0 && p.clocks.region_faults_measured == PAIRS_FAULTS,
	      "the timed code faulting in a gap: fn %d, %llu gaps, %llu faults timed", p.clocks.paired_fn,
	      (unsigned long long)p.clocks.gap_windows, (unsigned long long)p.clocks.region_faults_measured);

	/* A loop timed between every two consecutive reads (the setup's code is the chase's): no pairs. */
	pairs_run(reads, marks, &n_marks, faults, 0x1550, 0x1514);
	p.clocks = (struct sample_clocks){ 0 };
	CHECK(clocks_measured(lists, 42, 42, marks, n_marks, &fl, base, base + (32u << 20), NULL, &p.clocks) &&
		      p.clocks.pairs_known && p.clocks.paired_fn < 0 && p.clocks.gap_windows == 0,
	      "one loop on both sides: fn %d, %llu gaps", p.clocks.paired_fn, (unsigned long long)p.clocks.gap_windows);

	/* An odd number of reads of the one clock read (the last run's stop not seen): no pairs. */
	pairs_run(reads, marks, &n_marks, faults, 0x1510, 0x1514);
	for (size_t i = 0; i < PAIRS_READS; i++)
		reads[i].regs[0] = 1;
	lists[SAMPLE_CLOCK_GETTIME].count = PAIRS_READS - 1;
	p.clocks = (struct sample_clocks){ 0 };
	CHECK(clocks_measured(lists, 42, 42, marks, n_marks, &fl, base, base + (32u << 20), NULL, &p.clocks) &&
		      p.clocks.paired_fn < 0 && p.clocks.gap_windows == 0,
	      "odd reads: fn %d, %llu gaps", p.clocks.paired_fn, (unsigned long long)p.clocks.gap_windows);
	test_clock_pairs_empty();
	test_clock_pairs_total();
}

static void test_clock_span(void)
{
	static struct sample_record reads[3], cpu[400], faults[8192];
	struct sample_list lists[SAMPLE_CLOCK_FNS] = { { 0 } };
	const uint64_t res[SAMPLE_CLOCK_IDS] = { 1, 1, 1, 1, 1, 4000000, 4000000, 1, 0 };
	const uint64_t base = 0x7f0000000000ull;
	struct sample_profile p;
	struct analysis a;
	const char *msg;

	/* 100 ms of CPU (400 samples 250 us apart) with its faults in the first 20 ms, then two reads 160 us apart. */
	for (size_t i = 0; i < 400; i++)
		cpu[i] = (struct sample_record){ .tid = 42, .time_ns = 1000000 + i * 250000, .cpu = -1 };
	cpu[7].tid = 43;
	for (size_t i = 0; i < 8192; i++)
		faults[i] = (struct sample_record){ .tid = 42, .addr = base + i * 4096, .time_ns = 1000000 + i * 2400 };
	reads[0] = (struct sample_record){ .tid = 42, .time_ns = 80000100, .regs = { 1 }, .n_regs = 1 };
	reads[1] = (struct sample_record){ .tid = 42, .time_ns = 80160100, .regs = { 1 }, .n_regs = 1 };
	lists[SAMPLE_CLOCK_GETTIME] = (struct sample_list){ reads, 2, 2 };
	struct sample_list cl = { cpu, 400, 400 }, fl = { faults, 8192, 8192 };
	correct(&p);
	first_touch(&p);	/* the hottest loop took the faults: the IPs alone would call them timed */
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, NULL, NULL, &p.clocks);
	clocks_span(&cl, &fl, base, base + (32u << 20), 42, 0, &p.clocks);
	CHECK(p.clocks.span_ns == 160000 && p.clocks.hot_samples == 399 && p.clocks.hot_samples_in_span == 0,
	      "span %llu ns, hot samples %llu, in span %llu", (unsigned long long)p.clocks.span_ns,
	      (unsigned long long)p.clocks.hot_samples, (unsigned long long)p.clocks.hot_samples_in_span);
	CHECK(p.clocks.region_faults == 8192 && p.clocks.region_faults_in_span == 0, "faults %llu, in span %llu",
	      (unsigned long long)p.clocks.region_faults, (unsigned long long)p.clocks.region_faults_in_span);
	CHECK(!p.clocks.cpus_known && !p.clocks.cpu_moves, "samples without a CPU: no moves claimed");
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_WARN && strstr(msg, "deleted"), "deleted loop: %s",
	      msg);
	CHECK(status_of(&a, "first_touch_in_timed_loop", &msg) == CHECK_PASS && strstr(msg, "outside"),
	      "faults before the first read: %s", msg);
	analysis_free(&a);
	/* The same, where the samples stand for a third of what the task-clock counted: the empty span may be the
	 * samples the kernel dropped there, so the check could not tell. */
	p.clock_period_ns = 250000;
	p.clock_task_ns = 450000000;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_SKIP && strstr(msg, "task-clock counted 450 ms"),
	      "unaccounted samples: %s", msg);
	analysis_free(&a);
	p.clock_task_ns = 0;
	/* The same reads around a loop other threads ran (a main thread joining its workers): 90 % of its process's
	 * samples in the hot function lay between them, so the reads time that loop. */
	p.clocks.loop_weight = 200;
	p.clocks.loop_weight_in_span = 190;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_PASS && strstr(msg, "other threads"),
	      "a loop of other threads between the reads: %s", msg);
	analysis_free(&a);
	p.clocks.loop_weight_in_span = 170;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_WARN, "85 %% of it between them: %s", msg);
	analysis_free(&a);
	p.clocks.loop_weight = p.clocks.loop_weight_in_span = 0;

	/* The reads bracket the faulting loop and most of the CPU time: timed faults, a full window; one move inside
	 * the span (to CPU 1 at sample 200, 51 ms) and one after the last read (back to CPU 0 at sample 380, 96 ms). */
	reads[0].time_ns = 900000;
	reads[1].time_ns = 90000000;
	for (size_t i = 0; i < 400; i++)
		cpu[i].cpu = i >= 200 && i < 380 ? 1 : 0;
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, NULL, NULL, &p.clocks);
	clocks_span(&cl, &fl, base, base + (32u << 20), 42, 0, &p.clocks);
	CHECK(p.clocks.cpus_known && p.clocks.cpu_moves == 2 && p.clocks.cpu_moves_in_span == 1, "moves %llu, in span %llu",
	      (unsigned long long)p.clocks.cpu_moves, (unsigned long long)p.clocks.cpu_moves_in_span);
	CHECK(p.clocks.region_faults_in_span == 8192 && p.clocks.hot_samples_in_span == 356,
	      "in span: faults %llu, samples %llu", (unsigned long long)p.clocks.region_faults_in_span,
	      (unsigned long long)p.clocks.hot_samples_in_span);
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_PASS, "timed: %s", msg);
	CHECK(status_of(&a, "first_touch_in_timed_loop", &msg) == CHECK_WARN && strstr(msg, "between its first and last"),
	      "faults between the reads: %s", msg);
	analysis_free(&a);

	/* A function stopped at its budget: the span's end is unseen, so no verdict from it; the IPs decide. */
	p.clocks.fn[SAMPLE_CLOCK_GETTIME].stopped = true;
	p.clocks.hot_samples_in_span = 0;
	expect_span_unseen(&p, "stopped", "stopped");
	p.clocks.fn[SAMPLE_CLOCK_GETTIME].stopped = false;
	/* Followed after it started: the span's start is unseen, the same. */
	p.clocks.hot_samples_untraced = 12;
	expect_span_unseen(&p, "followed late", "before its probes opened");
	p.clocks.hot_samples_untraced = 0;
	/* Stopped for a thread too many: the same. */
	p.clocks.threads_capped = true;
	p.clocks.threads_capped_ms = 9;
	expect_span_unseen(&p, "capped", "more threads than are followed");
	p.clocks.threads_capped = false;

	/*
	 * 40 rounds of a 25 us loop, each between two reads (19 us traps), after the last cpu-clock sample: none
	 * falls between the reads, as where the samples' times part from the probes'. The windows hold the work.
	 */
	static struct sample_record rounds[81];
	for (size_t i = 0; i < 81; i++)
		rounds[i] = (struct sample_record){ .tid = 42, .time_ns = 101000000 + i * 19000 + (i + 1) / 2 * 25000,
						    .regs = { 1 }, .n_regs = 1 };
	lists[SAMPLE_CLOCK_GETTIME] = (struct sample_list){ rounds, 81, 81 };
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, NULL, NULL, &p.clocks);
	clocks_span(&cl, &fl, base, base + (32u << 20), 42, 0, &p.clocks);
	CHECK(p.clocks.hot_samples_in_span == 0 && p.clocks.window_work_p75_ns == 25000,
	      "no sample in the span, 25 us beyond the traps: %llu samples, %llu ns",
	      (unsigned long long)p.clocks.hot_samples_in_span, (unsigned long long)p.clocks.window_work_p75_ns);
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_PASS && strstr(msg, "only short"),
	      "short timed rounds: %s", msg);
	analysis_free(&a);

	/* The same 80 windows with the loop deleted: every window at the traps (19-20 us), a deleted loop read often. */
	for (size_t i = 0; i < 81; i++)
		rounds[i].time_ns = 101000000 + i * 19000 + i % 3 * 500;
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, NULL, NULL, &p.clocks);
	clocks_span(&cl, &fl, base, base + (32u << 20), 42, 0, &p.clocks);
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_WARN && strstr(msg, "deleted"),
	      "a deleted loop timed 40 times: %s", msg);
	analysis_free(&a);

	/*
	 * A deleted loop's two reads 1.2 ms apart, 1 ms of it switched out (preempted): the longest window on a CPU
	 * is 0.2 ms. By wall time alone the window reaches 1 ms and passes.
	 */
	const struct sample_task spells[] = {
		{ .kind = SAMPLE_TASK_SWITCH_IN, .tid = 42, .time_ns = 90000000 },	/* before: no spell */
		{ .kind = SAMPLE_TASK_SWITCH_OUT, .tid = 43, .time_ns = 101000000 },	/* another thread's */
		{ .kind = SAMPLE_TASK_SWITCH_IN, .tid = 42, .time_ns = 102100000 },	/* out of order */
		{ .kind = SAMPLE_TASK_SWITCH_OUT, .tid = 42, .time_ns = 101100000 },
		{ .kind = SAMPLE_TASK_SWITCH_OUT, .tid = 42, .time_ns = 103000000 },	/* never back: the exit */
	};
	const struct clocks_switches sw = { spells, sizeof(spells) / sizeof(spells[0]) };
	rounds[0].time_ns = 101000000;
	rounds[1].time_ns = 102200000;
	lists[SAMPLE_CLOCK_GETTIME] = (struct sample_list){ rounds, 2, 2 };
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, NULL, NULL, &p.clocks);
	clocks_span(&cl, &fl, base, base + (32u << 20), 42, 0, &p.clocks);
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_PASS, "by wall time, a 1.2 ms window: %s", msg);
	analysis_free(&a);
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, &sw, NULL, &p.clocks);
	clocks_span(&cl, &fl, base, base + (32u << 20), 42, 0, &p.clocks);
	CHECK(p.clocks.switches_known && p.clocks.window_max_on_cpu_ns == 200000 && p.clocks.span_on_cpu_ns == 200000,
	      "on a CPU: longest window %llu ns, span %llu ns", (unsigned long long)p.clocks.window_max_on_cpu_ns,
	      (unsigned long long)p.clocks.span_on_cpu_ns);
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_WARN && strstr(msg, "context switches") &&
		      strstr(msg, "0.2 ms on a CPU"),
	      "1 ms of the window off a CPU: %s", msg);
	analysis_free(&a);

	/* Switches known, none in the span: 3 ms between the reads on a CPU, 3 % of 100 ms, however few samples. */
	rounds[1].time_ns = 104000000;
	const struct clocks_switches none = { spells, 1 };
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, &none, NULL, &p.clocks);
	clocks_span(&cl, &fl, base, base + (32u << 20), 42, 0, &p.clocks);
	CHECK(p.clocks.hot_samples_in_span == 0 && p.clocks.span_on_cpu_ns == 3000000, "span on a CPU %llu ns",
	      (unsigned long long)p.clocks.span_on_cpu_ns);
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_PASS, "3 ms timed on a CPU: %s", msg);
	analysis_free(&a);
	/*
	 * The same 3 ms with the samples at 4 kHz through the span (span_fast_rate): none there says the thread did not
	 * run those 3 ms, whatever its switches say; a vCPU the host stopped is on a CPU to the guest. Eight samples
	 * (2 ms, and a period partly run) are half of it: the thread ran.
	 */
	p.clocks.span_fast_rate = true;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_WARN && strstr(msg, "host stopped") &&
		      strstr(msg, "0.25 ms by its samples"),
	      "3 ms on a CPU, no sample at 4 kHz: %s", msg);
	analysis_free(&a);
	p.clocks.hot_samples_in_span = 5;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_PASS, "3 ms, 5 samples in it: %s", msg);
	analysis_free(&a);
	/* A deleted loop's reads 1.107 ms apart on a CPU with no sample between them (seen on a bhyve guest); had
	 * the thread run them, 4 samples would be there, and 3 still say it did. */
	rounds[1].time_ns = 102107000;
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, &none, NULL, &p.clocks);
	clocks_span(&cl, &fl, base, base + (32u << 20), 42, 0, &p.clocks);
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_PASS, "1.1 ms, the sample rate unknown: %s", msg);
	analysis_free(&a);
	p.clocks.span_fast_rate = true;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_WARN && strstr(msg, "deleted"),
	      "1.1 ms on a CPU, no sample at 4 kHz: %s", msg);
	analysis_free(&a);
	p.clocks.hot_samples_in_span = 3;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_PASS, "1.1 ms, 3 samples in it: %s", msg);
	analysis_free(&a);
	p.clock_lost = 1;
	p.clocks.hot_samples_in_span = 0;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_PASS, "1.1 ms, samples lost: %s", msg);
	analysis_free(&a);
	p.clock_lost = 0;
	/*
	 * The same 1.107 ms window, 0.9 ms of it the first read's own call: its faults in the vDSO's data pages and
	 * the probes' single-step page, the last 0.2 ms before the next read. Faults before the first read and after
	 * the last are no window's.
	 */
	const uint64_t call_faults[] = { 100500000, 101020000, 101900000, 102200000 };
	const struct clocks_own own = { call_faults, 4 };
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, res, 10000000, &none, &own, &p.clocks);
	clocks_span(&cl, &fl, base, base + (32u << 20), 42, 0, &p.clocks);
	CHECK(p.clocks.window_call_faults == 2 && p.clocks.window_call_ns == 900000 && p.clocks.window_max_ns == 207000 &&
		      p.clocks.window_max_on_cpu_ns == 207000 && p.clocks.span_on_cpu_ns == 207000 &&
		      p.clocks.span_ns == 1107000,
	      "the call's own 0.9 ms out: %llu faults, %llu ns out, window %llu ns (%llu on a CPU), span %llu ns",
	      (unsigned long long)p.clocks.window_call_faults, (unsigned long long)p.clocks.window_call_ns,
	      (unsigned long long)p.clocks.window_max_ns, (unsigned long long)p.clocks.window_max_on_cpu_ns,
	      (unsigned long long)p.clocks.span_ns);
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "empty_timed_window", &msg) == CHECK_WARN && strstr(msg, "deleted"),
	      "1.1 ms, 0.9 ms of it the first call's: %s", msg);
	analysis_free(&a);

	/* One window in four preempted for 4 ms: coarse_clock judges the 90th percentile, not the longest. */
	static struct sample_record many[41];
	for (size_t i = 0; i < 41; i++)
		many[i] = (struct sample_record){ .tid = 42, .time_ns = 1000000 + i * 30000 + (i > 20) * 4000000,
						  .regs = { 2 }, .n_regs = 1 };
	lists[SAMPLE_CLOCK_GETTIME] = (struct sample_list){ many, 41, 41 };
	const uint64_t us[SAMPLE_CLOCK_IDS] = { 1, 1, 1000, 1, 1, 4000000, 4000000, 1, 0 };
	p.clocks = (struct sample_clocks){ .traced = true, .libc_mapped = true };
	clocks_profile(lists, 42, us, 10000000, NULL, NULL, &p.clocks);
	CHECK(p.clocks.window_max_ns == 4030000 && p.clocks.window_p90_ns == 30000, "max %llu, p90 %llu",
	      (unsigned long long)p.clocks.window_max_ns, (unsigned long long)p.clocks.window_p90_ns);
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, NULL, 0, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "coarse_clock", &msg) == CHECK_WARN && strstr(msg, "90 %"), "30 us of 1 us ticks: %s", msg);
	analysis_free(&a);
}

static void append_sample(struct sample_list *l, struct sample_record x)
{
	CHECK(sample_list_append(l, &x) == 0, "appended");
}

/*
 * The early 4 kHz samples thinned to one per thread and 4 ms of its CPU time, the later ones kept: each then
 * stands for 4 ms. Two threads took turns on one CPU: each ran 50 of the 100 ms, so 12 or 13 samples stand for
 * it, not 25 (one per 4 ms of wall time, as the thinning before had it).
 */
static void test_clock_thin(void)
{
	struct sample_list l = { 0 };
	const uint64_t start = 1000000000ull, slow = start + 100000000ull;

	/* 100 ms of samples 250 us apart, alternating between two threads (200 each), then 50 at 4 ms on one. */
	for (size_t i = 0; i < 400; i++)
		append_sample(&l, (struct sample_record){ .tid = 10 + (uint32_t)(i % 2), .time_ns = start + i * 250000 });
	for (size_t i = 0; i < 50; i++)
		append_sample(&l, (struct sample_record){ .tid = 10, .time_ns = slow + i * 4000000 });
	CHECK(watch_clock_periods(&l, slow, 250000, 4000000) == 0 && l.items[0].period == 250000 &&
		      l.items[449].period == 4000000, "periods %llu, %llu", (unsigned long long)l.items[0].period,
	      (unsigned long long)l.items[449].period);
	CHECK(watch_clock_resample(&l, 4000000) == 0, "thinned");
	size_t t10 = 0, t11 = 0, late = 0;
	for (size_t i = 0; i < l.count; i++) {
		t10 += l.items[i].tid == 10 && l.items[i].time_ns < slow;
		t11 += l.items[i].tid == 11;
		late += l.items[i].time_ns >= slow;
		CHECK(i == 0 || l.items[i].time_ns > l.items[i - 1].time_ns, "order kept at %zu", i);
		CHECK(l.items[i].period == 4000000 && !l.items[i].spread, "kept as taken, at 4 ms");
	}
	CHECK(t10 == 13 && t11 == 13 && late == 50, "kept %zu + %zu early, %zu late", t10, t11, late);
	sample_list_free(&l);

	/* A short command: 4 early samples kept, 3 late ones spread to 16 each, 250 us apart, ending at their own. */
	struct sample_list s = { 0 };
	for (size_t i = 0; i < 7; i++) {
		struct sample_record x = { .tid = 10, .ip = 0x1000 + i, .time_ns = i < 4 ? start + i * 250000
											  : slow + (i - 4) * 4000000 };
		CHECK(sample_list_append(&s, &x) == 0, "appended");
	}
	CHECK(watch_clock_periods(&s, slow, 250000, 4000000) == 0 && watch_clock_resample(&s, 250000) == 0 &&
		      s.count == 4 + 3 * 16, "spread to %zu", s.count);
	CHECK(s.items[4].ip == 0x1004 && s.items[19].ip == 0x1004 && s.items[19].time_ns == slow &&
		      s.items[4].time_ns == slow - 15 * 250000 && s.items[20].ip == 0x1005,
	      "copies of each late sample, 250 us apart, the last at its own time");
	CHECK(!s.items[3].spread && s.items[4].spread && s.items[18].spread && !s.items[19].spread,
	      "the copies marked spread, the samples themselves and the early ones not");
	sample_list_free(&s);

	/*
	 * A worker started before the rate was lowered keeps the fast rate (its inherited event never saw the
	 * change), beside its first thread at the slow one: the worker's samples stand for 250 us each, not 4 ms.
	 */
	struct sample_list m = { 0 };
	for (size_t i = 0; i < 160; i++) {
		struct sample_record x = { .tid = 11, .time_ns = slow + i * 250000 };
		CHECK(sample_list_append(&m, &x) == 0, "appended");
		if (i % 16 == 0) {
			x.tid = 10;
			CHECK(sample_list_append(&m, &x) == 0, "appended");
		}
	}
	CHECK(watch_clock_periods(&m, slow, 250000, 4000000) == 0 && watch_clock_resample(&m, 250000) == 0 &&
		      m.count == 160 + 10 * 16, "a fast worker beside a slow thread: %zu samples", m.count);
	size_t worker = 0;
	for (size_t i = 0; i < m.count; i++)
		worker += m.items[i].tid == 11;
	CHECK(worker == 160, "the worker's samples kept as taken: %zu", worker);
	sample_list_free(&m);

	/*
	 * Counted: each sample stands for the CPU time its event ran since its sample before, per thread and CPU,
	 * whatever the rate and the gaps. Thread 10 at 4 ms on CPU 0, with a sample 10 us after another (the timer
	 * restarted late), and 1 ms on CPU 1 in between; thread 10 again after its ID was reused (the count went
	 * back); thread 11 fast, with gaps of 5 ms between its samples (it shared its CPU), then a gap of lost ones.
	 */
	struct sample_list c = { 0 };
	const struct { uint32_t tid; int32_t cpu; uint64_t t_ms, count_us; } cs[] = {
		{ 10, 0, 4, 4000 }, { 10, 1, 5, 1000 }, { 10, 0, 9, 8000 }, { 10, 0, 9, 8010 }, { 11, 0, 10, 250 },
		{ 11, 0, 15, 500 }, { 10, 0, 20, 3000 }, { 11, 0, 60, 30500 },
	};
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
		append_sample(&c, (struct sample_record){ .tid = cs[i].tid, .cpu = cs[i].cpu, .ip = i,
							  .time_ns = start + cs[i].t_ms * 1000000,
							  .count = cs[i].count_us * 1000, .counted = true });
	CHECK(watch_clock_periods(&c, slow, 250000, 4000000) == 0, "counted periods");
	/* The last: 30 ms since thread 11's sample before, where 120 samples were lost: it stands for 4 ms at most. */
	const uint64_t want_us[] = { 4000, 1000, 4000, 10, 250, 250, 3000, 4000 };
	for (size_t i = 0; i < c.count; i++)
		CHECK(c.items[i].period == want_us[i] * 1000, "sample %zu stands for %llu us, want %llu", i,
		      (unsigned long long)c.items[i].period / 1000, (unsigned long long)want_us[i]);
	CHECK(watch_clock_resample(&c, 250000) == 0 && c.count == 16 + 4 + 16 + 0 + 1 + 1 + 12 + 16,
	      "resampled to %zu at 250 us", c.count);
	size_t ten = 0;
	for (size_t i = 0; i < c.count; i++)
		ten += c.items[i].tid == 10;
	CHECK(ten == 48, "thread 10's 12.01 ms: %zu samples of 250 us", ten);
	/* A sample without its count: all as set. Never lowered (from 0): all fast. */
	c.items[0].counted = false;
	CHECK(watch_clock_periods(&c, 0, 250000, 4000000) == 0 && c.items[0].period == 250000 &&
		      c.items[c.count - 1].period == 250000, "never lowered, uncounted: the fast period");
	sample_list_free(&c);
	CHECK(watch_clock_resample(&c, 0) == -EINVAL, "a zero period refused");
}

/* Master (tid 10) and worker (tid 11) in the hot function: weight and samples taken each; which reads a clock. */
static uint32_t hot_of(size_t w10, size_t t10, bool r10, size_t w11, size_t t11, bool r11)
{
	const struct watch_thread_hits t[] = { { (10ull << 32) | 7, w10, t10, r10 }, { (11ull << 32) | 7, w11, t11, r11 } };

	return (uint32_t)(watch_hot_thread(t, 2) >> 32);
}

static void test_hot_thread(void)
{
	/* At 100 Hz, a 55 ms share: the master 1 sample, the worker 5, each spread 40 times; the master reads. */
	CHECK(hot_of(40, 1, true, 200, 5, false) == 10, "the timing master, 1 sample taken beside the worker's 5");
	CHECK(hot_of(40, 1, false, 200, 5, false) == 11, "no reads: the busiest");
	CHECK(hot_of(40, 1, true, 200, 5, true) == 11, "both read: the busiest");
	/* At 4 kHz the evidence is there: a quarter as many reads enough, a twentieth not (a monitoring thread). */
	CHECK(hot_of(50, 50, true, 200, 200, false) == 10, "a quarter of the busiest's samples");
	CHECK(hot_of(40, 40, true, 200, 200, false) == 10, "a fifth: within the noise of 40 samples");
	CHECK(hot_of(10, 10, true, 200, 200, false) == 11, "a twentieth of 200 samples: the busiest");
	CHECK(hot_of(0, 0, true, 200, 200, false) == 11, "a reader with no sample there is not the hot thread");
	CHECK(watch_hot_thread(NULL, 0) == 0, "no samples: 0");

	/* A reader with no sample there: chosen where its reads bracket the busiest's samples, as a master whose share
	 * fell between two samples at 100 Hz, or a main thread that joins its workers between two reads. */
	struct watch_thread_hits t[] = { { (11ull << 32) | 7, 200, 5, false, 0 }, { (10ull << 32) | 7, 0, 0, true, 1.0 },
					 { (12ull << 32) | 8, 0, 0, true, 1.0 } };
	CHECK(watch_hot_thread(t, 2) >> 32 == 10, "a reader around all of the worker's samples");
	t[1].bracketed = 0.5;
	CHECK(watch_hot_thread(t, 2) >> 32 == 11, "a reader around half of them: the busiest");
	CHECK(watch_hot_thread(t, 3) >> 32 == 11, "a reader in another process is never the hot thread");
	t[0].weight = t[0].taken = 0;
	CHECK(watch_hot_thread(t, 2) == 0, "no thread with a sample there: 0");
}

enum { TOUCH_PAGES = 3000 };

/* The pattern of n touches, t filled by the caller in any order. */
static struct sample_fault_pattern touch_pattern(struct watch_touch *t, size_t n)
{
	struct sample_fault_pattern f = { 0 };

	CHECK(watch_touch_pattern(t, n, &f) == 0, "watch_touch_pattern");
	return f;
}

static void test_touch_pattern(void)
{
	static struct watch_touch t[3 * TOUCH_PAGES];
	static uint32_t order[TOUCH_PAGES];
	struct sample_fault_pattern f;
	uint64_t seed = 7;
	size_t n = 0;

	/* Byte 0 of pages in a random order (Fisher-Yates, an LCG): the cache-set aliasing trap, next to no scan. */
	for (size_t i = 0; i < TOUCH_PAGES; i++)
		order[i] = (uint32_t)i;
	for (size_t i = TOUCH_PAGES - 1; i > 0; i--) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		size_t j = (size_t)(seed >> 33) % (i + 1);
		uint32_t x = order[i];
		order[i] = order[j];
		order[j] = x;
	}
	for (size_t i = 0; i < TOUCH_PAGES; i++)
		t[i] = (struct watch_touch){ 1000 + order[i], i, 5, 0, true };
	f = touch_pattern(t, TOUCH_PAGES);
	CHECK(f.loop_touches == TOUCH_PAGES && f.scan_known && f.scan_touches < TOUCH_PAGES / 50,
	      "random order: %llu of %llu a scan's", (unsigned long long)f.scan_touches,
	      (unsigned long long)f.loop_touches);
	CHECK(f.other.mode == 0 && f.other.mode_count == f.other.touches && f.other.distinct_lines == 1,
	      "random order: %llu of %llu others at byte %llu", (unsigned long long)f.other.mode_count,
	      (unsigned long long)f.other.touches, (unsigned long long)f.other.mode);

	/* A triad: three arrays scanned side by side, every page met at its first line (each array's first page seen
	 * from the page after it); given newest first. */
	for (size_t i = 0; i < TOUCH_PAGES; i++)
		for (size_t k = 0; k < 3; k++, n++)
			t[3 * TOUCH_PAGES - 1 - n] = (struct watch_touch){ 1000 + k * 5000 + i, n, 5, 0, true };
	f = touch_pattern(t, 3 * TOUCH_PAGES);
	CHECK(f.scan_touches == 3 * TOUCH_PAGES && f.other.touches == 0 && f.offset_mode_count == 3 * TOUCH_PAGES,
	      "triad: %llu a scan's, %llu others", (unsigned long long)f.scan_touches,
	      (unsigned long long)f.other.touches);
	CHECK(f.steps == 3 * TOUCH_PAGES - 1 && f.step_mode_pages == 5000 && f.step_mode_count == 2 * TOUCH_PAGES &&
	      f.steps_next_page == 0,
	      "triad: steps %llu, the most common %lld pages, %llu times", (unsigned long long)f.steps,
	      (long long)f.step_mode_pages, (unsigned long long)f.step_mode_count);

	/* Going down, each page met at its last line. */
	for (size_t i = 0; i < TOUCH_PAGES; i++)
		t[i] = (struct watch_touch){ 9000 - i, i, 5, 63, true };
	f = touch_pattern(t, TOUCH_PAGES);
	CHECK(f.scan_touches == TOUCH_PAGES && f.step_mode_pages == -1, "descending: %llu a scan's, step %lld",
	      (unsigned long long)f.scan_touches, (long long)f.step_mode_pages);

	/* A walk of one access a page at rotating lines: only those at line 0 after line 63 can be a scan's edge. */
	for (size_t i = 0; i < TOUCH_PAGES; i++)
		t[i] = (struct watch_touch){ 1000 + i, i, 5, (unsigned)(i % 64), true };
	f = touch_pattern(t, TOUCH_PAGES);
	CHECK(f.scan_touches == (TOUCH_PAGES - 1) / 64 && f.other.distinct_lines == 64 && f.steps_next_page ==
	      TOUCH_PAGES - 1, "rotating lines: %llu a scan's, others over %u lines", (unsigned long long)f.scan_touches,
	      f.other.distinct_lines);

	/* Kept in blocks of 4 pages (sample_list_decimate()): each block's head is seen from the page after it. */
	n = 0;
	for (size_t i = 0; i < TOUCH_PAGES; i++)
		if (i % 16 < 4)
			t[n++] = (struct watch_touch){ 1000 + i, i, 5, 0, true };
	f = touch_pattern(t, n);
	CHECK(f.scan_touches == n, "blocks: %llu of %zu a scan's", (unsigned long long)f.scan_touches, n);

	/* Every other page's fault outside the hot loop's range: they still carry the scan, and are not counted. */
	for (size_t i = 0; i < TOUCH_PAGES; i++)
		t[i] = (struct watch_touch){ 1000 + i, i, 5, 0, i % 2 == 0 };
	f = touch_pattern(t, TOUCH_PAGES);
	CHECK(f.loop_touches == TOUCH_PAGES / 2 && f.scan_touches == TOUCH_PAGES / 2 && f.steps_next_page == 0,
	      "half outside the loop: %llu touches, %llu a scan's", (unsigned long long)f.loop_touches,
	      (unsigned long long)f.scan_touches);

	/* Two threads, each scanning its half, their faults interleaved in time: each thread's order is its own. */
	for (size_t i = 0; i < TOUCH_PAGES; i++)
		t[i] = (struct watch_touch){ 1000 + i / 2 + (i % 2) * TOUCH_PAGES, i, 5 + (uint32_t)(i % 2), 0, true };
	f = touch_pattern(t, TOUCH_PAGES);
	CHECK(f.scan_touches == TOUCH_PAGES && f.step_mode_pages == 1 && f.steps == TOUCH_PAGES - 2,
	      "two threads: %llu a scan's, step %lld", (unsigned long long)f.scan_touches, (long long)f.step_mode_pages);
}

/* load_dependence's rows: each changes the chase's decoded body in one way. */
static void overlapped(struct sample_code *c)
{
	c->chained_loads = 0;
	c->chained_at = 0;
}

static void calls_out(struct sample_code *c)
{
	overlapped(c);
	c->calls = 1;
	c->call_at = 0x1004;
}

static void own_variables_only(struct sample_code *c)
{
	overlapped(c);
	c->loads = 0;
}

static void random_writes(struct sample_code *c)
{
	own_variables_only(c);
	c->stores = 1;
}

static void too_long(struct sample_code *c)
{
	c->body_instructions = 5000;
	c->body_followed = false;
	c->loads = c->chained_loads = 0;
}

static void no_jump_back(struct sample_code *c)
{
	c->body_start = c->body_end = 0;
}

static void before_bodies(struct sample_code *c)
{
	c->body_recorded = false;
}

static void not_decoded(struct sample_code *c)
{
	c->decoded = false;
	snprintf(c->error, sizeof(c->error), "no instruction decoded");
}

/* load_dependence: what the hot loop's loads wait on, from its decoded body; warned only against a declared latency. */
static void test_load_dependence(void)
{
	struct sample_profile p;
	struct analysis a;
	const char *msg;
	struct target_phase declared = { .has_accesses = true };
	struct phase_result r = { .target = &declared };
	const struct sample_code chase = { .decoded = true, .body_recorded = true, .body_start = 0x1000,
					   .body_end = 0x100b, .body_instructions = 3, .body_followed = true,
					   .loads = 1, .chained_loads = 1, .chained_at = 0x1000 };
	static const struct {
		int line;
		const char *name;
		void (*change)(struct sample_code *c);
		bool latency_declared;
		enum check_status want;
		const char *says;
	} rows[] = {
		{ __LINE__, "a chase", NULL, true, CHECK_PASS, "is a chain: the load at 0x1000" },
		{ __LINE__, "overlapped, nothing declared", overlapped, false, CHECK_PASS, "informational: none of the 1" },
		{ __LINE__, "overlapped, latency declared", overlapped, true, CHECK_WARN,
		  "1 phase(s) declare latency accesses, and its hot loop holds 96 % of the CPU time in user code, but none "
		  "of the 1 loads" },
		{ __LINE__, "a call in the body", calls_out, true, CHECK_SKIP, "calls out at 0x1004" },
		{ __LINE__, "its own variables only", own_variables_only, true, CHECK_SKIP,
		  "reads and writes nothing but its own variables" },
		{ __LINE__, "random writes, nothing declared", random_writes, false, CHECK_PASS,
		  "loads nothing but its own variables and stores 1 time(s) a pass" },
		{ __LINE__, "random writes, latency declared", random_writes, true, CHECK_WARN,
		  "but the hot loop of chase (body 0x1000-0x100b) loads nothing" },
		{ __LINE__, "no jump back", no_jump_back, true, CHECK_SKIP, "leads back into it" },
		{ __LINE__, "an interpreter's loop", too_long, true, CHECK_SKIP, "is 5000 instructions, more than the 4096" },
		{ __LINE__, "a report from before", before_bodies, true, CHECK_SKIP, "written before" },
		{ __LINE__, "not decoded", not_decoded, true, CHECK_SKIP, "not decoded: no instruction decoded" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		correct(&p);
		p.code = chase;
		if (rows[i].change)
			rows[i].change(&p.code);
		size_t n = rows[i].latency_declared ? 1 : 0;
		CHECK_ROW(rows[i].line, analysis_run(NULL, 0, NULL, NULL, &a) == 0 &&
				  analysis_check_unmarked(&a, n ? &r : NULL, n, NULL, &p) == 0, "%s: analysed", rows[i].name);
		enum check_status st = status_of(&a, "load_dependence", &msg);
		CHECK_ROW(rows[i].line, st == rows[i].want && strstr(msg, rows[i].says), "%s: %s: %s", rows[i].name,
			  check_status_name(st) ? check_status_name(st) : "?", msg);
		analysis_free(&a);
	}
	/* Declared latency, but the hot function holds under half the user code's samples: maybe the setup's loop. */
	correct(&p);
	p.code = chase;
	overlapped(&p.code);
	p.hot_exe_count = 200;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, &r, 1, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "load_dependence", &msg) == CHECK_PASS && strstr(msg, "informational"),
	      "a hot loop with 38 %% of the user samples is not taken for the declared phase's: %s", msg);
	analysis_free(&a);
	/*
	 * declared_accesses_plausible's warning names the cause the code shows: the count, for a chase; what the loads
	 * wait on, for overlapped loads; neither where the hot loop holds under half the user code's samples.
	 */
	static const struct {
		int line;
		bool chained;
		uint64_t hot;
		const char *says, *not_says;
	} causes[] = {
		{ __LINE__, true, 500, "Its hot loop chains its loads (the load at 0x1000", "None of" },
		{ __LINE__, false, 500, "None of its hot loop's 1 loads is chained", "chains its loads" },
		{ __LINE__, false, 200, "too fast", "load_dependence" },
	};
	for (size_t i = 0; i < sizeof(causes) / sizeof(causes[0]); i++) {
		correct(&p);
		p.code = chase;
		if (!causes[i].chained)
			overlapped(&p.code);
		p.hot_exe_count = causes[i].hot;
		CHECK_ROW(causes[i].line, analysis_run(NULL, 0, NULL, NULL, &a) == 0, "analysed");
		for (size_t k = 0; k < a.n_checks; k++) {
			struct analysis_check *c = &a.checks[k];
			if (strcmp(c->id, "declared_accesses_plausible") == 0 || strcmp(c->id, "too_fast") == 0) {
				c->status = strcmp(c->id, "too_fast") == 0 ? CHECK_FAIL : CHECK_WARN;
				snprintf(c->message, sizeof(c->message), "too fast");
			}
		}
		CHECK_ROW(causes[i].line, analysis_check_unmarked(&a, &r, 1, NULL, &p) == 0, "analysed");
		CHECK_ROW(causes[i].line, status_of(&a, "declared_accesses_plausible", &msg) == CHECK_WARN &&
				  strstr(msg, causes[i].says) && !strstr(msg, causes[i].not_says),
			  "declared_accesses_plausible: %s", msg);
		CHECK_ROW(causes[i].line, status_of(&a, "too_fast", &msg) == CHECK_FAIL && strstr(msg, causes[i].says) &&
				  !strstr(msg, causes[i].not_says),
			  "too_fast: %s", msg);
		analysis_free(&a);
	}
	/* A throughput phase declared beside it: which phase the loop is, the code cannot say. */
	struct phase_result both[2] = { r, r };
	both[1].spec.throughput = true;
	p.hot_exe_count = 500;
	CHECK(analysis_run(NULL, 0, NULL, NULL, &a) == 0 && analysis_check_unmarked(&a, both, 2, NULL, &p) == 0, "analysed");
	CHECK(status_of(&a, "load_dependence", &msg) == CHECK_PASS && strstr(msg, "it declares throughput phases"),
	      "latency and throughput declared: %s", msg);
	analysis_free(&a);
}

/*
 * Under shadow paging (the probe: 4.9 µs a populated page on a PVM guest here), a 32 MiB region populated by the
 * kernel (MADV_POPULATE_WRITE: resident, no fault) traps on each page's first write with no fault to show: the
 * check cannot tell whether the timed loop is that write. Natively, or with the region's pages faulted, or with
 * fault samples lost or thinned (the faulted pages then undercounted), it passes as before; and where the timed
 * loop does take the faults, its advice no longer offers prefaulting as the fix.
 */
static void test_populated_unseen(void)
{
	struct sample_profile p;
	struct environment pvm = { 0 }, ept = { 0 };

	snprintf(pvm.hypervisor, sizeof(pvm.hypervisor), "bhyve");
	pvm.first_access = (struct env_first_access){ 4096, 4901.7 };
	ept.first_access = (struct env_first_access){ 4096, 38.0 };
	correct(&p);
	p.has_pattern = false;
	p.faults = (struct sample_fault_pattern){ 0 };
	p.fault_samples = 15;
	p.regions[0].faults = p.regions[0].fault_pages = 0;
	p.regions[0].vm_nh = true;
	expect_first_touch_env(&p, &pvm, CHECK_SKIP,
			       "could not tell, because anonymous memory at 0x7f0000000000 (32.0 MiB resident) took page "
			       "faults on 0 of its 8192 pages: it was populated by the kernel", "pvm, populated");
	expect_first_touch_env(&p, &pvm, CHECK_SKIP, "it times about 40 ms of traps", "pvm, the cost");
	expect_first_touch_env(&p, &ept, CHECK_PASS, "nothing was first touched in bulk", "ept, populated");
	expect_first_touch_env(&p, NULL, CHECK_PASS, "nothing was first touched in bulk", "no probe");
	p.regions[0].fault_pages = 2048;	/* a quarter faulted: not populated by the kernel alone */
	expect_first_touch_env(&p, &pvm, CHECK_PASS, "nothing was first touched in bulk", "pvm, a quarter faulted");
	p.regions[0].fault_pages = 0;
	p.faults_lost = 3;
	expect_first_touch_env(&p, &pvm, CHECK_PASS, "nothing was first touched in bulk", "pvm, faults lost");
	p.faults_lost = 0;
	p.regions[0].anon_huge_max = 32u << 20;	/* THP: a fault per 2 MiB */
	expect_first_touch_env(&p, &pvm, CHECK_PASS, "nothing was first touched in bulk", "pvm, THP");

	correct(&p);
	first_touch(&p);
	expect_first_touch_env(&p, &pvm, CHECK_WARN, "prefaulting (MAP_POPULATE, MADV_POPULATE_WRITE) is not enough "
			       "here, where the first write to each populated page still took 4.9 µs", "pvm, advice");
	expect_first_touch_env(&p, &ept, CHECK_WARN, "or prefault it (MAP_POPULATE, MADV_POPULATE_WRITE)", "ept, advice");
}

/*
 * A region on THP that a marked phase declared, its backing verified: judged against the page it declared by
 * control_thp_contamination and huge_pages_granted, so thp_backed_region passes and says so (the marked example's 2m
 * phase was warned about). A declared region elsewhere, or one whose backing was not read, leaves the warning.
 */
static void test_thp_declared(void)
{
	static const struct {
		int line;
		uint64_t offset;	/* of the declared region from the watched one's start */
		bool backing_known;
		enum check_status want;
		const char *says;
	} rows[] = {
		{ __LINE__, 0, true, CHECK_PASS, "the 1 of the 1 big regions on transparent huge pages was declared" },
		{ __LINE__, 16u << 20, true, CHECK_PASS, "was declared by a phase" },	/* overlapping its second half */
		{ __LINE__, 64u << 20, true, CHECK_WARN, "MADV_HUGEPAGE" },		/* past its end */
		{ __LINE__, 0, false, CHECK_WARN, "MADV_HUGEPAGE" },			/* backing never verified */
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct sample_profile p;
		struct analysis a;
		struct target_phase tp = { .has_region = true, .has_page = true, .region_bytes = 32u << 20 };
		struct phase_result r = { .status = PHASE_OK, .target = &tp, .backing_known = rows[i].backing_known };
		const char *msg = NULL;
		correct(&p);
		thp(&p);
		tp.region_addr = p.regions[0].start + rows[i].offset;
		CHECK_ROW(rows[i].line, analysis_run(NULL, 0, NULL, NULL, &a) == 0 &&
				  analysis_check_unmarked(&a, &r, 1, NULL, &p) == 0, "declared THP: analysed");
		enum check_status st = status_of(&a, "thp_backed_region", &msg);
		CHECK_ROW(rows[i].line, st == rows[i].want && msg && strstr(msg, rows[i].says),
			  "declared THP at +%llu MiB: %s: %s", (unsigned long long)(rows[i].offset >> 20),
			  check_status_name(st) ? check_status_name(st) : "?", msg ? msg : "(none)");
		analysis_free(&a);
	}
}

int main(void)
{
	test_parsers();
	test_checks();
	test_thp_declared();
	test_few_faulted_windows();
	test_cpu_time_clock();
	test_off_cpu();
	test_rejudge();
	test_rejudge_build();
	test_clocks();
	test_clock_span();
	test_clock_measured();
	test_clock_pairs();
	test_clock_thin();
	test_hot_thread();
	test_touch_pattern();
	test_untimed_touches();
	test_load_dependence();
	test_populated_unseen();
	return check_finish();
}
