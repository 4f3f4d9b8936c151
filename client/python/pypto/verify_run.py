"""Which path a kernel call takes when a debug switch is on: eager, or
compiled and verified against an eager run.

  eager   (pypto.debug.eager(), PYPTO_EAGER=1, run_mode pypto.RunMode.EAGER
          in the kernel's or the global runtime_options): the kernel's Python
          runs op by op on real values (eager.py); nothing is compiled.
  verify  (verify_options["enable_pass_verify"] true in the kernel's or the
          global options, and not eager): the compiled kernel runs on the
          arguments, then an eager run on copies of the arguments as they
          were; each argument the kernel writes must agree with the eager
          run's value. A difference is a VerificationError naming the
          argument, the element, and the first op (in program order) whose
          compiled value differs, with the user's file:line: found by
          building the eager run's ops again with their results as outputs
          (verify_probe.py). Where that build agrees op by op (the
          difference lies in how the kernel was fused or scheduled) or
          cannot be made, the message names the earliest op among those
          that last computed a differing element (data moves such as views,
          assembles and copies pass an element's op on) and says why.
In both, when pypto.set_verify_golden_data gave goldens and verification is
on, the eager run's outputs are compared with them the same way, so a
kernel's wrong line is named.

Agreement of compiled and eager values: per element, |compiled - eager| at
most the eager value's error bound (reference_error.h: each op's own error,
the kernel's summation order in reductions and matmuls, carried from op to
op), or atol + rtol * |eager| with rtol = atol =
verify_options["pass_verify_error_tol"] when that is larger; NaNs equal; an
element whose bound is infinite (a comparison of values within their
bounds) is not checked. Against a golden (computed elsewhere, e.g. by
torch), the bound plus atol + rtol * |golden|, with TOLERANCES per dtype
unless pass_verify_error_tol is given.
"""

import copy
import threading

import numpy as np

from . import config, debug_switch, dtypes, eager, verify_probe
from .jit_options import RunMode
from .verification import verify_golden_data

# dtype -> (rtol, atol) against goldens when no pass_verify_error_tol is
# given; integer and BOOL results must be equal.
TOLERANCES = {
    dtypes.DT_FP32: (1e-3, 1e-5),
    dtypes.DT_FP16: (4e-3, 1e-3),
    dtypes.DT_BF16: (3e-2, 1e-2),
    dtypes.DT_DOUBLE: (1e-9, 1e-12),
}

_inner = threading.local()  # .on: the compiled run inside a verified call


class VerificationError(AssertionError):
    """A kernel's output differs from its eager run or from its golden."""


def verify_on(jit_fn):
    """Whether calls of `jit_fn` are verified now (its options, or the global ones)."""
    return jit_fn._verify or bool(
        config._groups.get("verify_options", {}).get("enable_pass_verify"))


def eager_on(jit_fn):
    """Whether calls of `jit_fn` run eagerly now."""
    if debug_switch.env_eager() or debug_switch.scoped_eager():
        return True
    return jit_fn.options.effective(config.honoured_now())[0] == RunMode.EAGER


def call(jit_fn, args, kwargs):
    """Runs the call on a debug path when one applies: "eager" or
    "verified" for the path taken; None when the compiled path should run
    as usual."""
    if getattr(_inner, "on", False):
        return None
    if eager_on(jit_fn):
        eager_call(jit_fn, args, kwargs)
        return "eager"
    if verify_on(jit_fn):
        verified_call(jit_fn, args, kwargs)
        return "verified"
    return None


def eager_call(jit_fn, args, kwargs):
    """An eager run of the call; goldens checked when verification is on."""
    verify = verify_on(jit_fn)
    run = eager.run(jit_fn, args, kwargs, track=verify)
    if verify:
        check_goldens(jit_fn, run)


def verified_call(jit_fn, args, kwargs):
    """The compiled run, then an eager run on copies of the arguments taken
    before it; their outputs compared."""
    before_args = [_copy_arg(a) for a in args]
    before_kwargs = {k: _copy_arg(v) for k, v in kwargs.items()}
    _inner.on = True
    try:
        jit_fn(*args, **kwargs)
    finally:
        _inner.on = False
    compiled_info = jit_fn.last_compile
    run = eager.run(jit_fn, before_args, before_kwargs, track=True, write=False)
    jit_fn.last_compile = compiled_info
    arrays, torches, _, specs = jit_fn._bind(args, kwargs)
    tensor_specs = [s for s in specs if s[0] != "scalar"]
    tol = _tolerance(jit_fn)
    for name, vid, array, t, spec in zip(run.params, run.written, arrays, torches,
                                         tensor_specs):
        if vid is None:
            continue
        got = eager.input_values(array, t, spec[0])
        locate = lambda: verify_probe.first_differing_op(  # noqa: E731 (only on a difference)
            jit_fn, run, before_args, before_kwargs, tol, differs)
        _compare(run, name, vid, got, spec[0], tol,
                 f"{jit_fn.name}: '{name}' of the compiled kernel differs from the eager "
                 f"run", "compiled", locate=locate)
    check_goldens(jit_fn, run)


def check_goldens(jit_fn, run):
    """Compares the eager run's outputs with pypto.set_verify_golden_data's
    goldens, when given: one per tensor parameter (None: not checked) or one
    per parameter the kernel writes."""
    _, goldens = verify_golden_data()
    if goldens is None:
        return
    written = [k for k, vid in enumerate(run.written) if vid is not None]
    if len(goldens) == len(run.params):
        pairs = list(zip(range(len(run.params)), goldens))
    elif len(goldens) == len(written):
        pairs = list(zip(written, goldens))
    else:
        raise ValueError(
            f"{jit_fn.name}: pypto.set_verify_golden_data gave {len(goldens)} goldens, but the "
            f"kernel has {len(run.params)} tensor parameters and writes {len(written)}: give "
            f"one per parameter (None for an input) or one per output")
    tol = _tolerance(jit_fn)
    for k, golden in pairs:
        if golden is None:
            continue
        vid = run.written[k]
        if vid is None:
            continue
        dtype = dtypes.DataType(run.builder._values[vid][1])
        _compare(run, run.params[k], vid, _golden_values(golden), dtype, tol,
                 f"{jit_fn.name}: '{run.params[k]}' of the eager run differs from its golden",
                 "golden", eager_is_got=False)


def differs(got, want, bound, tol):
    """Where compiled values `got` differ from eager values `want` (with
    their error bounds) beyond the bound or the (rtol, atol) `tol`."""
    return _bad(got, want, bound, _allowed_against_eager(want, bound, tol))


def _allowed_against_eager(want, bound, tol):
    """The allowed difference from eager values: their bound, or the given
    (rtol, atol) where larger."""
    rtol, atol = tol if tol is not None else (0.0, 0.0)
    return np.maximum(bound, atol + rtol * np.abs(want))


def _bad(other, want, bound, allowed):
    with np.errstate(invalid="ignore"):
        ok = (np.abs(other - want) <= allowed) | (np.isnan(other) & np.isnan(want)) | \
            (other == want) | np.isinf(bound)
    return ~ok


def _compare(run, name, vid, other, dtype, tol, title, other_label, eager_is_got=True,
             locate=None):
    want = run.builder.data[vid]
    if other.shape != want.shape:
        raise VerificationError(f"{title}: shape {list(other.shape)} against "
                                f"{list(want.shape)}")
    bound = run.builder.bounds[vid]
    if eager_is_got:  # compiled against eager: the bound, or the given tolerance
        allowed = _allowed_against_eager(want, bound, tol)
    else:
        rtol, atol = tol if tol is not None else TOLERANCES.get(dtype, (0.0, 0.0))
        allowed = bound + atol + rtol * np.abs(other)
    bad = _bad(other, want, bound, allowed)
    if not bad.any():
        return
    writers = run.builder.writers[vid]
    flat_bad = np.flatnonzero(bad)
    ops = writers.reshape(-1)[flat_bad]
    computed = ops[ops >= 0]
    first = int(computed.min()) if computed.size else -1
    pick = flat_bad[np.flatnonzero(ops == first)[0]] if computed.size else flat_bad[0]
    index = tuple(int(i) for i in np.unravel_index(pick, want.shape))
    record = run.builder.records[first] if first >= 0 else None
    element = (f"element {list(index)}: {other_label} {other[index]!r}, eager "
               f"{want[index]!r} (allowed difference {allowed[index]:.3g})")
    finding = locate() if locate is not None and record is not None else None
    if finding is not None and finding.record is not None:
        raise VerificationError(
            f"{title} at {flat_bad.size} of {want.size} elements; the first op whose "
            f"compiled value differs is {finding.record.describe()} (element "
            f"{list(finding.index)}: compiled {finding.compiled!r}, eager "
            f"{finding.eager_value!r}, in a build of the kernel's ops with each result as an "
            f"output); {element}")
    op_text = (f"the earliest op that computed a differing element is {record.describe()}"
               if record else
               "no op computed the element: it is the argument's incoming value")
    reason = f" ({finding.reason})" if finding is not None else ""
    raise VerificationError(
        f"{title} at {flat_bad.size} of {want.size} elements; {op_text}{reason}; {element}")


def _tolerance(jit_fn):
    """(rtol, atol) from pass_verify_error_tol (the kernel's, else the
    global one), or None for the per-dtype defaults."""
    own = jit_fn.options.groups.get("verify_options", {})
    tol = own.get("pass_verify_error_tol",
                  config._groups.get("verify_options", {}).get("pass_verify_error_tol"))
    return None if tol is None else (float(tol), float(tol))


def _golden_values(golden):
    if isinstance(golden, np.ndarray):
        return golden.astype(np.float64)
    data = getattr(golden, "_pypto_data", None)
    if data is not None:
        golden = data
    return golden.detach().double().cpu().numpy()


def _copy_arg(a):
    """A copy of a call argument's data (a tensor), or the argument itself."""
    if isinstance(a, np.ndarray):
        return a.copy()
    data = getattr(a, "_pypto_data", None)
    if data is not None:  # pypto.from_torch(...)
        c = copy.copy(a)
        c._pypto_data = _copy_arg(data)
        return c
    if hasattr(a, "detach") and hasattr(a, "clone"):
        return a.detach().clone()
    return a
