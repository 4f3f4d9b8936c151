"""pypto: write tensor kernels in Python, compile them with PTO, run them here.

    import pypto, torch

    @pypto.jit
    def kernel(a: pypto.Tensor([], pypto.DT_FP32),
               b: pypto.Tensor([], pypto.DT_FP32),
               out: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(64, 128)
        out[:] = (a + b).exp() * 2 - a

    a, b = torch.rand(256, 1000), torch.rand(256, 1000)
    out = torch.empty(256, 1000)
    kernel(a, b, out)               # traces, compiles (or hits a cache), runs
    kernel.last_compile.source      # "embedded", "disk", "memory", "ptod HIT", ...

Kernels compile in-process and are cached on disk across processes
($PYPTO_CACHE_DIR, default ~/.cache/pypto/kernels; pypto.clear_cache() or
`python -m pypto clear-cache` empties it); with PYPTO_COMPILE_SERVER=host:port
they compile on a ptod daemon instead. Errors raised while tracing or
compiling name the kernel's source line that recorded the offending op.
"""

import pkgutil

# The native extension (_native.so) is a Bazel output in
# bazel-bin/client/python/pypto: let it join this package.
__path__ = pkgutil.extend_path(__path__, __name__)

from . import debug, experimental, fp8, frontend, tensor_methods  # noqa: E402,F401
from .recorded_function import function  # noqa: E402,F401
from .cache import cache_dir, clear_cache, compile_stats, reset_compile_stats  # noqa: E402
from .dtypes import (  # noqa: E402,F401
    DataType, DT_BF16, DT_BOOL, DT_DOUBLE, DT_FP16, DT_FP32, DT_FP8E4M3, DT_FP8E5M2,
    DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64)
from .dtypes import (  # noqa: E402,F401
    DT_BOTTOM, DT_FP4_E1M2X2, DT_FP4_E2M1X2, DT_FP4E2M1, DT_FP8, DT_FP8E8M0, DT_HF4, DT_HF8,
    DT_INT4, bytes_of)
from .errors import (  # noqa: E402,F401
    CompileError, DynamicSizeWarning, NotYetImplementedError, TraceError, UnsupportedTargetError)
from . import error  # noqa: E402,F401
from .enums import (  # noqa: E402,F401
    CachePolicy, CastMode, CompStage, LogBaseType, OpType, OutType, PrecisionType, ReduceMode,
    ReLuType, SaturationMode, ScatterMode, TILEOP_ND, TILEOP_NZ, TileOpFormat, TopKAlgo,
    TransMode, platform)
from .element import Element  # noqa: E402,F401
from .jit_function import CompileInfo, JitFunction, jit  # noqa: E402,F401
from .ops import LATER_OPS as _LATER_OPS, _later  # noqa: E402
from .ops import (  # noqa: E402,F401,A004
    abs, add, amax, amin, arange, argmax, argmin, ceil, clip, full, ones, zeros, cos, div, eq, erf, erfc, exp, exp2, expm1, floor, floor_divide, ge, gt, le, log,
    log1p, log2, log10, lt, matmul, maximum, minimum, mul, ne, neg, pow, prod, reciprocal, relu, remainder, round,
    rms_norm, rsqrt, sigmoid, sign, sin, softmax, sqrt, sub, sum, tanh, trunc, where)
from .ops import (  # noqa: E402,F401
    acos, acosh, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_left_shift,
    bitwise_not, bitwise_or, bitwise_right_shift, bitwise_xor, cbrt, ceil_div, cosh, floor_div,
    fmod, gcd, hypot, isfinite, isnan, logical_and, logical_not, logical_or, logical_xor, lrelu,
    prelu, signbit, sinh, tan, tril, triu)
from .casting import cast  # noqa: E402,F401
from .composites import (  # noqa: E402,F401
    axpy_, deinterleave, dequantize, expand_clone, fillpad, interleave, one_hot, pad, quantize,
    var)
from .indexing import (  # noqa: E402,F401
    gather, gathermask, index_add, index_add_, index_add__ub, index_add_ub, index_put_,
    index_select, scatter, scatter_, scatter_update)
from .layout import (  # noqa: E402,F401
    assemble, clone, concat, permute, reshape, transpose, unsqueeze, view)
from .interop import from_torch, to_torch  # noqa: E402,F401
from .rng import normal, uniform  # noqa: E402,F401
from .sorting import argsort, topk  # noqa: E402,F401
from .scans import cumprod, cumsum  # noqa: E402,F401
from .extra_ops import (  # noqa: E402,F401
    atomic_add, expand_exp_dif, pack, quant_mx, scaled_mm, unpack)
from .conv import conv  # noqa: E402,F401
from .control_flow import cond, is_loop_begin, is_loop_end, loop, loop_unroll  # noqa: E402,F401
from .control_flow import max, min  # noqa: E402,F401,A004  (of symbolic scalars)
from . import symbolic_scalar as _symbolic_scalar_module  # noqa: E402
from .symbolic import SymbolicCondition, SymbolicScalar, ceildiv, symbolic_scalar  # noqa: E402,F401
from .verification import (  # noqa: E402,F401
    pass_verify_print, pass_verify_save, set_verify_golden_data, verify)
from .jit_options import RunMode  # noqa: E402,F401
from .config import (  # noqa: E402,F401
    get_codegen_options, get_debug_options, get_host_options, get_pass_options,
    get_runtime_options, get_verify_options, options, reset_options, set_codegen_options,
    set_debug_options, set_host_options, set_pass_options, set_runtime_options,
    set_verify_options)
from .config import (  # noqa: E402,F401
    PassConfigKey, PassConfigs, TileL0Info, TileL1Info, get_conv_tile_shapes, get_global_config,
    get_pass_config, get_pass_configs, get_pass_default_config, set_conv_tile_shapes,
    set_global_config, set_matrix_size, set_options, set_pass_config, set_pass_default_config,
    set_semantic_label)
from .tensors import DYN, DYNAMIC, STATIC, Tensor, tensor  # noqa: E402,F401
from .tiling import (  # noqa: E402,F401
    get_cube_tile_shapes, get_vec_tile_shapes, set_cube_tile_shapes, set_vec_tile_shapes)

# pypto.symbolic_scalar is the function; PyPTO's module path
# pypto.symbolic_scalar.SymInt reads through it.
SymInt = _symbolic_scalar_module.SymInt
symbolic_scalar.SymInt = SymInt
element = Element

for _n in _LATER_OPS:
    globals().setdefault(_n, _later(_n))
del _n

__version__ = "0.1.0"
