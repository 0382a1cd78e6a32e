// SPDX-License-Identifier: MIT
/*
 * A random chase under Google Benchmark (libbenchmark), as people write one, one benchmark per build:
 *   GBENCH_SETUP: correct; each run maps a fresh region and writes its chain (the first touch of every page) before
 *     `for (auto _ : state)`, untimed: the library runs the function again for each run it sizes;
 *   GBENCH_PAUSED: correct; one region, its chain written again between PauseTiming() and ResumeTiming() before each
 *     timed pass: the first writing is the first touch of every page;
 *   GBENCH_FIRST_TOUCH: broken; a fresh region mapped and written inside the timed loop, every iteration: each
 *     iteration times 8192 page faults with its pass;
 *   GBENCH_DELETED: broken; GBENCH_SETUP without benchmark::DoNotOptimize(): the chase's result is never used, so at
 *     -O2 the loop is deleted, each run's start and stop are back to back, and the library sizes its runs up to its
 *     cap of a billion iterations, the setup between every two.
 * The library reads the elapsed time and the thread's CPU time at each start and stop of its timer.
 */
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>

#include "broken.h"

namespace {

constexpr size_t kPages = REGION_BYTES / PAGE;

char *map_region()
{
	void *p = mmap(nullptr, REGION_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		std::abort();
	madvise(p, REGION_BYTES, MADV_NOHUGEPAGE);
	return static_cast<char *>(p);
}

void BM_chase(benchmark::State &state)
{
	uint32_t *order = page_order(kPages, 31);
	uint64_t seed = 37;
#if defined(GBENCH_SETUP) || defined(GBENCH_DELETED)
	char *base = map_region();
	void **p = write_chain(base, order, kPages, &seed);
	for (auto _ : state) {
		for (size_t k = 0; k < kPages; k++)
			p = static_cast<void **>(*p);
#ifndef GBENCH_DELETED
		benchmark::DoNotOptimize(p);
#endif
	}
	munmap(base, REGION_BYTES);
#elif defined(GBENCH_PAUSED)
	char *base = map_region();
	for (auto _ : state) {
		state.PauseTiming();
		void **p = write_chain(base, order, kPages, &seed);
		state.ResumeTiming();
		for (size_t k = 0; k < kPages; k++)
			p = static_cast<void **>(*p);
		benchmark::DoNotOptimize(p);
	}
	munmap(base, REGION_BYTES);
#elif defined(GBENCH_FIRST_TOUCH)
	for (auto _ : state) {
		char *base = map_region();
		void **p = write_chain(base, order, kPages, &seed);
		for (size_t k = 0; k < kPages; k++)
			p = static_cast<void **>(*p);
		benchmark::DoNotOptimize(p);
		munmap(base, REGION_BYTES);
	}
#else
#error "build with GBENCH_SETUP, GBENCH_PAUSED, GBENCH_FIRST_TOUCH or GBENCH_DELETED"
#endif
	state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kPages));
	std::free(order);
}

}  // namespace

BENCHMARK(BM_chase)->MinTime(0.1);

int main(int argc, char **argv)
{
	pin_self();
	benchmark::Initialize(&argc, argv);
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	return 0;
}
