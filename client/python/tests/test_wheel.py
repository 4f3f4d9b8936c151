"""The wheel (//client/python:wheel) installs offline into a fresh virtual
environment and runs a kernel there, away from this checkout."""

import glob
import os
import subprocess
import sys
import textwrap
import zipfile

import pytest

import pypto
from conftest import REPO

WHEELS = sorted(glob.glob(os.path.join(REPO, "client", "python", "pypto-*.whl")) +
                glob.glob(os.path.join(REPO, "bazel-bin", "client", "python", "pypto-*.whl")))


@pytest.fixture
def wheel():
    if not WHEELS:
        if os.environ.get("PYPTO_REQUIRE_NATIVE") == "1":
            pytest.fail("the wheel is not in the runfiles (data of //client/python:pypto_test)")
        pytest.skip("no wheel built (bazel build //client/python:wheel)")
    return WHEELS[0]


def test_wheel_contents(wheel):
    name = os.path.basename(wheel)
    assert name == f"pypto-{pypto.__version__}-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        record = zf.read(f"pypto-{pypto.__version__}.dist-info/RECORD").decode()
    for module in ("pypto/__init__.py", "pypto/jit_function.py", "pypto/_native.so",
                   "pto/v1/graph_pb2.py", "pto/v1/kernel_pb2.py", "pto/v1/compile_service_pb2.py"):
        assert module in names
    assert {line.split(",")[0] for line in record.splitlines()} == names


def test_wheel_installs_offline_and_runs_a_kernel(wheel, tmp_path):
    venv = tmp_path / "venv"
    # --system-site-packages: numpy, protobuf and torch come from the system,
    # as they would from the user's environment; --no-index: no network.
    r = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0 and "ensurepip" in (r.stdout + r.stderr):
        pytest.skip(f"python3 -m venv cannot make environments here: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYPTO_CACHE_DIR"] = str(tmp_path / "cache")
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    r = subprocess.run([python, "-m", "pip", "install", "--no-index", wheel],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    program = textwrap.dedent("""
        import numpy as np
        import pypto

        @pypto.jit
        def k(a: pypto.Tensor[...], out: pypto.Tensor[...]):
            pypto.set_vec_tile_shapes(8, 16)
            out[:] = (a * 2).exp()

        a = np.linspace(-1, 1, 8 * 40, dtype=np.float32).reshape(8, 40)
        out = np.zeros_like(a)
        k(a, out)
        np.testing.assert_allclose(out, np.exp(a * 2), rtol=2e-6)
        print(pypto.__file__, k.last_compile.source)
    """)
    r = subprocess.run([python, "-c", program], capture_output=True, text=True, timeout=300,
                       env=env, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    where, source = r.stdout.split()
    assert where.startswith(str(venv)) and source == "embedded"
