/* SPDX-License-Identifier: MIT */
/*
 * Symbolizer: addresses of other processes -> object, function and offset, source file:line and inlined frames
 * (elfutils' libdwfl), and data addresses -> mapped regions.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Names used where nothing better is known. */
#define SYMBOLS_UNKNOWN "[unknown]"	/* no symbol covers the address, or no mapping holds it */
#define SYMBOLS_KERNEL "[kernel]"	/* object of an address in the kernel half with no mapping */
#define SYMBOLS_ANON "[anon]"		/* region name of anonymous memory without a name of its own */

/* One mapping of an address space, as a line of /proc/PID/maps or a perf MMAP2 record describes it. */
struct symbols_mapping {
	uint64_t start, end;		/* [start, end), runtime addresses; start < end */
	uint64_t offset;		/* file offset mapped at start (0 for anonymous memory) */
	char perms[5];			/* "r-xp": read, write, execute, p(rivate) or s(hared); "" when unknown */
	uint32_t dev_major, dev_minor;	/* device of the file (0:0 for anonymous memory) */
	uint64_t inode;			/* inode of the file (0 for anonymous memory) */
	bool deleted;			/* the file was unlinked or replaced after it was mapped: its symbols
					 * are not read (the path may name another file now) */
	/*
	 * The file, a pseudo name ("[heap]", "[stack]", "[vdso]", "[anon:NAME]")
	 * or "" for anonymous memory; never NULL. Returned by the container:
	 * owned by it. Passed to symbols_mapping_add(): copied.
	 */
	const char *path;
};

/*
 * Parse one line of /proc/PID/maps ("start-end perms offset major:minor inode
 * [path]"; a trailing '\n' is allowed) into out (pure, no I/O). The path,
 * spaces included, is copied NUL-terminated into path_buf (size path_size)
 * and out->path points there; a " (deleted)" suffix is removed and sets
 * out->deleted. Returns 0, -EINVAL for a malformed line (out->path is then
 * ""), -ENAMETOOLONG when the path does not fit.
 */
int symbols_maps_parse_line(const char *line, size_t len, struct symbols_mapping *out, char *path_buf,
			    size_t path_size);

/*
 * A symbolizer: the address spaces of some processes (mappings per pid) and
 * the ELF symbol tables of the objects they map, each read once, on first
 * use. Owns every string it returns; they live until symbols_delete().
 */
struct symbols;

/* An empty symbolizer, or NULL when out of memory. */
struct symbols *symbols_new(void);
/* Free syms and everything it returned. NULL is allowed. */
void symbols_delete(struct symbols *syms);

/*
 * Add a mapping to pid's address space, as mmap(MAP_FIXED) would: the parts
 * of older mappings it overlaps are dropped, so the latest record wins (a
 * file mapped over a reservation, a grown [heap]). A path "//anon" (perf's
 * name for anonymous memory) is stored as "", a " (deleted)" suffix sets
 * deleted. Returns 0, -EINVAL (start >= end, or a NULL argument), -ENOMEM.
 */
int symbols_mapping_add(struct symbols *syms, pid_t pid, const struct symbols_mapping *m);

/*
 * Add every line of /proc/PID/maps text (pure, no I/O) to pid's address
 * space through symbols_mapping_add(). Malformed lines are skipped and
 * counted in *bad_lines (may be NULL). Returns the number of mappings added,
 * or -ENOMEM.
 */
int symbols_maps_parse(struct symbols *syms, pid_t pid, const char *text, size_t len, size_t *bad_lines);

/*
 * Read /proc/PID/maps now and add it (symbols_maps_parse()). Mappings are
 * added, never removed: a sample taken before an munmap still resolves.
 * Returns the number of mappings added, -errno from open/read (ENOENT: the
 * process is gone), -ENOMEM.
 */
int symbols_maps_read(struct symbols *syms, pid_t pid);

/*
 * A fork: child's address space becomes a copy of parent's (perf
 * PERF_RECORD_FORK with pid != ppid; a new thread shares its process's).
 * Returns 0, -ENOMEM.
 */
int symbols_fork(struct symbols *syms, pid_t parent, pid_t child);

/* An exec: pid runs a new program, its old mappings are forgotten (perf PERF_RECORD_COMM with COMM_EXEC). */
void symbols_exec(struct symbols *syms, pid_t pid);

/* Number of mappings of pid's address space (0 for an unknown pid). */
size_t symbols_mapping_count(const struct symbols *syms, pid_t pid);
/* The i-th mapping of pid, sorted by start and not overlapping; NULL when i is out of range. */
const struct symbols_mapping *symbols_mapping_get(const struct symbols *syms, pid_t pid, size_t i);
/* The mapping of pid that holds addr, or NULL. */
const struct symbols_mapping *symbols_mapping_find(const struct symbols *syms, pid_t pid, uint64_t addr);

/* Where an instruction address is. Strings are owned by the symbolizer. */
struct symbols_location {
	const char *object;	/* the mapping's path ("/usr/lib/x86_64-linux-gnu/libc.so.6", "[vdso]"),
				 * SYMBOLS_KERNEL for a kernel address, SYMBOLS_UNKNOWN when no mapping
				 * holds the address */
	const char *function;	/* the function symbol covering the address, else SYMBOLS_UNKNOWN */
	uint64_t offset;	/* address - function start (0 when unresolved) */
	uint64_t elf_addr;	/* the address in the object's own ELF virtual addresses (what nm and
				 * objdump show), 0 when not known */
	bool resolved;		/* function names a symbol, or an unnamed function (unnamed) */
	bool unnamed;		/* no symbol covers the address: function is "sub_" and the start of the unwind
				 * entry (.eh_frame FDE) holding it, in hex, which bounds it */
};

/*
 * Resolve an instruction address of pid: the mapping holding it, its object's
 * ELF symbol table (.symtab, else .dynsym; STT_FUNC and STT_GNU_IFUNC with
 * their sizes) and the load bias from the mapping's start and file offset and
 * the object's PT_LOAD headers (non-PIE executables, PIE executables and
 * shared objects alike). An address no symbol covers (a stripped executable)
 * resolves to the unnamed function its unwind entry bounds (unnamed). Code
 * in anonymous or JIT memory resolves to its name in the JIT's perf map,
 * /tmp/perf-PID.map, where there is one to trust (symbols_jit.h). Anything
 * else that cannot be resolved (no mapping, JIT code no map names, a
 * deleted or unreadable file, an address no symbol or unwind entry covers)
 * gives SYMBOLS_UNKNOWN with the object when known. Never fails.
 */
void symbols_resolve(struct symbols *syms, pid_t pid, uint64_t addr, struct symbols_location *out);

/*
 * Where addr of pid lies in code of a file that no symbol and no unwind entry
 * covers (hand-written assembly without CFI directives in a stripped
 * executable, as likwid-bench's kernels): the bounds of that code in the
 * file's ELF virtual addresses, [*lo, *hi), from the end of the covered code
 * below to the start of the covered code above, within its executable
 * segment. False when addr is covered, or not in a file's executable segment.
 */
bool symbols_gap(struct symbols *syms, pid_t pid, uint64_t addr, uint64_t *lo, uint64_t *hi);

/*
 * "OBJECT:FUNCTION+0xOFFSET" ("/usr/bin/x:main+0x1c", "[vdso]:[unknown]",
 * "[unknown]") into buf (size buf_size, truncated, always terminated when
 * buf_size > 0). Returns the length snprintf() would have written.
 */
int symbols_location_format(const struct symbols_location *loc, char *buf, size_t buf_size);

/* The region a data address falls in. Strings are owned by the symbolizer. */
struct symbols_region {
	const char *name;	/* "[heap]", "[stack]", "[anon:NAME]", SYMBOLS_ANON for nameless anonymous
				 * memory, the file's path, or SYMBOLS_UNKNOWN when no mapping holds it */
	uint64_t start, end;	/* the mapping holding the address; 0, 0 when unknown */
	bool anonymous;		/* no file behind it (heap, stack, anonymous mappings) */
};

/* Classify a data address of pid into the mapping it falls in (so faults group by region). Never fails. */
void symbols_classify(const struct symbols *syms, pid_t pid, uint64_t addr, struct symbols_region *out);

/*
 * One frame of the source-level call chain at an instruction address: the
 * innermost first, each inlined function its own frame. Strings are owned by
 * the symbolizer.
 */
struct symbols_frame {
	const char *function;	/* the function as DWARF names it (inlined or not), NULL when DWARF has none */
	const char *file;	/* the source file as the compiler recorded it, NULL when unknown */
	const char *comp_dir;	/* the directory a relative file is relative to (DW_AT_comp_dir), else NULL */
	int line, column;	/* 1-based; 0 when unknown */
	bool inlined;		/* function was inlined into the next frame's function */
};

/*
 * The source frames of an instruction address of pid into frames (at most
 * max), from the DWARF of the mapped object or of its separate debug file
 * (found by build-id or .gnu_debuglink, as libdwfl does: libc resolves once
 * libc6-dbg is installed): frames[0] is the line the address belongs to, in
 * the innermost (possibly inlined) function; frames[i + 1] is where
 * frames[i]'s function was inlined. Returns the number of frames, 0 when no
 * line information covers the address (no DWARF, no mapping, anonymous or
 * JIT memory, a deleted file). Reads the object on first use; never fails
 * otherwise.
 */
size_t symbols_frames(struct symbols *syms, pid_t pid, uint64_t addr, struct symbols_frame *frames, size_t max);

/*
 * "FILE:LINE" ("/src/bench.c:42"; a relative file after its comp_dir,
 * "/build/../src/bench.c:42"), "FILE" when the line is unknown, "" for none,
 * into buf as symbols_location_format() does. Returns the length snprintf()
 * would have written.
 */
int symbols_frame_format(const struct symbols_frame *frame, char *buf, size_t buf_size);
