/* SPDX-License-Identifier: MIT */
/* Golden tables for the option-value parsers: sizes, counts, fractions, lists. */
#include <errno.h>
#include <stdint.h>

#include "check.h"
#include "types.h"
#include "parse.h"

static const struct {
	int line;
	const char *in;
	int rc;
	uint64_t out;
} sizes[] = {
	{ __LINE__, "4096", 0, 4096 },
	{ __LINE__, "4k", 0, 4096 },
	{ __LINE__, "4K", 0, 4096 },
	{ __LINE__, "4KiB", 0, 4096 },
	{ __LINE__, "4KB", 0, 4096 },
	{ __LINE__, "256M", 0, 268435456 },
	{ __LINE__, "1G", 0, 1073741824 },
	{ __LINE__, "2T", 0, 2ull << 40 },
	{ __LINE__, "0", 0, 0 },
	{ __LINE__, "64B", 0, 64 },
	{ __LINE__, "", -EINVAL, 0 },
	{ __LINE__, "k", -EINVAL, 0 },
	{ __LINE__, "-4k", -EINVAL, 0 },
	{ __LINE__, "+4k", -EINVAL, 0 },
	{ __LINE__, " 4k", -EINVAL, 0 },
	{ __LINE__, "4k ", -EINVAL, 0 },
	{ __LINE__, "1.5G", -EINVAL, 0 },
	{ __LINE__, "4X", -EINVAL, 0 },
	{ __LINE__, "4kk", -EINVAL, 0 },
	{ __LINE__, "0x1000", -EINVAL, 0 },
	{ __LINE__, "16777216T", -ERANGE, 0 },
	{ __LINE__, "99999999999999999999", -ERANGE, 0 },
	{ __LINE__, "18446744073709551615", 0, UINT64_MAX },
	{ __LINE__, "18446744073709551616", -ERANGE, 0 },
};

static const struct {
	int line;
	const char *in;
	int rc;
	uint64_t out;
} counts[] = {
	{ __LINE__, "20M", 0, 20000000 },
	{ __LINE__, "5", 0, 5 },
	{ __LINE__, "3k", 0, 3000 },
	{ __LINE__, "2G", 0, 2000000000 },
	{ __LINE__, "1.5M", -EINVAL, 0 },
	{ __LINE__, "abc", -EINVAL, 0 },
	{ __LINE__, "-1", -EINVAL, 0 },
	{ __LINE__, "5m", -EINVAL, 0 },
	{ __LINE__, "20000000000G", -ERANGE, 0 },
};

static const struct {
	int line;
	const char *in;
	int rc;
	const char *label;
	enum page_kind kind;
	uint64_t bytes;
} pages[] = {
	{ __LINE__, "4k", 0, "4k", PAGE_BASE, 4096 },
	{ __LINE__, "4K", 0, "4k", PAGE_BASE, 4096 },
	{ __LINE__, "2m", 0, "2m", PAGE_THP, 2u << 20 },
	{ __LINE__, "2m:thp", 0, "2m", PAGE_THP, 2u << 20 },
	{ __LINE__, "2m:hugetlb", 0, "2m:hugetlb", PAGE_HUGETLB, 2u << 20 },
	{ __LINE__, "1g", 0, "1g", PAGE_HUGETLB, 1u << 30 },
	{ __LINE__, "1G:hugetlb", 0, "1g", PAGE_HUGETLB, 1u << 30 },
	{ __LINE__, "8k", -EINVAL, "", PAGE_BASE, 0 },
	{ __LINE__, "4k:thp", -EINVAL, "", PAGE_BASE, 0 },
	{ __LINE__, "", -EINVAL, "", PAGE_BASE, 0 },
	{ __LINE__, "2m:", -EINVAL, "", PAGE_BASE, 0 },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t v = 12345;
		int rc = parse_size(sizes[i].in, &v);
		CHECK_ROW(sizes[i].line, rc == sizes[i].rc, "parse_size('%s') = %d, want %d", sizes[i].in, rc,
			  sizes[i].rc);
		if (rc == 0)
			CHECK_ROW(sizes[i].line, v == sizes[i].out, "parse_size('%s') = %llu", sizes[i].in,
				  (unsigned long long)v);
	}
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		uint64_t v = 12345;
		int rc = parse_count(counts[i].in, &v);
		CHECK_ROW(counts[i].line, rc == counts[i].rc, "parse_count('%s') = %d, want %d", counts[i].in, rc,
			  counts[i].rc);
		if (rc == 0)
			CHECK_ROW(counts[i].line, v == counts[i].out, "parse_count('%s') = %llu", counts[i].in,
				  (unsigned long long)v);
	}
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		struct page_request pr;
		int rc = page_request_parse(pages[i].in, &pr);
		CHECK_ROW(pages[i].line, rc == pages[i].rc, "page_request_parse('%s') = %d", pages[i].in, rc);
		if (rc == 0) {
			CHECK_ROW(pages[i].line, strcmp(pr.label, pages[i].label) == 0, "label %s", pr.label);
			CHECK_ROW(pages[i].line, pr.kind == pages[i].kind, "kind %d", pr.kind);
			CHECK_ROW(pages[i].line, pr.bytes == pages[i].bytes, "bytes %llu", (unsigned long long)pr.bytes);
		}
	}

	double d;
	CHECK(parse_double("0.1", &d) == 0 && d == 0.1, "0.1");
	CHECK(parse_double("1e-2", &d) == 0 && d == 0.01, "1e-2");
	CHECK(parse_double("", &d) == -EINVAL, "empty");
	CHECK(parse_double("0.1x", &d) == -EINVAL, "trailing junk");
	CHECK(parse_double("nan", &d) == -EINVAL, "nan");
	CHECK(parse_double("inf", &d) == -EINVAL, "inf");

	char buf[16];
	CHECK(strcmp(format_size(268435456, buf, sizeof(buf)), "256M") == 0, "%s", buf);
	CHECK(strcmp(format_size(16384, buf, sizeof(buf)), "16K") == 0, "%s", buf);
	CHECK(strcmp(format_size(1536ull << 20, buf, sizeof(buf)), "1536M") == 0, "%s", buf);
	CHECK(strcmp(format_size(1ull << 30, buf, sizeof(buf)), "1G") == 0, "%s", buf);
	CHECK(strcmp(format_size(100, buf, sizeof(buf)), "100") == 0, "%s", buf);
	CHECK(strcmp(format_size(0, buf, sizeof(buf)), "0") == 0, "%s", buf);
	/* The widest: 20 digits, no suffix, fits SIZE_TEXT with "B" and the NUL. */
	char wide[SIZE_TEXT];
	CHECK(strcmp(format_size(UINT64_MAX, wide, sizeof(wide)), "18446744073709551615") == 0, "%s", wide);
	CHECK(strcmp(format_bytes(UINT64_MAX, wide, sizeof(wide)), "18446744073709551615B") == 0, "%s", wide);
	CHECK(strcmp(format_bytes(256ull << 20, wide, sizeof(wide)), "256MiB") == 0, "%s", wide);
	CHECK(strcmp(format_bytes(100000, wide, sizeof(wide)), "100000B") == 0, "%s", wide);
	CHECK(strcmp(format_bytes(0, wide, sizeof(wide)), "0B") == 0, "%s", wide);

	char l1[] = "4k,2m,1g", *items[4];
	CHECK(parse_list(l1, items, 4) == 3, "three items");
	CHECK(strcmp(items[0], "4k") == 0 && strcmp(items[1], "2m") == 0 && strcmp(items[2], "1g") == 0, "items");
	char l2[] = "4k,,2m", l3[] = "", l4[] = "4k,", l5[] = ",4k", l6[] = "a,b,c,d,e";
	CHECK(parse_list(l2, items, 4) == -EINVAL, "empty middle");
	CHECK(parse_list(l3, items, 4) == -EINVAL, "empty list");
	CHECK(parse_list(l4, items, 4) == -EINVAL, "trailing comma");
	CHECK(parse_list(l5, items, 4) == -EINVAL, "leading comma");
	CHECK(parse_list(l6, items, 4) == -E2BIG, "too many");

	/* Kernel cpu lists: the count, and the set where one is asked for. */
	static const struct {
		int line;
		const char *list;
		unsigned cpus;
	} lists[] = {
		{ __LINE__, "0", 1 },	   { __LINE__, "0-3", 4 },   { __LINE__, "0-3,8,10-11\n", 7 },
		{ __LINE__, "1,3", 2 },	   { __LINE__, "", 0 },	     { __LINE__, "3-1", 0 },
		{ __LINE__, "0-", 0 },	   { __LINE__, "a", 0 },     { __LINE__, "-1", 0 },
		{ __LINE__, "0-2047", 2048 },	{ __LINE__, "0-4294967295", 0 }, { __LINE__, " 1", 0 },
		{ __LINE__, "1,", 1 },
	};
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		CHECK_ROW(lists[i].line, parse_cpulist(lists[i].list, NULL) == lists[i].cpus, "'%s': %u", lists[i].list,
			  parse_cpulist(lists[i].list, NULL));
	cpu_set_t set;
	CHECK(parse_cpulist("0-3,8,10-11\n", &set) == 7 && CPU_COUNT(&set) == 7 && CPU_ISSET(8, &set) &&
		      !CPU_ISSET(9, &set) && CPU_ISSET(11, &set) && !CPU_ISSET(12, &set),
	      "the set holds what the list names");
	CHECK(parse_cpulist("0-2047", &set) == 2048 && CPU_COUNT(&set) == CPU_SETSIZE, "past CPU_SETSIZE: counted, not set");
	CHECK(parse_cpulist("0-3,x", &set) == 0 && CPU_COUNT(&set) == 0, "a malformed list leaves the set empty");
	return check_finish();
}
