#!/usr/bin/env python3
"""dbosim calibration: how DeepGEMM's FP8 GEMMs slow down when they get fewer SMs, the way serving engines give them
fewer: DeepSeek's prefill runs its GEMMs on 108 of 132 SMs while DeepEP's normal kernels hold 24, vLLM's DBO on
132 - VLLM_DBO_COMM_SMS. DeepGEMM's persistent kernels take their SM count from deep_gemm.set_num_sms(S) (a grid of
S CTAs; the block shape re-chosen for S by its own heuristic), so the rest of the GPU stays free as it is for the
communication kernels.

Appends records of family `sm_scaling` (variants gemm_fp8_block_deepgemm, grouped_gemm_fp8_deepgemm,
grouped_gemm_fp8_deepgemm_masked; params with `sms`; extra actual_sms, retile = 1, green = 0) to RAW in the format of
dbosim-calibrate-run, resumable. dbosim-calibrate fit takes a family's SM-scaling curve from these kernels where
they are present (the kernels vLLM and SGLang run), from the cuBLAS green-context records otherwise. Durations as in
torch_serving_kernels.py (events around each repeat, L2 flushed, host ahead, median). Needs DG_SRC as
deepgemm_kernels.py (kernels/deepgemm_on_gpu.sh prepares it: run this with the same environment).

usage: deepgemm_sm_scaling.py RAW.jsonl [--jobs N]"""
import multiprocessing as mp, os, sys, time

sys.path.insert(0, os.environ.get("DG_SRC", "."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import deepgemm_kernels as dk  # noqa: E402  (setup, config_of, compile_one: the same launches as the tables)

SMS = [68, 92, 100, 108, 112, 116, 124, 132]
# (kind, n, k, experts, tokens): DeepSeek-V3/R1's FP8 linear layers and routed experts at decode and prefill sizes
POINTS = [("dense", 24576, 1536, 1, 1024), ("dense", 7168, 2048, 1, 16384), ("dense", 4096, 7168, 1, 16),
          ("dense", 4096, 7168, 1, 256), ("dense", 4096, 7168, 1, 4096), ("dense", 7168, 2048, 1, 1024),
          ("dense", 7168, 16384, 1, 8192), ("dense", 2112, 7168, 1, 8192),
          ("contig", 4096, 7168, 8, 2048), ("contig", 7168, 2048, 8, 2048), ("contig", 4096, 7168, 9, 1024),
          ("masked", 4096, 7168, 32, 256), ("masked", 7168, 2048, 16, 128)]
VARIANT = {"dense": "gemm_fp8_block_deepgemm", "contig": "grouped_gemm_fp8_deepgemm",
           "masked": "grouped_gemm_fp8_deepgemm_masked"}
NAMES = {"dense": "gemm_fp8_fp8_bf16_nt", "contig": "m_grouped_gemm_fp8_fp8_bf16_nt_contiguous",
         "masked": "m_grouped_gemm_fp8_fp8_bf16_nt_masked"}


def params_of(p, sms):
    out = {"n": p[1], "k": p[2], "tokens": p[4], "sms": sms}
    if p[0] != "dense":
        out["experts"] = p[3]
    return out


def compile_at(arg):
    sms, p = arg
    import deep_gemm as dg
    dg.set_num_sms(sms)
    return (sms, p), dk.compile_one(p)


def main():
    if not (dk.DG_COMMIT and dk.DG_CUTLASS_COMMIT):
        raise SystemExit("set DG_COMMIT and DG_CUTLASS_COMMIT (the commits of DG_SRC and its CUTLASS): records carry them")
    import torch
    import deep_gemm as dg
    import torch_serving_kernels as tsk
    raw = tsk.Raw(sys.argv[1])
    full = dg.get_num_sms()
    t0 = time.time()
    todo = [(s, p) for s in SMS if s <= full for p in POINTS
            if tsk.key("sm_scaling", params_of(p, s), VARIANT[p[0]]) not in raw.done]
    configs = {}
    for s, p in todo:
        dg.set_num_sms(s)
        configs.setdefault((s, p[0], p[1], p[2], p[3] if p[0] != "dense" else 0, dk.config_of(*p)), (s, p))
    dg.set_num_sms(full)
    print(f"{len(todo)} points, {len(configs)} configurations to compile with {dk.JOBS} processes", flush=True)
    with mp.get_context("spawn").Pool(dk.JOBS) as pool:
        done = pool.map(compile_at, list(configs.values()), chunksize=1)
    failed = {sp: r[2] for sp, r in done if r[2]}
    print(f"compiled at {time.time() - t0:.0f} s; {len(failed)} failed", flush=True)
    tsk.FLUSH = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    tsk.env_record(raw, script="kernels/deepgemm_sm_scaling.py", timing=tsk.TIMING,
                   extra={"deepgemm_commit": dk.DG_COMMIT, "cutlass_commit": dk.DG_CUTLASS_COMMIT})
    for s, p in todo:
        if (s, p) in failed:
            print(f"  {p} at {s} SMs: compile failed: {failed[(s, p)]}", flush=True)
            continue
        dg.set_num_sms(s)
        run, rows, keep = dk.setup(*p)
        cfg = dk.config_of(*p)
        impl = (f"DeepGEMM {NAMES[p[0]]} @{dk.DG_COMMIT} (CUTLASS {dk.DG_CUTLASS_COMMIT[:7]}), set_num_sms({s}) on the whole GPU (a grid of {s} CTAs); "
                f"rows padded to {rows}; block_m={cfg[0]} block_n={cfg[1]} stages={cfg[2]}")
        params = params_of(p, s)
        rec = {"key": tsk.key("sm_scaling", params, VARIANT[p[0]]), "family": "sm_scaling", "variant": VARIANT[p[0]],
               "params": {n: float(x) for n, x in params.items()}, "info": {"impl": impl},
               "extra": {"actual_sms": float(s), "retile": 1.0, "green": 0.0}}
        try:
            med, p10, p90, reps = tsk.timed(run)
            rec.update({"status": "ok", "us": med, "us_p10": p10, "us_p90": p90, "reps": reps})
            print(f"  {VARIANT[p[0]]} {params}: {med:.2f} us ({time.time() - t0:.0f} s)", flush=True)
        except Exception as ex:  # recorded, not fatal: the fit skips failed points
            rec.update({"status": "error", "error": str(ex).splitlines()[0][:300]})
        raw.write(rec)
        del run, keep
    dg.set_num_sms(full)
    print(f"done at {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
