"""The front end's type rules are the compiler's: pypto reads the op registry
(compiler/ops/op_registry.cc) through its native extension (op_table.py).

For every elementwise kind of the registry that a strict primitive records
(tensor with tensor, tensor with scalar, unary, clip) and every dtype,
the primitive records the op exactly when the compiler's verifier accepts
the same op on that dtype, with the result dtype the verifier infers; and
every op the tracer records is checked against the registry's arity and
attributes.
"""

import pytest

import pypto
from pypto import dtypes, op_table, primitives, tracer
from pypto.errors import TraceError

SHAPE = (4, 8)


def _trace(record, dtype, out_dtype):
    """The graph of out[:] = record(a, b), a and b of `dtype`; None when
    `record` raises TypeError (the front end refuses the dtype)."""
    def kernel(a, b, out):
        pypto.set_vec_tile_shapes(*SHAPE)
        out[:] = record(a, b)
    params = [("a", dtype, SHAPE, "a"), ("b", dtype, SHAPE, "b"),
              ("out", out_dtype, SHAPE, "out")]
    try:
        return tracer.trace(kernel, "k", params)
    except TypeError:
        return None


def _verifier_accepts(native, kind, num_inputs, attrs, dtype):
    """Whether the compiler's verifier accepts `kind` on `dtype` operands: the
    op recorded directly (no front-end check), its key computed (which
    verifies the graph first)."""
    facts = op_table.op(kind)
    out_dtype = dtypes.DT_BOOL if facts.bool_result else dtype

    def record(a, b):
        return a._builder.add_op(kind, [a, b][:num_inputs], out_dtype, SHAPE, attrs)
    graph = _trace(record, dtype, out_dtype)
    try:
        native.cache_key(graph.SerializeToString())
        return True
    except ValueError:
        return False


def _cases():
    """(registry kind, number of inputs, attrs, the strict primitive's call)."""
    cases = []
    for name, (kind_tt, kind_ts, _) in primitives._BINARY.items():
        cases.append((kind_tt, 2, None, lambda a, b, n=name: primitives.binary(n, a, b)))
        if kind_ts is not None:
            cases.append((kind_ts, 1, {"scalar": 2.0},
                          lambda a, b, n=name: primitives.binary(n, a, 2)))
    for kind in op_table.kinds(category="elementwise_unary"):
        facts = op_table.op(kind)
        if kind == "clip":
            cases.append((kind, 1, {"min": -1.0, "max": 1.0},
                          lambda a, b: primitives.clip(a, -1, 1)))
        elif not facts.attrs:
            cases.append((kind, 1, None, lambda a, b, k=kind: primitives.unary(k, a)))
    return cases


CASES = _cases()


def test_every_case_is_a_registry_kind_of_its_arity():
    assert len(CASES) > 60
    for kind, num_inputs, _, _ in CASES:
        assert op_table.op(kind).num_inputs == num_inputs, kind


@pytest.mark.parametrize("kind,num_inputs,attrs,record", CASES, ids=[c[0] for c in CASES])
def test_primitive_takes_the_dtypes_the_verifier_takes(native, kind, num_inputs, attrs, record):
    facts = op_table.op(kind)
    for dtype in dtypes.COMPILABLE:
        out_dtype = dtypes.DT_BOOL if facts.bool_result else dtype
        graph = _trace(record, dtype, out_dtype)
        verifier = _verifier_accepts(native, kind, num_inputs, attrs, dtype)
        assert (graph is not None) == verifier, (
            f"{kind} on {dtype.name}: the front end "
            f"{'records' if graph is not None else 'refuses'} it, the verifier "
            f"{'accepts' if verifier else 'rejects'} it")
        assert (dtype in facts.operand_dtypes) == verifier, (kind, dtype.name)
        if graph is not None:
            assert [op.kind for op in graph.ops] == [kind], (kind, dtype.name)
            result = next(v for v in graph.values if v.id == graph.ops[0].outputs[0])
            assert result.dtype == out_dtype, (kind, dtype.name)


@pytest.mark.parametrize("src", dtypes.COMPILABLE, ids=lambda t: t.name)
def test_bitcast_takes_the_type_pairs_the_verifier_takes(native, src):
    for dst in dtypes.COMPILABLE:
        def front_end(a, b, dst=dst):
            return primitives.bitcast(a, dst)

        def direct(a, b, dst=dst):
            return a._builder.add_op("bitcast", [a], dst, SHAPE, {"dtype": dst})
        try:
            native.cache_key(_trace(direct, src, dst).SerializeToString())
            verifier = True
        except ValueError:
            verifier = False
        recorded = _trace(front_end, src, dst) is not None
        assert recorded == verifier, (src.name, dst.name, recorded)
        same_size = dtypes.bytes_of(src) == dtypes.bytes_of(dst)
        assert verifier == (same_size and dtypes.DT_BOOL not in (src, dst)), (src.name, dst.name)


def test_reduction_result_dtypes_are_the_verifiers(native):
    for kind in op_table.kinds(category="reduce"):
        for dtype in dtypes.COMPILABLE:
            if dtype in dtypes.FP8_TYPES:  # storage types: test_fp8 checks they are refused
                continue
            want = primitives.reduce_dtype(kind, dtype)

            def kernel(a, out, k=kind):
                pypto.set_vec_tile_shapes(*SHAPE)
                out[:] = primitives.reduce(k, a, 1, False)
            graph = tracer.trace(kernel, "k", [("a", dtype, SHAPE, "a"),
                                               ("out", want, (SHAPE[0],), "out")])
            native.cache_key(graph.SerializeToString())  # ValueError if the dtype is wrong
            wrong = dtypes.DT_FP16 if want != dtypes.DT_FP16 else dtypes.DT_FP32
            bad = tracer.trace(lambda a, out, k=kind: _reduce_as(k, a, out, wrong), "k",
                               [("a", dtype, SHAPE, "a"), ("out", wrong, (SHAPE[0],), "out")])
            with pytest.raises(ValueError):
                native.cache_key(bad.SerializeToString())


def _reduce_as(kind, a, out, dtype):
    """out[:] = kind(a, dim 1) recorded with result dtype `dtype`."""
    pypto.set_vec_tile_shapes(*SHAPE)
    out[:] = a._builder.add_op(kind, [a], dtype, (SHAPE[0],), {"dim": 1, "keepdim": False},
                               space=SHAPE)


def test_the_tracer_records_only_the_registrys_forms():
    with pytest.raises(TraceError, match="'add' with 1 inputs; the compiler's 'add' takes 2"):
        tracer.check_against_registry("add", 1, None, "pypto.add")
    with pytest.raises(TraceError, match="attribute 'alpha', which the compiler's 'adds'"):
        tracer.check_against_registry("adds", 1, {"scalar": 1.0, "alpha": 2.0}, "pypto.add")
    with pytest.raises(TraceError, match="without its attribute 'scalar'"):
        tracer.check_against_registry("adds", 1, {}, "pypto.add")
    with pytest.raises(TraceError, match="'no_such_op' is not in the compiler's op registry"):
        tracer.check_against_registry("no_such_op", 1, None, "pypto.x")
    tracer.check_against_registry("concat", 3, {"dim": 0}, "pypto.concat")  # one or more
    tracer.check_against_registry("sum", 1, {"dim": 0}, "pypto.sum")  # keepdim optional


def test_table_holds_every_registry_fact():
    add = op_table.op("add")
    assert (add.category, add.num_inputs, add.num_outputs, add.operands) == (
        "elementwise_binary", 2, 1, "numeric")
    assert op_table.op("adds").attrs == (op_table.Attr("scalar", "f", True, True),)
    assert op_table.OPERAND_TYPES["float"] == (dtypes.DT_FP32, dtypes.DT_FP16, dtypes.DT_BF16)
    assert set(op_table.OPERAND_TYPES["any"]) == set(dtypes.COMPILABLE)
    assert op_table.kinds(operands="integer") == (
        "gcd", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
        "bitwise_left_shift", "bitwise_right_shift")
    assert op_table.op("sum").result_dtypes[dtypes.DT_INT8] == dtypes.DT_INT64
    with pytest.raises(KeyError, match="not in the compiler's op registry"):
        op_table.op("no_such_op")


def test_what_a_target_maps_is_the_targets_own_answer(native):
    """op_table.target_maps asks the target's code generator (pypto.conv
    takes its composition where TIMG2COL is not mapped: test_ascend_target)."""
    assert op_table.target_maps("host", "TIMG2COL") is True
    for target in ("ascend-a2a3", "ascend-a2a3-cpusim"):
        assert op_table.target_maps(target, "TIMG2COL") is False
        assert op_table.target_maps(target, "TMATMUL") is True
    with pytest.raises(ValueError, match='unknown PTO instruction "TFROB"'):
        op_table.target_maps("host", "TFROB")
    with pytest.raises((ValueError, NotImplementedError), match="ascend-a9"):
        op_table.target_maps("ascend-a9", "TIMG2COL")
