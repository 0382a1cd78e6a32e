/* SPDX-License-Identifier: MIT */
/* C++ and legacy Rust symbol names as people read them, through the C++ runtime's own demangler. */
#pragma once

/*
 * The demangled form of an Itanium C++ ABI name ("_ZNK5bench5Chase3runEl":
 * "bench::Chase::run(long) const"), malloc'd; NULL for a name that is not
 * one, one the demangler refuses, or where no C++ runtime (libstdc++.so.6,
 * loaded on first use) is installed.
 */
char *demangle(const char *name);
