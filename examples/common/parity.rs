//! What distlops' sides of the case-based parity scripts (`benchmarks/parity/run-*.sh`) share:
//! reading and writing `.npy` arrays of `f64` or `Complex64` (complex arrays stored as real
//! arrays with a last axis of 2, `(re, im)`, as `benchmarks/parity/common.py` does), the case lines
//! of `cases.txt`, distributing a global array, and `main` under MPI or on threads.
//!
//! Included by the examples with `#[path = "common/parity.rs"] mod parity;`; each compiles its own
//! copy and uses a subset of it, hence `dead_code` is allowed here.
#![allow(dead_code)]

use distlops::core::operator::{LinearOperator, LinearOperatorExt};
use distlops::core::{Communicator, Complex64, DistVector, DistributedArray, Scalar, Space};
use distlops::ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The error of the parity examples.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The two dtypes of the parity cases, read from and written to real `.npy` arrays.
pub trait Parity: Scalar<Real = f64> {
    /// The dtype's name in the case files.
    const NAME: &'static str;
    /// Reads an array of this dtype (complex: a last axis of 2).
    fn read(path: &Path) -> Result<ArrayD<Self>, BoxError>;
    /// The values as a real array (complex: a last axis of 2).
    fn to_real(a: &ArrayD<Self>) -> ArrayD<f64>;
}

impl Parity for f64 {
    const NAME: &'static str = "f64";
    fn read(path: &Path) -> Result<ArrayD<f64>, BoxError> {
        Ok(ndarray_npy::read_npy(path)?)
    }
    fn to_real(a: &ArrayD<f64>) -> ArrayD<f64> {
        a.clone()
    }
}

impl Parity for Complex64 {
    const NAME: &'static str = "c128";
    fn read(path: &Path) -> Result<ArrayD<Complex64>, BoxError> {
        let a: ArrayD<f64> = ndarray_npy::read_npy(path)?;
        let last = a
            .ndim()
            .checked_sub(1)
            .ok_or("a complex array needs a last axis")?;
        let shape = &a.shape()[..last];
        let re = a.index_axis(Axis(last), 0);
        let im = a.index_axis(Axis(last), 1);
        let values = re
            .iter()
            .zip(im.iter())
            .map(|(&r, &i)| Complex64::new(r, i));
        Ok(ArrayD::from_shape_vec(IxDyn(shape), values.collect())?)
    }
    fn to_real(a: &ArrayD<Complex64>) -> ArrayD<f64> {
        let mut shape = a.shape().to_vec();
        shape.push(2);
        let flat: Vec<f64> = a.iter().flat_map(|z| [z.re, z.im]).collect();
        ArrayD::from_shape_vec(IxDyn(&shape), flat).expect("two values per element")
    }
}

/// One line of `cases.txt`: a name and its `key=value` pairs.
pub struct Case {
    /// The case's name (the stem of its files).
    pub name: String,
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

    /// The value of `key`, if the line has one.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.p.get(key).map(String::as_str)
    }

    /// The value of `key` parsed, or `default` when the line has none.
    pub fn parse_or<V: std::str::FromStr>(&self, key: &str, default: V) -> Result<V, BoxError>
    where
        V::Err: std::error::Error + Send + Sync + 'static,
    {
        Ok(self
            .get(key)
            .map(str::parse)
            .transpose()?
            .unwrap_or(default))
    }

    /// The comma-separated values of `key` parsed (`default` when the line has none).
    pub fn list_or<V: std::str::FromStr>(
        &self,
        key: &str,
        default: Vec<V>,
    ) -> Result<Vec<V>, BoxError>
    where
        V::Err: std::error::Error + Send + Sync + 'static,
    {
        match self.get(key) {
            None => Ok(default),
            Some(s) => Ok(s.split(',').map(str::parse).collect::<Result<_, _>>()?),
        }
    }

    /// The 0/1 value of `key` as a flag (`default` when the line has none).
    pub fn flag_or(&self, key: &str, default: bool) -> Result<bool, BoxError> {
        Ok(self.parse_or::<u8>(key, u8::from(default))? != 0)
    }
}

/// Every case of `dir/cases.txt`.
pub fn read_cases(dir: &Path) -> Result<Vec<Case>, BoxError> {
    let text = std::fs::read_to_string(dir.join("cases.txt"))?;
    Ok(text.lines().filter_map(Case::parse).collect())
}

/// This rank's part of `global` in `space` (a plain array space: no data moves, every rank
/// holds `global`).
pub fn dist<T: Scalar>(
    comm: &Communicator,
    space: &Space,
    global: ArrayViewD<'_, T>,
) -> Result<DistVector<T>, BoxError> {
    let layout = space.layout()?;
    Ok(DistVector::Array(DistributedArray::to_dist(
        comm, global, layout,
    )?))
}

/// Writes `a` to `out/{name}_{what}.npy`.
pub fn save(out: &Path, name: &str, what: &str, a: &ArrayD<f64>) -> Result<(), BoxError> {
    ndarray_npy::write_npy(out.join(format!("{name}_{what}.npy")), a)?;
    Ok(())
}

/// `op x` and `op^H y` of the global arrays `x` and `y` (in the shapes of the operator's
/// layouts), gathered and written by rank 0 as `out/{name}_fwd.npy` and `out/{name}_adj.npy`.
pub fn write_products(
    comm: &Communicator,
    out: &Path,
    name: &str,
    op: &dyn LinearOperator<f64>,
    (x, y): (ArrayViewD<'_, f64>, ArrayViewD<'_, f64>),
) -> Result<(), BoxError> {
    let xd = dist(comm, op.domain(), x)?;
    let yd = dist(comm, op.range(), y)?;
    let fwd: ArrayD<f64> = op.apply(&xd)?.asarray();
    let adj: ArrayD<f64> = op.apply_adjoint(&yd)?.asarray();
    if comm.rank() == 0 {
        save(out, name, "fwd", &fwd)?;
        save(out, name, "adj", &adj)?;
    }
    Ok(())
}

/// The complex cases of a script whose operator is real: an error naming the case.
pub fn real_only(_: &Communicator, _: &Path, _: &Path, case: &Case) -> Result<(), BoxError> {
    Err(format!(
        "{}: the cases are real ({} not supported)",
        case.name,
        Complex64::NAME
    )
    .into())
}

/// The folder of the cases, the first argument.
fn folder(example: &str) -> Result<PathBuf, BoxError> {
    Ok(std::env::args()
        .nth(1)
        .ok_or_else(|| format!("usage: {example} DIR [RANKS]"))?
        .into())
}

/// Runs `run(comm, DIR)` on every rank (DIR the first argument): on the ranks of `mpirun`, or
/// on RANKS thread ranks (the second argument, default 1).
pub fn main(
    example: &str,
    run: impl Fn(&Communicator, &Path) -> Result<(), BoxError> + Sync,
) -> std::process::ExitCode {
    let dir = match folder(example) {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let nranks = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    distlops::run_with(nranks, |comm| run(comm, &dir));
    std::process::ExitCode::SUCCESS
}

/// One case of one dtype: `(comm, DIR, DIR/rs-npN, case)`.
pub type CaseFn = fn(&Communicator, &Path, &Path, &Case) -> Result<(), BoxError>;

/// Runs every case of `dir/cases.txt` with `real` (dtype `f64`) or `complex` (`c128`), writing
/// into `dir/rs-npN` (created), and says so on rank 0; an error first if `nblocks` blocks do
/// not split evenly over the ranks.
pub fn run_cases(
    comm: &Communicator,
    dir: &Path,
    nblocks: Option<usize>,
    real: CaseFn,
    complex: CaseFn,
) -> Result<(), BoxError> {
    if let Some(n) = nblocks.filter(|n| n % comm.size() != 0) {
        return Err(format!("{} ranks do not divide {n} blocks", comm.size()).into());
    }
    let out = dir.join(format!("rs-np{}", comm.size()));
    std::fs::create_dir_all(&out)?;
    for case in read_cases(dir)? {
        match case.get("dtype") {
            Some(f64::NAME) => real(comm, dir, &out, &case)?,
            Some(Complex64::NAME) => complex(comm, dir, &out, &case)?,
            other => return Err(format!("{}: unknown dtype {other:?}", case.name).into()),
        }
    }
    if comm.rank() == 0 {
        println!("distlops: wrote {}", out.display());
    }
    Ok(())
}
