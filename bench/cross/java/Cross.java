// Sort times one Java sort of n random longs for the cross-ecosystem
// comparison in scripts/crosssort (see its README.md).
//
//   java -Djava.util.concurrent.ForkJoinPool.common.parallelism=2 -Xmx1g \
//        -cp <dir> Sort <impl> <n> <reps>
//
// impl is parallelSort (Arrays.parallelSort on the common pool) or sort
// (Arrays.sort, sequential). Prints one line "<impl> <milliseconds>" per
// timed sort.
import java.util.Arrays;
import java.util.concurrent.ForkJoinPool;

public class Sort {
    // JIT warmup: the first sorts run interpreted or C1-compiled code.
    static final int WARMUP = 5;

    public static void main(String[] args) {
        if (args.length != 3) fail("usage: Sort <impl> <n> <reps>");
        String impl = args[0];
        int n = Integer.parseInt(args[1]);
        int reps = Integer.parseInt(args[2]);
        boolean parallel;
        switch (impl) {
            case "parallelSort": parallel = true; break;
            case "sort": parallel = false; break;
            default: fail("unknown impl " + impl); return;
        }
        // parallelSort falls back to Arrays.sort when the pool has parallelism 1;
        // refuse to measure that by accident.
        if (parallel && ForkJoinPool.getCommonPoolParallelism() != 2)
            fail("common pool parallelism is " + ForkJoinPool.getCommonPoolParallelism() + ", want 2");

        long[] input = new long[n];
        long[] seed = {42};
        for (int i = 0; i < n; i++) input[i] = splitmix64(seed);
        long[] s = new long[n];
        for (int i = 0; i < WARMUP + reps; i++) {
            System.arraycopy(input, 0, s, 0, n); // not timed
            long start = System.nanoTime();
            if (parallel) Arrays.parallelSort(s); else Arrays.sort(s);
            long d = System.nanoTime() - start;
            for (int j = 1; j < n; j++)
                if (s[j - 1] > s[j]) fail(impl + ": result not sorted");
            if (i >= WARMUP) System.out.printf("%s %.3f%n", impl, d / 1e6);
        }
    }

    // splitmix64 is the generator all three programs use, so that they sort
    // the same uniformly random 64-bit values (>>> is Go's unsigned >>).
    static long splitmix64(long[] x) {
        long z = (x[0] += 0x9e3779b97f4a7c15L);
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    static void fail(String msg) {
        System.err.println(msg);
        System.exit(1);
    }
}
