/* SPDX-License-Identifier: MIT */
/* Private to the runner (runner.c, rerun.c): one allocation of a phase, and the second pass built on it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "measure/runner.h"

/*
 * One allocation a of phase ph into res: a fresh region and a fresh chain
 * (seeded per allocation), verified, warmed up, then sampled (extend: more
 * samples until precise, up to cap). The first allocation's prefault is
 * counted with cs and its self-checks are reported; every allocation's
 * self-checks and backing must pass. Returns false when the phase must stop.
 */
bool runner_allocation(const struct phase_spec *ph, const struct run_context *ctx, struct phase_result *res,
		       struct counter_set *cs, unsigned a, bool extend, size_t cap, uint64_t phase_t0);

/*
 * After every phase of the run: the second pass of res (started_ns: when
 * its first began) into res->rerun_ns, or res->rerun_why saying why there
 * is none; then res->precision_between and res->precision_claimed.
 */
void runner_rerun_phase(const struct run_context *ctx, struct phase_result *res, uint64_t started_ns);
