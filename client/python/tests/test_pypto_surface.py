"""Every Tier-1 name of PyPTO's API (/work/shared/PYPTO_API.md) with PyPTO's
signature: each call form written there binds to ours, with the same
parameter names where it names them and the same defaults where it states
them. (test_api.py checks that the names exist and behave.) A form may be
more lenient here (an optional out_dtype), never stricter."""

import inspect

import pytest
import torch

import pypto

# name: the call forms PYPTO_API.md writes for it, as (args, kwargs) of
# placeholders; "defaults" below lists the defaults it states.
X, Y, Z = "x", "y", "z"
FORMS = {
    "jit": [((), {}), ((len,), {}),
            ((), {"runtime_options": {}, "host_options": {}, "codegen_options": {},
                  "pass_options": {}, "verify_options": {}, "debug_options": {}})],
    "tensor": [(([1], "dt"), {}), (([1], "dt"), {"name": "a"}), ((), {"shape": [1], "dtype": "dt", "name": ""})],
    "symbolic_scalar": [((3,), {}), (("n",), {})],
    "from_torch": [((X,), {}), ((X, "x"), {"dynamic_axis": 0, "dtype": "dt"}), ((X,), {"name": "x"})],
    "set_vec_tile_shapes": [((8,), {}), ((1, 8, 16), {}), ((1, 1, 8, 16), {})],
    "set_cube_tile_shapes": [(([16, 32], [16, 32], [16, 32]), {}),
                             (([16, 32], [16, 32], [16, 32]), {"enable_split_k": False}),
                             (([16, 32], [16, 32], [16, 32], True), {})],
    "get_vec_tile_shapes": [((), {})],
    "get_cube_tile_shapes": [((), {})],
    "where": [((X, Y, Z), {})],
    "clip": [((X, 0, 1), {}), ((X,), {"min": 0, "max": 1})],
    "cast": [((X, "dt"), {})],
    "matmul": [((X, Y, "dt"), {}), ((X, Y, "dt"), {"a_trans": True, "b_trans": True})],
    "view": [((X, [1], [0]), {})],
    "assemble": [((X, [0], Y), {})],
    "reshape": [((X, [1]), {})],
    "transpose": [((X, 0, 1), {})],
    "permute": [((X, [1, 0]), {})],
    "concat": [(([X, Y], 0), {}), (([X, Y],), {"dim": 0})],
    "unsqueeze": [((X, 0), {})],
    "clone": [((X,), {})],
    "softmax": [((X, -1), {}), ((X,), {"dim": -1})],
    "rms_norm": [((X,), {}), ((X, Y), {}), ((X,), {"gamma": Y, "epsilon": 1e-5})],
    "zeros": [(([4],), {}), (([4], "dt"), {})],
    "ones": [(([4],), {}), (([4], "dt"), {})],
    "full": [(([4], 1.0), {}), (([4], 1.0, "dt"), {})],
    "arange": [((4,), {}), ((0, 4), {}), ((0, 4, 1), {})],
    "loop": [((4,), {}), ((0, 4), {}), ((0, 4, 1), {"name": "L", "idx_name": "i"})],
    "loop_unroll": [((0, 4, 1), {"name": "L", "idx_name": "i", "unroll_list": [2, 1]})],
    "cond": [((X,), {})],
}
for _name in "add sub mul div maximum minimum eq ne lt le gt ge".split():
    FORMS[_name] = [((X, Y), {}), ((X, 2.0), {})]
FORMS["pow"] = [((X, Y), {}), ((X, 2.0), {})]
for _name in ("exp exp2 expm1 log log2 log10 log1p sqrt rsqrt reciprocal abs neg relu sigmoid "
              "tanh erf erfc sign floor ceil round trunc sin cos").split():
    FORMS[_name] = [((X,), {})]
for _name in "sum amax amin prod argmax argmin".split():
    FORMS[_name] = [((X, -1), {}), ((X, -1, True), {}), ((X,), {"dim": -1, "keepdim": True})]

# Defaults PYPTO_API.md states: (name, parameter, value).
DEFAULTS = [
    ("tensor", "name", ""),
    ("from_torch", "name", ""), ("from_torch", "dynamic_axis", None), ("from_torch", "dtype", None),
    ("set_cube_tile_shapes", "enable_split_k", False),
    ("matmul", "a_trans", False), ("matmul", "b_trans", False),
    ("rms_norm", "gamma", None), ("rms_norm", "epsilon", 1e-6),
    ("argmax", "dim", -1), ("argmin", "dim", -1),  # PyPTO's reduction.py
] + [(r, "keepdim", False) for r in "sum amax amin prod argmax argmin".split()]


@pytest.mark.parametrize("name", sorted(FORMS))
def test_pypto_call_forms_bind(name):
    sig = inspect.signature(getattr(pypto, name))
    for args, kwargs in FORMS[name]:
        sig.bind(*args, **kwargs)  # a TypeError names the form that does not bind


@pytest.mark.parametrize("name,param,value", DEFAULTS)
def test_pypto_defaults(name, param, value):
    p = inspect.signature(getattr(pypto, name)).parameters[param]
    assert p.default == value, f"pypto.{name}({param}=...) defaults to {p.default!r}"


def test_tensor_annotation_forms():
    assert isinstance(pypto.tensor([1], pypto.DT_FP32), pypto.Tensor)
    inspect.signature(pypto.Tensor).bind([1], pypto.DT_FP32, name="a")
    for ann in (pypto.Tensor([], pypto.DT_FP16), pypto.Tensor[...],
                pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                pypto.Tensor([pypto.DYN, 64], pypto.DT_FP32), pypto.Tensor((32, 64), pypto.DT_BF16)):
        assert isinstance(ann, pypto.Tensor)
    assert pypto.STATIC is not pypto.DYNAMIC


# Operators and methods PYPTO_API.md lists on pypto.Tensor, and the method
# forms with their keywords.
OPERATORS = ("__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ "
             "__floordiv__ __mod__ __pow__ __neg__ __lt__ __le__ __gt__ __ge__ __matmul__ "
             "__getitem__ __setitem__").split()


@pytest.mark.parametrize("op", OPERATORS)
def test_tensor_operators_exist(op):
    assert callable(getattr(pypto.Tensor, op))


def test_method_forms_take_pypto_keywords():
    for name in "sum amax amin prod argmax argmin".split():
        inspect.signature(getattr(pypto.Tensor, name)).bind(X, dim=-1, keepdim=True)
    inspect.signature(pypto.Tensor.softmax).bind(X, -1)
    inspect.signature(pypto.Tensor.matmul).bind(X, Y, "dt", a_trans=True, b_trans=False)
    inspect.signature(pypto.Tensor.cast).bind(X, "dt")


def test_rms_norm_without_gamma_runs(native):
    @pypto.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 64)
        out[:] = pypto.rms_norm(x)

    x = torch.linspace(-3, 3, 8 * 64).reshape(8, 64)
    out = torch.empty_like(x)
    k(x, out)
    want = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-6)


# Checked against PyPTO's own sources too (python/pypto/op/creation.py,
# reduction.py): zeros/ones take sizes as PyPTO's *size with a keyword dtype,
# full a keyword valid_shape, argmax/argmin default to the last dim.
PYPTO_SOURCE_FORMS = {
    "zeros": [((2, 3), {}), (([2, 3],), {"dtype": "dt"}), (([2, 3], "dt"), {})],
    "ones": [((2, 3), {}), (([2, 3],), {"dtype": "dt"})],
    "full": [(([2, 2], 1.0, "dt"), {"valid_shape": [2, 2]})],
    "argmax": [((X,), {}), ((X,), {"dim": 1})],
    "argmin": [((X,), {}), ((X,), {"dim": 1})],
    "concat": [(([X, Y],), {})],
    "matmul": [((X, Y, "dt"), {"a_trans": False, "b_trans": True, "c_matrix_nz": False,
                                "extend_params": None})],  # op/matmul.py
}


@pytest.mark.parametrize("name", sorted(PYPTO_SOURCE_FORMS))
def test_pypto_source_call_forms_bind(name):
    sig = inspect.signature(getattr(pypto, name))
    for args, kwargs in PYPTO_SOURCE_FORMS[name]:
        sig.bind(*args, **kwargs)


def test_creation_and_argmax_in_pypto_forms(native):
    @pypto.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32),
          idx: pypto.Tensor([], pypto.DT_INT64)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = (x + pypto.ones(8, 16) + pypto.zeros([8, 16], dtype=pypto.DT_FP32)
                  + pypto.full([8, 16], 2.0, pypto.DT_FP32, valid_shape=[8, 16]))
        idx[:] = pypto.argmax(x)

    x = torch.linspace(-3, 3, 8 * 16).reshape(8, 16).flip(1)
    out, idx = torch.empty_like(x), torch.empty(8, dtype=torch.int64)
    k(x, out, idx)
    torch.testing.assert_close(out, x + 3)
    assert torch.equal(idx, x.argmax(-1))


def test_full_with_a_partial_valid_shape_fills_only_its_valid_region(native):
    @pypto.jit
    def k(out: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = pypto.full([8, 16], 1.0, pypto.DT_FP32, valid_shape=[4, 16])

    out = torch.zeros(8, 16)
    k(out)
    assert torch.equal(out, torch.cat([torch.ones(4, 16), torch.zeros(4, 16)]))


def test_matmul_extend_params_bias_and_refusals(native):
    def make(kw):
        @pypto.jit
        def k(a: pypto.Tensor[...], b: pypto.Tensor[...], bias: pypto.Tensor[...],
              out: pypto.Tensor[...]):
            pypto.set_cube_tile_shapes([16, 32], [16, 32], [16, 32])
            pypto.set_vec_tile_shapes(16, 32)
            out[:] = pypto.matmul(a, b, pypto.DT_FP32, **kw(bias))
        return k

    a, b = torch.rand(24, 40) - 0.5, torch.rand(40, 48) - 0.5
    bias, out = torch.rand(1, 48), torch.empty(24, 48)
    make(lambda bias: {"extend_params": {"bias_tensor": bias}})(a, b, bias, out)
    torch.testing.assert_close(out, a @ b + bias, rtol=1e-5, atol=1e-5)
    # An FP16 bias is cast to the result's dtype first.
    make(lambda bias: {"extend_params": {"bias_tensor": bias}})(a, b, bias.half(), out)
    torch.testing.assert_close(out, a @ b + bias.half().float(), rtol=1e-5, atol=1e-5)
    for kw, err, msg in [
            (lambda bias: {"c_matrix_nz": True}, ValueError, r"c_matrix_nz=True .* not supported"),
            (lambda bias: {"extend_params": {"trans_mode": pypto.TransMode.CAST_RINT}},
             ValueError, r"extend_params\['trans_mode'\] .* is not supported"),
            (lambda bias: {"extend_params": {"bias": bias}}, ValueError,
             r"unknown extend_params key 'bias'; PyPTO's keys: bias_tensor"),
            (lambda bias: {"extend_params": [bias]}, TypeError, r"extend_params must be a dict")]:
        with pytest.raises(err, match=r"pypto.matmul: " + msg):
            make(kw)(a, b, bias, out)


def test_arange_of_ints_is_int32_as_in_pypto(native):
    """PyPTO's arange of ints is DT_INT32 (torch's is int64); INT64 only when a
    value does not fit in INT32."""
    @pypto.jit
    def k(small: pypto.Tensor([], pypto.DT_INT32), big: pypto.Tensor([], pypto.DT_INT64)):
        pypto.set_vec_tile_shapes(8)
        small[:] = pypto.arange(3, 19, 2)
        # Multiples of 256 near 2**31: arange's start/step travel as FP32
        # today, which is exact for these (not for 2**31 + 1).
        big[:] = pypto.arange(2**31, 2**31 + 8 * 256, 256)

    small, big = torch.empty(8, dtype=torch.int32), torch.empty(8, dtype=torch.int64)
    k(small, big)
    assert torch.equal(small, torch.arange(3, 19, 2, dtype=torch.int32))
    assert torch.equal(big, torch.arange(2**31, 2**31 + 8 * 256, 256))
