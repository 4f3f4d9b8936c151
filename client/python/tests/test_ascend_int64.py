"""test_reductions_int.py's INT32 sum and prod rows (and the same of INT64
values) compiled for the Ascend target and run on its PTO-ISA CPU
simulation: torch's INT64 results exactly, over a dim split over tiles
(partial INT64 results, then a combine step), wrapping as torch wraps
(docs/pto-isa.md, "The Ascend target": sums of bytes in f32, products of
16-bit limbs in int32); INT64 values computed on (arithmetic, comparisons,
casts: word pairs in int32 tiles) equal to torch's."""

import numpy as np
import pytest
import torch

import pypto
from test_ascend_target import pto_isa  # noqa: F401 (a fixture)
from test_int_arith import big

ANY = pypto.Tensor[...]
ASCEND = {"target": "ascend-a2a3"}


@pypto.jit
def sum_prod(x: ANY, s: ANY, p: ANY, dim: int, keepdim: bool):
    pypto.set_vec_tile_shapes(4, 8)
    s[:] = x.sum(dim, keepdim)
    p[:] = x.prod(dim, keepdim)


def odd_edges(dtype, shape, seed):
    """Values across the range, made odd so that products keep bits, with a
    row of the range's edges."""
    x = big(dtype, shape, seed) | 1
    info = np.iinfo(dtype)
    x[1, :6] = [info.min, info.max, info.min + 1, info.max - 1, -1, 1]
    return x


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("dim,keepdim", [(-1, False), (0, True)])
@pytest.mark.parametrize("values", [big, odd_edges])
def test_sum_and_prod_on_the_ascend_cpu_simulation_match_torch(native, pto_isa, dtype, dim,
                                                                keepdim, values):
    x = values(dtype, (9, 20), 11)
    t = torch.from_numpy(x)
    want = [torch.sum(t, dim, keepdim=keepdim).numpy(), torch.prod(t, dim, keepdim=keepdim).numpy()]
    outs = [np.zeros(w.shape, np.int64) for w in want]
    with pypto.options(codegen_options=ASCEND, host_options={"compile_timeout": 600}):
        sum_prod(x, *outs, dim, keepdim)
    for kind, got, w in zip(("sum", "prod"), outs, want):
        np.testing.assert_array_equal(got, w, err_msg=kind)


@pypto.jit
def int64_arith(x: ANY, y: ANY, n: ANY, add: ANY, mul: ANY, mx: ANY, lt: ANY, ge: ANY,
                wide: ANY, narrow: ANY):
    pypto.set_vec_tile_shapes(4, 8)
    add[:] = x + y
    mul[:] = x * y
    mx[:] = pypto.maximum(x, -y)
    lt[:] = x < y
    ge[:] = x >= y
    wide[:] = pypto.cast(n, pypto.DT_INT64) - x
    narrow[:] = pypto.cast(x, pypto.DT_INT32)


def test_int64_arithmetic_on_the_ascend_cpu_simulation_matches_torch(native, pto_isa):
    x, y, n = big(np.int64, (9, 20), 1), big(np.int64, (9, 20), 2), big(np.int32, (9, 20), 3)
    y[2] = x[2] + 1  # neighbours: only the low words differ
    tx, ty, tn = (torch.from_numpy(a) for a in (x, y, n))
    want = [tx + ty, tx * ty, torch.maximum(tx, -ty), tx < ty, tx >= ty, tn.long() - tx,
            tx.int()]
    outs = [np.zeros(w.shape, w.numpy().dtype) for w in want]
    with pypto.options(codegen_options=ASCEND, host_options={"compile_timeout": 600}):
        int64_arith(x, y, n, *outs)
    for got, w in zip(outs, want):
        np.testing.assert_array_equal(got, w.numpy())

