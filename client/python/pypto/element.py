"""pypto.Element(dtype, value): a typed scalar operand.

Where an op takes a Python number (pypto.maximum(x, 0.5), the bounds of
pypto.clip, pypto.full's fill value) it takes an Element too: the op uses
its value, converted as a number of that op is (to the tensor's dtype).
"""

import numbers

from . import dtypes
from .error import FeError

_FLOAT_DTYPES = (dtypes.DT_FP32, dtypes.DT_FP16, dtypes.DT_BF16, dtypes.DT_DOUBLE,
                 dtypes.DT_FP8E4M3, dtypes.DT_FP8E5M2, dtypes.DT_FP8, dtypes.DT_HF8,
                 dtypes.DT_HF4, dtypes.DT_FP4E2M1, dtypes.DT_FP8E8M0, dtypes.DT_FP4_E2M1X2,
                 dtypes.DT_FP4_E1M2X2)


class Element:
    """A scalar of a given DataType: Element(pypto.DT_FP32, 0.5). `.dtype` is
    its DataType and `.value` its Python number (a float for float dtypes,
    an int for integer and bool ones)."""

    __slots__ = ("_dtype", "_value")

    def __init__(self, dtype, value):
        if not isinstance(dtype, dtypes.DataType):
            raise FeError(TypeError(f"pypto.Element: dtype must be a pypto.DT_* constant, "
                                    f"got {dtype!r}"))
        if not isinstance(value, numbers.Real) or isinstance(value, Element):
            raise FeError(ValueError(f"pypto.Element: invalid data type {type(value).__name__} "
                                     f"for Element (an int or a float)"))
        if dtype in _FLOAT_DTYPES:
            value = float(value)
        elif not float(value).is_integer():
            raise FeError(ValueError(f"pypto.Element: {value!r} is not a whole number; "
                                     f"{dtype.name} holds integers"))
        else:
            value = int(value)
        self._dtype = dtype
        self._value = value

    @property
    def dtype(self):
        return self._dtype

    @property
    def value(self):
        return self._value

    def __repr__(self):
        return f"pypto.Element({self._dtype!r}, {self._value!r})"

    def __eq__(self, other):
        return isinstance(other, Element) and (other._dtype, other._value) == (
            self._dtype, self._value)

    def __hash__(self):
        return hash((self._dtype, self._value))


def value_of(x):
    """x's value when it is an Element, else x."""
    return x._value if isinstance(x, Element) else x
