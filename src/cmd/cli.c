/* SPDX-License-Identifier: MIT */
/* The option machinery the commands share: outputs, --events-dir, --cpu, --quiet, and the output checks. */
#include "cmd/cli.h"

#include "pmu/user_events.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse.h"

#define OUTPUTS(o, opts) ((struct report_outputs *)((char *)(opts) + (o)->offset))

enum option_result cli_set_json(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	if (!*arg)
		return option_error(msg, len, "--json '': give a file name or - for stdout");
	OUTPUTS(o, opts)->json_path = arg;
	return OPTION_OK;
}

enum option_result cli_set_quiet(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	(void)arg;
	(void)msg;
	(void)len;
	OUTPUTS(o, opts)->quiet = true;
	return OPTION_OK;
}

/* --format: known names, each once. */
enum option_result cli_set_format(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	struct report_outputs *out = OUTPUTS(o, opts);
	char buf[256], *items[OUTPUT_FORMATS + 1];
	int n = option_split_list(o, arg, "formats", buf, sizeof(buf), items, OUTPUT_FORMATS, msg, len);

	if (n < 0)
		return OPTION_USAGE;
	out->n_formats = 0;
	out->formats_arg = arg;
	for (int i = 0; i < n; i++) {
		int f = output_format_from_name(items[i]);
		if (f < 0)
			return option_error(msg, len,
					    "--format '%s': unknown format '%s' (use json, gbench, openmetrics, junit, csv)",
					    arg, items[i]);
		for (size_t j = 0; j < out->n_formats; j++)
			if (out->formats[j] == (enum output_format)f)
				return option_error(msg, len, "--format '%s': '%s' listed twice", arg, items[i]);
		out->formats[out->n_formats++] = (enum output_format)f;
	}
	return OPTION_OK;
}

/* The format whose "NAME=" starts s, or -1: how --output FORMAT=PATH is told from a plain path. */
static int output_map_prefix(const char *s)
{
	for (int f = 0; f < OUTPUT_FORMATS; f++) {
		const char *name = output_format_name((enum output_format)f);
		size_t n = strlen(name);
		if (strncmp(s, name, n) == 0 && s[n] == '=')
			return f;
	}
	return -1;
}

/*
 * Parse --output FORMAT=PATH[,FORMAT=PATH...]. A comma ends a path only where
 * the next FORMAT= follows, so "junit=a,b.xml" is one file; a path holding
 * ",gbench=" goes in its own --output. The paths are copied into out.
 */
static enum option_result parse_output_map(const char *arg, struct report_outputs *out, char *msg, size_t len)
{
	if (out->output_path)
		return option_error(msg, len, "--output '%s': FORMAT=PATH cannot be combined with --output '%s'", arg,
				    out->output_path);
	for (const char *p = arg; *p;) {
		int f = output_map_prefix(p);
		const char *name = output_format_name((enum output_format)f), *path = p + strlen(name) + 1, *end = path;
		while (*end && !(*end == ',' && output_map_prefix(end + 1) >= 0))
			end++;
		size_t n = (size_t)(end - path);
		if (!n)
			return option_error(msg, len, "--output '%s': no path for %s (give %s=FILE or %s=-)", arg, name, name,
					    name);
		if (out->format_paths[f])
			return option_error(msg, len, "--output '%s': %s given twice", arg, name);
		if (n + 1 > sizeof(out->output_map_buf) - out->output_map_used)
			return option_error(msg, len, "--output '%s': paths too long", arg);
		char *copy = out->output_map_buf + out->output_map_used;
		memcpy(copy, path, n);
		copy[n] = '\0';
		out->output_map_used += n + 1;
		out->format_paths[f] = copy;
		out->output_map[out->n_output_map++] = (enum output_format)f;
		p = *end ? end + 1 : end;
	}
	return OPTION_OK;
}

enum option_result cli_set_output(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	struct report_outputs *out = OUTPUTS(o, opts);

	if (!*arg)
		return option_error(msg, len, "--output '': give a file, a directory, - for stdout or FORMAT=FILE");
	if (output_map_prefix(arg) >= 0)
		return parse_output_map(arg, out, msg, len);
	/*
	 * WORD=... with no slash before the '=' reads as FORMAT=PATH: a typo
	 * (junt=ci.xml) must not become a file of that name. A file so named is
	 * still reachable as ./WORD=....
	 */
	size_t word = strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
	if (word && arg[word] == '=')
		return option_error(msg, len, "--output '%s': unknown format '%.*s' (use json, gbench, openmetrics, junit, "
				    "csv; a file of that name is ./%s)", arg, (int)word, arg, arg);
	if (out->n_output_map)
		return option_error(msg, len, "--output '%s': cannot be combined with --output FORMAT=PATH", arg);
	out->output_path = arg;
	return OPTION_OK;
}

enum option_result cli_set_events_dir(const struct option_spec *o, const char *arg, void *opts, char *msg,
				      size_t len)
{
	option_store(o, opts, &arg, sizeof(arg));
	if (access(arg, R_OK | X_OK) != 0)
		return option_error(msg, len, "--events-dir '%s': not a readable directory", arg);
	return OPTION_OK;
}

static bool cpu_usable(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return false;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return cpu < sysconf(_SC_NPROCESSORS_ONLN);
	return CPU_ISSET(cpu, &set);
}

enum option_result cli_set_cpu(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	uint64_t v;

	if (parse_count(arg, &v) || v >= CPU_SETSIZE || !cpu_usable((int)v))
		return option_error(msg, len, "--cpu '%s': no such online CPU available to this process", arg);
	int cpu = (int)v;
	option_store(o, opts, &cpu, sizeof(cpu));
	return OPTION_OK;
}

/*
 * Check that FILE can be written: not a directory, and its directory exists
 * and is writable. A symlink is checked where the write lands: the file at
 * the end of its chain, which need not exist yet (report_link_target()).
 */
static bool output_dir_writable(const char *file)
{
	char *path = report_link_target(file), dir[4096];
	struct stat st;
	bool ok;

	if (!path)
		return false;
	const char *slash = strrchr(path, '/');
	/* A directory is no file, and a directory name longer than dir holds cannot be checked: both fail. */
	if ((stat(path, &st) == 0 && S_ISDIR(st.st_mode)) || (slash && (size_t)(slash - path) >= sizeof(dir)))
		ok = false;
	else if (!slash)
		ok = access(".", W_OK) == 0;
	else if (slash == path)
		ok = access("/", W_OK) == 0;
	else
		ok = snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) > 0 && access(dir, W_OK) == 0;
	free(path);
	return ok;
}

/* Whether path is a symlink report_link_target() does not follow: another user's, in a sticky directory. */
static bool link_refused(const char *path)
{
	char *target = report_link_target(path);
	bool refused = !target && errno == EACCES;

	free(target);
	return refused;
}

/* The one-line error of a refused link (OPTION_NO_OUTPUT: nothing runs, exit 4). */
static enum option_result link_error(const char *option, const char *format, const char *path, char *msg, size_t len)
{
	option_error(msg, len, "%s '%s%s%s': a symlink another user owns in a sticky directory; not followed", option,
		     format ? format : "", format ? "=" : "", path);
	return OPTION_NO_OUTPUT;
}

enum option_result cli_check_output_target(const char *option, const char *path, char *msg, size_t len)
{
	if (path && strcmp(path, "-") != 0 && link_refused(path))
		return link_error(option, NULL, path, msg, len);
	if (path && strcmp(path, "-") != 0 && !output_dir_writable(path)) {
		option_error(msg, len, "%s '%s': a directory, or its directory does not exist or is not writable", option,
			     path);
		return OPTION_NO_OUTPUT;
	}
	return OPTION_OK;
}

/*
 * What an output path names: stdout for "-"; an existing file by device and inode (a device such as /dev/null is
 * nobody's, so two outputs may share it); a file still to be created by its directory's real path and its name, a
 * dangling symlink by its target's. Text comparison missed ./a.json against a.json, a path through a symlinked
 * directory, and /dev/stdout against -, and one document then replaced another (a review of the edges found it).
 */
struct out_id {
	bool exists, shared;	/* shared: a device, which several outputs may write */
	dev_t dev;
	ino_t ino;
	char where[2 * PATH_MAX + 2];
};

static void out_id_of(const char *path, struct out_id *id)
{
	struct stat st;
	char link[PATH_MAX], dir[PATH_MAX], real[PATH_MAX];
	bool is_stdout = strcmp(path, "-") == 0;

	memset(id, 0, sizeof(*id));
	if (is_stdout ? fstat(STDOUT_FILENO, &st) == 0 : stat(path, &st) == 0) {
		id->exists = true;
		id->shared = S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode);
		id->dev = st.st_dev;
		id->ino = st.st_ino;
		return;
	}
	ssize_t n = is_stdout ? -1 : readlink(path, link, sizeof(link) - 1);
	const char *slash = strrchr(path, '/');
	if (n > 0) {	/* a dangling link: its target, relative to the link's directory */
		link[n] = '\0';
		int w = snprintf(dir, sizeof(dir), "%.*s%s", link[0] == '/' || !slash ? 0 : (int)(slash - path + 1),
				 path, link);
		if (w > 0 && (size_t)w < sizeof(dir)) {
			path = dir;
			slash = strrchr(path, '/');
		}
	}
	const char *name = slash ? slash + 1 : path;
	char parent[PATH_MAX];
	snprintf(parent, sizeof(parent), "%.*s", !slash ? 1 : slash == path ? 1 : (int)(slash - path),
		 !slash ? "." : path);
	int w = !is_stdout && realpath(parent, real)
		? snprintf(id->where, sizeof(id->where), "%s/%s", strcmp(real, "/") == 0 ? "" : real, name) : -1;
	if (w < 0 || (size_t)w >= sizeof(id->where))
		snprintf(id->where, sizeof(id->where), "%s", path);
}

bool cli_same_output(const char *a, const char *b)
{
	struct out_id x, y;

	if (strcmp(a, b) == 0)
		return true;
	out_id_of(a, &x);
	out_id_of(b, &y);
	if (x.exists != y.exists)
		return false;
	return x.exists ? !x.shared && x.dev == y.dev && x.ino == y.ino : strcmp(x.where, y.where) == 0;
}

/*
 * A path that names the file stdout already writes (a redirect, a pipe): the same as -, so that the table goes to
 * stderr rather than into the document, and the document into stdout's own file description (>> appends) rather
 * than a file renamed over the redirect's target. A terminal or /dev/null is left as named.
 */
static const char *stdout_alias(const char *path)
{
	struct stat a, o;

	if (!path || strcmp(path, "-") == 0 || stat(path, &a) != 0 || fstat(STDOUT_FILENO, &o) != 0)
		return path;
	return a.st_dev == o.st_dev && a.st_ino == o.st_ino && (S_ISREG(a.st_mode) || S_ISFIFO(a.st_mode) ||
								  S_ISSOCK(a.st_mode)) ? "-" : path;
}

/*
 * --output DIR/: each file it will write is not a directory (found before the work, not after it) and not the
 * --json file.
 */
static enum option_result check_dir_files(const struct report_outputs *out, char *msg, size_t len)
{
	char file[PATH_MAX + 32];
	struct stat st;

	for (size_t i = 0; i < out->n_formats; i++) {
		if (out->format_paths[out->formats[i]])
			continue;	/* its own --output FORMAT=PATH, checked with the others */
		if (!report_output_path(out, out->formats[i], file, sizeof(file)))
			return option_error(msg, len, "--output '%s': %s", out->output_path, strerror(ENAMETOOLONG));
		if (stat(file, &st) == 0 && S_ISDIR(st.st_mode))
			return option_error(msg, len, "--output '%s': %s is a directory, where the %s document goes",
					    out->output_path, file, output_format_name(out->formats[i]));
		if (out->json_path && cli_same_output(file, out->json_path))
			return option_error(msg, len, "--output '%s': %s, where the %s document goes, is the same file "
					    "as --json", out->output_path, file, output_format_name(out->formats[i]));
	}
	return OPTION_OK;
}

enum option_result cli_check_inputs(const char *const *inputs, size_t n, const struct report_outputs *out,
				    bool native_may_replace, char *msg, size_t len)
{
	char file[PATH_MAX + 32];

	for (size_t k = 0; k < n; k++) {
		if (out->json_path && !native_may_replace && cli_same_output(out->json_path, inputs[k]))
			return option_error(msg, len, "--json '%s': that is the report '%s' being read; write it "
					    "elsewhere", out->json_path, inputs[k]);
		for (size_t i = 0; i < out->n_formats; i++) {
			enum output_format f = out->formats[i];
			const char *path = report_output_path(out, f, file, sizeof(file));
			if (path && strcmp(path, "-") != 0 && !(native_may_replace && f == OUTPUT_JSON) &&
			    cli_same_output(path, inputs[k]))
				return option_error(msg, len, "--output '%s': the %s document would replace the report "
						    "'%s' being read; write it elsewhere", path, output_format_name(f),
						    inputs[k]);
		}
	}
	return OPTION_OK;
}

/* --format and --output FORMAT=PATH,...: the formats are those named (with --format, the same set). */
static enum option_result check_map_formats(struct report_outputs *out, char *msg, size_t len)
{
	for (size_t i = 0; i < out->n_formats; i++)
		if (!out->format_paths[out->formats[i]])
			return option_error(msg, len, "--format '%s': %s has no --output %s=PATH (name a path for each format)",
					    out->formats_arg, output_format_name(out->formats[i]),
					    output_format_name(out->formats[i]));
	for (size_t i = 0; i < out->n_output_map && out->n_formats; i++) {
		bool listed = false;
		for (size_t j = 0; j < out->n_formats; j++)
			listed |= out->formats[j] == out->output_map[i];
		if (!listed)
			return option_error(msg, len, "--output '%s=%s': --format '%s' does not name %s",
					    output_format_name(out->output_map[i]), out->format_paths[out->output_map[i]],
					    out->formats_arg, output_format_name(out->output_map[i]));
	}
	out->n_formats = out->n_output_map;
	memcpy(out->formats, out->output_map, sizeof(out->formats));
	return OPTION_OK;
}

/*
 * --output FORMAT=PATH,...: each path is a file or -, no two the same, none
 * the --json file, one stdout at most. Then each must be creatable
 * (OPTION_NO_OUTPUT, exit 4).
 */
static enum option_result check_output_map(struct report_outputs *out, char *msg, size_t len)
{
	struct stat st;

	if (check_map_formats(out, msg, len) != OPTION_OK)
		return OPTION_USAGE;
	for (size_t i = 0; i < out->n_output_map; i++) {
		const char *name = output_format_name(out->output_map[i]), *path = out->format_paths[out->output_map[i]];
		if (path[strlen(path) - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
			return option_error(msg, len, "--output '%s=%s': a directory (give a file, or --output DIR/ for every "
					    "format)", name, path);
		if (out->json_path && cli_same_output(path, out->json_path))
			return option_error(msg, len, "--output '%s=%s': the same %s as --json", name, path,
					    strcmp(path, "-") == 0 ? "stdout" : "file");
		for (size_t j = 0; j < i; j++)
			if (cli_same_output(path, out->format_paths[out->output_map[j]]))
				return option_error(msg, len, "--output '%s=%s': the same %s as %s", name, path,
						    strcmp(path, "-") == 0 ? "stdout" : "file",
						    output_format_name(out->output_map[j]));
	}
	if (cli_check_output_target("--json", out->json_path, msg, len) != OPTION_OK)
		return OPTION_NO_OUTPUT;
	for (size_t i = 0; i < out->n_output_map; i++) {
		const char *path = out->format_paths[out->output_map[i]];
		if (strcmp(path, "-") != 0 && link_refused(path))
			return link_error("--output", output_format_name(out->output_map[i]), path, msg, len);
		if (strcmp(path, "-") != 0 && !output_dir_writable(path)) {
			option_error(msg, len, "--output '%s=%s': its directory does not exist or is not writable",
				     output_format_name(out->output_map[i]), path);
			return OPTION_NO_OUTPUT;
		}
	}
	return OPTION_OK;
}

/* --output PATH|DIR/|- with --format: one file takes one format, a directory several, stdout one document. */
static enum option_result check_output_path(struct report_outputs *out, char *msg, size_t len)
{
	const char *path = out->output_path;
	struct stat st;
	bool is_dir = strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);

	if (!is_dir && path[strlen(path) - 1] == '/')
		return option_error(msg, len, "--output '%s': no such directory", path);
	out->output_dir = is_dir;
	if (!is_dir && out->n_formats > 1)
		return option_error(msg, len,
				    "--output '%s': not a directory, and --format '%s' names %zu formats (give a "
				    "directory for several, or FORMAT=FILE for each)",
				    path, out->formats_arg, out->n_formats);
	if (!is_dir && strcmp(path, "-") == 0 && out->json_path && strcmp(out->json_path, "-") == 0)
		return option_error(msg, len, "--output '-': --json already writes to stdout");
	if (!is_dir && out->json_path && strcmp(path, "-") != 0 && cli_same_output(path, out->json_path))
		return option_error(msg, len, "--output '%s': the same file as --json", path);
	return is_dir ? check_dir_files(out, msg, len) : OPTION_OK;
}

enum option_result cli_check_json_output(struct report_outputs *out, char *msg, size_t len)
{
	if (out->quiet && !out->json_path)
		return option_error(msg, len, "--quiet: nothing to write (no --json names a file); give --json FILE, or "
				    "drop -q and redirect the text");
	return cli_check_outputs(out, msg, len);
}

enum option_result cli_check_outputs(struct report_outputs *out, char *msg, size_t len)
{
	out->json_path = stdout_alias(out->json_path);
	out->output_path = stdout_alias(out->output_path);
	for (size_t i = 0; i < out->n_output_map; i++)
		out->format_paths[out->output_map[i]] = stdout_alias(out->format_paths[out->output_map[i]]);

	const char *path = out->output_path;

	/* -q silences the table; with no file named either, the work would end with nothing to show for it. */
	if (out->quiet && !out->json_path && !path && !out->n_output_map && !out->n_formats)
		return option_error(msg, len, "--quiet: nothing to write (no --json or --output names a file); give one, "
				    "or drop -q and redirect the table");
	if (out->n_output_map)
		return check_output_map(out, msg, len);
	if (out->n_formats && !path) {
		if (out->n_formats > 1 || out->formats[0] != OUTPUT_JSON || !out->json_path)
			return option_error(msg, len, "--format '%s': give --output FILE, DIR/ or - to say where it goes",
					    out->formats_arg);
		out->n_formats = 0;	/* --format json --json FILE is --json FILE */
	}
	if (path && !out->n_formats) {
		out->formats[0] = OUTPUT_JSON;
		out->n_formats = 1;
	}
	if (path && check_output_path(out, msg, len) != OPTION_OK)
		return OPTION_USAGE;
	if (cli_check_output_target("--json", out->json_path, msg, len) != OPTION_OK)
		return OPTION_NO_OUTPUT;
	if (path && out->output_dir && access(path, W_OK | X_OK) != 0) {
		option_error(msg, len, "--output '%s': directory not writable: %s", path, strerror(errno));
		return OPTION_NO_OUTPUT;
	}
	if (path && !out->output_dir && strcmp(path, "-") != 0 && link_refused(path))
		return link_error("--output", NULL, path, msg, len);
	if (path && !out->output_dir && strcmp(path, "-") != 0 && !output_dir_writable(path)) {
		option_error(msg, len, "--output '%s': its directory does not exist or is not writable", path);
		return OPTION_NO_OUTPUT;
	}
	return OPTION_OK;
}

enum option_result cli_set_event(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	struct cli_events *ev = (struct cli_events *)((char *)opts + o->offset);
	char items[CLI_MAX_EVENTS][USER_EVENT_MAX], why[256];
	uint64_t config;
	int n = user_event_split(arg, items, CLI_MAX_EVENTS - ev->n, why, sizeof(why));

	if (n < 0)
		return option_error(msg, len, "--event '%s': %s", arg, why);
	for (int i = 0; i < n; i++) {
		if (user_event_parse_raw(items[i], &config, why, sizeof(why)) < 0)
			return option_error(msg, len, "--event %s", why);
		snprintf(ev->spec[ev->n++], sizeof(ev->spec[0]), "%.*s", USER_EVENT_MAX - 1, items[i]);
	}
	return OPTION_OK;
}
