/* SPDX-License-Identifier: MIT */
/*
 * Which core this is: the documented per-core table (L1 latency, TLB sizes,
 * caches, PMU) and the identification of a row from what the CPU shows,
 * model number first, its features, caches and measured behaviour when the
 * model number and the rest disagree (a hypervisor may report another model).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CPUID feature bits that tell cores apart (leaf 7 subleaves 0 and 1). */
enum cpu_feature {
	CPU_AVX512F,		/* 7.0 EBX[16] */
	CPU_AVX512_VNNI,	/* 7.0 ECX[11] */
	CPU_GFNI,		/* 7.0 ECX[8] */
	CPU_VAES,		/* 7.0 ECX[9] */
	CPU_MOVDIRI,		/* 7.0 ECX[27] */
	CPU_AVX512_VP2INTERSECT,	/* 7.0 EDX[8] */
	CPU_SERIALIZE,		/* 7.0 EDX[14] */
	CPU_HYBRID,		/* 7.0 EDX[15] */
	CPU_AMX_BF16,		/* 7.0 EDX[22] */
	CPU_AVX512_FP16,	/* 7.0 EDX[23] */
	CPU_AMX_TILE,		/* 7.0 EDX[24] */
	CPU_AVX_VNNI,		/* 7.1 EAX[4] */
	CPU_AVX512_BF16,	/* 7.1 EAX[5] */
	CPU_AMX_FP16,		/* 7.1 EAX[21] */
	CPU_FEATURES,
};
#define CPU_BIT(f) (1u << (f))

/* "avx512f", "amx_tile", ... as /proc/cpuinfo spells them; NULL out of range. */
const char *cpu_feature_name(enum cpu_feature f);

/* The feature bits of CPUID leaf 7 subleaf 0 (EBX, ECX, EDX) and subleaf 1 (EAX). Pure. */
uint32_t cpu_features_decode(uint32_t l7_ebx, uint32_t l7_ecx, uint32_t l7_edx, uint32_t l71_eax);

/* One documented core: what its vendor's optimisation manual says, and how to recognise it. */
struct core_row {
	const char *name;		/* "Golden Cove" */
	const char *vendor;		/* CPUID vendor string */
	unsigned family;
	struct {
		unsigned lo, hi;	/* model numbers lo..hi */
		unsigned stepping_lo, stepping_hi;	/* 0..15: any */
	} models[8];			/* the signatures its parts report; ended by lo == hi == 0 */
	uint32_t has;			/* features that mark it when its model is masked (its server parts' ISA) */
	uint32_t lacks;			/* features no part with this core has */
	bool folds_add_imm;		/* rename folds chains of add reg, imm (runs them faster than 1/cycle) */
	unsigned l1_latency_cycles;	/* load-to-use, simple addressing */
	unsigned l1d_kib;		/* L1 data cache */
	unsigned l2_kib[2];		/* the L2 sizes its parts have (client, server); 0: unused */
	unsigned l1d_4k, l1d_2m, l1d_1g;	/* L1 data TLB entries for loads, per page size */
	unsigned l2_4k, l2_2m, l2_1g;	/* the second-level (STLB, L2 DTLB) entries, per page size */
	const char *source;		/* where the numbers come from */
};

/* What a CPU shows about its core, for cores_identify(); 0 and false are "not known". */
struct core_signature {
	const char *vendor;
	unsigned family, model, stepping;
	bool features_known;		/* features was read from CPUID */
	uint32_t features;		/* CPU_BIT() of what CPUID reports */
	unsigned l1d_kib, l2_kib;	/* from sysfs or CPUID leaf 4 */
	double add_imm_per_cycle;	/* measured: dependent add reg, imm per cycle (timing.c) */
};

/* The row chosen for a signature, and why. */
struct core_identity {
	const struct core_row *row;	/* NULL: no row fits */
	const char *basis;		/* "model" (the model number, nothing against it), "features" (the model
					 * number is masked: the features, caches and behaviour decided), "none" */
	bool masked;			/* the reported model is not the core's (a hypervisor reports another) */
	char name[48];			/* row->name, or the names of rows that fit equally ("Golden Cove or Raptor Cove") */
	char evidence[400];		/* one sentence: what decided, what contradicted the model */
};

/* The documented table, ended by name NULL. */
extern const struct core_row cores_table[];

/*
 * Choose the row for sig: the rows whose signature lists the model, unless
 * what the CPU shows contradicts them (a feature the core lacks, an L1d or
 * L2 size its parts do not have, add-imm folding it does not do); then every
 * row of the vendor that nothing contradicts, the one whose listed features
 * are present most (ties with the same numbers are named together). A missing
 * feature is weak evidence (hypervisors hide features), a present one strong.
 * Pure; fills *out fully.
 */
void cores_identify(const struct core_signature *sig, struct core_identity *out);

/* Whether a measured add reg, imm rate shows rename-time folding (more than 1.5 per cycle). */
bool cores_folds_add_imm(double add_imm_per_cycle);
