"""pdb inside a kernel: a script run under `python -m pdb`, driven by
commands on stdin, stops on a line of a kernel run eagerly and prints real
tensor values and the real loop index."""

import subprocess
import sys
import textwrap

from conftest import python_env

SCRIPT = textwrap.dedent("""\
    import torch
    import pypto


    @pypto.jit
    def kernel(a: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 4)
        t = a * 2.0 + 1.0
        for i in pypto.loop(0, a.shape[0], 1):
            row = t[i:i + 1, :].exp()
            out[i:, :] = row  # BREAK HERE
        out[:] = out * 1.0


    a = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 10
    out = torch.zeros(3, 4)
    with pypto.debug.eager():
        kernel(a, out)
    print("done", [round(v, 4) for v in out[2].tolist()])
    """)

COMMANDS = [
    "break {path}:{line}",
    "continue",
    "p ('index', int(i))",
    "p ('t0', [round(v, 4) for v in t.numpy()[0].tolist()])",
    "continue",
    "continue",
    "p ('index', int(i))",
    "p ('row', [round(v, 4) for v in row.torch()[0].tolist()])",
    "clear 1",
    "continue",
    "quit",
]


def test_pdb_stops_inside_a_kernel_and_prints_real_values(native, tmp_path):
    path = tmp_path / "debug_me.py"
    path.write_text(SCRIPT)
    line = 1 + SCRIPT.splitlines().index(
        next(s for s in SCRIPT.splitlines() if "# BREAK HERE" in s))
    stdin = "\n".join(c.format(path=path, line=line) for c in COMMANDS) + "\n"
    env = python_env()
    env["PYPTO_CACHE_DIR"] = str(tmp_path / "cache")
    r = subprocess.run([sys.executable, "-m", "pdb", str(path)], input=stdin, env=env,
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    out = r.stdout
    assert f"Breakpoint 1 at {path}:{line}" in out, out + r.stderr
    # t = a * 2 + 1 on a = [0, .1, .2, .3]: real values, not placeholders.
    assert "('index', 0)" in out, out
    assert "('t0', [1.0, 1.2, 1.4, 1.6])" in out, out
    # The third stop is the loop's third real index; row = exp(a[2] * 2 + 1).
    assert "('index', 2)" in out, out
    assert "('row', [13.4637, 16.4446, 20.0855, 24.5325])" in out, out
    assert "done [13.4637, 16.4446, 20.0855, 24.5325]" in out, out
