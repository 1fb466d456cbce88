// Cross times the Java side of the cross-ecosystem comparison in bench/cross
// (see its README.md): ForkJoinPool and the JDK's parallel library calls on
// the workloads the Go and Rust programs beside it run with the same
// parameters and inputs.
//
//   java -Djava.util.concurrent.ForkJoinPool.common.parallelism=<workers> \
//        -Xms1g -Xmx1g -cp <dir> Cross <workload> <workers> <warmup> <reps>
//
// workload is fib30, fib40, sort, sum, tasks or spawn; workers is the parallelism
// of the ForkJoinPool everything parallel runs in (1 or 2), and must equal
// the common pool's, which Arrays.parallelSort and parallel streams read to
// size their pieces. The sequential implementations run only when workers
// is 1. Every implementation runs warmup untimed times (for the JIT), then
// reps timed times, the implementations taking turns. Prints one line
// "java <workload> <impl> <workers> <milliseconds>" per timed run; exits 1
// if a result is wrong.
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CountedCompleter;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;
import java.util.function.LongSupplier;

public class Cross {
    static final int FIB_FINE = 30, FIB_COARSE = 40, FIB_CUTOFF = 20;
    static final int SORT_N = 10_000_000, SUM_N = 10_000_000, TASKS_N = 1_000_000;
    static final int SPAWN_N = 1_000_000;

    static ForkJoinPool pool;

    /** One implementation: run does one timed run and returns nanoseconds. */
    record Impl(String name, LongSupplier run) {}

    public static void main(String[] args) throws Exception {
        if (args.length != 4) fail("usage: Cross <workload> <workers> <warmup> <reps>");
        String workload = args[0];
        int workers = Integer.parseInt(args[1]);
        int warmup = Integer.parseInt(args[2]);
        int reps = Integer.parseInt(args[3]);
        if (ForkJoinPool.getCommonPoolParallelism() != workers)
            fail("common pool parallelism is " + ForkJoinPool.getCommonPoolParallelism() + ", want " + workers);
        pool = new ForkJoinPool(workers);

        List<Impl> impls = new ArrayList<>();
        switch (workload) {
            case "fib30" -> fibImpls(impls, workers, FIB_FINE, 0, 832040);
            case "fib40" -> fibImpls(impls, workers, FIB_COARSE, FIB_CUTOFF, 102334155);
            case "sort" -> sortImpls(impls, workers);
            case "sum" -> sumImpls(impls, workers);
            case "tasks" -> tasksImpls(impls);
            case "spawn" -> spawnImpls(impls);
            default -> fail("unknown workload " + workload);
        }
        for (Impl im : impls)
            for (int i = 0; i < warmup; i++) im.run.getAsLong();
        for (int r = 0; r < reps; r++)
            for (Impl im : impls)
                System.out.printf("java %s %s %d %.3f%n", workload, im.name, workers, im.run.getAsLong() / 1e6);
        pool.shutdown();
    }

    /**
     * inPool runs fn as a task of pool and waits for it on a latch, so that
     * the calling thread only sleeps: a thread joining a ForkJoinTask from
     * outside may run pool tasks itself, which would make one more worker.
     */
    static long inPool(LongSupplier fn) {
        long[] result = new long[1];
        CountDownLatch done = new CountDownLatch(1);
        pool.execute(() -> {
            result[0] = fn.getAsLong();
            done.countDown();
        });
        try {
            done.await();
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
        return result[0]; // the latch orders the write before this read
    }

    static long timed(Runnable fn) {
        long start = System.nanoTime();
        fn.run();
        return System.nanoTime() - start;
    }

    // --- fib: naive recursion, forking at every level above cutoff ---

    static long fibSeq(int n) {
        return n < 2 ? n : fibSeq(n - 1) + fibSeq(n - 2);
    }

    /**
     * Fib is the textbook RecursiveAction: fork one half, compute the other,
     * join. The result is a long field, not a RecursiveTask's boxed Long.
     */
    static final class Fib extends RecursiveAction {
        final int n, cutoff;
        long result;

        Fib(int n, int cutoff) {
            this.n = n;
            this.cutoff = cutoff;
        }

        @Override
        protected void compute() {
            if (n < 2 || n < cutoff) {
                result = fibSeq(n);
                return;
            }
            Fib a = new Fib(n - 1, cutoff), b = new Fib(n - 2, cutoff);
            a.fork();
            b.compute();
            a.join();
            result = a.result + b.result;
        }
    }

    static void fibImpls(List<Impl> impls, int workers, int n, int cutoff, long want) {
        LongSupplier seq = () -> fibSeq(n);
        LongSupplier fj = () -> inPool(() -> {
            Fib f = new Fib(n, cutoff);
            f.invoke();
            return f.result;
        });
        if (workers == 1) impls.add(checkFib("seq", seq, want));
        impls.add(checkFib("forkjoin", fj, want));
    }

    static Impl checkFib(String name, LongSupplier fn, long want) {
        return new Impl(name, () -> {
            long[] got = new long[1];
            long d = timed(() -> got[0] = fn.getAsLong());
            if (got[0] != want) fail("java fib: " + name + " returned " + got[0]);
            return d;
        });
    }

    // --- sort: 10M uniformly random long ---

    static void sortImpls(List<Impl> impls, int workers) {
        long[] input = new long[SORT_N];
        long[] seed = {42};
        for (int i = 0; i < SORT_N; i++) input[i] = splitmix64(seed);
        long[] s = new long[SORT_N];
        // parallelSort sorts with Arrays.sort when the common pool's
        // parallelism is 1, so it is timed with 2 workers only. Called in
        // pool, its tasks run there.
        if (workers == 1) impls.add(checkSort("sort", input, s, () -> Arrays.sort(s)));
        else impls.add(checkSort("parallelSort", input, s, () -> inPool(() -> {
            Arrays.parallelSort(s);
            return 0;
        })));
    }

    static Impl checkSort(String name, long[] input, long[] s, Runnable sort) {
        return new Impl(name, () -> {
            System.arraycopy(input, 0, s, 0, s.length); // not timed
            long d = timed(sort);
            for (int j = 1; j < s.length; j++)
                if (s[j - 1] > s[j]) fail("java sort: " + name + ": result not sorted");
            return d;
        });
    }

    // --- sum: 10M long below 2^32 (the sum cannot overflow) ---

    static long sumSeq(long[] a) {
        long s = 0;
        for (long x : a) s += x;
        return s;
    }

    static void sumImpls(List<Impl> impls, int workers) {
        long[] a = new long[SUM_N];
        long[] seed = {42};
        for (int i = 0; i < SUM_N; i++) a[i] = splitmix64(seed) >>> 32;
        long want = sumSeq(a);
        if (workers == 1) impls.add(checkSum("seq", () -> sumSeq(a), want));
        // A parallel stream called in pool splits into pool's tasks.
        impls.add(checkSum("stream", () -> inPool(() -> Arrays.stream(a).parallel().sum()), want));
    }

    static Impl checkSum(String name, LongSupplier sum, long want) {
        return new Impl(name, () -> {
            long[] got = new long[1];
            long d = timed(() -> got[0] = sum.getAsLong());
            if (got[0] != want) fail("java sum: " + name + " returned a wrong sum");
            return d;
        });
    }

    // --- tasks: 1M tiny tasks submitted from one thread, then awaited ---

    static void tasksImpls(List<Impl> impls) {
        long[] out = new long[TASKS_N];
        impls.add(new Impl("forkjoin", () -> {
            Arrays.fill(out, 0); // not timed
            long d = timed(() -> {
                CountDownLatch done = new CountDownLatch(TASKS_N);
                for (int i = 0; i < TASKS_N; i++) {
                    int j = i;
                    pool.execute(() -> {
                        out[j] = (long) j * j + 1;
                        done.countDown();
                    });
                }
                try {
                    done.await();
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            });
            for (int i = 0; i < TASKS_N; i++)
                if (out[i] != (long) i * i + 1) fail("java tasks: a task did not run");
            return d;
        }));
    }

    // --- spawn: 1M tiny tasks forked from inside one pool task, then awaited ---

    /** SpawnLeaf is the job as a RecursiveAction. */
    static final class SpawnLeaf extends RecursiveAction {
        final long[] out;
        final int i;

        SpawnLeaf(long[] out, int i) {
            this.out = out;
            this.i = i;
        }

        @Override
        protected void compute() {
            out[i] = (long) i * i + 1;
        }
    }

    /** SpawnCompleter is the job as a CountedCompleter child of the root. */
    static final class SpawnCompleter extends CountedCompleter<Void> {
        final long[] out;
        final int i;

        SpawnCompleter(CountedCompleter<?> parent, long[] out, int i) {
            super(parent);
            this.out = out;
            this.i = i;
        }

        @Override
        public void compute() {
            out[i] = (long) i * i + 1;
            tryComplete();
        }
    }

    /** SpawnRoot forks one SpawnCompleter per task and completes after all of them. */
    static final class SpawnRoot extends CountedCompleter<Void> {
        final long[] out;

        SpawnRoot(long[] out) {
            this.out = out;
        }

        @Override
        public void compute() {
            for (int i = 0; i < SPAWN_N; i++) {
                addToPendingCount(1);
                new SpawnCompleter(this, out, i).fork();
            }
            tryComplete();
        }
    }

    static void spawnImpls(List<Impl> impls) {
        long[] out = new long[SPAWN_N];
        // forkjoin: a loop of forks, then the joins newest first (the order
        // in which the forking worker finds them on its own deque).
        impls.add(new Impl("forkjoin", () -> {
            Arrays.fill(out, 0); // not timed
            long d = inPool(() -> timed(() -> {
                SpawnLeaf[] ls = new SpawnLeaf[SPAWN_N];
                for (int i = 0; i < SPAWN_N; i++) {
                    ls[i] = new SpawnLeaf(out, i);
                    ls[i].fork();
                }
                for (int i = SPAWN_N - 1; i >= 0; i--) ls[i].join();
            }));
            for (int i = 0; i < SPAWN_N; i++)
                if (out[i] != (long) i * i + 1) fail("java spawn: forkjoin: a task did not run");
            return d;
        }));
        // completer: no joins, a pending count (the shape of a scope).
        impls.add(new Impl("completer", () -> {
            Arrays.fill(out, 0); // not timed
            long d = inPool(() -> timed(() -> new SpawnRoot(out).invoke()));
            for (int i = 0; i < SPAWN_N; i++)
                if (out[i] != (long) i * i + 1) fail("java spawn: completer: a task did not run");
            return d;
        }));
    }

    /**
     * splitmix64 is the generator all three programs use, so that they work
     * on the same values (>>> is Go's unsigned >>).
     */
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
