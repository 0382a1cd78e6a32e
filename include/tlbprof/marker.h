/* SPDX-License-Identifier: MIT */
/*
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
 * Header only, C (C99 and later) and C++. Outside `tlbprof run` (the
 * TLBPROF_MARKER_CTL variable is not set) every call is a no-op that returns
 * 0, so a benchmark can ship with its markers in place.
 *
 * Each call writes one line to the control FIFO tlbprof created and waits for
 * tlbprof's "ack" before returning, so the counters are read exactly at the
 * phase boundary. A phase may repeat: occurrences of the same name are
 * aggregated (like LIKWID or PAPI regions). Phases do not nest. Call the
 * markers from one thread at a time. Every translation unit that includes
 * this header keeps its own connection; that is fine as long as calls do not
 * overlap.
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
#include <time.h>
#include <unistd.h>

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

/* Per translation unit: the connection and the clock at the last phase begin. */
struct tlbprof_marker_conn {
	int state;		/* 0 not yet looked, 1 connected, -1 not under tlbprof (or failed) */
	int ctl, ack;
	uint64_t begin_ns;
};

static inline struct tlbprof_marker_conn *tlbprof_marker_conn_(void)
{
	static struct tlbprof_marker_conn conn = { 0, -1, -1, 0 };
	return &conn;
}

static inline uint64_t tlbprof_marker_now_ns_(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* 1 when running under tlbprof run with markers, else 0 (the calls are then no-ops). */
static inline int tlbprof_marker_active(void)
{
	struct tlbprof_marker_conn *c = tlbprof_marker_conn_();
	if (c->state == 0) {
		const char *ctl = getenv(TLBPROF_MARKER_ENV_CTL);
		const char *ack = getenv(TLBPROF_MARKER_ENV_ACK);
		c->state = -1;
		if (ctl && *ctl && ack && *ack) {
			/* tlbprof holds both FIFOs open read-write, so neither open blocks. */
			c->ctl = open(ctl, O_WRONLY | O_CLOEXEC);
			c->ack = c->ctl >= 0 ? open(ack, O_RDONLY | O_CLOEXEC) : -1;
			if (c->ctl >= 0 && c->ack >= 0) {
				/*
				 * Touch what phase_end uses (the vDSO clock, snprintf's
				 * number formatting) now, so their first-use page faults
				 * do not land inside the first phase.
				 */
				char warm[32];
				snprintf(warm, sizeof(warm), "%llu", (unsigned long long)tlbprof_marker_now_ns_());
				c->state = 1;
			} else if (c->ctl >= 0) {
				close(c->ctl);
				c->ctl = -1;
			}
		}
	}
	return c->state == 1;
}

/* Send one line and wait for the answer: 0 on "ack", -1 with errno (EPROTO: tlbprof refused it). */
static inline int tlbprof_marker_send_(const char *line, size_t len)
{
	struct tlbprof_marker_conn *c = tlbprof_marker_conn_();
	char reply[TLBPROF_MARKER_LINE_MAX];
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(c->ctl, line + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += (size_t)n;
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
	char line[TLBPROF_MARKER_LINE_MAX];
	int len;

	if (!tlbprof_marker_active())
		return 0;
	len = snprintf(line, sizeof(line), "phase begin %s", name ? name : "");
	if (info && info->accesses)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " accesses=%llu",
				(unsigned long long)info->accesses);
	if (len < (int)sizeof(line) && info && info->region)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " region=0x%llx,%llu",
				(unsigned long long)(uintptr_t)info->region, (unsigned long long)info->region_bytes);
	if (len < (int)sizeof(line) && info && info->page)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " page=%s", info->page);
	if (len < (int)sizeof(line) && info && info->chain)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " chain=0x%llx",
				(unsigned long long)(uintptr_t)info->chain);
	if (len < (int)sizeof(line) && info && info->slots)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " slots=%llu", (unsigned long long)info->slots);
	if (len < (int)sizeof(line) && info && info->throughput)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " kind=throughput");
	if (len < 0 || len + 1 >= (int)sizeof(line)) {
		errno = EINVAL;
		return -1;
	}
	line[len++] = '\n';
	if (tlbprof_marker_send_(line, (size_t)len) != 0)
		return -1;
	tlbprof_marker_conn_()->begin_ns = tlbprof_marker_now_ns_();
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
	uint64_t end_ns;
	char line[TLBPROF_MARKER_LINE_MAX];
	int len;

	if (!tlbprof_marker_active())
		return 0;
	end_ns = tlbprof_marker_now_ns_();
	len = snprintf(line, sizeof(line), "phase end ns=%llu",
		       (unsigned long long)(end_ns - tlbprof_marker_conn_()->begin_ns));
	if (accesses)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " accesses=%llu", (unsigned long long)accesses);
	if (timings > 1)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " timings=%llu", (unsigned long long)timings);
	line[len++] = '\n';
	return tlbprof_marker_send_(line, (size_t)len);
}

#endif /* TLBPROF_MARKER_H */
