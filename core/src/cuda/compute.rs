//! [`Compute`](crate::Compute) for [`Cuda`]: one kernel of `core/kernels` per element-wise update, the canonical sum tree node by node.

use super::*;

impl Compute for Cuda {
    fn fill<T: Scalar>(y: &mut DeviceBlock<T>, value: T) {
        Self::fill_slice(Self::slice_mut(y), value);
    }
    fn scale<T: Scalar>(y: &mut DeviceBlock<T>, alpha: T) {
        // SAFETY: `scale` reads and writes y[0..n) of a block of n elements.
        unsafe {
            y.cuda().launch::<T>(
                "scale",
                y.len(),
                false,
                &[count(y.len()), arg(alpha), elems::<T>(y.buf.ptr, y.len())],
            )
        };
    }
    fn conj<T: Scalar>(y: &mut DeviceBlock<T>) {
        Self::conj_slice(Self::slice_mut(y));
    }
    fn copy<T: Scalar>(x: &DeviceBlock<T>, y: &mut DeviceBlock<T>) {
        Self::copy_slice(Self::slice(x), Self::slice_mut(y));
    }
    fn axpy<T: Scalar>(alpha: T, x: &DeviceBlock<T>, y: &mut DeviceBlock<T>) {
        Self::axpy_slice(alpha, Self::slice(x), Self::slice_mut(y));
    }
    fn axpby<T: Scalar>(alpha: T, x: &DeviceBlock<T>, beta: T, y: &mut DeviceBlock<T>) {
        same(x, y);
        let args = [
            count(y.len()),
            arg(alpha),
            elems::<T>(x.buf.ptr, x.len()),
            arg(beta),
            elems::<T>(y.buf.ptr, y.len()),
        ];
        // SAFETY: as `axpy`.
        unsafe { y.cuda().launch::<T>("axpby", y.len(), false, &args) };
    }
    fn binary<T: Scalar>(
        op: BinaryOp,
        x: &DeviceBlock<T>,
        y: &DeviceBlock<T>,
        out: &mut DeviceBlock<T>,
    ) {
        same(x, y);
        same(x, out);
        let args = [
            count(x.len()),
            KernelArg::I32(op.code()),
            elems::<T>(x.buf.ptr, x.len()),
            elems::<T>(y.buf.ptr, y.len()),
            elems::<T>(out.buf.ptr, out.len()),
        ];
        // SAFETY: `binary` reads x[0..n), y[0..n) and writes out[0..n); all have n (checked).
        unsafe { out.cuda().launch::<T>("binary", x.len(), false, &args) };
    }
    fn binary_assign<T: Scalar>(op: BinaryOp, y: &mut DeviceBlock<T>, x: &DeviceBlock<T>) {
        same(x, y);
        let args = [
            count(y.len()),
            KernelArg::I32(op.code()),
            elems::<T>(y.buf.ptr, y.len()),
            elems::<T>(x.buf.ptr, x.len()),
            elems::<T>(y.buf.ptr, y.len()),
        ];
        // SAFETY: as `binary`, with `out` aliasing the first input, which the kernel allows.
        unsafe { y.cuda().launch::<T>("binary", y.len(), false, &args) };
    }
    fn shrink<T: Scalar>(op: Shrink<T::Real>, w: Option<&DeviceBlock<T>>, y: &mut DeviceBlock<T>) {
        let (code, a, b) = op.code();
        let (w_arg, nw) = match w {
            Some(w) => {
                same(w, y);
                (elems::<T>(w.buf.ptr, w.len()), w.len())
            }
            // No weights: a null pointer of no extent, never read (nw = 0).
            None => (elems::<T>(0, 0), 0),
        };
        let args = [
            count(y.len()),
            KernelArg::I32(code),
            arg::<T::Real>(a),
            arg::<T::Real>(b),
            w_arg,
            count(nw),
            elems::<T>(y.buf.ptr, y.len()),
        ];
        // SAFETY: `shrink` reads and writes y[0..n) and, when nw = n (checked: w has y's length),
        // reads w[0..n); w is a distinct block (y is borrowed mutably) or not passed (nw = 0).
        unsafe { y.cuda().launch::<T>("shrink", y.len(), false, &args) };
    }
    fn group_scale_work(n: usize) -> usize {
        n
    }
    fn group_scale<T: Scalar>(
        op: GroupScale<T::Real>,
        parts: &mut [&mut DeviceBlock<T>],
        add: Option<(T, &[&DeviceBlock<T>])>,
        work: &mut DeviceBlock<T::Real>,
    ) {
        // The sum first, by the axpy kernel (the host's rounding); then the map.
        if let Some((alpha, a)) = add {
            assert_eq!(a.len(), parts.len(), "group_scale: one addend per part");
            for (p, a) in parts.iter_mut().zip(a) {
                Self::axpy(alpha, a, p);
            }
        }
        let Some(n) = parts.first().map(|p| p.len()) else {
            return;
        };
        assert!(
            work.len() >= n,
            "group_scale: a work space of {} reals for parts of {n}",
            work.len()
        );
        for p in parts.iter() {
            assert_eq!(p.len(), n, "group_scale on parts of different lengths");
            assert!(p.cuda() == work.cuda(), "group_scale on different devices");
        }
        let cuda = work.cuda();
        let acc = elems::<T::Real>(work.buf.ptr, n);
        let zero = [count(n), arg(<T::Real as num_traits::Zero>::zero()), acc];
        // SAFETY: `fill` writes acc[0..n), inside `work` (checked: at least n reals).
        unsafe { cuda.launch::<T::Real>("fill", n, false, &zero) };
        for p in parts.iter() {
            let args = [count(n), elems::<T>(p.buf.ptr, n), acc];
            // SAFETY: `abs2_add` reads x[0..n) of a part of n elements and reads and writes
            // acc[0..n); `work` is borrowed mutably, so it is not a part.
            unsafe { cuda.launch::<T>("abs2_add", n, false, &args) };
        }
        let (code, level) = op.code();
        for p in parts.iter_mut() {
            let args = [
                count(n),
                KernelArg::I32(code),
                arg::<T::Real>(level),
                acc,
                elems::<T>(p.buf.ptr, n),
            ];
            // SAFETY: `group_scale` reads acc[0..n) and reads and writes y[0..n) of a part of n
            // elements, a block distinct from `work`.
            unsafe { cuda.launch::<T>("group_scale", n, false, &args) };
        }
    }
    fn dot_nodes<T: Scalar>(
        conj: bool,
        x: &DeviceBlock<T>,
        y: &DeviceBlock<T>,
        nodes: &[BlockNode],
    ) -> Vec<T> {
        same(x, y);
        let cuda = x.cuda();
        let r = tree::node_values::<T>(cuda, x.len(), nodes, &|out, n_out, chunk, start, stop| {
            let args = [
                count(n_out),
                count(chunk),
                count(stop - start),
                KernelArg::I32(i32::from(conj)),
                elems::<T>(x.buf.at(start), stop - start),
                elems::<T>(y.buf.at(start), stop - start),
                elems::<T>(out, n_out),
            ];
            // SAFETY: the kernel reads x and y at [start, stop) (inside the blocks: `at` checks
            // `stop <= len` through the tree's bounds) and writes out[0..n_out), which the tree
            // allocated.
            unsafe { cuda.launch::<T>("leaf_dot", n_out, false, &args) };
        });
        cuda.ok(r, "dot")
    }
    fn norm_nodes<T: Scalar>(
        term: NormTerm,
        x: &DeviceBlock<T>,
        nodes: &[BlockNode],
    ) -> Vec<T::Real> {
        if term != NormTerm::Abs2 {
            // The slow path: these norms are computed from the downloaded block.
            return Host::norm_nodes(term, &Self::download(x), nodes);
        }
        let cuda = x.cuda();
        let r = tree::node_values::<T::Real>(
            cuda,
            x.len(),
            nodes,
            &|out, n_out, chunk, start, stop| {
                let args = [
                    count(n_out),
                    count(chunk),
                    count(stop - start),
                    elems::<T>(x.buf.at(start), stop - start),
                    elems::<T::Real>(out, n_out),
                ];
                // SAFETY: as in `dot_nodes`.
                unsafe { cuda.launch::<T>("leaf_abs2", n_out, false, &args) };
            },
        );
        cuda.ok(r, "norm")
    }
    fn order_free<T: Scalar>(kind: OrderFree, x: &DeviceBlock<T>) -> T::Real {
        if kind != OrderFree::MaxAbs || x.len() == 0 {
            return Host::order_free(kind, &Self::download(x));
        }
        let cuda = x.cuda();
        let blocks = Cuda::sync_blocks(x.len());
        let partials = cuda.ok(cuda.buffer::<T::Real>(blocks), "allocating partials");
        let args = [
            count(x.len()),
            elems::<T>(x.buf.ptr, x.len()),
            elems::<T::Real>(partials.ptr, blocks),
        ];
        // SAFETY: `max_abs` reads x[0..n) and writes one partial per block; `partials` has one
        // slot for each of the `sync_blocks(n)` blocks the launch uses.
        unsafe { cuda.launch::<T>("max_abs", x.len(), true, &args) };
        let partials = cuda.ok(cuda.read(&partials), "reading partials");
        Host::order_free(
            OrderFree::MaxAbs,
            &ArrayD::from_shape_vec(IxDyn(&[blocks]), partials).expect("1-D"),
        )
    }
    fn fill_slice<T: Scalar>(y: DeviceSliceMut<'_, T>, value: T) {
        // SAFETY: `fill` writes y[0..n) of a slice of n elements.
        unsafe {
            y.cuda.launch::<T>(
                "fill",
                y.len,
                false,
                &[count(y.len), arg(value), elems::<T>(y.ptr, y.len)],
            )
        };
    }
    fn copy_slice<T: Scalar>(x: DeviceSlice<'_, T>, y: DeviceSliceMut<'_, T>) {
        same_slices((x.len, x.cuda), (y.len, y.cuda));
        if x.len == 0 {
            return;
        }
        // SAFETY: both are live ranges of the same length (checked); `y` is borrowed mutably, so
        // the ranges do not overlap.
        let r = unsafe {
            y.cuda.api.copy_dtod(
                y.cuda.api.stream(),
                y.ptr,
                x.ptr,
                x.len * std::mem::size_of::<T>(),
            )
        };
        y.cuda.ok(r, "device copy");
    }
    fn conj_slice<T: Scalar>(y: DeviceSliceMut<'_, T>) {
        if T::IS_COMPLEX {
            // SAFETY: `conj` reads and writes y[0..n) of a slice of n elements.
            unsafe {
                y.cuda.launch::<T>(
                    "conj",
                    y.len,
                    false,
                    &[count(y.len), elems::<T>(y.ptr, y.len)],
                )
            };
        }
    }
    fn axpy_slice<T: Scalar>(alpha: T, x: DeviceSlice<'_, T>, y: DeviceSliceMut<'_, T>) {
        same_slices((x.len, x.cuda), (y.len, y.cuda));
        let args = [
            count(y.len),
            arg(alpha),
            elems::<T>(x.ptr, x.len),
            elems::<T>(y.ptr, y.len),
        ];
        // SAFETY: `axpy` reads x[0..n) and y[0..n) and writes y[0..n); both have n (checked).
        unsafe { y.cuda.launch::<T>("axpy", y.len, false, &args) };
    }
    fn diag_mul<T: Scalar>(
        d: DeviceSlice<'_, T>,
        inner: usize,
        x: DeviceSlice<'_, T>,
        y: DeviceSliceMut<'_, T>,
    ) {
        same_slices((x.len, x.cuda), (y.len, y.cuda));
        same_slices((d.len, d.cuda), (d.len, x.cuda));
        let block = d.len * inner;
        if block == 0 {
            assert!(
                x.len == 0,
                "diag_mul with an empty diagonal on a non-empty slice"
            );
            return;
        }
        assert_eq!(
            x.len % block,
            0,
            "diag_mul: the length is not a multiple of the diagonal's"
        );
        let args = [
            count(x.len),
            count(d.len),
            count(inner),
            elems::<T>(d.ptr, d.len),
            elems::<T>(x.ptr, x.len),
            elems::<T>(y.ptr, y.len),
        ];
        // SAFETY: the kernel reads x[i] and writes y[i] for i < n (both have n, checked) and
        // reads d at (i / inner) % nd < nd, the length of `d`.
        unsafe { y.cuda.launch::<T>("diag_mul", x.len, false, &args) };
    }
    fn strided_copy<T: Scalar>(
        copy: &StridedCopy,
        x: DeviceSlice<'_, T>,
        y: DeviceSliceMut<'_, T>,
    ) {
        strided("strided_copy", copy, x, y);
    }
    fn strided_add<T: Scalar>(copy: &StridedCopy, x: DeviceSlice<'_, T>, y: DeviceSliceMut<'_, T>) {
        strided("strided_add", copy, x, y);
    }
}

/// Launches `kernel` (`strided_copy` or `strided_add`, which read and write the same elements)
/// over the box of `copy`, in several launches if it has more axes than one launch takes.
fn strided<T: Scalar>(
    kernel: &str,
    copy: &StridedCopy,
    x: DeviceSlice<'_, T>,
    mut y: DeviceSliceMut<'_, T>,
) {
    assert!(x.cuda == y.cuda, "device slices on different devices");
    copy.check_lens(x.len, y.len);
    let n = copy.count();
    if n == 0 {
        return;
    }
    let (extent, src, dst) = copy.axes();
    if extent.len() > crate::engine::MAX_COPY_AXES {
        for sub in copy.split_first() {
            strided(kernel, &sub, x, y.reborrow());
        }
        return;
    }
    let mut box_ = [0i64; 25];
    box_[0] = extent.len() as i64;
    for (a, ((&e, &s), &d)) in extent.iter().zip(src).zip(dst).enumerate() {
        let as_i64 = |v: usize| i64::try_from(v).expect("strides fit in i64");
        box_[1 + a] = as_i64(e);
        box_[9 + a] = as_i64(s);
        box_[17 + a] = as_i64(d);
    }
    let (xo, yo) = copy.offsets();
    let args = [
        count(n),
        KernelArg::Strides(box_),
        elems::<T>(offset::<T>(x.ptr, x.len, &(xo..xo)), x.len - xo),
        elems::<T>(offset::<T>(y.ptr, y.len, &(yo..yo)), y.len - yo),
    ];
    // SAFETY: `StridedCopy::new` checked that every index of the box, from these offsets,
    // stays below the lengths it was built for, which are the slices' (`check_lens`); the
    // kernel touches exactly those indices. `y` is borrowed mutably, so it does not overlap `x`.
    unsafe { y.cuda.launch::<T>(kernel, n, false, &args) };
}
