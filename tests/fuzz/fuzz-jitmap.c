/* SPDX-License-Identifier: MIT */
/* Fuzz target: a JIT's perf map (/tmp/perf-PID.map), which another program writes, and lookups on what it built. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmu/symbols_jit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symbols_jit_map m = { 0 };

	if (symbols_jit_parse(&m, (const char *)data, size) == 0) {
		for (size_t i = 0; i < m.count; i++) {
			const struct symbols_jit_entry *e = &m.items[i];
			const uint64_t probes[] = { e->start, e->end - 1, e->end, e->start - 1 };

			/* Sorted by start; every entry a non-empty range with a name. */
			if (e->start >= e->end || !e->name[0] || (i && m.items[i - 1].start > e->start))
				abort();
			for (size_t j = 0; j < sizeof(probes) / sizeof(probes[0]); j++) {
				const struct symbols_jit_entry *f = symbols_jit_find(&m, probes[j]);
				if (f && (probes[j] < f->start || probes[j] >= f->end))
					abort();	/* what it finds holds the address */
				if (j < 2 && !f)
					abort();	/* an entry's own first and last byte are found */
			}
		}
	}
	symbols_jit_free(&m);
	return 0;
}
