//! The execution of a [`Plan`] on any [`Engine`], written once with the engine's primitives (the
//! same code runs on the host, `to_engine(&Host)`, and on a device):
//!
//! 1. the slabs of this rank that other ranks need along the distributed axis are packed with
//!    [`Compute::strided_copy`] into a send buffer and move in one [`Collectives::exchange`] into a
//!    receive buffer;
//! 2. each input that a term along the distributed axis reads is laid out as an *extended block*
//!    (its ghost rows in front, the local block, its ghost rows behind), again by strided copies;
//! 3. every [`Term`](super::Term) is one [`Banded::band`] into its output: the term's band in
//!    global indices, converted at construction to this rank's output rows and to the rows of
//!    the block it reads (the extended block along the distributed axis, the local block along
//!    any other axis), with `accumulate` for every term of an output after the first.
//!
//! What moves and where it goes is the host plan's: its ghost pieces and outgoing slabs, in the
//! same order (so the messages between two ranks pair up as on the host), and its terms with the
//! transposed bands for the adjoint. Everything is fixed at construction ([`EnginePlan`], which
//! depends on no engine); an [`EngineDirection`] adds the band tables and the work buffers on
//! one engine, allocated once, so a product allocates nothing in engine memory.
//!
//! The sums run in the order of [`AxisBand`]'s formula (one term after another, taps in order,
//! no fused multiply-add), not in the host kernel's merged order: results agree with the host
//! path to rounding, not bitwise.

use super::plan::Plan;
use distlops_core::{
    AxisBand, Banded, Communicator, Error, RealScalar, Result, Scalar, SliceLen, StridedCopy,
};
use ndarray::ArrayView1;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// A slab of this rank's block that goes to another rank.
#[derive(Debug)]
struct SendSlab {
    /// The input it belongs to, and the rank it goes to.
    inp: usize,
    dest: usize,
    /// Where it is packed: elements `at..at + len` of the send buffer.
    at: usize,
    len: usize,
    /// The copy that packs it there from the input (every slab is packed, also those that are
    /// contiguous in the input: the engine's exchange takes slices of one lifetime).
    pack: StridedCopy,
}

/// A ghost slab this rank receives: `len` elements from rank `src`, in the receive buffer
/// after the previous ones.
#[derive(Debug)]
struct RecvSlab {
    src: usize,
    len: usize,
}

/// The extended block of one input: `len` elements, whose rows along the distributed axis are
/// the global rows `start..start + rows`, filled from the local block and the ghost slabs.
#[derive(Debug)]
struct Extended {
    start: usize,
    rows: usize,
    len: usize,
    /// The local block into its place.
    local: StridedCopy,
    /// Each ghost slab of this input (from the receive buffer) into its place.
    ghosts: Vec<StridedCopy>,
}

/// One term on this rank: `band` reads input `inp` (its extended block when `extended`) and
/// adds to (or, first of its output, writes) the output.
#[derive(Debug)]
struct BandTerm {
    inp: usize,
    extended: bool,
    band: AxisBand,
}

/// Everything one direction needs on any engine, fixed at construction from the host [`Plan`]:
/// engine-neutral, shared by the copies of an operator on several engines.
#[derive(Debug)]
pub(super) struct EnginePlan {
    /// Elements of every input and output block on this rank.
    local_len: usize,
    /// Whether a term acts along the distributed axis (the same on every rank): then every rank
    /// takes part in one exchange per product, also with nothing to send or receive.
    exchange: bool,
    sends: Vec<SendSlab>,
    send_len: usize,
    recvs: Vec<RecvSlab>,
    recv_len: usize,
    /// Per input, its extended block if a term along the distributed axis reads ghost rows of it.
    extended: Vec<Option<Extended>>,
    /// Per output, its terms in order.
    outputs: Vec<Vec<BandTerm>>,
}

/// A copy of the box `(pre, rows, post)` between two blocks that have `rows_*` rows along the
/// middle axis, starting at element `*_at`.
fn slab_copy(
    (pre, rows, post): (usize, usize, usize),
    (src_at, src_rows, src_len): (usize, usize, usize),
    (dst_at, dst_rows, dst_len): (usize, usize, usize),
) -> Result<StridedCopy> {
    StridedCopy::new(
        &[pre, rows, post],
        (src_at, &[src_rows * post, post, 1], src_len),
        (dst_at, &[dst_rows * post, post, 1], dst_len),
    )
}

/// The explicit rows of `band` (global indices) among the global rows `out` (the output rows
/// of this block), as `(output row, [(source row, coefficient)])` relative to `out.start` and
/// to `src_start`.
fn explicit_rows(
    band: &crate::local::stencil::Band,
    out: Range<usize>,
    src_start: usize,
) -> Vec<(usize, Vec<(usize, f64)>)> {
    use crate::local::stencil::RowKind;
    let interior = band.interior();
    let head = out.start..interior.start.min(out.end);
    let tail = interior.end.max(out.start)..out.end;
    head.chain(tail)
        .filter_map(|g| match band.row(g) {
            RowKind::Explicit(entries) => Some((
                g - out.start,
                entries.iter().map(|&(c, v)| (c - src_start, v)).collect(),
            )),
            RowKind::Interior => None,
        })
        .collect()
}

impl EnginePlan {
    /// The engine execution of `plan` (one direction, `ninputs` inputs).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if a band or a copy cannot be described (a bug: the host plan
    /// covers every row a stencil reaches).
    pub(super) fn new<R: RealScalar>(plan: &Plan<R>, ninputs: usize) -> Result<Self> {
        let shape = &plan.shape;
        let axis = plan.axis;
        let (offset, n_local) = (plan.offset, plan.n_local);
        let local_len: usize = shape.iter().product();
        let pre: usize = shape[..axis].iter().product();
        let post: usize = shape[axis + 1..].iter().product();
        let terms: Vec<Vec<&super::Term>> = plan
            .outer_terms
            .iter()
            .zip(&plan.line_terms)
            .map(|(a, b)| a.iter().chain(b).collect())
            .collect();
        let exchange = terms.iter().flatten().any(|t| t.axis == axis);
        // Outgoing slabs, in the host plan's order, packed one after another.
        let send_len: usize = plan
            .outgoing
            .iter()
            .map(|o| pre * o.rows.len() * post)
            .sum();
        let mut at = 0;
        let sends = plan
            .outgoing
            .iter()
            .map(|o| {
                let rows = o.rows.len();
                let len = pre * rows * post;
                let pack = slab_copy(
                    (pre, rows, post),
                    (o.rows.start * post, n_local, local_len),
                    (at, rows, send_len),
                )?;
                at += len;
                Ok(SendSlab {
                    inp: o.inp,
                    dest: o.dest,
                    at: at - len,
                    len,
                    pack,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        // Ghost slabs, in the host plan's order, and the extended blocks they go to.
        let recvs: Vec<RecvSlab> = plan
            .pieces
            .iter()
            .map(|p| RecvSlab {
                src: p.src,
                len: pre * p.len * post,
            })
            .collect();
        let recv_len = recvs.iter().map(|r| r.len).sum();
        let mut extended: Vec<Option<Extended>> = (0..ninputs).map(|_| None).collect();
        for (inp, ext) in extended.iter_mut().enumerate() {
            let mine = || plan.pieces.iter().filter(move |p| p.inp == inp);
            if n_local == 0 || mine().next().is_none() {
                continue;
            }
            let start = mine().map(|p| p.start).min().unwrap_or(offset).min(offset);
            let end = mine()
                .map(|p| p.start + p.len)
                .max()
                .unwrap_or(0)
                .max(offset + n_local);
            let rows = end - start;
            let len = pre * rows * post;
            let local = slab_copy(
                (pre, n_local, post),
                (0, n_local, local_len),
                ((offset - start) * post, rows, len),
            )?;
            let mut ghosts = Vec::new();
            let mut at = 0;
            for (p, r) in plan.pieces.iter().zip(&recvs) {
                if p.inp == inp {
                    ghosts.push(slab_copy(
                        (pre, p.len, post),
                        (at, p.len, recv_len),
                        ((p.start - start) * post, rows, len),
                    )?);
                }
                at += r.len;
            }
            *ext = Some(Extended {
                start,
                rows,
                len,
                local,
                ghosts,
            });
        }
        // The terms as bands on this rank's blocks.
        let outputs = terms
            .iter()
            .map(|list| {
                list.iter()
                    .map(|t| {
                        let b = t.axis;
                        let outer: usize = shape[..b].iter().product();
                        let inner: usize = shape[b + 1..].iter().product();
                        let n = t.band.len();
                        let (out_rows, src_start, n_src, is_ext) = if b != axis {
                            (0..n, 0, n, false)
                        } else if let Some(e) = &extended[t.inp] {
                            (offset..offset + n_local, e.start, e.rows, true)
                        } else {
                            (offset..offset + n_local, offset, n_local, false)
                        };
                        let shift = isize::try_from(out_rows.start - src_start)
                            .map_err(|_| Error::InvalidArgument("stencil: shift".into()))?;
                        let rows = explicit_rows(&t.band, out_rows.clone(), src_start);
                        let dims = (outer, out_rows.len(), n_src, inner);
                        let band = AxisBand::new(dims, t.band.taps(), shift, 0..n_src, &rows)?;
                        Ok(BandTerm {
                            inp: t.inp,
                            extended: is_ext,
                            band,
                        })
                    })
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(EnginePlan {
            local_len,
            exchange,
            sends,
            send_len,
            recvs,
            recv_len,
            extended,
            outputs,
        })
    }
}

/// The work buffers of one direction on one engine, locked for the length of a product.
struct Work<T: Scalar, E: Banded> {
    send: E::Storage<T>,
    recv: E::Storage<T>,
    extended: Vec<Option<E::Storage<T>>>,
}

/// One direction on engine `E`: its [`EnginePlan`], the band tables in the engine's memory and
/// the work buffers, allocated once.
pub(super) struct EngineDirection<T: Scalar, E: Banded> {
    plan: Arc<EnginePlan>,
    engine: E,
    /// Per output, per term, `band.table()` on the engine.
    tables: Vec<Vec<E::Storage<f64>>>,
    work: Mutex<Work<T, E>>,
}

impl<T: Scalar, E: Banded> EngineDirection<T, E> {
    /// `plan` on `engine`: its tables uploaded and its buffers allocated.
    ///
    /// # Errors
    /// [`Error::Allocation`](distlops_core::Error::Allocation) if the engine has no room.
    pub(super) fn new(engine: &E, plan: Arc<EnginePlan>) -> Result<Self> {
        let tables = plan
            .outputs
            .iter()
            .map(|terms| {
                terms
                    .iter()
                    .map(|t| engine.upload(ArrayView1::from(t.band.table()).into_dyn()))
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        let extended = plan
            .extended
            .iter()
            .map(|e| e.as_ref().map(|e| engine.zeros::<T>(&[e.len])).transpose())
            .collect::<Result<Vec<_>>>()?;
        let work = Work {
            send: engine.zeros(&[plan.send_len])?,
            recv: engine.zeros(&[plan.recv_len])?,
            extended,
        };
        Ok(EngineDirection {
            plan,
            engine: engine.clone(),
            tables,
            work: Mutex::new(work),
        })
    }

    /// The engine-neutral plan (to make the same direction on another engine).
    pub(super) fn plan(&self) -> &Arc<EnginePlan> {
        &self.plan
    }

    /// `outputs = A inputs` on this rank's blocks (C order, `E`'s memory). Collective over
    /// `comm` when a term acts along the distributed axis (one [`Collectives::exchange`]).
    ///
    /// # Errors
    /// What the engine's exchange reports.
    ///
    /// # Panics
    /// If a block does not have this rank's length (operators check their vectors first).
    pub(super) fn apply(
        &self,
        comm: &Communicator,
        inputs: &[E::Slice<'_, T>],
        mut outputs: Vec<E::SliceMut<'_, T>>,
    ) -> Result<()> {
        let p = &*self.plan;
        assert!(
            inputs.len() == p.extended.len() && outputs.len() == p.outputs.len(),
            "stencil: wrong number of blocks"
        );
        let n = p.local_len;
        for len in inputs
            .iter()
            .map(SliceLen::len)
            .chain(outputs.iter().map(SliceLen::len))
        {
            assert_eq!(len, n, "stencil: a block has the wrong length");
        }
        let mut guard = self.work.lock().unwrap_or_else(|e| e.into_inner());
        let Work {
            send,
            recv,
            extended,
        } = &mut *guard;
        if p.exchange {
            for s in &p.sends {
                E::strided_copy(&s.pack, inputs[s.inp], E::slice_mut(send));
            }
            {
                let sends: Vec<(usize, E::Slice<'_, T>)> = p
                    .sends
                    .iter()
                    .map(|s| (s.dest, E::sub(E::slice(send), s.at..s.at + s.len)))
                    .collect();
                let mut recvs = Vec::with_capacity(p.recvs.len());
                let mut rest = E::slice_mut(recv);
                for r in &p.recvs {
                    let (head, tail) = E::split_at_mut(rest, r.len);
                    rest = tail;
                    recvs.push((r.src, head));
                }
                drop(rest);
                self.engine.exchange(comm, &sends, &mut recvs)?;
            }
            for ((ext, buf), &x) in p.extended.iter().zip(extended.iter_mut()).zip(inputs) {
                if let (Some(ext), Some(buf)) = (ext, buf) {
                    E::strided_copy(&ext.local, x, E::slice_mut(buf));
                    for copy in &ext.ghosts {
                        E::strided_copy(copy, E::slice(recv), E::slice_mut(buf));
                    }
                }
            }
        }
        for ((terms, tables), y) in p.outputs.iter().zip(&self.tables).zip(&mut outputs) {
            if terms.is_empty() {
                E::fill_slice(E::sub_mut(y, 0..n), T::zero());
                continue;
            }
            for (k, (t, table)) in terms.iter().zip(tables).enumerate() {
                if t.band.out_len() == 0 {
                    continue;
                }
                let (table, y) = (E::slice(table), E::sub_mut(y, 0..n));
                // (Two calls: a slice of the input and one of a buffer have different lifetimes.)
                match &extended[t.inp] {
                    Some(buf) if t.extended => E::band(&t.band, table, E::slice(buf), y, k > 0),
                    _ => E::band(&t.band, table, inputs[t.inp], y, k > 0),
                }
            }
        }
        Ok(())
    }
}
