/* SPDX-License-Identifier: MIT */
/*
 * Private to pmu/: reading a perf_event ring as the kernel writes it, whole records between data_tail and
 * data_head, for the sampling sessions and the counters' exit records alike.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct perf_event_mmap_page;
struct perf_event_header;

/* A ring as mmap(2) of an event gives it: its control page, then data_size bytes of data (a power of two). */
struct perf_ring {
	struct perf_event_mmap_page *meta;
	const unsigned char *data;
	size_t data_size;
};

/* Where the kernel has written to (data_head, read with acquire: every record before it is whole), and where we are. */
uint64_t perf_ring_head(const struct perf_ring *r);
uint64_t perf_ring_tail(const struct perf_ring *r);

/*
 * The header of the record at tail, into *hdr. Returns 0; -ENODATA when
 * tail is head; -EIO when what lies there cannot be a record (less than a
 * header left, more than the ring holds, a size below a header's or past
 * head), after which the ring cannot be walked further.
 */
int perf_ring_peek(const struct perf_ring *r, uint64_t tail, uint64_t head, struct perf_event_header *hdr);

/* Copy len bytes from tail into dst, across the ring's end where the record wraps. */
void perf_ring_copy(const struct perf_ring *r, uint64_t tail, void *dst, size_t len);

/* Hand everything before tail back to the kernel (data_tail, stored with release). */
void perf_ring_release(const struct perf_ring *r, uint64_t tail);
