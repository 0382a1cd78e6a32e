/* SPDX-License-Identifier: MIT */
/* Host facts: the pure parsers of khugepaged and DAMON sysfs text, the readers on fixture trees, the end clock. */
#include "check.h"
#include "machine/host.h"
#include "machine/timing.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N_ROWS(a) (sizeof(a) / sizeof((a)[0]))

static void test_parse_u64(void)
{
	static const struct {
		int line;
		const char *text;
		int ret;
		uint64_t value;
	} rows[] = {
		/* khugepaged/full_scans and pages_collapsed as Linux 6.1 prints them. */
		{ __LINE__, "12\n", 0, 12 },
		{ __LINE__, "0\n", 0, 0 },
		{ __LINE__, "  40 \n", 0, 40 },
		{ __LINE__, "18446744073709551615\n", 0, UINT64_MAX },
		{ __LINE__, "18446744073709551616\n", -EINVAL, 0 },
		{ __LINE__, "-1\n", -EINVAL, 0 },
		{ __LINE__, "12 13\n", -EINVAL, 0 },
		{ __LINE__, "12x\n", -EINVAL, 0 },
		{ __LINE__, "", -EINVAL, 0 },
		{ __LINE__, "\n", -EINVAL, 0 },
	};

	for (size_t i = 0; i < N_ROWS(rows); i++) {
		uint64_t v = 777;
		int ret = env_parse_u64(rows[i].text, &v);
		CHECK_ROW(rows[i].line, ret == rows[i].ret, "ret %d, want %d", ret, rows[i].ret);
		CHECK_ROW(rows[i].line, v == (rows[i].ret ? 777 : rows[i].value), "value %" PRIu64, v);
	}
}

static void test_parse_damon(void)
{
	static const struct {
		int line;
		const char *text;
		int ret;
		bool running;
	} states[] = {
		{ __LINE__, "on\n", 0, true },
		{ __LINE__, "off\n", 0, false },
		{ __LINE__, " on ", 0, true },
		{ __LINE__, "commit\n", -EINVAL, false },
		{ __LINE__, "on off\n", -EINVAL, false },
		{ __LINE__, "", -EINVAL, false },
		{ __LINE__, "o\n", -EINVAL, false },
		{ __LINE__, "offf\n", -EINVAL, false },
	};
	for (size_t i = 0; i < N_ROWS(states); i++) {
		bool running = !states[i].running;
		int ret = env_parse_damon_state(states[i].text, &running);
		CHECK_ROW(states[i].line, ret == states[i].ret, "ret %d", ret);
		if (!ret)
			CHECK_ROW(states[i].line, running == states[i].running, "running %d", running);
	}
	static const struct {
		int line;
		const char *text;
		int ret;
		const char *action;
	} actions[] = {
		{ __LINE__, "pageout\n", 0, "pageout" },
		{ __LINE__, "lru_deprio\n", 0, "lru_deprio" },
		{ __LINE__, "stat", 0, "stat" },
		{ __LINE__, "Pageout\n", -EINVAL, "" },
		{ __LINE__, "page out\n", -EINVAL, "" },
		{ __LINE__, "\n", -EINVAL, "" },
		{ __LINE__, "hugepage1\n", -EINVAL, "" },
	};
	for (size_t i = 0; i < N_ROWS(actions); i++) {
		char out[16] = "x";
		int ret = env_parse_damon_action(actions[i].text, out, sizeof(out));
		CHECK_ROW(actions[i].line, ret == actions[i].ret, "ret %d", ret);
		CHECK_ROW(actions[i].line, strcmp(out, actions[i].action) == 0, "'%s'", out);
	}
	char tiny[4];
	CHECK(env_parse_damon_action("pageout", tiny, sizeof(tiny)) == -ERANGE && !*tiny, "too small: -ERANGE, \"\"");
	CHECK(host_damon_action_moves_memory("pageout"), "pageout moves memory");
	CHECK(host_damon_action_moves_memory("hugepage"), "hugepage moves memory");
	CHECK(!host_damon_action_moves_memory("stat"), "stat only counts");
	CHECK(!host_damon_action_moves_memory(""), "no action");
}

/* A fixture tree: root/rel holding text (directories made on the way). */
static void put(const char *root, const char *rel, const char *text)
{
	char path[512], *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	FILE *f = fopen(path, "w");
	CHECK(f != NULL, "fixture %s", path);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_read_fixtures(void)
{
	char root[] = "/tmp/tlbprof-host-XXXXXX";
	struct host_snapshot s;
	struct host_damon d;

	CHECK(mkdtemp(root) != NULL, "temp dir");
	/* Nothing there: every fact unknown and said so, no zero that looks measured. */
	host_read_snapshot(root, &s);
	CHECK(!s.stat_known && !s.khugepaged_present && !s.collapsed_known, "nothing read from an empty tree");
	CHECK(strstr(s.khugepaged_why, "not present"), "why: %s", s.khugepaged_why);
	host_read_damon(root, &d);
	CHECK(!d.present && strstr(d.why, "not present") && d.kdamonds == 0, "no DAMON: %s", d.why);

	put(root, "proc/stat", "cpu  2282 0 937 38009 229 0 44 319 0 0\ncpu0 1100 0 470 19000 110 0 20 160 0 0\n");
	put(root, "sys/kernel/mm/transparent_hugepage/khugepaged/full_scans", "12\n");
	put(root, "sys/kernel/mm/transparent_hugepage/khugepaged/pages_collapsed", "bogus\n");
	host_read_snapshot(root, &s);
	CHECK(s.stat_known && s.steal_ticks == 319 && s.total_ticks == 2282 + 937 + 38009 + 229 + 44 + 319,
	      "steal %" PRIu64 " of %" PRIu64, s.steal_ticks, s.total_ticks);
	CHECK(s.khugepaged_present && s.full_scans == 12 && !*s.khugepaged_why, "full_scans 12");
	CHECK(!s.collapsed_known, "a malformed pages_collapsed is unknown, not 0");

	/* DAMON: kdamond 0 on with a pageout and a stat scheme, kdamond 1 off with a hugepage scheme. */
	put(root, "sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "2\n");
	put(root, "sys/kernel/mm/damon/admin/kdamonds/0/state", "on\n");
	put(root, "sys/kernel/mm/damon/admin/kdamonds/0/contexts/0/schemes/0/action", "pageout\n");
	put(root, "sys/kernel/mm/damon/admin/kdamonds/0/contexts/0/schemes/1/action", "stat\n");
	put(root, "sys/kernel/mm/damon/admin/kdamonds/0/contexts/0/schemes/2/action", "pageout\n");
	put(root, "sys/kernel/mm/damon/admin/kdamonds/1/state", "off\n");
	put(root, "sys/kernel/mm/damon/admin/kdamonds/1/contexts/0/schemes/0/action", "hugepage\n");
	host_read_damon(root, &d);
	CHECK(d.present && d.kdamonds == 2 && d.running == 1, "kdamonds %u, running %u", d.kdamonds, d.running);
	CHECK(d.schemes_active == 3, "three schemes under the running kdamond: %u", d.schemes_active);
	CHECK(strstr(d.actions, "pageout") && strstr(d.actions, "stat") && !strstr(d.actions, "hugepage") &&
		      strlen(d.actions) == strlen("pageout,stat"),
	      "distinct actions of running kdamonds: %s", d.actions);
	/* An admin directory with no kdamond: present, nothing running. */
	char empty[] = "/tmp/tlbprof-host-XXXXXX";
	CHECK(mkdtemp(empty) != NULL, "temp dir");
	put(empty, "sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "0\n");
	host_read_damon(empty, &d);
	CHECK(d.present && d.kdamonds == 0 && d.running == 0 && !*d.actions, "present and idle");
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", root, empty);
	CHECK(system(cmd) == 0, "cleanup");
}

static void test_deltas(void)
{
	struct host_facts h = { .recorded = true };
	double share;
	uint64_t scans, collapsed;
	bool collapsed_known;

	CHECK(!host_steal_share(&h, &share) && share == 0, "no /proc/stat: could not tell");
	h.before = (struct host_snapshot){ .stat_known = true, .total_ticks = 1000, .steal_ticks = 10,
					   .khugepaged_present = true, .full_scans = 5, .collapsed_known = true,
					   .pages_collapsed = 100 };
	h.after = (struct host_snapshot){ .stat_known = true, .total_ticks = 1400, .steal_ticks = 42,
					  .khugepaged_present = true, .full_scans = 6, .collapsed_known = true,
					  .pages_collapsed = 140 };
	CHECK(host_steal_share(&h, &share), "steal known");
	CHECK_NEAR(share, 32.0 / 400, 1e-15);
	CHECK(host_khugepaged_delta(&h, &scans, &collapsed, &collapsed_known), "khugepaged known");
	CHECK(scans == 1 && collapsed == 40 && collapsed_known, "1 scan, 40 pages");
	h.after.collapsed_known = false;
	CHECK(host_khugepaged_delta(&h, &scans, &collapsed, &collapsed_known) && !collapsed_known,
	      "pages_collapsed unreadable at the end: scans only");
	h.after.khugepaged_present = false;
	CHECK(!host_khugepaged_delta(&h, &scans, &collapsed, &collapsed_known), "khugepaged gone: could not tell");
	h.after.total_ticks = 1000;
	CHECK(!host_steal_share(&h, &share), "no tick passed: could not tell");
	h.recorded = false;
	CHECK(!host_steal_share(&h, &share) && !host_steal_share(NULL, &share), "not recorded");
}

static void test_clock_recheck(void)
{
	struct timing_calibration c = { .core_clock_ghz = 3.0, .core_clock_end_ghz = 2.64 };

	CHECK_NEAR(timing_clock_ratio(&c), 0.88, 1e-12);
	c.core_clock_end_ghz = 0;
	CHECK(timing_clock_ratio(&c) == 0 && timing_clock_ratio(NULL) == 0, "no end clock: no ratio");
	/* Live: the same method at the end reads a clock, and an uncalibrated start reads none. */
	timing_calibrate(&c);
	timing_recheck(&c);
	if (c.core_clock_ghz > 0)
		CHECK(c.core_clock_end_ghz > 0 && c.core_clock_end_spread >= 0, "end clock %.3f GHz",
		      c.core_clock_end_ghz);
	struct timing_calibration none = { 0 };
	timing_recheck(&none);
	CHECK(none.core_clock_end_ghz == 0, "nothing to recheck against");
}

int main(void)
{
	test_parse_u64();
	test_parse_damon();
	test_read_fixtures();
	test_deltas();
	test_clock_recheck();
	return check_finish();
}
