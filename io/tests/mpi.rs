//! The shared I/O tests (`cases`) under real MPI: this binary relaunches itself with
//! `mpirun -n NP` for NP in `MPI_TEST_NP` (default 1,2,3,4; the launcher is `$MPIEXEC`, default
//! `mpirun`); in the child every rank runs every case in order in a folder the parent made. A
//! panic on any rank aborts the job, a job that takes more than 300 s is killed, and either
//! fails the test.

mod cases;

use std::process::Command;
use std::time::{Duration, Instant};

fn child(np: usize, dir: &std::path::Path) -> ! {
    let env = distlops_core::mpi::initialize().expect("MPI initialisation");
    let world = env.world();
    assert_eq!(world.size(), np, "launched for {np} ranks");
    for (name, case) in cases::CASES {
        let t = Instant::now();
        case(&world, dir);
        world.barrier();
        if world.rank() == 0 {
            println!(
                "test {name} [mpi np={np}] ... ok ({:.2}s)",
                t.elapsed().as_secs_f64()
            );
        }
    }
    drop(world);
    drop(env);
    std::process::exit(0);
}

fn main() {
    if let (Ok(np), Ok(dir)) = (
        std::env::var("DISTLOPS_IO_MPI_CHILD"),
        std::env::var("DISTLOPS_IO_TEST_DIR"),
    ) {
        child(np.parse().expect("a rank count"), dir.as_ref());
    }
    if std::env::args().any(|a| a == "--list") {
        println!("mpi: test");
        return;
    }
    let nps: Vec<usize> = std::env::var("MPI_TEST_NP")
        .unwrap_or_else(|_| "1,2,3,4".into())
        .split(',')
        .map(|s| s.trim().parse().expect("MPI_TEST_NP: rank counts"))
        .collect();
    let dir = cases::fresh_dir("mpi");
    let mpiexec = std::env::var("MPIEXEC").unwrap_or_else(|_| "mpirun".into());
    let exe = std::env::current_exe().expect("this binary");
    let mut failed = Vec::new();
    for &np in &nps {
        let mut job = Command::new(&mpiexec)
            .args(["--oversubscribe", "-n", &np.to_string()])
            .arg(&exe)
            .env("DISTLOPS_IO_MPI_CHILD", np.to_string())
            .env("DISTLOPS_IO_TEST_DIR", &dir)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .spawn()
            .expect("cannot start mpirun");
        let start = Instant::now();
        let ok = loop {
            if let Some(status) = job.try_wait().expect("waiting for mpirun") {
                break status.success();
            }
            if start.elapsed() > Duration::from_secs(300) {
                let _ = job.kill();
                let _ = job.wait();
                break false;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        if !ok {
            failed.push(np);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let n = cases::CASES.len();
    println!(
        "\ntest result: {}. {} passed; {} failed; 0 ignored; 0 measured; 0 filtered out",
        if failed.is_empty() { "ok" } else { "FAILED" },
        n * (nps.len() - failed.len()),
        n * failed.len()
    );
    if !failed.is_empty() {
        eprintln!("mpirun failed at np = {failed:?}");
        std::process::exit(1);
    }
}
