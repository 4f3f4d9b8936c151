"""Element types: the DT_* constants and their numpy/torch equivalents.

Every dtype of the PyPTO API exists so that annotations written for PyPTO
load; the Tier-1 types compile (BF16 arguments as torch tensors: numpy has no
bfloat16), and a kernel that uses any
other fails with an error that says so (the argument or op named).

FP8 (DT_FP8E4M3, DT_FP8E5M2, DT_FP8E8M0) tensors are storage types: kernels
move, view and cast them (pypto.cast to DT_FP32 to compute). torch 1.13 and
numpy have no float8, so an FP8 argument is passed as a torch.uint8 tensor
(or numpy uint8 array) of bit patterns to a parameter annotated with the FP8
dtype, and an FP8 output comes back as those bits: with a newer torch,
`t.view(torch.float8_e4m3fn)` reads them as floats; pypto.fp8.to_float and
pypto.fp8.from_float convert with numpy.
"""

import enum

import numpy as np

from .error import FeError


class DataType(enum.IntEnum):
    """A tensor element type. Values of the Tier-1 types equal pto.v1.DataType."""

    DT_FP32 = 1
    DT_FP16 = 2
    DT_BF16 = 3
    DT_INT8 = 4
    DT_INT16 = 5
    DT_INT32 = 6
    DT_INT64 = 7
    DT_UINT8 = 8
    DT_BOOL = 9
    DT_DOUBLE = 10
    DT_FP8E4M3 = 11
    DT_FP8E5M2 = 12
    DT_FP8E8M0 = 13
    # Tier 2: no wire value yet (negative so they can never be sent).
    DT_UINT16 = -3
    DT_UINT32 = -4
    DT_UINT64 = -5
    DT_INT4 = -6
    DT_FP8 = -7
    DT_HF4 = -8
    DT_HF8 = -9
    DT_FP4E2M1 = -10
    DT_FP4_E2M1X2 = -12
    DT_FP4_E1M2X2 = -13
    DT_BOTTOM = -14

    def __repr__(self):
        return "pypto." + self.name

    __str__ = __repr__


DT_FP32 = DataType.DT_FP32
DT_FP16 = DataType.DT_FP16
DT_BF16 = DataType.DT_BF16
DT_INT8 = DataType.DT_INT8
DT_INT16 = DataType.DT_INT16
DT_INT32 = DataType.DT_INT32
DT_INT64 = DataType.DT_INT64
DT_UINT8 = DataType.DT_UINT8
DT_BOOL = DataType.DT_BOOL
DT_DOUBLE = DataType.DT_DOUBLE
DT_FP8E4M3 = DataType.DT_FP8E4M3
DT_FP8E5M2 = DataType.DT_FP8E5M2
DT_UINT16 = DataType.DT_UINT16
DT_UINT32 = DataType.DT_UINT32
DT_UINT64 = DataType.DT_UINT64
DT_INT4 = DataType.DT_INT4
DT_FP8 = DataType.DT_FP8
DT_HF4 = DataType.DT_HF4
DT_HF8 = DataType.DT_HF8
DT_FP4E2M1 = DataType.DT_FP4E2M1
DT_FP8E8M0 = DataType.DT_FP8E8M0
DT_FP4_E2M1X2 = DataType.DT_FP4_E2M1X2
DT_FP4_E1M2X2 = DataType.DT_FP4_E1M2X2
DT_BOTTOM = DataType.DT_BOTTOM

# The FP8 storage types (wire values 11..13, SCHEMA_VERSION_3 graphs).
FP8_TYPES = (DT_FP8E4M3, DT_FP8E5M2, DT_FP8E8M0)
# What the compiler of this version accepts.
COMPILABLE = (DT_FP32, DT_FP16, DT_BF16, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8,
              DT_BOOL, DT_DOUBLE) + FP8_TYPES
# What kernel arguments may be (numpy arrays or torch tensors viewed as numpy;
# BF16 only as torch tensors: numpy has no bfloat16; FP8 as uint8 bits).
ARGUMENT_TYPES = COMPILABLE
ARGUMENT_TYPES_TEXT = ("this version takes arguments of DT_FP32, DT_FP16, DT_BF16 (torch "
                       "tensors), DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_BOOL, "
                       "DT_DOUBLE and DT_FP8E4M3/DT_FP8E5M2/DT_FP8E8M0 (uint8 bit patterns to "
                       "a parameter annotated with the FP8 dtype)")

_NUMPY = {
    DT_FP32: np.dtype(np.float32),
    DT_FP16: np.dtype(np.float16),
    DT_INT8: np.dtype(np.int8),
    DT_INT16: np.dtype(np.int16),
    DT_INT32: np.dtype(np.int32),
    DT_INT64: np.dtype(np.int64),
    DT_UINT8: np.dtype(np.uint8),
    DT_BOOL: np.dtype(np.bool_),
    DT_DOUBLE: np.dtype(np.float64),
    DT_UINT16: np.dtype(np.uint16),
    DT_UINT32: np.dtype(np.uint32),
    DT_UINT64: np.dtype(np.uint64),
}
_FROM_NUMPY = {v: k for k, v in _NUMPY.items()}

_TORCH_NAMES = {
    "float32": DT_FP32, "float16": DT_FP16, "bfloat16": DT_BF16,
    "int8": DT_INT8, "int16": DT_INT16, "int32": DT_INT32, "int64": DT_INT64,
    "uint8": DT_UINT8, "bool": DT_BOOL, "float64": DT_DOUBLE,
    "float8_e4m3fn": DT_FP8E4M3, "float8_e5m2": DT_FP8E5M2,
}


# Element sizes in bytes, as PyPTO's bytes_of gives them: the 4-bit types
# (INT4, HF4, FP4E2M1) count as one byte each; the X2 types pack two 4-bit
# values in a byte. DT_BOTTOM (PyPTO's "no type") has none.
_BYTES = {
    DT_FP32: 4, DT_FP16: 2, DT_BF16: 2, DT_INT8: 1, DT_INT16: 2, DT_INT32: 4, DT_INT64: 8,
    DT_UINT8: 1, DT_BOOL: 1, DT_DOUBLE: 8, DT_FP8E4M3: 1, DT_FP8E5M2: 1, DT_UINT16: 2,
    DT_UINT32: 4, DT_UINT64: 8, DT_INT4: 1, DT_FP8: 1, DT_HF4: 1, DT_HF8: 1,
    DT_FP4E2M1: 1, DT_FP8E8M0: 1, DT_FP4_E2M1X2: 1, DT_FP4_E1M2X2: 1,
}


def bytes_of(dtype):
    """pypto.bytes_of(dtype): the size of one element of `dtype` in bytes."""
    if not isinstance(dtype, DataType):
        raise FeError(TypeError(f"pypto.bytes_of: expected a pypto.DT_* constant, got "
                                f"{dtype!r}"))
    if dtype not in _BYTES:
        raise FeError(ValueError(f"pypto.bytes_of: {dtype.name} has no element size"))
    return _BYTES[dtype]


_OVERRIDDEN = (DT_BF16,) + FP8_TYPES


def run_dtypes(param_dtypes):
    """What a kernel's run takes besides its arrays, for parameters of
    `param_dtypes` in order: DT_BF16 where the array is an int16 view of
    bfloat16 data, the FP8 dtype where it is a uint8 array of FP8 bits, else
    0 (the array's dtype says it); [] when none is either."""
    if not any(dt in _OVERRIDDEN for dt in param_dtypes):
        return []
    return [int(dt) if dt in _OVERRIDDEN else 0 for dt in param_dtypes]


def to_numpy(dtype):
    """The numpy dtype for `dtype`, or None (BF16, FP8 have none)."""
    return _NUMPY.get(DataType(dtype))


def from_numpy(np_dtype):
    """The DataType of a numpy dtype, or None when pypto has no equivalent."""
    return _FROM_NUMPY.get(np.dtype(np_dtype))


def from_torch(torch_dtype):
    """The DataType of a torch dtype (e.g. torch.float16), or None."""
    return _TORCH_NAMES.get(str(torch_dtype).replace("torch.", ""))


def check_compilable(dtype, where):
    """Raises TypeError unless this version can compile `dtype`."""
    if DataType(dtype) not in ARGUMENT_TYPES:
        raise TypeError(
            f"{where}: dtype {DataType(dtype).name} is not supported yet; "
            f"{ARGUMENT_TYPES_TEXT}")


def round_number(value, dtype):
    """A Python number as a `dtype` tensor holds it, for FP16 and BF16 (other
    dtypes: `value` unchanged). torch and numpy convert a Python number that
    meets a half-precision tensor (x + 0.1, x < 0.1) to the tensor's dtype
    before computing, so pypto records the rounded value: through FP32 to
    nearest even, as torch's conversion and the compiler's TCVT go; past the
    type's range, inf."""
    if dtype not in (DT_FP16, DT_BF16):
        return value
    with np.errstate(over="ignore"):
        f32 = np.float32(value)
    if dtype == DT_FP16:
        with np.errstate(over="ignore"):
            return float(np.float16(f32))
    if np.isnan(f32):
        return float(f32)
    bits = int(f32.view(np.uint32))
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000  # nearest even
    return float(np.uint32(bits).view(np.float32))
