/* SPDX-License-Identifier: MIT */
/* Unit tests for elfinfo: the test binary itself, ELF files written with libelf, and files that are not ELF. */
#include "check.h"
#include "elfinfo.h"

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
	const struct {
		int line;
		const char *file;
		int elf_class;
		const struct section *secs;
		size_t n;
		const char *comment, *command_line;
	} rows[] = {
		{ __LINE__, "gcc64.o", ELFCLASS64, gcc_like, ARRAY_SIZE(gcc_like),
		  "GCC: (Debian 12.2.0-14) 12.2.0; Debian clang version 14.0.6", "-O2 -g -frecord-gcc-switches -march=x86-64" },
		{ __LINE__, "gcc32.o", ELFCLASS32, gcc_like, ARRAY_SIZE(gcc_like),
		  "GCC: (Debian 12.2.0-14) 12.2.0; Debian clang version 14.0.6", "-O2 -g -frecord-gcc-switches -march=x86-64" },
		{ __LINE__, "none.o", ELFCLASS64, no_provenance, ARRAY_SIZE(no_provenance), "", "" },
		{ __LINE__, "unterminated.o", ELFCLASS64, unterminated, ARRAY_SIZE(unterminated),
		  "GCC: one; tail without NUL", "" },
		{ __LINE__, "long.o", ELFCLASS64, long_line, ARRAY_SIZE(long_line), "", many_want },
		{ __LINE__, "lookalike.o", ELFCLASS64, lookalike, ARRAY_SIZE(lookalike), "", "" },
		{ __LINE__, "empty-between.o", ELFCLASS64, empty_between, ARRAY_SIZE(empty_between), "", "-O2 -g" },
		{ __LINE__, "comment-fits.o", ELFCLASS64, comment_fits, ARRAY_SIZE(comment_fits), fits, "" },
		/* Two .comment sections: the second's string cannot follow the first, nothing half of it may. */
		{ __LINE__, "comment-too-long.o", ELFCLASS64, comment_too_long, ARRAY_SIZE(comment_too_long),
		  "GCC: short", "" },
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

int main(void)
{
	char dir[] = "/tmp/test-elfinfo-XXXXXX";

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_self();
	test_written(dir);
	test_errors(dir);
	test_compiled(dir);
	rmdir(dir);
	return check_finish();
}
