"""pypto.frontend: PyPTO's front-end names.

pypto.frontend.jit is pypto.jit (the same decorator).

@pypto.frontend.function marks a helper that kernels call: it is inlined
into the calling kernel's trace with the kernel's own Python control flow
translation (ast_rewrite.py): an `if`, `a if c else b`, and/or/not or a
chained comparison on a value known only at run time becomes a branch of the
graph, and builtin min/max of symbolic scalars become pypto.min/pypto.max.
"""

import functools

from . import ast_rewrite
from .jit_function import jit  # noqa: F401


def function(fn=None):
    """@pypto.frontend.function (or @pypto.frontend.function()): `fn` runs
    translated (see the module docstring) wherever it is called, inside a
    kernel or not; the translation is made once per function."""
    if fn is None:
        return function
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise TypeError(f"pypto.frontend.function: expected a Python function, got "
                        f"{type(fn).__name__}")

    @functools.wraps(fn)
    def inlined(*args, **kwargs):
        return ast_rewrite.rewritten(fn)(*args, **kwargs)

    inlined.__pypto_function__ = fn
    return inlined
