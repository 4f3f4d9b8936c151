"""Tracing kernels into pto.v1.Graph protos (no compiler needed)."""

import numpy as np
import pytest

import pypto
from pypto._proto import graph_pb2

F32 = pypto.Tensor([], pypto.DT_FP32)
IN = graph_pb2.PARAM_ROLE_IN
OUT = graph_pb2.PARAM_ROLE_OUT
INOUT = graph_pb2.PARAM_ROLE_INOUT


def arr(*shape, dtype=np.float32):
    return np.zeros(shape, dtype)


def producer(graph, vid):
    ops = [op for op in graph.ops if vid in op.outputs]
    assert len(ops) == 1, f"value {vid} defined by {len(ops)} ops"
    return ops[0]


def value(graph, vid):
    return next(v for v in graph.values if v.id == vid)


def test_roles_in_out_inout():
    @pypto.jit
    def k(a: F32, out: F32, acc: F32):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = a + 1.0
        acc[:] = acc * a

    g = k.trace(arr(4, 32), arr(4, 32), arr(4, 32))
    assert g.schema_version == graph_pb2.SCHEMA_VERSION_1
    assert g.name == "test_roles_in_out_inout.<locals>.k"
    assert [p.name for p in g.params] == ["a", "out", "acc"]
    assert [p.role for p in g.params] == [IN, OUT, INOUT]
    a, out, acc = g.params
    # OUT: the op that computes the result writes the parameter's value directly.
    adds = producer(g, out.value_id)
    assert adds.kind == "adds" and list(adds.inputs) == [a.value_id]
    assert adds.attrs["scalar"].f == 1.0
    # INOUT: value_id is the incoming data, result_value_id the final value.
    mul = producer(g, acc.result_value_id)
    assert mul.kind == "mul" and list(mul.inputs) == [acc.value_id, a.value_id]
    assert not [op for op in g.ops if acc.value_id in op.outputs]
    assert len(g.ops) == 2


def test_values_carry_dtype_and_shape():
    @pypto.jit
    def k(a: pypto.Tensor([], pypto.DT_FP16), out: pypto.Tensor([], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(2, 3, 4)
        out[:] = a.exp()

    g = k.trace(arr(3, 5, 7, dtype=np.float16), arr(3, 5, 7, dtype=np.float16))
    for v in g.values:
        assert v.dtype == graph_pb2.DT_FP16
        assert [d.size for d in v.shape.dims] == [3, 5, 7]
    assert len({v.id for v in g.values}) == len(g.values) == 2
    # The graph survives the wire.
    assert graph_pb2.Graph.FromString(g.SerializeToString()) == g


@pytest.mark.parametrize("expr,kind,scalar", [
    (lambda a, b: a + b, "add", None),
    (lambda a, b: a - b, "sub", None),
    (lambda a, b: a * b, "mul", None),
    (lambda a, b: a / b, "div", None),
    (lambda a, b: pypto.add(a, b), "add", None),
    (lambda a, b: pypto.sub(a, b), "sub", None),
    (lambda a, b: pypto.mul(a, b), "mul", None),
    (lambda a, b: pypto.div(a, b), "div", None),
    (lambda a, b: a.add(b), "add", None),
    (lambda a, b: a + 2, "adds", 2.0),
    (lambda a, b: 2.5 + a, "adds", 2.5),
    (lambda a, b: a - 3, "subs", 3.0),
    (lambda a, b: 2 - a, "rsubs", 2.0),
    (lambda a, b: a * -4, "muls", -4.0),
    (lambda a, b: 0.5 * a, "muls", 0.5),
    (lambda a, b: a / 3, "divs", 3.0),
    (lambda a, b: 3 / a, "rdivs", 3.0),
    (lambda a, b: np.float32(1.5) * a, "muls", 1.5),
    (lambda a, b: pypto.sub(7, a), "rsubs", 7.0),
    (lambda a, b: pypto.div(a, 8), "divs", 8.0),
    (lambda a, b: -a, "neg", None),
    (lambda a, b: abs(a), "abs", None),
    (lambda a, b: a.exp(), "exp", None),
    (lambda a, b: a.neg(), "neg", None),
    (lambda a, b: a.abs(), "abs", None),
    (lambda a, b: pypto.exp(a), "exp", None),
    (lambda a, b: pypto.neg(a), "neg", None),
    (lambda a, b: pypto.abs(a), "abs", None),
])
def test_op_kinds(expr, kind, scalar):
    @pypto.jit
    def k(a: F32, b: F32, out: F32):
        pypto.set_vec_tile_shapes(16, 16)
        out[:] = expr(a, b)

    g = k.trace(arr(32, 48), arr(32, 48), arr(32, 48))
    assert [op.kind for op in g.ops] == [kind]
    op = g.ops[0]
    a, b, out = g.params
    assert list(op.outputs) == [out.value_id]
    if kind in ("add", "sub", "mul", "div"):
        assert list(op.inputs) == [a.value_id, b.value_id]
    else:
        assert list(op.inputs) == [a.value_id]
    if scalar is None:
        assert "scalar" not in op.attrs
    else:
        assert op.attrs["scalar"].WhichOneof("value") == "f"
        assert op.attrs["scalar"].f == scalar
    assert list(op.vec_tile.dims) == [16, 16]


def test_move_and_copy_rules():
    @pypto.jit
    def k(a: F32, o1: F32, o2: F32, o3: F32):
        pypto.set_vec_tile_shapes(4, 4)
        e = a * a
        o1.move(e)      # e unbound: the mul writes o1 directly
        o2[:] = e       # e already bound to o1: copy
        o3[...] = a     # an input: copy

    g = k.trace(*[arr(4, 8)] * 4)
    a, o1, o2, o3 = g.params
    assert [p.role for p in g.params] == [IN, OUT, OUT, OUT]
    assert producer(g, o1.value_id).kind == "mul"
    c2 = producer(g, o2.value_id)
    assert c2.kind == "copy" and list(c2.inputs) == [o1.value_id]
    c3 = producer(g, o3.value_id)
    assert c3.kind == "copy" and list(c3.inputs) == [a.value_id]
    outs = [o for op in g.ops for o in op.outputs]
    assert len(outs) == len(set(outs))  # every value written once


def test_reading_an_output_after_writing_it_reads_the_new_value():
    @pypto.jit
    def k(a: F32, out: F32, out2: F32):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = a + a
        out2[:] = out * 2   # reads the value written above, not the caller's

    g = k.trace(*[arr(4, 4)] * 3)
    a, out, out2 = g.params
    assert out.role == OUT  # its incoming data is never read
    assert list(producer(g, out2.value_id).inputs) == [out.value_id]


def test_written_twice_keeps_last_and_drops_dead_ops():
    @pypto.jit
    def k(a: F32, out: F32):
        pypto.set_vec_tile_shapes(4, 4)
        unused = a.exp()  # noqa: F841 - reaches no output
        out[:] = a + 1
        out[:] = a - 1

    g = k.trace(arr(4, 4), arr(4, 4))
    assert [op.kind for op in g.ops] == ["subs"]
    ids = {v.id for v in g.values}
    for op in g.ops:
        assert set(op.inputs) <= ids and set(op.outputs) <= ids


def test_tile_shapes_recorded_per_op_and_restored():
    pypto.set_vec_tile_shapes(1, 1)

    @pypto.jit
    def k(a: F32, out: F32):
        pypto.set_vec_tile_shapes(32, 64)
        t = a + a
        pypto.set_vec_tile_shapes(8, 128)
        out[:] = t.exp()

    g = k.trace(arr(100, 300), arr(100, 300))
    assert [list(op.vec_tile.dims) for op in g.ops] == [[32, 64], [8, 128]]
    assert pypto.get_vec_tile_shapes() == [1, 1]


def test_tile_shape_set_outside_is_used():
    pypto.set_vec_tile_shapes(2, 2, 2)

    @pypto.jit
    def k(a: F32, out: F32):
        out[:] = -a

    g = k.trace(arr(3, 3, 3), arr(3, 3, 3))
    assert list(g.ops[0].vec_tile.dims) == [2, 2, 2]


def test_missing_tile_shape_is_an_error_saying_what_to_call():
    pypto.tiling._restore((None, None))

    @pypto.jit
    def k(a: F32, out: F32):
        out[:] = a.exp()

    with pytest.raises(ValueError, match=r"pypto.exp: no vector tile shape.*set_vec_tile_shapes with 2 dims"):
        k.trace(arr(4, 4), arr(4, 4))


def test_tile_rank_mismatch_is_an_error():
    @pypto.jit
    def k(a: F32, out: F32):
        pypto.set_vec_tile_shapes(64)
        out[:] = a + a

    with pytest.raises(ValueError, match=r"pypto.add: .*\(64,\) has 1 dims.*set_vec_tile_shapes with 2 dims"):
        k.trace(arr(4, 4), arr(4, 4))


def test_bad_tile_shapes_rejected():
    with pytest.raises(ValueError, match="dim 1 must be positive"):
        pypto.set_vec_tile_shapes(4, 0)
    with pytest.raises(TypeError, match="dim 0 must be an int"):
        pypto.set_vec_tile_shapes(2.5)
    with pytest.raises(ValueError, match="kL0 <= kL1"):
        pypto.set_cube_tile_shapes([16, 32], [64, 32], [16, 16])
    with pytest.raises(ValueError, match="nL1 % nL0 == 0"):
        pypto.set_cube_tile_shapes([16, 32], [16, 32], [16, 24])
    pypto.set_cube_tile_shapes([16, 32], [16, 32], [16, 32])
    assert pypto.get_cube_tile_shapes()[:3] == ([16, 32], [16, 32], [16, 32])


def test_names_are_carried_as_names_only():
    weird = 'x"; system("rm -rf /");\n//'

    @pypto.jit
    def k(a: pypto.Tensor([], pypto.DT_FP32, name=weird), out: F32):
        pypto.set_vec_tile_shapes(4, 4)
        doubled = a + a
        t = pypto.tensor([4, 4], pypto.DT_FP32, name="tmp\nline")
        t[:] = doubled
        out[:] = t * 3

    g = k.trace(arr(4, 4), arr(4, 4))
    a, out = g.params
    assert a.name == "a"  # the parameter keeps the Python name, for errors
    assert value(g, a.value_id).name == weird
    assert value(g, g.ops[0].outputs[0]).name == "doubled"
    assert value(g, out.value_id).name == "out"
    # Names appear only in name fields.
    for op in g.ops:
        assert op.kind in ("add", "muls")


def test_local_tensor_read_before_write_is_an_error():
    @pypto.jit
    def k(a: F32, out: F32):
        pypto.set_vec_tile_shapes(4, 4)
        t = pypto.tensor([4, 4], pypto.DT_FP32, name="t")
        out[:] = t + a

    with pytest.raises(ValueError, match="'t' is read before anything is written"):
        k.trace(arr(4, 4), arr(4, 4))


def test_operand_mismatches():
    @pypto.jit
    def dt(a: F32, b: pypto.Tensor([], pypto.DT_FP16), out: F32):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = a + b

    with pytest.raises(TypeError, match=r"pypto.add: operand dtypes differ \(DT_FP32 and DT_FP16\)"):
        dt.trace(arr(4, 4), arr(4, 4, dtype=np.float16), arr(4, 4))

    @pypto.jit
    def sh(a: F32, b: F32, out: F32):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = a * b

    with pytest.raises(ValueError, match=r"pypto.mul: shapes \[4, 4\] \('input'\) and \[4, 8\] \('other'\) do not broadcast: dim -1 is 4 vs 8"):
        sh.trace(arr(4, 4), arr(4, 8), arr(4, 4))

    @pypto.jit
    def wr(a: F32, out: F32):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = a.exp()

    with pytest.raises(ValueError, match=r"out\[:\] = ...: the value has shape \(4, 4\) but 'out' has \(2, 8\)"):
        wr.trace(arr(4, 4), arr(2, 8))

    @pypto.jit
    def bad_scalar(a: F32, out: F32):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = a + "1"

    with pytest.raises(TypeError, match="pypto.add: expected Tensors or a Tensor and a Python number"):
        bad_scalar.trace(arr(4, 4), arr(4, 4))


def test_kernel_must_write_an_output_and_return_nothing():
    @pypto.jit
    def nothing(a: F32, out: F32):
        pypto.set_vec_tile_shapes(4, 4)
        a + a

    with pytest.raises(ValueError, match=r"writes no output.*out\[:\] = expr"):
        nothing.trace(arr(4, 4), arr(4, 4))

    @pypto.jit
    def returns(a: F32, out: F32):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = a + a
        return out

    with pytest.raises(ValueError, match="returned Tensor: kernels return nothing"):
        returns.trace(arr(4, 4), arr(4, 4))


def test_no_truth_value_while_tracing():
    @pypto.jit
    def k(a: F32, out: F32):
        pypto.set_vec_tile_shapes(4, 4)
        if a:
            out[:] = a

    with pytest.raises(TypeError, match="no truth value.*pypto.where.*pypto.cond branches on "
                                        "symbolic scalars"):
        k.trace(arr(4, 4), arr(4, 4))


def test_ops_outside_a_kernel_are_rejected():
    with pytest.raises(TypeError, match="pypto.exp: argument 'input' must be a pypto Tensor inside"):
        pypto.exp(np.zeros(3))
    with pytest.raises(TypeError, match="pypto.add: argument 'input' must be a pypto Tensor inside"):
        pypto.add(pypto.Tensor([4], pypto.DT_FP32), 1)


def test_tensor_annotation_properties():
    t = pypto.Tensor((32, 64), pypto.DT_FP16, name="x")
    assert t.shape == [32, 64] and t.dim == 2 and t.dtype == pypto.DT_FP16 and t.name == "x"
    assert t.format == "ND"
    inferred = pypto.Tensor[...]
    assert inferred.shape is None and inferred.dtype is None
    assert pypto.Tensor[pypto.DT_FP32].dtype == pypto.DT_FP32
    dyn = pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32)
    assert dyn.shape == [pypto.DYNAMIC, 8]
    with pytest.raises(ValueError, match="dim 1 must be a positive int"):
        pypto.Tensor([4, 0], pypto.DT_FP32)
    with pytest.raises(TypeError, match="dtype must be a pypto.DT_"):
        pypto.Tensor([4], "float32")


def test_proxy_properties_inside_a_kernel():
    seen = {}

    @pypto.jit
    def k(a: F32, out: F32):
        pypto.set_vec_tile_shapes(4, 4)
        seen.update(shape=a.shape, dim=a.dim, dtype=a.dtype, name=a.name)
        out[:] = a + a

    k.trace(arr(5, 6), arr(5, 6))
    assert seen == {"shape": [5, 6], "dim": 2, "dtype": pypto.DT_FP32, "name": "a"}


def test_all_api_dtypes_exist():
    for name in ("DT_FP32", "DT_FP16", "DT_BF16", "DT_INT8", "DT_INT16", "DT_INT32",
                 "DT_INT64", "DT_UINT8", "DT_BOOL", "DT_DOUBLE", "DT_FP8E4M3", "DT_FP8E5M2",
                 "DT_UINT16", "DT_UINT32", "DT_UINT64"):
        assert getattr(pypto, name).name == name
    # Tier-1 values match the wire enum.
    for name in ("DT_FP32", "DT_FP16", "DT_BF16", "DT_INT64", "DT_DOUBLE", "DT_FP8E4M3",
                 "DT_FP8E5M2", "DT_FP8E8M0"):
        assert int(getattr(pypto, name)) == graph_pb2.DataType.Value(name)
    assert pypto.RunMode.NPU == 0 and pypto.RunMode.SIM == 1
    assert pypto.DYN is pypto.DYNAMIC


def test_inout_incoming_data_read_after_the_write_is_snapshotted():
    @pypto.jit
    def k(acc: F32, out: F32):
        pypto.set_vec_tile_shapes(4, 4)
        e = acc * 2        # op that will write acc's final value
        f = acc + 1        # reads acc's incoming data after that op
        acc[:] = e
        out[:] = f

    g = k.trace(arr(4, 4), arr(4, 4))
    acc, out = g.params
    assert acc.role == INOUT
    kinds = [op.kind for op in g.ops]
    writer = kinds.index("muls")
    # No op after the writer reads the incoming value.
    for op in g.ops[writer + 1:]:
        assert acc.value_id not in op.inputs
    assert kinds[0] == "copy" and list(g.ops[0].inputs) == [acc.value_id]
    adds = producer(g, out.value_id)
    assert list(adds.inputs) == list(g.ops[0].outputs)


def test_long_names_are_clipped_to_the_compilers_bound():
    long = "n" * 1000

    @pypto.jit
    def k(a: pypto.Tensor([], pypto.DT_FP32, name=long), out: F32):
        pypto.set_vec_tile_shapes(4)
        out[:] = a + a

    g = k.trace(arr(8), arr(8))
    name = value(g, g.params[0].value_id).name
    assert len(name.encode()) <= 256 and name.startswith("nnnn")
