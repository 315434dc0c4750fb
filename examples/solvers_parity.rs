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

use distlops::core::operator::LinearOperator;
use distlops::core::{Communicator, Complex64, DistVector, Scalar, Space};
use distlops::ndarray::{Array1, Array2, ArrayD, Axis, IxDyn};
use distlops::operators::local::{LocalOperator, MatrixMult};
use distlops::operators::BlockDiag;
use distlops::solvers::{
    fista, ista, lsqr, IstaParams, LsqrParams, PowerIterationParams, Threshold,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const NBLOCKS: usize = 4;

/// The two dtypes of the parity cases, read from and written to real `.npy` arrays.
trait Parity: Scalar<Real = f64> {
    /// The dtype's name in the case files.
    const NAME: &'static str;
    /// Reads an array of this dtype (complex: a last axis of 2).
    fn read(path: &Path) -> Result<ArrayD<Self>, BoxError>;
    /// The values as a real array (complex: a last axis of 2).
    fn to_real(v: &[Self]) -> ArrayD<f64>;
}

impl Parity for f64 {
    const NAME: &'static str = "f64";
    fn read(path: &Path) -> Result<ArrayD<f64>, BoxError> {
        Ok(ndarray_npy::read_npy(path)?)
    }
    fn to_real(v: &[f64]) -> ArrayD<f64> {
        Array1::from(v.to_vec()).into_dyn()
    }
}

impl Parity for Complex64 {
    const NAME: &'static str = "c128";
    fn read(path: &Path) -> Result<ArrayD<Complex64>, BoxError> {
        let a: ArrayD<f64> = ndarray_npy::read_npy(path)?;
        let last = a.ndim() - 1;
        let shape = &a.shape()[..last];
        let re = a.index_axis(Axis(last), 0);
        let im = a.index_axis(Axis(last), 1);
        let values = re
            .iter()
            .zip(im.iter())
            .map(|(&r, &i)| Complex64::new(r, i));
        Ok(ArrayD::from_shape_vec(IxDyn(shape), values.collect())?)
    }
    fn to_real(v: &[Complex64]) -> ArrayD<f64> {
        let flat: Vec<f64> = v.iter().flat_map(|z| [z.re, z.im]).collect();
        ArrayD::from_shape_vec(IxDyn(&[v.len(), 2]), flat).expect("two values per element")
    }
}

/// One line of `cases.txt`: a name and its `key=value` pairs.
struct Case {
    name: String,
    p: HashMap<String, String>,
}

impl Case {
    fn parse(line: &str) -> Option<Case> {
        let mut words = line.split_whitespace();
        let name = words.next()?.to_string();
        let p = words
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Some(Case { name, p })
    }
    fn get(&self, key: &str) -> Option<&str> {
        self.p.get(key).map(String::as_str)
    }
    fn f64_or(&self, key: &str, default: f64) -> Result<f64, BoxError> {
        Ok(self
            .get(key)
            .map(str::parse)
            .transpose()?
            .unwrap_or(default))
    }
}

/// This rank's part of a global vector, in `space` (a plain Scatter array).
fn dist<T: Scalar>(
    comm: &Communicator,
    space: &Space,
    global: &[T],
) -> Result<DistVector<T>, BoxError> {
    let mut v = space.zeros::<T>(comm)?;
    let DistVector::Array(a) = &mut v else {
        return Err("a plain vector expected".into());
    };
    let off = a.layout().offset(a.rank());
    let n = a.local_slice().len();
    a.local_slice_mut().copy_from_slice(&global[off..off + n]);
    Ok(v)
}

fn save(out: &Path, name: &str, what: &str, a: &ArrayD<f64>) -> Result<(), BoxError> {
    ndarray_npy::write_npy(out.join(format!("{name}_{what}.npy")), a)?;
    Ok(())
}

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
    let y = dist(comm, op.range(), y.as_slice().ok_or("contiguous y")?)?;
    let x0 = T::read(&dir.join(format!("{stem}_x0.npy")))?;
    let x0 = dist(comm, op.domain(), x0.as_slice().ok_or("contiguous x0")?)?;
    let x0 = (case.get("x0") == Some("1")).then(|| x0.view());
    let (x, scalars, cost) = match case.get("solver") {
        Some("lsqr") => {
            let params = LsqrParams {
                damp: case.f64_or("damp", 0.0)?,
                atol: case.f64_or("atol", 1e-6)?,
                btol: case.f64_or("btol", 1e-6)?,
                conlim: case.f64_or("conlim", 1e8)?,
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
                eps: case.f64_or("eps", 0.1)?,
                alpha,
                eigs: PowerIterationParams {
                    niter: case.f64_or("eigs_niter", 10.0)? as usize,
                    tol: case.f64_or("eigs_tol", 0.0)?,
                    ..PowerIterationParams::default()
                },
                tol: case.f64_or("tol", 1e-10)?,
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
        save(
            out,
            &case.name,
            "x",
            &T::to_real(x.as_slice().ok_or("contiguous x")?),
        )?;
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

fn run(comm: &Communicator, dir: &Path) -> Result<(), BoxError> {
    if NBLOCKS % comm.size() != 0 {
        return Err(format!("{} ranks do not divide {NBLOCKS} blocks", comm.size()).into());
    }
    let out = dir.join(format!("rs-np{}", comm.size()));
    std::fs::create_dir_all(&out)?;
    let cases = std::fs::read_to_string(dir.join("cases.txt"))?;
    for case in cases.lines().filter_map(Case::parse) {
        match case.get("dtype") {
            Some("f64") => run_case::<f64>(comm, dir, &out, &case)?,
            Some("c128") => run_case::<Complex64>(comm, dir, &out, &case)?,
            other => return Err(format!("{}: unknown dtype {other:?}", case.name).into()),
        }
    }
    if comm.rank() == 0 {
        println!("distlops: wrote {}", out.display());
    }
    Ok(())
}

fn folder() -> Result<PathBuf, BoxError> {
    Ok(std::env::args()
        .nth(1)
        .ok_or("usage: solvers_parity DIR [RANKS]")?
        .into())
}

#[cfg(feature = "mpi")]
fn main() -> std::process::ExitCode {
    match folder() {
        Ok(dir) => distlops::core::mpi::run(|world| run(world, &dir)),
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(not(feature = "mpi"))]
fn main() -> Result<(), BoxError> {
    let dir = folder()?;
    let nranks = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let results =
        distlops::core::Threads::run(nranks, |comm| run(&comm, &dir).map_err(|e| e.to_string()));
    results.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(())
}
