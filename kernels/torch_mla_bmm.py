#!/usr/bin/env python3
"""dbosim calibration: MLA decode's two absorbed per-head products as vLLM launches them (MLACommonImpl.forward: q_nope
times W_UK_T before FlashMLA, the attention output times W_UV after it): torch.bmm (cuBLAS strided-batched GEMM) of
the heads-first transpose of a [tokens, heads, k] BF16 activation by a [heads, k, n] weight. DeepSeek-V3's shapes: k
128 -> n 512 (W_UK) and k 512 -> n 128 (W_UV), at 128 heads and at its TP2 and TP8 slices (64, 16). Timed like the
other families (CUDA events around each repeat, each after a 256 MiB fill that evicts the L2; median of 5-40 repeats),
and once captured in a CUDA graph (extra.us_graph). Appends family "head_bmm_bf16" to RAW (JSON lines; resumable).

usage: kernels/torch_mla_bmm.py RAW.jsonl"""
import json, os, sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from raw_records import done_keys, gpu_environment, record_key  # noqa: E402
from triton_mla_decode import time_us  # noqa: E402  (the same event timing as the other families' records)

FAMILY = "head_bmm_bf16"
PRODUCTS = [(128, 512), (512, 128)]  # (k, n): q_nope x W_UK_T, then out x W_UV
TOKENS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]


class HeadBmm:
    """One product: the activation allocated tokens-first, as the attention layer holds it, and multiplied through its
    heads-first view."""

    def __init__(self, heads, tokens, k, n):
        self.x = torch.randn(tokens, heads, k, device="cuda", dtype=torch.bfloat16)
        self.w = torch.randn(heads, k, n, device="cuda", dtype=torch.bfloat16) / k ** 0.5
        self.out = torch.empty(heads, tokens, n, device="cuda", dtype=torch.bfloat16)

    def __call__(self):
        torch.bmm(self.x.transpose(0, 1), self.w, out=self.out)

    def check(self):
        self()
        ref = torch.einsum("thk,hkn->htn", self.x.float(), self.w.float())
        err = ((self.out.float() - ref).norm() / ref.norm()).item()
        if not err < 1e-2:
            raise RuntimeError(f"bmm differs from the float32 product: relative error {err:.3g}")
        return err

    def capture(self):
        self(); torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            self()
        return g.replay


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    path = sys.argv[1]
    done = done_keys(path)
    env = None  # read after the first timed point: before it the GPU idles and nvidia-smi reports its idle clock
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    out = open(path, "a")
    for heads in [128, 64, 16]:
        for k, n in PRODUCTS:
            for t in TOKENS:
                params = {"heads": heads, "k": k, "n": n, "tokens": t}
                key = record_key(FAMILY, params)
                if key in done:
                    continue
                op = HeadBmm(heads, t, k, n)
                err = op.check()
                med, p10, p90, reps = time_us(op, flush)
                graph_us = time_us(op.capture(), flush)[0]
                env = env or gpu_environment()
                moved = 2.0 * heads * (t * k + k * n + t * n)
                rec = {"key": key, "family": FAMILY, "params": {a: float(v) for a, v in params.items()}, "status": "ok",
                       "us": med, "us_p10": p10, "us_p90": p90, "reps": reps,
                       "extra": {"us_graph": graph_us, "gbps": moved / med / 1e3,
                                 "tflops": 2.0 * heads * t * k * n / med / 1e6},
                       "info": dict(env, impl="torch.bmm (cuBLAS strided-batched BF16) of x.transpose(0, 1), "
                                             "x [tokens, heads, k], by w [heads, k, n]; checked against fp32 "
                                             f"(rel err {err:.1e})")}
                out.write(json.dumps(rec, sort_keys=True) + "\n"); out.flush()
                print(key, f"{med:.2f} us (graph {graph_us:.2f})", f"{rec['extra']['gbps']:.0f} GB/s", flush=True)
                del op


if __name__ == "__main__":
    main()
