"""Exceptions pypto raises beyond the built-in TypeError/ValueError."""


class TraceError(ValueError):
    """The kernel function cannot be traced as written (the message says why)."""


class CompileError(RuntimeError):
    """The compiler (embedded or ptod) rejected or failed on a kernel."""


class StaticShapeNeeded(Exception):
    """Raised while tracing at symbolic sizes when the trace itself needs a
    dynamic dim's actual size as a number (an integer tensor's power x ** n,
    arange's length; a scalar operand such as x * x.shape[-1] does not: it is
    recorded as an expression): the jit function then traces and compiles
    that kernel once per size instead (the trace's placeholder size would
    give wrong results)."""


class DynamicSizeWarning(UserWarning):
    """A kernel with dynamic dims compiles once per size because a value
    computed in Python from a dynamic size (1.0 / x.shape[-1]) reached it as
    a number (trace_compare.py); the message names the kernel and the line."""


class UnsupportedTargetError(RuntimeError):
    """The requested run mode has no target built on this machine."""


class NotYetImplementedError(NotImplementedError, TypeError):
    """A PyPTO name or form whose capability is not built yet (the message
    says which). Also a TypeError: to a caller it is an
    unsupported op, which PyPTO programs catch as bad input."""


def not_yet(what, why="a PyPTO name this version does not have yet"):
    """A NotYetImplementedError for `what`, saying `why`."""
    return NotYetImplementedError(f"{what} is not implemented yet ({why})")
