"""pypto.symbolic_scalar as PyPTO's module path: its SymInt type.

`pypto.symbolic_scalar(...)` is the function (symbolic.py); this module
exists so that `from pypto.symbolic_scalar import SymInt` and
`pypto.symbolic_scalar.SymInt` work as in PyPTO.
"""

from typing import Union

from .symbolic import SymbolicScalar

SymInt = Union[int, SymbolicScalar]
"""An int or a SymbolicScalar (a size or index, static or known at run time)."""
