/* SPDX-License-Identifier: MIT */
/* Private to symbols.c: one ELF object read through libdwfl (symbols, segments, DWARF lines and inlined frames). */
#pragma once

#include "pmu/symbols.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A function of an object: [start, end) in the object's ELF virtual addresses. */
struct symbols_function {
	uint64_t start, end;
	const char *name;	/* owned by the object's libdwfl session */
	unsigned char bind;	/* STB_GLOBAL, STB_WEAK, STB_LOCAL: ranks aliases */
	bool sized;		/* st_size was given; otherwise end is provisional */
	bool unnamed;		/* no symbol covers it: [start, end) is the range of its unwind entry (FDE) in
				 * .eh_frame, and name is "sub_" and the start in hex */
	bool shown_tried;
	char *shown;		/* name demangled (C++), malloc'd on first use; NULL: it is shown as it is */
};

/* A PT_LOAD segment: file bytes [offset, offset + filesz) appear at vaddr. */
struct symbols_segment {
	uint64_t vaddr, offset, filesz;
	bool exec;
};

/* The ELF object behind a path, read on first use; zero-initialised before. */
struct symbols_object {
	bool tried;
	int err;			/* 0 when loaded, else -errno / -EINVAL (not ELF) */
	void *dwfl;			/* the libdwfl session holding the file (Dwfl *), NULL when not loaded */
	void *module;			/* its one module (Dwfl_Module *) */
	uint64_t bias;			/* module address = ELF virtual address + bias */
	struct symbols_segment *loads;
	size_t n_loads;
	struct symbols_function *funcs;	/* sorted by start, starts distinct */
	size_t n_funcs;
	/* The unwind entries' ranges, sorted by start, read on first need; names malloc'd on first use. */
	bool unnamed_tried;
	struct symbols_function *unnamed;
	size_t n_unnamed;
};

/*
 * Read path once: open it (regular files only, without blocking), report it
 * to libdwfl at its own ELF addresses, take its PT_LOAD headers and the
 * function symbols of the best table libdwfl finds (.symtab, a separate debug
 * file's by build-id or .gnu_debuglink, .dynsym with .gnu_debugdata). Sets
 * obj->tried and obj->err.
 */
void symbols_object_load(struct symbols_object *obj, const char *path);
/* Free what symbols_object_load() made (the libdwfl session too). */
void symbols_object_free(struct symbols_object *obj);
/* A file offset of the object as an ELF virtual address (the executable segment first). False: in no segment. */
bool symbols_object_vaddr(const struct symbols_object *obj, uint64_t file_off, uint64_t *vaddr);
/*
 * The function covering an ELF virtual address: its symbol, or where none
 * covers it (a stripped executable, a static function of one that keeps only
 * .dynsym) the range of the unwind entry holding it, which GCC and Clang emit
 * for every function by default (-fasynchronous-unwind-tables), as an unnamed
 * function named "sub_" and its start in hex. NULL: neither. Both last as
 * long as the object.
 */
struct symbols_function *symbols_object_find(struct symbols_object *obj, uint64_t vaddr);
/*
 * The code around an ELF virtual address of an executable segment that no
 * symbol and no unwind entry covers (hand-written assembly without CFI
 * directives, in a stripped file): [*lo, *hi), from the end of the covered
 * code below it to the start of the covered code above, within the segment.
 * False: vaddr is covered, or in no executable segment.
 */
bool symbols_object_gap(struct symbols_object *obj, uint64_t vaddr, uint64_t *lo, uint64_t *hi);
/* The name to show: demangled where it is a C++ one (pmu/demangle.c), else the symbol's. Lasts as fn does. */
const char *symbols_function_shown(struct symbols_function *fn);
/* symbols_frames() for an ELF virtual address of a loaded object. */
size_t symbols_object_frames(const struct symbols_object *obj, uint64_t vaddr, struct symbols_frame *frames,
			     size_t max);
