//! Builds the emulated device (feature `emulator`): the kernel files of `kernels/`, unchanged,
//! compiled by the host C++ compiler after `emu/emu.h`, one translation unit per file, each with a
//! table that registers its entry points by name (from `kernels/kernels.txt`), plus the launcher
//! `emu/runtime.cpp`. Without the feature this does nothing.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "emulator")]
    emulator::build();
}

#[cfg(feature = "emulator")]
mod emulator {
    use std::fmt::Write as _;
    use std::path::{Path, PathBuf};

    include!("kernels/manifest.rs");

    /// Compiles the emulated device's C++ (see the file's docs).
    pub fn build() {
        let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
        let kernels = root.join("kernels");
        let emu = root.join("emu");
        let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
        for dir in [&kernels, &emu] {
            println!("cargo:rerun-if-changed={}", dir.display());
        }
        let manifest = std::fs::read_to_string(kernels.join("kernels.txt")).expect("kernels.txt");
        let entries = parse_manifest(&manifest).unwrap_or_else(|e| panic!("{e}"));
        let mut files: Vec<&str> = entries.iter().map(|e| e.file.as_str()).collect();
        files.dedup();

        let mut build = cc::Build::new();
        build
            .cpp(true)
            .std("c++20")
            .flag("-ffp-contract=off")
            .flag("-pthread")
            .flag_if_supported("-Wno-unused-parameter")
            .include(&emu)
            .include(&kernels)
            .file(emu.join("runtime.cpp"));
        let mut registry = String::from("#include \"emu.h\"\n");
        let mut tables = Vec::new();
        for file in &files {
            let stem = Path::new(file)
                .file_stem()
                .and_then(|s| s.to_str())
                .expect("a .cu file name");
            let table = format!("dl_emu_table_{stem}");
            let mut tu = format!(
            "#define DL_EMU_REGISTRY\n#include \"emu.h\"\n#include \"common.cuh\"\n#include \"{file}\"\n\
             extern \"C\" const dl_emu_kernel {table}[] = {{\n"
        );
            for e in entries.iter().filter(|e| e.file == *file) {
                writeln!(tu, "    DL_EMU_ENTRY({}, {}),", e.name, e.sync).expect("a string");
            }
            tu.push_str("    dl_emu_kernel{nullptr, false, nullptr},\n};\n");
            let path = out.join(format!("emu_{stem}.cpp"));
            std::fs::write(&path, tu).expect("write a generated file");
            build.file(&path);
            writeln!(registry, "extern \"C\" const dl_emu_kernel {table}[];").expect("a string");
            tables.push(table);
        }
        writeln!(
            registry,
            "extern \"C\" const dl_emu_kernel* const dl_emu_tables[] = {{{}, nullptr}};",
            tables.join(", ")
        )
        .expect("a string");
        let path = out.join("emu_registry.cpp");
        std::fs::write(&path, registry).expect("write a generated file");
        build.file(&path);
        build.compile("distlops_emu");
    }
}
