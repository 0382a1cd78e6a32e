/* SPDX-License-Identifier: MIT */
/* Fuzz target: the smaps parser on arbitrary text and ranges. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "measure/smaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct region_backing b;
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	smaps_summarize(text, 0, UINTPTR_MAX, 4096, &b);
	smaps_summarize(text, 0x7f0000000000ull, 0x7f1000000000ull, 4096, &b);
	free(text);
	return 0;
}
