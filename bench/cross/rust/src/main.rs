//! Times the Rust side of the cross-ecosystem comparison in bench/cross
//! (see its README.md): rayon on the workloads the Go and Java programs
//! beside it run with the same parameters and inputs.
//!
//!     cross <workload> <workers> <warmup> <reps>
//!
//! workload is fib30, fib40, sort, sum, tasks or spawn; workers is the size of the
//! rayon ThreadPool everything parallel runs in (1 or 2). The sequential
//! implementations run only when workers is 1. Every implementation runs
//! warmup untimed times, then reps timed times, the implementations taking
//! turns. Prints one line "rust <workload> <impl> <workers> <milliseconds>"
//! per timed run; exits 1 if a result is wrong.
use rayon::prelude::*;
use rayon::ThreadPool;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

const FIB_FINE: u32 = 30;
const FIB_COARSE: u32 = 40;
const FIB_CUTOFF: u32 = 20;
const SORT_N: usize = 10_000_000;
const SUM_N: usize = 10_000_000;
const TASKS_N: usize = 1_000_000;
const SPAWN_N: usize = 1_000_000;

/// One implementation: run does one timed run, preparing its input untimed
/// and checking its result.
struct Impl<'a> {
    name: &'static str,
    run: Box<dyn FnMut() -> Duration + 'a>,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        fail("usage: cross <workload> <workers> <warmup> <reps>");
    }
    let workload = args[1].as_str();
    let num = |s: &str| s.parse::<usize>().unwrap_or_else(|_| fail("workers, warmup and reps must be integers"));
    let (workers, warmup, reps) = (num(&args[2]), num(&args[3]), num(&args[4]));
    // An explicit pool: the global one would take its size from the machine
    // or RAYON_NUM_THREADS.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(workers).build().unwrap();
    let state = Box::leak(Box::new(TasksState::new())); // tasks only; lives as long as the process

    let mut impls = match workload {
        "fib30" => fib_impls(&pool, workers, FIB_FINE, 0, 832040),
        "fib40" => fib_impls(&pool, workers, FIB_COARSE, FIB_CUTOFF, 102334155),
        "sort" => sort_impls(&pool, workers),
        "sum" => sum_impls(&pool, workers),
        "tasks" => tasks_impls(&pool, state),
        "spawn" => spawn_impls(&pool),
        _ => fail(&format!("unknown workload {workload}")),
    };
    for im in impls.iter_mut() {
        for _ in 0..warmup {
            (im.run)();
        }
    }
    for _ in 0..reps {
        for im in impls.iter_mut() {
            let d = (im.run)();
            println!("rust {workload} {} {workers} {:.3}", im.name, d.as_secs_f64() * 1e3);
        }
    }
}

fn timed(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

// --- fib: naive recursion, forking at every level above cutoff ---

fn fib_seq(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

fn fib_join(n: u32, cutoff: u32) -> u64 {
    if n < 2 || n < cutoff {
        return fib_seq(n);
    }
    let (a, b) = rayon::join(|| fib_join(n - 1, cutoff), || fib_join(n - 2, cutoff));
    a + b
}

fn fib_impls<'a>(pool: &'a ThreadPool, workers: usize, n: u32, cutoff: u32, want: u64) -> Vec<Impl<'a>> {
    let check = |name: &'static str, f: Box<dyn Fn() -> u64 + 'a>| Impl {
        name,
        run: Box::new(move || {
            let mut got = 0;
            let d = timed(|| got = f());
            if got != want {
                fail(&format!("rust fib: {name} returned {got}"));
            }
            d
        }),
    };
    let mut v = Vec::new();
    if workers == 1 {
        // black_box: n is a run-time value for the compiler, as in rayon.
        v.push(check("seq", Box::new(move || fib_seq(std::hint::black_box(n)))));
    }
    v.push(check("rayon", Box::new(move || pool.install(|| fib_join(n, cutoff)))));
    v
}

// --- sort: 10M uniformly random i64 ---

fn sort_impls<'a>(pool: &'a ThreadPool, workers: usize) -> Vec<Impl<'a>> {
    let mut seed = 42u64;
    let input: Vec<i64> = (0..SORT_N).map(|_| splitmix64(&mut seed) as i64).collect();
    let input: &'static [i64] = input.leak();
    let check = |name: &'static str, sort: Box<dyn Fn(&mut [i64]) + 'a>| {
        let mut s = vec![0i64; SORT_N];
        Impl {
            name,
            run: Box::new(move || {
                s.copy_from_slice(input); // not timed
                let d = timed(|| sort(&mut s));
                if !s.windows(2).all(|w| w[0] <= w[1]) {
                    fail(&format!("rust sort: {name}: result not sorted"));
                }
                d
            }),
        }
    };
    let mut v = Vec::new();
    if workers == 1 {
        v.push(check("sort_unstable", Box::new(|s: &mut [i64]| s.sort_unstable())));
    }
    v.push(check("rayon", Box::new(move |s: &mut [i64]| pool.install(|| s.par_sort_unstable()))));
    v
}

// --- sum: 10M i64 below 2^32 (the sum cannot overflow) ---

fn sum_impls<'a>(pool: &'a ThreadPool, workers: usize) -> Vec<Impl<'a>> {
    let mut seed = 42u64;
    let a: Vec<i64> = (0..SUM_N).map(|_| (splitmix64(&mut seed) >> 32) as i64).collect();
    let a: &'static [i64] = a.leak();
    let want: i64 = a.iter().sum();
    let check = |name: &'static str, sum: Box<dyn Fn() -> i64 + 'a>| Impl {
        name,
        run: Box::new(move || {
            let mut got = 0;
            let d = timed(|| got = sum());
            if got != want {
                fail(&format!("rust sum: {name} returned a wrong sum"));
            }
            d
        }),
    };
    let mut v = Vec::new();
    if workers == 1 {
        v.push(check("seq", Box::new(move || std::hint::black_box(a).iter().sum())));
    }
    v.push(check("rayon", Box::new(move || pool.install(|| a.par_iter().sum()))));
    v
}

// --- tasks: 1M tiny tasks submitted from one thread, then awaited ---

/// TasksState is what the tasks share: their outputs and a countdown latch.
/// It is leaked, so the closures given to ThreadPool::spawn (which must be
/// 'static) borrow it rather than count references to it.
struct TasksState {
    out: Vec<AtomicU64>,
    left: AtomicUsize,
    done: Mutex<bool>,
    wake: Condvar,
}

impl TasksState {
    fn new() -> Self {
        TasksState {
            out: (0..TASKS_N).map(|_| AtomicU64::new(0)).collect(),
            left: AtomicUsize::new(0),
            done: Mutex::new(false),
            wake: Condvar::new(),
        }
    }

    /// count_down is called by each task at its end; the last one wakes the
    /// waiter.
    fn count_down(&self) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            *self.done.lock().unwrap() = true;
            self.wake.notify_one();
        }
    }
}

fn tasks_impls<'a>(pool: &'a ThreadPool, st: &'static TasksState) -> Vec<Impl<'a>> {
    vec![Impl {
        name: "spawn",
        run: Box::new(move || {
            for o in &st.out {
                o.store(0, Ordering::Relaxed); // not timed
            }
            st.left.store(TASKS_N, Ordering::Relaxed);
            *st.done.lock().unwrap() = false;
            let d = timed(|| {
                for i in 0..TASKS_N {
                    pool.spawn(move || {
                        // A relaxed atomic store is a plain store on x86.
                        st.out[i].store((i * i + 1) as u64, Ordering::Relaxed);
                        st.count_down();
                    });
                }
                let mut done = st.done.lock().unwrap();
                while !*done {
                    done = st.wake.wait(done).unwrap();
                }
            });
            for (i, o) in st.out.iter().enumerate() {
                if o.load(Ordering::Relaxed) != (i * i + 1) as u64 {
                    fail("rust tasks: a task did not run");
                }
            }
            d
        }),
    }]
}

// --- spawn: 1M tiny tasks spawned from inside one pool task, then awaited ---

fn spawn_impls(pool: &ThreadPool) -> Vec<Impl<'_>> {
    let out: Vec<AtomicU64> = (0..SPAWN_N).map(|_| AtomicU64::new(0)).collect();
    vec![Impl {
        name: "scope",
        run: Box::new(move || {
            for o in &out {
                o.store(0, Ordering::Relaxed); // not timed
            }
            let out = &out;
            let d = timed(|| {
                pool.install(|| {
                    rayon::scope(|s| {
                        for i in 0..SPAWN_N {
                            // A relaxed atomic store is a plain store on x86.
                            s.spawn(move |_| out[i].store((i * i + 1) as u64, Ordering::Relaxed));
                        }
                    })
                })
            });
            for (i, o) in out.iter().enumerate() {
                if o.load(Ordering::Relaxed) != (i * i + 1) as u64 {
                    fail("rust spawn: a task did not run");
                }
            }
            d
        }),
    }]
}

/// splitmix64 is the generator all three programs use, so that they work on
/// the same values.
fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e3779b97f4a7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

fn fail(msg: &str) -> ! {
    eprintln!("{msg}");
    std::process::exit(1)
}
