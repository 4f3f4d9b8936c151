"""Every kernel call of every example under examples/ agrees with its eager
run: each script runs with verification on (eager_example_runner.py), so
each compiled call is followed by an eager run of the same kernel on the
same inputs, and any output outside the eager values' error bounds fails
the script."""

import os
import subprocess
import sys

import pytest

from conftest import python_env
from test_examples import EXAMPLES

RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "eager_example_runner.py")


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_example_kernels_in_eager_mode_equal_their_compiled_results(native, path,
                                                                    private_cache):
    env = python_env()
    env["PYPTO_CACHE_DIR"] = str(private_cache)
    env.pop("PYPTO_COMPILE_SERVER", None)
    env.pop("PYPTO_EAGER", None)
    r = subprocess.run([sys.executable, RUNNER, path, "--run_mode", "sim"], env=env,
                       capture_output=True, text=True, timeout=600,
                       cwd=os.path.dirname(path))
    assert r.returncode == 0, f"{path}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("VERIFIED_CALLS "), r.stdout
    assert int(last.split()[1]) >= 1, f"{path}: no kernel call was verified\n{r.stdout}"


def test_the_examples_are_found():
    assert len(EXAMPLES) >= 14, EXAMPLES
