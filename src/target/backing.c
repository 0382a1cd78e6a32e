/* SPDX-License-Identifier: MIT */
/* tlbprof run: a declared region's real backing, clipped to its range: per page as root, else from smaps. */
#include "target/backing.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/smaps.h"

/* /proc/PID/pagemap: one 64-bit entry per virtual page (Documentation/admin-guide/mm/pagemap.rst). */
#define PM_PRESENT (1ull << 63)
#define PM_PFN_MASK ((1ull << 55) - 1)
/* /proc/kpageflags: one 64-bit word of KPF_* bits per physical frame. */
#define KPF_HUGE (1ull << 17)
#define KPF_THP (1ull << 22)
#define KPF_ZERO_PAGE (1ull << 24)
/* Pagemap entries read at once: 512 = one 2 MiB block of 4 KiB pages. */
#define BLOCK_PAGES 512u

void backing_clip_prorate(uint64_t vma_start, uint64_t vma_end, uint64_t addr, uint64_t bytes, uint64_t *rss_bytes,
			  uint64_t *anon_huge_bytes)
{
	uint64_t lo = vma_start > addr ? vma_start : addr, hi = vma_end < addr + bytes ? vma_end : addr + bytes;
	uint64_t vma = vma_end - vma_start, part = hi > lo ? hi - lo : 0;

	if (!vma || part >= vma)
		return;
	/* Spread evenly: the best smaps can say of a VMA that reaches beyond the range. */
	*rss_bytes = (uint64_t)((double)*rss_bytes * (double)part / (double)vma);
	*anon_huge_bytes = (uint64_t)((double)*anon_huge_bytes * (double)part / (double)vma);
}

/* What one smaps VMA holds inside the range: its Rss and AnonHugePages prorated, its VmFlags. */
struct vma_sum {
	uint64_t addr, bytes;
	uint64_t rss, huge, hugetlb, kernel_page;
	bool nh, hg, any;
};

/* Parse "Name:   N kB" at line; returns bytes or 0. */
static uint64_t kb_field(const char *line, const char *name)
{
	size_t n = strlen(name);
	if (strncmp(line, name, n) != 0 || line[n] != ':')
		return 0;
	return strtoull(line + n + 1, NULL, 10) * 1024;
}

/* Flags of a "VmFlags: rd wr mr ... nh" line. */
static void vm_flags(const char *line, bool *nh, bool *hg)
{
	const char *p = line + strlen("VmFlags:");
	while (*p && *p != '\n') {
		while (*p == ' ')
			p++;
		if (p[0] == 'n' && p[1] == 'h' && (p[2] == ' ' || p[2] == '\n' || !p[2]))
			*nh = true;
		if (p[0] == 'h' && p[1] == 'g' && (p[2] == ' ' || p[2] == '\n' || !p[2]))
			*hg = true;
		while (*p && *p != ' ' && *p != '\n')
			p++;
	}
}

/* Fold one finished VMA record into the sum (prorated to the range). */
static void vma_close(struct vma_sum *s, uint64_t start, uint64_t end, uint64_t rss, uint64_t huge, uint64_t tlb)
{
	backing_clip_prorate(start, end, s->addr, s->bytes, &rss, &huge);
	backing_clip_prorate(start, end, s->addr, s->bytes, &tlb, &(uint64_t){ 0 });
	s->rss += rss;
	s->huge += huge;
	s->hugetlb += tlb;
}

int backing_smaps_clip(const char *text, uint64_t addr, uint64_t bytes, struct region_backing *b, bool *nh, bool *hg)
{
	struct vma_sum s = { .addr = addr, .bytes = bytes };
	uint64_t start = 0, end = 0, rss = 0, huge = 0, tlb = 0;
	bool in = false;

	memset(b, 0, sizeof(*b));
	*nh = *hg = false;
	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		unsigned long long lo, hi;
		char c;
		/* A VMA header: "start-end perms offset dev inode [path]" (hex addresses, no colon after the first word). */
		if (sscanf(line, "%llx-%llx %c", &lo, &hi, &c) == 3 && strchr("r-", c)) {
			if (in)
				vma_close(&s, start, end, rss, huge, tlb);
			start = lo;
			end = hi;
			rss = huge = tlb = 0;
			in = end > addr && start < addr + bytes;
			if (in) {
				b->vmas++;
				b->mapped_bytes += (end < addr + bytes ? end : addr + bytes) - (start > addr ? start : addr);
			}
			continue;
		}
		if (!in)
			continue;
		uint64_t v;
		if ((v = kb_field(line, "Rss")))
			rss = v;
		else if ((v = kb_field(line, "AnonHugePages")))
			huge = v;
		else if ((v = kb_field(line, "Private_Hugetlb")) || (v = kb_field(line, "Shared_Hugetlb")))
			tlb += v;
		else if ((v = kb_field(line, "KernelPageSize")) && v > b->kernel_page_bytes)
			b->kernel_page_bytes = v;
		else if (strncmp(line, "VmFlags:", 8) == 0)
			vm_flags(line, nh, hg);
	}
	if (in)
		vma_close(&s, start, end, rss, huge, tlb);
	if (!b->vmas)
		return -ENOENT;
	b->rss_bytes = s.hugetlb ? s.hugetlb : s.rss;
	b->anon_huge_bytes = s.huge;
	b->hugetlb_bytes = s.hugetlb;
	b->kind = s.hugetlb || b->kernel_page_bytes > 4096 ? PAGE_HUGETLB : s.huge ? PAGE_THP : PAGE_BASE;
	b->huge_fraction = b->kind == PAGE_HUGETLB ? 1.0 : b->rss_bytes ? (double)s.huge / (double)b->rss_bytes : 0;
	if (b->huge_fraction > 1)
		b->huge_fraction = 1;
	return 0;
}

/* The kpageflags of n frames from pfn on (runs of consecutive frames in one read). 0 or -errno. */
static int frame_flags(int kfd, const uint64_t *pfn, size_t n, uint64_t *flags)
{
	for (size_t i = 0; i < n;) {
		size_t run = 1;
		while (i + run < n && pfn[i + run] == pfn[i] + run && pfn[i + run])
			run++;
		if (!pfn[i]) {
			flags[i++] = 0;
			continue;
		}
		ssize_t got = pread(kfd, flags + i, run * 8, (off_t)(pfn[i] * 8));
		if (got != (ssize_t)(run * 8))
			return got < 0 ? -errno : -EIO;
		i += run;
	}
	return 0;
}

/*
 * Per page: pagemap gives present and the frame, kpageflags what the frame
 * is. A 2 MiB-aligned block counts as on a huge page when all its 512 pages
 * are present on consecutive frames from a 512-aligned one with KPF_THP (a
 * PMD mapping); a large folio mapped by PTEs (mTHP) is not one for the TLB.
 */
static int exact(pid_t pid, uint64_t addr, uint64_t bytes, struct target_backing *tb)
{
	char path[64];
	uint64_t pm[BLOCK_PAGES], pfn[BLOCK_PAGES], fl[BLOCK_PAGES];
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	int pfd = open(path, O_RDONLY | O_CLOEXEC), kfd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (pfd < 0 || kfd < 0) {
		rc = -errno;
		goto out;
	}
	uint64_t first = addr / 4096, last = (addr + bytes + 4095) / 4096;
	for (uint64_t blk = first / BLOCK_PAGES * BLOCK_PAGES; blk < last && !rc; blk += BLOCK_PAGES) {
		ssize_t got = pread(pfd, pm, sizeof(pm), (off_t)(blk * 8));
		if (got != (ssize_t)sizeof(pm)) {
			rc = got < 0 ? -errno : -EIO;
			break;
		}
		bool any_pfn = false;
		for (unsigned i = 0; i < BLOCK_PAGES; i++) {
			pfn[i] = pm[i] & PM_PRESENT ? pm[i] & PM_PFN_MASK : 0;
			any_pfn |= pfn[i] != 0;
			if ((pm[i] & PM_PRESENT) && !pfn[i])
				rc = -EPERM;	/* present without a frame: the kernel hides frames from us */
		}
		if (rc)
			break;
		if (any_pfn && (rc = frame_flags(kfd, pfn, BLOCK_PAGES, fl)) != 0)
			break;
		bool pmd = pfn[0] && pfn[0] % BLOCK_PAGES == 0;
		for (unsigned i = 0; i < BLOCK_PAGES && pmd; i++)
			pmd = pfn[i] == pfn[0] + i && (fl[i] & KPF_THP);
		for (unsigned i = 0; i < BLOCK_PAGES; i++) {
			uint64_t page = blk + i;
			if (page < first || page >= last)
				continue;
			tb->pages++;
			if (!(pm[i] & PM_PRESENT))
				continue;
			tb->present++;
			tb->zero += (fl[i] & KPF_ZERO_PAGE) != 0;
			tb->thp += pmd;
			tb->hugetlb += (fl[i] & KPF_HUGE) != 0;
		}
	}
out:
	if (pfd >= 0)
		close(pfd);
	if (kfd >= 0)
		close(kfd);
	return rc;
}

int backing_read(pid_t pid, uint64_t addr, uint64_t bytes, struct region_backing *b, struct target_backing *tb)
{
	memset(tb, 0, sizeof(*tb));
	char *text = NULL;
	int rc = smaps_text(pid, addr + bytes, &text);
	if (rc)
		return rc;
	rc = backing_smaps_clip(text, addr, bytes, b, &tb->vm_nh, &tb->vm_hg);
	free(text);
	if (rc)
		return rc;
	uint64_t pages = (bytes + 4095) / 4096;
	tb->resident_fraction = pages ? (double)b->rss_bytes / (double)bytes : 0;
	if (tb->resident_fraction > 1)
		tb->resident_fraction = 1;
	/* Exact per page where pagemap shows frames (CAP_SYS_ADMIN); a hugetlb range keeps smaps' figures. */
	if (b->kind != PAGE_HUGETLB && pages <= BACKING_EXACT_MAX_PAGES) {
		struct target_backing e = { .vm_nh = tb->vm_nh, .vm_hg = tb->vm_hg };
		if (exact(pid, addr, bytes, &e) == 0 && e.pages) {
			e.exact = true;
			/* The shared zero page is mapped, not resident: smaps' Rss leaves it out too. */
			uint64_t resident = e.present - e.zero;
			e.resident_fraction = (double)resident / (double)e.pages;
			*tb = e;
			b->rss_bytes = resident * 4096;
			b->anon_huge_bytes = e.thp * 4096;
			b->huge_fraction = resident ? (double)e.thp / (double)resident : 0;
			b->kind = e.thp ? PAGE_THP : PAGE_BASE;
			if (b->kind == PAGE_BASE)
				b->kernel_page_bytes = 4096;
		}
	}
	return 0;
}
