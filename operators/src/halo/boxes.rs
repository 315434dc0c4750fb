//! Boxes of C-ordered N-D arrays walked as contiguous runs: packing a box into a message buffer,
//! unpacking (or adding) a buffer back into a box.

use distlops_core::Scalar;

/// A box `start .. start + shape` of a C-ordered array of shape `outer`, as the offsets of its
/// contiguous runs. Trailing axes that the box covers whole are merged into one run, so a slab
/// across the leading axis is a single copy.
#[derive(Debug, Clone)]
pub(super) struct Runs {
    /// Offset of the first run.
    base: usize,
    /// Extents and strides of the axes walked (the ones before the merged tail).
    counts: Vec<usize>,
    strides: Vec<usize>,
    /// Elements per run.
    run: usize,
    /// Elements in the box.
    len: usize,
}

impl Runs {
    /// The caller guarantees `start + shape <= outer` on every axis and equal ranks.
    pub(super) fn new(outer: &[usize], start: &[usize], shape: &[usize]) -> Self {
        debug_assert!(outer.len() == start.len() && outer.len() == shape.len());
        debug_assert!((0..outer.len()).all(|a| start[a] + shape[a] <= outer[a]));
        let len = shape.iter().product();
        let nd = outer.len();
        if len == 0 || nd == 0 {
            return Runs {
                base: 0,
                counts: Vec::new(),
                strides: Vec::new(),
                run: len,
                len,
            };
        }
        let mut strides = vec![1usize; nd];
        for a in (0..nd - 1).rev() {
            strides[a] = strides[a + 1] * outer[a + 1];
        }
        let base = start.iter().zip(&strides).map(|(s, t)| s * t).sum();
        let mut k = nd - 1;
        while k > 0 && start[k] == 0 && shape[k] == outer[k] {
            k -= 1;
        }
        Runs {
            base,
            run: shape[k] * strides[k],
            counts: shape[..k].to_vec(),
            strides: strides[..k].to_vec(),
            len,
        }
    }

    /// The number of elements in the box.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Calls `f(offset)` for the start of every run, in C order.
    fn for_each(&self, mut f: impl FnMut(usize)) {
        if self.len > 0 {
            self.walk(0, self.base, &mut f);
        }
    }

    fn walk<F: FnMut(usize)>(&self, axis: usize, offset: usize, f: &mut F) {
        if axis == self.counts.len() {
            f(offset);
            return;
        }
        let stride = self.strides[axis];
        for i in 0..self.counts[axis] {
            self.walk(axis + 1, offset + i * stride, f);
        }
    }

    /// Copies the box of `src` into the contiguous `buf` (`len()` elements).
    pub(super) fn pack<T: Copy>(&self, src: &[T], buf: &mut [T]) {
        debug_assert_eq!(buf.len(), self.len);
        let run = self.run;
        let mut at = 0;
        self.for_each(|o| {
            buf[at..at + run].copy_from_slice(&src[o..o + run]);
            at += run;
        });
    }

    /// Copies the contiguous `buf` into the box of `dst`; the rest of `dst` is untouched.
    pub(super) fn unpack<T: Copy>(&self, buf: &[T], dst: &mut [T]) {
        debug_assert_eq!(buf.len(), self.len);
        let run = self.run;
        let mut at = 0;
        self.for_each(|o| {
            dst[o..o + run].copy_from_slice(&buf[at..at + run]);
            at += run;
        });
    }

    /// Adds the contiguous `buf` to the box of `dst`.
    pub(super) fn unpack_add<T: Scalar>(&self, buf: &[T], dst: &mut [T]) {
        debug_assert_eq!(buf.len(), self.len);
        let run = self.run;
        let mut at = 0;
        self.for_each(|o| {
            for (d, &s) in dst[o..o + run].iter_mut().zip(&buf[at..at + run]) {
                *d += s;
            }
            at += run;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::Runs;

    /// The box of a 3 x 4 x 5 array, element by element, against the runs.
    #[test]
    fn runs_cover_the_box_in_c_order() {
        let outer = [3, 4, 5];
        let src: Vec<usize> = (0..60).collect();
        for (start, shape) in [
            ([0, 0, 0], [3, 4, 5]),
            ([1, 0, 0], [2, 4, 5]),
            ([0, 1, 0], [3, 2, 5]),
            ([1, 1, 2], [2, 3, 3]),
            ([0, 0, 4], [3, 4, 1]),
            ([2, 3, 4], [1, 1, 1]),
            ([1, 2, 0], [0, 2, 5]),
        ] {
            let r = Runs::new(&outer, &start, &shape);
            let mut want = Vec::new();
            for i in start[0]..start[0] + shape[0] {
                for j in start[1]..start[1] + shape[1] {
                    for k in start[2]..start[2] + shape[2] {
                        want.push(i * 20 + j * 5 + k);
                    }
                }
            }
            let mut buf = vec![0; r.len()];
            r.pack(&src, &mut buf);
            assert_eq!(buf, want, "pack {start:?} {shape:?}");
            let mut dst = vec![0; 60];
            r.unpack(&buf, &mut dst);
            let mut back = vec![0; r.len()];
            r.pack(&dst, &mut back);
            assert_eq!(back, want, "unpack {start:?} {shape:?}");
            assert_eq!(
                dst.iter().filter(|&&v| v != 0).count(),
                want.iter().filter(|&&v| v != 0).count()
            );
        }
    }
}
