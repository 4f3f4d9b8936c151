"""Every example under examples/ runs and checks itself against torch."""

import glob
import os
import subprocess
import sys

import pytest

from conftest import REPO, python_env

EXAMPLES = sorted(glob.glob(os.path.join(REPO, "examples", "*.py")))


def run(path, *argv, cache_dir):
    env = python_env()
    env["PYPTO_CACHE_DIR"] = str(cache_dir)
    env.pop("PYPTO_COMPILE_SERVER", None)
    return subprocess.run([sys.executable, path, *argv], env=env, capture_output=True,
                          text=True, timeout=600, cwd=os.path.dirname(path))


def test_the_examples_are_there():
    names = {os.path.basename(p) for p in EXAMPLES}
    assert {"hello_world.py", "elementwise.py", "reductions.py", "tiling.py", "softmax.py",
            "layer_norm.py", "nn_module.py", "matmul.py", "ffn.py", "attention.py",
            "layout.py", "dynamic_batch.py", "loop_softmax.py", "condition.py"} <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_example_runs_in_sim_mode(native, path, private_cache):
    r = run(path, "--run_mode", "sim", cache_dir=private_cache)
    assert r.returncode == 0, f"{path}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"


def test_npu_mode_fails_clearly_without_an_accelerator(native, private_cache):
    r = run(os.path.join(REPO, "examples", "hello_world.py"), "--run_mode", "npu",
            cache_dir=private_cache)
    assert r.returncode != 0
    assert "pypto.UnsupportedTargetError" in r.stderr or "UnsupportedTargetError" in r.stderr
    assert "RunMode.NPU needs an accelerator target" in r.stderr
