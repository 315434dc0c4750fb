//! W7 `vstack_matmul`: `VStack` of per-rank row blocks of a dense `4000 x 2000` matrix; matvec
//! takes a replicated `x` to a split `A x`, rmatvec a split `y` to a replicated `A^H y`.

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

/// W7: `A = sym(ROWS * COLS)` row-major, then `x = sym(COLS)`, then `y = sym(ROWS)`.
pub fn w7<T: BenchScalar>(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let rows = Layout::scatter(&[ROWS], 0, comm.size())?;
    let (r0, nr) = (rows.offset(comm.rank()), rows.count(comm.rank()));
    let (a, next) = block::<T>(0, ROWS * COLS, r0 * COLS, nr * COLS, sym);
    let a = Array2::from_shape_vec((nr, COLS), a)?;
    let block_op: Box<dyn LocalOperator<T>> = Box::new(MatrixMult::new(a)?);
    let op = VStack::new(comm, vec![block_op])?;
    let (x, next) = block::<T>(next, COLS, 0, COLS, sym);
    let x: DistVector<T> = DistributedArray::from_local_with_layout(
        comm,
        &Layout::broadcast(&[COLS], comm.size())?,
        ArrayD::from_shape_vec(vec![COLS], x)?,
    )?
    .into();
    let (y, _) = scatter_array::<T>(comm, &rows, next, sym)?;
    let y: DistVector<T> = y.into();
    // The matrix is read once per product.
    let bytes = Some((ROWS * COLS * std::mem::size_of::<T>()) as f64);
    let base = Record {
        workload: "W7",
        name: "vstack_matmul",
        dtype: T::DTYPE,
        bytes,
        ..Record::default()
    };
    let (times, ax) = time_op(comm, reps, || op.apply(&x))?;
    let (check, check_w) = vector_checks(&ax);
    let fwd = Record {
        op: "matvec",
        global_size: COLS,
        shape: [ROWS, COLS],
        times,
        check,
        check_w: Some(check_w),
        ..base.clone()
    };
    let (times, aty) = time_op(comm, reps, || op.apply_adjoint(&y))?;
    let (check, check_w) = vector_checks(&aty);
    let adj = Record {
        op: "rmatvec",
        global_size: ROWS,
        shape: [ROWS, COLS],
        times,
        check,
        check_w: Some(check_w),
        ..base
    };
    Ok(vec![fwd, adj])
}
