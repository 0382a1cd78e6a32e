/* SPDX-License-Identifier: MIT */
/* Symbolizer: mappings per process, ELF function symbols per object (libelf), PIE-aware load bias. */
#include "pmu/symbols.h"

#include "grow.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Aliases of a nested symbol are looked for this far back from the nearest start below an address. */
#define SYMBOLS_NESTED_LOOKBACK 16
/* Longest path a maps line may carry (PATH_MAX, plus " (deleted)"). */
#define SYMBOLS_PATH_MAX 4200

/* A function of an object: [start, end) in the object's ELF virtual addresses. */
struct symbol {
	uint64_t start, end;
	const char *name;	/* into object.names */
	unsigned char bind;	/* STB_GLOBAL, STB_WEAK, STB_LOCAL: ranks aliases */
	bool sized;		/* st_size was given; otherwise end is provisional */
};

/* A PT_LOAD segment: file bytes [offset, offset + filesz) appear at vaddr. */
struct load_segment {
	uint64_t vaddr, offset, filesz;
	bool exec;
};

/* The ELF object behind a path, read on first use. */
struct object {
	bool tried;
	int err;			/* 0 when loaded, else -errno / -EINVAL (not ELF) */
	struct load_segment *loads;
	size_t n_loads;
	struct symbol *syms;		/* sorted by start, starts distinct */
	size_t n_syms;
	char *names;			/* a copy of the symbol string table */
};

/* An interned path: every mapping of the same path shares the string and the object. */
struct name {
	char *s;
	struct object obj;		/* used only for file paths */
};

struct mapping {
	struct symbols_mapping m;	/* m.path == name->s */
	struct name *name;
};

/* One process's address space: mappings sorted by start, never overlapping. */
struct space {
	pid_t pid;
	struct mapping *maps;
	size_t n, cap;
};

struct symbols {
	struct space *spaces;		/* sorted by pid */
	size_t n_spaces, cap_spaces;
	struct name **names;
	size_t n_names, cap_names;
};

/* ---- the maps parser (pure) -------------------------------------------- */

/* Parse hex digits at *p (at most 16); advances *p. Returns false when there are none or too many. */
static bool parse_hex(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	size_t n = 0;

	for (; *p < end; (*p)++, n++) {
		char c = **p;
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			break;
		if (n == 16)
			return false;
		v = v << 4 | d;
	}
	*out = v;
	return n > 0;
}

static bool parse_dec(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	size_t n = 0;

	for (; *p < end && **p >= '0' && **p <= '9'; (*p)++, n++) {
		unsigned d = (unsigned)(**p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return n > 0;
}

static bool expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return false;
	(*p)++;
	return true;
}

/* Path length without a " (deleted)" suffix (which sets *deleted) and with perf's "//anon" as "". */
static size_t normalize_path(const char *path, size_t len, bool *deleted)
{
	static const char suffix[] = " (deleted)";
	size_t n = sizeof(suffix) - 1;

	if (len >= n && memcmp(path + len - n, suffix, n) == 0) {
		*deleted = true;
		len -= n;
	}
	if (len == 6 && memcmp(path, "//anon", 6) == 0)
		len = 0;
	return len;
}

int symbols_maps_parse_line(const char *line, size_t len, struct symbols_mapping *out, char *path_buf,
			    size_t path_size)
{
	const char *p = line, *end = line + len;
	uint64_t major, minor;
	size_t path_len;

	memset(out, 0, sizeof(*out));
	out->path = "";
	if (!line || !path_buf || path_size == 0)
		return -EINVAL;
	path_buf[0] = '\0';
	if (len && end[-1] == '\n')
		end--;
	if (!parse_hex(&p, end, &out->start) || !expect(&p, end, '-') || !parse_hex(&p, end, &out->end) ||
	    !expect(&p, end, ' ') || end - p < 4)
		return -EINVAL;
	if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') || (p[2] != 'x' && p[2] != '-') ||
	    (p[3] != 'p' && p[3] != 's'))
		return -EINVAL;
	memcpy(out->perms, p, 4);
	p += 4;
	if (!expect(&p, end, ' ') || !parse_hex(&p, end, &out->offset) || !expect(&p, end, ' ') ||
	    !parse_hex(&p, end, &major) || !expect(&p, end, ':') || !parse_hex(&p, end, &minor) ||
	    !expect(&p, end, ' ') || !parse_dec(&p, end, &out->inode) || major > UINT32_MAX || minor > UINT32_MAX ||
	    out->start >= out->end)
		return -EINVAL;
	out->dev_major = (uint32_t)major;
	out->dev_minor = (uint32_t)minor;
	/* The kernel pads with spaces up to the path column; the path itself may hold spaces. */
	if (p < end && *p != ' ')
		return -EINVAL;
	while (p < end && *p == ' ')
		p++;
	if (memchr(p, '\0', (size_t)(end - p)))
		return -EINVAL;
	path_len = normalize_path(p, (size_t)(end - p), &out->deleted);
	if (path_len >= path_size)
		return -ENAMETOOLONG;
	memcpy(path_buf, p, path_len);
	path_buf[path_len] = '\0';
	out->path = path_buf;
	return 0;
}

/* ---- objects: ELF symbol tables ----------------------------------------- */

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
 * shorter, then by bytes so the choice is the same on every run.
 */
static int symbol_cmp(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;
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

/* The PT_LOAD headers of elf into obj. Returns 0, -EINVAL (none readable), -ENOMEM. */
static int object_read_loads(struct object *obj, Elf *elf)
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
		obj->loads[obj->n_loads++] = (struct load_segment){
			.vaddr = phdr.p_vaddr, .offset = phdr.p_offset, .filesz = phdr.p_filesz,
			.exec = (phdr.p_flags & PF_X) != 0,
		};
	}
	return obj->n_loads ? 0 : -EINVAL;
}

/* The symbol table to use: .symtab when the file has one (not stripped), else .dynsym. */
static Elf_Scn *find_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL, *dynsym = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr))
			continue;
		if (shdr.sh_type == SHT_SYMTAB && shdr.sh_entsize && shdr.sh_size / shdr.sh_entsize > 1)
			return scn;
		if (shdr.sh_type == SHT_DYNSYM && !dynsym)
			dynsym = scn;
	}
	return dynsym;
}

/* End of the section a symbol lies in, the limit for a symbol without a size (hand-written assembly). */
static uint64_t section_end(Elf *elf, size_t shndx)
{
	Elf_Scn *scn = elf_getscn(elf, shndx);
	GElf_Shdr shdr;

	if (!scn || !gelf_getshdr(scn, &shdr))
		return 0;
	return shdr.sh_addr + shdr.sh_size;
}

/* The function symbols of elf into obj, sorted, aliases merged. Returns 0, -ENOMEM (none is not an error). */
static int object_read_symbols(struct object *obj, Elf *elf)
{
	Elf_Scn *scn = find_symtab(elf), *str_scn;
	GElf_Shdr shdr;
	Elf_Data *data, *strs;
	size_t count, kept = 0;

	if (!scn || !gelf_getshdr(scn, &shdr) || shdr.sh_entsize == 0)
		return 0;
	data = elf_getdata(scn, NULL);
	str_scn = elf_getscn(elf, shdr.sh_link);
	strs = str_scn ? elf_getdata(str_scn, NULL) : NULL;
	if (!data || !strs || !strs->d_buf || strs->d_size == 0)
		return 0;
	/* A copy, terminated, so names outlive the ELF handle and never run off the end. */
	obj->names = malloc(strs->d_size + 1);
	if (!obj->names)
		return -ENOMEM;
	memcpy(obj->names, strs->d_buf, strs->d_size);
	obj->names[strs->d_size] = '\0';
	count = shdr.sh_size / shdr.sh_entsize;
	obj->syms = calloc(count ? count : 1, sizeof(*obj->syms));
	if (!obj->syms)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym sym;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    sym.st_shndx >= SHN_LORESERVE || sym.st_value == 0 || sym.st_name >= strs->d_size ||
		    obj->names[sym.st_name] == '\0' || sym.st_value + sym.st_size < sym.st_value)
			continue;
		obj->syms[kept++] = (struct symbol){
			.start = sym.st_value,
			.end = sym.st_size ? sym.st_value + sym.st_size : section_end(elf, sym.st_shndx),
			.name = obj->names + sym.st_name,
			.bind = (unsigned char)GELF_ST_BIND(sym.st_info),
			.sized = sym.st_size != 0,
		};
	}
	qsort(obj->syms, kept, sizeof(*obj->syms), symbol_cmp);
	/* Keep the preferred alias of each start; an unsized symbol ends where the next one starts. */
	obj->n_syms = 0;
	for (size_t i = 0; i < kept; i++) {
		if (obj->n_syms && obj->syms[obj->n_syms - 1].start == obj->syms[i].start) {
			struct symbol *kept_sym = &obj->syms[obj->n_syms - 1];

			if (!kept_sym->sized && obj->syms[i].sized) {
				kept_sym->end = obj->syms[i].end;
				kept_sym->sized = true;
			}
			continue;
		}
		obj->syms[obj->n_syms++] = obj->syms[i];
	}
	for (size_t i = 0; i + 1 < obj->n_syms; i++)
		if (!obj->syms[i].sized && obj->syms[i].end > obj->syms[i + 1].start)
			obj->syms[i].end = obj->syms[i + 1].start;
	return 0;
}

/*
 * Read path's PT_LOAD headers and function symbols, once. Only regular files
 * are opened, and without blocking: a maps line may name a FIFO or a device
 * (fuzzed or real), which must neither hang nor be read forever.
 */
static void object_load(struct object *obj, const char *path)
{
	struct stat st;
	Elf *elf = NULL;
	int fd, err;

	obj->tried = true;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		obj->err = -EINVAL;
		return;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		obj->err = -errno;
		return;
	}
	if (fstat(fd, &st) != 0) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto out;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -EINVAL;
		goto out;
	}
	err = object_read_loads(obj, elf);
	if (!err)
		err = object_read_symbols(obj, elf);
out:
	if (elf)
		elf_end(elf);
	close(fd);
	obj->err = err;
}

static void object_free(struct object *obj)
{
	free(obj->loads);
	free(obj->syms);
	free(obj->names);
}

/*
 * A file offset of the object as an ELF virtual address, through the PT_LOAD
 * segment holding it. Two segments may share a file page (text ending and
 * data starting in one page); an instruction address prefers the executable
 * one.
 */
static bool object_vaddr(const struct object *obj, uint64_t file_off, uint64_t *vaddr)
{
	const struct load_segment *best = NULL;

	for (size_t i = 0; i < obj->n_loads; i++) {
		const struct load_segment *l = &obj->loads[i];

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

/* The function symbol covering vaddr, or NULL. */
static const struct symbol *object_find(const struct object *obj, uint64_t vaddr)
{
	size_t lo = 0, hi = obj->n_syms;

	/* The first symbol starting above vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (obj->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* The nearest start below may be a symbol nested in a larger function; look a little further back. */
	for (size_t i = lo, steps = 0; i > 0 && steps < SYMBOLS_NESTED_LOOKBACK; i--, steps++)
		if (vaddr < obj->syms[i - 1].end)
			return &obj->syms[i - 1];
	return NULL;
}

/* ---- the container -------------------------------------------------------- */

struct symbols *symbols_new(void)
{
	return calloc(1, sizeof(struct symbols));
}

void symbols_delete(struct symbols *syms)
{
	if (!syms)
		return;
	for (size_t i = 0; i < syms->n_spaces; i++)
		free(syms->spaces[i].maps);
	free(syms->spaces);
	for (size_t i = 0; i < syms->n_names; i++) {
		object_free(&syms->names[i]->obj);
		free(syms->names[i]->s);
		free(syms->names[i]);
	}
	free(syms->names);
	free(syms);
}

/* The interned copy of s[0..len), made on first use; NULL when out of memory. */
static struct name *intern(struct symbols *syms, const char *s, size_t len)
{
	struct name *n;

	for (size_t i = 0; i < syms->n_names; i++)
		if (strncmp(syms->names[i]->s, s, len) == 0 && syms->names[i]->s[len] == '\0')
			return syms->names[i];
	if (!array_grow((void **)&syms->names, &syms->cap_names, syms->n_names + 1, sizeof(struct name *), 8))
		return NULL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->s = strndup(s, len);
	if (!n->s) {
		free(n);
		return NULL;
	}
	syms->names[syms->n_names++] = n;
	return n;
}

/* Index of pid's space, or of where it would be inserted (*found false). */
static size_t space_index(const struct symbols *syms, pid_t pid, bool *found)
{
	size_t lo = 0, hi = syms->n_spaces;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms->spaces[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < syms->n_spaces && syms->spaces[lo].pid == pid;
	return lo;
}

static const struct space *space_find(const struct symbols *syms, pid_t pid)
{
	bool found;
	size_t i = syms ? space_index(syms, pid, &found) : 0;

	return syms && found ? &syms->spaces[i] : NULL;
}

/* pid's space, created empty when new; NULL when out of memory. Invalidates other space pointers. */
static struct space *space_get(struct symbols *syms, pid_t pid)
{
	bool found;
	size_t i = space_index(syms, pid, &found);

	if (found)
		return &syms->spaces[i];
	if (!array_grow((void **)&syms->spaces, &syms->cap_spaces, syms->n_spaces + 1, sizeof(*syms->spaces), 8))
		return NULL;
	memmove(&syms->spaces[i + 1], &syms->spaces[i], (syms->n_spaces - i) * sizeof(*syms->spaces));
	syms->spaces[i] = (struct space){ .pid = pid };
	syms->n_spaces++;
	return &syms->spaces[i];
}

/* Index of the first mapping whose end lies above addr (mappings are sorted and disjoint, so ends are too). */
static size_t first_ending_above(const struct space *sp, uint64_t addr)
{
	size_t lo = 0, hi = sp->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sp->maps[mid].m.end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct mapping *mapping_find(const struct symbols *syms, pid_t pid, uint64_t addr)
{
	const struct space *sp = space_find(syms, pid);
	size_t i;

	if (!sp)
		return NULL;
	i = first_ending_above(sp, addr);
	return i < sp->n && sp->maps[i].m.start <= addr ? &sp->maps[i] : NULL;
}

/* Cut the part below new_start off a mapping (its offset moves along with its start). */
static void mapping_cut_front(struct mapping *mp, uint64_t new_start)
{
	mp->m.offset += new_start - mp->m.start;
	mp->m.start = new_start;
}

/* Insert nm into sp, dropping what it overlaps. Returns 0 or -ENOMEM. */
static int space_insert(struct space *sp, const struct mapping *nm)
{
	uint64_t s = nm->m.start, e = nm->m.end;
	size_t lo, hi;

	if (!array_grow((void **)&sp->maps, &sp->cap, sp->n + 2, sizeof(*sp->maps), 8))
		return -ENOMEM;
	lo = first_ending_above(sp, s);
	if (lo < sp->n && sp->maps[lo].m.start < s && sp->maps[lo].m.end > e) {
		/* Strictly inside an older mapping: split it around the new one. */
		struct mapping right = sp->maps[lo];

		mapping_cut_front(&right, e);
		sp->maps[lo].m.end = s;
		memmove(&sp->maps[lo + 3], &sp->maps[lo + 1], (sp->n - lo - 1) * sizeof(*sp->maps));
		sp->maps[lo + 1] = *nm;
		sp->maps[lo + 2] = right;
		sp->n += 2;
		return 0;
	}
	if (lo < sp->n && sp->maps[lo].m.start < s)
		sp->maps[lo++].m.end = s;
	for (hi = lo; hi < sp->n && sp->maps[hi].m.end <= e; hi++)
		;
	if (hi < sp->n && sp->maps[hi].m.start < e)
		mapping_cut_front(&sp->maps[hi], e);
	/* [lo, hi) lie wholly under the new mapping: it takes the first slot, the rest close up. */
	if (hi == lo) {
		memmove(&sp->maps[lo + 1], &sp->maps[lo], (sp->n - lo) * sizeof(*sp->maps));
		sp->n++;
	} else {
		memmove(&sp->maps[lo + 1], &sp->maps[hi], (sp->n - hi) * sizeof(*sp->maps));
		sp->n -= hi - lo - 1;
	}
	sp->maps[lo] = *nm;
	return 0;
}

int symbols_mapping_add(struct symbols *syms, pid_t pid, const struct symbols_mapping *m)
{
	struct mapping nm;
	struct space *sp;
	const char *path;
	size_t len;

	if (!syms || !m || m->start >= m->end)
		return -EINVAL;
	nm.m = *m;
	path = m->path ? m->path : "";
	len = normalize_path(path, strlen(path), &nm.m.deleted);
	nm.name = intern(syms, path, len);
	if (!nm.name)
		return -ENOMEM;
	nm.m.path = nm.name->s;
	nm.m.perms[sizeof(nm.m.perms) - 1] = '\0';
	sp = space_get(syms, pid);
	if (!sp)
		return -ENOMEM;
	return space_insert(sp, &nm);
}

int symbols_maps_parse(struct symbols *syms, pid_t pid, const char *text, size_t len, size_t *bad_lines)
{
	char *path = malloc(SYMBOLS_PATH_MAX);
	size_t bad = 0;
	int added = 0;

	if (!path)
		return -ENOMEM;
	for (size_t off = 0; off < len && text;) {
		const char *line = text + off;
		const char *nl = memchr(line, '\n', len - off);
		size_t n = nl ? (size_t)(nl - line) : len - off;
		struct symbols_mapping m;
		int ret;

		off += n + 1;
		if (n == 0)
			continue;
		if (symbols_maps_parse_line(line, n, &m, path, SYMBOLS_PATH_MAX) != 0) {
			bad++;
			continue;
		}
		ret = symbols_mapping_add(syms, pid, &m);
		if (ret == -ENOMEM) {
			free(path);
			return ret;
		}
		if (ret == 0 && added < INT32_MAX)
			added++;
	}
	free(path);
	if (bad_lines)
		*bad_lines = bad;
	return added;
}

int symbols_maps_read(struct symbols *syms, pid_t pid)
{
	char path[64], *buf = NULL;
	size_t len = 0, cap = 0;
	int fd, ret;

	snprintf(path, sizeof(path), "/proc/%ld/maps", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t got;

		if (!array_grow((void **)&buf, &cap, len + 65536, 1, 8)) {
			ret = -ENOMEM;
			goto out;
		}
		got = read(fd, buf + len, cap - len);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	ret = symbols_maps_parse(syms, pid, buf, len, NULL);
out:
	free(buf);
	close(fd);
	return ret;
}

int symbols_fork(struct symbols *syms, pid_t parent, pid_t child)
{
	struct space *c, copy = { 0 };
	const struct space *p;

	if (!syms)
		return -EINVAL;
	if (parent == child)
		return 0;
	p = space_find(syms, parent);
	if (p && p->n) {
		copy.maps = malloc(p->n * sizeof(*p->maps));
		if (!copy.maps)
			return -ENOMEM;
		memcpy(copy.maps, p->maps, p->n * sizeof(*p->maps));
		copy.n = copy.cap = p->n;
	}
	c = space_get(syms, child);	/* may move the parent's space: copied above */
	if (!c) {
		free(copy.maps);
		return -ENOMEM;
	}
	free(c->maps);
	c->maps = copy.maps;
	c->n = copy.n;
	c->cap = copy.cap;
	return 0;
}

void symbols_exec(struct symbols *syms, pid_t pid)
{
	bool found;
	size_t i = syms ? space_index(syms, pid, &found) : 0;

	if (syms && found)
		syms->spaces[i].n = 0;
}

size_t symbols_mapping_count(const struct symbols *syms, pid_t pid)
{
	const struct space *sp = space_find(syms, pid);

	return sp ? sp->n : 0;
}

const struct symbols_mapping *symbols_mapping_get(const struct symbols *syms, pid_t pid, size_t i)
{
	const struct space *sp = space_find(syms, pid);

	return sp && i < sp->n ? &sp->maps[i].m : NULL;
}

const struct symbols_mapping *symbols_mapping_find(const struct symbols *syms, pid_t pid, uint64_t addr)
{
	const struct mapping *mp = mapping_find(syms, pid, addr);

	return mp ? &mp->m : NULL;
}

/* ---- resolving ------------------------------------------------------------ */

void symbols_resolve(struct symbols *syms, pid_t pid, uint64_t addr, struct symbols_location *out)
{
	const struct mapping *mp = mapping_find(syms, pid, addr);
	const struct symbol *sym;
	struct object *obj;
	uint64_t vaddr;

	*out = (struct symbols_location){ .object = SYMBOLS_UNKNOWN, .function = SYMBOLS_UNKNOWN };
	if (!mp) {
		/* Without a mapping, the upper half of the address space is the kernel's (x86-64, arm64). */
		if (addr >> 63)
			out->object = SYMBOLS_KERNEL;
		return;
	}
	out->object = mp->m.path[0] ? mp->m.path : SYMBOLS_ANON;
	/* Only files have symbols; a deleted path may name a different file now. */
	if (mp->m.path[0] != '/' || mp->m.deleted)
		return;
	obj = &mp->name->obj;
	if (!obj->tried)
		object_load(obj, mp->m.path);
	if (obj->err || !object_vaddr(obj, addr - mp->m.start + mp->m.offset, &vaddr))
		return;
	out->elf_addr = vaddr;
	sym = object_find(obj, vaddr);
	if (!sym)
		return;
	out->function = sym->name;
	out->offset = vaddr - sym->start;
	out->resolved = true;
}

int symbols_location_format(const struct symbols_location *loc, char *buf, size_t buf_size)
{
	if (loc->resolved)
		return snprintf(buf, buf_size, "%s:%s+0x%" PRIx64, loc->object, loc->function, loc->offset);
	if (strcmp(loc->object, SYMBOLS_UNKNOWN) == 0)
		return snprintf(buf, buf_size, "%s", SYMBOLS_UNKNOWN);
	return snprintf(buf, buf_size, "%s:%s", loc->object, SYMBOLS_UNKNOWN);
}

void symbols_classify(const struct symbols *syms, pid_t pid, uint64_t addr, struct symbols_region *out)
{
	const struct mapping *mp = mapping_find(syms, pid, addr);
	const char *path;

	*out = (struct symbols_region){ .name = SYMBOLS_UNKNOWN };
	if (!mp)
		return;
	path = mp->m.path;
	out->start = mp->m.start;
	out->end = mp->m.end;
	out->anonymous = path[0] == '\0' || strcmp(path, "[heap]") == 0 || strncmp(path, "[stack", 6) == 0 ||
			 strncmp(path, "[anon", 5) == 0;
	out->name = path[0] ? path : SYMBOLS_ANON;
}
