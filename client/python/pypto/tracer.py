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

Control flow (control_flow.py: pypto.loop, pypto.cond) records into a
Region: the body's ops go to the region, and a tensor created before the
region and written inside it is *carried* (graph.proto "Region"): the region
gets an arg for it, reads of the tensor in the body read the arg (reads
recorded before the first write are rewritten when it comes), and when the
region closes the control-flow op takes the tensor's value before as an
input and gives its value after as an output, which the tensor is rebound to
(a parameter then binds it as above). A value made in a body is dead after
it: reading it there is an error naming the body.
"""

import contextlib
import sys

from . import dtypes, frames, op_table, symbolic, tiling, trace_compare
from ._proto import graph_pb2
from .errors import TraceError, not_yet

_current = None  # the GraphBuilder of the trace in progress, if any

# The class of the values a trace records on (tensors.Tensor registers
# itself): the tracer makes them with its _proxy classmethod and reads their
# _builder, _vid, dtype and _shape, and knows nothing else of them.
_value_type = None


def check_against_registry(kind, num_inputs, attrs, what):
    """An op about to be recorded, against the compiler's registry
    (op_table.py): a known kind, its arity, no attribute it does not accept
    and every one it requires. A mismatch is the front end's own error (its
    policy asked for an op the compiler does not have in that form), raised
    at the line that records it rather than by the verifier."""
    try:
        facts = op_table.op(kind)
    except KeyError as e:
        raise TraceError(f"{what}: {e.args[0]}") from None
    if facts.num_inputs >= 0 and num_inputs != facts.num_inputs:
        raise TraceError(f"{what}: records '{kind}' with {num_inputs} inputs; the compiler's "
                         f"'{kind}' takes {facts.num_inputs}")
    given = set(attrs or ())
    accepted = {a.name for a in facts.attrs}
    for name in sorted(given - accepted):
        raise TraceError(f"{what}: records '{kind}' with attribute '{name}', which the "
                         f"compiler's '{kind}' does not take (it takes "
                         f"{', '.join(sorted(accepted)) or 'none'})")
    for a in facts.attrs:
        if a.required and a.name not in given:
            raise TraceError(f"{what}: records '{kind}' without its attribute '{a.name}'")


def register_value_type(cls):
    """Makes `cls` the class of traced values (called once, by tensors.py)."""
    global _value_type
    _value_type = cls

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


class Region:
    """An open body of a control-flow op (control_flow.py)."""

    def __init__(self, what, where):
        self.what = what        # e.g. "the body of pypto.loop 'LOOP_B'"
        self.where = where      # user_frame() of the loop or if statement
        self.ops = []           # graph_pb2.Op, program order
        self.carried = {}       # Tensor -> [value before, arg]; insertion order
        self.end = {}           # Tensor -> value at the end (set when closed)
        # [op, input position, Tensor, value id] of every read in this body
        # and in the bodies closed inside it: rewritten when a tensor becomes
        # carried (its earlier reads must read the arg).
        self.reads = []
        self.closed = False
        self.kept = []          # its ops that reach a result (GraphBuilder._live)

    def describe(self):
        if self.where is None:
            return self.what
        return f"{self.what} at {self.where[0]}:{self.where[1]}"


class GraphBuilder:
    """Records values and ops of one trace."""

    def __init__(self, name):
        self.name = name
        self._values = {}      # id -> [name, dtype, shape]
        # id -> static shape, for a value whose shape (its valid region, what
        # ops compute on) is smaller (graph.proto Value.valid_shape).
        self._static = {}
        self._ops = []         # graph_pb2.Op, program order
        self._producer = {}    # value id -> index into _ops
        self._bound = set()    # value ids that are some parameter's final value
        self._params = []      # _Param, call order
        self._next_id = 1
        # Dynamic dims (symbolic.py): sentinel size -> symbol name.
        self.symbols = {}
        # The target the trace compiles for (jit_options.target_of): ops
        # whose form depends on what the target maps read it (conv.py).
        self.compile_target = "host"
        # value id -> (file, line, function) of the user's statement whose op
        # defines it (locations.py maps compiler errors back to it).
        self.where = {}
        # Control flow: the open regions (innermost last), the region of each
        # value defined in one, each control op's regions as
        # [(Region, args, results)] by id(op) (serialized by finish), the
        # open loops' index symbols, and an error to raise at the next op
        # (a loop body left by break or return).
        self._stack = []
        self._vid_region = {}
        self._control = {}
        self._target = None
        self.indices = []
        self.index_names = set()
        self.loop_bounds = {}   # loop index symbol -> (start, stop, step)
        self.failed = None
        self._op_count = 0      # ops recorded (trace_compare.too_many_ops)

    # Values -----------------------------------------------------------------

    def new_value(self, dtype, shape, name="", region=False, static=None):
        """A new value of `shape` (its valid region when `static`, its static
        shape, is given)."""
        vid = self._next_id
        self._next_id += 1
        self._values[vid] = [name, int(dtype), tuple(shape)]
        if static is not None and not symbolic.same_shape(static, shape):
            self._static[vid] = tuple(static)
        r = self.current_region() if region is False else region
        if r is not None:
            self._vid_region[vid] = r
        return vid

    def current_region(self):
        """The innermost open region (None: the kernel's top level)."""
        if self._target is not None:
            return self._target[0]
        return self._stack[-1] if self._stack else None

    def _current_ops(self):
        r = self.current_region()
        return self._ops if r is None else r.ops

    def symbol_values(self):
        """{name: SymbolicScalar} of the symbols usable here: the parameters'
        dynamic dims and the open loops' indices."""
        out = {name: symbolic.symbol(name, size) for size, name in self.symbols.items()}
        for index in self.indices:
            out[symbolic.symbol_of(index)] = index
        return out

    def check_failed(self):
        if self.failed is not None:
            raise TraceError(self.failed)

    def value_name(self, vid):
        return self._values[vid][0]

    def set_value_name(self, vid, name):
        self._values[vid][0] = name

    def add_param(self, name, dtype, shape, value_name=""):
        shape = tuple(symbolic.symbol(self.symbols[d], d)
                      if type(d) is int and d in self.symbols else d for d in shape)
        vid = self.new_value(dtype, shape, value_name or name)
        p = _Param(name, vid)
        self._params.append(p)
        return _value_type._proxy(self, vid, dtype, shape, value_name or name, param=p)

    # Ops --------------------------------------------------------------------

    def note_read(self, t):
        """Called for every tensor an op reads."""
        self.check_failed()
        if t._vid is None:
            raise TraceError(
                f"tensor '{t.name}' is read before anything is written to it "
                f"(write it with {t.name or 'tensor'}[:] = expr first)")
        self.check_alive(t)
        p = t._param
        if p is not None and t._vid == p.initial:
            p.read = True

    def check_alive(self, t):
        """A tensor made in a closed body is dead after it (a TraceError)."""
        r = self._vid_region.get(t._vid)
        if r is None:
            r = getattr(t, "_home", None)
        if r is not None and r.closed:
            kind = "loop" if "loop" in r.what else "branch"
            raise TraceError(
                f"tensor '{t.name or self.value_name(t._vid) or frames.user_name(t)}' was made in "
                f"{r.describe()} and is used after it: a value made in a body exists only "
                f"there; to keep it, assign it into a tensor created before the {kind} "
                f"(out[i:i + 1, :] = y, or acc[:] = y)")

    def log_reads(self, op, inputs):
        """Remembers op's reads of `inputs` (Tensors) in the open region."""
        r = self.current_region()
        if r is not None:
            for pos, t in enumerate(inputs):
                r.reads.append([op, pos, t, t._vid])

    def append_op(self, op):
        """Appends `op` to the open region or the top level."""
        self._op_count += 1
        if self.symbols:  # at placeholder sizes: a Python loop over one?
            if self._op_count > trace_compare.MAX_OPS_AT_PLACEHOLDERS:
                trace_compare.too_many_ops(self)
        if self.current_region() is None:
            for out in op.outputs:
                self._producer[out] = len(self._ops)
        self._current_ops().append(op)

    def add_op(self, kind, inputs, dtype, shape, attrs=None, what=None, space=None,
               cube_tile=None, tile=None, static=None):
        """Records `kind` on `inputs` (Tensors) and returns its result Tensor.
        `shape` is the region the op computes (the result's valid shape),
        `static` the result's static shape where larger (None: `shape`).
        `space` is the shape the vector tile covers (default: the result's;
        a reduction's: its input's); `tile` overrides the current tile. Cube
        ops (matmul) pass `cube_tile` (tiling's (m, k, n, split_k)) instead of
        using the vector tile."""
        what = what or f"pypto.{kind}"
        check_against_registry(kind, len(inputs), attrs, what)
        space = shape if space is None else space
        rank = len(space)
        if cube_tile is not None or rank == 0:
            tile = ()  # cube ops take cube_tile; a rank-0 op's tile is []
        elif tile is None:
            tile = tiling.current_vec_tile()
            if tile is not None and len(tile) > rank:
                tile = tiling.vec_tile_for_rank(tile, rank)  # PyPTO: the first `rank` entries
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
        out = self.new_value(dtype, shape, static=static)
        self.where[out] = frames.user_frame()
        op = graph_pb2.Op(kind=kind)
        op.inputs.extend(t._vid for t in inputs)
        op.outputs.append(out)
        set_attrs(op, attrs)
        op.vec_tile.dims.extend(int(t) for t in tile)
        if cube_tile is not None:
            m, k, n, split_k = cube_tile
            op.cube_tile.m.extend(m)
            op.cube_tile.k.extend(k)
            op.cube_tile.n.extend(n)
            op.cube_tile.enable_split_k = split_k
        self.log_reads(op, inputs)
        self.append_op(op)
        return _value_type._proxy(self, out, dtype, shape, "", static=self._static.get(out))

    def add_full(self, shape, dtype, value, what, static=None):
        """Records a tensor of `shape` filled with `value` (a float, or a
        SymbolicScalar evaluated at launch) and returns it; `static`: its
        static shape where `shape` is a smaller valid region."""
        return self.add_op("full", [], dtype, shape,
                           {"shape": list(shape), "dtype": dtype, "value": value}, what,
                           static=static)

    def write(self, dst, src, what):
        """dst[:] = src: rebinds dst (a parameter or local tensor) to src's value."""
        if not isinstance(src, _value_type) or src._builder is not self:
            if isinstance(src, (int, float)):
                raise not_yet(f"{what} with a Python scalar (filling a tensor, pypto.full)",
                              "a form this version does not have yet")
            raise TypeError(f"{what}: expected a pypto Tensor of this kernel, got "
                            f"{type(src).__name__}")
        if src.dtype != dst.dtype:
            raise TypeError(
                f"{what}: the value has dtype {src.dtype.name} but '{dst.name}' has "
                f"{dst.dtype.name} (convert it: pypto.cast(value, dtype))")
        if not symbolic.same_shape(src._shape, dst._shape):
            dims = [i for i, (s, d) in enumerate(zip(src.shape, dst.shape))
                    if symbolic.is_symbolic(s) and not symbolic.is_symbolic(d)]
            hint = (f"dim {dims[0]} is dynamic in the value but fixed in '{dst.name}': make "
                    f"it dynamic too (pypto.DYNAMIC or a name in the annotation, or "
                    f"pypto.from_torch(t, dynamic_axis={dims[0]}))"
                    if dims and len(src.shape) == len(dst.shape) else
                    "broadcasting while assembling a region is not supported")
            raise ValueError(
                f"{what}: the value has shape {tuple(src.shape)} but '{dst.name}' has "
                f"{tuple(dst.shape)} ({hint})")
        self.note_read(src)
        if self._stack:
            self._write_in_region(dst, src)
            return
        p = dst._param
        vid = src._vid
        bindable = (p is not None and vid in self._producer and vid not in self._bound)
        if p is None:
            # A local tensor: plain SSA rebinding, no op needed.
            dst._vid = vid
            return
        if not bindable:
            vid = self._copy(src)
        self._bind_param(dst, vid)

    def _copy(self, src):
        """Records a copy of src; returns the copy's value id."""
        tile = tiling.vec_tile_for_rank(tiling.current_vec_tile(), len(src._shape))
        if tile is None:
            # A copy needs a tile like every vector op; default to whole rows
            # rather than failing on a pure data move.
            tile = tuple(min(int(d), 64) for d in src._shape)
        out = self.new_value(src.dtype, src._shape)
        self.where[out] = frames.user_frame()
        op = graph_pb2.Op(kind="copy")
        op.inputs.append(src._vid)
        op.outputs.append(out)
        op.vec_tile.dims.extend(int(t) for t in tile)
        self.log_reads(op, [src])
        self.append_op(op)
        return out

    def _bind_param(self, dst, vid):
        p = dst._param
        if p.final in self._bound:
            self._bound.discard(p.final)
        self._bound.add(vid)
        self._values[vid][0] = p.name
        p.final = vid
        p.written = True
        dst._vid = vid

    # Control flow ---------------------------------------------------------------

    def _write_in_region(self, dst, src):
        """dst[:] = src inside a body: dst becomes carried by every open region
        it was created outside of, and is rebound to src's value (a copy of it
        when src is a value from outside the body, so that the body's result
        is its own value and reads of a carried src stay rewritable)."""
        r = self.current_region()
        self.check_alive(dst)
        vid = src._vid
        if self._vid_region.get(vid) is not r:
            vid = self._copy(src)
        self._carry(dst)
        dst._vid = vid

    def _home_depth(self, t):
        """How many open regions enclose the place where t was created."""
        home = getattr(t, "_home", None)
        if home is None:
            return 0
        for k, r in enumerate(self._stack):
            if r is home:
                return k + 1
        return len(self._stack)

    def _carry(self, t):
        """Makes t carried by each open region between its home and here."""
        depth = self._home_depth(t)
        first = next((k for k in range(depth, len(self._stack))
                      if t not in self._stack[k].carried), None)
        if first is None:
            return
        if t._vid is None:
            # A tensor created before the body and first written in it:
            # it starts as zeros where it was created (a loop may run 0 times).
            home = self._stack[first - 1] if first > 0 else None
            self._target = (home,)
            try:
                zeros = self.add_full(tuple(t._shape), t.dtype, 0.0, "pypto.zeros")
            finally:
                self._target = None
            t._vid = zeros._vid
        orig = cur = t._vid
        for r in self._stack[first:]:
            arg = self.new_value(t.dtype, t._shape, t.name or self.value_name(orig), region=r,
                                 static=t._static)
            r.carried[t] = [cur, arg]
            for entry in r.reads:
                if entry[2] is t and entry[3] == orig:
                    entry[0].inputs[entry[1]] = arg
                    entry[3] = arg
            cur = arg
        t._vid = cur

    def open_region(self, what):
        """Starts recording a body (control_flow.py); returns the Region."""
        self.check_failed()
        r = Region(what, frames.user_frame())
        self._stack.append(r)
        return r

    def close_region(self, r):
        """Ends body r: remembers each carried tensor's value at its end and
        rebinds the tensor to its value before (for the next branch)."""
        if not self._stack or self._stack[-1] is not r:
            raise TraceError(f"{r.describe()}: regions closed out of order")
        self._stack.pop()
        r.closed = True
        for t, (before, _) in r.carried.items():
            r.end[t] = t._vid
            t._vid = before
        parent = self.current_region()
        if parent is not None:
            parent.reads.extend(r.reads)

    def _reads_of_inputs(self, kind, regions, tensors):
        """A body may not read a carried input directly (it reads the arg),
        but another tensor (an alias of the same value, a branch that does not
        write the tensor) may have read it. In an if the arg is the input, so
        such reads read the arg; in a loop the arg changes per iteration, so
        they read a copy of the input taken before the loop."""
        copies = {}
        for r in regions:
            by_input = {r.carried[t][0]: r.carried[t][1] for t in tensors}
            for entry in r.reads:
                vid = entry[3]
                if vid not in by_input:
                    continue
                if kind == "if":
                    new = by_input[vid]
                else:
                    new = copies.get(vid)
                    if new is None:
                        new = copies[vid] = self._copy_value(vid)
                entry[0].inputs[entry[1]] = new
                entry[3] = new

    def _copy_value(self, vid):
        """Records a copy of value `vid` in the current scope; its id."""
        name, dtype, shape = self._values[vid]
        out = self.new_value(dtype, shape, name, static=self._static.get(vid))
        op = graph_pb2.Op(kind="copy", inputs=[vid], outputs=[out])
        op.vec_tile.dims.extend(min(int(d), 64) for d in shape)
        self.where[out] = frames.user_frame()
        self.append_op(op)
        return out

    def add_control_op(self, kind, regions, attrs, name):
        """Records control op `kind` over closed `regions`: its inputs and
        outputs are the tensors any region carries (a region that does not
        write one passes its arg through); each is rebound to its output."""
        tensors = []
        for r in regions:
            tensors.extend(t for t in r.carried if t not in tensors)
        inputs = []
        for t in tensors:
            before = next(r.carried[t][0] for r in regions if t in r.carried)
            for r in regions:
                if t not in r.carried:
                    arg = self.new_value(t.dtype, t._shape, t.name, region=r,
                                         static=t._static)
                    r.carried[t] = [before, arg]
                    r.end[t] = arg
            inputs.append(before)
        self._reads_of_inputs(kind, regions, tensors)
        op = graph_pb2.Op(kind=kind, name=clip_name(name or ""))
        op.inputs.extend(inputs)
        set_attrs(op, attrs)
        outputs = []
        for t in tensors:
            out = self.new_value(t.dtype, t._shape,
                                 t.name or self.value_name(inputs[len(outputs)]),
                                 static=t._static)
            outputs.append(out)
            self.where[out] = regions[0].where
        op.outputs.extend(outputs)
        self._control[id(op)] = [(r, [r.carried[t][1] for t in tensors],
                                  [r.end[t] for t in tensors]) for r in regions]
        parent = self.current_region()
        for t, before in zip(tensors, inputs):
            t._vid = before
            self.note_read(t)
        self.log_reads(op, tensors)
        self.append_op(op)
        for t, out in zip(tensors, outputs):
            if parent is None and t._param is not None:
                self._bind_param(t, out)
            else:
                t._vid = out
        return op

    # Result -----------------------------------------------------------------

    def finish(self, local_names=None):
        """Builds the Graph proto (roles, dead-op removal, value names)."""
        for obj_name, t in (local_names or {}).items():
            if t._builder is self and t._vid is not None and not self._values[t._vid][0]:
                self._values[t._vid][0] = obj_name
        self.check_failed()
        if self._stack:
            raise TraceError(f"{self._stack[-1].describe()} was not closed")
        if not any(p.written for p in self._params):
            raise TraceError(
                f"kernel '{self.name}' writes no output: kernels return nothing, so "
                f"write results into an argument with out[:] = expr or out.move(expr)")
        g = graph_pb2.Graph(schema_version=graph_pb2.SCHEMA_VERSION_1,
                            name=clip_name(self.name))
        # A parameter's data is its whole shape: a partly valid value bound to
        # one (out[:] = v where v's valid region is out's shape) is that region.
        whole = {p.initial for p in self._params} | {p.final for p in self._params}
        needed = set()
        for p in self._params:
            needed.add(p.initial)
            if p.written:
                needed.add(p.final)
        kept = self._live(self._ops, needed)
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
        self._serialize(kept, used)
        for p in g.params:
            used.add(p.value_id)
            if p.role == graph_pb2.PARAM_ROLE_INOUT:
                used.add(p.result_value_id)
        self._add_values(g, used, whole)
        g.ops.extend(kept)
        return g

    def probe_graph(self, probes):
        """A Graph of this (region-free) builder's ops that reads every
        parameter's incoming data and returns each value of `probes` as an
        output parameter probe0, probe1, ... (verify_probe.py)."""
        g = graph_pb2.Graph(schema_version=graph_pb2.SCHEMA_VERSION_1,
                            name=clip_name(self.name))
        inputs = [p.initial for p in self._params]
        kept = self._live(self._ops, set(probes) | set(inputs))
        for p in self._params:
            g.params.add(name=clip_name(p.name), role=graph_pb2.PARAM_ROLE_IN,
                         value_id=p.initial)
        for k, vid in enumerate(probes):
            g.params.add(name=f"probe{k}", role=graph_pb2.PARAM_ROLE_OUT, value_id=vid)
        used = set(inputs) | set(probes)
        self._serialize(kept, used)
        self._add_values(g, used, set(inputs))
        g.ops.extend(kept)
        return g

    def _add_values(self, g, used, whole):
        """Adds the values `used` to Graph `g`: a value in `whole` as its
        valid shape, any other with its static shape and valid shape."""
        for vid in sorted(used):
            name, dtype, shape = self._values[vid]
            v = g.values.add(id=vid, name=clip_name(name), dtype=dtype)
            static = None if vid in whole else self._static.get(vid)
            for d in (shape if static is None else static):
                write_dim(v.shape.dims.add(), d, self.symbols)
            if static is not None:  # ops compute on the valid region
                g.schema_version = max(g.schema_version, graph_pb2.SCHEMA_VERSION_2)
                for d in shape:
                    write_dim(v.valid_shape.dims.add(), d, self.symbols)
            if dtype in dtypes.FP8_TYPES:  # the FP8 dtypes are version 3's
                g.schema_version = graph_pb2.SCHEMA_VERSION_3

    def _live(self, ops, needed):
        """The ops of `ops` whose outputs are in `needed` (updated with what
        they read, captures of their bodies included), in program order; a
        kept control op's bodies are pruned the same way."""
        kept = []
        for op in reversed(ops):
            if not any(o in needed for o in op.outputs):
                continue
            kept.append(op)
            needed.update(op.inputs)
            for r, _, results in self._control.get(id(op), ()):
                inner = set(results)
                r.kept = self._live(r.ops, inner)
                needed.update(inner)
        kept.reverse()
        return kept

    def _serialize(self, ops, used):
        """Fills each kept control op's regions (bodies first, so nested
        ones are complete when copied); names ops; collects used value ids."""
        for op in ops:
            used.update(op.inputs)
            used.update(op.outputs)
            if op.outputs and not op.name:
                op.name = clip_name(self._values[op.outputs[0]][0])
            for r, args, results in self._control.get(id(op), ()):
                self._serialize(r.kept, used)
                used.update(args)
                used.update(results)
                region = op.regions.add()
                region.args.extend(args)
                region.ops.extend(r.kept)
                region.results.extend(results)


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
            tile = list(ops[writer].vec_tile.dims)
            if len(tile) != len(shape):  # the writer is a loop or if: no tile
                tile = [min(int(d), 64) for d in shape]
            copy.vec_tile.dims.extend(tile)
            for op in late:
                inputs = [snap if i == p.initial else i for i in op.inputs]
                del op.inputs[:]
                op.inputs.extend(inputs)
            ops = [copy] + ops
        return ops


def set_attrs(op, attrs):
    """Writes attrs {name: value} into op.attrs: a DataType, a list of ints
    (exprs when one is symbolic), a bool, an int (expr when symbolic), a str
    or a float."""
    for key, value in (attrs or {}).items():
        a = op.attrs[key]
        if isinstance(value, dtypes.DataType):
            a.dtype = int(value)
        elif isinstance(value, (list, tuple)):
            if any(symbolic.is_symbolic(v) for v in value):
                for v in value:
                    symbolic.to_dim_expr(v, a.exprs.values.add())
            else:
                a.ints.SetInParent()  # set even when empty (a rank-0 shape)
                a.ints.values.extend(int(v) for v in value)
        elif isinstance(value, bool):
            a.b = value
        elif symbolic.is_symbolic(value):
            symbolic.to_dim_expr(value, a.expr)
        elif isinstance(value, int):
            a.i = int(value)
        elif isinstance(value, str):
            a.s = value
        else:
            a.f = float(value)


def write_dim(dim, d, sentinels=None):
    """Writes a value's dim into pto.v1.Dim `dim`: a size, a symbol, or an
    expression (a dim of a view in a loop body: min(64, n - i*64))."""
    name = symbolic.symbol_of(d)
    if name is not None:
        dim.symbol = name
    elif symbolic.is_symbolic(d):
        symbolic.to_dim_expr(d, dim.expr)
    elif sentinels and d in sentinels:
        dim.symbol = sentinels[d]
    else:
        dim.size = int(d)


@contextlib.contextmanager
def recording(builder):
    """Ops run in the scope record into `builder`: it is the current
    builder, its symbols resolve by name, and tile shapes set in the scope
    end with it (in this thread only)."""
    global _current
    saved = _current
    _current = builder
    try:
        with symbolic.symbols_in_scope(builder.symbol_values), tiling.trace_scope():
            yield builder
    finally:
        _current = saved


def trace(fn, name, params, builder=None):
    """Runs `fn` on proxies for `params` [(arg name, dtype, shape, value name)
    or ScalarArg].

    Returns the Graph. Tile shapes set inside `fn` are undone afterwards.
    `builder`: the GraphBuilder to record into (its `where` then maps value
    ids to user source lines).
    """
    builder = builder or GraphBuilder(name)
    proxies = [p.value if isinstance(p, ScalarArg) else builder.add_param(*p) for p in params]
    locals_at_return = {}
    code = getattr(fn, "__code__", None)
    previous_profile = sys.getprofile()

    def profile(frame, event, arg):
        # Captures the kernel's local variable names for debug names.
        if event == "return" and frame.f_code is code:
            locals_at_return.update(
                {k: v for k, v in frame.f_locals.items() if isinstance(v, _value_type)})

    sys.setprofile(profile)
    try:
        with recording(builder):
            result = fn(*proxies)
    finally:
        sys.setprofile(previous_profile)
    if result is not None:
        raise TraceError(
            f"kernel '{name}' returned {type(result).__name__}: kernels return nothing; "
            f"write results into an argument with out[:] = expr")
    # Parameter names come from the signature, not from locals.
    arg_names = {p.name if isinstance(p, ScalarArg) else p[0] for p in params}
    return builder.finish({k: v for k, v in locals_at_return.items() if k not in arg_names})
