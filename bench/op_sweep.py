#!/usr/bin/env python3
"""Common fused-kernel patterns against torch op by op: where are pypto's cliffs?

    tools/pypto-python bench/op_sweep.py [--only=SUBSTR[,SUBSTR...]] [--reps=N] [--cpu]
                                         [--output=FILE.md]

bench/kernels.py times its fixed rows carefully; this sweeps the shapes
users write around them (broadcast operands, casts, selects, activations,
column reductions, transposes, slices, FP16/BF16 forms of each) at 1024x1024
or 4096x1024, each a @pypto.jit kernel as a user writes it, to find a pattern
whose generated code fell off a fast path (a scalar loop, a copy pass through
UB arrays). Calls run back to back after warm-up (no pauses), pypto and torch
taking turns in blocks of 5; a time is the median over --reps calls.
torch/pypto above 1 means pypto is faster. Each row also checks pypto's
result against torch's (max absolute difference, computed in float64).
--cpu adds each side's median process CPU time per call (both run their
threads in this process): on a machine shared with other work, wall times
include waiting for a CPU, and CPU times compare the work done.

Threads as bench/kernels.py fixes them (PTO_VECTOR_WORKERS, torch threads).
A measuring tool for compiler work, not a test (docs/performance.md).
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402  (fixes thread counts before numpy and torch start)

import torch  # noqa: E402

import pypto  # noqa: E402
from pypto import _native  # noqa: E402

F32, F16, BF16, I32, I64 = (pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16, pypto.DT_INT32,
                            pypto.DT_INT64)
TORCH_TYPES = {F32: torch.float32, F16: torch.float16, BF16: torch.bfloat16, I32: torch.int32,
               pypto.DT_INT64: torch.int64, pypto.DT_BOOL: torch.bool, pypto.DT_INT8: torch.int8}
N = (1024, 1024)
BIG = (4096, 1024)


class Row:
    """One pattern: pypto's body and torch's, over inputs of `shapes`/`dtypes`."""

    def __init__(self, name, dtypes, shapes, tile, body, torch_body, out_shape=None,
                 out_dtype=None, index=None, compare=True, dynamic=(), unique=()):
        self.name, self.dtypes, self.shapes, self.tile = name, dtypes, shapes, tile
        # Dims declared pypto.DYNAMIC in every tensor parameter (a kernel
        # with dynamic dims; the others static); () : shapes from the arguments.
        self.dynamic = tuple(dynamic)
        self.body, self.torch_body = body, torch_body
        # {input position: the bound of its values}: an index input, drawn
        # uniformly from [0, bound) (the others from [-2, 2)).
        self.index = index or {}
        # Index inputs whose values are drawn without repeats (a scatter
        # whose result would otherwise depend on the order of the writes).
        self.unique = tuple(unique)
        self.compare = compare  # False: random numbers from another generator
        self.out_shape = shapes[0] if out_shape is None else out_shape
        self.out_dtype = out_dtype or dtypes[0]

    def kernel(self):
        # One parameter per input (pypto binds arguments by the signature).
        params = ", ".join(f"a{i}: T(dtypes[{i}], shapes[{i}])" for i in range(len(self.dtypes)))
        names = ", ".join(f"a{i}" for i in range(len(self.dtypes)))

        def annotation(dtype, shape):
            if not self.dynamic:
                return kernels.T(dtype)
            return pypto.Tensor([pypto.DYNAMIC if d in self.dynamic else n
                                 for d, n in enumerate(shape)], dtype)

        scope = {"T": annotation, "dtypes": self.dtypes, "shapes": self.shapes, "pypto": pypto,
                 "body": self.body, "tile": self.tile, "out_dtype": self.out_dtype,
                 "out_shape": self.out_shape}
        exec(f"def sweep_kernel({params}, out: T(out_dtype, out_shape)):\n"  # noqa: S102
             f"    pypto.set_vec_tile_shapes(*tile)\n"
             f"    out[{'...' if self.out_shape == () else ':'}] = body({names})\n", scope)
        return pypto.jit(scope["sweep_kernel"])


def rows():
    def f32(*shapes):
        return [F32] * len(shapes)
    return [
        Row("add bias [C] f32", f32(N, (1024,)), [N, (1024,)], (8, 1024),
            lambda a, b: a + b, lambda a, b: a + b),
        Row("add per-row scale [R,1] f32", f32(N, (1024, 1)), [N, (1024, 1)], (8, 1024),
            lambda a, b: a + b, lambda a, b: a + b),
        Row("add bf16", [BF16, BF16], [N, N], (8, 1024), lambda a, b: a + b, lambda a, b: a + b),
        Row("(a+b)*2-a bf16", [BF16, BF16], [N, N], (8, 1024), lambda a, b: (a + b) * 2 - a,
            lambda a, b: (a + b) * 2 - a),
        Row("sigmoid(a*b+a) f16", [F16, F16], [N, N], (8, 1024),
            lambda a, b: pypto.sigmoid(a * b + a), lambda a, b: torch.sigmoid(a * b + a)),
        Row("gelu (tanh form) f32", [F32], [N], (8, 1024),
            lambda a: a * 0.5 * (1 + pypto.tanh(a * 0.7978845608 * (1 + 0.044715 * a * a))),
            lambda a: a * 0.5 * (1 + torch.tanh(a * 0.7978845608 * (1 + 0.044715 * a * a)))),
        Row("silu a*sigmoid(a) f32", [F32], [N], (8, 1024),
            lambda a: a * pypto.sigmoid(a), lambda a: a * torch.sigmoid(a)),
        Row("where(a > 0, a, b) f32", [F32, F32], [N, N], (8, 1024),
            lambda a, b: pypto.where(a > 0, a, b), lambda a, b: torch.where(a > 0, a, b)),
        Row("cast f32 -> f16", [F32], [N], (8, 1024), lambda a: pypto.cast(a, F16),
            lambda a: a.half(), out_dtype=F16),
        Row("cast f16 -> f32", [F16], [N], (8, 1024), lambda a: pypto.cast(a, F32),
            lambda a: a.float(), out_dtype=F32),
        Row("softmax 4096x1024 f16", [F16], [BIG], (4, 1024), lambda a: pypto.softmax(a, -1),
            lambda a: torch.softmax(a.float(), -1).half()),
        Row("softmax 4096x1024 bf16", [BF16], [BIG], (4, 1024), lambda a: pypto.softmax(a, -1),
            lambda a: torch.softmax(a.float(), -1).bfloat16()),
        Row("rms_norm 4096x1024 f16", [F16, F16], [BIG, (1024,)], (4, 1024),
            lambda a, g: pypto.rms_norm(a, g, 1e-6),
            lambda a, g: (a.float() * torch.rsqrt((a.float() ** 2).mean(-1, keepdim=True) + 1e-6)
                          * g.float()).half()),
        Row("amax last dim 4096x1024 f32", [F32], [BIG], (8, 1024),
            lambda a: pypto.amax(a, -1, keepdim=True), lambda a: a.amax(-1, keepdim=True),
            out_shape=(4096, 1)),
        Row("sum dim 0 4096x1024 f32", [F32], [BIG], (64, 256),
            lambda a: pypto.sum(a, 0, keepdim=True), lambda a: a.sum(0, keepdim=True),
            out_shape=(1, 1024)),
        Row("sum dim 0 4096x1024 f16", [F16], [BIG], (64, 256),
            lambda a: pypto.sum(a, 0, keepdim=True),
            lambda a: a.float().sum(0, keepdim=True).half(), out_shape=(1, 1024)),
        Row("a.T + b f32", [F32, F32], [N, N], (32, 32),
            lambda a, b: pypto.transpose(a, 0, 1) + b, lambda a, b: a.t() + b),
        Row("a[:, :512] * 2 f32", [F32], [N], (8, 512), lambda a: a[:, :512] * 2,
            lambda a: a[:, :512] * 2, out_shape=(1024, 512)),
        Row("a[:, :512] * 2 f16", [F16], [N], (8, 512), lambda a: a[:, :512] * 2,
            lambda a: a[:, :512] * 2, out_shape=(1024, 512)),
        Row("concat [a*2, b+1] f16", [F16, F16], [N, N], (2, 1024),
            lambda a, b: pypto.concat([a * 2, b + 1], 1),
            lambda a, b: torch.cat([a * 2, b + 1], 1), out_shape=(1024, 2048)),
        Row("exp f16", [F16], [N], (8, 1024), lambda a: pypto.exp(a), lambda a: torch.exp(a)),
        Row("div f32", [F32, F32], [N, N], (8, 1024), lambda a, b: a / b, lambda a, b: a / b),
        Row("pow(abs(a), 2.5) f32", [F32], [N], (8, 1024),
            lambda a: pypto.pow(pypto.abs(a), 2.5), lambda a: torch.pow(torch.abs(a), 2.5)),
        Row("log(abs(a) + 1) f32", [F32], [N], (8, 1024),
            lambda a: pypto.log(pypto.abs(a) + 1), lambda a: torch.log(torch.abs(a) + 1)),
        Row("softmax dim 0 1024x1024 f32", [F32], [N], (64, 256),
            lambda a: pypto.softmax(a, 0), lambda a: torch.softmax(a, 0)),
        Row("argmax last dim 4096x1024 f32", [F32], [BIG], (8, 1024),
            lambda a: pypto.argmax(a, -1), lambda a: a.argmax(-1), out_shape=(4096,),
            out_dtype=pypto.DT_INT64),
        Row("add int32", [I32, I32], [N, N], (8, 1024), lambda a, b: a + b, lambda a, b: a + b),
        Row("dequant int8 * scale [C] -> f16", [pypto.DT_INT8, F32], [N, (1024,)], (8, 1024),
            lambda q, s: pypto.cast(pypto.cast(q, F32) * s, F16),
            lambda q, s: (q.float() * s).half(), out_dtype=F16),
        Row("quant f32 -> int8 (clip(round(a*64)))", [F32], [N], (8, 1024),
            lambda a: pypto.cast(pypto.clip(pypto.round(a * 64.0), -128.0, 127.0), pypto.DT_INT8),
            lambda a: torch.clip(torch.round(a * 64.0), -128.0, 127.0).to(torch.int8),
            out_dtype=pypto.DT_INT8),
        Row("a > b f32 -> bool", [F32, F32], [N, N], (8, 1024), lambda a, b: a > b,
            lambda a, b: a > b, out_dtype=pypto.DT_BOOL),
        Row("clip(a, -1, 1) f32", [F32], [N], (8, 1024), lambda a: pypto.clip(a, -1.0, 1.0),
            lambda a: torch.clip(a, -1.0, 1.0)),
        Row("rsqrt(abs(a) + 1) f32", [F32], [N], (8, 1024),
            lambda a: pypto.rsqrt(pypto.abs(a) + 1), lambda a: torch.rsqrt(torch.abs(a) + 1)),
        Row("tanh f32", [F32], [N], (8, 1024), lambda a: pypto.tanh(a), lambda a: torch.tanh(a)),
        Row("sum all 4096x1024 f32", [F32], [BIG], (8, 1024), lambda a: pypto.sum(a),
            lambda a: a.sum(), out_shape=()),
        Row("permute (0,2,1) + 1 64x128x128 f32", [F32], [(64, 128, 128)], (1, 128, 128),
            lambda a: pypto.permute(a, (0, 2, 1)) + 1, lambda a: a.permute(0, 2, 1) + 1),
        Row("rms norm by hand 4096x1024 f32", [F32], [BIG], (4, 1024),
            lambda a: a * pypto.rsqrt(pypto.sum(a * a, -1, keepdim=True) * (1 / 1024) + 1e-6),
            lambda a: a * torch.rsqrt((a * a).sum(-1, keepdim=True) * (1 / 1024) + 1e-6)),
        Row("layer norm by hand 4096x1024 f16", [F16], [BIG], (4, 1024),
            lambda a: (a - pypto.sum(a, -1, keepdim=True) * (1 / 1024)) * 2,
            lambda a: (a - a.sum(-1, keepdim=True) * (1 / 1024)) * 2),
        # The elementwise families: one row each.
        Row("atan2(a, b) f32", [F32, F32], [N, N], (8, 1024), lambda a, b: pypto.atan2(a, b),
            lambda a, b: torch.atan2(a, b)),
        Row("asinh(a) f16", [F16], [N], (8, 1024), lambda a: pypto.asinh(a),
            lambda a: torch.asinh(a)),
        Row("(a << 3) ^ b int32", [I32, I32], [N, N], (8, 1024),
            lambda a, b: pypto.bitwise_xor(pypto.bitwise_left_shift(a, 3), b),
            lambda a, b: torch.bitwise_xor(torch.bitwise_left_shift(a, 3), b)),
        Row("logical_and(a > 0, isfinite(b)) f32 -> bool", [F32, F32], [N, N], (8, 1024),
            lambda a, b: pypto.logical_and(a > 0, pypto.isfinite(b)),
            lambda a, b: torch.logical_and(a > 0, torch.isfinite(b)), out_dtype=pypto.DT_BOOL),
        Row("fmod(a, b) f32", [F32, F32], [N, N], (8, 1024), lambda a, b: pypto.fmod(a, b),
            lambda a, b: torch.fmod(a, b)),
        Row("lrelu(a, 0.1) f16", [F16], [N], (8, 1024), lambda a: pypto.lrelu(a, 0.1),
            lambda a: torch.nn.functional.leaky_relu(a, 0.1)),
        Row("tril(a) f32", [F32], [N], (8, 1024), lambda a: pypto.tril(a),
            lambda a: torch.tril(a)),
        Row("round(a, 2) f32", [F32], [N], (8, 1024), lambda a: pypto.round(a, 2),
            lambda a: torch.round(a, decimals=2)),
        Row("clip(a, b, c) tensor bounds f32", [F32, F32, F32], [N, (1024,), (1024, 1)],
            (8, 1024), lambda a, b, c: pypto.clip(a, b, c), lambda a, b, c: torch.clamp(a, b, c)),
        Row("var(a, -1) f32", [F32], [N], (8, 1024), lambda a: pypto.var(a, -1),
            lambda a: torch.var(a, -1), out_shape=(1024,)),
        Row("cumsum(a, -1) f32", [F32], [N], (8, 1024), lambda a: pypto.cumsum(a, -1),
            lambda a: torch.cumsum(a, -1)),
        Row("cumsum(a, 0) f32", [F32], [N], (8, 1024), lambda a: pypto.cumsum(a, 0),
            lambda a: torch.cumsum(a, 0)),
        Row("cumsum(a, -1) bf16", [BF16], [N], (8, 1024), lambda a: pypto.cumsum(a, -1),
            lambda a: torch.cumsum(a, -1)),
        Row("cumprod(a * 0.01 + 1, -1) f32", [F32], [N], (8, 1024),
            lambda a: pypto.cumprod(a * 0.01 + 1, -1), lambda a: torch.cumprod(a * 0.01 + 1, -1)),
        Row("gcd(a, b) int32", [I32, I32], [N, N], (8, 1024), lambda a, b: pypto.gcd(a, b),
            lambda a, b: torch.gcd(a, b), index={0: 100000, 1: 100000}),
        # Quantization (a scale per row).
        Row("quantize(a * 50, s, int8, -1) f32 -> int8", [F32, F32], [N, (1024,)], (8, 1024),
            lambda a, s: pypto.quantize(a * 50, s, pypto.DT_INT8, -1),
            lambda a, s: torch.clamp(torch.round(a * 50 * s[:, None]), -128, 127).to(torch.int8),
            out_dtype=pypto.DT_INT8),
        Row("dequantize(q, s, fp32, -1) int8 -> f32", [pypto.DT_INT8, F32], [N, (1024,)],
            (8, 1024), lambda q, s: pypto.dequantize(q, s, F32, -1),
            lambda q, s: q.float() * s[:, None], out_dtype=F32, index={0: 100}),
        # The index family (MGATHER / MSCATTER).
        Row("gather(a, 1, idx) f32", [F32, I64], [N, N], (8, 1024),
            lambda a, i: pypto.gather(a, 1, i), lambda a, i: torch.gather(a, 1, i),
            index={1: 1024}),
        Row("index_select(a, 0, idx[1024]) f16", [F16, I64], [BIG, (1024,)], (8, 1024),
            lambda a, i: pypto.index_select(a, 0, i), lambda a, i: torch.index_select(a, 0, i),
            out_shape=N, index={1: 4096}),
        Row("scatter(a, 1, idx, b, add) f32", [F32, I64, F32], [N, N, N], (8, 1024),
            lambda a, i, b: pypto.scatter(a, 1, i, b, reduce="add"),
            lambda a, i, b: torch.scatter_add(a, 1, i, b), index={1: 1024}),
        Row("index_add(a, 0, idx[1024], b) f32", [F32, I64, F32], [BIG, (1024,), N],
            (8, 1024), lambda a, i, b: pypto.index_add(a, 0, i, b),
            lambda a, i, b: torch.index_add(a, 0, i, b), index={1: 4096}),
        Row("scatter_update(cache, -2, idx[1024], b) f32", [F32, I64, F32], [BIG, (1024,), N],
            (8, 1024), lambda c, i, b: pypto.scatter_update(c, -2, i, b),
            lambda c, i, b: c.index_copy(0, i, b), index={1: 4096}, unique=(1,)),
        Row("topk(a, 8) values [4096,64] f32", [F32], [(4096, 64)], (64, 64),
            lambda a: pypto.topk(a, 8)[0], lambda a: torch.topk(a, 8).values,
            out_shape=(4096, 8)),
        Row("argsort(a) [4096,32] f32", [F32], [(4096, 32)], (64, 32),
            lambda a: pypto.argsort(a), lambda a: torch.argsort(a, descending=True),
            out_shape=(4096, 32), out_dtype=pypto.DT_INT64),
        # The sort instruction (MSORT) over long rows.
        Row("topk(a, 8) values [256,10000] f32", [F32], [(256, 10000)], (8, 1024),
            lambda a: pypto.topk(a, 8)[0], lambda a: torch.topk(a, 8).values,
            out_shape=(256, 8)),
        Row("argsort(a) [16,65536] f32 (torch.sort stable)", [F32], [(16, 65536)], (1, 4096),
            lambda a: pypto.argsort(a),
            lambda a: torch.sort(a, descending=True, stable=True)[1],
            out_shape=(16, 65536), out_dtype=pypto.DT_INT64),
        # The same in kernels with dynamic dims (one compile for every size).
        Row("topk(a, 8) values [4096,64] f32, dynamic rows", [F32], [(4096, 64)], (64, 64),
            lambda a: pypto.topk(a, 8)[0], lambda a: torch.topk(a, 8).values,
            out_shape=(4096, 8), dynamic=(0,)),
        # (Along a dynamic sorted dim the vec tile is the chunk of positions
        # a task keeps: each row is sorted once per chunk.)
        Row("argsort(a) [16,65536] f32, dynamic rows and length, tile 16384 (torch.sort stable)",
            [F32], [(16, 65536)], (1, 16384), lambda a: pypto.argsort(a),
            lambda a: torch.sort(a, descending=True, stable=True)[1],
            out_shape=(16, 65536), out_dtype=pypto.DT_INT64, dynamic=(0, 1)),
        Row("uniform [1024,1024] f32 (torch.rand)", [F32], [N], (8, 1024),
            lambda a: pypto.uniform(list(N), 1, 0), lambda a: torch.rand(N), compare=False),
        Row("normal [1024,1024] f32 (torch.randn)", [F32], [N], (8, 1024),
            lambda a: pypto.normal(list(N), 1, 0), lambda a: torch.randn(N), compare=False),
        # Convolution (padding, im2col views, one matmul).
        Row("conv2d 3x3 p1 [8,64,32,32] x [64,64,3,3] f32", [F32, F32],
            [(8, 64, 32, 32), (64, 64, 3, 3)], (8, 64),
            lambda x, w: pypto.conv(x, w, F32, [1, 1], [1, 1], [1, 1]),
            lambda x, w: torch.nn.functional.conv2d(x, w, padding=1), out_shape=(8, 64, 32, 32)),
        Row("conv2d depthwise 3x3 s2 p1 [8,64,32,32] f32", [F32, F32],
            [(8, 64, 32, 32), (64, 1, 3, 3)], (8, 64),
            lambda x, w: pypto.conv(x, w, F32, [2, 2], [1, 1], [1, 1], groups=64),
            lambda x, w: torch.nn.functional.conv2d(x, w, stride=2, padding=1, groups=64),
            out_shape=(8, 64, 16, 16)),
        # MobileNet's depthwise 3x3 (the channels-last stencil).
        *[Row(f"conv2d depthwise 3x3 s{s} p1 [8,64,56,56] {name}", [dt, dt],
              [(8, 64, 56, 56), (64, 1, 3, 3)], (8, 64),
              lambda x, w, s=s, dt=dt: pypto.conv(x, w, dt, [s, s], [1, 1], [1, 1], groups=64),
              lambda x, w, s=s: torch.nn.functional.conv2d(x, w, stride=s, padding=1, groups=64),
              out_shape=(8, 64, 56 // s, 56 // s))
          for s in (1, 2) for dt, name in ((F32, "f32"), (F16, "f16"))],
    ]


def torch_reference(row, inputs):
    """torch's result (in float where its CPU kernel lacks the half type)."""
    try:
        return row.torch_body(*inputs), row.torch_body
    except RuntimeError:
        out_type = TORCH_TYPES[row.out_dtype]

        def in_float(*args):
            return row.torch_body(*[x.float() for x in args]).to(out_type)
        return in_float(*inputs), in_float


def medians(fns, reps, block=5):
    """Median wall time and median process CPU time of each fn, taking turns
    in blocks back to back: unlike kernels.interleaved_times, no pause before
    a block (this looks for slow code, not for how a call fares after the
    machine idled)."""
    for f in fns:
        for _ in range(3):
            f()
    times = [[] for _ in fns]
    cpu = [[] for _ in fns]
    while len(times[0]) < reps:
        for f, ts, cs in zip(fns, times, cpu):
            for _ in range(block):
                start, cpu_start = time.perf_counter(), time.process_time()
                f()
                ts.append(time.perf_counter() - start)
                cs.append(time.process_time() - cpu_start)
    return [statistics.median(ts) for ts in times], [statistics.median(cs) for cs in cpu]


def run(row, reps, cpu=False):
    gen = torch.Generator().manual_seed(7)
    def draw(k, s, t):
        if k in row.unique:
            n = 1
            for d in s:
                n *= d
            return torch.randperm(row.index[k], generator=gen)[:n].reshape(s).to(TORCH_TYPES[t])
        if k in row.index:
            return torch.randint(0, row.index[k], s, generator=gen).to(TORCH_TYPES[t])
        return (torch.rand(s, generator=gen) * 4 - 2).to(TORCH_TYPES[t])

    inputs = [draw(k, s, t) for k, (s, t) in enumerate(zip(row.shapes, row.dtypes))]
    out = torch.empty(row.out_shape, dtype=TORCH_TYPES[row.out_dtype])
    kernel = row.kernel()
    try:
        kernel(*inputs, out)
    except Exception as e:  # noqa: BLE001  (a row pypto cannot run is reported, not fatal)
        return f"| {row.name} | n/a ({kernels.short(e)}) | | | |" + (" | |" if cpu else "")
    want, torch_fn = torch_reference(row, inputs)
    err = f"{(out.double() - want.double()).abs().max().item():.2e}" if row.compare \
        else "other generator"
    (pto, ref), (pto_cpu, ref_cpu) = medians(
        [lambda: kernel(*inputs, out), lambda: torch_fn(*inputs)], reps)
    line = (f"| {row.name} | {kernels.fmt_us(pto)} | {kernels.fmt_us(ref)} | "
            f"{ref / pto:.2f}x | {err} |")
    if cpu:
        line += f" {kernels.fmt_us(pto_cpu)} | {kernels.fmt_us(ref_cpu)} |"
    return line


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="comma-separated substrings of row names")
    parser.add_argument("--reps", type=int, default=60)
    parser.add_argument("--cpu", action="store_true",
                        help="add each side's median process CPU time per call")
    parser.add_argument("--output", help="also write the table to this file")
    opts = parser.parse_args()
    wanted = [w for w in opts.only.split(",") if w]
    lines = [f"threads {kernels.THREADS}, pypto target {_native.resolve_target('host')}, "
             f"tree {kernels.source_tree()}, load average {os.getloadavg()[0]:.2f}", "",
             "| pattern | pypto | torch (op by op) | torch/pypto | max abs diff |"
             + (" pypto CPU | torch CPU |" if opts.cpu else ""),
             "|---|---:|---:|---:|---:|" + ("---:|---:|" if opts.cpu else "")]
    print("\n".join(lines), flush=True)
    for row in rows():
        if wanted and not any(w in row.name for w in wanted):
            continue
        line = run(row, opts.reps, opts.cpu)
        print(line, flush=True)
        lines.append(line)
    if opts.output:
        with open(opts.output, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
