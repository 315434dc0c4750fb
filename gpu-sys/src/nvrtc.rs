//! NVRTC, the CUDA run-time compiler: CUDA C++ source to PTX, on the host, with no GPU.
//!
//! Declarations from `nvrtc.h` of the `nvidia-cuda-nvrtc` 13.5 wheel. [`compile_ptx`] is the
//! safe entry point; [`Program`] is the step-by-step one.

#![allow(non_camel_case_types)]

use std::ffi::CString;
use std::fmt;
use std::os::raw::{c_char, c_int};

use crate::{bind_library, Error, LoadError};

/// The sonames tried, in order.
pub const SONAMES: &[&str] = &["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"];

/// Names the NVRTC library file explicitly (then nothing else is tried).
pub const ENV_VAR: &str = "DISTLOPS_NVRTC_LIB";

/// `nvrtcResult`: the return code of every NVRTC function (a C enum, so an `int`).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct nvrtcResult(pub c_int);

#[allow(missing_docs)]
impl nvrtcResult {
    pub const NVRTC_SUCCESS: Self = Self(0);
    pub const NVRTC_ERROR_OUT_OF_MEMORY: Self = Self(1);
    pub const NVRTC_ERROR_PROGRAM_CREATION_FAILURE: Self = Self(2);
    pub const NVRTC_ERROR_INVALID_INPUT: Self = Self(3);
    pub const NVRTC_ERROR_INVALID_PROGRAM: Self = Self(4);
    pub const NVRTC_ERROR_INVALID_OPTION: Self = Self(5);
    pub const NVRTC_ERROR_COMPILATION: Self = Self(6);
    pub const NVRTC_ERROR_BUILTIN_OPERATION_FAILURE: Self = Self(7);
    pub const NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION: Self = Self(8);
    pub const NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION: Self = Self(9);
    pub const NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID: Self = Self(10);
    pub const NVRTC_ERROR_INTERNAL_ERROR: Self = Self(11);
    pub const NVRTC_ERROR_TIME_FILE_WRITE_FAILED: Self = Self(12);
    pub const NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED: Self = Self(13);
    pub const NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED: Self = Self(14);
    pub const NVRTC_ERROR_PCH_CREATE: Self = Self(15);
    pub const NVRTC_ERROR_CANCELLED: Self = Self(16);
    pub const NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED: Self = Self(17);
    pub const NVRTC_ERROR_BUSY: Self = Self(18);
}

/// The opaque program object behind an [`nvrtcProgram`] handle.
#[repr(C)]
pub struct _nvrtcProgram {
    _opaque: [u8; 0],
    _not_send_sync: std::marker::PhantomData<(*mut u8, std::marker::PhantomPinned)>,
}

/// `nvrtcProgram`: a handle to a program being compiled.
pub type nvrtcProgram = *mut _nvrtcProgram;

bind_library! {
    /// The NVRTC functions distlops uses, resolved once at load. The fields are the raw C
    /// functions (calling one is `unsafe`); the methods are the checked wrappers.
    pub struct Nvrtc for "NVRTC" {
        /// `nvrtcResult nvrtcVersion(int *major, int *minor)`
        fn nvrtcVersion(major: *mut c_int, minor: *mut c_int) -> nvrtcResult;
        /// `nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src,
        /// const char *name, int numHeaders, const char * const *headers,
        /// const char * const *includeNames)`
        fn nvrtcCreateProgram(
            prog: *mut nvrtcProgram,
            src: *const c_char,
            name: *const c_char,
            num_headers: c_int,
            headers: *const *const c_char,
            include_names: *const *const c_char,
        ) -> nvrtcResult;
        /// `nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions,
        /// const char * const *options)`
        fn nvrtcCompileProgram(
            prog: nvrtcProgram,
            num_options: c_int,
            options: *const *const c_char,
        ) -> nvrtcResult;
        /// `nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t *ptxSizeRet)`
        fn nvrtcGetPTXSize(prog: nvrtcProgram, ptx_size_ret: *mut usize) -> nvrtcResult;
        /// `nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *ptx)`
        fn nvrtcGetPTX(prog: nvrtcProgram, ptx: *mut c_char) -> nvrtcResult;
        /// `nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t *logSizeRet)`
        fn nvrtcGetProgramLogSize(prog: nvrtcProgram, log_size_ret: *mut usize) -> nvrtcResult;
        /// `nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char *log)`
        fn nvrtcGetProgramLog(prog: nvrtcProgram, log: *mut c_char) -> nvrtcResult;
        /// `nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog)`
        fn nvrtcDestroyProgram(prog: *mut nvrtcProgram) -> nvrtcResult;
        /// `const char *nvrtcGetErrorString(nvrtcResult result)`
        fn nvrtcGetErrorString(result: nvrtcResult) -> *const c_char;
    }
}

impl Nvrtc {
    /// The library's description of `result` (`nvrtcGetErrorString`).
    pub fn error_string(&self, result: nvrtcResult) -> String {
        // SAFETY: nvrtcGetErrorString takes any value and returns a static string (or null).
        let ptr = unsafe { (self.nvrtcGetErrorString)(result) };
        // SAFETY: null or a static NUL-terminated string.
        unsafe { crate::c_string(ptr) }.unwrap_or_else(|| format!("nvrtcResult {}", result.0))
    }

    fn check(&self, function: &'static str, result: nvrtcResult) -> Result<(), Error> {
        if result == nvrtcResult::NVRTC_SUCCESS {
            Ok(())
        } else {
            Err(Error {
                library: "NVRTC",
                function,
                code: result.0,
                message: self.error_string(result),
            })
        }
    }

    /// The NVRTC version, `(major, minor)` (`nvrtcVersion`).
    ///
    /// # Errors
    /// NVRTC's error.
    pub fn version(&self) -> Result<(i32, i32), Error> {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two valid out-pointers.
        let r = unsafe { (self.nvrtcVersion)(&mut major, &mut minor) };
        self.check("nvrtcVersion", r)?;
        Ok((major, minor))
    }

    /// Creates a program from `source`; `name` is the file name used in messages, and `headers`
    /// are `(include name, contents)` pairs that `#include "name"` in the source resolves to.
    ///
    /// # Errors
    /// NVRTC's error, or an argument containing a NUL byte (`code` -1).
    pub fn create_program<'a>(
        &'a self,
        source: &str,
        name: &str,
        headers: &[(&str, &str)],
    ) -> Result<Program<'a>, Error> {
        let nul = |what: &str| Error {
            library: "NVRTC",
            function: "nvrtcCreateProgram",
            code: -1,
            message: format!("{what} contains a NUL byte"),
        };
        let source = CString::new(source).map_err(|_| nul("the source"))?;
        let name = CString::new(name).map_err(|_| nul("the program name"))?;
        let mut header_strings = Vec::with_capacity(2 * headers.len());
        for (include, text) in headers {
            header_strings.push(CString::new(*text).map_err(|_| nul("a header"))?);
            header_strings.push(CString::new(*include).map_err(|_| nul("a header name"))?);
        }
        let texts: Vec<*const c_char> = header_strings
            .iter()
            .step_by(2)
            .map(|s| s.as_ptr())
            .collect();
        let names: Vec<*const c_char> = header_strings
            .iter()
            .skip(1)
            .step_by(2)
            .map(|s| s.as_ptr())
            .collect();
        let num_headers = c_int::try_from(headers.len()).map_err(|_| Error {
            library: "NVRTC",
            function: "nvrtcCreateProgram",
            code: -1,
            message: "too many headers".into(),
        })?;
        let mut handle: nvrtcProgram = std::ptr::null_mut();
        // SAFETY: every pointer is a NUL-terminated string alive for the call (and kept alive in
        // the Program afterwards); the two arrays have `num_headers` entries each, or are unused
        // when it is 0.
        let r = unsafe {
            (self.nvrtcCreateProgram)(
                &mut handle,
                source.as_ptr(),
                name.as_ptr(),
                num_headers,
                if headers.is_empty() {
                    std::ptr::null()
                } else {
                    texts.as_ptr()
                },
                if headers.is_empty() {
                    std::ptr::null()
                } else {
                    names.as_ptr()
                },
            )
        };
        self.check("nvrtcCreateProgram", r)?;
        Ok(Program {
            nvrtc: self,
            handle,
            _strings: (source, name, header_strings),
        })
    }

    /// Compiles `source` (one translation unit, no headers) to PTX with `options` (e.g.
    /// `--gpu-architecture=compute_90`). `name` is the file name used in messages.
    ///
    /// # Errors
    /// [`CompileError::Failed`], with NVRTC's whole program log when compilation fails.
    pub fn compile_ptx(
        &self,
        source: &str,
        name: &str,
        options: &[&str],
    ) -> Result<String, CompileError> {
        let failed = |error: Error, log: String| CompileError::Failed {
            program: name.to_string(),
            error,
            log,
        };
        let program = self
            .create_program(source, name, &[])
            .map_err(|e| failed(e, String::new()))?;
        if let Err(e) = program.compile(options) {
            let log = program
                .log()
                .unwrap_or_else(|log_err| format!("(no log: {log_err})"));
            return Err(failed(e, log));
        }
        program.ptx().map_err(|e| failed(e, String::new()))
    }
}

/// A program created by [`Nvrtc::create_program`]; destroyed on drop.
pub struct Program<'a> {
    nvrtc: &'a Nvrtc,
    handle: nvrtcProgram,
    // The strings the handle was created from, in case NVRTC refers to them later.
    _strings: (CString, CString, Vec<CString>),
}

impl Program<'_> {
    /// The raw handle (valid until this value is dropped).
    pub fn handle(&self) -> nvrtcProgram {
        self.handle
    }

    /// Compiles the program with `options` (`nvrtcCompileProgram`). On failure [`log`] has the
    /// compiler's messages.
    ///
    /// [`log`]: Self::log
    ///
    /// # Errors
    /// NVRTC's error (`NVRTC_ERROR_COMPILATION` for an error in the source), or an option
    /// containing a NUL byte (`code` -1).
    pub fn compile(&self, options: &[&str]) -> Result<(), Error> {
        let options: Vec<CString> = options
            .iter()
            .map(|o| CString::new(*o))
            .collect::<Result<_, _>>()
            .map_err(|_| Error {
                library: "NVRTC",
                function: "nvrtcCompileProgram",
                code: -1,
                message: "an option contains a NUL byte".into(),
            })?;
        let pointers: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let count = c_int::try_from(pointers.len()).map_err(|_| Error {
            library: "NVRTC",
            function: "nvrtcCompileProgram",
            code: -1,
            message: "too many options".into(),
        })?;
        // SAFETY: a live program handle and `count` NUL-terminated strings alive for the call.
        let r = unsafe { (self.nvrtc.nvrtcCompileProgram)(self.handle, count, pointers.as_ptr()) };
        self.nvrtc.check("nvrtcCompileProgram", r)
    }

    /// The PTX of a compiled program (`nvrtcGetPTXSize` + `nvrtcGetPTX`).
    ///
    /// # Errors
    /// NVRTC's error (e.g. for a program that was not compiled).
    pub fn ptx(&self) -> Result<String, Error> {
        self.read_text(
            "nvrtcGetPTXSize",
            self.nvrtc.nvrtcGetPTXSize,
            "nvrtcGetPTX",
            self.nvrtc.nvrtcGetPTX,
        )
    }

    /// The compiler's log: errors and warnings (`nvrtcGetProgramLogSize` +
    /// `nvrtcGetProgramLog`).
    ///
    /// # Errors
    /// NVRTC's error.
    pub fn log(&self) -> Result<String, Error> {
        self.read_text(
            "nvrtcGetProgramLogSize",
            self.nvrtc.nvrtcGetProgramLogSize,
            "nvrtcGetProgramLog",
            self.nvrtc.nvrtcGetProgramLog,
        )
    }

    fn read_text(
        &self,
        size_name: &'static str,
        size_fn: unsafe extern "C" fn(nvrtcProgram, *mut usize) -> nvrtcResult,
        text_name: &'static str,
        text_fn: unsafe extern "C" fn(nvrtcProgram, *mut c_char) -> nvrtcResult,
    ) -> Result<String, Error> {
        let mut size = 0usize;
        // SAFETY: a live program handle and a valid out-pointer.
        let r = unsafe { size_fn(self.handle, &mut size) };
        self.nvrtc.check(size_name, r)?;
        // The size counts the terminating NUL; allocate at least one byte for it.
        let mut buf = vec![0u8; size.max(1)];
        // SAFETY: the buffer holds `size` bytes, as the size query promised is enough.
        let r = unsafe { text_fn(self.handle, buf.as_mut_ptr().cast()) };
        self.nvrtc.check(text_name, r)?;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        buf.truncate(end);
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }
}

impl Drop for Program<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from nvrtcCreateProgram and is destroyed only here.
        unsafe { (self.nvrtc.nvrtcDestroyProgram)(&mut self.handle) };
    }
}

impl fmt::Debug for Program<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program")
            .field("handle", &self.handle)
            .finish_non_exhaustive()
    }
}

/// Why [`compile_ptx`] gave no PTX.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompileError {
    /// NVRTC could not be loaded.
    Load(LoadError),
    /// An NVRTC call failed; for a failed compilation, `log` is NVRTC's whole program log.
    Failed {
        /// The program's name (as given to [`compile_ptx`]).
        program: String,
        /// The failing call.
        error: Error,
        /// The compiler's log (empty if the failure came before compiling).
        log: String,
    },
}

impl CompileError {
    /// The compiler's log (empty for a load error or a failure before compiling).
    pub fn log(&self) -> &str {
        match self {
            CompileError::Load(_) => "",
            CompileError::Failed { log, .. } => log,
        }
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::Load(e) => write!(f, "{e}"),
            CompileError::Failed {
                program,
                error,
                log,
            } => {
                write!(f, "NVRTC could not compile `{program}`: {error}")?;
                if !log.trim().is_empty() {
                    write!(f, "\n{}", log.trim_end())?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for CompileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CompileError::Load(e) => Some(e),
            CompileError::Failed { error, .. } => Some(error),
        }
    }
}

impl From<LoadError> for CompileError {
    fn from(e: LoadError) -> Self {
        CompileError::Load(e)
    }
}

/// Compiles `source` to PTX with the process-wide NVRTC ([`library`]); see
/// [`Nvrtc::compile_ptx`].
///
/// # Errors
/// [`CompileError::Load`] if NVRTC cannot be loaded, else as [`Nvrtc::compile_ptx`].
pub fn compile_ptx(source: &str, name: &str, options: &[&str]) -> Result<String, CompileError> {
    library()?.compile_ptx(source, name, options)
}
