/* SPDX-License-Identifier: MIT */
/* The verified page backing of an address range: the pure parser of /proc/<pid>/smaps text, and its one reader. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

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

/*
 * /proc/PID/smaps (pid 0: /proc/self/smaps) up to the first VMA at or above
 * stop, NUL-terminated, into *text (caller frees). The records are in
 * address order and the kernel walks each VMA's page tables as it generates
 * its record, so the regions above the range (the big ones mapped before
 * it) are never walked. Returns 0 or the -errno of the failing open/read
 * (-ENOENT: no such process), or -ENOMEM.
 */
int smaps_text(pid_t pid, uint64_t stop, char **text);

/*
 * Read /proc/PID/smaps (pid 0: /proc/self/smaps) up to the first VMA at or
 * above addr + len and summarise the VMAs that overlap [addr, addr + len)
 * with smaps_summarize(), on the system's base page size. The file is
 * generated on read, each record by walking its VMA's page tables, and can
 * be a few MiB; the records past the range are never generated. Returns 0,
 * -ENOENT when no VMA overlaps (or the process is gone), -ENOMEM, or the
 * -errno of the failing open/read.
 */
int smaps_read(pid_t pid, uint64_t addr, uint64_t len, struct region_backing *out);
