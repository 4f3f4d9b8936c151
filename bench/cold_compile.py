#!/usr/bin/env python3
"""Cold compile latency of each bench/kernels.py row: its kernel's first call in a fresh process, empty caches.

    tools/pypto-python bench/cold_compile.py [--only=SUBSTR[,SUBSTR...]] [--runs=N] [--output=FILE.md]

For every row of kernels.py's table, --runs fresh Python processes each with an empty pypto disk cache
(PYPTO_CACHE_DIR in a new temporary directory) and no compile server make the row's first pypto call:
trace, compile with the embedded compiler (the native C++ compiler included), load and run once. A
child's clock starts after its imports (pypto, numpy, torch, kernels.py) and after the row's inputs
are made, so the time is the call's; the compiler's stages come from the call's CompileInfo. Medians
over the runs. Targets: small elementwise kernels < 300 ms, softmax and layer norm < 500 ms.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
import kernels
case = next(c for c in kernels.cases() if c.name == sys.argv[2])
args = case.make()[0]
start = time.perf_counter()
case.kernel(*args)
seconds = time.perf_counter() - start
info = case.kernel.last_compile
print(json.dumps({"seconds": seconds, "source": info.source,
                  "stages": [[name, s] for name, s in info.stages]}))
'''

# Row name prefixes -> the target first-call time in seconds.
TARGETS = (("add ", 0.300), ("fused ", 0.300), ("erfc", 0.300), ("concat", 0.300),
           ("softmax", 0.500), ("layer norm", 0.500))


def target_of(name):
    for prefix, seconds in TARGETS:
        if name.startswith(prefix):
            return seconds
    return None


def cold_call(name):
    """(seconds, source, {stage: seconds}) of `name`'s first call in a fresh process."""
    with tempfile.TemporaryDirectory(prefix="cold_compile_") as cache:
        env = dict(os.environ, PYPTO_CACHE_DIR=cache)
        env.pop("PYPTO_COMPILE_SERVER", None)
        done = subprocess.run([sys.executable, "-c", CHILD, HERE, name], env=env,
                              capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return None, (lines[-1] if lines else f"exit {done.returncode}")[:160], {}
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return out["seconds"], out["source"], dict(out["stages"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="rows whose name contains one of these")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--output", default="")
    args = parser.parse_args()
    sys.path.insert(0, HERE)
    import kernels  # noqa: E402  (beside this script)
    only = [s for s in args.only.split(",") if s]
    names = [c.name for c in kernels.cases() if not only or any(s in c.name for s in only)]
    lines = [f"## Cold compile: first call in a fresh process, empty caches ({args.runs} run(s), median)",
             "", "| row | first call | of which native compile | target | |", "|---|---|---|---|---|"]
    for name in names:
        runs = [cold_call(name) for _ in range(max(1, args.runs))]
        times = [r[0] for r in runs if r[0] is not None]
        target = target_of(name)
        if not times:
            lines.append(f"| {name} | n/a ({runs[0][1]}) | | | |")
            continue
        median = statistics.median(times)
        native = statistics.median(r[2].get("native_compile", 0.0) for r in runs if r[0] is not None)
        verdict = "" if target is None else ("met" if median < target else "**not met**")
        sources = sorted({r[1] for r in runs if r[0] is not None})
        note = "" if sources == ["embedded"] else f" (source {', '.join(sources)}!)"
        lines.append(f"| {name} | {median * 1e3:.0f} ms{note} | {native * 1e3:.0f} ms | "
                     f"{'' if target is None else f'< {target * 1e3:.0f} ms'} | {verdict} |")
        print(lines[-1], file=sys.stderr)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
