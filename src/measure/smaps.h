/* SPDX-License-Identifier: MIT */
/* Parse /proc/<pid>/smaps text into the verified page backing of an address range (pure). */
#pragma once

#include <stdint.h>

#include "measure/phase.h"

/*
 * Sum the smaps records of every VMA that overlaps [start, end) in text (the
 * whole contents of an smaps file, NUL-terminated) into *out, and classify
 * the backing: hugetlb when a VMA's KernelPageSize exceeds base_page_bytes,
 * else thp when AnonHugePages > 0, else base. huge_fraction is the share of
 * resident bytes on huge pages. Whole VMAs are counted (smaps has no finer
 * grain), so callers map regions as their own VMAs.
 * Returns 0, or -ENOENT when no VMA overlaps the range.
 */
int smaps_summarize(const char *text, uintptr_t start, uintptr_t end, uint64_t base_page_bytes,
		    struct region_backing *out);
