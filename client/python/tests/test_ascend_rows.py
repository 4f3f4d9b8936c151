"""PYPTO_REFERENCE.md's elementwise rows (test_elementwise_rows.py's tables:
the same forms, inputs and torch references) compiled for the Ascend target
and run on its PTO-ISA CPU simulation: a representative set of the float,
BOOL and INT32 rows, a few rows to a kernel so that one compile stays short;
each result within the ulps the Ascend composition states (docs/pto-isa.md,
"The Ascend target"), BOOL and INT32 results exactly."""

import pytest
import torch

import many_outputs
import pypto
import test_elementwise_rows as rows
from test_ascend_target import pto_isa  # noqa: F401 (a fixture)
from test_elementwise_families import ulps32

ASCEND = {"target": "ascend-a2a3"}

# Kernels of a few rows each: compositions that share no code (the trig,
# hyperbolic and power families), the division and rounding family with the
# selections, BOOL results, INT32 arithmetic and bit operations.
CHUNKS = {
    "float_math": ["pypto.acos", "pypto.asinh", "pypto.atan2", "pypto.cbrt", "pypto.hypot",
                   "pypto.pow", "pypto.sinh", "pypto.tan"],
    "float_division": ["pypto.Tensor.fmod", "pypto.Tensor.where", "pypto.clip", "pypto.log10",
                       "pypto.prelu", "pypto.remainder", "pypto.round", "pypto.tril"],
    "bool": ["pypto.Tensor.logical_not", "pypto.isfinite", "pypto.isnan", "pypto.logical_and",
             "pypto.logical_not", "pypto.signbit"],
    "int": ["pypto.bitwise_and", "pypto.bitwise_left_shift", "pypto.bitwise_not",
            "pypto.bitwise_right_shift", "pypto.bitwise_xor", "pypto.ceil_div",
            "pypto.floor_div", "pypto.gcd"],
}

# The Ascend compositions' stated bounds where they exceed the rows test's
# (2 ulp, 4 for the library functions).
ASCEND_ULPS = {"pypto.acos": 4, "pypto.asin": 4, "pypto.tan": 3, "pypto.atan": 3,
               "pypto.atan2": 3, "pypto.sinh": 3, "pypto.cosh": 3, "pypto.acosh": 3}


def _group_of(row):
    for group, (table, inputs, dtype) in rows.GROUPS.items():
        if row in table:
            return table, inputs, dtype
    raise AssertionError(f"no row {row}")


def _limit(row):
    library = any(f in row for f in ("exp", "log", "pow", "rsqrt"))
    return ASCEND_ULPS.get(row, 4 if library else 2)


_RESULTS = {}


def _chunk_results(chunk):
    """{row: result} of one chunk's kernel on the Ascend CPU simulation."""
    if chunk not in _RESULTS:
        names = CHUNKS[chunk]
        table, inputs, dtype = _group_of(names[0])
        with pypto.options(codegen_options=ASCEND, host_options={"compile_timeout": 600}):
            got = many_outputs.run_many([table[n][0] for n in names], list(inputs),
                                        [torch.zeros(8, 16, dtype=dtype) for _ in names],
                                        (8, 16))
        _RESULTS[chunk] = dict(zip(names, got))
    return _RESULTS[chunk]


def test_the_chunks_name_rows_of_one_group_each():
    seen = set()
    for chunk, names in CHUNKS.items():
        assert len({_group_of(n)[2] for n in names}) == 1, chunk
        assert not seen & set(names), chunk
        seen |= set(names)


@pytest.mark.parametrize("chunk", sorted(CHUNKS))
def test_rows_on_the_ascend_cpu_simulation_match_torch(native, pto_isa, chunk):
    bad = []
    for row, got in _chunk_results(chunk).items():
        table, _, dtype = _group_of(row)
        want = table[row][1]()
        if dtype == torch.float32:
            d = ulps32(got, want.double())
            if int(d.max()) > _limit(row):
                bad.append((row, int(d.max()), got[d > _limit(row)][:4].tolist(),
                            want[d > _limit(row)][:4].tolist()))
        elif not torch.equal(got, want):
            bad.append((row, got[got != want][:4].tolist(), want[got != want][:4].tolist()))
    assert not bad

