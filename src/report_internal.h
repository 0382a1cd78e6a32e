/* SPDX-License-Identifier: MIT */
/* Shared between the report module's files (src/report*.c) only: JSON building blocks and the atomic writer. */
#pragma once

#include <jansson.h>

#include "counters.h"
#include "environment.h"
#include "timing.h"

/*
 * The report's "environment" object (cpu, tlb, tlb_reach, kernel, thp,
 * cpufreq, hugepages, perf_event_paranoid, hypervisor, clock, build).
 * Returns a new reference.
 */
json_t *report_environment_json(const struct environment *env, const struct timing_calibration *clk,
				const char *pmu_name);

/* One counter as the report lists it: name, metric, event, source, hardware, type, config ("0x..."), status, reason. */
json_t *report_counter_info_json(const struct counter_info *ci);

/*
 * Write root as indented JSON to path ("-": stdout): a regular file through a
 * temporary file in the same directory and a rename, a device or FIFO in
 * place. Does not take root. Returns 0 or -errno with a one-line reason
 * naming --json and path in err.
 */
int report_json_to_file(json_t *root, const char *path, char *err, size_t err_len);
