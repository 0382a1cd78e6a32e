/* SPDX-License-Identifier: MIT */
/* Fuzz target: the /proc/PID/maps parser, the mapping container and lookups on what it built. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmu/symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symbols *syms = symbols_new();
	struct symbols_mapping line;
	char path[16];
	size_t bad;

	if (!syms)
		return 0;
	/* The line parser alone, with a buffer too small for most paths. */
	symbols_maps_parse_line((const char *)data, size, &line, path, sizeof(path));
	if (symbols_maps_parse(syms, 1, (const char *)data, size, &bad) >= 0) {
		symbols_fork(syms, 1, 2);
		/* Overlapping adds reshape the sorted list: parse the text again into the copy. */
		symbols_maps_parse(syms, 2, (const char *)data, size, &bad);
		for (size_t i = 0; i < symbols_mapping_count(syms, 1); i++) {
			const struct symbols_mapping *m = symbols_mapping_get(syms, 1, i);
			const uint64_t probes[] = { m->start, m->end - 1, m->end, m->start - 1 };

			for (size_t j = 0; j < sizeof(probes) / sizeof(probes[0]); j++) {
				struct symbols_region region;
				struct symbols_location loc;
				char text[64];

				symbols_classify(syms, 1, probes[j], &region);
				/* Resolving opens the files named; keep the fuzzer to names that are not paths. */
				if (m->path[0] != '/') {
					symbols_resolve(syms, 1, probes[j], &loc);
					symbols_location_format(&loc, text, sizeof(text));
				}
			}
		}
		symbols_exec(syms, 2);
	}
	symbols_delete(syms);
	return 0;
}
