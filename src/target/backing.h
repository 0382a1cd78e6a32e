/* SPDX-License-Identifier: MIT */
/* Private to src/target/: a declared region's backing clipped to its range (pagemap + kpageflags, else smaps). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "measure/phase.h"

/* Ranges up to this many 4 KiB pages (16 GiB) are read per page; larger ones keep the smaps figures. */
#define BACKING_EXACT_MAX_PAGES (4ull << 20)

/* What the range's pages are, beside the region_backing the checks read. */
struct target_backing {
	bool exact;			/* per page (pagemap frames and kpageflags), else smaps prorated */
	uint64_t pages;			/* exact: 4 KiB pages of the range */
	uint64_t present, zero, thp, hugetlb;	/* exact: of those, present; on the shared zero page; in a
						 * PMD-mapped THP block; on hugetlb frames */
	double resident_fraction;	/* resident (not the zero page) / the range's pages */
	bool vm_nh, vm_hg;		/* some VMA of the range has VmFlags nh / hg */
};

/*
 * Sum the smaps VMAs (text: a whole smaps file) that overlap [addr, addr +
 * bytes) into *b, each VMA's Rss, AnonHugePages and hugetlb bytes prorated to
 * the part of it inside the range (smaps has no finer grain: a VMA that
 * reaches beyond the range is assumed evenly backed), and say whether any of
 * them has VmFlags nh or hg. Pure. Returns 0, or -ENOENT when none overlaps.
 */
int backing_smaps_clip(const char *text, uint64_t addr, uint64_t bytes, struct region_backing *b, bool *nh, bool *hg);

/* Scale *rss_bytes and *anon_huge_bytes of VMA [vma_start, vma_end) to its overlap with [addr, addr + bytes). Pure. */
void backing_clip_prorate(uint64_t vma_start, uint64_t vma_end, uint64_t addr, uint64_t bytes, uint64_t *rss_bytes,
			  uint64_t *anon_huge_bytes);

/*
 * The backing of [addr, addr + bytes) in process pid: smaps clipped to the
 * range, then, where /proc/PID/pagemap shows frames (root: CAP_SYS_ADMIN)
 * and /proc/kpageflags opens, exact per page: b's resident bytes, THP bytes
 * (2 MiB blocks mapped by one PMD) and fraction are replaced by the counted
 * ones, and the zero page is counted apart. Returns 0, or -errno (smaps
 * unreadable, -ENOENT: nothing mapped there).
 */
int backing_read(pid_t pid, uint64_t addr, uint64_t bytes, struct region_backing *b, struct target_backing *tb);
