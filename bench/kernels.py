#!/usr/bin/env python3
"""pypto kernels against numpy and torch on this CPU, with the machine's ceilings.

    tools/pypto-python bench/kernels.py [--reps=N] [--short-reps=N] [--only=SUBSTR[,SUBSTR...]] [--output=FILE.md]
    bench/run.sh [same flags]            # builds what it needs first

Prints one markdown table. Every row is measured in this run against numpy and
torch (CPU) with the same number of threads: the runtime's vector workers
(PTO_VECTOR_WORKERS, default: the CPUs this process may use), which also sets
OMP/OpenBLAS threads and torch.set_num_threads. Each implementation is called
in turn, in blocks of calls (so load from other processes hits all of them
alike), after warm-up calls; a time is the median of its calls. Ratios are
baseline time / pypto time (above 1: pypto is faster), from the medians and,
in brackets, from the best times: on a shared machine the best times show
what a quiet machine would, the medians what this one did.

Each row with a bandwidth has one ceiling, measured beside it the same way
as the row: bench/ceilings' triad in this process (libceilings.so through
bench/ceilings_lib.py, same thread count) over the row's bytes is one more
implementation taking turns in the row's blocks, timed as pypto's calls are
(wall time around each call, the same number of calls, warm data, its
threads kept awake and placed as pypto's workers are), so the row and its
ceiling see the same machine. A row that writes little (a row sum, a skinny
matmul) has the triad's reads alone instead, a read pass
(READ_CEILING_WRITES). Other matmul rows have none: an FMA pass starts its
threads per call, so it cannot be timed as a row is. "pypto of ceiling" is
pypto's median rate over the ceiling's median rate (and best over best);
where pypto is above it a note says why (the row's data stays in a cache,
where a triad is no bound). A row whose call is mostly fixed cost has no
fraction but "call-bound" with the fixed costs: an empty pypto call and an
empty pass timed in the same blocks, against --call-bound-share
(CALL_BOUND_SHARE) of each side's median. Without the library there is no
ceiling column. bench/ceilings' start-of-run figures (best of several
passes) are printed in the header as the machine's, not used by rows.

The last column is the row's cold compile (bench/cold_compile.py): its first
call in a fresh process with an empty pypto cache, precompiled headers ready.
The five seed rows (SEED_ROWS) are in the full table and listed at its end.

A row whose op pypto cannot compile yet prints "n/a (...)" with the reason
instead of failing.
"""

import os
import sys

# Thread counts must be fixed before numpy, OpenBLAS, torch or the runtime's
# executor start their pools.
THREADS = int(os.environ.get("PTO_VECTOR_WORKERS") or len(os.sched_getaffinity(0)))
os.environ["PTO_VECTOR_WORKERS"] = str(THREADS)
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(THREADS)

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

import pypto  # noqa: E402

import ceilings_lib  # noqa: E402  (bench/, beside this script)
import cold_compile  # noqa: E402
import sparse_attention  # noqa: E402

torch.set_num_threads(THREADS)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NA_NUMPY_BF16 = "n/a (numpy has no bfloat16)"


# ---------------------------------------------------------------------------
# Machine facts


def cpu_model():
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # first CPU only
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        return platform.processor() or "unknown CPU"
    flags = set(fields.get("flags", "").split())
    isa = [x for x in ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile")
           if x in flags]
    return (f"{fields.get('model name', '?')} (family {fields.get('cpu family', '?')} "
            f"model {fields.get('model', '?')} stepping {fields.get('stepping', '?')}; "
            f"{', '.join(isa)}), {os.cpu_count()} CPUs, {THREADS} used")


_BLAS_PROBE = """
import os, numpy as np
a = np.ones((64, 64))
a @ a
seen = []
with open("/proc/self/maps") as f:
    for line in f:
        parts = line.split()
        if len(parts) >= 6:
            name = os.path.basename(parts[-1])
            if ("blas" in name or "lapack" in name) and parts[-1] not in seen:
                seen.append(parts[-1])
print("\\n".join(os.path.realpath(p) for p in seen))
"""


def blas_in_use():
    """The BLAS shared object numpy really calls: the libraries mapped after a
    matmul. Probed in a child process: OpenBLAS's idle threads spin, and in
    this process they slowed torch's elementwise ops 20x until the matmul rows."""
    try:
        out = subprocess.run([sys.executable, "-c", _BLAS_PROBE], capture_output=True,
                             text=True, timeout=120, check=True).stdout
    except (subprocess.SubprocessError, OSError) as e:
        return f"unknown (probe failed: {e})"
    real = [line for line in out.splitlines() if line]
    openblas = [p for p in real if "openblas" in p]
    if openblas:
        return f"OpenBLAS ({', '.join(openblas)})"
    if real:
        return f"NOT OpenBLAS: {', '.join(real)} (reference BLAS is slow; see bench/README.md)"
    return "unknown (no BLAS library mapped after a matmul)"


def source_tree():
    """The commit measured, and whether the working tree differed from it."""
    try:
        head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (subprocess.SubprocessError, OSError):
        return "unknown (not a git checkout)"
    return f"{head}" + (" with uncommitted changes" if dirty else "")


def load_ceilings_lib(path):
    """(ceilings_lib.CeilingsLib, None), or (None, why not)."""
    if not os.path.exists(path):
        return None, f"{path} not built (bazel build //bench:libceilings.so)"
    try:
        return ceilings_lib.CeilingsLib(path), None
    except OSError as e:
        return None, f"{path} did not load: {e}"


def run_ceilings(path, sizes_kib):
    if not os.access(path, os.X_OK):
        return None, f"{path} not built (bazel build //bench:ceilings)"
    cmd = [path, f"--threads={THREADS}", "--sizes_kib=" + ",".join(str(s) for s in sizes_kib)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True).stdout
    except (subprocess.SubprocessError, OSError) as e:
        return None, f"{' '.join(cmd)} failed: {e}"
    for line in out.splitlines():
        if line.startswith("JSON "):
            data = json.loads(line[5:])
            data["triad_gbps"] = {int(k): v for k, v in data["triad_gbps"].items()}
            return data, None
    return None, f"{' '.join(cmd)}: no JSON line in its output"


# ---------------------------------------------------------------------------
# Timing


# Pause before each block of calls: libgomp's idle workers (torch) spin
# for up to 300000 pause instructions (milliseconds) after every parallel
# loop, and OpenBLAS's threads spin too, taking a core from whatever runs
# next in this process.
SETTLE_SECONDS = 0.03


# A call shorter than this gets more timed calls (--short-reps): a median of
# 30 calls of 0.15-0.9 ms moved by up to 2x between runs on this shared
# machine, and such calls are cheap to repeat.
SHORT_CALL_SECONDS = 1e-3


def timed_call(f):
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def interleaved_times(impls, reps, warmup, block=5, short_reps=0, tied=()):
    """Seconds per call of each callable: a list of (median, min) per callable.

    The callables take turns in blocks of `block` timed calls, each block
    after a pause (SETTLE_SECONDS) and one untimed call, until each has
    `reps` timed calls. Turns spread load from other processes over all of
    them alike; the pause and the blocks keep one library's spinning idle
    threads from being timed as part of another library's calls.

    A callable whose last warm-up call took less than SHORT_CALL_SECONDS gets
    max(reps, short_reps) timed calls instead, in the same blocks (longer
    blocks would time fewer first-calls-after-a-pause, which are slower, and
    so measure something else than the other rows).

    The callables at the indices in `tied` get as many timed calls as the
    first one (the row's pypto call) whatever their own warm-up took: a
    ceiling or a fixed cost timed beside a row is the same statistic over
    the same number of calls as the row.
    """
    want = [reps] * len(impls)
    for i, f in enumerate(impls):
        took = None
        for _ in range(warmup):
            took = timed_call(f)
        if short_reps > reps and took is not None and took < SHORT_CALL_SECONDS:
            want[i] = short_reps
    for i in tied:
        want[i] = want[0]
    times = [[] for _ in impls]
    while any(len(t) < w for t, w in zip(times, want)):
        for i, f in enumerate(impls):
            n = min(block, want[i] - len(times[i]))
            if n <= 0:
                continue
            if len(impls) > 1:
                time.sleep(SETTLE_SECONDS)
            f()
            for _ in range(n):
                times[i].append(timed_call(f))
    return [(statistics.median(t), min(t)) for t in times]


def interleaved_medians(impls, reps, warmup):
    return [med for med, _ in interleaved_times(impls, reps, warmup)]


def median_times(fns, args, reps, warmup):
    """{name: median seconds per call of fns[name](*args)}, taking turns
    (interleaved_times); for the other bench scripts."""
    calls = [lambda fn=fn: fn(*args) for fn in fns.values()]
    return dict(zip(fns, interleaved_medians(calls, reps, warmup)))


# ---------------------------------------------------------------------------
# Kernels. Each is traced on first call; an op pypto lacks raises there.

FP32, FP16, BF16 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16


def T(dt):
    return pypto.Tensor([], dt)


def k_add(tile):
    def add(a: T(FP32), b: T(FP32), out: T(FP32)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = a + b
    return pypto.jit(add)


def k_add16(tile):
    def add16(a: T(FP16), b: T(FP16), out: T(FP16)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = a + b
    return pypto.jit(add16)


def k_add_mul(tile):
    def add_mul(a: T(FP32), b: T(FP32), out: T(FP32)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = (a + b) * 2
    return pypto.jit(add_mul)


def k_chain(tile):
    def chain(a: T(FP32), b: T(FP32), out: T(FP32)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = (a + b).exp() * 2 - a
    return pypto.jit(chain)


def k_erfc(tile):
    def erfc(x: T(FP32), out: T(FP32)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.erfc(x)
    return pypto.jit(erfc)


def k_sum(tile):
    def row_sum(x: T(FP32), out: T(FP32)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.sum(x, -1, keepdim=True)
    return pypto.jit(row_sum)


def k_softmax(tile):
    def softmax(x: T(FP32), out: T(FP32)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.softmax(x, -1)
    return pypto.jit(softmax)


def k_softmax_dynamic(tile, cols):
    def softmax_dynamic(x: pypto.Tensor([pypto.DYNAMIC, cols], FP32),
                        out: pypto.Tensor([pypto.DYNAMIC, cols], FP32)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.softmax(x, -1)
    return pypto.jit(softmax_dynamic)


def k_layer_norm(tile, eps=1e-5):
    # Layer norm from primitives, as PyPTO's examples write it.
    def layer_norm(x: T(FP32), gamma: T(FP32), beta: T(FP32), out: T(FP32)):
        pypto.set_vec_tile_shapes(*tile)
        n = x.shape[-1]
        mean = pypto.sum(x, -1, keepdim=True) * (1.0 / n)
        xc = x - mean
        var = pypto.sum(xc * xc, -1, keepdim=True) * (1.0 / n)
        out[:] = xc * pypto.rsqrt(var + eps) * gamma + beta
    return pypto.jit(layer_norm)


def k_matmul(dt, cube, target=None):
    def matmul(a: T(dt), b: T(dt), out: T(dt)):
        pypto.set_cube_tile_shapes(*cube)
        out[:] = pypto.matmul(a, b, dt)
    return pypto.jit(matmul, codegen_options={"target": target} if target else None)


# ---------------------------------------------------------------------------
# Rows


class Case:
    """One table row.

    make() returns (pypto_args, numpy_fn, torch_fn, check) where the fns run
    the baseline once and check() compares pypto's output with a reference
    (None: fine, else a message). bytes/flops are the compulsory traffic or
    arithmetic used for the ceiling fraction; writes, where given, the bytes
    of it written (a row that writes little has a read pass as its ceiling:
    beside_ceiling).
    """

    def __init__(self, name, kernel, make, nbytes=0, flops=0, torch_fused=None,
                 memory_bound=False, target=None, other_target=None, writes=None):
        self.name, self.kernel, self.make = name, kernel, make
        self.nbytes, self.flops, self.writes = nbytes, flops, writes
        self.torch_fused = torch_fused
        # (host target, kernel): the same kernel compiled for that concrete
        # host target (its codegen_options), timed in the same turns.
        self.other_target = other_target
        # Speed targets: memory-bound kernels reach 50% of the triad;
        # target = ("torch" or "numpy", ratio baseline/pypto at least).
        self.memory_bound, self.target = memory_bound, target


def rand(shape, dtype=np.float32, lo=-2.0, hi=2.0, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(dtype)


def close(got, want, rtol, atol=0.0):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    err = np.abs(got - want) - (atol + rtol * np.abs(want))
    if np.all(err <= 0):
        return None
    i = np.unravel_index(np.argmax(err), err.shape)
    return f"wrong at {tuple(int(x) for x in i)}: {got[i]} vs {want[i]}"


def binary_case(name, kernel, shape, np_dt, np_fn, torch_fn, ref, rtol, atol=None,
                memory_bound=True, target=None):
    def make():
        a, b = rand(shape, np_dt, seed=1), rand(shape, np_dt, seed=2)
        out, np_out = np.empty_like(a), np.empty_like(a)
        ta, tb, t_out = torch.from_numpy(a), torch.from_numpy(b), torch.empty_like(torch.from_numpy(a))
        return ((a, b, out),
                lambda: np_fn(a, b, np_out),
                lambda: torch_fn(ta, tb, t_out),
                lambda: close(out, ref(a.astype(np.float64), b.astype(np.float64)), rtol,
                              0.0 if atol is None else atol(a.astype(np.float64),
                                                           b.astype(np.float64))))
    size = np.dtype(np_dt).itemsize * int(np.prod(shape))
    return Case(name, kernel, make, nbytes=3 * size, memory_bound=memory_bound, target=target)


def erfc_case(kernel, n):
    def make():
        x = rand((n,), seed=3)
        out, t_out = np.empty_like(x), torch.empty(n)
        tx = torch.from_numpy(x)
        return ((x, out), "n/a (numpy has no erfc)", lambda: torch.erfc(tx, out=t_out),
                lambda: close(out, torch.erfc(tx.double()).numpy(), 0, 1e-6))
    # Memory-bound on v4 (one thread's erfc block code runs at a plain negate's
    # speed at 1M), so it has the bandwidth target.
    return Case("erfc 1M fp32", kernel, make, nbytes=8 * n, memory_bound=True)


def sum_case(kernel, shape):
    def make():
        x = rand(shape, seed=4)
        out = np.empty(shape[:-1] + (1,), np.float32)
        np_out = np.empty_like(out)
        tx, t_out = torch.from_numpy(x), torch.from_numpy(np.empty_like(out))
        ref = x.astype(np.float64).sum(-1, keepdims=True)
        scale = np.abs(x.astype(np.float64)).sum(-1, keepdims=True)
        return ((x, out),
                lambda: np.sum(x, -1, keepdims=True, out=np_out),
                lambda: torch.sum(tx, -1, keepdim=True, out=t_out),
                lambda: close(out / scale, ref / scale, 0, 1e-5))
    return Case("sum last dim " + "x".join(map(str, shape)), kernel, make,
                nbytes=4 * (int(np.prod(shape)) + int(np.prod(shape[:-1]))), memory_bound=True,
                writes=4 * int(np.prod(shape[:-1])))


def softmax_case(kernel, shape, name=None):
    def make():
        x = rand(shape, seed=5)
        out, np_out = np.empty_like(x), np.empty_like(x)
        tx, t_out = torch.from_numpy(x), torch.empty(shape)

        def np_softmax():
            e = np.exp(x - x.max(-1, keepdims=True))
            np.divide(e, e.sum(-1, keepdims=True), out=np_out)

        def torch_op_by_op():
            e = torch.exp(tx - tx.amax(-1, keepdim=True))
            torch.div(e, e.sum(-1, keepdim=True), out=t_out)

        x64 = x.astype(np.float64)
        e = np.exp(x64 - x64.max(-1, keepdims=True))
        return ((x, out), np_softmax, torch_op_by_op,
                lambda: close(out, e / e.sum(-1, keepdims=True), 1e-5, 1e-7))
    name = name or "softmax " + "x".join(map(str, shape))
    return Case(name, kernel, make, nbytes=8 * int(np.prod(shape)),
                torch_fused=lambda x: torch.softmax(x, -1), memory_bound=True,
                target=("torch", 1.5))


def layer_norm_case(kernel, shape, eps=1e-5):
    def make():
        x = rand(shape, seed=6)
        gamma, beta = rand(shape[-1:], seed=7), rand(shape[-1:], seed=8)
        out, np_out = np.empty_like(x), np.empty_like(x)
        tx, tg, tb, t_out = map(torch.from_numpy, (x, gamma, beta, np.empty_like(x)))

        def np_ln():
            xc = x - x.mean(-1, keepdims=True)
            var = (xc * xc).mean(-1, keepdims=True)
            np.add(xc / np.sqrt(var + eps) * gamma, beta, out=np_out)

        def torch_op_by_op():
            xc = tx - tx.mean(-1, keepdim=True)
            var = (xc * xc).mean(-1, keepdim=True)
            torch.add(xc * torch.rsqrt(var + eps) * tg, tb, out=t_out)

        x64 = x.astype(np.float64)
        xc = x64 - x64.mean(-1, keepdims=True)
        ref = xc / np.sqrt((xc * xc).mean(-1, keepdims=True) + eps) * gamma + beta
        return ((x, gamma, beta, out), np_ln, torch_op_by_op, lambda: close(out, ref, 1e-4, 1e-5))
    return Case("layer norm " + "x".join(map(str, shape)), kernel, make,
                nbytes=8 * int(np.prod(shape)),
                torch_fused=lambda x: torch.nn.functional.layer_norm(x, x.shape[-1:]),
                memory_bound=True, target=("torch", 1.5))


def matmul_case(kernel, m, k, n, dt, other_target=None):
    torch_dt = torch.float32 if dt == "fp32" else torch.bfloat16

    def make():
        a32, b32 = rand((m, k), seed=9), rand((k, n), seed=10)
        ta, tb = torch.from_numpy(a32).to(torch_dt), torch.from_numpy(b32).to(torch_dt)
        t_out = torch.empty((m, n), dtype=torch_dt)
        ref = ta.double().numpy() @ tb.double().numpy()
        scale = np.abs(ta.double().numpy()) @ np.abs(tb.double().numpy())
        if dt == "fp32":
            out, np_out = np.empty((m, n), np.float32), np.empty((m, n), np.float32)
            args = (a32, b32, out)
            np_fn = lambda: np.matmul(a32, b32, out=np_out)  # noqa: E731
            check = lambda: close(out / scale, ref / scale, 0, 1e-5)  # noqa: E731
        else:
            out = torch.empty((m, n), dtype=torch_dt)
            args = (ta, tb, out)
            np_fn = NA_NUMPY_BF16
            check = lambda: close(out.double().numpy() / scale, ref / scale, 0, 1e-2)  # noqa: E731
        return args, np_fn, lambda: torch.matmul(ta, tb, out=t_out), check
    target = ("numpy", 0.5) if (m, k, n, dt) == (1024, 1024, 1024, "fp32") else None
    # A skinny product (a few rows) streams B once at a few flops a byte: its
    # bytes, mostly read, are its bound, and it has a read pass beside it.
    size = 4 if dt == "fp32" else 2
    nbytes, writes = (size * (m * k + k * n + m * n), size * m * n) if m <= 16 else (0, None)
    return Case(f"matmul {m}x{k}x{n} {dt}", kernel, make, flops=2 * m * k * n, target=target,
                other_target=other_target, nbytes=nbytes, writes=writes)


def cases():
    # Elementwise tiles of 2 rows of 1024: three tiles fit in L1 (bench runs
    # on this machine measured 2x1024 at or near the best of 1..16 rows).
    ew = (2, 1024)
    # Matmul: output tiles of 128x128 (one cube task each, K in L1 blocks of
    # 256 and L0 steps of 64); 64x128x64 in two 64x32 tasks (one per core).
    big_cube = ([128, 128], [64, 256], [128, 128])
    small_cube = ([64, 64], [128, 128], [32, 32])
    # Skinny products (M <= 16): each task streams whole 8 KiB runs of B's
    # rows (tiles 128 wide read 512 bytes a row, a page apart: slower).
    gemv_cube = ([16, 16], [8, 32], [2048, 2048])
    return [
        binary_case("add 1024x1024 fp32", k_add(ew), (1024, 1024), np.float32,
                    lambda a, b, o: np.add(a, b, out=o), lambda a, b, o: torch.add(a, b, out=o),
                    lambda a, b: a + b, 1e-6),
        binary_case("add 1024x1024 fp16", k_add16(ew), (1024, 1024), np.float16,
                    lambda a, b, o: np.add(a, b, out=o), lambda a, b, o: torch.add(a, b, out=o),
                    lambda a, b: (a + b).astype(np.float16), 1e-3),
        binary_case("fused (a+b)*2 1024x1024 fp32", k_add_mul(ew), (1024, 1024),
                    np.float32, lambda a, b, o: np.multiply(a + b, 2, out=o),
                    lambda a, b, o: torch.mul(a + b, 2, out=o), lambda a, b: (a + b) * 2, 1e-6,
                    target=("torch", 1.5)),
        # The final subtraction cancels: error relative to the terms' size.
        binary_case("fused (a+b).exp()*2-a 1024x1024 fp32", k_chain(ew), (1024, 1024),
                    np.float32, lambda a, b, o: np.subtract(np.exp(a + b) * 2, a, out=o),
                    lambda a, b, o: torch.sub(torch.exp(a + b) * 2, a, out=o),
                    lambda a, b: np.exp(a + b) * 2 - a, 1e-5,
                    atol=lambda a, b: 1e-5 * (2 * np.exp(a + b) + np.abs(a)),
                    memory_bound=False, target=("torch", 1.5)),
        erfc_case(k_erfc((8192,)), 1 << 20),
        sum_case(k_sum((8, 1024)), (4096, 1024)),
        softmax_case(k_softmax((4, 8, 1, 256)), (32, 32, 1, 256)),
        softmax_case(k_softmax((4, 1024)), (4096, 1024)),
        # The same softmax compiled once for every batch size (a DYNAMIC dim).
        softmax_case(k_softmax_dynamic((4, 1024), 1024), (4096, 1024), SOFTMAX_DYNAMIC),
        layer_norm_case(k_layer_norm((4, 1024)), (4096, 1024)),
        matmul_case(k_matmul(FP32, small_cube), 64, 128, 64, "fp32"),
        matmul_case(k_matmul(FP32, big_cube), 512, 512, 512, "fp32"),
        matmul_case(k_matmul(FP32, big_cube), 1024, 1024, 1024, "fp32"),
        # One row and eight (a decode step's projections): tiles of m x 2048
        # (one task per thread), B streamed from GM without packing.
        matmul_case(k_matmul(FP32, gemv_cube), 1, 4096, 4096, "fp32"),
        matmul_case(k_matmul(FP32, gemv_cube), 8, 4096, 4096, "fp32"),
        head_scores_case(k_head_scores(big_cube, 1, 64), 1024, 1024, 1, 64),
        concat_case(k_concat(ew), (1024, 1024)),
        # On a CPU with AMX-BF16 "host" is an AMX target (host-x86_64-v4-amx
        # or -v3-amx: BF16 on AMX tiles); the rows also time the same kernel
        # on its ISA level without AMX (host-x86_64-v4 or -v3: bf16 widened
        # to f32, the FMA kernel) in the same turns.
        matmul_case(k_matmul(BF16, small_cube), 64, 128, 64, "bf16",
                    bf16_other_target(lambda target: k_matmul(BF16, small_cube, target))),
        matmul_case(k_matmul(BF16, big_cube), 512, 512, 512, "bf16",
                    bf16_other_target(lambda target: k_matmul(BF16, big_cube, target))),
        matmul_case(k_matmul(BF16, big_cube), 1024, 1024, 1024, "bf16",
                    bf16_other_target(lambda target: k_matmul(BF16, big_cube, target))),
        # Skinny bf16 (decode-step projections): numpy has no bf16, so the
        # fp32 rows above are the numpy comparison for the same shapes.
        matmul_case(k_matmul(BF16, gemv_cube), 1, 4096, 4096, "bf16"),
        matmul_case(k_matmul(BF16, gemv_cube), 8, 4096, 4096, "bf16"),
        sparse_attention_case(),
    ]


# The seed's five rows: always in the full table, and listed at its end.
SOFTMAX_DYNAMIC = "softmax 4096x1024 fp32, DYNAMIC batch"
SPARSE_ATTENTION = (f"sparse flash attention, top {sparse_attention.TOP_K} of "
                    f"{sparse_attention.NUM_BLOCKS} blocks of {sparse_attention.BLOCK}, "
                    f"{sparse_attention.HEADS} heads x {sparse_attention.DIM}, fp16 q, int8 KV")
SEED_ROWS = ("add 1024x1024 fp16", "matmul 64x128x64 bf16", SOFTMAX_DYNAMIC, "erfc 1M fp32",
             SPARSE_ATTENTION)


def sparse_attention_case():
    """bench/sparse_attention.py's decode step against the same step in torch ops."""
    def make():
        inputs = sparse_attention.make_inputs()
        t_out = torch.empty_like(inputs[-1])
        ref = sparse_attention.torch_reference(*inputs[:-1], dtype=torch.float64)

        def check():
            wrong = close(inputs[-1].float().numpy(), ref.double().numpy(), 2e-3, 1e-3)
            theirs = close(sparse_attention.torch_reference(*inputs[:-1]).float().numpy(),
                           ref.double().numpy(), 2e-3, 1e-3)
            return wrong or (theirs and f"torch's own result: {theirs}")
        return (inputs, "n/a (numpy has no topk; torch is the reference)",
                lambda: sparse_attention.torch_reference(*inputs[:-1], out=t_out), check)
    # No rate or ceiling: its 0.2 MiB are read in dependent steps (select, gather, then
    # block after block), so neither a bandwidth nor a triad over them bounds it.
    return Case(SPARSE_ATTENTION, sparse_attention.kernel(), make)


def bf16_other_target(make_kernel):
    """(host's target without AMX, make_kernel(it)) where "host" is an AMX
    target, else None."""
    from pypto import _native
    host = _native.resolve_target("host")
    if not host.endswith("-amx"):
        return None
    other = host[:-len("-amx")]
    return (other, make_kernel(other))


def k_concat(tile):
    def concat(a: T(FP32), b: T(FP32), out: T(FP32)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.concat([a * 2, b + 1], 1)
    return pypto.jit(concat)


def concat_case(kernel, shape):
    """concat([a * 2, b + 1], dim=1): each input's tiles stored straight into
    their half of the result (no workspace, no copy)."""
    def make():
        a, b = rand(shape, seed=1), rand(shape, seed=2)
        out_shape = (shape[0], 2 * shape[1])
        out, np_out = np.empty(out_shape, np.float32), np.empty(out_shape, np.float32)
        ta, tb, t_out = torch.from_numpy(a), torch.from_numpy(b), torch.empty(out_shape)
        ref = np.concatenate([a.astype(np.float64) * 2, b.astype(np.float64) + 1], 1)
        return ((a, b, out),
                lambda: np.concatenate([a * 2, b + 1], 1, out=np_out),
                lambda: torch.cat([ta * 2, tb + 1], 1, out=t_out),
                lambda: close(out, ref, 1e-6))
    size = 4 * int(np.prod(shape))
    return Case(f"concat [a*2, b+1] {shape[0]}x{shape[1]} x2 fp32", kernel, make,
                nbytes=4 * size, memory_bound=True)


def k_head_scores(cube, head, dim):
    def head_scores(q: T(FP32), k: T(FP32), out: T(FP32)):
        pypto.set_cube_tile_shapes(*cube)
        cols = slice(head * dim, (head + 1) * dim)
        out[:] = q[:, cols] @ k[:, cols].transpose(0, 1)
    return pypto.jit(head_scores)


def head_scores_case(kernel, seq, hidden, head, dim):
    """One head's attention scores from [seq, hidden] projections: column
    views of q and k read in place by the cube (no clones)."""
    def make():
        q, k = rand((seq, hidden), seed=11), rand((seq, hidden), seed=12)
        cols = slice(head * dim, (head + 1) * dim)
        out, np_out = np.empty((seq, seq), np.float32), np.empty((seq, seq), np.float32)
        tq, tk, t_out = torch.from_numpy(q), torch.from_numpy(k), torch.empty((seq, seq))
        qh, kh = q[:, cols].astype(np.float64), k[:, cols].astype(np.float64)
        ref, scale = qh @ kh.T, np.abs(qh) @ np.abs(kh).T
        return ((q, k, out),
                lambda: np.matmul(q[:, cols], k[:, cols].T, out=np_out),
                lambda: torch.matmul(tq[:, cols], tk[:, cols].T, out=t_out),
                lambda: close(out / scale, ref / scale, 0, 1e-5))
    return Case(f"matmul q[:, h] @ k[:, h].T {seq}x{dim}x{seq} fp32 (views)", kernel, make,
                flops=2 * seq * dim * seq)


# ---------------------------------------------------------------------------
# Runtime overhead: per task, and per launch


def native_run(kernel, args):
    """A callable that runs kernel's compiled binary without the Python wrapper."""
    kernel(*args)  # compile (or load) and run once
    entry = next(iter(kernel._cache.values()))
    arrays = list(args)
    return lambda: entry.compiled.kernel.run(arrays)


def overhead_rows(reps, warmup):
    """Per-task cost: the same 4096x1024 add cut into many small tiles and into
    few large ones; launch cost: a one-tile 8x8 add against torch and numpy."""
    rows = []
    shape = (4096, 1024)
    a, b = rand(shape, seed=11), rand(shape, seed=12)
    out = np.empty_like(a)
    # (many, few) pairs: 8x128 tiles also have short rows; 1x1024 tiles only
    # differ from 16x1024 in their number (16x1024: three f32 tiles fill the
    # 192 KiB UB).
    pairs = [((8, 128), (16, 1024)), ((1, 1024), (16, 1024))]
    tiles = sorted({t for pair in pairs for t in pair})
    runs = [native_run(k_add(tile), (a, b, out)) for tile in tiles]
    tasks = {t: (shape[0] // t[0]) * (shape[1] // t[1]) for t in tiles}
    times = dict(zip(tiles, interleaved_medians(runs, reps, warmup)))
    for tile in tiles:
        rows.append(f"| add 4096x1024 fp32, tile {tile[0]}x{tile[1]} | {tasks[tile]} | "
                    f"{fmt_us(times[tile])} | |")
    for many, few in pairs:
        per_task = (times[many] - times[few]) / (tasks[many] - tasks[few])
        rows.append(f"| per-task overhead, tiles {many[0]}x{many[1]} vs {few[0]}x{few[1]} | | "
                    f"{per_task * 1e9:.0f} ns/task of wall time | "
                    f"x {THREADS} threads = {per_task * THREADS * 1e9:.0f} ns of CPU time |")

    # The same on 4096x8 (128 KiB in all: little memory traffic to blur the
    # difference): 4096 tasks of one 8-float row against 8 tasks.
    small = (4096, 8)
    sa, sb = rand(small, seed=15), rand(small, seed=16)
    s_out = np.empty_like(sa)
    t_many, t_few = interleaved_medians(
        [native_run(k_add((1, 8)), (sa, sb, s_out)), native_run(k_add((512, 8)), (sa, sb, s_out))],
        reps, warmup)
    rows.append(f"| add 4096x8 fp32, tile 1x8 | 4096 | {fmt_us(t_many)} | |")
    rows.append(f"| add 4096x8 fp32, tile 512x8 | 8 | {fmt_us(t_few)} | |")
    per_task = (t_many - t_few) / (4096 - 8)
    rows.append(f"| per-task overhead, tiles 1x8 vs 512x8 | | {per_task * 1e9:.0f} ns/task of wall "
                f"time | x {THREADS} threads = {per_task * THREADS * 1e9:.0f} ns of CPU time |")

    return rows + launch_rows(reps, warmup)


def launch_rows(reps, warmup):
    """Launch cost: a one-tile 8x8 add through the jit function (with and
    without its repeat-call fast path), through kernel.run, torch and numpy."""
    rows = []
    x, y = rand((8, 8), seed=13), rand((8, 8), seed=14)
    o, np_o = np.empty_like(x), np.empty_like(x)
    tx, ty, to = torch.from_numpy(x), torch.from_numpy(y), torch.empty(8, 8)
    tiny = k_add((8, 8))
    raw = native_run(tiny, (x, y, o))
    # The same kernel without the repeat-call fast path: every call binds and
    # checks its arguments (the wrapper before the fast path).
    slow = k_add((8, 8))
    slow._fast_ok = False
    slow(x, y, o)
    t_call, t_slow, t_raw, t_np, t_torch = interleaved_medians(
        [lambda: tiny(x, y, o), lambda: slow(x, y, o), raw, lambda: np.add(x, y, out=np_o),
         lambda: torch.add(tx, ty, out=to)], reps * 20, warmup)
    rows.append(f"| launch: add 8x8 through the jit function | 1 | {fmt_us(t_call)} | "
                f"torch.add(out=) {fmt_us(t_torch)}, np.add(out=) {fmt_us(t_np)} |")
    rows.append(f"| launch: add 8x8 through the jit function, fast path off | 1 | "
                f"{fmt_us(t_slow)} | full binding and checks on every call |")
    rows.append(f"| launch: add 8x8, kernel.run only | 1 | {fmt_us(t_raw)} | "
                f"the jit wrapper adds {fmt_us(t_call - t_raw)} "
                f"({fmt_us(t_slow - t_raw)} with the fast path off) |")
    return rows


# ---------------------------------------------------------------------------
# Table


def fmt_us(seconds):
    us = seconds * 1e6
    return f"{us:.0f} us" if us >= 100 else f"{us:.1f} us"


def short(exc):
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text if len(text) <= 120 else text[:117] + "..."


def ratio(base, pto):
    """'1.23x (min 1.40x)': baseline/pypto from medians, and from best times."""
    return f"{base[0] / pto[0]:.2f}x (min {base[1] / pto[1]:.2f}x)"


def fmt_bytes(nbytes):
    """'12 MiB', '16.02 MiB', '64 KiB'."""
    if nbytes < 2**20:
        return f"{max(1, nbytes // 1024)} KiB"
    mib = nbytes / 2**20
    return f"{mib:.0f} MiB" if mib == int(mib) else f"{mib:.2f} MiB"


# Why a matmul row has no ceiling beside it.
NO_FMA_CEILING = ("no ceiling: an FMA pass starts its threads each call, so it cannot be timed "
                  "as the row is (the FP32 FMA and BF16 dot peaks in the header are the machine's)")


# A row is call-bound when a call's fixed cost is at least this share of its
# median time, on pypto's side or on the ceiling's. The fixed costs are empty
# calls timed in the row's blocks as the row is: pypto's, a kernel of one 1x8
# tile per thread on the runtime's pool (empty_call); the ceiling's, a pass
# of one chunk per thread on its pool. There a rate measures a call's start
# and end (the call, thread wake-ups, the first tasks), not bandwidth, and a
# fraction of the ceiling swings with them: the row prints "call-bound" with
# the fixed costs instead.
CALL_BOUND_SHARE = 0.25

_EMPTY_CALL = []


def empty_call():
    """A pypto call that does next to nothing on the runtime's pool: an add of
    one 1x8 tile per thread (THREADS tasks), compiled once."""
    if not _EMPTY_CALL:
        x, y = rand((THREADS, 8), seed=17), rand((THREADS, 8), seed=18)
        out = np.empty_like(x)
        kernel = k_add((1, 8))
        kernel(x, y, out)
        _EMPTY_CALL.append(lambda: kernel(x, y, out))
    return _EMPTY_CALL[0]


def fixed_shares(t_pto, t_ceil, fixed):
    """(pypto's empty call / pypto's median, the empty pass / the ceiling pass's median)."""
    return fixed[0][0] / t_pto[0], fixed[1][0] / t_ceil[0]


def call_bound(t_pto, t_ceil, fixed, what, share=CALL_BOUND_SHARE):
    """The row's "call-bound" cell, or None where both sides are measured
    (an empty call under `share` of pypto's median and an empty pass under
    it of the ceiling pass's). fixed: (pypto's empty call, the empty pass),
    each (median, min) seconds."""
    shares = fixed_shares(t_pto, t_ceil, fixed)
    if max(shares) < share:
        return None
    return (f"call-bound: an empty call is {fmt_us(fixed[0][0])} of pypto's {fmt_us(t_pto[0])} "
            f"({100 * shares[0]:.0f}%), an empty pass {fmt_us(fixed[1][0])} of the {what}'s "
            f"{fmt_us(t_ceil[0])} ({100 * shares[1]:.0f}%); at {100 * share:.0f}% or "
            f"more a call's fixed cost, not bandwidth, sets the rates: no fraction (bench/README.md)")


# A row that writes at most this share of its bytes (a row sum, a matrix-vector
# product) has the triad's reads alone as its ceiling: a triad writes a third
# of its bytes, and a write costs more than a read (the cache line is read
# first), so a triad would understate what a read-mostly kernel can reach.
READ_CEILING_WRITES = 1 / 8


def beside_ceiling(case, lib):
    """The row's ceiling, to time beside it as the row is timed (the wall time around one
    pass per call, in the row's blocks), and its work per call: a triad over the row's bytes,
    or a read pass over them for a row that writes little (READ_CEILING_WRITES); (None, 0)
    without the library or for a row without bytes (a matmul's flops: NO_FMA_CEILING)."""
    if lib is None or not case.nbytes:
        return None, 0
    reads_mostly = case.writes is not None and case.writes <= READ_CEILING_WRITES * case.nbytes
    loop = (lib.read if reads_mostly else lib.triad)(case.nbytes, THREADS)
    return loop, loop


def cpu_caches():
    """[(level, bytes, CPUs sharing it)] of CPU 0's data and unified caches (sysfs), innermost first."""
    out = []
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return out
    for entry in entries:
        try:
            def read(name):
                with open(os.path.join(base, entry, name)) as f:
                    return f.read().strip()
            if read("type") == "Instruction":
                continue
            size = read("size")
            scale = {"K": 1024, "M": 1024 ** 2}.get(size[-1], 1)
            shared = sum(len(range(int(a), int(b or a) + 1)) for a, _, b in
                         (part.partition("-") for part in read("shared_cpu_list").split(",")))
            out.append((int(read("level")), int(size.rstrip("KM")) * scale, shared))
        except (OSError, ValueError):
            continue
    return sorted(out)


def residency(nbytes):
    """Where `nbytes`, split over THREADS threads, stays between calls: 'L2 (1 MiB a core)',
    'L3 (32 MiB)' or 'DRAM'."""
    for level, size, shared in cpu_caches():
        if (nbytes / THREADS if shared == 1 else nbytes) <= size:
            return f"L{level} ({fmt_bytes(size)}" + (" a core)" if shared == 1 else ")")
    return "DRAM"


def above_note(case, kind="triad"):
    """Why pypto's rate can exceed the ceiling (a `kind` pass) beside its row."""
    if not cpu_caches():
        return (f"pypto above it: this machine does not report its caches (no "
                f"/sys/devices/system/cpu/cpu0/cache), so the row's {fmt_bytes(case.nbytes)} may stay "
                f"in one between calls, where a {kind} pass's rate is no bound (bench/README.md)")
    where = residency(case.nbytes)
    if where == "DRAM":
        return ("pypto above it with data larger than the caches: not explained by cache "
                "residency; compare the best/best figure and the run's load")
    return (f"pypto above it: the row's {fmt_bytes(case.nbytes)} stay in the {where} between "
            f"calls, where a {kind} pass's rate is no bound (bench/README.md)")


def run_case(case, reps, warmup, short_reps=0, lib=None, bound_share=CALL_BOUND_SHARE):
    """(the row's markdown cells after the name, its target verdict or None).

    lib: a ceilings_lib.CeilingsLib (or None), whose loop for this row takes
    turns with the implementations and is timed as they are, so that the
    row's fraction compares rates measured the same way in the same blocks.
    bound_share: the call-bound threshold (call_bound)."""
    blank = [""] * 6
    try:
        args, np_fn, torch_fn, check = case.make()
    except (TypeError, RuntimeError) as e:  # e.g. a dtype this torch lacks
        return [f"n/a (inputs: {short(e)})"] + blank, None
    try:
        case.kernel(*args)
    except (NotImplementedError, AttributeError, pypto.CompileError, pypto.TraceError,
            TypeError, ValueError) as e:
        # The message says which: an op not implemented, a dtype not accepted,
        # a tile shape the compiler refuses, ...
        return [f"n/a (op not yet supported: {type(e).__name__}: {short(e)})"] + blank, None
    wrong = check()
    impls = [lambda: case.kernel(*args)]
    other = None
    if case.other_target:
        other_name, other_kernel = case.other_target
        other_kernel(*args)
        other_wrong = check()
        wrong = wrong or (other_wrong and f"on {other_name}: {other_wrong}")
        other = (other_name, other_kernel)
    if callable(np_fn):
        impls.append(np_fn)
    impls.append(torch_fn)
    fused_at = None
    if case.torch_fused is not None:
        tx = torch.from_numpy(args[0])
        fused_at = len(impls)
        impls.append(lambda: case.torch_fused(tx))
    if other:
        other = (other[0], len(impls))
        other_kernel = case.other_target[1]
        impls.append(lambda: other_kernel(*args))
    ceiling_at = None
    ceiling_call, ceiling_loop = beside_ceiling(case, lib)
    if ceiling_call is not None:
        # The pass, then the fixed costs: pypto's empty call and an empty
        # pass of the same kind (one chunk per thread).
        ceiling_at = len(impls)
        empty_pass = (lib.read if ceiling_loop.kind == "read" else lib.triad)(
            lib.chunk_bytes * THREADS, THREADS)
        impls += [ceiling_call, empty_call(), empty_pass]
    tied = range(ceiling_at, len(impls)) if ceiling_at is not None else ()
    times = interleaved_times(impls, reps, warmup, short_reps=short_reps, tied=tied)
    t_pto = times[0]
    t_np = times[1] if callable(np_fn) else None
    t_torch = times[2 if callable(np_fn) else 1]
    t_fused = times[fused_at] if fused_at is not None else None

    note = ""
    if other:
        t_other = times[other[1]]
        note = f" (same kernel on {other[0]}: {fmt_us(t_other[0])}, speed-up {ratio(t_other, t_pto)})"
    cells = [fmt_us(t_pto[0]) + note + (f" **WRONG: {wrong}**" if wrong else "")]
    cells.append(fmt_us(t_np[0]) if t_np else np_fn)
    cells.append(ratio(t_np, t_pto) if t_np else "")
    cells.append(fmt_us(t_torch[0]) + (f" (torch's fused op {fmt_us(t_fused[0])})" if t_fused else ""))
    cells.append(ratio(t_torch, t_pto))
    verdicts = []
    # Rates (median, best) of pypto and of the ceiling beside it.
    fraction = None  # (median/median, best/best), None unmeasured
    bound = None  # the "call-bound" cell, where the row is
    kind = ceiling_loop.kind if ceiling_at is not None else "triad"
    what = f"{kind}@{fmt_bytes(case.nbytes)}"
    if case.flops or case.nbytes:
        unit = "GB/s"
        rate = (case.nbytes / t_pto[0] / 1e9, case.nbytes / t_pto[1] / 1e9)
        rates = [f"{rate[0]:.1f} GB/s"] if case.nbytes else []
        if case.flops:
            rates.insert(0, f"{case.flops / t_pto[0] / 1e9:.1f} GFLOP/s")
        cells.append(", ".join(rates))
        if ceiling_at is None and case.flops:
            cells.append(NO_FMA_CEILING)
        elif ceiling_at is not None:
            t_ceil = times[ceiling_at]
            fixed = times[ceiling_at + 1:ceiling_at + 3]
            bound = call_bound(t_pto, t_ceil, fixed, what, bound_share)
            work_done = ceiling_loop.bytes
            beside = (work_done / t_ceil[0] / 1e9, work_done / t_ceil[1] / 1e9)
            if bound:
                cells.append(bound)
            else:
                fraction = (rate[0] / beside[0], rate[1] / beside[1])
                note = f"; {above_note(case, kind)}" if max(fraction) > 1 else ""
                shares = fixed_shares(t_pto, t_ceil, fixed)
                cells.append(f"{100 * fraction[0]:.0f}% of {what} beside it, {beside[0]:.1f} "
                             f"{unit} (best/best {100 * fraction[1]:.0f}%; empty calls "
                             f"{100 * shares[0]:.0f}% of pypto's, {100 * shares[1]:.0f}% of the "
                             f"{kind}'s){note}")
        else:
            cells.append("")
    else:
        cells += ["", ""]
    if wrong:
        verdicts.append("results WRONG")
    if case.target:
        base_name, want = case.target
        base = t_torch if base_name == "torch" else t_np
        got, got_min = base[0] / t_pto[0], base[1] / t_pto[1]
        verdicts.append(f"{'met' if got >= want else 'NOT met'}: {base_name}/pypto {got:.2f}x "
                        f"(target >= {want}x; from best times {got_min:.2f}x, "
                        f"{'met' if got_min >= want else 'not met'})")
    if case.memory_bound and case.nbytes and not case.flops:
        if bound:
            verdicts.append(f"not judged against the bandwidth beside it (target >= 50%): "
                            f"{bound.partition(';')[0]}")
        elif fraction is None:
            verdicts.append("not measured: no triad beside the row (target >= 50% of it)")
        else:
            met = "met" if fraction[0] >= 0.5 else "NOT met"
            verdicts.append(
                f"{met}: {100 * fraction[0]:.0f}% of the bandwidth beside it (a {kind} over the "
                f"same {fmt_bytes(case.nbytes)} in the same blocks, medians; target >= 50%; "
                f"best/best {100 * fraction[1]:.0f}%)")
    return cells, "; ".join(verdicts) or None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=30, help="timed rounds per row")
    parser.add_argument("--short-reps", type=int, default=60,
                        help="timed calls of an implementation whose call takes under 1 ms "
                             "(when more than --reps)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls per implementation")
    parser.add_argument("--only", default="",
                        help="rows whose name contains this (or one of these, comma-separated)")
    parser.add_argument("--output", help="also write the report to this markdown file")
    parser.add_argument("--ceilings", default=os.path.join(REPO, "bazel-bin/bench/ceilings"),
                        help="the ceilings binary (bazel build //bench:ceilings)")
    parser.add_argument("--ceilings-lib",
                        default=os.path.join(REPO, "bazel-bin/bench/libceilings.so"),
                        help="the ceilings' loops in process, timed beside each row "
                             "(bazel build //bench:libceilings.so)")
    parser.add_argument("--call-bound-share", type=float, default=CALL_BOUND_SHARE,
                        help="a row is call-bound (no fraction of the ceiling) when an empty call "
                             "is at least this share of pypto's median or an empty triad pass of "
                             "the triad's")
    parser.add_argument("--no-overhead", action="store_true", help="skip the runtime overhead rows")
    parser.add_argument("--no-cold-compile", action="store_true",
                        help="skip the cold compile column (bench/cold_compile.py: each row's first "
                             "call in a fresh process with an empty pypto cache)")
    opts = parser.parse_args()
    if opts.reps < 1 or opts.warmup < 0:
        parser.error("--reps must be >= 1 and --warmup >= 0")
    if not opts.call_bound_share >= 0:
        parser.error(f"--call-bound-share must be >= 0, got {opts.call_bound_share}")

    lines = []

    def emit(line=""):
        print(line, flush=True)
        lines.append(line)

    wanted = opts.only.split(",")
    selected = [c for c in cases() if any(w in c.name for w in wanted)]
    sizes = sorted({max(1, c.nbytes // 1024) for c in selected if c.nbytes} | {512 * 1024})
    ceilings, why = run_ceilings(opts.ceilings, sizes)
    lib, lib_why = load_ceilings_lib(opts.ceilings_lib)

    emit(f"# pypto kernel benchmark, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC")
    emit()
    emit(f"- CPU: {cpu_model()}")
    emit(f"- threads: {THREADS} (PTO_VECTOR_WORKERS, OMP/OPENBLAS_NUM_THREADS, "
         f"torch.set_num_threads)")
    from pypto import _native
    emit(f"- pypto target: {_native.resolve_target('host')} (\"host\" here; PTO_HOST_TARGET overrides)")
    emit(f"- numpy {np.__version__}, BLAS: {blas_in_use()}")
    emit(f"- torch {torch.__version__} (CPU), pypto {pypto.__version__}, "
         f"Python {platform.python_version()}, source tree {source_tree()}")
    short_note = (f" ({max(opts.reps, opts.short_reps)} for one whose warm-up call took "
                  f"under {SHORT_CALL_SECONDS * 1e3:.0f} ms)" if opts.short_reps > opts.reps else "")
    emit(f"- {opts.reps} timed calls per implementation{short_note}, taking turns in blocks of 5 (each "
         f"after a {SETTLE_SECONDS * 1e3:.0f} ms pause and an untimed call) after "
         f"{opts.warmup} warm-up calls; times are medians; ratios are baseline/pypto "
         f"(> 1: pypto faster), from medians and (min) from best times")
    emit(f"- load average at start: {os.getloadavg()[0]:.2f} (other processes share these CPUs)")
    if ceilings:
        triads = ", ".join(f"{v:.1f} GB/s @ {fmt_bytes(k * 1024)}"
                           for k, v in sorted(ceilings["triad_gbps"].items()))
        dot = ceilings.get("bf16_dot_isa", "none")
        bf16 = (f"BF16 dot {ceilings['bf16_dot_gflops']:.1f} GFLOP/s (VDPBF16PS, {dot}); "
                if dot != "none" else "BF16 dot: none (no AVX512-BF16); ")
        emit(f"- ceilings (bench/ceilings, same run): FP32 FMA {ceilings['fma_gflops']:.1f} GFLOP/s "
             f"({ceilings['fma_isa']}); {bf16}triad bandwidth ({ceilings.get('triad_isa', '?')}) {triads}; "
             f"best of several passes at the start, the machine's figures: the rows compare with "
             f"the ceiling beside each, not with these")
    else:
        emit(f"- ceilings: n/a ({why})")
    caches = ", ".join(f"L{level} {fmt_bytes(size)}" + (" a core" if shared == 1 else "")
                       for level, size, shared in cpu_caches())
    emit(f"- caches: {caches or 'unknown'}")
    if lib:
        emit(f"- ceilings beside each row ({os.path.relpath(lib.path, REPO)}: bench/ceilings' loops "
             f"in this process, {THREADS} threads, one pass per call, timed as pypto's calls are "
             f"(the wall time around each call, medians and best of the same number of calls in "
             f"the same blocks, warm data)): a triad ({lib.triad_isa}) over the row's bytes, or "
             f"its reads alone (\"read\") where the row writes at most "
             f"{100 * READ_CEILING_WRITES:.1f}% of them; \"pypto of ceiling\" is pypto's median "
             f"rate over the pass's median rate (and best over best), with a note where pypto is "
             f"above it; \"call-bound\" instead where an empty call (pypto: one 1x8 tile per "
             f"thread; the pass: one chunk per thread), timed in the same blocks, is "
             f"{100 * opts.call_bound_share:.0f}% or more of either side's median; matmuls other "
             f"than skinny ones (a read pass) have none")
    else:
        emit(f"- ceilings beside each row: n/a ({lib_why}): no ceiling column")
    if not opts.no_cold_compile:
        emit(f"- cold compile: the row's first call in a fresh process with an empty pypto cache "
             f"and the precompiled headers ready (bench/cold_compile.py), wall time and, in "
             f"brackets, CPU time (the process's and the compiler's)")
    emit()
    emit("| kernel | pypto | numpy | numpy/pypto | torch (op by op) | torch/pypto | pypto rate | "
         "pypto of ceiling | cold compile |")
    emit("|---|---|---|---|---|---|---|---|---|")
    # Measured before the rows: the matmul rows start OpenBLAS's threads.
    overhead = [] if opts.no_overhead or opts.only else overhead_rows(opts.reps, opts.warmup)
    verdicts = []
    measured = {}
    for case in selected:
        cold = None if opts.no_cold_compile else cold_compile.measure(case.name, without=False)
        cells, verdict = run_case(case, opts.reps, opts.warmup, opts.short_reps, lib,
                                  opts.call_bound_share)
        measured[case.name] = not cells[0].startswith("n/a") and "WRONG" not in cells[0]
        emit(f"| {case.name} | " + " | ".join(cells + [cold_compile.cell(cold) if cold else ""])
             + " |")
        cold_verdict = cold and cold_compile.verdict(case.name, cold_compile.summary(cold["pch"]))
        if cold_verdict:
            target = cold_compile.target_of(case.name)
            verdict = "; ".join(v for v in (verdict, f"cold compile {cold_verdict} (first call "
                                            f"< {target * 1e3:.0f} ms)") if v)
        if verdict:
            verdicts.append(f"- {case.name}: {verdict}")
    emit()
    emit("Speed targets (medians; bandwidth against the triad beside the row when it was "
         "measured; rows not listed are n/a or have no target):")
    emit()
    for line in verdicts or ["- none measurable yet"]:
        emit(line)
    emit()
    seeds = [f"{name}: " + ("measured" if measured.get(name) else
                            "not selected (--only)" if name not in measured else "**NOT measured**")
             for name in SEED_ROWS]
    emit(f"Seed rows ({sum(bool(measured.get(n)) for n in SEED_ROWS)} of {len(SEED_ROWS)} "
         f"measured): " + "; ".join(seeds))
    if overhead:
        emit()
        emit("Runtime overhead (kernel.run without the Python wrapper unless said):")
        emit()
        emit("| what | tasks | median time | notes |")
        emit("|---|---|---|---|")
        for row in overhead:
            emit(row)
    emit()
    emit(f"Load average at end: {os.getloadavg()[0]:.2f}")
    if opts.output:
        with open(opts.output, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
