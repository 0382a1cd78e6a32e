/* SPDX-License-Identifier: MIT */
/* What the report writers (src/report*.c) share; not for other modules. */
#pragma once

#include <jansson.h>
#include <stddef.h>

#include "counters.h"
#include "environment.h"
#include "phase.h"
#include "report.h"
#include "timing.h"

/* A short label of the verified backing: "base 4K", "thp 100% 2M", "-" when unknown. */
void report_backing_label(const struct phase_result *r, char *buf, size_t len);

/* The native tlbprof.report/1 document (a re-analysis keeps every field it read); NULL on OOM. Caller decrefs. */
json_t *report_json_build(const struct report_input *in);

/*
 * The report's "environment" object (cpu, tlb, tlb_reach, kernel, thp,
 * cpufreq, hugepages, perf_event_paranoid, hypervisor, clock, build), also
 * the environment of tlbprof env. Returns a new reference.
 */
json_t *report_environment_json(const struct environment *env, const struct timing_calibration *clk,
				const char *pmu_name);

/* One counter as the report lists it: name, metric, event, source, hardware, type, config ("0x..."), status, reason. */
json_t *report_counter_info_json(const struct counter_info *ci);

/*
 * Write root to path ("-" = stdout) the way every tlbprof file is written
 * (write_file() in report.c: a temporary file renamed over path; a device
 * in place; a symlink's target replaced). root is not consumed. Returns 0 or
 * -errno with a one-line reason in err.
 */
int report_json_dump(json_t *root, const char *path, char *err, size_t err_len);
