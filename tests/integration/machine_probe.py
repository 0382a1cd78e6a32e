# SPDX-License-Identifier: MIT
"""What this machine's kernel does, probed where a test's expectation depends on it."""
import ctypes
import mmap


def _vma_rss_kib(start, end):
    """The Rss (KiB) of the mapping that spans exactly [start, end), or None when no mapping is exactly that: a
    mapping merged with a neighbour would add the neighbour's pages to the figure."""
    want, inside, rss = "%x-%x" % (start, end), False, None
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0] if line.strip() else ""
            if "-" in head and not line.endswith("kB\n"):
                inside = head == want
            elif inside and line.startswith("Rss:"):
                rss = int(line.split()[1])
    return rss


def zero_page_rss_kib(pages=64):
    """The Rss (KiB, None if its mapping was not found alone) of `pages` fresh private anonymous pages after one
    read of each, and their size (KiB): about 0 where a read fault maps the shared zero page, all of them where
    the kernel gives each page a frame of its own (a paravirtual guest's kernel can turn the zero page off:
    pvm_no_zero_page=1 on the kernel command line).

    The pages sit between two PROT_NONE guard pages of the same mapping, so the kernel cannot merge them with a
    neighbouring anonymous mapping (a merged VMA read 476 KiB resident for a 256 KiB probe), and the figure is
    taken only from a mapping that spans exactly the probed pages."""
    size = pages * mmap.PAGESIZE
    m = mmap.mmap(-1, size + 2 * mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    view = ctypes.c_char.from_buffer(m)
    base = ctypes.addressof(view)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    rss = None
    if libc.mprotect(base, mmap.PAGESIZE, 0) == 0 and libc.mprotect(base + mmap.PAGESIZE + size, mmap.PAGESIZE,
                                                                    0) == 0:
        sum(m[i] for i in range(mmap.PAGESIZE, mmap.PAGESIZE + size, mmap.PAGESIZE))
        rss = _vma_rss_kib(base + mmap.PAGESIZE, base + mmap.PAGESIZE + size)
    del view
    m.close()
    return rss, size // 1024


def zero_page_on_read(rss_kib, size_kib):
    """Whether the probe's reads landed on the zero page: under half the pages resident after reading each. None
    (the probe found no mapping of its own) counts as the zero page, the kernel's default."""
    return rss_kib is None or rss_kib <= size_kib // 2
