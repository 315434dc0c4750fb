#!/usr/bin/env python3
"""Summarise `cargo bench --bench kernels` from criterion's saved results (standard library only).

For every benchmark under target/criterion (or the directory given as the first argument, or
$CRITERION_HOME) prints the median time per iteration, the bandwidth from the benchmark's byte
throughput (decimal GB/s, medians) and the ratio to the STREAM triad (stream_1e7_f64/triad).
"""
import json
import os
import sys
from pathlib import Path

TRIAD = "stream_1e7_f64/triad"


def main() -> int:
    if len(sys.argv) > 1:
        root = Path(sys.argv[1])
    elif os.environ.get("CRITERION_HOME"):
        root = Path(os.environ["CRITERION_HOME"])
    else:
        target = Path(os.environ.get("CARGO_TARGET_DIR", Path(__file__).resolve().parent.parent / "target"))
        root = target / "criterion"
    rows = []
    for bench in sorted(root.glob("*/*/new/benchmark.json")):
        meta = json.loads(bench.read_text())
        est = json.loads((bench.parent / "estimates.json").read_text())
        median_ns = est["median"]["point_estimate"]
        tp = meta.get("throughput") or {}
        nbytes = tp.get("Bytes") or tp.get("BytesDecimal")
        gbs = nbytes / median_ns if nbytes else None  # bytes per ns = GB/s
        rows.append((meta["full_id"], median_ns, gbs))
    if not rows:
        print(f"no criterion results under {root}; run `cargo bench --bench kernels` first", file=sys.stderr)
        return 1
    triad = next((g for name, _, g in rows if name == TRIAD), None)
    print(f"{'benchmark':<32} {'median':>12} {'GB/s':>8} {'/ triad':>8}")
    for name, median_ns, gbs in rows:
        g = f"{gbs:8.2f}" if gbs else f"{'-':>8}"
        r = f"{gbs / triad:8.2f}" if gbs and triad else f"{'-':>8}"
        print(f"{name:<32} {median_ns / 1e6:9.3f} ms {g} {r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
