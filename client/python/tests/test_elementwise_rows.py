"""One test per row of PYPTO_REFERENCE.md's "Operations" table that the
elementwise families bring (test_row_pypto_atan2 for `pypto.atan2`,
test_row_pypto_Tensor_tril_ for `pypto.Tensor.tril_`): each calls the row's
form as PyPTO writes it and compares with torch. The rows of one group
share a kernel (one compile), run by the group's first test."""

import pytest
import torch

import many_outputs
import pypto
from test_elementwise_families import ulps32

HP = "HIGH_PRECISION"

G = torch.Generator().manual_seed(11)
X = torch.cat([torch.tensor([float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 0.5, -0.5,
                             1.0]), torch.rand(120, generator=G) * 1.8 - 0.9]).reshape(8, 16)
Y = (torch.rand(8, 16, generator=G) * 2 + 0.5)
W = torch.randn(16, generator=G)
A = torch.randint(-50, 50, (8, 16), generator=G, dtype=torch.int32)
B = torch.randint(1, 9, (8, 16), generator=G, dtype=torch.int32) * torch.where(
    torch.rand(8, 16, generator=G) < 0.5, -1, 1).to(torch.int32)


def _tril_in_place(x, y, w):
    t = pypto.clone(x)
    t.tril_(1)
    return t


def _triu_in_place(x, y, w):
    t = pypto.clone(x)
    t.triu_(-1)
    return t


# row: (group, pypto form of (x, y, w) or (a, b), torch reference)
FLOAT_ROWS = {
    "pypto.Tensor.div": (lambda x, y, w: x.div(y, precision_type=HP), lambda: X / Y),
    "pypto.Tensor.exp": (lambda x, y, w: x.exp(precision_type="INTRINSIC"), lambda: X.double().exp()),
    "pypto.Tensor.fmod": (lambda x, y, w: x.fmod(y), lambda: X.fmod(Y)),
    "pypto.Tensor.log": (lambda x, y, w: y.log(precision_type=HP), lambda: Y.double().log()),
    "pypto.Tensor.log10": (lambda x, y, w: y.log10(HP), lambda: Y.double().log10()),
    "pypto.Tensor.log2": (lambda x, y, w: y.log2(HP), lambda: Y.double().log2()),
    "pypto.Tensor.reciprocal": (lambda x, y, w: y.reciprocal(precision_type=HP),
                                lambda: Y.reciprocal()),
    "pypto.Tensor.remainder": (lambda x, y, w: x.remainder(y, HP), lambda: X.remainder(Y)),
    "pypto.Tensor.round": (lambda x, y, w: x.round(decimals=1), lambda: X.round(decimals=1)),
    "pypto.Tensor.rsqrt": (lambda x, y, w: y.rsqrt(HP), lambda: Y.double().rsqrt()),
    "pypto.Tensor.sqrt": (lambda x, y, w: y.sqrt(HP), lambda: Y.sqrt()),
    "pypto.Tensor.tril": (lambda x, y, w: x.tril(1), lambda: X.tril(1)),
    "pypto.Tensor.tril_": (_tril_in_place, lambda: X.tril(1)),
    "pypto.Tensor.triu": (lambda x, y, w: x.triu(-2), lambda: X.triu(-2)),
    "pypto.Tensor.triu_": (_triu_in_place, lambda: X.triu(-1)),
    "pypto.Tensor.where": (lambda x, y, w: x.where(x > y - 1.5, y), lambda: X.where(X > Y - 1.5, Y)),
    "pypto.acos": (lambda x, y, w: pypto.acos(x), lambda: X.double().acos()),
    "pypto.acosh": (lambda x, y, w: pypto.acosh(y), lambda: Y.double().acosh()),
    "pypto.asin": (lambda x, y, w: pypto.asin(x), lambda: X.double().asin()),
    "pypto.asinh": (lambda x, y, w: pypto.asinh(x), lambda: X.double().asinh()),
    "pypto.atan": (lambda x, y, w: pypto.atan(x), lambda: X.double().atan()),
    "pypto.atan2": (lambda x, y, w: pypto.atan2(x, y - 1.5), lambda: X.double().atan2(Y - 1.5)),
    "pypto.atanh": (lambda x, y, w: pypto.atanh(x), lambda: X.double().atanh()),
    "pypto.cbrt": (lambda x, y, w: pypto.cbrt(y), lambda: Y.double() ** (1 / 3)),
    "pypto.clip": (lambda x, y, w: pypto.clip(x, -0.25 * y, w),
                   lambda: torch.clamp(X, -0.25 * Y, W)),
    "pypto.cosh": (lambda x, y, w: pypto.cosh(y), lambda: Y.double().cosh()),
    "pypto.div": (lambda x, y, w: pypto.div(x, y, precision_type=HP), lambda: X / Y),
    "pypto.exp": (lambda x, y, w: pypto.exp(x, precision_type="INTRINSIC"), lambda: X.double().exp()),
    "pypto.fmod": (lambda x, y, w: pypto.fmod(x * 7, y, HP), lambda: torch.fmod(X * 7, Y)),
    "pypto.hypot": (lambda x, y, w: pypto.hypot(x, y), lambda: X.double().hypot(Y.double())),
    "pypto.log": (lambda x, y, w: pypto.log(y, precision_type=HP), lambda: Y.double().log()),
    "pypto.log10": (lambda x, y, w: pypto.log10(y, HP), lambda: Y.double().log10()),
    "pypto.log2": (lambda x, y, w: pypto.log2(y, HP), lambda: Y.double().log2()),
    "pypto.lrelu": (lambda x, y, w: pypto.lrelu(x), lambda: torch.nn.functional.leaky_relu(X)),
    "pypto.pow": (lambda x, y, w: pypto.pow(y, x, HP), lambda: Y.double() ** X.double()),
    "pypto.prelu": (lambda x, y, w: pypto.prelu(x, w), lambda: torch.prelu(X, W)),
    "pypto.reciprocal": (lambda x, y, w: pypto.reciprocal(y, precision_type=HP),
                         lambda: 1 / Y),
    "pypto.remainder": (lambda x, y, w: pypto.remainder(x * 7, y, HP),
                        lambda: torch.remainder(X * 7, Y)),
    "pypto.round": (lambda x, y, w: pypto.round(x * 100, decimals=-1),
                    lambda: torch.round(X * 100, decimals=-1)),
    "pypto.rsqrt": (lambda x, y, w: pypto.rsqrt(y, precision_type=HP), lambda: Y.double().rsqrt()),
    "pypto.sinh": (lambda x, y, w: pypto.sinh(y), lambda: Y.double().sinh()),
    "pypto.sqrt": (lambda x, y, w: pypto.sqrt(y, precision_type=HP), lambda: Y.sqrt()),
    "pypto.tan": (lambda x, y, w: pypto.tan(x), lambda: X.double().tan()),
    "pypto.tril": (lambda x, y, w: pypto.tril(x, -1), lambda: X.tril(-1)),
    "pypto.triu": (lambda x, y, w: pypto.triu(x, 3), lambda: X.triu(3)),
}
BOOL_ROWS = {
    "pypto.Tensor.logical_not": (lambda x, y, w: (x > 0).logical_not(),
                                 lambda: (X > 0).logical_not()),
    "pypto.isfinite": (lambda x, y, w: pypto.isfinite(x), lambda: X.isfinite()),
    "pypto.isnan": (lambda x, y, w: pypto.isnan(x), lambda: X.isnan()),
    "pypto.logical_and": (lambda x, y, w: pypto.logical_and(x, y - 1.5),
                          lambda: torch.logical_and(X, Y - 1.5)),
    "pypto.logical_not": (lambda x, y, w: pypto.logical_not(x), lambda: torch.logical_not(X)),
    "pypto.signbit": (lambda x, y, w: pypto.signbit(x), lambda: X.signbit()),
}
INT_ROWS = {
    "pypto.Tensor.gcd": (lambda a, b: a.gcd(b), lambda: A.gcd(B)),
    "pypto.bitwise_and": (lambda a, b: pypto.bitwise_and(a, b), lambda: A & B),
    "pypto.bitwise_left_shift": (lambda a, b: pypto.bitwise_left_shift(a, b), lambda: A << B),
    "pypto.bitwise_not": (lambda a, b: pypto.bitwise_not(a), lambda: ~A),
    "pypto.bitwise_or": (lambda a, b: pypto.bitwise_or(a, b), lambda: A | B),
    "pypto.bitwise_right_shift": (lambda a, b: pypto.bitwise_right_shift(a, b), lambda: A >> B),
    "pypto.bitwise_xor": (lambda a, b: pypto.bitwise_xor(a, b), lambda: A ^ B),
    "pypto.ceil_div": (lambda a, b: pypto.ceil_div(a, b), lambda: -torch.div(-A, B,
                                                                             rounding_mode="floor")),
    "pypto.floor_div": (lambda a, b: pypto.floor_div(a, b),
                        lambda: torch.div(A, B, rounding_mode="floor")),
    "pypto.gcd": (lambda a, b: pypto.gcd(a, b), lambda: torch.gcd(A, B)),
}
GROUPS = {"float": (FLOAT_ROWS, (X, Y, W), torch.float32),
          "bool": (BOOL_ROWS, (X, Y, W), torch.bool),
          "int": (INT_ROWS, (A, B), torch.int32)}


_RESULTS = {}


def _group_results(group):
    """{row: pypto's result} of a group's rows: one kernel, run by the
    group's first test."""
    if group not in _RESULTS:
        rows, inputs, dtype = GROUPS[group]
        names = sorted(rows)
        got = many_outputs.run_many([rows[n][0] for n in names], list(inputs),
                                    [torch.zeros(8, 16, dtype=dtype) for _ in names], (8, 16))
        _RESULTS[group] = dict(zip(names, got))
    return _RESULTS[group]


def _check_row(row):
    for group, (rows, _, dtype) in GROUPS.items():
        if row in rows:
            got, want = _group_results(group)[row], rows[row][1]()
            if dtype == torch.float32:
                # libmvec's exp/log/pow (within 4 ulp), 1 / sqrt (two roundings).
                library = any(f in row for f in ("exp", "log", "pow", "rsqrt"))
                limit = 4 if library else 2
                d = ulps32(got, want.double())
                assert int(d.max()) <= limit, (row, got[d > limit][:4].tolist(),
                                               want[d > limit][:4].tolist())
            else:
                assert torch.equal(got, want), row
            return
    raise AssertionError(f"no row {row}")


def _row_test(row):
    def test(native):
        _check_row(row)
    test.__name__ = "test_row_" + row.replace(".", "_")
    test.__doc__ = f"`{row}` against torch."
    return test


for _rows, _, _ in GROUPS.values():
    for _row in _rows:
        globals()["test_row_" + _row.replace(".", "_")] = _row_test(_row)
