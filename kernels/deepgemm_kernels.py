#!/usr/bin/env python3
"""dbosim calibration: DeepSeek's FP8 GEMMs measured with DeepGEMM, the kernels vLLM and SGLang run for them.

DeepGEMM (github.com/deepseek-ai/DeepGEMM) is not vendored: point DG_SRC at a checkout of it (its JIT needs only
nvcc, its headers and CUTLASS's `cute`/`cutlass` headers under deep_gemm/include). kernels/deepgemm_on_gpu.sh
prepares one from a DeepGEMM commit and runs this script. Appends JSON-lines records to RAW in the format of
dbosim-calibrate-run (resumable: keys already present are skipped):
  gemm_fp8_block_deepgemm            dense FP8 GEMM, 1x128 activation and 128x128 weight block scales
                                     (gemm_fp8_fp8_bf16_nt): every linear layer of an FP8 DeepSeek checkpoint
  grouped_gemm_fp8_deepgemm_masked   m-grouped masked GEMM, [experts, rows, k] with `tokens` valid rows per expert
                                     (the layout DeepEP low-latency dispatch delivers; decode)
  grouped_gemm_fp8_deepgemm          m-grouped contiguous GEMM, every expert's rows padded to DeepGEMM's M alignment
                                     (the layout DeepEP high-throughput dispatch delivers; prefill)
dbosim-calibrate fit folds them into gemm_fp8_block and grouped_gemm_fp8, taking the fastest implementation per
point (calibrate/ProfileFit.cpp). Durations as in torch_serving_kernels.py: CUDA events around each repeat after
two warm-ups, L2 flushed and the GPU held until the launch is queued before each repeat, median. Inputs are random (never zeros); one product per kind is
checked against a BF16 reference before anything is timed.

JIT compilation is slow (seconds per kernel configuration), so a pool of processes compiles every configuration
the points need into DG_CACHE_DIR first; the timing process then finds them compiled.

usage: deepgemm_kernels.py RAW.jsonl [--quick] [--jobs N]
       deepgemm_kernels.py - --timing-check   (events vs the profiler's kernel time, dense shapes)"""
import multiprocessing as mp, os, sys, time

sys.path.insert(0, os.environ.get("DG_SRC", "."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

QUICK = "--quick" in sys.argv
JOBS = int(sys.argv[sys.argv.index("--jobs") + 1]) if "--jobs" in sys.argv else max(1, (os.cpu_count() or 2) - 1)
# the commits of the DeepGEMM tree and its CUTLASS, carried by every record (kernels/deepgemm_on_gpu.sh requires them)
DG_COMMIT = os.environ.get("DG_COMMIT", "")
DG_CUTLASS_COMMIT = os.environ.get("DG_CUTLASS_COMMIT", "")
if __name__ == "__main__" and "--timing-check" not in sys.argv and not (DG_COMMIT and DG_CUTLASS_COMMIT):
    raise SystemExit("set DG_COMMIT and DG_CUTLASS_COMMIT (the commits of DG_SRC and its CUTLASS): records carry them")

# DeepSeek-V3/R1 FP8 linear layers (n, k): q_a+kv_a fused, q_b, kv_b, o_proj, shared/dense MLP up and down
DENSE = [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048), (36864, 7168),
         (7168, 18432)]
DENSE_TOKENS = [1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144,
                8192, 12288, 16384]
# routed experts (n, k): gate+up, down; experts per rank at EP 128/64/32/16/8 of 256 experts
EXPERT = [(4096, 7168), (7168, 2048)]
EXPERTS = [2, 4, 8, 16, 32]
MASKED_TOKENS = [1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512]
CONTIG_TOKENS = [64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096]


def points():
    """(kind, n, k, experts, tokens) of every point, cheap kinds first."""
    out = []
    dense_tokens = DENSE_TOKENS[::4] if QUICK else DENSE_TOKENS
    for n, k in (DENSE[:1] if QUICK else DENSE):
        out += [("dense", n, k, 1, t) for t in dense_tokens]
    for n, k in (EXPERT[:1] if QUICK else EXPERT):
        for e in ([8] if QUICK else EXPERTS):
            out += [("masked", n, k, e, t) for t in (MASKED_TOKENS[::4] if QUICK else MASKED_TOKENS)]
            out += [("contig", n, k, e, t) for t in (CONTIG_TOKENS[::4] if QUICK else CONTIG_TOKENS)
                    if e * t <= 65536]
    return out


def setup(kind, n, k, e, t):
    """Inputs and a zero-argument launcher for one point, plus the padded row count."""
    import torch
    import deep_gemm as dg
    fp8 = torch.float8_e4m3fn
    dev = "cuda"
    if kind == "dense":
        a = torch.randn(t, k, device=dev).to(fp8)
        sa = dg.get_col_major_tma_aligned_tensor(torch.rand(t, k // 128, device=dev) + 0.5)
        b = (torch.randn(n, k, device=dev) * 0.05).to(fp8)
        sb = torch.rand((n + 127) // 128, k // 128, device=dev) + 0.5
        out = torch.empty(t, n, device=dev, dtype=torch.bfloat16)
        return (lambda: dg.gemm_fp8_fp8_bf16_nt((a, sa), (b, sb), out)), t, (a, sa, b, sb, out)
    b = (torch.randn(e, n, k, device=dev) * 0.05).to(fp8)
    sb = torch.rand(e, (n + 127) // 128, k // 128, device=dev) + 0.5
    if kind == "masked":
        rows = (t + 127) // 128 * 128  # a multiple of every block M the kernel may pick
        a = torch.randn(e, rows, k, device=dev).to(fp8)
        sa = dg.get_col_major_tma_aligned_tensor(torch.rand(e, rows, k // 128, device=dev) + 0.5)
        out = torch.empty(e, rows, n, device=dev, dtype=torch.bfloat16)
        masked = torch.full((e,), t, device=dev, dtype=torch.int32)
        return (lambda: dg.m_grouped_gemm_fp8_fp8_bf16_nt_masked((a, sa), (b, sb), out, masked, t)), rows, \
            (a, sa, b, sb, out, masked)
    align = dg.get_m_alignment_for_contiguous_layout()
    rows = (t + align - 1) // align * align
    a = torch.randn(e * rows, k, device=dev).to(fp8)
    sa = dg.get_col_major_tma_aligned_tensor(torch.rand(e * rows, k // 128, device=dev) + 0.5)
    out = torch.empty(e * rows, n, device=dev, dtype=torch.bfloat16)
    idx = torch.arange(e, device=dev, dtype=torch.int32).repeat_interleave(rows).contiguous()
    return (lambda: dg.m_grouped_gemm_fp8_fp8_bf16_nt_contiguous((a, sa), (b, sb), out, idx)), rows, \
        (a, sa, b, sb, out, idx)


def config_of(kind, n, k, e, t):
    """DeepGEMM's choice of kernel configuration for a point: points that share one share a compiled kernel."""
    import deep_gemm as dg
    from deep_gemm.jit_kernels.gemm import get_best_configs
    sms = dg.get_num_sms()
    if kind == "dense":
        return get_best_configs(t, n, k, 1, sms)[1:5]
    if kind == "masked":
        return get_best_configs(t, n, k, e, sms)[1:5]
    align = dg.get_m_alignment_for_contiguous_layout()
    return get_best_configs(e * ((t + align - 1) // align * align), n, k, 1, sms, is_grouped_contiguous=True)[1:5]


def compile_one(p):
    import torch
    t0 = time.time()
    try:
        run, _, keep = setup(*p)
        run()
        torch.cuda.synchronize()
        return p, time.time() - t0, ""
    except Exception as ex:
        return p, time.time() - t0, str(ex).splitlines()[0][:300] if str(ex) else type(ex).__name__


def check_numerics():
    """Each kind against a BF16 reference of the same FP8 inputs and scales (relative error)."""
    import torch
    import deep_gemm as dg
    res = {}
    torch.manual_seed(0)
    n, k, t = 4096, 7168, 128
    x = torch.randn(t, k, device="cuda")
    w = torch.randn(n, k, device="cuda") * 0.05
    xq, wq = x.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
    ones_a = torch.ones(t, k // 128, device="cuda")
    ones_b = torch.ones(n // 128, k // 128, device="cuda")
    ref = xq.float() @ wq.float().t()
    out = torch.full((t, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    dg.gemm_fp8_fp8_bf16_nt((xq, dg.get_col_major_tma_aligned_tensor(ones_a)), (wq, ones_b), out)
    res["dense"] = float((out.float() - ref).norm() / ref.norm())
    e = 4
    wq3 = wq.unsqueeze(0).repeat(e, 1, 1).contiguous()
    xq3 = xq.unsqueeze(0).repeat(e, 1, 1).contiguous()
    out3 = torch.full((e, t, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    dg.m_grouped_gemm_fp8_fp8_bf16_nt_masked(
        (xq3, dg.get_col_major_tma_aligned_tensor(torch.ones(e, t, k // 128, device="cuda"))),
        (wq3, torch.ones(e, n // 128, k // 128, device="cuda")), out3,
        torch.full((e,), t, device="cuda", dtype=torch.int32), t)
    res["masked"] = float((out3.float() - ref.unsqueeze(0)).norm() / (ref.norm() * e ** 0.5))
    outc = torch.full((e * t, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    dg.m_grouped_gemm_fp8_fp8_bf16_nt_contiguous(
        (xq3.view(e * t, k), dg.get_col_major_tma_aligned_tensor(torch.ones(e * t, k // 128, device="cuda"))),
        (wq3, torch.ones(e, n // 128, k // 128, device="cuda")), outc,
        torch.arange(e, device="cuda", dtype=torch.int32).repeat_interleave(t).contiguous())
    res["contig"] = float((outc.float().view(e, t, n) - ref.unsqueeze(0)).norm() / (ref.norm() * e ** 0.5))
    return res


def main():
    import torch
    import torch_serving_kernels as tsk
    raw = tsk.Raw(sys.argv[1])
    t0 = time.time()
    todo = []
    for p in points():
        fam = {"dense": "gemm_fp8_block_deepgemm", "masked": "grouped_gemm_fp8_deepgemm_masked",
               "contig": "grouped_gemm_fp8_deepgemm"}[p[0]]
        params = {"n": p[1], "k": p[2], "tokens": p[4]}
        if p[0] != "dense":
            params["experts"] = p[3]
        if tsk.key(fam, params) not in raw.done:
            todo.append((p, fam, params))
    configs, cfg_of_point = {}, []
    for p, _, _ in todo:
        ck = (p[0], p[1], p[2], p[3] if p[0] != "dense" else 0, config_of(*p))
        configs.setdefault(ck, p)
        cfg_of_point.append(ck)
    print(f"{len(todo)} points, {len(configs)} kernel configurations to compile with {JOBS} processes", flush=True)
    # Compiled first, all of them: a kernel timed while other processes use the GPU shares it with them (contexts
    # time-slice), which a first try of this script showed as 2-4x slower small GEMMs.
    with mp.get_context("spawn").Pool(JOBS) as pool:
        compiled = {ck: r for ck, r in zip(configs, pool.map(compile_one, list(configs.values()), chunksize=1))}
    failed = {ck: r[2] for ck, r in compiled.items() if r[2]}
    print(f"compiled at {time.time() - t0:.0f} s; {len(failed)} failed", flush=True)
    for ck, err in failed.items():
        print(f"  {ck}: {err}", flush=True)
    tsk.FLUSH = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    n_env = tsk.env_record(raw, script="kernels/deepgemm_kernels.py", timing=tsk.TIMING,
                           extra={"deepgemm_commit": DG_COMMIT, "cutlass_commit": DG_CUTLASS_COMMIT})
    names = {"dense": "DeepGEMM gemm_fp8_fp8_bf16_nt", "masked": "DeepGEMM m_grouped_gemm_fp8_fp8_bf16_nt_masked",
             "contig": "DeepGEMM m_grouped_gemm_fp8_fp8_bf16_nt_contiguous"}
    for (p, fam, params), ck in zip(todo, cfg_of_point):
        if ck in failed:
            continue
        try:
            run, rows, keep = setup(*p)
        except Exception as ex:
            print(f"  {p}: setup failed: {ex}", flush=True)
            continue
        cfg = ck[4]
        impl = f"{names[p[0]]} @{DG_COMMIT} (CUTLASS {DG_CUTLASS_COMMIT[:7]}); rows padded to {rows}; block_m={cfg[0]} block_n={cfg[1]} stages={cfg[2]}"
        rec = tsk.record(raw, fam, params, impl, run)
        if rec and rec.get("status") == "ok":
            print(f"  {fam} {params}: {rec['us']:.2f} us ({time.time() - t0:.0f} s)", flush=True)
        del run, keep
    # Correctness of what was timed: every kind against an FP32 product of the same FP8 inputs (kernels compiled by
    # now; a failure marks this run's records as not to be fitted).
    errs = check_numerics()
    ok = all(v < 2e-2 for v in errs.values())
    raw.write({"key": f"check/deepgemm_numerics/run={n_env}", "family": "check", "variant": "deepgemm_numerics",
               "params": {"run": float(n_env)},
               "status": "ok" if ok else "error", "info": {k: f"{v:.3g}" for k, v in errs.items()}})
    print("numerics (relative error vs an FP32 product of the same FP8 inputs):", errs, "ok" if ok else "WRONG",
          flush=True)
    print(f"done at {time.time() - t0:.0f} s", flush=True)


def timing_check():
    """The dense README shapes at M = 1, 16, 64, 128 timed two ways: this script's events (median, launch queued) and
    the profiler's kernel duration (median of the same repeats, as DeepGEMM's own benchmark reports). Prints a table."""
    import torch
    import torch_serving_kernels as tsk
    tsk.FLUSH = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    shapes = DENSE[:6]
    pts = [("dense", n, k, 1, m) for n, k in shapes for m in (1, 16, 64, 128)]
    configs = {}
    for p in pts:
        configs.setdefault((p[1], p[2], config_of(*p)), p)
    with mp.get_context("spawn").Pool(JOBS) as pool:
        pool.map(compile_one, list(configs.values()), chunksize=1)
    print("n k m events_us kernel_us config")
    for p in pts:
        run, _, keep = setup(*p)
        ev = tsk.timed(run)[0]
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for i in range(20):
                tsk.FLUSH.fill_(i & 0xFF)
                run()
            torch.cuda.synchronize()
        cuda = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        durs = sorted(e.time_range.elapsed_us() for e in cuda if "fp8_gemm" in e.name)
        if not durs:
            print("  no fp8_gemm kernel among:", sorted({e.name[:60] for e in cuda}), flush=True)
        kern = durs[len(durs) // 2] if durs else float("nan")
        print(p[1], p[2], p[4], f"{ev:.2f}", f"{kern:.2f}", config_of(*p), flush=True)
        del run, keep


if __name__ == "__main__":
    timing_check() if "--timing-check" in sys.argv else main()
