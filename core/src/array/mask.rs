//! [`Mask`]: the colour groups of a distributed array (PyLops-MPI's `mask`).

use crate::comm::{Communicator, ReduceOp};
use crate::error::{Error, Result};
use std::sync::Arc;

/// A colour group: ranks with the same colour reduce (`dot`, `norm`, masked gathers) among
/// themselves only, as PyLops-MPI's `mask`.
///
/// The groups hold independent problems: a masked array's reductions (`dot`, `vdot`, the norms,
/// `norm_axis`, `asarray_masked`) are [collective](crate#collective-calls) over the colour group
/// only, their agreements included, so the groups need not make the same number of them (a
/// masked CGLS may stop in one group before the other). Operations that move data over the
/// whole communicator (`gather`, `redistribute`, ghost cells, `asarray`) stay collective over
/// every rank.
#[derive(Clone, Debug)]
pub struct Mask {
    pub(super) colours: Arc<[usize]>,
    pub(super) group: Communicator,
}

impl Mask {
    /// Every rank's colour.
    pub fn colours(&self) -> &[usize] {
        &self.colours
    }

    /// The sub-communicator of this rank's colour.
    pub fn group(&self) -> &Communicator {
        &self.group
    }

    /// The ranks (of the parent communicator) in this rank's group, in order.
    pub fn members(&self, rank: usize) -> Vec<usize> {
        let c = self.colours[rank];
        (0..self.colours.len())
            .filter(|&r| self.colours[r] == c)
            .collect()
    }
}

impl PartialEq for Mask {
    fn eq(&self, other: &Self) -> bool {
        self.colours == other.colours
    }
}

/// Validates a colour list collectively and splits the communicator.
pub(crate) fn make_mask(comm: &Communicator, colours: &[usize]) -> Result<Mask> {
    let check = if colours.len() == comm.size() {
        Ok(())
    } else {
        Err(Error::InvalidMask(format!(
            "{} colours for {} ranks; give one colour per rank",
            colours.len(),
            comm.size()
        )))
    };
    // Every rank calls `agree`, whatever its own list looks like, so none is left waiting. The
    // ranks whose own list was fine report the culprit's problem as `InvalidMask` too.
    comm.agree(check).map_err(|e| match e {
        Error::FailedOnOtherRank { rank, message } => Error::InvalidMask(format!(
            "the colour list of rank {rank} is invalid ({message})"
        )),
        other => other,
    })?;
    // Agree that every rank holds the same list: compare min and max of a hash with one all-reduce.
    let h = colours.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &c| {
        (h ^ c as u64).wrapping_mul(0x0100_0000_01b3)
    });
    let mut both = [0u64; 2];
    comm.all_reduce_into(&[h, u64::MAX - h], &mut both, ReduceOp::Max);
    if both[0] != u64::MAX - both[1] {
        return Err(Error::InvalidMask(
            "ranks passed different colour lists".into(),
        ));
    }
    let group = comm.split(colours[comm.rank()])?;
    Ok(Mask {
        colours: colours.into(),
        group,
    })
}
