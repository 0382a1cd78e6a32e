// SPDX-License-Identifier: MIT
// The marker header compiles as C++ and, outside tlbprof run, every call is a no-op that returns 0.
#include <tlbprof/marker.h>

#include <cstdio>

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
	return fails ? 1 : 0;
}
