/* SPDX-License-Identifier: MIT */
/* The hot loop's machine code (Capstone): the marks an unoptimised build leaves, where the ELF records no level. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "pmu/sample.h"

/* A function's first bytes read for its prologue; the loop is decoded from the function's start. */
#define CODE_MAX_BYTES (64u * 1024u)

/*
 * Decode x86-64 code (bytes[0..len-1], at ELF address addr, the hot
 * function's start) and describe the instructions that start inside
 * [lo, hi): the frame-pointer prologue, the loads and stores of stack slots
 * and the slots both stored and loaded. Then the loop's body, from the
 * target of its jump back (which may lie in bytes past hi) to that jump, and
 * what its loads wait on: each chained (its address from an earlier pass's
 * load) or independent, followed through registers and the loop's own
 * variables in memory over a few passes (body_*, loads, chained_*, calls).
 * Pure. Fills out (out->decoded set) and returns 0; -ENOTSUP in a build
 * without Capstone, -EINVAL when nothing in [lo, hi) decodes. out->error
 * says why on failure.
 */
int code_describe(const uint8_t *bytes, size_t len, uint64_t addr, uint64_t lo, uint64_t hi, struct sample_code *out);

/*
 * Read the executable at path from function_start (its ELF virtual address)
 * to hi through its PT_LOAD headers and describe the loop [lo, hi) with
 * code_describe(). Returns 0 or -errno; out->error says why on failure.
 */
int code_read(const char *path, uint64_t function_start, uint64_t lo, uint64_t hi, struct sample_code *out);
