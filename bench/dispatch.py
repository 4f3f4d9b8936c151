"""Where a kernel call's time goes: per-call dispatch of issue 3's small and
fused kernels, and the first call of a dynamic kernel at a new size (issue 4).

    bazel build //client/python:pypto/_native.so //proto:pto_v1_py
    tools/pypto-python bench/dispatch.py [--reps=N] [--only=SUBSTR] [--no-first-call]

Before/after: run it alternately against two builds of the extension, e.g.
PYTHONPATH=DIR tools/pypto-python ... with DIR/pypto/_native.so from an
earlier commit (two builds cannot share one process: they register the same
protobuf descriptors); an extension without run_profiled leaves the
breakdown cells empty.

Per kernel, measured interleaved in one process (kernels.interleaved_times:
blocks of calls taking turns, medians and best times):
  - jit: the full call, kernel(a, b, out) with torch tensors (fast path);
  - run: the compiled kernel's run() alone (no Python wrapper);
  - torch: the same computation op by op (bench/kernels.py's lambdas).
Then the call broken down (medians of run_profiled over the same number of
calls; runtime/executor.h LaunchProfile): the Python wrapper (jit - run), the
binding and argument conversion (run - the runtime's total), argument checks,
workspace, executor setup, the caller running tasks, and the wait for the
workers; from traced calls (run_profiled(trace=True)), the share of calls
whose tasks ran on more than one thread and the median tail (the last
thread's end after the first thread's); and CPU time per call (process_time:
every thread of this process).

On this shared VM, `chrt -f 10 tools/pypto-python bench/dispatch.py ...`
(root; SCHED_FIFO for the few seconds of a run, which stalls everyone else's
processes meanwhile) stands in for a quiet machine: at load 10 its triad
ceilings matched the quiet runs' (43-47 GB/s at 6 MiB).

First call at a new size (--no-first-call skips it): issue 4's loop softmax
and the whole-batch softmax over a DYNAMIC batch of (32, 1, 256) rows, each
size called once fresh (expansion, plan, fresh workspace), then again
(cached plan), with the breakdown of the first call.
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402  (fixes thread counts before numpy and torch start)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import pypto  # noqa: E402

PHASES = ("check", "workspace", "setup", "caller", "wait")


def entry_of(kernel):
    return next(iter(kernel._cache.values()))


def cases():
    """(name, jit kernel, arrays, torch op by op) for issue 3's dispatch rows."""
    out = []
    a, b = kernels.rand((1024, 1024), seed=1), kernels.rand((1024, 1024), seed=2)
    o = np.empty_like(a)
    ta, tb, to = map(torch.from_numpy, (a, b, np.empty_like(a)))
    out.append(("fused (a+b)*2 1024x1024", kernels.k_add_mul((2, 1024)), (a, b, o),
                lambda: torch.mul(ta + tb, 2, out=to)))
    # Issue 3's small calls short of 50% of bandwidth: FP16 add, erfc 1M.
    h, h2 = (kernels.rand((1024, 1024), np.float16, seed=s) for s in (1, 2))
    ho = np.empty_like(h)
    th, th2, tho = map(torch.from_numpy, (h, h2, np.empty_like(h)))
    out.append(("add 1024x1024 fp16", kernels.k_add16((2, 1024)), (h, h2, ho),
                lambda: torch.add(th, th2, out=tho)))
    e = kernels.rand((1 << 20,), seed=3)
    eo = np.empty_like(e)
    te, teo = torch.from_numpy(e), torch.from_numpy(np.empty_like(e))
    out.append(("erfc 1M", kernels.k_erfc((8192,)), (e, eo), lambda: torch.erfc(te, out=teo)))
    for shape, tile in (((32, 32, 1, 256), (4, 8, 1, 256)), ((4096, 1024), (4, 1024))):
        x = kernels.rand(shape, seed=5)
        xo = np.empty_like(x)
        tx, txo = torch.from_numpy(x), torch.empty(shape)

        def torch_softmax(tx=tx, txo=txo):
            e = torch.exp(tx - tx.amax(-1, keepdim=True))
            torch.div(e, e.sum(-1, keepdim=True), out=txo)
        out.append(("softmax " + "x".join(map(str, shape)), kernels.k_softmax(tile), (x, xo),
                    torch_softmax))
    x = kernels.rand((4096, 1024), seed=6)
    g, bt = kernels.rand((1024,), seed=7), kernels.rand((1024,), seed=8)
    xo = np.empty_like(x)
    tx, tg, tbt, txo = map(torch.from_numpy, (x, g, bt, np.empty_like(x)))

    def torch_ln():
        xc = tx - tx.mean(-1, keepdim=True)
        var = (xc * xc).mean(-1, keepdim=True)
        torch.add(xc * torch.rsqrt(var + 1e-5) * tg, tbt, out=txo)
    out.append(("layer norm 4096x1024", kernels.k_layer_norm((4, 1024)), (x, g, bt, xo),
                torch_ln))
    s, s2 = kernels.rand((8, 8), seed=13), kernels.rand((8, 8), seed=14)
    so = np.empty_like(s)
    ts, ts2, tso = map(torch.from_numpy, (s, s2, np.empty_like(s)))
    out.append(("add 8x8 (launch)", kernels.k_add((8, 8)), (s, s2, so),
                lambda: torch.add(ts, ts2, out=tso)))
    return out


def cpu_per_call(fn, calls):
    start = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - start) / calls


def us(seconds):
    return kernels.fmt_us(seconds)


def profiled(native, run_args, reps):
    """Median of each LaunchProfile phase over `reps` calls ({} when this
    build of the extension has no run_profiled)."""
    if not hasattr(native, "run_profiled"):
        return {}
    prof = [native.run_profiled(run_args) for _ in range(reps)]
    med = {k: statistics.median(p[k] for p in prof) for k in PHASES + ("total",)}
    med["tasks"] = prof[0]["tasks"]
    try:
        traced = [native.run_profiled(run_args, trace=True)["threads"] for _ in range(reps)]
    except TypeError:  # an extension from before trace=True
        return med
    # How the tasks were split: in how many calls more than one thread ran
    # tasks, and how long the last thread ran on after the first finished.
    med["split"] = sum(len(t) > 1 for t in traced) / reps
    med["tail"] = statistics.median(
        max(v[2] for v in t.values()) - min(v[2] for v in t.values()) for t in traced)
    return med


def dispatch_rows(opts):
    rows = ["| kernel | tasks | jit | run | torch op by op | torch/jit | "
            "wrapper | binding | check | workspace | setup | caller | wait | "
            "calls on 2+ threads | tail | CPU/call jit | CPU/call torch |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, kernel, arrays, torch_fn in cases():
        if opts.only and opts.only not in name:
            continue
        targs = [torch.from_numpy(x) for x in arrays]
        kernel(*targs)
        entry = entry_of(kernel)
        native = entry.compiled.kernel
        run_args = list(arrays)
        impls = [lambda: kernel(*targs), lambda: native.run(run_args), torch_fn]
        times = kernels.interleaved_times(impls, opts.reps, opts.warmup)
        jit, raw, tch = times[0], times[1], times[2]
        med = profiled(native, run_args, opts.reps)
        cpu_jit = cpu_per_call(impls[0], opts.reps)
        time.sleep(kernels.SETTLE_SECONDS)
        cpu_torch = cpu_per_call(torch_fn, opts.reps)
        cells = [name, str(med.get("tasks", "")),
                 f"{us(jit[0])} (best {us(jit[1])})", f"{us(raw[0])} (best {us(raw[1])})",
                 f"{us(tch[0])} (best {us(tch[1])})",
                 f"{tch[0] / jit[0]:.2f}x (best {tch[1] / jit[1]:.2f}x)",
                 us(jit[0] - raw[0]),
                 us(max(0.0, raw[0] - med["total"])) if med else ""]
        cells += [us(med[k]) if med else "" for k in PHASES]
        cells += [f"{100 * med['split']:.0f}%" if "split" in med else "",
                  us(med["tail"]) if "tail" in med else ""]
        cells += [us(cpu_jit), us(cpu_torch)]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def first_call_rows(opts):
    import loop_softmax as ls
    rows = ["| kernel | batch | tasks | first call | expand | plan | workspace | run (caller + "
            "wait) | second call |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    small = torch.randn(3, 32, 1, 256)
    for name, fn in (("loop", ls.loop_softmax), ("whole", ls.whole_softmax)):
        fn(small, torch.empty_like(small))
        native = entry_of(fn).compiled.kernel
        for bs in opts.batches:
            x = torch.randn(bs, 32, 1, 256).numpy()
            out = np.zeros_like(x)  # touched: its page faults are not the kernel's
            start = time.perf_counter()
            p = native.run_profiled([x, out]) if hasattr(native, "run_profiled") else {}
            if not p:
                native.run([x, out])
            first = time.perf_counter() - start
            start = time.perf_counter()
            native.run([x, out])
            second = time.perf_counter() - start
            cells = [name, str(bs), str(p.get("tasks", "")), us(first)]
            cells += [us(p[k]) if p else "" for k in ("expand", "plan", "workspace")]
            cells += [us(p["caller"] + p["wait"]) if p else "", us(second)]
            rows.append("| " + " | ".join(cells) + " |")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100, help="timed calls per implementation")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--only", default="", help="dispatch rows whose name contains this")
    parser.add_argument("--no-first-call", action="store_true")
    parser.add_argument("--batches", type=int, nargs="*", default=[4096, 4000])
    opts = parser.parse_args()
    print(f"threads {kernels.THREADS}, load average {os.getloadavg()[0]:.2f}, "
          f"tree {kernels.source_tree()}")
    for row in dispatch_rows(opts):
        print(row, flush=True)
    if not opts.no_first_call:
        print()
        for row in first_call_rows(opts):
            print(row, flush=True)


if __name__ == "__main__":
    main()
