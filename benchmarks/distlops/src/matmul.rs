//! W7 `vstack_matmul`: `VStack` of per-rank row blocks of a dense `4000 x 2000` matrix; matvec
//! takes a replicated `x` to a split `A x`, rmatvec a split `y` to a replicated `A^H y`.

use crate::device::{time_on, BenchEngine};
use crate::inputs::{block, scatter_array, sym, BenchScalar};
use crate::measure::{time_op, vector_checks, Record};
use crate::Res;
use distlops::core::operator::LinearOperatorExt;
use distlops::core::{Communicator, DistVector, DistributedArray, Layout};
use distlops::ndarray::{Array2, ArrayD};
use distlops::operators::local::{LocalOperator, MatrixMult};
use distlops::operators::VStack;

/// The matrix's rows and columns.
const ROWS: usize = 4000;
const COLS: usize = 2000;

/// W7's inputs: this rank's row block of `A = sym(ROWS * COLS)` (row-major), then
/// `x = sym(COLS)` (replicated), then `y = sym(ROWS)` (split), and the records' common fields.
#[allow(clippy::type_complexity)]
fn w7_inputs<T: BenchScalar>(
    comm: &Communicator,
) -> Res<(Array2<T>, DistVector<T>, DistVector<T>, Record)> {
    let rows = Layout::scatter(&[ROWS], 0, comm.size())?;
    let (r0, nr) = (rows.offset(comm.rank()), rows.count(comm.rank()));
    let (a, next) = block::<T>(0, ROWS * COLS, r0 * COLS, nr * COLS, sym);
    let a = Array2::from_shape_vec((nr, COLS), a)?;
    let (x, next) = block::<T>(next, COLS, 0, COLS, sym);
    let x: DistVector<T> = DistributedArray::from_local_with_layout(
        comm,
        &Layout::broadcast(&[COLS], comm.size())?,
        ArrayD::from_shape_vec(vec![COLS], x)?,
    )?
    .into();
    let (y, _) = scatter_array::<T>(comm, &rows, next, sym)?;
    // The matrix is read once per product.
    let bytes = Some((ROWS * COLS * std::mem::size_of::<T>()) as f64);
    let base = Record {
        workload: "W7",
        name: "vstack_matmul",
        dtype: T::DTYPE,
        bytes,
        ..Record::default()
    };
    Ok((a, x, y.into(), base))
}

/// The two records of W7 from the times and checks of its forward and adjoint products.
fn w7_records(
    base: Record,
    fwd: (Vec<f64>, (f64, f64)),
    adj: (Vec<f64>, (f64, f64)),
) -> Vec<Record> {
    let record = |op, global_size, (times, (check, check_w)): (Vec<f64>, (f64, f64))| Record {
        op,
        global_size,
        shape: [ROWS, COLS],
        times,
        check,
        check_w: Some(check_w),
        ..base.clone()
    };
    vec![record("matvec", COLS, fwd), record("rmatvec", ROWS, adj)]
}

/// W7 on the host.
pub fn w7<T: BenchScalar>(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let (a, x, y, base) = w7_inputs::<T>(comm)?;
    let block_op: Box<dyn LocalOperator<T>> = Box::new(MatrixMult::new(a)?);
    let op = VStack::new(comm, vec![block_op])?;
    let (times, ax) = time_op(comm, reps, || op.apply(&x))?;
    let fwd = (times, vector_checks(&ax));
    let (times, aty) = time_op(comm, reps, || op.apply_adjoint(&y))?;
    let adj = (times, vector_checks(&aty));
    Ok(w7_records(base, fwd, adj))
}

/// W7 on engine `E`: the row block and the vectors moved there with `into_engine` (on the host
/// engine they stay where they are: one copy of the matrix, as [`w7`]).
pub fn w7_on<T: BenchScalar, E: BenchEngine>(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let engine = E::for_rank(comm)?;
    let (a, x, y, base) = w7_inputs::<T>(comm)?;
    let block = MatrixMult::new(a)?.into_engine(&engine);
    let block_op: Box<dyn LocalOperator<T, E>> = Box::new(comm.agree_value(block)?);
    let op = VStack::new(comm, vec![block_op])?;
    let (x, y) = (x.into_engine(&engine)?, y.into_engine(&engine)?);
    let fwd = time_on(comm, &engine, reps, &op, &x, false)?;
    let adj = time_on(comm, &engine, reps, &op, &y, true)?;
    Ok(w7_records(base, fwd, adj))
}
