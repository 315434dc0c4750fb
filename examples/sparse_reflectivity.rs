//! Sparse-spike deconvolution (PyLops-MPI's reflectivity tutorial): every trace of a section is
//! a few reflectors convolved with a Ricker wavelet, the traces are split over the ranks, and
//! the reflectivity is recovered from noisy data twice:
//!
//! * CGLS on `W r = d` with damping (Tikhonov least squares: a smeared, ringing reflectivity);
//! * FISTA, `min_r 1/2 |W r - d|^2 + eps |r|_1` by [`ProximalGradient`] with the data term
//!   [`L2Data`] (its gradient `W^H (W r - d)`), the sparsity [`L1`] (a soft threshold) and a
//!   backtracking step (PyLops-MPI 0.8.0 requires the step).
//!
//! The program fails (non-zero exit) unless FISTA's reflectivity error is below 0.15 of the
//! true reflectivity's norm and below half of CGLS's. The results do not depend on the number of
//! ranks (reproducible reductions; each rank draws the noise of its own traces by global index).
//!
//! Threads (no MPI needed):   cargo run --release --example sparse_reflectivity -- 3
//! MPI:                       cargo build --release --features mpi --example sparse_reflectivity
//!                            mpirun -n 3 target/release/examples/sparse_reflectivity
//!
//! [`ProximalGradient`]: distlops::solvers::ProximalGradient
//! [`L2Data`]: distlops::solvers::L2Data
//! [`L1`]: distlops::solvers::L1

#[path = "common/noise.rs"]
mod noise;
#[path = "common/ranks.rs"]
mod ranks;

use distlops::core::operator::{dottest, LinearOperatorExt, Op};
use distlops::core::{Communicator, DistVector, DistributedArray, Layout, NormOrd, Vector};
use distlops::ndarray::ArrayD;
use distlops::operators::local::{Convolve1D, LocalOperator};
use distlops::operators::wavelets::ricker;
use distlops::operators::BlockDiag;
use distlops::solvers::{
    cgls, proximal_gradient, Acceleration, CglsParams, L2Data, ProximalGradientParams, L1,
};
use std::time::Instant;

/// Traces and time samples of the section.
const SHAPE: [usize; 2] = [30, 300];
/// The noise, as a fraction of the clean data's largest absolute value.
const NOISE: f64 = 0.01;
/// The weight of the sparsity term.
const EPS: f64 = 0.02;
/// Iterations of both solvers.
const NITER: usize = 300;
/// The damping of CGLS (Tikhonov: `min |W r - d|^2 + damp^2 |r|^2`).
const DAMP: f64 = 0.1;
/// FISTA's largest reflectivity error, relative to the true reflectivity's norm.
const TARGET: f64 = 0.15;

/// The true reflectivity at trace `ix`, sample `it`: eight reflectors per trace, dipping with
/// the trace index, of alternating sign.
fn reflectivity(ix: usize, it: usize) -> f64 {
    (0..8)
        .find(|&k| 25 + 33 * k + (ix * (k + 1)) / 12 == it)
        .map_or(0.0, |k| {
            let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
            sign * (0.4 + 0.08 * k as f64)
        })
}

/// `|a - b| / |b|`.
fn rel_err(a: &DistVector<f64>, b: &DistVector<f64>) -> Result<f64, Box<dyn std::error::Error>> {
    let mut e = a.clone();
    e.axpy(-1.0, b)?;
    Ok(e.norm(NormOrd::Two)? / b.norm(NormOrd::Two)?)
}

fn run(comm: &Communicator) -> Result<(), Box<dyn std::error::Error>> {
    let t0 = Instant::now();
    let layout = Layout::scatter(&SHAPE, 0, comm.size())?;
    let (first, count) = (layout.offset(comm.rank()), layout.count(comm.rank()));
    let nt = SHAPE[1];

    // The operator: each rank convolves its own traces with the 15 Hz Ricker wavelet (4 ms).
    let t: Vec<f64> = (0..21).map(|k| k as f64 * 0.004).collect();
    let (wavelet, centre) = ricker(&t, 15.0);
    let block = Convolve1D::new(&[count, nt], wavelet, centre, 1)?;
    let blocks: Vec<Box<dyn LocalOperator<f64>>> = vec![Box::new(block)];
    let w = Op::new(BlockDiag::new(comm, blocks)?.with_spaces(&layout, &layout)?);

    // The true reflectivity (this rank's traces), the data and the noise.
    let local = ArrayD::from_shape_fn(vec![count, nt], |ix| reflectivity(first + ix[0], ix[1]));
    let r: DistVector<f64> = DistributedArray::from_local_with_layout(comm, &layout, local)?.into();
    let mut d = w.apply(&r)?;
    let peak = d.norm(NormOrd::Inf)?;
    if let DistVector::Array(a) = &mut d {
        let offset = (first * nt) as u64;
        for (i, v) in a.local_slice_mut().iter_mut().enumerate() {
            *v += NOISE * peak * noise::normal(offset + i as u64);
        }
    }
    let dot = dottest(&w, &r, &d)?;
    if !dot.passes(1e-12) {
        return Err(format!("dot test failed: {dot:?}").into());
    }

    // Damped least squares.
    let t1 = Instant::now();
    let params = CglsParams {
        niter: NITER,
        tol: 0.0,
        damp: DAMP,
        ..CglsParams::default()
    };
    let r_ls = cgls(&w, &d, None, params, None)?.x;
    let time_ls = t1.elapsed().as_secs_f64();

    // Sparsity: FISTA with backtracking.
    let t2 = Instant::now();
    let data_term = L2Data::new(&w, &d, 1.0)?;
    let params = ProximalGradientParams {
        niter: NITER,
        acceleration: Acceleration::Fista,
        ..ProximalGradientParams::default()
    };
    let zero = w.new_domain_vector()?;
    let sol = proximal_gradient(&data_term, &L1 { sigma: EPS }, &zero, params, None)?;
    let time_l1 = t2.elapsed().as_secs_f64();

    let (err_ls, err_l1) = (rel_err(&r_ls, &r)?, rel_err(&sol.x, &r)?);
    if comm.rank() == 0 {
        println!(
            "sparse-spike deconvolution: {} x {} section on {} ranks, noise {NOISE} of the peak, \
             {NITER} iterations; dot test {:.1e}",
            SHAPE[0],
            SHAPE[1],
            comm.size(),
            dot.rel_err
        );
        println!(
            "{:<40} {:>12} {:>9}",
            "reflectivity", "rel. error", "time [s]"
        );
        println!(
            "{:<40} {err_ls:>12.4e} {time_ls:>9.2}",
            format!("CGLS, W r = d, damp = {DAMP}")
        );
        println!(
            "{:<40} {err_l1:>12.4e} {time_l1:>9.2}",
            format!("FISTA, eps |r|_1 (eps = {EPS}), tau {:.3}", sol.tau)
        );
        println!("total {:.2} s", t0.elapsed().as_secs_f64());
    }
    if err_l1 > TARGET || err_l1 > 0.5 * err_ls {
        return Err(format!(
            "FISTA's reflectivity error {err_l1:.3e} misses its target (below {TARGET} and half \
             of CGLS's {err_ls:.3e})"
        )
        .into());
    }
    Ok(())
}

/// `[RANKS]` thread ranks (default 3), or the ranks of `mpirun`.
fn main() {
    distlops::run_with(ranks::from_args(3), run);
}
