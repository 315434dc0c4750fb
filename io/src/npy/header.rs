//! The `.npy` header: magic string, version, and a Python dict literal with the dtype, the
//! memory order and the shape, padded so the data starts at a multiple of 64 bytes.

/// The magic string every `.npy` file starts with.
const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// The element type of a `.npy` file that distlops-io reads: a 4- or 8-byte IEEE float.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NpyDtype {
    /// Bytes per element: 4 (`float32`) or 8 (`float64`).
    pub bytes: usize,
    /// Whether the elements are big-endian (`>`); little-endian (`<`) otherwise.
    pub big_endian: bool,
}

impl NpyDtype {
    /// NumPy's description: `<f4`, `>f8`, ...
    pub fn descr(self) -> String {
        format!("{}f{}", if self.big_endian { '>' } else { '<' }, self.bytes)
    }
}

/// A parsed `.npy` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyHeader {
    /// The element type.
    pub dtype: NpyDtype,
    /// Whether the data is in Fortran (column-major) order.
    pub fortran_order: bool,
    /// The array's shape.
    pub shape: Vec<usize>,
    /// The byte offset of the data: the header's length.
    pub data_offset: u64,
}

impl NpyHeader {
    /// The number of bytes that [`parse`](Self::parse) needs before it knows the header's
    /// length.
    pub const PREAMBLE: usize = 12;

    /// The header's length from its first [`PREAMBLE`](Self::PREAMBLE) bytes (the magic string,
    /// the version and the length field).
    ///
    /// # Errors
    /// A message if the bytes are not the start of a `.npy` file.
    pub fn length(preamble: &[u8]) -> Result<u64, String> {
        if preamble.len() < 10 || &preamble[..6] != MAGIC {
            return Err("not a .npy file (no \\x93NUMPY magic string)".into());
        }
        match preamble[6] {
            1 => Ok(10 + u64::from(u16::from_le_bytes([preamble[8], preamble[9]]))),
            2 | 3 if preamble.len() >= 12 => Ok(12
                + u64::from(u32::from_le_bytes(
                    preamble[8..12].try_into().expect("4 bytes"),
                ))),
            v => Err(format!(
                ".npy version {v} is not supported (1, 2 and 3 are)"
            )),
        }
    }

    /// Parses a whole header (its first [`length`](Self::length) bytes).
    ///
    /// # Errors
    /// A message saying what is wrong or not supported (dtypes other than 4- and 8-byte
    /// floats).
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        let len = Self::length(bytes)? as usize;
        if bytes.len() < len {
            return Err("the header is cut short".into());
        }
        let start = if bytes[6] == 1 { 10 } else { 12 };
        let dict = std::str::from_utf8(&bytes[start..len])
            .map_err(|_| "the header is not text".to_string())?;
        let descr = quoted(value_of(dict, "descr")?)?;
        let dtype = match descr.as_bytes() {
            [o @ (b'<' | b'>' | b'='), b'f', n @ (b'4' | b'8')] => NpyDtype {
                bytes: usize::from(n - b'0'),
                big_endian: *o == b'>' || (*o == b'=' && cfg!(target_endian = "big")),
            },
            _ => {
                return Err(format!(
                    "dtype '{descr}' is not supported (float32 '<f4' or float64 '<f8')"
                ))
            }
        };
        let order = value_of(dict, "fortran_order")?;
        let fortran_order = if order.starts_with("True") {
            true
        } else if order.starts_with("False") {
            false
        } else {
            return Err(format!("fortran_order is not True or False: {order:.20}"));
        };
        let shape = value_of(dict, "shape")?;
        let inner = shape
            .strip_prefix('(')
            .and_then(|s| s.split_once(')'))
            .ok_or_else(|| format!("the shape is not a tuple: {shape:.40}"))?
            .0;
        let shape = inner
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse::<usize>()
                    .map_err(|_| format!("the shape has a bad length {s:?}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(NpyHeader {
            dtype,
            fortran_order,
            shape,
            data_offset: len as u64,
        })
    }

    /// The bytes of a version 1.0 header (2.0 if the dict is longer than 65535 bytes) for a
    /// C-ordered array, padded with spaces and a newline to a multiple of 64 bytes.
    pub fn to_bytes(dtype: NpyDtype, shape: &[usize]) -> Vec<u8> {
        let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
        let tuple = match dims.len() {
            1 => format!("({},)", dims[0]),
            _ => format!("({})", dims.join(", ")),
        };
        let dict = format!(
            "{{'descr': '{}', 'fortran_order': False, 'shape': {tuple}, }}",
            dtype.descr()
        );
        let v1 = dict.len() + 11 <= 65535;
        let preamble = if v1 { 10 } else { 12 };
        let total = (preamble + dict.len() + 1).div_ceil(64) * 64;
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(MAGIC);
        if v1 {
            out.extend_from_slice(&[1, 0]);
            out.extend_from_slice(&((total - preamble) as u16).to_le_bytes());
        } else {
            out.extend_from_slice(&[2, 0]);
            out.extend_from_slice(&((total - preamble) as u32).to_le_bytes());
        }
        out.extend_from_slice(dict.as_bytes());
        out.resize(total - 1, b' ');
        out.push(b'\n');
        out
    }

    /// Elements in the array.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The text after `'key':` in a dict literal.
fn value_of<'a>(dict: &'a str, key: &str) -> Result<&'a str, String> {
    let at = dict
        .find(&format!("'{key}'"))
        .or_else(|| dict.find(&format!("\"{key}\"")))
        .ok_or_else(|| format!("the header has no {key:?}"))?;
    let rest = dict[at + key.len() + 2..].trim_start();
    rest.strip_prefix(':')
        .map(str::trim_start)
        .ok_or_else(|| format!("the header's {key:?} has no value"))
}

/// The string at the start of `s`, in single or double quotes.
fn quoted(s: &str) -> Result<&str, String> {
    let q = s.chars().next().filter(|c| *c == '\'' || *c == '"');
    q.and_then(|q| s[1..].split_once(q))
        .map(|(inner, _)| inner)
        .ok_or_else(|| format!("expected a quoted string: {s:.20}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_headers_parse_back_and_are_64_byte_aligned() {
        for shape in [vec![], vec![7], vec![3, 4, 5], vec![100_000, 1, 2]] {
            for dtype in [
                NpyDtype {
                    bytes: 8,
                    big_endian: false,
                },
                NpyDtype {
                    bytes: 4,
                    big_endian: true,
                },
            ] {
                let bytes = NpyHeader::to_bytes(dtype, &shape);
                assert_eq!(bytes.len() % 64, 0);
                assert_eq!(*bytes.last().unwrap(), b'\n');
                let h = NpyHeader::parse(&bytes).unwrap();
                assert_eq!(h.dtype, dtype);
                assert_eq!(h.shape, shape);
                assert!(!h.fortran_order);
                assert_eq!(h.data_offset, bytes.len() as u64);
            }
        }
        let one = NpyHeader::to_bytes(
            NpyDtype {
                bytes: 8,
                big_endian: false,
            },
            &[7],
        );
        assert!(String::from_utf8_lossy(&one).contains("'shape': (7,), }"));
    }

    #[test]
    fn numpy_headers_parse() {
        let dict = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }";
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(dict.len() as u16 + 1).to_le_bytes());
        bytes.extend_from_slice(dict.as_bytes());
        bytes.push(b'\n');
        let h = NpyHeader::parse(&bytes).unwrap();
        assert_eq!(
            (h.dtype.bytes, h.fortran_order, h.shape.clone()),
            (4, true, vec![2, 3])
        );
        assert_eq!(h.len(), 6);
    }

    #[test]
    fn other_files_and_dtypes_are_refused() {
        assert!(NpyHeader::length(b"PK\x03\x04zipfile").is_err());
        assert!(NpyHeader::length(b"\x93NUMPY\x04\x00\x00\x00\x00\x00")
            .unwrap_err()
            .contains("version 4"));
        for descr in ["<i8", "<c16", "|u1", "<f2", "<f16"] {
            let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (2,), }}");
            let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
            bytes.extend_from_slice(&(dict.len() as u16).to_le_bytes());
            bytes.extend_from_slice(dict.as_bytes());
            let e = NpyHeader::parse(&bytes).unwrap_err();
            assert!(e.contains("not supported"), "{descr}: {e}");
        }
    }
}
