"""Every example under examples/ with each kernel call also compiled for the
Ascend target (ascend-a2a3: its PTO-ISA CPU simulation here) and its results
compared with the host's (ascend_example_runner.py). Every kernel call of
every example runs on the target: a kernel the target refuses fails the
test, naming the kernel and the instruction."""

import os
import re
import subprocess
import sys

import pytest

from conftest import python_env
from test_ascend_target import pto_isa  # noqa: F401 (a fixture)
from test_examples import EXAMPLES

RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ascend_example_runner.py")


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_example_kernels_on_the_ascend_cpu_simulation_equal_the_hosts(native, pto_isa, path,
                                                                     private_cache):
    env = python_env()
    env["PYPTO_CACHE_DIR"] = str(private_cache)
    env["PTO_ISA_ROOT"] = pto_isa
    for name in ("PYPTO_COMPILE_SERVER", "PYPTO_EAGER", "PYPTO_TARGET"):
        env.pop(name, None)
    r = subprocess.run([sys.executable, RUNNER, path, "--run_mode", "sim"], env=env,
                       capture_output=True, text=True, timeout=1800,
                       cwd=os.path.dirname(path))
    assert r.returncode == 0, f"{path}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("ASCEND_CALLS "), r.stdout
    unmapped = re.findall(r"^ASCEND_UNMAPPED (.*)$", r.stdout, re.M)
    assert not unmapped, f"{path}: host only: " + "; ".join(sorted(set(unmapped)))
    assert int(last.split()[1]) > 0, f"{path}: no kernel call ran\n{r.stdout}"


def test_npu_mode_runs_an_example_on_the_cpu_simulation_when_asked(native, pto_isa,
                                                                   private_cache):
    from conftest import REPO
    path = os.path.join(REPO, "examples", "softmax.py")
    env = python_env()
    env["PYPTO_CACHE_DIR"] = str(private_cache)
    env["PTO_ISA_ROOT"] = pto_isa
    env["PYPTO_NPU_CPUSIM"] = "1"
    for name in ("PYPTO_COMPILE_SERVER", "PYPTO_EAGER", "PYPTO_TARGET"):
        env.pop(name, None)
    r = subprocess.run([sys.executable, path, "--run_mode", "npu"], env=env, capture_output=True,
                       text=True, timeout=1800, cwd=os.path.dirname(path))
    assert r.returncode == 0, f"{path}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    warned = [line for line in r.stderr.splitlines() if "PTO-ISA CPU simulation" in line]
    assert len(warned) == 1 and "PYPTO_NPU_CPUSIM=1" in warned[0], r.stderr
