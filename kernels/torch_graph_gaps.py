#!/usr/bin/env python3
"""dbosim calibration: the gaps between back-to-back kernels in eager mode, in one CUDA graph and in piecewise graphs.

Appends JSON-lines records (family "host", the format of dbosim-calibrate-run) to RAW:
  eager_launch_{empty,add}   host time of one eager launch (PyTorch dispatch + cudaLaunchKernel), the GPU kept busy
  eager_gpu_{empty,add}      GPU time per kernel of N eager kernels queued ahead of the GPU: (T(N+1) - T(1)) / N
  graph_gpu_{empty,add}      GPU time per kernel inside one CUDA graph: (T(101) - T(1)) / 100 (as the C++ suite's
                             graph_kernel, which measured 0.499 us with an empty kernel)
  graph_launch_cpu           host time of one torch.cuda.CUDAGraph.replay() (cudaGraphLaunch) of a k-kernel graph
  piece_gap_{empty,add}      GPU gap at a boundary between two graphs replayed back to back, host ahead:
                             (T(P graphs of k kernels) - T(1 graph of P*k kernels)) / (P - 1)
  piece_eager_gap_{empty,add} the same with one eager kernel after each graph (the piecewise pattern: graph, split op,
                             graph, ...): (T(P x (graph of k + 1 eager)) - T(1 graph of P*(k+1) kernels)) / P, the GPU
                             time a graph -> eager -> graph boundary adds to the kernels' own in-graph time
  piece_hostbound_{empty,add} wall time per (graph + eager kernel) pair when the host issues them with the GPU idle
                             (host-bound; what a piecewise step at small batch looks like)
Kernels: `empty` is torch.cuda._sleep(0) (one thread, no loop: the closest PyTorch has to an empty kernel); `add`
is x.add_(1) on a one-element float32 tensor (an elementwise kernel, the `elementwise` floor family). Every repeat is
timed with CUDA events after warm-up; the GPU spins first (torch.cuda._sleep) so that the host has queued the whole
sequence before the start event, except in piece_hostbound. Medians of REPS repeats, p10/p90 beside.
Correctness: every sequence is first run on a zeroed counter with `add` kernels and the count is checked.

usage: torch_graph_gaps.py RAW.jsonl"""
import json, os, sys, time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from raw_records import gpu_environment, record_key  # noqa: E402

REPS = 25
N_EAGER = 200  # eager kernels per timed sequence
P, K = 24, 8  # pieces, kernels per piece


def stats(v):
    v = sorted(v)
    return v[len(v) // 2], v[len(v) // 10], v[(9 * len(v)) // 10]


class Bench:
    def __init__(self, path):
        self.out = open(path, "a")
        self.x = torch.zeros(1, device="cuda", dtype=torch.float32)
        self.kinds = {"empty": lambda: torch.cuda._sleep(0), "add": lambda: self.x.add_(1)}
        # cycles per us of the spin kernel, to hold the GPU long enough for the host to get ahead
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1000); torch.cuda.synchronize()
        s.record(); torch.cuda._sleep(2_000_000); e.record(); torch.cuda.synchronize()
        self.cycles_per_us = 2_000_000 / (1e3 * s.elapsed_time(e))
        self.table = []
        self.info = env_info()

    def hold(self, us):
        torch.cuda._sleep(int(us * self.cycles_per_us))

    def write(self, variant, params, samples, impl, extra=None):
        med, p10, p90 = stats(samples)
        rec = {"key": record_key("host", params, variant), "family": "host", "variant": variant,
               "params": {n: float(x) for n, x in params.items()}, "status": "ok", "us": med, "us_p10": p10,
               "us_p90": p90, "reps": len(samples), "info": dict(self.info, impl=impl)}
        if extra:
            rec["extra"] = extra
        self.out.write(json.dumps(rec, sort_keys=True) + "\n")
        self.out.flush()
        self.table.append((variant, params, med, p10, p90))

    def gpu_time(self, issue, hold_us):
        """GPU time of `issue()` by events, the GPU held `hold_us` first (0: not held), REPS repeats after warm-up."""
        for _ in range(3):
            issue()
        torch.cuda.synchronize()
        out = []
        for _ in range(REPS):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if hold_us > 0:
                self.hold(hold_us)
            s.record(); issue(); e.record()
            torch.cuda.synchronize()
            out.append(1e3 * s.elapsed_time(e))
        return out

    def check(self, issue, expected, what):
        self.x.zero_(); torch.cuda.synchronize()
        issue(); torch.cuda.synchronize()
        got = self.x.item()
        if got != expected:
            raise SystemExit(f"CHECK FAILED: {what}: counter {got}, expected {expected}")

    def graph(self, fn, n):
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            fn()  # warm up on the side stream (lazy init outside the capture)
            torch.cuda.synchronize()
            with torch.cuda.graph(g, stream=s):
                for _ in range(n):
                    fn()
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        return g


def env_info():
    return dict(gpu_environment(), cpu=os.uname().machine + ", " + str(os.cpu_count()) + " cores",
                python=sys.version.split()[0], script="kernels/torch_graph_gaps.py")


def main():
    b = Bench(sys.argv[1])
    print(f"spin kernel: {b.cycles_per_us:.0f} cycles/us; {b.info}", flush=True)
    for kind, fn in b.kinds.items():
        # ---- correctness of the sequences, with the counting kernel
        add = b.kinds["add"]
        b.check(lambda: [add() for _ in range(N_EAGER)], N_EAGER, "eager")
        g101 = b.graph(add, 101)
        b.check(g101.replay, 101, "graph of 101")
        pieces = [b.graph(add, K) for _ in range(P)]
        b.check(lambda: [g.replay() for g in pieces], P * K, "pieces")
        b.check(lambda: [(g.replay(), add()) for g in pieces], P * (K + 1), "pieces + eager")

        # ---- eager: host launch time (GPU held so the launch queue never blocks), GPU time per queued kernel
        host = []
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        for _ in range(REPS):
            b.hold(6000)
            t0 = time.perf_counter()
            for _ in range(N_EAGER):
                fn()
            host.append((time.perf_counter() - t0) * 1e6 / N_EAGER)
            torch.cuda.synchronize()
        b.write(f"eager_launch_{kind}", {"kernels": N_EAGER}, host,
                f"host perf_counter over {N_EAGER} eager launches of {kind} (PyTorch dispatch + cudaLaunchKernel), "
                "the GPU held busy meanwhile")
        one = b.gpu_time(fn, 200)
        many = b.gpu_time(lambda: [fn() for _ in range(N_EAGER + 1)], 6000)
        b.write(f"eager_gpu_{kind}", {"kernels": N_EAGER},
                [(m - o) / N_EAGER for m, o in zip(sorted(many), sorted(one))],
                f"GPU time by events per eager kernel ({kind}), {N_EAGER + 1} queued ahead minus 1, / {N_EAGER}")

        # ---- one graph: GPU time per kernel
        g1, g101 = b.graph(fn, 1), b.graph(fn, 101)
        one, many = b.gpu_time(g1.replay, 200), b.gpu_time(g101.replay, 200)
        b.write(f"graph_gpu_{kind}", {"kernels": 100}, [(m - o) / 100 for m, o in zip(sorted(many), sorted(one))],
                f"GPU time by events per kernel ({kind}) inside one CUDA graph: (101 kernels - 1 kernel) / 100")

        # ---- host time of one replay of a k-kernel graph
        for k in (1, 8, 32):
            g = b.graph(fn, k)
            host = []
            for _ in range(3):
                g.replay()
            torch.cuda.synchronize()
            for _ in range(REPS):
                b.hold(6000)
                t0 = time.perf_counter()
                for _ in range(100):
                    g.replay()
                host.append((time.perf_counter() - t0) * 1e6 / 100)
                torch.cuda.synchronize()
            b.write("graph_launch_cpu" if kind == "empty" else "graph_launch_cpu_add", {"kernels": k}, host,
                    f"host perf_counter over 100 torch.cuda.CUDAGraph.replay() of a {k}-kernel graph ({kind}), "
                    "the GPU held busy meanwhile")

        # ---- piecewise: P graphs of K kernels back to back, and with an eager kernel after each
        pieces = [b.graph(fn, K) for _ in range(P)]
        whole = b.graph(fn, P * K)
        whole_e = b.graph(fn, P * (K + 1))
        t_whole = b.gpu_time(whole.replay, 200)
        t_whole_e = b.gpu_time(whole_e.replay, 200)
        t_pieces = b.gpu_time(lambda: [g.replay() for g in pieces], 6000)
        t_mixed = b.gpu_time(lambda: [(g.replay(), fn()) for g in pieces], 6000)
        t_host = b.gpu_time(lambda: [(g.replay(), fn()) for g in pieces], 0)
        b.write(f"piece_gap_{kind}", {"pieces": P, "kernels": K},
                [(p - w) / (P - 1) for p, w in zip(sorted(t_pieces), sorted(t_whole))],
                f"GPU gap per graph boundary: {P} graphs of {K} {kind} kernels replayed back to back (host ahead) "
                f"minus one graph of {P * K}, / {P - 1}",
                {"us_pieces": stats(t_pieces)[0], "us_whole": stats(t_whole)[0]})
        b.write(f"piece_eager_gap_{kind}", {"pieces": P, "kernels": K},
                [(p - w) / P for p, w in zip(sorted(t_mixed), sorted(t_whole_e))],
                f"GPU time a graph -> eager kernel -> graph boundary adds: {P} x (graph of {K} + 1 eager {kind} "
                f"kernel), host ahead, minus one graph of {P * (K + 1)}, / {P}",
                {"us_mixed": stats(t_mixed)[0], "us_whole": stats(t_whole_e)[0]})
        b.write(f"piece_hostbound_{kind}", {"pieces": P, "kernels": K}, [t / P for t in t_host],
                f"wall (events) per (graph of {K} + 1 eager {kind} kernel) pair, issued with the GPU idle "
                "(host-bound)")

    print(f"{'variant':28s} {'params':26s} {'median':>8s} {'p10':>8s} {'p90':>8s}  (us)")
    for v, p, m, lo, hi in b.table:
        print(f"{v:28s} {str(p):26s} {m:8.3f} {lo:8.3f} {hi:8.3f}")


if __name__ == "__main__":
    main()
