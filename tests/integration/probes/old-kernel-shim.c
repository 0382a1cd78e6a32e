// SPDX-License-Identifier: MIT
/*
 * LD_PRELOAD shim: perf_event_open() as a kernel before 6.12 answers it, which refuses inherit with PERF_SAMPLE_READ
 * (EINVAL). Every other call goes to libc's syscall(). tlbprof run's watch then opens its cpu-clock without counts
 * and weighs each sample by the period its thread's event was set to (test_run.py). syscall() is variadic: the six
 * argument registers are passed on as they came, as libc's own wrapper reads them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <sys/syscall.h>

long syscall(long number, ...);

long syscall(long number, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;

	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == __NR_perf_event_open) {
		const struct perf_event_attr *attr = (const struct perf_event_attr *)a[0];
		if (attr && attr->inherit && (attr->sample_type & PERF_SAMPLE_READ)) {
			errno = EINVAL;
			return -1;
		}
	}
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
