"""Tensor's operators and methods, bound onto tensors.Tensor late.

tensors.py defines what a Tensor is (an annotation, a traced value); what
its operators and methods record is defined by the ops above it (ops.py,
layout.py, matmul.py, composites.py). They are written here as the methods of a mixin
class and attached to Tensor once, when the package is imported:

    a + b, 2 - a, a / 3, a ** 2, a // b, a % b, a @ b, -a, abs(a), a < b
    a.exp(), a.sum(dim), x.clip(0, 1), a.matmul(b)      (pypto.<name>(a, ...))
    x[2:10, :, 3], x.view(...), x.reshape(...)          (views: layout.py)
    out[:] = expr, out[i:, :] = y, out.move(expr)       (writes)

== and != stay identity comparisons (tensors.py): elementwise equality is
pypto.eq / pypto.ne (or a.eq(b)).
"""

import itertools

from . import casting, composites, indexing, layout, ops, scans, sorting
from .enums import CachePolicy, CastMode, SaturationMode
from .errors import TraceError
from .tensors import Tensor, _is_scalar


class _TensorMethods:
    """The methods bind() attaches to Tensor."""

    def __add__(self, other): return ops.add(self, other)
    def __radd__(self, other): return ops.add(other, self)
    def __sub__(self, other): return ops.sub(self, other)
    def __rsub__(self, other): return ops.sub(other, self)
    def __mul__(self, other): return ops.mul(self, other)
    def __rmul__(self, other): return ops.mul(other, self)
    def __truediv__(self, other): return ops.div(self, other)
    def __rtruediv__(self, other): return ops.div(other, self)
    def __neg__(self): return ops.neg(self)
    def __abs__(self): return ops.abs(self)
    def __pos__(self): return self

    def __pow__(self, other): return ops.pow(self, other)
    def __rpow__(self, other): return ops.pow(other, self)
    def __lt__(self, other): return ops.lt(self, other)
    def __le__(self, other): return ops.le(self, other)
    def __gt__(self, other): return ops.gt(self, other)
    def __ge__(self, other): return ops.ge(self, other)

    def add(self, other): return ops.add(self, other)
    def sub(self, other): return ops.sub(self, other)
    def mul(self, other): return ops.mul(self, other)
    def div(self, other, precision_type=None): return ops.div(self, other, precision_type)
    def pow(self, exponent, precision_type=None): return ops.pow(self, exponent, precision_type)
    def maximum(self, other): return ops.maximum(self, other)
    def minimum(self, other): return ops.minimum(self, other)
    def eq(self, other): return ops.eq(self, other)
    def ne(self, other): return ops.ne(self, other)
    def lt(self, other): return ops.lt(self, other)
    def le(self, other): return ops.le(self, other)
    def gt(self, other): return ops.gt(self, other)
    def ge(self, other): return ops.ge(self, other)
    def clip(self, min=None, max=None): return ops.clip(self, min, max)  # noqa: A002
    def cast(self, dtype, mode=CastMode.CAST_NONE, satmode=SaturationMode.OFF):
        return casting.cast(self, dtype, mode, satmode)
    def sum(self, dim=None, keepdim=False): return ops.sum(self, dim, keepdim)
    def softmax(self, dim): return ops.softmax(self, dim)
    def amax(self, dim=None, keepdim=False): return ops.amax(self, dim, keepdim)
    def amin(self, dim=None, keepdim=False): return ops.amin(self, dim, keepdim)
    def prod(self, dim=None, keepdim=False): return ops.prod(self, dim, keepdim)
    def argmax(self, dim=-1, keepdim=False): return ops.argmax(self, dim, keepdim)
    def argmin(self, dim=-1, keepdim=False): return ops.argmin(self, dim, keepdim)

    def __floordiv__(self, other): return ops.floor_divide(self, other)
    def __rfloordiv__(self, other): return ops.floor_divide(other, self)
    def __mod__(self, other): return ops.remainder(self, other)
    def __rmod__(self, other): return ops.remainder(other, self)
    def floor_divide(self, other): return ops.floor_divide(self, other)
    def remainder(self, other, precision_type=None):
        return ops.remainder(self, other, precision_type)

    def fmod(self, other, precision_type=None): return ops.fmod(self, other, precision_type)
    def gcd(self, other): return ops.gcd(self, other)
    def atan2(self, other): return ops.atan2(self, other)
    def hypot(self, other): return ops.hypot(self, other)
    def bitwise_and(self, other): return ops.bitwise_and(self, other)
    def bitwise_or(self, other): return ops.bitwise_or(self, other)
    def bitwise_xor(self, other): return ops.bitwise_xor(self, other)
    def bitwise_left_shift(self, other): return ops.bitwise_left_shift(self, other)
    def bitwise_right_shift(self, other): return ops.bitwise_right_shift(self, other)
    def logical_and(self, other): return ops.logical_and(self, other)
    def logical_or(self, other): return ops.logical_or(self, other)
    def logical_xor(self, other): return ops.logical_xor(self, other)
    def lrelu(self, negative_slope=0.01): return ops.lrelu(self, negative_slope)
    def prelu(self, weight): return ops.prelu(self, weight)
    def round(self, decimals=0): return ops.round(self, decimals)
    def tril(self, diagonal=0): return ops.tril(self, diagonal)
    def triu(self, diagonal=0): return ops.triu(self, diagonal)

    def where(self, condition, y):
        """pypto.where(condition, self, y)."""
        return ops.where(condition, self, y)

    def tril_(self, diagonal=0):
        """In place: self takes tril(self, diagonal) (as self.move(...)); returns self."""
        self.move(ops.tril(self, diagonal))
        return self

    def triu_(self, diagonal=0):
        """In place: self takes triu(self, diagonal); returns self."""
        self.move(ops.triu(self, diagonal))
        return self

    def expand_clone(self, shape, *, valid_shape=None):
        """pypto.expand_clone(self, shape, valid_shape=valid_shape)."""
        return composites.expand_clone(self, shape, valid_shape=valid_shape)

    def cumsum(self, dim): return scans.cumsum(self, dim)
    def topk(self, k, dim=None, largest=True):
        """pypto.topk(self, k, dim, largest): (values, indices)."""
        return sorting.topk(self, k, dim, largest)

    def cumprod(self, dim): return scans.cumprod(self, dim)
    def var(self, dim=None, *, correction=1, keepdim=False):
        """pypto.var(self, dim, correction=correction, keepdim=keepdim)."""
        return composites.var(self, dim, correction=correction, keepdim=keepdim)

    def assemble(self, input, offsets):  # noqa: A002 - PyPTO's names
        """pypto.assemble(input, offsets, self): writes input into self at
        offsets; returns None."""
        layout.assemble(input, offsets, self)

    @staticmethod
    def concat(tensors, dim=0):
        """pypto.concat(tensors, dim): Tensor.concat([a, b], 1) or
        a.concat([a, b], 1)."""
        return layout.concat(tensors, dim)

    def get_cache_policy(self, policy):
        """Whether CachePolicy `policy` is switched on for this tensor
        (False until set_cache_policy switches it on)."""
        return _cache_policies(self).get(_cache_policy(policy, "get_cache_policy"), False)

    def set_cache_policy(self, policy, value):
        """Switches CachePolicy `policy` on or off for this tensor. Recorded
        and returned by get_cache_policy; results do not depend on it (on
        the NPU it steers prefetching and caching of the tensor's data)."""
        policy = _cache_policy(policy, "set_cache_policy")
        if not isinstance(value, bool):
            raise TypeError(f"pypto.Tensor.set_cache_policy: value must be a bool, got "
                            f"{type(value).__name__}")
        _cache_policies(self)[policy] = value

    def __matmul__(self, other): return ops.matmul(self, other)
    def __rmatmul__(self, other): return ops.matmul(other, self)

    def matmul(self, other, out_dtype=None, a_trans=False, b_trans=False, *,
               c_matrix_nz=False, extend_params=None):
        """pypto.matmul(self, other, ...)."""
        return ops.matmul(self, other, out_dtype, a_trans, b_trans, c_matrix_nz=c_matrix_nz,
                          extend_params=extend_params)

    # Views and writes ---------------------------------------------------------

    def __getitem__(self, key, *, valid_shape=None):
        """x[2:10, :, 3]: a view (layout.py); x.__getitem__(key,
        valid_shape=...) gives it a valid region (PyPTO's keyword)."""
        if self._builder is None:
            raise TraceError("slicing a Tensor is only possible inside a @pypto.jit kernel")
        if isinstance(key, Tensor) and valid_shape is None:
            return indexing.getitem_gather(self, key)  # x[t]: rows along dim 0
        return layout.getitem(self, key, valid_shape=valid_shape)

    def __setitem__(self, key, value):
        if not _is_full(key, len(self._shape or ())) or _is_scalar(value):
            if self._builder is None:
                raise TraceError("writing into a region is only possible inside a "
                                 "@pypto.jit kernel")
            layout.setitem(self, key, value)  # an assemble (layout.py)
            return
        self._write(value, f"{self._name or 'tensor'}[:] = ...")

    # Index ops (indexing.py).
    def gather(self, dim, index): return indexing.gather(self, dim, index)
    def index_select(self, dim, index): return indexing.index_select(self, dim, index)
    def scatter(self, dim, index, src, *, reduce=None):
        return indexing.scatter(self, dim, index, src, reduce=reduce)
    def scatter_(self, dim, index, src, *, reduce=None):
        return indexing.scatter_(self, dim, index, src, reduce=reduce)
    def scatter_update(self, dim, index, src):
        return indexing.scatter_update(self, dim, index, src)
    def index_add(self, dim, index, source, *, alpha=1):
        return indexing.index_add(self, dim, index, source, alpha=alpha)
    def index_add_(self, dim, index, source, *, alpha=1):
        return indexing.index_add_(self, dim, index, source, alpha=alpha)

    def view(self, shape, offsets=None, *, valid_shape=None):
        return layout.view(self, shape, offsets, valid_shape)

    def reshape(self, shape, *more, valid_shape=None, inplace=False):
        return layout.reshape(self, shape, *more, valid_shape=valid_shape, inplace=inplace)

    def transpose(self, dim0, dim1): return layout.transpose(self, dim0, dim1)
    def permute(self, dims, *more): return layout.permute(self, dims, *more)
    def unsqueeze(self, dim): return layout.unsqueeze(self, dim)
    def clone(self): return layout.clone(self)

    def move(self, value):
        """out.move(expr): out takes expr's value (same as out[:] = expr)."""
        self._write(value, f"{self._name or 'tensor'}.move(...)")

    def _write(self, value, what):
        if self._builder is None:
            raise TraceError(f"{what}: writing is only possible inside a @pypto.jit kernel")
        layout.check_writable(self, what)
        if isinstance(value, Tensor) and value._static is not None and \
                value._builder is self._builder:
            layout.write_valid_region(self, value, what)  # out[:] = v writes v's valid region
            return
        self._builder.write(self, value, what)


def _is_full(key, rank):
    """Whether a subscript selects the whole tensor: [:], [...], [:, :]."""
    keys = key if isinstance(key, tuple) else (key,)
    if keys == (Ellipsis,):
        return True
    if len(keys) > rank:
        return False
    return all(isinstance(k, slice) and k == slice(None) for k in keys)


def _unary_method(kind):
    fn = getattr(ops, kind)

    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = kind
    method.__doc__ = f"pypto.{kind}(self)."
    return method


_UNARY_METHODS = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
                  "reciprocal", "neg", "abs", "relu", "sigmoid", "tanh", "erf", "erfc", "sign",
                  "floor", "ceil", "trunc", "sin", "cos", "tan", "asin", "acos", "atan",
                  "sinh", "cosh", "asinh", "acosh", "atanh", "cbrt", "bitwise_not",
                  "logical_not", "isnan", "isfinite", "signbit")


def _cache_policy(policy, method):
    if not isinstance(policy, CachePolicy):
        raise TypeError(f"pypto.Tensor.{method}: policy must be a pypto.CachePolicy, got "
                        f"{policy!r}")
    return policy


def _cache_policies(t):
    return t.__dict__.setdefault("_cache_policies", {})


_TENSOR_IDS = itertools.count(1)


def _tensor_id(self):
    """A positive int unique to this Tensor object in the process (a view or
    an op's result is a new Tensor with its own id)."""
    return self.__dict__.setdefault("_tensor_id", next(_TENSOR_IDS))


def bind():
    """Attaches the operators and methods to Tensor."""
    Tensor.id = property(_tensor_id)
    for name, member in vars(_TensorMethods).items():
        if callable(member) and name not in ("__dict__", "__weakref__", "__init__"):
            setattr(Tensor, name, member)
    for kind in _UNARY_METHODS:
        setattr(Tensor, kind, _unary_method(kind))


bind()
