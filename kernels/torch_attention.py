#!/usr/bin/env python3
"""dbosim calibration: causal prefill attention through PyTorch's fused SDPA kernels (cuDNN / FlashAttention),
appended to the raw-results file as family "attention_prefill_sdpa" (same JSON-lines format as
dbosim-calibrate-run, resumable: keys already present are skipped). The fused kernels are what serving engines run;
the C++ suite's unfused cuBLAS attention is kept for the SM-partition curves.

usage: torch_attention.py RAW.jsonl [--quick]"""
import json, os, sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from raw_records import done_keys, record_key  # noqa: E402

SHAPES = [(128, 192), (64, 128), (32, 128), (16, 192)]  # (heads, head_dim), as the C++ suite
BACKENDS = [("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION)]


def main():
    path, quick = sys.argv[1], "--quick" in sys.argv
    done = done_keys(path)
    out = open(path, "a")
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    tokens = [512, 4096] if quick else sorted({128 << i for i in range(8)} | {192 << i for i in range(7)})
    for heads, d in SHAPES[:1] if quick else SHAPES:
        for t in tokens:
            params = {"heads": heads, "head_dim": d, "tokens": t}
            k = record_key("attention_prefill_sdpa", params)
            if k in done:
                continue
            q, kk, v = (torch.randn(1, heads, t, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            rec = {"key": k, "family": "attention_prefill_sdpa", "params": {n: float(x) for n, x in params.items()}}
            for name, backend in BACKENDS:
                try:
                    with sdpa_kernel([backend]):
                        run = lambda: F.scaled_dot_product_attention(q, kk, v, is_causal=True)
                        run(); run(); torch.cuda.synchronize()
                        starts = [torch.cuda.Event(enable_timing=True) for _ in range(30)]
                        ends = [torch.cuda.Event(enable_timing=True) for _ in range(30)]
                        est = starts[0]; est.record(); run(); ends[0].record(); torch.cuda.synchronize()
                        reps = max(5, min(30, int(25.0 / max(starts[0].elapsed_time(ends[0]), 1e-3))))
                        for i in range(reps):
                            flush.fill_(i & 0xFF)
                            starts[i].record(); run(); ends[i].record()
                        torch.cuda.synchronize()
                    us = sorted(1e3 * s.elapsed_time(e) for s, e in zip(starts[:reps], ends[:reps]))
                    q10 = us[int(0.1 * (reps - 1))]; q90 = us[int(round(0.9 * (reps - 1)))]
                    med = us[reps // 2] if reps % 2 else 0.5 * (us[reps // 2 - 1] + us[reps // 2])
                    flops = heads * t * t * (d + d)  # causal: half of 2 T^2 (d + d)
                    rec.update(status="ok", us=med, us_p10=q10, us_p90=q90, reps=reps,
                               extra={"tflops": flops / med / 1e6},
                               info={"impl": f"torch {torch.__version__} SDPA backend {name}, causal, v dim = qk dim"})
                    break
                except Exception as e:  # this backend does not take the shape: try the next one
                    rec.update(status=f"skipped: no SDPA backend ran ({name}: {str(e)[:120]})")
            out.write(json.dumps(rec, sort_keys=True) + "\n"); out.flush(); os.fsync(out.fileno())
            print(k, rec["status"], round(rec.get("us", 0), 1), rec.get("info", {}).get("impl", ""), flush=True)
            del q, kk, v


if __name__ == "__main__":
    main()
