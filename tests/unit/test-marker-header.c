/* SPDX-License-Identifier: MIT */
/* The marker header compiles as strict C99 and, outside tlbprof run, every call is a no-op that returns 0. */
#define _POSIX_C_SOURCE 200809L
#include <tlbprof/marker.h>

int main(void)
{
	struct tlbprof_phase p = TLBPROF_PHASE_INIT;
	int fails = 0;

	unsetenv(TLBPROF_MARKER_ENV_CTL);
	p.accesses = 1;
	fails += tlbprof_marker_active() != 0;
	fails += tlbprof_phase_begin("x", &p) != 0;
	fails += tlbprof_phase_end(5, 1) != 0;
	if (fails)
		fprintf(stderr, "%d marker calls were not no-ops outside tlbprof run\n", fails);
	return fails ? 1 : 0;
}
