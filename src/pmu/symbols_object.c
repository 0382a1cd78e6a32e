/* SPDX-License-Identifier: MIT */
/* One ELF object through elfutils' libdwfl: function symbols (with separate debug files), segments, DWARF lines. */
#include "pmu/symbols_object.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmu/demangle.h"
#include "pmu/symbols_unwind.h"

/* Aliases of a nested symbol are looked for this far back from the nearest start below an address. */
#define SYMBOLS_NESTED_LOOKBACK 16

/*
 * libdwfl finds the debug file itself: by build-id under /usr/lib/debug/.build-id/ (libc6-dbg and the other
 * -dbg / -dbgsym packages), by .gnu_debuglink next to the file, in its .debug/ and under /usr/lib/debug, and
 * through debuginfod when the user set DEBUGINFOD_URLS (elfutils' policy, as for gdb and perf). The main file
 * comes from us (dwfl_report_elf with our descriptor), so find_elf is never asked.
 */
static const Dwfl_Callbacks symbols_dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

static int bind_rank(unsigned char bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

/*
 * Order by start; among aliases of one address the name people know comes
 * first: fewer leading underscores (glibc exports "getpid" as a weak alias of
 * its global "__getpid"), then global over weak over local, then the
 * shorter, then by bytes so the choice is the same on every run. (libdwfl's
 * own dwfl_module_addrinfo() prefers global over weak and would say
 * "__getpid".)
 */
static int function_cmp(const void *a, const void *b)
{
	const struct symbols_function *x = a, *y = b;
	size_t ux, uy, lx, ly;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	ux = leading_underscores(x->name);
	uy = leading_underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	if (bind_rank(x->bind) != bind_rank(y->bind))
		return bind_rank(x->bind) < bind_rank(y->bind) ? -1 : 1;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The PT_LOAD headers of the main file. Returns 0, -EINVAL (none readable), -ENOMEM. */
static int object_read_loads(struct symbols_object *obj, Elf *elf)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum) != 0 || phnum == 0)
		return -EINVAL;
	obj->loads = calloc(phnum, sizeof(*obj->loads));
	if (!obj->loads)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_LOAD)
			continue;
		obj->loads[obj->n_loads++] = (struct symbols_segment){
			.vaddr = phdr.p_vaddr, .offset = phdr.p_offset, .filesz = phdr.p_filesz,
			.exec = (phdr.p_flags & PF_X) != 0,
		};
	}
	return obj->n_loads ? 0 : -EINVAL;
}

/* End of the section a symbol lies in (module addresses), the limit for a symbol without a size. */
static uint64_t section_end(Elf *elf, GElf_Word shndx, Dwarf_Addr bias)
{
	Elf_Scn *scn = elf ? elf_getscn(elf, shndx) : NULL;
	GElf_Shdr shdr;

	if (!scn || !gelf_getshdr(scn, &shdr))
		return 0;
	return shdr.sh_addr + shdr.sh_size + bias;
}

/*
 * The function symbols libdwfl chose for the module into obj, sorted, aliases
 * merged, in ELF virtual addresses of the main file. Returns 0, -ENOMEM
 * (none is not an error: a stripped file without .dynsym).
 */
static int object_read_functions(struct symbols_object *obj, Dwfl_Module *mod)
{
	int count = dwfl_module_getsymtab(mod);
	size_t kept = 0;

	if (count <= 1)
		return 0;
	obj->funcs = calloc((size_t)count, sizeof(*obj->funcs));
	if (!obj->funcs)
		return -ENOMEM;
	for (int i = 1; i < count; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf = NULL;
		Dwarf_Addr bias = 0;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf, &bias);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || !name[0] || (type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    (sym.st_shndx >= SHN_LORESERVE && sym.st_shndx != SHN_XINDEX) || sym.st_value == 0 ||
		    addr < obj->bias || addr + sym.st_size < addr)
			continue;
		obj->funcs[kept++] = (struct symbols_function){
			.start = addr - obj->bias,
			.end = (sym.st_size ? addr + sym.st_size : section_end(elf, shndx, bias)) - obj->bias,
			.name = name,
			.bind = (unsigned char)GELF_ST_BIND(sym.st_info),
			.sized = sym.st_size != 0,
		};
	}
	qsort(obj->funcs, kept, sizeof(*obj->funcs), function_cmp);
	/* Keep the preferred alias of each start; an unsized symbol ends where the next one starts. */
	obj->n_funcs = 0;
	for (size_t i = 0; i < kept; i++) {
		if (obj->n_funcs && obj->funcs[obj->n_funcs - 1].start == obj->funcs[i].start) {
			struct symbols_function *f = &obj->funcs[obj->n_funcs - 1];

			if (!f->sized && obj->funcs[i].sized) {
				f->end = obj->funcs[i].end;
				f->sized = true;
			}
			continue;
		}
		obj->funcs[obj->n_funcs++] = obj->funcs[i];
	}
	for (size_t i = 0; i + 1 < obj->n_funcs; i++)
		if (!obj->funcs[i].sized && obj->funcs[i].end > obj->funcs[i + 1].start)
			obj->funcs[i].end = obj->funcs[i + 1].start;
	return 0;
}

/* Open path for reading without blocking, regular files only: a maps line may name a FIFO or a device. */
static int open_regular(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0)
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = -EINVAL;
	else
		return fd;
	close(fd);
	return err;
}

void symbols_object_load(struct symbols_object *obj, const char *path)
{
	Dwfl *dwfl = NULL;
	Dwfl_Module *mod;
	GElf_Addr bias = 0;
	Elf *elf;
	int fd, err;

	obj->tried = true;
	fd = open_regular(path);
	if (fd < 0) {
		obj->err = fd;
		return;
	}
	dwfl = dwfl_begin(&symbols_dwfl_callbacks);
	if (!dwfl) {
		close(fd);
		obj->err = -ENOMEM;
		return;
	}
	/*
	 * At the file's own addresses: base 0 with the first PT_LOAD's vaddr added, so an ET_DYN (PIE, shared
	 * object) and an ET_EXEC alike have bias 0. On success the module owns fd (closed by dwfl_end()).
	 */
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, path, path, fd, 0, true);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!mod) {
		close(fd);
		err = -EINVAL;	/* not an ELF file libdwfl could use */
		goto out;
	}
	elf = dwfl_module_getelf(mod, &bias);
	if (!elf) {
		err = -EINVAL;
		goto out;
	}
	obj->dwfl = dwfl;
	obj->module = mod;
	obj->bias = bias;
	err = object_read_loads(obj, elf);
	if (!err)
		err = object_read_functions(obj, mod);
out:
	obj->err = err;
	if (err && !obj->dwfl)
		dwfl_end(dwfl);
}

const char *symbols_function_shown(struct symbols_function *fn)
{
	if (!fn->shown_tried) {
		fn->shown_tried = true;
		fn->shown = demangle(fn->name);
	}
	return fn->shown ? fn->shown : fn->name;
}

void symbols_object_free(struct symbols_object *obj)
{
	for (size_t i = 0; i < obj->n_funcs; i++)
		free(obj->funcs[i].shown);
	for (size_t i = 0; i < obj->n_unnamed; i++) {
		free((char *)obj->unnamed[i].name);
		free(obj->unnamed[i].shown);
	}
	free(obj->unnamed);
	free(obj->loads);
	free(obj->funcs);
	if (obj->dwfl)
		dwfl_end(obj->dwfl);
	*obj = (struct symbols_object){ 0 };
}

/*
 * Two segments may share a file page (text ending and data starting in one
 * page); an instruction address prefers the executable one.
 */
bool symbols_object_vaddr(const struct symbols_object *obj, uint64_t file_off, uint64_t *vaddr)
{
	const struct symbols_segment *best = NULL;

	for (size_t i = 0; i < obj->n_loads; i++) {
		const struct symbols_segment *l = &obj->loads[i];

		if (file_off < l->offset || file_off - l->offset >= l->filesz)
			continue;
		if (!best || (l->exec && !best->exec))
			best = l;
	}
	if (!best)
		return false;
	*vaddr = best->vaddr + (file_off - best->offset);
	return true;
}

/* The symbol covering vaddr, or NULL. */
/* The index of the first of fns[0..n) (sorted by start) that starts above vaddr; n when none does. */
static size_t first_starting_above(const struct symbols_function *fns, size_t n, uint64_t vaddr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fns[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct symbols_function *symbol_find(struct symbols_object *obj, uint64_t vaddr)
{
	size_t lo = first_starting_above(obj->funcs, obj->n_funcs, vaddr);

	/* The nearest start below may be a symbol nested in a larger function; look a little further back. */
	for (size_t i = lo, steps = 0; i > 0 && steps < SYMBOLS_NESTED_LOOKBACK; i--, steps++)
		if (vaddr < obj->funcs[i - 1].end)
			return &obj->funcs[i - 1];
	return NULL;
}

/* The unwind entries of the main file, read the first time an address falls outside every symbol. */
static void load_unnamed(struct symbols_object *obj)
{
	GElf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(obj->module, &bias);
	struct symbols_range *ranges = NULL;
	size_t n = 0;

	obj->unnamed_tried = true;
	if (!elf || symbols_unwind_ranges(elf, &ranges, &n) != 0 || !n)
		return;
	obj->unnamed = calloc(n, sizeof(*obj->unnamed));
	if (obj->unnamed) {
		for (size_t i = 0; i < n; i++)
			obj->unnamed[i] = (struct symbols_function){ .start = ranges[i].start, .end = ranges[i].end,
								     .sized = true, .unnamed = true };
		obj->n_unnamed = n;
	}
	free(ranges);
}

struct symbols_function *symbols_object_find(struct symbols_object *obj, uint64_t vaddr)
{
	struct symbols_function *fn = symbol_find(obj, vaddr);
	char name[32];

	if (fn || !obj->module)
		return fn;
	if (!obj->unnamed_tried)
		load_unnamed(obj);
	/* Unwind entries do not nest: only the nearest start below can hold vaddr. */
	size_t lo = first_starting_above(obj->unnamed, obj->n_unnamed, vaddr);
	if (lo == 0 || vaddr >= obj->unnamed[lo - 1].end)
		return NULL;
	struct symbols_function *u = &obj->unnamed[lo - 1];
	if (!u->name) {
		snprintf(name, sizeof(name), "sub_%llx", (unsigned long long)u->start);
		u->name = strdup(name);	/* NULL when out of memory: unresolved, as before */
	}
	return u->name ? u : NULL;
}

/* Narrow [*lo, *hi) around vaddr, which none of fns[0..n) covers, to lie between them. */
static void between(const struct symbols_function *fns, size_t n, uint64_t vaddr, uint64_t *lo, uint64_t *hi)
{
	size_t above = first_starting_above(fns, n, vaddr);

	if (above < n && fns[above].start < *hi)
		*hi = fns[above].start;
	/* Symbols nest, so the nearest start below need not hold the latest end. */
	for (size_t i = 0; i < above; i++)
		if (fns[i].end > *lo && fns[i].end <= vaddr)
			*lo = fns[i].end;
}

bool symbols_object_gap(struct symbols_object *obj, uint64_t vaddr, uint64_t *lo, uint64_t *hi)
{
	const struct symbols_segment *seg = NULL;

	for (size_t i = 0; i < obj->n_loads && !seg; i++)
		if (obj->loads[i].exec && vaddr >= obj->loads[i].vaddr && vaddr - obj->loads[i].vaddr < obj->loads[i].filesz)
			seg = &obj->loads[i];
	if (!seg || symbols_object_find(obj, vaddr))
		return false;
	*lo = seg->vaddr;
	*hi = seg->vaddr + seg->filesz;
	between(obj->funcs, obj->n_funcs, vaddr, lo, hi);
	between(obj->unnamed, obj->n_unnamed, vaddr, lo, hi);
	return true;
}

/* The source file numbered idx in cu's file table (DW_AT_call_file), or NULL. */
static const char *cu_file(Dwarf_Die *cu, Dwarf_Word idx)
{
	Dwarf_Files *files;
	size_t n;

	if (!cu || dwarf_getsrcfiles(cu, &files, &n) != 0 || idx >= n)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static int die_udata(Dwarf_Die *die, unsigned attr_name)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	if (!dwarf_attr(die, attr_name, &attr) || dwarf_formudata(&attr, &v) != 0 || v > INT32_MAX)
		return 0;
	return (int)v;
}

static bool is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/*
 * The function die lies in: the nearest subprogram or inlined subroutine
 * above it in the concrete tree (dwarf_getscopes_die() lists die and its
 * parents). False when none.
 */
static bool enclosing_function(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Die *parents = NULL;
	int n = dwarf_getscopes_die(die, &parents);
	bool found = false;

	for (int i = 1; i < n && !found; i++)
		if (is_function(&parents[i])) {
			*out = parents[i];
			found = true;
		}
	free(parents);
	return found;
}

/*
 * The line table gives the innermost frame's file:line; the innermost DWARF
 * scope holding the address that is a function gives its name, and each
 * DW_TAG_inlined_subroutine is a frame whose caller, the function above it
 * in the tree, continues at its DW_AT_call_file:DW_AT_call_line, up to the
 * DW_TAG_subprogram. (dwarf_getscopes() goes on from an inline instance into
 * its abstract origin's scopes, not to its caller, hence
 * dwarf_getscopes_die() for the callers.) Names come through
 * DW_AT_abstract_origin (dwarf_diename integrates).
 */
size_t symbols_object_frames(const struct symbols_object *obj, uint64_t vaddr, struct symbols_frame *frames,
			     size_t max)
{
	Dwarf_Addr addr = vaddr + obj->bias, cu_bias = 0;
	Dwfl_Module *mod = obj->module;
	Dwfl_Line *line = mod ? dwfl_module_getsrc(mod, addr) : NULL;
	Dwarf_Die *cu, *scopes = NULL, fn;
	struct symbols_frame cur = { 0 };
	Dwarf_Attribute attr;
	const char *comp_dir;
	bool have_fn = false;
	size_t k = 0;
	int n;

	if (!line || max == 0)
		return 0;
	cur.file = dwfl_lineinfo(line, NULL, &cur.line, &cur.column, NULL, NULL);
	if (!cur.file)
		return 0;
	cu = dwfl_module_addrdie(mod, addr, &cu_bias);
	comp_dir = cu ? dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)) : NULL;
	cur.comp_dir = comp_dir;
	n = cu ? dwarf_getscopes(cu, addr - cu_bias, &scopes) : 0;
	for (int i = 0; i < n && !have_fn; i++)
		if (is_function(&scopes[i])) {
			fn = scopes[i];
			have_fn = true;
		}
	free(scopes);
	while (have_fn && k < max) {
		cur.function = dwarf_diename(&fn);
		cur.inlined = dwarf_tag(&fn) == DW_TAG_inlined_subroutine;
		frames[k++] = cur;
		if (!cur.inlined)
			break;
		/* The caller's frame: where this one was inlined. */
		cur = (struct symbols_frame){
			.file = cu_file(cu, (Dwarf_Word)die_udata(&fn, DW_AT_call_file)),
			.line = die_udata(&fn, DW_AT_call_line),
			.column = die_udata(&fn, DW_AT_call_column),
			.comp_dir = comp_dir,
		};
		have_fn = enclosing_function(&fn, &fn);
	}
	/* A line but no scope naming a function (assembly with line info): the line alone. */
	if (k == 0)
		frames[k++] = cur;
	return k;
}
