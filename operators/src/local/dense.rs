//! [`to_dense`]: the explicit matrix of a local operator, for tests and serial references.

use super::LocalOperator;
use distlops_core::Scalar;
use ndarray::Array2;

/// The `nrows x ncols` matrix of `op`, column `j` being `op` applied to the `j`-th unit vector
/// (PyLops' `todense`). Costs `ncols` applications and `nrows * ncols` memory.
pub fn to_dense<T: Scalar, L: LocalOperator<T> + ?Sized>(op: &L) -> Array2<T> {
    let (nrows, ncols) = (op.nrows(), op.ncols());
    let mut dense = Array2::zeros((nrows, ncols));
    let mut unit = vec![T::zero(); ncols];
    let mut column = vec![T::zero(); nrows];
    for j in 0..ncols {
        unit[j] = T::one();
        op.matvec(&unit, &mut column);
        unit[j] = T::zero();
        dense
            .column_mut(j)
            .assign(&ndarray::ArrayView1::from(&column[..]));
    }
    dense
}
