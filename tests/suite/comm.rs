//! Communicator operations: every collective against values computed independently on each rank.

use super::util::Rng;
use distlops::core::{Communicator, Complex64, ReduceOp};

pub fn all_reduce_sum_max_min(comm: &Communicator) {
    let (r, p) = (comm.rank() as f64, comm.size() as f64);
    let send = [r, -r, r * r, 1.0];
    let mut sum = [0.0; 4];
    comm.all_reduce_into(&send, &mut sum, ReduceOp::Sum);
    let total: f64 = (0..comm.size()).map(|q| q as f64).sum();
    let squares: f64 = (0..comm.size()).map(|q| (q * q) as f64).sum();
    assert_eq!(sum, [total, -total, squares, p]);
    let mut max = [0.0; 4];
    comm.all_reduce_into(&send, &mut max, ReduceOp::Max);
    assert_eq!(max, [p - 1.0, 0.0, (p - 1.0) * (p - 1.0), 1.0]);
    assert_eq!(comm.all_reduce(comm.rank() as i64 - 7, ReduceOp::Min), -7);
    let z = comm.all_reduce(Complex64::new(1.0, r), ReduceOp::Sum);
    assert_eq!(z, Complex64::new(p, total));
    let mut buf = vec![r; 5];
    comm.all_reduce_in_place(&mut buf, ReduceOp::Sum);
    assert_eq!(buf, vec![total; 5]);
}

pub fn all_gather_and_varcount(comm: &Communicator) {
    let (rank, size) = (comm.rank(), comm.size());
    let mut all = vec![0usize; 2 * size];
    comm.all_gather_into(&[rank, 10 * rank], &mut all);
    let expected: Vec<usize> = (0..size).flat_map(|q| [q, 10 * q]).collect();
    assert_eq!(all, expected);
    // Rank q contributes q + 1 values (and rank 1 none at all, to test empty parts).
    let counts: Vec<usize> = (0..size).map(|q| if q == 1 { 0 } else { q + 1 }).collect();
    let mine: Vec<Complex64> = (0..counts[rank])
        .map(|i| Complex64::new(rank as f64, i as f64))
        .collect();
    let mut recv = vec![Complex64::default(); counts.iter().sum()];
    comm.all_gather_varcount_into(&mine, &mut recv, &counts);
    let expected: Vec<Complex64> = (0..size)
        .flat_map(|q| (0..counts[q]).map(move |i| Complex64::new(q as f64, i as f64)))
        .collect();
    assert_eq!(recv, expected);
}

pub fn gather_to_root(comm: &Communicator) {
    let (rank, size) = (comm.rank(), comm.size());
    let counts: Vec<usize> = (0..size).map(|q| 3 - q % 3).collect();
    let mine: Vec<f64> = (0..counts[rank]).map(|i| (rank * 100 + i) as f64).collect();
    let root = size - 1;
    let mut recv = vec![0.0; counts.iter().sum()];
    let is_root = rank == root;
    comm.gather_varcount_into(&mine, is_root.then_some(&mut recv[..]), &counts, root);
    if is_root {
        let expected: Vec<f64> = (0..size)
            .flat_map(|q| (0..counts[q]).map(move |i| (q * 100 + i) as f64))
            .collect();
        assert_eq!(recv, expected);
    }
}

pub fn broadcast_from_every_root(comm: &Communicator) {
    for root in 0..comm.size() {
        let mut buf: Vec<u64> = (0..7).map(|i| (comm.rank() * 1000 + i) as u64).collect();
        comm.broadcast_into(&mut buf, root);
        let expected: Vec<u64> = (0..7).map(|i| (root * 1000 + i) as u64).collect();
        assert_eq!(buf, expected);
    }
}

pub fn ring_send_receive(comm: &Communicator) {
    let (rank, size) = (comm.rank(), comm.size());
    let right = (rank + 1) % size;
    let left = (rank + size - 1) % size;
    let send: Vec<f32> = (0..1000).map(|i| (rank * 1000 + i) as f32).collect();
    let mut recv = vec![0f32; 1000];
    comm.send_receive_into(&send, right, &mut recv, left);
    let expected: Vec<f32> = (0..1000).map(|i| (left * 1000 + i) as f32).collect();
    assert_eq!(recv, expected);
}

pub fn exchange_with_both_neighbours(comm: &Communicator) {
    let (rank, size) = (comm.rank(), comm.size());
    let mut sends: Vec<(usize, Vec<f64>)> = Vec::new();
    if rank > 0 {
        sends.push((rank - 1, vec![rank as f64; 3]));
    }
    if rank + 1 < size {
        sends.push((rank + 1, vec![rank as f64 + 0.5; 4]));
    }
    let mut from_left = vec![0.0; 4];
    let mut from_right = vec![0.0; 3];
    {
        let sends: Vec<(usize, &[f64])> = sends.iter().map(|(d, b)| (*d, &b[..])).collect();
        let mut recvs: Vec<(usize, &mut [f64])> = Vec::new();
        if rank > 0 {
            recvs.push((rank - 1, &mut from_left[..]));
        }
        if rank + 1 < size {
            recvs.push((rank + 1, &mut from_right[..]));
        }
        comm.exchange(&sends, &mut recvs);
    }
    if rank > 0 {
        assert_eq!(from_left, vec![rank as f64 - 0.5; 4]);
    }
    if rank + 1 < size {
        assert_eq!(from_right, vec![rank as f64 + 1.0; 3]);
    }
}

pub fn all_to_all_varcount(comm: &Communicator) {
    let (rank, size) = (comm.rank(), comm.size());
    // Rank r sends (r + q) % 3 values to rank q, each value encoding (r, q, i).
    let n = |r: usize, q: usize| (r + q) % 3;
    let send_counts: Vec<usize> = (0..size).map(|q| n(rank, q)).collect();
    let send: Vec<usize> = (0..size)
        .flat_map(|q| (0..n(rank, q)).map(move |i| rank * 10000 + q * 100 + i))
        .collect();
    let recv_counts: Vec<usize> = (0..size).map(|p| n(p, rank)).collect();
    let mut recv = vec![0usize; recv_counts.iter().sum()];
    comm.all_to_all_varcount_into(&send, &send_counts, &mut recv, &recv_counts);
    let expected: Vec<usize> = (0..size)
        .flat_map(|p| (0..n(p, rank)).map(move |i| p * 10000 + rank * 100 + i))
        .collect();
    assert_eq!(recv, expected);
}

pub fn split_by_colour(comm: &Communicator) {
    let (rank, size) = (comm.rank(), comm.size());
    let colour = rank % 2;
    let sub = comm.split(colour).expect("valid colour");
    let members: Vec<usize> = (0..size).filter(|q| q % 2 == colour).collect();
    assert_eq!(sub.size(), members.len());
    assert_eq!(sub.rank(), members.iter().position(|&q| q == rank).unwrap());
    let s = sub.all_reduce(rank, ReduceOp::Sum);
    assert_eq!(s, members.iter().sum::<usize>());
    // A split of a split, and the parent still works afterwards.
    let subsub = sub.split(0).expect("valid colour");
    assert_eq!(subsub.size(), sub.size());
    assert_eq!(comm.all_reduce(1usize, ReduceOp::Sum), size);
}

pub fn barrier_and_agree(comm: &Communicator) {
    comm.barrier();
    assert!(comm.agree(Ok(())).is_ok());
    let last = comm.size() - 1;
    let local = if comm.rank() == last {
        Err(distlops::core::Error::InvalidArgument(
            "only the last rank fails".into(),
        ))
    } else {
        Ok(())
    };
    let err = comm
        .agree(local)
        .expect_err("every rank must see the failure");
    if comm.rank() != last {
        match err {
            distlops::core::Error::FailedOnOtherRank { rank, message } => {
                assert_eq!(rank, last);
                assert!(message.contains("only the last rank fails"), "{message}");
            }
            other => panic!("unexpected error {other}"),
        }
    }
}

pub fn large_random_all_reduce(comm: &Communicator) {
    // A few hundred thousand values with a different seed per rank; the sum must be identical on
    // every rank (all-reduce results are bitwise equal everywhere).
    let n = 300_001;
    let mut rng = Rng::new(7 + comm.rank() as u64);
    let send: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
    let mut recv = vec![0.0; n];
    comm.all_reduce_into(&send, &mut recv, ReduceOp::Sum);
    let mut check = recv.clone();
    comm.broadcast_into(&mut check, 0);
    assert_eq!(check, recv, "all-reduce results differ between ranks");
    let mut expected = vec![0.0; n];
    for q in 0..comm.size() {
        let mut rng = Rng::new(7 + q as u64);
        for e in expected.iter_mut() {
            *e += rng.uniform();
        }
    }
    let err = recv
        .iter()
        .zip(&expected)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(err < 1e-12, "all-reduce error {err}");
}

pub fn exchange_overlapped_runs_work(comm: &Communicator) {
    let (rank, size) = (comm.rank(), comm.size());
    let right = (rank + 1) % size;
    let left = (rank + size - 1) % size;
    let send = [rank as f64; 5];
    let mut recv = vec![0.0; 5];
    let local: Vec<f64> = (0..1000).map(|i| i as f64).collect();
    let sum = comm.exchange_overlapped(&[(right, &send[..])], &mut [(left, &mut recv[..])], || {
        local.iter().sum::<f64>()
    });
    assert_eq!(sum, 499_500.0);
    assert_eq!(recv, vec![left as f64; 5]);
}
