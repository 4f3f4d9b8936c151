#!/usr/bin/env python3
"""How fast could the host target's generated code be? Hand-edited variants, measured.

    bazel build //client/ptoc:ptoc //bench:host_flags //client/python:pypto/_native.so //proto:pto_v1_py
    tools/pypto-python bench/codegen_probe.py [--target=host] [--reps=N] [--output=FILE.md]

For a few of bench/kernels.py's kernels this takes the C++ the compiler
generates for --target (ptoc --print=cpp; default "host", which
PTO_HOST_TARGET overrides, as in pypto), builds it as the host backend does
for that target (bench/host_build.py: g++ -O2, the target's -march and
extensions from bench/host_flags, -ffp-contract=off -fno-math-errno) and
also builds edited copies: another -march or -O, the block computing straight from GM without UB
staging copies, F16C vector conversions for f16, glibc's libmvec vector
functions for exp and erfc, and pto_tile.h with exp back on libmvec's double
exp (PTO_TILE_FAST_EXP 0) for the exp chain and two softmaxes, and with erfc
back on libmvec's erfcf (PTO_TILE_FAST_ERF 0). --only=SUBSTR keeps the kernels
whose title contains it. bench/block_harness.cc runs each payload's block
over every tile on one thread (no runtime, no other threads: the code's own
speed). Variants take turns, several rounds; the table shows the best and the
median time and the speedup of the best time over the generated code's.

This is a measuring tool for compiler work (its findings go into
docs/bench/kernels-*.md), not a test: it needs g++, like the compiler itself.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402  (also fixes the thread environment)

import numpy as np  # noqa: E402

import host_build  # noqa: E402

REPO = kernels.REPO
PTOC = os.path.join(REPO, "bazel-bin/client/ptoc/ptoc")
HEADERS = host_build.HEADERS
CXX = host_build.CXX

# libmvec: glibc's vector math (expf since 2.22, erfcf since 2.35). The simd
# attribute tells GCC that a vector variant exists, so loops over tiles call
# _ZGVdN8v_expf etc. instead of scalar expf.
MVEC_DECLS = """
extern "C" float expf(float) __attribute__((simd("notinbranch"), const, nothrow));
extern "C" float erfcf(float) __attribute__((simd("notinbranch"), const, nothrow));
namespace pto_tile {
inline float VecExp(float x) { return expf(x); }
inline float VecErfc(float x) { return erfcf(x); }
}  // namespace pto_tile
"""


def generated_cpp(kernel, args, workdir, name, target):
    graph = os.path.join(workdir, name + ".pbtxt")
    with open(graph, "w") as f:
        f.write(str(kernel.trace(*args)))
    out = subprocess.run([PTOC, f"--graph={graph}", f"--target={target}", "--print=cpp"],
                         capture_output=True, text=True, check=True).stdout
    marker = "==== cpp ====\n"
    if marker not in out:
        raise RuntimeError(f"ptoc printed no C++ for {name}")
    return out.split(marker, 1)[1]


def block_body(cpp):
    """(start, end) of pto_f0's definition in the generated source."""
    start = cpp.index("static void pto_f0(")
    end = cpp.index("\n}\n", start) + 3
    return start, end


def replace_block(cpp, new_fn):
    start, end = block_body(cpp)
    return cpp[:start] + new_fn + cpp[end:]


def direct_add(tile_rows, cols, row_stride):
    return f"""static void pto_f0(void* const* buffers, const int64_t* args) {{
  // Hand edit: no UB staging; each row straight from GM to GM.
  const int64_t off = args[0] * {row_stride} + args[1];
  for (int64_t r = 0; r < {tile_rows}; ++r) {{
    const float* __restrict a = static_cast<const float*>(buffers[0]) + off + r * {row_stride};
    const float* __restrict b = static_cast<const float*>(buffers[1]) + off + r * {row_stride};
    float* __restrict d = static_cast<float*>(buffers[2]) + off + r * {row_stride};
    for (int64_t j = 0; j < {cols}; ++j) d[j] = a[j] + b[j];
  }}
}}
"""


def f16c_add(tile_rows, cols, row_stride):
    n = tile_rows * cols
    return f"""static void pto_f0(void* const* buffers, const int64_t* args) {{
  // Hand edit: F16C 8-wide conversions (vcvtph2ps / vcvtps2ph, round to
  // nearest even) for the loads, the f16 rounding of the sum, and the store.
  alignas(64) float t0[{n}];
  alignas(64) float t1[{n}];
  alignas(64) float t2[{n}];
  const int64_t off = args[0] * {row_stride} + args[1];
  const uint16_t* a = static_cast<const uint16_t*>(buffers[0]) + off;
  const uint16_t* b = static_cast<const uint16_t*>(buffers[1]) + off;
  uint16_t* d = static_cast<uint16_t*>(buffers[2]) + off;
  for (int64_t r = 0; r < {tile_rows}; ++r)
    for (int64_t j = 0; j < {cols}; j += 8) {{
      _mm256_store_ps(t0 + r * {cols} + j, _mm256_cvtph_ps(_mm_loadu_si128(
          reinterpret_cast<const __m128i*>(a + r * {row_stride} + j))));
      _mm256_store_ps(t1 + r * {cols} + j, _mm256_cvtph_ps(_mm_loadu_si128(
          reinterpret_cast<const __m128i*>(b + r * {row_stride} + j))));
    }}
  for (int64_t i = 0; i < {n}; i += 8) {{
    const __m256 v = _mm256_add_ps(_mm256_load_ps(t0 + i), _mm256_load_ps(t1 + i));
    _mm256_store_ps(t2 + i, _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)));
  }}
  for (int64_t r = 0; r < {tile_rows}; ++r)
    for (int64_t j = 0; j < {cols}; j += 8)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + r * {row_stride} + j),
                       _mm256_cvtps_ph(_mm256_load_ps(t2 + r * {cols} + j),
                                       _MM_FROUND_TO_NEAREST_INT));
}}
"""


def mvec_header(src):
    """pto_tile.h with exp and erfc through libmvec."""
    text = open(src).read()
    if "MvecMap" in text:
        return None  # pto_tile.h calls libmvec itself now
    if "__builtin_expf(a[i])" not in text:
        raise RuntimeError("pto_tile.h: TExp is no longer __builtin_expf(a[i]); update the probe")
    text = text.replace("__builtin_expf(a[i])", "VecExp(a[i])")
    text = text.replace("__builtin_erfcf(a[i])", "VecErfc(a[i])")
    return text.replace("namespace pto_tile {", MVEC_DECLS + "namespace pto_tile {", 1)


REDUCE_SEQUENTIAL = """          float acc = Op::Init();
          for (int64_t k = 0; k < R::kLen; ++k) acc = Op::Apply(acc, p[k * R::kStride]);
"""
REDUCE_LANES = """          float acc = Op::Init();
          if (R::kStride == 1 && R::kLen % 16 == 0) {
            // Hand edit: 16 independent partial results (vectorizes; no
            // chain of dependent adds), combined pairwise.
            float lane[16];
            for (int j = 0; j < 16; ++j) lane[j] = Op::Init();
            for (int64_t k = 0; k < R::kLen; k += 16)
              for (int j = 0; j < 16; ++j) lane[j] = Op::Apply(lane[j], p[k + j]);
            for (int w = 8; w >= 1; w /= 2)
              for (int j = 0; j < w; ++j) lane[j] = Op::Apply(lane[j], lane[j + w]);
            acc = lane[0];
          } else {
            for (int64_t k = 0; k < R::kLen; ++k) acc = Op::Apply(acc, p[k * R::kStride]);
          }
"""


def no_fast_exp_header(src):
    """pto_tile.h with exp through libmvec's double exp (before its own f32 exp)."""
    text = open(src).read()
    if "PTO_TILE_FAST_EXP" not in text:
        return None
    return "#define PTO_TILE_FAST_EXP 0\n" + text


def no_fast_erf_header(src):
    """pto_tile.h with erf/erfc through libmvec's erff/erfcf (before its own Erf8)."""
    text = open(src).read()
    if "PTO_TILE_FAST_ERF" not in text:
        return None
    return "#define PTO_TILE_FAST_ERF 0\n" + text


def lanes_header(src):
    """pto_tile.h whose row reductions keep 16 partial results."""
    text = open(src).read()
    if "ReduceRow" in text:
        return None  # pto_tile.h keeps partial results itself now
    if REDUCE_SEQUENTIAL not in text:
        raise RuntimeError("pto_tile.h: TReduce's loop changed; update the probe")
    return text.replace(REDUCE_SEQUENTIAL, REDUCE_LANES)


class Variant:
    """flags: -O and ISA flags; None: the target's, as the compiler builds."""

    def __init__(self, name, cpp, flags=None, header=None, libs=()):
        self.name, self.cpp, self.flags, self.header, self.libs = name, cpp, flags, header, libs
        self.times = []


def build(variant, workdir, tag, generated_flags):
    flags = generated_flags if variant.flags is None else variant.flags
    return host_build.build(variant.cpp, os.path.join(workdir, tag), flags,
                            header=variant.header, libs=variant.libs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=30, help="timed passes per variant per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", help="also write the table to this markdown file")
    parser.add_argument("--only", default="", help="groups whose title contains this")
    parser.add_argument("--target", default="host",
                        help="the target whose code is generated and built (default: host, "
                             "as the compiler resolves it: PTO_HOST_TARGET overrides)")
    parser.add_argument("--host-flags", default=host_build.HOST_FLAGS,
                        help="bench/host_flags (bazel build //bench:host_flags)")
    opts = parser.parse_args()
    try:
        target, isa = host_build.target_flags(opts.target, opts.host_flags)
    except RuntimeError as e:
        parser.error(str(e))
    generated = [host_build.OPT_LEVEL] + isa  # what the host backend builds with
    gen_name = f"generated ({' '.join(generated)})"
    # The other ISA level, for comparison.
    other_march = "x86-64-v3" if "-march=x86-64-v4" in isa else "x86-64-v4"
    print(f"target {target}: {' '.join(generated)}", file=sys.stderr)

    work = tempfile.mkdtemp(prefix="pto-codegen-probe-")
    harness = os.path.join(work, "block_harness")
    subprocess.run([CXX, "-O2", "-std=c++17", "-o", harness,
                    os.path.join(REPO, "bench/block_harness.cc"), "-ldl"], check=True)

    f32 = np.ones((1024, 1024), np.float32)
    f16 = f32.astype(np.float16)
    vec = np.ones((1 << 20,), np.float32)
    tile = (8, 1024)
    add = generated_cpp(kernels.k_add(tile), (f32, f32, f32.copy()), work, "add", target)
    add16 = generated_cpp(kernels.k_add16(tile), (f16, f16, f16.copy()), work, "add16", target)
    chain = generated_cpp(kernels.k_chain(tile), (f32, f32, f32.copy()), work, "chain", target)
    mvec = mvec_header(HEADERS[0])
    slow_erf = no_fast_erf_header(HEADERS[0])
    slow_exp = no_fast_exp_header(HEADERS[0])
    exp_before = ([Variant("pto_tile.h exp before: libmvec double exp", chain, header=slow_exp)]
                  if slow_exp else [])
    # (title, harness shape args, variants)
    groups = [
        ("add 1024x1024 fp32, tile 8x1024", ["1024", "1024", "8", "1024", "4", "3"], [
            Variant(gen_name, add),
            Variant("generated, -O3", add, ["-O3"] + isa),
            Variant(f"generated, -O2 -march={other_march}", add, ["-O2", f"-march={other_march}"]),
            Variant("hand edit: GM to GM, no UB copies", replace_block(add, direct_add(8, 1024, 1024))),
        ]),
        ("add 1024x1024 fp16, tile 8x1024", ["1024", "1024", "8", "1024", "2", "3"], [
            Variant(gen_name, add16),
            Variant("hand edit: F16C vector conversions",
                    "#include <immintrin.h>\n" + replace_block(add16, f16c_add(8, 1024, 1024))),
        ]),
        ("(a+b).exp()*2-a 1024x1024 fp32, tile 8x1024", ["1024", "1024", "8", "1024", "4", "3"], [
            Variant(gen_name, chain),
            *([Variant("hand edit: libmvec expf (-lmvec)", chain, header=mvec)] if mvec else []),
            *exp_before,
        ]),
    ]
    # Softmax over rows of 256 in tiles of 32 rows (the work of bench/kernels.py's
    # 32x32x1x256 row: 32 tiles of 8192) and over 4096x1024 in tiles of 4 rows.
    for rows, cols, tile_rows in ((1024, 256, 32), (4096, 1024, 4)):
        x = np.ones((rows, cols), np.float32)
        sm = generated_cpp(kernels.k_softmax((tile_rows, cols)), (x, x.copy()), work,
                           f"softmax{rows}", target)
        groups.append((f"softmax {rows}x{cols}, tile {tile_rows}x{cols}",
                       [str(rows), str(cols), str(tile_rows), str(cols), "4", "2"], [
            Variant(gen_name, sm),
            *([Variant("pto_tile.h exp before: libmvec double exp", sm, header=slow_exp)]
              if slow_exp else []),
        ]))
    try:
        erfc = generated_cpp(kernels.k_erfc((8192,)), (vec, vec.copy()), work, "erfc", target)
        groups.append(("erfc 1M fp32, tile 8192", ["1", str(1 << 20), "1", "8192", "4", "2"], [
            Variant(gen_name, erfc),
            *([Variant("hand edit: libmvec erfcf (-lmvec)", erfc, header=mvec)] if mvec else []),
            *([Variant("pto_tile.h erfc before: libmvec erfcf", erfc, header=slow_erf)]
              if slow_erf else []),
        ]))
    except Exception as e:  # erfc not compiled yet
        print(f"erfc skipped: {e}", file=sys.stderr)
    try:
        big = np.ones((4096, 1024), np.float32)
        row_sum = generated_cpp(kernels.k_sum((8, 1024)), (big, np.ones((4096, 1), np.float32)),
                                work, "sum", target)
        lanes = lanes_header(HEADERS[0])
        groups.append(("sum last dim 4096x1024, tile 8x1024", ["4096", "1024", "8", "1024", "4", "2"], [
            Variant(gen_name, row_sum)] + ([] if lanes is None else [
            Variant("hand edit: 16 partial sums per row", row_sum, header=lanes)])))
    except Exception as e:  # sum not compiled yet, or more than one group
        print(f"sum skipped: {e}", file=sys.stderr)

    groups = [g for g in groups if opts.only in g[0]]
    payloads = {}
    for gi, (_, _, variants) in enumerate(groups):
        for vi, v in enumerate(variants):
            payloads[(gi, vi)] = build(v, work, f"g{gi}v{vi}", generated)
    for _ in range(opts.rounds):
        for gi, (_, shape, variants) in enumerate(groups):
            for vi, v in enumerate(variants):
                out = subprocess.run([harness, payloads[(gi, vi)]] + shape + [str(opts.reps)],
                                     capture_output=True, text=True, check=True).stdout.split()
                v.times.append((float(out[0]), float(out[1])))

    lines = [f"Target {target}; the generated code built as the compiler builds it: "
             f"{' '.join(host_build.BASE_FLAGS + generated)}", "",
             "| kernel (one thread, block functions only) | variant | best | median | "
             "speedup (best) |", "|---|---|---|---|---|"]
    for title, _, variants in groups:
        base = min(t[0] for t in variants[0].times)
        for v in variants:
            best = min(t[0] for t in v.times)
            med = statistics.median(t[1] for t in v.times)
            lines.append(f"| {title} | {v.name} | {best:.2f} ms | {med:.2f} ms | "
                         f"{base / best:.2f}x |")
    print("\n".join(lines))
    if opts.output:
        with open(opts.output, "w") as f:
            f.write("\n".join(lines) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
