"""Looking inside a kernel: its Tensor graph as proto text, for ptoc.

    pypto.debug.save_graph(kernel, "k.pbtxt", a, b, out)   # traces, compiles nothing
    bazel-bin/client/ptoc/ptoc --graph=k.pbtxt \\
        --print=tensor,tile,block,execute,pto,cpp --run

ptoc then prints each IR level (Tensor, Tile, Block, Execute), the PTO
program and the generated C++ of exactly the graph the call would compile,
and `--run` checks it against the double-precision reference on random
inputs. (The cache keys agree when ptoc and pypto's extension were built
from the same compiler.)

    pypto.debug.ignored_options(kernel)   # {"runtime_options": ["max_workspace_kb"], ...}

lists the options and jit keywords a kernel was given that have no effect
here (PyPTO's NPU toolchain settings: jit_options.py).

    with pypto.debug.eager():
        kernel(a, b, out)     # the kernel's Python runs op by op on real values

runs every kernel called in the block eagerly (eager.py): breakpoints,
print(t) and t.numpy() inside the kernel show real values, and nothing is
compiled. PYPTO_EAGER=1 in the environment does the same for the whole
process, runtime_options={"run_mode": pypto.RunMode.EAGER} for one kernel.
"""

import contextlib

from google.protobuf import text_format

from . import config, debug_switch, jit_options
from .verify_run import VerificationError  # noqa: F401  (verified runs: verify_run.py)


@contextlib.contextmanager
def eager():
    """Kernels called in the block run eagerly (module docstring)."""
    debug_switch.enter_scope(+1)
    try:
        yield
    finally:
        debug_switch.enter_scope(-1)


def graph_text(kernel, *args, **kwargs):
    """The proto text of the pto.v1.Graph `kernel(*args, **kwargs)` would
    compile (the tile shapes and options in force apply, as in a call)."""
    trace = getattr(kernel, "trace", None)
    if trace is None:
        raise TypeError(f"pypto.debug: expected a @pypto.jit function, got "
                        f"{type(kernel).__name__}")
    return text_format.MessageToString(trace(*args, **kwargs))


def save_graph(kernel, path, *args, **kwargs):
    """Writes graph_text(kernel, *args, **kwargs) to `path`; returns `path`."""
    text = graph_text(kernel, *args, **kwargs)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def ignored_options(kernel):
    """{option group or jit keyword: keys (or the keyword's value)} that
    `kernel` (a @pypto.jit function) was given, or that the global options in
    force (pypto.set_*_options, pypto.options) set, and that have no effect
    here: PyPTO's NPU toolchain settings (jit_options.py lists them). Empty
    when every given option acts."""
    options = getattr(kernel, "options", None)
    if not isinstance(options, jit_options.JitOptions):
        raise TypeError(f"pypto.debug.ignored_options: expected a @pypto.jit function, got "
                        f"{type(kernel).__name__}")
    out = jit_options.ignored_keys(config._snapshot())
    for group, keys in options.ignored().items():
        if isinstance(keys, list):
            out[group] = sorted(set(out.get(group, [])) | set(keys))
        else:
            out[group] = keys
    return out
