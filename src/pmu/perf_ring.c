/* SPDX-License-Identifier: MIT */
/* Whole records out of a perf_event ring (perf_ring.h). */
#include "pmu/perf_ring.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

uint64_t perf_ring_head(const struct perf_ring *r)
{
	/* The kernel publishes data_head with a release store after writing the records before it. */
	return __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
}

uint64_t perf_ring_tail(const struct perf_ring *r)
{
	return r->meta->data_tail;	/* only we write it */
}

void perf_ring_copy(const struct perf_ring *r, uint64_t tail, void *dst, size_t len)
{
	size_t off = (size_t)(tail & (r->data_size - 1)), first = r->data_size - off;

	memcpy(dst, r->data + off, first < len ? first : len);
	if (first < len)
		memcpy((unsigned char *)dst + first, r->data, len - first);
}

int perf_ring_peek(const struct perf_ring *r, uint64_t tail, uint64_t head, struct perf_event_header *hdr)
{
	uint64_t avail = head - tail;

	if (tail == head)
		return -ENODATA;
	if (avail < sizeof(*hdr) || avail > r->data_size)
		return -EIO;
	/* The kernel keeps records 8-byte aligned, so a header never wraps; a ring made by hand may. */
	perf_ring_copy(r, tail, hdr, sizeof(*hdr));
	return hdr->size < sizeof(*hdr) || hdr->size > avail ? -EIO : 0;
}

void perf_ring_release(const struct perf_ring *r, uint64_t tail)
{
	/* Release: the kernel may write over the space only after our reads of it. */
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}
