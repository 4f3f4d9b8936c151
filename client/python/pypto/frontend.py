"""pypto.frontend.jit: PyPTO's name for pypto.jit (the same decorator)."""

from .jit_function import jit  # noqa: F401
