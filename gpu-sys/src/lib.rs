//! distlops-gpu-sys: raw bindings to NVRTC, NCCL and NVSHMEM, loaded at run time with `dlopen`,
//! so nothing here needs CUDA to build.
//!
//! Each module ([`nvrtc`], [`nccl`], [`nvshmem`]) has
//! * a struct of function pointers ([`nvrtc::Nvrtc`], [`nccl::Nccl`], [`nvshmem::Nvshmem`]), every
//!   one resolved with `dlsym` when the library is loaded, so a missing symbol is a load error and
//!   never a crash at the first call;
//! * `SYMBOLS`, the C names of those functions, generated from the same declaration as the struct;
//! * the C types those functions take, laid out as in the headers of the pinned PyPI wheels that
//!   `scripts/gpu-libs.sh` fetches (sizes checked at compile time);
//! * thin wrappers returning `Result<_, Error>`, where [`Error`] carries the library's own message;
//! * `library()`, the process-wide instance (loaded on first use and never unloaded), and
//!   `load()` / `load_from(path)` for a private one.
//!
//! # Where the libraries are looked for
//! 1. If the library's own variable is set (`DISTLOPS_NVRTC_LIB`, `DISTLOPS_NCCL_LIB`,
//!    `DISTLOPS_NVSHMEM_LIB`), that path, and nothing else.
//! 2. Otherwise each soname of the module's `SONAMES` in `$DISTLOPS_GPU_LIBS/lib/` (the cache
//!    `scripts/gpu-libs.sh` fills), if that variable is set;
//! 3. then each soname by itself, found by the dynamic loader (`LD_LIBRARY_PATH`, the `ld.so`
//!    cache, system directories).
//!
//! A library that cannot be loaded is a [`LoadError`] naming every path tried, never a panic.

use std::fmt;

pub mod nccl;
pub mod nvrtc;
pub mod nvshmem;

/// The directory `scripts/gpu-libs.sh` fills; its `lib/` is searched before the loader's path.
pub const GPU_LIBS_ENV: &str = "DISTLOPS_GPU_LIBS";

/// A failed call into one of the libraries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// `"NVRTC"`, `"NCCL"` or `"NVSHMEM"`.
    pub library: &'static str,
    /// The C function that failed.
    pub function: &'static str,
    /// Its return code (`nvrtcResult`, `ncclResult_t`, NVSHMEM status, …).
    pub code: i32,
    /// The library's description of `code` (`nvrtcGetErrorString`, `ncclGetErrorString`, or the
    /// name of the NVSHMEM status), or what went wrong before the call.
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} failed: {} ({} error {})",
            self.function, self.message, self.library, self.code
        )
    }
}

impl std::error::Error for Error {}

/// A library that could not be loaded, or that lacks a function this crate binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// No candidate could be opened.
    NotFound {
        /// `"NVRTC"`, `"NCCL"` or `"NVSHMEM"`.
        library: &'static str,
        /// Each candidate tried, in order, with the loader's reason for rejecting it.
        tried: Vec<(String, String)>,
        /// The variable that names the library's path explicitly.
        env_var: &'static str,
    },
    /// The library was opened but does not export one of the bound functions.
    MissingSymbol {
        /// `"NVRTC"`, `"NCCL"` or `"NVSHMEM"`.
        library: &'static str,
        /// The file that was opened.
        path: String,
        /// The missing C function.
        symbol: &'static str,
        /// The loader's message.
        message: String,
    },
}

impl LoadError {
    /// Whether no candidate file could be opened at all (as opposed to a library that was found
    /// but lacks a symbol).
    pub fn is_not_found(&self) -> bool {
        matches!(self, LoadError::NotFound { .. })
    }

    /// `"NVRTC"`, `"NCCL"` or `"NVSHMEM"`.
    pub fn library(&self) -> &'static str {
        match self {
            LoadError::NotFound { library, .. } | LoadError::MissingSymbol { library, .. } => {
                library
            }
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::NotFound {
                library,
                tried,
                env_var,
            } => {
                write!(f, "could not load {library}; tried")?;
                for (i, (candidate, reason)) in tried.iter().enumerate() {
                    let sep = if i == 0 { " " } else { "; " };
                    write!(f, "{sep}`{candidate}` ({reason})")?;
                }
                write!(
                    f,
                    ". Set {env_var} to the library's path, or {GPU_LIBS_ENV} / LD_LIBRARY_PATH \
                     (`scripts/gpu-libs.sh` fetches it and writes an env.sh that sets both)"
                )
            }
            LoadError::MissingSymbol {
                library,
                path,
                symbol,
                message,
            } => write!(
                f,
                "{library} at `{path}` does not export `{symbol}`: {message}"
            ),
        }
    }
}

impl std::error::Error for LoadError {}

/// Whether the running process (its executable and the libraries already loaded, such as
/// `libmpi.so`) exports a function of this name, for optional features of other libraries (Open
/// MPI's `MPIX_Query_cuda_support`).
pub fn process_symbol(name: &str) -> Option<*const std::ffi::c_void> {
    let this = libloading::os::unix::Library::this();
    // SAFETY: only the address is read; calling it is the caller's business (with the
    // signature the library documents).
    let symbol = unsafe { this.get::<*const std::ffi::c_void>(name.as_bytes()) }.ok()?;
    Some(*symbol)
}

/// The candidates for a library, in search order (see the crate docs).
pub(crate) fn candidates(env_var: &str, sonames: &[&str]) -> Vec<String> {
    if let Some(path) = std::env::var_os(env_var).filter(|p| !p.is_empty()) {
        return vec![path.to_string_lossy().into_owned()];
    }
    let mut out = Vec::new();
    if let Some(dir) = std::env::var_os(GPU_LIBS_ENV).filter(|p| !p.is_empty()) {
        let lib = std::path::Path::new(&dir).join("lib");
        out.extend(
            sonames
                .iter()
                .map(|s| lib.join(s).to_string_lossy().into_owned()),
        );
    }
    out.extend(sonames.iter().map(|s| s.to_string()));
    out
}

/// Opens the first candidate that loads.
pub(crate) fn open(
    library: &'static str,
    env_var: &'static str,
    candidates: &[String],
) -> Result<(libloading::Library, String), LoadError> {
    let mut tried = Vec::new();
    for candidate in candidates {
        match open_path(candidate) {
            Ok(lib) => return Ok((lib, candidate.clone())),
            Err(e) => tried.push((candidate.clone(), e.to_string())),
        }
    }
    Err(LoadError::NotFound {
        library,
        tried,
        env_var,
    })
}

fn open_path(path: &str) -> Result<libloading::Library, libloading::Error> {
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
    // RTLD_NOW: a dependency the library cannot resolve is reported here, not at some later call.
    // SAFETY: loading runs the library's initialisers. The libraries loaded here are NVIDIA's
    // NVRTC, NCCL and NVSHMEM host libraries, whose initialisers only set up internal state (no
    // CUDA call happens before one of their functions is called).
    let lib = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }?;
    Ok(lib.into())
}

/// Resolves `name` in `lib` as a value of type `T` (a function pointer).
///
/// # Safety
/// `T` must be the exact C type of the symbol `name`, and the pointer must not be used after
/// `lib` is dropped.
pub(crate) unsafe fn symbol<T: Copy>(
    lib: &libloading::Library,
    library: &'static str,
    path: &str,
    name: &'static str,
) -> Result<T, LoadError> {
    let mut cname = Vec::with_capacity(name.len() + 1);
    cname.extend_from_slice(name.as_bytes());
    cname.push(0);
    // SAFETY: the caller guarantees `T` is the symbol's type; the copy out of the `Symbol` is
    // valid as long as `lib` is loaded, which the caller also guarantees.
    match unsafe { lib.get::<T>(&cname) } {
        Ok(sym) => Ok(*sym),
        Err(e) => Err(LoadError::MissingSymbol {
            library,
            path: path.to_string(),
            symbol: name,
            message: e.to_string(),
        }),
    }
}

/// Declares a library's table of function pointers and its `SYMBOLS` list from one list of C
/// declarations, so the two cannot disagree. Each field has the C function's name and type;
/// `from_library` resolves every one of them.
macro_rules! bind_library {
    (
        $(#[$smeta:meta])*
        pub struct $Name:ident for $label:literal {
            $(
                $(#[$fmeta:meta])*
                fn $sym:ident ( $( $arg:ident : $argty:ty ),* $(,)? ) $( -> $ret:ty )? ;
            )*
        }
    ) => {
        $(#[$smeta])*
        #[allow(non_snake_case)]
        pub struct $Name {
            $(
                $(#[$fmeta])*
                pub $sym: unsafe extern "C" fn($($arg: $argty),*) $(-> $ret)?,
            )*
            path: String,
            // Kept loaded as long as the function pointers above may be called.
            _library: libloading::Library,
        }

        /// The C name of every function bound in this module, in declaration order. All are
        /// resolved when the library is loaded.
        pub const SYMBOLS: &[&str] = &[$(stringify!($sym)),*];

        impl $Name {
            #[allow(non_snake_case)]
            fn from_library(
                library: libloading::Library,
                path: String,
            ) -> Result<Self, $crate::LoadError> {
                $(
                    // SAFETY: the field's type is the C declaration of this function in the
                    // header of the library (checked against the wheels pinned in
                    // scripts/gpu-libs.sh); `library` moves into the struct with the pointer.
                    let $sym = unsafe {
                        $crate::symbol::<unsafe extern "C" fn($($argty),*) $(-> $ret)?>(
                            &library, $label, &path, stringify!($sym),
                        )
                    }?;
                )*
                Ok(Self { $($sym,)* path, _library: library })
            }

            /// Loads the library from the first candidate that opens (see the crate docs) and
            /// resolves every function in `SYMBOLS`.
            ///
            /// # Errors
            /// [`LoadError::NotFound`] naming every candidate tried, or
            /// [`LoadError::MissingSymbol`].
            ///
            /// [`LoadError::NotFound`]: crate::LoadError::NotFound
            /// [`LoadError::MissingSymbol`]: crate::LoadError::MissingSymbol
            pub fn load() -> Result<Self, $crate::LoadError> {
                let candidates = $crate::candidates(ENV_VAR, SONAMES);
                let (library, path) = $crate::open($label, ENV_VAR, &candidates)?;
                Self::from_library(library, path)
            }

            /// Loads the library from `path` only (a file path or a bare soname for the
            /// dynamic loader to find) and resolves every function in `SYMBOLS`.
            ///
            /// # Errors
            /// As [`load`](Self::load).
            pub fn load_from(path: impl AsRef<std::path::Path>) -> Result<Self, $crate::LoadError> {
                let candidate = path.as_ref().to_string_lossy().into_owned();
                let (library, path) = $crate::open($label, ENV_VAR, &[candidate])?;
                Self::from_library(library, path)
            }

            /// The candidate the library was loaded from (a path or a bare soname).
            pub fn path(&self) -> &str {
                &self.path
            }
        }

        impl std::fmt::Debug for $Name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($Name)).field("path", &self.path).finish_non_exhaustive()
            }
        }

        /// The process-wide instance: loaded on the first call (see the crate docs for where it
        /// is looked for) and never unloaded, so its function pointers stay valid for the life
        /// of the process. Later calls return the same instance, or the same error.
        ///
        /// # Errors
        /// The [`LoadError`](crate::LoadError) of the first attempt.
        pub fn library() -> Result<&'static $Name, $crate::LoadError> {
            static LIBRARY: std::sync::OnceLock<Result<$Name, $crate::LoadError>> =
                std::sync::OnceLock::new();
            LIBRARY.get_or_init($Name::load).as_ref().map_err(Clone::clone)
        }
    };
}
pub(crate) use bind_library;

/// Copies a NUL-terminated C string into a `String` (lossily); `None` for a null pointer.
///
/// # Safety
/// `ptr` must be null or point to a NUL-terminated string that stays valid during the call.
pub(crate) unsafe fn c_string(ptr: *const std::os::raw::c_char) -> Option<String> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: non-null and NUL-terminated by the caller's guarantee.
    let s = unsafe { std::ffi::CStr::from_ptr(ptr) };
    Some(s.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_an_error_naming_the_path() {
        let err = nvrtc::Nvrtc::load_from("/nonexistent/libnvrtc.so.13").unwrap_err();
        assert!(err.is_not_found());
        assert_eq!(err.library(), "NVRTC");
        let text = err.to_string();
        assert!(text.contains("`/nonexistent/libnvrtc.so.13`"), "{text}");
        assert!(text.contains("No such file"), "{text}");
        assert!(text.contains("DISTLOPS_NVRTC_LIB"), "{text}");
    }

    #[test]
    fn a_library_without_the_symbols_is_a_missing_symbol_error() {
        // libc opens but exports no NCCL function.
        let err = nccl::Nccl::load_from("libc.so.6").unwrap_err();
        match &err {
            LoadError::MissingSymbol { symbol, .. } => assert_eq!(*symbol, nccl::SYMBOLS[0]),
            other => panic!("{other:?}"),
        }
        assert!(
            err.to_string().contains("does not export `ncclGetVersion`"),
            "{err}"
        );
    }

    #[test]
    fn nccl_version_codes() {
        assert_eq!(nccl::version_triple(23203), (2, 32, 3));
        assert_eq!(nccl::version_triple(21903), (2, 19, 3));
        assert_eq!(nccl::version_triple(2804), (2, 8, 4));
    }

    #[test]
    fn candidates_end_with_the_bare_sonames() {
        // Without the library's own variable (not set in the test environment), the bare
        // sonames come last, in order.
        if std::env::var_os(nvshmem::ENV_VAR).is_some() {
            return;
        }
        let c = candidates(nvshmem::ENV_VAR, nvshmem::SONAMES);
        assert_eq!(&c[c.len() - 2..], nvshmem::SONAMES);
    }

    #[test]
    fn init_attr_default_is_the_header_initializer() {
        let a = nvshmem::nvshmemx_init_attr_t::default();
        assert_eq!(a.version, (2 << 16) + 144);
        assert_eq!(a.args.version, (2 << 16) + 128);
        assert_eq!(a.args.uid_args.version, (1 << 16) + 24);
        assert_eq!((a.args.uid_args.myrank, a.args.uid_args.nranks), (-1, -1));
        assert_eq!(a.args.cuda_device_id, -1);
        assert!(a.mpi_comm.is_null() && a.args.uid_args.id.is_null());
    }
}
