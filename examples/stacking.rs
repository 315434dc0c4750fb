//! Stacking operators across ranks (PyLops-MPI's `plot_stacking` example): every rank holds
//! `(rank + 1) * SecondDerivative` on an (11, 22) model, along axis 0 or 1, and the ranks' operators
//! are stacked vertically (VStack), horizontally (HStack) and block-diagonally (BlockDiag).
//! Each result is checked against the same operator applied serially, plus a dot test.
//!
//! Threads (no MPI needed):   cargo run --example stacking -- 3
//! MPI:                       cargo build --release --features mpi --example stacking
//!                            mpirun -n 3 target/release/examples/stacking

#[path = "common/ranks.rs"]
mod ranks;

use distlops::ndarray::{Array1, ArrayD};
use distlops::prelude::*;

/// `alpha * A` for a local operator: the kind of small adapter users write for their own blocks.
struct Scaled<L> {
    alpha: f64,
    op: L,
}

impl<L: LocalOperator<f64>> LocalOperator<f64> for Scaled<L> {
    fn dims(&self) -> &[usize] {
        self.op.dims()
    }
    fn dimsd(&self) -> &[usize] {
        self.op.dimsd()
    }
    fn matvec(&self, x: &[f64], y: &mut [f64]) {
        self.op.matvec(x, y);
        y.iter_mut().for_each(|v| *v *= self.alpha);
    }
    fn rmatvec(&self, y: &[f64], x: &mut [f64]) {
        self.op.rmatvec(y, x);
        x.iter_mut().for_each(|v| *v *= self.alpha);
    }
}

const DIMS: [usize; 2] = [11, 22];

/// Rank `r`'s operator, `(r + 1) * D2` along `axis`.
fn d2(r: usize, axis: usize) -> Result<Scaled<LocalSecondDerivative>, Error> {
    Ok(Scaled {
        alpha: (r + 1) as f64,
        op: LocalSecondDerivative::new(
            &DIMS,
            SecondDerivativeParams {
                axis: signed_axis(axis),
                ..Default::default()
            },
        )?,
    })
}

/// Applies rank `r`'s operator serially (forward or adjoint).
fn serial(r: usize, axis: usize, x: &[f64], adjoint: bool) -> Vec<f64> {
    let op = d2(r, axis).expect("valid operator");
    let mut y = vec![0.0; op.ncols()];
    if adjoint {
        op.rmatvec(x, &mut y);
    } else {
        op.matvec(x, &mut y);
    }
    y
}

/// A deterministic global vector of length `n` (the same on every rank).
fn signal(n: usize, phase: f64) -> Array1<f64> {
    Array1::from_shape_fn(n, |i| {
        ((i as f64) * 0.37 + phase).sin() + 0.1 * (i % 7) as f64
    })
}

fn distribute(
    comm: &Communicator,
    op: &dyn LinearOperator<f64>,
    g: &Array1<f64>,
    domain: bool,
) -> DistVector<f64> {
    let space = if domain { op.domain() } else { op.range() };
    let layout: &Layout = space.layout().expect("plain space");
    DistVector::Array(
        DistributedArray::to_dist(comm, g.view().into_dyn(), layout).expect("to_dist"),
    )
}

fn check(name: &str, comm: &Communicator, got: ArrayD<f64>, expected: Vec<f64>) {
    let expected = Array1::from(expected).into_dyn();
    let err =
        (&got - &expected).mapv(|v| v * v).sum().sqrt() / expected.mapv(|v| v * v).sum().sqrt();
    if comm.rank() == 0 {
        println!("{name:<28} relative error vs serial: {err:.1e}");
    }
    assert!(err < 1e-12, "{name}: {err:e}");
}

fn run(comm: &Communicator) -> Result<(), Box<dyn std::error::Error>> {
    let (p, n) = (comm.size(), DIMS[0] * DIMS[1]);
    for axis in [0, 1] {
        let mine = || -> Result<Vec<Box<dyn LocalOperator<f64>>>, distlops::core::Error> {
            Ok(vec![Box::new(d2(comm.rank(), axis)?)])
        };

        // VStack: Broadcast model -> Scatter data, y_r = (r + 1) D2 x.
        let vstack = VStack::new(comm, mine()?)?;
        let x = signal(n, 0.1);
        let y = vstack.apply(&distribute(comm, &vstack, &x, true))?;
        let expected: Vec<f64> = (0..p)
            .flat_map(|r| serial(r, axis, x.as_slice().unwrap(), false))
            .collect();
        check(&format!("VStack, axis {axis}"), comm, y.asarray(), expected);
        let yd = signal(n * p, 0.2);
        let xa = vstack.apply_adjoint(&distribute(comm, &vstack, &yd, false))?;
        let mut expected = vec![0.0; n];
        for r in 0..p {
            let part = serial(r, axis, &yd.as_slice().unwrap()[r * n..(r + 1) * n], true);
            expected.iter_mut().zip(part).for_each(|(e, v)| *e += v);
        }
        check(
            &format!("VStack adjoint, axis {axis}"),
            comm,
            xa.asarray(),
            expected,
        );

        // HStack: Scatter model -> Broadcast data, y = sum_r (r + 1) D2 x_r.
        let hstack = HStack::new(comm, mine()?)?;
        let y = hstack.apply(&distribute(comm, &hstack, &yd, true))?;
        let mut expected = vec![0.0; n];
        for r in 0..p {
            let part = serial(r, axis, &yd.as_slice().unwrap()[r * n..(r + 1) * n], false);
            expected.iter_mut().zip(part).for_each(|(e, v)| *e += v);
        }
        check(&format!("HStack, axis {axis}"), comm, y.asarray(), expected);

        // BlockDiag: Scatter -> Scatter, block r = (r + 1) D2.
        let bd = BlockDiag::new(comm, mine()?)?;
        let xb = signal(n * p, 0.3);
        let y = bd.apply(&distribute(comm, &bd, &xb, true))?;
        let expected: Vec<f64> = (0..p)
            .flat_map(|r| serial(r, axis, &xb.as_slice().unwrap()[r * n..(r + 1) * n], false))
            .collect();
        check(
            &format!("BlockDiag, axis {axis}"),
            comm,
            y.asarray(),
            expected,
        );

        for (name, op) in [
            ("VStack", &vstack as &dyn LinearOperator<f64>),
            ("HStack", &hstack),
            ("BlockDiag", &bd),
        ] {
            let mut u = op.new_domain_vector()?;
            let mut v = op.new_range_vector()?;
            u.copy_from(&distribute(
                comm,
                op,
                &signal(op.domain().global_len(), 0.7),
                true,
            ))?;
            v.copy_from(&distribute(
                comm,
                op,
                &signal(op.range().global_len(), 0.9),
                false,
            ))?;
            let d = dottest(op, &u, &v)?;
            assert!(d.passes(1e-12), "{name} dot test: {d:?}");
        }
        if comm.rank() == 0 {
            println!("dot tests of VStack, HStack, BlockDiag along axis {axis}: passed");
        }
    }
    Ok(())
}

/// `[RANKS]` thread ranks (default 3), or the ranks of `mpirun`.
fn main() {
    distlops::run_with(ranks::from_args(3), run);
}
