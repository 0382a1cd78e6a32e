// SPDX-License-Identifier: MIT
// Trap: the sequential one, in C++: the hot loop is a template member whose mangled name (135 bytes) outgrows
// the report's fields; tlbprof matches faults against the whole name and shows it demangled, as perf does.
#include "broken.h"

namespace memory_latency_benchmark_suite_for_address_translation {
namespace first_touch_page_walkers {
template <typename Element, unsigned Stride>
struct ascending_first_touch_walker {
	__attribute__((noinline)) static uint64_t walk(Element *buf, size_t pages, int reps)
	{
		uint64_t sum = 0;

		for (int rep = 0; rep < reps; rep++)
			for (size_t i = 0; i < pages; i++)
				sum += ++buf[i * Stride + (i % 64) * 64];
		return sum;
	}
};
}  // namespace first_touch_page_walkers
}  // namespace memory_latency_benchmark_suite_for_address_translation

int main()
{
	size_t pages = REGION_BYTES / PAGE;
	char *buf = static_cast<char *>(malloc(REGION_BYTES));

	pin_self();
	uint64_t t0 = now_ns();
	using walker = memory_latency_benchmark_suite_for_address_translation::first_touch_page_walkers::
		ascending_first_touch_walker<char, PAGE>;
	uint64_t sum = walker::walk(buf, pages, 200);
	say("sequential_cxx", 200 * (uint64_t)pages, now_ns() - t0, sum);
	return 0;
}
