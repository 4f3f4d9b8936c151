"""pypto.var, axpy_, expand_clone, one_hot, pad,
interleave, deinterleave, quantize and dequantize (ops composed of other ops: composites.py) and
the Tensor.assemble / Tensor.concat methods, each run through a compiled
kernel and compared with torch."""

import pytest
import torch

import many_outputs
import pypto

ANY = pypto.Tensor[...]

HALF_TOL = {torch.float16: 1e-3, torch.bfloat16: 8e-3}


def run(fns, inputs, out_shapes, out_dtype, tile=(4, 8, 16)):
    outs = [torch.zeros(s, dtype=out_dtype) for s in out_shapes]
    return many_outputs.run_many(fns, inputs, outs, tile)


# var -----------------------------------------------------------------------------

def test_var_as_torch_fp32(native):
    x = torch.randn(3, 5, 7) * 4 + 10
    cases = [(dict(dim=1), (3, 7)), (dict(dim=-1, keepdim=True), (3, 5, 1)),
             (dict(dim=(0, 2)), (5,)), (dict(dim=2, correction=0), (3, 5)),
             (dict(dim=None, keepdim=True), (1, 1, 1))]
    outs = run([lambda t, kw=kw: pypto.var(t, **kw) for kw, _ in cases], [x],
               [s for _, s in cases], torch.float32)
    for (kw, _), got in zip(cases, outs):
        want = torch.var(x.double(), **kw).float()
        torch.testing.assert_close(got, want, rtol=2e-6, atol=0, msg=str(kw))


def test_var_of_every_element_is_rank_0(native):
    @pypto.jit
    def k(x: ANY, every: ANY, by_method: ANY):
        pypto.set_vec_tile_shapes(8, 8)
        every.move(pypto.var(x))
        by_method[:] = x.var(0, correction=0)

    x = torch.randn(4, 6)
    every, by_method = torch.zeros(()), torch.zeros(6)
    k(x, every, by_method)
    torch.testing.assert_close(every, x.double().var().float(), rtol=2e-6, atol=0)
    torch.testing.assert_close(by_method, x.double().var(0, correction=0).float(), rtol=2e-6,
                               atol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_var_half_types_compute_in_fp32(native, dtype):
    x = (torch.randn(4, 16) * 3).to(dtype)
    got, = run([lambda t: pypto.var(t, 1)], [x], [(4,)], dtype)
    want = x.double().var(1).to(dtype)
    torch.testing.assert_close(got.double(), want.double(), rtol=HALF_TOL[dtype], atol=0)


def test_var_correction_past_n_divides_by_zero(native):
    x = torch.tensor([[1.0, 2.0], [3.0, 3.0]])
    got, = run([lambda t: pypto.var(t, 1, correction=2)], [x], [(2,)], torch.float32)
    want = x.var(1, correction=2)
    assert torch.isinf(got[0]) and torch.isnan(got[1])
    assert torch.equal(got.isnan(), want.isnan()) and torch.equal(got.isinf(), want.isinf())


def test_var_rejects_integers():
    @pypto.jit
    def k(x: ANY, out: ANY):
        out[:] = pypto.var(x, 0)

    with pytest.raises(TypeError, match="pypto.var.*DT_INT32"):
        k(torch.zeros(4, dtype=torch.int32), torch.zeros(()))


def test_var_over_a_dynamic_dim(native):
    @pypto.jit
    def k(x: pypto.Tensor([4, "n"], pypto.DT_FP32), out: pypto.Tensor([4], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = pypto.var(x, 1)

    for n in (5, 12):
        x = torch.randn(4, n)
        out = torch.zeros(4)
        k(x, out)
        torch.testing.assert_close(out, x.double().var(1).float(), rtol=2e-6, atol=0)


# axpy_ ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_axpy_in_place_as_torch(native, dtype):
    @pypto.jit
    def k(y: ANY, x: ANY, y2: ANY):
        pypto.set_vec_tile_shapes(4, 16)
        pypto.axpy_(y, x, 0.75)
        y2.move(x)
        pypto.axpy_(y2, x)

    x, y0 = torch.randn(4, 16).to(dtype), torch.randn(4, 16).to(dtype)
    y, y2 = y0.clone(), torch.zeros(4, 16, dtype=dtype)
    k(y, x, y2)
    want = (y0.float() + (x.float() * 0.75).to(dtype).float()).to(dtype)
    assert torch.equal(y, want)
    assert torch.equal(y2, x + x)


def test_axpy_integers_and_broadcast(native):
    @pypto.jit
    def k(y: ANY, x: ANY):
        pypto.set_vec_tile_shapes(4, 16)
        pypto.axpy_(y, x, -3)

    x = torch.randint(-1000, 1000, (1, 16), dtype=torch.int32)
    y0 = torch.randint(-1000, 1000, (4, 16), dtype=torch.int32)
    y = y0.clone()
    k(y, x)
    assert torch.equal(y, y0.add(x, alpha=-3))


def test_axpy_rejects_a_float_alpha_for_integers():
    @pypto.jit
    def k(y: ANY, x: ANY):
        pypto.axpy_(y, x, 0.5)

    with pytest.raises(TypeError, match="alpha 0.5 must be an int"):
        k(torch.zeros(4, dtype=torch.int32), torch.zeros(4, dtype=torch.int32))


# expand_clone --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.bool])
def test_expand_clone_as_torch(native, dtype):
    x = (torch.arange(6).reshape(1, 6, 1) % 4).to(dtype)
    if dtype == torch.float32:
        x[0, 1, 0], x[0, 2, 0] = -0.0, float("nan")
    outs = run([lambda t: pypto.expand_clone(t, [3, 6, 5]),
                lambda t: t.expand_clone([3, -1, 5], valid_shape=[3, 6, 5]),
                lambda t: pypto.expand_clone(t, [2, 1, 6, 5])],
               [x], [(3, 6, 5), (3, 6, 5), (2, 1, 6, 5)], dtype, tile=(2, 2, 8, 8))
    for got, shape in zip(outs, [(3, 6, 5), (3, 6, 5), (2, 1, 6, 5)]):
        want = x.expand(shape)
        if dtype == torch.float32:
            assert torch.equal(got.view(torch.int32), want.contiguous().view(torch.int32))
        else:
            assert torch.equal(got, want)


def test_expand_clone_is_a_copy(native):
    @pypto.jit
    def k(x: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        y = pypto.expand_clone(x, [4, 8])
        x[:] = pypto.full([4, 8], 7.0)
        out[:] = y

    x = torch.randn(4, 8)
    x0 = x.clone()
    out = torch.zeros(4, 8)
    k(x, out)
    assert torch.equal(out, x0)


def test_expand_clone_keeps_a_dynamic_dim(native):
    @pypto.jit
    def k(x: pypto.Tensor(["n", 1], pypto.DT_FP32), a: pypto.Tensor(["n", 8], pypto.DT_FP32),
          b: pypto.Tensor(["n", 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        a[:] = pypto.expand_clone(x, [x.shape[0], 8])
        b[:] = x.expand_clone([-1, 8])

    for n in (3, 6):
        x = torch.randn(n, 1)
        a, b = torch.zeros(n, 8), torch.zeros(n, 8)
        k(x, a, b)
        assert torch.equal(a, x.expand(n, 8)) and torch.equal(b, x.expand(n, 8)), n


def test_expand_clone_to_a_dynamic_dim(native):
    @pypto.jit
    def k(row: pypto.Tensor([1, 8], pypto.DT_FP32), a: pypto.Tensor(["n", 8], pypto.DT_FP32),
          out: pypto.Tensor(["n", 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = a + pypto.expand_clone(row, [a.shape[0], 8])

    for n in (3, 10):
        row, a, out = torch.randn(1, 8), torch.randn(n, 8), torch.zeros(n, 8)
        k(row, a, out)
        assert torch.equal(out, a + row), n


def test_expand_clone_errors():
    def kernel(shape, valid_shape=None):
        def k(x: ANY, out: ANY):
            out[:] = pypto.expand_clone(x, shape, valid_shape=valid_shape)
        return pypto.jit(k)

    x = torch.zeros(2, 1)
    with pytest.raises(ValueError, match=r"valid_shape\[1\] = 5 must be in 1..4"):
        kernel([2, 4], valid_shape=[2, 5])(x, torch.zeros(2, 4))
    with pytest.raises(ValueError, match="dim 0 has size 2, not 1"):
        kernel([3, 4])(x, torch.zeros(3, 4))


# one_hot -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int8])
def test_one_hot_as_torch(native, dtype):
    x = torch.tensor([[0, 3, 1], [4, 2, 2]], dtype=dtype)
    got, = run([lambda t: pypto.one_hot(t, 5)], [x], [(2, 3, 5)], torch.int64)
    assert torch.equal(got, torch.nn.functional.one_hot(x.long(), 5))


def test_one_hot_rank_1_and_out_of_range(native):
    x = torch.tensor([2, 0, 7, -1], dtype=torch.int32)
    got, = run([lambda t: pypto.one_hot(t, 3)], [x], [(4, 3)], torch.int64)
    want = torch.nn.functional.one_hot(x.clamp(0, 2).long(), 3)
    want[2:] = 0  # outside [0, 3): a row of zeros
    assert torch.equal(got, want)


def test_one_hot_errors():
    def kernel(n):
        def k(x: ANY, out: ANY):
            out[:] = pypto.one_hot(x, n)
        return pypto.jit(k)

    with pytest.raises(TypeError, match="one_hot.*integer tensor"):
        kernel(3)(torch.zeros(4), torch.zeros(4, 3, dtype=torch.int64))
    with pytest.raises(ValueError, match="num_classes must be positive"):
        kernel(-1)(torch.zeros(4, dtype=torch.int64), torch.zeros(4, 3, dtype=torch.int64))


# Tensor.assemble, Tensor.concat --------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32])
def test_tensor_assemble_and_concat_methods(native, dtype):
    @pypto.jit
    def k(a: ANY, b: ANY, out: ANY, by_class: ANY, by_method: ANY):
        pypto.set_vec_tile_shapes(8, 16)
        assert out.assemble(a, [0, 0]) is None
        out.assemble(b, [2, 3])
        by_class[:] = pypto.Tensor.concat([a, b], 1)
        by_method[:] = a.concat([a, b, a], dim=-1)

    a = torch.randint(-50, 50, (2, 4)).to(dtype)
    b = torch.randint(-50, 50, (2, 4)).to(dtype)
    out0 = torch.randint(-50, 50, (5, 8)).to(dtype)
    out = out0.clone()
    by_class, by_method = torch.zeros(2, 8, dtype=dtype), torch.zeros(2, 12, dtype=dtype)
    k(a, b, out, by_class, by_method)
    want = out0.clone()
    want[0:2, 0:4] = a
    want[2:4, 3:7] = b
    assert torch.equal(out, want)
    assert torch.equal(by_class, torch.cat([a, b], 1))
    assert torch.equal(by_method, torch.cat([a, b, a], -1))


def test_assemble_list_form_keywords_and_parallel(native):
    @pypto.jit
    def k(a: ANY, b: ANY, out: ANY, out2: ANY):
        pypto.set_vec_tile_shapes(8, 16)
        pypto.assemble([(a, [0, 0]), (b, [2, 3]), (a, [3, 4])], out)
        pypto.assemble(input=b, offsets=[1, 1], out=out2, parallel=True)
        pypto.assemble([(a, [0, 4])], out=out2)

    a = torch.arange(8, dtype=torch.float32).reshape(2, 4)
    b = -torch.arange(8, dtype=torch.float32).reshape(2, 4) - 1
    out, out2 = torch.full((5, 8), 7.0), torch.full((4, 8), 5.0)
    k(a, b, out, out2)
    want = torch.full((5, 8), 7.0)
    want[0:2, 0:4] = a
    want[2:4, 3:7] = b
    want[3:5, 4:8] = a  # overlapping b's last row: the later item wins
    assert torch.equal(out, want)
    want2 = torch.full((4, 8), 5.0)
    want2[1:3, 1:5] = b
    want2[0:2, 4:8] = a
    assert torch.equal(out2, want2)


def test_assemble_forms_are_checked():
    def trace(body):
        @pypto.jit
        def k(a: ANY, out: ANY):
            body(a, out)
        k(torch.zeros(2, 4), torch.zeros(4, 4))

    with pytest.raises(TypeError, match=r"item 1 of the list must be a \(tensor, offsets\) pair"):
        trace(lambda a, out: pypto.assemble([(a, [0, 0]), a], out))
    with pytest.raises(TypeError, match=r"parallel must be a bool"):
        trace(lambda a, out: pypto.assemble(a, [0, 0], out, parallel=1))
    with pytest.raises(ValueError, match=r"item 0: src \[2, 4\] at offsets \[3, 0\] does not fit"):
        trace(lambda a, out: pypto.assemble([(a, [3, 0])], out))


def test_tensor_assemble_checks_the_region():
    @pypto.jit
    def k(a: ANY, out: ANY):
        out.assemble(a, [3, 0])

    with pytest.raises(ValueError, match="does not fit in dst"):
        k(torch.zeros(2, 4), torch.zeros(4, 4))


# pad -----------------------------------------------------------------------------

PAD_CASES = [((0, 1), (4, 6)), ((0, 3, 0, 2), (6, 8)), ((2, 1), (4, 8)),
             ((1, 0, 3, 1), (8, 6))]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16,
                                   torch.int32, torch.int8])
def test_pad_constant_as_torch(native, dtype):
    x = torch.randint(-9, 10, (4, 5)).to(dtype)
    value = -7 if not dtype.is_floating_point else 2.5
    outs = run([lambda t, p=p: pypto.pad(t, p, value=value) for p, _ in PAD_CASES],
               [x], [s for _, s in PAD_CASES], dtype, tile=(8, 16))
    for (p, _), got in zip(PAD_CASES, outs):
        assert torch.equal(got, torch.nn.functional.pad(x, p, value=value)), p


def test_pad_rank_1_and_4_with_inf(native):
    x1 = torch.randn(5)
    x4 = torch.randn(1, 1, 2, 2)
    got1, = run([lambda t: pypto.pad(t, [0, 3], "constant", float("-inf"))], [x1], [(8,)],
                torch.float32, tile=(16,))
    got4, = run([lambda t: pypto.pad(t, (0, 1, 0, 1))], [x4], [(1, 1, 3, 3)], torch.float32,
                tile=(1, 1, 4, 4))
    assert torch.equal(got1, torch.nn.functional.pad(x1, (0, 3), value=float("-inf")))
    assert torch.equal(got4, torch.nn.functional.pad(x4, (0, 1, 0, 1)))


def test_pad_errors():
    def kernel(p, mode="constant", value=0):
        def k(x: ANY, out: ANY):
            out[:] = pypto.pad(x, p, mode, value)
        return pypto.jit(k)

    x, out = torch.zeros(4, 4, dtype=torch.int32), torch.zeros(4, 5, dtype=torch.int32)
    with pytest.raises(pypto.NotYetImplementedError, match="mode 'reflect'"):
        kernel((0, 1), "reflect")(x, out)
    with pytest.raises(ValueError, match="mode 'wrap' is not one of"):
        kernel((0, 1), "wrap")(x, out)
    with pytest.raises(ValueError, match="value -inf must be an int for DT_INT32"):
        kernel((0, 1), value=float("-inf"))(x, out)
    with pytest.raises(ValueError, match="negative size"):
        kernel((0, -1))(x, out)
    with pytest.raises(ValueError, match="even length"):
        kernel((0, 1, 1))(x, out)


# interleave, deinterleave --------------------------------------------------------

def _interleave_reference(a, b):
    stream = torch.stack([a, b], -1).flatten(-2)
    n = a.shape[-1]
    return stream[..., :n], stream[..., n:]


def _deinterleave_reference(stream):
    return stream[..., 0::2], stream[..., 1::2]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16,
                                   torch.int32, torch.int8])
def test_interleave_deinterleave_as_documented(native, dtype):
    a = torch.randint(-100, 100, (3, 8)).to(dtype)
    b = torch.randint(-100, 100, (3, 8)).to(dtype)
    s = torch.randint(-100, 100, (3, 16)).to(dtype)
    outs = run([lambda x, y, z: pypto.interleave(x, y)[0],
                lambda x, y, z: pypto.interleave(x, y)[1],
                lambda x, y, z: pypto.deinterleave(x, y)[0],
                lambda x, y, z: pypto.deinterleave(x, y)[1],
                lambda x, y, z: pypto.deinterleave(z)[0],
                lambda x, y, z: pypto.deinterleave(z)[1]],
               [a, b, s], [(3, 8)] * 6, dtype, tile=(4, 32, 32))
    wants = (_interleave_reference(a, b) + _deinterleave_reference(torch.cat([a, b], -1))
             + _deinterleave_reference(s))
    for got, want in zip(outs, wants):
        assert torch.equal(got, want)


def test_interleave_documented_example_and_round_trip(native):
    @pypto.jit
    def k(a: ANY, b: ANY, o0: ANY, o1: ANY, back0: ANY, back1: ANY):
        pypto.set_vec_tile_shapes(4, 16)
        x0, x1 = pypto.interleave(a, b)
        o0[:] = x0
        o1[:] = x1
        y0, y1 = pypto.deinterleave(x0, x1)
        back0[:] = y0
        back1[:] = y1

    a = torch.arange(8.0).reshape(2, 4)
    b = a + 10
    o0, o1, back0, back1 = (torch.zeros(2, 4) for _ in range(4))
    k(a, b, o0, o1, back0, back1)
    assert torch.equal(o0, torch.tensor([[0.0, 10, 1, 11], [4, 14, 5, 15]]))
    assert torch.equal(o1, torch.tensor([[2.0, 12, 3, 13], [6, 16, 7, 17]]))
    assert torch.equal(back0, a) and torch.equal(back1, b)


@pytest.mark.parametrize("shape", [(6,), (2, 3, 4), (2, 2, 3, 4)])
def test_interleave_deinterleave_ranks_1_to_4(native, shape):
    a, b = torch.randn(shape), torch.randn(shape)
    half = shape[:-1] + (shape[-1] // 2,)
    tile = (2, 4, 8, 16)[-len(shape):]
    outs = run([lambda x, y: pypto.interleave(x, y)[0], lambda x, y: pypto.interleave(x, y)[1],
                lambda x, y: pypto.deinterleave(x)[0], lambda x, y: pypto.deinterleave(x)[1]],
               [a, b], [shape, shape, half, half], torch.float32, tile=tile)
    wants = _interleave_reference(a, b) + _deinterleave_reference(a)
    for got, want in zip(outs, wants):
        assert torch.equal(got, want)


def test_interleave_errors():
    def kernel(fn):
        def k(x: ANY, y: ANY, out: ANY):
            out[:] = fn(x, y)[0]
        return pypto.jit(k)

    with pytest.raises(ValueError, match="must be a static even size"):
        kernel(pypto.interleave)(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2, 3))
    with pytest.raises(ValueError, match="equal shapes and dtypes"):
        kernel(pypto.deinterleave)(torch.zeros(2, 4), torch.zeros(3, 4), torch.zeros(2, 4))
    with pytest.raises(TypeError, match="dtype DT_INT64"):
        kernel(pypto.interleave)(torch.zeros(2, 4, dtype=torch.int64),
                                 torch.zeros(2, 4, dtype=torch.int64),
                                 torch.zeros(2, 4, dtype=torch.int64))


# quantize, dequantize ------------------------------------------------------------

def _quant_inputs():
    """Values whose products and sums are exact in FP32 (quarters, powers of
    two, halves), so that ties (x.5) land exactly on them."""
    x = torch.randint(-400, 400, (3, 8)).float() / 4
    row_scale = 2.0 ** torch.randint(-2, 3, (3,)).float()
    col_scale = 2.0 ** torch.randint(-2, 3, (8,)).float()
    row_zp = torch.randint(-20, 200, (3,)).float() / 2
    col_zp = torch.randint(-20, 200, (8,)).float() / 2
    return x, row_scale, col_scale, row_zp, col_zp


def test_quantize_as_documented_formula(native):
    x, rs, cs, rz, cz = _quant_inputs()
    x[0, :4] = torch.tensor([2.5, -2.5, 3.5, 1000.0])  # ties to even; saturation
    rs[0] = 1.0
    outs = [torch.zeros(3, 8, dtype=torch.int8), torch.zeros(3, 8, dtype=torch.int8),
            torch.zeros(3, 8, dtype=torch.uint8), torch.zeros(3, 8, dtype=torch.uint8)]

    @pypto.jit
    def k(x: ANY, rs: ANY, cs: ANY, rz: ANY, cz: ANY, o0: ANY, o1: ANY, o2: ANY, o3: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        o0[:] = pypto.quantize(x, rs, pypto.DT_INT8, -1)
        o1[:] = pypto.quantize(x, cs, pypto.DT_INT8, 0, None)
        o2[:] = pypto.quantize(x, rs, pypto.DT_UINT8, 1, rz)
        o3[:] = pypto.quantize(x, cs, pypto.DT_UINT8, -2, zero_points=cz)

    k(x, rs, cs, rz, cz, *outs)
    wants = [(x * rs[:, None]).round().clamp(-128, 127).to(torch.int8),
             (x * cs[None, :]).round().clamp(-128, 127).to(torch.int8),
             (x * rs[:, None] + rz[:, None]).round().clamp(0, 255).to(torch.uint8),
             (x * cs[None, :] + cz[None, :]).round().clamp(0, 255).to(torch.uint8)]
    for got, want in zip(outs, wants):
        assert torch.equal(got, want)
    assert outs[0][0, :4].tolist() == [2, -2, 4, 127]


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16])
def test_dequantize_as_documented(native, dtype):
    lo, hi = (-128, 128) if dtype == torch.int8 else (0, 256) if dtype == torch.uint8 \
        else (-30000, 30000)
    x = torch.randint(lo, hi, (2, 3, 8)).to(dtype)
    rs, cs = torch.randn(2, 3), torch.randn(2, 8)
    rz, cz = torch.randn(2, 3) * 10, torch.randn(2, 8) * 10

    @pypto.jit
    def k(x: ANY, rs: ANY, cs: ANY, rz: ANY, cz: ANY, o0: ANY, o1: ANY, o2: ANY):
        pypto.set_vec_tile_shapes(2, 4, 8)
        o0[:] = pypto.dequantize(x, rs, pypto.DT_FP32, -1)
        o1[:] = pypto.dequantize(x, rs, pypto.DT_FP32, 2, rz)
        o2[:] = pypto.dequantize(x, cs, pypto.DT_FP32, -2, cz)

    outs = [torch.zeros(2, 3, 8) for _ in range(3)]
    k(x, rs, cs, rz, cz, *outs)
    xf = x.float()
    wants = [xf * rs[..., None], (xf + rz[..., None]) * rs[..., None],
             (xf + cz[:, None, :]) * cs[:, None, :]]
    for got, want in zip(outs, wants):
        assert torch.equal(got, want)


def test_quantize_errors():
    def kernel(fn, otype, axis, with_zp):
        def k(x: ANY, s: ANY, z: ANY, out: ANY):
            out[:] = fn(x, s, otype, axis, z if with_zp else None)
        return pypto.jit(k)

    x, s = torch.zeros(3, 8), torch.ones(3)
    out8 = torch.zeros(3, 8, dtype=torch.int8)
    with pytest.raises(ValueError, match="'scale' has shape \\[3\\]; for axis -2"):
        kernel(pypto.quantize, pypto.DT_INT8, -2, False)(x, s, s, out8)
    with pytest.raises(ValueError, match="axis 5 must name one of the last two dims"):
        kernel(pypto.quantize, pypto.DT_INT8, 5, False)(x, s, s, out8)
    with pytest.raises(ValueError, match="DT_UINT8 \\(asymmetric\\) needs them"):
        kernel(pypto.quantize, pypto.DT_UINT8, -1, False)(x, s, s, out8.to(torch.uint8))
    with pytest.raises(TypeError, match="otype DT_INT32 must be DT_INT8"):
        kernel(pypto.quantize, pypto.DT_INT32, -1, False)(x, s, s, out8.int())
    with pytest.raises(TypeError, match="dequantize: 'input' has dtype DT_FP32"):
        kernel(pypto.dequantize, pypto.DT_FP32, -1, False)(x, s, s, x)


# pypto.experimental.online_softmax, online_softmax_update ------------------------

def test_online_softmax_block_statistics(native):
    @pypto.jit
    def k(scores: ANY, e: ANY, mx: ANY, sm: ANY):
        pypto.set_vec_tile_shapes(8, 16)
        e_bf16, column_max, column_sum = pypto.experimental.online_softmax(scores, 0.125)
        e[:] = e_bf16
        mx[:] = column_max
        sm[:] = column_sum

    scores = torch.randn(16, 24) * 8
    e, mx, sm = torch.zeros(16, 24, dtype=torch.bfloat16), torch.zeros(1, 24), torch.zeros(1, 24)
    k(scores, e, mx, sm)
    s = scores * 0.125
    want_max = s.amax(0, keepdim=True)
    want_exp = (s - want_max).exp()
    assert torch.equal(mx, want_max)
    torch.testing.assert_close(sm, want_exp.sum(0, keepdim=True), rtol=2e-6, atol=0)
    torch.testing.assert_close(e.float(), want_exp.bfloat16().float(), rtol=8e-3, atol=0)


def test_online_softmax_update_merges_blocks_into_attention(native):
    """Two key blocks merged with online_softmax_update, then normalised,
    give softmax(scores * scale, dim 0) applied to the values (torch)."""
    @pypto.jit
    def k(s0: ANY, s1: ANY, v0: ANY, v1: ANY, out: ANY, total: ANY, m: ANY):
        pypto.set_vec_tile_shapes(16, 16)
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        e0, m0, l0 = pypto.experimental.online_softmax(s0, 0.5)
        e1, m1, l1 = pypto.experimental.online_softmax(s1, 0.5)
        o0 = pypto.matmul(v0, pypto.cast(e0, pypto.DT_FP32))
        o1 = pypto.matmul(v1, pypto.cast(e1, pypto.DT_FP32))
        um, ul, uo = pypto.experimental.online_softmax_update(m0, l0, o0, m1, l1, o1)
        out[:] = uo / ul
        total[:] = ul
        m[:] = um

    k_len, q_len, head_dim = 8, 16, 4
    s0, s1 = torch.randn(k_len, q_len) * 4, torch.randn(k_len, q_len) * 4 + 3
    v0, v1 = torch.randn(head_dim, k_len), torch.randn(head_dim, k_len)
    out, total, m = torch.zeros(head_dim, q_len), torch.zeros(1, q_len), torch.zeros(1, q_len)
    k(s0, s1, v0, v1, out, total, m)
    s = torch.cat([s0, s1]).double() * 0.5
    assert torch.equal(m, s.amax(0, keepdim=True).float())
    p = torch.softmax(s, 0)
    want = torch.cat([v0, v1], 1).double() @ p
    torch.testing.assert_close(out.double(), want, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(total.double(), (s - s.amax(0)).exp().sum(0, keepdim=True),
                               rtol=1e-5, atol=0)


def test_online_softmax_update_formula(native):
    pm, cm = torch.randn(1, 8) * 3, torch.randn(1, 8) * 3
    ps, cs = torch.rand(1, 8) + 1, torch.rand(1, 8) + 1
    po, co = torch.randn(4, 8), torch.randn(4, 8)

    @pypto.jit
    def k(pm: ANY, ps: ANY, po: ANY, cm: ANY, cs: ANY, co: ANY, m: ANY, s: ANY, o: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        um, us, uo = pypto.experimental.online_softmax_update(pm, ps, po, cm, cs, co)
        m[:] = um
        s[:] = us
        o[:] = uo

    m, s, o = torch.zeros(1, 8), torch.zeros(1, 8), torch.zeros(4, 8)
    k(pm, ps, po, cm, cs, co, m, s, o)
    want_m = torch.maximum(pm, cm)
    a, b = (pm - want_m).exp(), (cm - want_m).exp()
    assert torch.equal(m, want_m)
    torch.testing.assert_close(s, a * ps + b * cs, rtol=2e-6, atol=1e-7)
    torch.testing.assert_close(o, a * po + b * co, rtol=2e-6, atol=1e-6)


def test_online_softmax_errors():
    @pypto.jit
    def k(x: ANY, out: ANY):
        out[:] = pypto.experimental.online_softmax(x, 1.0)[1]

    with pytest.raises(TypeError, match="'scores' has dtype DT_FP16"):
        k(torch.zeros(4, 8, dtype=torch.float16), torch.zeros(1, 8))
    with pytest.raises(ValueError, match="'scores' has shape \\[8\\]; it must have 2 dims"):
        k(torch.zeros(8), torch.zeros(1, 8))


def test_quantize_rank_1_takes_a_rank_0_scale(native):
    @pypto.jit
    def k(x: ANY, s: ANY, z: ANY, q: ANY, back: ANY):
        pypto.set_vec_tile_shapes(16)
        y = pypto.quantize(x, s, pypto.DT_UINT8, -1, z)
        q[:] = y
        back[:] = pypto.dequantize(pypto.cast(y, pypto.DT_INT16), s, pypto.DT_FP32, 0, z)

    x = torch.randint(-40, 40, (12,)).float() / 4
    s, z = torch.tensor(2.0), torch.tensor(20.5)
    q, back = torch.zeros(12, dtype=torch.uint8), torch.zeros(12)
    k(x, s, z, q, back)
    want = (x * 2 + 20.5).round().clamp(0, 255)
    assert torch.equal(q, want.to(torch.uint8))
    assert torch.equal(back, (want + 20.5) * 2)
