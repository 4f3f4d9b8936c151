"""Which kernel a jit call runs: every input that decides it is in the
function's keys (the in-memory signature and the repeat-call fast path's
key and hot launcher), or is read once at a documented point
(jit_function.py's docstring lists them). A wrong input here gives a call
another target's kernel, which computes the same values: the tests look at
the kernel itself (its target) and pypto's counters."""

import os

import numpy as np
import pytest

import pypto
from pypto import backend, jit_options

ANY = pypto.Tensor[...]
HERE = os.path.dirname(os.path.realpath(__file__))


@pytest.fixture(scope="module")
def kernels_dir(tmp_path_factory):
    """One disk cache for this module's tests: an Ascend kernel compiled by
    one test is a disk hit in the next (each build takes tens of seconds)."""
    return tmp_path_factory.mktemp("kernels")


@pytest.fixture
def pto_isa(monkeypatch, kernels_dir):
    """PTO_ISA_ROOT (as set, else ../shared/third_party/pto-isa beside the
    repository), no PYPTO_TARGET or PYPTO_NPU_CPUSIM, the module's cache."""
    root = os.environ.get("PTO_ISA_ROOT") or os.path.normpath(
        os.path.join(HERE, "..", "..", "..", "..", "shared", "third_party", "pto-isa"))
    if not os.path.isfile(os.path.join(root, "include", "pto", "pto-inst.hpp")) and \
            not os.path.isfile(os.path.join(root, "pto", "pto-inst.hpp")):
        if os.environ.get("PYPTO_REQUIRE_NATIVE") == "1":
            pytest.fail(f"the PTO-ISA headers are not at {root} (set PTO_ISA_ROOT)")
        pytest.skip(f"the PTO-ISA headers are not at {root} (set PTO_ISA_ROOT)")
    monkeypatch.setenv("PTO_ISA_ROOT", root)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(kernels_dir))
    monkeypatch.delenv(jit_options.TARGET_ENV, raising=False)
    monkeypatch.delenv(jit_options.NPU_CPUSIM_ENV, raising=False)
    return root


def make(**jit_kwargs):
    @pypto.jit(**jit_kwargs)
    def k(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = a * 2 + 1

    return k


def call(k, rows=8):
    """Runs k on fresh values; (the target of the kernel that ran, where the
    call got it: last_compile.source)."""
    a = np.arange(rows * 16, dtype=np.float32).reshape(rows, 16)
    out = np.zeros_like(a)
    k(a, out)
    np.testing.assert_array_equal(out, a * 2 + 1)
    info = k.last_compile
    ran = {e.compiled.key: e.compiled.kernel.target for e in k._cache.values()}
    return ran[info.key], info.source


def is_host(target):
    return target.startswith("host")


ASCEND = "ascend-a2a3-cpusim"


def test_pypto_target_changed_between_calls_runs_that_targets_kernel(native, pto_isa,
                                                                     monkeypatch):
    k = make()
    for _ in range(3):  # a compile, a fast-path hit, a hot-launcher call
        target, _ = call(k)
        assert is_host(target)
    monkeypatch.setenv("PYPTO_TARGET", "ascend-a2a3")
    compiles = pypto.compile_stats()["compiles"] + pypto.compile_stats()["disk_hits"]
    assert call(k)[0] == ASCEND  # not the hot host launcher
    assert pypto.compile_stats()["compiles"] + pypto.compile_stats()["disk_hits"] == \
        compiles + 1
    for _ in range(2):
        assert call(k) == (ASCEND, "memory")
    monkeypatch.delenv("PYPTO_TARGET")
    target, source = call(k)
    assert is_host(target) and source == "memory"
    # The fast path's key (not only the hot launcher) holds the variable:
    # another signature in between leaves no launcher hot for this one.
    monkeypatch.setenv("PYPTO_TARGET", "ascend-a2a3")
    call(k, rows=16)
    assert call(k) == (ASCEND, "memory")
    monkeypatch.delenv("PYPTO_TARGET")
    call(k, rows=16)
    target, source = call(k)
    assert is_host(target) and source == "memory"


def test_global_codegen_target_changed_between_calls(native, pto_isa, clean_options):
    k = make()
    call(k), call(k), call(k)
    pypto.set_codegen_options(target="ascend-a2a3")
    assert call(k)[0] == ASCEND and call(k)[0] == ASCEND
    pypto.reset_options()
    assert is_host(call(k)[0])
    with pypto.options(codegen_options={"target": "ascend-a2a3"}):
        assert call(k) == (ASCEND, "memory")
    assert call(k)[1] == "memory" and is_host(call(k)[0])


def test_the_functions_own_target_wins_over_the_environment(native, pto_isa, monkeypatch):
    own = make(codegen_options={"target": "host"})
    assert is_host(call(own)[0])
    monkeypatch.setenv("PYPTO_TARGET", "ascend-a2a3")
    for _ in range(3):
        assert is_host(call(own)[0])


def test_npu_run_mode_reads_pypto_npu_cpusim_at_each_call(native, pto_isa, monkeypatch):
    runtime = {"run_mode": pypto.RunMode.SIM}
    k = make(runtime_options=runtime)
    call(k), call(k)
    monkeypatch.setenv("PYPTO_NPU_CPUSIM", "1")
    monkeypatch.setattr(jit_options, "_npu_warned", [True])  # (warned: test_ascend_target)
    runtime["run_mode"] = pypto.RunMode.NPU
    assert call(k)[0] == ASCEND and call(k)[0] == ASCEND
    monkeypatch.setenv("PYPTO_NPU_CPUSIM", "0")
    with pytest.raises(pypto.UnsupportedTargetError, match="PYPTO_NPU_CPUSIM=1"):
        call(k)
    runtime["run_mode"] = pypto.RunMode.SIM
    assert is_host(call(k)[0])


def test_host_targets_resolution_is_read_once_per_process(native, monkeypatch):
    """PTO_HOST_TARGET (what "host" stands for) is read at the process's
    first compile for "host": the name keeps that meaning, as the in-memory
    keys hold the name."""
    monkeypatch.delenv("PYPTO_TARGET", raising=False)
    first, _ = call(make())
    assert first == backend.resolved_target("host")
    other = "host-x86_64" if first != "host-x86_64" else "host-x86_64-v3"
    monkeypatch.setenv("PTO_HOST_TARGET", other)
    assert native.resolve_target("host") == other  # the compiler's own reading
    k = make()
    assert call(k)[0] == first
    assert call(k, rows=16)[0] == first


def test_pypto_eager_is_read_at_import(native, monkeypatch):
    k = make()
    call(k)
    monkeypatch.setenv("PYPTO_EAGER", "1")
    call(k)
    assert k.last_compile.source == "memory"
