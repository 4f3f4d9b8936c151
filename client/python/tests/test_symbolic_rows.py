"""PyPTO's "Symbolic scalars", "Element" and "Others" tables, one test per
row (several rows per test where named), plus pypto.ceildiv and SymInt;
kernels are checked against torch."""

import pytest
import torch

import pypto
from pypto import verification

F32 = pypto.DT_FP32


def test_row_pypto_SymbolicScalar_outside_a_kernel():  # noqa: N802
    ten = pypto.SymbolicScalar(10)
    x = pypto.SymbolicScalar("x")
    assert isinstance(ten, pypto.SymbolicScalar) and ten == 10
    assert isinstance(x, pypto.SymbolicScalar) and repr(x) == "x"
    assert repr(x + 5) == "x + 5"
    assert pypto.SymbolicScalar(x) is x
    assert pypto.SymbolicScalar() == 0
    with pytest.raises(pypto.error.FeError, match=r"a symbol name is an identifier"):
        pypto.SymbolicScalar("not a name")
    with pytest.raises(pypto.error.FeError, match=r"the value must be an int"):
        pypto.SymbolicScalar("n", 2.5)


def test_row_pypto_SymbolicScalar_is_concrete_concrete_is_immediate_is_symbol_is_expression():  # noqa: N802,E501
    s1, s2 = pypto.SymbolicScalar(10), pypto.SymbolicScalar("x")
    s3 = s2 + 5
    assert (s1.is_concrete(), s2.is_concrete(), s3.is_concrete()) == (True, False, False)
    assert (s1.is_immediate(), s2.is_immediate(), s3.is_immediate()) == (True, False, False)
    assert (s1.is_symbol(), s2.is_symbol(), s3.is_symbol()) == (False, True, False)
    assert (s1.is_expression(), s2.is_expression(), s3.is_expression()) == (False, False, True)
    assert s1.concrete() == 10
    with pytest.raises(ValueError, match="Not concrete value"):
        s2.concrete()
    with pytest.raises(pypto.error.FeError, match="Not concrete value"):
        s3.concrete()
    n5 = pypto.SymbolicScalar("n", 5)
    assert (n5.is_symbol(), n5.is_concrete(), n5.concrete()) == (True, True, 5)


def test_row_pypto_SymbolicScalar_as_variable():  # noqa: N802
    x = pypto.SymbolicScalar("x")
    e = (x * 4 + 1).as_variable()
    assert repr(e) == repr(x * 4 + 1) and e.is_expression()


def test_row_pypto_SymbolicScalar_queries_inside_a_kernel_min_max(native):  # noqa: N802
    """min/max build the tail sizes of a loop over a dynamic dim; inside the
    kernel dims and indices are symbols, not concrete."""
    seen = {}

    @pypto.jit
    def k(x: pypto.Tensor(["n", 64], F32), out: pypto.Tensor(["n", 64], F32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop(pypto.ceildiv(n, 16), idx_name="i"):
            rows = (n - i * 16).min(16)
            seen.update(n=(n.is_symbol(), n.is_concrete()), i=(i.is_symbol(), i.is_concrete()),
                        rows=(rows.is_expression(), rows.is_immediate()),
                        top=(n.max(16).is_expression()))
            t = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[rows, 64])
            pypto.assemble(t * 2 + 1, [i * 16, 0], out)

    for n in (40, 7):
        x, out = torch.rand(n, 64), torch.empty(n, 64)
        k(x, out)
        torch.testing.assert_close(out, x * 2 + 1)
    assert seen == {"n": (True, False), "i": (True, False), "rows": (True, False), "top": True}


def test_row_pypto_ceildiv_and_SymInt():  # noqa: N802
    assert pypto.ceildiv(7, 2) == 4 and pypto.ceildiv(8, 2) == 4
    n = pypto.SymbolicScalar("n")
    assert repr(pypto.ceildiv(n, 64)) == repr((n + 63) // 64)
    with pytest.raises(TypeError, match=r"pypto.ceildiv: b must be an int"):
        pypto.ceildiv(3, 1.5)
    from pypto.symbolic_scalar import SymInt
    import typing
    assert SymInt is pypto.SymInt is pypto.symbolic_scalar.SymInt
    assert set(typing.get_args(SymInt)) == {int, pypto.SymbolicScalar}
    assert pypto.symbolic_scalar(3) == 3  # still the function


def test_row_pypto_Element_dtype_value():  # noqa: N802
    e = pypto.Element(pypto.DT_FP32, 0.5)
    assert (e.dtype, e.value) == (pypto.DT_FP32, 0.5)
    i = pypto.Element(pypto.DT_INT32, 3)
    assert (i.dtype, i.value, type(i.value)) == (pypto.DT_INT32, 3, int)
    assert pypto.Element(pypto.DT_FP16, 2).value == 2.0
    assert pypto.element is pypto.Element
    with pytest.raises(pypto.error.FeError, match=r"invalid data type str for Element"):
        pypto.Element(pypto.DT_FP32, "0.5")
    with pytest.raises(pypto.error.FeError, match=r"2.5 is not a whole number; DT_INT32"):
        pypto.Element(pypto.DT_INT32, 2.5)
    with pytest.raises(pypto.error.FeError, match=r"dtype must be a pypto.DT_\* constant"):
        pypto.Element("fp32", 1.0)


def test_row_pypto_Element_as_an_op_operand(native):  # noqa: N802
    @pypto.jit
    def k(x: pypto.Tensor([], F32), a: pypto.Tensor([], F32), b: pypto.Tensor([], F32),
          c: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        a[:] = pypto.maximum(x, pypto.Element(pypto.DT_FP32, 0.5))
        b[:] = pypto.clip(x, pypto.Element(pypto.DT_FP32, 0.25), pypto.Element(F32, 0.75))
        c[:] = x * pypto.Element(pypto.DT_FP32, 3.0) + pypto.full(
            [8, 16], pypto.Element(pypto.DT_FP32, 1.0), pypto.DT_FP32)

    x = torch.rand(8, 16)
    a, b, c = torch.empty(8, 16), torch.empty(8, 16), torch.empty(8, 16)
    k(x, a, b, c)
    torch.testing.assert_close(a, torch.clamp(x, min=0.5))
    torch.testing.assert_close(b, torch.clamp(x, 0.25, 0.75))
    torch.testing.assert_close(c, x * 3.0 + 1.0)


def test_row_pypto_from_torch_and_DYNAMIC(native):  # noqa: N802
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 16], F32), out: pypto.Tensor([pypto.DYNAMIC, 16], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = x + 1

    for rows in (8, 24):
        x, out = torch.rand(rows, 16), torch.empty(rows, 16)
        k(pypto.from_torch(x, "x", dynamic_axis=0, tensor_format=pypto.TILEOP_ND),
          pypto.from_torch(out, "out"))
        torch.testing.assert_close(out, x + 1)
    with pytest.raises(ValueError, match=r"pypto.from_torch: tensor_format=TILEOP_NZ .* not "
                                         r"supported"):
        pypto.from_torch(x, tensor_format=pypto.TILEOP_NZ)
    with pytest.raises(TypeError, match=r"tensor_format must be pypto.TILEOP_ND or None"):
        pypto.from_torch(x, tensor_format="ND")
    assert pypto.DYN is not None and pypto.STATIC is not None


def test_row_pypto_pass_verify_print_pass_verify_save(native):
    """No per-pass verifier runs here: both check their arguments and do
    nothing; the kernel's results are unchanged."""
    @pypto.jit
    def k(x: pypto.Tensor([], F32), out: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        y = x * 2
        pypto.pass_verify_print("y", y, cond=1)
        pypto.pass_verify_save(y, "y_dump", cond=True)
        out[:] = y

    x, out = torch.rand(8, 16), torch.empty(8, 16)
    k(x, out)
    torch.testing.assert_close(out, x * 2)
    assert pypto.pass_verify_print(1, 2) is None
    with pytest.raises(TypeError, match=r"pypto.pass_verify_save: tensor must be a pypto Tensor"):
        pypto.pass_verify_save(x, "f")
    with pytest.raises(TypeError, match=r"pypto.pass_verify_print: cond must be an int"):
        pypto.pass_verify_print(1, cond="yes")


def test_row_pypto_set_verify_golden_data():
    a, golden = torch.rand(4), torch.rand(4)
    try:
        pypto.set_verify_golden_data([a, None], [None, golden])
        ins, goldens = verification.verify_golden_data()
        assert ins[0] is a and goldens[1] is golden
        pypto.set_verify_golden_data()
        assert verification.verify_golden_data() == (None, None)
        with pytest.raises(TypeError, match=r"goldens\[0\] must be a torch tensor, a numpy array"):
            pypto.set_verify_golden_data(goldens=["x"])
        with pytest.raises(TypeError, match=r"in_out_tensors must be a list or None"):
            pypto.set_verify_golden_data(a)
    finally:
        pypto.set_verify_golden_data()
