"""@pypto.jit / @pypto.frontend.jit: trace once per signature, compile, run.

Calling a jit function:
  1. Each tensor argument (a numpy array or a CPU torch tensor) is checked
     against its parameter's annotation: a dtype mismatch is a TypeError and
     a rank or dim mismatch a ValueError, both naming the argument. Any other
     parameter is a compile-time value (_Param).
  2. The static signature (dtypes, shapes, compile-time values, tile shapes
     in force) selects a kernel from the function's in-memory cache; on a
     miss the function is traced into a pto.v1.Graph and compiled (disk
     cache, embedded compiler or ptod: see backend.py).
  3. The kernel runs on the arguments' memory. Non-contiguous arguments: an
     input is copied to a contiguous temporary; an output is computed into a
     contiguous temporary that is then copied back into the argument. With
     debug_options runtime_debug_mode 1 the run is traced and its swimlane
     written to PyPTO's run folder (run_folder.py).

Repeat calls take a fast path: positional arguments whose (type, dtype,
shape) per argument and tile shapes in force match an earlier successful call
go straight to that call's kernel (a pypto.from_torch wrapper: its tensor's
key and its marked dims), provided each argument is C-contiguous,
aligned and writeable, so no copy or read-only check is needed. Every
check of step 1 depends only on that key, so a hit cannot skip an error; any
miss takes the full path above, with its checks and messages. A key's first
hit makes a launcher for it (_native Launcher: the kernel's shapes and
dtypes fixed, and per argument a guard: what the key says of it); from then
on one native call checks the arguments against the guards and runs the
kernel on their addresses, or declines (the full path then runs or raises)
where an argument does not pass, an output overlaps another argument or an
address is misaligned. While no tile shape or honoured option has changed
since (tiling._state and config._honoured are the same objects) and
PYPTO_TARGET reads the same, a call tries the last hit's launcher before
building a key at all.

What decides which kernel a call runs, and where each is read:
  - the arguments' dtypes and shapes, compile-time values, tile shapes in
    force, the honoured options in force (the function's own, copied at
    decoration, over the global ones: target, opt_level): in the in-memory
    signature and in the fast path's key and hot launcher;
  - PYPTO_TARGET (the target when no option names one: jit_options.
    target_env): read once per call, in the signature (as the target) and
    in the fast path's key and hot launcher;
  - runtime_options run_mode (the caller's dict, read at each call) and
    PYPTO_NPU_CPUSIM (read at each RunMode.NPU call): an NPU call takes the
    full path, its target in the signature; an EAGER one compiles nothing;
  - what "host" and "ascend-a2a3" stand for (PTO_HOST_TARGET, CANN's
    variables): read once per process, at the first compile for the name
    (backend.resolved_target);
  - PYPTO_EAGER: read once, at import (debug_switch.py); a with block and
    verify options in force are read at each call (verify_run.py);
  - PYPTO_COMPILE_SERVER and the disk cache's variables choose where a
    kernel is compiled or found, not which: the compiler's key is the same.
"""

import functools
import hashlib
import inspect
import sys
import threading
import time

import numpy as np

from . import ast_rewrite, backend, cache, config, dtypes, locations, run_folder, tiling, trace_compare, tracer
from . import debug_switch, indexing, verify_run
from ._proto import graph_pb2
from .errors import CompileError, StaticShapeNeeded, TraceError, UnsupportedTargetError
from .interop import HostTensor
from .jit_options import NPU_CPUSIM_ENV, JitOptions, RunMode, npu_target, target_env, target_of
from . import symbolic
from .tensors import DYNAMIC, Tensor, _DimMarker

# Annotations that make a parameter a compile-time scalar (see _Param).
_SCALAR_TYPES = (int, float, bool)


class CompileInfo:
    """What the last call of a jit function needed to get its kernel."""

    def __init__(self, source, key, seconds=0.0, stages=()):
        # "memory", "disk", "embedded", "ptod HIT", "ptod MISS", "ptod COALESCED";
        # "eager" after an eager run (nothing compiled: verify_run.py)
        self.source = source
        self.key = key
        self.cache_status = ("HIT" if source in ("memory", "disk", "ptod HIT")
                             else source.split()[-1] if source.startswith("ptod") else "MISS")
        self.seconds = seconds
        self.stages = list(stages)

    def __repr__(self):
        return f"CompileInfo(source={self.source!r}, key={self.key[:16]}..., seconds={self.seconds:.3f})"


# last_compile after an eager run (verify_run.py, eager.py): nothing compiled.
_EAGER_INFO = CompileInfo("eager", "")


def _symbol_as_number(name, e):
    """The error for a symbolic scalar that stays symbolic at static sizes (a
    loop index, pypto.symbolic_scalar) where tracing needs its value (an
    integer tensor's power, arange's length)."""
    return TraceError(f"{name}: {e}; a loop index or symbolic scalar is known only at run time "
                      f"and cannot be used there (it can be a tensor operand's number, "
                      f"x * i, and be used in views, loop bounds and pypto.cond)")


def _launch(entry, run_args):
    """Runs entry's kernel; an error at launch that names an op (a view out of
    its tensor at some loop index) also names the user's line of that op.
    Index arguments out of their range are an IndexError first
    (indexing.check_indices)."""
    if entry.index_checks:
        indexing.check_indices(entry.index_checks, run_args, entry.names, entry.graph)
    try:
        entry.compiled.kernel.run(run_args, entry.run_dtypes)
    except ValueError as e:
        locations.annotate(e, entry.graph, entry.where)
        raise


def _launch_traced(entry, run_args, kernel_name):
    """_launch, with the run's tasks traced and written to PyPTO's run
    folder as its swimlane (run_folder.py)."""
    if entry.index_checks:
        indexing.check_indices(entry.index_checks, run_args, entry.names, entry.graph)
    try:
        profile = entry.compiled.kernel.run_profiled(run_args, entry.run_dtypes, trace=True)
    except ValueError as e:
        locations.annotate(e, entry.graph, entry.where)
        raise
    run_folder.write_swimlane(profile["chrome_trace"], kernel_name)


def _check_aliasing(entry, arrays):
    """A ValueError when an argument the kernel writes shares memory with
    another argument: tiles run in parallel, so the kernel could read data it
    has already overwritten. (One in/out parameter is how a kernel updates
    a tensor in place.)"""
    for w in entry.written:
        for i, other in enumerate(arrays):
            if i != w and np.may_share_memory(arrays[w], other):
                names = entry.names
                raise ValueError(
                    f"arguments '{names[w]}' and '{names[i]}' share memory, but the kernel "
                    f"writes '{names[w]}' while reading '{names[i]}': pass a separate output "
                    f"tensor, or update in place through one parameter the kernel both reads "
                    f"and writes (x[:] = f(x))")


class _Entry:
    def __init__(self, compiled, graph, specs, where=None):
        self.compiled = compiled
        self.graph = graph
        self.where = where or {}  # op label -> user frame (locations.py)
        # Launch checks of index arguments (indexing.py); a kernel with any
        # runs through _launch on every call (no native launcher).
        self.index_checks = self.where.get(locations.INDEX_CHECKS, ())
        self.specs = specs
        self.roles = [p.role for p in graph.params]
        self.names = [p.name for p in graph.params]
        self.written = [i for i, r in enumerate(self.roles) if r != graph_pb2.PARAM_ROLE_IN]
        self.run_dtypes = dtypes.run_dtypes(
            [spec[0] for spec in specs if spec[0] != "scalar"])
        # What last_compile says on every memory hit (shared: read-only).
        self.memory_info = CompileInfo("memory", compiled.key)


def _torch():
    return sys.modules.get("torch")


# torch.Tensor once torch is seen (the fast path's exact-type test).
_TORCH_TENSOR = [None]


def _torch_numpy(t):
    """The numpy view of CPU torch tensor `t` (no copy); a bfloat16 tensor is
    viewed as int16 (numpy has no bfloat16) and run with DT_BF16 declared.
    (detach() only where numpy() needs it: it costs as much as the view.)"""
    if t.requires_grad:
        t = t.detach()
    if t.dtype is _torch().bfloat16:
        return t.view(_torch().int16).numpy()
    return t.numpy()


def _as_array(name, value, want_dtype=None):
    """(numpy view or array of `value`, torch tensor or None, DataType or
    None: the element type when the array's own dtype does not say it)."""
    fp8 = want_dtype in dtypes.FP8_TYPES  # uint8 bit patterns (dtypes.py)
    if isinstance(value, np.ndarray):
        return value, None, (want_dtype if fp8 and value.dtype == np.uint8 else None)
    data = getattr(value, "_pypto_data", None)  # pypto.from_torch(...)
    if data is not None:
        value = data
    if isinstance(value, np.ndarray):
        return value, None, (want_dtype if fp8 and value.dtype == np.uint8 else None)
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        if value.device.type != "cpu":
            raise ValueError(f"argument '{name}': torch tensor is on {value.device}; "
                             f"pass a CPU tensor")
        if fp8 and value.dtype is torch.uint8:
            return _torch_numpy(value), value, want_dtype
        dt = dtypes.from_torch(value.dtype)
        if want_dtype is not None and dt != want_dtype:
            got = dt.name if dt is not None else str(value.dtype)
            raise TypeError(f"argument '{name}': expected dtype {want_dtype.name} (from the "
                            f"annotation), got {got}")
        if dt is None or (dtypes.to_numpy(dt) is None and dt != dtypes.DT_BF16):
            label = dt.name if dt is not None else str(value.dtype)
            raise TypeError(f"argument '{name}': dtype {label} is not supported yet; "
                            f"{dtypes.ARGUMENT_TYPES_TEXT}")
        return _torch_numpy(value), value, (dt if dt == dtypes.DT_BF16 else None)
    if isinstance(value, Tensor):
        raise TypeError(f"argument '{name}': pass a numpy array or a torch tensor (or "
                        f"pypto.from_torch(t)), not a pypto.Tensor annotation")
    if isinstance(value, (int, float)):
        raise TypeError(f"argument '{name}': got the number {value!r} for a tensor parameter; "
                        f"pass a tensor, or annotate the parameter with another type (int, "
                        f"float, tuple, ...) to make it a compile-time parameter")
    raise TypeError(f"argument '{name}': expected a numpy array or a torch tensor, got "
                    f"{type(value).__name__} {_short_repr(value)} (a tensor parameter; annotate "
                    f"it with another type, e.g. int or tuple, to make it a compile-time "
                    f"parameter)")


def _short_repr(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _make_hashable(obj):
    """A compile-time argument as the kernel cache key holds it (PyPTO's
    _make_hashable): a dict as a frozenset of its items, a list or tuple as
    a tuple, each recursively; anything else as str(obj)."""
    if isinstance(obj, dict):
        return frozenset((_make_hashable(k), _make_hashable(v)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return tuple(_make_hashable(v) for v in obj)
    return str(obj)


def _stable_text(h):
    """A _make_hashable form (with its type) as text that is the same in
    every process: sets sorted, types by module and name."""
    if isinstance(h, frozenset):
        return "{" + ",".join(sorted(_stable_text(x) for x in h)) + "}"
    if isinstance(h, tuple):
        return "(" + ",".join(_stable_text(x) for x in h) + ")"
    if isinstance(h, type):
        return f"{h.__module__}.{h.__qualname__}"
    return repr(h)


def _frontend_key(specs):
    """The compile option "frontend_key" (compiler/options.h) of a
    signature's compile-time values, or None without any: PyPTO keys a
    kernel by those values, so the disk cache and ptod do too."""
    values = [_stable_text(s[2].key) for s in specs if s[0] == "scalar"]
    if not values:
        return None
    return hashlib.sha256("\0".join(values).encode("utf-8")).hexdigest()[:32]


class _StaticValue:
    """A compile-time argument in a signature: equal and hashed as its
    _make_hashable form together with its type (so 1, 1.0, True and "1" stay
    apart), and holding the value itself for the trace."""

    __slots__ = ("key", "value")

    def __init__(self, value):
        self.key = (type(value), _make_hashable(value))
        self.value = value

    def __eq__(self, other):
        return isinstance(other, _StaticValue) and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        return repr(self.value)


def _is_tensor_annotation(ann):
    return ann is Tensor or isinstance(ann, Tensor)


def _is_tensor_value(value):
    """Whether an unannotated parameter's argument is a tensor."""
    if isinstance(value, (np.ndarray, Tensor)) or hasattr(value, "_pypto_data"):
        return True
    torch = _torch()
    return torch is not None and isinstance(value, torch.Tensor)


class _Param:
    """One kernel parameter and its annotation.

    A parameter annotated pypto.Tensor (the class, an instance or
    Tensor[...]) takes a tensor. Any other annotation (int, float, bool,
    tuple, dict, a dataclass, pypto.DT_*, ...) makes it a compile-time
    parameter: the kernel function sees the Python value itself, and the
    value is part of the kernel's key as _make_hashable gives it: in memory
    (each new value traces once) and, through the compile option
    frontend_key (_frontend_key), on disk and in ptod. int, float and
    bool annotations also check the argument's type. An unannotated
    parameter takes a tensor when called with one and is a compile-time
    parameter otherwise."""

    def __init__(self, fn_name, p):
        self.name = p.name
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"@pypto.jit {fn_name}: *args/**kwargs parameters are not supported")
        ann = p.annotation
        self.auto = ann is inspect.Parameter.empty
        self.tensor = _is_tensor_annotation(ann)
        self.scalar = ann if ann in _SCALAR_TYPES else None
        self.ann = (ann if isinstance(ann, Tensor) else Tensor()) if self.tensor else Tensor()

    def static_value(self, value):
        """`value` checked as this compile-time parameter's, or None if the
        parameter takes a tensor here."""
        if self.tensor or (self.auto and _is_tensor_value(value)):
            return None
        if self.scalar is None:
            return _StaticValue(value)
        ok = (isinstance(value, bool) if self.scalar is bool else
              isinstance(value, int) and not isinstance(value, bool) if self.scalar is int else
              isinstance(value, (int, float)) and not isinstance(value, bool))
        if not ok:
            raise TypeError(f"argument '{self.name}': expected a Python {self.scalar.__name__} "
                            f"(the annotation), got {type(value).__name__} {value!r}")
        return _StaticValue(float(value) if self.scalar is float else value)

    def check(self, array, dt=None, dynamic_axis=()):
        """(DataType, shape) of `array`, after checking it against the
        annotation; a dim in `dynamic_axis` (pypto.from_torch) may have any size."""
        name, ann = self.name, self.ann
        if dt is None:
            dt = dtypes.from_numpy(array.dtype)
        if ann.dtype is not None and dt != ann.dtype:
            got = dt.name if dt is not None else str(array.dtype)
            raise TypeError(f"argument '{name}': expected dtype {ann.dtype.name} (from the "
                            f"annotation), got {got}")
        if dt is None:
            raise TypeError(f"argument '{name}': dtype {array.dtype} has no pypto equivalent")
        dtypes.check_compilable(dt, f"argument '{name}'")
        shape = tuple(int(d) for d in array.shape)
        spec = ann._spec_shape
        if spec and spec[-1] is Ellipsis:  # [DYNAMIC, ...]: the rest from the call
            if len(shape) < len(spec) - 1:
                raise ValueError(f"argument '{name}': expected rank {len(spec) - 1} or more "
                                 f"(annotation {list(spec)}), got shape {list(shape)}")
            spec = spec[:-1] + tuple(shape[len(spec) - 1:])
        if spec:  # () and None mean: from the call
            if len(spec) != len(shape):
                raise ValueError(f"argument '{name}': expected rank {len(spec)} (annotation "
                                 f"{list(spec)}), got shape {list(shape)}")
            for i, (want, got) in enumerate(zip(spec, shape)):
                if not isinstance(want, (_DimMarker, str)) and want != got and \
                        i not in dynamic_axis:
                    raise ValueError(f"argument '{name}': dim {i} must be {want} (annotation "
                                     f"{list(spec)}), got shape {list(shape)}")
        if not 0 <= len(shape) <= 4:
            raise ValueError(f"argument '{name}': rank {len(shape)} (shape {list(shape)}); "
                             f"kernels take tensors of rank 0 to 4")
        if any(d == 0 for d in shape):
            raise ValueError(f"argument '{name}': shape {list(shape)} has an empty dim (empty "
                             f"tensors are not supported: every dim needs at least one element)")
        return dt, shape


def _signature(fn):
    """fn's signature with string annotations evaluated, so kernels in
    modules with `from __future__ import annotations` read the same."""
    try:
        return inspect.signature(fn, eval_str=True)
    except NameError as e:
        raise TypeError(f"@pypto.jit {getattr(fn, '__qualname__', fn)}: an annotation cannot "
                        f"be evaluated ({e}); annotate with names the kernel's module defines"
                        ) from None


def _check_parameter_order(fn_name, params):
    """Tensor parameters come first, then the compile-time ones (PyPTO's rule):
    a TypeError naming both when a tensor parameter follows a parameter
    annotated with anything else."""
    static = None
    for p in params:
        if p.tensor and static is not None:
            raise TypeError(
                f"@pypto.jit {fn_name}: tensor parameter '{p.name}' follows the compile-time "
                f"parameter '{static.name}'; put the pypto.Tensor parameters first, then the "
                f"others (scalars, tilings, ...)")
        if not p.tensor and not p.auto:
            static = static or p


class JitFunction:
    """A kernel function; call it with numpy arrays or torch tensors."""

    def __init__(self, fn, options):
        self.fn = fn
        self.options = options
        self.name = getattr(fn, "__qualname__", getattr(fn, "__name__", "kernel"))
        self._signature = _signature(fn)
        self._params = [_Param(self.name, p) for p in self._signature.parameters.values()]
        _check_parameter_order(self.name, self._params)
        self._cache = {}
        # Fast path (module docstring): (tile state, per-argument (type, dtype,
        # shape)) -> _Entry. Only positional calls; only when every parameter
        # may be passed positionally, so binding cannot fail on a hit.
        self._fast = {}
        # The launcher of the last fast-path hit, while the global state it
        # was keyed under holds: (tiling._state, config._honoured,
        # PYPTO_TARGET's value, launcher, entry), the first two compared by
        # identity (both are replaced when they change).
        self._hot = None
        # Symbolic signatures whose trace needs static sizes (a dynamic size
        # used as a number: StaticShapeNeeded): their calls compile per size.
        self._per_size = set()
        # (A parameter annotated with a type other than int/float/bool may
        # take any value, a numpy array too, which the fast key would read as
        # a tensor: such kernels take the full path.)
        self._fast_ok = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                            for p in self._signature.parameters.values()) and \
            all(p.tensor or p.auto or p.scalar for p in self._params)
        self._lock = threading.Lock()
        self._traced_fn = None
        self.last_compile = None
        # Whether this function's own verify_options turn verification on
        # (verify_run.py); debug_switch.ON the global switches.
        self._verify = bool(options.groups.get("verify_options", {}).get("enable_pass_verify"))
        functools.update_wrapper(self, fn)
        # With PYPTO_COMPILE_SERVER set: ptod's client made, and connecting,
        # in the background while the caller gets to the first call.
        backend.prepare()

    # Arguments ----------------------------------------------------------------

    def _bind(self, args, kwargs):
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.name}: {e}") from None
        bound.apply_defaults()
        arrays, torches, specs = [], [], []
        marked = {}  # spec index -> dims pypto.from_torch(dynamic_axis=...) marked
        for p in self._params:
            value = bound.arguments[p.name]
            static = p.static_value(value)
            if static is not None:  # a compile-time value: no array
                specs.append(("scalar", type(static.value), static))
                continue
            array, t, dt = _as_array(p.name, value, p.ann.dtype)
            axes = getattr(value, "dynamic_axis", ())
            if axes:
                marked[len(specs)] = axes
            dt, shape = p.check(array, dt, axes)
            arrays.append(array)
            torches.append(t)
            specs.append((dt, shape))
        # The signature with dynamic dims as symbols, and with their sizes.
        return arrays, torches, self._symbolic_specs(specs, marked), tuple(specs)

    def _dynamic_dim(self, spec_index, dim, marked=None):
        """None (static), True (DYNAMIC) or the name of a named dynamic dim.
        A dim the annotation leaves unspecified or fixed is DYNAMIC when the
        argument was pypto.from_torch(t, dynamic_axis=...) marking it
        (`marked`: spec index -> dims); a named dim keeps its name."""
        ann = self._params[spec_index].ann._spec_shape
        want = ann[dim] if ann and dim < len(ann) else None
        if want is Ellipsis or (ann and ann[-1] is Ellipsis and dim >= len(ann)):
            want = None
        if want is DYNAMIC:
            return True
        if isinstance(want, str):
            return want
        return True if marked and dim in marked.get(spec_index, ()) else None

    def _symbolic_specs(self, specs, marked=None):
        """`specs` with dynamic dims as symbol names (symbolic.py): the
        in-memory signature holds no dynamic sizes."""
        idx = [k for k, s in enumerate(specs) if s[0] != "scalar"]
        if not any(self._dynamic_dim(k, i, marked) is not None
                   for k in idx for i in range(len(specs[k][1]))):
            return tuple(specs)
        shapes = symbolic.signature_shapes(
            [self._params[k].name for k in idx], [specs[k][1] for k in idx],
            lambda j, i: self._dynamic_dim(idx[j], i, marked))
        out = list(specs)
        for k, shape in zip(idx, shapes):
            out[k] = (specs[k][0], shape)
        return tuple(out)

    def _trace(self, specs, target, second=False):
        """(Graph, op locations: see locations.py) for target `target`;
        `second`: at the second placeholder sizes (trace_compare.py)."""
        cache.count("check_traces" if second else "traces")
        sizes = self._sentinels(specs, second)
        params = [tracer.ScalarArg(p.name, spec[2].value) if spec[0] == "scalar"
                  else (p.name, spec[0], tuple(sizes.get(d, d) for d in spec[1]),
                        p.ann.name)
                  for p, spec in zip(self._params, specs)]
        if self._traced_fn is None:  # `if pypto.cond(...)` rewritten (ast_rewrite.py)
            self._traced_fn = ast_rewrite.rewrite(self.fn)
        return locations.trace(self._traced_fn, self.name, params,
                               symbols={v: k for k, v in sizes.items()}, target=target)

    @staticmethod
    def _sentinels(specs, second=False):
        names = []
        for spec in specs:
            if spec[0] != "scalar":
                names += [d for d in spec[1] if isinstance(d, str) and d not in names]
        return symbolic.sentinels(names, second)

    def _trace_checked(self, specs, static_specs, target):
        """_trace(specs, target), and for a kernel with dynamic dims a second
        trace at other placeholders: trace_compare.PlaceholderLeak (a
        StaticShapeNeeded) when a size's placeholder reached the graph."""
        graph, where = self._trace(specs, target)
        if specs != static_specs:
            trace_compare.check(
                self.name, graph, where, self._sentinels(specs),
                lambda: self._trace(specs, target, second=True) + (self._sentinels(specs, True),))
        return graph, where

    def with_options(self, scope):
        """@pypto.options(...) over this function: calls run in `scope` (a
        config.options)."""
        return _ScopedJit(self, scope)

    def trace(self, *args, **kwargs):
        """The pto.v1.Graph these arguments would compile (nothing is
        compiled), for the target the options in force name."""
        _, _, specs, static_specs = self._bind(args, kwargs)
        target = target_of(dict(config._honoured[1], **self.options.compile_options))
        try:
            return self._trace_checked(specs, static_specs, target)[0]
        except StaticShapeNeeded:  # as a call would: at these sizes
            try:
                return self._trace(static_specs, target)[0]
            except StaticShapeNeeded as e:
                raise _symbol_as_number(self.name, e) from None

    # Calling ------------------------------------------------------------------

    def _check_run_mode(self):
        """The run mode in force; for NPU an UnsupportedTargetError unless
        PYPTO_NPU_CPUSIM=1 (jit_options.npu_target)."""
        run_mode = self.options.effective(config.honoured_now())[0]
        if run_mode == RunMode.NPU and npu_target(self.name) is None:
            raise UnsupportedTargetError(
                f"{self.name}: runtime_options run_mode=pypto.RunMode.NPU needs an accelerator "
                f"target, and none is built in this pypto (no NPU launcher here); use "
                f"pypto.RunMode.SIM or leave run_mode unset to run on the CPU, or set "
                f"{NPU_CPUSIM_ENV}=1 to run the Ascend kernels on the PTO-ISA CPU simulation")
        return run_mode

    def __call__(self, *args, **kwargs):
        # An eager run or a verified one (verify_run.py): a with block, the
        # environment, the global or this function's verify options.
        if self._verify or debug_switch.ON[0]:
            path = verify_run.call(self, args, kwargs)
            if path is not None:
                if path == "eager":
                    self.last_compile = _EAGER_INFO
                return
        # runtime_options is the caller's dict, read at every call (jit_options.py).
        run_mode = self.options.runtime.get("run_mode")
        npu = False  # RunMode.NPU on the CPU simulation: the full path only
        if run_mode is not None and (run_mode != RunMode.SIM or isinstance(run_mode, bool)):
            mode = self._check_run_mode()
            if mode == RunMode.EAGER:
                verify_run.eager_call(self, args, kwargs)
                self.last_compile = _EAGER_INFO
                return
            npu = mode == RunMode.NPU
        swimlane = self.options.swimlane_now(config._groups["debug_options"])
        env = target_env()  # this call's PYPTO_TARGET (key, hot and target alike)
        hot = self._hot  # (a swimlane needs the full path's traced run)
        if hot is not None and hot[0] is tiling._state and hot[1] is config._honoured \
                and hot[2] == env and not kwargs and not swimlane and not npu:
            # Nothing global changed since the call that made hot[3]: its
            # launcher checks the arguments against that call's key and runs.
            entry = hot[4]
            try:
                ran = hot[3].call(args)
            except ValueError as e:
                locations.annotate(e, entry.graph, entry.where)
                raise
            if ran:  # (a memory hit: the launcher counts it, cache.py)
                self.last_compile = entry.memory_info
                return
        if run_mode is None and config._honoured[0] in (RunMode.NPU, RunMode.EAGER):
            mode = self._check_run_mode()
            if mode == RunMode.EAGER:
                verify_run.eager_call(self, args, kwargs)
                self.last_compile = _EAGER_INFO
                return
            npu = mode == RunMode.NPU
        if not kwargs and self._fast_ok and len(args) == len(self._params) and not swimlane \
                and not npu:
            state = (tiling._state, config._honoured, env)  # read once: the key's and hot's
            fast_key = self._fast_key(args, state)
            if fast_key is not None:
                fast = self._fast.get(fast_key)
                if fast is not None and self._run_fast(fast, args, state):
                    return
        else:
            fast_key = None
        arrays, torches, specs, static_specs = self._bind(args, kwargs)
        target = "ascend-a2a3-cpusim" if npu else target_of(
            dict(config._honoured[1], **self.options.compile_options), env)
        sig = (specs, tiling._save(), config.cache_token(), target)
        if sig in self._per_size:  # its trace needs static sizes
            specs = static_specs
            sig = (specs,) + sig[1:]
        entry = self._cache.get(sig)
        if entry is not None:
            cache.count("memory_hits")
            self.last_compile = CompileInfo("memory", entry.compiled.key)
        else:
            with self._lock:
                entry = self._cache.get(sig)
                if entry is None:
                    try:
                        graph, where = self._trace_checked(specs, static_specs, target)
                    except StaticShapeNeeded as e:
                        if specs == static_specs:
                            raise _symbol_as_number(self.name, e) from None
                        # A dynamic size the trace needs as a number (an
                        # integer power's exponent, arange's length; 1.0 / n
                        # of the user's own: trace_compare.py): the trace's
                        # placeholder would be wrong, so per size, remembered.
                        self._per_size.add(sig)
                        specs = static_specs
                        sig = (specs,) + sig[1:]
                        try:
                            graph, where = self._trace(specs, target)
                        except StaticShapeNeeded as e2:
                            raise _symbol_as_number(self.name, e2) from None
                    _, compile_options, timeout = self.options.effective(config.honoured_now())
                    compile_options["target"] = target
                    frontend_key = _frontend_key(specs)
                    if frontend_key is not None:
                        compile_options = dict(compile_options, frontend_key=frontend_key)
                    start = time.monotonic()
                    try:
                        compiled = backend.get_kernel(graph, compile_options, timeout, self.name)
                    except (CompileError, ValueError, NotImplementedError) as e:
                        locations.annotate(e, graph, where)
                        raise
                    entry = _Entry(compiled, graph, specs, where)
                    self._cache[sig] = entry
                    self.last_compile = CompileInfo(
                        compiled.source, compiled.key, time.monotonic() - start, compiled.stages)
                else:
                    cache.count("memory_hits")
                    self.last_compile = CompileInfo("memory", entry.compiled.key)
        self._run(entry, arrays, torches, swimlane)
        if fast_key is not None and len(self._fast) < 64:  # bounded: a key per signature seen
            self._fast[fast_key] = [entry, None]  # the launcher comes with the first hit

    def _fast_key(self, args, state):
        """The fast-path key of positional `args` under `state` (tile shapes,
        config._honoured, PYPTO_TARGET's value), or None (full path only). A numpy argument must
        already be C-contiguous, aligned and writeable (flags.carray); a torch
        tensor is checked when converted, on a hit only, so a dtype numpy
        lacks still gets the full path's message. A Python number (a scalar
        parameter) is keyed by type and value."""
        key = [state[0], config.cache_token(state[1]), state[2]]
        for a in args:
            t = type(a)
            if t is HostTensor:  # pypto.from_torch(...): its data, and the dims it marks
                key.append(a.dynamic_axis)
                a = a._pypto_data
                t = type(a)
            if t is np.ndarray:
                if not a.flags.carray:
                    return None
                key.append((t, a.dtype, a.shape))
            elif t in _SCALAR_TYPES:
                key.append((t, a))
            else:
                # (is_cpu and the torch.Size itself: a tenth of the cost of
                # device.type and a tuple copy, per argument and call; the
                # exact type first: isinstance on torch.Tensor costs more.)
                if t is not _TORCH_TENSOR[0]:
                    torch = _torch()
                    if torch is None or not isinstance(a, torch.Tensor):
                        return None
                    _TORCH_TENSOR[0] = torch.Tensor
                if not a.is_cpu:
                    return None
                key.append((t, a.dtype, a.shape))
        return tuple(key)

    def _run_fast(self, fast, args, state):
        """Runs fast = [entry, launcher] on `args` (their key hit under
        `state`) unless an argument needs the full path (a torch tensor's
        memory needs a copy, an argument the kernel writes overlaps another):
        then returns False.

        The first hit runs on numpy views of the arguments (as the full path
        does) and makes the key's launcher (_native Launcher: the shapes and
        dtypes fixed, and per argument a guard: what the key says of it);
        later hits pass it the arguments as they are. Either way the launcher
        becomes the function's hot one (__call__), for `state`."""
        entry, launcher = fast
        if launcher is not None:  # (it counts the memory hit: cache.py)
            try:
                if not launcher.call(args):
                    return False
            except ValueError as e:
                locations.annotate(e, entry.graph, entry.where)
                raise
        else:
            run_args, guards = [], []
            for a in args:
                wrapper = axes = None
                t = type(a)
                if t is HostTensor:
                    wrapper, axes, a = t, a.dynamic_axis, a._pypto_data
                    t = type(a)
                if t is np.ndarray:
                    guards.append(("array", wrapper, axes, t, a.dtype, a.shape))
                    run_args.append(a)
                elif t in _SCALAR_TYPES:
                    guards.append(("scalar", None, None, t, a, None))
                else:
                    guards.append(("tensor", wrapper, axes, t, a.dtype, a.shape))
                    a = _torch_numpy(a)
                    if not a.flags.carray:
                        return False
                    run_args.append(a)
            _check_aliasing(entry, run_args)
            _launch(entry, run_args)
            make = getattr(entry.compiled.kernel, "launcher", None)
            # (not for empty arguments, nor where index arguments are checked)
            if make is not None and not entry.index_checks and all(a.size for a in run_args):
                launcher = fast[1] = make(run_args, entry.run_dtypes, entry.written, guards)
            cache.count("memory_hits")
        if launcher is not None:
            self._hot = state + (launcher, entry)
        self.last_compile = entry.memory_info
        return True

    def _run(self, entry, arrays, torches, swimlane=False):
        run_args, copy_back = [], []
        _check_aliasing(entry, arrays)
        tensor_params = [p for p, spec in zip(self._params, entry.specs) if spec[0] != "scalar"]
        for p, array, t, role in zip(tensor_params, arrays, torches, entry.roles):
            writes = role != graph_pb2.PARAM_ROLE_IN
            if writes and not array.flags.writeable:
                raise ValueError(f"argument '{p.name}' is read-only, but the kernel writes it")
            if array.flags.c_contiguous and array.flags.aligned:
                run_args.append(array)
                continue
            tmp = np.ascontiguousarray(array)
            if tmp is array:  # 0-stride corner cases: force a private copy
                tmp = array.copy()
            run_args.append(tmp)
            if writes:
                copy_back.append((array, tmp))
        if swimlane:
            _launch_traced(entry, run_args, self.name)
        else:
            _launch(entry, run_args)
        for array, tmp in copy_back:
            np.copyto(array, tmp)


class _ScopedJit:
    """@pypto.options(...) over @pypto.jit: calls run in the scope; every
    other attribute (last_compile, trace, ...) is the jit function's, live."""

    def __init__(self, jit_function, scope):
        self.__wrapped__ = jit_function
        self._scope = scope
        functools.update_wrapper(self, jit_function, updated=())

    def __call__(self, *args, **kwargs):
        with self._scope:
            return self.__wrapped__(*args, **kwargs)

    def trace(self, *args, **kwargs):
        with self._scope:
            return self.__wrapped__.trace(*args, **kwargs)

    def with_options(self, scope):
        """pypto.options(...) over this: one more scope, outside this one."""
        return _ScopedJit(self, scope)

    def __getattr__(self, name):
        return getattr(self.__wrapped__, name)


def jit(fn=None, **options):
    """Decorator: @pypto.jit or @pypto.jit(runtime_options={...}, ...).

    Keywords: the option groups of jit_options.py (host_options,
    runtime_options, codegen_options, pass_options, verify_options,
    debug_options), and PyPTO's new_ir and create_new_logical_tensor, which
    have no effect here (pypto.debug.ignored_options lists them)."""
    opts = JitOptions(**options)
    if fn is None:
        return lambda f: JitFunction(f, opts)
    if not callable(fn):
        raise TypeError(f"pypto.jit: expected a function, got {type(fn).__name__}")
    return JitFunction(fn, opts)
