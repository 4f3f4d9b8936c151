"""Tracing: a kernel function run once on proxy tensors becomes a pto.v1.Graph.

The builder keeps SSA values. A kernel parameter starts as one value (the
caller's data); `out[:] = e` rebinds the parameter to e's value, so reading
`out` afterwards reads what was written. At the end each parameter's role
follows from what happened to it:

  never written                    -> IN     (value_id = incoming value)
  written, incoming value never read -> OUT  (value_id = final value)
  read, then written               -> INOUT  (value_id = incoming,
                                              result_value_id = final)

`out[:] = e` where e is an op result not yet bound to a parameter makes that
op write the parameter directly; otherwise (e is an input, or already bound)
a `copy` op is recorded. Ops whose results reach no output are dropped.
"""

import sys

from . import dtypes, tiling
from ._proto import graph_pb2
from .errors import TraceError

_current = None  # the GraphBuilder of the trace in progress, if any

# The compiler's bound on any name (compiler/verify/limits.h), in UTF-8 bytes.
MAX_NAME_BYTES = 256


def clip_name(name):
    """`name`, shortened to fit the compiler's name bound (names are debug only)."""
    data = name.encode("utf-8", "replace")
    if len(data) <= MAX_NAME_BYTES:
        return name
    return data[:MAX_NAME_BYTES - 3].decode("utf-8", "ignore") + "..."


def current_builder():
    return _current


class ScalarArg:
    """A compile-time scalar argument of a trace: the kernel sees `value`."""

    __slots__ = ("name", "value")

    def __init__(self, name, value):
        self.name = name
        self.value = value


class _Param:
    __slots__ = ("name", "initial", "final", "read", "written")

    def __init__(self, name, initial):
        self.name = name
        self.initial = initial
        self.final = initial
        self.read = False
        self.written = False


class GraphBuilder:
    """Records values and ops of one trace."""

    def __init__(self, name):
        self.name = name
        self._values = {}      # id -> [name, dtype, shape]
        self._ops = []         # graph_pb2.Op, program order
        self._producer = {}    # value id -> index into _ops
        self._bound = set()    # value ids that are some parameter's final value
        self._params = []      # _Param, call order
        self._next_id = 1
        # Dynamic dims (symbolic.py): sentinel size -> symbol name.
        self.symbols = {}
        # value id -> (file, line, function) of the user's statement whose op
        # defines it (locations.py maps compiler errors back to it).
        self.where = {}

    # Values -----------------------------------------------------------------

    def new_value(self, dtype, shape, name=""):
        vid = self._next_id
        self._next_id += 1
        self._values[vid] = [name, int(dtype), tuple(shape)]
        return vid

    def value_name(self, vid):
        return self._values[vid][0]

    def set_value_name(self, vid, name):
        self._values[vid][0] = name

    def add_param(self, name, dtype, shape, value_name=""):
        from .tensors import Tensor
        from .symbolic import SymInt
        shape = tuple(SymInt(d, self.symbols[d]) if d in self.symbols else d for d in shape)
        vid = self.new_value(dtype, shape, value_name or name)
        p = _Param(name, vid)
        self._params.append(p)
        return Tensor._proxy(self, vid, dtype, shape, value_name or name, param=p)

    # Ops --------------------------------------------------------------------

    def note_read(self, t):
        """Called for every tensor an op reads."""
        if t._vid is None:
            raise TraceError(
                f"tensor '{t.name}' is read before anything is written to it "
                f"(write it with {t.name or 'tensor'}[:] = expr first)")
        p = t._param
        if p is not None and t._vid == p.initial:
            p.read = True

    def add_op(self, kind, inputs, dtype, shape, attrs=None, what=None, space=None,
               cube_tile=None, tile=None):
        """Records `kind` on `inputs` (Tensors) and returns its result Tensor.
        `space` is the shape the vector tile covers (default: the result's;
        a reduction's: its input's); `tile` overrides the current tile. Cube
        ops (matmul) pass `cube_tile` (tiling's (m, k, n, split_k)) instead of
        using the vector tile."""
        from .tensors import Tensor
        what = what or f"pypto.{kind}"
        if cube_tile is not None:
            tile = ()
        elif tile is None:
            tile = tiling.current_vec_tile()
        space = shape if space is None else space
        rank = len(space)
        if cube_tile is not None:
            pass
        elif tile is None:
            raise TraceError(
                f"{what}: no vector tile shape is set; call "
                f"pypto.set_vec_tile_shapes with {rank} dims before this op")
        if cube_tile is None and len(tile) != rank:
            raise TraceError(
                f"{what}: the vector tile shape {tuple(tile)} has {len(tile)} dims but "
                f"the op's result has {rank} (shape {tuple(space)}); call "
                f"pypto.set_vec_tile_shapes with {rank} dims before this op")
        for t in inputs:
            self.note_read(t)
        out = self.new_value(dtype, shape)
        self.where[out] = _user_frame()
        op = graph_pb2.Op(kind=kind)
        op.inputs.extend(t._vid for t in inputs)
        op.outputs.append(out)
        for key, value in (attrs or {}).items():
            if isinstance(value, dtypes.DataType):
                op.attrs[key].dtype = int(value)
            elif isinstance(value, (list, tuple)):
                op.attrs[key].ints.values.extend(int(v) for v in value)
            elif isinstance(value, bool):
                op.attrs[key].b = value
            elif isinstance(value, int):
                op.attrs[key].i = value
            else:
                op.attrs[key].f = float(value)
        op.vec_tile.dims.extend(tile)
        if cube_tile is not None:
            m, k, n, split_k = cube_tile
            op.cube_tile.m.extend(m)
            op.cube_tile.k.extend(k)
            op.cube_tile.n.extend(n)
            op.cube_tile.enable_split_k = split_k
        self._producer[out] = len(self._ops)
        self._ops.append(op)
        return Tensor._proxy(self, out, dtype, shape, "")

    def write(self, dst, src, what):
        """dst[:] = src: rebinds dst (a parameter or local tensor) to src's value."""
        from .tensors import Tensor
        if not isinstance(src, Tensor) or src._builder is not self:
            from .errors import not_yet
            if isinstance(src, (int, float)):
                raise not_yet(f"{what} with a Python scalar (filling a tensor, pypto.full)", 3)
            raise TypeError(f"{what}: expected a pypto Tensor of this kernel, got "
                            f"{type(src).__name__}")
        if src.dtype != dst.dtype:
            raise TypeError(
                f"{what}: the value has dtype {src.dtype.name} but '{dst.name}' has "
                f"{dst.dtype.name} (convert it: pypto.cast(value, dtype))")
        if tuple(src.shape) != tuple(dst.shape):
            from .symbolic import SymInt
            dims = [i for i, (s, d) in enumerate(zip(src.shape, dst.shape))
                    if isinstance(s, SymInt) and not isinstance(d, SymInt)]
            hint = (f"dim {dims[0]} is dynamic in the value but fixed in '{dst.name}': make "
                    f"it dynamic too (pypto.DYNAMIC or a name in the annotation, or "
                    f"pypto.from_torch(t, dynamic_axis={dims[0]}))"
                    if dims and len(src.shape) == len(dst.shape) else
                    "broadcasting and assembling a region: issue 3")
            raise ValueError(
                f"{what}: the value has shape {tuple(src.shape)} but '{dst.name}' has "
                f"{tuple(dst.shape)} ({hint})")
        self.note_read(src)
        p = dst._param
        vid = src._vid
        bindable = (p is not None and vid in self._producer and vid not in self._bound)
        if p is None:
            # A local tensor: plain SSA rebinding, no op needed.
            dst._vid = vid
            return
        if not bindable:
            tile = tiling.current_vec_tile()
            if tile is None or len(tile) != len(dst.shape):
                # A copy needs a tile like every vector op; default to whole rows
                # rather than failing on a pure data move.
                tile = tuple(min(d, 64) for d in dst.shape)
            out = self.new_value(dst.dtype, dst.shape)
            self.where[out] = _user_frame()
            op = graph_pb2.Op(kind="copy")
            op.inputs.append(vid)
            op.outputs.append(out)
            op.vec_tile.dims.extend(tile)
            self._producer[out] = len(self._ops)
            self._ops.append(op)
            vid = out
        if p.final in self._bound:
            self._bound.discard(p.final)
        self._bound.add(vid)
        self._values[vid][0] = p.name
        p.final = vid
        p.written = True
        dst._vid = vid

    # Result -----------------------------------------------------------------

    def finish(self, local_names=None):
        """Builds the Graph proto (roles, dead-op removal, value names)."""
        for obj_name, t in (local_names or {}).items():
            if t._builder is self and t._vid is not None and not self._values[t._vid][0]:
                self._values[t._vid][0] = obj_name
        if not any(p.written for p in self._params):
            raise TraceError(
                f"kernel '{self.name}' writes no output: kernels return nothing, so "
                f"write results into an argument with out[:] = expr or out.move(expr)")
        g = graph_pb2.Graph(schema_version=graph_pb2.SCHEMA_VERSION_1,
                            name=clip_name(self.name))
        needed = set()
        for p in self._params:
            needed.add(p.initial)
            if p.written:
                needed.add(p.final)
        kept = []
        for op in reversed(self._ops):
            if any(o in needed for o in op.outputs):
                kept.append(op)
                needed.update(op.inputs)
        kept.reverse()
        kept = self._snapshot_late_inout_reads(kept)
        for p in self._params:
            param = g.params.add(name=clip_name(p.name))
            if not p.written:
                param.role = graph_pb2.PARAM_ROLE_IN
                param.value_id = p.initial
            elif not p.read:
                param.role = graph_pb2.PARAM_ROLE_OUT
                param.value_id = p.final
                needed.discard(p.initial)
            else:
                param.role = graph_pb2.PARAM_ROLE_INOUT
                param.value_id = p.initial
                param.result_value_id = p.final
        used = set()
        for op in kept:
            used.update(op.inputs)
            used.update(op.outputs)
        for p in g.params:
            used.add(p.value_id)
            if p.role == graph_pb2.PARAM_ROLE_INOUT:
                used.add(p.result_value_id)
        for vid in sorted(used):
            name, dtype, shape = self._values[vid]
            v = g.values.add(id=vid, name=clip_name(name), dtype=dtype)
            for d in shape:
                if d in self.symbols:
                    v.shape.dims.add(symbol=self.symbols[d])
                else:
                    v.shape.dims.add(size=d)
        for op in kept:
            if op.outputs and not op.name:
                op.name = clip_name(self._values[op.outputs[0]][0])
        g.ops.extend(kept)
        return g


    def _snapshot_late_inout_reads(self, ops):
        """An in/out parameter shares one buffer for its incoming and final
        contents, so no op may read the incoming data after the op that writes
        the final value (e.g. `e = acc * 2; f = acc + 1; acc[:] = e` makes the
        mul write acc before the add reads it). Such late reads are redirected
        to a copy of the incoming data taken before anything runs."""
        for p in self._params:
            if not (p.written and p.read):
                continue
            writer = next(i for i, op in enumerate(ops) if p.final in op.outputs)
            late = [op for op in ops[writer + 1:] if p.initial in op.inputs]
            if not late:
                continue
            name, dtype, shape = self._values[p.initial]
            snap = self.new_value(dtype, shape, name)
            copy = graph_pb2.Op(kind="copy", inputs=[p.initial], outputs=[snap])
            copy.vec_tile.dims.extend(ops[writer].vec_tile.dims)
            for op in late:
                inputs = [snap if i == p.initial else i for i in op.inputs]
                del op.inputs[:]
                op.inputs.extend(inputs)
            ops = [copy] + ops
        return ops


def _user_frame():
    from .locations import user_frame
    return user_frame()


def trace(fn, name, params, builder=None):
    """Runs `fn` on proxies for `params` [(arg name, dtype, shape, value name)
    or ScalarArg].

    Returns the Graph. Tile shapes set inside `fn` are undone afterwards.
    `builder`: the GraphBuilder to record into (its `where` then maps value
    ids to user source lines).
    """
    global _current
    from .tensors import Tensor
    builder = builder or GraphBuilder(name)
    proxies = [p.value if isinstance(p, ScalarArg) else builder.add_param(*p) for p in params]
    saved_tiles = tiling._save()
    saved_builder = _current
    locals_at_return = {}
    code = getattr(fn, "__code__", None)
    previous_profile = sys.getprofile()

    def profile(frame, event, arg):
        # Captures the kernel's local variable names for debug names.
        if event == "return" and frame.f_code is code:
            locals_at_return.update(
                {k: v for k, v in frame.f_locals.items() if isinstance(v, Tensor)})

    _current = builder
    sys.setprofile(profile)
    try:
        result = fn(*proxies)
    finally:
        sys.setprofile(previous_profile)
        _current = saved_builder
        tiling._restore(saved_tiles)
    if result is not None:
        raise TraceError(
            f"kernel '{name}' returned {type(result).__name__}: kernels return nothing; "
            f"write results into an argument with out[:] = expr")
    # Parameter names come from the signature, not from locals.
    arg_names = {p.name if isinstance(p, ScalarArg) else p[0] for p in params}
    return builder.finish({k: v for k, v in locals_at_return.items() if k not in arg_names})
