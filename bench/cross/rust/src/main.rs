//! Times one Rust sort of n random i64 for the cross-ecosystem comparison in
//! scripts/crosssort (see its README.md).
//!
//!     crosssort <impl> <n> <reps>
//!
//! impl is rayon2 (rayon par_sort_unstable on a 2-thread pool) or
//! sort_unstable (slice::sort_unstable on the calling thread). Prints one
//! line "<impl> <milliseconds>" per timed sort.
use rayon::prelude::*;
use std::time::Instant;

/// Warmup sorts before the timed ones, as in the Go and Java programs.
const WARMUP: usize = 5;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        fail("usage: crosssort <impl> <n> <reps>");
    }
    let imp = args[1].as_str();
    let n: usize = args[2].parse().unwrap_or_else(|_| fail("bad n"));
    let reps: usize = args[3].parse().unwrap_or_else(|_| fail("bad reps"));
    // An explicit pool: the global one would take its size from the machine
    // or RAYON_NUM_THREADS. sort_unstable runs on the main thread, pool unused.
    let threads = match imp {
        "rayon2" => 2,
        "sort_unstable" => 1,
        _ => fail(&format!("unknown impl {imp}")),
    };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();

    let mut seed = 42u64;
    let input: Vec<i64> = (0..n).map(|_| splitmix64(&mut seed) as i64).collect();
    let mut s = vec![0i64; n];
    for i in 0..WARMUP + reps {
        s.copy_from_slice(&input); // not timed
        let start = Instant::now();
        if threads == 2 {
            pool.install(|| s.par_sort_unstable());
        } else {
            s.sort_unstable();
        }
        let d = start.elapsed();
        if !s.windows(2).all(|w| w[0] <= w[1]) {
            fail(&format!("{imp}: result not sorted"));
        }
        if i >= WARMUP {
            println!("{imp} {:.3}", d.as_secs_f64() * 1e3);
        }
    }
}

/// splitmix64 is the generator all three programs use, so that they sort the
/// same uniformly random 64-bit values.
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
