//! The replica check: the copies of a replicated (Broadcast) array must be the same on every
//! rank, or a solver that reads them takes different branches on different ranks (one rank
//! stops, the others wait forever).

use crate::array::DistributedArray;
use crate::comm::{Fingerprint, ReduceOp};
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

impl<T: Scalar, E: Engine> VectorRef<'_, T, E> {
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
        let comm = self.comm();
        if comm.size() == 1 {
            return Ok(());
        }
        let mut hash = None;
        self.for_each_array(&mut |a: &DistributedArray<T, E>| {
            if a.partition().is_replicated() {
                hash = Some(hash_values(hash.unwrap_or_default(), a));
            }
        });
        let Some(hash) = hash else {
            return Ok(());
        };
        let h = hash.value();
        let mut words = [h, !h];
        comm.all_reduce_in_place(&mut words, ReduceOp::Max);
        if words[0] == !words[1] {
            return Ok(());
        }
        let mut all = vec![0u64; comm.size()];
        comm.all_gather_into(&[h], &mut all);
        let differ: Vec<usize> = (1..all.len()).filter(|&r| all[r] != all[0]).collect();
        Err(Error::ReplicasDiffer(format!(
            "{what}: the copies of a replicated array differ between ranks: rank(s) {differ:?} \
             hold other values than rank 0 (write replicated arrays with assign, or call \
             broadcast_from_root)"
        )))
    }

    /// Calls `f` on every plain array, depth first.
    fn for_each_array(self, f: &mut dyn FnMut(&DistributedArray<T, E>)) {
        match self {
            VectorRef::Array(a) => f(a),
            VectorRef::Stacked(s) => s
                .parts()
                .iter()
                .for_each(|p| VectorRef::from(p).for_each_array(f)),
        }
    }
}

/// Mixes the bits of every value of `a`'s local block into `h` (real and imaginary parts as
/// f64, which every supported real type converts to exactly).
fn hash_values<T: Scalar, E: Engine>(h: Fingerprint, a: &DistributedArray<T, E>) -> Fingerprint {
    let block = a.host_block();
    block.iter().fold(h.word(block.len() as u64), |h, &v| {
        let (re, im) = (v.re().to_f64(), v.im().to_f64());
        h.word(re.to_bits()).word(im.to_bits())
    })
}
