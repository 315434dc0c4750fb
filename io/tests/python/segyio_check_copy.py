"""Check with segyio that SEG-Y files distlops wrote from an input keep the input's headers.

    segyio_check_copy.py IN.sgy OUTDIR NAME [NAME ...]

For each NAME, OUTDIR/NAME.sgy must have the textual and extended headers of IN.sgy, every
binary header field of IN.sgy except the sample format (which must be 5, IEEE float), every trace
header field of every trace, the same inline and crossline numbers and sample times; and its
samples must be exp() of OUTDIR/NAME.npy (ln impedance) rounded to float32. Prints one line per
check and 'N passed, M failed'; exits 1 if any failed.
"""
import sys

import numpy as np
import segyio


def main():
    src, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    passed, failed = 0, 0

    def check(what, ok):
        nonlocal passed, failed
        print(f"{'ok    ' if ok else 'FAILED'} {what}")
        passed, failed = passed + ok, failed + (not ok)

    with segyio.open(src) as a:
        for name in names:
            with segyio.open(f"{out}/{name}.sgy") as b:
                check(f"{name}: textual and extended headers",
                      all(a.text[i] == b.text[i] for i in range(1 + a.ext_headers))
                      and a.ext_headers == b.ext_headers)
                abin, bbin = dict(a.bin), dict(b.bin)
                fmt = segyio.BinField.Format
                check(f"{name}: sample format 5 (input {abin[fmt]})", bbin[fmt] == 5)
                abin.pop(fmt), bbin.pop(fmt)
                check(f"{name}: every other binary header field", abin == bbin)
                check(f"{name}: every trace header of {a.tracecount} traces",
                      a.tracecount == b.tracecount
                      and all(dict(a.header[k]) == dict(b.header[k]) for k in range(a.tracecount)))
                check(f"{name}: inlines, crosslines and sample times",
                      list(a.ilines) == list(b.ilines) and list(a.xlines) == list(b.xlines)
                      and np.array_equal(a.samples, b.samples))
                cube = np.stack([b.iline[il] for il in b.ilines])
                expected = np.exp(np.load(f"{out}/{name}.npy")).astype(np.float32)
                check(f"{name}: samples are exp(.npy) in float32, shape {cube.shape}",
                      cube.shape == expected.shape and np.array_equal(cube, expected))
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
