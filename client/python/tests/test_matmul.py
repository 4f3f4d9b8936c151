"""pypto.matmul / a @ b / Tensor.matmul on the cube path, against torch in
float64: FP32 within 1e-5 of the sum of magnitudes, FP16/BF16 inputs with FP32
accumulate, transposes, batch dims (equal and broadcast), a matmul between
vector ops, and bad input named by pypto or the compiler."""

import numpy as np
import pytest
import torch

import pypto

ANY = pypto.Tensor[...]


def run_mm(fn, a, b, out_shape, out_dtype=torch.float32, cube=([16, 32], [16, 32], [16, 32]),
           tile=None):
    """Traces out[:] = fn(a, b) with the cube tile `cube` and runs it."""
    def body(x: ANY, y: ANY, out: ANY):
        pypto.set_cube_tile_shapes(*cube)
        if tile is not None:
            pypto.set_vec_tile_shapes(*tile)
        out[:] = fn(x, y)
    kernel = pypto.jit(body)
    out = torch.zeros(out_shape, dtype=out_dtype)
    kernel(a, b, out)
    return out


def check_close(got, a, b, a_trans=False, b_trans=False):
    """Within 1e-5 of the sum of magnitudes of the K products (plus the
    output type's rounding)."""
    x, y = a.double(), b.double()
    if a_trans:
        x = x.transpose(-1, -2)
    if b_trans:
        y = y.transpose(-1, -2)
    want = torch.matmul(x, y)
    mags = torch.matmul(x.abs(), y.abs())
    tol = 1e-5 * mags + 1e-30
    if got.dtype == torch.float16:
        tol = tol + want.abs() * 2.0 ** -10
    elif got.dtype == torch.bfloat16:
        tol = tol + want.abs() * 2.0 ** -7
    err = (got.double() - want).abs()
    assert bool((err <= tol).all()), float((err - tol).max())


@pytest.mark.parametrize("m,k,n", [(37, 45, 53), (64, 128, 64), (1, 1, 1), (5, 300, 3)])
def test_fp32_against_torch(native, m, k, n):
    g = torch.Generator().manual_seed(m * 1000 + k)
    a = torch.rand((m, k), generator=g) * 8 - 4
    b = torch.rand((k, n), generator=g) * 8 - 4
    got = run_mm(lambda x, y: x @ y, a, b, (m, n))
    check_close(got, a, b)


@pytest.mark.parametrize("a_trans,b_trans", [(False, True), (True, False), (True, True)])
def test_transposes(native, a_trans, b_trans):
    g = torch.Generator().manual_seed(3)
    a = torch.rand((45, 37) if a_trans else (37, 45), generator=g) - 0.5
    b = torch.rand((53, 45) if b_trans else (45, 53), generator=g) - 0.5
    got = run_mm(lambda x, y: pypto.matmul(x, y, a_trans=a_trans, b_trans=b_trans), a, b,
                 (37, 53))
    check_close(got, a, b, a_trans, b_trans)
    got = run_mm(lambda x, y: x.matmul(y, a_trans=a_trans, b_trans=b_trans), a, b, (37, 53))
    check_close(got, a, b, a_trans, b_trans)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("fp32_out", [True, False])
def test_half_inputs_accumulate_in_fp32(native, dtype, fp32_out):
    g = torch.Generator().manual_seed(5)
    a = (torch.rand((33, 70), generator=g) * 4 - 2).to(dtype)
    b = (torch.rand((70, 40), generator=g) * 4 - 2).to(dtype)
    pdt = pypto.DT_FP16 if dtype == torch.float16 else pypto.DT_BF16
    out_dtype = pypto.DT_FP32 if fp32_out else None
    # BF16 torch arguments directly, and (as in kernels that take FP32) cast
    # inside: FP32 in (exact), BF16 result cast back to FP32 (exact).
    if dtype == torch.bfloat16:
        direct = run_mm(lambda x, y: pypto.matmul(x, y, out_dtype), a, b, (33, 40),
                        torch.float32 if fp32_out else dtype)
        check_close(direct, a, b)
        fn = lambda x, y: pypto.matmul(x.cast(pdt), y.cast(pdt), out_dtype).cast(pypto.DT_FP32)  # noqa: E731
        got = run_mm(fn, a.float(), b.float(), (33, 40), tile=(8, 16))
        if not fp32_out:
            assert bool((got == got.to(dtype).float()).all())  # representable
            got = got.to(dtype)
        assert bool((direct == got.to(direct.dtype)).all())
    else:
        got = run_mm(lambda x, y: pypto.matmul(x, y, out_dtype), a, b, (33, 40),
                     torch.float32 if fp32_out else dtype)
    check_close(got, a, b)
    if not fp32_out:
        # One rounding of the FP32 result: what torch gives from an FP32 matmul.
        want = torch.matmul(a.float(), b.float()).to(dtype)
        assert (got == want).float().mean() > 0.95


@pytest.mark.parametrize("sa,sb", [((3, 9, 10), (3, 10, 17)), ((2, 3, 9, 10), (10, 17)),
                                   ((2, 1, 9, 10), (1, 4, 10, 17)), ((9, 10), (4, 10, 17))])
def test_batched_and_broadcast(native, sa, sb):
    g = torch.Generator().manual_seed(7)
    a = torch.rand(sa, generator=g) - 0.5
    b = torch.rand(sb, generator=g) - 0.5
    out_shape = torch.broadcast_shapes(sa[:-2], sb[:-2]) + (sa[-2], sb[-1])
    got = run_mm(lambda x, y: x @ y, a, b, out_shape, cube=([8, 16], [8, 16], [16, 16]))
    check_close(got, a, b)


@pytest.mark.parametrize("case", ["heads", "permute", "row", "reshape"])
def test_view_operands_read_in_place_equal_clones(native, case):
    """Views, permutes and reshapes as operands are read in place (no copy
    groups): the results equal the cloned operands' exactly, and torch's."""
    g = torch.Generator().manual_seed(11)
    if case == "heads":  # q[:, h*D:(h+1)*D] @ k[:, h*D:(h+1)*D].T
        a, b = torch.rand((37, 96), generator=g) - 0.5, torch.rand((41, 96), generator=g) - 0.5
        ops = lambda x, y: (x[:, 32:64], y[:, 32:64].transpose(0, 1))  # noqa: E731
        out_shape = (37, 41)
    elif case == "permute":  # [B, S, H, D] -> [B, H, S, D]
        a, b = torch.rand((2, 19, 3, 16), generator=g), torch.rand((2, 23, 3, 16), generator=g)
        ops = lambda x, y: (x.permute(0, 2, 1, 3), y.permute(0, 2, 3, 1))  # noqa: E731
        out_shape = (2, 3, 19, 23)
    elif case == "row":  # one row of x
        a, b = torch.rand((5, 40), generator=g), torch.rand((40, 33), generator=g)
        ops = lambda x, y: (x[3:4], y)  # noqa: E731
        out_shape = (1, 33)
    else:  # [B, S, D] -> [B*S, D]
        a, b = torch.rand((2, 9, 40), generator=g), torch.rand((40, 33), generator=g)
        ops = lambda x, y: (x.reshape(18, 40), y)  # noqa: E731
        out_shape = (18, 33)

    def in_place(x, y):
        xv, yv = ops(x, y)
        return xv @ yv

    def cloned(x, y):
        xv, yv = ops(x, y)
        return xv.clone() @ yv.clone()

    got = run_mm(in_place, a, b, out_shape)
    assert torch.equal(got, run_mm(cloned, a, b, out_shape))
    xv, yv = ops(a, b)
    check_close(got, xv, yv)


def test_matmul_into_region_and_concat(native):
    """out[:, 32:85] = a @ w and concat([x @ w1, exp(y), x @ w2]): the cube
    stores straight into the regions; results match torch."""
    g = torch.Generator().manual_seed(13)
    a, w = torch.rand((37, 45), generator=g) - 0.5, torch.rand((45, 53), generator=g) - 0.5
    out = torch.rand((37, 100), generator=g)
    want = out.clone()
    want[:, 32:85] = (a.double() @ w.double()).float()

    @pypto.jit
    def into(x: ANY, y: ANY, o: ANY):
        pypto.set_cube_tile_shapes([16, 32], [16, 32], [16, 32])
        o[:, 32:85] = x @ y

    into(a, w, out)
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)

    x, w1, w2 = (torch.rand(s, generator=g) - 0.5 for s in ((21, 40), (40, 30), (40, 17)))
    y = torch.rand((21, 9), generator=g)

    @pypto.jit
    def cat(x: ANY, w1: ANY, w2: ANY, y: ANY, o: ANY):
        pypto.set_cube_tile_shapes([16, 32], [16, 32], [16, 32])
        pypto.set_vec_tile_shapes(8, 8)
        o[:] = pypto.concat([x @ w1, pypto.exp(y), x @ w2], 1)

    got = torch.zeros((21, 56))
    cat(x, w1, w2, y, got)
    want = torch.cat([x.double() @ w1.double(), torch.exp(y.double()), x.double() @ w2.double()], 1)
    torch.testing.assert_close(got.double(), want, rtol=1e-5, atol=1e-5)


def test_matmul_between_vector_ops(native):
    g = torch.Generator().manual_seed(9)
    a = torch.rand((40, 24), generator=g) - 0.5
    w = torch.rand((24, 30), generator=g) - 0.5
    got = run_mm(lambda x, y: pypto.relu(pypto.exp(x) @ y - 1.0), a, w, (40, 30),
                 tile=(8, 16))
    want = torch.relu(torch.exp(a.double()) @ w.double() - 1.0)
    mags = torch.exp(a.double()) @ w.double().abs()
    assert bool(((got.double() - want).abs() <= 1e-5 * mags + 1e-6).all())


def test_bad_input_named():
    F32 = pypto.Tensor([], pypto.DT_FP32)

    @pypto.jit
    def mm(a: F32, b: F32, out: F32):
        pypto.set_cube_tile_shapes([16, 32], [16, 32], [16, 32])
        out[:] = pypto.matmul(a, b, b_trans=True)

    with pytest.raises(ValueError, match=r"pypto.matmul: K mismatch: a \[4, 5\] \(a_trans=False\), "
                                         r"b \[6, 4\] \(b_trans=True\) have K 5 and 4"):
        mm.trace(np.zeros((4, 5), np.float32), np.zeros((6, 4), np.float32),
                 np.zeros((4, 6), np.float32))

    with pytest.raises(ValueError, match=r"constraint kL0 <= kL1 violated \(64 > 32\)"):
        pypto.set_cube_tile_shapes([16, 32], [64, 32], [16, 32])
    with pytest.raises(ValueError, match=r"constraint nL1 % nL0 == 0 violated \(24 % 16 = 8\)"):
        pypto.set_cube_tile_shapes([16, 32], [16, 32], [16, 24])

    @pypto.jit
    def notile(a: F32, b: F32, out: F32):
        out[:] = a @ b

    pypto.tiling._restore((None, None))
    with pytest.raises(pypto.TraceError, match=r"pypto.matmul: no cube tile shape is set"):
        notile.trace(np.zeros((4, 5), np.float32), np.zeros((5, 6), np.float32),
                     np.zeros((4, 6), np.float32))


def test_cube_tile_too_big_names_buffer(native):
    @pypto.jit
    def big(a: ANY, b: ANY, out: ANY):
        pypto.set_cube_tile_shapes([256, 256], [64, 64], [256, 256])
        out[:] = a @ b

    with pytest.raises(pypto.CompileError, match=r"matmul.*cube_tile m=\[256,256\] k=\[64,64\] "
                                                 r"n=\[256,256\] needs 262144 bytes of L0C"):
        big(np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32),
            np.zeros((8, 8), np.float32))



def test_dynamic_rows_and_batch_compile_once(native):
    """A DYNAMIC outermost dim (M, or a batch dim) compiles one kernel for
    every size: the cube tasks come from a template expanded at launch."""
    D = pypto.DYNAMIC

    @pypto.jit
    def rows(a: pypto.Tensor([D, 64], pypto.DT_FP32), b: pypto.Tensor([64, 24], pypto.DT_FP32),
             out: pypto.Tensor([D, 24], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([16, 16], [16, 32], [16, 16])
        out[:] = a @ b

    @pypto.jit
    def batch(a: pypto.Tensor([D, 9, 10], pypto.DT_FP32), b: pypto.Tensor([10, 17], pypto.DT_FP32),
              out: pypto.Tensor([D, 9, 17], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([8, 8], [8, 16], [16, 16])
        out[:] = a @ b

    g = torch.Generator().manual_seed(11)
    for n in (1, 5, 40):
        a = torch.rand((n, 64), generator=g) - 0.5
        b = torch.rand((64, 24), generator=g) - 0.5
        out = torch.zeros((n, 24))
        rows(a, b, out)
        check_close(out, a, b)
        a3 = torch.rand((n, 9, 10), generator=g) - 0.5
        b3 = torch.rand((10, 17), generator=g) - 0.5
        out3 = torch.zeros((n, 9, 17))
        batch(a3, b3, out3)
        check_close(out3, a3, b3)
    assert pypto.compile_stats()["compiles"] == 2, pypto.compile_stats()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_skinny_rows_stream_b(native, dtype):
    """M = 1..16 (at most pto_cube::kSmallM rows: B is streamed from its rows,
    not packed), with K and N tails of the cube tile (K 77: L1 blocks of 32 and
    L0 steps of 8 end short; N 150: tiles of 64 then 22, past the 64- and
    16-column blocks to a zero-padded edge), FP32 and BF16 B, against torch in
    float64. M is DYNAMIC (one kernel for every row count) and static (the
    bench's one-row and eight-row decode shapes, N in two tiles)."""
    D = pypto.DYNAMIC
    pdt = pypto.DT_FP32 if dtype == torch.float32 else pypto.DT_BF16
    k, n = 77, 150

    @pypto.jit
    def rows(a: pypto.Tensor([D, k], pdt), b: pypto.Tensor([k, n], pdt),
             out: pypto.Tensor([D, n], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([16, 16], [8, 32], [64, 64])
        out[:] = pypto.matmul(a, b, pypto.DT_FP32)

    g = torch.Generator().manual_seed(17)
    b = (torch.rand((k, n), generator=g) * 8 - 4).to(dtype)
    for m in range(1, 17):
        a = (torch.rand((m, k), generator=g) * 8 - 4).to(dtype)
        out = torch.full((m, n), float("nan"))
        rows(a, b, out)
        check_close(out, a, b)
    assert pypto.compile_stats()["compiles"] == 1, pypto.compile_stats()

    for m in (1, 8):
        a = (torch.rand((m, 301), generator=g) * 8 - 4).to(dtype)
        bw = (torch.rand((301, 258), generator=g) * 8 - 4).to(dtype)
        got = run_mm(lambda x, y: pypto.matmul(x, y, pypto.DT_FP32), a, bw, (m, 258),
                     cube=([16, 16], [8, 32], [136, 136]))
        check_close(got, a, bw)
