//! Tests cannot silently not run: every test body in `tests/suite/` (a function taking only
//! `comm: &Communicator` and returning nothing) must be registered in a table the test binaries
//! run: `TESTS` in `tests/suite/mod.rs` (run by `tests/threads.rs` and `tests/mpi.rs`) and, for
//! the bodies generic over the engine (`<E: TestEngine>`), also `CUDA_TESTS` in
//! `tests/suite/engines.rs` (run by `tests/gpu_threads.rs` and `tests/gpu_mpi.rs`). A body left
//! out of the tables fails this test, naming it.

use std::fs;
use std::path::Path;

/// A test body found in a suite file: its module, name and whether it is generic over the engine.
struct Body {
    module: String,
    name: String,
    generic: bool,
}

/// The test bodies of one suite file: `pub fn name(comm: &Communicator) {` and
/// `pub fn name<E: TestEngine>(comm: &Communicator) {` (private functions are helpers), also
/// those a macro defines as `pub fn $name<E: TestEngine>(..)` from `name => body` lines.
fn bodies(module: &str, text: &str) -> Vec<Body> {
    let mut found = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        let Some(rest) = line.strip_prefix("pub fn ") else {
            continue;
        };
        let Some(open) = rest.find('(') else { continue };
        let (head, args) = rest.split_at(open);
        if !args.starts_with("(comm: &Communicator) {") {
            continue;
        }
        if head.starts_with("$name") {
            // A macro's bodies: the `name => body` lines of its invocations.
            for call in text.lines().map(str::trim) {
                let Some((name, body)) = call.trim_end_matches(',').split_once(" => ") else {
                    continue;
                };
                let word =
                    |w: &str| !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_');
                if word(name) && word(body) {
                    found.push(Body {
                        module: module.to_string(),
                        name: name.to_string(),
                        generic: true,
                    });
                }
            }
            continue;
        }
        let (name, generic) = match head.find('<') {
            Some(lt) if !head[lt..].contains(',') && head[lt..].contains("TestEngine") => {
                (&head[..lt], true)
            }
            Some(_) => continue,
            None => (head, false),
        };
        found.push(Body {
            module: module.to_string(),
            name: name.to_string(),
            generic,
        });
    }
    found
}

/// Whether `table` calls `module::name` (or `name` from inside `module` itself: `engines.rs`'s
/// own table), with `engine`'s instantiation if given.
fn registered(table: &str, table_module: &str, body: &Body, engine: Option<&str>) -> bool {
    let paths = if body.module == table_module {
        vec![body.name.clone(), format!("{}::{}", body.module, body.name)]
    } else {
        vec![format!("{}::{}", body.module, body.name)]
    };
    paths.iter().any(|path| match engine {
        None => calls(table, path),
        Some(engine) => table.contains(&format!("{path}::<distlops::core::{engine}>")),
    })
}

/// Whether `path` occurs in `table` as a whole path (not as the start or end of a longer one).
fn calls(table: &str, path: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    table.match_indices(path).any(|(at, _)| {
        let before = table[..at].chars().next_back().is_none_or(|c| !ident(c));
        let after = table[at + path.len()..].chars().next();
        before && after.is_none_or(|c| !ident(c) || table[at + path.len()..].starts_with("::<"))
    })
}

#[test]
fn every_suite_test_is_registered() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite");
    let tests = fs::read_to_string(dir.join("mod.rs")).unwrap();
    let engines = fs::read_to_string(dir.join("engines.rs")).unwrap();
    let cuda = &engines[engines
        .find("pub const CUDA_TESTS")
        .expect("engines.rs has CUDA_TESTS")..];
    let mut all = Vec::new();
    let mut files: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for path in files {
        let module = path.file_stem().unwrap().to_str().unwrap().to_string();
        if module == "mod" || path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        all.extend(bodies(&module, &fs::read_to_string(&path).unwrap()));
    }
    assert!(
        all.len() > 100,
        "found only {} test bodies: is the parser out of date?",
        all.len()
    );
    let mut missing = Vec::new();
    for body in &all {
        let path = format!("{}::{}", body.module, body.name);
        if body.generic {
            if !registered(&tests, "", body, Some("Host")) {
                missing.push(format!("{path} (Host instantiation, in TESTS)"));
            }
            if !registered(cuda, "engines", body, Some("Cuda")) {
                missing.push(format!(
                    "{path} (Cuda instantiation, in engines::CUDA_TESTS)"
                ));
            }
        } else if !registered(&tests, "", body, None) && !registered(cuda, "engines", body, None) {
            missing.push(format!("{path} (in TESTS)"));
        }
    }
    assert!(
        missing.is_empty(),
        "test bodies that no test binary runs (register them in tests/suite/mod.rs or \
         engines.rs):\n  {}",
        missing.join("\n  ")
    );
}
