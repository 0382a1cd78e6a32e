/* SPDX-License-Identifier: MIT */
/* Unit tests for environment: parsers on fixture text, TLB decoding on recorded CPUID, and a live collection. */
#include "check.h"
#include "machine/cpuid.h"
#include "machine/environment.h"

/* Meson's generated version.h carries TLBPROF_BUILD_FLAGS and TLBPROF_BUILD_TYPE; a bare compile has neither. */
#if defined(__has_include)
#if __has_include("version.h")
#include "version.h"
#endif
#endif

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------------ */
/* Parsers                                                                   */

static void test_thp_selected(void)
{
	static const struct {
		int line;
		const char *text;
		size_t out_size;
		int ret;
		const char *expect;
	} rows[] = {
		{ __LINE__, "always [madvise] never\n", 24, 0, "madvise" },
		{ __LINE__, "[always] madvise never\n", 24, 0, "always" },
		{ __LINE__, "always madvise [never]\n", 24, 0, "never" },
		{ __LINE__, "always defer defer+madvise [madvise] never\n", 24, 0, "madvise" },
		{ __LINE__, "always [defer+madvise] madvise never", 24, 0, "defer+madvise" },
		{ __LINE__, "[never]", 24, 0, "never" },
		/* exactly fits: 7 chars + NUL */
		{ __LINE__, "always [madvise] never", 8, 0, "madvise" },
		{ __LINE__, "always [madvise] never", 7, -ERANGE, "" },
		{ __LINE__, "always madvise never\n", 24, -EINVAL, "" },
		{ __LINE__, "", 24, -EINVAL, "" },
		{ __LINE__, "always [madvise never\n", 24, -EINVAL, "" },
		{ __LINE__, "always madvise] never\n", 24, -EINVAL, "" },
		{ __LINE__, "always [] never\n", 24, -EINVAL, "" },
		{ __LINE__, "[always] [never]\n", 24, -EINVAL, "" },
		{ __LINE__, "[mad vise] never\n", 24, -EINVAL, "" },
		{ __LINE__, "[[madvise]] never\n", 24, -EINVAL, "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char out[64];
		int ret;

		memset(out, 'x', sizeof(out));
		ret = env_parse_thp_selected(rows[i].text, out, rows[i].out_size);
		CHECK_ROW(rows[i].line, ret == rows[i].ret, "ret %d, want %d", ret, rows[i].ret);
		CHECK_ROW(rows[i].line, strcmp(out, rows[i].expect) == 0, "out \"%s\", want \"%s\"", out,
			  rows[i].expect);
	}
}

static void test_proc_stat_steal(void)
{
	static const struct {
		int line;
		const char *text;
		int ret;
		uint64_t steal;
	} rows[] = {
		/* Recorded on the development VM (Linux 6.1). */
		{ __LINE__, "cpu  2282 0 937 38009 229 0 44 319 0 0\ncpu0 1100 0 470 19000 110 0 20 160 0 0\n", 0,
		  319 },
		{ __LINE__, "cpu 1 2 3 4 5 6 7 8\n", 0, 8 },
		{ __LINE__, "cpu\t1\t2\t3\t4\t5\t6\t7\t18446744073709551615 9 10", 0, UINT64_MAX },
		/* The aggregate line need not come first. */
		{ __LINE__, "cpu0 9 9 9 9 9 9 9 9\ncpu  1 2 3 4 5 6 7 42\n", 0, 42 },
		/* Kernels before 2.6.11 had no steal column. */
		{ __LINE__, "cpu  1 2 3 4 5 6 7\n", -EINVAL, 0 },
		{ __LINE__, "cpu0 1 2 3 4 5 6 7 8\n", -EINVAL, 0 },
		{ __LINE__, "intr 1 2 3\nctxt 5\n", -EINVAL, 0 },
		{ __LINE__, "", -EINVAL, 0 },
		{ __LINE__, "cpu  1 2 3 4 5 6 7 x\n", -EINVAL, 0 },
		{ __LINE__, "cpu  1 2 3 4 5 6 7 -8\n", -EINVAL, 0 },
		{ __LINE__, "cpu  1 2 3 4 5 6 7 8x\n", -EINVAL, 0 },
		{ __LINE__, "cpu  1 2 3 4 5 6 7 18446744073709551616\n", -EINVAL, 0 },
		{ __LINE__, "cpux 1 2 3 4 5 6 7 8\n", -EINVAL, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		uint64_t steal = 12345;
		int ret = env_parse_proc_stat_steal(rows[i].text, &steal);

		CHECK_ROW(rows[i].line, ret == rows[i].ret, "ret %d, want %d", ret, rows[i].ret);
		if (rows[i].ret == 0)
			CHECK_ROW(rows[i].line, steal == rows[i].steal, "steal %" PRIu64 ", want %" PRIu64, steal,
				  rows[i].steal);
		else
			CHECK_ROW(rows[i].line, steal == 12345, "steal written on error: %" PRIu64, steal);
	}
}

static void test_proc_stat_cpu(void)
{
	static const struct {
		int line;
		const char *text;
		int ret;
		uint64_t total, steal;
	} rows[] = {
		/* user nice system idle iowait irq softirq steal; guest and guest_nice are inside user and nice. */
		{ __LINE__, "cpu  2282 0 937 38009 229 0 44 319 100 7\ncpu0 1100 0 470 19000 110 0 20 160 0 0\n", 0,
		  2282 + 937 + 38009 + 229 + 44 + 319, 319 },
		{ __LINE__, "cpu 1 2 3 4 5 6 7 8\n", 0, 36, 8 },
		{ __LINE__, "cpu  0 0 0 0 0 0 0 0\n", 0, 0, 0 },
		{ __LINE__, "cpu  18446744073709551615 1 0 0 0 0 0 2\n", 0, UINT64_MAX, 2 },
		{ __LINE__, "cpu  1 2 3 4 5 6 7\n", -EINVAL, 0, 0 },
		{ __LINE__, "cpu0 1 2 3 4 5 6 7 8\n", -EINVAL, 0, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		uint64_t total = 777, steal = 12345;
		int ret = env_parse_proc_stat_cpu(rows[i].text, &total, &steal);

		CHECK_ROW(rows[i].line, ret == rows[i].ret, "ret %d, want %d", ret, rows[i].ret);
		if (rows[i].ret == 0)
			CHECK_ROW(rows[i].line, total == rows[i].total && steal == rows[i].steal,
				  "total %" PRIu64 " steal %" PRIu64 ", want %" PRIu64 " %" PRIu64, total, steal,
				  rows[i].total, rows[i].steal);
		else
			CHECK_ROW(rows[i].line, total == 777 && steal == 12345, "written on error");
	}
}

static void test_cap_eff(void)
{
	static const struct {
		int line;
		const char *text;
		int ret;
		uint64_t mask;
	} rows[] = {
		/* Recorded as root on the development VM (CAP_SYS_RESOURCE dropped by the container). */
		{ __LINE__, "Name:\tcat\nCapInh:\t0000000000000000\nCapPrm:\t000001fffeffffff\n"
			    "CapEff:\t000001fffeffffff\nCapBnd:\t000001fffeffffff\n", 0, UINT64_C(0x1fffeffffff) },
		/* An unprivileged user. */
		{ __LINE__, "CapEff:\t0000000000000000\n", 0, 0 },
		/* CAP_PERFMON only (setcap cap_perfmon+ep). */
		{ __LINE__, "CapEff: 0000004000000000", 0, UINT64_C(1) << ENV_CAP_PERFMON },
		{ __LINE__, "CapEff:\tFFFFFFFFFFFFFFFF\n", 0, UINT64_MAX },
		{ __LINE__, "CapEff:\t1ffffffffffffffff\n", -EINVAL, 0 },
		{ __LINE__, "CapEff:\t\n", -EINVAL, 0 },
		{ __LINE__, "CapEff:\t00000zz\n", -EINVAL, 0 },
		{ __LINE__, "CapPrm:\t000001ffffffffff\n", -ENOENT, 0 },
		{ __LINE__, "", -ENOENT, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		uint64_t mask = 99;
		int ret = env_parse_cap_eff(rows[i].text, &mask);

		CHECK_ROW(rows[i].line, ret == rows[i].ret, "ret %d, want %d", ret, rows[i].ret);
		CHECK_ROW(rows[i].line, mask == (rows[i].ret ? 99 : rows[i].mask), "mask %#" PRIx64 ", want %#" PRIx64,
			  mask, rows[i].mask);
	}
}

/* A live sample: steal is a share of the CPU time, so between 0 and 1 with ticks that add up. */
static void test_steal_sample_live(void)
{
	struct env_steal st;
	int rc = environment_steal_sample(50, &st);

	CHECK(rc == 0 || rc == -EAGAIN || rc == -ENOENT, "environment_steal_sample: %d", rc);
	if (rc == 0)
		CHECK(st.window_ms == 50 && st.total_ticks > 0 && st.steal_ticks <= st.total_ticks &&
		      st.fraction >= 0 && st.fraction <= 1, "window %u total %" PRIu64 " steal %" PRIu64 " fraction %g",
		      st.window_ms, st.total_ticks, st.steal_ticks, st.fraction);
	else
		CHECK(st.window_ms == 0 && st.fraction == 0, "not zeroed on error");
}

static void test_hugepages_dirname(void)
{
	static const struct {
		int line;
		const char *name;
		int ret;
		uint64_t bytes;
	} rows[] = {
		{ __LINE__, "hugepages-2048kB", 0, UINT64_C(2) << 20 },
		{ __LINE__, "hugepages-1048576kB", 0, UINT64_C(1) << 30 },
		{ __LINE__, "hugepages-64kB", 0, UINT64_C(64) << 10 },
		{ __LINE__, "hugepages-32768kB", 0, UINT64_C(32) << 20 },
		{ __LINE__, "hugepages-kB", -EINVAL, 0 },
		{ __LINE__, "hugepages-0kB", -EINVAL, 0 },
		{ __LINE__, "hugepages-2048", -EINVAL, 0 },
		{ __LINE__, "hugepages-2048KB", -EINVAL, 0 },
		{ __LINE__, "hugepages-2048kBx", -EINVAL, 0 },
		{ __LINE__, "hugepages--2048kB", -EINVAL, 0 },
		{ __LINE__, "hugepages-99999999999999999999kB", -EINVAL, 0 },
		{ __LINE__, ".", -EINVAL, 0 },
		{ __LINE__, "", -EINVAL, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		uint64_t bytes = 0;
		int ret = env_parse_hugepages_dirname(rows[i].name, &bytes);

		CHECK_ROW(rows[i].line, ret == rows[i].ret, "%s: ret %d, want %d", rows[i].name, ret, rows[i].ret);
		if (rows[i].ret == 0)
			CHECK_ROW(rows[i].line, bytes == rows[i].bytes, "%" PRIu64 " vs %" PRIu64, bytes,
				  rows[i].bytes);
	}
}

static void test_cache_size_and_long(void)
{
	static const struct {
		int line;
		const char *text;
		int ret;
		uint64_t bytes;
	} sizes[] = {
		{ __LINE__, "48K\n", 0, 48 * 1024 },
		{ __LINE__, "2048K", 0, UINT64_C(2) << 20 },
		{ __LINE__, "307200K\n", 0, UINT64_C(307200) * 1024 },
		{ __LINE__, "32M", 0, UINT64_C(32) << 20 },
		{ __LINE__, "1G", 0, UINT64_C(1) << 30 },
		{ __LINE__, "64", 0, 64 },
		{ __LINE__, "  16K  ", 0, 16384 },
		{ __LINE__, "", -EINVAL, 0 },
		{ __LINE__, "K", -EINVAL, 0 },
		{ __LINE__, "12X", -EINVAL, 0 },
		{ __LINE__, "12 K", -EINVAL, 0 },
		{ __LINE__, "-4K", -EINVAL, 0 },
		{ __LINE__, "18014398509481984K", -EINVAL, 0 },
	};
	static const struct {
		int line;
		const char *text;
		int ret;
		long value;
	} longs[] = {
		{ __LINE__, "2\n", 0, 2 },
		{ __LINE__, "-1\n", 0, -1 },
		{ __LINE__, "4", 0, 4 },
		{ __LINE__, " 0 ", 0, 0 },
		{ __LINE__, "", -EINVAL, 0 },
		{ __LINE__, "\n", -EINVAL, 0 },
		{ __LINE__, "2x\n", -EINVAL, 0 },
		{ __LINE__, "- 1", -EINVAL, 0 },
		{ __LINE__, "+1", -EINVAL, 0 },
		{ __LINE__, "99999999999999999999999", -EINVAL, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		uint64_t bytes = 0;
		int ret = env_parse_cache_size(sizes[i].text, &bytes);

		CHECK_ROW(sizes[i].line, ret == sizes[i].ret, "ret %d, want %d", ret, sizes[i].ret);
		if (sizes[i].ret == 0)
			CHECK_ROW(sizes[i].line, bytes == sizes[i].bytes, "%" PRIu64 " vs %" PRIu64, bytes,
				  sizes[i].bytes);
	}
	for (size_t i = 0; i < ARRAY_SIZE(longs); i++) {
		long v = 77;
		int ret = env_parse_long(longs[i].text, &v);

		CHECK_ROW(longs[i].line, ret == longs[i].ret, "ret %d, want %d", ret, longs[i].ret);
		if (longs[i].ret == 0)
			CHECK_ROW(longs[i].line, v == longs[i].value, "%ld vs %ld", v, longs[i].value);
	}
}

static void test_cpuinfo_field(void)
{
	static const char x86[] =
		"processor\t: 0\n"
		"vendor_id\t: GenuineIntel\n"
		"cpu family\t: 6\n"
		"model\t\t: 207\n"
		"model name\t: Intel(R) Xeon(R) Processor\n"
		"stepping\t: 2\n"
		"flags\t\t: fpu vme hypervisor\n"
		"empty\t\t:\n"
		"\n"
		"processor\t: 1\n"
		"model name\t: second CPU\n";
	static const char arm[] =
		"processor\t: 0\n"
		"BogoMIPS\t: 50.00\n"
		"CPU implementer\t: 0x41\n"
		"CPU architecture: 8\n"
		"CPU part\t: 0xd0c\n"
		"CPU revision\t: 1";
	static const struct {
		int line;
		const char *text, *key;
		size_t out_size;
		int ret;
		const char *expect;
	} rows[] = {
		{ __LINE__, x86, "model name", 80, 0, "Intel(R) Xeon(R) Processor" },
		{ __LINE__, x86, "model", 80, 0, "207" },
		{ __LINE__, x86, "cpu family", 80, 0, "6" },
		{ __LINE__, x86, "vendor_id", 80, 0, "GenuineIntel" },
		{ __LINE__, x86, "empty", 80, 0, "" },
		{ __LINE__, x86, "flags", 80, 0, "fpu vme hypervisor" },
		{ __LINE__, x86, "model nam", 80, -ENOENT, "" },
		{ __LINE__, x86, "vendor", 80, -ENOENT, "" },
		{ __LINE__, x86, "vendor_id", 12, -ERANGE, "" },
		{ __LINE__, x86, "vendor_id", 13, 0, "GenuineIntel" },
		{ __LINE__, arm, "CPU implementer", 80, 0, "0x41" },
		{ __LINE__, arm, "CPU architecture", 80, 0, "8" },
		{ __LINE__, arm, "CPU revision", 80, 0, "1" },
		{ __LINE__, arm, "model name", 80, -ENOENT, "" },
		{ __LINE__, "", "model name", 80, -ENOENT, "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char out[80];
		int ret;

		memset(out, 'x', sizeof(out));
		ret = env_parse_cpuinfo_field(rows[i].text, rows[i].key, out, rows[i].out_size);
		CHECK_ROW(rows[i].line, ret == rows[i].ret, "%s: ret %d, want %d", rows[i].key, ret, rows[i].ret);
		CHECK_ROW(rows[i].line, strcmp(out, rows[i].expect) == 0, "\"%s\" vs \"%s\"", out, rows[i].expect);
	}
}

static void test_cpu_signature(void)
{
	static const struct {
		int line;
		uint32_t eax;
		unsigned family, model, stepping;
	} rows[] = {
		{ __LINE__, 0x000c06f2, 6, 207, 2 },	/* this development VM's Xeon */
		{ __LINE__, 0x00050654, 6, 85, 4 },	/* Skylake-X i7-7800X */
		{ __LINE__, 0x000806f8, 6, 143, 8 },	/* Sapphire Rapids */
		{ __LINE__, 0x00a00f11, 25, 1, 1 },	/* Zen 3 EPYC 7713 */
		{ __LINE__, 0x00a60f12, 25, 97, 2 },	/* Zen 4 Ryzen 7000 */
		{ __LINE__, 0x00800f11, 23, 1, 1 },	/* Zen 1 Ryzen 7 1700 */
		{ __LINE__, 0x00020f32, 15, 35, 2 },	/* K8: extended model applies to family 0xF */
		{ __LINE__, 0x00010543, 5, 4, 3 },	/* family 5: extended model ignored */
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		unsigned f = 0, m = 0, s = 0;

		env_decode_cpu_signature(rows[i].eax, &f, &m, &s);
		CHECK_ROW(rows[i].line, f == rows[i].family && m == rows[i].model && s == rows[i].stepping,
			  "%#x -> %u/%u/%u, want %u/%u/%u", rows[i].eax, f, m, s, rows[i].family, rows[i].model,
			  rows[i].stepping);
	}
}

static void test_hypervisor_name(void)
{
	static const struct {
		int line;
		char sig[12];
		size_t out_size;
		const char *expect;
	} rows[] = {
		{ __LINE__, "KVMKVMKVM\0\0", 24, "KVM" },
		{ __LINE__, "Microsoft Hv", 24, "Hyper-V" },
		{ __LINE__, "VMwareVMware", 24, "VMware" },
		{ __LINE__, "XenVMMXenVMM", 24, "Xen" },
		{ __LINE__, "TCGTCGTCGTCG", 24, "QEMU TCG" },
		{ __LINE__, "ACRNACRNACRN", 24, "ACRNACRNACRN" },
		{ __LINE__, "Foo\x01" "Bar  \0\0\0", 24, "Foo?Bar" },
		{ __LINE__, "\0\0\0\0\0\0\0\0\0\0\0", 24, "unknown" },
		{ __LINE__, "TCGTCGTCGTCG", 5, "QEMU" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char out[24];

		memset(out, 'x', sizeof(out));
		env_hypervisor_name(rows[i].sig, out, rows[i].out_size);
		CHECK_ROW(rows[i].line, strcmp(out, rows[i].expect) == 0, "\"%s\" vs \"%s\"", out, rows[i].expect);
	}
}

/* ------------------------------------------------------------------------ */
/* TLB decoding from recorded CPUID                                          */

struct fake_leaf {
	uint32_t leaf, subleaf;
	uint32_t regs[4];	/* EAX, EBX, ECX, EDX */
};

struct fake_cpu {
	const struct fake_leaf *leaves;
	size_t n;
	unsigned calls;
};

static bool fake_cpuid(void *ctx, uint32_t leaf, uint32_t subleaf, uint32_t regs[4])
{
	struct fake_cpu *cpu = ctx;

	cpu->calls++;
	for (size_t i = 0; i < cpu->n; i++) {
		if (cpu->leaves[i].leaf == leaf && cpu->leaves[i].subleaf == subleaf) {
			memcpy(regs, cpu->leaves[i].regs, sizeof(cpu->leaves[i].regs));
			return true;
		}
	}
	/* A present leaf answers every subleaf; beyond the recorded ones it reads as zeros. */
	for (size_t i = 0; i < cpu->n; i++) {
		if (cpu->leaves[i].leaf == leaf) {
			memset(regs, 0, 4 * sizeof(regs[0]));
			return true;
		}
	}
	return false;
}

/*
 * Zen 4 (Ryzen 7 7700X; family 19h model 61h): Fn8000_0005/6 as recorded in
 * public CPUID dumps of that part, Fn8000_0019 from a Ryzen 9 8940HX (same
 * Zen 4 core). AMD documents 72 L1 DTLB and 3072 L2 DTLB entries.
 */
static const struct fake_leaf zen4[] = {
	{ 0x80000005, 0, { 0xff48ff40, 0xff48ff40, 0x20080140, 0x20080140 } },
	{ 0x80000006, 0, { 0x5c002200, 0x6c004200, 0x04006140, 0x01009140 } },
	{ 0x80000019, 0, { 0xf048f040, 0xf0400000, 0x00000000, 0x00000000 } },
};

/* Zen 3 (EPYC 7713, "Milan"), as recorded by a hypervisor's CPUID table of that part. */
static const struct fake_leaf zen3[] = {
	{ 0x80000005, 0, { 0xff40ff40, 0xff40ff40, 0x20080140, 0x20080140 } },
	{ 0x80000006, 0, { 0x48002200, 0x68004200, 0x02006140, 0x08009140 } },
	{ 0x80000019, 0, { 0xf040f040, 0xf0400000, 0x00000000, 0x00000000 } },
};

/* Zen 1 (Ryzen 7 1700), Bochs' recorded dump: no L2 TLB for 1G pages (EBX of Fn8000_0019 = 0). */
static const struct fake_leaf zen1[] = {
	{ 0x80000005, 0, { 0xff40ff40, 0xff40ff40, 0x20080140, 0x40040140 } },
	{ 0x80000006, 0, { 0x26006400, 0x66006400, 0x02006140, 0x00808140 } },
	{ 0x80000019, 0, { 0xf040f040, 0x00000000, 0x00000000, 0x00000000 } },
};

/* Synthetic: associativity code 0 means "L2 TLB disabled" whatever the entry field says. */
static const struct fake_leaf amd_l2_disabled[] = {
	{ 0x80000005, 0, { 0xff48ff40, 0xff48ff40, 0x20080140, 0x20080140 } },
	{ 0x80000006, 0, { 0x0c002200, 0x0c004200, 0x04006140, 0x01009140 } },
};

/* An AMD guest whose hypervisor zeroes the TLB leaves. */
static const struct fake_leaf amd_hidden[] = {
	{ 0x80000005, 0, { 0, 0, 0x20080140, 0x20080140 } },
	{ 0x80000006, 0, { 0, 0, 0x02006140, 0x08009140 } },
};

/*
 * Sapphire Rapids leaf 0x18 as modelled in Bochs (cpudb/intel/sapphire_rapids.cc):
 * subleaf 0 is itself invalid (EDX = 0) and only announces 8 subleaves;
 * 1-2 instruction TLBs, 3 store-only (skipped), 4-6 load-only L1, 7-8 the
 * STLB as two 1024-entry 8-way arrays of 128 sets.
 */
static const struct fake_leaf spr[] = {
	{ 0x18, 0, { 0x00000008, 0x00000000, 0x00000000, 0x00000000 } },
	{ 0x18, 1, { 0x00000000, 0x00080001, 0x00000020, 0x00004022 } },
	{ 0x18, 2, { 0x00000000, 0x00080006, 0x00000004, 0x00004022 } },
	{ 0x18, 3, { 0x00000000, 0x0010000f, 0x00000001, 0x00004125 } },
	{ 0x18, 4, { 0x00000000, 0x00040001, 0x00000010, 0x00004024 } },
	{ 0x18, 5, { 0x00000000, 0x00040006, 0x00000008, 0x00004024 } },
	{ 0x18, 6, { 0x00000000, 0x00080008, 0x00000001, 0x00004124 } },
	{ 0x18, 7, { 0x00000000, 0x00080007, 0x00000080, 0x00004043 } },
	{ 0x18, 8, { 0x00000000, 0x00080009, 0x00000080, 0x00004043 } },
	/* Its leaf 2 says "see leaf 0x18" (0xfe); it must not be consulted. */
	{ 0x02, 0, { 0x00feff01, 0x000000f0, 0x00000000, 0x00000000 } },
};

/* Ice Lake (i7-1065G7), AIDA64 dump shipped with Bochs: 7 subleaves. */
static const struct fake_leaf icelake[] = {
	{ 0x18, 0, { 0x00000007, 0x00000000, 0x00000000, 0x00000000 } },
	{ 0x18, 1, { 0x00000000, 0x00080007, 0x00000001, 0x00004122 } },
	{ 0x18, 2, { 0x00000000, 0x0010000f, 0x00000001, 0x00004125 } },
	{ 0x18, 3, { 0x00000000, 0x00040001, 0x00000010, 0x00004024 } },
	{ 0x18, 4, { 0x00000000, 0x00040006, 0x00000008, 0x00004024 } },
	{ 0x18, 5, { 0x00000000, 0x00080008, 0x00000001, 0x00004124 } },
	{ 0x18, 6, { 0x00000000, 0x00080007, 0x00000080, 0x00004043 } },
	{ 0x18, 7, { 0x00000000, 0x00080009, 0x00000080, 0x00004043 } },
};

/* Skylake-X (i7-7800X, AIDA64 dump): max basic leaf 0x16, so no leaf 0x18; descriptors 63 03 76 | ff b5 f0 | c3. */
static const struct fake_leaf skylake_x[] = {
	{ 0x02, 0, { 0x76036301, 0x00f0b5ff, 0x00000000, 0x00c30000 } },
};

/* Haswell (i7-4770): descriptor c1 = STLB 1024 entries 8-way for 4K and 2M. */
static const struct fake_leaf haswell[] = {
	{ 0x02, 0, { 0x76036301, 0x00f0b5ff, 0x00000000, 0x00c10000 } },
};

/* Sandy Bridge (i7-2600K): 5a = DTLB0 2M 32 entries, ca = STLB 512 4K entries. */
static const struct fake_leaf sandy_bridge[] = {
	{ 0x02, 0, { 0x76035a01, 0x00f0b0ff, 0x00000000, 0x00ca0000 } },
};

/* Skylake-X's descriptors with EDX marked invalid (bit 31): the STLB byte must be ignored. */
static const struct fake_leaf leaf2_invalid_edx[] = {
	{ 0x02, 0, { 0x76036301, 0x00f0b5ff, 0x00000000, 0x80c30000 } },
};

/*
 * This development VM (KVM, Xeon family 6 model 207) as recorded: the basic
 * maximum is 0x20 so leaf 0x18 exists, but subleaf 0 is all zeros; leaf 2 has
 * only ff (see leaf 4), fe (see leaf 0x18) and f0 (prefetch). No TLB facts.
 */
static const struct fake_leaf this_vm[] = {
	{ 0x02, 0, { 0x00feff01, 0x000000f0, 0x00000000, 0x00000000 } },
	{ 0x18, 0, { 0x00000000, 0x00000000, 0x00000000, 0x00000000 } },
	{ 0x80000006, 0, { 0x00000000, 0x00000000, 0x08007040, 0x00000000 } },
};

/* Synthetic: two level-2 unified arrays for 4K with different set counts -> entries add, ways unknown. */
static const struct fake_leaf mixed_sets[] = {
	{ 0x18, 0, { 0x00000002, 0x00000000, 0x00000000, 0x00000000 } },
	{ 0x18, 1, { 0x00000000, 0x00080001, 0x00000080, 0x00000043 } },
	{ 0x18, 2, { 0x00000000, 0x00040001, 0x00000100, 0x00000043 } },
};

/* Synthetic: a garbage subleaf count must not make the decoder spin for 2^32 subleaves. */
static const struct fake_leaf huge_count[] = {
	{ 0x18, 0, { 0xffffffff, 0x00040001, 0x00000010, 0x00000024 } },
};

static void test_decode_tlb(void)
{
	static const struct {
		int line;
		const char *name, *vendor;
		const struct fake_leaf *leaves;
		size_t n;
		struct env_tlb want;
	} rows[] = {
		{ __LINE__, "zen4", "AuthenticAMD", zen4, ARRAY_SIZE(zen4),
		  { .l1d_4k_entries = 72, .l1d_4k_ways = 72, .l1d_2m_entries = 72, .l1d_2m_ways = 72,
		    .l1d_1g_entries = 72, .l1d_1g_ways = 72,
		    /* code 6h = 8 ways for 4K, 5h = 6 ways for 2M: the ways each size may use in the skewed L2 DTLB */
		    .l2d_4k_entries = 3072, .l2d_4k_ways = 8, .l2d_2m_entries = 3072, .l2d_2m_ways = 6,
		    .l2d_1g_entries = 64, .l2d_1g_ways = 64, .source = "cpuid 0x80000005/6/19" } },
		{ __LINE__, "zen3", "AuthenticAMD", zen3, ARRAY_SIZE(zen3),
		  { .l1d_4k_entries = 64, .l1d_4k_ways = 64, .l1d_2m_entries = 64, .l1d_2m_ways = 64,
		    .l1d_1g_entries = 64, .l1d_1g_ways = 64,
		    .l2d_4k_entries = 2048, .l2d_4k_ways = 8, .l2d_2m_entries = 2048, .l2d_2m_ways = 4,
		    .l2d_1g_entries = 64, .l2d_1g_ways = 64, .source = "cpuid 0x80000005/6/19" } },
		{ __LINE__, "zen1", "AuthenticAMD", zen1, ARRAY_SIZE(zen1),
		  { .l1d_4k_entries = 64, .l1d_4k_ways = 64, .l1d_2m_entries = 64, .l1d_2m_ways = 64,
		    .l1d_1g_entries = 64, .l1d_1g_ways = 64,
		    .l2d_4k_entries = 1536, .l2d_4k_ways = 8, .l2d_2m_entries = 1536, .l2d_2m_ways = 2,
		    .source = "cpuid 0x80000005/6/19" } },
		{ __LINE__, "hygon", "HygonGenuine", zen3, 2,	/* without Fn8000_0019 */
		  { .l1d_4k_entries = 64, .l1d_4k_ways = 64, .l1d_2m_entries = 64, .l1d_2m_ways = 64,
		    .l2d_4k_entries = 2048, .l2d_4k_ways = 8, .l2d_2m_entries = 2048, .l2d_2m_ways = 4,
		    .source = "cpuid 0x80000005/6" } },
		{ __LINE__, "zen4 only 0x80000019", "AuthenticAMD", zen4 + 2, 1,
		  { .l1d_1g_entries = 72, .l1d_1g_ways = 72, .l2d_1g_entries = 64, .l2d_1g_ways = 64,
		    .source = "cpuid 0x80000019" } },
		{ __LINE__, "amd l2 disabled", "AuthenticAMD", amd_l2_disabled, ARRAY_SIZE(amd_l2_disabled),
		  { .l1d_4k_entries = 72, .l1d_4k_ways = 72, .l1d_2m_entries = 72, .l1d_2m_ways = 72,
		    .source = "cpuid 0x80000005" } },
		{ __LINE__, "amd hidden", "AuthenticAMD", amd_hidden, ARRAY_SIZE(amd_hidden), { .source = "none" } },
		/* AMD leaves mean nothing on Intel: the decoder must not read them. */
		{ __LINE__, "intel ignores amd leaves", "GenuineIntel", zen4, ARRAY_SIZE(zen4), { .source = "none" } },
		{ __LINE__, "sapphire rapids", "GenuineIntel", spr, ARRAY_SIZE(spr),
		  { .l1d_4k_entries = 64, .l1d_4k_ways = 4, .l1d_2m_entries = 32, .l1d_2m_ways = 4,
		    .l1d_1g_entries = 8, .l1d_1g_ways = 8,
		    .l2d_4k_entries = 2048, .l2d_4k_ways = 16, .l2d_2m_entries = 1024, .l2d_2m_ways = 8,
		    .l2d_1g_entries = 1024, .l2d_1g_ways = 8, .source = "cpuid 0x18" } },
		{ __LINE__, "ice lake", "GenuineIntel", icelake, ARRAY_SIZE(icelake),
		  { .l1d_4k_entries = 64, .l1d_4k_ways = 4, .l1d_2m_entries = 32, .l1d_2m_ways = 4,
		    .l1d_1g_entries = 8, .l1d_1g_ways = 8,
		    .l2d_4k_entries = 2048, .l2d_4k_ways = 16, .l2d_2m_entries = 1024, .l2d_2m_ways = 8,
		    .l2d_1g_entries = 1024, .l2d_1g_ways = 8, .source = "cpuid 0x18" } },
		{ __LINE__, "skylake-x", "GenuineIntel", skylake_x, ARRAY_SIZE(skylake_x),
		  { .l1d_4k_entries = 64, .l1d_4k_ways = 4, .l1d_2m_entries = 32, .l1d_2m_ways = 4,
		    .l1d_1g_entries = 4, .l1d_1g_ways = 4,
		    .l2d_4k_entries = 1536, .l2d_4k_ways = 6, .l2d_2m_entries = 1536, .l2d_2m_ways = 6,
		    .l2d_1g_entries = 16, .l2d_1g_ways = 4, .source = "cpuid 0x2" } },
		{ __LINE__, "haswell", "GenuineIntel", haswell, ARRAY_SIZE(haswell),
		  { .l1d_4k_entries = 64, .l1d_4k_ways = 4, .l1d_2m_entries = 32, .l1d_2m_ways = 4,
		    .l1d_1g_entries = 4, .l1d_1g_ways = 4,
		    .l2d_4k_entries = 1024, .l2d_4k_ways = 8, .l2d_2m_entries = 1024, .l2d_2m_ways = 8,
		    .source = "cpuid 0x2" } },
		{ __LINE__, "sandy bridge", "GenuineIntel", sandy_bridge, ARRAY_SIZE(sandy_bridge),
		  { .l1d_4k_entries = 64, .l1d_4k_ways = 4, .l1d_2m_entries = 32, .l1d_2m_ways = 4,
		    .l2d_4k_entries = 512, .l2d_4k_ways = 4, .source = "cpuid 0x2" } },
		{ __LINE__, "leaf 2 invalid edx", "GenuineIntel", leaf2_invalid_edx, ARRAY_SIZE(leaf2_invalid_edx),
		  { .l1d_4k_entries = 64, .l1d_4k_ways = 4, .l1d_2m_entries = 32, .l1d_2m_ways = 4,
		    .l1d_1g_entries = 4, .l1d_1g_ways = 4, .source = "cpuid 0x2" } },
		{ __LINE__, "this vm", "GenuineIntel", this_vm, ARRAY_SIZE(this_vm), { .source = "none" } },
		{ __LINE__, "no leaves", "GenuineIntel", NULL, 0, { .source = "none" } },
		{ __LINE__, "mixed sets", "GenuineIntel", mixed_sets, ARRAY_SIZE(mixed_sets),
		  { .l2d_4k_entries = 1024 + 1024, .l2d_4k_ways = 0, .source = "cpuid 0x18" } },
		{ __LINE__, "huge subleaf count", "GenuineIntel", huge_count, ARRAY_SIZE(huge_count),
		  { .l1d_4k_entries = 64, .l1d_4k_ways = 4, .source = "cpuid 0x18" } },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct fake_cpu cpu = { .leaves = rows[i].leaves, .n = rows[i].n };
		const struct env_tlb *w = &rows[i].want;
		struct env_tlb got;

		memset(&got, 0xa5, sizeof(got));
		environment_decode_tlb(rows[i].vendor, fake_cpuid, &cpu, &got);
		/* Field by field, through the one list of TLB fields. */
#define TLB_CHECK(f) \
		CHECK_ROW(rows[i].line, got.f == w->f, "%s: %s = %u, want %u", rows[i].name, #f, got.f, w->f);
		ENV_TLB_FIELDS(TLB_CHECK)
#undef TLB_CHECK
		CHECK_ROW(rows[i].line, strcmp(got.source, w->source) == 0, "%s: source \"%s\", want \"%s\"",
			  rows[i].name, got.source, w->source);
		CHECK_ROW(rows[i].line, cpu.calls < 200, "%s: %u CPUID calls", rows[i].name, cpu.calls);
	}
}

static void test_decode_tlb_bad_args(void)
{
	struct env_tlb got;

	memset(&got, 0xa5, sizeof(got));
	environment_decode_tlb(NULL, fake_cpuid, NULL, &got);
	CHECK(strcmp(got.source, "none") == 0 && got.l1d_4k_entries == 0, "NULL vendor: %s", got.source);
	memset(&got, 0xa5, sizeof(got));
	environment_decode_tlb("GenuineIntel", NULL, NULL, &got);
	CHECK(strcmp(got.source, "none") == 0 && got.l2d_4k_entries == 0, "NULL fn: %s", got.source);
}

/* ------------------------------------------------------------------------ */
/* Lookups on a hand-made environment                                        */

static void test_lookups(void)
{
	struct environment env;

	memset(&env, 0, sizeof(env));
	env.caches[0] = (struct env_cache){ .level = 1, .type = "Data", .size_bytes = 48 << 10 };
	env.caches[1] = (struct env_cache){ .level = 2, .type = "Unified", .size_bytes = 2 << 20 };
	env.caches[2] = (struct env_cache){ .level = 3, .type = "Unified", .size_bytes = 32 << 20 };
	env.n_caches = 3;
	env.pools[0] = (struct env_hugepool){ .page_bytes = 2 << 20, .nr = 4, .free = 3 };
	env.pools[1] = (struct env_hugepool){ .page_bytes = 1 << 30, .nr = 0, .free = 0 };
	env.n_pools = 2;

	CHECK(environment_data_cache(&env, 1) == &env.caches[0], "L1");
	CHECK(environment_data_cache(&env, 3) == &env.caches[2], "L3");
	CHECK(environment_data_cache(&env, 4) == NULL, "no L4");
	CHECK(environment_pool(&env, 2 << 20) == &env.pools[0], "2M pool");
	CHECK(environment_pool(&env, 1 << 30) == &env.pools[1], "1G pool");
	CHECK(environment_pool(&env, 4096) == NULL, "no 4K pool");
	/* Entries past n_* are not pools. */
	env.pools[2] = (struct env_hugepool){ .page_bytes = 64 << 10 };
	CHECK(environment_pool(&env, 64 << 10) == NULL, "past n_pools");
	env.caches[3] = (struct env_cache){ .level = 4, .type = "Unified" };
	CHECK(environment_data_cache(&env, 4) == NULL, "past n_caches");
	strcpy(env.caches[0].type, "Instruction");	/* an instruction cache is never a data cache */
	CHECK(environment_data_cache(&env, 1) == NULL, "instruction cache");
}

/* ------------------------------------------------------------------------ */
/* Live collection on this machine                                           */

static void print_environment(const struct environment *env)
{
	const struct env_tlb *t = &env->tlb;

	printf("cpu_vendor      = \"%s\"\n", env->cpu_vendor);
	printf("cpu_model_name  = \"%s\"\n", env->cpu_model_name);
	printf("cpu family/model/stepping = %u/%u/%u\n", env->cpu_family, env->cpu_model, env->cpu_stepping);
	printf("logical_cpus    = %d\n", env->logical_cpus);
	printf("hypervisor      = \"%s\"\n", env->hypervisor);
	for (size_t i = 0; i < env->n_caches; i++) {
		const struct env_cache *c = &env->caches[i];

		printf("cache[%zu]        = L%u %s %" PRIu64 " bytes, %u ways, %u B lines, %u sets\n", i, c->level,
		       c->type, c->size_bytes, c->ways, c->line_bytes, c->sets);
	}
	printf("tlb.source      = \"%s\"\n", t->source);
	printf("tlb l1d 4k %u/%u-way 2m %u/%u-way 1g %u/%u-way; l2d 4k %u/%u-way 2m %u/%u-way 1g %u/%u-way\n",
	       t->l1d_4k_entries, t->l1d_4k_ways, t->l1d_2m_entries, t->l1d_2m_ways, t->l1d_1g_entries,
	       t->l1d_1g_ways, t->l2d_4k_entries, t->l2d_4k_ways, t->l2d_2m_entries, t->l2d_2m_ways,
	       t->l2d_1g_entries, t->l2d_1g_ways);
	printf("kernel          = \"%s\"\n", env->kernel);
	printf("thp_enabled     = \"%s\", thp_defrag = \"%s\"\n", env->thp_enabled, env->thp_defrag);
	for (size_t i = 0; i < env->n_pools; i++) {
		const struct env_hugepool *p = &env->pools[i];

		printf("pool[%zu]         = %" PRIu64 " bytes: nr %ld free %ld resv %ld surplus %ld\n", i, p->page_bytes,
		       p->nr, p->free, p->resv, p->surplus);
	}
	if (env->perf_event_paranoid == INT32_MIN)
		printf("perf_event_paranoid = (unreadable)\n");
	else
		printf("perf_event_paranoid = %d\n", env->perf_event_paranoid);
	printf("steal_ticks     = %" PRIu64 "\n", env->steal_ticks);
	printf("compiler        = \"%s\"\n", env->compiler);
	printf("build_flags     = \"%s\"\n", env->build_flags);
	printf("build_type      = \"%s\"\n", env->build_type);
	fflush(stdout);
}

/* Read a whole small file with stdio, independently of the code under test. */
static bool slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return true;
}

#if defined(__x86_64__) || defined(__i386__)
static bool test_cpuid(void *ctx, uint32_t leaf, uint32_t subleaf, uint32_t regs[4])
{
	(void)ctx;
	if (leaf > (uint32_t)__get_cpuid_max(leaf & 0x80000000u, NULL))
		return false;
	__cpuid_count(leaf, subleaf, regs[0], regs[1], regs[2], regs[3]);
	return true;
}
#endif

/* Why fault_around_bytes is unknown: the reason decides the fix (mount debugfs, or be root). */
static void test_fault_around_why(void)
{
	static const struct {
		int line;
		int err;
		bool mounted;
		unsigned euid;
		const char *want;
	} rows[] = {
		/* Root on a machine without debugfs mounted: not "root only". */
		{ __LINE__, ENOENT, false, 0, "debugfs is not mounted (mount -t debugfs none /sys/kernel/debug)" },
		{ __LINE__, EACCES, false, 1000, "debugfs is not mounted (sudo mount -t debugfs none /sys/kernel/debug)" },
		{ __LINE__, EACCES, true, 1000, "debugfs is readable by root only" },
		{ __LINE__, EPERM, true, 0, "debugfs denies it even to root (kernel lockdown?)" },
		{ __LINE__, ENOENT, true, 0, "this kernel's debugfs has no fault_around_bytes" },
		{ __LINE__, EINVAL, true, 0, "fault_around_bytes in debugfs is unreadable" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *got = env_fault_around_why(rows[i].err, rows[i].mounted, rows[i].euid);
		CHECK_ROW(rows[i].line, strcmp(got, rows[i].want) == 0, "'%s', expected '%s'", got, rows[i].want);
	}
}

static void test_collect_live(void)
{
	struct environment env;
	static char text[1 << 16];
	struct utsname u;
	struct stat st;

	memset(&env, 0x5a, sizeof(env));
	environment_collect(&env);
	print_environment(&env);

	CHECK(env.logical_cpus > 0 && env.logical_cpus == (int)sysconf(_SC_NPROCESSORS_ONLN), "logical_cpus %d",
	      env.logical_cpus);
	CHECK(memchr(env.cpu_vendor, '\0', sizeof(env.cpu_vendor)) != NULL, "vendor not terminated");
	CHECK(env.tlb.source[0] != '\0', "tlb.source empty");
	/* fault_around_bytes: a value, or a reason that names debugfs's state as statfs sees it. */
	struct statfs sfs;
	bool debugfs = statfs("/sys/kernel/debug", &sfs) == 0 && (uint64_t)sfs.f_type == ENV_DEBUGFS_MAGIC;
	if (env.fault_around_bytes >= 0)
		CHECK(env.fault_around_why[0] == '\0', "fault_around_bytes %ld with a reason '%s'", env.fault_around_bytes,
		      env.fault_around_why);
	else
		CHECK((strstr(env.fault_around_why, "not mounted") != NULL) == !debugfs,
		      "fault_around_bytes unknown: '%s' (debugfs mounted: %d)", env.fault_around_why, debugfs);

#if defined(__x86_64__) || defined(__i386__)
	{
		struct env_tlb again;
		unsigned a, b, c, d;

		CHECK(strlen(env.cpu_vendor) == 12, "vendor \"%s\"", env.cpu_vendor);
		CHECK(env.cpu_family > 0, "family %u", env.cpu_family);
		__cpuid(1, a, b, c, d);
		CHECK(env.cpu_stepping == (a & 0xf), "stepping %u vs %u", env.cpu_stepping, a & 0xf);
		/* The collected geometry is the decoder's answer for the live CPUID. */
		environment_decode_tlb(env.cpu_vendor, test_cpuid, NULL, &again);
		CHECK(memcmp(&again, &env.tlb, sizeof(again)) == 0, "live TLB decode differs (%s vs %s)",
		      again.source, env.tlb.source);
		(void)b;
		(void)d;
		/* CPUID.1:ECX[31] is what /proc/cpuinfo shows as the "hypervisor" flag. */
		CHECK(((c >> 31) & 1) == (env.hypervisor[0] != '\0') || access("/sys/hypervisor/type", R_OK) == 0,
		      "hypervisor bit %u vs \"%s\"", (c >> 31) & 1, env.hypervisor);
	}
#endif
	if (slurp("/proc/cpuinfo", text, sizeof(text))) {
		char name[80];

		if (env_parse_cpuinfo_field(text, "model name", name, sizeof(name)) == 0 && name[0])
			CHECK(strcmp(env.cpu_model_name, name) == 0, "model name \"%s\" vs \"%s\"", env.cpu_model_name,
			      name);
	}

	/* Caches: data/unified only, sorted by level, geometry consistent with the size. */
	if (stat("/sys/devices/system/cpu/cpu0/cache/index0", &st) == 0) {
		CHECK(env.n_caches >= 1 && env.n_caches <= ENV_MAX_CACHES, "n_caches %zu", env.n_caches);
		CHECK(environment_data_cache(&env, 1) != NULL, "no L1 data cache");
	}
	for (size_t i = 0; i < env.n_caches && i < ENV_MAX_CACHES; i++) {
		const struct env_cache *c = &env.caches[i];

		CHECK(strcmp(c->type, "Data") == 0 || strcmp(c->type, "Unified") == 0, "cache type %s", c->type);
		CHECK(i == 0 || env.caches[i - 1].level <= c->level, "caches not sorted at %zu", i);
		if (c->ways && c->line_bytes && c->sets)
			CHECK(c->size_bytes == (uint64_t)c->ways * c->line_bytes * c->sets,
			      "L%u: %" PRIu64 " != %u * %u * %u", c->level, c->size_bytes, c->ways, c->line_bytes,
			      c->sets);
	}

	CHECK(uname(&u) == 0, "uname");
	CHECK(strncmp(env.kernel, u.sysname, strlen(u.sysname)) == 0 && strstr(env.kernel, u.release),
	      "kernel \"%s\"", env.kernel);

	if (slurp("/sys/kernel/mm/transparent_hugepage/enabled", text, sizeof(text))) {
		char bracketed[32];

		snprintf(bracketed, sizeof(bracketed), "[%s]", env.thp_enabled);
		CHECK(env.thp_enabled[0] && strstr(text, bracketed), "thp_enabled \"%s\" in \"%s\"", env.thp_enabled,
		      text);
	} else {
		CHECK(env.thp_enabled[0] == '\0', "thp_enabled \"%s\" without THP", env.thp_enabled);
	}
	if (slurp("/sys/kernel/mm/transparent_hugepage/defrag", text, sizeof(text))) {
		char bracketed[32];

		snprintf(bracketed, sizeof(bracketed), "[%s]", env.thp_defrag);
		CHECK(env.thp_defrag[0] && strstr(text, bracketed), "thp_defrag \"%s\"", env.thp_defrag);
	}

	if (stat("/sys/kernel/mm/hugepages/hugepages-2048kB", &st) == 0) {
		const struct env_hugepool *p = environment_pool(&env, 2 << 20);
		long nr = -2;

		CHECK(p != NULL, "no 2M pool");
		if (p && slurp("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", text, sizeof(text)) &&
		    sscanf(text, "%ld", &nr) == 1)
			CHECK(p->nr == nr && p->free >= 0 && p->free <= p->nr + p->surplus && p->resv >= 0,
			      "2M pool nr %ld (file %ld) free %ld resv %ld surplus %ld", p->nr, nr, p->free, p->resv,
			      p->surplus);
	}
	for (size_t i = 1; i < env.n_pools; i++)
		CHECK(env.pools[i - 1].page_bytes < env.pools[i].page_bytes, "pools not sorted");

	if (slurp("/proc/sys/kernel/perf_event_paranoid", text, sizeof(text))) {
		int level = INT32_MIN;

		CHECK(sscanf(text, "%d", &level) == 1 && env.perf_event_paranoid == level, "paranoid %d vs %d",
		      env.perf_event_paranoid, level);
	} else {
		CHECK(env.perf_event_paranoid == INT32_MIN, "paranoid %d without the file", env.perf_event_paranoid);
	}

	/* Steal only grows. */
	CHECK(environment_steal_ticks() >= env.steal_ticks, "steal went backwards");

	/* Privileges: the effective uid, and CapEff whenever /proc/self/status says it. */
	CHECK(env.euid == (unsigned)geteuid(), "euid %u vs %u", env.euid, (unsigned)geteuid());
	if (slurp("/proc/self/status", text, sizeof(text)) && strstr(text, "CapEff:"))
		CHECK(env.cap_known, "CapEff present but not read");

#if defined(__GNUC__) && !defined(__clang__)
	/* This test is a GCC-built ELF: its own .comment names GCC. */
	CHECK(strstr(env.compiler, "GCC:") != NULL, "compiler \"%s\"", env.compiler);
#elif defined(__clang__)
	CHECK(strstr(env.compiler, "clang") != NULL, "compiler \"%s\"", env.compiler);
#endif
#ifdef TLBPROF_BUILD_FLAGS
	CHECK(strcmp(env.build_flags, TLBPROF_BUILD_FLAGS) == 0 || strlen(TLBPROF_BUILD_FLAGS) >= sizeof(env.build_flags),
	      "build_flags \"%s\"", env.build_flags);
#else
	CHECK(env.build_flags[0] == '\0', "build_flags \"%s\" without TLBPROF_BUILD_FLAGS", env.build_flags);
#endif
#ifdef TLBPROF_BUILD_TYPE
	CHECK(strcmp(env.build_type, TLBPROF_BUILD_TYPE) == 0, "build_type \"%s\"", env.build_type);
#else
	CHECK(env.build_type[0] == '\0', "build_type \"%s\"", env.build_type);
#endif
}

int main(void)
{
	test_thp_selected();
	test_proc_stat_steal();
	test_proc_stat_cpu();
	test_cap_eff();
	test_steal_sample_live();
	test_hugepages_dirname();
	test_cache_size_and_long();
	test_cpuinfo_field();
	test_cpu_signature();
	test_hypervisor_name();
	test_decode_tlb();
	test_decode_tlb_bad_args();
	test_lookups();
	test_fault_around_why();
	test_collect_live();
	return check_finish();
}
