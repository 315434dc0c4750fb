//! Least squares with CGLS on a block-diagonal operator (PyLops-MPI's `plot_cgls` example): every
//! rank holds its own dense 20 x 15 matrix, the model is all ones, and CGLS recovers it.
//!
//! Threads (no MPI needed):   cargo run --release --example cgls -- 3
//! MPI:                       cargo build --release --features mpi --example cgls
//!                            mpirun -n 3 target/release/examples/cgls

#[path = "common/ranks.rs"]
mod ranks;

use distlops::core::operator::{dottest, LinearOperatorExt};
use distlops::core::{Communicator, Vector};
use distlops::ndarray::Array2;
use distlops::operators::local::{LocalOperator, MatrixMult};
use distlops::operators::BlockDiag;
use distlops::solvers::{cgls, CglsParams};

/// A seeded N(0, 1) matrix (SplitMix64 + Box-Muller), different on every rank.
fn normal_matrix(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    let mut uniform = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    Array2::from_shape_simple_fn((rows, cols), || {
        let (u1, u2) = (uniform().max(f64::MIN_POSITIVE), uniform());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    })
}

fn run(comm: &Communicator) -> Result<(), Box<dyn std::error::Error>> {
    let (nl, ml) = (20, 15);
    let a = normal_matrix(nl, ml, comm.rank() as u64 + 1);
    let ops: Vec<Box<dyn LocalOperator<f64>>> = vec![Box::new(MatrixMult::new(a)?)];
    let op = BlockDiag::new(comm, ops)?;

    // The true model: ones; the data: A x.
    let mut x = op.new_domain_vector()?;
    x.fill(1.0);
    let y = op.apply(&x)?;

    let dot = dottest(&op, &x, &y)?;
    let params = CglsParams {
        niter: 15 * comm.size() + 30,
        tol: 1e-20,
        show: true,
        ..CglsParams::default()
    };
    let sol = cgls(&op, &y, None, params, None)?;
    let mut err = sol.x.clone();
    err.axpy(-1.0, &x)?;
    let rel = err.norm(Default::default())? / x.norm(Default::default())?;
    if comm.rank() == 0 {
        println!(
            "BlockDiag of {} MatrixMult(20 x 15): dot test rel. err {:.1e}; CGLS {} iterations ({:?}), model error {rel:.2e}",
            comm.size(),
            dot.rel_err,
            sol.info.iterations,
            sol.info.stop_reason
        );
    }
    assert!(dot.passes(1e-12), "dot test failed: {dot:?}");
    assert!(
        rel < 1e-6,
        "CGLS did not recover the model: relative error {rel:e}"
    );
    Ok(())
}

/// `[RANKS]` thread ranks (default 3), or the ranks of `mpirun`.
fn main() {
    distlops::run_with(ranks::from_args(3), run);
}
