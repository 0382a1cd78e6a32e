/* SPDX-License-Identifier: MIT */
/*
 * tlbprof run's channels: the markers' shared page and FIFOs, perf-style --control fds, their lines, and the acks
 * they get.
 */
#include "target/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "machine/timing.h"

#include "tlbprof/marker.h"

/*
 * How long tlbprof spins for the next shared-page request after one, before
 * it sleeps in poll(): a benchmark's next marker call usually follows within
 * microseconds (an end, then the next begin), and waking from poll() through
 * the doorbell costs a scheduler wake-up on each side (tens of µs in a VM).
 * Longer phases pay the doorbell once per boundary; the spin costs at most
 * this much CPU per message.
 */
#define SHM_SPIN_NS 200000

/* The channel a shared-page request is handled as: no fds of its own, its answers go into the page. */
static const struct channel shm_channel = { .ctl = -1, .ack = -1 };
#define SHM_CHANNEL (&shm_channel)

void target_note_error(struct target_state *st, const char *line, const char *fmt, ...)
{
	struct target_result *tr = st->tr;
	char why[120];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (tr->errors < TARGET_MAX_ERRORS)
		snprintf(tr->error_lines[tr->errors], sizeof(tr->error_lines[0]), "'%.40s': %s", line, why);
	tr->errors++;
}

/*
 * Answer on c's ack channel (none: nothing to answer). The ack fd is
 * non-blocking: a benchmark that never reads its acks fills the FIFO, and
 * then loses acks instead of hanging tlbprof.
 */
static void reply(const struct target_state *st, const struct channel *c, const char *text, size_t len)
{
	size_t off = 0;
	struct pollfd p = { c->ack, POLLOUT, 0 };

	if (c == SHM_CHANNEL) {
		/* The shared page's answer, without its newline; ack publishes it after the whole message is handled. */
		while (len && (text[len - 1] == '\n' || text[len - 1] == '\0'))
			len--;
		if (len >= sizeof(st->shm->reply))
			len = sizeof(st->shm->reply) - 1;
		memcpy(st->shm->reply, text, len);
		st->shm->reply[len] = '\0';
		return;
	}
	if (c->ack < 0)
		return;
	/*
	 * Room for the whole answer (POLLOUT on a pipe means PIPE_BUF bytes
	 * free), or none is written: a caller's fd stays blocking as the caller
	 * left it, and a benchmark that never reads its acks cannot hang tlbprof.
	 */
	if (poll(&p, 1, 0) != 1 || !(p.revents & POLLOUT))
		return;
	while (off < len) {
		ssize_t n = write(c->ack, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;	/* full or closed: the command will see its own error */
		off += (size_t)n;
	}
}

/* Answer text (without its NUL) on c. */
static void reply_text(const struct target_state *st, const struct channel *c, const char *text)
{
	reply(st, c, text, strlen(text));
}

/* Whether c speaks the marker protocol (the FIFOs or the shared page), not perf stat's. */
static bool is_marker(const struct target_state *st, const struct channel *c)
{
	return c != &st->ch[1];
}

/* The ack of channel c: the marker FIFOs answer "ack\n"; perf stat answers sizeof("ack\n"), its NUL included. */
static void ack(const struct target_state *st, const struct channel *c)
{
	if (is_marker(st, c))
		reply(st, c, "ack\n", 4);
	else
		reply(st, c, "ack\n", 5);	/* with its NUL, as perf stat writes it */
}

/* Refuse a line: a marker caller gets the reason; a perf-style controller waits for "ack" whatever it sent. */
static void refuse(const struct target_state *st, const struct channel *c, const char *marker_answer)
{
	if (is_marker(st, c))
		reply_text(st, c, marker_answer);
	else
		ack(st, c);
}

/* A phase begin: refused while one is open or for tlbprof's own names, else the occurrence begins. */
static void on_begin(struct target_state *st, const struct channel *c, const struct marker_msg *m, const char *shown)
{
	if (st->slot[SLOT_MARKER].phase >= 0) {
		target_note_error(st, shown, "phase '%s' is still open (phases do not nest)",
				  st->out->phases[st->slot[SLOT_MARKER].phase].spec.name);
		reply_text(st, c, "err a phase is open\n");
		return;
	}
	if (strcmp(m->name, WINDOW_NAME) == 0 || strcmp(m->name, COMMAND_NAME) == 0) {
		target_note_error(st, shown, "'%s' is tlbprof's own phase name", m->name);
		reply_text(st, c, "err reserved name\n");
		return;
	}
	if (!target_phase_begin_marked(st, m)) {
		target_note_error(st, shown, "more than %d phase names, or out of memory", TARGET_MAX_PHASES);
		reply_text(st, c, "err too many phases\n");
		return;
	}
	ack(st, c);
}

/* Keep how long handling one message took, from its line read to its answer written. */
static void note_handling(struct target_state *st, uint64_t t_read)
{
	double us = (double)(timing_now_ns() - t_read) / 1e3;

	if (st->n_handling == st->cap_handling) {
		size_t cap = st->cap_handling ? 2 * st->cap_handling : 64;
		double *bigger = realloc(st->handling_us, cap * sizeof(*bigger));
		if (!bigger)
			return;
		st->handling_us = bigger;
		st->cap_handling = cap;
	}
	st->handling_us[st->n_handling++] = us;
}

/* Handle one line from channel c. */
static void handle_line(struct target_state *st, const struct channel *c, const char *line, size_t len)
{
	uint64_t t_read = timing_now_ns();
	struct marker_msg m;
	char err[200], shown[64];

	snprintf(shown, sizeof(shown), "%.*s", (int)(len < 60 ? len : 60), line);
	st->tr->messages++;
	if (marker_parse(line, len, &m, err, sizeof(err)) != 0) {
		target_note_error(st, shown, "%s", err);
		refuse(st, c, "err bad message\n");
		return;
	}
	struct slot *mk = &st->slot[SLOT_MARKER], *win = &st->slot[SLOT_WINDOW];
	switch (m.type) {
	case MARKER_BEGIN:
		st->tr->markers_seen = true;
		on_begin(st, c, &m, shown);
		break;
	case MARKER_END:
		st->tr->markers_seen = true;
		if (mk->phase < 0) {
			target_note_error(st, shown, "no phase is open");
			reply_text(st, c, "err no phase is open\n");
			break;
		}
		target_slot_end(st, SLOT_MARKER, t_read, &m, false);
		ack(st, c);
		break;
	case MARKER_ENABLE:
		st->tr->control_seen = true;
		if (win->phase < 0)
			target_window_open(st);
		ack(st, c);
		break;
	case MARKER_DISABLE:
		st->tr->control_seen = true;
		if (win->phase >= 0)
			target_slot_end(st, SLOT_WINDOW, t_read, NULL, false);
		ack(st, c);
		break;
	case MARKER_PING:
		st->tr->control_seen = true;
		ack(st, c);
		break;
	}
	note_handling(st, t_read);
}

/* The end of the next line in buf[0..len): '\n', or '\0' as perf stat also accepts; NULL when none yet. */
static char *line_end(char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\n' || buf[i] == '\0')
			return buf + i;
	return NULL;
}

/* One read from c and the lines it completes. Returns the bytes read (0: end of file or nothing, < 0: error). */
static ssize_t drain_once(struct target_state *st, struct channel *c)
{
	ssize_t n;

	do
		n = read(c->ctl, c->buf + c->len, sizeof(c->buf) - c->len);
	while (n < 0 && errno == EINTR);
	if (n == 0 && c != &st->ch[0]) {
		close(c->ctl);
		c->ctl = -1;
		return 0;
	}
	if (n <= 0)
		return n;
	c->len += (size_t)n;
	char *start = c->buf, *end;
	while ((end = line_end(start, c->len - (size_t)(start - c->buf))) != NULL) {
		/* perf sends "cmd\0" or "cmd\n"; "cmd\n\0" is one line, not an empty one after it. */
		bool empty_after_newline = end == start && *end == '\0' && start > c->buf && start[-1] == '\n';
		if (c->discarding)
			c->discarding = false;
		else if (!empty_after_newline && !(end == start && *end == '\0'))
			handle_line(st, c, start, (size_t)(end - start));
		start = end + 1;
	}
	c->len -= (size_t)(start - c->buf);
	memmove(c->buf, start, c->len);
	if (c->len > MARKER_LINE_MAX) {
		if (!c->discarding) {
			/* No end within a line's limit: refuse it once and skip to its end. */
			st->tr->messages++;
			target_note_error(st, "(overlong line)", "longer than %d bytes", MARKER_LINE_MAX);
			refuse(st, c, "err line too long\n");
			c->discarding = true;
		}
		c->len = 0;
	}
	return n;
}

/* ---- the shared page ---- */

/* Publish the answer to request seq and wake the caller if it sleeps on the futex. */
static void shm_answer(struct tlbprof_marker_shm *s, uint32_t seq)
{
	__atomic_store_n(&s->ack, seq, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->waiting, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &s->ack, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* Handle the request waiting on the shared page, if any. Returns whether there was one. */
static bool shm_take(struct target_state *st)
{
	struct tlbprof_marker_shm *s = st->shm;
	uint32_t seq = __atomic_load_n(&s->req, __ATOMIC_ACQUIRE);
	char line[MARKER_LINE_MAX + 1];

	if (seq == __atomic_load_n(&s->ack, __ATOMIC_RELAXED))
		return false;
	/* The caller waits until the answer: the line is stable. Copy it out of reach of a misbehaving caller. */
	size_t len = s->len < MARKER_LINE_MAX ? s->len : MARKER_LINE_MAX;
	memcpy(line, s->line, len);
	char *end = memchr(line, '\n', len);
	if (end)
		len = (size_t)(end - line);
	line[len] = '\0';
	/* The caller's own counter reads for this request, copied out too; they are checked as they are decoded. */
	struct tlbprof_marker_snap *snap = st->shm_snap;
	st->given_words = 0;
	if (snap && __atomic_load_n(&snap->seq, __ATOMIC_RELAXED) == seq && snap->words &&
	    snap->words <= TLBPROF_MARKER_SNAP_WORDS) {
		st->given_words = snap->words;
		memcpy(st->given, snap->counts, st->given_words * sizeof(*st->given));
	}
	strcpy(s->reply, "err no answer");
	handle_line(st, SHM_CHANNEL, line, len);
	st->given_words = 0;
	s->server_cpu = sched_getcpu();
	shm_answer(s, seq);
	return true;
}

/*
 * Spin beside the caller, never on its CPU: where the scheduler put tlbprof
 * on the caller's CPU (a wake-up prefers the waker's CPU), tlbprof moves
 * itself to the other CPUs it may use, so that each side can spin while the
 * other works. The benchmark is never moved. Returns whether tlbprof now runs
 * elsewhere than the caller (false: stay, and sleep instead of spinning).
 */
static bool shm_step_aside(struct target_state *st)
{
	int caller = st->shm->caller_cpu, here = sched_getcpu();
	cpu_set_t *allowed = st->shm_allowed;

	if (caller < 0 || here < 0 || here != caller)
		return true;
	if (caller >= CPU_SETSIZE || !CPU_ISSET(caller, allowed) || CPU_COUNT(allowed) < 2)
		return false;
	cpu_set_t others = *allowed;
	CPU_CLR(caller, &others);
	if (sched_setaffinity(0, sizeof(others), &others) != 0)
		return false;
	st->shm->server_cpu = sched_getcpu();
	return st->shm->server_cpu != caller;
}

/*
 * Serve the shared page: every waiting request, then, after one, spin for
 * the next up to SHM_SPIN_NS. Before returning to poll() tlbprof says it
 * sleeps (the caller then rings the doorbell) and looks once more, so a
 * request posted in between is never left waiting: each side stores its own
 * flag before it loads the other's, both sequentially consistent.
 */
static void shm_serve(struct target_state *st)
{
	struct tlbprof_marker_shm *s = st->shm;

	__atomic_store_n(&s->sleeping, 0u, __ATOMIC_SEQ_CST);
	for (;;) {
		bool served = false;
		while (shm_take(st))
			served = true;
		if (served && st->shm_spin && shm_step_aside(st)) {
			uint64_t t0 = timing_now_ns();
			while (__atomic_load_n(&s->req, __ATOMIC_ACQUIRE) == __atomic_load_n(&s->ack, __ATOMIC_RELAXED) &&
			       timing_now_ns() - t0 < SHM_SPIN_NS)
				;
			if (__atomic_load_n(&s->req, __ATOMIC_ACQUIRE) != __atomic_load_n(&s->ack, __ATOMIC_RELAXED))
				continue;
		}
		__atomic_store_n(&s->sleeping, 1u, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&s->req, __ATOMIC_SEQ_CST) == __atomic_load_n(&s->ack, __ATOMIC_RELAXED))
			return;
		__atomic_store_n(&s->sleeping, 0u, __ATOMIC_SEQ_CST);
	}
}

/* The CPUs tlbprof may use, into st->shm_allowed; whether there are two or more (on one, spinning only delays). */
static bool can_spin(struct target_state *st)
{
	CPU_ZERO(st->shm_allowed);
	return sched_getaffinity(0, sizeof(*st->shm_allowed), st->shm_allowed) == 0 && CPU_COUNT(st->shm_allowed) > 1;
}

/* The shared file: the request page, then the caller's counter snapshot (tlbprof/marker.h). */
#define SHM_BYTES (sizeof(struct tlbprof_marker_shm) + sizeof(struct tlbprof_marker_snap))

/* The shared page in the private directory, initialised, its path for the command. Returns 0 or -errno. */
static int make_shm(struct target_state *st)
{
	snprintf(st->shm_path, sizeof(st->shm_path), "%s/shm", st->dir);
	int fd = open(st->shm_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	void *p = MAP_FAILED;
	if (ftruncate(fd, SHM_BYTES) == 0)
		p = mmap(NULL, SHM_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int err = errno;
	close(fd);
	if (p == MAP_FAILED)
		return -err;
	st->shm = p;
	memset(st->shm, 0, SHM_BYTES);
	st->shm_snap = (struct tlbprof_marker_snap *)(st->shm + 1);
	st->shm_snap->size = sizeof(*st->shm_snap);
	st->shm_snap->magic = TLBPROF_MARKER_SNAP_MAGIC;
	st->given = malloc(sizeof(st->shm_snap->counts));
	if (!st->given)
		st->shm_snap->magic = 0;	/* no room to copy snapshots out: the callers need not take them */
	st->shm->size = sizeof(*st->shm);
	st->shm->owner = (int32_t)getpid();
	st->shm->sleeping = 1;
	st->shm->caller_cpu = st->shm->server_cpu = -1;
	__atomic_store_n(&st->shm->magic, TLBPROF_MARKER_SHM_MAGIC, __ATOMIC_RELEASE);
	st->shm_allowed = malloc(sizeof(*st->shm_allowed));
	st->shm_spin = st->shm_allowed && can_spin(st);
	return 0;
}

/*
 * Read once from channel c (poll said it is readable, so the read does not
 * block even on a caller's fd left blocking) and handle each whole line. A
 * line longer than the protocol allows is refused once and skipped to its
 * end. End of file (an fd: channel whose writers closed) closes the channel.
 */
static void drain_channel(struct target_state *st, struct channel *c)
{
	for (;;) {
		if (drain_once(st, c) <= 0 || !c->nonblocking || c->ctl < 0)
			return;
	}
}

void target_channel_ready(struct target_state *st, struct channel *c, short revents)
{
	if (revents & POLLIN) {
		drain_channel(st, c);
		/* The markers' FIFO is also the shared page's doorbell (a NUL byte, skipped as an empty line). */
		if (c == &st->ch[0] && st->shm)
			shm_serve(st);
	} else if ((revents & (POLLHUP | POLLERR | POLLNVAL)) && c == &st->ch[1]) {
		/* The controller closed its end (an fd: pipe): nothing more will come, stop polling it. */
		close(c->ctl);
		c->ctl = -1;
	}
}

void target_channels_drain_pending(struct target_state *st)
{
	/*
	 * Lines the command wrote just before it exited (a perf-style "disable"
	 * needs no ack), while there are any: a caller's fd stays blocking, so
	 * only a channel poll calls readable is read.
	 */
	for (int rounds = 0; rounds < 64; rounds++) {
		struct pollfd q[2] = { { st->ch[0].ctl, POLLIN, 0 }, { st->ch[1].ctl, POLLIN, 0 } };
		if (poll(q, 2, 0) <= 0 || !((q[0].revents | q[1].revents) & POLLIN))
			break;
		for (int i = 0; i < 2; i++)
			if (q[i].revents & POLLIN)
				drain_channel(st, &st->ch[i]);
	}
	/* A caller cannot have a request waiting after its exit; one of a surviving child still gets its answer. */
	if (st->shm)
		while (shm_take(st))
			;
}

static int make_fifos(struct target_state *st)
{
	const char *tmp = st->opt->tmpdir && *st->opt->tmpdir ? st->opt->tmpdir : "/tmp";

	if ((size_t)snprintf(st->dir, sizeof(st->dir), "%s/tlbprof-run.XXXXXX", tmp) >= sizeof(st->dir)) {
		st->dir[0] = '\0';
		st->tr->fifo_errno = ENAMETOOLONG;
		return -ENAMETOOLONG;
	}
	/* mkdtemp makes the directory 0700: nobody else can open, replace or read the FIFOs. */
	if (!mkdtemp(st->dir)) {
		st->dir[0] = '\0';
		st->tr->fifo_errno = errno;
		return -errno;
	}
	snprintf(st->ctl_path, sizeof(st->ctl_path), "%s/ctl", st->dir);
	snprintf(st->ack_path, sizeof(st->ack_path), "%s/ack", st->dir);
	if (mkfifo(st->ctl_path, 0600) != 0 || mkfifo(st->ack_path, 0600) != 0)
		return -errno;
	/*
	 * Opened read-write: a FIFO open blocks until the other side opens, unless
	 * the opener holds both ends. So the command's open never blocks, and
	 * tlbprof never sees end-of-file when the command closes its end.
	 */
	st->ch[0].ctl = open(st->ctl_path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	st->ch[0].nonblocking = true;
	st->ch[0].ack = open(st->ack_path, O_RDWR | O_CLOEXEC);
	if (st->ch[0].ctl < 0 || st->ch[0].ack < 0)
		return -errno;
	return make_shm(st);
}

static int open_control(struct target_state *st)
{
	const struct target_options *o = st->opt;
	struct channel *c = &st->ch[1];

	if (o->ctl_path) {
		c->ctl = open(o->ctl_path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (c->ctl < 0)
			return -errno;
		c->nonblocking = true;
		if (o->ack_path && (c->ack = open(o->ack_path, O_RDWR | O_CLOEXEC)) < 0)
			return -errno;
	} else if (o->ctl_fd >= 0) {
		/*
		 * The caller's file description is shared: its flags stay as they
		 * are (drain_channel reads once per readiness, which never blocks).
		 */
		c->ctl = fcntl(o->ctl_fd, F_DUPFD_CLOEXEC, 0);
		if (c->ctl < 0)
			return -errno;
		if (o->ack_fd >= 0 && (c->ack = fcntl(o->ack_fd, F_DUPFD_CLOEXEC, 0)) < 0)
			return -errno;
	}
	return 0;
}

int target_channels_open(struct target_state *st)
{
	int rc = make_fifos(st);

	return rc ? rc : open_control(st);
}

void target_channels_close(struct target_state *st)
{
	for (int i = 0; i < 2; i++) {
		if (st->ch[i].ctl >= 0)
			close(st->ch[i].ctl);
		if (st->ch[i].ack >= 0)
			close(st->ch[i].ack);
		st->ch[i].ctl = st->ch[i].ack = -1;
	}
	if (st->shm) {
		/* A caller still waiting (a child that outlived the command) sees closed within 100 ms. */
		__atomic_store_n(&st->shm->closed, 1u, __ATOMIC_RELEASE);
		syscall(SYS_futex, &st->shm->ack, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
		munmap(st->shm, SHM_BYTES);
		st->shm = NULL;
		st->shm_snap = NULL;
		free(st->given);
		st->given = NULL;
		free(st->shm_allowed);
		st->shm_allowed = NULL;
	}
	if (*st->dir) {
		unlink(st->ctl_path);
		unlink(st->ack_path);
		if (*st->shm_path)
			unlink(st->shm_path);
		rmdir(st->dir);
		st->dir[0] = '\0';
	}
}
