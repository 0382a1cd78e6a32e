/* SPDX-License-Identifier: MIT */
/* Reads the host facts a guest can see move during a run (steal, khugepaged, DAMON); changes nothing. */
#include "machine/host.h"

#include "machine/env_text.h"
#include "machine/environment.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char KHUGEPAGED[] = "/sys/kernel/mm/transparent_hugepage/khugepaged";
static const char KDAMONDS[] = "/sys/kernel/mm/damon/admin/kdamonds";

/* Read root + path (+ "/" + name when name) into buf; 0 or -errno. */
static int read_at(const char *root, const char *path, const char *name, char *buf, size_t size)
{
	char full[512];
	int n = snprintf(full, sizeof(full), "%s%s%s%s", root, path, name ? "/" : "", name ? name : "");

	if (n < 0 || (size_t)n >= sizeof(full))
		return -ENAMETOOLONG;
	return env_read_text(full, buf, size);
}

/* A counter file under khugepaged/: 0, -errno of the read, or -EINVAL when it does not parse. */
static int read_counter(const char *root, const char *name, uint64_t *v)
{
	char text[64];
	int rc = read_at(root, KHUGEPAGED, name, text, sizeof(text));

	return rc ? rc : env_parse_u64(text, v);
}

void host_read_snapshot(const char *root, struct host_snapshot *out)
{
	char text[1024];
	int rc;

	memset(out, 0, sizeof(*out));
	out->stat_known = read_at(root, "/proc/stat", NULL, text, sizeof(text)) == 0 &&
			  env_parse_proc_stat_cpu(text, &out->total_ticks, &out->steal_ticks) == 0;
	rc = read_counter(root, "full_scans", &out->full_scans);
	out->khugepaged_present = rc == 0;
	if (rc == -ENOENT)
		snprintf(out->khugepaged_why, sizeof(out->khugepaged_why),
			 "not present: the kernel has no %s/full_scans (no THP)", "khugepaged");
	else if (rc)
		snprintf(out->khugepaged_why, sizeof(out->khugepaged_why), "khugepaged/full_scans unreadable: %s",
			 rc == -EINVAL ? "not a number" : strerror(-rc));
	out->collapsed_known = read_counter(root, "pages_collapsed", &out->pages_collapsed) == 0;
}

/* out = a + "/" + b; false when it does not fit. */
static bool join(char *out, size_t size, const char *a, const char *b)
{
	int n = snprintf(out, size, "%s/%s", a, b);

	return n >= 0 && (size_t)n < size;
}

/* Whether a directory entry is a DAMON index ("0", "1", ...). */
static bool is_index(const char *name)
{
	if (!*name)
		return false;
	for (const char *p = name; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* Add action to the comma-separated list (once); a list that is full keeps what it has. */
static void add_action(char *list, size_t size, const char *action)
{
	size_t n = strlen(action), len = strlen(list);

	for (const char *p = list; (p = strstr(p, action)) != NULL; p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return;
	if (len + (len ? 1 : 0) + n + 1 > size)
		return;
	snprintf(list + len, size - len, "%s%s", len ? "," : "", action);
}

/* The schemes of context dir (relative to root) into out: each action of a running kdamond. */
static void read_schemes(const char *root, const char *ctx_dir, struct host_damon *out)
{
	char path[512], full[600], text[64], action[32];
	int n = snprintf(path, sizeof(path), "%s/schemes", ctx_dir);

	if (n < 0 || (size_t)n >= sizeof(path))
		return;
	snprintf(full, sizeof(full), "%s%s", root, path);
	DIR *d = opendir(full);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (!is_index(e->d_name))
			continue;
		char act_path[600];
		if (!join(act_path, sizeof(act_path), path, e->d_name) ||
		    read_at(root, act_path, "action", text, sizeof(text)) != 0 ||
		    env_parse_damon_action(text, action, sizeof(action)) != 0)
			continue;
		out->schemes_active++;
		add_action(out->actions, sizeof(out->actions), action);
	}
	closedir(d);
}

void host_read_damon(const char *root, struct host_damon *out)
{
	char full[512], text[32];

	memset(out, 0, sizeof(*out));
	snprintf(full, sizeof(full), "%s%s", root, KDAMONDS);
	DIR *d = opendir(full);
	if (!d) {
		int err = errno;
		snprintf(out->why, sizeof(out->why), err == ENOENT ? "not present: no %s (kernel without DAMON sysfs)"
								   : "not readable: %s",
			 err == ENOENT ? "/sys/kernel/mm/damon/admin" : strerror(err));
		return;
	}
	out->present = true;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		char kd[128];
		bool running = false;
		if (!is_index(e->d_name))
			continue;
		out->kdamonds++;
		if (!join(kd, sizeof(kd), KDAMONDS, e->d_name) ||
		    read_at(root, kd, "state", text, sizeof(text)) != 0 || env_parse_damon_state(text, &running) != 0 ||
		    !running)
			continue;
		out->running++;
		char ctxs[160], ctx_full[700];
		snprintf(ctxs, sizeof(ctxs), "%s/contexts", kd);
		snprintf(ctx_full, sizeof(ctx_full), "%s%s", root, ctxs);
		DIR *c = opendir(ctx_full);
		for (struct dirent *ce; c && (ce = readdir(c)) != NULL;) {
			char ctx[200];
			if (is_index(ce->d_name) && join(ctx, sizeof(ctx), ctxs, ce->d_name))
				read_schemes(root, ctx, out);
		}
		if (c)
			closedir(c);
	}
	closedir(d);
}

bool host_damon_action_moves_memory(const char *action)
{
	return action && *action && strcmp(action, "stat") != 0;
}

bool host_steal_share(const struct host_facts *h, double *share)
{
	*share = 0;
	if (!h || !h->recorded || !h->before.stat_known || !h->after.stat_known ||
	    h->after.total_ticks <= h->before.total_ticks || h->after.steal_ticks < h->before.steal_ticks)
		return false;
	*share = (double)(h->after.steal_ticks - h->before.steal_ticks) /
		 (double)(h->after.total_ticks - h->before.total_ticks);
	return true;
}

bool host_khugepaged_delta(const struct host_facts *h, uint64_t *full_scans, uint64_t *pages_collapsed,
			   bool *collapsed_known)
{
	*full_scans = *pages_collapsed = 0;
	*collapsed_known = false;
	if (!h || !h->recorded || !h->before.khugepaged_present || !h->after.khugepaged_present ||
	    h->after.full_scans < h->before.full_scans)
		return false;
	*full_scans = h->after.full_scans - h->before.full_scans;
	if (h->before.collapsed_known && h->after.collapsed_known &&
	    h->after.pages_collapsed >= h->before.pages_collapsed) {
		*pages_collapsed = h->after.pages_collapsed - h->before.pages_collapsed;
		*collapsed_known = true;
	}
	return true;
}
