//! The execution of [`Halo`](super::Halo), written once over the engine's parts: the message
//! buffers on the operator's engine, the exchange, and the forward product. Every box is packed
//! and placed with [`Compute::strided_copy`](distlops_core::Compute::strided_copy) (on the host,
//! `Host`'s tiled copies) and the messages move in one
//! [`Collectives::exchange`](distlops_core::Collectives::exchange); the forward only moves data,
//! so every engine gives the same bits.

use super::plan::{Message, Plan};
use distlops_core::{Communicator, Engine, Result, Scalar, SliceLen};
use std::sync::{Mutex, MutexGuard};

/// The message buffers of one operator on its engine, allocated once: the core buffer (the
/// forward's sends, the adjoint's receives) and the halo buffer (the forward's receives, the
/// adjoint's sends), locked for the length of a product.
pub(super) struct Buffers<T: Scalar, E: Engine> {
    pub(super) engine: E,
    lens: (usize, usize),
    work: Mutex<(E::Storage<T>, E::Storage<T>)>,
}

impl<T: Scalar, E: Engine> Buffers<T, E> {
    /// Buffers of `lens` elements on `engine`.
    ///
    /// # Errors
    /// [`Error::Allocation`](distlops_core::Error::Allocation) if the engine has no room.
    pub(super) fn new(engine: &E, lens: (usize, usize)) -> Result<Self> {
        Ok(Buffers {
            engine: engine.clone(),
            lens,
            work: Mutex::new((engine.zeros(&[lens.0])?, engine.zeros(&[lens.1])?)),
        })
    }

    /// Buffers of the same lengths on the same engine (for a clone of the operator).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub(super) fn again(&self) -> Result<Self> {
        Self::new(&self.engine, self.lens)
    }

    /// The core and halo buffers, for the length of a product.
    pub(super) fn lock(&self) -> MutexGuard<'_, (E::Storage<T>, E::Storage<T>)> {
        self.work.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Plan {
    /// One exchange over `engine`: the span of every message of `out` in `from` to its peer, and
    /// into the span of every message of `inn` in `into` from its peer.
    pub(super) fn exchange<T: Scalar, E: Engine>(
        engine: &E,
        comm: &Communicator,
        (out, from): (&[Message], &E::Storage<T>),
        (inn, into): (&[Message], &mut E::Storage<T>),
    ) -> Result<()> {
        let sends: Vec<(usize, E::Slice<'_, T>)> = out
            .iter()
            .map(|m| (m.peer, E::sub(E::slice(from), m.span())))
            .collect();
        let mut recvs = Vec::with_capacity(inn.len());
        let mut rest = E::slice_mut(into);
        for m in inn {
            let (head, tail) = E::split_at_mut(rest, m.len);
            rest = tail;
            recvs.push((m.peer, head));
        }
        drop(rest);
        engine.exchange(comm, &sends, &mut recvs)
    }

    /// `y = H x` on this rank's blocks: the core boxes that other ranks' halos hold packed into
    /// the core buffer, the extended block zeroed if part of it lies outside the global array,
    /// the core copied into its place, the exchange, and the received boxes placed into the
    /// halos.
    ///
    /// # Errors
    /// What the engine's exchange reports.
    pub(super) fn forward<T: Scalar, E: Engine>(
        &self,
        buffers: &Buffers<T, E>,
        comm: &Communicator,
        x: E::Slice<'_, T>,
        mut y: E::SliceMut<'_, T>,
    ) -> Result<()> {
        let (core, halo) = &mut *buffers.lock();
        for m in &self.core_boxes {
            E::strided_copy(&m.pack, x, E::slice_mut(core));
        }
        let n = y.len();
        if self.zero_fill {
            E::fill_slice(E::sub_mut(&mut y, 0..n), T::zero());
        }
        E::strided_copy(&self.core_to_ext, x, E::sub_mut(&mut y, 0..n));
        Self::exchange(
            &buffers.engine,
            comm,
            (&self.core_boxes, core),
            (&self.halo_boxes, halo),
        )?;
        for m in &self.halo_boxes {
            E::strided_copy(&m.place, E::slice(halo), E::sub_mut(&mut y, 0..n));
        }
        Ok(())
    }
}
