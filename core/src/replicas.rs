//! The replica check: the copies of a replicated (Broadcast) array must be the same on every
//! rank, or a solver that reads them takes different branches on different ranks (one rank
//! stops, the others wait forever).

use crate::array::DistributedArray;
use crate::comm::{Communicator, Fingerprint, ReduceOp};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::scalar::{RealScalar, Scalar};
use crate::stacked::DistVector;
use crate::vector_ref::VectorRef;

impl<T: Scalar, E: Engine> DistVector<T, E> {
    /// [`VectorRef::check_replicas`] of this vector. [Collective](crate#collective-calls) when
    /// the vector has a replicated part: every rank of its communicator calls it.
    ///
    /// # Errors
    /// As [`VectorRef::check_replicas`].
    pub fn check_replicas(&self, what: &str) -> Result<()> {
        VectorRef::from(self).check_replicas(what)
    }
}

impl<'a, T: Scalar, E: Engine> VectorRef<'a, T, E> {
    /// Checks that every replicated part (Broadcast or UnsafeBroadcast) holds the same values on
    /// every rank. [Collective](crate#collective-calls) when the vector has a replicated part:
    /// every rank of its communicator calls it (the layouts, which the caller must have agreed
    /// on before, decide this identically on every rank); no communication when every part is
    /// Scatter, or on one rank.
    ///
    /// One pass over the replicated data (a hash of the values' bits; from device memory, a copy
    /// to the host first) and one small all-reduce (an all-gather more when the copies differ).
    /// Scatter parts are not read. Solvers call it on their data and initial guess, operators'
    /// allocating [`apply`](crate::LinearOperatorExt::apply) on their input.
    ///
    /// # Errors
    /// [`Error::ReplicasDiffer`] on every rank, naming `what` and the ranks whose copy differs
    /// from rank 0's.
    pub fn check_replicas(self, what: &str) -> Result<()> {
        if self.comm().size() == 1 {
            return Ok(());
        }
        // One hash per colour group: masked replicas are copies within their group only (the
        // groups of a mask hold independent problems), unmasked ones within the communicator.
        let mut hashes: Vec<(&DistributedArray<T, E>, Fingerprint)> = Vec::new();
        self.for_each_array(&mut |a: &DistributedArray<T, E>| {
            if a.partition().is_replicated() {
                match hashes.iter_mut().find(|(b, _)| b.mask() == a.mask()) {
                    Some((_, h)) => *h = hash_values(*h, a),
                    None => hashes.push((a, hash_values(Fingerprint::default(), a))),
                }
            }
        });
        for (a, hash) in hashes {
            let ranks = a.mask().map(|m| m.members(a.rank()));
            replicas_agree(a.reduce_comm(), hash, ranks.as_deref(), what)?;
        }
        Ok(())
    }

    /// Calls `f` on every plain array, depth first.
    fn for_each_array(self, f: &mut dyn FnMut(&'a DistributedArray<T, E>)) {
        match self {
            VectorRef::Array(a) => f(a),
            VectorRef::Stacked(s) => s
                .parts()
                .iter()
                .for_each(|p| VectorRef::from(p).for_each_array(f)),
        }
    }
}

/// Mixes the bits of every value of `a`'s local block into `h` (see [`hash_slice`]; from
/// device memory, a copy to the host first).
fn hash_values<T: Scalar, E: Engine>(h: Fingerprint, a: &DistributedArray<T, E>) -> Fingerprint {
    let block = a.host_block();
    match block.as_slice() {
        Some(values) => hash_slice(h, values),
        None => hash_slice(h, &block.iter().copied().collect::<Vec<T>>()),
    }
}

/// Mixes the length and the bits of every value of `values` into `h` (real and imaginary parts
/// as `f64`, which every supported real type converts to exactly): four independent lanes of
/// [`Fingerprint::word`] over consecutive values, folded into `h` at the end, so the pass runs
/// at about the memory bandwidth rather than at the latency of one chain of multiplications.
/// Equal values give equal hashes on every rank; any change of a value's bits changes the hash
/// but for a chance of about 2^-64. No communication.
pub(crate) fn hash_slice<T: Scalar>(h: Fingerprint, values: &[T]) -> Fingerprint {
    let mix = |lane: Fingerprint, v: T| {
        let lane = lane.word(v.re().to_f64().to_bits());
        if T::IS_COMPLEX {
            lane.word(v.im().to_f64().to_bits())
        } else {
            lane
        }
    };
    let start = h.word(values.len() as u64);
    let mut lanes = [0u64, 1, 2, 3].map(|k| start.word(k));
    let mut chunks = values.chunks_exact(4);
    for c in &mut chunks {
        for (lane, &v) in lanes.iter_mut().zip(c) {
            *lane = mix(*lane, v);
        }
    }
    let tail = chunks
        .remainder()
        .iter()
        .fold(start.word(4), |lane, &v| mix(lane, v));
    lanes.iter().fold(tail, |h, lane| h.word(lane.value()))
}

/// Checks that every rank of `comm` holds a copy with the fingerprint `hash` (one small
/// all-reduce; an all-gather more when they differ). `ranks` names the ranks of `comm` in the
/// whole communicator (the members of a colour group), for the message.
pub(crate) fn replicas_agree(
    comm: &Communicator,
    hash: Fingerprint,
    ranks: Option<&[usize]>,
    what: &str,
) -> Result<()> {
    if comm.size() == 1 {
        return Ok(());
    }
    let h = hash.value();
    let mut words = [h, !h];
    comm.all_reduce_in_place(&mut words, ReduceOp::Max);
    if words[0] == !words[1] {
        return Ok(());
    }
    let mut all = vec![0u64; comm.size()];
    comm.all_gather_into(&[h], &mut all);
    let name = |r: usize| ranks.map_or(r, |m| m[r]);
    let differ: Vec<usize> = (1..all.len())
        .filter(|&r| all[r] != all[0])
        .map(name)
        .collect();
    Err(Error::ReplicasDiffer(format!(
        "{what}: the copies of a replicated array differ between ranks: rank(s) {differ:?} \
         hold other values than rank {} (write replicated arrays with assign, or call \
         broadcast_from_root)",
        name(0)
    )))
}
