#!/usr/bin/env python3
"""Cold compile latency of each bench/kernels.py row: its kernel's first call in a fresh process, empty caches.

    tools/pypto-python bench/cold_compile.py [--only=SUBSTR[,SUBSTR...]] [--runs=N] [--output=FILE.md]
                                             [--pch-dir=DIR]

For every row of kernels.py's table, --runs fresh Python processes each with an empty pypto disk cache
(PYPTO_CACHE_DIR in a new temporary directory) and no compile server make the row's first pypto call:
trace, compile with the embedded compiler (the native C++ compiler included), load and run once. A
child's clock starts after its imports (pypto, numpy, torch, kernels.py) and after the row's inputs
are made, so the time is the call's; the compiler's stages come from the call's CompileInfo. "CPU" is
the child's CPU time over the call, its own and the compiler's (user + system): on a machine shared
with other work the wall time grows with the load and the CPU time hardly moves.

Each row is measured twice: with the precompiled headers (PTO_PCH_DIR=--pch-dir, default a directory of
this user's under $TMPDIR kept between runs; a call that had to build its .gch first is run again, as
the .gch is built once per compiler, flags and headers) and without them (PTO_PCH_DIR=off). Medians over
the runs. Targets (the first call, with the precompiled headers): small elementwise kernels < 300 ms,
softmax and layer norm < 500 ms.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r'''
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
import kernels
case = next(c for c in kernels.cases() if c.name == sys.argv[2])
args = case.make()[0]
def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
cpu0, kids0, start = time.process_time(), children_cpu(), time.perf_counter()
case.kernel(*args)
seconds = time.perf_counter() - start
cpu = time.process_time() - cpu0 + children_cpu() - kids0
info = case.kernel.last_compile
print(json.dumps({"seconds": seconds, "cpu": cpu, "source": info.source,
                  "stages": [[name, s] for name, s in info.stages]}))
'''

# Row name prefixes -> the target first-call time in seconds.
TARGETS = (("add ", 0.300), ("fused ", 0.300), ("erfc", 0.300), ("concat", 0.300),
           ("softmax", 0.500), ("layer norm", 0.500))


def default_pch_dir():
    return os.path.join(tempfile.gettempdir(), f"pto-bench-pch-{os.getuid()}")


def target_of(name):
    for prefix, seconds in TARGETS:
        if name.startswith(prefix):
            return seconds
    return None


def _gch_files(pch_dir):
    return set(glob.glob(os.path.join(pch_dir, "*", "*.gch"))) if pch_dir != "off" else set()


def cold_call(name, pch_dir):
    """{"seconds", "cpu", "source", "stages": {stage: seconds}, "built_pch"} of `name`'s
    first call in a fresh process with an empty pypto cache, or {"error": why}."""
    before = _gch_files(pch_dir)
    with tempfile.TemporaryDirectory(prefix="cold_compile_") as cache:
        env = dict(os.environ, PYPTO_CACHE_DIR=cache, PTO_PCH_DIR=pch_dir)
        env.pop("PYPTO_COMPILE_SERVER", None)
        done = subprocess.run([sys.executable, "-c", CHILD, HERE, name], env=env,
                              capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return {"error": (lines[-1] if lines else f"exit {done.returncode}")[:160]}
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["stages"] = dict(out["stages"])
    out["built_pch"] = bool(_gch_files(pch_dir) - before)
    return out


def measure(name, runs=1, pch_dir=None, without=True):
    """{"pch": [calls], "plain": [calls]}: `runs` cold calls of row `name` with the
    precompiled headers in `pch_dir` (a call that built its .gch is repeated) and, when
    `without`, without them."""
    pch_dir = pch_dir or default_pch_dir()
    result = {"pch": [], "plain": []}
    for _ in range(max(1, runs)):
        call = cold_call(name, pch_dir)
        if call.get("built_pch"):
            call = cold_call(name, pch_dir)
        result["pch"].append(call)
        if without:
            result["plain"].append(cold_call(name, "off"))
    return result


def summary(calls):
    """(wall, cpu, native compile) medians in seconds and the sources seen, or None."""
    ok = [c for c in calls if "error" not in c]
    if not ok:
        return None
    return (statistics.median(c["seconds"] for c in ok), statistics.median(c["cpu"] for c in ok),
            statistics.median(c["stages"].get("native_compile", 0.0) for c in ok),
            sorted({c["source"] for c in ok}))


def verdict(name, pch):
    """'met', '**not met**' (with the CPU time's verdict when only the wall time misses), or ''."""
    target = target_of(name)
    if target is None or pch is None:
        return ""
    if pch[0] < target:
        return "met"
    if pch[1] < target:
        return (f"**not met** in wall time on this machine; its CPU time ({pch[1] * 1e3:.0f} ms) "
                f"is under the target")
    return "**not met**"


def cell(measured):
    """The main table's cell: the first call with the precompiled headers and its CPU time."""
    pch = summary(measured["pch"])
    if pch is None:
        return f"n/a ({measured['pch'][0]['error']})"
    return f"{pch[0] * 1e3:.0f} ms (CPU {pch[1] * 1e3:.0f} ms)"


def ms(seconds):
    return f"{seconds * 1e3:.0f} ms"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="rows whose name contains one of these")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--pch-dir", default=default_pch_dir(),
                        help="PTO_PCH_DIR of the runs with precompiled headers")
    parser.add_argument("--output", default="")
    args = parser.parse_args()
    sys.path.insert(0, HERE)
    import kernels  # noqa: E402  (beside this script)
    only = [s for s in args.only.split(",") if s]
    names = [c.name for c in kernels.cases() if not only or any(s in c.name for s in only)]
    lines = [f"## Cold compile: first call in a fresh process, empty caches ({args.runs} run(s), median)",
             "", f"- load average at start: {os.getloadavg()[0]:.2f}", "",
             "| row | first call | CPU | of which native compile | without precompiled headers: "
             "first call, CPU | target | |", "|---|---|---|---|---|---|---|"]
    for name in names:
        measured = measure(name, args.runs, args.pch_dir)
        pch, plain = summary(measured["pch"]), summary(measured["plain"])
        target = target_of(name)
        if pch is None:
            lines.append(f"| {name} | n/a ({measured['pch'][0]['error']}) | | | | | |")
            continue
        note = "" if pch[3] == ["embedded"] else f" (source {', '.join(pch[3])}!)"
        without = f"{ms(plain[0])}, {ms(plain[1])}" if plain else "n/a"
        lines.append(f"| {name} | {ms(pch[0])}{note} | {ms(pch[1])} | {ms(pch[2])} | {without} | "
                     f"{'' if target is None else f'< {ms(target)}'} | {verdict(name, pch)} |")
        print(lines[-1], file=sys.stderr)
    lines += ["", f"- load average at end: {os.getloadavg()[0]:.2f}"]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
