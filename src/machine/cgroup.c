/* SPDX-License-Identifier: MIT */
/* The memory room tlbprof's cgroups leave (cgroup.h): pure parsers of /proc text, and the walk up the limit files. */
#include "machine/cgroup.h"

#include "machine/env_text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* From 2^62 up a limit is none: v1 writes "unlimited" as LONG_MAX rounded down to a page. */
#define CGROUP_NO_LIMIT (1ull << 62)

/* Copy the n bytes at s into out (len bytes, NUL-terminated). Returns 0, or -ENAMETOOLONG. */
static int copy_field(const char *s, size_t n, char *out, size_t len)
{
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

/* Whether the comma-separated list s (n bytes) holds word. */
static bool list_has(const char *s, size_t n, const char *word)
{
	size_t w = strlen(word);

	for (const char *p = s, *end = s + n; p < end;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t k = comma ? (size_t)(comma - p) : (size_t)(end - p);
		if (k == w && memcmp(p, word, w) == 0)
			return true;
		p += k + 1;
	}
	return false;
}

int cgroup_parse_self(const char *text, bool v2, char *path, size_t len)
{
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
		const char *c1 = memchr(line, ':', (size_t)(end - line));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
		if (c2) {
			bool ours = v2 ? (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1)
				       : list_has(c1 + 1, (size_t)(c2 - c1 - 1), "memory");
			if (ours)
				return copy_field(c2 + 1, (size_t)(end - c2 - 1), path, len);
		}
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

/* The n-th space-separated field of line (from 0) in *f and its length; false when the line is shorter. */
static bool field(const char *line, const char *end, int n, const char **f, size_t *flen)
{
	const char *p = line;

	for (int i = 0;; i++) {
		while (p < end && *p == ' ')
			p++;
		const char *q = p;
		while (q < end && *q != ' ')
			q++;
		if (p == q)
			return false;
		if (i == n) {
			*f = p;
			*flen = (size_t)(q - p);
			return true;
		}
		p = q;
	}
}

int cgroup_parse_mount(const char *text, bool v2, char *root, size_t root_len, char *mnt, size_t mnt_len)
{
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
		/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS" */
		const char *dash = NULL;
		for (const char *p = line; p + 2 < end && !dash; p++)
			if (p[0] == ' ' && p[1] == '-' && p[2] == ' ')
				dash = p + 1;
		const char *type, *opts, *r, *m;
		size_t type_len, opts_len, r_len, m_len;
		if (dash && field(dash + 1, end, 0, &type, &type_len) && field(dash + 1, end, 2, &opts, &opts_len) &&
		    field(line, dash, 3, &r, &r_len) && field(line, dash, 4, &m, &m_len)) {
			bool ours = v2 ? type_len == 7 && memcmp(type, "cgroup2", 7) == 0
				       : type_len == 6 && memcmp(type, "cgroup", 6) == 0 && list_has(opts, opts_len, "memory");
			if (ours)
				return copy_field(r, r_len, root, root_len) ? -ENAMETOOLONG : copy_field(m, m_len, mnt, mnt_len);
		}
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

int cgroup_parse_limit(const char *text, uint64_t *bytes)
{
	char *end;

	if (strncmp(text, "max", 3) == 0 && (text[3] == '\0' || text[3] == '\n')) {
		*bytes = UINT64_MAX;
		return 0;
	}
	if (*text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || (*end != '\0' && *end != '\n'))
		return -EINVAL;
	*bytes = v >= CGROUP_NO_LIMIT ? UINT64_MAX : (uint64_t)v;
	return 0;
}

/* dir's limit (and usage) as one candidate for *out: kept when its room is the least so far. */
static void consider(const char *dir, bool v2, struct cgroup_memory *out)
{
	const char *limit_name = v2 ? "memory.max" : "memory.limit_in_bytes";
	char path[1200], text[64] = "";
	uint64_t limit, usage = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, limit_name);
	if (env_read_text(path, text, sizeof(text)) != 0 || cgroup_parse_limit(text, &limit) != 0 || limit == UINT64_MAX)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, v2 ? "memory.current" : "memory.usage_in_bytes");
	if (env_read_text(path, text, sizeof(text)) != 0 || cgroup_parse_limit(text, &usage) != 0 || usage == UINT64_MAX)
		usage = 0;
	uint64_t room = usage < limit ? limit - usage : 0;
	if (out->limited && room >= out->room_bytes)
		return;
	out->limited = true;
	out->limit_bytes = limit;
	out->usage_bytes = usage;
	out->room_bytes = room;
	snprintf(out->dir, sizeof(out->dir), "%s", dir);
	snprintf(out->file, sizeof(out->file), "%s", limit_name);
}

/* One hierarchy: from the process's cgroup up to the mounted root, every level's limit. */
static void walk(const char *self, const char *mountinfo, bool v2, struct cgroup_memory *out)
{
	char path[512], root[512], mnt[512], dir[1100];

	if (cgroup_parse_self(self, v2, path, sizeof(path)) != 0 ||
	    cgroup_parse_mount(mountinfo, v2, root, sizeof(root), mnt, sizeof(mnt)) != 0)
		return;
	/* The mount shows the hierarchy from root down (a cgroup namespace or a container's bind mount). */
	size_t rn = strcmp(root, "/") == 0 ? 0 : strlen(root);
	if (strncmp(path, root, rn) != 0 || (path[rn] != '/' && path[rn] != '\0'))
		return;
	const char *rel = path + rn;
	size_t mn = strlen(mnt);
	snprintf(dir, sizeof(dir), "%s%s", mnt, strcmp(rel, "/") == 0 ? "" : rel);
	for (;;) {
		consider(dir, v2, out);
		char *slash = strrchr(dir, '/');
		if (strlen(dir) <= mn || !slash || (size_t)(slash - dir) < mn)
			break;
		*slash = '\0';
	}
}

int cgroup_memory_read(struct cgroup_memory *out)
{
	enum { SELF_BYTES = 4096, MOUNTINFO_BYTES = 256 << 10 };	/* mountinfo is long on a busy host */
	char *self = calloc(1, SELF_BYTES), *mountinfo = calloc(1, MOUNTINFO_BYTES);
	int rc = self && mountinfo ? 0 : -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (!rc && (rc = env_read_text("/proc/self/cgroup", self, SELF_BYTES)) == 0 &&
	    (rc = env_read_text("/proc/self/mountinfo", mountinfo, MOUNTINFO_BYTES)) == 0) {
		walk(self, mountinfo, true, out);
		walk(self, mountinfo, false, out);
	}
	free(self);
	free(mountinfo);
	return rc;
}
