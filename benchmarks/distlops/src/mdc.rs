//! W8 `mdc`: multi-dimensional convolution with the kernel of PyLops-MPI's `examples/plot_mdc.py`
//! (kept in float64 / complex128), forward on the example's model and adjoint on the result.
//!
//! The kernel `G` (`(200, 101, 61)` complex, frequency, source, receiver) and the model `m`
//! (`(799, 61)`, time, receiver) are read from `G.npy` and `m.npy` in the `--inputs` folder,
//! written by `benchmarks/pylops/bench.py --workload W8 --write-inputs DIR` (`G` as float64
//! `(re, im)` pairs, shape `(200, 101, 61, 2)`). Each rank reads only its frequencies of `G` and
//! its times of `m`. Without `--inputs`, `G = sym + i sym` and `m = sym` from the benchmark's
//! random stream (same shapes, same cost; checksums then differ from PyLops-MPI's).
//!
//! distlops' `Mdc` keeps model and data split along time (axis 0, PyLops-MPI's split of the
//! flattened vectors) and moves them to the kernel's frequency split inside the product; the
//! model `x` and the data `y` are the same arrays as PyLops-MPI's (which holds both whole on
//! every rank), so the checksums compare directly.

use crate::device::{time_on, upload, BenchEngine};
use crate::inputs::{block, scatter_array, sym};
use crate::measure::{time_op, vector_checks, Record};
use crate::Res;
use distlops::core::operator::LinearOperatorExt;
use distlops::core::ToEngine;
use distlops::core::{Communicator, Complex64, DistVector, DistributedArray, Layout};
use distlops::io::npy::NpyFile;
use distlops::ndarray::{Array3, ArrayD};
use distlops::operators::{Mdc, MdcParams};
use std::path::Path;

/// Two-sided time samples, receivers, sources, kernel frequencies, virtual sources.
const NT: usize = 799;
const NR: usize = 61;
const NS: usize = 101;
const NF: usize = 200;
const NV: usize = 1;

/// This rank's frequencies of the kernel, `(nf_rank, NS, NR)`, split with the balanced counts.
fn kernel(comm: &Communicator, inputs: Option<&Path>) -> Res<Array3<Complex64>> {
    let freqs = Layout::scatter(&[NF], 0, comm.size())?;
    let (f0, nfl) = (freqs.offset(comm.rank()), freqs.count(comm.rank()));
    let values: Vec<Complex64> = match inputs {
        Some(dir) => {
            let file = NpyFile::open(comm, dir.join("G.npy"))?;
            let pairs = file.read::<f64>(&Layout::scatter(&[NF, NS, NR, 2], 0, comm.size())?)?;
            pairs
                .local_slice()
                .chunks_exact(2)
                .map(|p| Complex64::new(p[0], p[1]))
                .collect()
        }
        None => block::<Complex64>(0, NF * NS * NR, f0 * NS * NR, nfl * NS * NR, sym).0,
    };
    Ok(Array3::from_shape_vec((nfl, NS, NR), values)?)
}

/// This rank's times of the model, `(NT, NR, NV)` split along time.
fn model(comm: &Communicator, inputs: Option<&Path>, layout: &Layout) -> Res<DistVector<f64>> {
    let x = match inputs {
        Some(dir) => {
            let file = NpyFile::open(comm, dir.join("m.npy"))?;
            let m = file.read::<f64>(&Layout::scatter(&[NT, NR], 0, comm.size())?)?;
            let local =
                ArrayD::from_shape_vec(layout.local_shape(comm.rank()), m.local_slice().to_vec())?;
            DistributedArray::from_local_with_layout(comm, layout, local)?
        }
        None => scatter_array::<f64>(comm, layout, NF * NS * NR * 2, sym)?.0,
    };
    Ok(x.into())
}

/// W8's operator (`MDC(G, nt = 799, nv = 1, dt = 0.004, dr = 1, twosided)`), model and the
/// records' common fields.
fn w8_setup(
    comm: &Communicator,
    inputs: Option<&Path>,
) -> Res<(Mdc<f64>, DistVector<f64>, Record)> {
    let g = kernel(comm, inputs)?;
    let op = Mdc::<f64>::new(
        comm,
        g.view(),
        NT,
        NV,
        MdcParams {
            nfreq: Some(NF),
            dt: 0.004,
            dr: 1.0,
            twosided: true,
            ..Default::default()
        },
    )?;
    drop(g);
    let layout = Layout::scatter(&[NT, NR, NV], 0, comm.size())?;
    let m = model(comm, inputs, &layout)?;
    let base = Record {
        workload: "W8",
        name: "mdc",
        dtype: "float64",
        shape: [NT * NS * NV, NT * NR * NV],
        ..Record::default()
    };
    Ok((op, m, base))
}

/// W8's two records from the times and checks of the forward and adjoint products.
fn w8_records(
    base: Record,
    fwd: (Vec<f64>, (f64, f64)),
    adj: (Vec<f64>, (f64, f64)),
) -> Vec<Record> {
    let [rows, cols] = base.shape;
    let record = |op, global_size, (times, (check, check_w)): (Vec<f64>, (f64, f64))| Record {
        op,
        global_size,
        times,
        check,
        check_w: Some(check_w),
        ..base.clone()
    };
    vec![record("matvec", cols, fwd), record("rmatvec", rows, adj)]
}

/// W8: `d = Op m` and `a = Op^H d`.
pub fn w8(comm: &Communicator, reps: usize, inputs: Option<&Path>) -> Res<Vec<Record>> {
    let (op, m, base) = w8_setup(comm, inputs)?;
    let (times, d) = time_op(comm, reps, || op.apply(&m))?;
    let fwd = (times, vector_checks(&d));
    let (times, a) = time_op(comm, reps, || op.apply_adjoint(&d))?;
    let adj = (times, vector_checks(&a));
    Ok(w8_records(base, fwd, adj))
}

/// W8 on engine `E` (`Mdc::to_engine`): the adjoint is timed on the forward's output, as on the
/// host.
pub fn w8_on<E: BenchEngine>(
    comm: &Communicator,
    reps: usize,
    inputs: Option<&Path>,
) -> Res<Vec<Record>> {
    let engine = E::for_rank(comm)?;
    let (op, m, base) = w8_setup(comm, inputs)?;
    let op = op.to_engine(&engine)?;
    let m = upload(&m, &engine)?;
    let fwd = time_on(comm, &engine, reps, &op, &m, false)?;
    let d = op.apply(&m)?;
    let adj = time_on(comm, &engine, reps, &op, &d, true)?;
    Ok(w8_records(base, fwd, adj))
}
