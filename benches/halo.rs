//! `Halo` forward and adjoint, and the host's strided copies, on arrays of a few million `f64`.
//!
//! `cargo bench --bench halo` times:
//!
//! * `Halo` (widths 2, `Trim`) of a 160 x 160 x 128 array (3.3 M samples), forward and adjoint,
//!   at 1 rank (`Communicator::serial()`: the core copied into the extended block) and at 2 ranks
//!   (`Threads`): the ranks along the last axis (the default grid: halo boxes of short strided
//!   rows) and along the first (halo boxes of whole planes);
//! * `Host`'s `Compute::strided_copy` on boxes of about 4 M `f64`: a transpose of a 2048 x 2048
//!   array (and back), a padding copy (a 2000 x 2000 block into a 2010 x 2010 array) and its crop,
//!   the halo-like box of short rows `[2048, 2048, 2]` ... (a 2-wide slab of the last axis of a
//!   `[512, 4096, 200]`-like array), and an every-other-element copy.
//!
//! Each case runs `BENCH_REPS` times (default 11, after 3 untimed repetitions), each repetition
//! between barriers (so it lasts until the slowest rank is done); the table gives the median and
//! minimum. `BENCH_ONLY=<substring>` runs the cases whose name contains it. To compare two
//! builds, run their binaries alternately (A, B, A, B, ...) and compare the medians.

mod common;

use common::{env_or, time};
use distlops::core::operator::{LinearOperator, LinearOperatorExt};
use distlops::core::{Communicator, Compute, DistVector, Host, StridedCopy, Threads};
use distlops::operators::Halo;
use std::hint::black_box;
use std::time::Duration;

/// The global shape of the `Halo` cases.
const DIMS: [usize; 3] = [160, 160, 128];

/// One timed case: its name and how to run it once.
struct Case<'a> {
    name: String,
    run: Box<dyn FnMut() + 'a>,
}

/// `Halo` of [`DIMS`] on `grid` with widths 2, forward and adjoint.
fn halo_cases<'a>(comm: &'a Communicator, grid: &[usize], label: &str) -> Vec<Case<'a>> {
    let halo = Halo::<f64>::with_grid(comm, &DIMS, grid, 2).expect("halo");
    let n: usize = DIMS.iter().product();
    let mut x = halo.new_domain_vector().expect("domain vector");
    if let DistVector::Array(a) = &mut x {
        for (i, v) in a.local_slice_mut().iter_mut().enumerate() {
            *v = (i % 17) as f64;
        }
    }
    let y = halo.apply(&x).expect("forward");
    let mut fy = halo.new_range_vector().expect("range vector");
    let mut ax = halo.new_domain_vector().expect("domain vector");
    let (h1, h2) = (halo.clone(), halo);
    let what = format!("Halo {DIMS:?} ({:.1} M) {label}", n as f64 / 1e6);
    vec![
        Case {
            name: format!("{what} forward"),
            run: Box::new(move || {
                h1.matvec(black_box(x.view()), &mut fy).expect("forward");
                comm.barrier();
            }),
        },
        Case {
            name: format!("{what} adjoint"),
            run: Box::new(move || {
                h2.rmatvec(black_box(y.view()), &mut ax).expect("adjoint");
                comm.barrier();
            }),
        },
    ]
}

/// A host strided copy between two new arrays of `src_len` and `dst_len` elements.
fn copy_case(
    name: &str,
    extent: &[usize],
    (src_offset, src_strides, src_len): (usize, &[usize], usize),
    (dst_offset, dst_strides, dst_len): (usize, &[usize], usize),
) -> Case<'static> {
    let copy = StridedCopy::new(
        extent,
        (src_offset, src_strides, src_len),
        (dst_offset, dst_strides, dst_len),
    )
    .expect("copy");
    let x: Vec<f64> = (0..src_len).map(|i| (i % 1013) as f64).collect();
    let mut y = vec![0.0f64; dst_len];
    let count: usize = extent.iter().product();
    Case {
        name: format!("strided_copy {name} ({:.1} M)", count as f64 / 1e6),
        run: Box::new(move || {
            <Host as Compute>::strided_copy(&copy, black_box(&x), black_box(&mut y));
        }),
    }
}

/// The host strided copies.
fn copy_cases() -> Vec<Case<'static>> {
    let n = 2048;
    let (pad_in, pad_out) = (2000, 2010);
    vec![
        copy_case(
            "transpose 2048^2",
            &[n, n],
            (0, &[n, 1], n * n),
            (0, &[1, n], n * n),
        ),
        copy_case(
            "transpose back 2048^2",
            &[n, n],
            (0, &[1, n], n * n),
            (0, &[n, 1], n * n),
        ),
        copy_case(
            "pad 2000^2 into 2010^2",
            &[pad_in, pad_in],
            (0, &[pad_in, 1], pad_in * pad_in),
            (5 * pad_out + 5, &[pad_out, 1], pad_out * pad_out),
        ),
        copy_case(
            "crop 2010^2 to 2000^2",
            &[pad_in, pad_in],
            (5 * pad_out + 5, &[pad_out, 1], pad_out * pad_out),
            (0, &[pad_in, 1], pad_in * pad_in),
        ),
        copy_case(
            "rows of 2 of [20480, 200]",
            &[20480, 2],
            (198, &[200, 1], 20480 * 200),
            (0, &[2, 1], 20480 * 2),
        ),
        copy_case(
            "column of [4 M / 200, 200]",
            &[20480],
            (7, &[200], 20480 * 200),
            (0, &[1], 20480),
        ),
        copy_case(
            "every other of 8 M",
            &[4 << 20],
            (1, &[2], 8 << 20),
            (0, &[1], 4 << 20),
        ),
    ]
}

/// Runs every case `reps` times; prints the table on rank 0.
fn report(comm: &Communicator, ranks: &str, cases: Vec<Case<'_>>, reps: usize) {
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    for mut case in cases.into_iter().filter(|c| c.name.contains(&only)) {
        let times: Vec<Duration> = time(comm, reps, &mut case.run);
        if comm.rank() == 0 {
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            println!(
                "| {ranks} | {} | {:.3} | {:.3} |",
                case.name,
                ms(times[times.len() / 2]),
                ms(times[0])
            );
        }
    }
}

fn main() {
    let reps: usize = env_or("BENCH_REPS", 11);
    println!("| ranks | case | median (ms) | min (ms) |");
    println!("|---|---|---|---|");
    let serial = Communicator::serial();
    report(&serial, "1", copy_cases(), reps);
    report(&serial, "1", halo_cases(&serial, &[1, 1, 1], ""), reps);
    Threads::run(2, |comm| {
        report(
            &comm,
            "2 (Threads)",
            halo_cases(&comm, &[1, 1, 2], "grid [1, 1, 2]"),
            reps,
        );
        report(
            &comm,
            "2 (Threads)",
            halo_cases(&comm, &[2, 1, 1], "grid [2, 1, 1]"),
            reps,
        );
    });
}
