/* SPDX-License-Identifier: MIT */
/* What the report writers (src/report*.c) share; not for other modules. */
#pragma once

#include <jansson.h>
#include <stddef.h>

#include "phase.h"
#include "report.h"

/* A short label of the verified backing: "base 4K", "thp 100% 2M", "-" when unknown. */
void report_backing_label(const struct phase_result *r, char *buf, size_t len);

/* The native tlbprof.report/1 document (a re-analysis keeps every field it read); NULL on OOM. Caller decrefs. */
json_t *report_json_build(const struct report_input *in);
