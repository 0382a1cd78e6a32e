/* SPDX-License-Identifier: MIT */
/* CPUID, decoded: TLB geometry from leaf 2, leaf 0x18 or AMD's leaves, the CPU signature and the hypervisor's name. */
#include "machine/cpuid.h"
#include "machine/cores.h"

#include "machine/env_text.h"
#include "machine/environment.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define ENV_HAVE_CPUID 1
#else
#define ENV_HAVE_CPUID 0
#endif

/* ------------------------------------------------------------------------ */
/* CPU signature and hypervisor                                             */

void env_decode_cpu_signature(uint32_t eax, unsigned *family, unsigned *model, unsigned *stepping)
{
	unsigned base_family = (eax >> 8) & 0xf, base_model = (eax >> 4) & 0xf;

	/* SDM Vol. 2A CPUID.01H and AMD APM: extended family only for 0xF, extended model for 6 and 0xF. */
	*family = base_family == 0xf ? base_family + ((eax >> 20) & 0xff) : base_family;
	*model = (base_family == 0x6 || base_family == 0xf) ? (((eax >> 16) & 0xf) << 4) + base_model
							    : base_model;
	*stepping = eax & 0xf;
}

void env_hypervisor_name(const char sig[12], char *out, size_t out_size)
{
	static const struct {
		char sig[12];
		const char *name;
	} known[] = {
		{ "KVMKVMKVM\0\0", "KVM" },
		{ "Microsoft Hv", "Hyper-V" },
		{ "VMwareVMware", "VMware" },
		{ "XenVMMXenVMM", "Xen" },
		{ "TCGTCGTCGTCG", "QEMU TCG" },
		{ "VBoxVBoxVBox", "VirtualBox" },
		{ "bhyve bhyve ", "bhyve" },
	};
	char raw[13];
	size_t n = 0;

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (memcmp(sig, known[i].sig, 12) == 0) {
			env_copy_trunc(out, out_size, known[i].name);
			return;
		}
	}
	for (; n < 12 && sig[n] != '\0'; n++)
		raw[n] = isprint((unsigned char)sig[n]) ? sig[n] : '?';
	raw[n] = '\0';
	env_trim(raw);
	env_copy_trunc(out, out_size, raw[0] ? raw : "unknown");
}

/* ------------------------------------------------------------------------ */
/* TLB geometry from CPUID                                                   */

enum tlb_page { TLB_4K, TLB_2M, TLB_1G, TLB_PAGES };

/* One level's view of one page size while structures are being added up. */
struct tlb_acc {
	unsigned entries, ways, sets;
	bool mixed_sets;	/* structures with different set counts: no single associativity */
};

/* Add one structure of entries = ways * sets (sets = 1 when fully associative). */
static void tlb_acc_add(struct tlb_acc *acc, unsigned entries, unsigned ways, unsigned sets)
{
	if (entries == 0)
		return;
	if (acc->entries == 0) {
		acc->entries = entries;
		acc->ways = ways;
		acc->sets = sets;
		return;
	}
	/*
	 * A page that may live in either array behaves as one structure with
	 * the ways of both, provided both index the same number of sets (Golden
	 * Cove's STLB: two 1024-entry 8-way arrays of 128 sets hold 4K pages).
	 */
	acc->entries += entries;
	if (acc->mixed_sets || acc->sets != sets || sets == 0)
		acc->mixed_sets = true;
	else
		acc->ways += ways;
}

static void tlb_fill(struct env_tlb *out, struct tlb_acc acc[2][TLB_PAGES])
{
	unsigned *slots[2][TLB_PAGES][2] = {
		{ { &out->l1d_4k_entries, &out->l1d_4k_ways },
		  { &out->l1d_2m_entries, &out->l1d_2m_ways },
		  { &out->l1d_1g_entries, &out->l1d_1g_ways } },
		{ { &out->l2d_4k_entries, &out->l2d_4k_ways },
		  { &out->l2d_2m_entries, &out->l2d_2m_ways },
		  { &out->l2d_1g_entries, &out->l2d_1g_ways } },
	};

	for (int level = 0; level < 2; level++) {
		for (int page = 0; page < TLB_PAGES; page++) {
			*slots[level][page][0] = acc[level][page].entries;
			*slots[level][page][1] = acc[level][page].mixed_sets ? 0 : acc[level][page].ways;
		}
	}
}

/*
 * AMD's 4-bit associativity code of Fn8000_0006 (also used by Fn8000_0019),
 * APM Vol. 3 Appendix E: 0 = disabled, 1..4 ways as written, 5h = 6, 6h = 8,
 * 8h = 16, Ah..Eh = 32/48/64/96/128, Fh = fully associative (UINT_MAX here);
 * 7h is reserved and 9h points at Fn8000_001D, which describes caches only,
 * so neither carries a TLB associativity. Since Zen the L2 DTLB is one skewed
 * array in which each page size may use only some ways; CPUID reports those
 * per size (Zen 4: 8 ways for 4K, 6 for 2M), and that is what is decoded.
 */
static unsigned amd_l2_ways(unsigned code)
{
	static const unsigned ways[16] = {
		[0x0] = 0, [0x1] = 1, [0x2] = 2, [0x3] = 3, [0x4] = 4, [0x5] = 6,
		[0x6] = 8, [0x7] = 0, [0x8] = 16, [0x9] = 0, [0xa] = 32, [0xb] = 48,
		[0xc] = 64, [0xd] = 96, [0xe] = 128, [0xf] = UINT_MAX,
	};

	return ways[code & 0xf];
}

/* An Fn8000_0006/Fn8000_0019 half: assoc code in bits 15:12, entries in 11:0 of the 16-bit half. */
static void amd_l2_field(uint32_t half, unsigned *entries, unsigned *ways)
{
	unsigned code = (half >> 12) & 0xf, n = half & 0xfff, w = amd_l2_ways(code);

	if (code == 0) {	/* disabled / not present */
		*entries = 0;
		*ways = 0;
		return;
	}
	*entries = n;
	*ways = w == UINT_MAX ? n : w;
}

/* An Fn8000_0005 half: assoc in bits 15:8 (01h direct, FFh fully, else the way count), entries in 7:0. */
static void amd_l1_field(uint32_t half, unsigned *entries, unsigned *ways)
{
	unsigned assoc = (half >> 8) & 0xff, n = half & 0xff;

	*entries = n;
	*ways = assoc == 0xff ? n : assoc;	/* 00h is reserved: ways stay unknown */
}

static void decode_amd(env_cpuid_fn leaf_fn, void *ctx, struct env_tlb *out)
{
	uint32_t r[4];
	char src[sizeof(out->source)] = "";
	bool l5 = false, l6 = false, l19 = false;

	/* Fn8000_0005: EAX = L1 TLB for 2M/4M pages, EBX = 4K; data TLB in the upper 16 bits. */
	if (leaf_fn(ctx, 0x80000005, 0, r)) {
		amd_l1_field(r[0] >> 16, &out->l1d_2m_entries, &out->l1d_2m_ways);
		amd_l1_field(r[1] >> 16, &out->l1d_4k_entries, &out->l1d_4k_ways);
		l5 = out->l1d_2m_entries || out->l1d_4k_entries;
	}
	/* Fn8000_0006: EAX = L2 TLB for 2M/4M pages, EBX = 4K; data TLB in the upper 16 bits. */
	if (leaf_fn(ctx, 0x80000006, 0, r)) {
		amd_l2_field(r[0] >> 16, &out->l2d_2m_entries, &out->l2d_2m_ways);
		amd_l2_field(r[1] >> 16, &out->l2d_4k_entries, &out->l2d_4k_ways);
		l6 = out->l2d_2m_entries || out->l2d_4k_entries;
	}
	/* Fn8000_0019: EAX = L1 TLB for 1G pages, EBX = L2; same 4-bit encoding as Fn8000_0006. */
	if (leaf_fn(ctx, 0x80000019, 0, r)) {
		amd_l2_field(r[0] >> 16, &out->l1d_1g_entries, &out->l1d_1g_ways);
		amd_l2_field(r[1] >> 16, &out->l2d_1g_entries, &out->l2d_1g_ways);
		l19 = out->l1d_1g_entries || out->l2d_1g_entries;
	}
	if (!l5 && !l6 && !l19)
		return;
	/* The first leaf in full, the others by their low digits: "cpuid 0x80000005/6/19". */
	{
		const char *parts[3];
		size_t n = 0, len;

		if (l5)
			parts[n++] = "5";
		if (l6)
			parts[n++] = "6";
		if (l19)
			parts[n++] = "19";
		len = (size_t)snprintf(src, sizeof(src), "cpuid 0x800000%s%s", strlen(parts[0]) == 1 ? "0" : "",
				       parts[0]);
		for (size_t i = 1; i < n && len < sizeof(src); i++)
			len += (size_t)snprintf(src + len, sizeof(src) - len, "/%s", parts[i]);
	}
	env_copy_trunc(out->source, sizeof(out->source), src);
}

/*
 * Intel leaf 0x18, Deterministic Address Translation Parameters (SDM Vol. 2A):
 * subleaves 0..EAX(subleaf 0); a subleaf is invalid when EDX[4:0] = 0 and
 * valid ones need not be contiguous. EDX[4:0] type (1 data, 2 instruction,
 * 3 unified, 4 load-only, 5 store-only), EDX[7:5] level, EDX[8] fully
 * associative, EBX[0..3] 4K/2M/4M/1G, EBX[31:16] ways, ECX sets. Loads are what
 * the chase workloads measure, so store-only and instruction TLBs are skipped.
 */
static bool decode_leaf18(env_cpuid_fn leaf_fn, void *ctx, struct env_tlb *out)
{
	struct tlb_acc acc[2][TLB_PAGES] = { 0 };
	uint32_t r[4];
	unsigned max_sub;
	bool found = false;

	if (!leaf_fn(ctx, 0x18, 0, r))
		return false;
	max_sub = r[0] > 63 ? 63 : r[0];	/* a bound against a garbage count */
	for (unsigned sub = 0; sub <= max_sub; sub++) {
		unsigned type, level;
		uint64_t entries;

		if (sub > 0 && !leaf_fn(ctx, 0x18, sub, r))
			continue;
		type = r[3] & 0x1f;
		level = (r[3] >> 5) & 0x7;
		if (!(type == 1 || type == 3 || type == 4) || level < 1 || level > 2)
			continue;
		entries = (uint64_t)(r[1] >> 16) * r[2];
		if (entries == 0 || entries > UINT_MAX)
			continue;
		if (r[1] & (1u << 0))
			tlb_acc_add(&acc[level - 1][TLB_4K], (unsigned)entries, r[1] >> 16, r[2]);
		if (r[1] & (1u << 1))
			tlb_acc_add(&acc[level - 1][TLB_2M], (unsigned)entries, r[1] >> 16, r[2]);
		if (r[1] & (1u << 3))
			tlb_acc_add(&acc[level - 1][TLB_1G], (unsigned)entries, r[1] >> 16, r[2]);
		found = found || (r[1] & 0xb) != 0;
	}
	if (!found)
		return false;
	tlb_fill(out, acc);
	env_copy_trunc(out->source, sizeof(out->source), "cpuid 0x18");
	return true;
}

/*
 * Legacy leaf 2 one-byte descriptors (SDM Vol. 2A Table 3-12) for data TLBs
 * only; the CPUs that lack leaf 0x18 (up to Skylake/Cascade Lake) report
 * these. Deliberately left out: micro/L0 TLBs (0x56, 0x57, 0x59 "DTLB0" 4K/4M,
 * 0x6A uTLB), 4M-only and "4K and 4M" entries of 32-bit-era parts (0x04, 0x05,
 * 0x5B-0x5D, 0xC0), and 0xC2, whose page sizes sources disagree on. A byte
 * may describe two arrays (0x63, 0xC3), hence one row per array. ways 0 =
 * fully associative.
 */
static const struct leaf2_row {
	uint8_t code;
	uint8_t level;		/* 1 = first-level DTLB, 2 = shared second-level TLB */
	uint8_t pages;		/* bit per enum tlb_page */
	uint16_t entries;
	uint8_t ways;
} leaf2_rows[] = {
	{ .code = 0x03, .level = 1, .pages = 1 << TLB_4K, .entries = 64, .ways = 4 },
	{ .code = 0x5a, .level = 1, .pages = 1 << TLB_2M, .entries = 32, .ways = 4 },
	{ .code = 0x63, .level = 1, .pages = 1 << TLB_2M, .entries = 32, .ways = 4 },
	{ .code = 0x63, .level = 1, .pages = 1 << TLB_1G, .entries = 4, .ways = 4 },
	{ .code = 0x64, .level = 1, .pages = 1 << TLB_4K, .entries = 512, .ways = 4 },
	{ .code = 0x6b, .level = 1, .pages = 1 << TLB_4K, .entries = 256, .ways = 8 },
	{ .code = 0x6c, .level = 1, .pages = 1 << TLB_2M, .entries = 128, .ways = 8 },
	{ .code = 0x6d, .level = 1, .pages = 1 << TLB_1G, .entries = 16, .ways = 0 },
	{ .code = 0xa0, .level = 1, .pages = 1 << TLB_4K, .entries = 32, .ways = 0 },
	{ .code = 0xb3, .level = 1, .pages = 1 << TLB_4K, .entries = 128, .ways = 4 },
	{ .code = 0xb4, .level = 1, .pages = 1 << TLB_4K, .entries = 256, .ways = 4 },
	{ .code = 0xba, .level = 1, .pages = 1 << TLB_4K, .entries = 64, .ways = 4 },
	{ .code = 0xc1, .level = 2, .pages = 1 << TLB_4K | 1 << TLB_2M, .entries = 1024, .ways = 8 },
	{ .code = 0xc3, .level = 2, .pages = 1 << TLB_4K | 1 << TLB_2M, .entries = 1536, .ways = 6 },
	{ .code = 0xc3, .level = 2, .pages = 1 << TLB_1G, .entries = 16, .ways = 4 },
	{ .code = 0xc4, .level = 1, .pages = 1 << TLB_2M, .entries = 32, .ways = 4 },
	{ .code = 0xca, .level = 2, .pages = 1 << TLB_4K, .entries = 512, .ways = 4 },
};

static bool decode_leaf2(env_cpuid_fn leaf_fn, void *ctx, struct env_tlb *out)
{
	struct tlb_acc acc[2][TLB_PAGES] = { 0 };
	uint32_t r[4];
	bool found = false;

	/*
	 * EAX[7:0] is how often leaf 2 must be executed; every CPU since the
	 * Pentium 4 says 1, and a recorded callback would replay the same
	 * registers, so one call is read. A register with bit 31 set holds no
	 * descriptors.
	 */
	if (!leaf_fn(ctx, 0x2, 0, r))
		return false;
	for (int reg = 0; reg < 4; reg++) {
		if (r[reg] & 0x80000000u)
			continue;
		for (int byte = reg == 0 ? 1 : 0; byte < 4; byte++) {
			uint8_t code = (uint8_t)(r[reg] >> (8 * byte));

			for (size_t i = 0; code && i < sizeof(leaf2_rows) / sizeof(leaf2_rows[0]); i++) {
				const struct leaf2_row *row = &leaf2_rows[i];

				if (row->code != code)
					continue;
				for (int page = 0; page < TLB_PAGES; page++) {
					if (!(row->pages & (1u << page)))
						continue;
					tlb_acc_add(&acc[row->level - 1][page], row->entries,
						    row->ways ? row->ways : row->entries,
						    row->ways ? row->entries / row->ways : 1);
				}
				found = true;
			}
		}
	}
	if (!found)
		return false;
	tlb_fill(out, acc);
	env_copy_trunc(out->source, sizeof(out->source), "cpuid 0x2");
	return true;
}

void environment_decode_tlb(const char *vendor, env_cpuid_fn leaf_fn, void *ctx, struct env_tlb *out)
{
	memset(out, 0, sizeof(*out));
	env_copy_trunc(out->source, sizeof(out->source), "none");
	if (!vendor || !leaf_fn)
		return;
	if (strcmp(vendor, "AuthenticAMD") == 0 || strcmp(vendor, "HygonGenuine") == 0) {
		decode_amd(leaf_fn, ctx, out);
		return;
	}
	if (!decode_leaf18(leaf_fn, ctx, out))
		decode_leaf2(leaf_fn, ctx, out);
}

/* ------------------------------------------------------------------------ */
/* The live CPUID                                                            */

#if ENV_HAVE_CPUID
struct cpuid_limits {
	uint32_t max_basic, max_ext;
};

/* The live CPUID as an env_cpuid_fn: a leaf beyond the reported maximum is absent. */
static bool cpuid_live(void *ctx, uint32_t leaf, uint32_t subleaf, uint32_t regs[4])
{
	const struct cpuid_limits *lim = ctx;
	uint32_t max = leaf >= 0x80000000u ? lim->max_ext : lim->max_basic;

	if (leaf > max)
		return false;
	__cpuid_count(leaf, subleaf, regs[0], regs[1], regs[2], regs[3]);
	return true;
}

bool env_cpuid_collect(struct environment *env)
{
	struct cpuid_limits lim = { 0 };
	uint32_t a, b, c, d;
	bool hypervisor_bit = false;

	__cpuid(0, a, b, c, d);
	lim.max_basic = a;
	memcpy(env->cpu_vendor, &b, 4);		/* vendor string order: EBX, EDX, ECX */
	memcpy(env->cpu_vendor + 4, &d, 4);
	memcpy(env->cpu_vendor + 8, &c, 4);
	env->cpu_vendor[12] = '\0';
	__cpuid(0x80000000u, a, b, c, d);
	lim.max_ext = a >= 0x80000000u ? a : 0;

	if (lim.max_basic >= 1) {
		__cpuid(1, a, b, c, d);
		env_decode_cpu_signature(a, &env->cpu_family, &env->cpu_model, &env->cpu_stepping);
		hypervisor_bit = (c >> 31) & 1;	/* CPUID.1:ECX[31], reserved for hypervisors */
	}
	if (lim.max_basic >= 7) {
		uint32_t eax71 = 0, b71, c71, d71;
		__cpuid_count(7, 0, a, b, c, d);
		/* Subleaf 1 exists when 7.0:EAX (the highest subleaf) is at least 1. */
		if (a >= 1)
			__cpuid_count(7, 1, eax71, b71, c71, d71);
		env->cpu_features = cpu_features_decode(b, c, d, eax71);
		env->features_known = true;
	}
	if (lim.max_ext >= 0x80000004u) {
		uint32_t brand[12];
		char text[49];

		for (uint32_t i = 0; i < 3; i++)
			__cpuid(0x80000002u + i, brand[4 * i], brand[4 * i + 1], brand[4 * i + 2],
				brand[4 * i + 3]);
		memcpy(text, brand, 48);
		text[48] = '\0';
		env_trim(text);
		env_copy_trunc(env->cpu_model_name, sizeof(env->cpu_model_name), text);
	}
	if (hypervisor_bit) {
		char sig[12];

		__cpuid(0x40000000u, a, b, c, d);
		memcpy(sig, &b, 4);
		memcpy(sig + 4, &c, 4);
		memcpy(sig + 8, &d, 4);
		env_hypervisor_name(sig, env->hypervisor, sizeof(env->hypervisor));
	}
	environment_decode_tlb(env->cpu_vendor, cpuid_live, &lim, &env->tlb);
	return true;
}
#else
bool env_cpuid_collect(struct environment *env)
{
	(void)env;
	return false;
}
#endif
