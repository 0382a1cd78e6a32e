/* SPDX-License-Identifier: MIT */
/* Page-fault cost: one timed touch per base page of fresh memory, anonymous (cold, refault, prefaulted) or file-backed (warm, cold). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cleanup.h"
#include "parse.h"
#include "measure/plan.h"
#include "measure/region.h"
#include "measure/workload.h"

#define BASE_PAGE 4096u
/* The filesystem must keep this much beyond the data file: never fill a disk to measure it. */
#define DISK_MARGIN_BYTES (64ull << 20)
/* file_cold is measured only when at most this fraction of the file is still resident. */
#define MAX_COLD_RESIDENT 0.01

struct pagefault_state {
	int fault_case;
	struct page_request page;
	uint64_t bytes;		/* mapping length, whole base pages */
	uint64_t pages;
	struct region region;	/* anonymous cases: this sample's mapping (anon_refault: every sample's) */
	char path[4096];	/* file cases: the data file */
	bool own_file;		/* made here: removed on release */
	int cleanup_slot;	/* own_file: its cleanup.h slot, so that a fatal signal removes it too */
	int fd;
	void *map;		/* file cases: this sample's mapping */
	bool drop_caches;
	volatile uint64_t sink;
};

#define DEFAULT_CASES "anon_cold,anon_refault,anon_prefault,file_warm,file_cold"
#define MAX_PROCESSES 100

/* --cases: known names, each once. */
static enum option_result set_cases(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	struct plan_request *req = opts;
	char buf[512], *items[FAULT_CASES + 1];
	int n = option_split_list(o, arg, "cases", buf, sizeof(buf), items, FAULT_CASES - 1, msg, len);

	if (n < 0)
		return OPTION_USAGE;
	req->n_cases = 0;
	for (int i = 0; i < n; i++) {
		int c = fault_case_from_name(items[i]);
		if (c < 0)
			return option_error(msg, len, "--cases '%s': unknown case '%s' (use %s)", arg, items[i], DEFAULT_CASES);
		for (size_t j = 0; j < req->n_cases; j++)
			if (req->cases[j] == c)
				return option_error(msg, len, "--cases '%s': '%s' listed twice", arg, items[i]);
		req->cases[req->n_cases++] = c;
	}
	return OPTION_OK;
}

static enum option_result set_dir(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	struct stat st;

	(void)o;
	if (stat(arg, &st) != 0 || !S_ISDIR(st.st_mode) || access(arg, W_OK | X_OK) != 0)
		return option_error(msg, len, "--dir '%s': not a writable directory", arg);
	((struct plan_request *)opts)->dir = arg;
	return OPTION_OK;
}

static enum option_result set_drop_caches(const struct option_spec *o, const char *arg, void *opts, char *msg,
					  size_t len)
{
	(void)o;
	(void)arg;
	if (geteuid() != 0)
		return option_error(msg, len, "--drop-caches: needs root (it writes /proc/sys/vm/drop_caches)");
	((struct plan_request *)opts)->drop_caches = true;
	return OPTION_OK;
}

/*
 * The file cases' data file goes into --dir, else $TMPDIR: a TMPDIR that is
 * missing or read-only is refused before anything runs, as --dir is.
 */
static int pagefault_validate(const struct plan_request *req, char *msg, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	bool file = false;
	struct stat st;

	for (size_t c = 0; c < req->n_cases; c++)
		file |= fault_case_is_file(req->cases[c]);
	if (!file || req->dir || req->child || !tmp || !*tmp)
		return 0;
	if (stat(tmp, &st) != 0 || !S_ISDIR(st.st_mode) || access(tmp, W_OK | X_OK) != 0) {
		option_error(msg, len, "TMPDIR '%s': not a writable directory (the file cases' data file goes there; "
			     "or give --dir)", tmp);
		return -EINVAL;
	}
	return 0;
}

static const struct option_spec pagefault_params[] = {
	{ .name = "cases", .value = "LIST", .help = "anon_cold, anon_refault, anon_prefault, file_warm,\nfile_cold",
	  .def = DEFAULT_CASES, .def_help = "all five", .set = set_cases, .choice_at = fault_case_at,
	  .complete = OPTION_COMPLETE_LIST },
	{ .name = "processes", .value = "N",
	  .help = "separate processes per case, 1 to " OPTION_STR(MAX_PROCESSES) ": allocator and\npage-cache state do not carry over",
	  .def = "5", .set = option_set_count, .offset = offsetof(struct plan_request, processes), .min = 1,
	  .max = MAX_PROCESSES },
	{ .name = "dir", .value = "DIR", .help = "directory of the data file of the file cases\n",
	  .def_help = "$TMPDIR or /tmp", .set = set_dir, .complete = OPTION_COMPLETE_DIR },
	{ .name = "drop-caches", .help = "file_cold: also drop the global page cache (root)", .set = set_drop_caches },
	{ 0 },
};

static const struct workload_default pagefault_defaults[] = {
	/*
	 * No cache-busting working set is needed: fault cost is per page. 128M, not the 200M it was: the default
	 * ran 16-17 s here, and 9 s at 128M with every median within the spread of the 200M runs beside it
	 * (BENCHMARKS.md); below that, file_cold's fixed cost per sample (the first read from the disk) shows in
	 * its ns per page (+15 % at 96M, +40 % at 64M).
	 */
	{ .option = "size", .value = "128M" },
	{ 0 },
};

/* Write `bytes` of non-zero data (zero pages could be deduplicated or sparse) and make it durable. */
static int fill_file(int fd, uint64_t bytes)
{
	enum { CHUNK = 1 << 20 };
	char *buf = malloc(CHUNK);
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < CHUNK; i++)
		buf[i] = (char)(i * 131 + 7);
	for (uint64_t off = 0; off < bytes && !rc;) {
		size_t n = bytes - off < CHUNK ? (size_t)(bytes - off) : CHUNK;
		ssize_t w = pwrite(fd, buf, n, (off_t)off);
		if (w < 0 && errno != EINTR)
			rc = -errno;
		else if (w > 0)
			off += (uint64_t)w;
	}
	free(buf);
	if (!rc && fsync(fd) != 0)
		rc = -errno;
	return rc;
}

static int open_data_file(struct pagefault_state *st, const struct phase_spec *ph, char *why, size_t why_len)
{
	struct statvfs vfs;
	char need[SIZE_TEXT], have[SIZE_TEXT];
	const char *tmp = getenv("TMPDIR"), *dir = ph->dir ? ph->dir : tmp && *tmp ? tmp : "/tmp";

	if (ph->file) {
		/* A child process: the parent made the file. */
		snprintf(st->path, sizeof(st->path), "%s", ph->file);
		st->fd = open(st->path, O_RDONLY | O_CLOEXEC);
		if (st->fd < 0) {
			int err = errno;
			snprintf(why, why_len, "cannot open the data file '%s': %s", st->path, strerror(err));
			return -err;
		}
		return 0;
	}
	/* Refuse a filesystem too small before writing anything. */
	if (statvfs(dir, &vfs) != 0) {
		int err = errno;
		snprintf(why, why_len, "--dir '%s': %s", dir, strerror(err));
		return -err;
	}
	uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	if (avail < st->bytes + DISK_MARGIN_BYTES) {
		snprintf(why, why_len, "--dir '%s' has %sB free, the data file needs %sB plus %llu MiB to spare; "
			 "use a smaller --size or another --dir", dir, format_size(avail & ~0xfffffull, have, sizeof(have)),
			 format_size(st->bytes, need, sizeof(need)), DISK_MARGIN_BYTES >> 20);
		return -ENOSPC;
	}
	snprintf(st->path, sizeof(st->path), "%s/tlbprof-pagefault-XXXXXX", dir);
	/* No signal between making the file and remembering it: a second Ctrl-C must not leave --size bytes behind. */
	sigset_t old;
	cleanup_block(&old);
	st->fd = mkostemp(st->path, O_CLOEXEC);
	st->cleanup_slot = st->fd >= 0 ? cleanup_add(st->path) : -1;
	cleanup_unblock(&old);
	if (st->fd < 0) {
		int err = errno;
		snprintf(why, why_len, "cannot create a data file in '%s': %s", dir, strerror(err));
		return -err;
	}
	st->own_file = true;
	int rc = fill_file(st->fd, st->bytes);
	if (rc) {
		snprintf(why, why_len, "cannot write the %sB data file in '%s': %s", format_size(st->bytes, need, sizeof(need)),
			 dir, strerror(-rc));
		return rc;
	}
	return 0;
}

static void pagefault_release(void *state)
{
	struct pagefault_state *st = state;

	if (!st)
		return;
	region_unmap(&st->region);
	if (st->map)
		munmap(st->map, st->bytes);
	if (st->fd >= 0)
		close(st->fd);
	if (st->own_file) {
		sigset_t old;
		cleanup_block(&old);
		unlink(st->path);
		cleanup_forget(st->cleanup_slot);
		cleanup_unblock(&old);
	}
	free(st);
}

static int pagefault_prepare(void **state, const struct phase_spec *ph, struct region *region,
			     struct self_check *checks, size_t *n_checks, struct prepare_info *info, char *why, size_t why_len)
{
	struct pagefault_state *st = calloc(1, sizeof(*st));
	int rc;

	(void)region;
	*state = NULL;
	if (!st)
		return -ENOMEM;
	st->fd = -1;
	st->fault_case = ph->fault_case;
	st->page = ph->page;
	st->pages = ph->iterations;	/* the plan rounded the size up to whole pages of the request */
	st->bytes = st->pages * BASE_PAGE;
	st->drop_caches = ph->drop_caches;
	if (fault_case_is_file(st->fault_case) && (rc = open_data_file(st, ph, why, why_len)) != 0) {
		pagefault_release(st);
		return rc;
	}
	checks[0] = (struct self_check){ .id = "one_touch_per_page", .status = CHECK_PASS };
	snprintf(checks[0].message, sizeof(checks[0].message), "each sample touches each of %llu base pages once (%s)",
		 (unsigned long long)st->pages, fault_case_is_file(st->fault_case) ? "read" : "write");
	*n_checks = 1;
	info->units = st->pages;
	*state = st;
	return 0;
}

/*
 * Write one byte per base page: first writes allocate (a read would only map
 * the shared zero page). Not instrumented by AddressSanitizer, whose shadow
 * writes would add faults of their own to the ones counted.
 */
__attribute__((no_sanitize_address))
static void touch_write(char *p, uint64_t pages)
{
	for (uint64_t i = 0; i < pages; i++)
		((volatile char *)p)[i * BASE_PAGE] = 1;
}

/* Fraction of [p, p+bytes) resident, by mincore(); -1 on error. */
static double resident_fraction(void *p, uint64_t bytes)
{
	uint64_t pages = bytes / BASE_PAGE, resident = 0;
	unsigned char *vec = malloc(pages ? pages : 1);

	if (!vec)
		return -1;
	if (mincore(p, bytes, vec) != 0) {
		free(vec);
		return -1;
	}
	for (uint64_t i = 0; i < pages; i++)
		resident += vec[i] & 1;
	free(vec);
	return pages ? (double)resident / (double)pages : 0;
}

/* Bring the whole file into the page cache through the fd, not through a mapping we then keep. */
static void read_file(struct pagefault_state *st)
{
	char buf[1 << 16];

	for (off_t off = 0; (uint64_t)off < st->bytes;) {
		ssize_t n = pread(st->fd, buf, sizeof(buf), off);
		if (n <= 0)
			break;
		off += n;
	}
}

static int setup_file(struct pagefault_state *st, struct fault_sample *out, char *why, size_t why_len)
{
	if (st->fault_case == FAULT_FILE_COLD) {
		/* Cold: evict this file's pages (no root needed); optionally the whole page cache. */
		fdatasync(st->fd);
		posix_fadvise(st->fd, 0, 0, POSIX_FADV_DONTNEED);
		if (st->drop_caches) {
			sync();
			int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
			if (fd >= 0) {
				if (write(fd, "1", 1) != 1) {
					/* reported through the resident fraction below */
				}
				close(fd);
			}
		}
	}
	st->map = mmap(NULL, st->bytes, PROT_READ, MAP_SHARED, st->fd, 0);
	if (st->map == MAP_FAILED) {
		int err = errno;
		st->map = NULL;
		snprintf(why, why_len, "mmap of the data file failed: %s", strerror(err));
		return -err;
	}
	out->resident_before = resident_fraction(st->map, st->bytes);
	/* Warm: read it in where any of it is not in the page cache (mincore() says: a read of all 128 MiB is not free). */
	if (st->fault_case == FAULT_FILE_WARM && out->resident_before < 1) {
		read_file(st);
		out->resident_before = resident_fraction(st->map, st->bytes);
	}
	if (st->fault_case == FAULT_FILE_COLD && !(out->resident_before >= 0 && out->resident_before <= MAX_COLD_RESIDENT)) {
		snprintf(why, why_len, "could not evict the data file: %.1f %% still resident after "
			 "POSIX_FADV_DONTNEED (limit %.0f %%); a filesystem like tmpfs keeps its pages: use --dir on a disk%s",
			 100 * out->resident_before, 100 * MAX_COLD_RESIDENT, st->drop_caches ? "" : ", or --drop-caches as root");
		munmap(st->map, st->bytes);
		st->map = NULL;
		return -EAGAIN;
	}
	return 0;
}

static int pagefault_sample_setup(void *state, struct fault_sample *out, char *why, size_t why_len)
{
	struct pagefault_state *st = state;
	int rc;

	out->resident_before = 0;
	if (fault_case_is_file(st->fault_case))
		return setup_file(st, out, why, why_len);
	/*
	 * anon_refault keeps its mapping from one sample to the next: the last sample's timed touch left every
	 * page present, with its page tables, as a populate would, so MADV_DONTNEED below starts the next sample
	 * from the same state as a fresh mapping populated and dropped, at half the untimed work (the populate's
	 * zeroing of every page was as costly as the timed faults themselves).
	 */
	if (!(st->fault_case == FAULT_ANON_REFAULT && st->region.base)) {
		rc = region_map(&st->region, &st->page, st->bytes, why, why_len);
		if (rc)
			return rc;
		/*
		 * Untimed, so the cheapest way in: one MADV_POPULATE_WRITE, with no exception per page, leaves the
		 * same pages and page tables as a touch of each (a third faster here; a touch where the kernel lacks
		 * it).
		 */
		if (st->fault_case == FAULT_ANON_REFAULT || st->fault_case == FAULT_ANON_PREFAULT)
			region_populate(&st->region);
	}
	/* MADV_DONTNEED drops the pages: the next touch faults in fresh zeroed ones. */
	if (st->fault_case == FAULT_ANON_REFAULT && madvise(st->region.base, st->region.bytes, MADV_DONTNEED) != 0) {
		int err = errno;
		snprintf(why, why_len, "madvise(MADV_DONTNEED) failed: %s", strerror(err));
		region_unmap(&st->region);
		return -err;
	}
	out->resident_before = resident_fraction(st->region.base, st->bytes);
	return 0;
}

/*
 * The timed part, the same loop for every case: one access per base page in
 * address order. Anonymous memory is written (a read of untouched anonymous
 * memory maps the shared zero page and allocates nothing); the file mapping
 * is read-only, so it is read. (Not instrumented by AddressSanitizer, as above.)
 */
__attribute__((no_sanitize_address))
static void pagefault_run(void *state, uint64_t accesses)
{
	struct pagefault_state *st = state;
	uint64_t pages = accesses < st->pages ? accesses : st->pages, sum = 0;

	if (fault_case_is_file(st->fault_case)) {
		const char *p = st->map;
		for (uint64_t i = 0; p && i < pages; i++)
			sum += ((const volatile char *)p)[i * BASE_PAGE];
	} else if (st->region.base) {
		touch_write(st->region.base, pages);
	}
	st->sink += sum;
}

static bool pagefault_sample_teardown(void *state, struct region_backing *backing)
{
	struct pagefault_state *st = state;
	bool known = false;

	if (st->region.base) {
		known = region_verify(&st->region, backing) == 0;
		if (st->fault_case != FAULT_ANON_REFAULT)	/* kept for the next sample; pagefault_release unmaps it */
			region_unmap(&st->region);
	}
	if (st->map) {
		munmap(st->map, st->bytes);
		st->map = NULL;
	}
	return known;
}

static const char *pagefault_data_file(void *state)
{
	struct pagefault_state *st = state;

	return st && st->own_file ? st->path : NULL;
}

/* One phase per size x case x page size (file cases: 4k only), touching every base page once per sample. */
static int pagefault_expand(const struct plan_request *req, const struct plan_context *ctx, struct plan *out)
{
	struct page_request base;

	(void)ctx;
	page_request_parse("4k", &base);
	for (size_t s = 0; s < req->n_sizes; s++) {
		for (size_t c = 0; c < req->n_cases; c++) {
			bool file = fault_case_is_file(req->cases[c]);
			for (size_t p = 0; p < (file ? 1 : req->n_pages); p++) {
				const struct page_request *page = file ? &base : &req->pages[p];
				struct phase_spec *ph = plan_add(out, req, page, req->sizes_bytes[s]);
				char size[SIZE_TEXT];
				if (!ph)
					return -ENOMEM;
				ph->fault_case = req->cases[c];
				ph->stride_bytes = BASE_PAGE;
				/*
				 * Whole pages of the request: a huge-page fault zeroes the whole
				 * huge page, so a partial one would charge it to a few 4 KiB pages.
				 */
				uint64_t unit = page->kind == PAGE_BASE ? BASE_PAGE : page->bytes;
				ph->iterations = (req->sizes_bytes[s] + unit - 1) / unit * unit / BASE_PAGE;
				ph->warmup_iterations = 0;	/* a warm-up would take the very faults we time */
				ph->iterations_auto = false;	/* a sample touches every page once, by definition */
				ph->allocations = 1;		/* every sample is a fresh allocation already */
				ph->processes = req->child ? 1 : req->processes;
				plan_name(ph, "pagefault/%s/%s/%s", page->label,
					  format_size(req->sizes_bytes[s], size, sizeof(size)), fault_case_name(ph->fault_case));
			}
		}
	}
	return 0;
}

const struct workload_ops workload_pagefault = {
	.name = "pagefault",
	.description = "cost of page faults: anonymous cold/refault/prefaulted, file-backed warm/cold",
	.params = pagefault_params,
	.defaults = pagefault_defaults,
	.sweep = WORKLOAD_SWEEP_FAULT_CASES,
	.latency = false,
	.per_sample_memory = true,
	.faults_expected = true,
	.prepare = pagefault_prepare,
	.run = pagefault_run,
	.release = pagefault_release,
	.sample_setup = pagefault_sample_setup,
	.sample_teardown = pagefault_sample_teardown,
	.data_file = pagefault_data_file,
	.expand = pagefault_expand,
	.validate = pagefault_validate,
};
