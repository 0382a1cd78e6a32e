// SPDX-License-Identifier: MIT
// A benchmark a JIT compiles, as a node user writes one: a chase over 64 MiB, one 4-byte slot per 4 KiB page in
// one random cycle, each slot on another line of its page, timed with process.hrtime (libuv's clock_gettime).
// V8 compiles the loops into anonymous memory, which no file holds: named only where node writes a perf map
// (node --perf-basic-prof: /tmp/perf-PID.map). `correct`: the chain is written and walked once before the clock
// starts. `first_touch` (the trap): the chain's first write is inside the timed span.
"use strict";
const MODE = process.argv[2] || "correct";
const PAGES = 16384, SLOTS = 1024, ACCESSES = 4000000;	// 4 KiB pages of 1024 Uint32 slots
const mem = new Uint32Array(PAGES * SLOTS);

function order() {
  const o = new Uint32Array(PAGES);
  for (let i = 0; i < PAGES; i++) o[i] = i;
  let s = 12345;
  for (let i = PAGES - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const j = s % (i + 1), t = o[i];
    o[i] = o[j];
    o[j] = t;
  }
  return o;
}
// The slot of page p: its line (p mod 64), so that the chase does not meet every page at one cache set.
const slot = (p) => p * SLOTS + (p % 64) * 16;
function build(o) {
  for (let i = 0; i < PAGES; i++) mem[slot(o[i])] = slot(o[(i + 1) % PAGES]);
}
function chase(n, p) {
  for (let i = 0; i < n; i++) p = mem[p];
  return p;
}
const o = order();
let t0, p = slot(o[0]);
if (MODE === "first_touch") {
  t0 = process.hrtime.bigint();
  build(o);
} else {
  build(o);
  p = chase(PAGES, p);
  t0 = process.hrtime.bigint();
}
p = chase(ACCESSES, p);
const t1 = process.hrtime.bigint();
console.log(`jit_${MODE}: ${(Number(t1 - t0) / ACCESSES).toFixed(1)} ns per access (${p})`);
