//! Loads NVRTC, NCCL and NVSHMEM (from the wheels `scripts/gpu-libs.sh` fetches, via
//! `DISTLOPS_GPU_LIBS` / `LD_LIBRARY_PATH`), which resolves every name in each module's `SYMBOLS`
//! with `dlsym`, and prints the versions the libraries report (none of these calls needs a GPU).
//! Absent libraries skip, unless `DISTLOPS_REQUIRE_GPU_LIBS=1`.

mod common;

use std::collections::HashSet;

use common::{loaded_or_skip, say};
use distlops_gpu_sys::{nccl, nvrtc, nvshmem};

fn assert_distinct(symbols: &[&str]) {
    let mut seen = HashSet::new();
    for s in symbols {
        assert!(seen.insert(s), "`{s}` is bound twice");
    }
}

#[test]
fn nvrtc_symbols_and_version() {
    assert_distinct(nvrtc::SYMBOLS);
    assert_eq!(nvrtc::SYMBOLS.len(), 9);
    let Some(lib) = loaded_or_skip("NVRTC", nvrtc::Nvrtc::load()) else {
        return;
    };
    let (major, minor) = lib.version().expect("nvrtcVersion");
    say(&format!(
        "NVRTC {major}.{minor} from {} ({} symbols resolved)",
        lib.path(),
        nvrtc::SYMBOLS.len()
    ));
    assert!(major >= 12, "NVRTC {major}.{minor} is older than CUDA 12");
    assert_eq!(
        lib.error_string(nvrtc::nvrtcResult::NVRTC_ERROR_COMPILATION),
        "NVRTC_ERROR_COMPILATION"
    );
}

#[test]
fn nccl_symbols_and_version() {
    assert_distinct(nccl::SYMBOLS);
    assert_eq!(nccl::SYMBOLS.len(), 18);
    let Some(lib) = loaded_or_skip("NCCL", nccl::Nccl::load()) else {
        return;
    };
    let code = lib.version().expect("ncclGetVersion");
    let (major, minor, patch) = nccl::version_triple(code);
    say(&format!(
        "NCCL {major}.{minor}.{patch} (ncclGetVersion = {code}) from {} ({} symbols resolved)",
        lib.path(),
        nccl::SYMBOLS.len()
    ));
    assert_eq!(major, 2);
    assert_eq!(
        lib.error_string(nccl::ncclResult_t::ncclInvalidArgument),
        "invalid argument (run with NCCL_DEBUG=WARN for details)"
    );
}

#[test]
fn nvshmem_symbols_and_version() {
    assert_distinct(nvshmem::SYMBOLS);
    assert_eq!(nvshmem::SYMBOLS.len(), 18);
    // Header-inline in NVSHMEM 3.x, not exported: binding them would make every load fail.
    for inline in ["nvshmem_init", "nvshmemx_init_attr", "nvshmem_finalize"] {
        assert!(
            !nvshmem::SYMBOLS.contains(&inline),
            "{inline} is not exported"
        );
    }
    let Some(lib) = loaded_or_skip("NVSHMEM", nvshmem::Nvshmem::load()) else {
        return;
    };
    let (major, minor, patch) = lib.version();
    say(&format!(
        "NVSHMEM {major}.{minor}.{patch} from {} ({} symbols resolved)",
        lib.path(),
        nvshmem::SYMBOLS.len()
    ));
    assert_eq!(major, 3);
    assert_eq!(lib.init_status(), nvshmem::init_status::NOT_INITIALIZED);
}
