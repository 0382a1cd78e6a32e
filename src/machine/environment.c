/* SPDX-License-Identifier: MIT */
/* Reads the machine facts a measurement depends on (CPUID, sysfs, procfs, the build's own ELF) without changing any. */
#include "machine/environment.h"

#include "pmu/elfinfo.h"
#include "pmu/paranoid.h"

/* Meson's generated version.h carries TLBPROF_BUILD_FLAGS and TLBPROF_BUILD_TYPE; a bare compile has neither. */
#if defined(__has_include)
#if __has_include("version.h")
#include "version.h"
#endif
#endif

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define ENV_HAVE_CPUID 1
#else
#define ENV_HAVE_CPUID 0
#endif

/* ------------------------------------------------------------------------ */
/* Small string and file helpers                                            */

/* Copy n bytes of src into out as a string; -ERANGE (and out = "") when it does not fit. */
static int copy_span(char *out, size_t out_size, const char *src, size_t n)
{
	if (out_size == 0)
		return -ERANGE;
	if (n >= out_size) {
		out[0] = '\0';
		return -ERANGE;
	}
	memcpy(out, src, n);
	out[n] = '\0';
	return 0;
}

/* Copy a string, truncating to fit (for facts where a cut value beats none). */
static void copy_trunc(char *out, size_t out_size, const char *src)
{
	size_t n = strlen(src);

	if (out_size == 0)
		return;
	if (n >= out_size)
		n = out_size - 1;
	memcpy(out, src, n);
	out[n] = '\0';
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Trim leading and trailing whitespace in place. */
static void trim(char *s)
{
	size_t start = 0, n = strlen(s);

	while (n > 0 && is_blank(s[n - 1]))
		s[--n] = '\0';
	while (start < n && is_blank(s[start]))
		start++;
	if (start > 0)
		memmove(s, s + start, n - start + 1);
}

/*
 * Read up to size - 1 bytes of a (proc/sys) file into buf, NUL-terminated.
 * Returns 0 or -errno of the failing open/read. A longer file is cut: callers
 * only need its beginning (/proc/stat's first line, /proc/cpuinfo's first CPU).
 */
static int read_text(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd, err = 0;

	if (size == 0)
		return -EINVAL;
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < size - 1) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return err;
}

/* Parse an unsigned decimal at *p (no sign, no leading blanks); advances *p. */
static bool parse_u64(const char **p, uint64_t *value)
{
	const char *s = *p;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return false;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*p = s;
	*value = v;
	return true;
}

/* ------------------------------------------------------------------------ */
/* Pure parsers (declared in environment.h)                                 */

int env_parse_thp_selected(const char *text, char *out, size_t out_size)
{
	const char *open_b, *close_b;

	if (out_size > 0)
		out[0] = '\0';
	open_b = strchr(text, '[');
	if (!open_b)
		return -EINVAL;
	close_b = strchr(open_b + 1, ']');
	if (!close_b || close_b == open_b + 1)
		return -EINVAL;
	for (const char *c = open_b + 1; c < close_b; c++)
		if (is_blank(*c) || *c == '[')
			return -EINVAL;
	/* The kernel marks exactly one value; a second bracket means this is not its format. */
	if (strchr(close_b + 1, '[') || strchr(close_b + 1, ']'))
		return -EINVAL;
	return copy_span(out, out_size, open_b + 1, (size_t)(close_b - open_b - 1));
}

int env_parse_proc_stat_cpu(const char *text, uint64_t *total_ticks, uint64_t *steal_ticks)
{
	/*
	 * "cpu  user nice system idle iowait irq softirq steal guest guest_nice"
	 * (proc(5)); steal exists since Linux 2.6.11. The aggregate line is the
	 * one named "cpu" followed by a blank; "cpu0" etc. are per-CPU lines.
	 * guest and guest_nice are already counted in user and nice, so the
	 * total is the sum of the first eight.
	 */
	for (const char *line = text; line && *line;) {
		if (strncmp(line, "cpu", 3) == 0 && (line[3] == ' ' || line[3] == '\t')) {
			const char *p = line + 3;
			uint64_t v = 0, total = 0;

			for (int field = 1; field <= 8; field++) {
				if (*p != ' ' && *p != '\t')
					return -EINVAL;
				while (*p == ' ' || *p == '\t')
					p++;
				if (!parse_u64(&p, &v))
					return -EINVAL;
				total = total > UINT64_MAX - v ? UINT64_MAX : total + v;	/* saturate, never wrap */
			}
			if (*p != '\0' && !is_blank(*p))
				return -EINVAL;
			*total_ticks = total;
			*steal_ticks = v;
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -EINVAL;
}

int env_parse_proc_stat_steal(const char *text, uint64_t *steal_ticks)
{
	uint64_t total;

	return env_parse_proc_stat_cpu(text, &total, steal_ticks);
}

int env_parse_cap_eff(const char *text, uint64_t *cap_effective)
{
	/* "CapEff:\t000001ffffffffff" in /proc/PID/status (proc(5)): 64 bits in hex. */
	for (const char *line = text; line && *line;) {
		if (strncmp(line, "CapEff:", 7) == 0) {
			const char *p = line + 7;
			uint64_t v = 0;
			int digits = 0;

			while (*p == ' ' || *p == '\t')
				p++;
			for (; isxdigit((unsigned char)*p); p++, digits++) {
				if (digits == 16)
					return -EINVAL;
				v = v << 4 | (uint64_t)(isdigit((unsigned char)*p) ? *p - '0'
										 : tolower((unsigned char)*p) - 'a' + 10);
			}
			if (digits == 0 || (*p != '\0' && !is_blank(*p)))
				return -EINVAL;
			*cap_effective = v;
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENOENT;
}

int env_parse_hugepages_dirname(const char *name, uint64_t *page_bytes)
{
	static const char prefix[] = "hugepages-";
	const char *p = name;
	uint64_t kb;

	if (strncmp(p, prefix, sizeof(prefix) - 1) != 0)
		return -EINVAL;
	p += sizeof(prefix) - 1;
	if (!parse_u64(&p, &kb) || kb == 0 || strcmp(p, "kB") != 0)
		return -EINVAL;
	if (kb > UINT64_MAX / 1024)
		return -EINVAL;
	*page_bytes = kb * 1024;
	return 0;
}

int env_parse_cache_size(const char *text, uint64_t *bytes)
{
	const char *p = text;
	uint64_t v, mult = 1;

	while (is_blank(*p))
		p++;
	if (!parse_u64(&p, &v))
		return -EINVAL;
	switch (*p) {
	case 'K': case 'k': mult = UINT64_C(1) << 10; p++; break;
	case 'M': case 'm': mult = UINT64_C(1) << 20; p++; break;
	case 'G': case 'g': mult = UINT64_C(1) << 30; p++; break;
	default: break;
	}
	while (is_blank(*p))
		p++;
	if (*p != '\0' || v > UINT64_MAX / mult)
		return -EINVAL;
	*bytes = v * mult;
	return 0;
}

int env_parse_long(const char *text, long *value)
{
	const char *p = text;
	char *end;
	long v;

	while (is_blank(*p))
		p++;
	if (!(isdigit((unsigned char)*p) || (*p == '-' && isdigit((unsigned char)p[1]))))
		return -EINVAL;
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno == ERANGE)
		return -EINVAL;
	while (is_blank(*end))
		end++;
	if (*end != '\0')
		return -EINVAL;
	*value = v;
	return 0;
}

int env_parse_cpuinfo_field(const char *text, const char *key, char *out, size_t out_size)
{
	size_t key_len = strlen(key);

	if (out_size > 0)
		out[0] = '\0';
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		const char *end = nl ? nl : line + strlen(line);
		const char *colon = memchr(line, ':', (size_t)(end - line));

		if (colon) {
			const char *k_end = colon;

			while (k_end > line && is_blank(k_end[-1]))
				k_end--;
			if ((size_t)(k_end - line) == key_len && memcmp(line, key, key_len) == 0) {
				const char *v = colon + 1, *v_end = end;

				while (v < v_end && is_blank(*v))
					v++;
				while (v_end > v && is_blank(v_end[-1]))
					v_end--;
				return copy_span(out, out_size, v, (size_t)(v_end - v));
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

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
			copy_trunc(out, out_size, known[i].name);
			return;
		}
	}
	for (; n < 12 && sig[n] != '\0'; n++)
		raw[n] = isprint((unsigned char)sig[n]) ? sig[n] : '?';
	raw[n] = '\0';
	trim(raw);
	copy_trunc(out, out_size, raw[0] ? raw : "unknown");
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
	copy_trunc(out->source, sizeof(out->source), src);
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
	copy_trunc(out->source, sizeof(out->source), "cpuid 0x18");
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
	copy_trunc(out->source, sizeof(out->source), "cpuid 0x2");
	return true;
}

void environment_decode_tlb(const char *vendor, env_cpuid_fn leaf_fn, void *ctx, struct env_tlb *out)
{
	memset(out, 0, sizeof(*out));
	copy_trunc(out->source, sizeof(out->source), "none");
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
/* Collection                                                                */

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

static void collect_cpu_cpuid(struct environment *env)
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
	if (lim.max_ext >= 0x80000004u) {
		uint32_t brand[12];
		char text[49];

		for (uint32_t i = 0; i < 3; i++)
			__cpuid(0x80000002u + i, brand[4 * i], brand[4 * i + 1], brand[4 * i + 2],
				brand[4 * i + 3]);
		memcpy(text, brand, 48);
		text[48] = '\0';
		trim(text);
		copy_trunc(env->cpu_model_name, sizeof(env->cpu_model_name), text);
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
}
#endif

/* Fields CPUID gives on x86, read from /proc/cpuinfo elsewhere (arm64: "CPU implementer" etc.). */
static void collect_cpu_cpuinfo(struct environment *env, const char *cpuinfo)
{
	char v[80];

	if (env_parse_cpuinfo_field(cpuinfo, "vendor_id", v, sizeof(v)) == 0 ||
	    env_parse_cpuinfo_field(cpuinfo, "CPU implementer", v, sizeof(v)) == 0)
		copy_trunc(env->cpu_vendor, sizeof(env->cpu_vendor), v);
	if (env_parse_cpuinfo_field(cpuinfo, "cpu family", v, sizeof(v)) == 0 ||
	    env_parse_cpuinfo_field(cpuinfo, "CPU architecture", v, sizeof(v)) == 0)
		env->cpu_family = (unsigned)strtoul(v, NULL, 0);
	if (env_parse_cpuinfo_field(cpuinfo, "model", v, sizeof(v)) == 0 ||
	    env_parse_cpuinfo_field(cpuinfo, "CPU part", v, sizeof(v)) == 0)
		env->cpu_model = (unsigned)strtoul(v, NULL, 0);
	if (env_parse_cpuinfo_field(cpuinfo, "stepping", v, sizeof(v)) == 0 ||
	    env_parse_cpuinfo_field(cpuinfo, "CPU revision", v, sizeof(v)) == 0)
		env->cpu_stepping = (unsigned)strtoul(v, NULL, 0);
}

static void collect_cpu(struct environment *env)
{
	char cpuinfo[16384], name[sizeof(env->cpu_model_name)];
	long n;

	copy_trunc(env->tlb.source, sizeof(env->tlb.source), "none");
#if ENV_HAVE_CPUID
	collect_cpu_cpuid(env);
#endif
	/* The first CPU's block is all that is needed; the buffer may cut later ones. */
	if (read_text("/proc/cpuinfo", cpuinfo, sizeof(cpuinfo)) == 0) {
		if (env_parse_cpuinfo_field(cpuinfo, "model name", name, sizeof(name)) == 0 && name[0])
			copy_trunc(env->cpu_model_name, sizeof(env->cpu_model_name), name);
		if (!ENV_HAVE_CPUID)
			collect_cpu_cpuinfo(env, cpuinfo);
	}
	n = sysconf(_SC_NPROCESSORS_ONLN);
	env->logical_cpus = n > 0 && n <= INT_MAX ? (int)n : 0;

	/* Without a CPUID signature (or on other architectures), Xen PV guests still say so here. */
	if (env->hypervisor[0] == '\0') {
		char type[32];

		if (read_text("/sys/hypervisor/type", type, sizeof(type)) == 0) {
			trim(type);
			copy_trunc(env->hypervisor, sizeof(env->hypervisor), type);
		}
	}
}

static int cache_cmp(const void *pa, const void *pb)
{
	const struct env_cache *a = pa, *b = pb;

	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	return strcmp(a->type, b->type);	/* "Data" before "Unified" */
}

/* Read the small sysfs file dir/name into buf; 0 or -errno (-ENAMETOOLONG when the path does not fit). */
static int read_attr(const char *dir, const char *name, char *buf, size_t size)
{
	char path[512];
	int n = snprintf(path, sizeof(path), "%s/%s", dir, name);

	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	return read_text(path, buf, size);
}

/* A small sysfs value as an unsigned; 0 when unreadable or malformed. */
static unsigned read_unsigned(const char *dir, const char *name)
{
	char text[64];
	long v;

	if (read_attr(dir, name, text, sizeof(text)) != 0 || env_parse_long(text, &v) != 0 || v < 0 ||
	    (unsigned long)v > UINT_MAX)
		return 0;
	return (unsigned)v;
}

static void collect_caches(struct environment *env)
{
	static const char base[] = "/sys/devices/system/cpu/cpu0/cache";
	struct env_cache found[16];
	size_t n = 0;
	DIR *dir = opendir(base);
	struct dirent *de;

	if (!dir)
		return;
	while ((de = readdir(dir)) != NULL && n < sizeof(found) / sizeof(found[0])) {
		struct env_cache *c = &found[n];
		char dpath[512], text[64];
		unsigned idx;
		char tail;

		if (sscanf(de->d_name, "index%u%c", &idx, &tail) != 1)
			continue;
		if (snprintf(dpath, sizeof(dpath), "%s/%s", base, de->d_name) >= (int)sizeof(dpath))
			continue;
		memset(c, 0, sizeof(*c));
		if (read_attr(dpath, "type", text, sizeof(text)) != 0)
			continue;
		trim(text);
		if (strcmp(text, "Data") != 0 && strcmp(text, "Unified") != 0)
			continue;	/* instruction caches do not hold the chased data */
		copy_trunc(c->type, sizeof(c->type), text);
		c->level = read_unsigned(dpath, "level");
		if (c->level == 0)
			continue;
		if (read_attr(dpath, "size", text, sizeof(text)) != 0 ||
		    env_parse_cache_size(text, &c->size_bytes) != 0)
			c->size_bytes = 0;
		c->ways = read_unsigned(dpath, "ways_of_associativity");
		c->line_bytes = read_unsigned(dpath, "coherency_line_size");
		c->sets = read_unsigned(dpath, "number_of_sets");
		n++;
	}
	closedir(dir);
	qsort(found, n, sizeof(found[0]), cache_cmp);
	env->n_caches = n < ENV_MAX_CACHES ? n : ENV_MAX_CACHES;
	memcpy(env->caches, found, env->n_caches * sizeof(found[0]));
}

/* A pool counter file; -1 when unreadable. */
static long read_pool_count(const char *dir, const char *name)
{
	char text[64];
	long v;

	if (read_attr(dir, name, text, sizeof(text)) != 0 || env_parse_long(text, &v) != 0)
		return -1;
	return v;
}

static int pool_cmp(const void *pa, const void *pb)
{
	const struct env_hugepool *a = pa, *b = pb;

	return a->page_bytes < b->page_bytes ? -1 : a->page_bytes > b->page_bytes;
}

/* The four counts of the pool in directory dpath. */
static void read_pool(const char *dpath, struct env_hugepool *p)
{
	p->nr = read_pool_count(dpath, "nr_hugepages");
	p->free = read_pool_count(dpath, "free_hugepages");
	p->resv = read_pool_count(dpath, "resv_hugepages");
	p->surplus = read_pool_count(dpath, "surplus_hugepages");
}

int environment_pool_read(uint64_t page_bytes, struct env_hugepool *out)
{
	char dpath[96];

	memset(out, 0, sizeof(*out));
	out->page_bytes = page_bytes;
	snprintf(dpath, sizeof(dpath), "/sys/kernel/mm/hugepages/hugepages-%llukB",
		 (unsigned long long)(page_bytes >> 10));
	read_pool(dpath, out);
	return out->free < 0 ? -ENOENT : 0;
}

uint64_t environment_pool_unreserved(const struct env_hugepool *pool)
{
	if (!pool || pool->free <= 0)
		return 0;
	/* resv_hugepages counts pages promised to mappings that have not touched them yet: they are in free too. */
	uint64_t resv = pool->resv > 0 ? (uint64_t)pool->resv : 0;
	return (uint64_t)pool->free > resv ? (uint64_t)pool->free - resv : 0;
}

uint64_t environment_pool_target(const struct env_hugepool *pool, uint64_t need)
{
	uint64_t nr = pool && pool->nr > 0 ? (uint64_t)pool->nr : 0, have = environment_pool_unreserved(pool);

	return have >= need ? nr : nr + (need - have);
}

static void collect_pools(struct environment *env)
{
	static const char base[] = "/sys/kernel/mm/hugepages";
	struct env_hugepool found[16];
	size_t n = 0;
	DIR *dir = opendir(base);
	struct dirent *de;

	if (!dir)
		return;
	while ((de = readdir(dir)) != NULL && n < sizeof(found) / sizeof(found[0])) {
		struct env_hugepool *p = &found[n];
		char dpath[512];

		if (env_parse_hugepages_dirname(de->d_name, &p->page_bytes) != 0)
			continue;
		if (snprintf(dpath, sizeof(dpath), "%s/%s", base, de->d_name) >= (int)sizeof(dpath))
			continue;
		read_pool(dpath, p);
		n++;
	}
	closedir(dir);
	qsort(found, n, sizeof(found[0]), pool_cmp);
	env->n_pools = n < ENV_MAX_POOLS ? n : ENV_MAX_POOLS;
	memcpy(env->pools, found, env->n_pools * sizeof(found[0]));
}

/* Governor and turbo state: a "powersave" governor or turbo makes the clock move under a measurement. */
static void collect_cpufreq(struct environment *env)
{
	char text[64];
	long v;

	if (read_text("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver", text, sizeof(text)) == 0) {
		trim(text);
		copy_trunc(env->cpufreq_driver, sizeof(env->cpufreq_driver), text);
	}
	if (read_text("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", text, sizeof(text)) == 0) {
		trim(text);
		copy_trunc(env->cpufreq_governor, sizeof(env->cpufreq_governor), text);
	}
	env->turbo = -1;
	/* intel_pstate says "no_turbo"; acpi-cpufreq and amd-pstate say "boost". */
	if (read_text("/sys/devices/system/cpu/intel_pstate/no_turbo", text, sizeof(text)) == 0 &&
	    env_parse_long(text, &v) == 0)
		env->turbo = v == 0;
	else if (read_text("/sys/devices/system/cpu/cpufreq/boost", text, sizeof(text)) == 0 &&
		 env_parse_long(text, &v) == 0)
		env->turbo = v != 0;
}

static void collect_kernel(struct environment *env)
{
	struct utsname u;
	char text[256];
	long v;

	if (uname(&u) == 0) {
		int n = snprintf(env->kernel, sizeof(env->kernel), "%s %s %s %s", u.sysname, u.release,
				 u.version, u.machine);

		if (n < 0)
			env->kernel[0] = '\0';	/* a longer one is cut, which is fine for a label */
	}
	if (read_text("/sys/kernel/mm/transparent_hugepage/enabled", text, sizeof(text)) == 0)
		env_parse_thp_selected(text, env->thp_enabled, sizeof(env->thp_enabled));
	if (read_text("/sys/kernel/mm/transparent_hugepage/defrag", text, sizeof(text)) == 0)
		env_parse_thp_selected(text, env->thp_defrag, sizeof(env->thp_defrag));
	collect_pools(env);
	env->perf_event_paranoid = paranoid_level();
	env->euid = (unsigned)geteuid();
	/* /proc/self/status is a few KiB; CapEff is in its first half. */
	char status[4096];
	env->cap_known = read_text("/proc/self/status", status, sizeof(status)) == 0 &&
			 env_parse_cap_eff(status, &env->cap_effective) == 0;
	env->steal_ticks = environment_steal_ticks();
	collect_cpufreq(env);
	/* How many bytes a file read fault maps around the faulting page (debugfs: root, when mounted). */
	env->fault_around_bytes = -1;
	env->fault_around_why[0] = '\0';
	int rc = read_text("/sys/kernel/debug/fault_around_bytes", text, sizeof(text));
	if (rc == 0 && env_parse_long(text, &v) == 0) {
		env->fault_around_bytes = v;
	} else {
		/* Which of the reasons it is: the fix differs (mount it, or be root). */
		struct statfs sfs;
		bool mounted = statfs("/sys/kernel/debug", &sfs) == 0 && (uint64_t)sfs.f_type == ENV_DEBUGFS_MAGIC;
		snprintf(env->fault_around_why, sizeof(env->fault_around_why), "%s",
			 env_fault_around_why(rc ? -rc : EINVAL, mounted, env->euid));
	}
}

const char *env_fault_around_why(int err, bool debugfs_mounted, unsigned euid)
{
	if (!debugfs_mounted)
		return euid == 0 ? "debugfs is not mounted (mount -t debugfs none /sys/kernel/debug)"
				 : "debugfs is not mounted (sudo mount -t debugfs none /sys/kernel/debug)";
	if ((err == EACCES || err == EPERM) && euid != 0)
		return "debugfs is readable by root only";
	if (err == EACCES || err == EPERM)
		return "debugfs denies it even to root (kernel lockdown?)";
	if (err == ENOENT)
		return "this kernel's debugfs has no fault_around_bytes";
	return "fault_around_bytes in debugfs is unreadable";
}

static void collect_build(struct environment *env)
{
	struct elf_provenance prov;

	if (elf_provenance_read("/proc/self/exe", &prov) == 0)
		copy_trunc(env->compiler, sizeof(env->compiler), prov.comment);
#ifdef TLBPROF_BUILD_FLAGS
	copy_trunc(env->build_flags, sizeof(env->build_flags), TLBPROF_BUILD_FLAGS);
#endif
#ifdef TLBPROF_BUILD_TYPE
	copy_trunc(env->build_type, sizeof(env->build_type), TLBPROF_BUILD_TYPE);
#endif
}

/*
 * L1 load-to-use latency of a dependent pointer chase ("mov (%rax), %rax"),
 * from the vendors' optimisation manuals: 4 cycles on Zen and on Intel cores
 * up to Skylake, 5 cycles from Sunny Cove (Ice Lake) on. model 0 with
 * any_model matches every model of the family.
 */
static const struct {
	const char *vendor;
	unsigned family, model;
	bool any_model;
	unsigned cycles;
	const char *core;
} l1_latency_table[] = {
	{ "AuthenticAMD", 0x17, 0, true, 4, "Zen/Zen 2" },
	{ "AuthenticAMD", 0x19, 0x10, false, 4, "Zen 4" },
	{ "AuthenticAMD", 0x19, 0x11, false, 4, "Zen 4" },
	{ "AuthenticAMD", 0x19, 0x18, false, 4, "Zen 4" },
	{ "AuthenticAMD", 0x19, 0x60, false, 4, "Zen 4" },
	{ "AuthenticAMD", 0x19, 0x61, false, 4, "Zen 4" },
	{ "AuthenticAMD", 0x19, 0x70, false, 4, "Zen 4" },
	{ "AuthenticAMD", 0x19, 0x74, false, 4, "Zen 4" },
	{ "AuthenticAMD", 0x19, 0x75, false, 4, "Zen 4" },
	{ "AuthenticAMD", 0x19, 0x78, false, 4, "Zen 4c" },
	{ "AuthenticAMD", 0x19, 0xa0, false, 4, "Zen 4c" },
	{ "AuthenticAMD", 0x19, 0, true, 4, "Zen 3" },
	{ "AuthenticAMD", 0x1a, 0, true, 4, "Zen 5" },
	{ "HygonGenuine", 0x18, 0, true, 4, "Dhyana (Zen)" },
	{ "GenuineIntel", 6, 0x3c, false, 4, "Haswell" },
	{ "GenuineIntel", 6, 0x3f, false, 4, "Haswell" },
	{ "GenuineIntel", 6, 0x45, false, 4, "Haswell" },
	{ "GenuineIntel", 6, 0x46, false, 4, "Haswell" },
	{ "GenuineIntel", 6, 0x3d, false, 4, "Broadwell" },
	{ "GenuineIntel", 6, 0x47, false, 4, "Broadwell" },
	{ "GenuineIntel", 6, 0x4f, false, 4, "Broadwell" },
	{ "GenuineIntel", 6, 0x56, false, 4, "Broadwell" },
	{ "GenuineIntel", 6, 0x4e, false, 4, "Skylake" },
	{ "GenuineIntel", 6, 0x5e, false, 4, "Skylake" },
	{ "GenuineIntel", 6, 0x55, false, 4, "Skylake-SP" },
	{ "GenuineIntel", 6, 0x8e, false, 4, "Kaby/Coffee Lake" },
	{ "GenuineIntel", 6, 0x9e, false, 4, "Kaby/Coffee Lake" },
	{ "GenuineIntel", 6, 0xa5, false, 4, "Comet Lake" },
	{ "GenuineIntel", 6, 0xa6, false, 4, "Comet Lake" },
	{ "GenuineIntel", 6, 0x7d, false, 5, "Sunny Cove" },
	{ "GenuineIntel", 6, 0x7e, false, 5, "Sunny Cove" },
	{ "GenuineIntel", 6, 0x6a, false, 5, "Sunny Cove" },
	{ "GenuineIntel", 6, 0x6c, false, 5, "Sunny Cove" },
	{ "GenuineIntel", 6, 0x8c, false, 5, "Willow Cove" },
	{ "GenuineIntel", 6, 0x8d, false, 5, "Willow Cove" },
	{ "GenuineIntel", 6, 0xa7, false, 5, "Cypress Cove" },
	{ "GenuineIntel", 6, 0x97, false, 5, "Golden Cove" },
	{ "GenuineIntel", 6, 0x9a, false, 5, "Golden Cove" },
	{ "GenuineIntel", 6, 0x8f, false, 5, "Golden Cove" },
	{ "GenuineIntel", 6, 0xb7, false, 5, "Raptor Cove" },
	{ "GenuineIntel", 6, 0xba, false, 5, "Raptor Cove" },
	{ "GenuineIntel", 6, 0xbf, false, 5, "Raptor Cove" },
	{ "GenuineIntel", 6, 0xcf, false, 5, "Raptor Cove" },
	{ "GenuineIntel", 6, 0xad, false, 5, "Redwood Cove" },
	{ "GenuineIntel", 6, 0xae, false, 5, "Redwood Cove" },
};

unsigned environment_l1_latency(const char *vendor, unsigned family, unsigned model, const char **core)
{
	for (size_t i = 0; i < sizeof(l1_latency_table) / sizeof(l1_latency_table[0]); i++) {
		if (strcmp(vendor, l1_latency_table[i].vendor) != 0 || family != l1_latency_table[i].family ||
		    (!l1_latency_table[i].any_model && model != l1_latency_table[i].model))
			continue;
		if (core)
			*core = l1_latency_table[i].core;
		return l1_latency_table[i].cycles;
	}
	if (core)
		*core = "";
	return 0;
}

void environment_collect(struct environment *env)
{
	memset(env, 0, sizeof(*env));
	collect_cpu(env);
	const char *core;
	env->l1_latency_cycles = environment_l1_latency(env->cpu_vendor, env->cpu_family, env->cpu_model, &core);
	snprintf(env->core_name, sizeof(env->core_name), "%s", core);
	collect_caches(env);
	collect_kernel(env);
	collect_build(env);
}

const struct env_hugepool *environment_pool(const struct environment *env, uint64_t page_bytes)
{
	for (size_t i = 0; i < env->n_pools && i < ENV_MAX_POOLS; i++)
		if (env->pools[i].page_bytes == page_bytes)
			return &env->pools[i];
	return NULL;
}

const struct env_cache *environment_data_cache(const struct environment *env, unsigned level)
{
	for (size_t i = 0; i < env->n_caches && i < ENV_MAX_CACHES; i++) {
		const struct env_cache *c = &env->caches[i];

		if (c->level == level && (strcmp(c->type, "Data") == 0 || strcmp(c->type, "Unified") == 0))
			return c;
	}
	return NULL;
}

uint64_t environment_steal_ticks(void)
{
	/* The aggregate "cpu " line comes first; 8 KiB holds it on any machine. */
	char text[8192];
	uint64_t steal;

	if (read_text("/proc/stat", text, sizeof(text)) != 0 || env_parse_proc_stat_steal(text, &steal) != 0)
		return 0;
	return steal;
}

/* The aggregate CPU line of /proc/stat: total and steal ticks. */
static int read_stat_cpu(uint64_t *total, uint64_t *steal)
{
	char text[8192];
	int rc = read_text("/proc/stat", text, sizeof(text));

	return rc ? rc : env_parse_proc_stat_cpu(text, total, steal);
}

int environment_steal_sample(unsigned window_ms, struct env_steal *out)
{
	uint64_t total0, steal0, total1, steal1;
	struct timespec ts = { .tv_sec = window_ms / 1000, .tv_nsec = (long)(window_ms % 1000) * 1000000L };
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = read_stat_cpu(&total0, &steal0)) != 0)
		return rc;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	if ((rc = read_stat_cpu(&total1, &steal1)) != 0)
		return rc;
	/* The counters only grow; a smaller value means a CPU went offline in between (its ticks left the sum). */
	if (total1 <= total0 || steal1 < steal0)
		return -EAGAIN;
	out->window_ms = window_ms;
	out->total_ticks = total1 - total0;
	out->steal_ticks = steal1 - steal0;
	out->fraction = (double)out->steal_ticks / (double)out->total_ticks;
	return 0;
}
