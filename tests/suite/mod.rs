//! The test bodies shared by the Threads and MPI test binaries. Each is `fn(&Communicator)`, runs
//! on every rank, and panics on failure. Sizes are chosen not to divide evenly by 2, 3 or 4.

#![allow(dead_code)]

pub mod comm;
pub mod util;

use distlops::core::Communicator;

/// Every test, in the order they run.
pub const TESTS: &[(&str, fn(&Communicator))] = &[
    ("comm::all_reduce_sum_max_min", comm::all_reduce_sum_max_min),
    ("comm::all_gather_and_varcount", comm::all_gather_and_varcount),
    ("comm::gather_to_root", comm::gather_to_root),
    ("comm::broadcast_from_every_root", comm::broadcast_from_every_root),
    ("comm::ring_send_receive", comm::ring_send_receive),
    ("comm::exchange_with_both_neighbours", comm::exchange_with_both_neighbours),
    ("comm::all_to_all_varcount", comm::all_to_all_varcount),
    ("comm::split_by_colour", comm::split_by_colour),
    ("comm::barrier_and_agree", comm::barrier_and_agree),
    ("comm::large_random_all_reduce", comm::large_random_all_reduce),
];
