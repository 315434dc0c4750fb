//! The test suite under real MPI: this binary relaunches itself with `mpirun -n NP` for each NP in
//! `MPI_TEST_NP` (default 1,2,3,4). In the child every rank runs every selected test in the same
//! order; a panic on any rank aborts the job (so the run fails at once, never hangs) and a job
//! that exceeds `MPI_TEST_TIMEOUT` seconds (default 600) is killed.

mod common;
mod suite;

use std::time::{Duration, Instant};

fn child(np: usize) -> ! {
    let args = common::Args::parse();
    let env = distlops::core::mpi::initialize().expect("MPI initialisation");
    let world = env.world();
    assert_eq!(
        world.size(),
        np,
        "launched for {np} ranks but MPI reports {} (a launcher from another MPI?)",
        world.size()
    );
    let rank = world.rank();
    let mut count = 0;
    for (name, f) in suite::TESTS.iter().filter(|(n, _)| args.selects(n)) {
        let t = Instant::now();
        f(&world);
        world.barrier();
        if rank == 0 {
            println!("test {name} [mpi np={np}] ... ok ({:.2}s)", t.elapsed().as_secs_f64());
        }
        count += 1;
    }
    if rank == 0 {
        println!("{count} tests passed at np={np}");
    }
    drop(world);
    drop(env);
    std::process::exit(0);
}

fn main() {
    if let Ok(np) = std::env::var("MPI_TEST_CHILD") {
        child(np.parse().expect("MPI_TEST_CHILD is a rank count"));
    }
    let args = common::Args::parse();
    if args.list {
        common::list(suite::TESTS, &args);
        return;
    }
    let start = Instant::now();
    let selected = suite::TESTS.iter().filter(|(n, _)| args.selects(n)).count();
    let nps = common::rank_counts("MPI_TEST_NP", "1,2,3,4");
    let timeout = Duration::from_secs(
        std::env::var("MPI_TEST_TIMEOUT")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(600),
    );
    let mpiexec = std::env::var("MPIEXEC").unwrap_or_else(|_| "mpirun".to_string());
    let exe = std::env::current_exe().expect("path of this test binary");
    println!("\nrunning {selected} tests under {mpiexec} at np = {nps:?}");
    let (mut passed, mut failed) = (0, 0);
    for np in nps {
        let mut cmd = std::process::Command::new(&mpiexec);
        cmd.args(["--oversubscribe", "-n", &np.to_string()])
            .arg(&exe)
            .args(std::env::args().skip(1))
            .env("MPI_TEST_CHILD", np.to_string())
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
        if common::run_with_timeout(cmd, timeout) {
            passed += selected;
        } else {
            println!("mpirun -n {np}: FAILED");
            failed += 1;
        }
    }
    common::summary(passed, failed, suite::TESTS.len() - selected, start)
}
