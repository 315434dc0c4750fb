//! What the gpu-sys tests share: the skip-or-fail rule for absent libraries.

use std::io::Write;

use distlops_gpu_sys::LoadError;

/// Whether `DISTLOPS_REQUIRE_GPU_LIBS=1`: then an absent library fails the test instead of
/// skipping it.
pub fn required() -> bool {
    std::env::var("DISTLOPS_REQUIRE_GPU_LIBS").is_ok_and(|v| v == "1")
}

/// Writes a line past libtest's output capture, so it shows in a plain `cargo test`.
pub fn say(line: &str) {
    // One write, so parallel tests' lines do not interleave mid-line.
    let _ = std::io::stderr().write_all(format!("{line}\n").as_bytes());
}

/// The loaded library, or `None` after printing the skip line when it is absent and not
/// required. Panics for a library that is required, or found but unusable (a missing symbol).
pub fn loaded_or_skip<T>(name: &str, loaded: Result<T, LoadError>) -> Option<T> {
    match loaded {
        Ok(lib) => Some(lib),
        Err(e) if e.is_not_found() && !required() => {
            say(&format!(
                "skipped: {name} not found (run scripts/gpu-libs.sh)"
            ));
            None
        }
        Err(e) => panic!("{e}"),
    }
}
