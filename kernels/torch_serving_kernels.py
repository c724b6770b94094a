#!/usr/bin/env python3
"""dbosim calibration: the kernels a serving engine runs, reached through PyTorch and Triton on the GPU node.

Appends JSON-lines records to RAW (the format of dbosim-calibrate-run; resumable: keys already present are skipped):
  grouped_gemm_bf16_torch        torch._grouped_mm (CUTLASS), ragged rows (DeepEP high-throughput's contiguous layout)
  grouped_gemm_bf16_torch_masked torch._grouped_mm 3D x 3D, [experts, tokens, k] (DeepEP low-latency's masked layout)
  grouped_gemm_fp8_torch         torch._scaled_grouped_mm, FP8 e4m3, row-wise scales, ragged rows
  gemm_fp8_block                 FP8 dense GEMM with DeepSeek's block scales (1x128 activations, 128x128 weights)
  gemm_bf16_torch                LM-head GEMMs (vocab x hidden of every zoo model), cuBLAS through torch.mm
  attention_prefill_ctx          causal prefill attention of `tokens` new tokens over `context` keys (mask aligned
                                 bottom-right: the chunk sits at the end of the context), PyTorch SDPA, fastest backend
  kernel_floor                   per-call time of a tiny kernel of each family, 100 back-to-back in one CUDA graph,
                                 and the kernels one call launches (PyTorch's profiler)
  host                           torch eager per-op CPU time, CPU time of one CUDA-graph replay call
The grouped GEMM points are the ones the C++ suite measured in the same RAW file (same family dims and tokens), so
dbosim-calibrate fit takes the faster implementation per point. Durations: CUDA events around each repeat after two
warm-ups, L2 flushed before each repeat (as the C++ suite), the GPU held ~250 us so that the launch is queued before
the start event (timing the kernel, not the host's launch path), median; floors: warm, inside a graph (as a step runs).

usage: torch_serving_kernels.py RAW.jsonl [--quick] [--only STEP,...] [--variant V]"""
import datetime, json, os, subprocess, sys, time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from raw_records import record_key  # noqa: E402

QUICK = "--quick" in sys.argv
FLUSH = None
HOST_AHEAD_CYCLES = 500_000  # ~250 us at the H200's 1.98 GHz boost clock


class Raw:
    def __init__(self, path):
        self.path, self.done, self.records = path, set(), []
        if os.path.exists(path):
            for line in open(path):
                try:
                    r = json.loads(line)
                    self.done.add(r["key"])
                    self.records.append(r)
                except Exception:
                    pass
        self.out = open(path, "a")

    def write(self, rec):
        self.out.write(json.dumps(rec, sort_keys=True) + "\n")
        self.out.flush()
        self.done.add(rec["key"])


def timed(run, reps_max=30, budget_ms=25.0, flush=True):
    """Median, p10, p90 of `run` in us and the repeat count, events around each repeat, cold L2 when `flush`."""
    run(); run(); torch.cuda.synchronize()
    s0, e0 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s0.record(); run(); e0.record(); torch.cuda.synchronize()
    reps = max(5, min(reps_max, int(budget_ms / max(s0.elapsed_time(e0), 1e-3))))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        if flush:
            FLUSH.fill_(i & 0xFF)
        # The GPU spins ~250 us before the start event so that the host is ahead when the kernel's turn comes: without
        # it, a call with a slow host path (DeepGEMM's Python launcher, block-scaled scaled_mm's heuristics) leaves the
        # GPU idle between the events, and a 5 us kernel read 30 us (deepgemm_kernels.py's first run).
        torch.cuda._sleep(HOST_AHEAD_CYCLES)
        starts[i].record(); run(); ends[i].record()
    torch.cuda.synchronize()
    us = sorted(1e3 * s.elapsed_time(e) for s, e in zip(starts, ends))
    return us[len(us) // 2], us[len(us) // 10], us[(9 * len(us)) // 10], reps


def record(raw, family, params, impl, run, variant="", **kw):
    k = record_key(family, params, variant)
    if k in raw.done:
        return None
    rec = {"key": k, "family": family, "params": {n: float(x) for n, x in params.items()}, "info": {"impl": impl}}
    if variant:
        rec["variant"] = variant
    try:
        med, p10, p90, reps = timed(run, **kw)
        rec.update({"status": "ok", "us": med, "us_p10": p10, "us_p90": p90, "reps": reps})
    except Exception as ex:  # recorded, not fatal: the fit skips failed points
        rec.update({"status": "error", "error": str(ex).splitlines()[0][:300]})
    raw.write(rec)
    return rec


def c_suite_points(raw, family):
    """(dims, tokens) of every ok point the C++ suite measured for `family` in this RAW file."""
    pts = {}
    for r in raw.records:
        if r.get("family") == family and r.get("status") == "ok" and "tokens" in r.get("params", {}):
            p = dict(r["params"])
            t = p.pop("tokens")
            pts.setdefault(tuple(sorted(p.items())), set()).add(t)
    return {d: sorted(t) for d, t in sorted(pts.items())}


def pad16(x):
    return (int(x) + 15) // 16 * 16


def grouped_gemms(raw):
    fp8 = torch.float8_e4m3fn
    for dims, toks in c_suite_points(raw, "grouped_gemm_bf16").items():
        d = dict(dims)
        e, n, k = int(d["experts"]), int(d["n"]), int(d["k"])
        if QUICK and (e, n, k) != (32, 4096, 7168):
            continue
        w = torch.randn(e, n, k, device="cuda", dtype=torch.bfloat16) * 0.02  # nn.Linear layout, per expert
        wt = w.transpose(-2, -1)  # [e, k, n] with k fastest-varying per column: what the kernel takes
        w8 = w.to(fp8)
        w8t = w8.transpose(-2, -1)
        sb = torch.ones(e, n, device="cuda", dtype=torch.float32)
        for t in (toks[:3] if QUICK else toks):
            t = int(t)
            params = {"experts": e, "n": n, "k": k, "tokens": t}
            # ragged rows, each expert's rows padded to a multiple of 16 (TMA alignment; DeepEP HT aligns likewise)
            tp = pad16(t)
            x = torch.randn(e * tp, k, device="cuda", dtype=torch.bfloat16)
            offs = torch.arange(1, e + 1, device="cuda", dtype=torch.int32) * tp
            record(raw, "grouped_gemm_bf16_torch", params, f"torch._grouped_mm ragged (rows padded to {tp})",
                   lambda: torch._grouped_mm(x, wt, offs=offs, out_dtype=torch.bfloat16))
            xm = x.view(e, tp, k)
            record(raw, "grouped_gemm_bf16_torch_masked", params, f"torch._grouped_mm 3Dx3D masked [{e},{tp},{k}]",
                   lambda: torch._grouped_mm(xm, wt, out_dtype=torch.bfloat16))
            x8 = x.to(fp8)
            sa = torch.ones(e * tp, device="cuda", dtype=torch.float32)
            record(raw, "grouped_gemm_fp8_torch", params,
                   f"torch._scaled_grouped_mm e4m3 row-wise scales ragged (rows padded to {tp})",
                   lambda: torch._scaled_grouped_mm(x8, w8t, sa, sb, offs=offs, out_dtype=torch.bfloat16))
            del x, xm, x8, sa
        del w, wt, w8, w8t, sb
        torch.cuda.empty_cache()


def block_scales(m, n, k):
    """DeepSeek's block scales in the layouts cuBLASLt's block scaling takes: activations 1x128 (M x K/128, M-major),
    weights 128x128 (K/128 x N/128, K/128-major)."""
    sa = torch.ones(k // 128, m, device="cuda", dtype=torch.float32).t()
    sb = torch.ones(n // 128, k // 128, device="cuda", dtype=torch.float32).t()
    return sa, sb


def block_scaled_mm():
    """A callable (a, b_t, sa, sb) -> out for DeepSeek's block-scaled FP8 GEMM, or None with the reasons."""
    m, n, k = 128, 256, 512
    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    tries = []
    try:
        from torch.nn.functional import ScalingType  # torch >= 2.9

        def nf(a_, bt_, sa_, sb_):
            return F.scaled_mm(a_, bt_, sa_, ScalingType.BlockWise1x128, sb_, ScalingType.BlockWise128x128,
                               output_dtype=torch.bfloat16)
        tries.append(("torch.nn.functional.scaled_mm BlockWise1x128 x BlockWise128x128 (cuBLASLt)", nf))
    except Exception:
        pass

    def old(a_, bt_, sa_, sb_):
        return torch._scaled_mm(a_, bt_, sa_, sb_, out_dtype=torch.bfloat16)
    tries.append(("torch._scaled_mm 1x128 x 128x128 block scales (cuBLASLt)", old))
    errors = []
    for name, fn in tries:
        sa, sb = block_scales(m, n, k)
        try:
            fn(a, b.t(), sa, sb)
            torch.cuda.synchronize()
            return name, fn
        except Exception as ex:
            errors.append(f"{name}: {str(ex).splitlines()[0][:160]}")
    print("block-scaled FP8 GEMM unavailable:\n  " + "\n  ".join(errors))
    return None, None


def dense_fp8_block(raw, variant=""):
    name, fn = block_scaled_mm()
    if fn is None:
        return
    for dims, toks in c_suite_points(raw, "gemm_fp8").items():
        d = dict(dims)
        n, k = int(d["n"]), int(d["k"])
        if n % 128 or k % 128:
            continue
        if QUICK and (n, k) != (24576, 1536):
            continue
        b = (torch.randn(n, k, device="cuda") * 0.02).to(torch.float8_e4m3fn)
        for t in (toks[:3] if QUICK else toks):
            t = int(t)
            mp = pad16(t)
            a = torch.randn(mp, k, device="cuda").to(torch.float8_e4m3fn)
            sa, sb = block_scales(mp, n, k)
            record(raw, "gemm_fp8_block", {"n": n, "k": k, "tokens": t}, f"{name}; rows padded to {mp}",
                   lambda: fn(a, b.t(), sa, sb), variant=variant)
            del a, sa, sb
        del b
        torch.cuda.empty_cache()


def zoo_heads():
    """(vocab, hidden) of every zoo model's LM head."""
    import yaml
    out = set()
    for f in sorted(os.listdir("models/zoo")):
        m = yaml.safe_load(open(os.path.join("models/zoo", f)))
        flat = {}

        def walk(d):
            for kk, vv in d.items():
                if isinstance(vv, dict) and "value" not in vv:
                    walk(vv)
                else:
                    flat[kk] = vv["value"] if isinstance(vv, dict) else vv
        walk(m)
        if "vocab" in flat and "hidden" in flat:
            out.add((int(flat["vocab"]), int(flat["hidden"])))
    return sorted(out)


def lm_heads(raw):
    toks = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]
    for vocab, hidden in zoo_heads():
        w = torch.randn(vocab, hidden, device="cuda", dtype=torch.bfloat16) * 0.02
        for t in (toks[:3] if QUICK else toks):
            x = torch.randn(t, hidden, device="cuda", dtype=torch.bfloat16)
            record(raw, "gemm_bf16_torch", {"n": vocab, "k": hidden, "tokens": t}, "torch.mm (cuBLAS) LM head",
                   lambda: torch.mm(x, w.t()))
        del w
        torch.cuda.empty_cache()


def prefill_ctx(raw):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.attention.bias import causal_lower_right
    backends = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
                ("efficient", SDPBackend.EFFICIENT_ATTENTION)]
    qs = [512, 1024, 2048, 4096, 8192]
    for heads, d in ([(128, 192)] if QUICK else [(128, 192), (64, 128)]):
        for q in (qs[2:4] if QUICK else qs):
            ctxs = sorted({c for c in (q, 2 * q, 4 * q, 8 * q, 16384, 32768) if q <= c <= 32768})
            for c in ctxs:
                params = {"heads": heads, "head_dim": d, "tokens": q, "context": c}
                k = record_key("attention_prefill_ctx", params)
                if k in raw.done:
                    continue
                qq = torch.randn(1, heads, q, d, device="cuda", dtype=torch.bfloat16)
                kk = torch.randn(1, heads, c, d, device="cuda", dtype=torch.bfloat16)
                vv = torch.randn(1, heads, c, d, device="cuda", dtype=torch.bfloat16)
                mask = causal_lower_right(q, c)
                best, errs = None, []
                for name, be in backends:
                    try:
                        with sdpa_kernel([be]):
                            r = timed(lambda: F.scaled_dot_product_attention(qq, kk, vv, attn_mask=mask),
                                      reps_max=10, budget_ms=60.0)
                        if best is None or r[0] < best[1][0]:
                            best = (name, r)
                    except Exception as ex:
                        errs.append(f"{name}: {str(ex).splitlines()[0][:80]}")
                rec = {"key": k, "family": "attention_prefill_ctx", "params": {n: float(x) for n, x in params.items()}}
                if best:
                    med, p10, p90, reps = best[1]
                    rec.update({"status": "ok", "us": med, "us_p10": p10, "us_p90": p90, "reps": reps,
                                "info": {"impl": f"PyTorch SDPA {best[0]} (fastest of flash/cudnn/efficient), "
                                                 "causal mask aligned bottom-right"}})
                else:
                    rec.update({"status": "error", "error": "; ".join(errs)[:300], "info": {"impl": "PyTorch SDPA"}})
                raw.write(rec)
                del qq, kk, vv
        torch.cuda.empty_cache()


def triton_kernels():
    """Fused kernels vLLM runs as one launch each (its own CUDA ops, unreachable here): written in Triton."""
    import triton
    import triton.language as tl

    @triton.jit
    def group_quant(x_ptr, y_ptr, s_ptr, G: tl.constexpr):  # per-token-group FP8 quant, one group per program
        pid = tl.program_id(0)
        offs = pid * G + tl.arange(0, G)
        x = tl.load(x_ptr + offs).to(tl.float32)
        s = tl.maximum(tl.max(tl.abs(x), 0), 1e-10) / 448.0
        tl.store(y_ptr + offs, (x / s).to(tl.float8e4nv))
        tl.store(s_ptr + pid, s)

    @triton.jit
    def silu_mul_quant(x_ptr, y_ptr, s_ptr, W: tl.constexpr, G: tl.constexpr):
        row = tl.program_id(0)
        grp = tl.program_id(1)
        offs = grp * G + tl.arange(0, G)
        a = tl.load(x_ptr + row * 2 * W + offs).to(tl.float32)
        b = tl.load(x_ptr + row * 2 * W + W + offs).to(tl.float32)
        y = a / (1.0 + tl.exp(-a)) * b
        s = tl.maximum(tl.max(tl.abs(y), 0), 1e-10) / 448.0
        tl.store(y_ptr + row * W + offs, (y / s).to(tl.float8e4nv))
        tl.store(s_ptr + row * (W // G) + grp, s)

    def gq(x, y, s):
        group_quant[(x.numel() // 128,)](x, y, s, G=128)

    def smq(x, y, s, w):
        silu_mul_quant[(x.shape[0], w // 128)](x, y, s, W=w, G=128)
    return gq, smq


def kernels_per_call(fn):
    """GPU kernels one eager call of `fn` launches (PyTorch's profiler), so a per-call time can be split per kernel."""
    from torch.profiler import ProfilerActivity, profile
    fn(); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn(); torch.cuda.synchronize()
    n = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    return max(1, n)


def floors(raw):
    """Per-kernel time of tiny kernels, 100 back-to-back in one CUDA graph (warm), and the empty kernel's."""
    gq, smq = triton_kernels()
    dev = "cuda"
    hidden, experts = 7168, 256
    x1 = torch.randn(1, hidden, device=dev, dtype=torch.bfloat16)
    w_small = torch.randn(256, 256, device=dev, dtype=torch.bfloat16)
    xs = torch.randn(16, 256, device=dev, dtype=torch.bfloat16)
    logits = torch.randn(1, experts, device=dev, dtype=torch.float32)
    big_logits = torch.randn(1, 129280, device=dev, dtype=torch.float32)
    emb = torch.randn(129280, hidden, device=dev, dtype=torch.bfloat16)
    ids = torch.zeros(1, device=dev, dtype=torch.long)
    one = torch.zeros(1, device=dev)
    wq = torch.empty(1, hidden, device=dev, dtype=torch.float8_e4m3fn)
    sq = torch.empty(1, hidden // 128, device=dev, dtype=torch.float32)
    xg = torch.randn(1, 2 * 2048, device=dev, dtype=torch.bfloat16)
    yg = torch.empty(1, 2048, device=dev, dtype=torch.float8_e4m3fn)
    sg = torch.empty(1, 16, device=dev, dtype=torch.float32)
    ge = torch.randn(2, 256, 256, device=dev, dtype=torch.bfloat16).transpose(-2, -1)
    gx = torch.randn(32, 256, device=dev, dtype=torch.bfloat16)
    goffs = torch.tensor([16, 32], device=dev, dtype=torch.int32)
    a8 = torch.randn(16, 256, device=dev).to(torch.float8_e4m3fn)
    b8 = torch.randn(256, 256, device=dev).to(torch.float8_e4m3fn)
    s1 = torch.ones((), device=dev)
    nw = torch.ones(hidden, device=dev, dtype=torch.bfloat16)
    res = torch.randn(1, hidden, device=dev, dtype=torch.bfloat16)
    aq = torch.randn(1, 16, 1, 128, device=dev, dtype=torch.bfloat16)
    akv = torch.randn(1, 16, 64, 128, device=dev, dtype=torch.bfloat16)
    cases = {
        "empty": lambda: one.add_(1),  # a one-element elementwise kernel: the graph's per-kernel gap
        "elementwise": lambda: res.add_(x1),  # residual add at 1 token
        "rmsnorm": lambda: F.rms_norm(x1, (hidden,), nw),
        "reduction": lambda: torch.topk(logits, 8),  # router top-k over 256 experts
        "activation": lambda: torch.sigmoid(logits),  # router scoring
        "sampling": lambda: torch.argmax(big_logits, dim=-1),  # greedy sampling over the vocab
        "gather": lambda: F.embedding(ids, emb),  # embedding lookup
        "quant": lambda: gq(x1, wq, sq),  # per-token-group FP8 quant (Triton)
        "silu_mul": lambda: smq(xg, yg, sg, 2048),  # SiLU-and-mul fused with FP8 quant (Triton)
        "gemm": lambda: torch.mm(xs, w_small),  # cuBLAS GEMM 16x256x256
        "gemm_fp8": lambda: torch._scaled_mm(a8, b8.t(), s1, s1, out_dtype=torch.bfloat16),
        "grouped_gemm": lambda: torch._grouped_mm(gx, ge, offs=goffs, out_dtype=torch.bfloat16),
        "attention": lambda: F.scaled_dot_product_attention(aq, akv, akv),  # decode attention, 64 keys
    }
    n = 100
    for fam, fn in cases.items():
        k = record_key("kernel_floor", {}, fam)
        if k in raw.done:
            continue
        rec = {"key": k, "family": "kernel_floor", "variant": fam, "params": {},
               "info": {"impl": f"{n} back-to-back calls in one CUDA graph, warm; GPU time per call "
                                "(extra.kernels: kernels per call)"}}
        try:
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                for _ in range(3):
                    fn()
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(n):
                    fn()
            med, p10, p90, reps = timed(g.replay, reps_max=20, flush=False)
            rec.update({"status": "ok", "us": med / n, "us_p10": p10 / n, "us_p90": p90 / n, "reps": reps,
                        "extra": {"kernels": float(kernels_per_call(fn))}})
        except Exception as ex:
            rec.update({"status": "error", "error": str(ex).splitlines()[0][:300]})
        raw.write(rec)
    # host: torch's eager per-op CPU cost and a graph replay call's CPU cost
    if record_key("host", {}, "torch_eager_op") not in raw.done:
        for _ in range(100):
            one.add_(1)
        torch.cuda.synchronize()
        per = []
        for _ in range(7):
            t0 = time.perf_counter()
            for _ in range(1000):
                one.add_(1)
            per.append((time.perf_counter() - t0) * 1e3)  # us per op
            torch.cuda.synchronize()
        per.sort()
        raw.write({"key": record_key("host", {}, "torch_eager_op"), "family": "host", "variant": "torch_eager_op",
                   "params": {}, "status": "ok", "us": per[3], "us_p10": per[0], "us_p90": per[6], "reps": 7,
                   "info": {"impl": "host perf_counter over 1000 eager torch add_ calls (PyTorch dispatch + launch)"}})
    if record_key("host", {}, "graph_replay_cpu") not in raw.done:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(10):
                one.add_(1)
        g.replay(); torch.cuda.synchronize()
        per = []
        for _ in range(7):
            t0 = time.perf_counter()
            for _ in range(100):
                g.replay()
            per.append((time.perf_counter() - t0) * 1e4)
            torch.cuda.synchronize()
        per.sort()
        raw.write({"key": record_key("host", {}, "graph_replay_cpu"), "family": "host", "variant": "graph_replay_cpu",
                   "params": {}, "status": "ok", "us": per[3], "us_p10": per[0], "us_p90": per[6], "reps": 7,
                   "info": {"impl": "host perf_counter over 100 replays of a 10-kernel CUDA graph (a piece's launch)"}})


TIMING = ("CUDA events around each repeat after 2 warm-up launches; L2 flushed (fill of 256 MiB) and the GPU held "
          "~250 us (launch queued before the start event) before each repeat; median")


def env_record(raw, script="kernels/torch_serving_kernels.py",
               timing=TIMING + " (kernel floors: warm, 100 launches in one CUDA graph)", extra=None):
    """Appends this run's environment record; returns its run number."""
    runs = [r for r in raw.records if r.get("family") == "env"]
    n = len(runs) + 1
    p = torch.cuda.get_device_properties(0)
    commit = os.environ.get("DBO_GIT_COMMIT", "")
    if not commit:
        try:
            commit = subprocess.check_output(["git", "rev-parse", "--short=12", "HEAD"], text=True,
                                             stderr=subprocess.DEVNULL).strip()
        except Exception:
            raise SystemExit("not in a git checkout of dbosim: set DBO_GIT_COMMIT (the records carry it)")
    info = {"gpu_name": p.name, "sm_count": str(p.multi_processor_count), "torch": torch.__version__,
            "cuda": str(torch.version.cuda), "date": datetime.datetime.now(datetime.timezone.utc).strftime(
                "%Y-%m-%dT%H:%M:%SZ"), "git_commit": commit, "resumed_from": "0", "timing": timing, "script": script}
    info.update(extra or {})
    raw.write({"key": f"env/run={n}", "family": "env", "params": {"run": float(n)}, "status": "ok", "info": info})
    return n


def main():
    global FLUSH
    raw = Raw(sys.argv[1])
    only = sys.argv[sys.argv.index("--only") + 1].split(",") if "--only" in sys.argv else None
    FLUSH = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    env_record(raw)
    t0 = time.time()
    steps = (("floors", floors), ("grouped", grouped_gemms), ("fp8_block", dense_fp8_block), ("lm_head", lm_heads),
             ("prefill_ctx", prefill_ctx))
    for name, step in steps:
        if only is not None and name not in only:
            continue
        try:
            # --variant V measures again under new keys (a changed method; the fit takes the faster record per point)
            step(raw, sys.argv[sys.argv.index("--variant") + 1]) if "--variant" in sys.argv else step(raw)
        except Exception as ex:
            print(f"{name}: failed: {ex}")
        print(f"{name}: done at {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
