#!/usr/bin/env python3
"""dbosim calibration: absorbed MLA decode with FlashMLA (deepseek-ai/FlashMLA), the kernel vLLM and SGLang run for
MLA decode on Hopper. Builds FlashMLA's dense sm90 decode (the split-KV kernel, its scheduling-metadata kernel and
its combine kernel; nothing else of FlashMLA) as a PyTorch extension from a FlashMLA checkout, checks it against a
float32 reference, then times the calibration grid of mla_decode (calibrate/SuitePlan.cpp) and the short contexts 64,
128 and 256 below it, and appends family "mla_decode_flashmla" to the raw-results file (same JSON lines as
dbosim-calibrate-run; resumable: keys already present are skipped). One query token per request; K is the 576-wide
cache entry (512 latent + 64 rope), V its first 512 columns; paged KV, page 64; BF16.

Each point is timed as vLLM runs it per layer: the scheduling metadata is computed once (vLLM: once per step, shared by
all layers), then the decode + combine kernels are timed like the other families: CUDA events around each repeat, each
repeat after a 256 MiB fill (which evicts the 60 MB L2 and holds the GPU while the host queues the call); median of
5-40 repeats ("us"). extra.us_graph times the same two kernels captured in one CUDA graph and replayed, and
extra.us_with_metadata a call that also computes the metadata (the first layer of a step).

FLASHMLA_SRC: a FlashMLA checkout (its csrc/ with csrc/cutlass/include filled, i.e. the submodule checked out; or give
CUTLASS=a CUTLASS include folder). FLASHMLA_BUILD: the build folder (default build-gpu/flashmla-build beside this
repository's kernels/; a second run reuses it). FLASHMLA_COMMIT, FLASHMLA_CUTLASS_COMMIT: recorded in the records (default: each checkout's
git HEAD, else its COMMIT file). MAX_JOBS: parallel compile jobs (default 16).

usage: FLASHMLA_SRC=DIR kernels/flashmla_decode.py RAW.jsonl [--quick] [--check-only]"""
import json, math, os, subprocess, sys, time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from raw_records import done_keys, gpu_environment, record_key  # noqa: E402
from triton_mla_decode import time_us  # noqa: E402  (the same event timing as the Triton family's records)

DL, DR, PAGE = 512, 64, 64
SCALE = 1.0 / math.sqrt(192.0)  # the model's q.k head dim (128 nope + 64 rope), as in triton_mla_decode.py
FAMILY = "mla_decode_flashmla"

# Our own binding: exposes FlashMLA's dense decode entry point (its header csrc/api/dense_decode.h) and nothing else.
BINDING = r"""
#include <pybind11/pybind11.h>
#include "dense_decode.h"
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("dense_decode_fwd", &dense_attn_decode_interface); }
"""


def source_commit(src):
    """The checkout's HEAD when src is the top of a git work tree (not a folder inside another repository), else the
    commit named by its COMMIT file (a copy exported with git archive), else 'unknown'."""
    try:
        top = subprocess.check_output(["git", "-C", src, "rev-parse", "--show-toplevel"], stderr=subprocess.DEVNULL,
                                      text=True).strip()
        if os.path.realpath(top) == os.path.realpath(src):
            return subprocess.check_output(["git", "-C", src, "rev-parse", "HEAD"], text=True).strip()
    except Exception:
        pass
    path = os.path.join(src, "COMMIT")
    return open(path).read().strip() if os.path.exists(path) else "unknown"


def build(src):
    """Compiles (or reuses) the extension; returns (module, seconds spent, nvcc flags)."""
    from torch.utils import cpp_extension
    csrc = os.path.join(src, "csrc")
    cutlass = os.environ.get("CUTLASS", os.path.join(csrc, "cutlass", "include"))
    for need in [os.path.join(csrc, "api", "dense_decode.h"), os.path.join(cutlass, "cute", "tensor.hpp")]:
        if not os.path.exists(need):
            raise SystemExit(f"FLASHMLA_SRC/CUTLASS: {need} is missing (FlashMLA checkout with its cutlass submodule?)")
    here = os.path.dirname(os.path.abspath(__file__))
    bdir = os.path.abspath(os.environ.get("FLASHMLA_BUILD", os.path.join(here, "..", "build-gpu", "flashmla-build")))
    os.makedirs(bdir, exist_ok=True)
    binding = os.path.join(bdir, "flashmla_dense_binding.cpp")
    if not os.path.exists(binding) or open(binding).read() != BINDING:
        open(binding, "w").write(BINDING)
    os.environ.setdefault("MAX_JOBS", "16")
    os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0a"  # wgmma/setmaxnreg need sm_90a; no plain sm_90 pass
    common = ["-O3", "-std=c++20", "-DNDEBUG", "-DFLASH_MLA_DISABLE_FP16", "-Wno-deprecated-declarations"]
    nvcc = common + ["-D_USE_MATH_DEFINES", "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
                     "-U__CUDA_NO_HALF2_OPERATORS__", "-U__CUDA_NO_BFLOAT16_CONVERSIONS__", "--expt-relaxed-constexpr",
                     "--expt-extended-lambda", "--use_fast_math", "-gencode", "arch=compute_90a,code=sm_90a"]
    sources = [binding] + [os.path.join(csrc, p) for p in [
        "sm90/decode/dense/instantiations/bf16.cu",
        "smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.cu",
        "smxx/decode/combine/combine.cu"]]
    # CUDA 13 keeps libcu++ (cuda/std/...) under include/cccl: nvcc finds it, the host compiler of the binding not
    cccl = [d for d in [os.path.join(cpp_extension.CUDA_HOME or "/usr/local/cuda", "include", "cccl")] if os.path.isdir(d)]
    t0 = time.time()
    mod = cpp_extension.load(name="flashmla_dense_sm90", sources=sources, build_directory=bdir,
                             extra_cflags=common, extra_cuda_cflags=nvcc,
                             extra_include_paths=[csrc, os.path.join(csrc, "api"), os.path.join(csrc, "sm90"),
                                                  os.path.join(csrc, "kerutils", "include"), cutlass] + cccl,
                             verbose=os.environ.get("FLASHMLA_VERBOSE") == "1")
    return mod, time.time() - t0, " ".join(nvcc)


class FlashMlaDecode:
    """One (batch, context, heads) point: its inputs, its scheduling metadata, and a replayable call."""

    def __init__(self, mod, q, kv, bt, seqlens):
        self.mod, self.q, self.kv, self.bt, self.seqlens = mod, q, kv, bt, seqlens
        # the first call computes the scheduling metadata (FlashMLA's get_decoding_sched_meta kernel); later calls
        # reuse it, as vLLM does across the layers of one step
        out, lse, self.meta, self.splits = mod.dense_decode_fwd(q, kv, DL, seqlens, bt, SCALE, False, None, None)
        self.meta_parts = self.meta.shape[0]
        self.graph = None

    def __call__(self):
        return self.mod.dense_decode_fwd(self.q, self.kv, DL, self.seqlens, self.bt, SCALE, False, self.meta,
                                         self.splits)[0]

    def with_metadata(self):
        """One call that also computes the scheduling metadata (what the first layer of a step pays)."""
        return self.mod.dense_decode_fwd(self.q, self.kv, DL, self.seqlens, self.bt, SCALE, False, None, None)[0]

    def capture(self):
        self()  # warm the allocator before capture
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            self.out = self()
        self.graph = g
        return g.replay


def make_inputs(B, ctx, H, seed=0, lens=None):
    """q [B, 1, H, 576], paged cache [pages, 64, 1, 576] (random, never zeros), a shuffled page table."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    per = -(-ctx // PAGE)
    pages = B * per
    q = torch.randn(B, 1, H, DL + DR, device="cuda", dtype=torch.bfloat16, generator=g)
    kv = torch.randn(pages, PAGE, 1, DL + DR, device="cuda", dtype=torch.bfloat16, generator=g)
    bt = torch.randperm(pages, device="cuda", generator=g).to(torch.int32).reshape(B, per)
    seqlens = torch.tensor(lens if lens is not None else [ctx] * B, dtype=torch.int32, device="cuda")
    return q, kv, bt, seqlens


def reference(q, kv, bt, seqlens):
    out = []
    for b in range(q.shape[0]):
        n = int(seqlens[b])
        k = kv[bt[b].long()].reshape(-1, DL + DR)[:n].float()
        s = q[b, 0].float() @ k.T * SCALE
        out.append(torch.softmax(s, -1) @ k[:, :DL])
    return torch.stack(out)  # [B, H, 512]


def check(mod):
    """Relative error against float32 on fresh random inputs, every head count of the grid, equal and ragged
    contexts (ragged: lengths not multiples of the page); raises on a mismatch or a non-finite output."""
    worst = 0.0
    for seed, (B, ctx, H, lens) in enumerate([(3, 1024, 128, None), (5, 2048, 64, None), (4, 4096, 16, None),
                                              (6, 777, 128, [777, 1, 64, 65, 500, 300]),
                                              (2, 33000, 16, [33000, 129])]):
        q, kv, bt, sl = make_inputs(B, ctx, H, seed=100 + seed, lens=lens)
        op = FlashMlaDecode(mod, q, kv, bt, sl)
        got = op().float().reshape(B, H, DL)
        g = op.capture()
        op.out.fill_(float("nan"))  # poison: the replay must write every element
        g()
        torch.cuda.synchronize()
        replay = op.out.float().reshape(B, H, DL)
        ref = reference(q, kv, bt, sl)
        for name, x in [("eager", got), ("graph", replay)]:
            if not torch.isfinite(x).all():
                raise RuntimeError(f"FlashMLA {name} output not finite (B={B} ctx={ctx} H={H})")
            err = ((x - ref).norm() / ref.norm()).item()
            if not err < 2e-2:
                raise RuntimeError(f"FlashMLA {name} differs from the reference: rel err {err:.3g} "
                                   f"(B={B} ctx={ctx} H={H})")
            worst = max(worst, err)
        print(f"check B={B} ctx={ctx} heads={H} lens={'ragged' if lens else 'equal'}: "
              f"rel err {((replay - ref).norm() / ref.norm()).item():.2e}, sm_parts {op.meta_parts}", flush=True)
    return worst


def environment(commit, cutlass_commit):
    try:
        nvcc = subprocess.check_output(["nvcc", "--version"], text=True).strip().splitlines()[-1]
    except Exception:
        nvcc = "unknown"
    return dict(gpu_environment(), nvcc=nvcc, flashmla_commit=commit, cutlass_commit=cutlass_commit)


def grid(quick):
    contexts = [1024, 8192] if quick else [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
    batches = [1, 16, 128] if quick else [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256]  # token_grid(1, 256, 16)
    for H in [128] if quick else [128, 64, 16]:
        for ctx in contexts:
            for B in batches:
                yield B, ctx, H


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        raise SystemExit(__doc__)
    path, quick, check_only = args[0], "--quick" in sys.argv, "--check-only" in sys.argv
    src = os.environ.get("FLASHMLA_SRC")
    if not src:
        raise SystemExit("set FLASHMLA_SRC to a FlashMLA checkout (with its cutlass submodule)")
    commit = os.environ.get("FLASHMLA_COMMIT") or source_commit(src)
    cutlass_commit = os.environ.get("FLASHMLA_CUTLASS_COMMIT") or source_commit(os.path.join(src, "csrc", "cutlass"))
    if "unknown" in (commit, cutlass_commit):  # the records must name the trees they were built from
        raise SystemExit(f"FlashMLA {commit}, CUTLASS {cutlass_commit}: set FLASHMLA_COMMIT / FLASHMLA_CUTLASS_COMMIT")
    major, minor = torch.cuda.get_device_capability(0)
    if (major, minor) != (9, 0):
        raise SystemExit(f"FlashMLA's dense decode needs sm_90a (Hopper); this GPU is sm_{major}{minor}")
    mod, build_s, flags = build(src)
    print(f"built FlashMLA {commit[:7]} dense sm90 decode in {build_s:.0f} s ({flags})", flush=True)
    err = check(mod)
    print(f"correct: worst rel err {err:.2e} against float32", flush=True)
    if check_only:
        return
    env = environment(commit, cutlass_commit)
    done = done_keys(path)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    out = open(path, "a")
    t_start = time.time()
    for B, ctx, H in grid(quick):
        params = {"context": ctx, "heads": H, "tokens": B}
        key = record_key(FAMILY, params)
        if key in done:
            continue
        q, kv, bt, sl = make_inputs(B, ctx, H)
        op = FlashMlaDecode(mod, q, kv, bt, sl)
        med, p10, p90, reps = time_us(op, flush)  # eager, as the other families are timed
        graph_us = time_us(op.capture(), flush)[0]
        meta_us = time_us(op.with_metadata, flush)[0]
        flops = 2.0 * B * H * ctx * (DL + DR + DL)
        bytes_ = B * ctx * (DL + DR) * 2
        rows = "native" if H % 64 == 0 else f"{H} of the kernel's 64-row query tile used (FlashMLA masks the rest)"
        rec = {"key": key, "family": FAMILY, "params": {k: float(v) for k, v in params.items()},
               "status": "ok", "us": med, "us_p10": p10, "us_p90": p90, "reps": reps,
               "extra": {"tflops": flops / med / 1e6, "gbps": bytes_ / med / 1e3, "sm_parts": float(op.meta_parts),
                         "us_graph": graph_us, "us_with_metadata": meta_us},
               "info": dict(env, impl=f"FlashMLA {commit[:7]} dense sm90 decode (split-KV + combine, CUTLASS "
                                      f"{cutlass_commit[:7]}), paged KV page {PAGE}, metadata precomputed; checked against fp32 (rel err {err:.1e})",
                            heads=f"{H} query heads, 1 KV head: {rows}")}
        out.write(json.dumps(rec, sort_keys=True) + "\n"); out.flush(); os.fsync(out.fileno())
        print(key, f"{med:.1f} us (graph {graph_us:.1f}, with metadata {meta_us:.1f})",
              f"{rec['extra']['tflops']:.0f} TF/s", f"{rec['extra']['gbps']:.0f} GB/s", flush=True)
        del q, kv, bt, sl, op
    print(f"done: {len(list(grid(quick)))} points in the grid, {time.time() - t_start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
