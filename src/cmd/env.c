/* SPDX-License-Identifier: MIT */
/* tlbprof env: collect what decides what this machine can measure, diagnose it, report it. Changes nothing. */
#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/command.h"
#include "cmd/options.h"
#include "cmd/common.h"
#include "machine/diagnose.h"
#include "machine/environment.h"
#include "machine/timing.h"
#include "measure/region.h"
#include "pmu/counters.h"
#include "report/report.h"

/* Long enough for a few ticks (USER_HZ is 100) on every CPU, short enough to wait for. */
#define STEAL_WINDOW_MS 200
/* The default --size of a measurement: the hugetlb pools are sized for it. */
#define DEFAULT_WORKING_SET_BYTES (256ull << 20)


static const struct option_spec env_specs[] = {
	CLI_OPTION_JSON(struct env_options, out, "write the findings as JSON (tlbprof.env/1) to FILE, or\nstdout with -"),
	CLI_OPTION_EVENTS_DIR(struct env_options, events_dir),
	CLI_OPTION_QUIET(struct env_options, out, "no text on stdout"),
	CLI_OPTION_HELP,
	{ 0 },
};

static void env_usage(FILE *f)
{
	fputs("Usage: tlbprof env [OPTIONS]\n"
	      "Say what this machine can measure and why not: PMU and whether hardware events\n"
	      "open, perf_event_paranoid and capabilities, THP, hugetlb pools, hypervisor and\n"
	      "steal time, frequency scaling, CPUID TLB geometry; each problem with the\n"
	      "command that fixes it. Reads only: tlbprof never changes the system.\n"
	      "\n"
	      "Options:\n",
	      f);
	option_print_table(f, env_specs);
	fputs("\n"
	      "Exit status: 0 (a diagnosis, whatever it finds), 2 usage error, 4 output could\n"
	      "not be written. See tlbprof-env(1).\n",
	      f);
}

static enum option_result env_parse(int argc, char **argv, void *options, char *msg, size_t len)
{
	struct env_options *o = options;
	struct option_parser p = {
		.command = "env",
		.tables = { { env_specs, o } },
		.usage = env_usage,
		.measuring_has = command_measure_has_option,
	};
	enum option_result r = option_parse(&p, argc, argv, msg, len);

	if (r != OPTION_OK)
		return r;
	if (p.n_operands > 0)
		return option_error(msg, len, "env: unexpected argument '%s' (see tlbprof env --help)", p.operands[0]);
	return cli_check_json_output(&o->out, msg, len);
}

static int env_run(const void *options, const struct command_context *ctx)
{
	const struct env_options *o = options;
	struct environment env;
	struct timing_calibration clock;
	struct counter_set *counters = NULL;
	struct counter_info infos[METRIC_COUNT];
	struct env_steal steal;
	struct diagnosis diagnosis;
	char msg[768], cerr[512] = "";
	const char *dir = command_events_dir(o->events_dir);
	size_t n_infos = 0;

	environment_collect(&env);
	counters_set_core(env.core_name, env.core.masked, env.hypervisor);
	int sim = command_simulate_pmu();
	if (sim != EXIT_OK)
		return sim;
	if (counter_set_new(&counters, dir, NULL, cerr, sizeof(cerr)) != 0) {
		/* A map the user named that does not parse is bad input; the installed one failing is a finding. */
		if (o->events_dir) {
			snprintf(msg, sizeof(msg), "--events-dir '%s': %s", o->events_dir, cerr);
			report_error(msg);
			return EXIT_USAGE;
		}
		counters = NULL;
	}
	if (counters)
		snprintf(env.pmu_basis, sizeof(env.pmu_basis), "%s", counter_set_pmu_basis(counters));
	bool have_steal = environment_steal_sample(STEAL_WINDOW_MS, &steal) == 0;
	(void)region_first_access_probe(REGION_FIRST_ACCESS_PROBE_BYTES, &env.first_access);
	timing_calibrate(&clock);
	environment_identify_core(&env, clock.add_imm_per_cycle);
	/* Open once, disabled, and close: whether each event opens is the finding; nothing is counted. */
	if (counters) {
		counter_set_open(counters);
		counter_set_close(counters);
		for (size_t i = 0; i < counter_set_size(counters) && n_infos < METRIC_COUNT; i++)
			infos[n_infos++] = *counter_set_info(counters, i);
	}
	struct diagnose_input din = {
		.env = &env,
		.pmu_name = counters ? counter_set_pmu_name(counters) : NULL,
		.counters = counters ? infos : NULL,
		.n_counters = n_infos,
		.counters_error = counters ? NULL : cerr,
		.steal = have_steal ? &steal : NULL,
		.working_set_bytes = DEFAULT_WORKING_SET_BYTES,
	};
	diagnose_environment(&din, &diagnosis);

	struct report_env_input in = {
		.env = &env,
		.clock = &clock,
		.counters = counters,
		.counters_error = counters ? NULL : cerr,
		.events_dir = dir ? dir : counters_default_events_dir(),
		.steal = have_steal ? &steal : NULL,
		.diagnosis = &diagnosis,
		.argc = ctx->argc,
		.argv = ctx->argv,
	};
	int status = report_env_emit(&in, &o->out) == 0 ? EXIT_OK : EXIT_OUTPUT;
	counter_set_delete(counters);
	return status;
}

const struct command command_env = {
	.name = "env",
	.summary = "what this machine can measure, each problem with its fix",
	.specs = env_specs,
	.options_size = sizeof(struct env_options),
	.usage = env_usage,
	.parse = env_parse,
	.run = env_run,
};
