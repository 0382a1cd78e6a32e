// SPDX-License-Identifier: MIT
// The marker header compiles as C++ and, outside tlbprof run, every call is a no-op that returns 0. Where the
// shared channel is built (g++ defines _GNU_SOURCE), its vDSO clock agrees with libc's and the counter list parses.
#include <tlbprof/marker.h>

#include <cstdio>

#if TLBPROF_MARKER_HAVE_SHM
static int shm_parts()
{
	struct tlbprof_marker_conn c = {};
	int fails = 0;
	tlbprof_marker_vdso_find_(&c);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	// Under valgrind there is no vDSO (AT_SYSINFO_EHDR is 0): then nothing may be found, and the system call serves.
	bool vdso = getauxval(AT_SYSINFO_EHDR) != 0;
	if (vdso != (c.vdso_clock != nullptr) ||
	    (c.vdso_clock && (c.vdso_clock(CLOCK_MONOTONIC, &b) != 0 || b.tv_sec - a.tv_sec > 1 || b.tv_sec < a.tv_sec))) {
		std::fprintf(stderr, "the vDSO's clock_gettime was %s (a vDSO is %s), or disagrees with libc's\n",
			     c.vdso_clock ? "found" : "not found", vdso ? "mapped" : "not mapped");
		fails++;
	}
	uint64_t ns = tlbprof_marker_now_ns_();
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (ns / 1000000000u > static_cast<uint64_t>(b.tv_sec) || ns / 1000000000u + 1 < static_cast<uint64_t>(b.tv_sec)) {
		std::fprintf(stderr, "the marker's clock disagrees with libc's\n");
		fails++;
	}
	const struct {
		const char *env;
		int groups;
	} lists[] = { { "992:17,993:18446744073709551615", 2 }, { "5:1", 1 }, { "", 0 }, { "5", 0 }, { "5:", 0 },
		      { "5:1,", 0 }, { ":1", 0 }, { "5:1x", 0 }, { "1:1,2:2,3:3,4:4,5:5,6:6,7:7,8:8,9:9", 0 } };
	for (const auto &l : lists) {
		c.groups = 0;
		setenv(TLBPROF_MARKER_ENV_COUNTERS, l.env, 1);
		tlbprof_marker_groups_(&c);
		if (c.groups != l.groups) {
			std::fprintf(stderr, "TLBPROF_MARKER_COUNTERS=%s: %d groups, expected %d\n", l.env, c.groups, l.groups);
			fails++;
		}
	}
	unsetenv(TLBPROF_MARKER_ENV_COUNTERS);
	return fails;
}
#else
static int shm_parts()
{
	return 0;
}
#endif

int main()
{
	unsetenv(TLBPROF_MARKER_ENV_CTL);
	struct tlbprof_phase p = TLBPROF_PHASE_INIT;
	static char buf[4096];
	p.accesses = 10;
	p.region = buf;
	p.region_bytes = sizeof(buf);
	p.page = "4k";
	int fails = 0;
	fails += tlbprof_marker_active() != 0;
	fails += tlbprof_phase_begin("x", &p) != 0;
	fails += tlbprof_phase_end(0, 0) != 0;
	fails += tlbprof_phase_begin("y", nullptr) != 0;
	if (fails)
		std::fprintf(stderr, "%d marker calls were not no-ops outside tlbprof run\n", fails);
	fails += shm_parts();
	return fails ? 1 : 0;
}
