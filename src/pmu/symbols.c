/* SPDX-License-Identifier: MIT */
/* Symbolizer: mappings per process; objects through libdwfl (symbols_object.c), PIE-aware load bias. */
#include "pmu/symbols.h"

#include "grow.h"
#include "readall.h"
#include "pmu/symbols_jit.h"
#include "pmu/symbols_object.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Longest path a maps line may carry (PATH_MAX, plus " (deleted)"). */
#define SYMBOLS_PATH_MAX 4200
/* The most of /proc/PID/maps read: 100 000 mappings are some 10 MB. */
#define SYMBOLS_MAPS_MAX_BYTES (256u << 20)

/* An interned path: every mapping of the same path shares the string and the object. */
struct name {
	char *s;
	struct symbols_object obj;	/* used only for file paths */
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
	struct symbols_jit_map jit;	/* its JIT's perf map, loaded on the first address in anonymous code */
};

struct symbols {
	int64_t born_s;			/* CLOCK_REALTIME seconds at symbols_new(): a JIT map older is stale */
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

/* ---- the container -------------------------------------------------------- */

struct symbols *symbols_new(void)
{
	struct symbols *syms = calloc(1, sizeof(struct symbols));
	struct timespec now;

	if (syms && clock_gettime(CLOCK_REALTIME, &now) == 0)
		syms->born_s = (int64_t)now.tv_sec;
	return syms;
}

void symbols_delete(struct symbols *syms)
{
	if (!syms)
		return;
	for (size_t i = 0; i < syms->n_spaces; i++) {
		free(syms->spaces[i].maps);
		symbols_jit_free(&syms->spaces[i].jit);
	}
	free(syms->spaces);
	for (size_t i = 0; i < syms->n_names; i++) {
		symbols_object_free(&syms->names[i]->obj);
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
	size_t cap = 0;

	snprintf(path, sizeof(path), "/proc/%ld/maps", (long)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t len = read_all(fd, &buf, &cap, SYMBOLS_MAPS_MAX_BYTES);
	close(fd);
	int ret = len < 0 ? (int)len : symbols_maps_parse(syms, pid, buf, (size_t)len, NULL);
	free(buf);
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

	if (syms && found) {
		syms->spaces[i].n = 0;
		symbols_jit_free(&syms->spaces[i].jit);
	}
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

/* The loaded object behind pid's mapping of addr and addr's ELF virtual address in it; NULL when none. */
static struct symbols_object *object_at(struct symbols *syms, pid_t pid, uint64_t addr, uint64_t *vaddr,
					const struct mapping **mapping)
{
	const struct mapping *mp = mapping_find(syms, pid, addr);
	struct symbols_object *obj;

	*mapping = mp;
	/* Only files have symbols; a deleted path may name a different file now. */
	if (!mp || mp->m.path[0] != '/' || mp->m.deleted)
		return NULL;
	obj = &mp->name->obj;
	if (!obj->tried)
		symbols_object_load(obj, mp->m.path);
	if (obj->err || !symbols_object_vaddr(obj, addr - mp->m.start + mp->m.offset, vaddr))
		return NULL;
	return obj;
}

void symbols_resolve(struct symbols *syms, pid_t pid, uint64_t addr, struct symbols_location *out)
{
	const struct mapping *mp;
	struct symbols_function *fn;
	struct symbols_object *obj;
	uint64_t vaddr = 0;

	*out = (struct symbols_location){ .object = SYMBOLS_UNKNOWN, .function = SYMBOLS_UNKNOWN };
	obj = object_at(syms, pid, addr, &vaddr, &mp);
	if (!mp) {
		/* Without a mapping, the upper half of the address space is the kernel's (x86-64, arm64). */
		if (addr >> 63)
			out->object = SYMBOLS_KERNEL;
		return;
	}
	out->object = mp->m.path[0] ? mp->m.path : SYMBOLS_ANON;
	if (!obj && symbols_jit_memory(mp->m.path)) {
		/* Code a JIT compiled: named by its perf map where it wrote one (node --perf-basic-prof). */
		struct space *sp = space_get(syms, pid);
		if (sp && !sp->jit.tried)
			(void)symbols_jit_load(&sp->jit, pid, syms->born_s);
		const struct symbols_jit_entry *e = sp ? symbols_jit_find(&sp->jit, addr) : NULL;
		if (e) {
			out->function = e->name;
			out->offset = addr - e->start;
			out->resolved = true;
		}
		return;
	}
	if (!obj)
		return;
	out->elf_addr = vaddr;
	fn = symbols_object_find(obj, vaddr);
	if (!fn)
		return;
	out->function = symbols_function_shown(fn);
	out->offset = vaddr - fn->start;
	out->resolved = true;
	out->unnamed = fn->unnamed;
}

bool symbols_gap(struct symbols *syms, pid_t pid, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	const struct mapping *mp;
	uint64_t vaddr = 0;
	struct symbols_object *obj = object_at(syms, pid, addr, &vaddr, &mp);

	return obj && symbols_object_gap(obj, vaddr, lo, hi);
}

size_t symbols_frames(struct symbols *syms, pid_t pid, uint64_t addr, struct symbols_frame *frames, size_t max)
{
	const struct mapping *mp;
	const struct symbols_object *obj;
	uint64_t vaddr = 0;

	if (!syms || !frames || max == 0)
		return 0;
	obj = object_at(syms, pid, addr, &vaddr, &mp);
	return obj ? symbols_object_frames(obj, vaddr, frames, max) : 0;
}

/* Whether path already begins with the folder dir (libdw joins a relative comp_dir such as "./posix" itself). */
static bool begins_with_dir(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return n && strncmp(path, dir, n) == 0 && path[n] == '/';
}

int symbols_frame_format(const struct symbols_frame *frame, char *buf, size_t buf_size)
{
	const char *dir = frame->file && frame->file[0] != '/' && frame->comp_dir &&
					  !begins_with_dir(frame->file, frame->comp_dir) ? frame->comp_dir : "";
	const char *sep = dir[0] ? "/" : "";

	if (!frame->file)
		return snprintf(buf, buf_size, "%s", "");
	if (frame->line <= 0)
		return snprintf(buf, buf_size, "%s%s%s", dir, sep, frame->file);
	return snprintf(buf, buf_size, "%s%s%s:%d", dir, sep, frame->file, frame->line);
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
