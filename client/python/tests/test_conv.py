"""pypto.conv (conv.py): 1-D and 2-D convolutions, plain and transposed,
with strides, paddings, dilations, groups and a bias, against
torch.nn.functional; a DYNAMIC batch dim compiling once; and the errors
for bad arguments."""

import pytest
import torch
import torch.nn.functional as F

import many_outputs
import pypto

ANY = pypto.Tensor[...]
DTYPES = {torch.float32: pypto.DT_FP32, torch.float16: pypto.DT_FP16,
          torch.bfloat16: pypto.DT_BF16}
# FP32: the FP32 sums of up to 72 products; FP16/BF16: one rounding of the
# result (operands are exact in both), relative to its magnitude.
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float16: dict(rtol=2e-3, atol=2e-3),
       torch.bfloat16: dict(rtol=1.6e-2, atol=1.6e-2)}


def _ref(fn, x, w, bias=None, **kw):
    """torch's result in FP64 from the operands as the kernel sees them."""
    b = None if bias is None else bias.double()
    return fn(x.double(), w.double(), b, **kw)


# (weight shape, strides, paddings, dilations, groups, bias) over x [2, 4, 9, 8].
CASES_2D = [
    ((6, 4, 3, 3), [1, 1], [0, 0], [1, 1], 1, False),
    ((6, 4, 3, 3), [2, 2], [1, 1], [1, 1], 1, True),
    ((6, 2, 3, 3), [1, 2], [2, 1], [2, 2], 2, False),     # groups 2, dilation 2
    ((4, 1, 3, 3), [2, 2], [1, 1], [1, 1], 4, True),      # depthwise
    ((5, 4, 1, 1), [1, 1], [0, 0], [1, 1], 1, False),     # 1x1
    ((3, 4, 2, 3), [2, 1], [1, 0], [1, 2], 1, True),      # rectangular kernel
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_conv2d_as_torch(native, dtype):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 4, 9, 8, generator=g).to(dtype)
    ws = [torch.randn(shape, generator=g).to(dtype) for shape, *_ in CASES_2D]
    bias = torch.randn(6, generator=g)
    fns, wants = [], []
    for i, (shape, s, p, d, groups, with_bias) in enumerate(CASES_2D):
        b = bias[:shape[0]].contiguous() if with_bias else None

        def fn(x, *rest, i=i, s=s, p=p, d=d, groups=groups, with_bias=with_bias):
            ext = {"bias_tensor": rest[len(CASES_2D) + i]} if with_bias else None
            return pypto.conv(x, rest[i], DTYPES[dtype], s, p, d, groups=groups,
                              extend_params=ext)
        fns.append(fn)
        wants.append(_ref(F.conv2d, x, ws[i], b, stride=s, padding=p, dilation=d,
                          groups=groups))
    biases = [bias[:shape[0]].contiguous() for shape, *_ in CASES_2D]
    outs = [torch.zeros(w.shape, dtype=dtype) for w in wants]
    many_outputs.run_many(fns, [x] + ws + biases, outs, (8, 32))
    for got, want in zip(outs, wants):
        torch.testing.assert_close(got.double(), want.to(dtype).double(), **TOL[dtype])


def test_conv1d_as_torch_with_fp32_accumulation(native):
    g = torch.Generator().manual_seed(2)
    x = torch.randn(3, 6, 17, generator=g).half()
    w1, w2, w3 = (torch.randn(s, generator=g).half() for s in ((8, 6, 5), (4, 3, 3), (6, 1, 4)))
    bias = torch.randn(1, 8, generator=g).half()
    fns = [lambda x, a, b, c, bias: pypto.conv(x, a, pypto.DT_FP32, [2], [2], [1],
                                               extend_params={"bias_tensor": bias}),
           lambda x, a, b, c, bias: pypto.conv(x, b, pypto.DT_FP32, [1], [3], [2], groups=2),
           lambda x, a, b, c, bias: pypto.conv(x, c, pypto.DT_FP16, 3, 0, 1, groups=6)]
    wants = [_ref(F.conv1d, x, w1, bias[0], stride=2, padding=2),
             _ref(F.conv1d, x, w2, stride=1, padding=3, dilation=2, groups=2),
             _ref(F.conv1d, x, w3, stride=3, groups=6)]
    outs = [torch.zeros(wants[0].shape), torch.zeros(wants[1].shape),
            torch.zeros(wants[2].shape, dtype=torch.float16)]
    many_outputs.run_many(fns, [x, w1, w2, w3, bias], outs, (8, 32))
    # FP16 operands, FP32 accumulation and result: FP32's tolerance.
    torch.testing.assert_close(outs[0].double(), wants[0], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(outs[1].double(), wants[1], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(outs[2].double(), wants[2].half().double(), **TOL[torch.float16])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_conv_transposed_as_torch(native, dtype):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 4, 5, 6, generator=g).to(dtype)
    w1 = torch.randn(4, 3, 3, 3, generator=g).to(dtype)
    w2 = torch.randn(4, 2, 3, 2, generator=g).to(dtype)
    x1 = torch.randn(2, 3, 7, generator=g).to(dtype)
    w3 = torch.randn(3, 5, 2, generator=g).to(dtype)
    w4 = torch.randn(4, 1, 3, 3, generator=g).to(dtype)
    bias = torch.randn(3, generator=g)
    fns = [lambda x, a, b, x1, c, bias, d: pypto.conv(
               x, a, DTYPES[dtype], [2, 2], [1, 1], [1, 1], transposed=True,
               output_paddings=[1, 0], extend_params={"bias_tensor": bias}),
           lambda x, a, b, x1, c, bias, d: pypto.conv(
               x, b, DTYPES[dtype], [2, 1], [1, 2], [2, 2], groups=2, transposed=True),
           lambda x, a, b, x1, c, bias, d: pypto.conv(
               x1, c, DTYPES[dtype], [3], [2], [1], transposed=True, output_paddings=[2]),
           lambda x, a, b, x1, c, bias, d: pypto.conv(     # depthwise
               x, d, DTYPES[dtype], [2, 2], [1, 1], [1, 1], groups=4, transposed=True)]
    wants = [_ref(F.conv_transpose2d, x, w1, bias, stride=2, padding=1, output_padding=(1, 0)),
             _ref(F.conv_transpose2d, x, w2, stride=(2, 1), padding=(1, 2), groups=2,
                  dilation=2),
             _ref(F.conv_transpose1d, x1, w3, stride=3, padding=2, output_padding=2),
             _ref(F.conv_transpose2d, x, w4, stride=2, padding=1, groups=4)]
    outs = [torch.zeros(w.shape, dtype=dtype) for w in wants]
    many_outputs.run_many(fns, [x, w1, w2, x1, w3, bias, w4], outs, (8, 32))
    for got, want in zip(outs, wants):
        torch.testing.assert_close(got.double(), want.to(dtype).double(), **TOL[dtype])


def test_conv_over_a_dynamic_batch_compiles_once(native):
    D = pypto.DYNAMIC

    @pypto.jit
    def kern(x: pypto.Tensor([D, 4, 9, 7], pypto.DT_FP32),
             w: pypto.Tensor([6, 2, 3, 3], pypto.DT_FP32), b: pypto.Tensor([6], pypto.DT_FP32),
             out: pypto.Tensor([D, 6, 5, 4], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([8, 8], [8, 16], [16, 16])
        out[:] = pypto.conv(x, w, pypto.DT_FP32, [2, 2], [1, 1], [1, 1], groups=2,
                            extend_params={"bias_tensor": b})
        # The conv's own cube tile ends with it.
        assert pypto.get_cube_tile_shapes() == ([8, 8], [8, 16], [16, 16], False)

    g = torch.Generator().manual_seed(4)
    w, b = torch.randn(6, 2, 3, 3, generator=g), torch.randn(6, generator=g)
    for n in (1, 3, 8):
        x = torch.randn(n, 4, 9, 7, generator=g)
        out = torch.zeros(n, 6, 5, 4)
        kern(x, w, b, out)
        want = _ref(F.conv2d, x, w, b, stride=2, padding=1, groups=2)
        torch.testing.assert_close(out.double(), want, rtol=1e-5, atol=1e-5)
    assert pypto.compile_stats()["compiles"] == 1, pypto.compile_stats()


def _traced(x_shape, w_shape, *args, x_dtype=torch.float32, w_dtype=torch.float32,
            bias_shape=None, **kw):
    """Traces a conv of zeros of these shapes (the error comes from tracing)."""
    extend_params = kw.pop("extend_params", None)

    @pypto.jit
    def kern(x: ANY, w: ANY, b: ANY, out: ANY):
        ext = {"bias_tensor": b} if bias_shape else extend_params
        out[:] = pypto.conv(x, w, *args, extend_params=ext, **kw)

    kern(torch.zeros(x_shape, dtype=x_dtype), torch.zeros(w_shape, dtype=w_dtype),
         torch.zeros(bias_shape or [1]), torch.zeros(1, 1, 1, 1))


FP32 = pypto.DT_FP32


@pytest.mark.parametrize("args, kw, error, match", [
    (((1, 3, 8, 8), (4, 2, 3, 3), FP32, [1, 1], [0, 0], [1, 1]), {}, ValueError,
     r"channel mismatch: 'weight' \[4, 2, 3, 3\] \(\[C_out, C_in / groups, ...\]\) has "
     r"C_in / groups 2, 'input' \[1, 3, 8, 8\] has 3 channels in 1 group"),
    (((1, 3, 8, 8), (4, 2, 3, 3), FP32, [1, 1], [0, 0], [1, 1]), dict(transposed=True),
     ValueError, r"channel mismatch: 'weight' \[4, 2, 3, 3\] \(transposed: "),
    (((1, 3, 8, 8), (4, 3, 3), FP32, [1, 1], [0, 0], [1, 1]), {}, ValueError,
     r"'weight' \[4, 3, 3\] must have 4 dims, as 'input' \[1, 3, 8, 8\]"),
    (((8, 8), (4, 8), FP32, [1], [0], [1]), {}, ValueError,
     r"'input' \[8, 8\] must be \[N, C, L\] \(1-D\) or \[N, C, H, W\] \(2-D; "),
    (((1, 3, 8, 8), (4, 3, 3, 3), FP32, [1], [0, 0], [1, 1]), {}, ValueError,
     r"strides \[1\] must be 2 int\(s\), one per spatial dim"),
    (((1, 3, 8, 8), (4, 3, 3, 3), FP32, [0, 1], [0, 0], [1, 1]), {}, ValueError,
     r"strides \[0, 1\] must be 1 or more"),
    (((1, 3, 8, 8), (4, 3, 3, 3), FP32, [1, 1], [-1, 0], [1, 1]), {}, ValueError,
     r"paddings \[-1, 0\] must be 0 or more"),
    (((1, 4, 8, 8), (4, 2, 3, 3), FP32, [1, 1], [0, 0], [1, 1]), dict(groups=3), ValueError,
     r"'input' has 4 channels, not a multiple of groups \(3\)"),
    (((1, 3, 8, 8), (4, 3, 3, 3), FP32, [1, 1], [0, 0], [1, 1]),
     dict(output_paddings=[1, 1]), ValueError,
     r"output_paddings \[1, 1\] apply to a transposed conv only"),
    (((1, 3, 8, 8), (3, 4, 3, 3), FP32, [2, 2], [0, 0], [1, 1]),
     dict(transposed=True, output_paddings=[2, 0]), ValueError,
     r"output_paddings\[0\] = 2 must be smaller than strides\[0\] or dilations\[0\] \(2\)"),
    (((1, 3, 2, 8), (4, 3, 3, 3), FP32, [1, 1], [0, 0], [1, 1]), {}, ValueError,
     r"the output's spatial dim 0 would have size 0"),
    (((1, 3, 8, 8), (4, 3, 3, 3), FP32, [1, 1], [0, 0], [1, 1]),
     dict(w_dtype=torch.float16), TypeError,
     r"'input' has dtype DT_FP32 and 'weight' DT_FP16; they must be equal"),
    (((1, 3, 8, 8), (4, 3, 3, 3), pypto.DT_INT32, [1, 1], [0, 0], [1, 1]), {}, TypeError,
     r"out_dtype DT_INT32 must be DT_FP32, DT_FP16 or DT_BF16"),
    (((1, 3, 8, 8), (4, 3, 3, 3), FP32, [1, 1], [0, 0], [1, 1]), dict(bias_shape=[3]),
     ValueError, r"extend_params\['bias_tensor'\] \[3\] must be \[4\] or \[1, 4\]"),
    (((1, 3, 8, 8), (4, 3, 3, 3), FP32, [1, 1], [0, 0], [1, 1]),
     dict(extend_params={"scale": 2.0}), ValueError,
     r"extend_params key 'scale' is not supported"),
])
def test_conv_errors_name_the_argument(args, kw, error, match):
    with pytest.raises(error, match=r"pypto.conv: " + match):
        _traced(*args, **kw)



def test_conv_of_a_larger_feature_map_and_many_groups(native):
    """Stride-2 convs of [8, 64, 32, 32], depthwise and in 32 groups of 2
    channels (more tap views than one concat takes): their own ops' tiles
    keep the task graph small (tiny tiles of a phase split would not
    compile)."""
    g = torch.Generator().manual_seed(5)
    x = torch.randn(8, 64, 32, 32, generator=g)
    w1, w2 = torch.randn(64, 1, 3, 3, generator=g), torch.randn(64, 2, 3, 3, generator=g)

    @pypto.jit
    def kern(x: ANY, w1: ANY, w2: ANY, out1: ANY, out2: ANY):
        out1[:] = pypto.conv(x, w1, pypto.DT_FP32, [2, 2], [1, 1], [1, 1], groups=64)
        out2[:] = pypto.conv(x, w2, pypto.DT_FP32, [2, 2], [1, 1], [1, 1], groups=32)

    out1, out2 = torch.zeros(8, 64, 16, 16), torch.zeros(8, 64, 16, 16)
    kern(x, w1, w2, out1, out2)
    torch.testing.assert_close(out1.double(), _ref(F.conv2d, x, w1, stride=2, padding=1,
                                                   groups=64), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out2.double(), _ref(F.conv2d, x, w2, stride=2, padding=1,
                                                   groups=32), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_depthwise_conv_tiles_fit_the_ub_in_half_types(native, dtype):
    """Depthwise convs of [8, 64, 32, 32] in FP16/BF16 with a bias and a
    result of the operands' dtype: the conv's own ops at their full tile
    size (casts beside the multiply-adds) still fit a block's UB."""
    g = torch.Generator().manual_seed(7)
    x = torch.randn(8, 64, 32, 32, generator=g).to(dtype)
    w = torch.randn(64, 1, 3, 3, generator=g).to(dtype)
    b = torch.randn(64, generator=g)
    fns = [lambda x, w, b: pypto.conv(x, w, DTYPES[dtype], [1, 1], [1, 1], [1, 1], groups=64,
                                      extend_params={"bias_tensor": b}),
           lambda x, w, b: pypto.conv(x, w, DTYPES[dtype], [2, 2], [1, 1], [1, 1], groups=64,
                                      extend_params={"bias_tensor": b})]
    wants = [_ref(F.conv2d, x, w, b, stride=s, padding=1, groups=64) for s in (1, 2)]
    outs = [torch.zeros(want.shape, dtype=dtype) for want in wants]
    many_outputs.run_many(fns, [x, w, b], outs, (8, 32))
    for got, want in zip(outs, wants):
        torch.testing.assert_close(got.double(), want.to(dtype).double(), **TOL[dtype])


# Depthwise convs (groups == C_in) of x [N, C, H, W]: (x shape, weight
# shape, strides, paddings, dilations, bias): MobileNet's 3x3 at strides 1
# and 2, dilation, channel multiplier 2, odd sizes, more padding than the
# kernel reaches, rectangular kernels and strides.
CASES_DEPTHWISE = [
    ((2, 8, 12, 12), (8, 1, 3, 3), [1, 1], [1, 1], [1, 1], True),
    ((2, 8, 12, 12), (8, 1, 3, 3), [2, 2], [1, 1], [1, 1], False),
    ((1, 5, 13, 11), (5, 1, 3, 3), [2, 2], [1, 1], [1, 1], True),      # odd sizes
    ((2, 6, 11, 9), (6, 1, 3, 3), [1, 1], [2, 2], [2, 2], False),      # dilation 2
    ((2, 3, 9, 10), (6, 1, 3, 3), [1, 2], [1, 0], [1, 1], True),       # multiplier 2
    ((1, 4, 7, 9), (12, 1, 2, 5), [3, 2], [3, 2], [2, 1], True),       # multiplier 3
    ((2, 16, 5, 5), (16, 1, 5, 5), [1, 1], [2, 2], [1, 1], False),     # 5x5, tiny maps
    ((1, 3, 6, 6), (3, 1, 1, 1), [1, 1], [0, 0], [1, 1], True),        # 1x1
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_depthwise_conv_as_torch(native, dtype):
    """Depthwise convs (the channels-last stencil) with strides, dilations,
    multipliers, odd sizes and a bias, accumulated in FP32."""
    g = torch.Generator().manual_seed(13)
    xs = [torch.randn(c[0], generator=g).to(dtype) for c in CASES_DEPTHWISE]
    ws = [torch.randn(c[1], generator=g).to(dtype) for c in CASES_DEPTHWISE]
    bs = [torch.randn(c[1][0], generator=g) for c in CASES_DEPTHWISE]
    n = len(CASES_DEPTHWISE)
    fns, wants = [], []
    for i, (xshape, _, s, p, d, with_bias) in enumerate(CASES_DEPTHWISE):
        def fn(*t, i=i, s=s, p=p, d=d, groups=xshape[1], with_bias=with_bias):
            ext = {"bias_tensor": t[2 * n + i]} if with_bias else None
            return pypto.conv(t[i], t[n + i], DTYPES[dtype], s, p, d, groups=groups,
                              extend_params=ext)
        fns.append(fn)
        wants.append(_ref(F.conv2d, xs[i], ws[i], bs[i] if with_bias else None, stride=s,
                          padding=p, dilation=d, groups=xshape[1]))
    outs = [torch.zeros(w.shape, dtype=dtype) for w in wants]
    many_outputs.run_many(fns, xs + ws + bs, outs, (8, 32))
    for got, want in zip(outs, wants):
        torch.testing.assert_close(got.double(), want.to(dtype).double(), **TOL[dtype])


def test_depthwise_conv_of_a_feature_map_wider_than_a_task(native):
    """A depthwise conv whose output rows (channels-last) span several tasks'
    tiles, in FP16 with an FP32 result; and the same over a DYNAMIC batch
    (the composition: one compile for every N)."""
    D = pypto.DYNAMIC

    def conv(x, w, b):
        return pypto.conv(x, w, pypto.DT_FP32, [2, 2], [1, 1], [1, 1], groups=320,
                          extend_params={"bias_tensor": b})

    @pypto.jit
    def kern(x: ANY, w: ANY, b: ANY, out: ANY):
        out[:] = conv(x, w, b)

    @pypto.jit
    def kern_dynamic(x: pypto.Tensor([D, 320, 30, 30], pypto.DT_FP16),
                     w: pypto.Tensor([320, 1, 3, 3], pypto.DT_FP16),
                     b: pypto.Tensor([320], pypto.DT_FP32),
                     out: pypto.Tensor([D, 320, 15, 15], pypto.DT_FP32)):
        out[:] = conv(x, w, b)

    g = torch.Generator().manual_seed(14)
    w, b = torch.randn(320, 1, 3, 3, generator=g).half(), torch.randn(320, generator=g)
    for k, n in ((kern, 2), (kern_dynamic, 1), (kern_dynamic, 3)):
        x = torch.randn(n, 320, 30, 30, generator=g).half()
        out = torch.zeros(n, 320, 15, 15)
        k(x, w, b, out)
        want = _ref(F.conv2d, x, w, b, stride=2, padding=1, groups=320)
        torch.testing.assert_close(out.double(), want, rtol=1e-5, atol=1e-5)
    assert pypto.compile_stats()["compiles"] == 2, pypto.compile_stats()


def test_conv_runs_eagerly(native):
    """RunMode.EAGER computes each op of the composition at once: the same
    results, nothing compiled."""
    g = torch.Generator().manual_seed(6)
    x = torch.randn(2, 4, 9, 8, generator=g)
    w, wt = torch.randn(6, 2, 3, 3, generator=g), torch.randn(4, 3, 3, 3, generator=g)

    @pypto.jit(runtime_options={"run_mode": pypto.RunMode.EAGER})
    def kern(x: ANY, w: ANY, wt: ANY, out: ANY, out_t: ANY):
        out[:] = pypto.conv(x, w, pypto.DT_FP32, [2, 2], [1, 1], [1, 1], groups=2)
        out_t[:] = pypto.conv(x, wt, pypto.DT_FP32, [2, 2], [1, 1], [1, 1], transposed=True,
                              output_paddings=[1, 1])

    out, out_t = torch.zeros(2, 6, 5, 4), torch.zeros(2, 3, 18, 16)
    kern(x, w, wt, out, out_t)
    assert kern.last_compile.source == "eager"
    torch.testing.assert_close(out.double(), _ref(F.conv2d, x, w, stride=2, padding=1, groups=2),
                               rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out_t.double(), _ref(F.conv_transpose2d, x, wt, stride=2,
                                                    padding=1, output_padding=1),
                               rtol=1e-5, atol=1e-5)


def test_conv_reads_its_im2col_blocks_from_the_input(native):
    """A plain conv is one matmul whose B operand is the input itself, read
    as its im2col matrix (attr "img2col": kernel, strides, paddings,
    dilations): no pad or im2col copy in the graph. Transposed and
    depthwise convs keep their compositions."""
    x, w = torch.zeros(2, 4, 9, 8), torch.zeros(6, 2, 3, 2)

    @pypto.jit
    def kern(x: ANY, w: ANY, out: ANY):
        out[:] = pypto.conv(x, w, pypto.DT_FP32, [2, 1], [1, 2], [2, 1], groups=2)

    ops = kern.trace(x, w, torch.zeros(2, 6, 4, 11)).ops
    matmuls = [op for op in ops if op.kind == "matmul"]
    assert len(matmuls) == 1
    assert list(matmuls[0].attrs["img2col"].ints.values) == [3, 2, 2, 1, 1, 2, 2, 1]
    # One concat: the weight's taps along K (the input is neither padded nor copied).
    kinds = [op.kind for op in ops]
    assert "pad" not in kinds and kinds.count("concat") == 1, kinds


# (x shape, weight shape, strides, paddings, dilations, groups): larger
# than one cube tile in K (several L1 blocks, not a whole number of
# channels each) and in the output's columns (tiles crossing output rows),
# padding past the kernel's reach, strides and dilations together.
CASES_IMG2COL = [
    ((2, 24, 13, 11), (16, 24, 3, 3), [1, 1], [1, 1], [1, 1], 1),
    ((2, 12, 15, 14), (9, 4, 3, 2), [3, 2], [2, 3], [2, 3], 3),
    ((1, 5, 12, 29), (7, 5, 1, 4), [1, 3], [0, 4], [1, 2], 1),
    ((3, 8, 6, 6), (8, 8, 5, 5), [1, 1], [4, 4], [1, 1], 1),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_conv_through_img2col_blocks_as_torch(native, dtype):
    g = torch.Generator().manual_seed(11)
    xs = [torch.randn(c[0], generator=g).to(dtype) for c in CASES_IMG2COL]
    ws = [torch.randn(c[1], generator=g).to(dtype) for c in CASES_IMG2COL]
    fns, wants = [], []
    for i, (_, _, s, p, d, groups) in enumerate(CASES_IMG2COL):
        fns.append(lambda *t, i=i, s=s, p=p, d=d, groups=groups: pypto.conv(
            t[i], t[len(CASES_IMG2COL) + i], pypto.DT_FP32, s, p, d, groups=groups))
        wants.append(_ref(F.conv2d, xs[i], ws[i], stride=s, padding=p, dilation=d,
                          groups=groups))
    outs = [torch.zeros(w.shape) for w in wants]
    many_outputs.run_many(fns, xs + ws, outs, (8, 32))
    for got, want in zip(outs, wants):
        # FP32 accumulation of exact products: FP32's tolerance.
        torch.testing.assert_close(got.double(), want, rtol=1e-5, atol=1e-5)


def test_conv_of_a_channel_view_reads_the_view(native):
    """The input a view of a larger tensor (channels 3.. of 10): the im2col
    blocks read the viewed channels at the view's offset."""
    g = torch.Generator().manual_seed(12)
    x, w = torch.randn(2, 10, 7, 9, generator=g), torch.randn(5, 4, 3, 3, generator=g)

    @pypto.jit
    def kern(x: ANY, w: ANY, out: ANY):
        out[:] = pypto.conv(x[:, 3:7], w, pypto.DT_FP32, [1, 2], [1, 1], [1, 1])

    out = torch.zeros(2, 5, 7, 5)
    kern(x, w, out)
    torch.testing.assert_close(out.double(), _ref(F.conv2d, x[:, 3:7], w, stride=[1, 2],
                                                  padding=1), rtol=1e-5, atol=1e-5)
