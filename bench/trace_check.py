"""What the second trace of a kernel with dynamic dims costs (issue 4,
client/python/pypto/trace_compare.py): per example kernel, the median time
of one trace, of the checked trace (traced again at the second placeholder
sizes and compared), and of the first call (trace, check and compile with
the disk cache off) with the check and without it (trace_compare.check
replaced by a no-op: the first call before the check), in alternating turns.

    PYPTO_DISK_CACHE=0 tools/pypto-python bench/trace_check.py [--turns 5]
"""

import argparse
import importlib.util
import os
import statistics
import sys
import time

import numpy as np

import pypto
from pypto import trace_compare

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _example(name):
    sys.argv = sys.argv[:1]  # the examples parse their own flags
    path = os.path.join(REPO, "examples", name + ".py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _kernels():
    loop = _example("loop_softmax")
    batch = _example("dynamic_batch")
    cond = _example("condition")
    x4 = np.random.rand(7, 32, 1, 256).astype(np.float32)
    hidden = batch.HIDDEN
    xb = np.random.rand(7, hidden).astype(np.float32)
    bias = np.random.rand(hidden).astype(np.float32)
    xc = np.random.rand(7, cond.HIDDEN).astype(np.float32)
    return [
        ("loop_softmax", loop.softmax_kernel, (x4, np.empty_like(x4))),
        ("dynamic_batch", batch.swish_bias_kernel, (xb, bias, np.empty_like(xb))),
        ("condition.by_size", cond.by_size_kernel, (xc, np.empty_like(xc))),
    ]


def _time(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=5)
    turns = parser.parse_known_args()[0].turns
    if os.environ.get("PYPTO_DISK_CACHE") != "0":
        sys.exit("run with PYPTO_DISK_CACHE=0 (the first call must compile)")
    print(f"{'kernel':<20} {'trace ms':>9} {'checked ms':>11} {'first call ms':>14} "
          f"{'unchecked ms':>13}")
    check = trace_compare.check
    for name, kernel, args in _kernels():
        _, _, specs, static_specs = kernel._bind(args, {})
        assert specs != static_specs, f"{name} has no dynamic dims"
        one, checked, first, unchecked = [], [], [], []
        for _ in range(turns):
            one.append(_time(lambda: kernel._trace(specs)))
            checked.append(_time(lambda: kernel._trace_checked(specs, static_specs)))
            for times in (first, unchecked):
                trace_compare.check = check if times is first else lambda *a: None
                kernel._cache.clear()
                kernel._fast.clear()
                kernel._hot = None
                times.append(_time(lambda: kernel(*args)))
            trace_compare.check = check
        ms = [1e3 * statistics.median(t) for t in (one, checked, first, unchecked)]
        print(f"{name:<20} {ms[0]:9.2f} {ms[1]:11.2f} {ms[2]:14.1f} {ms[3]:13.1f}")


if __name__ == "__main__":
    main()
