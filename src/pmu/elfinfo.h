/* SPDX-License-Identifier: MIT */
/* Provenance of an ELF binary read with libelf: compiler, recorded switches, optimisation level, PIE, build-id. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

/* Where elf_provenance.opt_level came from. */
enum elf_opt_source {
	ELF_OPT_SOURCE_NONE,		/* nothing recorded (clang without -grecord-command-line, a stripped
					 * binary, gcc -gno-record-gcc-switches): opt_level is "", never a guess */
	ELF_OPT_SOURCE_COMMAND_LINE,	/* .GCC.command.line (-frecord-gcc-switches, gcc or clang) */
	ELF_OPT_SOURCE_DWARF_PRODUCER,	/* DW_AT_producer strings (gcc records its switches there with -g) */
};

/* "none", "gcc-command-line", "dwarf-producer"; NULL for an out-of-range value. */
const char *elf_opt_source_name(enum elf_opt_source source);

struct elf_provenance {
	char comment[256];		/* .comment strings joined with "; " ("GCC: (Debian 12.2.0-14) 12.2.0") */
	char command_line[512];		/* .GCC.command.line joined with " " when present ("" otherwise) */
	char producers[1024];		/* DW_AT_producer strings of the compile units, distinct, joined with "; "
					 * ("GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O2"); "" without
					 * debug info */
	/*
	 * The optimisation level, read per unit (one object's command line, one
	 * compile unit's producer) with the last -O switch winning: "-O0" ..
	 * "-O3", "-Os", "-Oz", "-Ofast", "-Og" when every unit agrees, "mixed"
	 * when they differ (opt_levels lists them), "" when nothing is recorded.
	 * Units of the toolchain's own runtime (built with -fbuilding-libgcc,
	 * e.g. crtfastmath.o) are not the program's code and are left out.
	 */
	char opt_level[8];
	char opt_levels[64];		/* each distinct level once, in order of appearance, " "-joined */
	bool opt_level_defaulted;	/* some unit recorded switches but no -O: the compilers' default -O0 */
	unsigned opt_units;		/* units whose switches were read */
	enum elf_opt_source opt_source;	/* .GCC.command.line when it has units, else the producers */
	uint16_t elf_type;		/* e_type: ET_REL, ET_EXEC, ET_DYN, ... (ET_NONE when unreadable) */
	bool pie;			/* ET_DYN with DF_1_PIE (set by ld since 2.32; static-pie too), or with
					 * PT_INTERP and no DT_SONAME (older linkers; libc.so.6 has an
					 * interpreter but is a library) */
	bool has_symtab;		/* a .symtab with symbols (false: stripped; .dynsym may remain) */
	bool has_debug_info;		/* .debug_info (or .zdebug_info) present */
	char build_id[129];		/* NT_GNU_BUILD_ID as lower-case hex, "" when absent */
};

/*
 * Read the provenance of the ELF file at path. Returns 0, or -errno (file
 * unreadable; -EISDIR for a directory) / -EINVAL (not an ELF file, or one
 * without a readable section table). Missing sections are not errors: the
 * fields stay "". Empty and repeated strings are listed once (a linked program
 * carries one copy per object file); only whole strings are stored, so a
 * string that no longer fits ends the list. out is always initialised.
 */
int elf_provenance_read(const char *path, struct elf_provenance *out);

/*
 * The optimisation level a string of compiler switches asks for (pure):
 * tokens are separated by white space, the last valid -O switch wins, "-O"
 * means "-O1" and "-O<n>" with n above 3 means "-O3", as gcc and clang treat
 * them. Tokens that merely start like one ("-Ofoo", "-O-1") are not -O
 * switches. Returns the canonical spelling ("-O0", "-O1", "-O2", "-O3",
 * "-Os", "-Oz", "-Ofast", "-Og") as a static string, or NULL when switches
 * holds no -O switch (or is NULL).
 */
const char *elf_opt_level_parse(const char *switches);

/*
 * The file offset of the ELF virtual addresses [vaddr, vaddr + len) (len
 * at least 1), through the PT_LOAD header whose file bytes hold them all.
 * Returns 0, -EINVAL when the program headers cannot be read, -ERANGE when
 * no PT_LOAD holds the range.
 */
int elf_vaddr_offset(Elf *elf, uint64_t vaddr, uint64_t len, uint64_t *off);
