//! The fault suite (issue 13): mistakes that only one rank can see, or that ranks make
//! differently, must end in an error on every rank, or in an abort of the job with the culprit
//! rank's message, within seconds. None may hang, and none may compute a wrong answer. This file
//! is the evidence for the README's reliability promises.
//!
//! Every case runs at 2, 3, 4 and 5 ranks (`FAULTS_NP`), on the Threads communicator (each run
//! in its own `Threads::try_run` under a watchdog) and, built with feature `mpi`, under `mpirun`
//! (`FAULTS_MPI_NP`): the cases that check themselves in one job per rank count, each in order
//! under `distlops::run` with a watchdog thread that aborts the job when a case does not
//! finish, and each abort case in a job of its own whose exit status, duration and standard
//! error the parent checks. A case that takes longer than `FAULTS_TIMEOUT` seconds (default 20)
//! fails, and a case that fails at one rank count is not run at the larger ones. The culprit is
//! rank 0, rank 1 or the last rank, most often not rank 0; sizes do not divide evenly by the
//! rank count. Test names are `threads::<case>` and `mpi::<case>`.
//!
//! Kinds: *every rank errs*: the case checks on each rank that the faulty call returned `Err`
//! (the culprit its own error, the others `FailedOnOtherRank` naming it, or, where the ranks
//! disagree, `LayoutMismatch`) and that a collective still completes afterwards; an `Ok` is a
//! silent wrong answer and fails the case. *Agreed*: the call succeeds with every replica equal
//! to rank 0's (or fails on every rank). *Abort*: the culprit's error leaves the program with
//! `?`; `Threads::try_run` must return it, and `distlops::run` (on thread ranks in a child
//! process, and under `mpirun`) must end the run non-zero with the culprit's own line
//! `distlops: rank <culprit> of <P> failed: <message>` first on standard error. *Panics*: a call that cannot return an
//! error panics (the run ends: `Threads::try_run` propagates it, the MPI job aborts) with the
//! reason. `FAULTS_SHOW=1` prints every rank's error.
//!
//! Classes (one file each in `tests/faults/`):
//!
//! * One rank's mistake (`one_rank.rs`): a block of the wrong shape; a wrong vector or output
//!   handed to FirstDerivative (forward, adjoint), BlockDiag, VStack's adjoint, Gradient's
//!   adjoint (a bad part of a stack); wrong data or starting model for CGLS and CG; an axis out
//!   of range for `norm_axis` and `redistribute`; a bad part of a stacked vector in `dot`; a
//!   gather root that is not a rank. Aborts: a user's operator that fails in its forward or
//!   adjoint product inside CGLS, the user's own code failing before a reduction, and
//!   FirstDerivative built along an axis from rank-local input that is out of range.
//! * Layouts that differ between ranks (`layouts_differ.rs`): counts, axis, partition or global
//!   shape in `dot`, `vdot`, `norm`, `x + x` then `dot`, `norm_axis`, `gather`, `redistribute`,
//!   `reshape`, ghost cells, `redistribute_to` a target that differs, `from_local_with_layout`;
//!   ghost widths that differ; FirstDerivative for another shape or along another axis;
//!   `asarray` and `norm2` (no `Result`) panic.
//! * Stale messages (`stale_messages.rs`): gathers with roots that differ, failed
//!   redistributions, gathers and ghost exchanges, each followed by a correct redistribution,
//!   derivative, gather, ghost exchange or all-gather whose values are checked exactly.
//! * Replicas (`replicas.rs`): `assign` and `assign_slice` with values that differ take rank
//!   0's value everywhere; a slice index that differs fails everywhere or leaves equal
//!   replicas; replicas that drifted apart are an error naming replicas in CGLS (`x0`), CG
//!   (data), VStack's forward and HStack's adjoint product; node-shared copies that differ
//!   between nodes are refused by `MatrixMult::from_node_shared` (equal ones are accepted).
//! * Messages (`messages.rs`): a space error names the operator and the call, an axis error
//!   names the call, CGLS says "NaN" for a NaN and "overflow" or "infinite" for finite data that
//!   overflows, and a message longer than 255 bytes reaches the other ranks whole.
//! * Solver parameters that differ (`solver_params.rs`): another CG/CGLS variant, `niter`,
//!   `tol` or `damp`, LSQR's `niter` and `conlim`, ISTA's `eps` and thresholding, FISTA's
//!   `decay` and `eigs`, the power iteration's seed: `InvalidArgument` naming the parameter on
//!   every rank; a NaN `tol` or zero `niter` on one rank is that rank's error.
//! * Constructors (`constructors.rs`): a layout for another number of ranks in
//!   `from_local_with_layout` and `to_dist`, other counts in `to_dist`, other mask colours,
//!   VStack blocks with other column counts, a node-shared array of another shape or a root
//!   without data: an error on every rank at construction.
//! * Masks (`masks.rs`): a masked CGLS whose groups stop at different steps gives each group's
//!   answer bitwise; reductions that one group makes and the other does not.
//! * Element types (`element_types.rs`): an `f32` or complex array or operator on one rank,
//!   `f64` on the others, in `dot`, `norm`, CGLS and `apply`: a mismatch naming the types;
//!   `norm2` panics.
//! * The entry point (`entry.rs`): every abort case also runs through `distlops::run` in a child
//!   process on thread ranks (and under `mpirun` in `mpi.rs`), which must print one whole
//!   Display line per failing rank, the culprit's first; an error left with `?` on every rank;
//!   a build without `mpi` under an MPI launcher refuses to run.
//!
//! Results across rank counts and size edge cases are covered by the shared suite
//! (`tests/suite/repro.rs`, `tests/suite/errors.rs::size_edge_cases`).

mod common;

#[path = "suite/check.rs"]
mod check;
#[path = "faults/constructors.rs"]
mod constructors;
#[path = "faults/element_types.rs"]
mod element_types;
#[path = "faults/entry.rs"]
mod entry;
#[path = "faults/fixtures.rs"]
mod fixtures;
#[path = "faults/layouts_differ.rs"]
mod layouts_differ;
#[path = "faults/masks.rs"]
mod masks;
#[path = "faults/messages.rs"]
mod messages;
#[cfg(feature = "mpi")]
#[path = "faults/mpi.rs"]
mod mpi;
#[path = "faults/one_rank.rs"]
mod one_rank;
#[path = "faults/replicas.rs"]
mod replicas;
#[path = "faults/solver_params.rs"]
mod solver_params;
#[path = "faults/stale_messages.rs"]
mod stale_messages;
#[path = "suite/util.rs"]
mod util;

use distlops::core::{Communicator, Threads};
use fixtures::{flaky_fragment, Outcome};
use std::time::{Duration, Instant};

/// The rank that makes a case's mistake.
#[derive(Debug, Clone, Copy)]
pub enum Who {
    /// Rank 0.
    Zero,
    /// Rank 1.
    One,
    /// The last rank.
    Last,
}

impl Who {
    /// The rank at `nranks` ranks.
    pub fn rank(self, nranks: usize) -> usize {
        match self {
            Who::Zero => 0,
            Who::One => 1,
            Who::Last => nranks - 1,
        }
    }
}

/// How a case must end.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// The body checks on every rank that the faulty call failed as it should, and returns `Ok`.
    EveryRankErr,
    /// The body checks that every rank ends in the same, correct state, and returns `Ok`.
    Agreed,
    /// The culprit's error, which mentions `fragment`, leaves the body with `?`.
    Abort {
        /// What the culprit's message says.
        fragment: &'static str,
    },
    /// A call that cannot return an error panics with a message that mentions `fragment`.
    Panics {
        /// What the panic says.
        fragment: &'static str,
    },
}

impl Kind {
    /// Whether the case ends the run (an abort or a panic), so that under MPI it needs a job of
    /// its own.
    pub fn ends_the_run(self) -> bool {
        matches!(self, Kind::Abort { .. } | Kind::Panics { .. })
    }
}

/// One fault case.
pub struct Case {
    /// `file::what`.
    pub name: &'static str,
    /// The rank that makes the mistake.
    pub who: Who,
    /// How the case must end.
    pub kind: Kind,
    /// The body, run on every rank with the culprit's rank.
    pub body: fn(&Communicator, usize) -> Outcome,
}

/// `case!(class::body, Who, Kind)`, `case!(class::body, Who, abort "fragment")` or
/// `case!(class::body, Who, panics "fragment")`.
macro_rules! case {
    ($class:ident::$name:ident, $who:ident, abort $fragment:expr) => {
        case!(
            $class::$name,
            $who,
            Kind::Abort {
                fragment: $fragment
            }
        )
    };
    ($class:ident::$name:ident, $who:ident, panics $fragment:expr) => {
        case!(
            $class::$name,
            $who,
            Kind::Panics {
                fragment: $fragment
            }
        )
    };
    ($class:ident::$name:ident, $who:ident, $kind:expr) => {
        Case {
            name: concat!(stringify!($class), "::", stringify!($name)),
            who: Who::$who,
            kind: $kind,
            body: $class::$name,
        }
    };
}

use Kind::{Agreed, EveryRankErr};

/// Every case, in the order they run.
pub const CASES: &[Case] = &[
    case!(one_rank::wrong_local_block, Last, EveryRankErr),
    case!(
        one_rank::wrong_vector_to_derivative_apply,
        One,
        EveryRankErr
    ),
    case!(
        one_rank::wrong_output_to_derivative_rmatvec,
        Last,
        EveryRankErr
    ),
    case!(
        one_rank::wrong_output_to_blockdiag_matvec,
        Last,
        EveryRankErr
    ),
    case!(one_rank::wrong_vector_to_vstack_adjoint, Zero, EveryRankErr),
    case!(one_rank::wrong_data_to_cgls, One, EveryRankErr),
    case!(one_rank::wrong_x0_to_cgls, Zero, EveryRankErr),
    case!(one_rank::wrong_data_to_cg, Last, EveryRankErr),
    case!(one_rank::norm_axis_out_of_range, Last, EveryRankErr),
    case!(one_rank::redistribute_axis_out_of_range, One, EveryRankErr),
    case!(one_rank::bad_part_of_stacked_vector, Last, EveryRankErr),
    case!(one_rank::bad_part_into_gradient_adjoint, Zero, EveryRankErr),
    case!(one_rank::gather_root_not_a_rank, Last, EveryRankErr),
    case!(one_rank::dot_of_array_and_stack, One, EveryRankErr),
    case!(one_rank::from_local_shapes_axis_differs, Last, EveryRankErr),
    case!(one_rank::wrong_vector_to_halo_gather, Zero, EveryRankErr),
    case!(layouts_differ::dot_counts_differ, Last, EveryRankErr),
    case!(layouts_differ::vdot_axis_differs, One, EveryRankErr),
    case!(
        layouts_differ::norm_global_shape_differs,
        Zero,
        EveryRankErr
    ),
    case!(
        layouts_differ::add_then_dot_partition_differs,
        Last,
        EveryRankErr
    ),
    case!(layouts_differ::norm_axis_counts_differ, One, EveryRankErr),
    case!(layouts_differ::gather_counts_differ, Last, EveryRankErr),
    case!(
        layouts_differ::redistribute_counts_differ,
        One,
        EveryRankErr
    ),
    case!(layouts_differ::reshape_axis_differs, Zero, EveryRankErr),
    case!(layouts_differ::ghost_layout_differs, Last, EveryRankErr),
    case!(
        layouts_differ::redistribute_target_differs,
        Zero,
        EveryRankErr
    ),
    case!(
        layouts_differ::from_local_with_layout_differs,
        One,
        EveryRankErr
    ),
    case!(layouts_differ::ghost_widths_differ, One, EveryRankErr),
    case!(layouts_differ::derivative_shape_differs, Last, EveryRankErr),
    case!(layouts_differ::derivative_axis_differs, One, EveryRankErr),
    case!(layouts_differ::asarray_counts_differ, Last, panics "layout mismatch: asarray"),
    case!(layouts_differ::norm2_axis_differs, One, panics "layout mismatch: norm2"),
    case!(
        layouts_differ::stacked_asarray_parts_differ,
        Last,
        panics "layout mismatch: stacked asarray"
    ),
    case!(
        stale_messages::gather_root_differs_then_redistribute,
        Last,
        EveryRankErr
    ),
    case!(
        stale_messages::gather_root_differs_then_derivative,
        Zero,
        EveryRankErr
    ),
    case!(
        stale_messages::failed_redistribute_then_redistribute,
        One,
        EveryRankErr
    ),
    case!(
        stale_messages::failed_gather_then_gather,
        Zero,
        EveryRankErr
    ),
    case!(
        stale_messages::failed_ghosts_then_ghosts,
        Last,
        EveryRankErr
    ),
    case!(
        stale_messages::failed_gather_then_asarray,
        One,
        EveryRankErr
    ),
    case!(replicas::assign_slice_values_differ, One, Agreed),
    case!(replicas::assign_values_differ, Zero, Agreed),
    case!(replicas::assign_slice_index_differs, Last, Agreed),
    case!(replicas::cgls_broadcast_x0_differs, One, EveryRankErr),
    case!(replicas::cg_broadcast_data_differs, Zero, EveryRankErr),
    case!(replicas::apply_broadcast_input_differs, Last, EveryRankErr),
    case!(replicas::adjoint_broadcast_input_differs, One, EveryRankErr),
    case!(
        messages::space_error_names_operator_and_call,
        One,
        EveryRankErr
    ),
    case!(messages::axis_error_names_call, Zero, EveryRankErr),
    case!(messages::cgls_nan_and_overflow, One, EveryRankErr),
    case!(messages::relayed_message_is_whole, Last, EveryRankErr),
    case!(replicas::node_shared_copies_differ, One, EveryRankErr),
    case!(replicas::node_shared_copies_equal, Zero, Agreed),
    case!(solver_params::cgls_variant_differs, One, EveryRankErr),
    case!(solver_params::cgls_niter_differs, Last, EveryRankErr),
    case!(solver_params::cgls_tol_differs, Zero, EveryRankErr),
    case!(solver_params::cgls_damp_differs, Last, EveryRankErr),
    case!(solver_params::cgls_tol_nan_on_one_rank, One, EveryRankErr),
    case!(solver_params::cg_variant_differs, Last, EveryRankErr),
    case!(solver_params::cg_tol_differs, One, EveryRankErr),
    case!(
        solver_params::lsqr_niter_and_conlim_differ,
        Zero,
        EveryRankErr
    ),
    case!(
        solver_params::ista_eps_and_threshold_differ,
        Last,
        EveryRankErr
    ),
    case!(
        solver_params::fista_decay_and_eigs_differ,
        One,
        EveryRankErr
    ),
    case!(
        solver_params::power_iteration_seed_differs,
        Last,
        EveryRankErr
    ),
    case!(
        solver_params::power_iteration_niter_zero_on_one_rank,
        One,
        EveryRankErr
    ),
    case!(
        constructors::from_local_with_layout_for_other_size,
        Last,
        EveryRankErr
    ),
    case!(
        constructors::to_dist_layout_for_other_size,
        One,
        EveryRankErr
    ),
    case!(constructors::to_dist_layouts_differ, Zero, EveryRankErr),
    case!(constructors::block_diag_mask_differs, Last, EveryRankErr),
    case!(constructors::vstack_ncols_differ, One, EveryRankErr),
    case!(constructors::node_shared_shape_differs, Last, EveryRankErr),
    case!(
        constructors::node_shared_root_without_data,
        One,
        EveryRankErr
    ),
    case!(masks::masked_cgls_groups_stop_apart, Zero, Agreed),
    case!(masks::masked_reductions_in_one_group_only, Zero, Agreed),
    case!(element_types::dot_f32_on_one_rank, Last, EveryRankErr),
    case!(element_types::norm_f32_on_one_rank, One, EveryRankErr),
    case!(element_types::cgls_f32_on_one_rank, Zero, EveryRankErr),
    case!(element_types::apply_complex_on_one_rank, Last, EveryRankErr),
    case!(
        element_types::norm2_f32_on_one_rank,
        One,
        panics "layout mismatch: norm2"
    ),
    case!(one_rank::user_op_err_in_cgls, Last, abort flaky_fragment!()),
    case!(one_rank::user_op_adjoint_err_in_cgls, Zero, abort flaky_fragment!()),
    case!(one_rank::user_closure_err_before_collective, One, abort "cannot read model.npy"),
    case!(one_rank::derivative_axis_out_of_range, Last, abort "out of range"),
    case!(
        entry::agreed_error_left_with_question_mark,
        One,
        abort "layout mismatch"
    ),
];

/// The longest a case may take, from `FAULTS_TIMEOUT` (seconds, default 20).
pub fn case_timeout() -> Duration {
    Duration::from_secs(
        std::env::var("FAULTS_TIMEOUT")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(20),
    )
}

/// Whether an abort case's error, returned by rank `rank` with message `message`, is the
/// culprit's: its own, or relayed by another rank that names it.
pub fn is_culprits(rank: usize, message: &str, culprit: usize, fragment: &str) -> bool {
    message.contains(fragment) && (rank == culprit || message.contains(&format!("rank {culprit}")))
}

/// The text of a panic payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic without a message".into())
}

/// What one Threads run of a case ended with: every rank's `Ok`, a rank's `Err` (with its rank
/// and message), or a panic's message.
type ThreadsEnd = Result<Result<Vec<()>, (usize, String)>, String>;

/// Runs `case` once at `nranks` thread ranks, on a thread of its own, and judges how it ended.
/// A case that does not end within the timeout fails; its threads are left behind.
fn threads_once(case: &'static Case, nranks: usize, timeout: Duration) -> Result<(), String> {
    let culprit = case.who.rank(nranks);
    let (tx, rx) = std::sync::mpsc::channel::<ThreadsEnd>();
    std::thread::Builder::new()
        .name(format!("faults-{}", case.name))
        .spawn(move || {
            let end = std::panic::catch_unwind(|| {
                Threads::try_run(nranks, |comm| {
                    (case.body)(&comm, culprit).map_err(|e| (comm.rank(), e.to_string()))
                })
            });
            let _ = tx.send(end.map_err(|p| panic_text(p.as_ref())));
        })
        .expect("spawning a case thread");
    let end = rx
        .recv_timeout(timeout)
        .map_err(|_| format!("timed out after {} s", timeout.as_secs()))?;
    match (case.kind, end) {
        (Kind::Panics { fragment }, Err(panic)) if panic.contains(fragment) => Ok(()),
        (Kind::Panics { .. }, Ok(_)) => Err("no rank panicked".into()),
        (_, Err(panic)) => Err(format!("panicked: {panic}")),
        (Kind::Abort { fragment }, Ok(Err((rank, message)))) => {
            if is_culprits(rank, &message, culprit, fragment) {
                Ok(())
            } else {
                Err(format!(
                    "rank {rank} returned an error that is not rank {culprit}'s: {message}"
                ))
            }
        }
        (Kind::Abort { .. }, Ok(Ok(_))) => Err(format!(
            "every rank returned Ok: rank {culprit}'s error was lost"
        )),
        (_, Ok(Err((rank, message)))) => Err(format!("rank {rank} returned Err: {message}")),
        (_, Ok(Ok(_))) => Ok(()),
    }
}

/// Runs the selected cases on the Threads communicator; returns (passed, failed).
fn run_threads(args: &common::Args) -> (usize, usize) {
    let nps = common::rank_counts("FAULTS_NP", "2,3,4,5");
    let timeout = case_timeout();
    let (mut passed, mut failed) = (0, 0);
    for case in CASES {
        let name = format!("threads::{}", case.name);
        if !args.selects(&name) {
            continue;
        }
        let t = Instant::now();
        let failure = nps.iter().find_map(|&np| {
            threads_once(case, np, timeout)
                .and_then(|()| entry::threads_run(case, np, timeout))
                .err()
                .map(|why| format!("at {np} ranks: {why}"))
        });
        match failure {
            None => {
                passed += 1;
                println!("test {name} ... ok ({:.2}s)", t.elapsed().as_secs_f64());
            }
            Some(why) => {
                failed += 1;
                println!("test {name} ... FAILED {why}");
            }
        }
    }
    #[cfg(not(feature = "mpi"))]
    if args.selects(LAUNCHER_TEST) {
        match entry::launcher_without_mpi(timeout) {
            Ok(()) => {
                passed += 1;
                println!("test {LAUNCHER_TEST} ... ok");
            }
            Err(why) => {
                failed += 1;
                println!("test {LAUNCHER_TEST} ... FAILED {why}");
            }
        }
    }
    (passed, failed)
}

/// The test of a build without feature `mpi` started by an MPI launcher.
#[cfg(not(feature = "mpi"))]
const LAUNCHER_TEST: &str = "threads::entry::launcher_without_mpi";

/// The names of every test this binary holds.
fn test_names() -> Vec<String> {
    let modes: &[&str] = if cfg!(feature = "mpi") {
        &["threads", "mpi"]
    } else {
        &["threads"]
    };
    #[allow(unused_mut)]
    let mut names: Vec<String> = modes
        .iter()
        .flat_map(|m| CASES.iter().map(move |c| format!("{m}::{}", c.name)))
        .collect();
    #[cfg(not(feature = "mpi"))]
    names.push(LAUNCHER_TEST.into());
    names
}

fn main() -> std::process::ExitCode {
    #[cfg(feature = "mpi")]
    if std::env::var_os("MPI_TEST_CHILD").is_some() {
        return mpi::child();
    }
    if let Ok(name) = std::env::var("FAULTS_ENTRY") {
        return entry::child(&name);
    }
    let args = common::Args::parse();
    let names = test_names();
    let selected = names.iter().filter(|n| args.selects(n)).count();
    if args.list {
        names
            .iter()
            .filter(|n| args.selects(n))
            .for_each(|n| println!("{n}: test"));
        return std::process::ExitCode::SUCCESS;
    }
    let start = Instant::now();
    println!("\nrunning {selected} fault cases");
    #[allow(unused_mut)]
    let (mut passed, mut failed) = run_threads(&args);
    #[cfg(feature = "mpi")]
    {
        let (p, f) = mpi::run(&args);
        passed += p;
        failed += f;
    }
    common::summary(passed, failed, names.len() - selected, start)
}
