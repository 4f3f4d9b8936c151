"""Whether issue 3's short two-thread calls really run on two cores: per call,
each thread's share of the roots, the CPU it ran on and when it started and
finished (runtime ShareEvent, `run_profiled(shares=True)`).

    bazel build //client/python:pypto/_native.so //proto:pto_v1_py
    chrt -f 10 tools/pypto-python bench/call_trace.py [--calls=200] [--only=SUBSTR] [--calls-out=FILE]
    tools/pypto-python bench/call_trace.py --ab=0,1,17,4 --calls=400   # policies A/B
    tools/pypto-python bench/call_trace.py --ab=1,33,4 --calls=400     # home segments (32)

Calls the compiled kernel's run_profiled (the runtime's Kernel::Run, no Python
wrapper) in blocks of 5 after bench/kernels.py's 30 ms pause, as kernels.py
times its rows, and prints per kernel (medians over the calls; us):

  - call: Kernel::Run's whole time;
  - 2 threads: calls in which two threads claimed roots (the rest ran on one);
  - same CPU: of those, calls whose two threads started on one CPU (they took
    turns on it); migrated: calls in which a thread ended on another CPU;
  - worker start: when the first worker began its share, from Run's start
    (the caller queues its claimers within the setup phase, then claims);
  - busy, roots, per root: per call, the time each thread spent in its
    shares and the roots it ran, the caller's against the workers' (medians
    over the calls in which the thread ran roots; roots over every call);
  - tail: the last share's end after the first's.

Then per kernel and kind of call (the caller ran every root; a worker did,
having preempted the caller on its CPU or taken the roots while it waited;
the roots split over two CPUs; split on one CPU): how many calls, their
median, and how long Run went on after the last share ended.

Before/after, executor policies: --ab=0,1,17,4 compares the runtime's
Executor::Policy bits (_native.set_executor_policy, bench only) in one
process: per kernel, the policies take turns in blocks of 5 calls (each after
the pause and one untimed call), the order rotating each turn, until each has
--calls; then per policy the median, best, p90 and mean call (the mean is
what the slow tails move), the median of each round of --round-calls calls
(a round: consecutive turns, so every policy's round saw the same stretch of
load), in how many rounds that median beat the first policy's and policy 4's
(kCallerRunsVectorRoots: the caller runs every root, one thread's time in
the same process), and the kinds of call. Bits: 1 wake a worker off the
caller's CPU (the default), 4 one thread, 16 pinned workers, 32 home
segments (each thread starts in the same segment of the roots every call;
runtime executor.h). Other changes: alternate processes
on two builds of the extension (PYTHONPATH=DIR/with/pypto/_native.so, as
bench/dispatch.py says), or set the executor's environment
(PTO_SPIN_MICROS, ...) per process; per-process medians moved 10-25% between
rounds of one build in session 6: a 5-10% change needs --ab.
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402  (fixes thread counts before numpy and torch start)

import numpy as np  # noqa: E402


def cases():
    h, h2 = (kernels.rand((1024, 1024), np.float16, seed=s) for s in (1, 2))
    e = kernels.rand((1 << 20,), seed=3)
    x = kernels.rand((32, 32, 1, 256), seed=5)
    big = kernels.rand((4096, 1024), seed=6)
    return [("add 1024x1024 fp16", kernels.k_add16((2, 1024)), [h, h2, np.empty_like(h)]),
            ("erfc 1M", kernels.k_erfc((8192,)), [e, np.empty_like(e)]),
            ("softmax 32x32x1x256", kernels.k_softmax((4, 8, 1, 256)), [x, np.empty_like(x)]),
            # Streamed from memory (16 MiB in, 16 out): where a claiming
            # policy for in-L2 calls must not lose.
            ("softmax 4096x1024", kernels.k_softmax((4, 1024)), [big, np.empty_like(big)])]


def native_of(kernel, arrays):
    kernel(*arrays)
    return next(iter(kernel._cache.values())).compiled.kernel


def traced_calls(native, arrays, calls, block=5):
    out = []
    while len(out) < calls:
        time.sleep(kernels.SETTLE_SECONDS)
        native.run(arrays)  # untimed, as kernels.interleaved_times
        for _ in range(min(block, calls - len(out))):
            out.append(native.run_profiled(arrays, shares=True))
    return out


# Executor::kCallerRunsVectorRoots: one thread's time, the baseline.
ONE_THREAD = 4


def ab_calls(native, arrays, policies, calls, block=5):
    """{policy: [profile]}: the policies take turns in blocks of `block`
    calls after the pause, the order rotating each turn."""
    from pypto import _native
    out = {p: [] for p in policies}
    turn = 0
    while min(len(v) for v in out.values()) < calls:
        order = policies[turn % len(policies):] + policies[:turn % len(policies)]
        turn += 1
        for policy in order:
            _native.set_executor_policy(policy)
            time.sleep(kernels.SETTLE_SECONDS)
            native.run(arrays)
            for _ in range(block):
                out[policy].append(native.run_profiled(arrays, shares=True))
    _native.set_executor_policy(policies[0])
    return out


def ab_rows(name, by_policy, round_calls):
    """Per policy: calls, median, best, p90, per-round medians, rounds whose
    median beat the first policy's, and per kind of call: calls / median."""
    policies = list(by_policy)
    rounds = {}
    for p, profiles in by_policy.items():
        totals = [q["total"] for q in profiles]
        rounds[p] = [statistics.median(totals[i:i + round_calls])
                     for i in range(0, len(totals) - round_calls + 1, round_calls)]
    rows = []
    for p, profiles in by_policy.items():
        totals = [q["total"] for q in profiles]
        def beats(ref):
            if p == ref or ref not in rounds:
                return "-"
            wins = sum(a < b for a, b in zip(rounds[p], rounds[ref]))
            return f"{wins}/{len(rounds[p])}"
        kinds = []
        for kind in KINDS:
            ks = [q["total"] for q in profiles if kind_of(q) == kind]
            if ks:
                kinds.append(f"{len(ks)} / {med(ks)}")
            else:
                kinds.append("-")
        rows.append([name, str(p), str(len(profiles)), med(totals),
                     f"{min(totals) * 1e6:.0f}", p90(totals),
                     f"{statistics.mean(totals) * 1e6:.0f}",
                     " ".join(f"{r * 1e6:.0f}" for r in rounds[p]),
                     beats(policies[0]), beats(ONE_THREAD)] + kinds)
    return rows


def main_ab(opts):
    policies = [int(p) for p in opts.ab.split(",")]
    load = os.getloadavg()[0]
    print(f"threads {kernels.THREADS}, load average {load:.2f}, "
          f"tree {kernels.source_tree()}, PTO_SPIN_MICROS={os.environ.get('PTO_SPIN_MICROS', '')}, "
          f"policies {policies} (in turns of 5 calls), rounds of {opts.round_calls} calls")
    header = ["kernel", "policy", "calls", "median", "best", "p90", "mean", "round medians",
              "rounds beating the first policy", f"rounds beating {ONE_THREAD}"] + [
                  f"{k}: calls / median" for k in KINDS]
    print("| " + " | ".join(header) + " |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---|---|---|")
    for name, kernel, arrays in cases():
        if opts.only and opts.only not in name:
            continue
        native = native_of(kernel, arrays)
        by_policy = ab_calls(native, arrays, policies, opts.calls)
        for row in ab_rows(name, by_policy, opts.round_calls):
            print("| " + " | ".join(row) + " |", flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


def med(values, scale=1e6):
    values = list(values)
    return f"{statistics.median(values) * scale:.0f}" if values else "-"


def p90(values, scale=1e6):
    values = sorted(values)
    return f"{values[int(0.9 * (len(values) - 1))] * scale:.0f}" if values else "-"


def per_thread(profile):
    """{thread name: (roots, busy, first start, last end, cpus)} of one call:
    a thread may run several claimers (the caller pops a queued one when no
    worker took it)."""
    threads = {}
    for name, cpu0, cpu1, start, end, roots, _ in profile["shares"]:
        r, busy, first, last, cpus = threads.get(name, (0, 0.0, start, end, set()))
        threads[name] = (r + roots, busy + (end - start), min(first, start),
                         max(last, end), cpus | {cpu0, cpu1})
    return threads


def summary(name, profiles):
    calls = len(profiles)
    two = same_cpu = migrated = 0
    worker_starts, tails = [], []
    busy = {"caller": [], "worker": []}
    roots = {"caller": [], "worker": []}
    per_root = {"caller": [], "worker": []}
    for p in profiles:
        if any(s[1] != s[2] for s in p["shares"]):
            migrated += 1
        threads = per_thread(p)
        working = {n: t for n, t in threads.items() if t[0] > 0}
        if len(working) >= 2:
            two += 1
            starts = [s[1] for s in p["shares"] if s[5] > 0]
            same_cpu += len(set(starts)) == 1
        workers = [t for n, t in threads.items() if n != "caller"]
        if workers:
            worker_starts.append(min(t[2] for t in workers))
        for n, (r, b, _, _, _) in threads.items():
            side = "caller" if n == "caller" else "worker"
            roots[side].append(r)
            if r:
                busy[side].append(b)
                per_root[side].append(b / r)
        ends = [t[3] for t in working.values()]
        tails.append(max(ends) - min(ends))
    return [name, str(profiles[0]["tasks"]), med(p["total"] for p in profiles),
            f"{100 * two / calls:.0f}%",
            f"{100 * same_cpu / max(1, two):.0f}%",
            f"{100 * migrated / calls:.0f}%",
            f"{med(worker_starts)} (p90 {p90(worker_starts)})",
            f"{med(busy['caller'])} / {med(busy['worker'])}",
            f"{med(roots['caller'], 1)} / {med(roots['worker'], 1)}",
            f"{med(per_root['caller'], 1e9)} / {med(per_root['worker'], 1e9)} ns",
            med(tails)]


KINDS = ("caller ran every root", "worker ran every root", "split over two CPUs",
         "split on one CPU")


def kind_of(profile):
    working = [s for s in profile["shares"] if s[5] > 0]
    threads = {s[0] for s in working}
    if len(threads) == 1:
        return KINDS[0] if threads == {"caller"} else KINDS[1]
    return KINDS[2] if len({s[1] for s in working}) > 1 else KINDS[3]


def kind_rows(name, profiles):
    """Per kind of call: how many, their median time, and how long Run went
    on after the last share ended (Kernel::Run's total against the shares'
    ends, which count from Executor::Run's start: a few us of checks)."""
    rows = []
    for kind in KINDS:
        ps = [p for p in profiles if kind_of(p) == kind]
        if not ps:
            continue
        after = [p["total"] - max(s[4] for s in p["shares"] if s[5] > 0) for p in ps]
        rows.append([name, kind, str(len(ps)), med(p["total"] for p in ps), med(after)])
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--only", default="", help="kernels whose name contains this")
    parser.add_argument("--calls-out", default="",
                        help="also write every call's shares here (one line per call)")
    parser.add_argument("--ab", default="",
                        help="compare these executor policy bits in one process, e.g. 0,1,2")
    parser.add_argument("--round-calls", type=int, default=50,
                        help="with --ab: calls per policy per round")
    opts = parser.parse_args()
    if opts.ab:
        return main_ab(opts)
    print(f"threads {kernels.THREADS}, load average {os.getloadavg()[0]:.2f}, "
          f"tree {kernels.source_tree()}, PTO_SPIN_MICROS={os.environ.get('PTO_SPIN_MICROS', '')}")
    print("| kernel | tasks | call | 2 threads | same CPU | migrated | worker start | "
          "busy caller / worker | roots caller / worker | per root caller / worker | tail |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    dump = open(opts.calls_out, "w") if opts.calls_out else None
    kinds = []
    for name, kernel, arrays in cases():
        if opts.only and opts.only not in name:
            continue
        native = native_of(kernel, arrays)
        profiles = traced_calls(native, arrays, opts.calls)
        print("| " + " | ".join(summary(name, profiles)) + " |", flush=True)
        kinds += kind_rows(name, profiles)
        if dump:
            for p in profiles:
                dump.write(f"{name}\t{p['total'] * 1e6:.1f}\t" + " ".join(
                    f"{s[0]}@{s[1]}>{s[2]}:{s[3] * 1e6:.1f}-{s[4] * 1e6:.1f}:{s[5]}"
                    for s in p["shares"]) + "\n")
    if dump:
        dump.close()
    print()
    print("| kernel | kind of call | calls | call | Run's end after the last share |")
    print("|---|---|---:|---:|---:|")
    for row in kinds:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
