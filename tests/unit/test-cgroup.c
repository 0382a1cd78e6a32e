/* SPDX-License-Identifier: MIT */
/* Golden tables for the cgroup parsers: /proc/self/cgroup, /proc/self/mountinfo and the limit files. */
#include <errno.h>
#include <stdint.h>

#include "check.h"
#include "machine/cgroup.h"

/* A hybrid host (v1 memory, v2 unified) and a pure v2 container with a cgroup namespace. */
static const char hybrid_self[] = "9:name=systemd:/\n4:memory:/ci/job7\n1:cpu,cpuacct:/\n0::/\n";
static const char hybrid_mounts[] =
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
	"35 31 0:32 /ci /sys/fs/cgroup/memory rw,relatime shared:12 - cgroup cgroup rw,memory\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
static const char v2_self[] = "0::/user.slice/session-3.scope\n";
static const char v2_mounts[] = "26 22 0:23 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";

static const struct {
	int line;
	const char *self;
	bool v2;
	int rc;
	const char *path;
} selves[] = {
	{ __LINE__, hybrid_self, false, 0, "/ci/job7" },
	{ __LINE__, hybrid_self, true, 0, "/" },
	{ __LINE__, v2_self, true, 0, "/user.slice/session-3.scope" },
	{ __LINE__, v2_self, false, -ENOENT, "" },
	{ __LINE__, "4:memoryx:/a\n", false, -ENOENT, "" },	/* a controller whose name only starts with memory */
	{ __LINE__, "4:cpu,memory:/a", false, 0, "/a" },	/* no final newline */
	{ __LINE__, "garbage\n::\n", true, -ENOENT, "" },
	{ __LINE__, "", true, -ENOENT, "" },
};

static const struct {
	int line;
	const char *mounts;
	bool v2;
	int rc;
	const char *root, *mnt;
} mounts[] = {
	{ __LINE__, hybrid_mounts, false, 0, "/ci", "/sys/fs/cgroup/memory" },
	{ __LINE__, hybrid_mounts, true, 0, "/", "/sys/fs/cgroup/unified" },
	{ __LINE__, v2_mounts, true, 0, "/", "/sys/fs/cgroup" },
	{ __LINE__, v2_mounts, false, -ENOENT, "", "" },
	{ __LINE__, "1 2 0:1 / /x rw - cgroup cgroup rw,cpu\n", false, -ENOENT, "", "" },
	{ __LINE__, "1 2 0:1 / /x rw\n", true, -ENOENT, "", "" },	/* no " - " separator */
};

static const struct {
	int line;
	const char *text;
	int rc;
	uint64_t bytes;
} limits[] = {
	{ __LINE__, "max\n", 0, UINT64_MAX },
	{ __LINE__, "536870912\n", 0, 536870912 },
	{ __LINE__, "9223372036854771712\n", 0, UINT64_MAX },	/* v1's "no limit" */
	{ __LINE__, "0", 0, 0 },
	{ __LINE__, "", -EINVAL, 0 },
	{ __LINE__, "-1\n", -EINVAL, 0 },
	{ __LINE__, "12abc\n", -EINVAL, 0 },
	{ __LINE__, "99999999999999999999999\n", -EINVAL, 0 },
	{ __LINE__, "maximum\n", -EINVAL, 0 },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(selves) / sizeof(selves[0]); i++) {
		char path[64] = "";
		int rc = cgroup_parse_self(selves[i].self, selves[i].v2, path, sizeof(path));
		CHECK_ROW(selves[i].line, rc == selves[i].rc && (rc || strcmp(path, selves[i].path) == 0), "rc %d path %s",
			  rc, path);
	}
	for (size_t i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
		char root[64] = "", mnt[64] = "";
		int rc = cgroup_parse_mount(mounts[i].mounts, mounts[i].v2, root, sizeof(root), mnt, sizeof(mnt));
		CHECK_ROW(mounts[i].line, rc == mounts[i].rc && (rc || (strcmp(root, mounts[i].root) == 0 &&
							     strcmp(mnt, mounts[i].mnt) == 0)),
			  "rc %d root %s mnt %s", rc, root, mnt);
	}
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		uint64_t v = 42;
		int rc = cgroup_parse_limit(limits[i].text, &v);
		CHECK_ROW(limits[i].line, rc == limits[i].rc && (rc || v == limits[i].bytes), "rc %d value %llu", rc,
			  (unsigned long long)v);
	}
	char small[4];
	CHECK(cgroup_parse_self(hybrid_self, false, small, sizeof(small)) == -ENAMETOOLONG, "a path longer than the buffer");
	struct cgroup_memory cg;
	CHECK(cgroup_memory_read(&cg) == 0, "this process's cgroups are readable");
	CHECK(!cg.limited || cg.room_bytes <= cg.limit_bytes, "room %llu within limit %llu",
	      (unsigned long long)cg.room_bytes, (unsigned long long)cg.limit_bytes);
	return check_finish();
}
