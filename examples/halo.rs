//! Halos on a Cartesian decomposition (PyLops-MPI's `plot_halo` example, 1-D and 2-D parts): a
//! distributed stencil made of a serial FirstDerivative applied to every rank's extended block,
//! `Halo^H * BlockDiag(FirstDerivative) * Halo`, equals the serial FirstDerivative of the global
//! array.
//!
//! Threads (no MPI needed):   cargo run --release --example halo -- 4
//! MPI:                       cargo build --release --features mpi --example halo
//!                            mpirun -n 4 target/release/examples/halo
//!
//! Halo's adjoint is the true adjoint: it sums every halo sample back into its owner. So the
//! sandwich `Halo^H D_ext Halo` reproduces a serial stencil when the rows `D_ext` computes in the
//! halos are zero: halos only where the stencil reads (width 1 for the centred order-3 stencil,
//! 2 for order 5, on the derivative's axis), whose outermost rows the stencil leaves at zero.
//! PyLops-MPI's `Halo.H` only crops; that is `Halo::crop()` here, and `crop * D_ext * Halo` works
//! with halos on every axis.

#[path = "common/ranks.rs"]
mod ranks;

use distlops::ndarray::{ArrayD, IxDyn};
use distlops::operators::HaloWidths;
use distlops::prelude::*;

/// `y = D x` on the global array (every rank computes it: it is the reference).
fn serial(d: &LocalFirstDerivative, x: &ArrayD<f64>) -> ArrayD<f64> {
    let mut y = vec![0.0; x.len()];
    LocalOperator::<f64>::matvec(d, x.as_slice().expect("contiguous"), &mut y);
    ArrayD::from_shape_vec(x.raw_dim(), y).expect("same shape")
}

/// The largest difference between two distributed vectors (the same on every rank).
fn max_diff(a: &DistVector<f64>, b: &DistVector<f64>) -> Result<f64, Error> {
    let mut d = a.clone();
    d.axpy(-1.0, b)?;
    d.norm(NormOrd::Inf)
}

/// Prints every rank's core and extended shapes on rank 0, in rank order.
fn show_shapes(comm: &Communicator, halo: &Halo<f64>, title: &str) {
    let nd = halo.dims().len();
    let mine: Vec<usize> = [halo.core_shape(), halo.extended_shape()].concat();
    let mut all = vec![0; 2 * nd * comm.size()];
    comm.all_gather_into(&mine, &mut all);
    if comm.rank() == 0 {
        println!("{title}: grid {:?}", halo.grid());
        for (r, s) in all.chunks(2 * nd).enumerate() {
            println!(
                "  rank {r} - shape before/after haloing: {:?}/{:?}",
                &s[..nd],
                &s[nd..]
            );
        }
    }
}

/// `left * BlockDiag(D on the extended block) * Halo` with `D` along `axis`.
fn sandwich(
    comm: &Communicator,
    halo: &Halo<f64>,
    axis: usize,
    order: usize,
    crop: bool,
) -> Result<Op<f64>, Error> {
    let d = LocalFirstDerivative::new(
        halo.extended_shape(),
        FirstDerivativeParams {
            axis: signed_axis(axis),
            order,
            ..Default::default()
        },
    )?;
    let bd = Op::new(BlockDiag::new(comm, vec![Box::new(d)])?);
    let h = Op::new(halo.clone());
    let left = if crop { halo.crop() } else { h.h() };
    left * bd * h
}

/// Checks a distributed derivative against the serial one, and its dot test.
fn check(
    op: &Op<f64>,
    halo: &Halo<f64>,
    x: &ArrayD<f64>,
    axis: usize,
    order: usize,
    what: &str,
) -> Result<(), Error> {
    let comm = op.comm();
    let xd = halo.scatter_global(x.view())?;
    let y = op.apply(&xd)?;
    let d = LocalFirstDerivative::new(
        halo.dims(),
        FirstDerivativeParams {
            axis: signed_axis(axis),
            order,
            ..Default::default()
        },
    )?;
    let want = halo.scatter_global(serial(&d, x).view())?;
    let err = max_diff(&y, &want)?;
    let dot = dottest(op, &xd, &want)?;
    if comm.rank() == 0 {
        println!(
            "  {what}: max |distributed - serial| = {err:.1e}, dot test rel. err {:.1e}",
            dot.rel_err
        );
    }
    assert!(
        err <= 1e-12,
        "{what}: differs from the serial derivative by {err:e}"
    );
    assert!(dot.passes(1e-12), "{what}: dot test failed: {dot:?}");
    Ok(())
}

/// The most square grid `p0 x p1` with `p0 * p1 = p` and `p0 <= p1`.
fn square_grid(p: usize) -> [usize; 2] {
    let p0 = (1..=p)
        .filter(|d| p % d == 0 && d * d <= p)
        .max()
        .unwrap_or(1);
    [p0, p / p0]
}

fn run(comm: &Communicator) -> Result<(), Error> {
    let size = comm.size();

    // 1-D: n = 64 per rank; halo 1 with the order-3 stencil, halo 2 with order 5.
    let n = 64 * size;
    let x = ArrayD::from_shape_fn(IxDyn(&[n]), |i| (0.1 * i[0] as f64).sin());
    for (width, order) in [(1, 3), (2, 5)] {
        let halo = Halo::<f64>::new(comm, &[n], width)?;
        show_shapes(comm, &halo, &format!("1-D halo of width {width}"));
        let op = sandwich(comm, &halo, 0, order, false)?;
        let what = format!("Halo^H BlockDiag(FirstDerivative order {order}) Halo");
        check(&op, &halo, &x, 0, order, &what)?;
    }

    // 2-D: (n2, n2) on the most square grid that fits the ranks.
    let n2 = 32 * size;
    let dims = [n2, n2];
    let grid = square_grid(size);
    let x = ArrayD::from_shape_fn(IxDyn(&dims), |i| {
        (0.05 * i[0] as f64).sin() * (0.07 * i[1] as f64).cos()
    });
    let halo = Halo::<f64>::with_grid(comm, &dims, &grid, 1)?;
    show_shapes(comm, &halo, "2-D halo of width 1");

    // A diagonal acting on the extended block, halos cropped: every sample times 2.
    let ne: usize = halo.extended_shape().iter().product();
    let diag = Op::new(BlockDiag::new(
        comm,
        vec![Box::new(Diagonal::new(vec![2.0; ne])?)],
    )?);
    let h = Op::new(halo.clone());
    let xd = halo.scatter_global(x.view())?;
    let mut twice = xd.clone();
    twice.scale(2.0);
    let cropped = (halo.crop() * &diag * &h)?.apply(&xd)?;
    let err = max_diff(&cropped, &twice)?;
    // With the true adjoint each sample is counted once per block that holds it: Halo^H Halo is
    // the diagonal of those counts.
    let summed = (h.h() * &diag * &h)?.apply(&xd)?;
    let mut ones = xd.zeros_like();
    ones.fill(1.0);
    let counts = (h.h() * &h)?.apply(&ones)?;
    let (summed, counts, xa) = (plain(&summed), plain(&counts), plain(&xd));
    let mut expected = xa.clone();
    expected.imul(counts)?;
    expected.scale(2.0);
    expected.isub(summed)?;
    let mismatch = expected.norm(NormOrd::Inf)?;
    let (fewest, most) = (counts.norm(NormOrd::NegInf)?, counts.norm(NormOrd::Inf)?);
    if comm.rank() == 0 {
        println!("  crop BlockDiag(Diagonal(2)) Halo = 2 x: max error {err:.1e}");
        println!(
            "  Halo^H BlockDiag(Diagonal(2)) Halo = 2 x times the number of copies of each \
             sample ({fewest} to {most}): max error {mismatch:.1e}"
        );
    }
    assert!(err <= 1e-12, "crop * Diagonal(2) * Halo should double x");
    assert!(
        mismatch <= 1e-12,
        "Halo^H * Diagonal(2) * Halo should be 2 x counts"
    );

    // Derivatives along each axis: with the crop and halos on both axes, and with the true adjoint
    // and a halo on the derivative's axis only.
    for axis in 0..2 {
        let op = sandwich(comm, &halo, axis, 3, true)?;
        check(
            &op,
            &halo,
            &x,
            axis,
            3,
            &format!("crop BlockDiag(D axis {axis}) Halo"),
        )?;
        let mut widths = vec![(0, 0); 2];
        widths[axis] = (1, 1);
        let along = Halo::<f64>::with_grid(comm, &dims, &grid, HaloWidths::PerSide(widths))?;
        let op = sandwich(comm, &along, axis, 3, false)?;
        check(
            &op,
            &along,
            &x,
            axis,
            3,
            &format!("Halo^H BlockDiag(D axis {axis}) Halo"),
        )?;
    }
    Ok(())
}

/// The plain array of a vector.
fn plain(v: &DistVector<f64>) -> &DistributedArray<f64> {
    v.as_array().expect("Halo vectors are plain arrays")
}

/// `[RANKS]` thread ranks (default 4), or the ranks of `mpirun`.
fn main() {
    distlops::run_with(ranks::from_args(4), run);
}
