/* SPDX-License-Identifier: MIT */
/* Names and parsers of the shared plain-data types, and of the enums of phases. */
#include "types.h"

#include <errno.h>
#include <string.h>
#include <strings.h>


static const struct {
	const char *spelling;
	const char *label;
	enum page_kind kind;
	uint64_t bytes;
} page_spellings[] = {
	{ "4k", "4k", PAGE_BASE, 4096ull },
	{ "2m", "2m", PAGE_THP, 2ull << 20 },
	{ "2m:thp", "2m", PAGE_THP, 2ull << 20 },
	{ "2m:hugetlb", "2m:hugetlb", PAGE_HUGETLB, 2ull << 20 },
	{ "1g", "1g", PAGE_HUGETLB, 1ull << 30 },
	{ "1g:hugetlb", "1g", PAGE_HUGETLB, 1ull << 30 },
};

const char *page_request_spelling(size_t i)
{
	return i < sizeof(page_spellings) / sizeof(page_spellings[0]) ? page_spellings[i].spelling : NULL;
}

int page_request_parse(const char *s, struct page_request *out)
{
	for (size_t i = 0; i < sizeof(page_spellings) / sizeof(page_spellings[0]); i++) {
		if (strcasecmp(s, page_spellings[i].spelling) == 0) {
			memset(out, 0, sizeof(*out));
			strcpy(out->label, page_spellings[i].label);
			out->kind = page_spellings[i].kind;
			out->bytes = page_spellings[i].bytes;
			return 0;
		}
	}
	return -EINVAL;
}

int name_lookup(const char *const *names, const char *s)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

const char *name_of(const char *const *names, unsigned v)
{
	for (unsigned i = 0; names[i]; i++)
		if (i == v)
			return names[i];
	return "?";
}

const char *const page_kind_names[] = { [PAGE_BASE] = "base", [PAGE_THP] = "thp", [PAGE_HUGETLB] = "hugetlb", NULL };

const char *page_kind_name(enum page_kind k)
{
	return name_of(page_kind_names, (unsigned)k);
}

const char *const layout_names[] = { [LAYOUT_COLORED] = "colored", [LAYOUT_ALIGNED] = "aligned", NULL };

const char *layout_name(enum chase_layout l)
{
	return name_of(layout_names, (unsigned)l);
}

const char *const controls_mode_names[] = {
	[CONTROLS_AUTO] = "auto", [CONTROLS_ALWAYS] = "always", [CONTROLS_NONE] = "none", NULL,
};

const char *const fail_on_names[] = {
	[FAIL_ON_FAIL] = "fail", [FAIL_ON_WARN] = "warn", [FAIL_ON_NEVER] = "never", NULL,
};

const char *fail_on_name(enum fail_on f)
{
	return name_of(fail_on_names, (unsigned)f);
}

static const char *const fault_case_names[FAULT_CASES] = {
	[FAULT_ANON_COLD] = "anon_cold", [FAULT_ANON_REFAULT] = "anon_refault", [FAULT_ANON_PREFAULT] = "anon_prefault",
	[FAULT_FILE_WARM] = "file_warm", [FAULT_FILE_COLD] = "file_cold",
};

const char *fault_case_name(int c)
{
	return c > FAULT_NONE && c < FAULT_CASES ? fault_case_names[c] : NULL;
}

const char *fault_case_at(size_t i)
{
	return fault_case_name((int)i + FAULT_NONE + 1);
}

int fault_case_from_name(const char *s)
{
	for (int c = FAULT_NONE + 1; c < FAULT_CASES; c++)
		if (strcmp(s, fault_case_names[c]) == 0)
			return c;
	return -1;
}
