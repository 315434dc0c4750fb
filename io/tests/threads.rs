//! The shared I/O tests (`cases`) on the Threads communicator at 1, 2, 3 and 4 ranks.

mod cases;

use distlops_core::Threads;

/// Runs the case `name` at 1-4 ranks in a fresh folder.
fn run(name: &str) {
    let (_, case) = cases::CASES
        .iter()
        .find(|(n, _)| *n == name)
        .expect("a listed case");
    let dir = cases::fresh_dir(name);
    for np in 1..=4 {
        Threads::run(np, |comm| case(&comm, &dir));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn segy_reads_every_kind_of_cube() {
    run("segy_reads_every_kind_of_cube");
}

#[test]
fn segy_ranks_read_only_their_traces() {
    run("segy_ranks_read_only_their_traces");
}

#[test]
fn segy_round_trips_new_cubes() {
    run("segy_round_trips_new_cubes");
}

#[test]
fn segy_copy_keeps_every_header() {
    run("segy_copy_keeps_every_header");
}

#[test]
fn segy_errors_on_every_rank() {
    run("segy_errors_on_every_rank");
}

#[test]
fn npy_round_trips_and_reads_only_own_rows() {
    run("npy_round_trips_and_reads_only_own_rows");
}

#[test]
fn npy_errors_on_every_rank() {
    run("npy_errors_on_every_rank");
}

#[test]
fn every_case_has_a_test() {
    let source = include_str!("threads.rs");
    for (name, _) in cases::CASES {
        assert!(
            source.contains(&format!("fn {name}()")),
            "no #[test] for {name}"
        );
    }
}
