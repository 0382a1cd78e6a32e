/* SPDX-License-Identifier: MIT */
/* Probes for test_run.py: marker-header behaviours a Python script cannot show (closed fds, two units, THP). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <tlbprof/marker.h>

int probe_end_elsewhere(void);

/* A region of bytes on 2 MiB alignment, advised for THP or against it, touched. */
static char *region(size_t bytes, int huge)
{
	char *raw = mmap(NULL, bytes + (2u << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		exit(3);
	char *base = (char *)(((uintptr_t)raw + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1));
	madvise(base, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(base, 1, bytes);
	return base;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (strcmp(mode, "closefds") == 0) {
		/* Connect, then close every fd above 2 and open a file that reuses the lowest one. */
		if (!tlbprof_marker_active())
			return 2;
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		char path[] = "/tmp/tlbprof-probe-XXXXXX";
		int fd = mkstemp(path);
		if (fd < 0)
			return 3;
		int rc = tlbprof_phase_begin("after_close", NULL) | tlbprof_phase_end(0, 0);
		off_t size = lseek(fd, 0, SEEK_END);
		unlink(path);
		printf("rc %d file %lld\n", rc, (long long)size);
		return rc == 0 && size == 0 ? 0 : 1;
	}
	if (strcmp(mode, "reusefds") == 0) {
		/*
		 * One phase with the counter fds tlbprof handed over, then each of
		 * them replaced (an eventfd holding 5, a file): the marker must
		 * neither read the eventfd (a read would take its count) nor the
		 * file, and tlbprof reads the second phase's counters itself.
		 */
		const char *groups = getenv("TLBPROF_MARKER_COUNTERS");
		if (!tlbprof_marker_active() || !groups || !*groups)
			return 2;
		int rc = tlbprof_phase_begin("handed_over", NULL) | tlbprof_phase_end(0, 0);
		char path[] = "/tmp/tlbprof-probe-XXXXXX";
		int file = mkstemp(path), efd = eventfd(5, EFD_NONBLOCK), k = 0;
		if (file < 0 || efd < 0 || write(file, "12345678", 8) != 8 || lseek(file, 0, SEEK_SET) != 0)
			return 3;
		unlink(path);
		for (const char *s = groups; *s; k++) {
			int fd = atoi(s);
			if (dup2(k % 2 ? file : efd, fd) != fd)
				return 3;
			s = strchr(s, ',') ? strchr(s, ',') + 1 : s + strlen(s);
		}
		rc |= tlbprof_phase_begin("replaced", NULL) | tlbprof_phase_end(0, 0);
		uint64_t left = 0;
		int eventfd_kept = read(efd, &left, sizeof(left)) == sizeof(left) && left == 5;
		off_t at = lseek(file, 0, SEEK_CUR);
		printf("rc %d eventfd %s file offset %lld\n", rc, eventfd_kept ? "kept" : "read", (long long)at);
		return rc == 0 && eventfd_kept && at == 0 ? 0 : 1;
	}
	if (strcmp(mode, "two_units") == 0) {
		/* Begin here, end in another translation unit (its own connection, no begin of its own). */
		struct tlbprof_phase p = TLBPROF_PHASE_INIT;
		p.accesses = 1000;
		usleep(20000);	/* time this unit's connection would wrongly count from if it reused a stale clock */
		if (tlbprof_phase_begin("split", &p) != 0)
			return 1;
		usleep(5000);
		return probe_end_elsewhere() == 0 ? 0 : 1;
	}
	if (strcmp(mode, "regchg") == 0) {
		/* One phase, "4k" throughout: the first occurrence on base pages, the others on THP. */
		size_t bytes = 8u << 20;
		char *a = region(bytes, 0), *b = region(bytes, 1);
		for (int i = 0; i < 4; i++) {
			struct tlbprof_phase p = TLBPROF_PHASE_INIT;
			p.region = i ? b : a;
			p.region_bytes = bytes;
			p.page = "4k";
			tlbprof_phase_begin("scan", &p);
			tlbprof_phase_end(0, 0);
		}
		return 0;
	}
	if (strcmp(mode, "tiny") == 0) {
		/* A chain in a region too small to hold two slots: refused, never read. */
		static uint64_t x;
		struct tlbprof_phase p = TLBPROF_PHASE_INIT;
		p.region = &x;
		p.region_bytes = 4;
		p.chain = &x;
		int rc = tlbprof_phase_begin("tiny", &p);
		printf("begin %d\n", rc);
		return rc == -1 ? 0 : 1;
	}
	fprintf(stderr, "usage: run-probe closefds|reusefds|two_units|regchg|tiny\n");
	return 2;
}
