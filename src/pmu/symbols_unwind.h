/* SPDX-License-Identifier: MIT */
/* Function bounds without symbols: the address ranges of an ELF file's unwind entries (.eh_frame FDEs). */
#pragma once

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

struct symbols_range {
	uint64_t start, end;	/* [start, end) in the file's ELF virtual addresses */
};

/*
 * The range of every FDE in elf's .eh_frame, which GCC and Clang emit for
 * each function by default (-fasynchronous-unwind-tables), sorted by start;
 * where a broken table's entries overlap, each is cut where the next begins;
 * empty entries, those longer than 16 MiB and those at address 0 (left by
 * discarded sections) are dropped, as are entries whose pointer encoding is not one of the plain ones
 * (absolute or PC-relative, fixed-size or LEB128). Returns 0 with *out
 * malloc'd (NULL and *n 0 when there are none), -ENOENT when the file has no
 * .eh_frame, -EINVAL when it is unreadable, -ENOMEM.
 */
int symbols_unwind_ranges(Elf *elf, struct symbols_range **out, size_t *n);
