"""pypto.function(name, *tensors): PyPTO's legacy way to write a kernel.

    a = pypto.tensor([64, 128], pypto.DT_FP32, "a")
    b = pypto.tensor([64, 128], pypto.DT_FP32, "b")
    out = pypto.tensor([64, 128], pypto.DT_FP32, "out")
    with pypto.function("add", a, b, out) as add:
        pypto.set_vec_tile_shapes(16, 128)
        out[:] = a + b
    add(x, y, z)       # numpy arrays or torch tensors, in the order given

The block runs once, recording its ops into a graph whose parameters are
the tensors given (static shapes and dtypes, in that order); inside it they
are traced values, as a kernel's arguments are, and afterwards annotations
again. The recorded function compiles on its first call (through the same
caches and backends as @pypto.jit) and runs on each. @pypto.jit is the way
PyPTO writes kernels now: it traces per call signature and takes dynamic
shapes; a recorded function has exactly the shapes it was recorded with.
"""

from . import config, dtypes, tracer
from .backend import get_kernel
from .error import FeError
from .errors import TraceError
from .jit_function import (  # one argument and launch path with @pypto.jit
    CompileInfo, _as_array, _check_aliasing, _Entry, _launch)
from .tensors import Tensor, _DimMarker


class function:  # noqa: N801 - PyPTO's name
    """with pypto.function(name, *tensors) as f: ... records a kernel; f(*arrays)
    runs it (module docstring)."""

    def __init__(self, name, *tensors):
        what = "pypto.function"
        if not isinstance(name, str) or not name:
            raise TypeError(f"{what}: name must be a non-empty str, got {name!r}")
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor) or t._builder is not None:
                raise TypeError(f"{what}({name!r}): argument {i + 1} must be a pypto.Tensor "
                                f"made outside a kernel (pypto.tensor(shape, dtype, name)), got "
                                f"{type(t).__name__}")
            shape = t._spec_shape
            if t.dtype is None or shape is None or not shape or any(
                    isinstance(d, _DimMarker) or d is Ellipsis or isinstance(d, str)
                    for d in shape):
                raise ValueError(f"{what}({name!r}): tensor {t.name or i + 1!r} needs a static "
                                 f"shape and a dtype (got {t!r}); @pypto.jit takes dynamic "
                                 f"shapes")
        if len({id(t) for t in tensors}) != len(tensors):
            raise ValueError(f"{what}({name!r}): a tensor is given twice")
        self.name = name
        self.tensors = tensors
        self.graph = None
        self.last_compile = None
        self._entry = None
        self._recording = None

    def __enter__(self):
        if tracer.current_builder() is not None:
            raise FeError(RuntimeError(
                f"pypto.function({self.name!r}) inside a kernel: function nested is not "
                f"allowed; record it outside any @pypto.jit kernel or other pypto.function"))
        if self._recording is not None or self.graph is not None:
            raise TraceError(f"pypto.function({self.name!r}) records once")
        builder = tracer.GraphBuilder(self.name)
        self._saved = [dict(vars(t)) for t in self.tensors]
        for i, t in enumerate(self.tensors):
            proxy = builder.add_param(t.name or f"arg{i}", t.dtype, t._spec_shape)
            vars(t).update(vars(proxy))  # the user's object is the traced parameter
        self._builder = builder
        self._recording = tracer.recording(builder)
        self._recording.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            self._recording.__exit__(exc_type, exc, tb)
            if exc_type is None:
                self.graph = self._builder.finish({})
        finally:
            for t, saved in zip(self.tensors, self._saved):
                vars(t).clear()
                vars(t).update(saved)
            self._recording = None
        return False

    def __call__(self, *args):
        if self.graph is None:
            raise TraceError(f"pypto.function({self.name!r}) is called before its block "
                             f"recorded it")
        params = self.graph.params
        if len(args) != len(params):
            raise TypeError(f"pypto.function({self.name!r}) takes {len(params)} tensors "
                            f"({', '.join(p.name for p in params)}), got {len(args)}")
        arrays = []
        for p, t, a in zip(params, self.tensors, args):
            array, _, bf16 = _as_array(p.name, a, t.dtype)
            got = bf16 or dtypes.from_numpy(array.dtype)
            if got != t.dtype or tuple(array.shape) != tuple(t._spec_shape):
                raise ValueError(f"pypto.function({self.name!r}): argument '{p.name}' is "
                                 f"{getattr(got, 'name', array.dtype)}{list(array.shape)}, "
                                 f"recorded as {t.dtype.name}{list(t._spec_shape)}")
            if not (array.flags.c_contiguous and array.flags.aligned):
                raise ValueError(f"pypto.function({self.name!r}): argument '{p.name}' must "
                                 f"be C-contiguous")
            arrays.append(array)
        if self._entry is None:
            _, options, timeout = config.honoured_now()
            compiled = get_kernel(self.graph, options, timeout, self.name)
            self._entry = _Entry(compiled, self.graph, [(t.dtype,) for t in self.tensors])
            self.last_compile = CompileInfo(compiled.source, compiled.key)
        else:
            self.last_compile = self._entry.memory_info
        for w in self._entry.written:
            if not arrays[w].flags.writeable:
                raise ValueError(f"pypto.function({self.name!r}): argument "
                                 f"'{params[w].name}' is read-only, but the function writes it")
        _check_aliasing(self._entry, arrays)
        _launch(self._entry, arrays)
