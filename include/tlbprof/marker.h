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
 * Header only, C (C99 and later) and C++, on POSIX 2008 (clock_gettime,
 * CLOCK_MONOTONIC, O_CLOEXEC): the default gnu modes of gcc and clang have
 * them; a strict -std=c99/c11 build needs -D_POSIX_C_SOURCE=200809L (the
 * header says so with #error otherwise). Outside `tlbprof run` (the
 * TLBPROF_MARKER_CTL variable is not set) every call is a no-op that returns
 * 0, so a benchmark can ship with its markers in place. If tlbprof itself
 * dies while the benchmark runs, the next call gets SIGPIPE (as any write to
 * a FIFO without a reader); ignore SIGPIPE to get -1 with errno EPIPE.
 *
 * Each call sends one line to tlbprof and waits for tlbprof's "ack" before
 * returning, so the counters are read exactly at the phase boundary. Where
 * tlbprof offers it (TLBPROF_MARKER_SHM is set: tlbprof 0.2 and later) and
 * the build has Linux's syscall() (any gnu -std mode, or _DEFAULT_SOURCE),
 * the line goes through a page of shared memory: the call publishes it, wakes
 * tlbprof (a NUL byte on the control FIFO) only when tlbprof sleeps, and
 * spins briefly on the answer before it sleeps on a futex; where tlbprof
 * also hands over its counters (TLBPROF_MARKER_COUNTERS), the call reads
 * them itself first (see struct tlbprof_marker_snap), and it reads its
 * clock from the vDSO. A call then costs a few microseconds instead of two
 * FIFO hops and a counter read from another CPU. Otherwise (an older tlbprof, a strict -std=c99 build, or
 * TLBPROF_MARKER_FIFO_ONLY defined) it writes to the control FIFO and reads
 * the ack FIFO, as the first version of this header did; tlbprof serves both. A phase may repeat: occurrences of the same name are
 * aggregated (like LIKWID or PAPI regions). Phases do not nest. Call the
 * markers from one thread at a time. Every translation unit that includes
 * this header keeps its own connection; that is fine as long as calls do not
 * overlap (a phase begun in one unit and ended in another is timed by
 * tlbprof alone). A program that closes file descriptors it did not open is
 * noticed: before each FIFO message (and before ringing the doorbell) the
 * connection checks that its descriptors are still the FIFOs, and opens them
 * again if not; the shared page is mapped, so closing fds cannot touch it. If
 * tlbprof dies while a call waits on the futex, the call notices within 100 ms
 * and returns -1 with errno EPIPE, and so does every later call, at once.
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

/* The shared-memory channel needs Linux's futex through syscall(), declared only outside strict ISO modes. */
#if defined(__linux__) && defined(__GNUC__) && !defined(TLBPROF_MARKER_FIFO_ONLY) && \
	(defined(__USE_MISC) || defined(_GNU_SOURCE) || defined(_DEFAULT_SOURCE))
#define TLBPROF_MARKER_HAVE_SHM 1
#include <elf.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#else
#define TLBPROF_MARKER_HAVE_SHM 0
#endif

#if !defined(CLOCK_MONOTONIC) || !defined(O_CLOEXEC)
#error "tlbprof/marker.h needs POSIX 2008: use a gnu -std mode, or define _POSIX_C_SOURCE=200809L before any #include"
#endif

/* Casts that C++ -Wold-style-cast accepts and C understands. */
#ifdef __cplusplus
#define TLBPROF_MARKER_CAST(type, value) static_cast<type>(value)
#define TLBPROF_MARKER_PTR(value) reinterpret_cast<uintptr_t>(value)
#define TLBPROF_MARKER_AT(type, addr) reinterpret_cast<type>(addr)
#else
#define TLBPROF_MARKER_CAST(type, value) ((type)(value))
#define TLBPROF_MARKER_PTR(value) ((uintptr_t)(value))
#define TLBPROF_MARKER_AT(type, addr) ((type)(addr))
#endif

#define TLBPROF_MARKER_PROTOCOL "tlbprof-marker/1"
/* The environment tlbprof run gives the benchmark: paths of the control and acknowledgement FIFOs. */
#define TLBPROF_MARKER_ENV_CTL "TLBPROF_MARKER_CTL"
#define TLBPROF_MARKER_ENV_ACK "TLBPROF_MARKER_ACK"
#define TLBPROF_MARKER_LINE_MAX 512
/* Where tlbprof offers the shared page; its doorbell is one NUL byte on the control FIFO (an empty line to it). */
#define TLBPROF_MARKER_ENV_SHM "TLBPROF_MARKER_SHM"
#define TLBPROF_MARKER_SHM_MAGIC 0x746c6231u	/* "tlb1" */

/*
 * The shared page (tlbprof creates it; one request at a time). The caller
 * writes line and len, then req = ack + 1; tlbprof handles it, writes reply
 * and sets ack = req. sleeping: tlbprof waits in poll() and must be woken
 * through the doorbell; waiting: the caller sleeps on the futex word ack.
 * Each side stores its own word and then loads the other's, both sequentially
 * consistent, so at least one of them sees the other (no lost wake-up).
 */
struct tlbprof_marker_shm {
	uint32_t magic, size;		/* TLBPROF_MARKER_SHM_MAGIC, sizeof(struct tlbprof_marker_shm) */
	int32_t owner;			/* tlbprof's pid: a caller waiting on a dead tlbprof gives up */
	uint32_t closed;		/* tlbprof has stopped serving */
	char pad0[48];
	uint32_t req;			/* requests posted (the caller) */
	uint32_t sleeping;		/* tlbprof waits in poll(): ring the doorbell */
	uint32_t len;			/* bytes in line */
	int32_t caller_cpu;		/* the CPU the caller posted from (-1: unknown) */
	char pad1[48];
	uint32_t ack;			/* requests answered (tlbprof); the caller's futex word */
	uint32_t waiting;		/* the caller sleeps on ack: tlbprof wakes it */
	int32_t server_cpu;		/* the CPU tlbprof answered on: spinning on the same one only delays it */
	char pad2[52];
	char line[TLBPROF_MARKER_LINE_MAX];
	char reply[TLBPROF_MARKER_LINE_MAX];
};

/*
 * Counter snapshots the caller takes itself. Where tlbprof offers them, the
 * shared file holds this struct right after struct tlbprof_marker_shm, and
 * TLBPROF_MARKER_COUNTERS lists tlbprof's counter groups as "FD:ID,..." (the
 * benchmark's own descriptors of the same events, and each leader's kernel
 * id). Before each request the caller reads every group (one read(2) each:
 * its own counters on its own CPU, where tlbprof's read of a running task
 * on another CPU costs an interrupt there) into counts and sets seq to the
 * request's number; tlbprof takes them for that request only, and reads the
 * counters itself when words is 0 or they do not decode. Before each read
 * the caller asks the descriptor for its event id (PERF_EVENT_IOC_ID): a
 * program that closed or reused it gets no read of its file, and tlbprof
 * reads from then on. A header without this part ignores it: the size of
 * the first struct is unchanged.
 */
#define TLBPROF_MARKER_ENV_COUNTERS "TLBPROF_MARKER_COUNTERS"
#define TLBPROF_MARKER_SNAP_MAGIC 0x746c6273u	/* "tlbs" */
#define TLBPROF_MARKER_GROUPS_MAX 8
#define TLBPROF_MARKER_SNAP_WORDS 512
/* linux/perf_event.h's PERF_EVENT_IOC_ID, without that header's anonymous unions (not ISO C99 or C++). */
#define TLBPROF_MARKER_IOC_ID _IOR('$', 7, uint64_t *)

struct tlbprof_marker_snap {
	uint32_t magic, size;		/* TLBPROF_MARKER_SNAP_MAGIC, sizeof(struct tlbprof_marker_snap) */
	uint32_t seq;			/* the request (req) these counts belong to */
	uint32_t words;			/* counts used; 0: none, tlbprof reads */
	uint64_t counts[TLBPROF_MARKER_SNAP_WORDS];	/* each group's read(2) answer, one after another */
};

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
	struct tlbprof_marker_shm *shm;	/* the shared page, NULL: the FIFOs */
	int shm_gone;		/* tlbprof stopped serving the page: every call fails with EPIPE */
	int bell;		/* the doorbell FIFO, -1 until first rung */
	dev_t bell_dev;
	ino_t bell_ino;
	/* The vDSO's own clock_gettime and getcpu (NULL: the system calls), looked up once. */
	int (*vdso_clock)(clockid_t, struct timespec *);
	long (*vdso_getcpu)(unsigned *, unsigned *, void *);
	struct tlbprof_marker_snap *snap;	/* where the caller's own counter reads go; NULL: tlbprof reads */
	int groups;				/* counter groups to read (0: none, or given up) */
	int group_fd[TLBPROF_MARKER_GROUPS_MAX];
	uint64_t group_id[TLBPROF_MARKER_GROUPS_MAX];
};

static inline struct tlbprof_marker_conn *tlbprof_marker_conn_(void)
{
	static struct tlbprof_marker_conn conn;
	return &conn;
}

#if TLBPROF_MARKER_HAVE_SHM
#if UINTPTR_MAX > 0xffffffffu
#define TLBPROF_MARKER_ELF(type) Elf64_##type
#define TLBPROF_MARKER_ST_TYPE(info) ELF64_ST_TYPE(info)
#else
#define TLBPROF_MARKER_ELF(type) Elf32_##type
#define TLBPROF_MARKER_ST_TYPE(info) ELF32_ST_TYPE(info)
#endif

/*
 * A function of the vDSO (the kernel's ELF image mapped into every
 * process), found through its program headers, dynamic section and DT_HASH
 * table as the kernel's own parse_vdso does; NULL when it has none of that
 * name (or no DT_HASH): the caller then makes the system call.
 */
static inline void *tlbprof_marker_vdso_(const char *name)
{
	uintptr_t base = TLBPROF_MARKER_CAST(uintptr_t, getauxval(AT_SYSINFO_EHDR)), bias = 0;
	const TLBPROF_MARKER_ELF(Ehdr) *eh = TLBPROF_MARKER_AT(const TLBPROF_MARKER_ELF(Ehdr) *, base);
	const TLBPROF_MARKER_ELF(Phdr) *ph;
	const TLBPROF_MARKER_ELF(Dyn) *dyn = NULL;
	const TLBPROF_MARKER_ELF(Sym) *sym = NULL;
	const char *str = NULL;
	const uint32_t *hash = NULL;
	int i, loaded = 0;

	if (!base || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return NULL;
	ph = TLBPROF_MARKER_AT(const TLBPROF_MARKER_ELF(Phdr) *, base + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !loaded) {
			bias = base + ph[i].p_offset - ph[i].p_vaddr;
			loaded = 1;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = TLBPROF_MARKER_AT(const TLBPROF_MARKER_ELF(Dyn) *, base + ph[i].p_offset);
		}
	}
	for (; loaded && dyn && dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_SYMTAB)
			sym = TLBPROF_MARKER_AT(const TLBPROF_MARKER_ELF(Sym) *, bias + dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_STRTAB)
			str = TLBPROF_MARKER_AT(const char *, bias + dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_HASH)
			hash = TLBPROF_MARKER_AT(const uint32_t *, bias + dyn->d_un.d_ptr);
	}
	if (!sym || !str || !hash)
		return NULL;
	/* hash[1] is nchain: as many as there are symbols. */
	for (uint32_t k = 0; k < hash[1]; k++)
		if (sym[k].st_name && sym[k].st_shndx != SHN_UNDEF && TLBPROF_MARKER_ST_TYPE(sym[k].st_info) == STT_FUNC &&
		    strcmp(str + sym[k].st_name, name) == 0)
			return TLBPROF_MARKER_AT(void *, bias + sym[k].st_value);
	return NULL;
}

/* The vDSO's clock_gettime and getcpu, into c (the names x86, arm64 and riscv give them). */
static inline void tlbprof_marker_vdso_find_(struct tlbprof_marker_conn *c)
{
	void *clock = tlbprof_marker_vdso_("__vdso_clock_gettime");
	void *cpu = tlbprof_marker_vdso_("__vdso_getcpu");

	if (!clock)
		clock = tlbprof_marker_vdso_("__kernel_clock_gettime");
	/* Object to function pointer through memcpy: ISO C has no cast between them. */
	if (clock)
		memcpy(&c->vdso_clock, &clock, sizeof(clock));
	if (cpu)
		memcpy(&c->vdso_getcpu, &cpu, sizeof(cpu));
}
#endif

/*
 * CLOCK_MONOTONIC in ns. Where the shared channel is built, straight from
 * the vDSO (or the system call), not through libc's clock_gettime(): tlbprof
 * run traces the benchmark's calls of that (uprobes: a trap each), and the
 * marker's own clock reads are neither the benchmark's nor worth a trap.
 */
static inline uint64_t tlbprof_marker_now_ns_(void)
{
	struct timespec ts;
#if TLBPROF_MARKER_HAVE_SHM
	struct tlbprof_marker_conn *c = tlbprof_marker_conn_();
	if (c->vdso_clock ? c->vdso_clock(CLOCK_MONOTONIC, &ts) != 0
			  : syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts) != 0)
#endif
		clock_gettime(CLOCK_MONOTONIC, &ts);
	return TLBPROF_MARKER_CAST(uint64_t, ts.tv_sec) * 1000000000u + TLBPROF_MARKER_CAST(uint64_t, ts.tv_nsec);
}

#if TLBPROF_MARKER_HAVE_SHM
/* The counter groups TLBPROF_MARKER_COUNTERS names ("FD:ID,..."), into c; none when it is malformed. */
static inline void tlbprof_marker_groups_(struct tlbprof_marker_conn *c)
{
	const char *s = getenv(TLBPROF_MARKER_ENV_COUNTERS);
	int n = 0;

	while (s && *s && n < TLBPROF_MARKER_GROUPS_MAX) {
		char *end;
		unsigned long fd = strtoul(s, &end, 10);
		if (end == s || *end != ':' || fd > 1u << 30)
			return;
		s = end + 1;
		unsigned long long id = strtoull(s, &end, 10);
		if (end == s || (*end != ',' && *end != '\0'))
			return;
		if (*end == ',' && !end[1])
			return;
		c->group_fd[n] = TLBPROF_MARKER_CAST(int, fd);
		c->group_id[n++] = TLBPROF_MARKER_CAST(uint64_t, id);
		s = *end ? end + 1 : end;
	}
	if (s && !*s)
		c->groups = n;
}

/* Map the shared page tlbprof offers; 0, or -1 (none offered, or not one this header speaks). */
static inline int tlbprof_marker_map_(struct tlbprof_marker_conn *c)
{
	const char *path = getenv(TLBPROF_MARKER_ENV_SHM);
	const char *bell = getenv(TLBPROF_MARKER_ENV_CTL);
	size_t size = sizeof(struct tlbprof_marker_shm);
	struct stat st;
	void *p;
	int fd;

	if (!path || !*path || !bell || !*bell)
		return -1;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || st.st_size < TLBPROF_MARKER_CAST(off_t, sizeof(struct tlbprof_marker_shm))) {
		close(fd);
		return -1;
	}
	/* The snapshot part follows where the file holds it. */
	if (st.st_size >= TLBPROF_MARKER_CAST(off_t, size + sizeof(struct tlbprof_marker_snap)))
		size += sizeof(struct tlbprof_marker_snap);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);	/* the mapping stays: a program that closes every fd cannot cut it */
	if (p == MAP_FAILED)
		return -1;
	c->shm = TLBPROF_MARKER_CAST(struct tlbprof_marker_shm *, p);
	if (c->shm->magic != TLBPROF_MARKER_SHM_MAGIC || c->shm->size != sizeof(struct tlbprof_marker_shm)) {
		munmap(p, size);
		c->shm = NULL;
		return -1;
	}
	c->bell = -1;
	c->snap = NULL;
	c->groups = 0;
	if (size > sizeof(struct tlbprof_marker_shm)) {
		struct tlbprof_marker_snap *snap = TLBPROF_MARKER_CAST(struct tlbprof_marker_snap *,
								      TLBPROF_MARKER_CAST(void *, c->shm + 1));
		if (snap->magic == TLBPROF_MARKER_SNAP_MAGIC && snap->size == sizeof(*snap)) {
			c->snap = snap;
			tlbprof_marker_groups_(c);
		}
	}
	return 0;
}

/*
 * Read every counter group into the snapshot for request seq: 0 words when
 * any group is no longer tlbprof's (closed or reused: asked by its id
 * first, so another file is never read), and none again after that.
 */
static inline void tlbprof_marker_snap_(struct tlbprof_marker_conn *c, uint32_t seq)
{
	struct tlbprof_marker_snap *p = c->snap;
	size_t words = 0;
	int i;

	if (!p)
		return;
	for (i = 0; i < c->groups; i++) {
		uint64_t id = 0;
		ssize_t n;
		if (ioctl(c->group_fd[i], TLBPROF_MARKER_IOC_ID, &id) != 0 || id != c->group_id[i])
			break;
		n = read(c->group_fd[i], p->counts + words, (TLBPROF_MARKER_SNAP_WORDS - words) * sizeof(uint64_t));
		if (n <= 0 || n % 8 != 0)
			break;
		words += TLBPROF_MARKER_CAST(size_t, n) / 8;
	}
	if (i < c->groups) {
		c->groups = 0;
		words = 0;
	}
	p->words = TLBPROF_MARKER_CAST(uint32_t, words);
	p->seq = seq;
}
#endif

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
		c->ctl = c->ack = c->bell = -1;
		c->shm = NULL;
		c->snap = NULL;
		c->groups = 0;
		c->vdso_clock = NULL;
		c->vdso_getcpu = NULL;
#if TLBPROF_MARKER_HAVE_SHM
		tlbprof_marker_vdso_find_(c);
#endif
		if (
#if TLBPROF_MARKER_HAVE_SHM
		    tlbprof_marker_map_(c) == 0 ||
#endif
		    tlbprof_marker_open_(c) == 0) {
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

/* Which channel the calls use: "shm" (the shared page), "fifo" (the FIFOs) or "none" (outside tlbprof run). */
static inline const char *tlbprof_marker_channel(void)
{
	if (!tlbprof_marker_active())
		return "none";
	return tlbprof_marker_conn_()->shm ? "shm" : "fifo";
}

#if TLBPROF_MARKER_HAVE_SHM
static inline void tlbprof_marker_relax_(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/*
 * Wake tlbprof from its poll(): one NUL byte on the control FIFO, which its
 * line reader skips as an empty line (full: it has bytes to wake it already).
 */
static inline int tlbprof_marker_ring_(struct tlbprof_marker_conn *c)
{
	const char *path = getenv(TLBPROF_MARKER_ENV_CTL);
	struct stat st;
	char one = 0;

	if (c->bell < 0 || !tlbprof_marker_same_(c->bell, c->bell_dev, c->bell_ino)) {
		/* First ring, or the program closed and reused the descriptor: never write into its file. */
		c->bell = path ? open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC) : -1;
		if (c->bell < 0 || fstat(c->bell, &st) != 0)
			return -1;
		c->bell_dev = st.st_dev;
		c->bell_ino = st.st_ino;
	}
	while (write(c->bell, &one, 1) < 0) {
		if (errno == EAGAIN)
			break;
		if (errno != EINTR)
			return -1;
	}
	return 0;
}

/*
 * One request over the shared page: publish it, ring only when tlbprof
 * sleeps, spin on the answer for up to 100 µs (tlbprof's handling is a
 * counter read), then sleep on the futex in 100 ms steps, giving up when
 * tlbprof is gone. 0 on "ack", -1 with errno.
 */
static inline int tlbprof_marker_shm_send_(struct tlbprof_marker_conn *c, const char *line, size_t len)
{
	struct tlbprof_marker_shm *s = c->shm;
	uint32_t seq = __atomic_load_n(&s->ack, __ATOMIC_ACQUIRE) + 1u;
	uint64_t t0 = 0;
	unsigned spins = 0;

	if (c->shm_gone) {
		errno = EPIPE;
		return -1;
	}
	unsigned cpu = 0;
	long got = c->vdso_getcpu ? c->vdso_getcpu(&cpu, NULL, NULL) : syscall(SYS_getcpu, &cpu, NULL, NULL);
	int here = got == 0 ? TLBPROF_MARKER_CAST(int, cpu) : -1;

	memcpy(s->line, line, len);
	s->len = TLBPROF_MARKER_CAST(uint32_t, len);
	s->caller_cpu = here;
	tlbprof_marker_snap_(c, seq);
	__atomic_store_n(&s->req, seq, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->sleeping, __ATOMIC_SEQ_CST) && tlbprof_marker_ring_(c) != 0)
		return -1;
	/* Spin only where tlbprof runs on another CPU: on this one it could not answer while we spin. */
	while (__atomic_load_n(&s->ack, __ATOMIC_ACQUIRE) != seq &&
	       (here < 0 || __atomic_load_n(&s->server_cpu, __ATOMIC_RELAXED) != here)) {
		if (++spins % 64 == 0) {
			uint64_t now = tlbprof_marker_now_ns_();
			if (!t0)
				t0 = now;
			else if (now - t0 > 100000u)
				break;
		}
		tlbprof_marker_relax_();
	}
	while (__atomic_load_n(&s->ack, __ATOMIC_ACQUIRE) != seq) {
		struct timespec step = { 0, 100000000 };
		uint32_t seen;
		int gone = 0;
		__atomic_store_n(&s->waiting, 1u, __ATOMIC_SEQ_CST);
		seen = __atomic_load_n(&s->ack, __ATOMIC_SEQ_CST);
		if (seen == seq)
			break;
		if (__atomic_load_n(&s->closed, __ATOMIC_ACQUIRE))
			gone = 1;
		else if (syscall(SYS_futex, &s->ack, FUTEX_WAIT, seen, &step, NULL, 0) != 0 && errno == ETIMEDOUT)
			gone = kill(s->owner, 0) != 0 && errno == ESRCH;
		if (gone) {
			__atomic_store_n(&s->waiting, 0u, __ATOMIC_RELAXED);
			c->shm_gone = 1;
			errno = EPIPE;
			return -1;
		}
	}
	__atomic_store_n(&s->waiting, 0u, __ATOMIC_RELAXED);
	if (strncmp(s->reply, "ack", 4) != 0) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}
#endif

/* Send one line and wait for the answer: 0 on "ack", -1 with errno (EPROTO: tlbprof refused it). */
static inline int tlbprof_marker_send_(const char *line, size_t len)
{
	struct tlbprof_marker_conn *c = tlbprof_marker_conn_();
	char reply[TLBPROF_MARKER_LINE_MAX];
	size_t off = 0;

#if TLBPROF_MARKER_HAVE_SHM
	if (c->shm)
		return tlbprof_marker_shm_send_(c, line, len);
#endif
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
