#!/usr/bin/env python3
"""dbosim calibration check: small-M block-scaled FP8 GEMMs timed as the profile's tables are (CUDA events around one
launch, L2 flushed, the GPU held until the launch is queued: torch_serving_kernels.timed) against the same GEMMs as a
decode step runs them, back to back inside one CUDA graph. Each graph launches R calls over R distinct weight copies
(R x the weights well over the 50 MB L2, so every call reads its weights from HBM, as a step's layers do); the graph
time over R is a call's GPU time including the graph's per-kernel gap. Also the shared expert's sequence
(input quant, gate_up GEMM, fused SiLU-mul-quant, down GEMM: Triton quant kernels as torch_serving_kernels writes
them) the same ways. A third timing reads the 256 MiB flush buffer instead of writing it (clean_flush_timed).
Writes JSON lines to OUT.

usage: torch_small_gemm_in_graph.py OUT.jsonl"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_serving_kernels as tsk  # noqa: E402

R = 12          # calls per graph, each on its own weight copy
REPLAYS = 20    # graph replays timed (median)
SHAPES = [(4096, 7168), (7168, 2048), (24576, 1536), (7168, 16384), (36864, 7168), (7168, 18432)]  # n, k (multiples of 128)
TOKENS = [1, 16, 64]


def graph_us(calls):
    """Median GPU time of one replay of a graph that runs `calls` back to back, over len(calls)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for c in calls:
            c()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for c in calls:
            c()
    g.replay(); g.replay(); torch.cuda.synchronize()
    times = []
    for _ in range(REPLAYS):
        # No flush: the R weight copies are well over the L2, so each call's weights come from HBM anyway.
        torch.cuda._sleep(tsk.HOST_AHEAD_CYCLES)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record()
        torch.cuda.synchronize()
        times.append(1e3 * a.elapsed_time(b))
    times.sort()
    del g
    return times[len(times) // 2] / len(calls)


def clean_flush_timed(run):
    """tsk.timed, but L2 emptied by reading 256 MiB (clean lines) instead of writing it: the table method's fill_
    leaves the L2 full of dirty lines that the timed kernel's reads must write back to HBM first."""
    saved = tsk.FLUSH

    class ReadFlush:
        def fill_(self, _):
            torch.sum(saved, dtype=torch.int64)  # reads every byte, writes 8
    tsk.FLUSH = ReadFlush()
    try:
        return tsk.timed(run)[0]
    finally:
        tsk.FLUSH = saved


def main():
    out = open(sys.argv[1], "a")
    tsk.FLUSH = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    name, mm = tsk.block_scaled_mm()
    if mm is None:
        sys.exit("no block-scaled FP8 GEMM here")
    gpu = torch.cuda.get_device_name()

    def emit(rec):
        rec.update({"gpu": gpu, "impl": name, "torch": torch.__version__, "graph_calls": R})
        out.write(json.dumps(rec, sort_keys=True) + "\n")
        out.flush()
        print(json.dumps(rec, sort_keys=True), flush=True)

    for n, k in SHAPES:
        ws = [(torch.randn(n, k, device="cuda") * 0.02).to(torch.float8_e4m3fn) for _ in range(R)]
        for t in TOKENS:
            mp = tsk.pad16(t)
            a = torch.randn(mp, k, device="cuda").to(torch.float8_e4m3fn)
            sa, sb = tsk.block_scales(mp, n, k)
            table_us = tsk.timed(lambda: mm(a, ws[0].t(), sa, sb))[0]
            clean_us = clean_flush_timed(lambda: mm(a, ws[0].t(), sa, sb))
            in_graph = graph_us([(lambda w=w: mm(a, w.t(), sa, sb)) for w in ws])
            emit({"what": "gemm_fp8_block", "n": n, "k": k, "tokens": t, "rows": mp, "weight_mb": n * k / 1e6,
                  "table_method_us": table_us, "read_flush_us": clean_us, "in_graph_us": in_graph})
            del a, sa, sb
        del ws
        torch.cuda.empty_cache()

    # The shared expert (DeepSeek-V3: hidden 7168, intermediate 2048), R layers' weights.
    gq, smq = tsk.triton_kernels()
    hidden, inter = 7168, 2048
    ups = [(torch.randn(2 * inter, hidden, device="cuda") * 0.02).to(torch.float8_e4m3fn) for _ in range(R)]
    downs = [(torch.randn(hidden, inter, device="cuda") * 0.02).to(torch.float8_e4m3fn) for _ in range(R)]
    for t in TOKENS:
        mp = tsk.pad16(t)
        x = torch.randn(mp, hidden, device="cuda", dtype=torch.bfloat16)
        xq = torch.empty(mp, hidden, device="cuda", dtype=torch.float8_e4m3fn)
        xs = torch.empty(mp * hidden // 128, device="cuda", dtype=torch.float32)
        hq = torch.empty(mp, inter, device="cuda", dtype=torch.float8_e4m3fn)
        hs = torch.empty(mp * inter // 128, device="cuda", dtype=torch.float32)
        sa1, sb1 = tsk.block_scales(mp, 2 * inter, hidden)
        sa2, sb2 = tsk.block_scales(mp, hidden, inter)

        def shared(i):
            gq(x, xq, xs)
            h = mm(xq, ups[i].t(), sa1, sb1)
            smq(h, hq, hs, inter)
            return mm(hq, downs[i].t(), sa2, sb2)
        table_us = tsk.timed(lambda: shared(0))[0]
        clean_us = clean_flush_timed(lambda: shared(0))
        in_graph = graph_us([(lambda i=i: shared(i)) for i in range(R)])
        emit({"what": "shared_expert", "tokens": t, "rows": mp, "kernels": 4, "table_method_us": table_us,
              "read_flush_us": clean_us, "in_graph_us": in_graph})


if __name__ == "__main__":
    main()
