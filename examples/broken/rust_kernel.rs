// SPDX-License-Identifier: MIT
//! The first-touch trap in Rust, and its correct twin. `vec![0u8; n]` asks the allocator for zeroed memory, which
//! for 32 MiB is a fresh mapping whose pages nobody has touched: built with `--cfg first_touch`, the timed loop's
//! first pass takes every page fault. Without it, every page is written before the timing. The timed loop is a
//! crate function (a legacy-mangled name with a hash: `_ZN..5touch17h<16 hex>E`), timed with `Instant`, which reads
//! CLOCK_MONOTONIC through the C library's clock_gettime.
use std::time::Instant;

const PAGE: usize = 4096;
const BYTES: usize = 32 << 20;
/// Passes of the timed loop: 1000, some 60 ms. With 100 (8 ms), on a Zen 5 guest whose first touches wait for the
/// host, the correct twin's write of every page outweighed it, and the hot loop was taken to be that write.
const REPS: usize = 1000;

extern "C" {
    fn sched_getcpu() -> i32;
    fn sched_setaffinity(pid: i32, size: usize, mask: *const u64) -> i32;
}

/// Pin to the CPU this runs on, as the C examples do (no crate: the C library's call, a 1024-bit mask).
fn pin_self() {
    let mut mask = [0u64; 16];
    // SAFETY: plain calls into the C library with a mask of the size passed.
    unsafe {
        let cpu = sched_getcpu().max(0) as usize % 1024;
        mask[cpu / 64] |= 1 << (cpu % 64);
        if sched_setaffinity(0, std::mem::size_of_val(&mask), mask.as_ptr()) != 0 {
            eprintln!("sched_setaffinity failed");
        }
    }
}

/// The pages in a random order (Fisher-Yates over xorshift).
fn page_order(pages: usize, mut seed: u64) -> Vec<usize> {
    let mut o: Vec<usize> = (0..pages).collect();
    for i in (1..pages).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        o.swap(i, (seed % (i as u64 + 1)) as usize);
    }
    o
}

/// One line of each page in `order`, incremented: the timed loop.
#[inline(never)]
fn touch(buf: &mut [u8], order: &[usize]) -> u64 {
    let mut sum = 0u64;
    for &p in order {
        let i = p * PAGE + (p % 64) * 64;
        buf[i] = buf[i].wrapping_add(1);
        sum += buf[i] as u64;
    }
    sum
}

fn main() {
    pin_self();
    let mut buf = vec![0u8; BYTES];
    let order = page_order(BYTES / PAGE, 88172645463325252);
    if !cfg!(first_touch) {
        for i in (0..BYTES).step_by(PAGE) {
            buf[i] = 1;
        }
    }
    let t = Instant::now();
    let mut sum = 0u64;
    for _ in 0..REPS {
        sum = sum.wrapping_add(touch(&mut buf, &order));
    }
    let ns = t.elapsed().as_nanos() as f64;
    println!("rust: {:.2} ns per access ({})", ns / (REPS as f64 * order.len() as f64), sum & 1);
}
