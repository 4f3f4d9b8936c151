"""pypto.frontend.jit: PyPTO's name for pypto.jit (the same decorator)."""

from .jit import jit  # noqa: F401
