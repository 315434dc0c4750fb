"""Write a post-stack SEG-Y cube with segyio: the independent writer of distlops-io's tests.

    segyio_write.py OUT.sgy --nil 5 --nxl 7 --nt 50 [--il0 100 --il-step 2 --xl0 20 --xl-step 1]
        [--dt-us 2000] [--delay-ms 100] [--format 1|5] [--sorting inline|crossline]
        [--ext-headers N] [--data CUBE.npy]

The samples are CUBE.npy (shape (nil, nxl, nt)) or, without --data, a smooth pattern. Every trace
header gets its inline and crossline (bytes 189, 193), sequence numbers, CDP x/y with a scalar,
offset, delay, sample count and interval; the binary header a job id and the measurement system;
the textual header and each extended header known lines.
"""
import argparse

import numpy as np
import segyio
from segyio import BinField, TraceField


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--nil", type=int, required=True)
    p.add_argument("--nxl", type=int, required=True)
    p.add_argument("--nt", type=int, required=True)
    p.add_argument("--il0", type=int, default=100)
    p.add_argument("--il-step", type=int, default=2)
    p.add_argument("--xl0", type=int, default=20)
    p.add_argument("--xl-step", type=int, default=1)
    p.add_argument("--dt-us", type=int, default=2000)
    p.add_argument("--delay-ms", type=int, default=100)
    p.add_argument("--format", type=int, default=1, choices=[1, 5])
    p.add_argument("--sorting", default="inline", choices=["inline", "crossline"])
    p.add_argument("--ext-headers", type=int, default=0)
    p.add_argument("--data")
    a = p.parse_args()

    ilines = a.il0 + a.il_step * np.arange(a.nil)
    xlines = a.xl0 + a.xl_step * np.arange(a.nxl)
    if a.data:
        cube = np.load(a.data)
        if cube.shape != (a.nil, a.nxl, a.nt):
            raise SystemExit(f"{a.data} has shape {cube.shape}, not {(a.nil, a.nxl, a.nt)}")
    else:
        i, x, t = np.meshgrid(np.arange(a.nil), np.arange(a.nxl), np.arange(a.nt), indexing="ij")
        cube = 1000.0 * np.sin(0.3 * t + 0.2 * i) * np.cos(0.1 * x) + 0.125 * t

    spec = segyio.spec()
    spec.iline, spec.xline = 189, 193
    spec.ilines, spec.xlines = ilines, xlines
    spec.samples = a.delay_ms + a.dt_us / 1000.0 * np.arange(a.nt)
    spec.format = a.format
    spec.sorting = (segyio.TraceSortingFormat.INLINE_SORTING if a.sorting == "inline"
                    else segyio.TraceSortingFormat.CROSSLINE_SORTING)
    spec.ext_headers = a.ext_headers
    if a.sorting == "inline":
        order = [(i, x) for i in range(a.nil) for x in range(a.nxl)]
    else:
        order = [(i, x) for x in range(a.nxl) for i in range(a.nil)]
    with segyio.create(a.out, spec) as f:
        f.text[0] = segyio.tools.create_text_header({
            1: "WRITTEN BY SEGYIO FOR THE DISTLOPS-IO TESTS",
            2: f"CUBE {a.nil} INLINES X {a.nxl} CROSSLINES X {a.nt} SAMPLES, {a.sorting.upper()} SORTED",
            3: "INLINE BYTES 189-192, CROSSLINE BYTES 193-196",
            40: "END TEXTUAL HEADER",
        }).encode()
        for e in range(a.ext_headers):
            f.text[e + 1] = segyio.tools.create_text_header({1: f"EXTENDED HEADER {e + 1}"}).encode()
        f.bin.update({BinField.JobID: 4242, BinField.LineNumber: 7, BinField.MeasurementSystem: 1,
                      BinField.SortingCode: 4})
        for k, (i, x) in enumerate(order):
            f.header[k] = {
                TraceField.TRACE_SEQUENCE_LINE: x + 1,
                TraceField.TRACE_SEQUENCE_FILE: k + 1,
                TraceField.CDP: k + 1,
                TraceField.offset: 1,
                TraceField.SourceGroupScalar: -100,
                TraceField.CDP_X: 4500000 + 2500 * i,
                TraceField.CDP_Y: 67000000 + 2500 * x,
                TraceField.DelayRecordingTime: a.delay_ms,
                TraceField.TRACE_SAMPLE_COUNT: a.nt,
                TraceField.TRACE_SAMPLE_INTERVAL: a.dt_us,
                TraceField.INLINE_3D: int(ilines[i]),
                TraceField.CROSSLINE_3D: int(xlines[x]),
            }
            f.trace[k] = cube[i, x].astype(np.float32)


if __name__ == "__main__":
    main()
