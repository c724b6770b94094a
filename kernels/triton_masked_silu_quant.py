#!/usr/bin/env python3
"""dbosim evidence probe: SiLU-and-mul + per-token-group FP8 quantization on the masked expert layout of DeepEP
low-latency ([experts, buffer rows, 2H] with a valid-row count per expert), in two launch structures:
  - per_expert_group: one single-warp program per (expert, 128-column group), looping serially over the expert's
    valid rows (the structure of vLLM's Triton kernel in batched_deep_gemm_moe.py);
  - per_row_group: one program per (buffer row, group), rows past the expert's count exit at once (a
    bandwidth-shaped launch, as the later CUDA kernel intends).
Both are written here from the operation's definition. Each is timed inside a CUDA graph of R calls on R distinct
buffers (well over the L2), median of replays, and compared with the HBM roofline of the valid rows' bytes
(read 2H bf16, write H fp8 + H/128 fp32 scales). Writes JSON lines to OUT.

usage: triton_masked_silu_quant.py OUT.jsonl"""
import json
import sys

import torch
import triton
import triton.language as tl

R = 8
REPLAYS = 20
H = 2048              # DeepSeek-V3 expert intermediate size (down GEMM's K)
GROUP = 128
BUFFER_ROWS = 8192    # EP32 x a DP chunk of 256 tokens
EXPERTS = [9, 18, 36]  # local physical experts at EP32 / EP16 / EP8 with 288 slots
MEAN_ROWS = [16, 64, 128, 228, 256, 512]
FP8_MAX = 448.0


@triton.jit
def _per_expert_group(x, q, s, counts, rows, h: tl.constexpr, groups: tl.constexpr, block: tl.constexpr):
    pid = tl.program_id(0)
    e = pid // groups
    g = pid % groups
    n = tl.load(counts + e)
    cols = tl.arange(0, block)
    base = e.to(tl.int64) * rows
    for t in tl.range(0, n, num_stages=4):
        row = base + t
        gate = tl.load(x + row * 2 * h + g * block + cols).to(tl.float32)
        up = tl.load(x + row * 2 * h + h + g * block + cols).to(tl.float32)
        y = gate / (1.0 + tl.exp(-gate)) * up
        scale = tl.maximum(tl.max(tl.abs(y)), 1e-10) / 448.0
        tl.store(q + row * h + g * block + cols, (y / scale).to(q.dtype.element_ty))
        tl.store(s + row * groups + g, scale)


@triton.jit
def _per_row_group(x, q, s, counts, rows, h: tl.constexpr, groups: tl.constexpr, block: tl.constexpr):
    r = tl.program_id(0)
    g = tl.program_id(1)
    e = r // rows
    if r % rows >= tl.load(counts + e):
        return
    row = r.to(tl.int64)
    cols = tl.arange(0, block)
    gate = tl.load(x + row * 2 * h + g * block + cols).to(tl.float32)
    up = tl.load(x + row * 2 * h + h + g * block + cols).to(tl.float32)
    y = gate / (1.0 + tl.exp(-gate)) * up
    scale = tl.maximum(tl.max(tl.abs(y)), 1e-10) / 448.0
    tl.store(q + row * h + g * block + cols, (y / scale).to(q.dtype.element_ty))
    tl.store(s + row * groups + g, scale)


def launch(kind, x, q, s, counts, experts):
    groups = H // GROUP
    if kind == "per_expert_group":
        _per_expert_group[(experts * groups,)](x, q, s, counts, BUFFER_ROWS, H, groups, GROUP, num_warps=1)
    else:
        _per_row_group[(experts * BUFFER_ROWS, groups)](x, q, s, counts, BUFFER_ROWS, H, groups, GROUP, num_warps=1)


def graph_us(calls):
    """Median GPU time of one call: a graph of len(calls) calls, replayed, over len(calls)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for c in calls:
            c()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for c in calls:
            c()
    times = []
    for _ in range(REPLAYS):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0 / len(calls))
    return sorted(times)[len(times) // 2]


def main(out_path):
    torch.manual_seed(0)
    props = torch.cuda.get_device_properties(0)
    with open(out_path, "w") as out:
        for experts in EXPERTS:
            bufs = []
            for _ in range(R):
                x = torch.randn(experts * BUFFER_ROWS, 2 * H, device="cuda", dtype=torch.bfloat16)
                q = torch.empty(experts * BUFFER_ROWS, H, device="cuda", dtype=torch.float8_e4m3fn)
                s = torch.empty(experts * BUFFER_ROWS, H // GROUP, device="cuda", dtype=torch.float32)
                bufs.append((x, q, s))
            for mean in MEAN_ROWS:
                # Multinomial spread of the routed rows over the local experts (balanced routing's noise).
                total = mean * experts
                picks = torch.randint(0, experts, (total,), device="cuda")
                counts = torch.bincount(picks, minlength=experts).clamp(max=BUFFER_ROWS).to(torch.int32)
                valid = int(counts.sum())
                bytes_moved = valid * (2 * H * 2 + H + (H // GROUP) * 4)
                for kind in ("per_expert_group", "per_row_group"):
                    calls = [lambda b=b, k=kind: launch(k, b[0], b[1], b[2], counts, experts) for b in bufs]
                    us = graph_us(calls)
                    rec = {"kernel": kind, "device": props.name, "experts": experts, "hidden": H,
                           "buffer_rows": BUFFER_ROWS, "mean_rows": mean, "max_rows": int(counts.max()),
                           "valid_rows": valid, "us": round(us, 2),
                           "gb_s": round(bytes_moved / us / 1e3, 1)}
                    out.write(json.dumps(rec) + "\n")
                    print(rec, flush=True)
            del bufs
            torch.cuda.empty_cache()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
