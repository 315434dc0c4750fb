//! distlops' side of `benchmarks/parity/run-solvers.sh`: LSQR, ISTA and FISTA on the inputs that
//! `benchmarks/parity/solvers.py make DIR` wrote, results into `DIR/rs-npN` for
//! `solvers.py compare`.
//!
//! The operator is `BlockDiag` of the four dense blocks `DIR/{problem}_{dtype}_A{k}.npy`, rank `r`
//! of `N` holding blocks `4r/N .. 4(r+1)/N` (as PyLops-MPI's `MPIBlockDiag` of `MatrixMult` in the
//! reference run), so the global problem is the same at every rank count. Complex arrays are
//! stored as real arrays with a last axis of 2 (re, im).
//!
//! Threads (no MPI needed):   cargo run --release --example solvers_parity -- DIR 2
//! MPI:                       cargo build --release --features mpi --example solvers_parity
//!                            mpirun -n 2 target/release/examples/solvers_parity DIR

#[path = "common/parity.rs"]
mod parity;

use distlops::core::operator::LinearOperator;
use distlops::core::{Communicator, Complex64};
use distlops::ndarray::{Array1, Array2};
use distlops::operators::local::{LocalOperator, MatrixMult};
use distlops::operators::BlockDiag;
use distlops::solvers::{
    fista, ista, lsqr, IstaParams, LsqrParams, PowerIterationParams, Threshold,
};
use parity::{dist, save, BoxError, Case, Parity};
use std::path::Path;

const NBLOCKS: usize = 4;

fn run_case<T: Parity>(
    comm: &Communicator,
    dir: &Path,
    out: &Path,
    case: &Case,
) -> Result<(), BoxError> {
    let problem = case.get("problem").ok_or("no problem")?;
    let stem = format!("{problem}_{}", T::NAME);
    let per = NBLOCKS / comm.size();
    let mut ops: Vec<Box<dyn LocalOperator<T>>> = Vec::new();
    for k in comm.rank() * per..(comm.rank() + 1) * per {
        let a = T::read(&dir.join(format!("{stem}_A{k}.npy")))?;
        let a: Array2<T> = a.into_dimensionality()?;
        ops.push(Box::new(MatrixMult::new(a)?));
    }
    let op = BlockDiag::new(comm, ops)?;
    let y = T::read(&dir.join(format!("{stem}_y.npy")))?;
    let y = dist(comm, op.range(), y.view())?;
    let x0 = T::read(&dir.join(format!("{stem}_x0.npy")))?;
    let x0 = dist(comm, op.domain(), x0.view())?;
    let x0 = (case.get("x0") == Some("1")).then(|| x0.view());
    let (x, scalars, cost) = match case.get("solver") {
        Some("lsqr") => {
            let params = LsqrParams {
                damp: case.parse_or("damp", 0.0)?,
                atol: case.parse_or("atol", 1e-6)?,
                btol: case.parse_or("btol", 1e-6)?,
                conlim: case.parse_or("conlim", 1e8)?,
                niter: case.get("niter").map(str::parse).transpose()?,
                ..LsqrParams::default()
            };
            let sol = lsqr(&op, &y, x0, params, None)?;
            let istop = sol.istop.map_or(-1.0, |s| f64::from(s.code()));
            let scalars = vec![
                istop,
                sol.info.iterations as f64,
                sol.r1norm,
                sol.r2norm,
                sol.anorm,
                sol.acond,
                sol.arnorm,
                sol.xnorm,
            ];
            (sol.x, scalars, None)
        }
        Some(kind @ ("ista" | "fista")) => {
            let niter: usize = case.get("niter").ok_or("no niter")?.parse()?;
            let alpha = match case.get("alpha") {
                None | Some("none") => None,
                Some(a) => Some(a.parse()?),
            };
            let decay = if case.get("decay") == Some("1") {
                let d: Array1<f64> = ndarray_npy::read_npy(dir.join("decay.npy"))?;
                Some(d.iter().take(niter).copied().collect())
            } else {
                None
            };
            let params = IstaParams {
                niter,
                eps: case.parse_or("eps", 0.1)?,
                alpha,
                eigs: PowerIterationParams {
                    niter: case.parse_or("eigs_niter", 10.0)? as usize,
                    tol: case.parse_or("eigs_tol", 0.0)?,
                    ..PowerIterationParams::default()
                },
                tol: case.parse_or("tol", 1e-10)?,
                threshkind: case
                    .get("threshkind")
                    .unwrap_or("soft")
                    .parse::<Threshold>()?,
                decay,
                ..IstaParams::default()
            };
            let sol = if kind == "ista" {
                ista(&op, &y, x0, params, None)?
            } else {
                fista(&op, &y, x0, params, None)?
            };
            let cost = Array1::from(sol.info.cost.clone()).into_dyn();
            (sol.x, vec![sol.info.iterations as f64], Some(cost))
        }
        other => return Err(format!("unknown solver {other:?}").into()),
    };
    let x = x.asarray();
    if comm.rank() == 0 {
        save(out, &case.name, "x", &T::to_real(&x))?;
        save(
            out,
            &case.name,
            "scalars",
            &Array1::from(scalars).into_dyn(),
        )?;
        if let Some(cost) = cost {
            save(out, &case.name, "cost", &cost)?;
        }
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    parity::main("solvers_parity", |comm, dir| {
        parity::run_cases(
            comm,
            dir,
            Some(NBLOCKS),
            run_case::<f64>,
            run_case::<Complex64>,
        )
    })
}
