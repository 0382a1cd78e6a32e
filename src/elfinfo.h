/* SPDX-License-Identifier: MIT */
/* Provenance of an ELF binary read with libelf: the compiler's .comment and recorded switches. */
#pragma once

#include <stddef.h>

struct elf_provenance {
	char comment[256];		/* .comment strings joined with "; " ("GCC: (Debian 12.2.0-14) 12.2.0") */
	char command_line[512];		/* .GCC.command.line joined with " " when present ("" otherwise) */
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
