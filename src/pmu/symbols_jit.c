/* SPDX-License-Identifier: MIT */
/* perf's JIT map files (/tmp/perf-PID.map): the names of code compiled into anonymous memory. */
#include "pmu/symbols_jit.h"

#include "grow.h"
#include "readall.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A map file larger than this is not read: a JVM's holds some 10^5 lines of about 100 bytes. */
#define JIT_MAP_MAX_BYTES (256u << 20)

/* Hex digits at *p, with an optional 0x; advances *p. false when there are none or too many. */
static bool hex_field(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	size_t n = 0;

	if (end - *p > 2 && (*p)[0] == '0' && ((*p)[1] == 'x' || (*p)[1] == 'X'))
		*p += 2;
	for (; *p < end; (*p)++, n++) {
		char c = **p;
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
		if (d == 16)
			break;
		if (n == 16)
			return false;
		v = v << 4 | d;
	}
	*out = v;
	return n > 0;
}

static int entry_cmp(const void *x, const void *y)
{
	const struct symbols_jit_entry *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->line > b->line) - (a->line < b->line);
}

int symbols_jit_parse(struct symbols_jit_map *m, const char *text, size_t len)
{
	size_t cap = m->count, line = 0;
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *stop = eol ? eol : end, *q = p;
		uint64_t start, size;

		line++;
		p = eol ? eol + 1 : end;
		if (stop > q && stop[-1] == '\r')
			stop--;
		if (q == stop)
			continue;
		bool ok = hex_field(&q, stop, &start) && q < stop && *q == ' ' && (q++, hex_field(&q, stop, &size)) &&
			  q < stop && *q == ' ' && size > 0 && start + size > start;
		if (ok)
			while (q < stop && *q == ' ')
				q++;
		if (!ok || q == stop || !*q) {	/* no name, or one a NUL byte ends at once */
			m->bad_lines++;
			continue;
		}
		if (!array_grow((void **)&m->items, &cap, m->count + 1, sizeof(*m->items), 64))
			return -ENOMEM;
		char *name = strndup(q, (size_t)(stop - q));
		if (!name)
			return -ENOMEM;
		m->items[m->count++] = (struct symbols_jit_entry){ start, start + size, name, line };
		if (size > m->longest)
			m->longest = size;
	}
	if (m->count > 1)	/* items is NULL without an entry, which qsort() must not be given */
		qsort(m->items, m->count, sizeof(*m->items), entry_cmp);
	return 0;
}

int symbols_jit_load(struct symbols_jit_map *m, pid_t pid, int64_t since_s)
{
	char path[64];
	struct stat st;

	if (m->tried)
		return 0;
	m->tried = true;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* A second of slack: a file system's times may be coarser than the clock's. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_uid != geteuid() && st.st_uid != 0) ||
	    (uint64_t)st.st_size > JIT_MAP_MAX_BYTES || (int64_t)st.st_mtim.tv_sec + 1 < since_s) {
		close(fd);
		return 0;	/* not one to trust, as perf does not */
	}
	/* Read to its end: a JIT still running may have appended since the fstat(). */
	char *text = NULL;
	size_t cap = 0;
	ssize_t have = read_all(fd, &text, &cap, JIT_MAP_MAX_BYTES);
	close(fd);
	int rc = have < 0 ? (have == -EFBIG ? 0 : (int)have) : symbols_jit_parse(m, text, (size_t)have);
	free(text);
	return rc;
}

const struct symbols_jit_entry *symbols_jit_find(const struct symbols_jit_map *m, uint64_t addr)
{
	const struct symbols_jit_entry *best = NULL;
	size_t lo = 0, hi = m->count;

	/* The first entry starting above addr; those before it may hold addr, the newest line wins. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->items[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0;) {
		const struct symbols_jit_entry *e = &m->items[i];
		if (addr < e->end && (!best || e->line > best->line))
			best = e;
		if (addr - e->start >= m->longest)
			break;	/* no entry is that long: none further down holds addr */
	}
	return best;
}

bool symbols_jit_memory(const char *object)
{
	return !*object || strcmp(object, "[anon]") == 0 || strncmp(object, "[anon:", 6) == 0 ||
	       strcmp(object, "//anon") == 0 || strncmp(object, "/memfd:", 7) == 0;
}

void symbols_jit_free(struct symbols_jit_map *m)
{
	for (size_t i = 0; i < m->count; i++)
		free(m->items[i].name);
	free(m->items);
	*m = (struct symbols_jit_map){ 0 };
}
