/* SPDX-License-Identifier: MIT */
/* Memory regions with a page-size policy: map, prefault, verify the real backing, unmap. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "types.h"
#include "machine/environment.h"
#include "measure/phase.h"

struct region {
	void *base;		/* usable start, aligned to the page size */
	uint64_t bytes;		/* usable length, a multiple of the page size */
	void *map_base;		/* what munmap() gets */
	uint64_t map_bytes;
	struct page_request page;
};

/*
 * Map an anonymous region of at least `bytes` for the page request: base
 * pages get MADV_NOHUGEPAGE (so THP cannot contaminate the control), THP
 * regions are 2 MiB aligned with MADV_HUGEPAGE, hugetlb regions use
 * MAP_HUGETLB with the size flag after checking the pool, so a short pool is
 * an error here and never a SIGBUS later. Nothing is touched yet.
 * Returns 0, or -errno with a one-line reason and the fix in why:
 * -ENOMEM (not enough memory / pool too small), -EOPNOTSUPP (page size not
 * offered by this kernel or THP disabled), or the mmap/madvise errno.
 */
int region_map(struct region *r, const struct page_request *page, uint64_t bytes, char *why, size_t why_len);

/* Touch (write) every base page so faults happen here, not in a timed phase. Returns the pages touched. */
uint64_t region_prefault(struct region *r);
/* Fault every page in, uncounted and faster than region_prefault() where the kernel can (MADV_POPULATE_WRITE). */
void region_populate(struct region *r);
/*
 * What region_populate_parallel() saw of the first access from user space to
 * pages the kernel had populated: natively a TLB miss, tens of ns a page;
 * under shadow paging (the hypervisor building its own page tables as pages
 * are used) a trap to it, microseconds.
 */
struct region_populated {
	uint64_t pages;		/* base pages written after MADV_POPULATE_WRITE; 0: none (or under 64 a thread) */
	double first_access_ns;	/* per thread, its median 64-page chunk's ns per page times its pages; summed */
};

/*
 * The same, split between the caller and up to three helper threads on CPUs
 * of the caller's NUMA node (about half the time with two): for a region
 * nothing is measured on until its chain is built over it. A region under
 * 32 MiB, or one CPU to use, is populated by the caller alone. Each thread
 * then writes once to every base page of its part, timed, so what mapping a
 * page for user space costs is paid here in parallel and measured.
 */
struct region_populated region_populate_parallel(struct region *r);

/*
 * tlbprof env's probe: a region of `bytes` on 4 KiB pages, populated by the
 * kernel, then written once a page by this thread, timed as
 * region_populate_parallel() times it, and unmapped. Returns 0, -ENOMEM
 * (no region), or -EOPNOTSUPP (no MADV_POPULATE_WRITE, or under 64 pages).
 */
int region_first_access_probe(uint64_t bytes, struct env_first_access *out);
/* What the commands probe: 4096 pages, 64 chunks; a few ms natively, 10-40 ms under PVM's traps. */
#define REGION_FIRST_ACCESS_PROBE_BYTES (16ull << 20)

/*
 * Read /proc/self/smaps and summarise the region's real backing.
 * Returns 0 or -errno (smaps unreadable).
 */
int region_verify(const struct region *r, struct region_backing *out);

/*
 * Compare a verified backing with the request. Returns 0 when it matches,
 * or -EOPNOTSUPP with a reason that says what the kernel gave and how to fix
 * it in why.
 */
int region_check_backing(const struct page_request *page, const struct region_backing *b, char *why,
			 size_t why_len);

/* Unmap; tolerates a region that was never mapped (zeroed). */
void region_unmap(struct region *r);

/* MemAvailable from /proc/meminfo in bytes, 0 when unreadable. */
uint64_t region_mem_available(void);
