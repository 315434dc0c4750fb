//! Single-rank kernel throughput against a STREAM baseline.
//!
//! `cargo bench --bench kernels` times the local kernels of [`DistributedArray`] on one rank
//! (`Communicator::serial()`, so the reductions' all-reduce is a copy of one value) for arrays of
//! 10^7 `f64` (80 MB each, far larger than any cache), next to STREAM's triad
//! (`a[i] = b[i] + s * c[i]`) and copy on plain `Vec<f64>`. Throughputs are the bytes a kernel must
//! move (STREAM's convention: no write-allocate traffic), in decimal units, so criterion reports
//! GB/s and each kernel's figure compares directly with the triad's, the practical
//! memory-bandwidth ceiling. `scripts/bench-summary.py` prints the medians, GB/s and the ratio of
//! each kernel to the triad from criterion's saved results.
//!
//! | kernel | bytes per element |
//! |---|---|
//! | `dot` | 16 (read x, y) |
//! | `norm2` | 8 (read x) |
//! | `axpy`, `iadd` | 24 (read x, y; write y) |
//! | `add_into`, `add_alloc` (`&a + &b`, allocating) | 24 (read a, b; write out) |
//! | STREAM triad | 24 |
//! | STREAM copy | 16 |

use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use distlops::core::{Communicator, DistributedArray, Layout};
use std::hint::black_box;
use std::time::Duration;

/// Elements per array.
const N: usize = 10_000_000;
/// Bytes in one `f64`.
const F64: u64 = std::mem::size_of::<f64>() as u64;

/// A one-rank array of `N` values `f(i)` (every page touched before timing starts).
fn array(comm: &Communicator, f: impl Fn(usize) -> f64) -> DistributedArray<f64> {
    let layout = Layout::scatter(&[N], 0, comm.size()).expect("layout");
    let mut x = DistributedArray::<f64>::zeros(comm, &layout).expect("zeros");
    for (i, v) in x.local_slice_mut().iter_mut().enumerate() {
        *v = f(i);
    }
    x
}

/// Sets the throughput of the next benchmark: `words` f64 moved per element.
fn bytes(group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>, words: u64) {
    group.throughput(Throughput::BytesDecimal(words * F64 * N as u64));
}

fn distributed_kernels(c: &mut Criterion) {
    let comm = Communicator::serial();
    let a = array(&comm, |i| 1.0 + (i % 7) as f64);
    let b = array(&comm, |i| 0.5 - (i % 5) as f64 * 0.25);
    let mut y = array(&comm, |i| (i % 3) as f64);
    let mut out = array(&comm, |_| 0.0);

    let mut g = c.benchmark_group("kernels_1e7_f64");

    bytes(&mut g, 2);
    g.bench_function("dot", |bch| {
        bch.iter(|| black_box(&a).dot(black_box(&b)).expect("dot"))
    });

    bytes(&mut g, 1);
    g.bench_function("norm2", |bch| bch.iter(|| black_box(&a).norm2()));

    // A tiny alpha keeps y bounded however many iterations criterion runs.
    bytes(&mut g, 3);
    g.bench_function("axpy", |bch| {
        bch.iter(|| y.axpy(black_box(1e-12), black_box(&a)).expect("axpy"))
    });

    bytes(&mut g, 3);
    g.bench_function("iadd", |bch| {
        bch.iter(|| y.iadd(black_box(&b)).expect("iadd"))
    });

    bytes(&mut g, 3);
    g.bench_function("add_into", |bch| {
        bch.iter(|| {
            black_box(&a)
                .add_into(black_box(&b), &mut out)
                .expect("add_into")
        })
    });

    // Allocates (and frees) an 80 MB result every iteration: page faults included.
    bytes(&mut g, 3);
    g.bench_function("add_alloc", |bch| {
        bch.iter(|| (black_box(&a) + black_box(&b)).expect("add"))
    });

    g.finish();
    black_box((&y, &out));
}

/// STREAM triad, `a[i] = b[i] + s * c[i]`.
fn triad(a: &mut [f64], b: &[f64], c: &[f64], s: f64) {
    for ((ai, &bi), &ci) in a.iter_mut().zip(b).zip(c) {
        *ai = bi + s * ci;
    }
}

fn stream(c: &mut Criterion) {
    let mut a = vec![0.0f64; N];
    let b: Vec<f64> = (0..N).map(|i| 1.0 + (i % 7) as f64).collect();
    let cc: Vec<f64> = (0..N).map(|i| 0.5 - (i % 5) as f64 * 0.25).collect();
    a.fill(1.0); // touch every page

    let mut g = c.benchmark_group("stream_1e7_f64");

    bytes(&mut g, 3);
    g.bench_function("triad", |bch| {
        bch.iter(|| {
            triad(
                black_box(&mut a),
                black_box(&b),
                black_box(&cc),
                black_box(3.0),
            )
        })
    });

    bytes(&mut g, 2);
    g.bench_function("copy", |bch| {
        bch.iter(|| black_box(&mut a).copy_from_slice(black_box(&b)))
    });

    g.finish();
    black_box(&a);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = stream, distributed_kernels
}
criterion_main!(benches);
