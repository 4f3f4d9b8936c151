"""pypto.conv: 1-D and 2-D convolution, plain or transposed: one matmul on
the cube path whose B operand is read from the input as its im2col matrix
(PTO's TIMG2COL), or a composition of the public ops for a transposed or
depthwise conv. (A 3-D conv would take rank-5 tensors; tensors here have at
most 4 dims.)

Layouts (torch's): input [N, C_in, L] or [N, C_in, H, W]; weight
[C_out, C_in / groups, kL(, kW)], or [C_in, C_out / groups, kL(, kW)] when
transposed; the result [N, C_out, *out]. Each spatial dim's output size is
torch's: (L + 2p - d(k - 1) - 1) // s + 1, and transposed
(L - 1)s - 2p + d(k - 1) + output_padding + 1.

How it computes a plain conv (not transposed, not depthwise): the weight's
taps as [groups, C_out / groups, K] (K = taps * C_in / groups, tap-major),
times the input's im2col matrix [N, groups, K, P] (P: the output's spatial
size), one matmul with attr "img2col" (kernel, strides, paddings,
dilations; a 1-D conv is the 2-D one over one row): each cube task
builds its [K block x P block] of the matrix in L1 straight from the input,
zeros for the padding, so neither a padded copy nor the matrix is written
to GM. An input with a valid region smaller than its shape, or a trace
for a target whose code does not map TIMG2COL (the Ascend targets, as
their code generator says: op_table.target_maps; the trace's target is
the builder's compile_target), takes the composition below.

How a depthwise conv computes (groups == C_in, C_out = m * C_in, not
transposed, a static batch dim; _depthwise_rows): a stencil over the input channels-last,
where each tap's weights are one row and no matmul is involved (each
channel's would be [m, taps] @ [taps, P]):
  1. The window the taps read, channels-last: zeros [N, Hw, Ww, C] with the
     input's transpose assembled into them at the padding's offsets (one
     copy; Hw, Ww rounded up to whole strides).
  2. A column stride s splits the window into s column phases, each a copy
     [N, Hw, Ww / s * C]; a row stride is a view of a phase. Each kernel
     tap is then a view [N, Ho, Wo * C] of one phase at its offset.
  3. Each tap's weights (and the bias) as a row [Wo * C]: w[c] repeated
     along the output row, in FP32.
  4. Per output row, the FP32 sum over taps of the tap's view times its
     weight row, plus the bias row, cast to out_dtype: one fused group
     whose task computes a whole output row (up to _DEPTHWISE_ROWS
     elements), its loads dense, so the host code runs all the taps on one
     chunk of the row in registers.
  5. Back to [N, C_out, Ho, Wo] (a transposing copy; with m > 1 the m
     results interleaved along the channels first).
A 1-D conv is the 2-D one over one row. With a DYNAMIC batch dim it takes
the composition below instead: the stencil's tile sizes (whole rows of
C channels) would have a least common multiple too large for the one
compile's probe sizes (lower_symbolic.h).

How the composition computes (transposed convs, plain convs as above, and
depthwise convs with a DYNAMIC batch or an input with a valid region):
  1. A transposed conv is the plain conv, stride 1, of the input with s - 1
     zeros inserted between its elements (a concat with zeros, then a
     reshape), with the kernel flipped and each group's channels swapped,
     and padding d(k - 1) - p (then output_padding more on the right).
  2. Padding: the input is padded with zeros (pypto.pad) or cut (a view) to
     exactly the extent the taps read.
  3. Strides: each strided dim is split into its s phases (a reshape, then a
     view per phase), so every kernel tap (dilation d: offset d * i) reads a
     contiguous view of one phase.
  4. im2col: per group, each tap's view of that group's channels,
     concatenated along the channel dim and reshaped to [N, groups, K, P]
     (K = taps * C_in / groups, P: the output's spatial size; one copy);
     the weight's taps the same way to [groups, C_out / groups, K]; one
     batched pypto.matmul with FP32 accumulation gives
     [N, groups, C_out / groups, P]. A depthwise conv here (groups == C_in
     == C_out) is instead the FP32 sum over taps of each tap's view
     times its per-channel weight.
  5. The bias (extend_params["bias_tensor"], [C_out] or [1, C_out]) is added
     in FP32, then the result is cast to out_dtype.
The batch dim may be DYNAMIC (one compile for every N); channel, spatial and
weight dims are static. The ops it records pick their own tile shapes, so no
tile needs to be set for a conv; set_conv_tile_shapes is recorded only.
"""

import itertools
import numbers

from . import dtypes, layout, op_table, ops, symbolic, tiling
from .casting import cast
from .composites import pad as _pad
from .matmul import matmul as _matmul
from .primitives import FLOAT_TYPES, check_float, check_traced

_WHAT = "pypto.conv"


def conv(input, weight, out_dtype, strides, paddings, dilations, *,  # noqa: A002
         groups=1, transposed=False, output_paddings=(), extend_params=None):
    """A 1-D or 2-D (transposed) convolution of `input` with `weight` (see the
    module docstring for layouts and the computation): torch's conv1d /
    conv2d (transposed: conv_transpose1d / conv_transpose2d) with stride
    `strides`, padding `paddings`, dilation `dilations` (one int per spatial
    dim), `groups` and `output_paddings` (transposed only), accumulated in
    FP32 and cast to out_dtype (DT_FP32, DT_FP16 or DT_BF16). extend_params
    {"bias_tensor": b} adds b ([C_out] or [1, C_out]) to every output."""
    check_traced(input, _WHAT, "input")
    check_traced(weight, _WHAT, "weight")
    check_float(_WHAT, input, "input")
    check_float(_WHAT, weight, "weight")
    if input.dtype != weight.dtype:
        raise TypeError(f"{_WHAT}: 'input' has dtype {input.dtype.name} and 'weight' "
                        f"{weight.dtype.name}; they must be equal")
    if out_dtype not in FLOAT_TYPES:
        raise TypeError(f"{_WHAT}: out_dtype {getattr(out_dtype, 'name', out_dtype)} must be "
                        f"DT_FP32, DT_FP16 or DT_BF16")
    rank = len(input._shape)
    if rank not in (3, 4):
        raise ValueError(f"{_WHAT}: 'input' {list(input._shape)} must be [N, C, L] (1-D) or "
                         f"[N, C, H, W] (2-D; tensors here have at most 4 dims, so there is "
                         f"no 3-D conv)")
    nd = rank - 2
    if len(weight._shape) != rank:
        raise ValueError(f"{_WHAT}: 'weight' {list(weight._shape)} must have {rank} dims, as "
                         f"'input' {list(input._shape)}")
    for name, t, dims in (("input", input, input._shape[1:]), ("weight", weight, weight._shape)):
        if any(symbolic.is_symbolic(d) for d in dims):
            raise ValueError(f"{_WHAT}: '{name}' {list(t._shape)} must have static dims (only "
                             f"the input's batch dim may be dynamic)")
    strides = _ints("strides", strides, nd, 1)
    paddings = _ints("paddings", paddings, nd, 0)
    dilations = _ints("dilations", dilations, nd, 1)
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or groups < 1:
        raise ValueError(f"{_WHAT}: groups must be a positive int, got {groups!r}")
    groups = int(groups)
    if not isinstance(transposed, bool):
        raise TypeError(f"{_WHAT}: transposed must be a bool, got {type(transposed).__name__}")
    if transposed:
        output_paddings = _ints("output_paddings", output_paddings or [0] * nd, nd, 0)
        for i, (op, s, d) in enumerate(zip(output_paddings, strides, dilations)):
            if op >= max(s, d):
                raise ValueError(f"{_WHAT}: output_paddings[{i}] = {op} must be smaller than "
                                 f"strides[{i}] or dilations[{i}] ({max(s, d)})")
    elif output_paddings and any(output_paddings):
        raise ValueError(f"{_WHAT}: output_paddings {list(output_paddings)} apply to a "
                         f"transposed conv only (transposed=False)")
    c_in = input._shape[1]
    kernel = [int(k) for k in weight._shape[2:]]
    w_in, w_out = (weight._shape[0], weight._shape[1]) if transposed else \
        (weight._shape[1], weight._shape[0])  # C_in per group or all, C_out
    if c_in % groups:
        raise ValueError(f"{_WHAT}: 'input' has {c_in} channels, not a multiple of groups "
                         f"({groups})")
    if transposed:
        if w_in != c_in:
            raise ValueError(f"{_WHAT}: channel mismatch: 'weight' {list(weight._shape)} "
                             f"(transposed: [C_in, C_out / groups, ...]) has C_in {w_in}, "
                             f"'input' {list(input._shape)} has {c_in} channels")
        c_out = w_out * groups
    else:
        if w_in * groups != c_in:
            raise ValueError(f"{_WHAT}: channel mismatch: 'weight' {list(weight._shape)} "
                             f"([C_out, C_in / groups, ...]) has C_in / groups {w_in}, 'input' "
                             f"{list(input._shape)} has {c_in} channels in {groups} group(s)")
        if w_out % groups:
            raise ValueError(f"{_WHAT}: 'weight' {list(weight._shape)} has C_out {w_out}, "
                             f"not a multiple of groups ({groups})")
        c_out = w_out
    bias = _bias(extend_params, c_out)
    spatial = zip(input._shape[2:], strides, paddings, dilations, kernel)
    if transposed:
        sizes = [(n - 1) * s - 2 * p + d * (k - 1) + op + 1
                 for (n, s, p, d, k), op in zip(spatial, output_paddings)]
    else:
        sizes = [(n + 2 * p - d * (k - 1) - 1) // s + 1 for n, s, p, d, k in spatial]
    for i, n in enumerate(sizes):
        if n <= 0:
            raise ValueError(f"{_WHAT}: the output's spatial dim {i} would have size {n} "
                             f"('input' {list(input._shape)}, kernel {kernel}, strides "
                             f"{strides}, paddings {paddings}, dilations {dilations})")
    with tiling.cube_tile_in_force(*_cube_tile(c_out // groups, c_in // groups * _prod(kernel),
                                               _prod(sizes))):
        if transposed:
            x = _transposed_input(input, strides)
            lo = [p - d * (k - 1) for p, d, k in zip(paddings, dilations, kernel)]
            strides = [1] * nd
        else:
            x, lo = input, [-p for p in paddings]
        if not transposed and groups == c_in and input._static is None and \
                not symbolic.is_symbolic(input._shape[0]):
            return _depthwise_rows(input, weight, c_out // c_in, strides, paddings, dilations,
                                   kernel, sizes, bias, out_dtype)
        if not transposed and not groups == c_in == c_out and input._static is None and \
                op_table.target_maps(input._builder.compile_target, "TIMG2COL"):
            y = _img2col_matmul(input, weight, kernel, strides, paddings, dilations, groups,
                                c_out, sizes)
            y = _reshape(y, [input._shape[0], c_out] + sizes)
        elif groups == c_in == c_out:
            taps = _taps(x, lo, sizes, strides, dilations, kernel)
            y = _depthwise(taps, weight, sizes, transposed)
        else:
            taps = _taps(x, lo, sizes, strides, dilations, kernel)
            cols = _im2col(taps, sizes, groups)
            w = _weight_matrix(weight, kernel, groups, transposed)
            y = _matmul(w, cols, dtypes.DT_FP32)  # [N, G, C_out / G, P]
            y = _reshape(y, [input._shape[0], c_out] + sizes)
        if bias is not None:
            if bias.dtype != dtypes.DT_FP32:
                bias = _cast(bias, dtypes.DT_FP32)
            bias = _reshape(bias, [1, c_out] + [1] * nd)
            with _vec(y._shape):
                y = ops.add(y, bias)
        if out_dtype != dtypes.DT_FP32:
            y = _cast(y, out_dtype)
    return y


def _depthwise_rows(x, weight, m, strides, paddings, dilations, kernel, sizes, bias,
                    out_dtype):
    """A depthwise conv (groups == C_in, C_out = m * C_in) as a stencil over
    the input's channels-last rows: [N, C_out] + sizes in out_dtype, the
    bias added (the module docstring's steps)."""
    n, c = x._shape[0], x._shape[1]
    final = [n, c * m] + sizes
    if len(sizes) == 1:  # [N, C, L]: one row of a 2-D conv
        x = _reshape(x, [n, c, 1, x._shape[2]])
        weight = _reshape(weight, [c * m, 1, 1, kernel[0]])
        kernel, strides, paddings, dilations, sizes = ([1] + kernel, [1] + strides,
                                                       [0] + paddings, [1] + dilations,
                                                       [1] + sizes)
    (sh, sw), (ho, wo), (kh, kw) = strides, sizes, kernel
    # The window the taps read, from -padding, rounded up to whole phases.
    hs, ws = [-(-((o - 1) * s + d * (k - 1) + 1) // s) * s
              for o, s, d, k in zip(sizes, strides, dilations, kernel)]
    f32 = dtypes.DT_FP32
    # 1. The window channels-last, zeros outside the input: [N, hs, ws, C].
    xt = layout.permute(x, [0, 2, 3, 1])
    rows, cols = min(x._shape[2], hs - paddings[0]), min(x._shape[3], ws - paddings[1])
    padded = [n, hs, ws, c]
    with _vec(padded):
        if rows < x._shape[2] or cols < x._shape[3]:
            xt = layout.view(xt, [n, rows, cols, c], [0, 0, 0, 0])
        win = ops.full(padded, 0, x.dtype)
        if rows > 0 and cols > 0:  # (else the taps read padding only)
            layout.assemble(xt, [0, paddings[0], paddings[1], 0], win)
    # 2. Column phases (stride sw): rows of [ws / sw] pixels of C channels;
    # row phases (stride sh) are views of those.
    wph, hph = ws // sw, hs // sh
    taps = [(dilations[0] * i, dilations[1] * j)
            for i, j in itertools.product(range(kh), range(kw))]
    columns = {}
    for rw in sorted({aw % sw for _, aw in taps}):
        if sw == 1:
            columns[rw] = _reshape(win, [n, hs, ws * c])
        else:
            flat = _reshape(win, [n, hs * wph, sw * c])
            picked = layout.view(flat, [n, hs * wph, c], [0, 0, rw * c])
            with _vec(picked._shape):
                picked = layout.clone(picked)
            columns[rw] = _reshape(picked, [n, hs, wph * c])

    def source(rh, rw):
        t = columns[rw]
        if sh == 1:
            return t
        return layout.view(_reshape(t, [n, hph, sh * wph * c]), [n, hph, wph * c],
                           [0, 0, rh * wph * c])
    # 3. Per output channel k of each input channel: each tap's weights
    # repeated along the output row, [m * taps, 1, wo * C] in FP32, and the
    # bias likewise.
    row = wo * c
    weights = _rows_of(_reshape(weight, [c, m * len(taps)]), f32, wo)
    if bias is not None:
        bias = _rows_of(_reshape(bias, [c, m]), f32, wo)
    # 4. The stencil: per output row (channels-last), the FP32 sum over taps
    # of the tap's view times its weights' row.
    ys = []
    parts = -(-row // _DEPTHWISE_ROWS)
    while row % parts:  # equal parts: no tail tiles
        parts += 1
    tile = [1, 1, row // parts]
    with tiling.vec_tile_in_force(tile):
        for k in range(m):
            y = None
            for t, (ah, aw) in enumerate(taps):
                v = layout.view(source(ah % sh, aw % sw), [n, ho, row],
                                [0, ah // sh, aw // sw * c])
                if v.dtype != f32:
                    v = cast(v, f32)
                term = ops.mul(v, layout.view(weights, [1, 1, row], [k * len(taps) + t, 0, 0]))
                y = term if y is None else ops.add(y, term)
            if bias is not None:
                y = ops.add(y, layout.view(bias, [1, 1, row], [k, 0, 0]))
            if out_dtype != f32:
                y = cast(y, out_dtype)
            ys.append(y)
    # 5. Back to channels first (output channel c * m + k from ys[k]): a
    # transpose, which its reader loads strided.
    if m > 1:
        ys = [_concat([_reshape(y, [n, ho * wo * c, 1]) for y in ys], 2)]
    # Its tile: all channels of whole output rows, so that a task reads
    # whole pixels (C_out values in a row) of the rows it transposes.
    if len(final) == 3:
        with tiling.vec_tile_in_force([1, c * m, wo]):
            return layout.transpose(_reshape(ys[0], [n, wo, c * m]), 1, 2)
    lines = max(1, min(ho, _TILE_ELEMENTS // (c * m * wo)))
    with tiling.vec_tile_in_force([1, c * m, lines, wo]):
        return layout.permute(_reshape(ys[0], [n, ho, wo, c * m]), [0, 3, 1, 2])


def _rows_of(w, dtype, repeats):
    """w [C, R] as [R, 1, repeats * C] of dtype: row r holds w[:, r] repeated
    `repeats` times."""
    c, r = w._shape
    w = _reshape(layout.transpose(w, 0, 1), [r, 1, c])
    if w.dtype != dtype:
        w = _cast(w, dtype)
    shape = [r, repeats, c]
    with _vec(shape):
        w = ops.add(ops.full(shape, 0, dtype), w)
    return _reshape(w, [r, 1, repeats * c])


def _img2col_matmul(x, weight, kernel, strides, paddings, dilations, groups, c_out, sizes):
    """[N, groups, C_out / groups, P]: the conv as one matmul whose B operand,
    the im2col matrix [N, groups, K, P], is read block by block from x
    itself (the matmul's "img2col" attr, PTO's TIMG2COL: strides, zero
    padding and dilation in the load; no im2col copy and no padded copy in
    GM). A 1-D conv is the 2-D one over one row."""
    w = _weight_matrix(weight, kernel, groups, False)
    if len(kernel) == 1:  # [N, C, L]: one row
        kernel, strides, paddings, dilations = ([1] + kernel, [1] + strides, [0] + paddings,
                                                [1] + dilations)
    geometry = [kernel[0], kernel[1], strides[0], strides[1], paddings[0], paddings[1],
                dilations[0], dilations[1]]
    shape = (x._shape[0], groups, c_out // groups, _prod(sizes))
    return w._builder.add_op(
        "matmul", [w, x], dtypes.DT_FP32, shape,
        {"out_dtype": dtypes.DT_FP32, "a_trans": False, "b_trans": False,
         "img2col": geometry}, _WHAT, cube_tile=tiling.current_cube_tile())


def _ints(name, value, n, least):
    """`value` as a list of n ints, each at least `least` (an int gives all n)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = [value] * n
    if not isinstance(value, (list, tuple)) or len(value) != n or any(
            isinstance(v, bool) or not isinstance(v, numbers.Integral) for v in value):
        raise ValueError(f"{_WHAT}: {name} {value!r} must be {n} int(s), one per spatial dim")
    if any(v < least for v in value):
        raise ValueError(f"{_WHAT}: {name} {list(value)} must be {least} or more")
    return [int(v) for v in value]


def _bias(extend_params, c_out):
    """The bias tensor of extend_params (None without one), checked."""
    if extend_params is None:
        return None
    if not isinstance(extend_params, dict):
        raise TypeError(f"{_WHAT}: extend_params must be a dict, got "
                        f"{type(extend_params).__name__}")
    for key in extend_params:
        if key != "bias_tensor":
            raise ValueError(f"{_WHAT}: extend_params key {key!r} is not supported (a conv "
                             f"takes 'bias_tensor')")
    bias = extend_params.get("bias_tensor")
    if bias is None:
        return None
    check_traced(bias, _WHAT, "extend_params['bias_tensor']")
    if bias.dtype not in FLOAT_TYPES:
        raise TypeError(f"{_WHAT}: extend_params['bias_tensor'] has dtype {bias.dtype.name}; it "
                        f"must be DT_FP32, DT_FP16 or DT_BF16")
    if list(bias._shape) not in ([c_out], [1, c_out]):
        raise ValueError(f"{_WHAT}: extend_params['bias_tensor'] {list(bias._shape)} must be "
                         f"[{c_out}] or [1, {c_out}] (one value per output channel)")
    return bias


def _cube_tile(m, k, n):
    """The cube tile of a conv's matmul, [C_out / groups, K] @ [K, P]: up to
    [64, 64] @ [64, 128] in L0 (FP32 operands fit), N staged two L0 tiles at
    a time."""
    m0, k0, n0 = min(m, 64), min(k, 64), min(n, 128)
    return [m0, m0], [k0, k0], [n0, 2 * n0 if n > n0 else n0]


def _transposed_input(x, strides):
    """x with s - 1 zeros after each element of each strided dim: a
    transposed conv's input to a plain conv with stride 1, whose window
    starts at p - d(k - 1) in each dim."""
    for j, s in enumerate(strides):
        if s > 1:
            x = _zero_insert(x, j, s)
    return x


def _zero_insert(x, j, s):
    """x with s - 1 zeros after each element of spatial dim j."""
    shape = list(x._shape)
    n, c, sp = shape[0], shape[1], shape[2:]
    pre, post = _prod(sp[:j]), _prod(sp[j + 1:])
    flat = _reshape(x, [n, c * pre, sp[j], post])
    zeros_shape = [n, c * pre, sp[j], (s - 1) * post]
    with _vec(zeros_shape):
        spread = layout.concat([flat, ops.full(zeros_shape, 0, x.dtype)], 3)
    sp[j] *= s
    return _reshape(spread, [n, c] + sp)


def _taps(x, lo, sizes, strides, dilations, kernel):
    """[(kernel tap, source, offsets)] per tap (row-major): the tap reads
    source[:, :, offsets : offsets + sizes] for the outputs."""
    # The extent the taps read, rounded up to whole phases.
    spans = [-(-((o - 1) * s + d * (k - 1) + 1) // s) * s
             for o, s, d, k in zip(sizes, strides, dilations, kernel)]
    x = _window(x, lo, spans)
    phases = {}

    def phase(residues):
        if residues not in phases:
            t = x
            for j, (r, s) in enumerate(zip(residues, strides)):
                if s > 1:
                    t = _phase(t, j, r, s)
            phases[residues] = t
        return phases[residues]

    taps = []
    for tap in itertools.product(*(range(k) for k in kernel)):
        at = [d * i for d, i in zip(dilations, tap)]
        taps.append((tap, phase(tuple(a % s for a, s in zip(at, strides))),
                     [a // s for a, s in zip(at, strides)]))
    return taps


def _im2col(taps, sizes, groups):
    """[N, groups, taps * C_in / groups, P]: for each kernel tap, the input
    elements it multiplies for each output position."""
    n, c = taps[0][1]._shape[0], taps[0][1]._shape[1]
    cg = c // groups
    shape = [n, groups, len(taps) * cg, _prod(sizes)]
    if len(taps) * groups <= _MAX_PARTS:
        # Each group's taps' channel views, concatenated along the channel
        # dim: the result is in K order already, so one copy.
        parts = [layout.view(src, [n, cg] + sizes, [0, g * cg] + at)
                 for g in range(groups) for _, src, at in taps]
        return _reshape(parts[0] if len(parts) == 1 else _concat(parts, 1), shape)
    # Many groups: each tap's view regrouped, then concatenated along K.
    parts = [_reshape(layout.view(src, [n, c] + sizes, [0, 0] + at), [n, groups, cg, shape[3]])
             for _, src, at in taps]
    return parts[0] if len(parts) == 1 else _concat(parts, 2)


# The most views one im2col concatenates along the channel dim (kernel taps
# times groups); more take a copy per tap, then a concat along K.
_MAX_PARTS = 64


def _window(x, lo, spans):
    """x's spatial dims, zero-extended both ways, over [lo, lo + span) each."""
    sp = list(x._shape[2:])
    widths = []
    for n, a, w in zip(sp, lo, spans):
        widths = [max(0, -a), max(0, a + w - n)] + widths  # pypto.pad: last dim first
    if any(widths):
        with _vec(x._shape):
            x = _pad(x, widths)
    starts = [max(0, a) for a in lo]
    return layout.view(x, list(x._shape[:2]) + spans, [0, 0] + starts)


def _phase(x, j, r, s):
    """Elements r, r + s, r + 2s, ... of spatial dim j of x (its size a
    multiple of s)."""
    shape = list(x._shape)
    n, c, sp = shape[0], shape[1], shape[2:]
    pre, post = _prod(sp[:j]), _prod(sp[j + 1:])
    grouped = _reshape(x, [n, c * pre, sp[j] // s, s * post])
    picked = layout.view(grouped, [n, c * pre, sp[j] // s, post], [0, 0, 0, r * post])
    sp[j] //= s
    return _reshape(picked, [n, c] + sp)


def _depthwise(taps, weight, sizes, transposed):
    """A conv with one input and one output channel per group, in FP32: the
    sum over taps of each tap's view times its weight per channel (vector
    ops; a matmul per channel would be [1, taps] @ [taps, P])."""
    n, c = taps[0][1]._shape[0], taps[0][1]._shape[1]
    shape = [n, c] + sizes
    y = None
    with _vec(shape):
        for tap, src, at in taps:
            v = layout.view(src, shape, [0, 0] + at)
            w = _reshape(_weight_tap(weight, tap, transposed), [1, c] + [1] * len(sizes))
            if v.dtype != dtypes.DT_FP32:
                v, w = cast(v, dtypes.DT_FP32), _cast(w, dtypes.DT_FP32)
            term = ops.mul(v, w)
            y = term if y is None else ops.add(y, term)
    return y


def _weight_tap(weight, tap, transposed):
    """weight[:, :, tap] as [weight's dims 0 and 1, 1, ...]; transposed: the
    flipped kernel's tap."""
    kernel = weight._shape[2:]
    at = [k - 1 - i for k, i in zip(kernel, tap)] if transposed else list(tap)
    a, b = weight._shape[0], weight._shape[1]
    return layout.view(weight, [a, b] + [1] * len(kernel), [0, 0] + at)


def _weight_matrix(weight, kernel, groups, transposed):
    """[groups, C_out / groups, taps * C_in / groups] in _im2col's K order;
    transposed: the kernel flipped and each group's [C_in, C_out] swapped."""
    rows = []
    for tap in itertools.product(*(range(k) for k in kernel)):
        a, b = weight._shape[0], weight._shape[1]
        v = _weight_tap(weight, tap, transposed)
        if transposed:  # [C_in, C_out / G] -> [G, C_out / G, C_in / G]
            m = layout.transpose(_reshape(v, [groups, a // groups, b]), 1, 2)
        else:           # [C_out, C_in / G] -> [G, C_out / G, C_in / G]
            m = _reshape(v, [groups, a // groups, b])
        rows.append(m)
    return rows[0] if len(rows) == 1 else _concat(rows, 2)


def _prod(dims):
    p = 1
    for d in dims:
        p *= d
    return p


def _reshape(x, shape):
    with _vec(shape):
        return layout.reshape(x, shape)


def _concat(parts, dim):
    shape = list(parts[0]._shape)
    shape[dim] = sum(p._shape[dim] for p in parts)
    with _vec(shape):
        return layout.concat(parts, dim)


def _cast(x, dtype):
    with _vec(x._shape):
        return cast(x, dtype)


def _vec(shape):
    """The vector tile of a conv's own elementwise and layout ops: whole
    inner dims, filled from the last dim out to about _TILE_ELEMENTS
    elements (1 in a dynamic dim)."""
    tile, room = [1] * len(shape), _TILE_ELEMENTS
    for i in reversed(range(len(shape))):
        if symbolic.is_symbolic(shape[i]) or room <= 1:
            break
        tile[i] = max(1, min(room, int(shape[i])))
        room //= tile[i]
    return tiling.vec_tile_in_force(tile)


# About how many elements one tile of a conv's own ops holds: 64 KiB in
# f32, so a depthwise conv's group (three tiles live at once) fills the
# 192 KiB UB of a block. A depthwise conv is bound by its tasks' count, not
# their work: smaller tiles make it slower.
_TILE_ELEMENTS = 16384

# The most elements of an output row (channels-last) one task of a
# depthwise conv computes.
_DEPTHWISE_ROWS = 2048
