"""pypto.loop, pypto.cond, SymbolicScalar: the graphs the
front end emits (graph.proto "Region"; docs/architecture.md "Loops and
branches"), their errors, and end-to-end runs against torch where the
compiler supports them."""

import re

import numpy as np
import pytest
import torch

import pypto
from pypto import symbolic
from pypto._proto import graph_pb2

F32 = pypto.DT_FP32
_OPS = {1: "+", 2: "-", 3: "*", 4: "//", 5: "%", 6: "min", 7: "max", 8: "==", 9: "!=",
        10: "<", 11: "<=", 12: ">", 13: ">=", 14: "and", 15: "or"}


def expr_text(e):
    kind = e.WhichOneof("kind")
    if kind == "constant":
        return str(e.constant)
    if kind == "symbol":
        return e.symbol
    op = _OPS[e.binary.op]
    lhs, rhs = expr_text(e.binary.lhs), expr_text(e.binary.rhs)
    return f"{op}({lhs}, {rhs})" if op in ("min", "max") else f"({lhs} {op} {rhs})"


def dims(graph, vid, field="shape"):
    """A value's dims as ints, symbol names or expression texts (`field`:
    "shape", its static shape, or "valid_shape")."""
    v = next(v for v in graph.values if v.id == vid)
    out = []
    for d in getattr(v, field).dims:
        kind = d.WhichOneof("kind")
        out.append(d.size if kind == "size" else d.symbol if kind == "symbol"
                   else expr_text(d.expr))
    return out


def attr(op, name):
    a = op.attrs[name]
    kind = a.WhichOneof("value")
    if kind == "ints":
        return list(a.ints.values)
    if kind == "exprs":
        return [expr_text(e) for e in a.exprs.values]
    if kind == "expr":
        return expr_text(a.expr)
    return getattr(a, kind)


def verified(graph):
    """graph, after the compiler's verifier accepted it (its cache key
    verifies), when the native extension is built."""
    try:
        from pypto import _native
    except ImportError:
        import os
        if os.environ.get("PYPTO_REQUIRE_NATIVE") == "1":
            raise
        return graph
    _native.cache_key(graph.SerializeToString(), "host", {})
    return graph


def kinds(ops):
    return [op.kind for op in ops]


def arr(*shape):
    return np.zeros(shape, np.float32)


def softmax_kernel():
    # PyPTO's loop softmax example, unchanged.
    @pypto.frontend.jit
    def softmax_kernel(inp: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32),
                       out: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32)):
        bs, seqlen, head, dim = inp.shape
        pypto.set_vec_tile_shapes(1, 4, 1, 64)
        for idx in pypto.loop(0, bs, 1, name="LOOP_B", idx_name="idx"):
            x = inp[idx:idx + 1, :seqlen, :head, :dim]
            m = pypto.amax(x, dim=-1, keepdim=True)
            e = pypto.exp(x - m)
            out[idx:, ...] = e / pypto.sum(e, dim=-1, keepdim=True)
    return softmax_kernel


# SymbolicScalar ---------------------------------------------------------------

def test_symbolic_scalar_arithmetic_builds_canonical_expressions():
    n, i = symbolic.symbol("n", 1000003), symbolic.symbol("i", 0)
    assert (i + 1) - i == 1 and type((i + 1) - i) is int  # folds to a plain int
    assert repr(n - i * 64) == "-i*64 + n"
    assert repr((64 * i + n) // 64) == "(n // 64) + i"  # (64a + b)//64 = a + b//64
    assert repr((64 * i + n) % 64) == "(n % 64)"
    assert repr((n - i * 64).min(64)) == repr(pypto.min(64, n - i * 64))
    assert int(n * 2 - 3) == 2 * 1000003 - 3  # the trace value follows along
    e = graph_pb2.DimExpr()
    symbolic.to_dim_expr(pypto.min(64, n - i * 64), e)
    assert expr_text(e) == "min(((i * -64) + n), 64)"
    with pytest.raises(TypeError, match="symbolic scalars are integers; use //"):
        n / 2
    with pytest.raises(TypeError, match="a float operand"):
        n * 1.5


def test_comparisons_give_conditions_that_only_pypto_cond_may_test():
    n, i = symbolic.symbol("n", 1000003), symbolic.symbol("i", 0)
    c = (i < n) & (n > 5)
    assert isinstance(c, pypto.SymbolicCondition)
    assert repr(c) == "(i < n) and (n > 5)"
    assert (i + 1 > i) is True  # decided by the expressions: a plain bool
    assert n == n and not (n != n)
    with pytest.raises(TypeError, match=r"known only at run time.*pypto\.cond\(i < n\)"):
        if i < n:
            pass
    with pytest.raises(TypeError, match=r"a\.min\(b\)"):
        min(n, i)  # Python's min compares: use pypto.min
    # pypto's own shape checks still compare the trace values (broadcasting
    # over a dynamic dim keeps working: test_dynamic).
    assert pypto.ops.broadcast_shapes("t", [("a", (n, 4)), ("b", (1, 4))]) == (n, 4)


def test_symbolic_scalar_by_name_is_a_dynamic_dim():
    seen = {}

    @pypto.jit
    def k(x: pypto.Tensor(["rows", 8], F32), out: pypto.Tensor(["rows", 8], F32)):
        pypto.set_vec_tile_shapes(2, 8)
        n = pypto.symbolic_scalar("rows")
        seen["n"], seen["same"] = repr(n), symbolic.same(n, x.shape[0])
        seen["five"] = pypto.symbolic_scalar(5)
        seen["ctor"] = repr(pypto.SymbolicScalar("rows") * 2)
        out[:] = x + 1

    k.trace(arr(3, 8), arr(3, 8))
    assert seen == {"n": "rows", "same": True, "five": 5, "ctor": "rows*2"}

    @pypto.jit
    def bad(x: pypto.Tensor(["rows", 8], F32), out: pypto.Tensor(["rows", 8], F32)):
        pypto.set_vec_tile_shapes(2, 8)
        pypto.symbolic_scalar("cols")
        out[:] = x

    with pytest.raises(ValueError, match=r"test_loops.py:\d+: pypto.symbolic_scalar\('cols'\): "
                                         r"no dynamic dim.*symbols here: rows"):
        bad.trace(arr(3, 8), arr(3, 8))


# pypto.loop -------------------------------------------------------------------

def test_softmax_example_is_one_loop_over_the_batch():
    g = verified(softmax_kernel().trace(arr(3, 32, 1, 256), arr(3, 32, 1, 256)))
    assert kinds(g.ops) == ["loop"]
    loop = g.ops[0]
    assert loop.name == "LOOP_B"
    assert (attr(loop, "index"), attr(loop, "start"), attr(loop, "stop"),
            attr(loop, "step")) == ("idx", 0, "inp_d0", 1)
    out = g.params[1]
    assert out.role == graph_pb2.PARAM_ROLE_INOUT  # rows not written keep their data
    assert list(loop.inputs) == [out.value_id] and list(loop.outputs) == [out.result_value_id]
    (body,) = loop.regions
    assert kinds(body.ops) == ["view", "amax", "sub", "exp", "sum", "div", "assemble"]
    view, asm = body.ops[0], body.ops[-1]
    assert attr(view, "offsets") == ["idx", "0", "0", "0"]
    assert attr(view, "shape") == [1, 32, 1, 256]  # static: plain ints
    assert dims(g, view.outputs[0]) == [1, 32, 1, 256]
    # The body assembles into its arg (the carried out), and yields the result.
    assert list(asm.inputs)[1] == body.args[0]
    assert attr(asm, "offsets") == ["idx", "0", "0", "0"]
    assert list(body.results) == list(asm.outputs)
    assert dims(g, body.args[0]) == ["inp_d0", 32, 1, 256]


def test_running_sum_reads_the_carried_value():
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), out: pypto.Tensor([1, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        acc = pypto.tensor([1, 64], F32, "acc")
        acc[:] = pypto.zeros([1, 64], F32)
        for i in pypto.loop(x.shape[0]):
            acc[:] = acc + x[i:i + 1, :]
        out[:] = acc

    g = verified(k.trace(arr(5, 64), arr(1, 64)))
    assert kinds(g.ops) == ["full", "loop"]
    full, loop = g.ops
    assert list(loop.inputs) == list(full.outputs)
    (body,) = loop.regions
    assert kinds(body.ops) == ["view", "add"]
    add = body.ops[1]
    # acc was read before it was written in the body: the read is the arg.
    assert add.inputs[0] == body.args[0]
    assert list(body.results) == list(add.outputs)
    # out[:] = acc after the loop: the loop writes out directly.
    assert g.params[1].role == graph_pb2.PARAM_ROLE_OUT
    assert g.params[1].value_id == loop.outputs[0]


def test_nested_loops_over_two_dynamic_dims_with_a_tail():
    @pypto.jit
    def k(x: pypto.Tensor(["m", "n"], F32), out: pypto.Tensor(["m", "n"], F32)):
        m, n = x.shape
        for i in pypto.loop(0, (m + 63) // 64, name="rows", idx_name="i"):
            for j in pypto.loop(0, (n + 63) // 64, name="cols", idx_name="j"):
                pypto.set_vec_tile_shapes(64, 64)
                rows, cols = pypto.min(64, m - i * 64), pypto.min(64, n - j * 64)
                t = x[i * 64:i * 64 + rows, j * 64:j * 64 + cols]
                out[i * 64:, j * 64:] = t * 2

    g = verified(k.trace(arr(100, 70), arr(100, 70)))
    (outer,) = g.ops
    assert attr(outer, "stop") == "((m + 63) // 64)"
    (inner,) = [op for op in outer.regions[0].ops if op.kind == "loop"]
    assert attr(inner, "index") == "j"
    view = inner.regions[0].ops[0]
    assert view.kind == "view"
    assert attr(view, "offsets") == ["(i * 64)", "(j * 64)"]
    shape = attr(view, "shape")
    assert all("min" in s for s in shape), shape
    assert dims(g, view.outputs[0]) == shape
    # out is carried by both loops: the inner body assembles into its own arg,
    # and the outer body's result is the inner loop's output.
    asm = inner.regions[0].ops[-1]
    assert asm.kind == "assemble" and asm.inputs[1] == inner.regions[0].args[0]
    assert list(inner.inputs) == list(outer.regions[0].args)
    assert list(outer.regions[0].results) == list(inner.outputs)


def test_view_valid_shape_is_the_tail_form():
    @pypto.jit
    def k(x: pypto.Tensor(["n", 64], F32), out: pypto.Tensor(["n", 64], F32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop((n + 15) // 16, idx_name="i"):
            t = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[(n - i * 16).min(16), 64])
            pypto.assemble(t + 1, [i * 16, 0], out)

    g = verified(k.trace(arr(40, 64), arr(40, 64)))
    view, add, asm = g.ops[0].regions[0].ops
    assert attr(view, "shape") == ["min(((i * -16) + n), 16)", "64"]
    # The graph keeps the static shape and carries the valid region beside it.
    assert dims(g, add.outputs[0]) == [16, 64]
    assert dims(g, add.outputs[0], "valid_shape") == ["min(((i * -16) + n), 16)", 64]
    assert g.schema_version == graph_pb2.SCHEMA_VERSION_2
    assert attr(asm, "offsets") == ["(i * 16)", "0"]


def test_loop_unroll_is_one_loop_per_chunk_size():
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), out: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        for i, u in pypto.loop_unroll(0, x.shape[0], 1, name="B", idx_name="b",
                                      unroll_list=[8, 2]):
            pypto.set_vec_tile_shapes(u, 64)
            out[i:, :] = pypto.exp(x[i:i + u, :])

    g = verified(k.trace(arr(11, 64), arr(11, 64)))
    assert kinds(g.ops) == ["loop", "loop", "loop"]
    assert [attr(op, "unroll") for op in g.ops] == [8, 2, 1]
    assert [attr(op, "step") for op in g.ops] == [8, 2, 1]
    assert attr(g.ops[0], "stop") == "((x_d0 // 8) * 8)"
    assert [attr(op, "index") for op in g.ops] == ["b", "b_2", "b_3"]
    # Each loop starts where the previous one stopped, and carries out on.
    assert attr(g.ops[1], "start") == attr(g.ops[0], "stop")
    assert list(g.ops[1].inputs) == list(g.ops[0].outputs)
    assert [dims(g, op.regions[0].ops[0].outputs[0]) for op in g.ops] == [
        [8, 64], [2, 64], [1, 64]]


def test_loop_with_static_bounds_is_still_a_loop_and_may_have_zero_trips():
    @pypto.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        out[:] = x
        for i in pypto.loop(3, 3):
            out[i:i + 1, :] = x[i:i + 1, :] * 2

    g = verified(k.trace(arr(4, 8), arr(4, 8)))
    loop = next(op for op in g.ops if op.kind == "loop")
    assert (attr(loop, "start"), attr(loop, "stop")) == (3, 3)


def test_if_on_a_symbolic_comparison_traces_both_branches():
    calls = []

    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), out: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        n = x.shape[0]
        if pypto.cond(n > 100 and n % 2 == 0):
            calls.append("then")
            out[:] = pypto.exp(x)
        else:
            calls.append("else")
            out[:] = x * 2

    g = verified(k.trace(arr(5, 64), arr(5, 64)))
    # Once each per trace (a kernel with dynamic dims is traced a second
    # time at other placeholder sizes: trace_compare.py).
    assert calls == ["then", "else"] * (1 + pypto.compile_stats()["check_traces"])
    (op,) = g.ops
    assert op.kind == "if"
    assert attr(op, "cond") == "((x_d0 > 100) and ((x_d0 % 2) == 0))"
    then, other = op.regions
    assert kinds(then.ops) == ["exp"] and kinds(other.ops) == ["muls"]
    assert list(then.results) == list(then.ops[0].outputs)
    assert list(other.results) == list(other.ops[0].outputs)
    out = g.params[1]
    assert list(op.inputs) == [out.value_id] and list(op.outputs) == [out.result_value_id]


def test_a_branch_that_does_not_write_passes_its_arg_through():
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), out: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        out[:] = x
        for i in pypto.loop(x.shape[0], idx_name="i"):
            if pypto.cond(i % 2 == 0):
                out[i:, :] = x[i:i + 1, :] * 3
            elif pypto.cond(i == 1):
                out[i:, :] = x[i:i + 1, :] + 1

    g = verified(k.trace(arr(5, 64), arr(5, 64)))
    loop = next(op for op in g.ops if op.kind == "loop")
    (outer_if,) = [op for op in loop.regions[0].ops if op.kind == "if"]
    assert attr(outer_if, "cond") == "((i % 2) == 0)"
    then, other = outer_if.regions
    (inner_if,) = [op for op in other.ops if op.kind == "if"]
    assert attr(inner_if, "cond") == "(i == 1)"
    passthrough = inner_if.regions[1]
    assert list(passthrough.results) == list(passthrough.args) and not passthrough.ops


def test_cond_with_a_constant_traces_the_branch_taken(tmp_path):
    @pypto.jit
    def k(x: pypto.Tensor([4, 64], F32), out: pypto.Tensor([4, 64], F32), flag: bool):
        pypto.set_vec_tile_shapes(4, 64)
        if pypto.cond(flag):
            out[:] = pypto.exp(x)
        else:
            out[:] = x * 2

    assert kinds(verified(k.trace(arr(4, 64), arr(4, 64), True)).ops) == ["exp"]
    assert kinds(verified(k.trace(arr(4, 64), arr(4, 64), False)).ops) == ["muls"]


def test_closures_and_globals_work_in_rewritten_kernels():
    scale = 3.0

    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), out: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        if pypto.cond(x.shape[0] > 1):
            out[:] = x * scale
        else:
            out[:] = _helper(x)

    g = verified(k.trace(arr(5, 64), arr(5, 64)))
    then, other = g.ops[0].regions
    assert then.ops[0].attrs["scalar"].f == 3.0
    assert kinds(other.ops) == ["exp"]


def _helper(x):
    return pypto.exp(x)


# Errors -----------------------------------------------------------------------

def _trace_error(kernel_body, exc, match, shape=(5, 64)):
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), out: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        kernel_body(x, out)

    with pytest.raises(exc, match=match):
        k.trace(arr(*shape), arr(*shape))


def test_loop_bound_errors_name_the_line():
    _trace_error(lambda x, out: [None for _ in pypto.loop(0, 2.5)], TypeError,
                 r"test_loops.py:\d+: pypto.loop: stop must be an int or a symbolic scalar.*"
                 r"float 2.5")
    _trace_error(lambda x, out: [None for _ in pypto.loop(0, 4, 0)], ValueError,
                 r"test_loops.py:\d+: pypto.loop: step must not be zero")
    _trace_error(lambda x, out: [None for _ in pypto.loop(0, x)], TypeError,
                 r"pypto.loop: stop is a tensor")
    _trace_error(lambda x, out: [None for _ in pypto.loop(0, 4, x.shape[0])], TypeError,
                 r"step must be a constant int")
    _trace_error(lambda x, out: [None for _ in pypto.loop(0, True)], TypeError,
                 r"stop must be an int")


def test_a_value_made_in_a_body_is_dead_after_it():
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), out: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(x.shape[0], name="L"):
            y = x[i:i + 1, :] * 2
        out[0:1, :] = y

    with pytest.raises(ValueError, match=r"test_loops.py:\d+: .*tensor 'y' was made in the body "
                                         r"of pypto.loop 'L' at .*test_loops.py:\d+ and is used "
                                         r"after it.*created before the loop"):
        k.trace(arr(5, 64), arr(5, 64))


def test_break_in_a_loop_body_is_an_error():
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), out: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(x.shape[0]):
            out[i:, :] = x[i:i + 1, :]
            break
        out[0:1, :] = x[0:1, :]

    with pytest.raises(ValueError, match=r"the body was left before its end \(break"):
        k.trace(arr(5, 64), arr(5, 64))


def test_cond_errors():
    _trace_error(lambda x, out: pypto.cond(x), TypeError,
                 r"pypto.cond: the condition is a tensor.*pypto.where")

    def uses_bool(x, out):
        while x.shape[0] > 3:  # a while loop is not rewritten: a TypeError naming it
            out[:] = x

    _trace_error(uses_bool, pypto.error.FeError,
                 r"test_loops.py:\d+: ErrCode: F00001, TypeError: the condition x_d0 > 3 is "
                 r"known only at run time: branch on it with `if pypto.cond")

    def cond_outside_if(x, out):  # pypto.cond as a plain value, not an if's test
        return bool(pypto.cond(x.shape[0] > 3))

    _trace_error(cond_outside_if, TypeError, r"was not rewritten")

    @pypto.jit
    def returns_in_branch(x: pypto.Tensor([pypto.DYNAMIC, 64], F32),
                          out: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        if pypto.cond(x.shape[0] > 3):
            out[:] = x
            return

    with pytest.raises(ValueError, match=r"test_loops.py:\d+: `return` inside a branch of "
                                         r"`if pypto.cond"):
        returns_in_branch.trace(arr(5, 64), arr(5, 64))


def test_kernel_without_source_gets_a_clear_error():
    namespace = {"pypto": pypto}
    exec("def k(x, out):\n"
         "    pypto.set_vec_tile_shapes(1, 64)\n"
         "    if pypto.cond(x.shape[0] > 3):\n"
         "        out[:] = x\n", namespace)
    k = pypto.jit(namespace["k"])
    x = pypto.from_torch(torch.zeros(5, 64), dynamic_axis=0)
    with pytest.raises(TypeError, match=r"source is not available"):
        k.trace(x, pypto.from_torch(torch.zeros(5, 64), dynamic_axis=0))


def test_index_out_of_scope_is_an_error():
    def body(x, out):
        for i in pypto.loop(x.shape[0], idx_name="i"):
            out[i:, :] = x[i:i + 1, :]
        for j in pypto.loop(0, i + 1):
            out[j:, :] = x[j:j + 1, :]

    _trace_error(body, ValueError, r"pypto.loop: stop i \+ 1 uses i, which is not bound here")


# End to end ------------------------------------------------------------------

def _normalize_rows(t, gamma):
    """Layer norm of t over its last dim (64), as the loop bodies below write it."""
    mean = pypto.sum(t, -1, keepdim=True) / 64
    d = t - mean
    var = pypto.sum(d * d, -1, keepdim=True) / 64
    return d / pypto.sqrt(var + 1e-5) * gamma


def _check_layer_norm(layer_norm, shapes):
    """Runs layer_norm at each shape vs torch; one trace and one compile."""
    gamma = torch.rand(64) + 0.5
    for shape in shapes:
        x = torch.randn(*shape)
        out = torch.empty_like(x)
        layer_norm(x, gamma, out)
        want = torch.nn.functional.layer_norm(x, (64,), gamma, eps=1e-5)
        torch.testing.assert_close(out, want, rtol=1e-4, atol=1e-4)
    assert_one_compile()


def assert_one_compile():
    stats = pypto.compile_stats()
    assert stats["compiles"] == 1 and stats["traces"] == 1, stats


def test_softmax_example_one_compile_for_every_batch(native):
    k = softmax_kernel()
    for bs in (1, 7, 64, 1000):
        x = torch.randn(bs, 32, 1, 256)
        out = torch.empty_like(x)
        k(x, out)
        torch.testing.assert_close(out, torch.softmax(x, -1), rtol=1e-5, atol=1e-6)
    assert_one_compile()


def test_running_sum_end_to_end(native):
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), out: pypto.Tensor([1, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        out[:] = pypto.zeros([1, 64], F32)
        for i in pypto.loop(x.shape[0]):
            out[:] = out + x[i:i + 1, :]

    for rows in (1, 9):
        x = torch.randn(rows, 64)
        out = torch.empty(1, 64)
        k(x, out)
        torch.testing.assert_close(out, x.sum(0, keepdim=True), rtol=1e-5, atol=1e-5)


def test_zero_trip_loop_keeps_the_output(native):
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), out: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(1, x.shape[0]):
            out[i:, :] = x[i:i + 1, :] * 2

    x = torch.randn(1, 64)
    out = torch.full((1, 64), 7.0)
    k(x, out)
    assert torch.equal(out, torch.full((1, 64), 7.0))


def test_cond_picks_a_computation_end_to_end(native):
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), out: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        if pypto.cond(x.shape[0] > 4):
            out[:] = pypto.exp(x)
        else:
            out[:] = x * 2

    for rows in (3, 8):
        x = torch.randn(rows, 64)
        out = torch.empty_like(x)
        k(x, out)
        torch.testing.assert_close(out, x.exp() if rows > 4 else x * 2)


def test_layer_norm_over_a_dynamic_sequence_length_row_by_row(native):
    @pypto.jit
    def layer_norm(x: pypto.Tensor(["seq", 64], F32), gamma: pypto.Tensor([64], F32),
                   out: pypto.Tensor(["seq", 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        for s in pypto.loop(x.shape[0], name="S", idx_name="s"):
            out[s:, :] = _normalize_rows(x[s:s + 1, :], gamma)

    _check_layer_norm(layer_norm, [(seq, 64) for seq in (1, 16, 37)])


def test_layer_norm_over_dynamic_sequence_chunks_with_a_tail(native):
    @pypto.jit
    def layer_norm(x: pypto.Tensor(["seq", 64], F32), gamma: pypto.Tensor([64], F32),
                   out: pypto.Tensor(["seq", 64], F32)):
        seq = x.shape[0]
        pypto.set_vec_tile_shapes(16, 64)
        for c in pypto.loop((seq + 15) // 16, name="S", idx_name="c"):
            t = x[c * 16:c * 16 + pypto.min(16, seq - c * 16), :]   # the last chunk: a tail
            out[c * 16:, :] = _normalize_rows(t, gamma)

    _check_layer_norm(layer_norm, [(seq, 64) for seq in (5, 16, 37)])


def test_nested_loops_over_a_dynamic_and_a_static_dim_with_tails(native):
    @pypto.jit
    def k(x: pypto.Tensor(["m", 40], F32), out: pypto.Tensor(["m", 40], F32)):
        m = x.shape[0]
        pypto.set_vec_tile_shapes(8, 16)
        for i in pypto.loop((m + 7) // 8, idx_name="i"):
            for j in pypto.loop(3, idx_name="j"):          # 16 + 16 + a tail of 8
                t = x[i * 8:i * 8 + pypto.min(8, m - i * 8),
                      j * 16:j * 16 + pypto.min(16, 40 - j * 16)]
                out[i * 8:, j * 16:] = pypto.exp(t) - 1

    for m in (8, 13, 1):
        x = torch.randn(m, 40)
        out = torch.empty_like(x)
        k(x, out)
        torch.testing.assert_close(out, x.exp() - 1)
    assert_one_compile()


def test_layer_norm_over_a_dynamic_inner_sequence_length(native):
    # x[batch, seq, hidden] with seq DYNAMIC (an inner dim): a loop over the
    # batch and over chunks of 16 positions, the last chunk a tail.
    @pypto.jit
    def layer_norm(x: pypto.Tensor([2, "seq", 64], F32), gamma: pypto.Tensor([64], F32),
                   out: pypto.Tensor([2, "seq", 64], F32)):
        seq = x.shape[1]
        pypto.set_vec_tile_shapes(1, 16, 64)
        for b in pypto.loop(2, name="B", idx_name="b"):
            for c in pypto.loop((seq + 15) // 16, name="S", idx_name="c"):
                rows = pypto.min(16, seq - c * 16)
                t = x[b:b + 1, c * 16:c * 16 + rows, :]
                out[b:, c * 16:, :] = _normalize_rows(t, gamma)

    _check_layer_norm(layer_norm, [(2, seq, 64) for seq in (5, 16, 37)])


def test_nested_loops_over_two_dynamic_dims_with_a_tail_end_to_end(native):
    @pypto.jit
    def k(x: pypto.Tensor(["m", "n"], F32), out: pypto.Tensor(["m", "n"], F32)):
        m, n = x.shape
        pypto.set_vec_tile_shapes(8, 16)
        for i in pypto.loop((m + 7) // 8, idx_name="i"):
            for j in pypto.loop((n + 15) // 16, idx_name="j"):
                t = x[i * 8:i * 8 + pypto.min(8, m - i * 8),
                      j * 16:j * 16 + pypto.min(16, n - j * 16)]
                out[i * 8:, j * 16:] = pypto.exp(t) - 1

    for m, n in ((8, 16), (13, 40), (1, 5)):
        x = torch.randn(m, n)
        out = torch.empty_like(x)
        k(x, out)
        torch.testing.assert_close(out, x.exp() - 1)
    assert_one_compile()


def test_reads_in_closed_inner_bodies_are_rewritten_when_the_outer_loop_carries():
    @pypto.jit
    def k(x: pypto.Tensor([4, 64], F32), out: pypto.Tensor([4, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        acc = pypto.tensor([1, 64], F32, "acc")
        acc[:] = pypto.exp(x[0:1, :])
        for i in pypto.loop(4, idx_name="i"):
            for j in pypto.loop(2, idx_name="j"):
                out[i:, :] = acc * 2          # read before the outer body writes acc
            t = acc * 3
            for j in pypto.loop(3, idx_name="j"):
                acc[:] = acc + t              # written in a nested body: carried by both

    g = verified(k.trace(arr(4, 64), arr(4, 64)))
    loop = next(op for op in g.ops if op.kind == "loop")
    body = loop.regions[0]
    out_arg, acc_arg = body.args
    first, muls, second = body.ops
    assert first.regions[0].ops[0].inputs[0] == acc_arg   # inner read: the outer arg
    assert muls.inputs[0] == acc_arg
    assert list(second.inputs) == [acc_arg]               # the inner loop carries it on
    inner = second.regions[0]
    assert inner.ops[0].inputs[0] == inner.args[0] and inner.ops[0].inputs[1] == muls.outputs[0]
    assert list(body.results) == [first.outputs[0], second.outputs[0]]


def test_pyptos_condition_pattern_rebinding_a_name_in_branches():
    # PyPTO's condition example: a name rebound in a branch flows out of the
    # if (merged like a carried tensor); is_loop_begin/is_loop_end; the
    # loop's unroll_list is a hint.
    @pypto.jit
    def k(A: pypto.Tensor([pypto.DYNAMIC, 64], F32), B: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(64, 64)
        for idx in pypto.loop(A.shape[0] // 64, unroll_list=[1, 4]):
            ATile = A[idx * 64:(idx + 1) * 64, :]
            if pypto.cond(pypto.is_loop_begin(idx)):
                ATile = ATile + 1
            elif pypto.cond(pypto.is_loop_end(idx)):
                ATile = ATile + 2
            B[idx * 64:, 0:] = ATile + 1

    g = verified(k.trace(arr(256, 64), arr(256, 64)))
    (loop,) = g.ops
    assert attr(loop, "unroll") == 4 and attr(loop, "step") == 1
    view, clone, first, adds, asm = loop.regions[0].ops
    assert (first.kind, attr(first, "cond")) == ("if", "(i == 0)")
    # ATile before the if, a view, is carried as a copy (updated in place).
    assert clone.kind == "clone" and list(clone.inputs) == list(view.outputs)
    assert list(first.inputs) == list(clone.outputs)
    assert adds.inputs[0] == first.outputs[0]           # ATile after it
    then, other = first.regions
    assert then.ops[0].inputs[0] == view.outputs[0]     # the view itself, not the input
    clone2, second = other.ops          # the elif's own copy of the view
    assert clone2.kind == "clone" and list(second.inputs) == list(clone2.outputs)
    assert attr(second, "cond") == "((i + 1) >= (A_d0 // 64))"
    assert list(second.regions[1].results) == list(second.regions[1].args)


def test_floats_that_differ_between_cond_branches_are_chosen_at_run_time():
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), out: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        if pypto.cond(x.shape[0] > 2):
            scale = 2.0
        else:
            scale = 3.0
        out[:] = x * scale

    for n, s in ((5, 2.0), (2, 3.0)):
        x = np.arange(n * 64, dtype=np.float32).reshape(n, 64)
        out = np.zeros_like(x)
        k(x, out)
        np.testing.assert_array_equal(out, x * s)
    assert pypto.compile_stats()["compiles"] == 1


def test_an_alias_of_a_carried_value_reads_a_copy_taken_before_the_loop():
    @pypto.jit
    def k(x: pypto.Tensor([4, 64], F32), out: pypto.Tensor([1, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        z = pypto.exp(x[0:1, :])
        acc = pypto.tensor([1, 64], F32, "acc")
        acc[:] = z                       # acc and z share a value
        for i in pypto.loop(4):
            acc[:] = acc + z             # z is the value before the loop in every iteration
        out[:] = acc

    g = verified(k.trace(arr(4, 64), arr(1, 64)))
    view, exp, copy, loop = g.ops
    assert copy.kind == "copy" and list(copy.inputs) == list(exp.outputs)
    assert list(loop.inputs) == list(exp.outputs)
    (add,) = loop.regions[0].ops
    assert list(add.inputs) == [loop.regions[0].args[0], copy.outputs[0]]


def test_a_view_outside_its_tensor_at_launch_names_the_op_the_values_and_the_line(native):
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), out: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(x.shape[0] + 1):
            out[i:, :] = x[i:i + 1, :] * 2

    x, out = torch.randn(3, 64), torch.zeros(3, 64)
    try:
        k(x, out)
    except pypto.CompileError as e:
        if any(s in str(e) for s in _NOT_YET):
            pytest.xfail(f"compiler: {str(e).splitlines()[0][:200]}")
        raise
    except ValueError as e:
        message = str(e)
    else:
        pytest.fail("no error for a view past the end of x")
    assert '"view"' in message and "i=3" in message and "x_d0=3" in message, message
    assert re.search(r"was recorded at .*test_loops.py:\d+ \(in k\): out\[i:, :\] = "
                     r"x\[i:i \+ 1, :\] \* 2", message), message


def test_loop_unroll_end_to_end(native):
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), out: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        for i, u in pypto.loop_unroll(0, x.shape[0], 1, name="B", idx_name="b",
                                      unroll_list=[8, 2]):
            pypto.set_vec_tile_shapes(u, 64)
            out[i:, :] = pypto.exp(x[i:i + u, :]) * 2

    for rows in (1, 11, 16):  # 0/1/2 chunks of 8, then of 2, then single rows
        x = torch.randn(rows, 64)
        out = torch.empty_like(x)
        k(x, out)
        torch.testing.assert_close(out, x.exp() * 2)
    assert_one_compile()


def test_loop_index_names_do_not_enter_the_cache_key(native):
    def make(idx_name):
        @pypto.jit
        def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32),
              out: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
            pypto.set_vec_tile_shapes(1, 64)
            for i in pypto.loop(x.shape[0], idx_name=idx_name):
                out[i:, :] = x[i:i + 1, :] + 1
        return k

    first, second = make("row"), make("r")
    x = torch.randn(4, 64)
    out = torch.empty_like(x)
    first(x, out)
    second(torch.randn(9, 64), torch.empty(9, 64))   # another size, another name
    assert second.last_compile.source == "disk"        # the same binary: one compile
    assert second.last_compile.key == first.last_compile.key
    torch.testing.assert_close(out, x + 1)


# Matmul in loop bodies ----------------------------------------------------------

def test_matmul_over_a_view_per_iteration_one_compile_for_every_batch(native):
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8, 16], F32), w: pypto.Tensor([16, 12], F32),
          out: pypto.Tensor([pypto.DYNAMIC, 8, 12], F32)):
        pypto.set_cube_tile_shapes([16, 32], [16, 64], [16, 64])
        for i in pypto.loop(x.shape[0]):
            out[i:, :, :] = pypto.matmul(x[i:i + 1, :, :], w, F32)

    w = torch.randn(16, 12)
    for bs in (1, 5, 33):
        x = torch.randn(bs, 8, 16)
        out = torch.empty(bs, 8, 12)
        k(x, w, out)
        torch.testing.assert_close(out, x @ w, rtol=1e-5, atol=1e-5)
    assert_one_compile()


def test_matmul_over_row_chunks_with_a_tail_feeding_elementwise_ops(native):
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 32], F32), w: pypto.Tensor([32, 48], F32),
          out: pypto.Tensor([pypto.DYNAMIC, 48], F32)):
        n = x.shape[0]
        pypto.set_cube_tile_shapes([16, 32], [16, 64], [16, 64])
        pypto.set_vec_tile_shapes(16, 48)
        for c in pypto.loop(0, n, 16):
            rows = x[c:c + pypto.min(16, n - c), :]
            out[c:, :] = pypto.exp(pypto.matmul(rows, w, F32) * 0.1) + 1

    w = torch.randn(32, 48)
    for n in (5, 16, 37):
        x = torch.randn(n, 32)
        out = torch.empty(n, 48)
        k(x, w, out)
        torch.testing.assert_close(out, torch.exp(x @ w * 0.1) + 1, rtol=1e-5, atol=1e-5)
    assert_one_compile()


def test_carried_accumulation_of_matmuls(native):
    @pypto.jit
    def k(a: pypto.Tensor([pypto.DYNAMIC, 8, 16], F32), b: pypto.Tensor([pypto.DYNAMIC, 16, 12], F32),
          out: pypto.Tensor([1, 8, 12], F32)):
        pypto.set_cube_tile_shapes([16, 32], [16, 64], [16, 64])
        pypto.set_vec_tile_shapes(1, 8, 12)
        out[:] = pypto.zeros([1, 8, 12], F32)
        for i in pypto.loop(a.shape[0]):
            out[:] = out + pypto.matmul(a[i:i + 1, :, :], b[i:i + 1, :, :], F32)

    for bs in (1, 6):
        a, b = torch.randn(bs, 8, 16), torch.randn(bs, 16, 12)
        out = torch.empty(1, 8, 12)
        k(a, b, out)
        torch.testing.assert_close(out, (a @ b).sum(0, keepdim=True), rtol=1e-4, atol=1e-4)
    assert_one_compile()


def test_matmul_in_a_branch_on_the_loop_index(native):
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8, 16], F32), w: pypto.Tensor([16, 12], F32),
          out: pypto.Tensor([pypto.DYNAMIC, 8, 12], F32)):
        pypto.set_cube_tile_shapes([16, 32], [16, 64], [16, 64])
        pypto.set_vec_tile_shapes(1, 8, 12)
        for i in pypto.loop(x.shape[0]):
            if pypto.cond(i % 2 == 0):
                out[i:, :, :] = pypto.matmul(x[i:i + 1, :, :], w, F32)
            else:
                out[i:, :, :] = pypto.matmul(x[i:i + 1, :, :], w, F32) * -1

    w = torch.randn(16, 12)
    for bs in (1, 4):
        x = torch.randn(bs, 8, 16)
        out = torch.empty(bs, 8, 12)
        k(x, w, out)
        sign = torch.tensor([1.0 if i % 2 == 0 else -1.0 for i in range(bs)]).view(bs, 1, 1)
        torch.testing.assert_close(out, (x @ w) * sign, rtol=1e-5, atol=1e-5)
    assert_one_compile()


def test_a_view_at_an_inner_index_of_a_view_at_an_outer_index(native):
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), out: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(1, 16)
        for i in pypto.loop(x.shape[0]):
            row = x[i:i + 1, :]
            for j in pypto.loop(4):
                out[i:i + 1, j * 16:(j + 1) * 16] = row[:, j * 16:(j + 1) * 16] * 2

    for rows in (1, 5):
        x = torch.randn(rows, 64)
        out = torch.empty_like(x)
        k(x, out)
        torch.testing.assert_close(out, x * 2)
    assert_one_compile()


def test_split_k_with_a_tail_of_k_over_row_blocks_with_a_tail(native):
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 40], F32), w: pypto.Tensor([40, 12], F32),
          out: pypto.Tensor([pypto.DYNAMIC, 12], F32)):
        n = x.shape[0]
        pypto.set_cube_tile_shapes([16, 32], [16, 64], [16, 64])
        pypto.set_vec_tile_shapes(4, 12)
        for r in pypto.loop(0, n, 4):
            rows = pypto.min(4, n - r)
            for c in pypto.loop(0, 40, 16):
                kk = pypto.min(16, 40 - c)
                out[r:r + rows, :] = out[r:r + rows, :] + pypto.matmul(
                    x[r:r + rows, c:c + kk], w[c:c + kk, :], F32)

    w = torch.randn(40, 12)
    for n in (3, 8, 13):
        x = torch.randn(n, 40)
        out = torch.zeros(n, 12)
        k(x, w, out)
        torch.testing.assert_close(out, x @ w, rtol=1e-5, atol=1e-5)
    assert_one_compile()


def test_a_recurrence_through_matmul_carries_its_state(native):
    @pypto.jit
    def k(w: pypto.Tensor([pypto.DYNAMIC, 16, 16], F32), h: pypto.Tensor([1, 8, 16], F32)):
        pypto.set_cube_tile_shapes([16, 32], [16, 64], [16, 64])
        pypto.set_vec_tile_shapes(1, 8, 16)
        for i in pypto.loop(w.shape[0]):
            h[:] = pypto.tanh(pypto.matmul(h, w[i:i + 1, :, :], F32))

    for steps in (1, 3, 7):
        w = torch.randn(steps, 16, 16) * 0.3
        h0 = torch.randn(1, 8, 16)
        h = h0.clone()
        k(w, h)
        want = h0
        for i in range(steps):
            want = torch.tanh(want @ w[i:i + 1])
        torch.testing.assert_close(h, want, rtol=1e-5, atol=1e-5)
    assert_one_compile()


def test_a_reduction_over_a_tail_chunk_in_a_loop_body(native):
    # A softmax over each chunk of 24 columns of a DYNAMIC last dim; the last
    # chunk is a tail (min(24, n - c*24)), reduced in the accumulating form
    # (tiles of 16 along it fold in order, the tail padded with the identity).
    @pypto.jit
    def chunks(x: pypto.Tensor([4, "n"], F32), out: pypto.Tensor([4, "n"], F32)):
        n = x.shape[1]
        pypto.set_vec_tile_shapes(4, 16)
        for c in pypto.loop(0, (n + 23) // 24, idx_name="c"):
            t = x[:, c * 24:c * 24 + pypto.min(24, n - c * 24)]
            out[:, c * 24:] = pypto.softmax(t, -1)

    for n in (1, 16, 24, 50, 1000):
        x = torch.randn(4, n) * 3
        out = torch.full_like(x, float("nan"))
        chunks(x, out)
        want = torch.cat([torch.softmax(x[:, k:k + 24].double(), -1)
                          for k in range(0, n, 24)], dim=1).float()
        torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-6)
    assert_one_compile()


def test_matmul_over_a_dynamic_k_and_n_in_a_loop_body_compiles_once(native):
    # x[i:i+4, :] of x [n, k] @ w [k, m]: the view keeps the symbolic k, the
    # cube takes K, N tails and the leading dimensions at run time.
    @pypto.jit
    def k(x: pypto.Tensor(["n", "k"], F32), w: pypto.Tensor(["k", "m"], F32),
          out: pypto.Tensor(["n", "m"], F32)):
        pypto.set_cube_tile_shapes([16, 16], [16, 32], [16, 16])
        for i in pypto.loop(0, x.shape[0], 4, name="L", idx_name="i"):
            out[i:i + 4, :] = x[i:i + 4, :] @ w

    for n, depth, m in ((4, 1, 1), (8, 9, 20), (12, 50, 45)):
        x, w = torch.randn(n, depth), torch.randn(depth, m)
        out = torch.zeros(n, m)
        k(x, w, out)
        torch.testing.assert_close(out, x @ w, rtol=1e-5, atol=1e-5)
    assert_one_compile()
