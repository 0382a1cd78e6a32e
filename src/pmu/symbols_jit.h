/* SPDX-License-Identifier: MIT */
/*
 * The names a JIT gives the code it compiles into anonymous memory: perf's map file, /tmp/perf-PID.map, one line
 * "START SIZE NAME" (hex, hex, the rest) per function, which node --perf-basic-prof and the JVM's
 * -XX:+DumpPerfMapAtExit (or perf-map-agent) write.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct symbols_jit_entry {
	uint64_t start, end;		/* [start, end) */
	char *name;			/* owned */
	size_t line;			/* its line in the file, from 1: the later of two that overlap is the newer code */
};

struct symbols_jit_map {
	bool tried;			/* loaded, or found missing or refused */
	struct symbols_jit_entry *items;	/* sorted by start, then line */
	size_t count;
	size_t bad_lines;		/* lines that were not "START SIZE NAME" */
	uint64_t longest;		/* the largest SIZE: no entry starting further below an address holds it */
};

/* Parse a map file's text into m (appending). Pure. Returns 0, or -ENOMEM. */
int symbols_jit_parse(struct symbols_jit_map *m, const char *text, size_t len);

/*
 * /tmp/perf-PID.map into m, once (m->tried): a regular file, not a link, owned by this user or root, as perf
 * requires before it trusts one, and written at since_s (CLOCK_REALTIME seconds) or later: a map older is an
 * earlier process's whose PID this one reuses (JITs leave their maps behind). Returns 0 (m empty when there is
 * none), or -errno of a read that failed.
 */
int symbols_jit_load(struct symbols_jit_map *m, pid_t pid, int64_t since_s);

/* The entry holding addr, the newest of those that do (a JIT reuses freed code memory); NULL when none. */
const struct symbols_jit_entry *symbols_jit_find(const struct symbols_jit_map *m, uint64_t addr);

void symbols_jit_free(struct symbols_jit_map *m);

/*
 * Whether a mapping's name is memory a JIT compiles code into: anonymous ("" or "[anon]", "[anon:NAME]", perf's
 * "//anon"), or a memfd it maps twice, writable and executable ("/memfd:doublemapper (deleted)", .NET's).
 */
bool symbols_jit_memory(const char *object);
