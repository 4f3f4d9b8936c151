"""pypto.Tensor: a kernel argument annotation, and the proxy a trace records on.

As an annotation (outside a kernel):
    pypto.Tensor([], pypto.DT_FP32)        dtype fixed; rank and dims from each call
    pypto.Tensor((32, 64), pypto.DT_FP16)  fully static: other shapes are an error
    pypto.Tensor([pypto.DYNAMIC, 64], ...) dim 0 may vary: compiled once for every
                                           size (symbolic.py; ["bs", 64] names it)
    pypto.Tensor([pypto.DYNAMIC, ...], ...) dim 0 dynamic, the other dims (any
                                           number) fixed by each call
    pypto.Tensor[...]                      dtype and shape from each call
Inside a kernel, arguments are Tensors whose operators record ops:
    a + b, 2 - a, a / 3, a ** 2, -a, abs(a), a < b (DT_BOOL), a.exp(),
    x.clip(0, 1), out[:] = expr, out.move(expr); shapes broadcast as in numpy
"""

import numbers

from . import dtypes
from .errors import StaticShapeNeeded, TraceError
from .symbolic import SymbolicCondition, SymbolicScalar


class _DimMarker:
    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "pypto." + self._name


DYNAMIC = _DimMarker("DYNAMIC")
DYN = DYNAMIC
STATIC = _DimMarker("STATIC")


def _is_scalar(x):
    """Whether x is a Python number operand. A dynamic size or a loop index
    (a SymbolicScalar) is one too: the op records it as an expression that
    the kernel evaluates at launch (_number), never the trace's placeholder.
    A symbolic condition (n > 4) is not a number."""
    if isinstance(x, SymbolicCondition):
        return False
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _number(x):
    """A number operand as an op attribute: a float, or the SymbolicScalar
    itself (written as an expr; the compiler passes its value at launch)."""
    return x if isinstance(x, SymbolicScalar) else float(x)


def _static_number(x, what):
    """x where the front end needs its value while tracing (an integer power's
    exponent, arange's length): a SymbolicScalar raises StaticShapeNeeded, and
    the kernel compiles per size."""
    if isinstance(x, SymbolicScalar):
        raise StaticShapeNeeded(f"{what}: {x} (a size or index known only at run time) is "
                                f"needed while tracing")
    return x


class Tensor:
    """A tensor annotation or, inside a traced kernel, a symbolic tensor."""

    # Make numpy defer to our reflected operators (np.float32(2) * t).
    __array_ufunc__ = None
    __array_priority__ = 1000

    def __init__(self, shape=None, dtype=None, name="", format=None):
        if isinstance(shape, dtypes.DataType) and not isinstance(dtype, dtypes.DataType):
            shape, dtype = dtype, shape  # PyPTO also takes Tensor(dtype, shape)
        if shape is not None:
            if isinstance(shape, (int, numbers.Integral)):
                shape = (shape,)
            shape = tuple(shape)
            for i, d in enumerate(shape):
                if d is DYNAMIC or d is STATIC:
                    continue
                if d is Ellipsis and i == len(shape) - 1:
                    continue  # [pypto.DYNAMIC, ...]: the remaining dims from each call
                if isinstance(d, str):  # a named dynamic dim (symbolic.py)
                    from .symbolic import is_symbol_name
                    if not is_symbol_name(d):
                        raise ValueError(
                            f"pypto.Tensor: dim {i} name {d!r} is not an identifier "
                            f"(letters, digits, _; at most 64 chars)")
                    continue
                if isinstance(d, bool) or not isinstance(d, numbers.Integral) or int(d) <= 0:
                    raise ValueError(
                        f"pypto.Tensor: dim {i} must be a positive int or pypto.DYNAMIC, "
                        f"got {d!r}")
            shape = tuple(d if isinstance(d, (_DimMarker, str)) or d is Ellipsis or
                          _symbolic(d) else int(d) for d in shape)
        if dtype is not None and not isinstance(dtype, dtypes.DataType):
            raise TypeError(f"pypto.Tensor: dtype must be a pypto.DT_* constant, got {dtype!r}")
        if not isinstance(name, str):
            raise TypeError(f"pypto.Tensor: name must be a str, got {type(name).__name__}")
        self._spec_shape = shape   # None or () -> from the call
        self._dtype = dtype        # None -> from the call
        self._name = name
        self._format = format or "ND"
        self._builder = None       # set on proxies only
        self._vid = None
        self._param = None
        self._shape = None

    def __class_getitem__(cls, item):
        """Tensor[...] (infer all), Tensor[DT_FP16], Tensor[(32, 64), DT_FP16]."""
        if item is Ellipsis:
            return cls()
        if isinstance(item, dtypes.DataType):
            return cls(None, item)
        if isinstance(item, tuple) and len(item) == 2:
            shape, dtype = item
            return cls(None if shape is Ellipsis else shape, dtype)
        raise TypeError(f"pypto.Tensor[...]: expected ..., a dtype or (shape, dtype), got {item!r}")

    @classmethod
    def _proxy(cls, builder, vid, dtype, shape, name, param=None):
        t = cls.__new__(cls)
        t._spec_shape = tuple(shape)
        t._dtype = dtypes.DataType(dtype)
        t._name = name
        t._format = "ND"
        t._builder = builder
        t._vid = vid
        t._param = param
        t._shape = tuple(shape)
        # The open region (loop body, branch) it was made in: written inside
        # a later region it is carried; used after its own, an error.
        t._home = builder.current_region() if builder is not None else None
        return t

    # Properties ---------------------------------------------------------------

    @property
    def shape(self):
        if self._builder is not None:
            return list(self._shape)
        return None if self._spec_shape is None else list(self._spec_shape)

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    @name.setter
    def name(self, value):
        if not isinstance(value, str):
            raise TypeError("Tensor.name must be a str")
        self._name = value
        if self._builder is not None and self._vid is not None and self._param is None:
            self._builder.set_value_name(self._vid, value)

    @property
    def dim(self):
        s = self.shape
        return None if s is None else len(s)

    @property
    def format(self):
        """The layout: pypto.TileOpFormat.TILEOP_ND (equal to "ND") or TILEOP_NZ."""
        from .enums import TileOpFormat
        try:
            return TileOpFormat(self._format)
        except ValueError:
            return self._format

    def __repr__(self):
        if self._builder is None:
            shape = "inferred" if self._spec_shape is None else list(self._spec_shape)
            return f"pypto.Tensor({shape}, {self._dtype!r}, name={self._name!r})"
        return f"<pypto.Tensor {self._name or '%' + str(self._vid)} {list(self._shape)} {self._dtype.name}>"

    # Arithmetic ---------------------------------------------------------------

    def __add__(self, other): return _ops().add(self, other)
    def __radd__(self, other): return _ops().add(other, self)
    def __sub__(self, other): return _ops().sub(self, other)
    def __rsub__(self, other): return _ops().sub(other, self)
    def __mul__(self, other): return _ops().mul(self, other)
    def __rmul__(self, other): return _ops().mul(other, self)
    def __truediv__(self, other): return _ops().div(self, other)
    def __rtruediv__(self, other): return _ops().div(other, self)
    def __neg__(self): return _ops().neg(self)
    def __abs__(self): return _ops().abs(self)
    def __pos__(self): return self

    def __pow__(self, other): return _ops().pow(self, other)
    def __rpow__(self, other): return _ops().pow(other, self)
    def __lt__(self, other): return _ops().lt(self, other)
    def __le__(self, other): return _ops().le(self, other)
    def __gt__(self, other): return _ops().gt(self, other)
    def __ge__(self, other): return _ops().ge(self, other)

    def add(self, other): return _ops().add(self, other)
    def sub(self, other): return _ops().sub(self, other)
    def mul(self, other): return _ops().mul(self, other)
    def div(self, other): return _ops().div(self, other)
    def pow(self, exponent): return _ops().pow(self, exponent)
    def maximum(self, other): return _ops().maximum(self, other)
    def minimum(self, other): return _ops().minimum(self, other)
    def eq(self, other): return _ops().eq(self, other)
    def ne(self, other): return _ops().ne(self, other)
    def lt(self, other): return _ops().lt(self, other)
    def le(self, other): return _ops().le(self, other)
    def gt(self, other): return _ops().gt(self, other)
    def ge(self, other): return _ops().ge(self, other)
    def clip(self, min=None, max=None): return _ops().clip(self, min, max)  # noqa: A002
    def cast(self, dtype): return _ops().cast(self, dtype)
    def sum(self, dim=None, keepdim=False): return _ops().sum(self, dim, keepdim)
    def softmax(self, dim): return _ops().softmax(self, dim)
    def amax(self, dim=None, keepdim=False): return _ops().amax(self, dim, keepdim)
    def amin(self, dim=None, keepdim=False): return _ops().amin(self, dim, keepdim)
    def prod(self, dim=None, keepdim=False): return _ops().prod(self, dim, keepdim)
    def argmax(self, dim=-1, keepdim=False): return _ops().argmax(self, dim, keepdim)
    def argmin(self, dim=-1, keepdim=False): return _ops().argmin(self, dim, keepdim)

    def __floordiv__(self, other): return _ops().floor_divide(self, other)
    def __rfloordiv__(self, other): return _ops().floor_divide(other, self)
    def __mod__(self, other): return _ops().remainder(self, other)
    def __rmod__(self, other): return _ops().remainder(other, self)
    def floor_divide(self, other): return _ops().floor_divide(self, other)
    def remainder(self, other): return _ops().remainder(self, other)

    def __matmul__(self, other): return _ops().matmul(self, other)
    def __rmatmul__(self, other): return _ops().matmul(other, self)

    def matmul(self, other, out_dtype=None, a_trans=False, b_trans=False):
        """pypto.matmul(self, other, ...)."""
        return _ops().matmul(self, other, out_dtype, a_trans, b_trans)
    # == and != stay identity comparisons so Tensors can live in sets and
    # dicts; elementwise equality is pypto.eq / pypto.ne (or a.eq(b)).
    __hash__ = object.__hash__

    def __bool__(self):
        raise TypeError(
            "a pypto Tensor has no truth value while tracing: its data is known only when "
            "the kernel runs (select elementwise with pypto.where; pypto.cond branches on "
            "symbolic scalars such as shapes and loop indices, not on tensor data)")

    def __iter__(self):
        raise TypeError("a pypto Tensor cannot be iterated (loop over an index with "
                        "pypto.loop and take views: x[i:i + 1, :])")

    # Views and writes ---------------------------------------------------------

    def __getitem__(self, key):
        """x[2:10, :, 3]: a view (layout.py)."""
        if self._builder is None:
            raise TraceError("slicing a Tensor is only possible inside a @pypto.jit kernel")
        return _layout().getitem(self, key)

    def __setitem__(self, key, value):
        if not _is_full(key, len(self._shape or ())) or _is_scalar(value):
            if self._builder is None:
                raise TraceError("writing into a region is only possible inside a "
                                 "@pypto.jit kernel")
            _layout().setitem(self, key, value)  # an assemble (layout.py)
            return
        self._write(value, f"{self._name or 'tensor'}[:] = ...")

    def view(self, shape, offsets=None): return _layout().view(self, shape, offsets)
    def reshape(self, shape, *more): return _layout().reshape(self, shape, *more)
    def transpose(self, dim0, dim1): return _layout().transpose(self, dim0, dim1)
    def permute(self, dims, *more): return _layout().permute(self, dims, *more)
    def unsqueeze(self, dim): return _layout().unsqueeze(self, dim)
    def clone(self): return _layout().clone(self)

    def move(self, value):
        """out.move(expr): out takes expr's value (same as out[:] = expr)."""
        self._write(value, f"{self._name or 'tensor'}.move(...)")

    def _write(self, value, what):
        if self._builder is None:
            raise TraceError(f"{what}: writing is only possible inside a @pypto.jit kernel")
        _layout().check_writable(self, what)
        self._builder.write(self, value, what)


def _symbolic(d):
    from .symbolic import is_symbolic
    return is_symbolic(d)


def _is_full(key, rank):
    """Whether a subscript selects the whole tensor: [:], [...], [:, :]."""
    keys = key if isinstance(key, tuple) else (key,)
    if keys == (Ellipsis,):
        return True
    if len(keys) > rank:
        return False
    return all(isinstance(k, slice) and k == slice(None) for k in keys)


def _unary_method(kind):
    def method(self):
        return getattr(_ops(), kind)(self)
    method.__name__ = kind
    method.__doc__ = f"pypto.{kind}(self)."
    return method


for _name in ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
              "reciprocal", "neg", "abs", "relu", "sigmoid", "tanh", "erf", "erfc", "sign",
              "floor", "ceil", "round", "trunc", "sin", "cos"):
    setattr(Tensor, _name, _unary_method(_name))
del _name


def tensor(shape, dtype, name=""):
    """pypto.tensor(shape, dtype, name): an annotation outside a kernel; inside
    one, a local tensor to write with t[:] = expr before reading it."""
    from . import tracer
    b = tracer.current_builder()
    t = Tensor(shape, dtype, name)
    if b is None:
        return t
    if t._spec_shape is None or any(isinstance(d, (_DimMarker, str)) or d is Ellipsis
                                    for d in t._spec_shape) \
            or dtype is None:
        raise ValueError("pypto.tensor inside a kernel needs a static shape and a dtype")
    return Tensor._proxy(b, None, dtype, t._spec_shape, name)


def _ops():
    from . import ops
    return ops


def _layout():
    from . import layout
    return layout
