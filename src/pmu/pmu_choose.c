/* SPDX-License-Identifier: MIT */
/* Which PMU map to count with, from every clue the machine gives (pmu_choose.h). */
#include "pmu/pmu_choose.h"

#include <stdio.h>
#include <string.h>

/* Our map files, by the libpfm4 PMU their events are written for. */
static const char *const maps[] = { "skl", "skx", "icl", "icx", "spr", "amd64_fam17h_zen2", "amd64_fam19h_zen3",
				    "amd64_fam19h_zen4", NULL };

/* Names others give a PMU we have a map for: libpfm4's, the kernel's (caps/pmu_name). */
static const struct {
	const char *name, *map;
} aliases[] = {
	{ "clx", "skx" },		/* libpfm4's Cascade Lake: Skylake-SP's core PMU and events */
	{ "cpx", "skx" },		/* Cooper Lake */
	{ "skylake", "skx" },		/* the kernel's name on Skylake client and server alike; see below */
	{ "icelake", "icl" },
	{ "icelake_server", "icx" },
	{ "sapphire_rapids", "spr" },	/* the kernel says so on Sapphire and Emerald Rapids */
	{ "emr", "spr" },
	{ "amd64_fam19h_zen4", "amd64_fam19h_zen4" },
};

/* The cores of the documented table (machine/cores.c) and the map of each. */
static const struct {
	const char *core, *map;
} core_maps[] = {
	{ "Redwood Cove", "spr" }, { "Raptor Cove", "spr" }, { "Golden Cove", "spr" },
	{ "Sunny Cove", "icx" }, { "Willow Cove", "icl" }, { "Cypress Cove", "icl" },
	{ "Cascade Lake", "skx" }, { "Skylake-SP", "skx" }, { "Skylake", "skl" },
	{ "Zen 4", "amd64_fam19h_zen4" }, { "Zen 3", "amd64_fam19h_zen3" }, { "Zen 2", "amd64_fam17h_zen2" },
};

static const char *known_map(const char *name)
{
	if (!name || !*name)
		return NULL;
	for (size_t i = 0; maps[i]; i++)
		if (strcmp(name, maps[i]) == 0)
			return maps[i];
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(name, aliases[i].name) == 0)
			return aliases[i].map;
	return NULL;
}

/* The map of the identified core; several candidates ("Raptor Cove or Golden Cove") must agree. */
static const char *core_map(const char *core)
{
	const char *found = NULL;

	if (!core || !*core)
		return NULL;
	for (size_t i = 0; i < sizeof(core_maps) / sizeof(core_maps[0]); i++) {
		const char *at = strstr(core, core_maps[i].core);
		size_t len = strlen(core_maps[i].core);
		/* Whole names only: "Skylake" is not in "Skylake-SP". */
		if (!at || (at[len] && at[len] != ' ') || (at != core && at[-1] != ' '))
			continue;
		if (found && strcmp(found, core_maps[i].map) != 0)
			return NULL;
		found = core_maps[i].map;
	}
	return found;
}

void pmu_choose(const struct pmu_clues *c, struct pmu_choice *out)
{
	const char *lib = c->libpfm && *c->libpfm ? c->libpfm : "none";
	const char *from_sysfs = known_map(c->sysfs), *from_core = core_map(c->core), *from_lib = known_map(lib);
	const char *map = NULL;

	memset(out, 0, sizeof(*out));
	if (c->forced && *c->forced) {
		/* Forced, libpfm4 makes that PMU the only active one (or none, when it knows no such PMU). */
		snprintf(out->map, sizeof(out->map), "%s", lib);
		snprintf(out->basis, sizeof(out->basis), "forced (%s)", c->forced);
		return;
	}
	if (strcmp(lib, "none") == 0 && !(c->sysfs && *c->sysfs)) {
		snprintf(out->map, sizeof(out->map), "none");
		snprintf(out->basis, sizeof(out->basis), "no core PMU: libpfm4 detects none and the kernel names none");
		return;
	}
	/* The kernel's "skylake" is client and server alike: the core or libpfm4 tells which. */
	if (from_sysfs && strcmp(c->sysfs, "skylake") == 0 && (from_core || from_lib))
		from_sysfs = from_core ? from_core : from_lib;
	if (from_core && c->core_masked) {
		/* A guest kernel names its PMU from the same masked model number: the features decide. */
		map = from_core;
		snprintf(out->basis, sizeof(out->basis), "the core is %s (its model number is masked: features and "
			 "behaviour decided, over libpfm4's %s%s%s)", c->core, lib, c->sysfs && *c->sysfs ? " and the kernel's " : "",
			 c->sysfs && *c->sysfs ? c->sysfs : "");
	} else if (from_sysfs) {
		map = from_sysfs;
		snprintf(out->basis, sizeof(out->basis), "the kernel names its PMU %s%s%s", c->sysfs,
			 from_core && strcmp(from_core, map) != 0 ? " (over the core, " : "",
			 from_core && strcmp(from_core, map) != 0 ? c->core : "");
		if (from_core && strcmp(from_core, map) != 0)
			strncat(out->basis, ")", sizeof(out->basis) - strlen(out->basis) - 1);
	} else if (from_core && (c->core_masked || !from_lib || strcmp(from_core, from_lib) != 0)) {
		map = from_core;
		snprintf(out->basis, sizeof(out->basis), "the core is %s%s; libpfm4 detects %s", c->core,
			 c->core_masked ? " (its model number is masked: features and behaviour decided)" : "", lib);
	} else if (from_lib) {
		map = from_lib;
		snprintf(out->basis, sizeof(out->basis), "libpfm4 detects %s%s%s", lib, from_core ? ", as the core " : "",
			 from_core ? c->core : "");
	}
	if (!map) {
		snprintf(out->map, sizeof(out->map), "%s", lib);
		snprintf(out->basis, sizeof(out->basis), "libpfm4 detects %s, for which there is no map: generic events",
			 lib);
		return;
	}
	snprintf(out->map, sizeof(out->map), "%s", map);
	out->encode_inactive = strcmp(map, lib) != 0;
}

bool pmu_sysfs_name(const char *sysfs_root, char *buf, size_t len)
{
	static const char *const devices[] = { "cpu", "cpu_core" };

	for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
		char path[256];
		snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/caps/pmu_name", sysfs_root, devices[i]);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		bool ok = fgets(buf, (int)len, f) != NULL;
		fclose(f);
		if (ok) {
			buf[strcspn(buf, "\n")] = '\0';
			return *buf != '\0';
		}
	}
	return false;
}
