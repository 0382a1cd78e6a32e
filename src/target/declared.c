/* SPDX-License-Identifier: MIT */
/* tlbprof run: check what a phase declares, its region's page backing (smaps) and its chain (copied out, walked). */
#include "target/internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "measure/chain.h"
#include "measure/region.h"
#include "measure/smaps.h"
#include "target/backing.h"

/* A declared region is copied into tlbprof to walk its chain: at most this, and half of MemAvailable. */
#define TARGET_CHAIN_COPY_MAX (4ull << 30)

/*
 * A range declared "2m" that THP did not back: advised MADV_HUGEPAGE (VmFlags hg) and still on 4 KiB pages is
 * advice given after the first touch (those pages stay small until khugepaged collapses them) or a range not
 * 2 MiB-aligned; never advised, in THP's madvise mode, it was never asked for. A late madvise was told that memory
 * may be fragmented and to use --pages 2m:hugetlb, an option of tlbprof's own workloads (a review of foreign
 * benchmarks found it).
 */
static void thp_not_granted(const struct phase_result *r, const struct target_backing *tb, char *why, size_t len)
{
	const struct target_phase *tp = r->target;
	char align[160] = "";

	if (tp && tp->region_addr % (2ull << 20))
		snprintf(align, sizeof(align), "; its start 0x%llx is not 2 MiB-aligned (aligned_alloc(2 << 20, ...))",
			 (unsigned long long)tp->region_addr);
	if (tb->vm_hg)
		snprintf(why, len, "THP not granted: %.0f %% on huge pages though advised MADV_HUGEPAGE (VmFlags hg): "
			 "advice after the first write leaves its pages 4 KiB until khugepaged collapses them; madvise "
			 "before touching it%s", 100 * r->backing.huge_fraction, align);
	else
		snprintf(why, len, "THP not granted: %.0f %% on huge pages, never advised MADV_HUGEPAGE (no hg in its "
			 "VmFlags): with THP in madvise mode, madvise(region, bytes, MADV_HUGEPAGE) before touching it%s",
			 100 * r->backing.huge_fraction, align);
}

/*
 * Not the declared page size: what the range got, and how to get the
 * declared one. "Despite MADV_NOHUGEPAGE" only where its VmFlags say nh:
 * a benchmark that never advised its 4k region did not ask for base pages.
 */
static void declared_mismatch(struct phase_result *r, const struct target_backing *tb)
{
	const struct region_backing *b = &r->backing;
	char why[400];

	if (r->spec.page.kind == PAGE_BASE && b->kind == PAGE_THP)
		snprintf(why, sizeof(why), "%.1f %% of the declared range's resident memory is on THP (%s)%s",
			 100 * b->huge_fraction, tb->exact ? "per page, pagemap" : "smaps, prorated to the range",
			 tb->vm_nh ? " despite MADV_NOHUGEPAGE (VmFlags nh): khugepaged or THP 'always' collapsed it"
				   : ": the range was never advised MADV_NOHUGEPAGE (no nh in its VmFlags); "
				     "madvise(region, bytes, MADV_NOHUGEPAGE) before touching it");
	else if (region_check_backing(&r->spec.page, b, why, sizeof(why)) == 0)
		return;
	else if (r->spec.page.kind == PAGE_THP)
		/* The benchmark's own doing, not tlbprof's options (--pages is no run option): what it should change. */
		thp_not_granted(r, tb, why, sizeof(why));
	snprintf(r->reason, sizeof(r->reason), "declared page=%s: %s", r->spec.page.label, why);
}

/* The declared page size against what the kernel gave the declared range (at phase end). */
static void verify_region(struct target_state *st, struct phase_result *r)
{
	struct target_phase *tp = r->target;
	struct region_backing b;
	struct target_backing tb;

	if (backing_read(st->pid, tp->region_addr, tp->region_bytes, &b, &tb) != 0)
		return;
	/* "2m" names the size the benchmark intends; a 2 MiB hugetlb region is what it asked for too. */
	if (r->spec.page.bytes == (2ull << 20) && b.kind == PAGE_HUGETLB && b.kernel_page_bytes == r->spec.page.bytes)
		page_request_parse("2m:hugetlb", &r->spec.page);
	r->backing = b;
	r->backing_known = true;
	tp->backing_exact = tb.exact;
	/* The least resident occurrence is the phase's (a chase over pages never written reads the zero page). */
	if (tp->resident_fraction < 0 || tb.resident_fraction < tp->resident_fraction)
		tp->resident_fraction = tb.resident_fraction;
	if (tb.exact && tb.pages && (double)tb.zero / (double)tb.pages > tp->zero_fraction)
		tp->zero_fraction = (double)tb.zero / (double)tb.pages;
	tp->vm_nh |= tb.vm_nh;
	tp->vm_hg |= tb.vm_hg;
	declared_mismatch(r, &tb);
}

/* Whether backing b is worse than a for a region declared on page size p (more THP on 4k, less on huge). */
static bool backing_worse(const struct page_request *p, const struct region_backing *a, const struct region_backing *b)
{
	if (p->kind == PAGE_BASE)
		return b->kind != PAGE_BASE && (a->kind == PAGE_BASE || b->huge_fraction > a->huge_fraction);
	return b->huge_fraction < a->huge_fraction || (b->kind != p->kind && a->kind == p->kind);
}

void target_declared_verify(struct target_state *st, struct phase_result *r)
{
	struct target_phase *tp = r->target;

	/*
	 * The command waits for the ack while smaps is read: verify on the 1st,
	 * 4th, 8th, 16th ... occurrence, which catches a backing that changes
	 * later (khugepaged) without taxing every boundary; an occurrence that
	 * declared another region is verified at once. The worst backing seen
	 * is kept: one contaminated occurrence contaminates the phase. Reading
	 * the pages slows the sample after it (the second after the 1st, 7 %
	 * at the median here): not after the 2nd, so that the third sample is
	 * clean for warmup_insufficient to judge the first against.
	 */
	unsigned k = tp->occurrences;
	if (tp->has_region && tp->has_page && (k == 1 || (k >= 4 && (k & (k - 1)) == 0) || tp->region_changed)) {
		struct region_backing before = r->backing;
		bool known = r->backing_known;
		verify_region(st, r);
		if (known && r->backing_known && !backing_worse(&r->spec.page, &before, &r->backing))
			r->backing = before;
		tp->region_changed = false;
	}
}

/* How much a self-check outcome says against the chain: a failure, then a pass, then a skip. */
static int check_weight(enum check_status s)
{
	return s == CHECK_FAIL ? 3 : s == CHECK_WARN ? 2 : s == CHECK_PASS ? 1 : 0;
}

/* Record check c on r: one entry per id, the worst outcome over the chains a phase declared. */
static void put_self_check(struct phase_result *r, const struct self_check *c)
{
	for (size_t i = 0; i < r->n_self_checks; i++) {
		if (strcmp(r->self_checks[i].id, c->id) != 0)
			continue;
		if (check_weight(c->status) > check_weight(r->self_checks[i].status))
			r->self_checks[i] = *c;
		return;
	}
	if (r->n_self_checks < PHASE_MAX_SELF_CHECKS)
		r->self_checks[r->n_self_checks++] = *c;
}

__attribute__((format(printf, 2, 3)))
static void not_inspected(struct phase_result *r, const char *fmt, ...)
{
	struct self_check c = { .id = "single_cycle", .status = CHECK_SKIP };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c.message, sizeof(c.message), fmt, ap);
	va_end(ap);
	put_self_check(r, &c);
}

/* The declared region, copied out of the command in 64 MiB reads (caller frees), or NULL with the reason in r. */
static char *copy_region(struct target_state *st, struct phase_result *r)
{
	struct target_phase *tp = r->target;
	char *copy = malloc(tp->region_bytes);
	uint64_t done = 0;
	int err = 0;

	while (copy && done < tp->region_bytes) {
		size_t chunk = (size_t)(tp->region_bytes - done < (64u << 20) ? tp->region_bytes - done : (64u << 20));
		struct iovec local = { copy + done, chunk };
		struct iovec remote = { (void *)(uintptr_t)(tp->region_addr + done), chunk };
		ssize_t n = process_vm_readv(st->pid, &local, 1, &remote, 1, 0);
		if (n <= 0) {
			err = n < 0 ? errno : EFAULT;	/* 0 bytes: the region ends before its declared length */
			break;
		}
		done += (uint64_t)n;
	}
	if (!copy || done < tp->region_bytes) {
		not_inspected(r, "not inspected: could not read the region from the process (%s)",
			      copy ? strerror(err) : "out of memory");
		free(copy);
		return NULL;
	}
	return copy;
}

/*
 * Copy the declared region out of the command and walk its chain with the
 * chase's self-checks (each distinct chain a phase declares; the worst
 * outcome stays).
 */
void target_declared_inspect_chain(struct target_state *st, struct phase_result *r)
{
	struct target_phase *tp = r->target;
	uint64_t avail = region_mem_available();
	struct self_check checks[2];
	struct chain_walk walk;

	if (tp->region_bytes > TARGET_CHAIN_COPY_MAX || (avail && tp->region_bytes > avail / 2)) {
		not_inspected(r, "not inspected: the %llu-byte region is too large to copy",
			      (unsigned long long)tp->region_bytes);
		return;
	}
	char *copy = copy_region(st, r);
	if (!copy)
		return;
	if (chain_check_foreign(copy, tp->region_addr, tp->region_bytes, tp->chain_addr, tp->slots_declared, checks,
				&walk) == 0) {
		put_self_check(r, &checks[0]);
		put_self_check(r, &checks[1]);
		tp->chain_inspected = true;
		tp->chain_cycle_slots = walk.cycle_slots;
		tp->chain_pages_covered = walk.pages_covered;
		tp->chain_span_bytes = walk.span_bytes;
		if (!tp->slots_declared && walk.expected_slots > 1)
			r->spec.stride_bytes = tp->region_bytes / walk.expected_slots;
		r->spec.layout = walk.aligned ? LAYOUT_ALIGNED : LAYOUT_COLORED;
		r->slots = walk.cycle_slots;
	}
	free(copy);
}
