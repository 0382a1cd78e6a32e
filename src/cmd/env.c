/* SPDX-License-Identifier: MIT */
/* tlbprof env: collect what decides what this machine can measure, diagnose it, report it. Changes nothing. */
#include <stdio.h>
#include <string.h>

#include "cmd/commands.h"
#include "pmu/counters.h"
#include "machine/diagnose.h"
#include "machine/environment.h"
#include "report/report.h"
#include "machine/timing.h"

/* Long enough for a few ticks (USER_HZ is 100) on every CPU, short enough to wait for. */
#define STEAL_WINDOW_MS 200
/* The default --size of a measurement: the hugetlb pools are sized for it. */
#define DEFAULT_WORKING_SET_BYTES (256ull << 20)

int cmd_env(const struct tlbprof_config *cfg)
{
	struct environment env;
	struct timing_calibration clock;
	struct counter_set *counters = NULL;
	struct counter_info infos[METRIC_COUNT];
	struct env_steal steal;
	struct diagnosis diagnosis;
	char msg[768], cerr[512] = "";
	const char *dir = tlbprof_events_dir(cfg);
	size_t n_infos = 0;

	if (counter_set_new(&counters, dir, NULL, cerr, sizeof(cerr)) != 0) {
		/* A map the user named that does not parse is bad input; the installed one failing is a finding. */
		if (cfg->events_dir) {
			snprintf(msg, sizeof(msg), "--events-dir '%s': %s", cfg->events_dir, cerr);
			report_error(msg);
			return EXIT_USAGE;
		}
		counters = NULL;
	}
	environment_collect(&env);
	bool have_steal = environment_steal_sample(STEAL_WINDOW_MS, &steal) == 0;
	timing_calibrate(&clock);
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
		.argc = cfg->argc,
		.argv = cfg->argv,
	};
	int status = report_env_emit(&in, cfg) == 0 ? EXIT_OK : EXIT_OUTPUT;
	counter_set_delete(counters);
	return status;
}
