"""Eager runs: a kernel's own Python runs with real tensors, op by op.

    with pypto.debug.eager():        # or PYPTO_EAGER=1, or per kernel:
        kernel(a, b, out)            # runtime_options={"run_mode": pypto.RunMode.EAGER}

The kernel function itself runs (not the rewritten copy a trace uses), so a
breakpoint on one of its lines stops there, and `print(t)`, `t.numpy()` and
`t.torch()` show the tensor's values. Each op is recorded as in a trace
(tracer.py: the same checks and messages) and computed at once by the
reference evaluator (compiler/reference/reference_eval.h, through _native
reference_eval) on its operands' values: in double, its result rounded to
its value's dtype as the compiled kernel rounds it. `pypto.loop` iterates
over real indices (RuntimeInt: runtime_int.py), an `if` takes the branch
its real condition picks, views and assembles act on real data, and each
argument the kernel writes receives its final value when the kernel
returns. Values are stored as float64 arrays holding the dtype's values
(an INT64 beyond 2**53 loses its low bits), each with the evaluator's
error bound (reference_error.h: how far a correct compiled kernel's value
may be from it), carried from op to op.

EagerBuilder(track=True) also remembers, per element of every value, the
op that computed it (data moves pass it through): verify_run.py names
that op, at the user's line, for an element that differs.
"""

import numpy as np

from . import dtypes, fp8, frames, op_table, tracer
from ._proto import graph_pb2
from .errors import TraceError
from .extension import native

# Ops that move data without computing it, the registry's layout kinds (view,
# assemble, reshape, transpose, permute, unsqueeze, concat) and the copies:
# the writer of each element passes through them (the same op run on the
# writers' indices).
_DATA_MOVES = op_table.kinds(category="layout") + ("copy", "clone")


class OpRecord:
    """One op an eager run computed: its kind, the user's frame and the
    value id of its result."""

    __slots__ = ("kind", "where", "vid")

    def __init__(self, kind, where, vid):
        self.kind = kind
        self.where = where
        self.vid = vid

    def describe(self):
        where = frames.describe(self.where) if self.where else "(a line of pypto's own)"
        return f"pypto.{self.kind} at {where}"


class EagerBuilder(tracer.GraphBuilder):
    """A GraphBuilder that computes each op as it is recorded."""

    eager = True

    def __init__(self, name, track=False):
        super().__init__(name)
        self.data = {}        # value id -> float64 array
        self.bounds = {}      # value id -> its error bounds (reference_error.h)
        self.track = track
        self.writers = {}     # value id -> int array: index into self.records
        self.records = []     # OpRecord per op computed (track only)
        self.verify_options = {}  # the kernel's own (pypto.pass_verify_save reads them)

    # Recording ------------------------------------------------------------------

    def add_op(self, kind, inputs, dtype, shape, attrs=None, what=None, space=None,
               cube_tile=None, tile=None, static=None):
        t = super().add_op(kind, inputs, dtype, shape, attrs, what, space, cube_tile, tile,
                           static)
        self._compute(self._ops[-1])
        return t

    def _copy(self, src):
        vid = super()._copy(src)
        self._compute(self._ops[-1])
        return vid

    def open_region(self, what):
        raise TraceError(f"{what}: an eager run has no graph regions (a loop or branch on a "
                         f"value known only when a compiled kernel runs)")

    # Values ---------------------------------------------------------------------

    def set_param_data(self, t, array):
        """Gives parameter proxy `t` its data (float64, already the dtype's values)."""
        self.data[t._vid] = np.ascontiguousarray(array, dtype=np.float64)
        self.bounds[t._vid] = np.zeros(self.data[t._vid].shape)
        if self.track:
            self.writers[t._vid] = np.full(self.data[t._vid].shape, -1, dtype=np.float64)

    def array_of(self, t):
        """The float64 values of tensor `t` of this run."""
        if t._vid is None:
            raise TraceError(f"tensor '{t.name or 'tensor'}' has no value yet (write it "
                             f"with t[:] = expr first)")
        return self.data[t._vid]

    def _compute(self, op):
        ins = list(dict.fromkeys(op.inputs))
        out = op.outputs[0]
        graph = self._one_op_graph(op, ins, out)
        try:
            result = native().reference_eval(graph.SerializeToString(),
                                             [self.data[v] for v in ins] + [None],
                                             [self.bounds[v] for v in ins] + [None])
        except ValueError as e:
            where = self.where.get(out)
            prefix = f"{where[0]}:{where[1]}: " if where else ""
            raise TraceError(f"{prefix}eager run of pypto.{op.kind}: {e}") from None
        self.data[out], self.bounds[out] = result[-1]
        if self.track:
            self._track(op, ins, out)

    def _one_op_graph(self, op, ins, out, as_double=False):
        g = graph_pb2.Graph(schema_version=graph_pb2.SCHEMA_VERSION_1, name="eager")
        for k, vid in enumerate(ins):
            g.params.add(name=f"in{k}", role=graph_pb2.PARAM_ROLE_IN, value_id=vid)
        g.params.add(name="out", role=graph_pb2.PARAM_ROLE_OUT, value_id=out)
        for vid in ins + [out]:
            _, dtype, shape = self._values[vid]
            v = g.values.add(id=vid, dtype=int(dtypes.DT_DOUBLE) if as_double else dtype)
            for d in shape:
                v.shape.dims.add().size = int(d)
            if v.dtype in dtypes.FP8_TYPES:  # the FP8 dtypes are version 3's
                g.schema_version = graph_pb2.SCHEMA_VERSION_3
        g.ops.append(op)
        return g

    def _track(self, op, ins, out):
        """The writer of each element of op's result: op itself, or for a
        data move the writers of the elements it moves."""
        if op.kind in _DATA_MOVES:
            graph = self._one_op_graph(op, ins, out, as_double=True)
            self.writers[out] = native().reference_eval(
                graph.SerializeToString(), [self.writers[v] for v in ins] + [None])[-1][0]
            return
        self.records.append(OpRecord(op.kind, self.where.get(out), out))
        self.writers[out] = np.full(self.data[out].shape, len(self.records) - 1,
                                    dtype=np.float64)

    def writer_of(self, vid, index):
        """The OpRecord that computed element `index` of value `vid`, or None
        (the element is the caller's data)."""
        k = int(self.writers[vid][index])
        return self.records[k] if k >= 0 else None


def current():
    """The EagerBuilder of the run in progress, or None."""
    b = tracer.current_builder()
    return b if getattr(b, "eager", False) else None


# Values in and out ----------------------------------------------------------------

def input_values(array, torch_tensor, dtype):
    """A kernel argument's values as float64 (bfloat16 through torch; an
    output's uninitialised memory may hold anything)."""
    if torch_tensor is not None and dtype == dtypes.DT_BF16:
        return torch_tensor.detach().float().numpy().astype(np.float64)
    if dtype in dtypes.FP8_TYPES:  # uint8 bit patterns
        return fp8.to_float(array, dtype)
    with np.errstate(invalid="ignore"):
        return np.asarray(array, dtype=np.float64)


def write_back(values, array, torch_tensor, dtype):
    """Writes float64 `values` (the dtype's values) into a kernel argument."""
    if dtype in dtypes.FP8_TYPES:  # uint8 bit patterns
        values = fp8.from_float(values, dtype)
    if torch_tensor is not None:
        import torch  # only for torch arguments: pypto runs without torch
        torch_tensor.detach().copy_(torch.from_numpy(values).to(torch_tensor.dtype))
        return
    np.copyto(array, values.astype(array.dtype), casting="unsafe")


def as_numpy(values, dtype):
    """float64 `values` in `dtype`'s numpy type (BF16: float32, numpy has none)."""
    np_dtype = dtypes.to_numpy(dtype)
    return values.astype(np.float32 if np_dtype is None else np_dtype)


def as_torch(values, dtype):
    import torch  # only for Tensor.torch(): pypto runs without torch
    t = torch.from_numpy(as_numpy(values, dtype))
    return t.to(torch.bfloat16) if dtype == dtypes.DT_BF16 else t


# Running a kernel -------------------------------------------------------------------

class Run:
    """The result of an eager run: the builder and the final value id of
    each tensor parameter (None where the kernel does not write it)."""

    def __init__(self, builder, params, written):
        self.builder = builder
        self.params = params      # tensor parameter names, in order
        self.written = written    # per tensor parameter: final value id or None


def run(jit_fn, args, kwargs, track=False, write=True):
    """Runs jit function `jit_fn` eagerly on `args`/`kwargs`; writes each
    written argument (unless `write` is False) and returns the Run."""
    arrays, torches, _, specs = jit_fn._bind(args, kwargs)
    builder = EagerBuilder(jit_fn.name, track=track)
    builder.verify_options = jit_fn.options.groups.get("verify_options", {})
    proxies, tensor_proxies, names, values = [], [], [], iter(zip(arrays, torches))
    for p, spec in zip(jit_fn._params, specs):
        if spec[0] == "scalar":
            proxies.append(spec[2].value)
            continue
        t = builder.add_param(p.name, spec[0], tuple(spec[1]), p.ann.name)
        array, torch_tensor = next(values)
        builder.set_param_data(t, input_values(array, torch_tensor, spec[0]))
        proxies.append(t)
        tensor_proxies.append((t, spec[0]))
        names.append(p.name)
    with tracer.recording(builder):
        result = jit_fn.fn(*proxies)
    if result is not None:
        raise TraceError(
            f"kernel '{jit_fn.name}' returned {type(result).__name__}: kernels return "
            f"nothing; write results into an argument with out[:] = expr")
    written = [t._param.final if t._param.written else None for t, _ in tensor_proxies]
    if write:
        for (t, dtype), vid, array, torch_tensor in zip(tensor_proxies, written, arrays,
                                                        torches):
            if vid is not None:
                write_back(builder.data[vid], array, torch_tensor, dtype)
    return Run(builder, names, written)
