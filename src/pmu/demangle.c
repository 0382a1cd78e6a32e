/* SPDX-License-Identifier: MIT */
/*
 * perf shows C++ functions demangled, and so does tlbprof: a template's
 * mangled name is unreadable, and longer than the report's fields. The
 * demangler is the C++ runtime's own abi::__cxa_demangle, loaded with
 * dlopen() the first time a mangled name is shown, so that tlbprof, a C
 * program, neither links libstdc++ nor loads it for C benchmarks. Rust's
 * legacy names are Itanium names with a hash and escapes (rust_legacy());
 * its v0 names (_R...) are shown as they are.
 */
#include "pmu/demangle.h"

#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
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

/* Whether s ends in a Rust legacy name's hash, "::h" and 16 hex digits; where it starts, or NULL. */
static char *rust_hash(char *s)
{
	size_t n = strlen(s);

	if (n < 19 || strncmp(s + n - 19, "::h", 3) != 0)
		return NULL;
	for (size_t i = n - 16; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return NULL;
	return s + n - 19;
}

/*
 * A Rust legacy name as rustc-demangle and perf show it, in place: without the trailing hash, "$LT$" and the other
 * escapes of characters an Itanium name cannot hold decoded, ".." as "::" ("std::rt::lang_start::{{closure}}"
 * for _ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h6da2fe1e9562590cE). The output is never longer;
 * returns s.
 */
static char *rust_legacy(char *s)
{
	static const struct {
		const char *code;
		char c;
	} esc[] = { { "SP", '@' }, { "BP", '*' }, { "RF", '&' }, { "LT", '<' }, { "GT", '>' },
		    { "LP", '(' }, { "RP", ')' }, { "C", ',' } };
	char *hash = rust_hash(s), *o = s;

	if (!hash)
		return s;
	*hash = '\0';
	for (const char *i = s; *i;) {
		if (i[0] == '_' && i[1] == '$' && (o == s || (o - s >= 2 && o[-1] == ':' && o[-2] == ':'))) {
			i++;	/* a component that begins with an escape is written with an underscore before it */
			continue;
		}
		const char *end = *i == '$' ? strchr(i + 1, '$') : NULL;
		size_t len = end ? (size_t)(end - i - 1) : 0;	/* between the two $ */
		int c = -1;
		if (end && i[1] == 'u' && len >= 2 && len <= 3 && isxdigit((unsigned char)i[2]) &&
		    (len == 2 || isxdigit((unsigned char)i[3]))) {
			char hex[3] = { i[2], len == 3 ? i[3] : '\0', '\0' };
			c = (int)strtol(hex, NULL, 16);
			c = c >= 0x20 && c < 0x7f ? c : -1;
		}
		for (size_t k = 0; end && c < 0 && k < sizeof(esc) / sizeof(esc[0]); k++)
			if (len == strlen(esc[k].code) && strncmp(i + 1, esc[k].code, len) == 0)
				c = (unsigned char)esc[k].c;
		if (c >= 0) {
			*o++ = (char)c;
			i = end + 1;
		} else if (i[0] == '.' && i[1] == '.') {
			*o++ = ':';
			*o++ = ':';
			i += 2;
		} else {
			*o++ = *i++;
		}
	}
	*o = '\0';
	return s;
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
	return status == 0 ? rust_legacy(out) : NULL;
}
