//! Complex numbers stored as `(re, im)` pairs on a last axis of length 2 (the range of a
//! real-typed Fourier transform, the memory layout of complex numbers), read as complex arrays
//! and back. No communication: each rank converts its own block, and the layout is the same on
//! every rank, so an error is the same on every rank.

use super::DistributedArray;
use crate::engine::Host;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::partition::Partition;
use crate::scalar::{HasComplex, Scalar};
use ndarray::ArrayD;

impl<R: HasComplex> DistributedArray<R, Host> {
    /// The complex array whose elements are the `(re, im)` pairs along the last axis: shape
    /// `[n0, .., nk, 2]` becomes `[n0, .., nk]`, distributed along the same axis with the same
    /// counts, with the same mask. This is how to read the spectrum of a real-typed
    /// `FftNd` (`distlops::operators::FftNd`) (`T = f32 / f64`) as complex
    /// numbers. No communication.
    ///
    /// ```
    /// use distlops_core::{Complex64, DistributedArray, Layout, Threads};
    /// use ndarray::{ArrayD, IxDyn};
    ///
    /// Threads::run(2, |comm| {
    ///     // Three complex numbers as pairs: 1+2i, 3+4i, 5+6i, scattered along axis 0.
    ///     let pairs = ArrayD::from_shape_vec(IxDyn(&[3, 2]), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    ///     let layout = Layout::scatter(&[3, 2], 0, comm.size())?;
    ///     let x = DistributedArray::to_dist(&comm, pairs.view(), &layout)?;
    ///     let z = x.pairs_to_complex()?;
    ///     assert_eq!(z.global_shape(), &[3]);
    ///     assert_eq!(z.asarray().as_slice().unwrap()[2], Complex64::new(5.0, 6.0));
    ///     // And back, bit for bit.
    ///     assert_eq!(z.complex_to_pairs()?.asarray(), pairs);
    ///     Ok::<(), distlops_core::Error>(())
    /// })
    /// .into_iter()
    /// .collect::<Result<Vec<()>, _>>()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if the array has fewer than 2 axes or its last axis is not of
    /// length 2; [`Error::UnsupportedPartition`] if it is scattered along its last axis (a
    /// pair would be split between ranks).
    pub fn pairs_to_complex(&self) -> Result<DistributedArray<R::Complex, Host>> {
        let shape = self.global_shape();
        if shape.len() < 2 || shape[shape.len() - 1] != 2 {
            return Err(Error::ShapeMismatch(format!(
                "pairs_to_complex: the array has shape {shape:?}; it needs at least 2 axes and a \
                 last axis of length 2 holding (re, im)"
            )));
        }
        let last = shape.len() - 1;
        if self.partition() == Partition::Scatter && self.axis() == last {
            return Err(Error::UnsupportedPartition(format!(
                "pairs_to_complex: the array is scattered along its last axis ({last}), which \
                 splits the (re, im) pairs between ranks; redistribute it along another axis \
                 first (redistribute_to)"
            )));
        }
        let data = crate::alloc::vec_from_iter(
            self.local.len() / 2,
            self.local_slice()
                .chunks_exact(2)
                .map(|p| R::complex(p[0], p[1])),
        );
        Ok(with_data(self, shape[..last].to_vec(), data))
    }
}

impl<C: Scalar> DistributedArray<C, Host>
where
    C::Real: HasComplex<Complex = C>,
{
    /// The real array of `(re, im)` pairs along a new last axis of length 2: shape
    /// `[n0, .., nk]` becomes `[n0, .., nk, 2]`, distributed along the same axis with the same
    /// counts, with the same mask (the inverse of
    /// [`pairs_to_complex`](DistributedArray::pairs_to_complex), bit for bit). This is how to
    /// hand a complex spectrum to the adjoint of a real-typed
    /// `FftNd` (`distlops::operators::FftNd`). No communication.
    ///
    /// # Errors
    /// None for a valid array; the `Result` is kept for symmetry with
    /// [`pairs_to_complex`](DistributedArray::pairs_to_complex).
    pub fn complex_to_pairs(&self) -> Result<DistributedArray<C::Real, Host>> {
        let mut shape = self.global_shape().to_vec();
        shape.push(2);
        let data = crate::alloc::vec_from_iter(
            2 * self.local.len(),
            self.local_slice().iter().flat_map(|z| [z.re(), z.im()]),
        );
        Ok(with_data(self, shape, data))
    }
}

/// This rank's `data` as the block of an array of global shape `shape` laid out as `a` (see
/// [`reshaped`]), with `a`'s communicator and mask.
fn with_data<T: Scalar, U: Scalar>(
    a: &DistributedArray<T, Host>,
    shape: Vec<usize>,
    data: Vec<U>,
) -> DistributedArray<U, Host> {
    let layout = reshaped(&a.layout, shape);
    let local_shape = layout.local_shape(a.comm.rank());
    let local = ArrayD::from_shape_vec(local_shape, data).expect("the block of the new shape");
    DistributedArray::from_parts(a.comm.clone(), layout, local, a.mask.clone())
}

/// `layout` with another global shape that keeps its distributed axis, partition and counts
/// (the axis is not the one added or removed).
fn reshaped(layout: &Layout, shape: Vec<usize>) -> Layout {
    match layout.partition() {
        Partition::Scatter => Layout::build(
            shape,
            layout.axis(),
            Partition::Scatter,
            layout.counts().to_vec(),
        ),
        replicated => Layout::new(&shape, 0, replicated, layout.nranks())
            .expect("a replicated layout of a shape with at least one axis"),
    }
}
