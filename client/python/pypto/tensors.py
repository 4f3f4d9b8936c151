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

from . import dtypes, eager, tracer
from .enums import TileOpFormat
from .errors import StaticShapeNeeded, TraceError
from .symbolic import SymbolicCondition, SymbolicScalar, is_symbol_name, is_symbolic


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

    def __new__(cls, shape=None, dtype=None, name="", format=None, data_ptr=None, device=None,
                ori_shape=None):
        """Inside a traced kernel, pypto.Tensor(shape, dtype) (pypto.tensor is
        the same class) is a local tensor to write with t[:] = expr before
        reading it; elsewhere a Tensor is an annotation."""
        if cls is Tensor and (shape is not None or dtype is not None):
            builder = tracer.current_builder()
            if builder is not None:
                return _local_tensor(builder, shape, dtype, name)
        return super().__new__(cls)

    def __init__(self, shape=None, dtype=None, name="", format=None, data_ptr=None, device=None,
                 ori_shape=None):
        if getattr(self, "_builder", None) is not None:
            return  # a local tensor __new__ made (Python calls __init__ on it too)
        _check_no_device_memory(data_ptr, device)
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
                          is_symbolic(d) else int(d) for d in shape)
        if dtype is not None and not isinstance(dtype, dtypes.DataType):
            raise TypeError(f"pypto.Tensor: dtype must be a pypto.DT_* constant, got {dtype!r}")
        if not isinstance(name, str):
            raise TypeError(f"pypto.Tensor: name must be a str, got {type(name).__name__}")
        self._spec_shape = shape   # None or () -> from the call
        self._dtype = dtype        # None -> from the call
        self._name = name
        self._format = "ND" if format is None else format
        self._ori_shape = None if ori_shape is None else tuple(ori_shape)
        self._builder = None       # set on proxies only
        self._vid = None
        self._param = None
        self._shape = None
        self._static = None

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
    def _proxy(cls, builder, vid, dtype, shape, name, param=None, static=None):
        """A traced tensor: `shape` is the region its ops compute on (its
        valid shape), `static` its static shape when that is larger (None:
        the same)."""
        t = cls.__new__(cls)
        t._spec_shape = tuple(shape)
        t._dtype = dtypes.DataType(dtype)
        t._name = name
        t._format = "ND"
        t._builder = builder
        t._vid = vid
        t._param = param
        t._shape = tuple(shape)
        t._static = None if static is None else tuple(static)
        # The open region (loop body, branch) it was made in: written inside
        # a later region it is carried; used after its own, an error.
        t._home = builder.current_region() if builder is not None else None
        return t

    # Properties ---------------------------------------------------------------

    @property
    def shape(self):
        """The static shape (in a kernel, a view's `shape` argument even where
        its valid region is smaller: see valid_shape)."""
        if self._builder is not None:
            return list(self._shape if self._static is None else self._static)
        return None if self._spec_shape is None else list(self._spec_shape)

    @property
    def valid_shape(self):
        """The valid region's shape: per dim, how many leading elements hold
        data, often known only at run time (a SymbolicScalar such as
        min(16, n - i*16) for the last of a dynamic batch's fixed-size
        views). Ops compute on the valid region; it equals `shape` for a
        tensor that is valid everywhere."""
        if self._builder is not None:
            return list(self._shape)
        return self.shape

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
    def ori_shape(self):
        """The original shape given to the constructor (ori_shape=), else None."""
        return None if getattr(self, "_ori_shape", None) is None else list(self._ori_shape)

    @property
    def format(self):
        """The layout: pypto.TileOpFormat.TILEOP_ND (equal to "ND") or TILEOP_NZ."""
        try:
            return TileOpFormat(self._format)
        except ValueError:
            return self._format

    # Values: inside a kernel run eagerly (eager.py) ----------------------------

    def numpy(self):
        """The tensor's values as a numpy array (BF16 as float32). Only inside
        a kernel run eagerly: with pypto.debug.eager(), runtime_options
        run_mode pypto.RunMode.EAGER or PYPTO_EAGER=1."""
        return _eager_values(self, "numpy")

    def torch(self):
        """The tensor's values as a torch tensor of its dtype (as numpy())."""
        return _eager_values(self, "torch")

    def __repr__(self):
        if getattr(self._builder, "eager", False) and self._vid is not None:
            head = f"pypto.Tensor {self._name or '%' + str(self._vid)} " \
                   f"{list(self._shape)} {self._dtype.name}"
            return f"{head}\n{self.numpy()}"
        if self._builder is None:
            shape = "inferred" if self._spec_shape is None else list(self._spec_shape)
            return f"pypto.Tensor({shape}, {self._dtype!r}, name={self._name!r})"
        valid = "" if self._static is None else f" valid {list(self._shape)}"
        return (f"<pypto.Tensor {self._name or '%' + str(self._vid)} {self.shape}{valid} "
                f"{self._dtype.name}>")

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


def _eager_values(t, form):
    """t.numpy() or t.torch(): its values in an eager run, else a TypeError
    naming the mode that has them."""
    array_of = getattr(t._builder, "array_of", None)
    if array_of is None:
        where = "outside a kernel" if t._builder is None else "while a kernel is traced " \
            "for compiling"
        raise TypeError(
            f"Tensor.{form}(): a tensor has values {where} only in eager mode: run the kernel "
            f"with pypto.debug.eager() (a with block), runtime_options={{'run_mode': "
            f"pypto.RunMode.EAGER}} or PYPTO_EAGER=1; a compiled kernel's tensors are "
            f"placeholders while it is traced")
    values = array_of(t)
    return eager.as_numpy(values, t.dtype) if form == "numpy" else \
        eager.as_torch(values, t.dtype)


def _check_no_device_memory(data_ptr, device):
    """pypto.Tensor's data_ptr/device wrap accelerator memory, which this
    pypto (host CPU target only) has none of: a ValueError unless data_ptr
    is None and device is None or the CPU."""
    if data_ptr is not None:
        raise ValueError(
            f"pypto.Tensor: data_ptr={data_ptr!r} wraps device memory, and this pypto runs "
            f"on the host CPU only; pass the data as a torch tensor argument of the kernel "
            f"(or pypto.from_torch(t))")
    if device is not None and str(device) != "cpu" and getattr(device, "type", None) != "cpu":
        raise ValueError(f"pypto.Tensor: device={device!r}; this pypto runs on the host CPU "
                         f"only (device=None or 'cpu')")


def _local_tensor(builder, shape, dtype, name):
    """pypto.Tensor(shape, dtype, name) inside a kernel: a local tensor."""
    spec = object.__new__(Tensor)  # an annotation: __init__ checks the arguments
    spec.__init__(shape, dtype, name)
    if spec._spec_shape is None or any(isinstance(d, (_DimMarker, str)) or d is Ellipsis
                                       for d in spec._spec_shape) or spec._dtype is None:
        raise ValueError("pypto.tensor inside a kernel needs a static shape and a dtype")
    return Tensor._proxy(builder, None, spec._dtype, spec._spec_shape, name)


# PyPTO's pypto.tensor is pypto.Tensor itself: pypto.tensor() is an all-inferred
# annotation, pypto.tensor(shape, dtype) a local tensor inside a kernel.
tensor = Tensor


tracer.register_value_type(Tensor)
