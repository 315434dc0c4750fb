//! Compiles every GPU kernel of the project with NVRTC, for each target architecture, and checks
//! the PTX entry points against the kernel manifest (`core/kernels/kernels.txt`). Each kernel
//! file is compiled as `common.cuh` + "\n" + the file, as the Cuda engine does.
//!
//! `DISTLOPS_KERNEL_DIR` replaces `core/kernels` (for a modified copy). NVRTC absent: skip, unless
//! `DISTLOPS_REQUIRE_GPU_LIBS=1`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::{loaded_or_skip, say};
use distlops_gpu_sys::nvrtc::{self, CompileError};

// The manifest parser (`parse_manifest`, `KernelEntry`), from its one home in core.
#[allow(dead_code, missing_docs)]
mod manifest {
    include!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../core/kernels/manifest.rs"
    ));
}

/// The architectures the kernels must compile for (A100, H100/H200).
const ARCHS: &[&str] = &["compute_80", "compute_90"];

fn kernel_dir() -> PathBuf {
    match std::env::var_os("DISTLOPS_KERNEL_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/kernels"),
    }
}

/// The PTX assembler (`DISTLOPS_PTXAS`, from scripts/gpu-libs.sh), which checks what NVRTC
/// passes through unchecked: inline PTX (the signals and `multimem` of peer.cu) and the
/// instructions' availability on the architecture. Absent: skip that check, unless
/// `DISTLOPS_REQUIRE_GPU_LIBS=1`.
fn ptxas() -> Option<PathBuf> {
    let path = std::env::var_os("DISTLOPS_PTXAS").map(PathBuf::from);
    match path {
        Some(p) if p.is_file() => Some(p),
        _ if common::required() => panic!(
            "DISTLOPS_REQUIRE_GPU_LIBS=1 but DISTLOPS_PTXAS ({path:?}) is not a file: run \
             scripts/gpu-libs.sh and source its env.sh"
        ),
        _ => {
            say("ptxas: not found (DISTLOPS_PTXAS); the PTX is not assembled");
            None
        }
    }
}

/// Assembles `ptx` (of `file` for `arch`, `compute_NN`) for `sm_NN` with `ptxas`.
fn assemble(ptxas: &Path, ptx: &str, file: &str, arch: &str) -> Result<(), String> {
    let sm = format!("sm_{}", &arch["compute_".len()..]);
    let dir = std::env::temp_dir().join(format!("distlops-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let input = dir.join(format!("{file}.{sm}.ptx"));
    std::fs::write(&input, ptx).map_err(|e| e.to_string())?;
    let out = std::process::Command::new(ptxas)
        .arg(format!("-arch={sm}"))
        .arg(&input)
        .arg("-o")
        .arg(dir.join(format!("{file}.{sm}.cubin")))
        .output()
        .map_err(|e| format!("{}: {e}", ptxas.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `.entry` functions of a PTX module: name -> whether it is `.visible` (an `extern "C"`
/// kernel the driver can look up by name; a template or `static` kernel is `.weak` or bare).
fn ptx_entries(ptx: &str) -> BTreeMap<String, bool> {
    ptx.lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let at = line.find(".entry ")?;
            let name = line[at + ".entry ".len()..].split('(').next()?.trim();
            Some((name.to_string(), line.starts_with(".visible ")))
        })
        .collect()
}

/// Rewrites the positions `FILE(N)` in an NVRTC log, which count lines of the concatenation
/// `common.cuh` + "\n" + FILE, as `common.cuh:N` or `FILE:M` with M the line of FILE itself.
fn map_lines(log: &str, file: &str, common: &str) -> String {
    let offset = common.matches('\n').count() + 1; // the lines before FILE's first
    let pattern = format!("{file}(");
    let mut out = String::with_capacity(log.len());
    let mut rest = log;
    while let Some(at) = rest.find(&pattern) {
        out.push_str(&rest[..at]);
        let after = &rest[at + pattern.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        match (
            after[..digits].parse::<usize>(),
            after[digits..].starts_with(')'),
        ) {
            (Ok(n), true) if n > offset => out.push_str(&format!("{file}:{}", n - offset)),
            (Ok(n), true) => out.push_str(&format!("common.cuh:{n}")),
            _ => {
                out.push_str(&pattern);
                rest = after;
                continue;
            }
        }
        rest = &after[digits + 1..];
    }
    out.push_str(rest);
    out
}

fn options(arch: &str) -> [String; 3] {
    [
        format!("--gpu-architecture={arch}"),
        "--fmad=false".to_string(),
        "--std=c++17".to_string(),
    ]
}

#[test]
fn every_kernel_compiles_and_matches_the_manifest() {
    let Some(lib) = loaded_or_skip("NVRTC", nvrtc::Nvrtc::load()) else {
        return;
    };
    let dir = kernel_dir();
    let entries = manifest::parse_manifest(&read(&dir.join("kernels.txt")))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join("kernels.txt").display()));
    assert!(
        !entries.is_empty(),
        "{}/kernels.txt lists no kernel",
        dir.display()
    );
    let mut by_file: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in &entries {
        by_file
            .entry(e.file.clone())
            .or_default()
            .insert(e.name.clone());
    }

    // Every .cu file of the directory is in the manifest (else it is never compiled here).
    let mut unlisted = Vec::new();
    for f in std::fs::read_dir(&dir).expect("kernel dir") {
        let name = f
            .expect("dir entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if name.ends_with(".cu") && !by_file.contains_key(&name) {
            unlisted.push(name);
        }
    }

    let common = read(&dir.join("common.cuh"));
    let ptxas = ptxas();
    let mut failures = Vec::new();
    for (file, listed) in &by_file {
        let source = format!("{common}\n{}", read(&dir.join(file)));
        for arch in ARCHS {
            let opts = options(arch);
            let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
            let started = std::time::Instant::now();
            match lib.compile_ptx(&source, file, &opts) {
                Err(e) => failures.push(format!(
                    "{file} [{arch}] (positions mapped back to the two files): {}",
                    map_lines(&e.to_string(), file, &common)
                )),
                Ok(ptx) => {
                    let found = ptx_entries(&ptx);
                    let target = format!(".target sm_{}", &arch["compute_".len()..]);
                    if !ptx.contains(&target) {
                        failures.push(format!("{file} [{arch}]: the PTX has no `{target}`"));
                    }
                    for name in listed {
                        match found.get(name) {
                            Some(true) => {}
                            Some(false) => failures.push(format!(
                                "{file} [{arch}]: `{name}` is an entry point but not .visible \
                                 (make it extern \"C\" and not static)"
                            )),
                            None => failures.push(format!(
                                "{file} [{arch}]: `{name}` is in kernels.txt but not an entry \
                                 point of the PTX (missing, misspelt, or not extern \"C\" \
                                 __global__?)"
                            )),
                        }
                    }
                    for extra in found.keys().filter(|n| !listed.contains(*n)) {
                        failures.push(format!(
                            "{file} [{arch}]: entry point `{extra}` is not listed in kernels.txt"
                        ));
                    }
                    if let Some(ptxas) = &ptxas {
                        if let Err(e) = assemble(ptxas, &ptx, file, arch) {
                            failures.push(format!("{file} [{arch}]: ptxas: {e}"));
                        }
                    }
                    say(&format!(
                        "nvrtc: {file} [{arch}]: {} entry points, {} bytes of PTX{}, {:.2} s",
                        found.len(),
                        ptx.len(),
                        if ptxas.is_some() {
                            ", assembled by ptxas"
                        } else {
                            ""
                        },
                        started.elapsed().as_secs_f64()
                    ));
                }
            }
        }
    }
    for f in &unlisted {
        failures.push(format!(
            "{f} is in {} but not in kernels.txt",
            dir.display()
        ));
    }
    assert!(
        failures.is_empty(),
        "{} problem(s) with the kernels in {}:\n\n{}",
        failures.len(),
        dir.display(),
        failures.join("\n\n")
    );
}

#[test]
fn log_positions_map_back_to_the_files() {
    let common = "a\nb\n"; // two lines, then the "\n" separator: x.cu starts at line 4
    let log = "x.cu(2): error: e1\nx.cu(4): error: e2\nx.cu(17): warning\nx.cu(zz) y.cu(9)";
    assert_eq!(
        map_lines(log, "x.cu", common),
        "common.cuh:2: error: e1\nx.cu:1: error: e2\nx.cu:14: warning\nx.cu(zz) y.cu(9)"
    );
}

#[test]
fn an_undefined_identifier_fails_with_a_log_naming_it() {
    let Some(lib) = loaded_or_skip("NVRTC", nvrtc::Nvrtc::load()) else {
        return;
    };
    let source = "extern \"C\" __global__ void broken(float* y) {\n\
                  \x20   y[threadIdx.x] = distlops_no_such_name * 2.0f;\n\
                  }\n";
    let opts = options("compute_90");
    let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
    let err = lib
        .compile_ptx(source, "broken.cu", &opts)
        .expect_err("a source with an undefined identifier compiled");
    let CompileError::Failed {
        program,
        error,
        log,
    } = &err
    else {
        panic!("expected a compile failure, got {err:?}");
    };
    assert_eq!(program, "broken.cu");
    assert_eq!(error.function, "nvrtcCompileProgram");
    assert_eq!(error.code, nvrtc::nvrtcResult::NVRTC_ERROR_COMPILATION.0);
    assert_eq!(error.message, "NVRTC_ERROR_COMPILATION");
    assert!(log.contains("distlops_no_such_name"), "log: {log}");
    assert!(
        log.contains("broken.cu(2)"),
        "the log should name the line: {log}"
    );
    // The error's message carries the whole log.
    assert!(err.to_string().contains(log.trim_end()), "{err}");
}

#[test]
fn a_bad_option_is_an_error_not_a_crash() {
    let Some(lib) = loaded_or_skip("NVRTC", nvrtc::Nvrtc::load()) else {
        return;
    };
    let err = lib
        .compile_ptx(
            "extern \"C\" __global__ void k() {}",
            "k.cu",
            &["--no-such-option"],
        )
        .expect_err("an unknown option was accepted");
    let CompileError::Failed { error, .. } = &err else {
        panic!("expected a failure, got {err:?}");
    };
    assert_eq!(
        error.code,
        nvrtc::nvrtcResult::NVRTC_ERROR_INVALID_OPTION.0,
        "{err}"
    );
}

#[test]
fn the_process_wide_library_compiles_too() {
    // nvrtc::compile_ptx goes through nvrtc::library(); absent NVRTC is a Load error.
    match nvrtc::compile_ptx(
        "extern \"C\" __global__ void k(int* x) { x[0] = 1; }",
        "k.cu",
        &["--gpu-architecture=compute_80"],
    ) {
        Ok(ptx) => assert_eq!(ptx_entries(&ptx).get("k"), Some(&true), "{ptx}"),
        Err(CompileError::Load(e)) => {
            loaded_or_skip::<()>("NVRTC", Err(e));
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn headers_given_to_create_program_resolve_includes() {
    let Some(lib) = loaded_or_skip("NVRTC", nvrtc::Nvrtc::load()) else {
        return;
    };
    let header = "#define DL_TWO 2.0f\n";
    let source =
        "#include \"two.cuh\"\nextern \"C\" __global__ void twice(float* y) { y[0] *= DL_TWO; }\n";
    let program = lib
        .create_program(source, "twice.cu", &[("two.cuh", header)])
        .expect("nvrtcCreateProgram");
    program
        .compile(&["--gpu-architecture=compute_90"])
        .unwrap_or_else(|e| panic!("{e}\n{}", program.log().unwrap_or_default()));
    let ptx = program.ptx().expect("nvrtcGetPTX");
    assert_eq!(ptx_entries(&ptx).get("twice"), Some(&true), "{ptx}");
    // Without the header the include fails, and the log says which file.
    let bare = lib
        .create_program(source, "twice.cu", &[])
        .expect("nvrtcCreateProgram");
    assert!(bare.compile(&["--gpu-architecture=compute_90"]).is_err());
    let log = bare.log().expect("nvrtcGetProgramLog");
    assert!(log.contains("two.cuh"), "{log}");
}
