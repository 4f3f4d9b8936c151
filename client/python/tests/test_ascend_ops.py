"""Op tests of the other files (test_int_arith.py, test_extra_ops.py,
test_indexing.py, test_matmul.py, test_dynamic.py) run as they are with the
Ascend target (PYPTO_TARGET=ascend-a2a3) on its PTO-ISA CPU simulation: the
same forms, inputs and torch references, one representative case of each
family the target maps. FP16 and BF16 matmul results rounded as torch rounds
the FP32 sum, bit for bit. And maximum/minimum against NaN in either operand,
full and row tiles (and -0.0 against +0.0), and amax/amin over rows and
columns with a NaN inside (PTO-ISA's TMAX/TMIN and TROWMAX/TCOLMAX drop NaN;
the target selects it in)."""

import numpy as np
import pytest
import torch

import pypto
import test_dynamic
import test_extra_ops
import test_indexing
import test_int_arith
import test_matmul
from test_ascend_target import pto_isa  # noqa: F401 (a fixture)

ANY = pypto.Tensor[...]

# (test function, its parameters): each passes on the host and on the target.
CASES = {
    "int8_wrap": (test_int_arith.test_small_integers_wrap_like_torch,
                  {"dtype": np.int16, "name": "mul"}),
    "int_pow_sign_clip": (test_int_arith.test_integer_pow_sign_clip_like_torch,
                          {"dtype": np.int8}),
    "expand_exp_dif": (test_extra_ops.test_expand_exp_dif_per_row_and_per_column,
                       {"dtype": torch.float32}),
    "pack_unpack_int16": (test_extra_ops.test_pack_and_unpack_round_trip_as_torch_views,
                          {"dtype": torch.int16}),
    "gather_bits": (test_indexing.test_gather_special_values_move_bit_exact, {}),
    "matmul": (test_matmul.test_fp32_against_torch, {"m": 37, "k": 45, "n": 53}),
    "matmul_fp16_result": (test_matmul.test_half_inputs_accumulate_in_fp32,
                           {"dtype": torch.float16, "fp32_out": False}),
    "matmul_bf16_result": (test_matmul.test_half_inputs_accumulate_in_fp32,
                           {"dtype": torch.bfloat16, "fp32_out": False}),
    "dynamic_layer_norm": (test_dynamic.test_layer_norm_over_a_dynamic_batch_compiles_once, {}),
}


@pytest.fixture
def ascend(pto_isa, monkeypatch):  # noqa: F811 (the fixture imported above)
    monkeypatch.setenv("PYPTO_TARGET", "ascend-a2a3")
    monkeypatch.setenv("PYPTO_COMPILE_TIMEOUT", "600")


@pytest.mark.parametrize("case", sorted(CASES))
def test_op_tests_pass_on_the_ascend_cpu_simulation(native, ascend, case):
    test, params = CASES[case]
    test(native, **params)


@pypto.jit
def extrema(a: ANY, b: ANY, x: ANY, mx: ANY, mn: ANY, rmx: ANY, rmn: ANY, hmx: ANY,
            amax: ANY, amin: ANY):
    pypto.set_vec_tile_shapes(8, 16)
    mx[:] = pypto.maximum(a, b)
    mn[:] = pypto.minimum(a, b)
    r = b.sum(-1, keepdim=True)  # a row tile: NaN where b's row has one
    rmx[:] = pypto.maximum(r, a)
    rmn[:] = pypto.minimum(a, r)
    hmx[:] = pypto.maximum(a.cast(pypto.DT_BF16), b.cast(pypto.DT_BF16)).cast(pypto.DT_FP32)
    amax[:] = x.amax(-1, keepdim=True)
    amin[:] = x.amin(0, keepdim=True)


def test_maximum_minimum_amax_amin_keep_nan(native, ascend):
    special = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1.0, -1.0, 2.5]
    a = torch.tensor(special * 2).repeat(8, 1)  # every pair of special values
    b = torch.tensor(special)[:, None].expand(8, 16).contiguous()
    b[1:, 3] = float("nan")
    b[5, 3] = 4.0  # a row without NaN
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(3))
    x[3, 5] = x[6, 2] = float("nan")  # neither first along its row or column
    outs = [torch.zeros(8, 16) for _ in range(5)] + [torch.zeros(8, 1), torch.zeros(1, 16)]
    extrema(a, b, x, *outs)
    an, bn, rn = a.numpy(), b.numpy(), b.sum(-1, keepdim=True).numpy()
    wants = [np.maximum(an, bn), np.minimum(an, bn), np.maximum(rn, an), np.minimum(an, rn),
             np.maximum(an, bn), x.amax(-1, keepdim=True), x.amin(0, keepdim=True)]
    names = ["max", "min", "row max", "row min", "bf16 max", "amax", "amin"]
    for name, got, want in zip(names, outs, wants):
        want = torch.as_tensor(want)
        same = (got == want) | (got.isnan() & want.isnan())
        assert bool(same.all()), f"{name}: {(~same).nonzero()[:4].tolist()}"
        zero = want == 0  # -0.0 against +0.0: numpy's (and the host's) zero
        assert torch.equal(torch.signbit(got[zero]), torch.signbit(want[zero])), name


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
@pytest.mark.parametrize("form", ["plain", "a_trans", "b_trans_batched"])
def test_half_matmul_results_round_like_torch(native, ascend, dtype, form):
    """Small integers times quarters: every FP32 sum is exact in any order,
    many lie halfway between two FP16/BF16 values, so the result is torch's
    rounding of the exact sum, bit for bit (nearest even)."""
    g = torch.Generator().manual_seed(11)
    batch = (2,) if form == "b_trans_batched" else ()
    a = torch.randint(-40, 41, batch + (33, 70), generator=g).to(dtype)
    b = (torch.randint(-60, 61, batch + (70, 40), generator=g) / 4).to(dtype)
    want = torch.matmul(a.double(), b.double()).to(dtype)
    a_trans, b_trans = form == "a_trans", form == "b_trans_batched"
    x = a.transpose(-1, -2).contiguous() if a_trans else a
    y = b.transpose(-1, -2).contiguous() if b_trans else b
    got = test_matmul.run_mm(
        lambda p, q: pypto.matmul(p, q, a_trans=a_trans, b_trans=b_trans), x, y,
        batch + (33, 40), dtype)
    assert got.dtype == dtype
    diff = (got != want).nonzero()
    assert diff.numel() == 0, f"{len(diff)} differ, first {diff[:4].tolist()}"
