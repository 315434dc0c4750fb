//! Writes the emulator's registry sources for a kernel manifest into a directory, as core's build
//! script does: `gen_registry KERNELS_TXT OUT_DIR` prints the generated file names. Used by
//! `scripts/test-kernels.sh`, which compiles it with plain `rustc`.

#![allow(dead_code)]

include!("../kernels/manifest.rs");
include!("registry.rs");

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [manifest, out] = &args[..] else {
        eprintln!("usage: gen_registry KERNELS_TXT OUT_DIR");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(manifest).unwrap_or_else(|e| panic!("{manifest}: {e}"));
    let entries = parse_manifest(&text).unwrap_or_else(|e| {
        eprintln!("{manifest}: {e}");
        std::process::exit(1);
    });
    for (name, text) in registry_sources(&entries) {
        let path = std::path::Path::new(out).join(&name);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        println!("{}", path.display());
    }
}
