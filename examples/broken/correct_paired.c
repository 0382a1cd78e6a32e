/* SPDX-License-Identifier: MIT */
/*
 * Correct, timed as Google Benchmark times a benchmark: a timer that reads two clocks, the elapsed time and the
 * thread's CPU time, when a run of the timed loop starts and again when it stops, runs growing tenfold until one
 * has timed 50 ms, and the setup between a run's stop and the next start, untimed, in the same function as the
 * timed chase. By default each run maps a fresh region and writes its chain (the first touch of every page) before
 * its start, as the code before `for (auto _ : state)` does. Built with -DPAUSED, one region's chain is written
 * again before each pass of a run, between a PauseTiming() and a ResumeTiming(): the first writing is the first
 * touch of every page, and a writing costs about what a timed pass does. Built with -DDELETED, broken: the chase's
 * last pointer is never used, so at -O2 the timed loop is deleted, and each run's start and stop are back to back
 * between the setups (Google Benchmark's loop without benchmark::DoNotOptimize()).
 */
#include "broken.h"

struct timer {
	uint64_t real, cpu;		/* at the last start */
	uint64_t real_used, cpu_used;	/* between starts and stops */
};

static void read_clocks(uint64_t *real, uint64_t *cpu)
{
	struct timespec ts;

	*real = now_ns();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	*cpu = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void timer_start(struct timer *t)
{
	read_clocks(&t->real, &t->cpu);
}

static void timer_stop(struct timer *t)
{
	uint64_t real, cpu;

	read_clocks(&real, &cpu);
	t->real_used += real - t->real;
	t->cpu_used += cpu - t->cpu;
}

/* One run of passes over the chain, its setup and its timing in the one function. */
static __attribute__((noinline)) void *run(struct timer *t, uint64_t passes, char *region, uint32_t *order,
					   size_t pages, uint64_t *seed)
{
	void **p = NULL;
#ifdef PAUSED
	timer_start(t);
	for (uint64_t i = 0; i < passes; i++) {
		timer_stop(t);		/* PauseTiming() */
		p = write_chain(region, order, pages, seed);
		timer_start(t);		/* ResumeTiming() */
		for (size_t k = 0; k < pages; k++)
			p = (void **)*p;
	}
	timer_stop(t);
#else
	char *base = mmap(NULL, REGION_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)region;
	if (base == MAP_FAILED)
		exit(1);
	madvise(base, REGION_BYTES, MADV_NOHUGEPAGE);
	p = write_chain(base, order, pages, seed);
	timer_start(t);
	for (uint64_t i = 0; i < passes * pages; i++)
		p = (void **)*p;
	timer_stop(t);
#ifdef DELETED
	p = NULL;	/* the chase's result is dropped: the loop goes with it */
#else
	p = (void **)((uintptr_t)p - (uintptr_t)base);	/* a value that outlives the region */
#endif
	munmap(base, REGION_BYTES);
#endif
	return p;
}

int main(void)
{
	size_t pages = REGION_BYTES / PAGE;
	uint32_t *order = page_order(pages, 23);
	uint64_t seed = 29, passes = 1;
	char *region = NULL;
	struct timer t;
	void *sink = NULL;

	pin_self();
#ifdef PAUSED
	region = mmap(NULL, REGION_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		return 1;
	madvise(region, REGION_BYTES, MADV_NOHUGEPAGE);
#endif
	for (;; passes *= 10) {
		t = (struct timer){ 0 };
		sink = run(&t, passes, region, order, pages, &seed);
		if (t.real_used >= 50000000 || passes >= 1000)
			break;
	}
	say(
#ifdef PAUSED
		"correct_paused",
#elif defined(DELETED)
		"deleted_paired",
#else
		"correct_paired",
#endif
		passes * pages, t.real_used, (uintptr_t)sink);
	printf("cpu time %.1f %% of the elapsed\n", 100.0 * (double)t.cpu_used / (double)t.real_used);
	free(order);
	return 0;
}
