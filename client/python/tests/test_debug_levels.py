"""The user guide's debugging recipe: pypto.debug.save_graph writes a
kernel's graph, and ptoc prints each IR level of it, the PTO program and the
generated C++, and runs it against the reference."""

import os
import subprocess

import numpy as np
import pytest

import pypto
from conftest import REPO


def ptoc_binary():
    """ptoc in the runfiles (data of //client/python:pypto_test) or bazel-bin."""
    for path in (os.path.join(REPO, "client", "ptoc", "ptoc"),
                 os.path.join(REPO, "bazel-bin", "client", "ptoc", "ptoc")):
        if os.access(path, os.X_OK):
            return path
    if os.environ.get("PYPTO_REQUIRE_NATIVE") == "1":
        pytest.fail("ptoc is not in the runfiles (data of //client/python:pypto_test)")
    pytest.skip("ptoc not built (bazel build //client/ptoc:ptoc)")


def test_ptoc_prints_every_level_of_a_saved_kernel_and_runs_it(tmp_path):
    @pypto.jit
    def k(a: pypto.Tensor[...], out: pypto.Tensor[...]):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = (a * 2.0).exp()

    a, out = np.ones((8, 40), np.float32), np.zeros((8, 40), np.float32)
    path = pypto.debug.save_graph(k, str(tmp_path / "k.pbtxt"), a, out)
    r = subprocess.run([ptoc_binary(), f"--graph={path}",
                        "--print=tensor,tile,block,execute,pto,cpp", "--run"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    for level in ("tensor", "tile", "block", "execute", "pto", "cpp"):
        assert f"==== {level} ====" in r.stdout, level
    assert "muls %0 scalar=2" in r.stdout   # the Tensor graph of the kernel's line
    assert "TEXP" in r.stdout              # its PTO program
    assert r.stdout.rstrip().endswith("PASS")
