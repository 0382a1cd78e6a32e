/* SPDX-License-Identifier: MIT */
/* The phase-marker protocol (tlbprof-marker/1) and perf stat's control commands: one line -> one message (pure). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

#define MARKER_LINE_MAX 512
#define MARKER_NAME_MAX 64

enum marker_type {
	MARKER_BEGIN,		/* phase begin NAME ... */
	MARKER_END,		/* phase end ... */
	MARKER_ENABLE,		/* perf stat --control: enable (a window named "enabled" begins) */
	MARKER_DISABLE,		/* perf stat --control: disable (the window ends) */
	MARKER_PING,		/* perf stat --control: ping (only acknowledged) */
};

/* One message, with what it declares; has_* says which optional keys were given. */
struct marker_msg {
	enum marker_type type;
	char name[MARKER_NAME_MAX];	/* begin: the phase name */
	bool has_accesses;
	uint64_t accesses;
	bool has_region;
	uint64_t region_addr, region_bytes;
	bool has_page;
	struct page_request page;	/* the page size the benchmark intends for its region */
	bool has_chain;
	uint64_t chain_addr;		/* first slot of a pointer chain */
	uint64_t slots;			/* slots in the chain, 0 when not declared */
	bool throughput;		/* kind=throughput: independent accesses, no latency floor */
	bool has_ns;
	uint64_t ns;			/* end: the wall time the benchmark measured between begin and end */
	uint64_t timings;		/* end: separately clocked intervals (0 when not declared) */
};

/*
 * Parse one line (without its newline; len bytes, not NUL-terminated) into
 * *out. Names are 1 to 63 of [A-Za-z0-9_.:/-]; numbers are decimal (ADDR
 * hexadecimal with 0x); a key may appear once; a region must have a length
 * above 0 and not wrap; a chain must lie inside the region when both are
 * given. Returns 0, or -EINVAL with a one-line reason in err (which names
 * the offending key or word).
 */
int marker_parse(const char *line, size_t len, struct marker_msg *out, char *err, size_t err_len);

/* Whether name is a valid phase name. */
bool marker_name_valid(const char *name);
