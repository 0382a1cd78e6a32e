/* SPDX-License-Identifier: MIT */
/* The verified page backing of an address range: the pure parser of /proc/<pid>/smaps text, and its one reader. */
#include "measure/smaps.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A VMA header line: "start-end perms offset dev inode [path]". */
static bool parse_header(const char *line, uintptr_t *lo, uintptr_t *hi)
{
	char *end;
	unsigned long long a, b;

	a = strtoull(line, &end, 16);
	if (end == line || *end != '-')
		return false;
	line = end + 1;
	b = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return false;
	*lo = (uintptr_t)a;
	*hi = (uintptr_t)b;
	return true;
}

/* "Key:   123 kB" -> bytes, when the line starts with key. */
static bool parse_kb(const char *line, const char *key, uint64_t *bytes)
{
	size_t n = strlen(key);
	char *end;
	unsigned long long v;

	if (strncmp(line, key, n) != 0 || line[n] != ':')
		return false;
	v = strtoull(line + n + 1, &end, 10);
	*bytes = (uint64_t)v * 1024;
	return true;
}

int smaps_summarize(const char *text, uintptr_t start, uintptr_t end, uint64_t base_page_bytes,
		    struct region_backing *out)
{
	bool in_range = false;
	uint64_t rss_base = 0;	/* Rss of the non-hugetlb VMAs */

	memset(out, 0, sizeof(*out));
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		uintptr_t lo, hi;
		uint64_t v;

		if (parse_header(line, &lo, &hi)) {
			in_range = lo < end && hi > start;
			if (in_range) {
				uintptr_t a = lo > start ? lo : start, b = hi < end ? hi : end;
				out->vmas++;
				out->mapped_bytes += b - a;
			}
		} else if (in_range) {
			if (parse_kb(line, "Rss", &v))
				rss_base += v;
			else if (parse_kb(line, "AnonHugePages", &v))
				out->anon_huge_bytes += v;
			else if (parse_kb(line, "Private_Hugetlb", &v) || parse_kb(line, "Shared_Hugetlb", &v))
				out->hugetlb_bytes += v;
			else if (parse_kb(line, "KernelPageSize", &v) && v > out->kernel_page_bytes)
				out->kernel_page_bytes = v;
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!out->vmas)
		return -ENOENT;

	/* Rss does not include hugetlb pages; they are accounted separately. */
	out->rss_bytes = rss_base + out->hugetlb_bytes;
	if (out->kernel_page_bytes > base_page_bytes || out->hugetlb_bytes) {
		out->kind = PAGE_HUGETLB;
		out->huge_fraction = out->rss_bytes ? (double)out->hugetlb_bytes / (double)out->rss_bytes : 0.0;
	} else if (out->anon_huge_bytes) {
		out->kind = PAGE_THP;
		out->huge_fraction = out->rss_bytes ? (double)out->anon_huge_bytes / (double)out->rss_bytes : 0.0;
	} else {
		out->kind = PAGE_BASE;
		out->huge_fraction = 0.0;
	}
	return 0;
}

/*
 * Whether the complete lines of buf from *scanned on hold the header of a
 * VMA at or above stop: then *len is cut back to that line, and true.
 */
static bool past_range(const char *buf, size_t *len, size_t *scanned, uint64_t stop)
{
	for (const char *line = buf + *scanned, *nl; (nl = memchr(line, '\n', (size_t)(buf + *len - line))); line = nl + 1) {
		uintptr_t lo, hi;
		if (parse_header(line, &lo, &hi) && lo >= stop) {
			*len = (size_t)(line - buf);
			return true;
		}
		*scanned = (size_t)(nl + 1 - buf);
	}
	return false;
}

int smaps_text(pid_t pid, uint64_t stop, char **text)
{
	char path[64];
	size_t cap = 1 << 16, len = 0, scanned = 0;
	char *buf;
	int fd, err = 0;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/smaps");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (len + 4096 + 1 > cap) {
			char *bigger = realloc(buf, cap * 2);
			if (!bigger) {
				err = -ENOMEM;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
		/* smaps is generated as it is read, some records per call: read on until end of file. */
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = -errno;
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		if (past_range(buf, &len, &scanned, stop))
			break;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*text = buf;
	return 0;
}

int smaps_read(pid_t pid, uint64_t addr, uint64_t len, struct region_backing *out)
{
	char *text = NULL;
	int rc = smaps_text(pid, addr + len, &text);

	if (rc)
		return rc;
	rc = smaps_summarize(text, (uintptr_t)addr, (uintptr_t)(addr + len), (uint64_t)sysconf(_SC_PAGESIZE), out);
	free(text);
	return rc;
}
