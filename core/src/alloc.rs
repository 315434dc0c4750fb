//! Allocation of large local blocks, backed by transparent huge pages where the kernel offers
//! them.
//!
//! A fresh block of tens of megabytes is mapped by the kernel one 4 KiB page at a time on first
//! touch; on a typical Linux machine those page faults cost more than the arithmetic that fills
//! the block (writing a new 64 MB array measured 40 ms with 4 KiB pages and 11-14 ms with 2 MiB
//! pages on the project's benchmark machine). Blocks of at least [`HUGE_PAGE_THRESHOLD`] bytes are
//! therefore advised `MADV_HUGEPAGE` before their first touch, as numpy does for its arrays. The
//! advice changes no contents and is ignored where transparent huge pages are disabled; on other
//! operating systems these functions are plain allocations.

use crate::scalar::Scalar;
use ndarray::{ArrayD, IxDyn};

/// Blocks of at least this many bytes (4 MiB, numpy's threshold) are advised to use huge pages.
pub const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

#[cfg(target_os = "linux")]
mod sys {
    use std::ffi::{c_int, c_void};

    /// `MADV_HUGEPAGE` on every Linux architecture.
    const MADV_HUGEPAGE: c_int = 14;
    const PAGE: usize = 4096;

    extern "C" {
        fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int;
    }

    /// Advises huge pages for the whole pages inside `[ptr, ptr + bytes)`.
    pub fn advise_huge_pages(ptr: *mut u8, bytes: usize) {
        let start = (ptr as usize).div_ceil(PAGE) * PAGE;
        let end = (ptr as usize + bytes) / PAGE * PAGE;
        if end > start {
            // SAFETY: the range lies inside an allocation this process owns; MADV_HUGEPAGE only
            // changes how the kernel backs it, never its contents. A failure (e.g. THP compiled
            // out) leaves ordinary pages, which is correct, so the result is ignored.
            unsafe {
                madvise(start as *mut c_void, end - start, MADV_HUGEPAGE);
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    pub fn advise_huge_pages(_ptr: *mut u8, _bytes: usize) {}
}

/// An empty vector with room for `n` elements; if that is at least [`HUGE_PAGE_THRESHOLD`] bytes,
/// its (untouched) memory is advised to use huge pages.
pub fn vec_with_capacity<T>(n: usize) -> Vec<T> {
    let mut v = Vec::<T>::with_capacity(n);
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes >= HUGE_PAGE_THRESHOLD {
        sys::advise_huge_pages(v.as_mut_ptr().cast(), bytes);
    }
    v
}

/// `n` zeros, from zeroed memory (for a large block: fresh pages the kernel zeroes on first touch,
/// so the zeros cost no pass over memory), advised as [`vec_with_capacity`].
pub fn vec_zeroed<T: Scalar>(n: usize) -> Vec<T> {
    let layout = std::alloc::Layout::array::<T>(n).expect("the block fits in the address space");
    if layout.size() == 0 {
        return vec![T::zero(); n];
    }
    // SAFETY: the layout has a non-zero size. Every `Scalar` (f32, f64 and their complex pairs,
    // a sealed set) is zero when all its bits are zero, so the zeroed block holds `n` initialised
    // values, and it was allocated by the global allocator with `Layout::array::<T>(n)`, which is
    // what `Vec<T>` with capacity `n` deallocates.
    let v = unsafe {
        let ptr = std::alloc::alloc_zeroed(layout);
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Vec::from_raw_parts(ptr.cast::<T>(), n, n)
    };
    if layout.size() >= HUGE_PAGE_THRESHOLD {
        sys::advise_huge_pages(v.as_ptr().cast_mut().cast(), layout.size());
    }
    v
}

/// An array of zeros of `shape`, allocated as [`vec_zeroed`].
pub fn array_zeros<T: Scalar>(shape: &[usize]) -> ArrayD<T> {
    let n = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), vec_zeroed(n)).expect("the length is the shape's")
}

/// `n` copies of `value` in a [`vec_with_capacity`] vector.
pub fn vec_filled<T: Clone>(n: usize, value: T) -> Vec<T> {
    let mut v = vec_with_capacity(n);
    v.resize(n, value);
    v
}

/// The items of `iter` (at most `n` of them) in a [`vec_with_capacity(n)`](vec_with_capacity)
/// vector.
pub fn vec_from_iter<T>(n: usize, iter: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut v = vec_with_capacity(n);
    v.extend(iter.into_iter().take(n));
    v
}

/// An array of `shape` filled with `value`, allocated as [`vec_with_capacity`].
pub fn array_filled<T: Clone>(shape: &[usize], value: T) -> ArrayD<T> {
    let n = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), vec_filled(n, value)).expect("the length is the shape's")
}

/// A C-ordered copy of `a`, allocated as [`vec_with_capacity`].
pub fn array_copy<T: Clone>(a: &ArrayD<T>) -> ArrayD<T> {
    let data = vec_from_iter(a.len(), a.iter().cloned());
    ArrayD::from_shape_vec(a.raw_dim(), data).expect("the length is the shape's")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_and_small_blocks_hold_their_values() {
        for n in [0, 3, HUGE_PAGE_THRESHOLD / 8 + 5] {
            let v = vec_filled(n, 2.5f64);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 2.5));
            let w = vec_from_iter(n, (0..).map(|i| i as f64));
            assert!(w.iter().enumerate().all(|(i, &x)| x == i as f64));
        }
        let a = ndarray::Array::from_shape_fn(IxDyn(&[3, 4]), |ix| (ix[0] * 10 + ix[1]) as f64);
        assert_eq!(array_copy(&a), a);
        assert_eq!(array_filled(&[2, 3], 1.0f64).shape(), &[2, 3]);
        for n in [0, 7, HUGE_PAGE_THRESHOLD / 16 + 3] {
            let z = vec_zeroed::<num_complex::Complex64>(n);
            assert_eq!(z.len(), n);
            assert!(z.iter().all(|c| c.re == 0.0 && c.im == 0.0));
            assert_eq!(array_zeros::<f32>(&[n, 2]).sum(), 0.0);
        }
    }
}
