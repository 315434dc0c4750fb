//! How a distributed array's data is spread over the ranks.

/// The three partitions of PyLops-MPI (`pylops_mpi.Partition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Partition {
    /// Every rank owns a disjoint block along the distributed axis (the default).
    #[default]
    Scatter,
    /// Every rank holds the whole array. Assignments through
    /// [`DistributedArray::assign`](crate::DistributedArray::assign) copy rank 0's value to every rank,
    /// so replicas cannot drift apart.
    Broadcast,
    /// Every rank holds the whole array, and assignments are local: keeping the replicas consistent is
    /// the caller's job. No communication, so no cost and no message-size limit.
    UnsafeBroadcast,
}

impl Partition {
    /// `true` for [`Partition::Broadcast`] and [`Partition::UnsafeBroadcast`]: every rank holds the whole array.
    pub fn is_replicated(self) -> bool {
        !matches!(self, Partition::Scatter)
    }
}

impl std::fmt::Display for Partition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Partition::Scatter => "Scatter",
            Partition::Broadcast => "Broadcast",
            Partition::UnsafeBroadcast => "UnsafeBroadcast",
        })
    }
}
