"""Global compile options: pypto.set_*_options, get_*_options, pypto.options.

PyPTO configures its toolchain through option groups (see jit_options.py for
the keys). Here they are process-wide, layered under each jit function's own
options key by key:

    pypto.set_host_options(compile_timeout=600)      # from now on
    with pypto.options(codegen_options={"opt_level": 3}):
        kernel(a, out)                               # opt_level 3 here only
    @pypto.options(pass_options={"enable_slice": False})
    def test_something(): ...                        # for each call of the function

A setter merges its keys into the current scope; `pypto.options(...)` opens a
scope (a `with` block or each call of a decorated function) and restores the
options in force before it on exit, exceptions included. Unknown keys are
errors naming them; the values this version honours (run_mode, opt_level,
compile_timeout) are checked when set. The honoured values are part of each
jit function's in-memory cache key, so changing opt_level recompiles and
changing anything else does not.
"""

import functools
import threading

from .jit_options import KNOWN_KEYS, check_group, check_groups, honoured

_lock = threading.Lock()
_groups = {g: {} for g in KNOWN_KEYS}
# honoured(_groups), kept current by _set_all: replaced only when its value
# changes, so a jit function's repeat-call fast path can compare it by
# identity (jit_function.py).
_honoured = (None, {}, None)


def _set_all(groups):
    global _groups, _honoured
    h = honoured("pypto options", groups)
    with _lock:
        _groups = groups
        if h != _honoured:
            _honoured = h


def _snapshot():
    with _lock:
        return {g: dict(v) for g, v in _groups.items()}


def honoured_now():
    """(run_mode or None, compile options, compile timeout or None) of the
    global options in force."""
    mode, opts, timeout = _honoured
    return mode, dict(opts), timeout


def cache_token(honoured_values=None):
    """What of the global options changes a compiled kernel (hashable); of
    `honoured_values` (a _honoured read earlier) when given."""
    return tuple(sorted((honoured_values or _honoured)[1].items()))


def _setter(group):
    where = f"pypto.set_{group}"

    def set_options(**kwargs):
        value = check_group(where, group, kwargs)
        groups = _snapshot()
        groups[group].update(value)
        _set_all(groups)

    def get_options():
        with _lock:
            return dict(_groups[group])

    set_options.__name__ = f"set_{group}"
    set_options.__doc__ = (f"Sets {group} keys in the current scope (unknown keys: ValueError "
                           f"naming them). Known: {', '.join(sorted(KNOWN_KEYS[group]))}.")
    get_options.__name__ = f"get_{group}"
    get_options.__doc__ = f"The {group} in force (a copy)."
    return set_options, get_options


set_runtime_options, get_runtime_options = _setter("runtime_options")
set_host_options, get_host_options = _setter("host_options")
set_codegen_options, get_codegen_options = _setter("codegen_options")
set_pass_options, get_pass_options = _setter("pass_options")
set_verify_options, get_verify_options = _setter("verify_options")
set_debug_options, get_debug_options = _setter("debug_options")


def reset_options():
    """Forgets every global option (jit functions' own options stay)."""
    _set_all({g: {} for g in KNOWN_KEYS})


class options:  # noqa: N801 - PyPTO's name
    """pypto.options(runtime_options=..., host_options=..., ...): a scope of
    global options, as a context manager or a decorator. Groups and keys are
    validated when the scope is created."""

    def __init__(self, **groups):
        self._groups = check_groups("pypto.options", groups)
        self._saved = []

    def __enter__(self):
        saved = _snapshot()
        self._saved.append(saved)
        groups = {g: dict(v) for g, v in saved.items()}
        for g, v in self._groups.items():
            groups[g].update(v)
        _set_all(groups)
        return self

    def __exit__(self, *exc):
        _set_all(self._saved.pop())
        return False

    def __call__(self, fn):
        if not callable(fn):
            raise TypeError(f"pypto.options(...) decorates a function, got {type(fn).__name__}")
        with_options = getattr(fn, "with_options", None)  # a jit function scopes itself
        if with_options is not None:
            return with_options(self._groups)

        @functools.wraps(fn)
        def scoped(*args, **kwargs):
            with options(**self._groups):
                return fn(*args, **kwargs)

        return scoped
