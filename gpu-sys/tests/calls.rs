//! The wrappers against the real libraries: calls that need no GPU, and the clean errors of those
//! that do (on a machine with a GPU the latter succeed, and the test then checks a one-rank
//! communicator / one-PE start-up instead). Absent libraries skip, unless
//! `DISTLOPS_REQUIRE_GPU_LIBS=1`.

mod common;

use common::{loaded_or_skip, say};
use distlops_gpu_sys::{nccl, nvshmem};

#[test]
fn nccl_unique_id_and_a_one_rank_communicator() {
    let Some(lib) = loaded_or_skip("NCCL", nccl::Nccl::load()) else {
        return;
    };
    let id = lib.get_unique_id().expect("ncclGetUniqueId");
    assert_ne!(id.to_bytes(), [0u8; 128], "an all-zero unique id");
    assert_eq!(nccl::ncclUniqueId::from_bytes(id.to_bytes()), id);

    lib.group_start().expect("ncclGroupStart");
    lib.group_end().expect("ncclGroupEnd");

    match lib.comm_init_rank(1, &id, 0) {
        Err(e) => {
            // No GPU: NCCL reports the CUDA failure as an error, with its own message.
            say(&format!("nccl: no GPU: {e}"));
            assert_eq!(e.library, "NCCL");
            assert_eq!(e.function, "ncclCommInitRank");
            assert_eq!(e.code, nccl::ncclResult_t::ncclUnhandledCudaError.0, "{e}");
            assert!(e.message.contains("unhandled cuda error"), "{e}");
        }
        Ok(comm) => {
            say("nccl: a GPU: checking a one-rank communicator");
            // SAFETY: `comm` was just created and is destroyed last.
            unsafe {
                assert_eq!(lib.comm_count(comm).expect("ncclCommCount"), 1);
                assert_eq!(lib.comm_user_rank(comm).expect("ncclCommUserRank"), 0);
                assert_eq!(
                    lib.comm_get_async_error(comm)
                        .expect("ncclCommGetAsyncError"),
                    nccl::ncclResult_t::ncclSuccess
                );
                lib.comm_finalize(comm).expect("ncclCommFinalize");
                lib.comm_destroy(comm).expect("ncclCommDestroy");
            }
        }
    }
}

#[test]
fn nvshmem_unique_id_start_up() {
    let Some(lib) = loaded_or_skip("NVSHMEM", nvshmem::Nvshmem::load()) else {
        return;
    };
    assert_eq!(lib.init_status(), nvshmem::init_status::NOT_INITIALIZED);
    let id = lib.get_uniqueid().expect("nvshmemx_get_uniqueid");
    assert_eq!(id.version, nvshmem::NVSHMEMX_UNIQUEID_VERSION);
    assert_eq!(nvshmem::nvshmemx_uniqueid_t::from_bytes(id.to_bytes()), id);

    let mut attr = nvshmem::nvshmemx_init_attr_t::default();
    lib.set_attr_uniqueid_args(0, 1, &id, &mut attr)
        .expect("nvshmemx_set_attr_uniqueid_args");
    assert_eq!(attr.args.uid_args.myrank, 0);
    assert_eq!(attr.args.uid_args.nranks, 1);
    assert_eq!(attr.args.uid_args.id.cast_const(), &id as *const _);

    // SAFETY: `attr` points at `id`, alive and unmoved for the call.
    match unsafe { lib.hostlib_init_attr(nvshmem::NVSHMEMX_INIT_WITH_UNIQUEID, &mut attr) } {
        Err(e) => {
            say(&format!("nvshmem: no GPU: {e}"));
            assert_eq!(e.library, "NVSHMEM");
            assert_eq!(e.function, "nvshmemx_hostlib_init_attr");
            assert_ne!(e.code, 0);
        }
        Ok(()) => {
            say("nvshmem: a GPU: checking a one-PE start-up");
            // SAFETY: NVSHMEM is running with one PE; the allocation is freed before finalize.
            unsafe {
                assert_eq!(lib.my_pe(), 0);
                assert_eq!(lib.n_pes(), 1);
                let p = lib.malloc(1 << 20).expect("nvshmem_malloc");
                assert_eq!(lib.ptr(p, 0), p, "nvshmem_ptr of one's own memory");
                lib.barrier_all();
                lib.quiet();
                lib.free(p);
                lib.hostlib_finalize();
            }
        }
    }
}
