// SPDX-License-Identifier: MIT
// The chase of jit.js in Java, as a JMH-less benchmark is written: HotSpot compiles main's loop on the stack
// (OSR) into its code cache, anonymous memory that no file holds; named only where the JVM writes a perf map
// (-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit: /tmp/perf-PID.map). The array is zeroed by the JVM
// (memset) before the chain is written, and the chain walked once before System.nanoTime(): correct.
public class JitChase {
    static final int PAGES = 16384, SLOTS = 1024, ACCESSES = 4000000;

    // The slot of page p: its line (p mod 64), so that the chase does not meet every page at one cache set.
    static int slot(int p) {
        return p * SLOTS + (p % 64) * 16;
    }

    public static void main(String[] args) {
        int[] mem = new int[PAGES * SLOTS];
        int[] o = new int[PAGES];
        for (int i = 0; i < PAGES; i++)
            o[i] = i;
        long s = 12345;
        for (int i = PAGES - 1; i > 0; i--) {
            s = (s * 1103515245L + 12345) & 0xffffffffL;
            int j = (int) (s % (i + 1)), t = o[i];
            o[i] = o[j];
            o[j] = t;
        }
        for (int i = 0; i < PAGES; i++)
            mem[slot(o[i])] = slot(o[(i + 1) % PAGES]);
        int p = slot(o[0]);
        for (int i = 0; i < PAGES; i++)
            p = mem[p];
        long t0 = System.nanoTime();
        for (int i = 0; i < ACCESSES; i++)
            p = mem[p];
        long t1 = System.nanoTime();
        System.out.printf("jit_java: %.1f ns per access (%d)%n", (t1 - t0) / (double) ACCESSES, p);
    }
}
