/* SPDX-License-Identifier: MIT */
/* The kernel backend of the counters, and the one switch between it and a model. */
#include "pmu/backend.h"

#include "pmu/perf_open.h"

#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

static int kernel_ioctl(int fd, unsigned long request, unsigned long arg)
{
	return ioctl(fd, request, arg);
}

static ssize_t kernel_read(int fd, void *buf, size_t len)
{
	return read(fd, buf, len);
}

static void *kernel_map(int fd, size_t len)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
}

/*
 * Whether the kernel exposes a core PMU at all. Without one (a VM whose
 * hypervisor hides the PMU) there is no "cpu" event source in sysfs and every
 * hardware event fails with ENOENT, whatever libpfm4 thinks the CPU is.
 */
static bool kernel_has_core_pmu(void)
{
	static const char *const names[] = { "cpu", "cpu_core", "cpu_atom" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[96];
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s", names[i]);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}

const struct pmu_backend pmu_backend_kernel = {
	.name = "kernel",
	.open = perf_open,
	.ioctl = kernel_ioctl,
	.read = kernel_read,
	.close = close,
	.map = kernel_map,
	.has_core_pmu = kernel_has_core_pmu,
};

static const struct pmu_backend *current = &pmu_backend_kernel;

const struct pmu_backend *pmu_backend(void)
{
	return current;
}

void pmu_backend_set(const struct pmu_backend *b)
{
	current = b ? b : &pmu_backend_kernel;
}
