"""PyPTO's enums beside DataType (dtypes.py): pypto.CastMode, pypto.ReLuType, ...

Each has PyPTO's members. Where an op of this version takes the enum
(pypto.matmul's extend_params relu_type and trans_mode, pypto.set_host_options'
compile_stage) it says so in that op's documentation; the others exist so
that programs written for PyPTO load and can name them.
"""

import enum

from .error import FeError


class _PyptoEnum(enum.IntEnum):
    def __repr__(self):
        return f"pypto.{type(self).__name__}.{self.name}"

    __str__ = __repr__


class CachePolicy(_PyptoEnum):
    """Per-tensor cache behaviour on the NPU."""
    PREFETCH = 0
    NONE_CACHEABLE = 1


class CastMode(_PyptoEnum):
    """Rounding of pypto.cast (CAST_NONE: truncation for float->int, rint otherwise)."""
    CAST_NONE = 0
    CAST_RINT = 1
    CAST_ROUND = 2
    CAST_FLOOR = 3
    CAST_CEIL = 4
    CAST_TRUNC = 5
    CAST_ODD = 6


class PrecisionType(_PyptoEnum):
    """Accuracy mode of div, pow, exp, sqrt, log and friends."""
    INTRINSIC = 0
    HIGH_PRECISION = 1


class LogBaseType(_PyptoEnum):
    LOG_E = 0
    LOG_2 = 1
    LOG_10 = 2


class OpType(_PyptoEnum):
    """Comparison kind."""
    EQ = 0
    NE = 1
    LT = 2
    LE = 3
    GT = 4
    GE = 5


class OutType(_PyptoEnum):
    """Comparison output: bools or packed bits."""
    BOOL = 0
    BIT = 1


class ReduceMode(_PyptoEnum):
    ATOMIC_ADD = 0


class ReLuType(_PyptoEnum):
    """pypto.matmul extend_params["relu_type"]: RELU applies relu to the result."""
    NO_RELU = 0
    RELU = 1


class ScatterMode(_PyptoEnum):
    """Reduction of a scatter (PyPTO spells the plain one None)."""
    NONE = 0
    ADD = 1
    MULTIPLY = 2


# PyPTO's member is named None, which Python syntax allows only through the
# functional API's aliases.
ScatterMode._member_map_["None"] = ScatterMode.NONE


class SaturationMode(_PyptoEnum):
    """float->int conversion past the range: wraps/truncates (OFF) or saturates (ON)."""
    OFF = 0
    ON = 1


class TileOpFormat(str, enum.Enum):
    """A tensor's layout: plain row-major (ND) or fractal NZ. Members compare
    equal to their short names ("ND", "NZ")."""
    TILEOP_ND = "ND"
    TILEOP_NZ = "NZ"

    def __repr__(self):
        return f"pypto.TileOpFormat.{self.name}"

    __str__ = __repr__


TILEOP_ND = TileOpFormat.TILEOP_ND
TILEOP_NZ = TileOpFormat.TILEOP_NZ


class TopKAlgo(_PyptoEnum):
    MERGE_SORT = 0
    RADIX_SELECT = 1


class TransMode(_PyptoEnum):
    """TF32 rounding of FP32 matmul operands (pypto.matmul extend_params["trans_mode"])."""
    CAST_NONE = 0
    CAST_RINT = 1
    CAST_ROUND = 2


class CompStage(_PyptoEnum):
    """host_options["compile_stage"]: where PyPTO's compile stops."""
    ALL_COMPLETE = 0
    TENSOR_GRAPH = 1
    TILE_GRAPH = 2
    EXECUTE_GRAPH = 3
    CODEGEN_INSTRUCTION = 4
    CODEGEN_BINARY = 5


class _Platform:
    """pypto.platform: the target's description. npuarch names the NPU
    architecture kernels are built for; this version builds for the host
    CPU, so it reads "host" until a program sets it (a recorded value:
    code generation does not depend on it)."""

    def __init__(self):
        self._npuarch = "host"

    @property
    def npuarch(self):
        return self._npuarch

    @npuarch.setter
    def npuarch(self, value):
        if not isinstance(value, str) or not value:
            raise FeError(TypeError(f"pypto.platform.npuarch: expected a non-empty str, "
                                    f"got {value!r}"))
        self._npuarch = value

    def __repr__(self):
        return f"pypto.platform(npuarch={self._npuarch!r})"


platform = _Platform()
