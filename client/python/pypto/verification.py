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

import numpy as np

from . import config


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
