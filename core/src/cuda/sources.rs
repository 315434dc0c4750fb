//! The kernel sources, compiled into the library: one home (`core/kernels/`), read here with
//! `include_str!` for NVRTC, and by the build script for the emulator.

/// The manifest's parser; the role codes are only for the emulator's generated registry.
#[allow(dead_code)]
mod manifest {
    include!("../../kernels/manifest.rs");
}
pub(crate) use manifest::{parse_manifest, KernelEntry};

/// The manifest of entry points (`kernels.txt`).
pub(crate) const MANIFEST: &str = include_str!("../../kernels/kernels.txt");

/// What every kernel file is compiled after.
pub(crate) const COMMON: &str = include_str!("../../kernels/common.cuh");

/// Every kernel file, by name.
pub(crate) const FILES: &[(&str, &str)] = &[
    (
        "elementwise.cu",
        include_str!("../../kernels/elementwise.cu"),
    ),
    ("reduce.cu", include_str!("../../kernels/reduce.cu")),
    ("band.cu", include_str!("../../kernels/band.cu")),
    ("stencil.cu", include_str!("../../kernels/stencil.cu")),
    ("kirchhoff.cu", include_str!("../../kernels/kirchhoff.cu")),
    ("peer.cu", include_str!("../../kernels/peer.cu")),
];

/// The entry points of the manifest.
pub(crate) fn entries() -> Vec<KernelEntry> {
    parse_manifest(MANIFEST).unwrap_or_else(|e| panic!("{e}"))
}

/// The text NVRTC compiles for one kernel file: the common prelude, then the file.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn program(file: &str) -> String {
    let (_, text) = FILES
        .iter()
        .find(|(name, _)| *name == file)
        .unwrap_or_else(|| panic!("{file} is in kernels.txt but not in FILES"));
    format!("{COMMON}\n{text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_and_the_compiled_in_files_agree() {
        let entries = entries();
        for (file, _) in FILES {
            assert!(
                entries.iter().any(|e| e.file == *file),
                "{file} defines no manifest entry"
            );
        }
        for e in &entries {
            assert!(
                FILES.iter().any(|(f, _)| *f == e.file),
                "{} is not compiled in",
                e.file
            );
            let text = program(&e.file);
            let base = e.name.rsplit_once('_').expect("<base>_<suffix>").0;
            assert!(text.contains(base), "{} does not mention {base}", e.file);
        }
    }

    /// Every kernel declares its pointers (so the emulated device checks every launch for
    /// overlapping ranges), and the engine's blocks fit every kernel's `block=`.
    #[test]
    fn every_kernel_declares_its_pointers_and_takes_the_engine_blocks() {
        for e in entries() {
            assert!(
                e.ptrs.is_some(),
                "kernels.txt: {} does not declare its pointer parameters (ptrs=NAME:ROLE,...; \
                 see core/kernels/manifest.rs), so its launches are not checked for overlaps",
                e.name
            );
            let block = if e.sync {
                super::super::SYNC_BLOCK
            } else {
                super::super::BLOCK
            };
            assert!(
                block <= e.max_block,
                "the engine launches {} with {block} threads per block, kernels.txt declares \
                 block={}",
                e.name,
                e.max_block
            );
        }
    }
}
