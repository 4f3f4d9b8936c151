"""Runs one examples/*.py script with every kernel call also run for the
Ascend target: each call runs on the host first, then (on the same inputs)
compiled for ascend-a2a3, which here is its PTO-ISA CPU simulation, and
every tensor argument afterwards must equal the host's within the dtype's
tolerance (TOLERANCE). The host results are put back, so the script's own
checks against torch still see them.

    python ascend_example_runner.py examples/softmax.py --run_mode sim

A call whose kernel has an instruction the Ascend target does not map runs
on the host only and is reported as "ASCEND_UNMAPPED <kernel>: <the
compiler's message, naming the instruction>". Prints "ASCEND_CALLS n" last:
how many calls were compared.
"""

import re
import runpy
import sys

import numpy as np

import pypto
from pypto import cache, jit_function
from pypto.errors import CompileError

# (rtol, atol relative to the largest host magnitude, at least 1) by dtype:
# for f32 the examples' own tolerance against torch (1e-4: sums and matmuls
# accumulate in another order on the Ascend target), for f16 and bf16 a few
# units in the last place; integers exactly.
TOLERANCE = {np.dtype(np.float32): (1e-4, 1e-4), np.dtype(np.float16): (4e-3, 2e-3)}
BF16_TOLERANCE = (2e-2, 1e-2)

calls = [0]
unmapped = []
_call = jit_function.JitFunction.__call__


def _arrays(args, kwargs):
    """(name, tensor) of the call's tensor arguments (torch or numpy)."""
    out = []
    for name, a in list(enumerate(args)) + sorted(kwargs.items()):
        a = getattr(a, "_pypto_data", a)  # pypto.from_torch's HostTensor
        if isinstance(a, np.ndarray) or type(a).__name__ == "Tensor" and hasattr(a, "clone"):
            out.append((str(name), a))
    return out


def _copy(a):
    return a.copy() if isinstance(a, np.ndarray) else a.clone()


def _put(dst, src):
    if isinstance(dst, np.ndarray):
        dst[...] = src
    else:
        dst.copy_(src)


def _numpy(a):
    if isinstance(a, np.ndarray):
        return a
    import torch
    if a.dtype == torch.bfloat16:
        return a.float().numpy()
    return a.detach().numpy()


def _compare(kernel, name, got, want, dtype_name):
    g, w = _numpy(got), _numpy(want)
    if w.dtype.kind in "iub":
        np.testing.assert_array_equal(g, w, err_msg=f"{kernel}: argument {name}")
        return
    rtol, atol = BF16_TOLERANCE if "bfloat16" in dtype_name else TOLERANCE.get(
        w.dtype, (1e-4, 1e-4))
    scale = max(1.0, float(np.nanmax(np.abs(w[np.isfinite(w)]), initial=0.0)))
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * scale,
                               err_msg=f"{kernel}: argument {name}, Ascend vs host")


def _both(self, *args, **kwargs):
    tensors = _arrays(args, kwargs)
    before = [_copy(a) for _, a in tensors]
    _call(self, *args, **kwargs)
    host = [_copy(a) for _, a in tensors]
    for (_, a), b in zip(tensors, before):
        _put(a, b)
    # The Ascend call leaves pypto.compile_stats() and the kernel's
    # last_compile as the host call left them: examples check both.
    stats, runs = dict(cache._stats), cache._launcher_runs()
    info = getattr(self, "last_compile", None)
    try:
        with pypto.options(codegen_options={"target": "ascend-a2a3"}):
            _call(self, *args, **kwargs)
    except CompileError as e:
        if not re.search(r"ascend target: ", str(e)):
            raise
        unmapped.append(self.name)
        print(f"ASCEND_UNMAPPED {self.name}: {str(e).splitlines()[0]}")
    else:
        for (name, a), h in zip(tensors, host):
            _compare(self.name, name, a, h, str(getattr(a, "dtype", "")))
        calls[0] += 1
    finally:
        self.last_compile = info
        cache._stats.update(stats)
        cache._launcher_runs_at_reset += cache._launcher_runs() - runs
    for (_, a), h in zip(tensors, host):
        _put(a, h)


jit_function.JitFunction.__call__ = _both
path = sys.argv[1]
sys.argv = sys.argv[1:]
try:
    runpy.run_path(path, run_name="__main__")
finally:
    print("ASCEND_CALLS", calls[0])
