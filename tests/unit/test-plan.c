/* SPDX-License-Identifier: MIT */
/* Planning: the chase grid with controls, the stride sweep, and the tlbsize page counts around CPUID capacities. */
#include <string.h>

#include "check.h"
#include "cmd/command.h"
#include "cmd/options.h"
#include "measure/plan.h"
#include "measure/workload.h"

/* The measuring command line argv (NULL-terminated) as main parses it, into *o. */
static enum option_result parse_line(char **argv, struct measure_options *o, char *msg, size_t len)
{
	const struct command *cmd;
	void *opts = NULL;
	int argc = 0;

	while (argv[argc])
		argc++;
	enum option_result r = command_parse(argc, argv, &cmd, &opts, msg, len);
	if (opts)
		*o = *(struct measure_options *)opts;
	free(opts);
	return r;
}

/* The plan request of a good command line; the child pointer (into the freed options) is cleared. */
static void parse(struct plan_request *req, char **argv)
{
	struct measure_options o;
	char msg[256];

	CHECK(parse_line(argv, &o, msg, sizeof(msg)) == OPTION_OK, "parse: %s", msg);
	*req = o.plan;
	req->child = NULL;
}

/* --layout colored,aligned: each page size in both layouts, side by side, the second named by its layout. */
static void test_layout_pair(void)
{
	struct plan_request cfg;
	struct plan p;
	char *argv[] = { "tlbprof", "--pages", "4k,2m", "--size", "1G", "--layout", "colored,aligned", NULL };
	struct plan_context ctx = { .with_controls = true, .current_cpu = -1 };
	static const char *const names[] = { "chase/4k:packed/1G/r0", "chase/4k/1G/r0", "chase/2m/1G/r0",
					     "chase/4k:aligned/1G/r0", "chase/2m:aligned/1G/r0" };
	static const enum chase_layout layouts[] = { LAYOUT_COLORED, LAYOUT_COLORED, LAYOUT_COLORED, LAYOUT_ALIGNED,
						     LAYOUT_ALIGNED };

	parse(&cfg, argv);
	CHECK(cfg.n_layouts == 2 && cfg.layout == LAYOUT_COLORED, "two layouts, colored first");
	CHECK(plan_build(&cfg, &ctx, &p) == 0 && p.n == 5, "control + 2 pages x 2 layouts: %zu", p.n);
	for (size_t i = 0; i < p.n && i < 5; i++)
		CHECK(strcmp(p.phases[i].name, names[i]) == 0 && p.phases[i].layout == layouts[i], "phase %zu: %s (%s)", i,
		      p.phases[i].name, layout_name(p.phases[i].layout));
	plan_free(&p);

	char *one[] = { "tlbprof", "--layout", "aligned", NULL };
	parse(&cfg, one);
	CHECK(plan_build(&cfg, &ctx, &p) == 0 && p.n == 3 && strcmp(p.phases[1].name, "chase/4k/256M/r0") == 0 &&
		      p.phases[1].layout == LAYOUT_ALIGNED, "one layout keeps the plain names");
	plan_free(&p);
}

static void test_chase_grid(void)
{
	struct plan_request cfg;
	struct plan p;
	char *argv[] = { "tlbprof", "--pages", "4k,2m", "--size", "64M,256M", "--iters", "20M", NULL };
	struct plan_context ctx = { .with_controls = true, .current_cpu = -1 };

	parse(&cfg, argv);
	CHECK(plan_build(&cfg, &ctx, &p) == 0, "plan");
	CHECK(p.n == 6, "2 sizes x (control + 2 page sizes): %zu", p.n);
	static const char *const names[] = { "chase/4k:packed/64M/r0", "chase/4k/64M/r0", "chase/2m/64M/r0",
					     "chase/4k:packed/256M/r0", "chase/4k/256M/r0", "chase/2m/256M/r0" };
	for (size_t i = 0; i < p.n && i < 6; i++) {
		CHECK(strcmp(p.phases[i].name, names[i]) == 0, "phase %zu: %s", i, p.phases[i].name);
		CHECK(p.phases[i].index == i, "index in run order");
	}
	CHECK(p.phases[0].role == PHASE_ROLE_CONTROL && p.phases[0].stride_bytes == 128 &&
		      p.phases[0].size_bytes == (64u << 20) / 4096 * 128 && p.phases[0].controls_size_bytes == 64u << 20,
	      "the control has the lines of 64M at 4K stride, one of every 128 B pair");
	CHECK(p.phases[1].warmup_iterations == 2000000, "warm-up 10 %% of 20M");
	plan_free(&p);

	ctx.with_controls = false;
	CHECK(plan_build(&cfg, &ctx, &p) == 0 && p.n == 4, "no controls: %zu", p.n);
	plan_free(&p);

	/* A 128 B stride has nothing to pack: its lines are one of every pair already. */
	char *argv128[] = { "tlbprof", "--pages", "4k", "--size", "1M", "--stride", "128", NULL };
	parse(&cfg, argv128);
	ctx.with_controls = true;
	CHECK(plan_build(&cfg, &ctx, &p) == 0 && p.n == 1, "no control at 128 B stride: %zu", p.n);
	plan_free(&p);
}

static void test_stride_sweep(void)
{
	struct plan_request cfg;
	struct plan p;
	char *argv[] = { "tlbprof", "--workload", "stride", "--pages", "4k,2m", "--size", "64M", "--strides",
			 "8,512,4K", NULL };
	struct plan_context ctx = { .with_controls = true, .current_cpu = -1 };

	parse(&cfg, argv);
	CHECK(plan_build(&cfg, &ctx, &p) == 0 && p.n == 6, "2 page sizes x 3 strides, no controls: %zu", p.n);
	CHECK(p.n == 6 && strcmp(p.phases[0].name, "stride/4k/64M/s8/r0") == 0 &&
		      strcmp(p.phases[2].name, "stride/4k/64M/s4K/r0") == 0 &&
		      strcmp(p.phases[5].name, "stride/2m/64M/s4K/r0") == 0, "names");
	CHECK(p.n == 6 && p.phases[1].stride_bytes == 512 && p.phases[4].page.kind == PAGE_THP, "strides and pages");
	plan_free(&p);

	char *bad[] = { "tlbprof", "--workload", "stride", "--size", "4K", "--stride", "8", "--strides", "4K", NULL };
	char msg[256];
	struct measure_options o;
	CHECK(parse_line(bad, &o, msg, sizeof(msg)) == OPTION_USAGE && strstr(msg, "--strides"),
	      "a stride beyond half the size is refused: %s", msg);
}

static bool has_point(const struct plan *p, uint64_t pages)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->phases[i].size_bytes == pages * 4096)
			return true;
	return false;
}

static void test_tlbsize_points(void)
{
	struct plan_request cfg;
	struct plan p, q;
	char *argv[] = { "tlbprof", "--workload", "tlbsize", NULL };
	struct env_tlb zen4 = { .l1d_4k_entries = 72, .l2d_4k_entries = 3072 };
	struct plan_context ctx = { .current_cpu = 1, .tlb = &zen4 };

	parse(&cfg, argv);
	CHECK(plan_build(&cfg, &ctx, &p) == 0, "plan");
	uint64_t max = 0;
	for (size_t i = 0; i < p.n; i++) {
		const struct phase_spec *ph = &p.phases[i];
		CHECK(ph->stride_bytes == 4096 && ph->page.kind == PAGE_BASE && ph->layout == LAYOUT_COLORED,
		      "one colored slot per 4 KiB page");
		CHECK(ph->cpu == 1, "pinned to the CPU it started on");
		CHECK(ph->iterations == 200000, "tlbsize's own default iterations");
		for (size_t j = 0; j < i; j++)
			CHECK(ph->size_bytes != p.phases[j].size_bytes, "unique page counts");
		if (ph->size_bytes / 4096 > max)
			max = ph->size_bytes / 4096;
	}
	CHECK(max == 4 * 3072, "up to 4x the largest reach: %llu", (unsigned long long)max);
	CHECK(has_point(&p, 1) && has_point(&p, 2), "starts at one page");
	/* Dense around the capacities CPUID reports. */
	static const uint64_t dense[] = { 36, 54, 63, 68, 72, 77, 81, 90, 108, 144,
					  1536, 2304, 2688, 2880, 3072, 3264, 3456, 3840, 4608, 6144 };
	for (size_t i = 0; i < sizeof(dense) / sizeof(dense[0]); i++)
		CHECK(has_point(&p, dense[i]), "dense point %llu", (unsigned long long)dense[i]);
	CHECK(p.n < 120, "a sweep of %zu points stays well under a minute", p.n);
	/* Random order, the same for the same seed. */
	bool sorted = true;
	for (size_t i = 1; i < p.n; i++)
		sorted &= p.phases[i - 1].size_bytes < p.phases[i].size_bytes;
	CHECK(!sorted, "measured in random order");
	CHECK(plan_build(&cfg, &ctx, &q) == 0 && q.n == p.n, "again");
	for (size_t i = 0; i < p.n && i < q.n; i++)
		CHECK(p.phases[i].size_bytes == q.phases[i].size_bytes, "deterministic order");
	plan_free(&q);
	plan_free(&p);

	/* CPUID silent (a VM): 65536 pages, finer grid. */
	ctx.tlb = NULL;
	CHECK(plan_build(&cfg, &ctx, &p) == 0, "plan without CPUID");
	max = 0;
	for (size_t i = 0; i < p.n; i++)
		if (p.phases[i].size_bytes / 4096 > max)
			max = p.phases[i].size_bytes / 4096;
	CHECK(max == 65536, "default max %llu", (unsigned long long)max);
	plan_free(&p);

	char *argv2[] = { "tlbprof", "--workload", "tlbsize", "--max-pages", "100", "--iters", "1k", "--cpu", "0", NULL };
	parse(&cfg, argv2);
	CHECK(plan_build(&cfg, &ctx, &p) == 0, "plan");
	for (size_t i = 0; i < p.n; i++)
		CHECK(p.phases[i].size_bytes <= 100 * 4096 && p.phases[i].iterations == 1000 && p.phases[i].cpu == 0,
		      "--max-pages, --iters and --cpu are honoured");
	CHECK(has_point(&p, 100), "ends at --max-pages");
	plan_free(&p);

	char *bad[] = { "tlbprof", "--workload", "tlbsize", "--pages", "2m", NULL };
	char msg[256];
	struct measure_options o;
	CHECK(parse_line(bad, &o, msg, sizeof(msg)) == OPTION_USAGE && strstr(msg, "4k"), "needs 4k: %s", msg);
}

int main(void)
{
	test_chase_grid();
	test_layout_pair();
	test_stride_sweep();
	test_tlbsize_points();
	return check_finish();
}
