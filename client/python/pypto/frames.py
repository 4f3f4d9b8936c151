"""The user's frames: which stack frames and source lines are the user's.

A frame is the user's when its code lies outside the pypto package. Ops
remember the user's statement that recorded them (user_frame), errors and
warnings name it (describe, caller_stacklevel), and messages name the
user's variable bound to a tensor (user_name).
"""

import linecache
import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def ours(filename):
    """Whether `filename` is a source file of the pypto package."""
    return os.path.abspath(filename).startswith(_PACKAGE_DIR)


def user_frame():
    """(file, line, function) of the innermost caller outside pypto, or None."""
    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        if not ours(code.co_filename):
            return (code.co_filename, f.f_lineno, code.co_name)
        f = f.f_back
    return None


def innermost_user_frame(tb):
    """(file, line, function) of the innermost traceback entry outside pypto,
    or None."""
    found = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if not ours(code.co_filename):
            found = (code.co_filename, tb.tb_lineno, code.co_name)
        tb = tb.tb_next
    return found


def describe(where):
    """'file:line (in function): source text' for a user_frame() result."""
    filename, line, function = where
    text = linecache.getline(filename, line).strip()
    return f"{filename}:{line} (in {function})" + (f": {text}" if text else "")


def user_name(value, default="tensor"):
    """The name the innermost user frame binds to `value` (for messages), or
    `default`."""
    f = sys._getframe(1)
    while f is not None and ours(f.f_code.co_filename):
        f = f.f_back
    if f is not None:
        for name, v in f.f_locals.items():
            if v is value:
                return name
    return default


def caller_stacklevel():
    """The stacklevel, for warnings.warn called by our caller's caller, of
    the first frame outside pypto: the warning names the user's call."""
    f, level = sys._getframe(2), 2
    while f is not None and ours(f.f_code.co_filename):
        f, level = f.f_back, level + 1
    return level
