/* SPDX-License-Identifier: MIT */
/*
 * perf shows C++ functions demangled, and so does tlbprof: a template's
 * mangled name is unreadable, and longer than the report's fields. The
 * demangler is the C++ runtime's own abi::__cxa_demangle, loaded with
 * dlopen() the first time a mangled name is shown, so that tlbprof, a C
 * program, neither links libstdc++ nor loads it for C benchmarks.
 */
#include "pmu/demangle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

typedef char *(*cxa_demangle_fn)(const char *mangled, char *out, size_t *len, int *status);

static cxa_demangle_fn cxa_demangle;
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static void load(void)
{
	void *lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

	/* Kept open for the process's life: the names it returns are ours, the code is not. */
	if (lib)
		*(void **)&cxa_demangle = dlsym(lib, "__cxa_demangle");
}

char *demangle(const char *name)
{
	int status = -1;
	char *out;

	/* Itanium names begin _Z (a function-local entity or a clone: _ZZ..., ...clone.0 suffixes kept by it). */
	if (!name || strncmp(name, "_Z", 2) != 0)
		return NULL;
	(void)pthread_once(&loaded, load);
	if (!cxa_demangle)
		return NULL;
	out = cxa_demangle(name, NULL, NULL, &status);
	return status == 0 ? out : NULL;
}
