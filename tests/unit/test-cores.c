/* SPDX-License-Identifier: MIT */
/* Which core a CPU is: recorded signatures, masked models among them, against the documented table. */
#include <string.h>

#include "check.h"
#include "machine/cores.h"

#define F(x) CPU_BIT(CPU_##x)
/* Sapphire/Emerald Rapids: what leaf 7 reports for their features (Intel SDM, vol. 2, CPUID leaf 7). */
#define SPR_FEATURES                                                                                            \
	(F(AVX512F) | F(AVX512_VNNI) | F(GFNI) | F(VAES) | F(MOVDIRI) | F(SERIALIZE) | F(AMX_BF16) | F(AVX512_FP16) | \
	 F(AMX_TILE) | F(AVX_VNNI) | F(AVX512_BF16))

static const struct {
	int line;
	struct core_signature sig;
	const char *name;	/* the name that must come out */
	const char *basis;
	bool masked;
	unsigned l1_latency, l1d_4k, l2_4k;
} rows[] = {
	/*
	 * This session's KVM guest: family 6 model 106 (0x606a6), leaf 7.0 EBX f1bf27eb ECX 00415f5e EDX bc000410,
	 * 7.1 EAX 0, L1d 48 KiB, L2 1280 KiB (leaf 4), add reg,imm 1.0 per cycle: Ice Lake-SP, as it says.
	 */
	{ __LINE__, { "GenuineIntel", 6, 106, 6, true, 0, 48, 1280, 1.0 }, "Sunny Cove", "model", false, 5, 64, 2048 },
	/*
	 * A KVM guest reporting Rocket Lake (family 6 model 167) on a Sapphire/Emerald Rapids host: AMX and
	 * AVX512-FP16, a 2 MiB 16-way L2, add reg,imm at 5.9 per cycle. Not Cypress Cove: Golden/Raptor Cove.
	 */
	{ __LINE__, { "GenuineIntel", 6, 167, 1, true, SPR_FEATURES, 48, 2048, 5.9 }, "Raptor Cove or Golden Cove",
	  "features", true, 5, 96, 2048 },
	/* The same guest where the hypervisor also hides AMX: the L2 and the folding still rule out Cypress Cove. */
	{ __LINE__, { "GenuineIntel", 6, 167, 1, true, SPR_FEATURES & ~(F(AMX_TILE) | F(AMX_BF16)), 48, 2048, 5.9 },
	  "Raptor Cove or Golden Cove", "features", true, 5, 96, 2048 },
	/* An Emerald Rapids guest that reports its own model (0xcf): the reports in examples/ come from one. */
	{ __LINE__, { "GenuineIntel", 6, 207, 2, true, SPR_FEATURES, 48, 2048, 5.9 }, "Raptor Cove", "model", false, 5,
	  96, 2048 },
	/* ... and read back from a report, which recorded no features. */
	{ __LINE__, { "GenuineIntel", 6, 207, 2, false, 0, 48, 2048, 0 }, "Raptor Cove", "model", false, 5, 96, 2048 },
	/* A Zen 4 guest (EPYC Genoa, family 0x19 model 0x11): AVX-512 with BF16, 32 KiB L1d, 1 MiB L2. */
	{ __LINE__, { "AuthenticAMD", 0x19, 0x11, 1, true, F(AVX512F) | F(AVX512_VNNI) | F(AVX512_BF16) | F(GFNI) |
							      F(VAES), 32, 1024, 1.0 },
	  "Zen 4", "model", false, 4, 72, 3072 },
	/* A Zen 4 behind a hypervisor that reports Zen 3's model: AVX-512 and the 1 MiB L2 are Zen 4's. */
	{ __LINE__, { "AuthenticAMD", 0x19, 0x01, 1, true, F(AVX512F) | F(AVX512_VNNI) | F(AVX512_BF16), 32, 1024, 0 },
	  "Zen 4", "features", true, 4, 72, 3072 },
	/* Bare-metal Skylake-SP (Xeon Gold 6148, stepping 4): AVX-512 without VNNI. */
	{ __LINE__, { "GenuineIntel", 6, 85, 4, true, F(AVX512F), 32, 1024, 1.0 }, "Skylake-SP", "model", false, 4, 64,
	  1536 },
	/* Cascade Lake shares model 85 (stepping 7): the same core, VNNI. */
	{ __LINE__, { "GenuineIntel", 6, 85, 7, true, F(AVX512F) | F(AVX512_VNNI), 32, 1024, 1.0 }, "Cascade Lake",
	  "model", false, 4, 64, 1536 },
	/* Rocket Lake as it is (bare metal): its model and nothing against it. */
	{ __LINE__, { "GenuineIntel", 6, 167, 1, true, F(AVX512F) | F(AVX512_VNNI) | F(GFNI) | F(VAES), 48, 512, 1.0 },
	  "Cypress Cove", "model", false, 5, 64, 2048 },
	/* A model no row lists, features of none either: nothing is claimed. */
	{ __LINE__, { "GenuineIntel", 6, 0x1a, 5, false, 0, 32, 256, 0 }, "", "none", false, 0, 0, 0 },
	{ __LINE__, { "CentaurHauls", 6, 0x0f, 0, false, 0, 0, 0, 0 }, "", "none", false, 0, 0, 0 },
};

static void test_signatures(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct core_identity id;
		cores_identify(&rows[i].sig, &id);
		CHECK_ROW(rows[i].line, strcmp(id.name, rows[i].name) == 0, "name '%s', want '%s' (%s)", id.name,
			  rows[i].name, id.evidence);
		CHECK_ROW(rows[i].line, strcmp(id.basis, rows[i].basis) == 0, "basis %s, want %s", id.basis, rows[i].basis);
		CHECK_ROW(rows[i].line, id.masked == rows[i].masked, "masked %d (%s)", id.masked, id.evidence);
		CHECK_ROW(rows[i].line, (id.row ? id.row->l1_latency_cycles : 0) == rows[i].l1_latency, "L1 latency");
		CHECK_ROW(rows[i].line, (id.row ? id.row->l1d_4k : 0) == rows[i].l1d_4k, "L1 dTLB");
		CHECK_ROW(rows[i].line, (id.row ? id.row->l2_4k : 0) == rows[i].l2_4k, "STLB");
		CHECK_ROW(rows[i].line, strlen(id.evidence) > 20 || !id.row, "evidence: '%s'", id.evidence);
	}
	/* The masked model is named in the evidence, with what contradicts it. */
	struct core_identity id;
	cores_identify(&rows[1].sig, &id);
	CHECK(strstr(id.evidence, "Cypress Cove") && strstr(id.evidence, "amx_tile") && strstr(id.evidence, "masked"),
	      "evidence: %s", id.evidence);
}

/* Leaf 7 as this session's Ice Lake-SP guest reported it, and SPR's AMX/FP16 bits. */
static void test_decode(void)
{
	uint32_t f = cpu_features_decode(0xf1bf27eb, 0x00415f5e, 0xbc000410, 0);
	CHECK(f == (F(AVX512F) | F(AVX512_VNNI) | F(GFNI) | F(VAES)), "Ice Lake-SP features 0x%x", f);
	f = cpu_features_decode(0, 0, (1u << 22) | (1u << 23) | (1u << 24) | (1u << 14), (1u << 4) | (1u << 5));
	CHECK(f == (F(AMX_BF16) | F(AVX512_FP16) | F(AMX_TILE) | F(SERIALIZE) | F(AVX_VNNI) | F(AVX512_BF16)),
	      "SPR features 0x%x", f);
	CHECK(strcmp(cpu_feature_name(CPU_AMX_TILE), "amx_tile") == 0 && !cpu_feature_name(CPU_FEATURES), "names");
	CHECK(cores_folds_add_imm(5.9) && !cores_folds_add_imm(1.0), "folding threshold");
}

/* Every row is complete: a source, TLB entries, a latency, an L1d size, and at least one model. */
static void test_table(void)
{
	for (const struct core_row *r = cores_table; r->name; r++) {
		CHECK(r->source && *r->source && r->l1d_4k && r->l2_4k && r->l1_latency_cycles && r->l1d_kib &&
			      r->l2_kib[0] && (r->models[0].lo || r->models[0].hi),
		      "row %s", r->name);
		CHECK(!(r->has & r->lacks), "row %s: a feature both had and lacked", r->name);
	}
}

int main(void)
{
	test_decode();
	test_signatures();
	test_table();
	return check_finish();
}
