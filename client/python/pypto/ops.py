"""The ops of this version, as functions: pypto.add(a, b), pypto.exp(x), ...

Binary ops take two tensors of the same shape and dtype, or a tensor and a
Python number on either side (`2 - a` records rsubs). Other PyPTO ops exist as
names that raise NotImplementedError naming the issue that brings them.
"""

from .errors import TraceError, not_yet
from .tensors import Tensor, _is_scalar

# kind for tensor-op-tensor, tensor-op-scalar, scalar-op-tensor
_BINARY = {
    "add": ("add", "adds", "adds"),
    "sub": ("sub", "subs", "rsubs"),
    "mul": ("mul", "muls", "muls"),
    "div": ("div", "divs", "rdivs"),
}


def _check_traced(x, what, arg):
    if not isinstance(x, Tensor) or x._builder is None:
        raise TypeError(
            f"{what}: argument '{arg}' must be a pypto Tensor inside a @pypto.jit kernel "
            f"(or a Python number), got {type(x).__name__}")


def _binary(name, a, b):
    what = f"pypto.{name}"
    kind_tt, kind_ts, kind_st = _BINARY[name]
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        _check_traced(a, what, "input")
        _check_traced(b, what, "other")
        if a._builder is not b._builder:
            raise TraceError(f"{what}: operands come from different kernels")
        if a.dtype != b.dtype:
            raise TypeError(
                f"{what}: operand dtypes differ ({a.dtype.name} and {b.dtype.name}); "
                f"casts (pypto.cast) come with issue 3")
        if a._shape != b._shape:
            raise ValueError(
                f"{what}: operand shapes differ ({list(a._shape)} and {list(b._shape)}); "
                f"broadcasting comes with issue 3")
        return a._builder.add_op(kind_tt, [a, b], a.dtype, a._shape, what=what)
    if isinstance(a, Tensor) and _is_scalar(b):
        _check_traced(a, what, "input")
        return a._builder.add_op(kind_ts, [a], a.dtype, a._shape, {"scalar": float(b)}, what)
    if _is_scalar(a) and isinstance(b, Tensor):
        _check_traced(b, what, "other")
        return b._builder.add_op(kind_st, [b], b.dtype, b._shape, {"scalar": float(a)}, what)
    bad, arg = (a, "input") if not (isinstance(a, Tensor) or _is_scalar(a)) else (b, "other")
    if isinstance(bad, bool):
        raise TypeError(f"{what}: argument '{arg}' is a bool; use a number")
    raise TypeError(
        f"{what}: expected Tensors or a Tensor and a Python number, got "
        f"{type(a).__name__} and {type(b).__name__}")


def add(input, other):
    """input + other (tensor with tensor, or with a number on either side)."""
    return _binary("add", input, other)


def sub(input, other):
    """input - other."""
    return _binary("sub", input, other)


def mul(input, other):
    """input * other."""
    return _binary("mul", input, other)


def div(input, other):
    """input / other."""
    return _binary("div", input, other)


def _unary(kind, x):
    what = f"pypto.{kind}"
    _check_traced(x, what, "input")
    return x._builder.add_op(kind, [x], x.dtype, x._shape, what=what)


def exp(input):
    """e ** input, elementwise."""
    return _unary("exp", input)


def neg(input):
    """-input."""
    return _unary("neg", input)


def abs(input):  # noqa: A001 - PyPTO's name
    """|input|."""
    return _unary("abs", input)


def _later(name, issue):
    def op(*args, **kwargs):
        raise not_yet(f"pypto.{name}", issue)
    op.__name__ = name
    op.__doc__ = f"Not implemented yet (issue {issue})."
    return op


LATER_OPS = {
    3: ("pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "where",
        "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal",
        "relu", "sigmoid", "tanh", "erf", "erfc", "sign", "floor", "ceil", "round", "trunc",
        "sin", "cos", "clip", "cast", "sum", "amax", "amin", "prod", "argmax", "argmin",
        "matmul", "view", "assemble", "reshape", "transpose", "permute", "concat",
        "unsqueeze", "clone", "softmax", "rms_norm", "zeros", "full", "ones", "arange"),
    4: ("loop", "loop_unroll", "cond", "symbolic_scalar", "SymbolicScalar"),
    6: ("from_torch", "options", "set_pass_options", "set_host_options",
        "set_codegen_options", "set_debug_options", "verify", "gather", "index_select",
        "scatter", "topk", "argsort", "cumsum", "one_hot", "pad", "function"),
}
