/* SPDX-License-Identifier: MIT */
/*
 * The memory limit of tlbprof's cgroups (v2 memory.max, v1
 * memory.limit_in_bytes) along its own cgroup path: the room left under the
 * tightest one, so a working set that would be OOM-killed is refused up
 * front. The parsers are pure (unit-tested); cgroup_memory_read() reads
 * /proc/self/cgroup, /proc/self/mountinfo and the limit files.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What tlbprof itself needs beside a region of `region` bytes under a memory
 * limit: its binary, libraries, counters and report (a few MiB), and the
 * page tables of the region (8 bytes per 4 KiB page, 1/512; twice that).
 */
static inline uint64_t cgroup_margin_bytes(uint64_t region)
{
	return (32ull << 20) + region / 256;
}

/* The tightest memory limit over tlbprof's cgroup and its ancestors. */
struct cgroup_memory {
	bool limited;		/* a limit applies; the fields below say which */
	uint64_t limit_bytes;	/* memory.max / memory.limit_in_bytes */
	uint64_t usage_bytes;	/* memory.current / memory.usage_in_bytes, when read */
	uint64_t room_bytes;	/* limit - usage: what one more allocation may take */
	char dir[1100];		/* the cgroup directory of that limit */
	char file[32];		/* "memory.max" or "memory.limit_in_bytes" */
};

/*
 * The process's cgroup path from /proc/self/cgroup text: v2's "0::PATH", or
 * v1's line whose controllers include "memory". Copies it into path (len
 * bytes). Returns 0, or -ENOENT when there is no such line.
 */
int cgroup_parse_self(const char *text, bool v2, char *path, size_t len);

/*
 * From /proc/self/mountinfo text, the mount of the cgroup2 hierarchy (v2) or
 * of the v1 hierarchy with the memory controller: the hierarchy's path that
 * is mounted (root) and where (mnt). Returns 0, or -ENOENT.
 */
int cgroup_parse_mount(const char *text, bool v2, char *root, size_t root_len, char *mnt, size_t mnt_len);

/*
 * A limit file's value: a byte count, or "max" (v2: none). v1 writes "no
 * limit" as a page-rounded LONG_MAX; anything from 2^62 up counts as none.
 * Returns 0 with *bytes (UINT64_MAX for none), or -EINVAL.
 */
int cgroup_parse_limit(const char *text, uint64_t *bytes);

/* Read the tightest limit of both hierarchies into *out (out->limited false when none). Returns 0 or -errno. */
int cgroup_memory_read(struct cgroup_memory *out);
