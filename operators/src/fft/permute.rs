//! An exchange that moves elements between two Scatter layouts by a global index map (the
//! reordering steps of the four-step 1-D transform): output element `j` (a flat C index of the
//! destination's global array) takes input element `i = map(j)` times a real weight, or zero.
//! Planned once with index lists; one all-to-all per product.

use super::FftReal;
use distlops_core::{Communicator, Layout, StridedCopy};
use num_complex::Complex;
use num_traits::Zero;

/// Flat C indices of a Scatter layout's elements.
struct Flat<'a> {
    layout: &'a Layout,
    /// C strides of the global shape.
    strides: Vec<usize>,
}

impl<'a> Flat<'a> {
    fn new(layout: &'a Layout) -> Self {
        Flat {
            layout,
            strides: StridedCopy::c_strides(layout.global_shape()),
        }
    }

    /// The global flat index of local element `t` of rank `r`.
    fn global(&self, r: usize, t: usize) -> usize {
        let shape = self.layout.local_shape(r);
        let (a, off) = (self.layout.axis(), self.layout.offset(r));
        let mut rest = t;
        let mut g = 0;
        for d in (0..shape.len()).rev() {
            let c = rest % shape[d];
            rest /= shape[d];
            g += (c + if d == a { off } else { 0 }) * self.strides[d];
        }
        g
    }

    /// The rank that holds global flat index `g`.
    fn owner(&self, g: usize) -> usize {
        let a = self.layout.axis();
        let c = (g / self.strides[a]) % self.layout.global_shape()[a];
        let offsets = self.layout.offsets();
        let counts = self.layout.counts();
        (0..offsets.len())
            .find(|&r| c >= offsets[r] && c < offsets[r] + counts[r])
            .expect("every index has an owner")
    }
}

/// One direction of a reordering exchange.
pub(crate) struct PermutePlan<R> {
    src_len: usize,
    dst_len: usize,
    /// Reals sent to and received from each rank.
    send_counts: Vec<usize>,
    recv_counts: Vec<usize>,
    /// Local source element of each sent element, in sending order.
    send_idx: Vec<usize>,
    /// Local destination element and weight of each received element, in receiving order.
    recv_idx: Vec<usize>,
    recv_w: Vec<R>,
}

impl<R: FftReal> PermutePlan<R> {
    /// The plan of rank `rank` for `dst[j] = w(j) src[map(j)]` (zero where `map(j)` is `None`),
    /// with `inverse(i) = Some(j)` exactly when `map(j) = Some((i, w))`.
    pub(crate) fn new(
        src: &Layout,
        dst: &Layout,
        rank: usize,
        map: &dyn Fn(usize) -> Option<(usize, f64)>,
        inverse: &dyn Fn(usize) -> Option<usize>,
    ) -> Self {
        let nranks = src.nranks();
        let (fs, fd) = (Flat::new(src), Flat::new(dst));
        let mut recv: Vec<(usize, usize, usize, f64)> = (0..dst.local_len(rank))
            .filter_map(|t| {
                let j = fd.global(rank, t);
                map(j).map(|(i, w)| (fs.owner(i), i, t, w))
            })
            .collect();
        recv.sort_unstable_by_key(|&(q, i, _, _)| (q, i));
        let mut send: Vec<(usize, usize, usize)> = (0..src.local_len(rank))
            .filter_map(|t| {
                let i = fs.global(rank, t);
                inverse(i).map(|j| (fd.owner(j), i, t))
            })
            .collect();
        send.sort_unstable_by_key(|&(q, i, _)| (q, i));
        let mut send_counts = vec![0; nranks];
        for &(q, ..) in &send {
            send_counts[q] += 2;
        }
        let mut recv_counts = vec![0; nranks];
        for &(q, ..) in &recv {
            recv_counts[q] += 2;
        }
        PermutePlan {
            src_len: src.local_len(rank),
            dst_len: dst.local_len(rank),
            send_counts,
            recv_counts,
            send_idx: send.iter().map(|s| s.2).collect(),
            recv_idx: recv.iter().map(|r| r.2).collect(),
            recv_w: recv.iter().map(|r| R::real_from_f64(r.3)).collect(),
        }
    }

    /// Elements of the source and destination blocks.
    pub(crate) fn lens(&self) -> (usize, usize) {
        (self.src_len, self.dst_len)
    }

    /// Complex numbers of the send and receive buffers.
    pub(crate) fn buffer_lens(&self) -> (usize, usize) {
        (self.send_idx.len(), self.recv_idx.len())
    }

    /// The exchange of `src` into `dst` with the buffers `send` and `recv` (at least
    /// [`buffer_lens`](Self::buffer_lens) complex numbers, as reals). Collective.
    pub(crate) fn run(
        &self,
        comm: &Communicator,
        src: &[Complex<R>],
        dst: &mut [Complex<R>],
        send: &mut [R],
        recv: &mut [R],
    ) {
        debug_assert_eq!((src.len(), dst.len()), (self.src_len, self.dst_len));
        let (ns, nr) = self.buffer_lens();
        let send = &mut super::as_complex_mut(&mut send[..2 * ns]);
        for (s, &t) in send.iter_mut().zip(&self.send_idx) {
            *s = src[t];
        }
        let recv = &mut recv[..2 * nr];
        comm.all_to_all_varcount_into(
            super::as_reals(send),
            &self.send_counts,
            &mut *recv,
            &self.recv_counts,
        );
        dst.fill(Complex::zero());
        let recv = super::as_complex(recv);
        for ((&t, &w), &v) in self.recv_idx.iter().zip(&self.recv_w).zip(recv) {
            dst[t] = v * w;
        }
    }
}
