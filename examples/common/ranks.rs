//! The number of thread ranks of the small examples, from their command line.
//!
//! Included by the examples with `#[path = "common/ranks.rs"] mod ranks;`.

/// The first command-line argument as a number of thread ranks, else `default`. Under `mpirun`
/// the launcher's processes are the ranks and the number is ignored.
pub fn from_args(default: usize) -> usize {
    std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}
