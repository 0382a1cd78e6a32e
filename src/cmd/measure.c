/* SPDX-License-Identifier: MIT */
/* tlbprof [OPTIONS]: measure with a workload (the default command): plan, run, analyse, report. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/command.h"
#include "cmd/options.h"
#include "cmd/common.h"
#include "judge/analysis.h"
#include "machine/cgroup.h"
#include "measure/plan.h"
#include "measure/region.h"
#include "measure/runner.h"
#include "measure/workload.h"
#include "parse.h"
#include "report/report.h"

#define MAX_REPEAT 1000
#define MAX_REALLOC 100


static const char *workload_name_at(size_t i)
{
	const struct workload_ops *w = workload_at(i);

	return w ? w->name : NULL;
}

static enum option_result set_workload(const struct option_spec *o, const char *arg, void *opts, char *msg,
				       size_t len)
{
	const struct workload_ops *w = workload_find(arg);
	char known[128] = "";

	(void)o;
	if (w && !w->foreign) {
		((struct measure_options *)opts)->plan.workload = w;
		return OPTION_OK;
	}
	for (size_t i = 0; workload_at(i); i++)
		snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s", i ? ", " : "", workload_at(i)->name);
	return option_error(msg, len, "--workload '%s': unknown workload (known: %s)", arg, known);
}

/* --pages: known page sizes, each once. */
static enum option_result set_pages(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	struct plan_request *req = &((struct measure_options *)opts)->plan;
	char buf[512], *items[PLAN_MAX_PAGES + 1];
	int n = option_split_list(o, arg, "page sizes", buf, sizeof(buf), items, PLAN_MAX_PAGES, msg, len);

	if (n < 0)
		return OPTION_USAGE;
	req->n_pages = 0;
	for (int i = 0; i < n; i++) {
		struct page_request pr;
		if (page_request_parse(items[i], &pr) != 0)
			return option_error(msg, len, "--pages '%s': unknown page size '%s' (use 4k, 2m, 2m:hugetlb, 1g)", arg,
					    items[i]);
		for (size_t j = 0; j < req->n_pages; j++)
			if (strcmp(req->pages[j].label, pr.label) == 0)
				return option_error(msg, len, "--pages '%s': '%s' listed twice", arg, items[i]);
		req->pages[req->n_pages++] = pr;
	}
	return OPTION_OK;
}

/* --layout: one layout, or two to run side by side; each once. */
static enum option_result set_layouts(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	struct plan_request *req = &((struct measure_options *)opts)->plan;
	char buf[64], *items[3];
	int n = option_split_list(o, arg, "layouts", buf, sizeof(buf), items, 2, msg, len);

	if (n < 0)
		return OPTION_USAGE;
	for (int i = 0; i < n; i++) {
		int v = name_lookup(layout_names, items[i]);
		if (v < 0)
			return option_error(msg, len, "--layout '%s': unknown layout '%s' (use colored, aligned)", arg,
					    items[i]);
		if (i && req->layouts[0] == (enum chase_layout)v)
			return option_error(msg, len, "--layout '%s': '%s' listed twice", arg, items[i]);
		req->layouts[i] = (enum chase_layout)v;
	}
	req->n_layouts = (size_t)n;
	req->layout = req->layouts[0];
	return OPTION_OK;
}

/* --size: sizes above 0, each once. */
static enum option_result set_sizes(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	struct measure_options *mo = opts;
	struct plan_request *req = &mo->plan;
	char buf[512], *items[PLAN_MAX_SIZES + 1];
	int n = option_split_list(o, arg, "sizes", buf, sizeof(buf), items, PLAN_MAX_SIZES, msg, len);

	if (n < 0)
		return OPTION_USAGE;
	req->n_sizes = 0;
	for (int i = 0; i < n; i++) {
		uint64_t v;
		int rc = parse_size(items[i], &v);
		if (rc)
			return option_error(msg, len, "--size '%s': '%s' is %s (use e.g. 64K, 256M, 1G)", arg, items[i],
					    rc == -ERANGE ? "out of range" : "not a size");
		if (v == 0)
			return option_error(msg, len, "--size '%s': size must be greater than 0", arg);
		for (size_t j = 0; j < req->n_sizes; j++)
			if (req->sizes_bytes[j] == v)
				return option_error(msg, len, "--size '%s': '%s' listed twice", arg, items[i]);
		snprintf(mo->sizes_text[req->n_sizes], sizeof(mo->sizes_text[0]), "%s", items[i]);
		req->sizes_bytes[req->n_sizes++] = v;
	}
	return OPTION_OK;
}

/* --iters auto|N */
static enum option_result set_iters(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	struct plan_request *req = &((struct measure_options *)opts)->plan;
	uint64_t v;
	int rc;

	(void)o;
	if (strcmp(arg, "auto") == 0) {
		req->iterations_auto = true;
		return OPTION_OK;
	}
	rc = parse_count(arg, &v);
	if (rc)
		return option_error(msg, len, "--iters '%s': %s (use auto or a count)", arg,
				    rc == -ERANGE ? "out of range" : "not a number");
	if (v == 0 || v > (1ull << 40))
		return option_error(msg, len, "--iters '%s': must be auto or between 1 and 2^40", arg);
	req->iterations = v;
	req->iterations_auto = false;
	return OPTION_OK;
}

/* --internal-child PHASE:FD[:FILE], written by the parent process only. */
static enum option_result set_child(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	struct measure_options *m = opts;
	char *end;
	long ph = strtol(arg, &end, 10), fd;

	(void)o;
	if (end == arg || *end != ':' || ph < 0)
		return option_error(msg, len, "--internal-child '%s': not PHASE:FD[:FILE]", arg);
	fd = strtol(end + 1, &end, 10);
	if (fd < 0 || (*end != '\0' && *end != ':'))
		return option_error(msg, len, "--internal-child '%s': not PHASE:FD[:FILE]", arg);
	m->child = (struct runner_child){ .phase = (size_t)ph, .fd = (int)fd, .file = *end == ':' && end[1] ? end + 1 : NULL };
	m->is_child = true;
	return OPTION_OK;
}

#define PLAN(field) offsetof(struct measure_options, plan.field)

/* The options of every workload; each workload's own are in its params (measure/workloads/). */
static const struct option_spec measure_specs[] = {
	{ .name = "workload", .value = "NAME", .help = "workload to run", .def = "chase", .set = set_workload,
	  .choice_at = workload_name_at, .complete = OPTION_COMPLETE_WORD },
	{ .name = "pages", .value = "LIST", .help = "page sizes: 4k, 2m (THP), 2m:hugetlb, 1g (hugetlb)\n", .def = "4k,2m",
	  .set = set_pages, .choice_at = page_request_spelling, .complete = OPTION_COMPLETE_LIST },
	{ .name = "size", .value = "LIST", .help = "working-set sizes, binary K/M/G suffixes; a list runs each\nsize",
	  .def = "256M", .set = set_sizes },
	{ .name = "iters", .value = "auto|N",
	  .help = "timed accesses per sample, k/M/G suffixes; auto: warm up until\n"
		  "steady, a batch lasting >= 1000x the clock overhead and >= 1 ms,\n"
		  "then more allocations until --precision or --time-budget\n",
	  .def = "auto", .set = set_iters, .choices = (const char *const[]){ "auto", NULL },
	  .complete = OPTION_COMPLETE_WORD },
	{ .name = "precision", .value = "F",
	  .help = "auto: stop when the 95% CI half-width, allocations as the unit,\nis below F of the median", .def = "0.01",
	  .set = option_set_double, .offset = PLAN(precision), .min = 0, .max = 1,
	  .flags = OPTION_MIN_OPEN | OPTION_MAX_OPEN, .range_help = "a number above 0 and below 1" },
	{ .name = "time-budget", .value = "S",
	  .help = "auto: wall seconds per phase, allocations and its second passes\n"
		  "included; the least (--realloc allocations of --repeat samples)\n"
		  "always runs\n",
	  .def = "0.5", .set = option_set_double, .offset = PLAN(time_budget_s), .min = 0, .max = 3600,
	  .flags = OPTION_MIN_OPEN, .range_help = "seconds above 0, at most 3600" },
	{ .name = "realloc", .value = "N",
	  .help = "fresh region and chain N times per phase (1: off; auto: the\nleast), 1 to " OPTION_STR(MAX_REALLOC),
	  .def = "3", .set = option_set_count, .offset = PLAN(allocations), .min = 1, .max = MAX_REALLOC },
	{ .name = "warmup-frac", .value = "F",
	  .help = "fixed --iters: warm-up accesses as a fraction of --iters, 0 to 1\n", .def = "0.1",
	  .set = option_set_double, .offset = PLAN(warmup_frac), .min = 0, .max = 1, .range_help = "a number from 0 to 1" },
	{ .name = "repeat", .value = "N",
	  .help = "timed samples per allocation (per process; with --iters auto\n"
		  "--realloc 1 the least), 1 to " OPTION_STR(MAX_REPEAT),
	  .def = "5", .set = option_set_count, .offset = PLAN(repeat), .min = 1, .max = MAX_REPEAT },
	{ .name = "seed", .value = "N", .help = "seed of the random chain", .def = "1", .set = option_set_u64,
	  .offset = PLAN(seed) },
	{ .name = "cpu", .value = "N", .help = "pin the measuring thread to CPU N", .def_help = "not pinned",
	  .set = cli_set_cpu, .offset = PLAN(cpu) },
	{ .name = "layout", .value = "L",
	  .help = "colored (rotate each slot's cache line) or aligned\n"
		  "(every slot at its page start, as naive benchmarks do);\n"
		  "colored,aligned runs both side by side (chase)\n",
	  .def = "colored", .set = set_layouts, .choices = layout_names, .complete = OPTION_COMPLETE_LIST },
	{ .name = "controls", .value = "MODE",
	  .help = "packed control phases (same cache lines on few pages):\nauto (when no dTLB counters), always, none",
	  .def = "auto", .set = option_set_choice, .offset = offsetof(struct measure_options, controls),
	  .choices = controls_mode_names, .complete = OPTION_COMPLETE_WORD },
	CLI_OPTION_FAIL_ON(struct measure_options, fail_on, CLI_FAIL_ON_HELP),
	CLI_OPTION_EVENT(struct measure_options, events),
	CLI_OPTION_EVENTS_DIR(struct measure_options, events_dir),
	CLI_OPTION_JSON(struct measure_options, out, "write the JSON report to FILE, or stdout with -\n"),
	CLI_OPTION_FORMAT(struct measure_options, out),
	CLI_OPTION_OUTPUT(struct measure_options, out),
	CLI_OPTION_QUIET(struct measure_options, out, "no table on stdout, no progress line on stderr"),
	CLI_OPTION_HELP,
	CLI_OPTION_VERSION,
	{ .name = "internal-child", .value = "PHASE:FD[:FILE]", .help = "a child process running one phase",
	  .set = set_child, .flags = OPTION_HIDDEN },
	{ 0 },
};

/* The default of option o as --help states it: its own, then each workload's that differs ("; pagefault: 128M"). */
static const char *default_text(const struct option_spec *o, char *buf, size_t len)
{
	const char *own = o->def_help ? o->def_help : o->def;
	size_t used;

	if (!own)
		return NULL;
	used = (size_t)snprintf(buf, len, "%s", own);
	for (size_t i = 0; workload_at(i) && used < len; i++)
		for (const struct workload_default *d = workload_at(i)->defaults; d && d->option; d++)
			if (strcmp(d->option, o->name) == 0)
				used += (size_t)snprintf(buf + used, len - used, "; %s: %s", workload_at(i)->name,
							 d->help ? d->help : d->value);
	return buf;
}

static void measure_usage(FILE *f)
{
	char def[256];

	fprintf(f, "Usage: tlbprof [OPTIONS]\n"
		   "       tlbprof COMMAND [OPTIONS] ...\n"
		   "Measure what address translation costs: run memory workloads in phases on\n"
		   "verified page sizes, with perf_event counters, and report JSON and a table.\n"
		   "\n");
	commands_print(f);
	fprintf(f, "\nOptions (measuring, every workload):\n");
	for (const struct option_spec *o = measure_specs; o->name; o++)
		if (!(o->flags & OPTION_HIDDEN))
			option_print(f, o, 2, default_text(o, def, sizeof(def)));
	fprintf(f, "\nWorkloads (--workload NAME), each with the options only it takes:\n");
	for (size_t i = 0; workload_at(i); i++) {
		const struct workload_ops *w = workload_at(i);
		fprintf(f, "  %-20s %s\n", w->name, w->description);
		for (const struct option_spec *o = w->params; o && o->name; o++)
			option_print(f, o, 4, NULL);
	}
	fprintf(f, "\n"
		   "Exit status: 0 success, 1 a check failed, 2 usage error, 3 the machine cannot\n"
		   "provide what was asked (page size, memory), 4 output could not be written,\n"
		   "130 interrupted. See tlbprof(1).\n");
}

/* The parser of measuring: its own options, then every workload's (any of them may be given); o NULL: names only. */
static void measure_parser(struct option_parser *p, struct measure_options *o)
{
	size_t t = 0;

	*p = (struct option_parser){ .usage = measure_usage };
	p->tables[t++] = (struct option_table){ measure_specs, o };
	for (size_t i = 0; workload_at(i) && t + 1 < OPTION_MAX_TABLES; i++)
		if (workload_at(i)->params)
			p->tables[t++] = (struct option_table){ workload_at(i)->params, o ? &o->plan : NULL };
}

bool command_measure_has_option(const char *name, size_t n)
{
	struct option_parser p;

	measure_parser(&p, NULL);
	for (size_t t = 0; t < OPTION_MAX_TABLES && p.tables[t].specs; t++)
		for (const struct option_spec *o = p.tables[t].specs; o->name; o++)
			if (strlen(o->name) == n && memcmp(o->name, name, n) == 0)
				return true;
	return false;
}

/* The chosen workload's own defaults, where the command line did not give the option. */
static enum option_result workload_defaults(const struct option_parser *p, struct measure_options *o, char *msg,
					    size_t len)
{
	for (const struct workload_default *d = o->plan.workload->defaults; d && d->option; d++)
		if (d->value && !option_given(p, d->option) && option_apply(p, d->option, d->value, msg, len) != OPTION_OK)
			return option_error(msg, len, "internal error: bad default of --%s for %s", d->option,
					    o->plan.workload->name);
	return OPTION_OK;
}

static enum option_result measure_parse(int argc, char **argv, void *options, char *msg, size_t len)
{
	struct measure_options *o = options;
	struct option_parser p;
	enum option_result r;

	measure_parser(&p, o);
	o->plan.cpu = -1;
	if ((r = option_parse(&p, argc, argv, msg, len)) != OPTION_OK)
		return r;
	if (p.n_operands > 0)
		return option_error(msg, len, "unexpected argument '%s' (see tlbprof --help)", p.operands[0]);
	if (o->is_child)
		o->plan.child = &o->child;
	if ((r = workload_defaults(&p, o, msg, len)) != OPTION_OK)
		return r;
	if (o->plan.workload->validate && o->plan.workload->validate(&o->plan, msg, len) != 0)
		return OPTION_USAGE;
	if (o->plan.n_layouts > 1 && o->plan.workload->expand)
		return option_error(msg, len, "--layout '%s,%s': two layouts run side by side only in the chase, not in %s",
				    layout_name(o->plan.layouts[0]), layout_name(o->plan.layouts[1]),
				    o->plan.workload->name);
	/*
	 * A child sends its results down the parent's pipe and writes none of the
	 * outputs its argv names (the parent's, with --quiet added): the parent
	 * checked them, and -q with nothing named is its table, not nothing.
	 */
	if (o->is_child)
		return OPTION_OK;
	return cli_check_outputs(&o->out, msg, len);
}

static int exit_status(const struct run_results *rr, const struct analysis *a, enum fail_on fail_on)
{
	if (rr->interrupted)
		return EXIT_INTERRUPTED;
	for (size_t i = 0; i < rr->n; i++)
		if (rr->phases[i].status == PHASE_FAILED && rr->phases[i].unavailable)
			return EXIT_UNAVAILABLE;
	return analysis_fails(a->verdict, fail_on) ? EXIT_CHECK_FAILED : EXIT_OK;
}

/*
 * Whether dTLB misses can be counted here: open the set once (disabled,
 * nothing counted) and look at the status. Decides the automatic controls.
 */
static bool tlb_counters_open(struct counter_set *cs)
{
	bool ok = false;

	if (!cs)
		return false;
	counter_set_open(cs);
	for (size_t i = 0; i < counter_set_size(cs); i++) {
		const struct counter_info *ci = counter_set_info(cs, i);
		if (ci->metric == METRIC_DTLB_LOAD_MISSES && counter_counting(ci))
			ok = true;
	}
	counter_set_close(cs);
	return ok;
}

/*
 * A child process (--internal-child): run one phase of the same plan for the
 * parent and report on the pipe it was given. Prints nothing.
 */
static int run_child(const struct measure_options *o, const struct command_context *ctx)
{
	struct counter_set *counters = NULL;
	struct environment env;
	struct plan plan = { 0 };
	char msg[512];
	int rc;

	if (counter_set_new(&counters, command_events_dir(o->events_dir), NULL, msg, sizeof(msg)) != 0)
		counters = NULL;
	environment_collect(&env);
	struct plan_context pctx = { .current_cpu = sched_getcpu(), .tlb = environment_expected_tlb(&env) };
	struct run_context rctx = { .counters = counters, .stop = ctx->stop };
	rc = plan_build(&o->plan, &pctx, &plan) != 0 ? -ENOMEM : runner_run_child(&plan, &o->child, &rctx);
	plan_free(&plan);
	counter_set_delete(counters);
	return rc ? EXIT_UNAVAILABLE : EXIT_OK;
}

/* The --size a phase stands for: a packed control maps its own (larger) region for a measured size. */
static uint64_t requested_size(const struct phase_spec *ph)
{
	return ph->controls_size_bytes ? ph->controls_size_bytes : ph->size_bytes;
}

/*
 * Refuse up front a working set the machine cannot hold: never run into the
 * OOM killer. MemAvailable bounds the machine, and the tightest memory
 * limit of tlbprof's cgroups (a container, a CI job) bounds what it may use:
 * the region plus a margin must fit the room that limit leaves.
 */
/* The --size item as the user typed it for a phase's working set (tlbprof's spelling if it was not typed). */
static const char *size_as_typed(const struct measure_options *o, uint64_t bytes, char *buf, size_t len)
{
	for (size_t i = 0; i < o->plan.n_sizes; i++)
		if (o->plan.sizes_bytes[i] == bytes && *o->sizes_text[i])
			return o->sizes_text[i];
	return format_size(bytes, buf, len);
}

static int check_memory(const struct plan *plan, const struct measure_options *o)
{
	uint64_t avail = region_mem_available();
	struct cgroup_memory cg;
	char msg[2048], a[SIZE_TEXT], b[SIZE_TEXT], c[SIZE_TEXT], d[SIZE_TEXT], e[SIZE_TEXT], f[SIZE_TEXT];

	if (cgroup_memory_read(&cg) != 0)
		cg.limited = false;
	for (size_t i = 0; i < plan->n; i++) {
		const struct phase_spec *ph = &plan->phases[i];
		if (ph->page.kind == PAGE_HUGETLB)
			continue;	/* the hugetlb pool is neither MemAvailable nor the memory cgroup's */
		const char *typed = size_as_typed(o, requested_size(ph), a, sizeof(a));
		if (avail && ph->size_bytes > avail) {
			snprintf(msg, sizeof(msg), "--size '%s': %s needs %s but MemAvailable is %s; nothing was run", typed,
				 ph->name, format_bytes(ph->size_bytes, b, sizeof(b)), format_bytes(avail >> 20 << 20, c, sizeof(c)));
			report_error(msg);
			return EXIT_UNAVAILABLE;
		}
		uint64_t margin = cgroup_margin_bytes(ph->size_bytes);
		if (cg.limited && (ph->size_bytes > cg.room_bytes || cg.room_bytes - ph->size_bytes < margin)) {
			snprintf(msg, sizeof(msg),
				 "--size '%s': %s needs %s and %s for tlbprof, but the memory cgroup %s allows %s more "
				 "(%s %s, %s in use); nothing was run",
				 typed, ph->name, format_bytes(ph->size_bytes, b, sizeof(b)),
				 format_bytes(margin >> 20 << 20, c, sizeof(c)),
				 cg.dir, format_bytes(cg.room_bytes >> 20 << 20, d, sizeof(d)), cg.file,
				 format_bytes(cg.limit_bytes >> 20 << 20, e, sizeof(e)),
				 format_bytes(cg.usage_bytes >> 20 << 20, f, sizeof(f)));
			report_error(msg);
			return EXIT_UNAVAILABLE;
		}
	}
	return EXIT_OK;
}

/* Run the plan with the progress line on a terminal (a log or a pipe gets nothing), then analyse it. */
static int measure_plan(const struct measure_options *o, const struct command_context *ctx, struct measuring *m,
			const struct plan *plan, struct run_results *results, struct analysis *analysis)
{
	struct report_progress progress = { 0 };
	bool show_progress = !o->out.quiet && isatty(STDERR_FILENO);

	if (show_progress)
		report_progress_start(&progress, stderr);
	struct run_context rctx = {
		.clock = &m->clock,
		.counters = m->counters,
		.stop = ctx->stop,
		.progress = show_progress ? report_progress_phase : NULL,
		.progress_tick = show_progress ? report_progress_tick : NULL,
		.progress_arg = &progress,
		.argc = ctx->argc,
		.argv = ctx->argv,
	};
	command_host_before(m);
	int rc = runner_run(plan, &rctx, results);
	command_host_after(m);
	if (rc != 0 || analysis_run(results->phases, results->n, &m->env, &m->clock, analysis) != 0) {
		report_error("out of memory");
		return EXIT_UNAVAILABLE;
	}
	return EXIT_OK;
}

static int measure_run(const void *options, const struct command_context *ctx)
{
	const struct measure_options *o = options;
	struct measuring m;
	struct plan plan = { 0 };
	struct run_results results = { 0 };
	struct analysis analysis = { 0 };
	int status;

	if (o->is_child)
		return run_child(o, ctx);
	if ((status = command_measuring_setup(&m, o->events_dir, &o->events, o->plan.cpu)) != 0)
		return status;
	struct plan_context pctx = {
		.with_controls = o->controls == CONTROLS_ALWAYS ||
				 (o->controls == CONTROLS_AUTO && !tlb_counters_open(m.counters)),
		.current_cpu = sched_getcpu(),
		.tlb = environment_expected_tlb(&m.env),
	};
	if (plan_build(&o->plan, &pctx, &plan) != 0) {
		report_error("out of memory");
		status = EXIT_UNAVAILABLE;
		goto out;
	}
	if ((status = check_memory(&plan, o)) != EXIT_OK ||
	    (status = measure_plan(o, ctx, &m, &plan, &results, &analysis)) != EXIT_OK)
		goto out;
	struct report_input in = {
		.argc = ctx->argc,
		.argv = ctx->argv,
		.workload = o->plan.workload,
		.fail_on = (enum fail_on)o->fail_on,
		.env = &m.env,
		.clock = &m.clock,
		.counters = m.counters,
		.results = &results,
		.analysis = &analysis,
		.pmu_name = m.counters ? counter_set_pmu_name(m.counters) : "none",
	};
	status = exit_status(&results, &analysis, (enum fail_on)o->fail_on);
	int emitted = report_emit(&in, &o->out);
	if (emitted != 0)
		status = emitted == -EINTR ? EXIT_INTERRUPTED : EXIT_OUTPUT;
out:
	analysis_free(&analysis);
	run_results_free(&results);
	plan_free(&plan);
	command_measuring_free(&m);
	return status;
}

const struct command command_measure = {
	.name = NULL,
	.summary = "measure with a workload",
	.signals = COMMAND_SIGNALS_STOP,
	.specs = measure_specs,
	.options_size = sizeof(struct measure_options),
	.usage = measure_usage,
	.parse = measure_parse,
	.run = measure_run,
};
