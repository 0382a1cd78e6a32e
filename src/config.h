/* SPDX-License-Identifier: MIT */
/* The run configuration the command line produces: plain data, validated, read-only after cli_parse(). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONFIG_MAX_PAGES 8
#define CONFIG_MAX_SIZES 32

/* How a page size is obtained. */
enum page_kind {
	PAGE_BASE,	/* the kernel's base page (4 KiB), THP disabled for the region */
	PAGE_THP,	/* transparent huge pages (2 MiB) via MADV_HUGEPAGE */
	PAGE_HUGETLB,	/* hugetlbfs pool pages via MAP_HUGETLB (2 MiB or 1 GiB) */
};

/* One requested page size, e.g. "4k", "2m", "2m:hugetlb", "1g". */
struct page_request {
	char label[16];		/* canonical spelling, used in phase names */
	enum page_kind kind;
	uint64_t bytes;		/* requested page size */
};

/* "base", "thp", "hugetlb". */
const char *page_kind_name(enum page_kind k);

/*
 * Parse one page request: "4k" (base pages), "2m" or "2m:thp" (THP),
 * "2m:hugetlb", "1g" or "1g:hugetlb" (hugetlb). Case-insensitive.
 * Returns 0 or -EINVAL.
 */
int page_request_parse(const char *s, struct page_request *out);

enum chase_layout {
	LAYOUT_COLORED,	/* rotate each slot's line inside its stride: spread over all cache sets */
	LAYOUT_ALIGNED,	/* every slot at the start of its stride (the naive layout) */
};

/* "colored", "aligned". */
const char *layout_name(enum chase_layout l);

struct workload_ops;

struct tlbprof_config {
	const struct workload_ops *workload;
	struct page_request pages[CONFIG_MAX_PAGES];
	size_t n_pages;
	uint64_t sizes_bytes[CONFIG_MAX_SIZES];
	size_t n_sizes;
	uint64_t stride_bytes;
	uint64_t iterations;		/* timed accesses per sample */
	double warmup_frac;		/* warm-up accesses = warmup_frac * iterations */
	unsigned repeat;		/* timed samples per phase */
	uint64_t seed;
	int cpu;			/* CPU to pin to, -1 = not pinned */
	enum chase_layout layout;
	const char *events_dir;		/* NULL: installed default */
	const char *json_path;		/* NULL: no JSON; "-": stdout */
	bool quiet;
	/* The command line as given, for the report (borrowed from main's argv). */
	int argc;
	char **argv;
};
