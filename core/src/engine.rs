//! Engines: where the local part of a distributed array lives.
//!
//! Only [`Host`] exists today (main memory, ndarray). A CUDA engine (device buffers, NVSHMEM
//! symmetric memory) will be another implementor behind a cargo feature; code written against the
//! engine's primitives then runs on it without change.

use crate::scalar::Scalar;

mod sealed {
    pub trait Sealed {}
}

/// Where local data lives, and in what container.
pub trait Engine:
    sealed::Sealed + Copy + Default + std::fmt::Debug + Send + Sync + 'static
{
    /// The container of a rank's local block.
    type Storage<T: Scalar>: Clone + std::fmt::Debug + Send + Sync;
    /// A short name (`"host"`).
    const NAME: &'static str;
    /// A copy of a local block (`clone`, with the engine's allocation policy).
    fn duplicate<T: Scalar>(storage: &Self::Storage<T>) -> Self::Storage<T>;
    /// Releases a dropped block (to the engine's pool of reusable blocks), leaving an empty one.
    fn recycle<T: Scalar>(storage: &mut Self::Storage<T>);
}

/// Main memory: local blocks are C-contiguous `ndarray::ArrayD`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Host;

impl sealed::Sealed for Host {}

impl Engine for Host {
    type Storage<T: Scalar> = ndarray::ArrayD<T>;
    const NAME: &'static str = "host";
    fn duplicate<T: Scalar>(storage: &Self::Storage<T>) -> Self::Storage<T> {
        crate::alloc::array_copy(storage)
    }
    fn recycle<T: Scalar>(storage: &mut Self::Storage<T>) {
        let empty = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[0]), Vec::new())
            .expect("an empty array");
        let (data, _) = std::mem::replace(storage, empty).into_raw_vec_and_offset();
        crate::alloc::recycle(data);
    }
}
