//! [`Halo`](super::Halo) on any engine, written once with the engine's primitives: the boxes
//! of its messages packed and placed with [`Compute::strided_copy`], moved with one
//! [`Collectives::exchange`], and the adjoint's sums done with [`Compute::axpy_slice`] on each received
//! box (gathered into a scratch buffer and put back), message by message in the host's order.

use super::Message;
use distlops_core::{Communicator, Engine, Result, Scalar, SliceLen, StridedCopy};
use std::sync::Mutex;

/// The copy of the box `start + shape` of a C-ordered array of shape `outer` to (or, with
/// `gather == false`, from) elements `at..` of a flat buffer of `len` elements.
pub(super) fn box_copy(
    outer: &[usize],
    (start, shape): (&[usize], &[usize]),
    (at, len): (usize, usize),
    gather: bool,
) -> Result<StridedCopy> {
    let strides = StridedCopy::c_strides(outer);
    let base = start.iter().zip(&strides).map(|(s, t)| s * t).sum();
    let array = (base, &strides[..], outer.iter().product());
    let packed = StridedCopy::c_strides(shape);
    let buffer = (at, &packed[..], len);
    if gather {
        StridedCopy::new(shape, array, buffer)
    } else {
        StridedCopy::new(shape, buffer, array)
    }
}

/// One message's box: the peer, where it lies in the message buffer, and its copies.
#[derive(Debug)]
struct Boxed {
    peer: usize,
    at: usize,
    len: usize,
    /// Between the array and the message buffer (gathering for sends, placing for receives),
    /// and the other way (for the adjoint).
    copy: StridedCopy,
    back: StridedCopy,
    /// From the array to the start of the scratch buffer and back (core boxes only: the
    /// adjoint's sums).
    scratch: Option<(StridedCopy, StridedCopy)>,
}

/// The work buffers, locked for the length of a product.
struct Work<T: Scalar, E: Engine> {
    /// Core boxes (forward sends, adjoint receives), extended boxes (forward receives, adjoint
    /// sends), and room for the largest core box.
    core: E::Storage<T>,
    ext: E::Storage<T>,
    scratch: E::Storage<T>,
}

/// The engine execution of one [`Halo`](super::Halo).
pub(super) struct HaloEngine<T: Scalar, E: Engine> {
    engine: E,
    /// Boxes of the core that other ranks' halos hold, packed one after another.
    sends: Vec<Boxed>,
    /// Boxes of the extended block that other ranks own, packed one after another.
    recvs: Vec<Boxed>,
    /// The core (the whole domain block) into its place in the extended block, and back.
    core_in_ext: StridedCopy,
    ext_to_core: StridedCopy,
    zero_fill: bool,
    /// Elements of the three buffers of [`Work`].
    lens: (usize, usize, usize),
    work: Mutex<Work<T, E>>,
}

impl<T: Scalar, E: Engine> HaloEngine<T, E> {
    /// The copies of the messages `sends` (boxes of the core, of shape `core`) and `recvs`
    /// (boxes of the extended block, of shape `ext`), and the buffers on `engine`.
    ///
    /// # Errors
    /// [`Error::Allocation`](distlops_core::Error::Allocation) if the engine has no room;
    /// [`Error::InvalidArgument`](distlops_core::Error::InvalidArgument) for a box outside its
    /// array (a bug).
    pub(super) fn new(
        engine: &E,
        (core, ext): (&[usize], &[usize]),
        (sends, recvs): (&[Message], &[Message]),
        core_start: &[usize],
        zero_fill: bool,
    ) -> Result<Self> {
        let total = |m: &[Message]| m.iter().map(|m| m.runs.len()).sum::<usize>();
        let (core_len, ext_len) = (total(sends), total(recvs));
        let scratch_len = sends.iter().map(|m| m.runs.len()).max().unwrap_or(0);
        let boxed = |list: &[Message], outer: &[usize], len: usize, core: bool| {
            let mut at = 0;
            list.iter()
                .map(|m| {
                    let b = (&m.start[..], &m.shape[..]);
                    let n = m.runs.len();
                    let copy = box_copy(outer, b, (at, len), core)?;
                    let scratch = if core {
                        let gather = box_copy(outer, b, (0, scratch_len), true)?;
                        Some((gather.reversed(), gather))
                    } else {
                        None
                    };
                    at += n;
                    Ok(Boxed {
                        peer: m.peer,
                        at: at - n,
                        len: n,
                        back: copy.reversed(),
                        copy,
                        scratch: scratch.map(|(back, gather)| (gather, back)),
                    })
                })
                .collect::<Result<Vec<_>>>()
        };
        let sends = boxed(sends, core, core_len, true)?;
        let recvs = boxed(recvs, ext, ext_len, false)?;
        let core_volume = core.iter().product();
        let core_in_ext = box_copy(ext, (core_start, core), (0, core_volume), false)?;
        let lens = (core_len, ext_len, scratch_len);
        Ok(HaloEngine {
            engine: engine.clone(),
            sends,
            recvs,
            ext_to_core: core_in_ext.reversed(),
            core_in_ext,
            zero_fill,
            lens,
            work: Mutex::new(Self::work(engine, lens)?),
        })
    }

    fn work(engine: &E, (core, ext, scratch): (usize, usize, usize)) -> Result<Work<T, E>> {
        Ok(Work {
            core: engine.zeros(&[core])?,
            ext: engine.zeros(&[ext])?,
            scratch: engine.zeros(&[scratch])?,
        })
    }

    /// The same execution with buffers of its own (for a clone of the operator).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub(super) fn again(&self) -> Result<Self> {
        let copy = |list: &[Boxed]| -> Vec<Boxed> {
            list.iter()
                .map(|b| Boxed {
                    peer: b.peer,
                    at: b.at,
                    len: b.len,
                    copy: b.copy.clone(),
                    back: b.back.clone(),
                    scratch: b.scratch.clone(),
                })
                .collect()
        };
        Ok(HaloEngine {
            engine: self.engine.clone(),
            sends: copy(&self.sends),
            recvs: copy(&self.recvs),
            core_in_ext: self.core_in_ext.clone(),
            ext_to_core: self.ext_to_core.clone(),
            zero_fill: self.zero_fill,
            lens: self.lens,
            work: Mutex::new(Self::work(&self.engine, self.lens)?),
        })
    }

    /// One exchange: `from[b.at..b.at + b.len]` to `b.peer` for every box of `out`, into
    /// `into[b.at..]` from `b.peer` for every box of `inn`.
    fn exchange(
        &self,
        comm: &Communicator,
        (out, from): (&[Boxed], &E::Storage<T>),
        (inn, into): (&[Boxed], &mut E::Storage<T>),
    ) -> Result<()> {
        let sends: Vec<(usize, E::Slice<'_, T>)> = out
            .iter()
            .map(|b| (b.peer, E::sub(E::slice(from), b.at..b.at + b.len)))
            .collect();
        let mut recvs = Vec::with_capacity(inn.len());
        let mut rest = E::slice_mut(into);
        for b in inn {
            let (head, tail) = E::split_at_mut(rest, b.len);
            rest = tail;
            recvs.push((b.peer, head));
        }
        drop(rest);
        self.engine.exchange(comm, &sends, &mut recvs)
    }

    /// `y = H x` on this rank's blocks.
    ///
    /// # Errors
    /// What the engine's exchange reports.
    pub(super) fn forward(
        &self,
        comm: &Communicator,
        x: E::Slice<'_, T>,
        mut y: E::SliceMut<'_, T>,
    ) -> Result<()> {
        let mut guard = self.work.lock().unwrap_or_else(|e| e.into_inner());
        let Work { core, ext, .. } = &mut *guard;
        for b in &self.sends {
            E::strided_copy(&b.copy, x, E::slice_mut(core));
        }
        self.exchange(comm, (&self.sends, core), (&self.recvs, ext))?;
        let n = y.len();
        if self.zero_fill {
            E::fill_slice(E::sub_mut(&mut y, 0..n), T::zero());
        }
        E::strided_copy(&self.core_in_ext, x, E::sub_mut(&mut y, 0..n));
        for b in &self.recvs {
            E::strided_copy(&b.copy, E::slice(ext), E::sub_mut(&mut y, 0..n));
        }
        Ok(())
    }

    /// `x = H^H y` on this rank's blocks.
    ///
    /// # Errors
    /// What the engine's exchange reports.
    pub(super) fn adjoint(
        &self,
        comm: &Communicator,
        y: E::Slice<'_, T>,
        mut x: E::SliceMut<'_, T>,
    ) -> Result<()> {
        let mut guard = self.work.lock().unwrap_or_else(|e| e.into_inner());
        let Work { core, ext, scratch } = &mut *guard;
        for b in &self.recvs {
            E::strided_copy(&b.back, y, E::slice_mut(ext));
        }
        self.exchange(comm, (&self.recvs, ext), (&self.sends, core))?;
        let n = x.len();
        E::strided_copy(&self.ext_to_core, y, E::sub_mut(&mut x, 0..n));
        for b in &self.sends {
            let (gather, back) = b.scratch.as_ref().expect("core boxes have a scratch copy");
            E::strided_copy(gather, E::freeze(&x), E::slice_mut(scratch));
            let received = E::sub(E::slice(core), b.at..b.at + b.len);
            let mut s = E::slice_mut(scratch);
            E::axpy_slice(T::one(), received, E::sub_mut(&mut s, 0..b.len));
            drop(s);
            E::strided_copy(back, E::slice(scratch), E::sub_mut(&mut x, 0..n));
        }
        Ok(())
    }
}
