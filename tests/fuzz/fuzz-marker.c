/* SPDX-License-Identifier: MIT */
/* Fuzz target: the marker / perf-control line parser on arbitrary bytes (what a benchmark under tlbprof run sends). */
#include <stdint.h>
#include <string.h>

#include "target/marker.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct marker_msg m;
	char err[200];

	if (marker_parse((const char *)data, size, &m, err, sizeof(err)) == 0 && m.type == MARKER_BEGIN &&
	    !marker_name_valid(m.name))
		__builtin_trap();	/* a parsed name must be a valid one */
	return 0;
}
