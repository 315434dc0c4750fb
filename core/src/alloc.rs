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
//!
//! Even huge pages must be zeroed by the kernel on first touch. So the blocks of dropped
//! [`DistributedArray`](crate::DistributedArray)s of at least [`HUGE_PAGE_THRESHOLD`] bytes are
//! kept in a small pool (most recent last) and handed to the next allocation of exactly the same
//! size and alignment, already mapped: a loop of `&x + &y` or of allocating operator products then
//! runs at the speed of the arithmetic (x + y of 2e7 f64 on two ranks: 21.4 ms with fresh huge
//! pages, the STREAM floor is 14.3 ms). The pool holds [`POOL_BLOCKS`] dropped blocks, and more
//! (up to [`POOL_MAX_BLOCKS`]) while they take at most [`POOL_BYTES`] together: an inner solve
//! that allocates and drops seven vectors per call (a proximal operator's CG) then maps no new
//! page after its first call (PrimalDual TV, W12: page zeroing was a fifth of the run with four
//! blocks). Memory that the program no longer uses stays resident only until newer blocks
//! replace it or [`release_pool`] is called.

use crate::error::{Error, Result};
use crate::scalar::{RealScalar, Scalar};
use ndarray::{ArrayD, IxDyn};
use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::Mutex;

/// Dropped blocks kept for reuse, whatever their size.
pub const POOL_BLOCKS: usize = 4;

/// Dropped blocks kept for reuse while they take at most [`POOL_BYTES`] together, at most.
pub const POOL_MAX_BLOCKS: usize = 16;

/// The bytes of pooled blocks beyond which only [`POOL_BLOCKS`] are kept (256 MiB).
pub const POOL_BYTES: usize = 256 << 20;

/// Whether a pool of these blocks holds more than it may: beyond [`POOL_MAX_BLOCKS`], or beyond
/// [`POOL_BLOCKS`] and [`POOL_BYTES`].
fn over(pool: &[Block]) -> bool {
    let bytes: usize = pool.iter().map(|b| b.layout.size()).sum();
    pool.len() > POOL_MAX_BLOCKS || (pool.len() > POOL_BLOCKS && bytes > POOL_BYTES)
}

/// A block from the global allocator, owned by the pool.
struct Block {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: a `Block` is a uniquely owned allocation with no thread affinity.
unsafe impl Send for Block {}

/// The pool, most recently dropped block last.
static POOL: Mutex<Vec<Block>> = Mutex::new(Vec::new());

/// A pooled block of exactly `layout`, if there is one.
fn take(layout: Layout) -> Option<NonNull<u8>> {
    let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
    let i = pool.iter().rposition(|b| b.layout == layout)?;
    Some(pool.remove(i).ptr)
}

/// Gives the storage of `v` to the pool if it is large (else frees it), evicting the oldest
/// blocks while the pool holds more than it may (see [`POOL_BYTES`]).
pub fn recycle<T>(v: Vec<T>) {
    let cap = v.capacity();
    let Ok(layout) = Layout::array::<T>(cap) else {
        return;
    };
    // Only whole blocks are kept: every element of a pooled block was written by its last owner,
    // which is what lets [`try_vec_for_overwrite`] hand one out without writing it.
    if layout.size() < HUGE_PAGE_THRESHOLD || v.len() != cap {
        return;
    }
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: the elements are dropped in place (a no-op for the plain scalars stored here), then
    // the allocation, made by the global allocator with `Layout::array::<T>(cap)` (that is how
    // `Vec` allocates), is kept whole; it is freed with the same layout in `free` or reused as
    // a `Vec<U>` of the same layout in `pooled_vec`.
    let ptr = unsafe {
        std::ptr::drop_in_place(v.as_mut_slice());
        NonNull::new_unchecked(v.as_mut_ptr().cast::<u8>())
    };
    let mut evicted = Vec::new();
    {
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        pool.push(Block { ptr, layout });
        while over(&pool) {
            evicted.push(pool.remove(0));
        }
    }
    evicted.into_iter().for_each(free);
}

fn free(b: Block) {
    // SAFETY: the block was allocated by the global allocator with `b.layout` and is owned by us.
    unsafe { std::alloc::dealloc(b.ptr.as_ptr(), b.layout) }
}

/// Frees every pooled block (returns the memory to the system).
pub fn release_pool() {
    let blocks = std::mem::take(&mut *POOL.lock().unwrap_or_else(|e| e.into_inner()));
    blocks.into_iter().for_each(free);
}

/// An empty vector with capacity `n` on a pooled block of the right size, if there is one.
fn pooled_vec<T>(n: usize) -> Option<Vec<T>> {
    let layout = Layout::array::<T>(n).ok()?;
    if layout.size() < HUGE_PAGE_THRESHOLD {
        return None;
    }
    let ptr = take(layout)?;
    // SAFETY: the block was allocated by the global allocator with exactly
    // `Layout::array::<T>(n)` (same size and alignment), which is what a `Vec<T>` of capacity `n`
    // deallocates; the length is 0, so no element is read before it is written.
    Some(unsafe { Vec::from_raw_parts(ptr.as_ptr().cast::<T>(), 0, n) })
}

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

/// An empty vector with room for `n` elements: a pooled block of that size if there is one, else
/// fresh memory, advised to use huge pages if it is at least [`HUGE_PAGE_THRESHOLD`] bytes.
pub fn vec_with_capacity<T>(n: usize) -> Vec<T> {
    if let Some(v) = pooled_vec(n) {
        return v;
    }
    let mut v = Vec::<T>::with_capacity(n);
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes >= HUGE_PAGE_THRESHOLD {
        sys::advise_huge_pages(v.as_mut_ptr().cast(), bytes);
    }
    v
}

/// `n` zeros: a pooled block filled with zeros, or zeroed memory (for a large block: fresh pages
/// the kernel zeroes on first touch), advised as [`vec_with_capacity`].
///
/// # Panics
/// If the memory cannot be had (as `Vec` does); [`try_vec_zeroed`] returns an error instead.
pub fn vec_zeroed<T: Scalar>(n: usize) -> Vec<T> {
    try_vec_zeroed(n).unwrap_or_else(|e| panic!("{e}"))
}

/// [`vec_zeroed`], with an error instead of a panic or an abort when `n` elements do not fit in
/// the address space or the allocator has no memory for them.
///
/// # Errors
/// [`Error::Allocation`].
pub fn try_vec_zeroed<T: Scalar>(n: usize) -> Result<Vec<T>> {
    if let Some(mut v) = pooled_vec(n) {
        v.resize(n, T::zero());
        return Ok(v);
    }
    let layout = Layout::array::<T>(n).map_err(|_| {
        Error::Allocation(format!(
            "{n} elements of {} bytes do not fit in the address space",
            std::mem::size_of::<T>()
        ))
    })?;
    if layout.size() == 0 {
        return Ok(vec![T::zero(); n]);
    }
    // SAFETY: the layout has a non-zero size. Every `Scalar` (f32, f64 and their complex pairs,
    // a sealed set) is zero when all its bits are zero, so the zeroed block holds `n` initialised
    // values, and it was allocated by the global allocator with `Layout::array::<T>(n)`, which is
    // what `Vec<T>` with capacity `n` deallocates.
    let v = unsafe {
        let ptr = std::alloc::alloc_zeroed(layout);
        if ptr.is_null() {
            return Err(Error::Allocation(format!(
                "the allocator has no {} bytes for a block of {n} elements",
                layout.size()
            )));
        }
        Vec::from_raw_parts(ptr.cast::<T>(), n, n)
    };
    if layout.size() >= HUGE_PAGE_THRESHOLD {
        sys::advise_huge_pages(v.as_ptr().cast_mut().cast(), layout.size());
    }
    Ok(v)
}

/// `n` values for a caller that writes every one of them before reading any: a pooled block as
/// its last owner left it (no pass over memory, where [`try_vec_zeroed`] writes `n` zeros), or
/// else zeroed memory as [`try_vec_zeroed`]. The values are initialised but unspecified. In builds
/// with debug assertions every value is NaN instead, so that a caller which reads one before
/// writing it fails its tests rather than depending on what the pool held.
///
/// # Errors
/// As [`try_vec_zeroed`].
pub fn try_vec_for_overwrite<T: Scalar>(n: usize) -> Result<Vec<T>> {
    let mut v = match pooled_vec::<T>(n) {
        // SAFETY: `pooled_vec` returns a block of capacity `n` that was recycled whole (its
        // length was its capacity, see `recycle`): all `n` elements were written by its last
        // owner and are initialised values of `T` (plain scalars, no drop glue).
        Some(mut v) => unsafe {
            v.set_len(n);
            v
        },
        None => try_vec_zeroed(n)?,
    };
    if cfg!(debug_assertions) {
        let nan = T::Real::real_from_f64(f64::NAN);
        v.fill(T::from_parts(nan, nan));
    }
    Ok(v)
}

/// An array of `shape` allocated as [`try_vec_for_overwrite`]: its values are unspecified (NaN
/// with debug assertions).
///
/// # Errors
/// As [`try_array_zeros`].
pub fn try_array_for_overwrite<T: Scalar>(shape: &[usize]) -> Result<ArrayD<T>> {
    let n = shape_len(shape)?;
    Ok(
        ArrayD::from_shape_vec(IxDyn(shape), try_vec_for_overwrite(n)?)
            .expect("the length is the shape's"),
    )
}

/// The number of elements of `shape`, or an error if it overflows.
fn shape_len(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |a, &b| a.checked_mul(b))
        .ok_or_else(|| Error::Allocation(format!("the size of shape {shape:?} overflows")))
}

/// An array of zeros of `shape`, allocated as [`vec_zeroed`].
///
/// # Panics
/// As [`vec_zeroed`].
pub fn array_zeros<T: Scalar>(shape: &[usize]) -> ArrayD<T> {
    try_array_zeros(shape).unwrap_or_else(|e| panic!("{e}"))
}

/// [`array_zeros`] with an error for a shape whose size overflows or that cannot be allocated.
///
/// # Errors
/// [`Error::Allocation`].
pub fn try_array_zeros<T: Scalar>(shape: &[usize]) -> Result<ArrayD<T>> {
    let n = shape_len(shape)?;
    Ok(
        ArrayD::from_shape_vec(IxDyn(shape), try_vec_zeroed(n)?)
            .expect("the length is the shape's"),
    )
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

/// A C-ordered copy of `a`, allocated as [`vec_with_capacity`]: one `memcpy` when `a` is in
/// standard (C-contiguous) order, as every block of a distributed array is; element by element
/// otherwise (an `IxDyn` iterator, some ten times slower per element).
pub fn array_copy<T: Clone>(a: &ArrayD<T>) -> ArrayD<T> {
    let data = match a.as_slice() {
        Some(s) => {
            let mut v = vec_with_capacity(s.len());
            v.extend_from_slice(s);
            v
        }
        None => vec_from_iter(a.len(), a.iter().cloned()),
    };
    ArrayD::from_shape_vec(a.raw_dim(), data).expect("the length is the shape's")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooled_blocks_are_reused_and_zeroed() {
        let n = HUGE_PAGE_THRESHOLD / 8 + 17;
        let v = vec_filled(n, 3.0f64);
        let p = v.as_ptr() as usize;
        recycle(v);
        // Threads of other tests may take it first; when this one gets it, it is zeroed.
        let z = vec_zeroed::<f64>(n);
        assert!(z.iter().all(|&x| x == 0.0));
        if z.as_ptr() as usize == p {
            assert_eq!(z.capacity(), n);
        }
        recycle(z);
        let c = vec_zeroed::<num_complex::Complex64>(n / 2);
        assert!(c.iter().all(|c| c.re == 0.0 && c.im == 0.0));
        for _ in 0..2 * POOL_MAX_BLOCKS {
            recycle(vec_filled(n, 1.0f64));
        }
        assert!(!over(&POOL.lock().unwrap()));
        release_pool();
    }

    #[test]
    fn blocks_for_overwrite_are_poisoned_and_partial_blocks_are_not_pooled() {
        let n = HUGE_PAGE_THRESHOLD / 8 + 29;
        // A vector whose tail was never written is freed, not pooled.
        let mut partial = Vec::<f64>::with_capacity(n);
        partial.push(1.0);
        let p = partial.as_ptr() as usize;
        recycle(partial);
        assert!(!POOL
            .lock()
            .unwrap()
            .iter()
            .any(|b| b.ptr.as_ptr() as usize == p));
        for len in [0, 5, n] {
            recycle(vec_filled(len, 4.0f64));
            let v = try_vec_for_overwrite::<f64>(len).unwrap();
            assert_eq!(v.len(), len);
            // Tests build with debug assertions: every value is NaN, pooled block or not.
            assert!(v.iter().all(|x| x.is_nan()), "length {len}");
            let c = try_array_for_overwrite::<num_complex::Complex32>(&[len, 2]).unwrap();
            assert!(c.iter().all(|c| c.re.is_nan() && c.im.is_nan()));
        }
        assert!(try_array_for_overwrite::<f64>(&[usize::MAX, 2]).is_err());
    }

    #[test]
    fn the_pool_keeps_more_small_blocks_than_large_ones() {
        // Blocks that are never freed (`over` only reads their layouts).
        let blocks = |count: usize, bytes: usize| -> Vec<Block> {
            (0..count)
                .map(|_| Block {
                    ptr: NonNull::dangling(),
                    layout: Layout::from_size_align(bytes, 8).unwrap(),
                })
                .collect()
        };
        assert!(!over(&blocks(
            POOL_MAX_BLOCKS,
            POOL_BYTES / POOL_MAX_BLOCKS
        )));
        assert!(over(&blocks(POOL_MAX_BLOCKS + 1, HUGE_PAGE_THRESHOLD)));
        assert!(!over(&blocks(POOL_BLOCKS, POOL_BYTES)));
        assert!(over(&blocks(POOL_BLOCKS + 1, POOL_BYTES / POOL_BLOCKS)));
    }

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
