/* SPDX-License-Identifier: MIT */
/* The pointer-chase chain: a random single cycle over all slots, built in place, and its self-checks. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"
#include "measure/phase.h"

/* Where the slots are: slot i lives in stride-sized cell i, at a line offset set by the layout. */
struct chain_geom {
	uint64_t stride_bytes;	/* power of two >= 8 */
	uint64_t slots;		/* >= 2 */
	enum chase_layout layout;
};

/*
 * Byte offset of slot i from the region base. Aligned: i * stride. Colored:
 * the slot's 64-byte line inside its cell is rotated, line = (i + i / L) mod L
 * with L = stride / 64 lines per cell, so that consecutive slots use every
 * line offset of a page (all L1/L2 set indices), and on 2 MiB pages, where
 * bits 12..20 of the address follow i, the pair (line, i mod 512) still
 * covers every set. Strides below 128 B have one line per cell: no rotation.
 */
uint64_t chain_slot_offset(const struct chain_geom *g, uint64_t i);

/* A small, fast, seedable generator (splitmix64). */
struct chain_rng {
	uint64_t state;
};
uint64_t chain_rng_next(struct chain_rng *r);
/* Uniform integer in [0, bound) (bound > 0), by multiply-shift. */
uint64_t chain_rng_below(struct chain_rng *r, uint64_t bound);

/*
 * Link the slots of region base into one random cycle (Sattolo's algorithm),
 * deterministic for a given seed, using the slots themselves to hold the
 * permutation while building: no auxiliary memory. The region must hold
 * chain_slot_offset(g, slots - 1) + 8 bytes. Returns the address of slot 0,
 * where walking starts.
 */
void *chain_build(void *base, const struct chain_geom *g, uint64_t seed);

/*
 * Self-check: walking `slots` steps from start returns to start and not
 * before, and every pointer followed stays inside [base, base + bytes) and
 * is 8-byte aligned. Fills *out (id "single_cycle").
 */
void chain_check_single_cycle(const void *base, uint64_t bytes, const void *start, uint64_t slots,
			      struct self_check *out);

/*
 * Self-check: the first 16 address differences along the chain are not all
 * equal (a constant stride is prefetchable and measures bandwidth, not
 * latency). Needs at least 17 slots to be meaningful; with fewer the check
 * is skipped. Pointers must already be known valid (run single_cycle first).
 * Fills *out (id "strides_not_constant").
 */
void chain_check_strides(const void *start, uint64_t slots, struct self_check *out);

/*
 * A foreign chain fails strides_not_constant when this many consecutive steps
 * anywhere along its cycle move by the same stride: the 16 the chase's own
 * check looks at, but over the whole walk, so a chain that turns sequential
 * after step 16 fails too (a random cycle of n slots repeats a stride with
 * probability about 1/n per step, never 16 times in a row).
 */
#define CHAIN_FOREIGN_STRIDE_RUN 16
/*
 * Without declared slots, the cycle must hold at least this many slots on at
 * least this share of the region's 4 KiB pages (or of its 2 MiB pages, for a
 * chain of one slot per huge page): bytes / the smallest gap
 * between visited slots says "2 slots" for 2 slots 32 MiB apart, and such a
 * chain measures one cache line, not the region. 1/16 still lets a stride
 * sweep to 64 KiB (one access per 16 pages) pass.
 */
#define CHAIN_FOREIGN_MIN_SLOTS 16
#define CHAIN_FOREIGN_MIN_PAGES (1.0 / 16)

/* What walking someone else's chain (tlbprof run, a copy of its region) found. */
struct chain_walk {
	uint64_t cycle_slots;		/* steps until the walk came back to its start; 0 when it did not */
	uint64_t expected_slots;	/* declared, else region bytes / the smallest gap between visited slots */
	double pages_covered;		/* share of the region's 4 KiB pages the walk touched */
	uint64_t span_bytes;		/* from the lowest visited slot to past the highest (8 bytes) */
	bool aligned;			/* every visited slot sits at the same line of its cell (stride = the
					 * smallest gap), as --layout aligned: its lines alias into few cache sets */
};

/*
 * Walk a pointer chain held in copy, a snapshot of the bytes bytes that live
 * at address base_addr in another process (its pointers hold addresses of
 * that process), from start_addr. Runs the same self-checks as the chase's
 * own chain: out[0] "single_cycle" (every pointer stays inside the region,
 * 8-byte aligned, the walk returns to start without revisiting another slot,
 * and the cycle holds the declared slots, or when none were declared at
 * least 99 % of bytes / the smallest distance between visited slots: a
 * chain of many small cycles covers only part of the working set it claims;
 * undeclared, also CHAIN_FOREIGN_MIN_SLOTS on CHAIN_FOREIGN_MIN_PAGES of the
 * pages) and out[1] "strides_not_constant" (no CHAIN_FOREIGN_STRIDE_RUN equal
 * strides in a row anywhere along the walk). Fills *walk. Returns 0, or -ENOMEM
 * (the visited bitmap, bytes / 64, could not be allocated).
 */
int chain_check_foreign(const void *copy, uint64_t base_addr, uint64_t bytes, uint64_t start_addr,
			uint64_t slots_declared, struct self_check out[2], struct chain_walk *walk);
