//! [`Host::gemm`] through a system BLAS (feature `blas`): `cblas_?gemm` of the library named at
//! build time (`DISTLOPS_BLAS_LIB`, default `openblas`), for the row-major operands the
//! distributed matrix products pass; every other call stays on the `gemm` crate.
//!
//! Why an option: on the project's benchmark machine (AMD EPYC, AVX2) OpenBLAS's real GEMM is
//! about 10 % faster than every Rust library measured (see [`super::dense`]'s table), which is
//! what PyLops-MPI calls through NumPy; the pure-Rust default stays the default because it
//! needs no system library. A BLAS runs its own threads unless told otherwise: under `mpirun`,
//! set `OPENBLAS_NUM_THREADS=1` (or the library's equivalent) so ranks do not oversubscribe the
//! cores.
//!
//! Results agree with the `gemm` crate's to rounding (each library sums the inner dimension in
//! its own blocked order).

use crate::engine::MatOp;
use crate::scalar::Scalar;
use ndarray::{ArrayView2, ArrayViewMut2};
use std::ffi::{c_int, c_void};

const ROW_MAJOR: c_int = 101;
const NO_TRANS: c_int = 111;
const TRANS: c_int = 112;
const CONJ_TRANS: c_int = 113;

// The CBLAS interface (LP64: `int` dimensions), one declaration per type: real types take
// `alpha` and `beta` by value, complex ones by pointer (`void *`). The library is linked by
// `build.rs`.
macro_rules! cblas_gemm {
    ($($name:ident: $scalar:ty, $elem:ty;)*) => {
        extern "C" {
            $(
                fn $name(
                    layout: c_int,
                    ta: c_int,
                    tb: c_int,
                    m: c_int,
                    n: c_int,
                    k: c_int,
                    alpha: $scalar,
                    a: *const $elem,
                    lda: c_int,
                    b: *const $elem,
                    ldb: c_int,
                    beta: $scalar,
                    c: *mut $elem,
                    ldc: c_int,
                );
            )*
        }
    };
}
cblas_gemm! {
    cblas_sgemm: f32, f32;
    cblas_dgemm: f64, f64;
    cblas_cgemm: *const c_void, c_void;
    cblas_zgemm: *const c_void, c_void;
}

/// The leading dimension of a row-major view: its row stride, when its columns are contiguous
/// and the stride is one CBLAS accepts (`>= max(1, ncols)`, within `int`); `None` otherwise.
fn leading(cols: usize, strides: &[isize]) -> Option<c_int> {
    let ld = usize::try_from(strides[0]).ok()?;
    (strides[1] == 1 && ld >= cols.max(1))
        .then(|| c_int::try_from(ld).ok())
        .flatten()
}

/// `c = op(a) b` (or `c += op(a) b` when `accumulate`) through CBLAS, if the operands suit it:
/// every view row-major with contiguous rows, no dimension zero, every size within `int`.
/// Returns `false`, having touched nothing, otherwise. Shapes were checked by the caller.
pub(super) fn try_gemm<T: Scalar>(
    op: MatOp,
    a: &ArrayView2<'_, T>,
    b: &ArrayView2<'_, T>,
    accumulate: bool,
    c: &mut ArrayViewMut2<'_, T>,
) -> bool {
    let (rows, cols) = c.dim();
    let inner = b.nrows();
    let (Some(lda), Some(ldb), Some(ldc)) = (
        leading(a.ncols(), a.strides()),
        leading(b.ncols(), b.strides()),
        leading(cols, c.strides()),
    ) else {
        return false;
    };
    let (Ok(m), Ok(n), Ok(k)) = (
        c_int::try_from(rows),
        c_int::try_from(cols),
        c_int::try_from(inner),
    ) else {
        return false;
    };
    if m == 0 || n == 0 || k == 0 {
        return false;
    }
    let ta = match op {
        MatOp::N => NO_TRANS,
        MatOp::H if T::IS_COMPLEX => CONJ_TRANS,
        MatOp::H => TRANS,
    };
    let (one, beta) = (T::one(), if accumulate { T::one() } else { T::zero() });
    let real_beta = if accumulate { 1.0 } else { 0.0 };
    let (pa, pb, pc) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
    // SAFETY: `T` is one of the four sealed scalar types, and `T::SUFFIX` names which, so each
    // arm casts the pointers to the type they point to (`Complex32`/`Complex64` are
    // `#[repr(C)]` pairs, CBLAS's complex layout, passed as `void *`). The views are row-major
    // with leading dimensions `lda`, `ldb`, `ldc` checked above (`>= max(1, ncols)`), so CBLAS
    // reads `op(a)` (`m x k`), `b` (`k x n`) and writes `c` (`m x n`) inside the views, whose
    // shapes the caller checked; `c` is borrowed mutably and overlaps neither input. With
    // `beta = 0` CBLAS does not read `c`. `alpha` and `beta` outlive the call.
    unsafe {
        macro_rules! call {
            ($gemm:ident, $alpha:expr, $beta:expr) => {
                $gemm(
                    ROW_MAJOR,
                    ta,
                    NO_TRANS,
                    m,
                    n,
                    k,
                    $alpha,
                    pa.cast(),
                    lda,
                    pb.cast(),
                    ldb,
                    $beta,
                    pc.cast(),
                    ldc,
                )
            };
        }
        let (alpha_ptr, beta_ptr) = ((&raw const one).cast(), (&raw const beta).cast());
        match T::SUFFIX {
            "f32" => call!(cblas_sgemm, 1.0, real_beta as f32),
            "f64" => call!(cblas_dgemm, 1.0, real_beta),
            "c32" => call!(cblas_cgemm, alpha_ptr, beta_ptr),
            "c64" => call!(cblas_zgemm, alpha_ptr, beta_ptr),
            other => unreachable!("a scalar type outside the sealed four: {other}"),
        }
    }
    true
}
