#!/usr/bin/env python3
"""Expert-parallel MoE layer testbed: records per-op CUDA-event spans of a DeepSeek-shaped MoE layer stack over N ranks
in dbosim's external-testbed format (validate/README.md, "External testbeds", collectives and per-rank recordings).

Per layer and micro-batch: A0, A1 (attention stand-in GEMMs), R (router GEMM; the routing itself is drawn up front,
seeded, so every shape is static and capturable), D (dispatch: gather the token copies by destination, then
torch.distributed.all_to_all_single), M1/M2 (the local experts' gate-up and down GEMMs, torch._grouped_mm when present
else a loop of GEMMs; M1 also groups the received rows by expert, M2 applies SiLU-and-mul before the down GEMM),
C (combine: all_to_all_single back, then the weighted sum into the token rows), S1/S2 (shared expert gate-up and down).

Schedules (the ones dbosim models): serial (one op at a time), async_combine (S on the compute stream while C runs on
the comm stream), dbo (two micro-batches ping-ponging: one's dispatch/combine under the other's compute).
Each runs eagerly with events around every op (per-op spans, behind a spin-kernel gate so host issue is off the
critical path) and as one CUDA graph (replay makespans).

  torchrun --nproc-per-node N kernels/ep_testbed.py --out DIR ...      (N = 1 also runs as plain python3)

Writes, per shape x routing x schedule: CASE.yaml (the op list, this rank's program), CASE.rank<r>.csv (eager spans,
op,start_us,end_us, one block per repeat), and one JSON line per case and mode in DIR/records.jsonl (makespans per
repeat, per rank, with provenance).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.distributed as dist


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--hidden", type=int, default=7168)
    p.add_argument("--moe-inter", type=int, default=2048, help="routed expert intermediate size")
    p.add_argument("--shared-inter", type=int, default=2048, help="shared expert intermediate size")
    p.add_argument("--q-lora", type=int, default=2112, help="A0 output width (q_a + kv_a projections)")
    p.add_argument("--attn-out-in", type=int, default=16384, help="A1 input width (heads x v_head_dim)")
    p.add_argument("--experts-per-rank", type=int, default=8)
    p.add_argument("--topk", type=int, default=8)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--decode-tokens", default="1,16,64,256")
    p.add_argument("--prefill-tokens", default="1024,4096")
    p.add_argument("--schedules", default="serial,async_combine,dbo")
    p.add_argument("--routing", default="balanced,drawn")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--gate-us", type=float, default=3000.0, help="spin kernel ahead of each eager repeat")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--profile", default="h200", help="dbosim hardware profile named in the op lists")
    p.add_argument("--grouped-mm", choices=["auto", "loop"], default="auto")
    p.add_argument("--git-commit", default=os.environ.get("DBOSIM_GIT_COMMIT", ""))
    return p.parse_args()


def setup_dist():
    ws = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    os.environ.setdefault("RANK", str(rank))
    os.environ.setdefault("WORLD_SIZE", str(ws))
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    return dist.get_rank(), dist.get_world_size()


def provenance(args, ws):
    nccl = ".".join(str(x) for x in torch.cuda.nccl.version()) if hasattr(torch.cuda, "nccl") else ""
    commit = args.git_commit
    if not commit:
        try:
            commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                    cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
        except OSError:
            commit = ""
    return {"torch": torch.__version__, "cuda": torch.version.cuda, "nccl": nccl,
            "gpu": torch.cuda.get_device_name(), "sm_count": torch.cuda.get_device_properties(0).multi_processor_count,
            "git_commit": commit or "unknown", "command": " ".join([sys.executable] + sys.argv), "seed": args.seed,
            "world_size": ws, "grouped_mm": grouped_mm_available(args) and Layer.grouped_ok}


def grouped_mm_available(args):
    return args.grouped_mm == "auto" and hasattr(torch, "_grouped_mm")


def draw_routing(T, E, k, mode, gen):
    """[T, k] expert ids (distinct per token). balanced: round-robin, every expert gets T*k/E (+-1);
    drawn: uniform without replacement per token, seeded."""
    if mode == "balanced":
        ids = (torch.arange(T * k).view(T, k)) % E
        if k > E:
            raise ValueError("topk > experts")
        return ids
    return torch.stack([torch.randperm(E, generator=gen)[:k] for _ in range(T)])


def make_weights(a, ws, dev, dt):
    H, epr = a.hidden, a.experts_per_rank
    w = lambda *s: torch.randn(*s, device=dev, dtype=dt) * 0.02
    return (w(H, a.q_lora), w(a.attn_out_in, H), w(H, epr * ws), w(epr, H, 2 * a.moe_inter), w(epr, a.moe_inter, H),
            w(H, 2 * a.shared_inter), w(a.shared_inter, H))


class Layer:
    """One layer's weights and the static routing layout of one micro-batch of T tokens on this rank."""
    grouped_ok = True

    def __init__(self, a, T, rank, ws, routing, gen, dev, dt, wts):
        H, epr, k = a.hidden, a.experts_per_rank, a.topk
        E = epr * ws
        self.T, self.H, self.k = T, H, k
        w = lambda *s: torch.randn(*s, device=dev, dtype=dt) * 0.02
        self.wa0, self.wa1, self.wr, self.w13, self.w2, self.ws13, self.ws2 = wts  # one layer's, shared by ubatches
        ids = draw_routing(T, E, k, routing, gen)  # every rank draws its own (the generator is seeded per rank)
        flat = ids.reshape(-1)
        dest = flat // epr
        order = torch.argsort(dest * E + flat, stable=True)  # by destination rank, then expert
        self.send_tok = (order // k).to(dev)  # token row of each sent copy
        self.send_order = order.to(dev)
        self.send_splits = torch.bincount(dest, minlength=ws).tolist()
        self.weights = torch.rand(T * k, generator=gen).to(dev, dt)
        # Everyone learns what it receives: counts per (source rank, local expert).
        cnt = torch.bincount(flat, minlength=E).view(ws, epr)  # this rank's copies to each (dest, expert)
        all_cnt = [torch.zeros_like(cnt) for _ in range(ws)]
        if ws > 1:
            gathered = [torch.zeros(ws, epr, dtype=torch.long, device=dev) for _ in range(ws)]
            dist.all_gather(gathered, cnt.to(dev))
            all_cnt = [g.cpu() for g in gathered]
        else:
            all_cnt = [cnt]
        recv_by_src = torch.stack([all_cnt[s][rank] for s in range(ws)])  # [src, local expert]
        self.recv_splits = recv_by_src.sum(1).tolist()
        # Received rows arrive by source then expert; group them by expert for the GEMMs.
        exp_of_row = torch.cat([torch.repeat_interleave(torch.arange(epr), recv_by_src[s]) for s in range(ws)])
        self.group_perm = torch.argsort(exp_of_row, stable=True).to(dev)
        self.ungroup_perm = torch.argsort(self.group_perm).to(dev)
        self.tokens_per_expert = recv_by_src.sum(0).tolist()
        self.offs = torch.cumsum(recv_by_src.sum(0), 0).to(dev, torch.int32)
        R = sum(self.recv_splits)
        self.rows = R
        self.send_bytes = T * k * H * torch.finfo(dt).bits // 8
        self.recv_bytes = R * H * torch.finfo(dt).bits // 8
        # Buffers (static for graphs).
        self.x = w(T, H)
        self.attn_in = w(T, a.attn_out_in)
        self.a0_out = torch.empty(T, a.q_lora, device=dev, dtype=dt)
        self.h = torch.empty(T, H, device=dev, dtype=dt)
        self.logits = torch.empty(T, E, device=dev, dtype=dt)
        self.send = torch.empty(T * k, H, device=dev, dtype=dt)
        self.recv = torch.empty(R, H, device=dev, dtype=dt)
        self.grouped = torch.empty(R, H, device=dev, dtype=dt)
        self.inter = torch.empty(R, 2 * a.moe_inter, device=dev, dtype=dt)
        self.eout = torch.empty(R, H, device=dev, dtype=dt)
        self.back = torch.empty(T * k, H, device=dev, dtype=dt)
        self.out = torch.zeros(T, H, device=dev, dtype=dt)
        self.s_inter = torch.empty(T, 2 * a.shared_inter, device=dev, dtype=dt)
        self.s_out = torch.empty(T, H, device=dev, dtype=dt)
        self.grouped_mm = grouped_mm_available(a)

    # --- the ops -------------------------------------------------------------------------------------------------
    def A0(self):
        torch.mm(self.x, self.wa0, out=self.a0_out)

    def A1(self):
        torch.mm(self.attn_in, self.wa1, out=self.h)

    def R(self):
        torch.mm(self.h, self.wr, out=self.logits)

    def D(self):
        torch.index_select(self.h, 0, self.send_tok, out=self.send)
        a2a(self.recv, self.send, self.recv_splits, self.send_splits)

    def _experts(self, x, w, out):
        if self.grouped_mm and Layer.grouped_ok:
            try:
                out.copy_(torch._grouped_mm(x, w, offs=self.offs))
                return
            except (RuntimeError, TypeError) as ex:  # first eager call decides; graphs capture after warm-up
                Layer.grouped_ok = False
                print(f"torch._grouped_mm unusable ({ex}); a loop of GEMMs instead", flush=True)
        lo = 0
        for e, n in enumerate(self.tokens_per_expert):
            if n:
                torch.mm(x[lo:lo + n], w[e], out=out[lo:lo + n])
            lo += n

    def M1(self):
        torch.index_select(self.recv, 0, self.group_perm, out=self.grouped)
        self._experts(self.grouped, self.w13, self.inter)

    def M2(self):
        g, u = self.inter.chunk(2, dim=1)
        act = torch.nn.functional.silu(g) * u
        self._experts(act, self.w2, self.grouped)
        torch.index_select(self.grouped, 0, self.ungroup_perm, out=self.eout)

    def C(self):
        a2a(self.back, self.eout, self.send_splits, self.recv_splits)
        self.out.zero_()
        self.out.index_add_(0, self.send_tok, self.back, alpha=1)

    def S1(self):
        torch.mm(self.h, self.ws13, out=self.s_inter)

    def S2(self):
        g, u = self.s_inter.chunk(2, dim=1)
        torch.mm(torch.nn.functional.silu(g) * u, self.ws2, out=self.s_out)


def a2a(out, inp, out_splits, in_splits):
    if dist.get_world_size() == 1:
        # all_to_all_single at one rank: NCCL copies to itself; kept as the collective so the path is the same.
        dist.all_to_all_single(out, inp, out_splits, in_splits)
    else:
        dist.all_to_all_single(out, inp, out_splits, in_splits)


def kernel_desc(layer, a, name, rank, ws):
    T, H, k = layer.T, a.hidden, a.topk
    epr = a.experts_per_rank
    mean_rows = max(1, round(layer.rows / epr))
    ranks = list(range(ws))
    if name == "A0":
        return {"kind": "gemm", "m": T, "n": a.q_lora, "k": H}
    if name == "A1":
        return {"kind": "gemm", "m": T, "n": H, "k": a.attn_out_in}
    if name == "R":
        return {"kind": "gemm", "m": T, "n": epr * ws, "k": H}
    if name == "D":
        return {"kind": "all_to_all", "bytes": layer.send_bytes, "recv_bytes": layer.recv_bytes, "ranks": ranks}
    if name == "C":
        return {"kind": "all_to_all", "bytes": layer.recv_bytes, "recv_bytes": layer.send_bytes, "ranks": ranks}
    if name == "M1":
        return {"kind": "grouped_gemm", "groups": epr, "m": mean_rows, "n": 2 * a.moe_inter, "k": H}
    if name == "M2":
        return {"kind": "grouped_gemm", "groups": epr, "m": mean_rows, "n": H, "k": a.moe_inter}
    if name == "S1":
        return {"kind": "gemm", "m": T, "n": 2 * a.shared_inter, "k": H}
    if name == "S2":
        return {"kind": "gemm", "m": T, "n": H, "k": a.shared_inter}
    raise KeyError(name)


COMM = {"D", "C"}


def build_program(schedule, layers_by_ub, nl):
    """The ops in host issue order: (name, layer, ubatch, op, stream, deps). Streams: compute | comm."""
    ops = []
    last = {}  # (ub, key) -> op name

    def add(l, u, op, stream, deps):
        name = f"L{l}.u{u}.{op}"
        ops.append((name, l, u, op, stream, [d for d in deps if d]))
        return name

    for l in range(nl):
        if schedule == "serial":
            prev = ops[-1][0] if ops else None
            for op in ["A0", "A1", "R", "D", "M1", "M2", "C", "S1", "S2"]:
                prev = add(l, 0, op, "comm" if op in COMM else "compute", [prev])
        elif schedule == "async_combine":
            entry = [last.get((0, "C")), last.get((0, "S2"))]
            a0 = add(l, 0, "A0", "compute", entry)
            a1 = add(l, 0, "A1", "compute", [a0])
            r = add(l, 0, "R", "compute", [a1])
            d = add(l, 0, "D", "comm", [r])
            m1 = add(l, 0, "M1", "compute", [d])
            m2 = add(l, 0, "M2", "compute", [m1])
            last[(0, "C")] = add(l, 0, "C", "comm", [m2])
            s1 = add(l, 0, "S1", "compute", [m2])
            last[(0, "S2")] = add(l, 0, "S2", "compute", [s1])
        elif schedule == "dbo":
            r = {}
            for u in (0, 1):
                a0 = add(l, u, "A0", "compute", [last.get((u, "C")), last.get((u, "S2"))])
                a1 = add(l, u, "A1", "compute", [a0])
                r[u] = add(l, u, "R", "compute", [a1])
                r[(u, "D")] = add(l, u, "D", "comm", [r[u]])
            for u in (0, 1):
                m1 = add(l, u, "M1", "compute", [r[(u, "D")]])
                m2 = add(l, u, "M2", "compute", [m1])
                last[(u, "C")] = add(l, u, "C", "comm", [m2])
                s1 = add(l, u, "S1", "compute", [m2])
                last[(u, "S2")] = add(l, u, "S2", "compute", [s1])
        else:
            raise ValueError(schedule)
    return ops


def run_program(ops, layers, streams, timed, gate_cycles):
    """Issues the program; timed: an event before and after each op. Returns (origin, {name: (start_ev, end_ev)})."""
    comp, comm = streams
    done = {}
    evs = {}
    cur = torch.cuda.current_stream()
    origin = None
    with torch.cuda.stream(comp):
        comp.wait_stream(cur)
        if gate_cycles:
            torch.cuda._sleep(gate_cycles)
        if timed:
            origin = torch.cuda.Event(enable_timing=True)
            origin.record(comp)
        fork = torch.cuda.Event()
        fork.record(comp)
    comm.wait_event(fork)
    for name, l, u, op, stream, deps in ops:
        s = comm if stream == "comm" else comp
        with torch.cuda.stream(s):
            for d in deps:
                if d in done and done[d][1] is not s:
                    s.wait_event(done[d][0])
            if timed:
                b = torch.cuda.Event(enable_timing=True)
                b.record(s)
            getattr(layers[(l, u)], op)()
            e = torch.cuda.Event(enable_timing=timed)
            e.record(s)
            done[name] = (e, s)
            if timed:
                evs[name] = (b, e)
    cur.wait_stream(comp)
    cur.wait_stream(comm)
    return origin, evs


def main():
    a = parse_args()
    rank, ws = setup_dist()
    dev = torch.device("cuda", torch.cuda.current_device())
    dt = torch.bfloat16
    prov = provenance(a, ws)
    os.makedirs(a.out, exist_ok=True)
    rec_path = os.path.join(a.out, "records.jsonl")
    try:
        clock_hz = torch.cuda.clock_rate() * 1e6
    except Exception:  # pynvml missing: the H200's boost clock
        clock_hz = 1.98e9
    torch.manual_seed(a.seed + rank)
    weights = [make_weights(a, ws, dev, dt) for _ in range(a.layers)]
    gate_cycles = int(a.gate_us * 1e-6 * clock_hz)
    shapes = [("decode", int(t)) for t in a.decode_tokens.split(",") if t] + \
             [("prefill", int(t)) for t in a.prefill_tokens.split(",") if t]
    streams = (torch.cuda.Stream(), torch.cuda.Stream())
    for phase, T in shapes:
        for routing in a.routing.split(","):
            for schedule in a.schedules.split(","):
                nub = 2 if schedule == "dbo" else 1
                case = f"ep{ws}_{phase}_t{T}_{routing}__{schedule}"
                base = {"case": case, "phase": phase, "tokens_per_rank": T, "routing": routing,
                        "schedule": schedule, "rank": rank, "world_size": ws, "layers": a.layers,
                        "hidden": a.hidden, "experts_per_rank": a.experts_per_rank, "topk": a.topk,
                        "provenance": prov}
                if nub == 2 and T < 2:
                    if rank == 0:
                        with open(rec_path, "a") as f:
                            f.write(json.dumps({**base, "mode": "skipped",
                                                "reason": "dbo needs >= 2 tokens per rank"}) + "\n")
                    continue
                gen = torch.Generator().manual_seed(a.seed * 1000003 + rank)
                sizes = [T // 2, T - T // 2] if nub == 2 else [T]
                layers = {(l, u): Layer(a, sizes[u], rank, ws, routing, gen, dev, dt, weights[l])
                          for l in range(a.layers) for u in range(nub)}
                ops = build_program(schedule, layers, a.layers)
                t0 = time.time()
                # Eager: per-op spans behind the gate.
                for _ in range(a.warmup):
                    run_program(ops, layers, streams, False, 0)
                torch.cuda.synchronize()
                rows, eager_ms = [], []
                for rep in range(a.reps):
                    dist.barrier()
                    origin, evs = run_program(ops, layers, streams, True, gate_cycles)
                    torch.cuda.synchronize()
                    spans = {n: (origin.elapsed_time(b) * 1e3, origin.elapsed_time(e) * 1e3) for n, (b, e) in evs.items()}
                    lo = min(s for s, _ in spans.values())
                    hi = max(e for _, e in spans.values())
                    eager_ms.append(hi - lo)
                    for n, _, _, _, _, _ in ops:
                        rows.append(f"{n},{spans[n][0]:.3f},{spans[n][1]:.3f}")
                stem = os.path.join(a.out, case)
                with open(f"{stem}.rank{rank}.csv", "w") as f:
                    f.write(f"# {case} rank {rank} of {ws}: eager per-op CUDA-event spans (us) after a "
                            f"{a.gate_us:.0f} us gate; {a.reps} repeats in order; commit {prov['git_commit']}\n")
                    f.write("op,start_us,end_us\n" + "\n".join(rows) + "\n")
                # Graph: the same program captured once, replays timed as a whole.
                graph_us, graph_err = [], ""
                try:
                    g = torch.cuda.CUDAGraph()
                    cap = torch.cuda.Stream()
                    cap.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(cap):
                        run_program(ops, layers, streams, False, 0)  # warm on the capture stream
                    torch.cuda.synchronize()
                    with torch.cuda.graph(g, stream=cap):
                        run_program(ops, layers, streams, False, 0)
                    torch.cuda.synchronize()
                    for _ in range(a.warmup):
                        g.replay()
                    torch.cuda.synchronize()
                    for rep in range(a.reps):
                        dist.barrier()
                        b = torch.cuda.Event(enable_timing=True)
                        e = torch.cuda.Event(enable_timing=True)
                        b.record()
                        g.replay()
                        e.record()
                        torch.cuda.synchronize()
                        graph_us.append(b.elapsed_time(e) * 1e3)
                    del g
                except Exception as ex:  # recorded, not fatal: the eager record stands
                    graph_err = f"{type(ex).__name__}: {ex}"[:400]
                if rank == 0:
                    desc = {op: kernel_desc(layers[(0, 0)], a, op, rank, ws) for op in
                            ["A0", "A1", "R", "D", "M1", "M2", "C", "S1", "S2"]}
                    with open(f"{stem}.yaml", "w") as f:
                        f.write(f"# {case}: kernels/ep_testbed.py, one rank's program (SPMD over {ws} ranks); "
                                f"commit {prov['git_commit']}, seed {a.seed}\n")
                        f.write(f"name: {case}\nprofile: {a.profile}\nworld_size: {ws}\nops:\n")
                        for name, l, u, op, stream, deps in ops:
                            kd = kernel_desc(layers[(l, u)], a, op, rank, ws)
                            kern = ", ".join(f"{k}: {json.dumps(v) if not isinstance(v, str) else v}"
                                             for k, v in kd.items())
                            f.write(f"  - {{name: {name}, stream: {stream}, ubatch: {u}, "
                                    f"depends_on: [{', '.join(deps)}],\n     kernel: {{{kern}}}}}\n")
                    del desc
                # Makespans from every rank.
                mine = torch.tensor([statistics.median(eager_ms), statistics.median(graph_us) if graph_us else -1.0],
                                    device=dev, dtype=torch.float64)
                allm = [torch.zeros_like(mine) for _ in range(ws)]
                dist.all_gather(allm, mine)
                if rank == 0:
                    with open(rec_path, "a") as f:
                        f.write(json.dumps({**base, "mode": "eager", "makespan_us": eager_ms,
                                            "median_us": statistics.median(eager_ms),
                                            "median_us_per_rank": [float(x[0]) for x in allm],
                                            "send_bytes_per_layer": layers[(0, 0)].send_bytes,
                                            "recv_rows_per_expert": layers[(0, 0)].tokens_per_expert,
                                            "grouped_mm_used": grouped_mm_available(a) and Layer.grouped_ok,
                                            "recording": f"{case}.rank<r>.csv", "op_list": f"{case}.yaml",
                                            "wall_s": round(time.time() - t0, 2)}) + "\n")
                        f.write(json.dumps({**base, "mode": "graph", "makespan_us": graph_us,
                                            "median_us": statistics.median(graph_us) if graph_us else None,
                                            "median_us_per_rank": [float(x[1]) for x in allm],
                                            "error": graph_err}) + "\n")
                    print(f"{case}: eager {statistics.median(eager_ms):.1f} us, graph "
                          f"{(statistics.median(graph_us) if graph_us else float('nan')):.1f} us {graph_err}",
                          flush=True)
                del layers
                torch.cuda.empty_cache()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
