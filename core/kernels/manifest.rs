// The kernel manifest (`kernels.txt`): which entry points each kernel file defines.
//
// One home for its format, `include!`d by core's build script (the emulator's registry), by core
// (launch counts, module loading) and by the NVRTC check. Each non-comment line is
//
//     <file.cu> <base name> <suffix>,<suffix>,... [sync]
//
// and stands for the entry points `<base>_<suffix>` of `<file.cu>`; `sync` marks kernels that
// synchronise threads of a block (`__syncthreads`, warp shuffles), which the emulator runs with one
// host thread per CUDA thread. `#` starts a comment.

/// One entry point of a kernel file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelEntry {
    /// The `.cu` file (relative to `core/kernels`).
    pub file: String,
    /// The entry point's name (`extern "C"`).
    pub name: String,
    /// Whether the kernel synchronises the threads of a block.
    pub sync: bool,
}

/// Parses the manifest text.
///
/// # Errors
/// A message naming the line for a malformed one.
pub fn parse_manifest(text: &str) -> Result<Vec<KernelEntry>, String> {
    let mut out = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let (file, base, suffixes, sync) = match words[..] {
            [f, b, s] => (f, b, s, false),
            [f, b, s, "sync"] => (f, b, s, true),
            _ => return Err(format!("kernels.txt line {}: `{raw}`", n + 1)),
        };
        if !file.ends_with(".cu") {
            return Err(format!("kernels.txt line {}: `{file}` is not a .cu file", n + 1));
        }
        for s in suffixes.split(',') {
            out.push(KernelEntry {
                file: file.to_string(),
                name: format!("{base}_{s}"),
                sync,
            });
        }
    }
    Ok(out)
}
