"""pypto.verify: run a kernel and compare its outputs with golden values.

    pypto.verify(add_kernel, [a, b], [c], [a + b])
    pypto.verify(kernel, inputs, outputs, goldens, host_options={...}, rtol=1e-3)

Calls `func(*inputs, *outputs)` inside pypto.options(...) scoped to the given
option groups, then checks each output against its golden (torch tensors or
numpy arrays; compared in float64, NaNs equal). The tolerance is
verify_options["pass_verify_error_tol"] when given, else rtol/atol (default
1e-3 relative, 1e-5 absolute: FP16/BF16 outputs round each op). Returns True;
a mismatch is an AssertionError naming the output, the worst element and the
error.
"""

import numbers
import os

import numpy as np

from . import config, eager
from .symbolic import SymbolicScalar
from .tensors import Tensor


def _array(x, what):
    if isinstance(x, np.ndarray):
        return x
    data = getattr(x, "_pypto_data", None)  # pypto.from_torch(...)
    if data is not None:
        x = data
    if hasattr(x, "detach"):
        t = x.detach()
        if str(t.dtype) == "torch.bfloat16":
            t = t.float()
        return t.cpu().numpy()
    if isinstance(x, np.ndarray):
        return x
    raise TypeError(f"pypto.verify: {what} must be a torch tensor or numpy array, got "
                    f"{type(x).__name__}")


def verify(func, inputs, outputs, goldens, *, rtol=None, atol=None, **option_groups):
    """Runs func(*inputs, *outputs) and compares outputs with goldens."""
    for name, v in (("inputs", inputs), ("outputs", outputs), ("goldens", goldens)):
        if not isinstance(v, (list, tuple)):
            raise TypeError(f"pypto.verify: {name} must be a list, got {type(v).__name__}")
    if len(outputs) != len(goldens):
        raise ValueError(f"pypto.verify: {len(outputs)} outputs but {len(goldens)} goldens; "
                         f"give one golden per output")
    tol = option_groups.get("verify_options", {}).get("pass_verify_error_tol")
    if tol is not None:
        if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or tol < 0:
            raise ValueError(f"pypto.verify: verify_options['pass_verify_error_tol'] must be a "
                             f"non-negative number, got {tol!r}")
        rtol = tol if rtol is None else rtol
        atol = tol if atol is None else atol
    rtol = 1e-3 if rtol is None else float(rtol)
    atol = 1e-5 if atol is None else float(atol)
    with config.options(**option_groups):
        func(*inputs, *outputs)
    for i, (out, golden) in enumerate(zip(outputs, goldens)):
        got = _array(out, f"outputs[{i}]")
        want = _array(golden, f"goldens[{i}]")
        if got.shape != want.shape:
            raise ValueError(f"pypto.verify: outputs[{i}] has shape {list(got.shape)} but "
                             f"goldens[{i}] has {list(want.shape)}")
        g, w = got.astype(np.float64), want.astype(np.float64)
        bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        if bad.any():
            idx = np.unravel_index(np.argmax(np.where(bad, np.abs(g - w), -1)), g.shape)
            raise AssertionError(
                f"pypto.verify: outputs[{i}] differs from goldens[{i}] at {int(bad.sum())} of "
                f"{bad.size} elements (rtol {rtol:g}, atol {atol:g}); worst at "
                f"{list(int(j) for j in idx)}: got {g[idx]!r}, expected {w[idx]!r}")
    return True


# PyPTO's per-pass verification tools ------------------------------------------
#
# PyPTO checks every compiler pass against a CPU interpreter
# (verify_options["enable_pass_verify"]); these three feed that verifier.
# Here the interpreter is an eager run (eager.py): pass_verify_print and
# pass_verify_save print and save real values while a kernel runs eagerly
# (on its own or as the check of a verified compiled run: verify_run.py) and
# do nothing while a kernel is traced for compiling; set_verify_golden_data's
# goldens are what verified runs compare the eager outputs with.

_golden_data = {"in_out_tensors": None, "goldens": None}


def _check_cond(cond, what):
    if not isinstance(cond, (numbers.Integral, SymbolicScalar)):
        raise TypeError(f"{what}: cond must be an int, a bool or a symbolic condition, got "
                        f"{type(cond).__name__}")


def pass_verify_print(*values, cond=1):
    """pypto.pass_verify_print(*values, cond=1): in an eager run, prints
    `values` (a tensor as its values) when `cond` holds; while a kernel is
    traced for compiling, checks the arguments and prints nothing."""
    _check_cond(cond, "pypto.pass_verify_print")
    if eager.current() is None or not cond:
        return
    print(*(v.numpy() if isinstance(v, Tensor) and v._builder is not None else v
            for v in values))


def pass_verify_save(tensor, fname, cond=1, **kwargs):
    """pypto.pass_verify_save(tensor, fname, cond=1, ...): in an eager run,
    saves the tensor's values with numpy.save to `fname` (".npy" added when
    missing) in verify_options["pass_verify_save_tensor_dir"] (the kernel's,
    else the global one; default: the working directory) when `cond` holds; a later save
    to the same name replaces it. While a kernel is traced for compiling,
    checks the arguments and writes nothing. Returns None."""
    what = "pypto.pass_verify_save"
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{what}: tensor must be a pypto Tensor, got {type(tensor).__name__}")
    if not isinstance(fname, str) or not fname:
        raise TypeError(f"{what}: fname must be a non-empty str, got {fname!r}")
    _check_cond(cond, what)
    b = eager.current()
    if b is None or not cond:
        return
    folder = b.verify_options.get("pass_verify_save_tensor_dir") or \
        config.get_verify_options().get("pass_verify_save_tensor_dir") or "."
    os.makedirs(folder, exist_ok=True)
    np.save(os.path.join(folder, fname), tensor.numpy())


def set_verify_golden_data(in_out_tensors=None, goldens=None):
    """pypto.set_verify_golden_data(in_out_tensors=None, goldens=None):
    the goldens a verified run (verify_options["enable_pass_verify"]) compares
    each kernel call's eager outputs with: one per tensor parameter (None: not
    compared) or one per parameter the kernel writes (verify_run.py). The
    inputs are the call's own arguments; in_out_tensors is recorded
    (verify_golden_data()). pypto.verify takes its goldens as arguments."""
    what = "pypto.set_verify_golden_data"
    for name, v in (("in_out_tensors", in_out_tensors), ("goldens", goldens)):
        if v is not None and not isinstance(v, (list, tuple)):
            raise TypeError(f"{what}: {name} must be a list or None, got {type(v).__name__}")
        if v is not None:
            for i, t in enumerate(v):
                if t is not None and not (isinstance(t, np.ndarray) or hasattr(t, "detach")):
                    raise TypeError(f"{what}: {name}[{i}] must be a torch tensor, a numpy "
                                    f"array or None, got {type(t).__name__}")
    _golden_data["in_out_tensors"] = None if in_out_tensors is None else list(in_out_tensors)
    _golden_data["goldens"] = None if goldens is None else list(goldens)


def verify_golden_data():
    """(in_out_tensors, goldens) as last given to set_verify_golden_data."""
    return _golden_data["in_out_tensors"], _golden_data["goldens"]
