/* SPDX-License-Identifier: MIT */
/* smaps parsing from fixture text: 4k, THP, hugetlb, mixed and malformed records; and reading this process's own. */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "measure/region.h"
#include "measure/smaps.h"

#define VMA(range, name, rss, anonhuge, kps, priv_hugetlb)                      \
	range " rw-p 00000000 00:00 0 " name "\n"                              \
	"Size:             262144 kB\n"                                          \
	"KernelPageSize:        " kps " kB\n"                                    \
	"MMUPageSize:           " kps " kB\n"                                    \
	"Rss:              " rss " kB\n"                                         \
	"Pss:              " rss " kB\n"                                         \
	"Anonymous:        " rss " kB\n"                                         \
	"AnonHugePages:    " anonhuge " kB\n"                                    \
	"ShmemPmdMapped:        0 kB\n"                                          \
	"Shared_Hugetlb:        0 kB\n"                                          \
	"Private_Hugetlb:  " priv_hugetlb " kB\n"                                \
	"Swap:                  0 kB\n"                                          \
	"THPeligible:    1\n"                                                    \
	"VmFlags: rd wr mr mw me ac sd nh\n"

/* A neighbour before and after, so the range filter is exercised. */
static const char fixture_4k[] =
	VMA("7f0000000000-7f0000200000", "", "2048", "2048", "4", "0")
	VMA("7f1000000000-7f1010000000", "", "262144", "0", "4", "0")
	VMA("7f2000000000-7f2000001000", "[stack]", "4", "0", "4", "0");

static const char fixture_thp[] =
	VMA("7f1000000000-7f1010000000", "", "262144", "262144", "4", "0");

static const char fixture_thp_partial[] =
	VMA("7f1000000000-7f1010000000", "", "262144", "98304", "4", "0");

static const char fixture_hugetlb[] =
	"7f1000000000-7f1010000000 rw-p 00000000 00:0f 1234 /anon_hugepage (deleted)\n"
	"Size:             262144 kB\n"
	"KernelPageSize:     2048 kB\n"
	"MMUPageSize:        2048 kB\n"
	"Rss:                   0 kB\n"
	"AnonHugePages:         0 kB\n"
	"Shared_Hugetlb:        0 kB\n"
	"Private_Hugetlb:  262144 kB\n"
	"VmFlags: rd wr mr mw me de ht\n";

/* The region split in two VMAs: one THP-backed half, one on base pages. */
static const char fixture_mixed[] =
	VMA("7f1000000000-7f1008000000", "", "131072", "131072", "4", "0")
	VMA("7f1008000000-7f1010000000", "", "131072", "0", "4", "0");

static const char fixture_garbage[] = "this is not smaps\nRss: 12 kB\n\n-\nzz-yy\n";

/* smaps_read on a region of this process's own, by pid 0 and by its pid; nothing where nothing is mapped. */
static void test_read(void)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), len = 16 * page;
	struct region_backing b;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED, "mmap");
	if (p == MAP_FAILED)
		return;
	madvise(p, len, MADV_NOHUGEPAGE);
	for (uint64_t off = 0; off < len; off += page)
		p[off] = 1;
	CHECK(smaps_read(0, (uintptr_t)p, len, &b) == 0, "own smaps (pid 0)");
	CHECK(b.vmas >= 1 && b.mapped_bytes == len && b.rss_bytes >= len && b.kind == PAGE_BASE,
	      "vmas %u mapped %llu rss %llu kind %d", (unsigned)b.vmas, (unsigned long long)b.mapped_bytes,
	      (unsigned long long)b.rss_bytes, b.kind);
	CHECK(smaps_read(getpid(), (uintptr_t)p, len, &b) == 0 && b.mapped_bytes == len, "own smaps by pid");
	/* Three VMAs in the range (the middle read-only): the read stops past the range, never inside it. */
	CHECK(mprotect(p + 4 * page, 4 * page, PROT_READ) == 0, "mprotect");
	CHECK(smaps_read(0, (uintptr_t)p, len, &b) == 0 && b.vmas == 3 && b.mapped_bytes == len && b.rss_bytes >= len,
	      "split: vmas %u mapped %llu rss %llu", (unsigned)b.vmas, (unsigned long long)b.mapped_bytes,
	      (unsigned long long)b.rss_bytes);
	CHECK(smaps_read(0, (uintptr_t)p + 12 * page, 4 * page, &b) == 0 && b.vmas == 1 && b.mapped_bytes == 4 * page,
	      "the last VMA alone: vmas %u mapped %llu", (unsigned)b.vmas, (unsigned long long)b.mapped_bytes);
	munmap(p, len);
	CHECK(smaps_read(0, (uintptr_t)p, len, &b) == -ENOENT, "unmapped");
	CHECK(smaps_read(INT_MAX, (uintptr_t)p, len, &b) == -ENOENT, "no such process");
}

/* Every page of a region populated in parts, by helpers or (pinned to one CPU) by the caller alone, is resident. */
static void test_populate_parallel(void)
{
	static const char *const sizes[] = { "4k", "2m" };
	cpu_set_t was, one;

	for (int pinned = 0; pinned < 2; pinned++) {
		if (pinned) {
			CHECK(sched_getaffinity(0, sizeof(was), &was) == 0, "affinity");
			CPU_ZERO(&one);
			CPU_SET(sched_getcpu(), &one);
			CHECK(sched_setaffinity(0, sizeof(one), &one) == 0, "pin to one CPU");
		}
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			struct page_request page;
			struct region r;
			struct region_backing b;
			char why[400];

			CHECK(page_request_parse(sizes[i], &page) == 0, "%s", sizes[i]);
			if (region_map(&r, &page, 72ull << 20, why, sizeof(why)) != 0) {
				printf("# %s: not mapped here (%s), skipped\n", sizes[i], why);
				continue;
			}
			region_populate_parallel(&r);
			CHECK(region_verify(&r, &b) == 0 && b.rss_bytes >= r.bytes, "%s pinned %d: rss %llu of %llu",
			      sizes[i], pinned, (unsigned long long)b.rss_bytes, (unsigned long long)r.bytes);
			if (page.kind == PAGE_THP && b.anon_huge_bytes != b.rss_bytes)
				printf("# 2m: THP not granted in full here (%llu of %llu)\n",
				       (unsigned long long)b.anon_huge_bytes, (unsigned long long)b.rss_bytes);
			else
				CHECK(region_check_backing(&page, &b, why, sizeof(why)) == 0, "%s backing: %s", sizes[i], why);
			region_unmap(&r);
		}
		if (pinned)
			CHECK(sched_setaffinity(0, sizeof(was), &was) == 0, "unpin");
	}
}

int main(void)
{
	const uintptr_t lo = 0x7f1000000000ull, hi = 0x7f1010000000ull;
	struct region_backing b;

	CHECK(smaps_summarize(fixture_4k, lo, hi, 4096, &b) == 0, "4k parses");
	CHECK(b.kind == PAGE_BASE, "4k kind %d", b.kind);
	CHECK(b.kernel_page_bytes == 4096, "kps %llu", (unsigned long long)b.kernel_page_bytes);
	CHECK(b.rss_bytes == 256ull << 20, "rss %llu", (unsigned long long)b.rss_bytes);
	CHECK(b.anon_huge_bytes == 0, "the neighbour's AnonHugePages must not leak in");
	CHECK(b.vmas == 1 && b.mapped_bytes == 256ull << 20, "one VMA of 256 MiB");
	CHECK(b.huge_fraction == 0, "no huge fraction");

	CHECK(smaps_summarize(fixture_thp, lo, hi, 4096, &b) == 0, "thp parses");
	CHECK(b.kind == PAGE_THP && b.huge_fraction == 1.0, "thp kind %d fraction %g", b.kind, b.huge_fraction);
	CHECK(b.kernel_page_bytes == 4096, "THP keeps KernelPageSize 4 kB");

	CHECK(smaps_summarize(fixture_thp_partial, lo, hi, 4096, &b) == 0, "partial thp parses");
	CHECK(b.kind == PAGE_THP, "partial is thp");
	CHECK_NEAR(b.huge_fraction, 0.375, 1e-9);

	CHECK(smaps_summarize(fixture_hugetlb, lo, hi, 4096, &b) == 0, "hugetlb parses");
	CHECK(b.kind == PAGE_HUGETLB, "hugetlb kind %d", b.kind);
	CHECK(b.kernel_page_bytes == 2u << 20, "kps %llu", (unsigned long long)b.kernel_page_bytes);
	CHECK(b.hugetlb_bytes == 256ull << 20 && b.rss_bytes == 256ull << 20, "hugetlb bytes count as resident");
	CHECK(b.huge_fraction == 1.0, "hugetlb fraction %g", b.huge_fraction);

	CHECK(smaps_summarize(fixture_mixed, lo, hi, 4096, &b) == 0, "mixed parses");
	CHECK(b.vmas == 2, "two VMAs");
	CHECK(b.kind == PAGE_THP, "mixed is thp");
	CHECK_NEAR(b.huge_fraction, 0.5, 1e-9);
	/* Only the second half of the range. */
	CHECK(smaps_summarize(fixture_mixed, 0x7f1008000000ull, hi, 4096, &b) == 0 && b.kind == PAGE_BASE &&
		      b.vmas == 1, "second half alone is base");

	CHECK(smaps_summarize(fixture_4k, 0x10000, 0x20000, 4096, &b) == -ENOENT, "no overlap");
	CHECK(smaps_summarize(fixture_garbage, lo, hi, 4096, &b) == -ENOENT, "garbage has no VMA");
	CHECK(smaps_summarize("", lo, hi, 4096, &b) == -ENOENT, "empty");
	test_read();
	test_populate_parallel();
	return check_finish();
}
