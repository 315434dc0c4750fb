//! SEG-Y files written byte by byte for the tests, with what the reader must find in them:
//! either sorting, every sample format, both byte orders, extended textual headers (a fixed or
//! variable number) and line numbers in other fields. Written here, not by the writer under
//! test, so reading is checked against an independent description of the format.

use distlops_io::segy::{f64_to_ibm, ByteOrder, HeaderField, SampleFormat, Sorting, TraceHeader};
use std::path::Path;

/// A regular post-stack cube to write.
#[derive(Debug, Clone)]
pub struct Fixture {
    pub n_il: usize,
    pub n_xl: usize,
    pub nt: usize,
    pub sorting: Sorting,
    pub format: SampleFormat,
    pub order: ByteOrder,
    /// Extended textual headers in the file.
    pub ext_blocks: usize,
    /// Whether the binary header says -1 (variable) instead of the count.
    pub ext_variable: bool,
    pub iline: HeaderField,
    pub xline: HeaderField,
    pub dt_us: u16,
    pub delay_ms: i16,
}

impl Fixture {
    /// An inline-sorted big-endian IEEE cube with the standard fields and no extended headers.
    pub fn new(n_il: usize, n_xl: usize, nt: usize) -> Self {
        Fixture {
            n_il,
            n_xl,
            nt,
            sorting: Sorting::Inline,
            format: SampleFormat::IeeeFloat32,
            order: ByteOrder::Big,
            ext_blocks: 0,
            ext_variable: false,
            iline: TraceHeader::INLINE,
            xline: TraceHeader::CROSSLINE,
            dt_us: 2000,
            delay_ms: 40,
        }
    }

    /// Inline numbers: 101, 104, 107, ... (not starting at 1, not contiguous).
    pub fn iline_number(&self, il: usize) -> i64 {
        101 + 3 * il as i64
    }

    /// Crossline numbers: descending from 500.
    pub fn xline_number(&self, xl: usize) -> i64 {
        500 - xl as i64
    }

    /// The sample at (inline index, crossline index, time index): exact in every format.
    pub fn value(&self, il: usize, xl: usize, t: usize) -> f64 {
        let base = ((il * 31 + xl * 7 + t * 3) % 200) as f64;
        match self.format {
            SampleFormat::UInt8 | SampleFormat::UInt16 | SampleFormat::UInt32 => base,
            f if f.is_float() => base - 100.25,
            _ => base - 100.0,
        }
    }

    /// Bytes before the first trace.
    pub fn header_bytes(&self) -> u64 {
        3600 + 3200 * self.ext_blocks as u64
    }

    /// Bytes per trace.
    pub fn trace_bytes(&self) -> u64 {
        240 + (self.nt * self.format.bytes()) as u64
    }

    /// The file's traces as (inline index, crossline index), in file order.
    pub fn traces(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        match self.sorting {
            Sorting::Inline => {
                for il in 0..self.n_il {
                    out.extend((0..self.n_xl).map(|xl| (il, xl)));
                }
            }
            Sorting::Crossline => {
                for xl in 0..self.n_xl {
                    out.extend((0..self.n_il).map(|il| (il, xl)));
                }
            }
        }
        out
    }

    /// Trace headers the reader scans when it finds the geometry: `n_fast + n_slow - 1`.
    pub fn scan_headers(&self) -> u64 {
        (self.n_il + self.n_xl - 1) as u64
    }

    fn put(&self, out: &mut [u8], v: u64, width: usize) {
        let be = v.to_be_bytes();
        let mut b = be[8 - width..].to_vec();
        if self.order == ByteOrder::Little {
            b.reverse();
        }
        out[..width].copy_from_slice(&b);
    }

    fn sample_bytes(&self, v: f64, out: &mut [u8]) {
        let n = self.format.bytes();
        let bits = match self.format {
            SampleFormat::IbmFloat32 => u64::from(f64_to_ibm(v).unwrap()),
            SampleFormat::IeeeFloat32 => u64::from((v as f32).to_bits()),
            SampleFormat::IeeeFloat64 => v.to_bits(),
            _ => v as i64 as u64, // two's complement, cut to the width by `put`
        };
        self.put(out, bits, n);
    }

    /// The file's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        let mut text = vec![b' '; 3200];
        for (i, line) in [
            "C 1 TEST FIXTURE OF DISTLOPS-IO",
            "C 2 WRITTEN BYTE BY BYTE",
        ]
        .iter()
        .enumerate()
        {
            text[80 * i..80 * i + line.len()].copy_from_slice(line.as_bytes());
        }
        let mut out = text;
        let mut bin = vec![0u8; 400];
        let rev2 = self.order == ByteOrder::Little || self.format.code() > 8;
        let ext = if self.ext_variable {
            u64::from(u16::MAX) // -1
        } else {
            self.ext_blocks as u64
        };
        for (byte, v, w) in [
            (3201, 4242, 4),
            (3213, self.n_xl as u64, 2),
            (3217, u64::from(self.dt_us), 2),
            (3221, self.nt as u64, 2),
            (3225, self.format.code() as u64, 2),
            (3501, if rev2 { 0x0200 } else { 0x0100 }, 2),
            (3503, 1, 2),
            (3505, ext, 2),
        ] {
            self.put(&mut bin[byte - 3201..], v, w);
        }
        if rev2 {
            self.put(&mut bin[3297 - 3201..], 0x0102_0304, 4);
        }
        out.extend_from_slice(&bin);
        for b in 0..self.ext_blocks {
            let mut block = vec![b' '; 3200];
            let line = if self.ext_variable && b + 1 == self.ext_blocks {
                "((SEG: EndText))".to_string()
            } else {
                format!("EXTENDED TEXTUAL HEADER {}", b + 1)
            };
            block[..line.len()].copy_from_slice(line.as_bytes());
            out.extend_from_slice(&block);
        }
        for (k, (il, xl)) in self.traces().into_iter().enumerate() {
            let mut h = vec![0u8; 240];
            for (f, v) in [
                (HeaderField::i32(1), k as i64 + 1),
                (HeaderField::i16(109), i64::from(self.delay_ms)),
                (HeaderField::u16(115), self.nt as i64),
                (HeaderField::u16(117), i64::from(self.dt_us)),
                (HeaderField::i32(181), 1000 * il as i64),
                (HeaderField::i32(185), -(xl as i64)),
                (self.iline, self.iline_number(il)),
                (self.xline, self.xline_number(xl)),
            ] {
                self.put(&mut h[f.byte - 1..], v as u64, f.width.bytes());
            }
            out.extend_from_slice(&h);
            let mut s = vec![0u8; self.nt * self.format.bytes()];
            for (t, c) in s.chunks_exact_mut(self.format.bytes()).enumerate() {
                self.sample_bytes(self.value(il, xl, t), c);
            }
            out.extend_from_slice(&s);
        }
        out
    }

    /// Writes the file.
    pub fn write(&self, path: &Path) {
        std::fs::write(path, self.bytes()).unwrap();
    }
}
