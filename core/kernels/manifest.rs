// The kernel manifest (`kernels.txt`): which entry points each kernel file defines, and what
// their launches must respect.
//
// One home for its format, `include!`d by core's build script (the emulator's registry), by the
// generator of the kernel test's registry (`core/emu/gen_registry.rs`), by core (launch counts,
// module loading) and by the NVRTC check. Each non-comment line is
//
//     <file.cu> <base name> <suffix>,<suffix>,... [sync] [block=N] [ptrs=NAME:ROLE,...] [inplace] [peer]
//
// and stands for the entry points `<base>_<suffix>` of `<file.cu>`. `#` starts a comment. The
// words after the suffixes are optional, in any order (a line of only the first three is valid and
// means: no synchronisation, any block size, pointers not declared):
//
// * `sync`: the kernel synchronises threads of a block (`__syncthreads`, warp shuffles); the
//   emulator runs it with one host thread per CUDA thread.
// * `block=N`: the most threads per block the kernel supports, e.g. the length of its
//   `__shared__` arrays. A launch with more threads is refused, naming the kernel. Default 1024
//   (CUDA's limit): a kernel with a `__shared__` array sized for the block must declare it.
// * `ptrs=NAME:ROLE,...`: the kernel's pointer parameters, in order, each with its role: `in`
//   (only read), `out` (only written) or `inout` (read and written). Each pointer of a launch then
//   carries the bytes the kernel may touch through it (`KernelArg::Span` on the Rust side), and a
//   launch in which a written range overlaps another pointer's range is refused, naming both
//   (CUDA's `__restrict__`: on a GPU such a launch is a race). Without `ptrs=` the pointers are not
//   checked against each other.
// * `peer`: the kernel communicates with the same kernel on the other ranks through the
//   symmetric heap (peer loads and stores, signals; `peer.cu`) and waits for them inside the
//   launch. The emulator runs it outside its one-launch-at-a-time lock, so the ranks' launches
//   overlap as they must (a peer kernel therefore has no `__shared__` arrays); it needs `sync`.
// * `inplace`: an `out` or `inout` pointer may be exactly an `in` pointer (the same address and
//   extent), for an element-wise kernel that reads element `i` only before writing element `i`.
//   A partial overlap is still refused.

/// What a kernel does through one of its pointer parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PtrRole {
    /// Only read.
    In,
    /// Only written.
    Out,
    /// Read and written.
    InOut,
}

impl PtrRole {
    /// The role's one-letter code in the emulator's registry (`r`, `w`, `u`).
    pub fn code(self) -> char {
        match self {
            PtrRole::In => 'r',
            PtrRole::Out => 'w',
            PtrRole::InOut => 'u',
        }
    }
}

/// A declared pointer parameter of a kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtrParam {
    /// The parameter's name in the kernel file (for messages).
    pub name: String,
    /// What the kernel does through it.
    pub role: PtrRole,
}

/// CUDA's limit of threads per block, the default of `block=`.
pub const MAX_BLOCK: u32 = 1024;

/// One entry point of a kernel file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelEntry {
    /// The `.cu` file (relative to `core/kernels`).
    pub file: String,
    /// The entry point's name (`extern "C"`).
    pub name: String,
    /// Whether the kernel synchronises the threads of a block.
    pub sync: bool,
    /// The most threads per block it may be launched with (`block=`, default [`MAX_BLOCK`]).
    pub max_block: u32,
    /// Its pointer parameters, in order (`ptrs=`), if declared.
    pub ptrs: Option<Vec<PtrParam>>,
    /// Whether a written pointer may be exactly an input (`inplace`).
    pub inplace: bool,
    /// Whether the kernel waits for the same kernel on other ranks (`peer`).
    pub peer: bool,
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
        let bad = |why: &str| format!("kernels.txt line {}: `{}`: {why}", n + 1, raw.trim());
        let words: Vec<&str> = line.split_whitespace().collect();
        let [file, base, suffixes, options @ ..] = &words[..] else {
            return Err(bad("expected <file.cu> <base name> <suffixes> [options]"));
        };
        if !file.ends_with(".cu") {
            return Err(bad(&format!("`{file}` is not a .cu file")));
        }
        let mut proto = KernelEntry {
            file: file.to_string(),
            name: String::new(),
            sync: false,
            max_block: MAX_BLOCK,
            ptrs: None,
            inplace: false,
            peer: false,
        };
        for &word in options {
            match word.split_once('=') {
                None if word == "sync" => proto.sync = true,
                None if word == "inplace" => proto.inplace = true,
                None if word == "peer" => proto.peer = true,
                Some(("block", v)) => {
                    proto.max_block = v
                        .parse()
                        .ok()
                        .filter(|b| (1..=MAX_BLOCK).contains(b))
                        .ok_or_else(|| bad(&format!("block={v}: not a count in 1..={MAX_BLOCK}")))?;
                }
                Some(("ptrs", v)) => proto.ptrs = Some(parse_ptrs(v).map_err(|e| bad(&e))?),
                _ => return Err(bad(&format!("unknown option `{word}`"))),
            }
        }
        if proto.peer && !proto.sync {
            return Err(bad("`peer` needs `sync` (its threads wait for a signal together)"));
        }
        if proto.inplace && proto.ptrs.is_none() {
            return Err(bad("`inplace` needs the pointers declared (ptrs=...)"));
        }
        for s in suffixes.split(',') {
            out.push(KernelEntry {
                name: format!("{base}_{s}"),
                ..proto.clone()
            });
        }
    }
    Ok(out)
}

/// Parses `NAME:ROLE,NAME:ROLE,...`.
fn parse_ptrs(list: &str) -> Result<Vec<PtrParam>, String> {
    list.split(',')
        .map(|item| {
            let (name, role) = item
                .split_once(':')
                .ok_or_else(|| format!("ptrs: `{item}` is not NAME:ROLE"))?;
            let role = match role {
                "in" => PtrRole::In,
                "out" => PtrRole::Out,
                "inout" => PtrRole::InOut,
                _ => return Err(format!("ptrs: role `{role}` of `{name}` is not in, out or inout")),
            };
            Ok(PtrParam {
                name: name.to_string(),
                role,
            })
        })
        .collect()
}
