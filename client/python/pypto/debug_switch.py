"""Whether a kernel call may take a debug path (eager.py), read by every
call of a jit function: ON[0] is true while a `with pypto.debug.eager():`
block is open, when PYPTO_EAGER is set (to anything but "" or "0") at
import, or when the global options (pypto.set_verify_options, pypto.options)
set verify_options["enable_pass_verify"]. A kernel's own runtime_options
run_mode pypto.RunMode.EAGER and its own verify_options are read by the
kernel itself (jit_function.py)."""

import os

ON = [False]

_state = {"scopes": 0, "env": os.environ.get("PYPTO_EAGER", "0") not in ("", "0"),
          "global_verify": False}


def _refresh():
    ON[0] = bool(_state["env"] or _state["scopes"] or _state["global_verify"])


def env_eager():
    """Whether PYPTO_EAGER asked for eager runs."""
    return _state["env"]


def scoped_eager():
    """Whether a pypto.debug.eager() block is open."""
    return _state["scopes"] > 0


def enter_scope(delta):
    """Opens (+1) or closes (-1) a pypto.debug.eager() block."""
    _state["scopes"] += delta
    _refresh()


def global_options(groups):
    """Called with the global option groups whenever they change (config.py)."""
    _state["global_verify"] = bool(groups.get("verify_options", {}).get("enable_pass_verify"))
    _refresh()


_refresh()
