/* SPDX-License-Identifier: MIT */
/* -e/--event lists: split at the commas outside cpu/.../, and perf's raw forms into x86 configs. */
#include <string.h>

#include "pmu/user_events.h"
#include "check.h"

static void test_split(void)
{
	char items[4][USER_EVENT_MAX], why[128];
	int n = user_event_split("cpu/event=0x08,umask=0x20/,skx::DTLB_LOAD_MISSES:STLB_HIT,r53003c", items, 4, why,
				 sizeof(why));

	CHECK(n == 3 && strcmp(items[0], "cpu/event=0x08,umask=0x20/") == 0 &&
		      strcmp(items[1], "skx::DTLB_LOAD_MISSES:STLB_HIT") == 0 && strcmp(items[2], "r53003c") == 0,
	      "three events: %d", n);
	CHECK(user_event_split("a,,b", items, 4, why, sizeof(why)) < 0 && strstr(why, "empty"), "%s", why);
	CHECK(user_event_split("cpu/event=1,umask=2", items, 4, why, sizeof(why)) < 0 && strstr(why, "unclosed"), "%s",
	      why);
	CHECK(user_event_split("a,b,c,d,e", items, 4, why, sizeof(why)) < 0 && strstr(why, "more than 4"), "%s", why);
}

static const struct {
	int line;
	const char *spec;
	int rc;
	unsigned long long config;
} raw[] = {
	{ __LINE__, "cpu/event=0x08,umask=0x0e/", 1, 0x0e08 },		/* SKX DTLB_LOAD_MISSES.WALK_COMPLETED */
	{ __LINE__, "cpu/event=0x08,umask=0x10,cmask=1/", 1, 0x01001008 },	/* WALK_PENDING, cmask 1: walk_active */
	{ __LINE__, "cpu/event=0xd1,umask=0x20,inv=1,edge=1/", 1, 0x8420d1 },
	{ __LINE__, "cpu/event=0x145,umask=0xf0/", 1, 0x10000f045ull },	/* AMD: event[11:8] at config:32-35 */
	{ __LINE__, "cpu/config=0x53003c/", 1, 0x53003c },
	{ __LINE__, "r53003c", 1, 0x53003c },
	{ __LINE__, "skx::DTLB_LOAD_MISSES:STLB_HIT", 0, 0 },		/* a libpfm4 name: not raw */
	{ __LINE__, "rdtsc", 0, 0 },					/* not hex: a name */
	{ __LINE__, "cpu/umask=0x20/", -1, 0 },				/* no event */
	{ __LINE__, "cpu/event=0x08,umask=0x100/", -1, 0 },		/* umask is 8 bits */
	{ __LINE__, "cpu/event=0x1000/", -1, 0 },			/* event is 12 bits */
	{ __LINE__, "cpu/event=-1/", -1, 0 },
	{ __LINE__, "cpu/evnt=1/", -1, 0 },
	{ __LINE__, "cpu/event=1", -1, 0 },
	{ __LINE__, "r12345678901234567", -1, 0 },			/* more than 64 bits */
};

static void test_raw(void)
{
	for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++) {
		uint64_t config = 0;
		char why[160] = "";
		int rc = user_event_parse_raw(raw[i].spec, &config, why, sizeof(why));
		CHECK_ROW(raw[i].line, (raw[i].rc < 0 ? rc < 0 && *why : rc == raw[i].rc) &&
					       (rc != 1 || config == raw[i].config),
			  "%s: rc %d config %#llx (want %d, %#llx) %s", raw[i].spec, rc, (unsigned long long)config,
			  raw[i].rc, raw[i].config, why);
	}
}

int main(void)
{
	test_split();
	test_raw();
	return check_finish();
}
