/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: a hot loop's machine code (target/code.c), whose bytes come from whatever executable the benchmark
 * is. The first two bytes place the loop inside the rest; the rest is the code from the function's start.
 */
#include <stdint.h>
#include <stdlib.h>

#include "target/code.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sample_code c;
	const uint64_t addr = 0x401000;

	if (size < 3)
		return 0;
	size_t len = size - 2, lo = data[0] % len, hi = lo + 1 + data[1] % (len - lo);
	if (code_describe(data + 2, len, addr, addr + lo, addr + hi, &c) != 0)
		return 0;
	/* The body lies in the decoded bytes and holds its loads; chained loads are loads, each at an address in it. */
	if (c.body_end && (c.body_start < addr || c.body_end > addr + len || c.body_start >= c.body_end))
		abort();
	if (c.chained_loads > c.loads || (c.chained_loads && (c.chained_at < c.body_start || c.chained_at >= c.body_end)))
		abort();
	if ((!c.body_end || !c.body_followed) && (c.loads || c.calls))
		abort();	/* no body, or one too long to follow: nothing counted */
	if (c.body_followed && (!c.body_end || !c.body_instructions || c.body_instructions > SAMPLE_CODE_MAX_BODY))
		abort();
	if (c.calls && (c.call_at < c.body_start || c.call_at >= c.body_end))
		abort();
	return 0;
}
