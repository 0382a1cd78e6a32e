/* SPDX-License-Identifier: MIT */
/*
 * The one atomic writer: every file tlbprof writes goes through
 * report_write_file() (a temporary file renamed over the target, a symlink's
 * file replaced unless another user planted the link, a device written in
 * place), and JSON onto a stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "report/internal.h"
#include "report/report.h"

/* Flush f and turn a failed write into -errno (ENOSPC on /dev/full, EIO when stdio kept no errno). */
static int finish_stream(FILE *f)
{
	errno = 0;
	if (fflush(f) != 0 || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

/*
 * Whether the kernel's fs.protected_symlinks would refuse to follow link (st
 * its lstat): a link in a sticky, world-writable directory (/tmp) is
 * followed only by its owner, or when the directory's owner owns it too.
 * Following links by hand (readlink, then a rename onto the target) skips
 * the kernel's check, so it is made here, whatever the sysctl says: another
 * user's link must never make tlbprof replace a file that user cannot write.
 */
static bool link_planted(const char *link, const struct stat *st)
{
	char *copy = strdup(link);
	struct stat dir;
	bool planted;

	if (!copy)
		return true;	/* cannot tell: not followed */
	planted = stat(dirname(copy), &dir) != 0 ||
		  ((dir.st_mode & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH) && st->st_uid != geteuid() &&
		   st->st_uid != dir.st_uid);
	free(copy);
	return planted;
}

char *report_link_target(const char *path)
{
	char *cur = strdup(path), buf[4096];

	/* As the kernel does: at most 40 links in a chain, then ELOOP. */
	for (int hops = 0; cur; hops++) {
		struct stat st;
		if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
			return cur;
		if (link_planted(cur, &st)) {
			free(cur);
			errno = EACCES;
			return NULL;
		}
		ssize_t n = hops < 40 ? readlink(cur, buf, sizeof(buf) - 1) : (errno = ELOOP, -1);
		if (n < 0) {
			free(cur);
			return NULL;
		}
		buf[n] = '\0';
		char *next = NULL, *dir = strdup(cur);
		/* A relative link is relative to the link's own directory. */
		if (!dir || (buf[0] == '/' ? !(next = strdup(buf)) : asprintf(&next, "%s/%s", dirname(dir), buf) < 0)) {
			next = NULL;
			errno = ENOMEM;
		}
		free(dir);
		free(cur);
		cur = next;
	}
	return NULL;
}

/* Why report_link_target() gave no file (rc: -errno). */
static void link_error(const char *path, const char *option, int rc, char *err, size_t err_len)
{
	snprintf(err, err_len, "%s '%s': %s: %s", option, path,
		 rc == -EACCES ? "a symlink another user owns in a sticky directory, not followed" : "cannot follow the link",
		 strerror(-rc));
}

/* The stream writer report_write_file() calls: 0 or -errno. */
typedef int (*emit_fn)(FILE *f, const void *ctx);

/* "-": the document onto stdout (or stderr), flushed so that a full pipe or disk is an error here. */
static int write_stdout(FILE *f, const char *what, emit_fn emit, const void *ctx, char *err, size_t err_len)
{
	int rc;

	if ((rc = emit(f, ctx)) == 0)
		rc = finish_stream(f);
	if (rc)
		snprintf(err, err_len, "cannot write the %s to %s: %s", what, f == stderr ? "stderr" : "stdout",
			 strerror(-rc));
	return rc;
}

/*
 * The stream whose file st is (/dev/stderr, or a path to the file 2>> appends to): written through it, in place,
 * never renamed over (which left the redirect writing to an unlinked file and dropped what it held before).
 */
static FILE *std_stream_of(const struct stat *st)
{
	struct stat o;

	if (fstat(STDOUT_FILENO, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino)
		return stdout;
	if (fstat(STDERR_FILENO, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino)
		return stderr;
	return NULL;
}

/*
 * A device, FIFO or socket (/dev/stdout, a pipe) is written in place:
 * renaming over it would replace the device node with a file. st is what
 * stat() said of path; a directory is refused.
 */
static int write_in_place(const char *path, const struct stat *st, const char *option, const char *what,
			  emit_fn emit, const void *ctx, char *err, size_t err_len)
{
	FILE *f = NULL;
	int rc = 0;

	if (S_ISDIR(st->st_mode)) {
		rc = -EISDIR;
		snprintf(err, err_len, "%s '%s': is a directory", option, path);
	} else if (!(f = fopen(path, "we"))) {
		/* A FIFO's open waits for a reader; a signal asking tlbprof to stop ends the wait (EINTR). */
		rc = -errno;
		snprintf(err, err_len, "%s '%s': %s: %s", option, path,
			 rc == -EINTR ? "interrupted while waiting for a reader" : "cannot open", strerror(-rc));
	} else {
		if ((rc = emit(f, ctx)) == 0)
			rc = finish_stream(f);
		if (fclose(f) != 0 && !rc)
			rc = -errno;
		if (rc)
			snprintf(err, err_len, "%s '%s': cannot write the %s: %s", option, path, what, strerror(-rc));
	}
	return rc;
}

/* The mode a plain write would leave: the replaced file's, or 0666 less the umask for a new one. */
static mode_t replaced_mode(const char *target)
{
	struct stat st;
	mode_t mode;

	if (stat(target, &st) == 0)
		return st.st_mode & 07777;
	mode = umask(0);	/* the only way to read it; set back at once */
	umask(mode);
	return 0666 & ~mode;
}

/*
 * A temporary file next to target, created exclusively (never through a
 * symlink), to be renamed over it: its name in *tmp (caller frees), its
 * descriptor in *fd and its cleanup.h slot in *slot. The caller blocks the
 * fatal signals around it. Returns 0, or -errno with the reason in err.
 */
static int temp_create(const char *path, const char *target, const char *option, const char *what, char **tmp,
		       int *fd, int *slot, char *err, size_t err_len)
{
	char *dircopy = strdup(target);
	int rc = 0;

	*tmp = NULL;
	if (!dircopy || asprintf(tmp, "%s/.tlbprof-%s.XXXXXX", dirname(dircopy), what) < 0) {
		*tmp = NULL;
		rc = -ENOMEM;
		snprintf(err, err_len, "out of memory");
		goto out;
	}
	*fd = mkostemp(*tmp, O_CLOEXEC);
	*slot = *fd >= 0 ? cleanup_add(*tmp) : -1;	/* a second signal removes it (main.c) */
	if (*fd < 0) {
		rc = errno ? -errno : -EIO;
		snprintf(err, err_len, "%s '%s': cannot create a file in the directory of %s: %s", option, path, target,
			 strerror(-rc));
		free(*tmp);
		*tmp = NULL;
	}
out:
	free(dircopy);
	return rc;
}

/* The document into the temporary file fd, with mode, and on the disk (fsync) before any rename; fd is closed. */
static int temp_fill(int fd, mode_t mode, emit_fn emit, const void *ctx)
{
	FILE *f = fdopen(fd, "w");
	int rc;

	if (!f) {
		rc = -errno;
		close(fd);
		return rc;
	}
	if (fchmod(fd, mode) != 0) {
		rc = -errno;
		fclose(f);
		return rc;
	}
	if ((rc = emit(f, ctx)) != 0 || (rc = finish_stream(f)) != 0 || (fsync(fd) != 0 && (rc = -errno))) {
		fclose(f);
		return rc;
	}
	if (fclose(f) != 0)
		return -errno;
	return 0;
}

/*
 * A regular file, or none yet: written to a temporary file renamed over it.
 * A symlink: replace the file it names and keep the link, also when that
 * file does not exist yet (as a shell's "> link" creates it).
 */
static int write_replacing(const char *path, const char *option, const char *what, emit_fn emit,
			   const void *ctx, char *err, size_t err_len)
{
	char *target = report_link_target(path), *tmp = NULL;
	int rc, fd, slot = -1;
	sigset_t old;

	if (!target) {
		rc = -errno;
		link_error(path, option, rc, err, err_len);
		return rc;
	}
	mode_t mode = replaced_mode(target);
	/* No signal between creating the temporary file and remembering it, nor between renaming and forgetting it. */
	cleanup_block(&old);
	rc = temp_create(path, target, option, what, &tmp, &fd, &slot, err, err_len);
	cleanup_unblock(&old);
	if (rc != 0 || !tmp) {
		rc = rc ? rc : -EIO;	/* temp_create names a file whenever it succeeds */
		goto out;
	}
	rc = temp_fill(fd, mode, emit, ctx);
	cleanup_block(&old);
	if (rc == 0 && rename(tmp, target) != 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	cleanup_forget(slot);
	cleanup_unblock(&old);
	if (rc)
		snprintf(err, err_len, "%s '%s': cannot write the %s: %s", option, path, what, strerror(-rc));
out:
	free(tmp);
	free(target);
	return rc;
}

int report_write_file(const char *path, const char *option, const char *what,
		      int (*emit)(FILE *f, const void *ctx), const void *ctx, char *err, size_t err_len)
{
	struct stat st;

	if (!path) {
		snprintf(err, err_len, "%s: no file to write the %s to", option, what);
		return -EINVAL;
	}
	if (strcmp(path, "-") == 0)
		return write_stdout(stdout, what, emit, ctx, err, err_len);
	/* A link another user planted is not followed, not even to a device (a disk written in place). */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		char *target = report_link_target(path);
		if (!target) {
			int rc = -errno;
			link_error(path, option, rc, err, err_len);
			return rc;
		}
		free(target);
	}
	if (stat(path, &st) == 0) {	/* one look at what is there now */
		FILE *std = S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) ? std_stream_of(&st) : NULL;
		if (std)
			return write_stdout(std, what, emit, ctx, err, err_len);
		if (!S_ISREG(st.st_mode))
			return write_in_place(path, &st, option, what, emit, ctx, err, err_len);
	}
	return write_replacing(path, option, what, emit, ctx, err, err_len);
}

int report_json_dumpf(const json_t *root, FILE *f)
{
	errno = 0;
	if (json_dumpf(root, f, JSON_INDENT(2)) != 0 || fputc('\n', f) == EOF)
		return errno ? -errno : -EIO;
	return 0;
}

/* A JSON document as the stream writer of report_write_file(). */
static int json_stream(FILE *f, const void *ctx)
{
	return report_json_dumpf((const json_t *)ctx, f);
}

int report_json_dump(json_t *root, const char *path, char *err, size_t err_len)
{
	return report_write_file(path, "--json", "report", json_stream, root, err, err_len);
}
