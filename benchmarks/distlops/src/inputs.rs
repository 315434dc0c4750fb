//! Random inputs of the specification, generated block-wise: each rank draws only the part of the
//! global array it owns (`Pcg64::advance`), so no rank ever holds the global array.

use crate::pcg64::Pcg64;
use crate::Res;
use distlops::core::{Communicator, Complex64, DistributedArray, Layout, RealScalar, Scalar};
use distlops::ndarray::ArrayD;

/// A scalar type the benchmark runs in: its numpy name, and how it is built from uniform draws.
pub trait BenchScalar: Scalar {
    /// numpy's dtype name.
    const DTYPE: &'static str;
    /// Global arrays of this type use `DRAWS` consecutive blocks of the stream (real parts, then
    /// imaginary parts).
    const DRAWS: usize;
    /// The value with real part `re` and, for complex types, imaginary part `im`.
    fn from_f64_parts(re: f64, im: f64) -> Self;
}

impl BenchScalar for f64 {
    const DTYPE: &'static str = "float64";
    const DRAWS: usize = 1;
    fn from_f64_parts(re: f64, _im: f64) -> Self {
        re
    }
}

impl BenchScalar for Complex64 {
    const DTYPE: &'static str = "complex128";
    const DRAWS: usize = 2;
    fn from_f64_parts(re: f64, im: f64) -> Self {
        Complex64::new(re, im)
    }
}

/// `sym(u) = 2u - 1` (exact in IEEE double).
pub fn sym(u: f64) -> f64 {
    2.0 * u - 1.0
}

/// Elements `start .. start + count` of a global array of `len` values of type `T` whose parts are
/// `map(u)` of the draws starting at `stream_start`: real parts from draws
/// `stream_start .. stream_start + len`, imaginary parts (complex `T`) from the next `len`.
/// Returns the block and the stream position after the whole global array.
pub fn block<T: BenchScalar>(
    stream_start: usize,
    len: usize,
    start: usize,
    count: usize,
    map: impl Fn(f64) -> f64 + Copy,
) -> (Vec<T>, usize) {
    let mut re = Pcg64::numpy_seed0();
    re.advance((stream_start + start) as u128);
    let mut values: Vec<T> = distlops::core::alloc::vec_from_iter(
        count,
        std::iter::repeat_with(|| T::from_f64_parts(map(re.random()), 0.0)),
    );
    if T::DRAWS == 2 {
        let mut im = Pcg64::numpy_seed0();
        im.advance((stream_start + len + start) as u128);
        for v in &mut values {
            *v = T::from_f64_parts(v.re().to_f64(), map(im.random()));
        }
    }
    (values, stream_start + T::DRAWS * len)
}

/// The part this rank owns of the global array `map(draws)` of `layout`'s shape (split along axis
/// 0), starting at draw `stream_start`; also returns the stream position after the array.
pub fn scatter_array<T: BenchScalar>(
    comm: &Communicator,
    layout: &Layout,
    stream_start: usize,
    map: impl Fn(f64) -> f64 + Copy,
) -> Res<(DistributedArray<T>, usize)> {
    let rank = comm.rank();
    let inner: usize = layout.global_shape()[1..].iter().product();
    let (values, next) = block::<T>(
        stream_start,
        layout.global_len(),
        layout.offset(rank) * inner,
        layout.local_len(rank),
        map,
    );
    let local = ArrayD::from_shape_vec(layout.local_shape(rank), values)?;
    Ok((
        DistributedArray::from_local_with_layout(comm, layout, local)?,
        next,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_slices_of_the_global_stream() {
        let mut g = Pcg64::numpy_seed0();
        let all: Vec<f64> = (0..40).map(|_| g.random()).collect();
        // A real array of 10 at draw 5: elements 3..7.
        let (v, next) = block::<f64>(5, 10, 3, 4, sym);
        assert_eq!(next, 15);
        assert_eq!(v, all[8..12].iter().map(|&u| sym(u)).collect::<Vec<_>>());
        // A complex array of 10 at draw 5: real parts from 5.., imaginary parts from 15...
        let (c, next) = block::<Complex64>(5, 10, 3, 4, |u| u);
        assert_eq!(next, 25);
        for (k, z) in c.iter().enumerate() {
            assert_eq!((z.re, z.im), (all[8 + k], all[18 + k]));
        }
    }
}
