/* SPDX-License-Identifier: MIT */
/* Short labels the table, the JSON and the formats share: a phase's verified backing, a signal's name. */
#include <stdio.h>
#include <string.h>

#include "parse.h"
#include "report/internal.h"
#include "report/report.h"

/* A short label of the verified backing: "base 4K", "thp 100% 2M", "-" when unknown. */
void report_backing_label(const struct phase_result *r, char *buf, size_t len)
{
	char sz[SIZE_TEXT];

	if (!r->backing_known) {
		snprintf(buf, len, "-");
		return;
	}
	if (r->backing.kind == PAGE_THP)
		snprintf(buf, len, "thp %.0f%% 2M", 100.0 * r->backing.huge_fraction);
	else
		snprintf(buf, len, "%s %s", page_kind_name(r->backing.kind),
			 format_size(r->backing.kernel_page_bytes, sz, sizeof(sz)));
}

/* "SIGSEGV" for SIGSEGV, "?" for a signal without a name; in a static buffer the next call overwrites. */
const char *report_signal_name(int sig)
{
	const char *abbrev = sigabbrev_np(sig);
	static char buf[16];

	if (!abbrev)
		return "?";
	snprintf(buf, sizeof(buf), "SIG%s", abbrev);
	return buf;
}
