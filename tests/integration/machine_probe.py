# SPDX-License-Identifier: MIT
"""What this machine's kernel does, probed where a test's expectation depends on it."""
import ctypes
import mmap


def zero_page_rss_kib(pages=64):
    """The Rss (KiB, None if its mapping was not found) of `pages` fresh private anonymous pages after one read of
    each, and their size (KiB): about 0 where a read fault maps the shared zero page, all of them where the kernel
    gives each page a frame of its own (a paravirtual guest's kernel can turn the zero page off: pvm_no_zero_page=1
    on the kernel command line)."""
    m = mmap.mmap(-1, pages * mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    view = ctypes.c_char.from_buffer(m)
    start = "%x-" % ctypes.addressof(view)
    sum(m[i] for i in range(0, pages * mmap.PAGESIZE, mmap.PAGESIZE))
    rss, inside = None, False
    with open("/proc/self/smaps") as f:
        for line in f:
            if "-" in line.split()[0] and not line.endswith("kB\n"):
                inside = line.startswith(start)
            elif inside and line.startswith("Rss:"):
                rss = int(line.split()[1])
    del view
    m.close()
    return rss, pages * mmap.PAGESIZE // 1024


def zero_page_on_read(rss_kib, size_kib):
    """Whether the probe's reads landed on the zero page: under half the pages resident after reading each."""
    return rss_kib is not None and rss_kib <= size_kib // 2
