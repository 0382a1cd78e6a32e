/* SPDX-License-Identifier: MIT */
/* What CPUID says about the machine: TLB geometry (leaves 2, 0x18, AMD's 0x8000000x), CPU signature, hypervisor. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct environment;

/*
 * TLB geometry for data accesses from CPUID; 0 = not reported. A fully
 * associative structure reports ways == entries. Where the CPU enumerates
 * several structures for one level and page size (Intel leaf 0x18: e.g. two
 * 8-way STLB arrays that both hold 4K pages), entries add up, and so do the
 * ways when the arrays have the same number of sets; ways is 0 when they do not.
 */
struct env_tlb {
	unsigned l1d_4k_entries, l1d_4k_ways;
	unsigned l1d_2m_entries, l1d_2m_ways;
	unsigned l1d_1g_entries, l1d_1g_ways;
	unsigned l2d_4k_entries, l2d_4k_ways;	/* L2/STLB, shared or data */
	unsigned l2d_2m_entries, l2d_2m_ways;
	unsigned l2d_1g_entries, l2d_1g_ways;
	char source[48];	/* "cpuid 0x80000005/6", "cpuid 0x18", "none" */
};

/* Every count field of struct env_tlb, for code that handles them all alike (report writer and reader). */
#define ENV_TLB_FIELDS(X)                                                                       \
	X(l1d_4k_entries) X(l1d_4k_ways) X(l1d_2m_entries) X(l1d_2m_ways) X(l1d_1g_entries)     \
	X(l1d_1g_ways) X(l2d_4k_entries) X(l2d_4k_ways) X(l2d_2m_entries) X(l2d_2m_ways)        \
	X(l2d_1g_entries) X(l2d_1g_ways)

/*
 * Decode CPUID TLB geometry from recorded register values (pure; testable).
 * leaf_fn(ctx, leaf, subleaf, regs[4]) returns false when the leaf is absent.
 * vendor is the CPUID vendor string.
 */
typedef bool (*env_cpuid_fn)(void *ctx, uint32_t leaf, uint32_t subleaf, uint32_t regs[4]);
/*
 * regs[] is {EAX, EBX, ECX, EDX}. "AuthenticAMD" and "HygonGenuine" decode
 * leaves 0x80000005/6 and 0x80000019; every other vendor decodes leaf 0x18
 * and, only when that enumerates no data TLB, the legacy leaf 2 descriptors
 * (cpuid.c lists the ones it knows). out->source names the leaves used,
 * or "none" when nothing was reported. Never fails; out is fully overwritten.
 */
void environment_decode_tlb(const char *vendor, env_cpuid_fn leaf_fn, void *ctx, struct env_tlb *out);

/* Family, model and stepping from CPUID.1:EAX, with the extended fields applied as Intel and AMD define. */
void env_decode_cpu_signature(uint32_t eax, unsigned *family, unsigned *model, unsigned *stepping);

/*
 * Name of the hypervisor whose CPUID 0x40000000 signature (EBX, ECX, EDX as
 * 12 bytes) is sig: "KVMKVMKVM\0\0\0" -> "KVM", "Microsoft Hv" -> "Hyper-V",
 * "VMwareVMware" -> "VMware", "XenVMMXenVMM" -> "Xen", "TCGTCGTCGTCG" -> "QEMU TCG";
 * an unknown signature is copied (printable bytes, trailing NULs and spaces
 * dropped); an empty one gives "unknown". Always NUL-terminates out.
 */
void env_hypervisor_name(const char sig[12], char *out, size_t out_size);

/*
 * Fill env's CPU vendor, family, model, stepping, brand string, hypervisor
 * and TLB geometry from this CPU's CPUID. Returns false, env untouched, where
 * there is no CPUID (not x86): /proc/cpuinfo then has to do.
 */
bool env_cpuid_collect(struct environment *env);
