"""pypto.from_torch and the way back: host tensors passed to kernels.

    x = pypto.from_torch(t, "x")             # shares t's memory
    kernel(x, out)                           # same as kernel(t, out)
    x.torch() is t, pypto.to_torch(x), x.numpy()

Kernels take torch tensors and numpy arrays directly, so from_torch only
exists for PyPTO programs that wrap their tensors first. The result is a
pypto.Tensor (shape, dtype, name as usual) that holds the torch tensor; it
is never copied. `dynamic_axis` marks dims that vary between calls: the
kernel treats them as pypto.DYNAMIC (unless its annotation names them), so a
new size there does not recompile (jit_function.py, _dynamic_dim).
"""

import numbers

import numpy as np

from . import dtypes
from .enums import TileOpFormat
from .error import FeError
from .tensors import Tensor

_torch_module = None


def _torch():
    """torch, imported on first use (None without it): pypto runs without torch."""
    global _torch_module
    if _torch_module is None:
        try:
            import torch  # optional: pypto runs without torch
        except ImportError:
            return None
        _torch_module = torch
    return _torch_module


def _torch_required(what):
    torch = _torch()
    if torch is None:
        raise ImportError(f"{what} needs torch, which is not importable here")
    return torch


class HostTensor(Tensor):
    """A pypto.Tensor holding a CPU torch tensor or a numpy array."""

    def __init__(self, data, dtype, name="", dynamic_axis=()):
        shape = tuple(data.shape)  # ints already (torch.Size, numpy's shape)
        if all(d > 0 for d in shape):
            # The dims come from real memory: skip Tensor's per-dim checks
            # (most of from_torch's cost; bench/call_overhead.py).
            super().__init__(None, dtype, name)
            self._spec_shape = shape
        else:
            super().__init__(shape, dtype, name)  # its error names the empty dim
        self._pypto_data = data
        self.dynamic_axis = tuple(dynamic_axis)

    def torch(self):
        """The torch tensor (the same object from_torch was given)."""
        torch = _torch_required("Tensor.torch()")
        if isinstance(self._pypto_data, torch.Tensor):
            return self._pypto_data
        return torch.from_numpy(self._pypto_data)

    def numpy(self):
        """A numpy view of the data (no copy; not for bfloat16, which numpy lacks)."""
        data = self._pypto_data
        if hasattr(data, "detach"):
            if self.dtype == dtypes.DT_BF16:
                raise TypeError(f"pypto.Tensor '{self.name}': numpy has no bfloat16; use "
                                f".torch() (or cast to DT_FP32 in the kernel)")
            return data.detach().numpy()
        return data

    def __repr__(self):
        return (f"pypto.from_torch(shape={list(self._pypto_data.shape)}, {self.dtype!r}, "
                f"name={self.name!r})")


def _check_tensor_format(tensor_format, what):
    if tensor_format is None or tensor_format is TileOpFormat.TILEOP_ND:
        return
    if tensor_format is TileOpFormat.TILEOP_NZ:
        raise ValueError(f"{what}: tensor_format=TILEOP_NZ (the fractal NZ layout) is not "
                         f"supported; tensors are ND (pypto.TILEOP_ND)")
    raise TypeError(f"{what}: tensor_format must be pypto.TILEOP_ND or None, got "
                    f"{tensor_format!r}")


def from_torch(tensor, name="", *, dynamic_axis=None, tensor_format=None, dtype=None):
    """Wraps a CPU torch tensor (or numpy array) as a pypto.Tensor argument,
    without a copy. `dtype`, if given, must be the tensor's own (a check,
    not a conversion: convert with torch first, or pypto.cast in the kernel).
    `dynamic_axis`: an int or ints, dims that may vary between calls.
    `tensor_format`: None or pypto.TILEOP_ND (tensors here are ND; TILEOP_NZ
    is a ValueError)."""
    what = "pypto.from_torch"
    if not isinstance(name, str):
        raise FeError(TypeError(f"{what}: name must be a str, got {type(name).__name__}"))
    _check_tensor_format(tensor_format, what)
    if isinstance(tensor, np.ndarray):
        dt = dtypes.from_numpy(tensor.dtype)
        label = str(tensor.dtype)
    else:
        torch = _torch()
        if torch is None or not isinstance(tensor, torch.Tensor):
            raise FeError(TypeError(f"{what}: expected a torch tensor (or numpy array), got "
                                    f"{type(tensor).__name__}"))
        if tensor.device.type != "cpu":
            raise FeError(ValueError(f"{what}: the tensor is on {tensor.device}; pass a CPU "
                                     f"tensor (tensor.cpu())"))
        dt = dtypes.from_torch(tensor.dtype)
        label = str(tensor.dtype)
    if dt is None or dt not in dtypes.COMPILABLE:
        raise FeError(TypeError(f"{what}: dtype {label} is not supported; "
                                f"{dtypes.ARGUMENT_TYPES_TEXT}"))
    if dtype is not None and dtype != dt:
        raise TypeError(f"{what}: dtype={dtype!r} but the tensor's dtype is {dt!r}; from_torch "
                        f"does not convert (tensor.to(...) first)")
    rank = tensor.ndim
    if dynamic_axis is None:
        axes = ()
    else:
        axes = (dynamic_axis,) if isinstance(dynamic_axis, numbers.Integral) else dynamic_axis
        try:
            axes = tuple(axes)
        except TypeError:
            raise TypeError(f"{what}: dynamic_axis must be an int or ints, got "
                            f"{dynamic_axis!r}") from None
        for a in axes:
            if isinstance(a, bool) or not isinstance(a, numbers.Integral) or not -rank <= a < rank:
                raise ValueError(f"{what}: dynamic_axis {a!r} is not a dim of a rank-{rank} "
                                 f"tensor (valid: {-rank}..{rank - 1})")
        axes = tuple(sorted({int(a) % rank for a in axes}))
    return HostTensor(tensor, dt, name, axes)


def to_torch(tensor):
    """The torch tensor behind a from_torch result (or a numpy array, shared)."""
    if isinstance(tensor, HostTensor):
        return tensor.torch()
    if isinstance(tensor, np.ndarray):
        return _torch_required("pypto.to_torch").from_numpy(tensor)
    raise TypeError(f"pypto.to_torch: expected pypto.from_torch(...) or a numpy array, got "
                    f"{type(tensor).__name__}")
