//! An exchange that moves elements between two Scatter layouts by a global index map (the
//! reordering steps of the four-step 1-D transform): output element `j` (a flat C index of the
//! destination's global array) takes input element `i = map(j)` times a real weight, or zero.
//! Planned once with index lists; one exchange per product, packed and unpacked by the
//! engine's index gathers ([`Fourier::gather`]), the weights by a diagonal product.

use super::FftReal;
use distlops_core::{Communicator, Fourier, Layout, Result, SliceLen, StridedCopy};

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

    /// The plan on `engine`: the index lists of the packing and unpacking gathers (over the
    /// real views, two reals per complex number) and the weights uploaded.
    ///
    /// The unpacking gathers from the receive buffer followed by one complex zero (the
    /// elements no message fills read it), or, with weights other than one, from the weighted
    /// values written into the send buffer by a diagonal product (`v w`, one rounding per
    /// component, as `Complex * real`).
    ///
    /// # Errors
    /// [`Error::Allocation`](distlops_core::Error::Allocation) if the engine has no room.
    pub(crate) fn on<E: Fourier>(&self, engine: &E) -> Result<PermuteStep<R, E>> {
        let (ns, nr) = (self.send_idx.len(), self.recv_idx.len());
        let pairs = |i: usize| [2 * i, 2 * i + 1];
        let pack: Vec<usize> = self.send_idx.iter().flat_map(|&t| pairs(t)).collect();
        // Destination element t reads received element k (or the zero after them).
        let mut from = vec![nr; self.dst_len];
        for (k, &t) in self.recv_idx.iter().enumerate() {
            from[t] = k;
        }
        let unpack: Vec<usize> = from.into_iter().flat_map(pairs).collect();
        let one = R::one();
        let weights = if self.recv_w.iter().all(|&w| w == one) {
            None
        } else {
            let w: Vec<R> = self.recv_w.iter().flat_map(|&w| [w, w]).collect();
            Some(engine.upload(ndarray::ArrayView1::from(&w[..]).into_dyn())?)
        };
        Ok(PermuteStep {
            pack: engine.gather_plan(&pack, 2 * self.src_len)?,
            unpack: engine.gather_plan(&unpack, 2 * nr + 2)?,
            weights,
            send_counts: self.send_counts.clone(),
            recv_counts: self.recv_counts.clone(),
            lens: (2 * self.src_len, 2 * self.dst_len),
            buffers: (2 * ns.max(nr) + 2, 2 * nr + 2),
        })
    }
}

/// One direction of a reordering exchange on engine `E`.
pub(crate) struct PermuteStep<R: FftReal, E: Fourier> {
    pack: E::GatherPlan,
    unpack: E::GatherPlan,
    /// The received elements' weights (reals, each twice), unless all are one.
    weights: Option<E::Storage<R>>,
    send_counts: Vec<usize>,
    recv_counts: Vec<usize>,
    /// Reals of the source and destination blocks.
    lens: (usize, usize),
    /// Reals of the send and receive buffers.
    buffers: (usize, usize),
}

/// `buffer` cut into consecutive parts of `counts` (one per rank, empty ones skipped), as
/// `(rank, part)`.
fn parts_of<'a, E: Fourier, R: FftReal>(
    mut buffer: E::SliceMut<'a, R>,
    counts: &[usize],
) -> Vec<(usize, E::SliceMut<'a, R>)> {
    let mut out = Vec::new();
    for (q, &c) in counts.iter().enumerate() {
        let (part, rest) = E::split_at_mut(buffer, c);
        buffer = rest;
        if c > 0 {
            out.push((q, part));
        }
    }
    out
}

impl<R: FftReal, E: Fourier> PermuteStep<R, E> {
    /// Reals of the source and destination blocks.
    pub(crate) fn real_lens(&self) -> (usize, usize) {
        self.lens
    }

    /// Reals of the send and receive buffers the step needs.
    pub(crate) fn buffer_lens(&self) -> (usize, usize) {
        self.buffers
    }

    /// The exchange of `src` into `dst` (real views) through the buffers `send` and `recv`
    /// (at least [`buffer_lens`](Self::buffer_lens)). Collective.
    ///
    /// # Errors
    /// What the engine's exchange reports.
    pub(crate) fn run(
        &self,
        engine: &E,
        comm: &Communicator,
        src: E::Slice<'_, R>,
        dst: E::SliceMut<'_, R>,
        (mut send, mut recv): (E::SliceMut<'_, R>, E::SliceMut<'_, R>),
    ) -> Result<()> {
        let (ns, nr): (usize, usize) =
            (self.send_counts.iter().sum(), self.recv_counts.iter().sum());
        assert!(
            src.len() == self.lens.0
                && dst.len() == self.lens.1
                && send.len() >= self.buffers.0
                && recv.len() >= self.buffers.1,
            "a reordering exchange run on blocks or buffers of the wrong lengths"
        );
        E::gather(&self.pack, src, E::sub_mut(&mut send, 0..ns));
        {
            // This rank's own part is copied; the others travel in one exchange.
            let me = comm.rank();
            let packed = E::sub(E::freeze(&send), 0..ns);
            let s0: Vec<usize> = self
                .send_counts
                .iter()
                .scan(0, |at, &c| {
                    *at += c;
                    Some(*at - c)
                })
                .collect();
            let own = self.send_counts[me];
            let outgoing: Vec<(usize, E::Slice<'_, R>)> = (0..self.send_counts.len())
                .filter(|&q| q != me && self.send_counts[q] > 0)
                .map(|q| (q, E::sub(packed, s0[q]..s0[q] + self.send_counts[q])))
                .collect();
            let mut parts = parts_of::<E, R>(E::sub_mut(&mut recv, 0..nr), &self.recv_counts);
            if let Some(k) = parts.iter().position(|p| p.0 == me) {
                let (_, mine) = parts.remove(k);
                E::copy_slice(E::sub(packed, s0[me]..s0[me] + own), mine);
            }
            engine.exchange(comm, &outgoing, &mut parts)?;
        }
        let zero = R::zero();
        match &self.weights {
            None => {
                E::fill_slice(E::sub_mut(&mut recv, nr..nr + 2), zero);
                E::gather(&self.unpack, E::sub(E::freeze(&recv), 0..nr + 2), dst);
            }
            Some(w) => {
                let received = E::sub(E::freeze(&recv), 0..nr);
                E::diag_mul(E::slice(w), 1, received, E::sub_mut(&mut send, 0..nr));
                E::fill_slice(E::sub_mut(&mut send, nr..nr + 2), zero);
                E::gather(&self.unpack, E::sub(E::freeze(&send), 0..nr + 2), dst);
            }
        }
        Ok(())
    }
}
