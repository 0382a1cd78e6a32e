/* SPDX-License-Identifier: MIT */
/*
 * Which PMU's events to count with: libpfm4's detection is one clue among
 * several. Debian 12's libpfm4 (4.13) knows no Cascade Lake map name of
 * ours ("clx"), no Emerald Rapids (model 207 becomes "ix86arch") and of Zen 4
 * only Genoa; a hypervisor may report another model than the core's. So the
 * choice weighs, in order: an explicit force (LIBPFM_FORCE_PMU, --pmu); the
 * core identified from CPUID features, caches and behaviour (machine/cores.c)
 * where the model number is masked (a guest kernel names its PMU from that
 * same number); the kernel's own name for its PMU (sysfs caps/pmu_name); the
 * identified core; and libpfm4.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* What is known about the machine's PMU; NULL or "" for not known. */
struct pmu_clues {
	const char *forced;		/* LIBPFM_FORCE_PMU or --pmu: always wins */
	const char *sysfs;		/* /sys/bus/event_source/devices/cpu/caps/pmu_name ("sapphire_rapids") */
	const char *core;		/* the identified core ("Raptor Cove", "Zen 4"; several joined by " or ") */
	bool core_masked;		/* the core came from features because the model number is not its own */
	const char *libpfm;		/* the core PMU libpfm4 detected ("icl", "ix86arch"), "none" without one */
};

/* The choice: the map file to load and the libpfm4 PMU its events are written for. */
struct pmu_choice {
	char map[32];			/* events/MAP.events; "none": software events only */
	bool encode_inactive;		/* map's PMU is not the one libpfm4 made active: encode it inactive */
	char basis[240];		/* one sentence: what decided */
};

/* Pure: the choice for clues. */
void pmu_choose(const struct pmu_clues *clues, struct pmu_choice *out);

/* The kernel's name for its core PMU under sysfs_root ("/sys"), into buf; false when it gives none. */
bool pmu_sysfs_name(const char *sysfs_root, char *buf, size_t len);
