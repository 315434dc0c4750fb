//! distlops' side of `benchmarks/parity/run-proximal.sh`: ProximalGradient, AdmmL2, PrimalDual,
//! L2Data's prox and composed proximal operators on the inputs that
//! `benchmarks/parity/proximal.py make DIR` wrote, results into `DIR/rs-npN` for
//! `proximal.py compare`.
//!
//! The data operator is `BlockDiag` of the four dense blocks `DIR/{dtype}_A{k}.npy`, rank `r`
//! of `N` holding blocks `4r/N .. 4(r+1)/N`, its domain the 8 x 15 image split along its first
//! axis (each block acts on two rows), as PyLops-MPI's `MPIBlockDiag` of `MatrixMult` beside
//! `MPIGradient` in the reference run. Complex arrays are stored as real arrays with a last axis
//! of 2 (re, im).
//!
//! Threads (no MPI needed):   cargo run --release --example proximal_parity -- DIR 2
//! MPI:                       cargo build --release --features mpi --example proximal_parity
//!                            mpirun -n 2 target/release/examples/proximal_parity DIR

#[path = "common/parity.rs"]
mod parity;

use distlops::core::operator::LinearOperator;
use distlops::core::{Communicator, Complex64, DistVector, Layout, RealScalar, Vector};
use distlops::ndarray::{Array1, Array2, ArrayD, IxDyn};
use distlops::operators::local::{LocalOperator, MatrixMult};
use distlops::operators::{BlockDiag, DerivativeKind, Gradient, GradientParams};
use distlops::solvers::{
    admm_l2, linearized_admm, primal_dual, proximal_gradient, Acceleration, AdmmL2Params,
    AffineAddition, CgParams, L2Data, LinearizedAdmmParams, Postcomposition, Precomposition,
    PrimalDualParams, Proximal, ProximalGradientParams, Shift, Steps, L1, L2, L21,
};
use parity::{dist, save, BoxError, Case, Parity};
use std::path::Path;

const NBLOCKS: usize = 4;
const DIMS: [usize; 2] = [8, 15];
const BLOCK_ROWS: usize = 24;

/// Every value of `v` (the parts of a stack one after the other), as the reference flattens.
fn flat<T: Parity>(v: &DistVector<T>) -> ArrayD<f64> {
    let values: Vec<T> = v.asarray().iter().copied().collect();
    T::to_real(&Array1::from(values).into_dyn())
}

/// The inverse of [`flat`] for this rank: the image `DIR/{dtype}_{stem}.npy` in `op`'s domain.
fn image<T: Parity>(
    comm: &Communicator,
    dir: &Path,
    stem: &str,
    op: &dyn LinearOperator<T>,
) -> Result<DistVector<T>, BoxError> {
    let a = T::read(&dir.join(format!("{}_{stem}.npy", T::NAME)))?;
    let a = a.into_shape_with_order(IxDyn(&DIMS))?;
    dist(comm, op.domain(), a.view())
}

fn run_case<T: Parity>(
    comm: &Communicator,
    dir: &Path,
    out: &Path,
    case: &Case,
) -> Result<(), BoxError> {
    let per = NBLOCKS / comm.size();
    let mut ops: Vec<Box<dyn LocalOperator<T>>> = Vec::new();
    for k in comm.rank() * per..(comm.rank() + 1) * per {
        let a = T::read(&dir.join(format!("{}_A{k}.npy", T::NAME)))?;
        let a: Array2<T> = a.into_dimensionality()?;
        ops.push(Box::new(MatrixMult::new(a)?));
    }
    let domain = Layout::scatter(&DIMS, 0, comm.size())?;
    let range = Layout::scatter(&[NBLOCKS * BLOCK_ROWS], 0, comm.size())?;
    let op = BlockDiag::new(comm, ops)?.with_spaces(&domain, &range)?;
    let zeros = op.domain().zeros::<T>(comm)?;
    let grad = || {
        let forward = GradientParams {
            kind: DerivativeKind::Forward,
            ..GradientParams::default()
        };
        Gradient::<T>::with_layout(comm, &domain, forward)
    };
    let data = |stem: &str| -> Result<DistVector<T>, BoxError> {
        let y = T::read(&dir.join(format!("{}_{stem}_y.npy", T::NAME)))?;
        dist(comm, op.range(), y.view())
    };
    let inner = |niter: usize| CgParams {
        niter,
        tol: 0.0,
        ..CgParams::default()
    };
    let sigma: f64 = case.parse_or("sigma", 1.0)?;
    let niter: usize = case.parse_or("niter", 10)?;
    let mut outputs: Vec<(&str, ArrayD<f64>)> = Vec::new();
    match case.get("kind") {
        Some("pg") => {
            let y = data(case.get("model").ok_or("no model")?)?;
            let f = L2Data::new(&op, &y, 1.0)?;
            let acceleration = match case.get("accel") {
                Some("none") => Acceleration::None,
                Some("fista") => Acceleration::Fista,
                Some("vandenberghe") => Acceleration::Vandenberghe,
                other => return Err(format!("unknown acceleration {other:?}").into()),
            };
            let params = ProximalGradientParams {
                niter,
                tau: Some(case.parse_or("tau", 0.0)?),
                acceleration,
                ..ProximalGradientParams::default()
            };
            let sol = proximal_gradient(&f, &L1 { sigma }, &zeros, params, None)?;
            outputs.push(("x", flat(&sol.x)));
        }
        Some("admm") => {
            let y = data(case.get("model").ok_or("no model")?)?;
            let params = AdmmL2Params {
                niter,
                gfirst: case.flag_or("gfirst", false)?,
                inner: inner(case.parse_or("inner", 10)?),
                ..AdmmL2Params::new(case.parse_or("tau", 1.0)?)
            };
            let x0 = match case.flag_or("x0", false)? {
                true => image::<T>(comm, dir, "x0", &op)?,
                false => zeros.clone(),
            };
            let sol = admm_l2(&L1 { sigma }, &op, &y, &grad()?, &x0, params, None)?;
            outputs.push(("x", flat(&sol.x)));
            outputs.push(("z", flat(&sol.z)));
        }
        Some("pd") => {
            let y = data(case.get("model").ok_or("no model")?)?;
            let mut f = L2Data::new(&op, &y, 1.0)?.with_x0(&zeros)?;
            f.inner = inner(case.parse_or("inner", 10)?);
            let params = PrimalDualParams {
                niter,
                tau: Some(Steps::Fixed(case.parse_or("tau", 0.0)?)),
                mu: Some(Steps::Fixed(case.parse_or("mu", 0.0)?)),
                theta: case.parse_or("theta", 1.0)?,
                gfirst: case.flag_or("gfirst", true)?,
                ..PrimalDualParams::default()
            };
            let sol = primal_dual(&f, &L21 { sigma }, &grad()?, &zeros, params, None)?;
            outputs.push(("x", flat(&sol.x)));
            outputs.push(("y", flat(&sol.y)));
        }
        Some("ladmm") => {
            // 1/2 |x - w|^2 as L2 plus the linear term -w^T x (the same prox, pyproximal's
            // L2(b=w)), sigma |grad x|_1.
            let mut minus_w = image::<T>(comm, dir, "w", &op)?;
            minus_w.scale(-T::one());
            let f = AffineAddition::new(L2 { sigma: 1.0 }, minus_w);
            let params = LinearizedAdmmParams {
                niter,
                ..LinearizedAdmmParams::new(case.parse_or("tau", 1.0)?, case.parse_or("mu", 0.1)?)
            };
            let sol = linearized_admm(&f, &L1 { sigma }, &grad()?, &zeros, params, None)?;
            outputs.push(("x", flat(&sol.x)));
            outputs.push(("z", flat(&sol.z)));
        }
        Some("l2prox") => {
            let y = data("blocky")?;
            let x0 = image::<T>(comm, dir, "x0", &op)?;
            let mut f = L2Data::new(&op, &y, sigma)?.with_x0(&x0)?;
            f.inner = inner(case.parse_or("inner", 10)?);
            let v = image::<T>(comm, dir, "v", &op)?;
            let w = image::<T>(comm, dir, "w", &op)?;
            outputs.push(("prox1", flat(&f.prox(v.view(), 0.5)?)));
            outputs.push(("prox2", flat(&f.prox(w.view(), 0.3)?)));
            outputs.push(("grad", flat(&f.grad(v.view())?)));
            let value = f.value(v.view())?;
            outputs.push(("value", Array1::from(vec![value]).into_dyn()));
        }
        Some("composed") => {
            let v = image::<T>(comm, dir, "v", &op)?;
            let b = image::<T>(comm, dir, "b", &op)?;
            let l1 = L1 { sigma: 0.4 };
            let shift = T::from_real(<T::Real as RealScalar>::real_from_f64(0.2));
            let pre_scalar = Precomposition::new(l1, -1.5, Shift::Scalar(shift));
            let affine = AffineAddition::new(l1, b.clone());
            let pre_vector = Precomposition::new(l1, 2.0, Shift::Vector(b));
            let post = Postcomposition::new(l1, 2.5);
            let fs: [&dyn Proximal<T>; 3] = [&pre_scalar, &pre_vector, &post];
            let mut proxes = Vec::new();
            let mut values = Vec::new();
            for f in fs {
                proxes.extend(flat(&f.prox(v.view(), 0.7)?).iter().copied());
                values.push(f.value(v.view())?);
            }
            let mut shape = vec![proxes.len()];
            if T::NAME == "c128" {
                shape = vec![proxes.len() / 2, 2];
            }
            outputs.push(("prox", ArrayD::from_shape_vec(IxDyn(&shape), proxes)?));
            outputs.push(("value", Array1::from(values).into_dyn()));
            outputs.push(("affine", flat(&affine.prox(v.view(), 0.7)?)));
            if T::NAME == "f64" {
                let value = affine.value(v.view())?;
                outputs.push(("affinevalue", Array1::from(vec![value]).into_dyn()));
            }
        }
        other => return Err(format!("{}: unknown kind {other:?}", case.name).into()),
    }
    if comm.rank() == 0 {
        for (what, a) in outputs {
            save(out, &case.name, what, &a)?;
        }
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    parity::main("proximal_parity", |comm, dir| {
        parity::run_cases(
            comm,
            dir,
            Some(NBLOCKS),
            run_case::<f64>,
            run_case::<Complex64>,
        )
    })
}
