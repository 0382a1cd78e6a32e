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
 * unreadable) / -EINVAL (not an ELF file). Missing sections are not errors:
 * the fields stay "".
 */
int elf_provenance_read(const char *path, struct elf_provenance *out);
