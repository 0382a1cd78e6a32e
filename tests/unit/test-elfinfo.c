/* SPDX-License-Identifier: MIT */
/* Unit tests for elfinfo: the test binary itself, ELF files written with libelf, and files that are not ELF. */
#include "check.h"
#include "pmu/elfinfo.h"
#include "version.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A section to write: name and raw contents (embedded NULs allowed). */
struct section {
	const char *name;
	const char *data;
	size_t size;
};

#define SECTION(n, lit) { .name = (n), .data = (lit), .size = sizeof(lit) - 1 }

/*
 * Write a relocatable ELF of the given class holding the sections, plus
 * .shstrtab, through libelf's own writer. Returns 0 or -1.
 */
static int write_elf(const char *path, int elf_class, const struct section *secs, size_t n)
{
	char shstrtab[1024];
	size_t shstr_len = 1, name_off[16];
	GElf_Ehdr ehdr;
	GElf_Shdr shdr;
	Elf_Scn *scn;
	Elf_Data *data;
	Elf *elf = NULL;
	int fd, ret = -1;

	if (n > ARRAY_SIZE(name_off) - 1 || elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	shstrtab[0] = '\0';
	for (size_t i = 0; i <= n; i++) {
		const char *name = i < n ? secs[i].name : ".shstrtab";
		size_t len = strlen(name) + 1;

		if (shstr_len + len > sizeof(shstrtab))
			return -1;
		name_off[i] = shstr_len;
		memcpy(shstrtab + shstr_len, name, len);
		shstr_len += len;
	}
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!elf || !gelf_newehdr(elf, elf_class) || !gelf_getehdr(elf, &ehdr))
		goto out;
	ehdr.e_ident[EI_DATA] = ELFDATA2LSB;
	ehdr.e_type = ET_REL;
	ehdr.e_machine = elf_class == ELFCLASS64 ? EM_X86_64 : EM_386;
	ehdr.e_version = EV_CURRENT;
	for (size_t i = 0; i <= n; i++) {
		scn = elf_newscn(elf);
		data = scn ? elf_newdata(scn) : NULL;
		if (!data || !gelf_getshdr(scn, &shdr))
			goto out;
		data->d_buf = i < n ? (void *)secs[i].data : shstrtab;
		data->d_size = i < n ? secs[i].size : shstr_len;
		data->d_type = ELF_T_BYTE;
		data->d_align = 1;
		data->d_version = EV_CURRENT;
		shdr.sh_name = name_off[i];
		shdr.sh_type = i < n ? SHT_PROGBITS : SHT_STRTAB;
		shdr.sh_flags = i < n ? SHF_MERGE | SHF_STRINGS : 0;
		shdr.sh_entsize = i < n ? 1 : 0;
		shdr.sh_addralign = 1;
		if (!gelf_update_shdr(scn, &shdr))
			goto out;
		if (i == n)
			ehdr.e_shstrndx = elf_ndxscn(scn);
	}
	if (!gelf_update_ehdr(elf, &ehdr) || elf_update(elf, ELF_C_WRITE) < 0)
		goto out;
	ret = 0;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	if (ret)
		fprintf(stderr, "write_elf %s: %s\n", path, elf_errmsg(-1));
	return ret;
}

static int write_file(const char *path, const void *buf, size_t size)
{
	FILE *f = fopen(path, "wb");
	bool ok;

	if (!f)
		return -1;
	ok = fwrite(buf, 1, size, f) == size;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* True when no "; "-separated item of list appears twice. */
static bool items_distinct(const char *list, const char *sep)
{
	char copy[512], *items[64];
	size_t n = 0, sep_len = strlen(sep);

	snprintf(copy, sizeof(copy), "%s", list);
	for (char *p = copy; p && *p && n < ARRAY_SIZE(items);) {
		char *next = strstr(p, sep);

		items[n++] = p;
		if (next) {
			*next = '\0';
			next += sep_len;
		}
		p = next;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(items[i], items[j]) == 0)
				return false;
	return true;
}

static void test_self(void)
{
	struct elf_provenance prov;
	int ret = elf_provenance_read("/proc/self/exe", &prov);

	CHECK(ret == 0, "ret %d", ret);
	printf("self comment      = \"%s\"\nself command_line = \"%s\"\n", prov.comment, prov.command_line);
	fflush(stdout);
	/* Debian's crt objects are GCC-built, so even a clang build carries a GCC line. */
	CHECK(strstr(prov.comment, "GCC:") != NULL, "comment \"%s\"", prov.comment);
#ifdef __clang__
	CHECK(strstr(prov.comment, "clang version") != NULL, "comment \"%s\"", prov.comment);
#endif
	/* A linked program carries one copy per object; the reader lists each once. */
	CHECK(items_distinct(prov.comment, "; "), "repeated items in \"%s\"", prov.comment);
	CHECK(strstr(prov.comment, ";;") == NULL && strncmp(prov.comment, "; ", 2) != 0, "empty items in \"%s\"",
	      prov.comment);
	/* meson links the tests unstripped, with debug info in the default build type. */
	CHECK(prov.has_symtab, "own symtab");
	CHECK(prov.elf_type == ET_DYN || prov.elf_type == ET_EXEC, "own e_type %u", prov.elf_type);
#ifndef __clang__
	/* gcc records the switches in the producers: they must say what the build says (version.h). */
	const char *built = elf_opt_level_parse(TLBPROF_BUILD_FLAGS);
	printf("self producers = \"%s\"\nself opt_level = \"%s\" (%s), built with \"%s\"\n", prov.producers,
	       prov.opt_level, elf_opt_source_name(prov.opt_source), TLBPROF_BUILD_FLAGS);
	if (built && prov.has_debug_info)
		CHECK(strcmp(prov.opt_level, built) == 0 && prov.opt_source == ELF_OPT_SOURCE_DWARF_PRODUCER,
		      "self opt_level \"%s\" from %s, built %s", prov.opt_level, elf_opt_source_name(prov.opt_source),
		      built);
#endif
}

static void test_opt_parse(void)
{
	static const struct {
		int line;
		const char *switches;
		const char *level;	/* NULL: no -O switch */
	} rows[] = {
		{ __LINE__, "-O2", "-O2" },
		{ __LINE__, "-O", "-O1" },
		{ __LINE__, "-O0", "-O0" },
		{ __LINE__, "-O1", "-O1" },
		{ __LINE__, "-O3", "-O3" },
		{ __LINE__, "-Os", "-Os" },
		{ __LINE__, "-Oz", "-Oz" },
		{ __LINE__, "-Ofast", "-Ofast" },
		{ __LINE__, "-Og", "-Og" },
		/* The last one wins, as in the compiler's own option handling. */
		{ __LINE__, "-O3 -O1", "-O1" },
		{ __LINE__, "-O0 -g -O2 -Os", "-Os" },
		{ __LINE__, "-Ofast -O", "-O1" },
		{ __LINE__, "-O2 -Ofoo", "-O2" },
		/* Numbers above 3 are -O3; leading zeros are still numbers. */
		{ __LINE__, "-O4", "-O3" },
		{ __LINE__, "-O99999999999999999999", "-O3" },
		{ __LINE__, "-O00", "-O0" },
		{ __LINE__, "-O03", "-O3" },
		/* Things that only look like -O. */
		{ __LINE__, "-Ofoo", NULL },
		{ __LINE__, "-O-1", NULL },
		{ __LINE__, "-O2x", NULL },
		{ __LINE__, "-OS", NULL },
		{ __LINE__, "-o out -fno-omit-frame-pointer", NULL },
		{ __LINE__, "--O2", NULL },
		{ __LINE__, "O2", NULL },
		{ __LINE__, "-fO2", NULL },
		{ __LINE__, "", NULL },
		{ __LINE__, "   ", NULL },
		/* Real strings: a gcc producer, clang's recorded command line, other white space. */
		{ __LINE__, "GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O2 -fasynchronous-unwind-tables", "-O2" },
		{ __LINE__, "GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -fasynchronous-unwind-tables", NULL },
		{ __LINE__, "/usr/lib/llvm-14/bin/clang -O2 -g -frecord-command-line a.c -o a", "-O2" },
		{ __LINE__, "-O1\t-O3\n", "-O3" },
		{ __LINE__, "-g\v-Og", "-Og" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const char *got = elf_opt_level_parse(rows[i].switches);

		CHECK_ROW(rows[i].line, (got == NULL) == (rows[i].level == NULL) && (!got || strcmp(got, rows[i].level) == 0),
			  "\"%s\": got %s, want %s", rows[i].switches, got ? got : "NULL",
			  rows[i].level ? rows[i].level : "NULL");
	}
	CHECK(elf_opt_level_parse(NULL) == NULL, "NULL switches");
	CHECK(strcmp(elf_opt_source_name(ELF_OPT_SOURCE_NONE), "none") == 0 &&
	      strcmp(elf_opt_source_name(ELF_OPT_SOURCE_COMMAND_LINE), "gcc-command-line") == 0 &&
	      strcmp(elf_opt_source_name(ELF_OPT_SOURCE_DWARF_PRODUCER), "dwarf-producer") == 0 &&
	      elf_opt_source_name((enum elf_opt_source)99) == NULL, "source names");
}

static void test_written(const char *dir)
{
	static const char many[] =
		"-DOPTION_NUMBER_00=abcdefghijk\0-DOPTION_NUMBER_01=abcdefghijk\0-DOPTION_NUMBER_02=abcdefghijk\0"
		"-DOPTION_NUMBER_03=abcdefghijk\0-DOPTION_NUMBER_04=abcdefghijk\0-DOPTION_NUMBER_05=abcdefghijk\0"
		"-DOPTION_NUMBER_06=abcdefghijk\0-DOPTION_NUMBER_07=abcdefghijk\0-DOPTION_NUMBER_08=abcdefghijk\0"
		"-DOPTION_NUMBER_09=abcdefghijk\0-DOPTION_NUMBER_10=abcdefghijk\0-DOPTION_NUMBER_11=abcdefghijk\0"
		"-DOPTION_NUMBER_12=abcdefghijk\0-DOPTION_NUMBER_13=abcdefghijk\0-DOPTION_NUMBER_14=abcdefghijk\0"
		"-DOPTION_NUMBER_15=abcdefghijk\0-DOPTION_NUMBER_16=abcdefghijk\0-DOPTION_NUMBER_17=abcdefghijk\0"
		"-DOPTION_NUMBER_18=abcdefghijk\0-DOPTION_NUMBER_19=abcdefghijk\0";
	/* 16 items of 30 chars joined by spaces take 16 * 31 - 1 = 495 bytes; a 17th (31 more + NUL) does not fit and is dropped whole. */
	static const char many_want[] =
		"-DOPTION_NUMBER_00=abcdefghijk -DOPTION_NUMBER_01=abcdefghijk -DOPTION_NUMBER_02=abcdefghijk "
		"-DOPTION_NUMBER_03=abcdefghijk -DOPTION_NUMBER_04=abcdefghijk -DOPTION_NUMBER_05=abcdefghijk "
		"-DOPTION_NUMBER_06=abcdefghijk -DOPTION_NUMBER_07=abcdefghijk -DOPTION_NUMBER_08=abcdefghijk "
		"-DOPTION_NUMBER_09=abcdefghijk -DOPTION_NUMBER_10=abcdefghijk -DOPTION_NUMBER_11=abcdefghijk "
		"-DOPTION_NUMBER_12=abcdefghijk -DOPTION_NUMBER_13=abcdefghijk -DOPTION_NUMBER_14=abcdefghijk "
		"-DOPTION_NUMBER_15=abcdefghijk";
	const struct section gcc_like[] = {
		SECTION(".text", "\x90\x90\x90\xc3"),
		SECTION(".comment", "\0GCC: (Debian 12.2.0-14) 12.2.0\0GCC: (Debian 12.2.0-14) 12.2.0\0\0"
				    "Debian clang version 14.0.6\0GCC: (Debian 12.2.0-14) 12.2.0\0"),
		SECTION(".GCC.command.line", "-O2\0-g\0-frecord-gcc-switches\0-O2\0-g\0-march=x86-64\0"),
	};
	const struct section no_provenance[] = {
		SECTION(".text", "\xc3"),
		SECTION(".data", "abc"),
	};
	const struct section empty_between[] = {
		SECTION(".GCC.command.line", "-O2\0\0-g\0\0"),
	};
	/* .comment holds 255 characters and a NUL: a string of exactly that length fits, one more does not. */
	char fits[256], too_long[257];
	const struct section comment_fits[] = {
		{ .name = ".comment", .data = fits, .size = sizeof(fits) },
	};
	const struct section comment_too_long[] = {
		SECTION(".comment", "GCC: short\0"),
		{ .name = ".comment", .data = too_long, .size = sizeof(too_long) },
	};
	const struct section unterminated[] = {
		SECTION(".comment", "GCC: one\0tail without NUL"),
	};
	const struct section long_line[] = {
		{ .name = ".GCC.command.line", .data = many, .size = sizeof(many) - 1 },
	};
	/* A name that only starts like .comment must not be read as one. */
	const struct section lookalike[] = {
		SECTION(".comment.extra", "not provenance\0"),
		SECTION(".GCC.command.line.old", "-O0\0"),
	};
	/* Two objects linked, each with its whole command line (gcc 11 and later). */
	const struct section mixed[] = {
		SECTION(".GCC.command.line", "GNU C17 12.2.0 -mtune=generic -g -O2\0GNU C17 12.2.0 -mtune=generic -g -O0\0"
					     "GNU C17 12.2.0 -mtune=generic -g -O3 -O2\0"),
	};
	/* Old gcc: one switch per string; a run is one unit and its last -O wins. */
	const struct section old_format[] = {
		SECTION(".GCC.command.line", "-O3\0-g\0-Os\0-march=x86-64\0"),
	};
	/* Producers in .debug_str among names; the toolchain's runtime (crtfastmath.o) and assembler units do not count. */
	const struct section producers[] = {
		SECTION(".debug_info", "\0\0\0\0"),
		SECTION(".debug_str", "main\0GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -Ofast\0probe_value\0"
				      "GNU C17 12.2.0 -mshstk -g -O2 -fbuilding-libgcc -fpic\0GNU AS 2.40\0"
				      "GNU is not a producer\0"),
	};
	/* gcc -gno-record-gcc-switches and clang: producers without switches say nothing about -O. */
	const struct section bare_producers[] = {
		SECTION(".debug_str", "GNU C17 12.2.0\0Debian clang version 14.0.6\0x\0"),
	};
	/* A recorded command line wins over the producers; a clang producer with its command line. */
	const struct section both[] = {
		SECTION(".debug_str", "Debian clang version 14.0.6 /usr/bin/clang -O3 -g -grecord-command-line a.c\0"),
		SECTION(".GCC.command.line", "/usr/bin/clang -Os -frecord-command-line a.c\0"),
	};
	const struct section clang_producer[] = {
		SECTION(".debug_str", "Debian clang version 14.0.6 /usr/bin/clang -O3 -g -grecord-command-line a.c\0"),
	};
	/* gcc -g without -O: switches recorded, no -O, the default -O0. */
	const struct section defaulted[] = {
		SECTION(".debug_str", "GNU C17 12.2.0 -mtune=generic -march=x86-64 -g\0"),
	};
	const struct {
		int line;
		const char *file;
		int elf_class;
		const struct section *secs;
		size_t n;
		const char *comment, *command_line;
		/* Optimisation level: expected opt_level, opt_levels, source, units, defaulted; producers. */
		const char *opt_level, *opt_levels;
		enum elf_opt_source source;
		unsigned units;
		bool defaulted;
		const char *producers;
	} rows[] = {
		{ __LINE__, "gcc64.o", ELFCLASS64, gcc_like, ARRAY_SIZE(gcc_like),
		  "GCC: (Debian 12.2.0-14) 12.2.0; Debian clang version 14.0.6", "-O2 -g -frecord-gcc-switches -march=x86-64",
		  "-O2", "-O2", ELF_OPT_SOURCE_COMMAND_LINE, 1, false, "" },
		{ __LINE__, "gcc32.o", ELFCLASS32, gcc_like, ARRAY_SIZE(gcc_like),
		  "GCC: (Debian 12.2.0-14) 12.2.0; Debian clang version 14.0.6", "-O2 -g -frecord-gcc-switches -march=x86-64",
		  "-O2", "-O2", ELF_OPT_SOURCE_COMMAND_LINE, 1, false, "" },
		{ __LINE__, "none.o", ELFCLASS64, no_provenance, ARRAY_SIZE(no_provenance), "", "",
		  "", "", ELF_OPT_SOURCE_NONE, 0, false, "" },
		{ __LINE__, "unterminated.o", ELFCLASS64, unterminated, ARRAY_SIZE(unterminated),
		  "GCC: one; tail without NUL", "", "", "", ELF_OPT_SOURCE_NONE, 0, false, "" },
		{ __LINE__, "long.o", ELFCLASS64, long_line, ARRAY_SIZE(long_line), "", many_want,
		  "-O0", "-O0", ELF_OPT_SOURCE_COMMAND_LINE, 1, true, "" },
		{ __LINE__, "lookalike.o", ELFCLASS64, lookalike, ARRAY_SIZE(lookalike), "", "",
		  "", "", ELF_OPT_SOURCE_NONE, 0, false, "" },
		{ __LINE__, "empty-between.o", ELFCLASS64, empty_between, ARRAY_SIZE(empty_between), "", "-O2 -g",
		  "-O2", "-O2", ELF_OPT_SOURCE_COMMAND_LINE, 1, false, "" },
		{ __LINE__, "comment-fits.o", ELFCLASS64, comment_fits, ARRAY_SIZE(comment_fits), fits, "",
		  "", "", ELF_OPT_SOURCE_NONE, 0, false, "" },
		/* Two .comment sections: the second's string cannot follow the first, nothing half of it may. */
		{ __LINE__, "comment-too-long.o", ELFCLASS64, comment_too_long, ARRAY_SIZE(comment_too_long),
		  "GCC: short", "", "", "", ELF_OPT_SOURCE_NONE, 0, false, "" },
		{ __LINE__, "mixed.o", ELFCLASS64, mixed, ARRAY_SIZE(mixed), "",
		  "GNU C17 12.2.0 -mtune=generic -g -O2 GNU C17 12.2.0 -mtune=generic -g -O0 "
		  "GNU C17 12.2.0 -mtune=generic -g -O3 -O2",
		  "mixed", "-O2 -O0", ELF_OPT_SOURCE_COMMAND_LINE, 3, false, "" },
		{ __LINE__, "old-format.o", ELFCLASS64, old_format, ARRAY_SIZE(old_format), "", "-O3 -g -Os -march=x86-64",
		  "-Os", "-Os", ELF_OPT_SOURCE_COMMAND_LINE, 1, false, "" },
		{ __LINE__, "producers.o", ELFCLASS64, producers, ARRAY_SIZE(producers), "", "",
		  "-Ofast", "-Ofast", ELF_OPT_SOURCE_DWARF_PRODUCER, 1, false,
		  "GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -Ofast; GNU C17 12.2.0 -mshstk -g -O2 -fbuilding-libgcc "
		  "-fpic; GNU AS 2.40" },
		{ __LINE__, "bare-producers.o", ELFCLASS64, bare_producers, ARRAY_SIZE(bare_producers), "", "",
		  "", "", ELF_OPT_SOURCE_NONE, 0, false, "GNU C17 12.2.0; Debian clang version 14.0.6" },
		{ __LINE__, "both.o", ELFCLASS64, both, ARRAY_SIZE(both), "", "/usr/bin/clang -Os -frecord-command-line a.c",
		  "-Os", "-Os", ELF_OPT_SOURCE_COMMAND_LINE, 1, false,
		  "Debian clang version 14.0.6 /usr/bin/clang -O3 -g -grecord-command-line a.c" },
		{ __LINE__, "clang-producer.o", ELFCLASS64, clang_producer, ARRAY_SIZE(clang_producer), "", "",
		  "-O3", "-O3", ELF_OPT_SOURCE_DWARF_PRODUCER, 1, false,
		  "Debian clang version 14.0.6 /usr/bin/clang -O3 -g -grecord-command-line a.c" },
		{ __LINE__, "defaulted.o", ELFCLASS64, defaulted, ARRAY_SIZE(defaulted), "", "",
		  "-O0", "-O0", ELF_OPT_SOURCE_DWARF_PRODUCER, 1, true, "GNU C17 12.2.0 -mtune=generic -march=x86-64 -g" },
	};

	memset(fits, 'f', sizeof(fits) - 1);
	fits[sizeof(fits) - 1] = '\0';
	memset(too_long, 't', sizeof(too_long) - 1);
	too_long[sizeof(too_long) - 1] = '\0';

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct elf_provenance prov;
		char path[512];
		int ret;

		snprintf(path, sizeof(path), "%s/%s", dir, rows[i].file);
		if (write_elf(path, rows[i].elf_class, rows[i].secs, rows[i].n) != 0) {
			CHECK_ROW(rows[i].line, 0, "could not write %s", path);
			continue;
		}
		memset(&prov, 'x', sizeof(prov));
		ret = elf_provenance_read(path, &prov);
		CHECK_ROW(rows[i].line, ret == 0, "%s: ret %d", rows[i].file, ret);
		CHECK_ROW(rows[i].line, strcmp(prov.comment, rows[i].comment) == 0, "%s: comment \"%s\", want \"%s\"",
			  rows[i].file, prov.comment, rows[i].comment);
		CHECK_ROW(rows[i].line, strcmp(prov.command_line, rows[i].command_line) == 0,
			  "%s: command_line \"%s\", want \"%s\"", rows[i].file, prov.command_line, rows[i].command_line);
		CHECK_ROW(rows[i].line, strcmp(prov.opt_level, rows[i].opt_level) == 0 &&
			  strcmp(prov.opt_levels, rows[i].opt_levels) == 0 && prov.opt_source == rows[i].source &&
			  prov.opt_units == rows[i].units && prov.opt_level_defaulted == rows[i].defaulted,
			  "%s: opt_level \"%s\" levels \"%s\" %s units %u defaulted %d, want \"%s\" \"%s\" %s %u %d",
			  rows[i].file, prov.opt_level, prov.opt_levels, elf_opt_source_name(prov.opt_source), prov.opt_units,
			  prov.opt_level_defaulted, rows[i].opt_level, rows[i].opt_levels,
			  elf_opt_source_name(rows[i].source), rows[i].units, rows[i].defaulted);
		CHECK_ROW(rows[i].line, strcmp(prov.producers, rows[i].producers) == 0, "%s: producers \"%s\", want \"%s\"",
			  rows[i].file, prov.producers, rows[i].producers);
		/* Relocatable objects written here: no program headers, no symbols, no build-id. */
		CHECK_ROW(rows[i].line, prov.elf_type == ET_REL && !prov.pie && !prov.has_symtab && !prov.build_id[0],
			  "%s: type %u pie %d symtab %d build_id \"%s\"", rows[i].file, prov.elf_type, prov.pie,
			  prov.has_symtab, prov.build_id);
		CHECK_ROW(rows[i].line, prov.has_debug_info == (rows[i].secs == producers), "%s: has_debug_info %d",
			  rows[i].file, prov.has_debug_info);
		unlink(path);
	}
}

static void test_errors(const char *dir)
{
	static const char text[] = "#!/bin/sh\necho not an ELF file\n";
	struct elf_provenance prov;
	char path[512], head[64];
	int fd, ret;
	ssize_t got;

	snprintf(path, sizeof(path), "%s/text", dir);
	CHECK(write_file(path, text, sizeof(text) - 1) == 0, "write %s", path);
	memset(&prov, 'x', sizeof(prov));
	ret = elf_provenance_read(path, &prov);
	CHECK(ret == -EINVAL, "text file: %d", ret);
	CHECK(prov.comment[0] == '\0' && prov.command_line[0] == '\0', "out not cleared on error");
	unlink(path);

	snprintf(path, sizeof(path), "%s/empty", dir);
	CHECK(write_file(path, "", 0) == 0, "write %s", path);
	ret = elf_provenance_read(path, &prov);
	CHECK(ret == -EINVAL, "empty file: %d", ret);
	unlink(path);

	/* An ELF header whose section table lies past the end of the file. */
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	got = fd >= 0 ? read(fd, head, sizeof(head)) : -1;
	if (fd >= 0)
		close(fd);
	CHECK(got == (ssize_t)sizeof(head) && memcmp(head, ELFMAG, SELFMAG) == 0, "own ELF header");
	snprintf(path, sizeof(path), "%s/truncated", dir);
	CHECK(write_file(path, head, sizeof(head)) == 0, "write %s", path);
	ret = elf_provenance_read(path, &prov);
	CHECK(ret == -EINVAL, "truncated ELF: %d", ret);
	/* The same header saying "no section table" (e_shoff, e_shnum, e_shstrndx = 0) is a valid ELF without provenance. */
	if (head[EI_CLASS] == ELFCLASS64 && head[EI_DATA] == ELFDATA2LSB) {
		memset(head + 0x28, 0, 8);	/* Elf64_Ehdr.e_shoff */
		memset(head + 0x3c, 0, 4);	/* e_shnum, e_shstrndx */
		CHECK(write_file(path, head, sizeof(head)) == 0, "write %s", path);
		memset(&prov, 'x', sizeof(prov));
		ret = elf_provenance_read(path, &prov);
		CHECK(ret == 0 && prov.comment[0] == '\0' && prov.command_line[0] == '\0', "no section table: %d", ret);
	}
	unlink(path);

	snprintf(path, sizeof(path), "%s/does-not-exist", dir);
	ret = elf_provenance_read(path, &prov);
	CHECK(ret == -ENOENT, "missing file: %d", ret);

	ret = elf_provenance_read(dir, &prov);
	CHECK(ret == -EISDIR, "directory: %d", ret);

	/* Permission bits do not stop root; the case only means something for other users. */
	if (geteuid() != 0) {
		snprintf(path, sizeof(path), "%s/unreadable", dir);
		CHECK(write_file(path, text, sizeof(text) - 1) == 0 && chmod(path, 0) == 0, "write %s", path);
		ret = elf_provenance_read(path, &prov);
		CHECK(ret == -EACCES, "unreadable file: %d", ret);
		unlink(path);
	}
}

/*
 * The real thing when a C compiler is at hand: an object built with
 * -frecord-gcc-switches. Skipped (and said so) without one; the libelf-written
 * files above cover the same paths deterministically.
 */
static void test_compiled(const char *dir)
{
	struct elf_provenance prov;
	char src[512], obj[512], cmd[1200];
	int status, ret;

	snprintf(src, sizeof(src), "%s/probe.c", dir);
	snprintf(obj, sizeof(obj), "%s/probe.o", dir);
	static const char code[] = "int probe(void) { return 42; }\n";

	if (write_file(src, code, sizeof(code) - 1) != 0) {
		CHECK(0, "write %s", src);
		return;
	}
	snprintf(cmd, sizeof(cmd), "cc -O1 -fno-omit-frame-pointer -frecord-gcc-switches -c '%s' -o '%s' 2>/dev/null",
		 src, obj);
	status = system(cmd);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "note: no working cc; skipped the -frecord-gcc-switches object\n");
		unlink(src);
		return;
	}
	ret = elf_provenance_read(obj, &prov);
	printf("probe.o comment = \"%s\"\nprobe.o command_line = \"%s\"\n", prov.comment, prov.command_line);
	fflush(stdout);
	CHECK(ret == 0, "probe.o: %d", ret);
	CHECK(prov.comment[0] != '\0', "probe.o has no .comment");
	/* GCC records code-generation switches (not -D), one per string; clang the whole line as one. */
	CHECK(strstr(prov.command_line, "-O1") && strstr(prov.command_line, "-fno-omit-frame-pointer"),
	      "probe.o command_line \"%s\"", prov.command_line);
	unlink(obj);
	unlink(src);
}

/* Whether the file's .debug_str is compressed in the given way (so the compressed path really ran). */
static bool debug_str_compressed(const char *path, bool gnu)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;

	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr shdr;
			const char *name;

			if (!gelf_getshdr(scn, &shdr) || !(name = elf_strptr(elf, shstrndx, shdr.sh_name)))
				continue;
			if (gnu ? strcmp(name, ".zdebug_str") == 0
				: strcmp(name, ".debug_str") == 0 && (shdr.sh_flags & SHF_COMPRESSED))
				found = true;
		}
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return found;
}

/*
 * Programs built by tests/meson.build with gcc and clang and known flags
 * (tests/unit/elf-probe.c): what each records, read back. A compiler that is
 * not installed leaves its variable unset; its probes are skipped, and said so.
 */
static void test_probes(void)
{
	enum { GCC, CLANG };
	static const char *const dir_vars[] = { [GCC] = "TLBPROF_TEST_PROBES_GCC", [CLANG] = "TLBPROF_TEST_PROBES_CLANG" };
	static const struct {
		int line;
		int compiler;
		const char *file;
		const char *opt_level;
		enum elf_opt_source source;
		bool defaulted, pie, symtab, debug, build_id;
		uint16_t type;
		const char *producer_has;	/* a substring of producers, NULL: producers "" */
		int compressed;			/* 0 no check, 1 SHF_COMPRESSED, 2 .zdebug_str */
	} rows[] = {
		{ __LINE__, GCC, "probe-gcc-O0", "-O0", ELF_OPT_SOURCE_DWARF_PRODUCER, false, true, true, true, true, ET_DYN,
		  " -O0", 0 },
		{ __LINE__, GCC, "probe-gcc-O2-recorded", "-O2", ELF_OPT_SOURCE_COMMAND_LINE, false, true, true, true, true,
		  ET_DYN, " -O2", 0 },
		{ __LINE__, GCC, "probe-gcc-default", "-O0", ELF_OPT_SOURCE_DWARF_PRODUCER, true, true, true, true, true,
		  ET_DYN, "GNU C", 0 },
		{ __LINE__, GCC, "probe-gcc-last-wins", "-O1", ELF_OPT_SOURCE_DWARF_PRODUCER, false, true, true, true, true,
		  ET_DYN, "-O3 -O1", 0 },
		{ __LINE__, GCC, "probe-gcc-last-wins-zlib", "-O1", ELF_OPT_SOURCE_DWARF_PRODUCER, false, true, true, true,
		  true, ET_DYN, "-O3 -O1", 1 },
		{ __LINE__, GCC, "probe-gcc-last-wins-zlib-gnu", "-O1", ELF_OPT_SOURCE_DWARF_PRODUCER, false, true, true,
		  true, true, ET_DYN, "-O3 -O1", 2 },
		/* Stripped: nothing recorded survives, and the reader says so rather than guessing. */
		{ __LINE__, GCC, "probe-gcc-stripped", "", ELF_OPT_SOURCE_NONE, false, true, false, false, true, ET_DYN,
		  NULL, 0 },
		{ __LINE__, GCC, "probe-gcc-no-pie", "-O2", ELF_OPT_SOURCE_DWARF_PRODUCER, false, false, true, true, false,
		  ET_EXEC, "-fno-PIE", 0 },
		/* clang records no switches by default: the producer names clang, the level stays unknown. */
		{ __LINE__, CLANG, "probe-clang-O2", "", ELF_OPT_SOURCE_NONE, false, true, true, true, true, ET_DYN,
		  "clang version", 0 },
	};
	const char *dirs[] = { [GCC] = getenv(dir_vars[GCC]), [CLANG] = getenv(dir_vars[CLANG]) };

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const char *dir = dirs[rows[i].compiler];
		struct elf_provenance prov;
		char path[1024];
		int ret;

		if (!dir) {
			fprintf(stderr, "note: %s unset (compiler not installed): skipped %s\n",
				dir_vars[rows[i].compiler], rows[i].file);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, rows[i].file);
		ret = elf_provenance_read(path, &prov);
		printf("%s: opt_level \"%s\" (%s) producers \"%s\" build_id %s\n", rows[i].file, prov.opt_level,
		       elf_opt_source_name(prov.opt_source), prov.producers, prov.build_id);
		CHECK_ROW(rows[i].line, ret == 0, "%s: %d", path, ret);
		CHECK_ROW(rows[i].line, strcmp(prov.opt_level, rows[i].opt_level) == 0 && prov.opt_source == rows[i].source &&
			  prov.opt_level_defaulted == rows[i].defaulted,
			  "%s: opt_level \"%s\" from %s defaulted %d", rows[i].file, prov.opt_level,
			  elf_opt_source_name(prov.opt_source), prov.opt_level_defaulted);
		CHECK_ROW(rows[i].line, prov.pie == rows[i].pie && prov.has_symtab == rows[i].symtab &&
			  prov.has_debug_info == rows[i].debug && prov.elf_type == rows[i].type,
			  "%s: pie %d symtab %d debug %d type %u", rows[i].file, prov.pie, prov.has_symtab,
			  prov.has_debug_info, prov.elf_type);
		/* --build-id's default is a SHA-1: 20 bytes. */
		CHECK_ROW(rows[i].line, rows[i].build_id ? strlen(prov.build_id) == 40 : prov.build_id[0] == '\0',
			  "%s: build_id \"%s\"", rows[i].file, prov.build_id);
		CHECK_ROW(rows[i].line, rows[i].producer_has ? strstr(prov.producers, rows[i].producer_has) != NULL
							     : prov.producers[0] == '\0',
			  "%s: producers \"%s\"", rows[i].file, prov.producers);
		if (rows[i].compressed)
			CHECK_ROW(rows[i].line, debug_str_compressed(path, rows[i].compressed == 2),
				  "%s: .debug_str not compressed as expected", rows[i].file);
	}
}

int main(void)
{
	char dir[] = "/tmp/test-elfinfo-XXXXXX";

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_self();
	test_opt_parse();
	test_written(dir);
	test_probes();
	test_errors(dir);
	test_compiled(dir);
	rmdir(dir);
	return check_finish();
}
