/* SPDX-License-Identifier: MIT */
/*
 * Which PMU map a machine counts with (pmu_choose): recorded clues of the
 * machines libpfm4 4.13 gets wrong (Cascade Lake, Emerald Rapids, Zen 4 other
 * than Genoa, a guest whose model number is masked) and of the ones it gets
 * right, and the sysfs reader on a fixture tree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmu/pmu_choose.h"
#include "check.h"

static const struct {
	int line;
	struct pmu_clues clues;
	const char *map;
	bool inactive;
	const char *basis;	/* a part of the basis */
} rows[] = {
	/* Cascade Lake (family 6 model 85 stepping 7): libpfm4 says clx, for which we have no map; its events are skx's. */
	{ __LINE__, { .sysfs = "skylake", .core = "Cascade Lake", .libpfm = "clx" }, "skx", true, "kernel names its PMU skylake" },
	/* Emerald Rapids (model 207): libpfm4 4.13 falls back to the architectural PMU; the kernel knows better. */
	{ __LINE__, { .sysfs = "sapphire_rapids", .core = "Raptor Cove", .libpfm = "ix86arch" }, "spr", true, "sapphire_rapids" },
	/* The same without sysfs (an older kernel): the core decides. */
	{ __LINE__, { .core = "Raptor Cove", .libpfm = "ix86arch" }, "spr", true, "the core is Raptor Cove" },
	/* A guest reporting Rocket Lake (model 167) with AMX and AVX512-FP16: libpfm4 and the guest kernel say Ice Lake. */
	{ __LINE__, { .sysfs = "icelake", .core = "Golden Cove or Raptor Cove", .core_masked = true, .libpfm = "icl" },
	  "spr", true, "model number is masked" },
	/* Zen 4 Raphael, Phoenix, Bergamo: libpfm4 4.13 knows only Genoa and calls them Zen 3. */
	{ __LINE__, { .core = "Zen 4", .libpfm = "amd64_fam19h_zen3" }, "amd64_fam19h_zen4", true, "the core is Zen 4" },
	/* Genoa: libpfm4 and the core agree. */
	{ __LINE__, { .core = "Zen 4", .libpfm = "amd64_fam19h_zen4" }, "amd64_fam19h_zen4", false, "libpfm4 detects" },
	/* Skylake-SP, every clue agreeing (the kernel's "skylake" is client and server: the core tells). */
	{ __LINE__, { .sysfs = "skylake", .core = "Skylake-SP", .libpfm = "skx" }, "skx", false, "skylake" },
	/* Skylake client. */
	{ __LINE__, { .sysfs = "skylake", .core = "Skylake", .libpfm = "skl" }, "skl", false, "skylake" },
	/* An unknown core: libpfm4's word. */
	{ __LINE__, { .libpfm = "icx" }, "icx", false, "libpfm4 detects icx" },
	/* A force always wins, whatever the clues. */
	{ __LINE__, { .forced = "skx", .sysfs = "sapphire_rapids", .core = "Raptor Cove", .libpfm = "skx" }, "skx", false,
	  "forced (skx)" },
	/* No PMU at all (this development VM): software events only. */
	{ __LINE__, { .core = "Raptor Cove", .libpfm = "none" }, "none", false, "no core PMU" },
	/* Only the architectural PMU and nothing to say which core: generic events. */
	{ __LINE__, { .libpfm = "ix86arch" }, "ix86arch", false, "no map" },
};

static void test_rows(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pmu_choice c;
		pmu_choose(&rows[i].clues, &c);
		CHECK_ROW(rows[i].line, strcmp(c.map, rows[i].map) == 0 && c.encode_inactive == rows[i].inactive &&
						strstr(c.basis, rows[i].basis),
			  "map %s (want %s), inactive %d (want %d), basis: %s", c.map, rows[i].map, c.encode_inactive,
			  rows[i].inactive, c.basis);
	}
}

/* caps/pmu_name under a fixture sysfs root: read and trimmed; absent, it gives none. */
static void test_sysfs(void)
{
	char root[] = "/tmp/tlbprof-pmu-XXXXXX", dir[256], path[320], buf[64];

	if (!mkdtemp(root)) {
		CHECK(0, "mkdtemp");
		return;
	}
	CHECK(!pmu_sysfs_name(root, buf, sizeof(buf)), "an empty tree names no PMU");
	const char *parts[] = { "bus", "bus/event_source", "bus/event_source/devices", "bus/event_source/devices/cpu",
				"bus/event_source/devices/cpu/caps" };
	for (size_t i = 0; i < 5; i++) {
		snprintf(dir, sizeof(dir), "%s/%s", root, parts[i]);
		mkdir(dir, 0700);
	}
	snprintf(path, sizeof(path), "%s/pmu_name", dir);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs("sapphire_rapids\n", f);
		fclose(f);
	}
	CHECK(pmu_sysfs_name(root, buf, sizeof(buf)) && strcmp(buf, "sapphire_rapids") == 0, "read: '%s'", buf);
	unlink(path);
	for (size_t i = 5; i-- > 0;) {
		snprintf(dir, sizeof(dir), "%s/%s", root, parts[i]);
		rmdir(dir);
	}
	rmdir(root);
}

int main(void)
{
	test_rows();
	test_sysfs();
	return check_finish();
}
