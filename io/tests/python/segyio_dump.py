"""Read a post-stack SEG-Y cube with segyio and dump what it finds, for distlops-io's tests.

    segyio_dump.py IN.sgy OUTDIR [--iline 189] [--xline 193]

Writes into OUTDIR (all .npy):
  cube.npy           float64 (n_il, n_xl, nt): the samples by inline, crossline, time
  ilines.npy         int64 inline numbers, in segyio's order
  xlines.npy         int64 crossline numbers
  samples.npy        float64 sample times in ms (segyio's f.samples)
  meta.npy           int64 [sorting (1 crossline, 2 inline), format, extended headers, dt in us]
  trace_fields.npy   int64 (n_fields, 2): byte and width of every segyio TraceField
  trace_headers.npy  int64 (n_traces, n_fields): every trace header field, traces in file order
  bin_fields.npy     int64 (n_fields, 2): byte and width of the binary header fields compared
  bin_header.npy     int64 (n_fields,): their values
  text.npy           uint8 (3200,): the textual header as segyio decodes it
"""
import argparse
import os

import numpy as np
import segyio
from segyio import BinField

# The binary header fields with their widths (segyio's BinField without aliases and unassigned).
BIN_FIELDS = [(int(f), 4 if int(f) < 3213 else 2) for f in [
    BinField.JobID, BinField.LineNumber, BinField.ReelNumber]] + [(int(f), 2) for f in [
    BinField.Traces, BinField.AuxTraces, BinField.Interval, BinField.IntervalOriginal,
    BinField.Samples, BinField.SamplesOriginal, BinField.Format, BinField.EnsembleFold,
    BinField.SortingCode, BinField.VerticalSum, BinField.SweepFrequencyStart,
    BinField.SweepFrequencyEnd, BinField.SweepLength, BinField.Sweep, BinField.SweepChannel,
    BinField.SweepTaperStart, BinField.SweepTaperEnd, BinField.Taper, BinField.CorrelatedTraces,
    BinField.BinaryGainRecovery, BinField.AmplitudeRecovery, BinField.MeasurementSystem,
    BinField.ImpulseSignalPolarity, BinField.VibratoryPolarity]] + [(int(f), 4) for f in [
    BinField.ExtAuxTraces, BinField.ExtSamples, BinField.ExtSamplesOriginal,
    BinField.ExtEnsembleFold]] + [(int(BinField.SEGYRevision), 1),
    (int(BinField.SEGYRevisionMinor), 1), (int(BinField.TraceFlag), 2),
    (int(BinField.ExtendedHeaders), 2)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("path")
    p.add_argument("out")
    p.add_argument("--iline", type=int, default=189)
    p.add_argument("--xline", type=int, default=193)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    save = lambda name, v: np.save(os.path.join(a.out, name + ".npy"), v)
    with segyio.open(a.path, iline=a.iline, xline=a.xline) as f:
        save("cube", np.stack([f.iline[il] for il in f.ilines]).astype(np.float64))
        save("ilines", np.asarray(f.ilines, dtype=np.int64))
        save("xlines", np.asarray(f.xlines, dtype=np.int64))
        save("samples", np.asarray(f.samples, dtype=np.float64))
        save("meta", np.array([f.sorting, int(f.format), f.ext_headers,
                               int(segyio.tools.dt(f, 0))], dtype=np.int64))
        fields = sorted(int(t) for t in segyio.TraceField.enums())
        widths = [b - a_ for a_, b in zip(fields, fields[1:] + [241])]
        save("trace_fields", np.array(list(zip(fields, widths)), dtype=np.int64))
        save("trace_headers", np.array([[h[t] for t in fields] for h in f.header],
                                       dtype=np.int64))
        save("bin_fields", np.array(BIN_FIELDS, dtype=np.int64))
        save("bin_header", np.array([f.bin[b] for b, _ in BIN_FIELDS], dtype=np.int64))
        save("text", np.frombuffer(bytes(f.text[0]), dtype=np.uint8))


if __name__ == "__main__":
    main()
