//! Tests of the `Threads` back-end: wake-ups on panics and early returns, mismatched
//! collectives, result order.

use super::*;
use std::time::{Duration, Instant};

#[test]
fn a_panic_on_one_rank_wakes_the_others_and_propagates() {
    let start = Instant::now();
    let outcome = std::panic::catch_unwind(|| {
        Threads::run(4, |comm| {
            if comm.rank() == 2 {
                panic!("rank two fails");
            }
            // The others wait in collectives that rank 2 never joins.
            comm.barrier();
            comm.all_reduce(1.0f64, ReduceOp::Sum)
        })
    });
    let payload = outcome.expect_err("the panic must reach the caller");
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    assert_eq!(msg, "rank two fails", "the original panic is propagated");
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_panic_wakes_ranks_waiting_for_a_message_in_a_sub_communicator() {
    let outcome = std::panic::catch_unwind(|| {
        Threads::run(3, |comm| {
            let sub = comm.split(comm.rank() % 2).unwrap();
            if comm.rank() == 1 {
                panic!("rank one fails");
            }
            let mut buf = [0.0f64; 2];
            if sub.size() > 1 {
                // Rank 0 waits for a message from rank 2, which waits in a barrier that
                // rank 1 never reaches.
                if sub.rank() == 0 {
                    sub.send_receive_into(&[], 1, &mut buf, 1);
                } else {
                    comm.barrier();
                }
            }
        })
    });
    assert!(outcome.is_err());
}

#[test]
fn mismatched_collectives_panic_instead_of_misreading_memory() {
    let outcome = std::panic::catch_unwind(|| {
        Threads::run(2, |comm| {
            if comm.rank() == 0 {
                comm.all_reduce(1.0f64, ReduceOp::Sum);
            } else {
                comm.all_reduce(1u64, ReduceOp::Sum);
            }
        })
    });
    assert!(outcome.is_err());
}

#[test]
fn an_err_on_one_rank_wakes_ranks_waiting_in_collectives_and_receives() {
    let start = Instant::now();
    for culprit in 0..4 {
        let out: Result<Vec<f64>, String> = Threads::try_run(4, |comm| {
            if comm.rank() == culprit {
                return Err(format!("rank {culprit} fails"));
            }
            // One neighbour waits for a message from the culprit, the rest in a collective.
            if comm.rank() == (culprit + 1) % 4 {
                let mut buf = [0.0f64; 3];
                comm.send_receive_into(&[], culprit, &mut buf, culprit);
            }
            let sub = comm.split(comm.rank() % 2).map_err(|e| e.to_string())?;
            sub.barrier();
            Ok(comm.all_reduce(1.0f64, ReduceOp::Sum))
        });
        assert_eq!(out.unwrap_err(), format!("rank {culprit} fails"));
    }
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_rank_that_returns_early_is_named_instead_of_a_hang() {
    let outcome = std::panic::catch_unwind(|| {
        Threads::run(3, |comm| {
            if comm.rank() != 2 {
                comm.barrier();
            }
        })
    });
    let payload = outcome.expect_err("the waiting ranks must not hang");
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(msg.contains("rank 2 returned while rank 0"), "{msg}");
}

#[test]
fn ranks_that_return_after_matching_calls_are_fine() {
    let out: Result<Vec<usize>, String> = Threads::try_run(3, |comm| {
        comm.barrier();
        if comm.rank() == 0 {
            // Rank 0 returns at once; the others still compute locally.
            return Ok(0);
        }
        std::thread::sleep(Duration::from_millis(20));
        Ok(comm.rank())
    });
    assert_eq!(out.unwrap(), vec![0, 1, 2]);
}

#[test]
fn ranks_that_return_right_after_a_collective_or_a_send_never_fail_the_others() {
    // A rank that completes the last collective (or sends the last message) and returns at
    // once must not be seen as "left" by ranks still waking up from that collective (a race
    // seen in 1 of ~100 runs before the check moved under the lock).
    for _ in 0..500 {
        let out: Result<Vec<f64>, String> = Threads::try_run(5, |comm| {
            let s = comm.all_reduce(1.0f64, ReduceOp::Sum);
            let mut buf = [0.0f64; 1];
            let (next, prev) = ((comm.rank() + 1) % 5, (comm.rank() + 4) % 5);
            comm.send_receive_into(&[s], next, &mut buf, prev);
            comm.barrier();
            Ok(buf[0])
        });
        assert_eq!(out.unwrap(), vec![5.0; 5]);
    }
}

#[test]
fn results_come_back_in_rank_order() {
    let ranks = Threads::run(5, |comm| (comm.rank(), comm.size()));
    assert_eq!(ranks, (0..5).map(|r| (r, 5)).collect::<Vec<_>>());
}
