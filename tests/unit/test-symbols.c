/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for symbols: the maps parser (golden table), overlapping mappings, load bias, this process resolved,
 * DWARF lines and inlined frames through libdwfl, a stripped file's separate debug file.
 */
#include "check.h"
#include "pmu/demangle.h"
#include "pmu/symbols.h"
#include "pmu/symbols_jit.h"
#include "pmu/symbols_unwind.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

extern char **environ;

static void test_parse_line(void)
{
	static const struct {
		int line;
		const char *text;
		int ret;
		uint64_t start, end, offset;
		const char *perms;
		uint32_t major, minor;
		uint64_t inode;
		bool deleted;
		const char *path;
	} rows[] = {
		{ __LINE__, "55d4c9a00000-55d4c9a02000 r--p 00000000 08:01 1234567                    /usr/bin/cat\n", 0,
		  0x55d4c9a00000, 0x55d4c9a02000, 0, "r--p", 8, 1, 1234567, false, "/usr/bin/cat" },
		{ __LINE__, "7f9db401d000-7f9db4027000 r-xp 00027000 fe:00 332383 /usr/lib/ld.so", 0,
		  0x7f9db401d000, 0x7f9db4027000, 0x27000, "r-xp", 0xfe, 0, 332383, false, "/usr/lib/ld.so" },
		/* Anonymous memory: the kernel ends the line with a space after the inode. */
		{ __LINE__, "7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n", 0,
		  0x7f0000000000, 0x7f0000021000, 0, "rw-p", 0, 0, 0, false, "" },
		{ __LINE__, "7f0000000000-7f0000021000 rw-p 00000000 00:00 0", 0,
		  0x7f0000000000, 0x7f0000021000, 0, "rw-p", 0, 0, 0, false, "" },
		{ __LINE__, "55d4cb7e1000-55d4cb802000 rw-p 00000000 00:00 0                          [heap]", 0,
		  0x55d4cb7e1000, 0x55d4cb802000, 0, "rw-p", 0, 0, 0, false, "[heap]" },
		{ __LINE__, "7ffce1ea9000-7ffce1eca000 rw-p 00000000 00:00 0                          [stack]", 0,
		  0x7ffce1ea9000, 0x7ffce1eca000, 0, "rw-p", 0, 0, 0, false, "[stack]" },
		{ __LINE__, "7ffce1fd4000-7ffce1fd6000 r-xp 00000000 00:00 0                          [vdso]", 0,
		  0x7ffce1fd4000, 0x7ffce1fd6000, 0, "r-xp", 0, 0, 0, false, "[vdso]" },
		{ __LINE__, "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]", 0,
		  0xffffffffff600000, 0xffffffffff601000, 0, "--xp", 0, 0, 0, false, "[vsyscall]" },
		{ __LINE__, "7f1000000000-7f1000100000 rw-p 00000000 00:00 0    [anon:scudo:primary]", 0,
		  0x7f1000000000, 0x7f1000100000, 0, "rw-p", 0, 0, 0, false, "[anon:scudo:primary]" },
		/* Unlinked after mapping, names with spaces, both, shared memory. */
		{ __LINE__, "7f2000000000-7f2000001000 r-xp 00001000 08:01 42 /tmp/bench (deleted)\n", 0,
		  0x7f2000000000, 0x7f2000001000, 0x1000, "r-xp", 8, 1, 42, true, "/tmp/bench" },
		{ __LINE__, "7f2000000000-7f2000001000 r--p 00000000 08:01 43   /home/a user/my lib.so", 0,
		  0x7f2000000000, 0x7f2000001000, 0, "r--p", 8, 1, 43, false, "/home/a user/my lib.so" },
		{ __LINE__, "7f2000000000-7f2000001000 r--p 00000000 08:01 44 /tmp/a b (deleted)", 0,
		  0x7f2000000000, 0x7f2000001000, 0, "r--p", 8, 1, 44, true, "/tmp/a b" },
		{ __LINE__, "7f3000000000-7f3000004000 rw-s 00000000 00:01 5 /memfd:jit-code (deleted)", 0,
		  0x7f3000000000, 0x7f3000004000, 0, "rw-s", 0, 1, 5, true, "/memfd:jit-code" },
		{ __LINE__, "7f3000000000-7f3000004000 rw-s 00000000 00:01 6 /dev/zero (deleted)", 0,
		  0x7f3000000000, 0x7f3000004000, 0, "rw-s", 0, 1, 6, true, "/dev/zero" },
		/* Large device numbers, upper-case hex, the largest inode. */
		{ __LINE__, "1000-2000 r--p 7FFFF000 103:1a 18446744073709551615 /x", 0,
		  0x1000, 0x2000, 0x7ffff000, "r--p", 0x103, 0x1a, UINT64_MAX, false, "/x" },
		/* Malformed lines. */
		{ __LINE__, "", -EINVAL, 0, 0, 0, "", 0, 0, 0, false, "" },
		{ __LINE__, "garbage", -EINVAL, 0, 0, 0, "", 0, 0, 0, false, "" },
		{ __LINE__, "1000 2000 r--p 0 08:01 1 /x", -EINVAL, 0, 0, 0, "", 0, 0, 0, false, "" },
		{ __LINE__, "1000-2000 rwzp 0 08:01 1 /x", -EINVAL, 0, 0, 0, "", 0, 0, 0, false, "" },
		{ __LINE__, "1000-2000 r--", -EINVAL, 0, 0, 0, "", 0, 0, 0, false, "" },
		{ __LINE__, "2000-1000 r--p 0 08:01 1 /x", -EINVAL, 0, 0, 0, "", 0, 0, 0, false, "" },
		{ __LINE__, "2000-2000 r--p 0 08:01 1 /x", -EINVAL, 0, 0, 0, "", 0, 0, 0, false, "" },
		{ __LINE__, "10000000000000000-20000000000000000 r--p 0 08:01 1 /x", -EINVAL, 0, 0, 0, "", 0, 0, 0, false,
		  "" },
		{ __LINE__, "1000-2000 r--p 0 0801 1 /x", -EINVAL, 0, 0, 0, "", 0, 0, 0, false, "" },
		{ __LINE__, "1000-2000 r--p 0 08:01 x /x", -EINVAL, 0, 0, 0, "", 0, 0, 0, false, "" },
		{ __LINE__, "1000-2000 r--p 0 08:01 18446744073709551616 /x", -EINVAL, 0, 0, 0, "", 0, 0, 0, false, "" },
		{ __LINE__, "1000-2000 r--p 0 08:01 12/x", -EINVAL, 0, 0, 0, "", 0, 0, 0, false, "" },
		{ __LINE__, "1000-2000 r--p 0 100000000:01 1 /x", -EINVAL, 0, 0, 0, "", 0, 0, 0, false, "" },
		{ __LINE__, "-2000 r--p 0 08:01 1 /x", -EINVAL, 0, 0, 0, "", 0, 0, 0, false, "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct symbols_mapping m;
		char path[256];
		int ret;

		memset(&m, 0x5a, sizeof(m));
		ret = symbols_maps_parse_line(rows[i].text, strlen(rows[i].text), &m, path, sizeof(path));
		CHECK_ROW(rows[i].line, ret == rows[i].ret, "\"%s\": ret %d, want %d", rows[i].text, ret, rows[i].ret);
		CHECK_ROW(rows[i].line, m.path && strcmp(m.path, rows[i].path) == 0, "path \"%s\", want \"%s\"",
			  m.path ? m.path : "(null)", rows[i].path);
		if (ret != 0 || rows[i].ret != 0)
			continue;
		CHECK_ROW(rows[i].line, m.start == rows[i].start && m.end == rows[i].end && m.offset == rows[i].offset,
			  "range %" PRIx64 "-%" PRIx64 " offset %" PRIx64, m.start, m.end, m.offset);
		CHECK_ROW(rows[i].line, strcmp(m.perms, rows[i].perms) == 0, "perms \"%s\"", m.perms);
		CHECK_ROW(rows[i].line, m.dev_major == rows[i].major && m.dev_minor == rows[i].minor &&
			  m.inode == rows[i].inode && m.deleted == rows[i].deleted,
			  "dev %x:%x inode %" PRIu64 " deleted %d", m.dev_major, m.dev_minor, m.inode, m.deleted);
	}

	/* A path longer than the buffer, and a NUL inside a line. */
	{
		static const char long_line[] = "1000-2000 r--p 0 08:01 1 /a/rather/long/path";
		static const char with_nul[] = "1000-2000 r--p 0 08:01 1 /a\0b";
		struct symbols_mapping m;
		char small[8];

		CHECK(symbols_maps_parse_line(long_line, sizeof(long_line) - 1, &m, small, sizeof(small)) == -ENAMETOOLONG,
		      "long path");
		CHECK(strcmp(m.path, "") == 0, "long path leaves \"%s\"", m.path);
		CHECK(symbols_maps_parse_line(with_nul, sizeof(with_nul) - 1, &m, small, sizeof(small)) == -EINVAL,
		      "NUL in the path");
	}
}

/* Expected mappings of one space after a sequence of adds. */
struct want_mapping {
	uint64_t start, end, offset;
	const char *path;
};

static void check_space(int line, const struct symbols *syms, pid_t pid, const struct want_mapping *want, size_t n)
{
	size_t count = symbols_mapping_count(syms, pid);

	CHECK_ROW(line, count == n, "pid %d: %zu mappings, want %zu", (int)pid, count, n);
	for (size_t i = 0; i < n && i < count; i++) {
		const struct symbols_mapping *m = symbols_mapping_get(syms, pid, i);

		CHECK_ROW(line, m && m->start == want[i].start && m->end == want[i].end && m->offset == want[i].offset &&
			  strcmp(m->path, want[i].path) == 0,
			  "mapping %zu: %" PRIx64 "-%" PRIx64 " +%" PRIx64 " \"%s\", want %" PRIx64 "-%" PRIx64 " +%" PRIx64
			  " \"%s\"", i, m ? m->start : 0, m ? m->end : 0, m ? m->offset : 0, m ? m->path : "",
			  want[i].start, want[i].end, want[i].offset, want[i].path);
	}
	CHECK_ROW(line, symbols_mapping_get(syms, pid, count) == NULL, "mapping past the end");
}

static int add(struct symbols *syms, pid_t pid, uint64_t start, uint64_t end, uint64_t offset, const char *path)
{
	struct symbols_mapping m = { .start = start, .end = end, .offset = offset, .path = path, .perms = "r-xp" };

	return symbols_mapping_add(syms, pid, &m);
}

/* Later mappings replace what they overlap, like mmap(MAP_FIXED); file offsets follow a cut front. */
static void test_overlaps(void)
{
	struct symbols *syms = symbols_new();

	CHECK(syms != NULL, "symbols_new");
	if (!syms)
		return;
	CHECK(add(syms, 1, 0x1000, 0x9000, 0, "/lib/a.so") == 0, "add");
	/* Strictly inside: split around it. */
	CHECK(add(syms, 1, 0x3000, 0x4000, 0, "//anon") == 0, "add");
	{
		const struct want_mapping want[] = {
			{ 0x1000, 0x3000, 0, "/lib/a.so" }, { 0x3000, 0x4000, 0, "" }, { 0x4000, 0x9000, 0x3000, "/lib/a.so" },
		};
		check_space(__LINE__, syms, 1, want, ARRAY_SIZE(want));
	}
	/* Over the end of one and the start of the next. */
	CHECK(add(syms, 1, 0x2000, 0x5000, 0x10000, "/lib/b.so") == 0, "add");
	{
		const struct want_mapping want[] = {
			{ 0x1000, 0x2000, 0, "/lib/a.so" }, { 0x2000, 0x5000, 0x10000, "/lib/b.so" },
			{ 0x5000, 0x9000, 0x4000, "/lib/a.so" },
		};
		check_space(__LINE__, syms, 1, want, ARRAY_SIZE(want));
	}
	/* Disjoint, below and above; then one covering everything in between exactly. */
	CHECK(add(syms, 1, 0xa000, 0xb000, 0, "[heap]") == 0 && add(syms, 1, 0x0, 0x1000, 0, "/x") == 0, "add");
	{
		const struct want_mapping want[] = {
			{ 0x0, 0x1000, 0, "/x" }, { 0x1000, 0x2000, 0, "/lib/a.so" }, { 0x2000, 0x5000, 0x10000, "/lib/b.so" },
			{ 0x5000, 0x9000, 0x4000, "/lib/a.so" }, { 0xa000, 0xb000, 0, "[heap]" },
		};
		check_space(__LINE__, syms, 1, want, ARRAY_SIZE(want));
	}
	/* A grown [heap] (perf reports the whole vma again) replaces the old record. */
	CHECK(add(syms, 1, 0xa000, 0xc000, 0, "[heap]") == 0, "add");
	CHECK(add(syms, 1, 0x1000, 0x9000, 0, "/lib/c.so (deleted)") == 0, "add");
	{
		const struct want_mapping want[] = {
			{ 0x0, 0x1000, 0, "/x" }, { 0x1000, 0x9000, 0, "/lib/c.so" }, { 0xa000, 0xc000, 0, "[heap]" },
		};
		check_space(__LINE__, syms, 1, want, ARRAY_SIZE(want));
		CHECK(symbols_mapping_get(syms, 1, 1)->deleted, "deleted suffix");
	}
	/* Lookups: inside, at the end (exclusive), in a gap. */
	CHECK(symbols_mapping_find(syms, 1, 0x8fff) && strcmp(symbols_mapping_find(syms, 1, 0x8fff)->path, "/lib/c.so") == 0,
	      "find inside");
	CHECK(symbols_mapping_find(syms, 1, 0x9000) == NULL, "find in the gap");
	CHECK(symbols_mapping_find(syms, 1, 0xc000) == NULL, "find past the end");
	CHECK(symbols_mapping_find(syms, 2, 0x1000) == NULL, "unknown pid");
	CHECK(add(syms, 1, 0x5000, 0x5000, 0, "/y") == -EINVAL && add(syms, 1, 0x6000, 0x5000, 0, "/y") == -EINVAL,
	      "empty and inverted ranges");

	/* fork copies, exec forgets, the two spaces stay apart. */
	CHECK(symbols_fork(syms, 1, 7) == 0, "fork");
	CHECK(symbols_mapping_count(syms, 7) == 3, "child has %zu mappings", symbols_mapping_count(syms, 7));
	symbols_exec(syms, 7);
	CHECK(symbols_mapping_count(syms, 7) == 0 && symbols_mapping_count(syms, 1) == 3, "exec");
	CHECK(symbols_fork(syms, 99, 8) == 0 && symbols_mapping_count(syms, 8) == 0, "fork of an unknown parent");

	/* The text parser counts what it could not read and adds the rest. */
	{
		static const char text[] = "1000-2000 r-xp 00000000 08:01 5 /bin/prog\n"
					   "this is not a maps line\n"
					   "\n"
					   "3000-4000 rw-p 00000000 00:00 0 \n"
					   "5000-6000 r--p 00000000 08:01 5 /bin/prog";
		size_t bad = 99;
		int added = symbols_maps_parse(syms, 3, text, sizeof(text) - 1, &bad);

		CHECK(added == 3 && bad == 1, "parsed %d, bad %zu", added, bad);
		CHECK(symbols_mapping_count(syms, 3) == 3, "pid 3: %zu", symbols_mapping_count(syms, 3));
	}
	symbols_delete(syms);
	symbols_delete(NULL);
}

/* The lines of symbols_test_known_function, for its DWARF line (test_self_lines). */
static const int known_function_first_line = __LINE__ + 3;

/* A function of some length (an address one byte in must still be inside it). */
static int __attribute__((noinline)) symbols_test_known_function(int n)
{
	static volatile int sink;

	for (int i = 0; i < n; i++)
		sink += i;
	return sink;
}
static const int known_function_last_line = __LINE__ - 1;

/*
 * This process's own maps: a function of the test binary (a PIE built by
 * meson), a libc function, data addresses, and addresses that resolve to
 * nothing.
 */
static void test_self(void)
{
	struct symbols *syms = symbols_new();
	struct symbols_location loc;
	struct symbols_region region;
	const size_t map_bytes = 4u << 20;
	pid_t pid = getpid();
	char text[512];
	void *map;
	int n;

	if (!syms)
		return;
	CHECK(symbols_test_known_function(3) >= 3, "called");
	n = symbols_maps_read(syms, pid);
	CHECK(n > 5, "symbols_maps_read: %d", n);

	symbols_resolve(syms, pid, (uint64_t)(uintptr_t)&symbols_test_known_function, &loc);
	symbols_location_format(&loc, text, sizeof(text));
	printf("own function: %s (elf 0x%" PRIx64 ")\n", text, loc.elf_addr);
	CHECK(loc.resolved && strcmp(loc.function, "symbols_test_known_function") == 0 && loc.offset == 0,
	      "own function: %s", text);
	CHECK(strstr(loc.object, "test-symbols") != NULL, "own object \"%s\"", loc.object);
	symbols_resolve(syms, pid, (uint64_t)(uintptr_t)&symbols_test_known_function + 1, &loc);
	CHECK(loc.resolved && strcmp(loc.function, "symbols_test_known_function") == 0 && loc.offset == 1,
	      "own function + 1: %s+%" PRIu64, loc.function, loc.offset);

	/* glibc exports getpid as a weak alias of __getpid: the public name is the one shown. */
	symbols_resolve(syms, pid, (uint64_t)(uintptr_t)&getpid, &loc);
	symbols_location_format(&loc, text, sizeof(text));
	printf("getpid: %s\n", text);
	CHECK(loc.resolved && strcmp(loc.function, "getpid") == 0 && loc.offset == 0, "getpid: %s", text);
	CHECK(strstr(loc.object, "libc") != NULL, "getpid's object \"%s\"", loc.object);

	symbols_resolve(syms, pid, 0, &loc);
	CHECK(!loc.resolved && strcmp(loc.object, SYMBOLS_UNKNOWN) == 0 && strcmp(loc.function, SYMBOLS_UNKNOWN) == 0,
	      "address 0: %s:%s", loc.object, loc.function);
	symbols_location_format(&loc, text, sizeof(text));
	CHECK(strcmp(text, "[unknown]") == 0, "format of nothing: \"%s\"", text);
	symbols_resolve(syms, pid, 0xffffffff81000000ull, &loc);
	CHECK(!loc.resolved && strcmp(loc.object, SYMBOLS_KERNEL) == 0, "kernel address: %s", loc.object);

	/* Anonymous memory: a data region of its own, and no symbols for an instruction address in it. */
	map = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(map != MAP_FAILED, "mmap");
	if (map != MAP_FAILED) {
		uint64_t a = (uint64_t)(uintptr_t)map + map_bytes / 2;

		CHECK(symbols_maps_read(syms, pid) > 0, "re-read");
		symbols_classify(syms, pid, a, &region);
		CHECK(region.anonymous && region.start <= a && a < region.end && region.end - region.start >= map_bytes / 2,
		      "anonymous region \"%s\" %" PRIx64 "-%" PRIx64, region.name, region.start, region.end);
		symbols_resolve(syms, pid, a, &loc);
		symbols_location_format(&loc, text, sizeof(text));
		CHECK(!loc.resolved && strcmp(text, "[anon]:[unknown]") == 0, "anonymous code: \"%s\"", text);
		munmap(map, map_bytes);
	}
	/* A file's data: this binary's read-only strings. */
	{
		static const char marker[] = "a string in the test binary's read-only data";
		uint64_t a = (uint64_t)(uintptr_t)marker;

		symbols_classify(syms, pid, a, &region);
		CHECK(!region.anonymous && strstr(region.name, "test-symbols") && region.start <= a && a < region.end,
		      "rodata region \"%s\"", region.name);
	}
	/* The environment strings lie at the top of the initial stack. */
	if (environ && environ[0] && !getenv("LD_PRELOAD")) {
		symbols_classify(syms, pid, (uint64_t)(uintptr_t)environ[0], &region);
		CHECK(region.anonymous && strcmp(region.name, "[stack]") == 0, "environment in \"%s\"", region.name);
	}
	symbols_classify(syms, pid, 8, &region);
	CHECK(strcmp(region.name, SYMBOLS_UNKNOWN) == 0 && region.start == 0 && region.end == 0, "unmapped data: %s",
	      region.name);
	CHECK(symbols_maps_read(syms, 0x7ffffffe) == -ENOENT, "a pid that does not exist");
	symbols_delete(syms);
}

/* The ELF virtual address of a function symbol of path, from its .symtab; 0 when absent. */
static uint64_t symbol_value_size(const char *path, const char *name, uint64_t *size);

static uint64_t symbol_value(const char *path, const char *name)
{
	return symbol_value_size(path, name, NULL);
}

static uint64_t symbol_value_size(const char *path, const char *name, uint64_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	uint64_t value = 0;

	while (elf && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			if (gelf_getsym(data, (int)i, &sym) && (s = elf_strptr(elf, shdr.sh_link, sym.st_name)) &&
			    strcmp(s, name) == 0) {
				value = sym.st_value;
				if (size)
					*size = sym.st_size;
			}
		}
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return value;
}

/*
 * Map a file's PT_LOAD segments the way the kernel's ELF loader does, at
 * bias, as mappings of a pretend process: page-aligned start and file
 * offset per segment.
 */
static size_t add_loads(struct symbols *syms, pid_t pid, const char *path, uint64_t bias)
{
	const uint64_t page = 4096;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t phnum = 0, added = 0;

	if (elf && elf_getphdrnum(elf, &phnum) != 0)
		phnum = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		struct symbols_mapping m = { .path = path, .inode = 1 };

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m.start = bias + (ph.p_vaddr & ~(page - 1));
		m.end = bias + ((ph.p_vaddr + ph.p_filesz + page - 1) & ~(page - 1));
		m.offset = ph.p_offset & ~(page - 1);
		snprintf(m.perms, sizeof(m.perms), "%c%c%cp", ph.p_flags & PF_R ? 'r' : '-', ph.p_flags & PF_W ? 'w' : '-',
			 ph.p_flags & PF_X ? 'x' : '-');
		if (symbols_mapping_add(syms, pid, &m) == 0)
			added++;
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return added;
}

/*
 * Load bias without a live process: gcc probes built by tests/meson.build
 * (a PIE, a non-PIE executable, a stripped PIE) mapped at a pretend base.
 */
static void test_load_bias(void)
{
	static const struct {
		int line;
		const char *file;
		uint64_t bias;		/* where the first segment goes: 0 for ET_EXEC (loaded at its own addresses) */
		bool symbols;		/* probe_value can be resolved (not stripped) */
	} rows[] = {
		{ __LINE__, "probe-gcc-O0", 0x555555554000ull, true },
		{ __LINE__, "probe-gcc-no-pie", 0, true },
		{ __LINE__, "probe-gcc-stripped", 0x7f0000000000ull, false },
	};
	const char *dir = getenv("TLBPROF_TEST_PROBES_GCC");
	char path[1024];
	uint64_t value;

	if (!dir) {
		fprintf(stderr, "note: TLBPROF_TEST_PROBES_GCC unset (no gcc): load-bias probes skipped\n");
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct symbols *syms = symbols_new();
		struct symbols_location loc;
		size_t loads;

		if (!syms)
			return;
		snprintf(path, sizeof(path), "%s/%s", dir, rows[i].file);
		loads = add_loads(syms, 42, path, rows[i].bias);
		CHECK_ROW(rows[i].line, loads >= 2, "%s: %zu PT_LOAD mappings", rows[i].file, loads);
		if (rows[i].symbols) {
			value = symbol_value(path, "probe_value");
			CHECK_ROW(rows[i].line, value != 0, "%s: no probe_value in .symtab", rows[i].file);
			symbols_resolve(syms, 42, rows[i].bias + value + 2, &loc);
			CHECK_ROW(rows[i].line, loc.resolved && strcmp(loc.function, "probe_value") == 0 && loc.offset == 2 &&
				  loc.elf_addr == value + 2 && strcmp(loc.object, path) == 0,
				  "%s: %s:%s+%" PRIu64 " elf 0x%" PRIx64 ", want probe_value+2 at 0x%" PRIx64, rows[i].file,
				  loc.object, loc.function, loc.offset, loc.elf_addr, value + 2);
			/* main is a separate function right after it in the same file. */
			value = symbol_value(path, "main");
			symbols_resolve(syms, 42, rows[i].bias + value, &loc);
			CHECK_ROW(rows[i].line, loc.resolved && strcmp(loc.function, "main") == 0 && loc.offset == 0,
				  "%s: main resolved as %s", rows[i].file, loc.function);
		} else {
			/* Stripped: the file offset still maps to an ELF address; _init, first in .text's segment, has no
			 * symbol and (crti's hand-written code) no unwind entry either. */
			const struct symbols_mapping *text = NULL;

			for (size_t j = 0; j < symbols_mapping_count(syms, 42); j++)
				if (symbols_mapping_get(syms, 42, j)->perms[2] == 'x')
					text = symbols_mapping_get(syms, 42, j);
			CHECK_ROW(rows[i].line, text != NULL, "%s: no executable segment", rows[i].file);
			if (text) {
				symbols_resolve(syms, 42, text->start + 16, &loc);
				CHECK_ROW(rows[i].line, !loc.resolved && strcmp(loc.function, SYMBOLS_UNKNOWN) == 0 &&
					  strcmp(loc.object, path) == 0 && loc.elf_addr == text->start + 16 - rows[i].bias,
					  "%s: %s:%s elf 0x%" PRIx64, rows[i].file, loc.object, loc.function, loc.elf_addr);
			}
		}
		symbols_delete(syms);
	}
}

/* Files that are no ELF, or no regular files at all, give unknown names and never hang. */
static void test_odd_objects(void)
{
	static const char *const paths[] = {
		"/dev/zero", "/proc/self/status", "/", "/does/not/exist", "[vdso]", "",
	};
	struct symbols *syms = symbols_new();

	if (!syms)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		struct symbols_location loc;
		pid_t pid = (pid_t)(100 + i);

		CHECK(add(syms, pid, 0x10000, 0x20000, 0, paths[i]) == 0, "add %s", paths[i]);
		symbols_resolve(syms, pid, 0x10010, &loc);
		CHECK(!loc.resolved && strcmp(loc.function, SYMBOLS_UNKNOWN) == 0 &&
		      strcmp(loc.object, paths[i][0] ? paths[i] : SYMBOLS_ANON) == 0,
		      "\"%s\": %s:%s", paths[i], loc.object, loc.function);
	}
	symbols_delete(syms);
}

/* Whether a file has a section of this name (.debug_line: DWARF line numbers). */
static bool has_section(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;

	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0)
		while (!found && (scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr shdr;
			const char *s;

			found = gelf_getshdr(scn, &shdr) && (s = elf_strptr(elf, shstrndx, shdr.sh_name)) &&
				strcmp(s, name) == 0;
		}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return found;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The line of path holding marker, 0 when none. */
static int marker_line(const char *path, const char *marker)
{
	FILE *f = fopen(path, "re");
	char buf[512];
	int line = 0, found = 0;

	while (f && !found && fgets(buf, sizeof(buf), f)) {
		line++;
		if (strstr(buf, marker))
			found = line;
	}
	if (f)
		fclose(f);
	return found;
}

/* An address of this process's own code names its source file and a line of the function (meson builds -g). */
static void test_self_lines(void)
{
	struct symbols *syms = symbols_new();
	struct symbols_frame frames[4];
	char exe[4096], text[4200];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t n;

	if (!syms || len <= 0) {
		symbols_delete(syms);
		return;
	}
	exe[len] = '\0';
	CHECK(symbols_maps_read(syms, getpid()) > 0, "maps");
	n = symbols_frames(syms, getpid(), (uint64_t)(uintptr_t)&symbols_test_known_function + 4, frames, 4);
	if (!has_section(exe, ".debug_line")) {
		/* A build without -g (meson -Ddebug=false): then there is nothing to name, and it says so. */
		printf("note: %s has no .debug_line: own file:line not checked\n", exe);
		CHECK(n == 0, "no DWARF but %zu frames", n);
	} else {
		symbols_frame_format(&frames[0], text, sizeof(text));
		printf("own function's line: %s (%s)\n", n ? text : "none", n && frames[0].function ? frames[0].function : "?");
		CHECK(n >= 1 && ends_with(frames[0].file, "test-symbols.c") && frames[0].line >= known_function_first_line &&
		      frames[0].line <= known_function_last_line, "own function at %s, want test-symbols.c:%d-%d",
		      n ? text : "no frame", known_function_first_line, known_function_last_line);
		CHECK(n >= 1 && frames[n - 1].function && strcmp(frames[n - 1].function, "symbols_test_known_function") == 0,
		      "own function's DWARF name %s", n && frames[n - 1].function ? frames[n - 1].function : "(none)");
	}
	/* Nothing to say: no mapping, anonymous memory, the kernel, a NULL buffer. */
	CHECK(symbols_frames(syms, getpid(), 8, frames, 4) == 0, "unmapped address has frames");
	CHECK(symbols_frames(syms, getpid(), 0xffffffff81000000ull, frames, 4) == 0, "kernel address has frames");
	CHECK(symbols_frames(syms, getpid(), (uint64_t)(uintptr_t)&symbols_test_known_function, frames, 0) == 0 &&
	      symbols_frames(NULL, getpid(), 8, frames, 4) == 0, "max 0 or no symbolizer");
	{
		struct symbols_frame none = { 0 }, file_only = { .file = "/src/a.c" }, both = { .file = "/src/a.c", .line = 7 };
		struct symbols_frame relative = { .file = "../a.c", .comp_dir = "/b", .line = 3 };
		struct symbols_frame absolute = { .file = "/a.c", .comp_dir = "/b", .line = 3 };
		/* glibc's debug info: a relative comp_dir that libdw has already put in front of the file. */
		struct symbols_frame joined = { .file = "./posix/fork.c", .comp_dir = "./posix", .line = 41 };
		struct symbols_frame joined_slash = { .file = "./posix/fork.c", .comp_dir = "./posix/", .line = 41 };
		struct symbols_frame other = { .file = "./posixx/fork.c", .comp_dir = "./posix", .line = 41 };

		symbols_frame_format(&none, text, sizeof(text));
		CHECK(strcmp(text, "") == 0, "format of no frame: \"%s\"", text);
		symbols_frame_format(&file_only, text, sizeof(text));
		CHECK(strcmp(text, "/src/a.c") == 0, "format without a line: \"%s\"", text);
		CHECK(symbols_frame_format(&both, text, 4) == 10 && strcmp(text, "/sr") == 0, "truncated format \"%s\"", text);
		symbols_frame_format(&relative, text, sizeof(text));
		CHECK(strcmp(text, "/b/../a.c:3") == 0, "relative file: \"%s\"", text);
		symbols_frame_format(&absolute, text, sizeof(text));
		CHECK(strcmp(text, "/a.c:3") == 0, "absolute file: \"%s\"", text);
		symbols_frame_format(&joined, text, sizeof(text));
		CHECK(strcmp(text, "./posix/fork.c:41") == 0, "comp_dir already in front: \"%s\"", text);
		symbols_frame_format(&joined_slash, text, sizeof(text));
		CHECK(strcmp(text, "./posix/fork.c:41") == 0, "comp_dir with a slash already in front: \"%s\"", text);
		symbols_frame_format(&other, text, sizeof(text));
		CHECK(strcmp(text, "./posix/./posixx/fork.c:41") == 0, "a folder that only starts alike: \"%s\"", text);
	}
	symbols_delete(syms);
}

/*
 * symbols-probe.c built gcc -O2 -g (and the same stripped, with its debug file through .gnu_debuglink), mapped
 * at a pretend PIE base: an address in the loop that gcc inlined into probe_outer names probe_inner at the loop's
 * line, inlined into probe_outer at the call's line.
 */
static void test_inlined_frames(void)
{
	static const char *const files[] = { "symbols-probe-gcc", "symbols-probe-gcc-split" };
	const uint64_t bias = 0x555555554000ull;
	const char *dir = getenv("TLBPROF_TEST_PROBES_GCC"), *src = getenv("TLBPROF_TEST_SOURCE_DIR");
	char path[1024], full[1024];
	int inner_line, call_line;
	uint64_t outer;

	if (!dir || !src) {
		fprintf(stderr, "note: TLBPROF_TEST_PROBES_GCC or TLBPROF_TEST_SOURCE_DIR unset: inlined frames skipped\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/tests/unit/symbols-probe.c", src);
	inner_line = marker_line(path, "PROBE-INNER-LINE");
	call_line = marker_line(path, "PROBE-CALL-LINE");
	snprintf(full, sizeof(full), "%s/%s", dir, files[0]);
	outer = symbol_value(full, "probe_outer");
	CHECK(inner_line > 0 && call_line > 0 && outer != 0, "markers %d %d, probe_outer at 0x%" PRIx64, inner_line,
	      call_line, outer);
	for (size_t i = 0; i < ARRAY_SIZE(files) && outer; i++) {
		struct symbols *syms = symbols_new();
		struct symbols_location loc;
		bool found = false;

		if (!syms)
			return;
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if (access(path, R_OK) != 0) {
			fprintf(stderr, "note: %s missing (no objcopy): skipped\n", path);
			symbols_delete(syms);
			continue;
		}
		/* The split file has no symbol table of its own: its names come from the debug file. */
		CHECK(i == 0 || symbol_value(path, "probe_outer") == 0, "%s still has a .symtab", files[i]);
		CHECK(add_loads(syms, 42, path, bias) >= 2, "%s: mapped", files[i]);
		symbols_resolve(syms, 42, bias + outer, &loc);
		CHECK(loc.resolved && strcmp(loc.function, "probe_outer") == 0 && loc.offset == 0, "%s: probe_outer as %s",
		      files[i], loc.function);
		for (uint64_t a = outer; a < outer + 0x40 && !found; a++) {
			struct symbols_frame f[4];
			size_t n = symbols_frames(syms, 42, bias + a, f, ARRAY_SIZE(f));

			found = n == 2 && f[0].inlined && !f[1].inlined && f[0].function && f[1].function &&
				strcmp(f[0].function, "probe_inner") == 0 && f[0].line == inner_line &&
				ends_with(f[0].file, "tests/unit/symbols-probe.c") && strcmp(f[1].function, "probe_outer") == 0 &&
				f[1].line == call_line && ends_with(f[1].file, "tests/unit/symbols-probe.c");
			if (found) {
				char a0[1200], a1[1200];

				symbols_frame_format(&f[0], a0, sizeof(a0));
				symbols_frame_format(&f[1], a1, sizeof(a1));
				printf("%s+0x%" PRIx64 ": %s at %s, inlined into %s at %s\n", files[i], a - outer, f[0].function,
				       a0, f[1].function, a1);
			}
		}
		CHECK(found, "%s: no address of probe_outer names probe_inner at line %d inlined at line %d", files[i],
		      inner_line, call_line);
		symbols_delete(syms);
	}
	/* A stripped file without a debug file: no lines, and no names either. */
	{
		struct symbols *syms = symbols_new();
		struct symbols_frame f[2];
		const struct symbols_mapping *text = NULL;

		snprintf(path, sizeof(path), "%s/probe-gcc-stripped", dir);
		if (syms && add_loads(syms, 43, path, bias) >= 2) {
			for (size_t j = 0; j < symbols_mapping_count(syms, 43); j++)
				if (symbols_mapping_get(syms, 43, j)->perms[2] == 'x')
					text = symbols_mapping_get(syms, 43, j);
			CHECK(text && symbols_frames(syms, 43, text->start + 16, f, 2) == 0, "stripped probe has frames");
		}
		symbols_delete(syms);
	}
}

/*
 * probe_asm, hand-written assembly with no CFI directives, in the stripped probe: no symbol or unwind entry covers
 * it, so it resolves to no function, and symbols_gap() bounds it between its covered neighbours, the symbol's
 * exact bytes inside and probe_outer outside; an address of probe_outer has no gap.
 */
static void uncovered(struct symbols *syms, pid_t pid, uint64_t bias, uint64_t outer, uint64_t outer_size)
{
	char full[1024];
	uint64_t at, size = 0, lo = 0, hi = 0;
	struct symbols_location loc;

	snprintf(full, sizeof(full), "%s/symbols-probe-gcc", getenv("TLBPROF_TEST_PROBES_GCC"));
	at = symbol_value_size(full, "probe_asm", &size);
#if defined(__x86_64__)
	CHECK(at && size >= 4, "probe_asm at 0x%" PRIx64 ", %" PRIu64 " bytes, in %s", at, size, full);
#endif
	if (!at || size < 4)
		return;
	symbols_resolve(syms, pid, bias + at + 1, &loc);
	CHECK(!loc.resolved && strcmp(loc.function, SYMBOLS_UNKNOWN) == 0 && loc.elf_addr == at + 1,
	      "probe_asm+1 resolved to %s (elf 0x%" PRIx64 ")", loc.function, loc.elf_addr);
	CHECK(symbols_gap(syms, pid, bias + at + 1, &lo, &hi) && lo <= at && hi >= at + size &&
		      (hi <= outer || lo >= outer + outer_size),
	      "probe_asm [0x%" PRIx64 ", 0x%" PRIx64 ") in a gap [0x%" PRIx64 ", 0x%" PRIx64 ") clear of probe_outer",
	      at, at + size, lo, hi);
	CHECK(!symbols_gap(syms, pid, bias + outer + 1, &lo, &hi), "probe_outer+1 has a gap [0x%" PRIx64 ", 0x%" PRIx64
	      ")", lo, hi);
}

/*
 * Without symbols, the unwind entries bound the functions: symbols-probe-gcc stripped of everything (no debug
 * file) resolves an address of probe_outer to the unnamed function sub_<its start>, over exactly the bytes its
 * symbol covers in the unstripped file; and the fuzz corpus's hand-made files read as they were made.
 */
static void test_unnamed(void)
{
	const char *dir = getenv("TLBPROF_TEST_PROBES_GCC"), *src = getenv("TLBPROF_TEST_SOURCE_DIR");
	const uint64_t bias = 0x555555554000ull;
	char path[1024], want[32];
	uint64_t outer, size = 0;

	if (!dir || !src) {
		fprintf(stderr, "note: TLBPROF_TEST_PROBES_GCC or TLBPROF_TEST_SOURCE_DIR unset: unnamed functions skipped\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/symbols-probe-gcc", dir);
	outer = symbol_value_size(path, "probe_outer", &size);
	snprintf(path, sizeof(path), "%s/symbols-probe-gcc-stripped", dir);
	if (access(path, R_OK) == 0 && outer && size > 2) {
		struct symbols *syms = symbols_new();
		struct symbols_location a, b, c;

		CHECK(syms && add_loads(syms, 44, path, bias) >= 2, "stripped probe mapped");
		symbols_resolve(syms, 44, bias + outer + 1, &a);
		symbols_resolve(syms, 44, bias + outer + size - 1, &b);
		symbols_resolve(syms, 44, bias + outer - 1, &c);
		snprintf(want, sizeof(want), "sub_%" PRIx64, outer);
		CHECK(a.resolved && a.unnamed && strcmp(a.function, want) == 0 && a.offset == 1 && a.elf_addr == outer + 1,
		      "probe_outer+1 as %s+%" PRIu64 " (unnamed %d), want %s+1", a.function, a.offset, a.unnamed, want);
		CHECK(b.function == a.function && b.offset == size - 1, "its last byte as %s+%" PRIu64, b.function,
		      b.offset);
		CHECK(c.function != a.function, "the byte before it as %s, not %s", c.function, want);
		uncovered(syms, 44, bias, outer, size);
		symbols_delete(syms);
	} else {
		fprintf(stderr, "note: %s missing (no objcopy) or no probe_outer: skipped\n", path);
	}
	static const struct {
		int line;
		const char *file;
		int rc;
		size_t n;
	} rows[] = {
		{ __LINE__, "tiny", 0, 2 },		/* two FDEs: [0x4000b0, 0x4000b7), [0x4000b7, 0x4000b9) */
		{ __LINE__, "huge-range", 0, 1 },	/* the first's length reads -1 (sdata4): dropped */
		{ __LINE__, "long-function", 0, 1 },	/* the first's 32 MiB: no function is that long, dropped */
		{ __LINE__, "bad-cie-pointer", 0, 1 },	/* the first names no CIE: skipped by its length */
		{ __LINE__, "datarel-encoding", 0, 0 },	/* the CIE's encoding is data-relative: none read */
		{ __LINE__, "truncated", -ENOENT, 0 },	/* the section headers are cut off with the file */
	};
	(void)elf_version(EV_CURRENT);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct symbols_range *r = NULL;
		size_t n = 99;
		int fd, rc = -EBADF;
		Elf *elf;

		snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/unwind/%s", src, rows[i].file);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
		if (elf)
			rc = symbols_unwind_ranges(elf, &r, &n);
		CHECK_ROW(rows[i].line, rc == rows[i].rc && n == rows[i].n, "%s: rc %d, %zu ranges", rows[i].file, rc, n);
		if (rc == 0 && n == 2)
			CHECK_ROW(rows[i].line, r[0].start == 0x4000b0 && r[0].end == 0x4000b7 && r[1].start == 0x4000b7 &&
					  r[1].end == 0x4000b9,
				  "%s: [0x%" PRIx64 ", 0x%" PRIx64 "), [0x%" PRIx64 ", 0x%" PRIx64 ")", rows[i].file,
				  r[0].start, r[0].end, r[1].start, r[1].end);
		if (rc == 0 && n == 1)	/* the second FDE is what is left */
			CHECK_ROW(rows[i].line, r[0].start == 0x4000b7 && r[0].end == 0x4000b9,
				  "%s: [0x%" PRIx64 ", 0x%" PRIx64 ")", rows[i].file, r[0].start, r[0].end);
		free(r);
		if (elf)
			elf_end(elf);
		if (fd >= 0)
			close(fd);
	}
}

/* C++ names as people read them; C names, and what is not a mangled name, as they are. */
static void test_demangle(void)
{
	char *a = demangle("_ZNK5bench5Chase3runEl"), *b = demangle("_ZN3foo3barIcLj4096EE4walkEPcm");

	if (!a) {
		void *lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		CHECK(!lib, "libstdc++.so.6 loads, yet nothing was demangled");
		fprintf(stderr, "note: no libstdc++.so.6 here: C++ names stay mangled, skipped\n");
		if (lib)
			dlclose(lib);
		return;
	}
	CHECK(strcmp(a, "bench::Chase::run(long) const") == 0, "%s", a);
	CHECK(b && strcmp(b, "foo::bar<char, 4096u>::walk(char*, unsigned long)") == 0, "%s", b ? b : "(null)");
	/* Rust's legacy names (rustc 1.95, a crate's own functions): without the hash, the escapes decoded. */
	const char *rust[][2] = {
		{ "_ZN5bench5chase17h8705838f9352c96cE", "bench::chase" },
		{ "_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h6da2fe1e9562590cE",
		  "std::rt::lang_start::{{closure}}" },
		{ "_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$"
		  "17h0123456789abcdefE",
		  "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>" },
		{ "_ZN5bench5chase17h0123456789abcdegE", "bench::chase::h0123456789abcdeg" },	/* not a hash: as it is */
	};
	for (size_t i = 0; i < sizeof(rust) / sizeof(rust[0]); i++) {
		char *r = demangle(rust[i][0]);
		CHECK(r && strcmp(r, rust[i][1]) == 0, "%s: %s", rust[i][0], r ? r : "(null)");
		free(r);
	}
	CHECK(!demangle("main") && !demangle("__memset_avx512_unaligned_erms") && !demangle("_Znot a name") &&
		      !demangle("sub_1a6e0") && !demangle(NULL),
	      "C names, unnamed functions and garbage are not demangled");
	free(a);
	free(b);
}

/* The anonymous code mapping the JIT map tests name, and whether a new symbolizer resolves addr in it. */
static const struct symbols_mapping jit_anon = { .start = 0x7e0000000000, .end = 0x7e0000010000, .perms = "r-xp",
						 .path = "" };

static bool jit_named(pid_t pid, uint64_t addr)
{
	struct symbols *syms = symbols_new();
	struct symbols_location loc;

	CHECK(syms && symbols_mapping_add(syms, pid, &jit_anon) == 0, "mapping added");
	if (!syms)
		return false;
	symbols_resolve(syms, pid, addr, &loc);
	symbols_delete(syms);
	return loc.resolved;
}

/* A JIT's perf map: parsed, searched (the newer of two overlapping entries), and used by symbols_resolve(). */
static void test_jit_map(void)
{
	static const char text[] = "7f0000001000 40 JS:*chase /tmp/a b.js:13:15\n"
				   "0x7f0000001100 0x20 Builtin:Foo\r\n"
				   "\n"
				   "7f0000001000 zz no size\n"
				   "7f0000002000 0 empty\n"
				   "7f0000003000 10\n"
				   "ffffffffffffff00 200 wraps\n"
				   "7f0000001020 10 JS:~chase recompiled\n"
				   "7f0000004000 10 \0after a NUL\n";
	struct symbols_jit_map m = { 0 };

	CHECK(symbols_jit_parse(&m, text, sizeof(text) - 1) == 0 && m.count == 3 && m.bad_lines == 5,
	      "3 entries, 5 bad lines (a name a NUL ends at once among them): %zu, %zu", m.count, m.bad_lines);
	const struct symbols_jit_entry *e = symbols_jit_find(&m, 0x7f0000001008);
	CHECK(e && strcmp(e->name, "JS:*chase /tmp/a b.js:13:15") == 0, "inside the first: %s", e ? e->name : "none");
	e = symbols_jit_find(&m, 0x7f0000001024);
	CHECK(e && strcmp(e->name, "JS:~chase recompiled") == 0, "the newer of two: %s", e ? e->name : "none");
	e = symbols_jit_find(&m, 0x7f0000001110);
	CHECK(e && strcmp(e->name, "Builtin:Foo") == 0, "0x and CRLF: %s", e ? e->name : "none");
	CHECK(!symbols_jit_find(&m, 0x7f0000001040) && !symbols_jit_find(&m, 0x7f0000000fff) &&
		      !symbols_jit_find(&m, 0x7f0000001120),
	      "between, before and after the entries: none");
	symbols_jit_free(&m);
	CHECK(symbols_jit_memory("") && symbols_jit_memory("[anon]") && symbols_jit_memory("[anon:v8]") &&
		      symbols_jit_memory("/memfd:doublemapper (deleted)") && !symbols_jit_memory("[heap]") &&
		      !symbols_jit_memory("/usr/bin/node"),
	      "which mappings a JIT compiles into");

	/* Through symbols_resolve(): this process's anonymous mapping, named by /tmp/perf-PID.map. */
	pid_t pid = getpid();
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL, "write %s", path);
	if (!f)
		return;
	fputs("7e0000000100 80 LazyCompile:*loop x.js:1\n", f);
	fclose(f);
	struct symbols *syms = symbols_new();
	struct symbols_location loc;
	CHECK(symbols_mapping_add(syms, pid, &jit_anon) == 0, "mapping added");
	symbols_resolve(syms, pid, 0x7e0000000110, &loc);
	CHECK(loc.resolved && strcmp(loc.function, "LazyCompile:*loop x.js:1") == 0 && loc.offset == 0x10 &&
		      strcmp(loc.object, SYMBOLS_ANON) == 0,
	      "named by the map: %s in %s, +%" PRIu64, loc.function, loc.object, loc.offset);
	symbols_resolve(syms, pid, 0x7e0000000200, &loc);
	CHECK(!loc.resolved && strcmp(loc.function, SYMBOLS_UNKNOWN) == 0, "outside its entries: %s", loc.function);
	symbols_delete(syms);
	/* Written an hour before the symbolizer began: an earlier process's, whose PID this one reuses. */
	const struct timespec hour_ago[2] = { { time(NULL) - 3600, 0 }, { time(NULL) - 3600, 0 } };
	CHECK(utimensat(AT_FDCWD, path, hour_ago, 0) == 0, "backdate %s", path);
	CHECK(!jit_named(pid, 0x7e0000000110), "a stale map is not read");
	unlink(path);
	/* A link is not followed, as perf does not trust one. */
	char target[64];
	snprintf(target, sizeof(target), "/tmp/perf-%d.target", (int)pid);
	f = fopen(target, "w");
	if (f) {
		fputs("7e0000000100 80 Spoofed\n", f);
		fclose(f);
	}
	CHECK(symlink(target, path) == 0, "link %s", path);
	CHECK(!jit_named(pid, 0x7e0000000110), "a map through a link is not read");
	unlink(path);
	unlink(target);
}

int main(void)
{
	test_jit_map();
	test_parse_line();
	test_overlaps();
	test_self();
	test_load_bias();
	test_odd_objects();
	test_self_lines();
	test_inlined_frames();
	test_unnamed();
	test_demangle();
	return check_finish();
}
