/* SPDX-License-Identifier: MIT */
/* The plain-data vocabulary every stage shares: page requests, layouts, page-fault cases, check levels, formats. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/*
 * The names of an enum are one NULL-terminated array indexed by value
 * (designated initializers); its _name() function reads it ("?" out of
 * range) and name_lookup() inverts it: the value of s, or -1.
 */
int name_lookup(const char *const *names, const char *s);
/* The name of value v in names, "?" past the end. */
const char *name_of(const char *const *names, unsigned v);

/* "base", "thp", "hugetlb". */
extern const char *const page_kind_names[];
const char *page_kind_name(enum page_kind k);

/*
 * Parse one page request: "4k" (base pages), "2m" or "2m:thp" (THP),
 * "2m:hugetlb", "1g" or "1g:hugetlb" (hugetlb). Case-insensitive.
 * Returns 0 or -EINVAL.
 */
int page_request_parse(const char *s, struct page_request *out);
/* The i-th spelling page_request_parse() takes ("4k", "2m", "2m:thp", ...), NULL after the last. */
const char *page_request_spelling(size_t i);

enum chase_layout {
	LAYOUT_COLORED,	/* rotate each slot's line inside its stride: spread over all cache sets */
	LAYOUT_ALIGNED,	/* every slot at the start of its stride (the naive layout) */
};

/* "colored", "aligned": the names by value, NULL-terminated (the --layout choices). */
extern const char *const layout_names[];
const char *layout_name(enum chase_layout l);

/* The page-fault cases (--cases). */
enum fault_case {
	FAULT_NONE,		/* not a page-fault phase (zero, so zeroed specs are none) */
	FAULT_ANON_COLD,	/* fresh anonymous mapping, first write */
	FAULT_ANON_REFAULT,	/* touched, MADV_DONTNEED, touched again (timed) */
	FAULT_ANON_PREFAULT,	/* touched before timing: the timed touch must not fault */
	FAULT_FILE_WARM,	/* read-only file mapping, file in the page cache */
	FAULT_FILE_COLD,	/* the same, file evicted from the page cache */
	FAULT_CASES,
};
/* "anon_cold", ...; NULL when out of range. */
const char *fault_case_name(int c);
/* The i-th case name in order (i from 0: "anon_cold"), NULL after the last. */
const char *fault_case_at(size_t i);
/* Inverse of fault_case_name(); -1 when unknown. */
int fault_case_from_name(const char *s);
/* Whether a case maps a file (page size then is the page cache's, 4 KiB). */
static inline bool fault_case_is_file(int c)
{
	return c == FAULT_FILE_WARM || c == FAULT_FILE_COLD;
}

/* When to add "packed" control phases (same cache-line footprint on few pages). */
enum controls_mode {
	CONTROLS_AUTO,	/* when no dTLB counters can attribute the delta */
	CONTROLS_ALWAYS,
	CONTROLS_NONE,
};
/* "auto", "always", "none": the names by value, NULL-terminated (the --controls choices). */
extern const char *const controls_mode_names[];

/* Which check level makes the exit status 1. */
enum fail_on {
	FAIL_ON_FAIL,
	FAIL_ON_WARN,
	FAIL_ON_NEVER,
};
/* "fail", "warn", "never": the names by value, NULL-terminated (the --fail-on choices). */
extern const char *const fail_on_names[];
const char *fail_on_name(enum fail_on f);
