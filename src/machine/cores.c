/* SPDX-License-Identifier: MIT */
/* The documented per-core table, and which row a CPU is from its model number, features, caches and behaviour. */
#include "machine/cores.h"

#include <stdio.h>
#include <string.h>

/* More dependent add reg, imm per cycle than this is rename-time folding: a plain adder retires one a cycle. */
static const double FOLDING_MIN_PER_CYCLE = 1.5;

static const char *const feature_names[CPU_FEATURES] = {
	[CPU_AVX512F] = "avx512f",		[CPU_AVX512_VNNI] = "avx512_vnni",
	[CPU_GFNI] = "gfni",			[CPU_VAES] = "vaes",
	[CPU_MOVDIRI] = "movdiri",		[CPU_AVX512_VP2INTERSECT] = "avx512_vp2intersect",
	[CPU_SERIALIZE] = "serialize",		[CPU_HYBRID] = "hybrid",
	[CPU_AMX_BF16] = "amx_bf16",		[CPU_AVX512_FP16] = "avx512_fp16",
	[CPU_AMX_TILE] = "amx_tile",		[CPU_AVX_VNNI] = "avx_vnni",
	[CPU_AVX512_BF16] = "avx512_bf16",	[CPU_AMX_FP16] = "amx_fp16",
};

const char *cpu_feature_name(enum cpu_feature f)
{
	return (unsigned)f < CPU_FEATURES ? feature_names[f] : NULL;
}

uint32_t cpu_features_decode(uint32_t l7_ebx, uint32_t l7_ecx, uint32_t l7_edx, uint32_t l71_eax)
{
	static const struct {
		enum cpu_feature f;
		int reg;	/* 0 EBX, 1 ECX, 2 EDX of leaf 7.0; 3 EAX of leaf 7.1 */
		unsigned bit;
	} bits[] = {
		{ CPU_AVX512F, 0, 16 },		{ CPU_AVX512_VNNI, 1, 11 },	{ CPU_GFNI, 1, 8 },
		{ CPU_VAES, 1, 9 },		{ CPU_MOVDIRI, 1, 27 },		{ CPU_AVX512_VP2INTERSECT, 2, 8 },
		{ CPU_SERIALIZE, 2, 14 },	{ CPU_HYBRID, 2, 15 },		{ CPU_AMX_BF16, 2, 22 },
		{ CPU_AVX512_FP16, 2, 23 },	{ CPU_AMX_TILE, 2, 24 },	{ CPU_AVX_VNNI, 3, 4 },
		{ CPU_AVX512_BF16, 3, 5 },	{ CPU_AMX_FP16, 3, 21 },
	};
	const uint32_t regs[4] = { l7_ebx, l7_ecx, l7_edx, l71_eax };
	uint32_t out = 0;

	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if ((regs[bits[i].reg] >> bits[i].bit) & 1)
			out |= CPU_BIT(bits[i].f);
	return out;
}

#define F(x) CPU_BIT(CPU_##x)
/* What an Intel core before Ice Lake cannot have, and what Golden Cove and later brought. */
#define PRE_ICL_LACKS (F(GFNI) | F(VAES) | F(AMX_TILE) | F(AVX512_FP16) | F(SERIALIZE) | F(AVX_VNNI) | F(HYBRID))
#define PRE_GLC_LACKS (F(AMX_TILE) | F(AVX512_FP16) | F(SERIALIZE) | F(AVX_VNNI) | F(HYBRID) | F(AMX_BF16))
/* What the server parts of Golden Cove and later have (Sapphire/Emerald/Granite Rapids). */
#define GLC_SERVER (F(SERIALIZE) | F(AVX_VNNI) | F(MOVDIRI) | F(AMX_TILE) | F(AMX_BF16) | F(AVX512_FP16) | F(AVX512F))
#define INTEL_MANUAL "Intel 64 and IA-32 Architectures Optimization Reference Manual"

/*
 * The rows, newest first within a vendor so that among equal fits the newer
 * core is named first. TLB entries are for loads and 4 KiB / 2 MiB / 1 GiB
 * pages; the second level holds 4 KiB and 2 MiB pages together where the
 * manual says "shared" (the same count in both columns).
 */
const struct core_row cores_table[] = {
	{ "Redwood Cove", "GenuineIntel", 6, { { 0xaa, 0xac, 0, 15 }, { 0xad, 0xae, 0, 15 } }, GLC_SERVER | F(AMX_FP16),
	  0, true, 5, 48, { 2048, 2048 }, 96, 32, 8, 2048, 2048, 1024, INTEL_MANUAL " (Redwood Cove: as Golden Cove)" },
	{ "Raptor Cove", "GenuineIntel", 6, { { 0xb7, 0xb7, 0, 15 }, { 0xba, 0xba, 0, 15 }, { 0xbf, 0xbf, 0, 15 },
					      { 0xcf, 0xcf, 0, 15 } },
	  GLC_SERVER, F(AMX_FP16), true, 5, 48, { 2048, 2048 }, 96, 32, 8, 2048, 2048, 1024,
	  INTEL_MANUAL " (Raptor Cove: as Golden Cove, L2 2 MiB)" },
	{ "Golden Cove", "GenuineIntel", 6, { { 0x97, 0x97, 0, 15 }, { 0x9a, 0x9a, 0, 15 }, { 0x8f, 0x8f, 0, 15 } },
	  GLC_SERVER, F(AMX_FP16), true, 5, 48, { 1280, 2048 }, 96, 32, 8, 2048, 2048, 1024,
	  INTEL_MANUAL ", Golden Cove: DTLB 96 (4K loads), 32 (2M), 8 (1G); STLB 2048 (4K/2M), 1024 (1G)" },
	{ "Willow Cove", "GenuineIntel", 6, { { 0x8c, 0x8d, 0, 15 } },
	  F(AVX512F) | F(AVX512_VNNI) | F(GFNI) | F(VAES) | F(MOVDIRI) | F(AVX512_VP2INTERSECT), PRE_GLC_LACKS, false, 5,
	  48, { 1280, 0 }, 64, 32, 8, 2048, 2048, 1024, INTEL_MANUAL " (Willow Cove: as Sunny Cove)" },
	{ "Cypress Cove", "GenuineIntel", 6, { { 0xa7, 0xa8, 0, 15 } },
	  F(AVX512F) | F(AVX512_VNNI) | F(GFNI) | F(VAES), PRE_GLC_LACKS, false, 5, 48, { 512, 0 }, 64, 32, 8, 2048, 2048,
	  1024, INTEL_MANUAL " (Cypress Cove: Sunny Cove on 14 nm)" },
	{ "Sunny Cove", "GenuineIntel", 6, { { 0x7d, 0x7e, 0, 15 }, { 0x6a, 0x6a, 0, 15 }, { 0x6c, 0x6c, 0, 15 } },
	  F(AVX512F) | F(AVX512_VNNI) | F(GFNI) | F(VAES), PRE_GLC_LACKS, false, 5, 48, { 512, 1280 }, 64, 32, 8, 2048,
	  2048, 1024, INTEL_MANUAL ", Sunny Cove: DTLB 64 (4K loads), 32 (2M), 8 (1G); STLB 2048 (4K/2M), 1024 (1G)" },
	{ "Cascade Lake", "GenuineIntel", 6, { { 0x55, 0x55, 5, 15 } }, F(AVX512F) | F(AVX512_VNNI), PRE_ICL_LACKS,
	  false, 4, 32, { 1024, 0 }, 64, 32, 4, 1536, 1536, 16, INTEL_MANUAL " (Cascade Lake: the Skylake-SP core)" },
	{ "Skylake-SP", "GenuineIntel", 6, { { 0x55, 0x55, 0, 4 } }, F(AVX512F), PRE_ICL_LACKS | F(AVX512_VNNI), false,
	  4, 32, { 1024, 0 }, 64, 32, 4, 1536, 1536, 16,
	  INTEL_MANUAL ", Skylake: DTLB 64 (4K), 32 (2M), 4 (1G); STLB 1536 (4K/2M), 16 (1G)" },
	{ "Skylake", "GenuineIntel", 6, { { 0x4e, 0x4e, 0, 15 }, { 0x5e, 0x5e, 0, 15 }, { 0x8e, 0x8e, 0, 15 },
					  { 0x9e, 0x9e, 0, 15 }, { 0xa5, 0xa6, 0, 15 } },
	  0, PRE_ICL_LACKS | F(AVX512F), false, 4, 32, { 256, 0 }, 64, 32, 4, 1536, 1536, 16,
	  INTEL_MANUAL " (Skylake client, Kaby/Coffee/Comet Lake)" },
	{ "Broadwell", "GenuineIntel", 6, { { 0x3d, 0x3d, 0, 15 }, { 0x47, 0x47, 0, 15 }, { 0x4f, 0x4f, 0, 15 },
					    { 0x56, 0x56, 0, 15 } },
	  0, PRE_ICL_LACKS | F(AVX512F), false, 4, 32, { 256, 0 }, 64, 32, 4, 1536, 1536, 16, INTEL_MANUAL ", Broadwell" },
	{ "Haswell", "GenuineIntel", 6, { { 0x3c, 0x3c, 0, 15 }, { 0x3f, 0x3f, 0, 15 }, { 0x45, 0x46, 0, 15 } },
	  0, PRE_ICL_LACKS | F(AVX512F), false, 4, 32, { 256, 0 }, 64, 32, 4, 1024, 1024, 0, INTEL_MANUAL ", Haswell" },
	{ "Zen 5", "AuthenticAMD", 0x1a, { { 0x00, 0xff, 0, 15 } }, F(AVX512F) | F(AVX_VNNI) | F(AVX512_VP2INTERSECT),
	  F(AMX_TILE) | F(AVX512_FP16), false, 4, 48, { 1024, 0 }, 96, 96, 96, 4096, 4096, 0,
	  "AMD Software Optimization Guide for the AMD Zen 5 Microarchitecture (57647)" },
	{ "Zen 4", "AuthenticAMD", 0x19, { { 0x10, 0x1f, 0, 15 }, { 0x60, 0x7f, 0, 15 }, { 0xa0, 0xaf, 0, 15 } },
	  F(AVX512F) | F(AVX512_VNNI) | F(AVX512_BF16), F(AMX_TILE) | F(AVX512_FP16) | F(AVX512_VP2INTERSECT), false, 4,
	  32, { 1024, 0 }, 72, 72, 72, 3072, 3072, 0,
	  "AMD Software Optimization Guide for AMD Family 19h Processors (56665): L1 DTLB 72, L2 DTLB 3072 (Zen 4)" },
	{ "Zen 3", "AuthenticAMD", 0x19, { { 0x00, 0x0f, 0, 15 }, { 0x20, 0x5f, 0, 15 } }, 0,
	  F(AVX512F) | F(AMX_TILE) | F(AVX512_FP16), false, 4, 32, { 512, 0 }, 64, 64, 64, 2048, 2048, 0,
	  "AMD Software Optimization Guide for AMD Family 19h Processors (56665): L1 DTLB 64, L2 DTLB 2048 (Zen 3)" },
	{ "Zen 2", "AuthenticAMD", 0x17, { { 0x30, 0xff, 0, 15 } }, 0, F(AVX512F) | F(AMX_TILE), false, 4, 32,
	  { 512, 0 }, 64, 64, 64, 2048, 2048, 0,
	  "AMD Software Optimization Guide for AMD Family 17h Models 30h and Greater (56305): L2 DTLB 2048" },
	{ "Zen/Zen+", "AuthenticAMD", 0x17, { { 0x00, 0x2f, 0, 15 } }, 0, F(AVX512F) | F(AMX_TILE), false, 4, 32,
	  { 512, 0 }, 64, 64, 64, 1536, 1536, 0, "AMD Software Optimization Guide for AMD Family 17h (55723): L2 DTLB 1536" },
	{ "Dhyana (Zen)", "HygonGenuine", 0x18, { { 0x00, 0xff, 0, 15 } }, 0, F(AVX512F), false, 4, 32, { 512, 0 }, 64,
	  64, 64, 1536, 1536, 0, "the Zen core (Hygon Dhyana)" },
	{ NULL },
};
#undef F

bool cores_folds_add_imm(double add_imm_per_cycle)
{
	return add_imm_per_cycle > FOLDING_MIN_PER_CYCLE;
}

static bool lists_model(const struct core_row *r, const struct core_signature *s)
{
	if (strcmp(r->vendor, s->vendor) != 0 || r->family != s->family)
		return false;
	for (size_t i = 0; i < sizeof(r->models) / sizeof(r->models[0]) && (r->models[i].lo || r->models[i].hi); i++)
		if (s->model >= r->models[i].lo && s->model <= r->models[i].hi && s->stepping >= r->models[i].stepping_lo &&
		    s->stepping <= r->models[i].stepping_hi)
			return true;
	return false;
}

/*
 * What the signature shows that row r cannot be: into why (empty when
 * nothing). A feature it lacks, an L1d or L2 size none of its parts has,
 * folding it does not do (or not folding where it does).
 */
static void contradictions(const struct core_row *r, const struct core_signature *s, char *why, size_t len)
{
	size_t used = 0;

	why[0] = '\0';
	for (int f = 0; s->features_known && f < CPU_FEATURES; f++)
		if ((s->features & r->lacks & CPU_BIT(f)) && used < len)
			used += (size_t)snprintf(why + used, len - used, "%s%s", used ? ", " : "", feature_names[f]);
	if (used && used < len)
		used += (size_t)snprintf(why + used, len - used, " present, which %s lacks", r->name);
	if (s->l1d_kib && s->l1d_kib != r->l1d_kib && used < len)
		used += (size_t)snprintf(why + used, len - used, "%sL1d %u KiB, not %u", used ? "; " : "", s->l1d_kib,
					 r->l1d_kib);
	if (s->l2_kib && s->l2_kib != r->l2_kib[0] && s->l2_kib != r->l2_kib[1] && used < len)
		used += (size_t)snprintf(why + used, len - used, "%sL2 %u KiB, which no %s part has", used ? "; " : "",
					 s->l2_kib, r->name);
	if (s->add_imm_per_cycle > 0 && cores_folds_add_imm(s->add_imm_per_cycle) != r->folds_add_imm && used < len)
		snprintf(why + used, len - used, "%sdependent add reg, imm at %.1f per cycle (%s fold%s them)",
			 used ? "; " : "", s->add_imm_per_cycle, r->name, r->folds_add_imm ? "s" : "s none of");
}

/*
 * How well r fits what the CPU shows, better first: fewer of its marking
 * features missing (a hypervisor may hide one, so this only ranks), then
 * more of them present (the more specific row).
 */
static int fit_score(const struct core_row *r, const struct core_signature *s)
{
	int missing = __builtin_popcount(r->has & ~s->features), present = __builtin_popcount(r->has & s->features);

	return present - 32 * missing;
}

/* Whether two rows give the same expectations (a masked model cannot tell them apart, and need not). */
static bool same_numbers(const struct core_row *a, const struct core_row *b)
{
	return a->l1_latency_cycles == b->l1_latency_cycles && a->l1d_4k == b->l1d_4k && a->l2_4k == b->l2_4k &&
	       a->l1d_2m == b->l1d_2m && a->l2_2m == b->l2_2m;
}

/* Among the rows of the vendor nothing contradicts, the best fit (and the equal ones after it in name). */
static void identify_by_features(const struct core_signature *sig, struct core_identity *out)
{
	char why[160];
	int best_score = 0;

	for (const struct core_row *r = cores_table; r->name; r++) {
		if (strcmp(r->vendor, sig->vendor) != 0)
			continue;
		contradictions(r, sig, why, sizeof(why));
		if (why[0])
			continue;
		int score = fit_score(r, sig);
		if (!out->row || score > best_score) {
			best_score = score;
			out->row = r;
			snprintf(out->name, sizeof(out->name), "%s", r->name);
		} else if (score == best_score && same_numbers(r, out->row) &&
			   strlen(out->name) + strlen(r->name) + 5 < sizeof(out->name)) {
			strcat(out->name, " or ");
			strcat(out->name, r->name);
		}
	}
}

void cores_identify(const struct core_signature *sig, struct core_identity *out)
{
	const struct core_row *by_model = NULL;
	char why[160] = "";

	memset(out, 0, sizeof(*out));
	out->basis = "none";
	if (!sig->vendor)
		return;
	/* The listed model first; a later row with the same model (Skylake-SP and Cascade Lake) by its features. */
	for (const struct core_row *r = cores_table; r->name; r++) {
		if (!lists_model(r, sig))
			continue;
		contradictions(r, sig, why, sizeof(why));
		if (!why[0]) {
			out->row = r;
			out->basis = "model";
			snprintf(out->name, sizeof(out->name), "%s", r->name);
			snprintf(out->evidence, sizeof(out->evidence), "family %u model %u (0x%x) stepping %u is %s%s",
				 sig->family, sig->model, sig->model, sig->stepping, r->name,
				 sig->features_known ? ", and no feature, cache or behaviour says otherwise" : "");
			return;
		}
		if (!by_model)
			by_model = r;
	}
	if (by_model)
		contradictions(by_model, sig, why, sizeof(why));
	/* Without the model's row, only features read from CPUID are evidence; without them nothing is claimed. */
	if (by_model || sig->features_known)
		identify_by_features(sig, out);
	if (!out->row) {
		snprintf(out->evidence, sizeof(out->evidence), "family %u model %u is in no row%s%s", sig->family,
			 sig->model, why[0] ? ", and its model's row does not fit: " : "", why);
		return;
	}
	out->basis = "features";
	out->masked = by_model != NULL;
	if (by_model)
		snprintf(out->evidence, sizeof(out->evidence),
			 "family %u model %u (0x%x) is %s, but %s: the model is masked (a hypervisor reports another); "
			 "the features, caches and behaviour fit %s", sig->family, sig->model, sig->model, by_model->name,
			 why, out->name);
	else
		snprintf(out->evidence, sizeof(out->evidence),
			 "family %u model %u (0x%x) is in no row; its features, caches and behaviour fit %s", sig->family,
			 sig->model, sig->model, out->name);
}
