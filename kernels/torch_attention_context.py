#!/usr/bin/env python3
"""dbosim calibration: prefill attention over a context through PyTorch's fused SDPA kernels.

A chunk of `tokens` new queries attends over `context` keys (its earlier chunks plus itself) under a causal mask
aligned bottom-right (torch.nn.attention.bias.causal_lower_right): query i sees context - tokens + i + 1 keys.
One request, bf16, v dim = qk dim (as attention_prefill_sdpa), cold L2 (a 256 MiB buffer is written before each
launch), median of 7 launches after 2 warm-ups. Every point, self-attention (context == tokens) included, is timed
through the same mask on the flash backend and on cuDNN, so that a chunk and the self-attention it is compared with
come from one kernel. Writes one JSON line per (shape, point, backend):
  {"heads", "head_dim", "tokens", "context", "us", "backend"}
tests/data/calib/h200_attention_context.jsonl came from this script (H200, torch 2.11.0+cu130);
tests/opcost_prefill_context_test.cpp checks models/PrefillAttention's rule against it.

usage: torch_attention_context.py OUT.jsonl"""
import json, sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.bias import causal_lower_right

SHAPES = [(128, 192), (64, 128)]  # (heads, head_dim): DeepSeek-V3 MLA prefill per rank at tp 1; Qwen3-235B
BACKENDS = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]
NEW = [512, 1024, 2048, 4096, 8192]
TOP = 32768
POINTS = sorted({(t, t << i) for t in NEW for i in range(7) if t << i <= TOP} |
                {(t, t) for t in [12288, 16384, 24576, 32768]})


def median_us(run, flush, n=7):
    run(); run(); torch.cuda.synchronize()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2 * n)]
    for i in range(n):
        flush.fill_(i)
        ev[2 * i].record(); run(); ev[2 * i + 1].record()
    torch.cuda.synchronize()
    us = sorted(1e3 * ev[2 * i].elapsed_time(ev[2 * i + 1]) for i in range(n))
    return us[n // 2]


def main():
    out = open(sys.argv[1], "w")
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for heads, d in SHAPES:
        for t, ctx in POINTS:
            q = torch.randn(1, heads, t, d, device="cuda", dtype=torch.bfloat16)
            k = torch.randn(1, heads, ctx, d, device="cuda", dtype=torch.bfloat16)
            v = torch.randn_like(k)
            for name, backend in BACKENDS:
                try:
                    with sdpa_kernel([backend]):
                        mask = causal_lower_right(t, ctx)
                        us = median_us(lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask), flush)
                    out.write(json.dumps({"heads": heads, "head_dim": d, "tokens": t, "context": ctx, "us": us,
                                          "backend": name}) + "\n")
                    out.flush()
                    print(heads, d, t, ctx, name, round(us, 1), flush=True)
                except Exception as e:  # this backend does not take the shape
                    print(heads, d, t, ctx, name, "fail", str(e)[:80])


if __name__ == "__main__":
    main()
