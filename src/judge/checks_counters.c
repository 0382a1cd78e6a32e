/* SPDX-License-Identifier: MIT */
/* Checks on the performance counters: multiplexing and whether the PMU could be used at all. */
#include <stdio.h>
#include <string.h>

#include "judge/analysis_internal.h"

void checks_multiplexed_counters(const struct analysis_check_def *def, const struct analysis_input *in,
				 struct analysis *a)
{
	const struct phase_result *res = in->results;
	size_t n = in->n;
	char names[256] = "";
	size_t count = 0;

	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < res[i].n_counters; j++) {
			const struct counter_info *ci = &res[i].counter_info[j];
			if (ci->status != COUNTER_MULTIPLEXED)
				continue;
			if (!strstr(names, ci->name) && strlen(names) + strlen(ci->name) + 3 < sizeof(names))
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", *names ? ", " : "",
					 ci->name);
			count++;
		}
	}
	struct analysis_check *c;
	if (count)
		c = checks_add(a, def, CHECK_WARN,
			       "%s counted only part of the time and were scaled by time_enabled/time_running: the "
			       "values are estimates; request fewer events or pin to a CPU", names);
	else
		c = checks_add(a, def, CHECK_PASS, "no counter was multiplexed");
	checks_evidence(c, "multiplexed_readings", (double)count);
}

void checks_pmu_unavailable(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct phase_result *res = in->results;
	size_t n = in->n;
	size_t hw = 0, hw_ok = 0, busy = 0;

	for (size_t i = 0; i < n; i++) {
		if (!res[i].n_counters)
			continue;
		for (size_t j = 0; j < res[i].n_counters; j++) {
			if (!res[i].counter_info[j].hardware)
				continue;
			hw++;
			hw_ok += res[i].counter_info[j].status == COUNTER_OK ||
				 res[i].counter_info[j].status == COUNTER_MULTIPLEXED;
			busy += counter_not_counted(&res[i].counter_info[j]);
		}
		break;	/* the set is the same for every phase: one is enough */
	}
	struct analysis_check *c;
	if (!hw)
		c = checks_add(a, def, CHECK_SKIP, "no hardware event was requested");
	else if (busy && hw_ok < hw)
		c = checks_add(a, def, CHECK_WARN,
			       "%zu of %zu hardware events opened but were never counted: the PMU's counters were held by "
			       "the NMI watchdog or another perf user, so %s; free them (sysctl kernel.nmi_watchdog=0, or "
			       "stop the other perf session) and rerun", busy, hw,
			       hw_ok ? "part of the attribution is missing" : "comparisons fell back to the differential method");
	else if (!hw_ok)
		c = checks_add(a, def, CHECK_PASS,
			       "informational: no hardware event could be opened (no PMU visible, as in most cloud VMs): "
			       "cycles come from the calibrated core clock and comparisons use the differential method");
	else
		c = checks_add(a, def, CHECK_PASS, "%zu of %zu hardware events counted", hw_ok, hw);
	checks_evidence(c, "hardware_events", (double)hw);
	checks_evidence(c, "hardware_events_ok", (double)hw_ok);
}
