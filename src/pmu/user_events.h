/* SPDX-License-Identifier: MIT */
/*
 * Events the user asks for by name (-e/--event, as perf stat's -e): a
 * libpfm4 name ("skx::DTLB_LOAD_MISSES:STLB_HIT", "perf::PERF_COUNT_HW_CACHE_DTLB:READ:MISS"),
 * perf's raw form "cpu/event=0x08,umask=0x20,cmask=1/", or "rNNNN".
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define USER_EVENT_MAX 160

/*
 * Split a -e list at the commas outside cpu/.../ into items (each at most
 * USER_EVENT_MAX - 1 bytes). The count, or -EINVAL (an empty item, one too
 * long, an unclosed '/', more than max) with why.
 */
int user_event_split(const char *list, char items[][USER_EVENT_MAX], size_t max, char *why, size_t why_len);

/*
 * perf's raw forms into a PERF_TYPE_RAW config, with x86's layout (the
 * kernel's /sys/bus/event_source/devices/cpu/format: event config:0-7 and
 * 32-35, umask 8-15, edge 18, inv 23, cmask 24-31; "config=" sets it whole).
 * 1 and *config when spec is one; 0 when it is not raw (a libpfm4 name);
 * -EINVAL with why when it is raw but malformed.
 */
int user_event_parse_raw(const char *spec, uint64_t *config, char *why, size_t why_len);
