#!/usr/bin/env python3
"""Side-by-side table of distlops and PyLops-MPI benchmark records, with checksum agreement.

    python3 benchmarks/compare.py pylops.jsonl distlops.jsonl [...] [--json summary.json]
                                  [--tol 1e-10] [--triad-gbs X]

Reads JSON-lines files of records written by benchmarks/pylops/bench.py ("side": "pylops-mpi")
and by distlops' benchmark binary ("side": "distlops"), both with the fields of
benchmarks/WORKLOADS.md (workload, op, np, dtype, median_s, min_s, check, check_w,
cost, peak_rss_mb, ...). Records are matched by (workload, op, np, dtype); when a key occurs more
than once on a side, the last record read wins (a warning is printed). Lines that are not JSON
objects with a "side" field are skipped, so raw logs can be fed in.

For each pair, check, check_w and cost must agree to --tol relative (|a - b| <= tol * max(|a|, |b|);
both null also agrees, one null and not the other does not). Prints one Markdown table,

    workload | dtype | op | ranks | PyLops-MPI median | distlops median | speed-up | PyLops-MPI peak MiB
    | distlops peak MiB | checks

(speed-up = PyLops-MPI median / distlops median), then the mismatches and the unpaired records.
Records that carry "bytes" (bytes moved by the op, as counted by the distlops side) get a second
table with the achieved GB/s (bytes / median_s / 1e9) of both sides and its fraction of the STREAM
triad bandwidth: --triad-gbs X (GB/s, for every rank count), or else the triad record at the same
number of ranks found in the input (a record with "workload": "triad", of either side; its
bandwidth is its "gbs" field, or bytes / median_s / 1e9). Triad records need no partner.
--json FILE writes the matched rows.

Exit status: 0 when every record has its partner and every pair agrees, 1 otherwise, 2 on bad
usage or input. Standard library only.
"""

import argparse
import json
import math
import sys

SIDES = ("pylops-mpi", "distlops")
CHECK_FIELDS = ("check", "check_w", "cost")
WORKLOAD_ORDER = {f"W{i}": i for i in range(1, 100)}
DTYPE_ORDER = {"float64": 0, "complex128": 1}
OP_ORDER = {op: i for i, op in enumerate(
    ["matvec", "rmatvec", "cgls", "dot", "norm", "add", "scale"])}


def key_of(rec):
    """The matching key (workload, op, np, dtype)."""
    return (str(rec["workload"]), str(rec["op"]), int(rec["np"]), str(rec.get("dtype", "float64")))


def sort_key(key):
    w, op, np_, dtype = key
    return (WORKLOAD_ORDER.get(w, 1000), w, DTYPE_ORDER.get(dtype, 9), dtype,
            OP_ORDER.get(op, 1000), op, np_)


def triad_gbs_of(rec):
    """A triad record's bandwidth in GB/s: its "gbs" field, else bytes / median_s / 1e9."""
    if rec.get("gbs"):
        return float(rec["gbs"])
    if rec.get("bytes") and rec.get("median_s"):
        return float(rec["bytes"]) / float(rec["median_s"]) / 1e9
    return None


def load(paths):
    """({side: {key: record}}, {np: triad GB/s}) from JSON-lines files.

    Warns about duplicates and unknown sides."""
    out = {s: {} for s in SIDES}
    triads = {}
    for path in paths:
        try:
            f = open(path)
        except OSError as e:
            sys.exit(f"compare.py: {e}")
        with f:
            for lineno, line in enumerate(f, 1):
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if not isinstance(rec, dict) or "side" not in rec:
                    continue
                side = rec["side"]
                if side not in out:
                    print(f"warning: {path}:{lineno}: unknown side {side!r}, skipped",
                          file=sys.stderr)
                    continue
                try:
                    k = key_of(rec)
                except (KeyError, TypeError, ValueError) as e:
                    print(f"warning: {path}:{lineno}: record without {e}, skipped",
                          file=sys.stderr)
                    continue
                if k[0].lower() == "triad":
                    gbs = triad_gbs_of(rec)
                    if gbs is not None:
                        triads[k[2]] = gbs
                    continue
                if k in out[side]:
                    print(f"warning: {path}:{lineno}: second {side} record for {k}, "
                          "the later one is used", file=sys.stderr)
                out[side][k] = rec
    return out, triads


def rel_diff(a, b):
    """Relative difference |a - b| / max(|a|, |b|) (0 when both are 0); None if not comparable."""
    if a is None or b is None:
        return None
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        return None
    if math.isnan(a) or math.isnan(b):
        return math.inf
    scale = max(abs(a), abs(b))
    return 0.0 if scale == 0.0 else abs(a - b) / scale


def compare_checks(p, d, tol):
    """({field: rel diff or None}, [problems]) for the check fields of a pair."""
    diffs, problems = {}, []
    for f in CHECK_FIELDS:
        a, b = p.get(f), d.get(f)
        if a is None and b is None:
            diffs[f] = None
            continue
        r = rel_diff(a, b)
        diffs[f] = r
        if r is None:
            problems.append(f"{f}: pylops-mpi {a!r} vs distlops {b!r} (missing on one side)")
        elif not r <= tol:
            problems.append(f"{f}: pylops-mpi {a!r} vs distlops {b!r} (rel diff {r:.2e} > {tol:g})")
    return diffs, problems


def fmt_time(t):
    if t is None:
        return "-"
    t = float(t)
    if t >= 100:
        return f"{t:.1f} s"
    if t >= 1:
        return f"{t:.2f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3g} ms"
    return f"{t * 1e6:.3g} µs"


def fmt_mb(x):
    return "-" if x is None else f"{float(x):.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="JSON-lines files with records of both sides")
    ap.add_argument("--json", metavar="FILE", help="write the matched rows to FILE as JSON")
    ap.add_argument("--tol", type=float, default=1e-10, help="relative tolerance (default 1e-10)")
    ap.add_argument("--triad-gbs", type=float, default=None, metavar="X",
                    help="STREAM-triad bandwidth (GB/s) to compare records with 'bytes' against")
    args = ap.parse_args()

    recs, triads = load(args.files)
    py, rs = recs["pylops-mpi"], recs["distlops"]
    keys = sorted(set(py) | set(rs), key=sort_key)
    if not keys:
        print("compare.py: no records found", file=sys.stderr)
        return 2

    rows, mismatches, unpaired = [], [], []
    for k in keys:
        p, d = py.get(k), rs.get(k)
        w, op, np_, dtype = k
        if p is None or d is None:
            have = "distlops" if p is None else "pylops-mpi"
            unpaired.append(f"{w} {dtype} {op} np={np_}: only {have}")
            continue
        diffs, problems = compare_checks(p, d, args.tol)
        ok = not problems
        if not ok:
            mismatches.extend(f"{w} {dtype} {op} np={np_}: {msg}" for msg in problems)
        pm, dm = p.get("median_s"), d.get("median_s")
        speedup = (float(pm) / float(dm)) if pm and dm else None
        worst = max((v for v in diffs.values() if v is not None), default=None)
        rows.append({
            "workload": w, "op": op, "np": np_, "dtype": dtype,
            "name": p.get("name") or d.get("name"),
            "pylops_median_s": pm, "distlops_median_s": dm,
            "pylops_min_s": p.get("min_s"), "distlops_min_s": d.get("min_s"),
            "speedup": speedup,
            "pylops_peak_rss_mb": p.get("peak_rss_mb"), "distlops_peak_rss_mb": d.get("peak_rss_mb"),
            "pylops_per_iter_s": p.get("per_iter_s"), "distlops_per_iter_s": d.get("per_iter_s"),
            "check": {f: {"pylops": p.get(f), "distlops": d.get(f), "rel_diff": diffs[f]}
                      for f in CHECK_FIELDS},
            "max_rel_diff": worst,
            "checks_ok": ok,
            "bytes": d.get("bytes", p.get("bytes")),
        })

    print("| workload | dtype | op | ranks | PyLops-MPI median | distlops median "
          "| speed-up (pylops/distlops) | PyLops-MPI peak MiB | distlops peak MiB | checks |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        if r["checks_ok"]:
            checks = "ok" if r["max_rel_diff"] is None else f"ok ({r['max_rel_diff']:.0e})"
        else:
            checks = "**MISMATCH**"
        sp = "-" if r["speedup"] is None else f"{r['speedup']:.2f}x"
        print(f"| {r['workload']} | {r['dtype']} | {r['op']} | {r['np']} "
              f"| {fmt_time(r['pylops_median_s'])} | {fmt_time(r['distlops_median_s'])} | {sp} "
              f"| {fmt_mb(r['pylops_peak_rss_mb'])} | {fmt_mb(r['distlops_peak_rss_mb'])} "
              f"| {checks} |")

    with_bytes = [r for r in rows if r.get("bytes") and r.get("distlops_median_s")]
    if with_bytes:
        print()
        print("Achieved bandwidth (bytes counted by distlops / median, decimal GB/s), against the "
              "STREAM triad" + (f" of {args.triad_gbs:g} GB/s:" if args.triad_gbs else
                                " at the same number of ranks:"))
        print()
        print("| workload | dtype | op | ranks | MB moved | distlops GB/s | PyLops-MPI GB/s "
              "| triad GB/s | distlops / triad | PyLops-MPI / triad |")
        print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in with_bytes:
            nbytes = float(r["bytes"])
            gbs = nbytes / float(r["distlops_median_s"]) / 1e9
            pgbs = nbytes / float(r["pylops_median_s"]) / 1e9 if r.get("pylops_median_s") else None
            triad = args.triad_gbs or triads.get(r["np"])
            r["distlops_gbs"], r["pylops_gbs"], r["triad_gbs"] = gbs, pgbs, triad
            r["distlops_triad_fraction"] = gbs / triad if triad else None
            r["pylops_triad_fraction"] = pgbs / triad if triad and pgbs else None

            def pct(x):
                return "-" if x is None else f"{x:.0%}"

            print(f"| {r['workload']} | {r['dtype']} | {r['op']} | {r['np']} "
                  f"| {nbytes / 1e6:.1f} | {gbs:.2f} | {'-' if pgbs is None else f'{pgbs:.2f}'} "
                  f"| {'-' if not triad else f'{triad:.2f}'} "
                  f"| {pct(r['distlops_triad_fraction'])} | {pct(r['pylops_triad_fraction'])} |")

    if mismatches:
        print()
        print(f"CHECKSUM MISMATCHES ({len(mismatches)}, tolerance {args.tol:g} relative):")
        for m in mismatches:
            print(f"  MISMATCH {m}")
    if unpaired:
        print()
        print(f"RECORDS WITHOUT A PARTNER ({len(unpaired)}):")
        for u in unpaired:
            print(f"  MISSING {u}")

    if args.json:
        summary = {
            "tolerance": args.tol,
            "triad_gbs": args.triad_gbs,
            "triad_gbs_by_np": {str(k): v for k, v in sorted(triads.items())},
            "ok": not mismatches and not unpaired,
            "rows": rows,
            "mismatches": mismatches,
            "unpaired": unpaired,
        }
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
            f.write("\n")

    return 1 if (mismatches or unpaired) else 0


if __name__ == "__main__":
    sys.exit(main())
