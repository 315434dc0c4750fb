// The emulator's registry, generated from the kernel manifest: one C++ translation unit per kernel
// file, which compiles the file after emu.h and registers its entry points with what kernels.txt
// declares about them, and one that lists the tables. `include!`d after `manifest.rs` by core's
// build script and by `gen_registry.rs` (the kernel test's copy), so both builds register the
// kernels the same way.

/// The generated sources: `(file name, text)` for each kernel file (`emu_<stem>.cpp`), then
/// `emu_registry.cpp`.
pub fn registry_sources(entries: &[KernelEntry]) -> Vec<(String, String)> {
    let mut files: Vec<&str> = Vec::new();
    for e in entries {
        if !files.contains(&e.file.as_str()) {
            files.push(&e.file);
        }
    }
    let mut out = Vec::new();
    let mut tables = Vec::new();
    for file in files {
        let stem = file.trim_end_matches(".cu").replace(|c: char| !c.is_ascii_alphanumeric(), "_");
        let table = format!("dl_emu_table_{stem}");
        // The anonymous namespace: see emu.h.
        let mut tu = format!(
            "#define DL_EMU_REGISTRY\n#include \"emu.h\"\nnamespace {{\n#include \"common.cuh\"\n\
             #include \"{file}\"\n}}  // namespace\nextern \"C\" const dl_emu_kernel {table}[] = {{\n"
        );
        for e in entries.iter().filter(|e| e.file == file) {
            let (codes, names) = match &e.ptrs {
                Some(ptrs) => (
                    format!("\"{}\"", ptrs.iter().map(|p| p.role.code()).collect::<String>()),
                    format!(
                        "\"{}\"",
                        ptrs.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(",")
                    ),
                ),
                None => ("nullptr".to_string(), "nullptr".to_string()),
            };
            tu.push_str(&format!(
                "    DL_EMU_ENTRY({}, {}, {}, {codes}, {names}, {}, {}),\n",
                e.name, e.sync, e.max_block, e.inplace, e.peer
            ));
        }
        tu.push_str("    dl_emu_kernel{nullptr, false, 0, nullptr, nullptr, false, false, nullptr},\n};\n");
        out.push((format!("emu_{stem}.cpp"), tu));
        tables.push(table);
    }
    let mut registry = String::from("#include \"emu.h\"\n");
    for t in &tables {
        registry.push_str(&format!("extern \"C\" const dl_emu_kernel {t}[];\n"));
    }
    registry.push_str(&format!(
        "extern \"C\" const dl_emu_kernel* const dl_emu_tables[] = {{{}, nullptr}};\n",
        tables.join(", ")
    ));
    out.push(("emu_registry.cpp".to_string(), registry));
    out
}
