/* SPDX-License-Identifier: MIT */
/* tlbprof events: how every metric resolves to an event and an encoding, on this CPU or a forced PMU. */
#include <stdio.h>
#include <string.h>

#include "cmd/commands.h"
#include "pmu/counters.h"
#include "report/report.h"

int cmd_events(const struct tlbprof_config *cfg)
{
	struct counter_set *counters = NULL;
	const char *dir = tlbprof_events_dir(cfg);
	char msg[768], err[512];

	/* Before the first counter_set_new(): libpfm4 reads its environment once. */
	if (cfg->pmu && counters_force_pmu(cfg->pmu) != 0) {
		report_error("out of memory");
		return EXIT_UNAVAILABLE;
	}
	if (counter_set_new(&counters, dir, NULL, err, sizeof(err)) != 0) {
		if (cfg->events_dir)
			snprintf(msg, sizeof(msg), "--events-dir '%s': %s", cfg->events_dir, err);
		else if (cfg->pmu)
			snprintf(msg, sizeof(msg), "--pmu '%s': %s", cfg->pmu, err);
		else
			snprintf(msg, sizeof(msg), "%s", err);
		report_error(msg);
		return cfg->events_dir ? EXIT_USAGE : EXIT_UNAVAILABLE;
	}
	/* A map whose name libpfm4 does not know as a PMU: libpfm4 then finds no core PMU at all. */
	if (cfg->pmu && strcmp(counter_set_pmu_name(counters), cfg->pmu) != 0) {
		snprintf(msg, sizeof(msg), "--pmu '%s': libpfm4 knows no PMU of that name (it found '%s')", cfg->pmu,
			 counter_set_pmu_name(counters));
		report_error(msg);
		counter_set_delete(counters);
		return EXIT_USAGE;
	}
	/* On this machine, open once (disabled, nothing counted) so the status says what opens here. */
	if (!cfg->pmu) {
		counter_set_open(counters);
		counter_set_close(counters);
	}
	struct report_events_input in = {
		.counters = counters,
		.events_dir = dir ? dir : counters_default_events_dir(),
		.forced = cfg->pmu != NULL,
		.argc = cfg->argc,
		.argv = cfg->argv,
	};
	int status = report_events_emit(&in, cfg) == 0 ? EXIT_OK : EXIT_OUTPUT;
	counter_set_delete(counters);
	return status;
}
