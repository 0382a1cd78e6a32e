/* SPDX-License-Identifier: MIT */
/* Fuzz target: the unwind-table reader (a stripped program's .eh_frame) on arbitrary ELF files. */
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmu/symbols_unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *image = malloc(size ? size : 1);
	Elf *elf;

	if (!image)
		return 0;
	memcpy(image, data, size);
	(void)elf_version(EV_CURRENT);
	elf = elf_memory(image, size);
	if (elf) {
		struct symbols_range *r = NULL;
		size_t n = 0;

		/* What it returns is sorted, apart and never empty; abort() makes a violation a crash the fuzzer keeps. */
		if (symbols_unwind_ranges(elf, &r, &n) == 0)
			for (size_t i = 0; i < n; i++)
				if (r[i].start >= r[i].end || (i && r[i].start < r[i - 1].end))
					abort();
		free(r);
		elf_end(elf);
	}
	free(image);
	return 0;
}
