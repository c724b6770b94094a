#!/usr/bin/env python3
"""Summarises the SM-table diagnostics of one device call (validate/testbed/diag/README.md, "Why the SM tables were
too pessimistic"): prints the tables the README quotes and writes sm_table_diag_summary.csv beside this script.

    python3 validate/testbed/diag/sm_table_diag.py          (from the repository root; standard library only)

Inputs, all in this folder or the repository: sm_table_diag.jsonl (dbosim-smtable-diag), sm_table_testbed_rerun/
(the overlap testbed in the same device call), sm_table_cold_rerun.jsonl (the sm_table family with the cold-L2 timing
in the same call), tests/data/calib/h200_raw.jsonl (run 3: cold L2, an earlier call; run 7: settled, the same call),
sm_table_device_nvidia_smi.csv (nvidia-smi every 100 ms over the whole call)."""
import collections
import csv
import glob
import json
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
MODES = ["calib", "noflush", "isolated", "settled", "settled_notarget", "settled_comm"]


def jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def testbed_ops(folder):
    """Median duration of each op kind per (kind, tokens, compute SMs) in the testbed recordings of a folder."""
    ops = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path) as f:
            trace = json.load(f)
        shape, variant = trace["otherData"]["plan"].split("__")
        total = int(shape.split("_")[1][1:])
        tokens = total // 2 if variant.startswith("dbo") else total
        sms = trace["otherData"]["partition_compute_sms"] or 132
        by_kind = collections.defaultdict(list)
        for e in trace["traceEvents"]:
            by_kind[e["name"]].append(e["dur"])
        for kind, durs in by_kind.items():
            ops[(kind, tokens, sms)] = statistics.median(durs)
    return ops


def sm_table_us(records, settled):
    """us per (variant, n, k, sms, tokens) of the sm_table records with (settled) or without a settle_ms parameter."""
    out = {}
    for r in records:
        if r.get("family") != "sm_table" or r.get("status") != "ok":
            continue
        p = r["params"]
        if ("settle_ms" in p) != settled or "rest_ms" in p:
            continue
        out[(r["variant"], int(p["n"]), int(p["k"]), int(p["sms"]), int(p["tokens"]))] = r["us"]
    return out


def speeds(us):
    return {key: us[key[:3] + (132,) + key[4:]] / v for key, v in us.items() if key[3] != 132
            and key[:3] + (132,) + key[4:] in us}


def main():
    diag = jsonl(os.path.join(HERE, "sm_table_diag.jsonl"))
    print("(d) green contexts: requested SMs, default split, the context's SM count, SM ids seen by a kernel")
    for r in diag:
        if r["what"] == "partition" and "green_ctx_sms" in r:
            print(f"  {r['sms_requested']:4d}: default split {r['default_split_sms']} (+{r['default_split_remaining']}),"
                  f" coscheduling ignored {r['ignored_coscheduling']}, green context {r['green_ctx_sms']} SMs,"
                  f" {r['distinct_smids']} distinct %smid; rest {r['rest_green_ctx_sms']} SMs"
                  f" ({r['rest_distinct_smids']} ids, {r['smids_in_both']} shared)")

    tb = testbed_ops(os.path.join(HERE, "sm_table_testbed_rerun"))
    gemm = {(r["shape"], r["tokens"], r["sms"], r["mode"]): r for r in diag if r["what"] == "gemm"}
    rows = []
    print("\n(a)(b)(c)(e) the testbed's GEMMs, median us per mode [NVML SM clock MHz], vs the testbed op (same call)")
    print(f"  {'op':4} {'tok':>5} {'SMs':>4} " + " ".join(f"{m:>17}" for m in MODES) + "   testbed")
    for (shape, tokens, sms, mode) in sorted(gemm, key=lambda k: (k[1], k[0], -k[2])):
        if mode != "calib":
            continue
        cells, row = [], {"op": shape, "tokens": tokens, "sms": sms}
        for m in MODES:
            g = gemm.get((shape, tokens, sms, m))
            cells.append(f"{g['us']:9.1f} [{g['clk_med']:4.0f}]" if g else " " * 17)
            row[m + "_us"] = round(g["us"], 2) if g else ""
            row[m + "_clk_mhz"] = g["clk_med"] if g else ""
        t = tb.get((shape, tokens, sms))
        row["testbed_us"] = round(t, 2) if t else ""
        rows.append(row)
        print(f"  {shape:4} {tokens:5d} {sms:4d} " + " ".join(cells) + (f"   {t:7.1f}" if t else ""))
    with open(os.path.join(HERE, "sm_table_diag_summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)

    print("\n(b) 600 ms back-to-back runs of A1 (4096 tokens): median us per 50 ms, NVML clock and power every ~50 ms")
    for r in diag:
        if r["what"] != "trace":
            continue
        buckets = collections.defaultdict(list)
        for start, us in zip(r["rep_start_ms"], r["rep_us"]):
            buckets[int(start // 50)].append(us)
        step = max(1, len(r["sample_ms"]) // 12)
        print(f"  {r['sms']} SMs{' + comm' if r['comm_beside'] else ''}: "
              + " ".join(f"{statistics.median(v):.0f}" for _, v in sorted(buckets.items())))
        print("     MHz " + " ".join(f"{v:.0f}" for v in r["sample_mhz"][::step])
              + " | W " + " ".join(f"{v:.0f}" for v in r["sample_w"][::step]))

    raw = jsonl(os.path.join(ROOT, "tests", "data", "calib", "h200_raw.jsonl"))
    run3, run7 = speeds(sm_table_us(raw, False)), speeds(sm_table_us(raw, True))
    cold = speeds(sm_table_us(jsonl(os.path.join(HERE, "sm_table_cold_rerun.jsonl")), False))
    print("\nspeed t(132)/t(S) ratios per point, median [p10, p90] over every zoo shape, BF16 and FP8")
    for name, a, b in [("cold re-run / run 3 (both cold L2)", cold, run3), ("run 7 settled / run 3 cold", run7, run3),
                       ("run 7 settled / cold re-run", run7, cold)]:
        print(f"  {name}")
        for sms in (112, 100):
            parts = []
            for lo, hi in [(16, 128), (256, 1024), (2048, 4096), (8192, 16384)]:
                v = sorted(a[k] / b[k] for k in a if k in b and k[3] == sms and lo <= k[4] <= hi)
                parts.append(f"{lo}-{hi}: {statistics.median(v):.3f} [{v[len(v) // 10]:.3f}, "
                             f"{v[len(v) * 9 // 10]:.3f}]")
            print(f"    {sms} SMs  " + "  ".join(parts))

    print("\n(b) nvidia-smi every 100 ms over the call: SM clock, power, share of samples with the SW power cap active")
    with open(os.path.join(HERE, "sm_table_device_nvidia_smi.csv")) as f:
        smi = list(csv.reader(f))[1:]

    def seconds(ts):
        h, m, s = ts.split(" ")[1].split(":")
        return int(h) * 3600 + int(m) * 60 + float(s)

    t0 = seconds(smi[0][0])
    # phase ends in s after the call's start (sm_table_device_call.log: build 15 s, diag 43 s, testbed 47 s, settled
    # sm_table 167 s, cold sm_table 183 s, interference 185 s)
    phases = [("build", 15), ("diag", 43), ("testbed", 47.5), ("sm_table settled", 167), ("sm_table cold", 183),
              ("interference", 1e9)]
    acc = collections.defaultdict(lambda: ([], [], []))
    for r in smi:
        t = seconds(r[0]) - t0
        name = next(n for n, end in phases if t < end)
        clk, watts, capped = acc[name]
        clk.append(int(r[1].split()[0]))
        watts.append(float(r[2].split()[0]))
        capped.append(int(r[4], 16) & 0x4 != 0)
    for name, _ in phases:
        clk, watts, capped = acc[name]
        print(f"  {name:17} {len(clk):5d} samples  SM clock median {statistics.median(clk):.0f} (min {min(clk)}) MHz"
              f"  power median {statistics.median(watts):.0f} W  power cap active {100 * sum(capped) / len(capped):.0f}%")


if __name__ == "__main__":
    main()
