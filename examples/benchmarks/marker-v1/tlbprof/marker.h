/* SPDX-License-Identifier: MIT */
/*
 * FROZEN: the first version of include/tlbprof/marker.h (FIFOs only), kept unchanged so that
 * example-marker_overhead_v1 shows that a benchmark built against it still works under today's tlbprof run.
 * Do not edit.
 *
 * tlbprof phase markers: mark the phases of your own benchmark so that
 * `tlbprof run -- ./bench` measures each one with counters and checks it.
 *
 *     #include <tlbprof/marker.h>
 *
 *     struct tlbprof_phase p = TLBPROF_PHASE_INIT;
 *     p.accesses = n;                        // memory accesses the phase performs
 *     p.region = buf; p.region_bytes = len;  // its working set
 *     p.page = "4k";                         // the page size you intend for it
 *     p.chain = start;                       // a pointer chain: tlbprof inspects it
 *     tlbprof_phase_begin("chase4k", &p);
 *     ... the timed loop ...
 *     tlbprof_phase_end(0, 0);
 *
 * Header only, C (C99 and later) and C++, on POSIX 2008 (clock_gettime,
 * CLOCK_MONOTONIC, O_CLOEXEC): the default gnu modes of gcc and clang have
 * them; a strict -std=c99/c11 build needs -D_POSIX_C_SOURCE=200809L (the
 * header says so with #error otherwise). Outside `tlbprof run` (the
 * TLBPROF_MARKER_CTL variable is not set) every call is a no-op that returns
 * 0, so a benchmark can ship with its markers in place. If tlbprof itself
 * dies while the benchmark runs, the next call gets SIGPIPE (as any write to
 * a FIFO without a reader); ignore SIGPIPE to get -1 with errno EPIPE.
 *
 * Each call writes one line to the control FIFO tlbprof created and waits for
 * tlbprof's "ack" before returning, so the counters are read exactly at the
 * phase boundary. A phase may repeat: occurrences of the same name are
 * aggregated (like LIKWID or PAPI regions). Phases do not nest. Call the
 * markers from one thread at a time. Every translation unit that includes
 * this header keeps its own connection; that is fine as long as calls do not
 * overlap (a phase begun in one unit and ended in another is timed by
 * tlbprof alone). A program that closes file descriptors it did not open is
 * noticed: before each message the connection checks that its descriptors
 * are still the FIFOs, and opens them again if not.
 *
 * The protocol (tlbprof-marker/1), one line per message, at most 512 bytes:
 *   phase begin NAME [accesses=N] [region=0xADDR,LEN] [page=4k|2m|1g]
 *               [chain=0xADDR] [slots=N] [kind=latency|throughput]
 *   phase end [ns=N] [accesses=N] [timings=N]
 * answered by "ack" or "err REASON". perf stat's control commands ("enable",
 * "disable", "ping") are accepted too and answered by "ack".
 */
#ifndef TLBPROF_MARKER_H
#define TLBPROF_MARKER_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if !defined(CLOCK_MONOTONIC) || !defined(O_CLOEXEC)
#error "tlbprof/marker.h needs POSIX 2008: use a gnu -std mode, or define _POSIX_C_SOURCE=200809L before any #include"
#endif

/* Casts that C++ -Wold-style-cast accepts and C understands. */
#ifdef __cplusplus
#define TLBPROF_MARKER_CAST(type, value) static_cast<type>(value)
#define TLBPROF_MARKER_PTR(value) reinterpret_cast<uintptr_t>(value)
#else
#define TLBPROF_MARKER_CAST(type, value) ((type)(value))
#define TLBPROF_MARKER_PTR(value) ((uintptr_t)(value))
#endif

#define TLBPROF_MARKER_PROTOCOL "tlbprof-marker/1"
/* The environment tlbprof run gives the benchmark: paths of the control and acknowledgement FIFOs. */
#define TLBPROF_MARKER_ENV_CTL "TLBPROF_MARKER_CTL"
#define TLBPROF_MARKER_ENV_ACK "TLBPROF_MARKER_ACK"
#define TLBPROF_MARKER_LINE_MAX 512

/* What a phase declares about itself; zero (TLBPROF_PHASE_INIT) means "not declared" for every field. */
struct tlbprof_phase {
	uint64_t accesses;	/* memory accesses the phase performs: gives ns per access */
	const void *region;	/* the working set the phase touches */
	size_t region_bytes;
	const char *page;	/* the page size intended for region: "4k", "2m" or "1g" */
	const void *chain;	/* first slot of a pointer chain inside region (each slot holds the next one's address) */
	uint64_t slots;		/* slots in that chain */
	int throughput;		/* nonzero: the accesses are independent (bandwidth), not dependent loads */
};

#define TLBPROF_PHASE_INIT { 0, NULL, 0, NULL, NULL, 0, 0 }

/* Per translation unit: the connection and the clock at the last acknowledged phase begin. */
struct tlbprof_marker_conn {
	int state;		/* 0 not yet looked, 1 connected, -1 not under tlbprof (or failed) */
	int ctl, ack;
	dev_t ctl_dev, ack_dev;	/* what the descriptors are, to notice a program that closed and reused them */
	ino_t ctl_ino, ack_ino;
	uint64_t begin_ns;
	int begun;		/* this connection's last begin was acknowledged */
};

static inline struct tlbprof_marker_conn *tlbprof_marker_conn_(void)
{
	static struct tlbprof_marker_conn conn;
	return &conn;
}

static inline uint64_t tlbprof_marker_now_ns_(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return TLBPROF_MARKER_CAST(uint64_t, ts.tv_sec) * 1000000000u + TLBPROF_MARKER_CAST(uint64_t, ts.tv_nsec);
}

/* Open both FIFOs (tlbprof holds both ends read-write, so neither open blocks) and remember what they are. */
static inline int tlbprof_marker_open_(struct tlbprof_marker_conn *c)
{
	const char *ctl = getenv(TLBPROF_MARKER_ENV_CTL);
	const char *ack = getenv(TLBPROF_MARKER_ENV_ACK);
	struct stat a, b;

	if (!ctl || !*ctl || !ack || !*ack)
		return -1;
	c->ctl = open(ctl, O_WRONLY | O_CLOEXEC);
	c->ack = c->ctl >= 0 ? open(ack, O_RDONLY | O_CLOEXEC) : -1;
	if (c->ctl < 0 || c->ack < 0 || fstat(c->ctl, &a) != 0 || fstat(c->ack, &b) != 0) {
		if (c->ctl >= 0)
			close(c->ctl);
		if (c->ack >= 0)
			close(c->ack);
		c->ctl = c->ack = -1;
		return -1;
	}
	c->ctl_dev = a.st_dev;
	c->ctl_ino = a.st_ino;
	c->ack_dev = b.st_dev;
	c->ack_ino = b.st_ino;
	return 0;
}

/* 1 when running under tlbprof run with markers, else 0 (the calls are then no-ops). */
static inline int tlbprof_marker_active(void)
{
	struct tlbprof_marker_conn *c = tlbprof_marker_conn_();
	if (c->state == 0) {
		c->state = -1;
		c->ctl = c->ack = -1;
		if (tlbprof_marker_open_(c) == 0) {
			/*
			 * Touch what phase_end uses (the vDSO clock, snprintf's
			 * number formatting) now, so their first-use page faults
			 * do not land inside the first phase.
			 */
			char warm[32];
			snprintf(warm, sizeof(warm), "%llu",
				 TLBPROF_MARKER_CAST(unsigned long long, tlbprof_marker_now_ns_()));
			c->state = 1;
		}
	}
	return c->state == 1;
}

/* Whether fd is still the file (dev, ino) it was opened as. */
static inline int tlbprof_marker_same_(int fd, dev_t dev, ino_t ino)
{
	struct stat st;
	return fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/* Send one line and wait for the answer: 0 on "ack", -1 with errno (EPROTO: tlbprof refused it). */
static inline int tlbprof_marker_send_(const char *line, size_t len)
{
	struct tlbprof_marker_conn *c = tlbprof_marker_conn_();
	char reply[TLBPROF_MARKER_LINE_MAX];
	size_t off = 0;

	/* The program closed and reused our descriptors: never write into its files, open the FIFOs again. */
	if (!tlbprof_marker_same_(c->ctl, c->ctl_dev, c->ctl_ino) ||
	    !tlbprof_marker_same_(c->ack, c->ack_dev, c->ack_ino)) {
		if (tlbprof_marker_open_(c) != 0) {
			c->state = -1;
			errno = EBADF;
			return -1;
		}
	}
	while (off < len) {
		ssize_t n = write(c->ctl, line + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += TLBPROF_MARKER_CAST(size_t, n);
	}
	off = 0;
	for (;;) {
		ssize_t n = read(c->ack, reply + off, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			errno = n == 0 ? EPIPE : errno;
			return -1;
		}
		if (reply[off] == '\n' || off + 2 >= sizeof(reply))
			break;
		off++;
	}
	reply[off] = '\0';
	if (strcmp(reply, "ack") != 0) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

/*
 * Begin phase name (letters, digits and _ . : / -, at most 63 characters);
 * info may be NULL. Returns when tlbprof has taken its counter snapshot:
 * 0, or -1 with errno set (EINVAL: a bad name or a line too long, EPROTO:
 * tlbprof refused the message, e.g. a phase is already open).
 */
static inline int tlbprof_phase_begin(const char *name, const struct tlbprof_phase *info)
{
	struct tlbprof_marker_conn *c;
	char line[TLBPROF_MARKER_LINE_MAX];
	size_t len;
	int n;

	if (!tlbprof_marker_active())
		return 0;
	c = tlbprof_marker_conn_();
	c->begun = 0;
	/* Each piece is added only while the line has room: a truncated line is refused here, never sent. */
	n = snprintf(line, sizeof(line), "phase begin %s", name ? name : "");
	len = n < 0 ? sizeof(line) : TLBPROF_MARKER_CAST(size_t, n);
	if (len < sizeof(line) && info && info->accesses) {
		n = snprintf(line + len, sizeof(line) - len, " accesses=%llu",
			     TLBPROF_MARKER_CAST(unsigned long long, info->accesses));
		len += n < 0 ? sizeof(line) : TLBPROF_MARKER_CAST(size_t, n);
	}
	if (len < sizeof(line) && info && info->region) {
		n = snprintf(line + len, sizeof(line) - len, " region=0x%llx,%llu",
			     TLBPROF_MARKER_CAST(unsigned long long, TLBPROF_MARKER_PTR(info->region)),
			     TLBPROF_MARKER_CAST(unsigned long long, info->region_bytes));
		len += n < 0 ? sizeof(line) : TLBPROF_MARKER_CAST(size_t, n);
	}
	if (len < sizeof(line) && info && info->page) {
		n = snprintf(line + len, sizeof(line) - len, " page=%s", info->page);
		len += n < 0 ? sizeof(line) : TLBPROF_MARKER_CAST(size_t, n);
	}
	if (len < sizeof(line) && info && info->chain) {
		n = snprintf(line + len, sizeof(line) - len, " chain=0x%llx",
			     TLBPROF_MARKER_CAST(unsigned long long, TLBPROF_MARKER_PTR(info->chain)));
		len += n < 0 ? sizeof(line) : TLBPROF_MARKER_CAST(size_t, n);
	}
	if (len < sizeof(line) && info && info->slots) {
		n = snprintf(line + len, sizeof(line) - len, " slots=%llu",
			     TLBPROF_MARKER_CAST(unsigned long long, info->slots));
		len += n < 0 ? sizeof(line) : TLBPROF_MARKER_CAST(size_t, n);
	}
	if (len < sizeof(line) && info && info->throughput) {
		n = snprintf(line + len, sizeof(line) - len, " kind=throughput");
		len += n < 0 ? sizeof(line) : TLBPROF_MARKER_CAST(size_t, n);
	}
	if (len + 1 >= sizeof(line)) {
		errno = EINVAL;
		return -1;
	}
	line[len++] = '\n';
	if (tlbprof_marker_send_(line, len) != 0)
		return -1;
	c->begin_ns = tlbprof_marker_now_ns_();
	c->begun = 1;
	return 0;
}

/*
 * End the open phase. accesses: the accesses it performed (0: as declared at
 * begin); timings: how many separately clocked intervals the benchmark timed
 * the phase as (0 or 1: one; N: it read the clock around each of N pieces,
 * so each piece must still be far longer than a clock read). The wall time
 * between the acknowledged begin and this call goes along. 0 or -1 (errno).
 */
static inline int tlbprof_phase_end(uint64_t accesses, uint64_t timings)
{
	struct tlbprof_marker_conn *c;
	uint64_t end_ns;
	char line[TLBPROF_MARKER_LINE_MAX];
	size_t len = 0;
	int n;

	if (!tlbprof_marker_active())
		return 0;
	c = tlbprof_marker_conn_();
	end_ns = tlbprof_marker_now_ns_();
	/* The wall time only from this connection's own acknowledged begin; else tlbprof times the phase. */
	if (c->begun)
		n = snprintf(line, sizeof(line), "phase end ns=%llu",
			     TLBPROF_MARKER_CAST(unsigned long long, end_ns - c->begin_ns));
	else
		n = snprintf(line, sizeof(line), "phase end");
	len = TLBPROF_MARKER_CAST(size_t, n);
	c->begun = 0;
	if (accesses) {
		n = snprintf(line + len, sizeof(line) - len, " accesses=%llu", TLBPROF_MARKER_CAST(unsigned long long, accesses));
		len += TLBPROF_MARKER_CAST(size_t, n);
	}
	if (timings > 1) {
		n = snprintf(line + len, sizeof(line) - len, " timings=%llu", TLBPROF_MARKER_CAST(unsigned long long, timings));
		len += TLBPROF_MARKER_CAST(size_t, n);
	}
	line[len++] = '\n';
	return tlbprof_marker_send_(line, len);
}

#endif /* TLBPROF_MARKER_H */
