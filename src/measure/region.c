/* SPDX-License-Identifier: MIT */
/* Memory regions with a page-size policy: map, prefault, verify the real backing, unmap. */
#include "measure/region.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "machine/environment.h"
#include "machine/timing.h"
#include "stats.h"
#include "parse.h"
#include "measure/smaps.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

#define MIB (1ull << 20)

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

uint64_t region_mem_available(void)
{
	char buf[4096];
	const char *p;

	if (env_read_text("/proc/meminfo", buf, sizeof(buf)) != 0 || !*buf)
		return 0;
	p = strstr(buf, "MemAvailable:");
	if (!p)
		return 0;
	return strtoull(p + strlen("MemAvailable:"), NULL, 10) * 1024;
}

static int map_hugetlb(struct region *r, uint64_t bytes, char *why, size_t why_len)
{
	char path[128], sz[SIZE_TEXT];
	uint64_t kb = r->page.bytes / 1024, need = align_up(bytes, r->page.bytes) / r->page.bytes;
	struct env_hugepool pool;
	int shift = __builtin_ctzll(r->page.bytes);
	void *p;

	format_size(r->page.bytes, sz, sizeof(sz));
	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%llukB/nr_hugepages",
		 (unsigned long long)kb);
	if (environment_pool_read(r->page.bytes, &pool) != 0) {
		snprintf(why, why_len,
			 "this kernel has no hugetlb pool for %siB pages (/sys/kernel/mm/hugepages/hugepages-%llukB "
			 "missing)%s", sz, (unsigned long long)kb,
			 r->page.bytes == (1ull << 30) ? "; 1 GiB pages need CPU flag pdpe1gb and "
			 "boot parameters hugepagesz=1G hugepages=N" : "");
		return -EOPNOTSUPP;
	}
	/* The same count tlbprof env reports: reserved pages are free but promised to other mappings. */
	uint64_t free_pages = environment_pool_unreserved(&pool);
	long nr = pool.nr < 0 ? 0 : pool.nr;
	if (free_pages < need) {
		snprintf(why, why_len,
			 "hugetlb pool for %siB pages has %llu unreserved free of %ld, %llu needed; reserve them as root: "
			 "echo %llu > %s",
			 sz, (unsigned long long)free_pages, nr, (unsigned long long)need,
			 (unsigned long long)environment_pool_target(&pool, need), path);
		return -ENOMEM;
	}
	/*
	 * MAP_HUGETLB without MAP_NORESERVE reserves the pages at mmap time, so
	 * a pool that shrank since the check above fails here with ENOMEM
	 * instead of delivering SIGBUS on first touch.
	 */
	p = mmap(NULL, need * r->page.bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (shift << MAP_HUGE_SHIFT), -1, 0);
	if (p == MAP_FAILED) {
		int err = errno;
		snprintf(why, why_len, "mmap(MAP_HUGETLB, %siB pages) of %llu pages failed: %s; "
			 "reserve more as root: echo %llu > %s",
			 sz, (unsigned long long)need, strerror(err),
			 (unsigned long long)(need + (uint64_t)nr), path);
		return -err;
	}
	r->map_base = r->base = p;
	r->map_bytes = r->bytes = need * r->page.bytes;
	return 0;
}

/* The THP mode the kernel selected ("never", "madvise", "always"), parsed as tlbprof env parses it. */
static int thp_mode(char *mode, size_t len)
{
	char buf[128];

	if (env_read_text("/sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof(buf)) != 0 || !*buf)
		return -ENOENT;
	return env_parse_thp_selected(buf, mode, len);
}

static int map_anon(struct region *r, uint64_t bytes, char *why, size_t why_len)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	bool thp = r->page.kind == PAGE_THP;
	uint64_t align = thp ? r->page.bytes : page;
	uint64_t len = align_up(bytes, align);
	uint64_t avail = region_mem_available();
	char *p, *aligned;
	char mode[32] = "";

	if (avail && len > avail) {
		char a[SIZE_TEXT], b[SIZE_TEXT];
		snprintf(why, why_len, "the %sB working set does not fit: MemAvailable is %sB",
			 format_size(len, a, sizeof(a)), format_size(avail & ~(MIB - 1), b, sizeof(b)));
		return -ENOMEM;
	}
	if (thp && thp_mode(mode, sizeof(mode)) == 0 && strcmp(mode, "never") == 0) {
		snprintf(why, why_len, "transparent huge pages are disabled (enabled = never); as root: "
			 "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled");
		return -EOPNOTSUPP;
	}
	/* Over-allocate by one huge page and trim, so the region starts on a 2 MiB boundary. */
	p = mmap(NULL, len + (thp ? align : 0), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		int err = errno;
		snprintf(why, why_len, "mmap of %llu bytes failed: %s", (unsigned long long)len, strerror(err));
		return -err;
	}
	aligned = (char *)align_up((uintptr_t)p, align);
	if (thp) {
		/* Unmap the unaligned head and tail so the region is a VMA of its own. */
		if (aligned > p)
			munmap(p, (size_t)(aligned - p));
		if (aligned + len < p + len + align)
			munmap(aligned + len, (size_t)(p + len + align - (aligned + len)));
	}
	r->map_base = r->base = aligned;
	r->map_bytes = r->bytes = len;
	/*
	 * The advice also makes the region a VMA of its own (different flags
	 * from its neighbours), which keeps smaps figures about this region.
	 */
	if (madvise(aligned, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0) {
		int err = errno;
		snprintf(why, why_len, "madvise(%s) failed: %s%s", thp ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE",
			 strerror(err), thp ? " (kernel built without THP?)" : "");
		munmap(aligned, len);
		memset(r, 0, sizeof(*r));
		return err == EINVAL ? -EOPNOTSUPP : -err;
	}
	return 0;
}

int region_map(struct region *r, const struct page_request *page, uint64_t bytes, char *why, size_t why_len)
{
	int rc;

	memset(r, 0, sizeof(*r));
	r->page = *page;
	rc = page->kind == PAGE_HUGETLB ? map_hugetlb(r, bytes, why, why_len) : map_anon(r, bytes, why, why_len);
	if (rc) {
		memset(r, 0, sizeof(*r));
		r->page = *page;
	}
	return rc;
}

/*
 * A write to every base page of [base, base + bytes); the pages touched. Not
 * instrumented by AddressSanitizer: its shadow writes would fault shadow
 * pages (one per eight touched) inside the counted prefault.
 */
__attribute__((no_sanitize_address))
static uint64_t touch_pages(char *base, uint64_t bytes)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), n = 0;
	volatile char *p = base;

	for (uint64_t off = 0; off < bytes; off += page, n++)
		p[off] = 0;
	return n;
}

uint64_t region_prefault(struct region *r)
{
	return touch_pages(r->base, r->bytes);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

/* One madvise() faults every page of the range in; older kernels say EINVAL: touch then. True: the kernel did. */
static bool populate_range(char *base, uint64_t bytes)
{
	if (madvise(base, bytes, MADV_POPULATE_WRITE) == 0)
		return true;
	(void)touch_pages(base, bytes);
	return false;
}

void region_populate(struct region *r)
{
	/*
	 * Without an exception per page: about a third faster at 256 MiB of
	 * 4 KiB pages here. The kernel's page-fault counters do not see it,
	 * which is why the counted first allocation touches instead.
	 */
	(void)populate_range(r->base, r->bytes);
}

/*
 * The CPUs a helper may populate on: those the caller may run on, of the
 * NUMA node it runs on now. The default memory policy puts a page on the
 * node of the CPU that faults it in, so a helper on another socket would
 * hand the chase remote memory. Where the node's CPUs cannot be read on a
 * machine with more than one node, none (the caller populates alone).
 */
static unsigned helper_cpus(cpu_set_t *set)
{
	char path[64], list[4096];
	cpu_set_t allowed;
	unsigned cpu, node;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || getcpu(&cpu, &node) != 0)
		return 0;
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%u/cpulist", node);
	if (env_read_text(path, list, sizeof(list)) == 0 && parse_cpulist(list, set))
		CPU_AND(set, set, &allowed);
	else if (access("/sys/devices/system/node/node1", F_OK) != 0)
		*set = allowed;		/* one node, or a kernel without NUMA */
	else
		return 0;
	return (unsigned)CPU_COUNT(set);
}

struct populate_part {
	char *base;
	uint64_t bytes;
	pthread_t thread;
	bool started;
	struct region_populated done;	/* this part's */
};

/*
 * One write to every base page of [base, base + bytes), timed FIRST_ACCESS_CHUNK
 * pages at a time; the median chunk's ns per page times the pages written
 * (*pages). The median, not the total: a thread preempted for 4 ms over 2048
 * pages would add 2 µs to every page of a total.
 */
enum { FIRST_ACCESS_CHUNK = 64 };

__attribute__((no_sanitize_address))
static double first_access_timed(char *base, uint64_t bytes, uint64_t *pages)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), n = bytes / page, chunks = n / FIRST_ACCESS_CHUNK;
	double *per = chunks ? malloc(chunks * sizeof(*per)) : NULL;
	volatile char *p = base;
	double median;

	*pages = 0;
	if (!per) {
		(void)touch_pages(base, bytes);
		return 0;
	}
	for (uint64_t k = 0; k < chunks; k++) {
		uint64_t t0 = timing_now_ns();
		for (uint64_t i = k * FIRST_ACCESS_CHUNK; i < (k + 1) * FIRST_ACCESS_CHUNK; i++)
			p[i * page] = 0;
		per[k] = (double)(timing_now_ns() - t0) / FIRST_ACCESS_CHUNK;
	}
	(void)touch_pages(base + chunks * FIRST_ACCESS_CHUNK * page, bytes - chunks * FIRST_ACCESS_CHUNK * page);
	median = stats_median_inplace(per, chunks);
	free(per);
	*pages = n;
	return median * (double)n;
}

/*
 * The kernel populates the part, then one write per base page from here
 * maps it for user space, timed: natively that is a TLB miss, tens of ns;
 * where the hypervisor builds its own page tables as pages are used
 * (shadow paging), a trap each, microseconds, which this pays on the
 * helpers' CPUs instead of in the caller's chain build.
 */
static void populate_part(struct populate_part *p)
{
	if (populate_range(p->base, p->bytes))
		p->done.first_access_ns = first_access_timed(p->base, p->bytes, &p->done.pages);
}

static void *populate_part_run(void *arg)
{
	populate_part(arg);
	return NULL;
}

enum { POPULATE_THREADS = 4 };
#define POPULATE_MIN_PART (16 * MIB)

struct region_populated region_populate_parallel(struct region *r)
{
	struct populate_part parts[POPULATE_THREADS] = { 0 };
	struct region_populated sum = { 0 };
	uint64_t unit = r->page.bytes > POPULATE_MIN_PART ? r->page.bytes : POPULATE_MIN_PART;
	uint64_t units = r->bytes / unit, n = units < POPULATE_THREADS ? units : POPULATE_THREADS;
	pthread_attr_t attr;
	cpu_set_t cpus;

	if (n >= 2) {
		unsigned c = helper_cpus(&cpus);
		n = c < n ? c : n;
	}
	if (n < 2 || pthread_attr_init(&attr) != 0) {
		parts[0] = (struct populate_part){ .base = r->base, .bytes = r->bytes };
		populate_part(&parts[0]);
		return parts[0].done;
	}
	(void)pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	/* Whole units each, the caller's part first, and the remainder with the last. */
	for (uint64_t i = 0, per = units / n * unit; i < n; i++) {
		parts[i].base = (char *)r->base + i * per;
		parts[i].bytes = i + 1 == n ? r->bytes - i * per : per;
		if (i > 0)
			parts[i].started = pthread_create(&parts[i].thread, &attr, populate_part_run, &parts[i]) == 0;
	}
	pthread_attr_destroy(&attr);
	populate_part(&parts[0]);
	for (uint64_t i = 0; i < n; i++) {
		if (i > 0 && parts[i].started)
			pthread_join(parts[i].thread, NULL);
		else if (i > 0)
			populate_part(&parts[i]);
		sum.pages += parts[i].done.pages;
		sum.first_access_ns += parts[i].done.first_access_ns;
	}
	return sum;
}

int region_first_access_probe(uint64_t bytes, struct env_first_access *out)
{
	struct page_request base;
	struct region r;
	char why[400];

	*out = (struct env_first_access){ 0 };
	if (page_request_parse("4k", &base) != 0 || region_map(&r, &base, bytes, why, sizeof(why)) != 0)
		return -ENOMEM;
	struct populate_part part = { .base = r.base, .bytes = r.bytes };
	populate_part(&part);
	region_unmap(&r);
	if (!part.done.pages)
		return -EOPNOTSUPP;
	out->pages = part.done.pages;
	out->ns_per_page = part.done.first_access_ns / (double)part.done.pages;
	return 0;
}

int region_verify(const struct region *r, struct region_backing *out)
{
	return smaps_read(0, (uintptr_t)r->base, r->bytes, out);
}

int region_check_backing(const struct page_request *page, const struct region_backing *b, char *why,
			 size_t why_len)
{
	char want[SIZE_TEXT], got[SIZE_TEXT], huge[SIZE_TEXT], rss[SIZE_TEXT];

	format_size(page->bytes, want, sizeof(want));
	format_size(b->kernel_page_bytes, got, sizeof(got));
	format_size(b->anon_huge_bytes, huge, sizeof(huge));
	format_size(b->rss_bytes, rss, sizeof(rss));
	switch (page->kind) {
	case PAGE_BASE:
		if (b->kind == PAGE_BASE && b->kernel_page_bytes == page->bytes)
			return 0;
		snprintf(why, why_len,
			 "the 4k control is not on 4 KiB pages: KernelPageSize %sB, AnonHugePages %sB of %sB "
			 "despite MADV_NOHUGEPAGE; THP contaminates the control (check "
			 "/sys/kernel/mm/transparent_hugepage/enabled and khugepaged)", got, huge, rss);
		return -EOPNOTSUPP;
	case PAGE_THP:
		if (b->kind == PAGE_THP && b->anon_huge_bytes >= b->rss_bytes && b->rss_bytes)
			return 0;
		snprintf(why, why_len,
			 "THP not granted: AnonHugePages %sB of %sB resident (%.0f %%); memory may be fragmented "
			 "or defrag is off: check /sys/kernel/mm/transparent_hugepage/{enabled,defrag} "
			 "(want madvise or always), try as root: echo 1 > /proc/sys/vm/compact_memory, "
			 "or use --pages 2m:hugetlb", huge, rss, 100.0 * b->huge_fraction);
		return -EOPNOTSUPP;
	case PAGE_HUGETLB:
		if (b->kind == PAGE_HUGETLB && b->kernel_page_bytes == page->bytes)
			return 0;
		snprintf(why, why_len, "hugetlb region has KernelPageSize %sB, not the requested %sB", got, want);
		return -EOPNOTSUPP;
	}
	return -EINVAL;
}

void region_unmap(struct region *r)
{
	if (r->map_base && r->map_bytes)
		munmap(r->map_base, r->map_bytes);
	r->map_base = r->base = NULL;
	r->map_bytes = r->bytes = 0;
}
