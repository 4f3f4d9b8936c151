"""The Ascend target from Python: codegen_options["target"], PYPTO_TARGET,
RunMode.NPU on the PTO-ISA CPU simulation (PYPTO_NPU_CPUSIM=1), a real
ptod serving ascend-a2a3 kernels (jit_options.py, backend.py), and convs
traced for the target (conv.py's composition: no TIMG2COL there)."""

import os
import re
import socket
import urllib.request
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import pypto
from pypto import cache, jit_options
from pypto._proto import kernel_pb2

import many_outputs
import test_conv
from conftest import running_ptod

ANY = pypto.Tensor[...]
HERE = os.path.dirname(os.path.realpath(__file__))  # the source tree, also under bazel test


@pytest.fixture
def pto_isa(monkeypatch):
    """PTO_ISA_ROOT for this test (and the ptods it starts): the variable as
    set, else ../shared/third_party/pto-isa beside the repository."""
    root = os.environ.get("PTO_ISA_ROOT") or os.path.normpath(
        os.path.join(HERE, "..", "..", "..", "..", "shared", "third_party", "pto-isa"))
    if not os.path.isfile(os.path.join(root, "include", "pto", "pto-inst.hpp")):
        if os.environ.get("PYPTO_REQUIRE_NATIVE") == "1":
            pytest.fail(f"the PTO-ISA headers are not at {root} (set PTO_ISA_ROOT)")
        pytest.skip(f"the PTO-ISA headers are not at {root} (set PTO_ISA_ROOT)")
    monkeypatch.setenv("PTO_ISA_ROOT", root)
    monkeypatch.delenv("PYPTO_TARGET", raising=False)
    monkeypatch.delenv(jit_options.NPU_CPUSIM_ENV, raising=False)
    return root


def make(**jit_kwargs):
    @pypto.jit(**jit_kwargs)
    def k(a: ANY, b: ANY, out: ANY):
        pypto.set_vec_tile_shapes(32, 64)
        out[:] = (a + b).exp() * 2 - a

    return k


def inputs(seed=3):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (70, 100)).astype(np.float32)
    b = rng.uniform(-1, 1, (70, 100)).astype(np.float32)
    return a, b, np.exp(a + b) * 2 - a


def run(k):
    a, b, want = inputs()
    out = np.zeros_like(a)
    k(a, b, out)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    return k.last_compile


def stored_target(key):
    """The target recorded in the disk cache's binary for `key`."""
    data = cache.load(key)
    assert data is not None, key
    return kernel_pb2.KernelBinary.FromString(data).target


def test_codegen_option_target_compiles_for_the_ascend_cpu_simulation(native, pto_isa):
    host = run(make())
    ascend = run(make(codegen_options={"target": "ascend-a2a3"}))
    assert ascend.source == "embedded" and ascend.key != host.key
    assert stored_target(ascend.key) == "ascend-a2a3-cpusim"
    assert stored_target(host.key).startswith("host")


def test_set_codegen_options_and_pypto_target_name_the_target(native, pto_isa, clean_options,
                                                              monkeypatch):
    host = run(make())
    k = make()
    with pypto.options(codegen_options={"target": "ascend-a2a3-cpusim"}):
        scoped = run(k)
    assert stored_target(scoped.key) == "ascend-a2a3-cpusim"
    assert run(k).key == host.key  # out of the scope: the host kernel again
    monkeypatch.setenv("PYPTO_TARGET", "ascend-a2a3")
    assert run(make()).key == scoped.key  # ascend-a2a3 resolves to its CPU simulation here
    # An explicit option wins over the environment.
    assert run(make(codegen_options={"target": "host"})).key == host.key


def test_a_bad_target_is_a_clear_error(native, pto_isa):
    with pytest.raises(ValueError, match=r"codegen_options\['target'\] must be a target name"):
        make(codegen_options={"target": 7})
    with pytest.raises(pypto.CompileError, match="ascend-a9"):
        run(make(codegen_options={"target": "ascend-a9"}))


def test_npu_run_mode_is_an_error_unless_the_cpu_simulation_is_asked_for(native, pto_isa,
                                                                         monkeypatch):
    runtime = {"run_mode": pypto.RunMode.NPU}
    k = make(runtime_options=runtime)
    with pytest.raises(pypto.UnsupportedTargetError,
                       match="RunMode.NPU needs an accelerator target.*PYPTO_NPU_CPUSIM=1"):
        run(k)
    monkeypatch.setenv("PYPTO_NPU_CPUSIM", "2")
    with pytest.raises(ValueError, match="PYPTO_NPU_CPUSIM must be 0 or 1"):
        run(k)
    monkeypatch.setenv("PYPTO_NPU_CPUSIM", "1")
    monkeypatch.setattr(jit_options, "_npu_warned", [False])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        npu = run(k)
        run(k)  # warned once per process
    said = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(said) == 1 and "\n" not in said[0], said
    assert "PTO-ISA CPU simulation" in said[0] and "PYPTO_NPU_CPUSIM=1" in said[0]
    assert stored_target(npu.key) == "ascend-a2a3-cpusim"
    # The same function back on SIM runs the host kernel, not the NPU one.
    runtime["run_mode"] = pypto.RunMode.SIM
    assert stored_target(run(k).key).startswith("host")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _metric(text, name, **labels):
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    m = re.search(rf"^{re.escape(name)}{{{re.escape(want)}}} (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def test_ptod_serves_an_ascend_kernel_that_runs_on_the_cpu_simulation(native, pto_isa, tmp_path,
                                                                     monkeypatch):
    port = _free_port()
    with running_ptod(tmp_path / "ptod-cache", f"--metrics_address=127.0.0.1:{port}") as address:
        monkeypatch.setenv("PYPTO_COMPILE_SERVER", address)
        monkeypatch.setenv("PYPTO_COMPILE_FALLBACK", "0")
        miss = run(make(codegen_options={"target": "ascend-a2a3"}))
        assert miss.source == "ptod MISS"
        hit = run(make(codegen_options={"target": "ascend-a2a3"}))
        assert hit.source == "ptod HIT" and hit.key == miss.key
        # ascend-a2a3 resolves to its CPU simulation on this ptod: one key.
        same = run(make(codegen_options={"target": "ascend-a2a3-cpusim"}))
        assert same.source == "ptod HIT" and same.key == miss.key
        host = run(make())
        assert host.source == "ptod MISS" and host.key != miss.key
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            text = r.read().decode()
    series = "pto_target_requests_total"
    # Counted by the resolved target of the kernel served (one key, one series).
    assert _metric(text, series, target="ascend-a2a3-cpusim", result="miss") == 1, text
    assert _metric(text, series, target="ascend-a2a3-cpusim", result="hit") == 2, text
    assert _metric(text, "pto_target_compile_duration_seconds_count",
                   target="ascend-a2a3-cpusim") == 1
    host_target = native.resolve_target("host")
    assert _metric(text, series, target=host_target, result="miss") == 1, text


def test_a_conv_traced_for_the_ascend_target_takes_the_composition(native, monkeypatch):
    """The Ascend targets do not map TIMG2COL (op_table.target_maps):
    a plain conv traced for one is pad + im2col views + a plain matmul; for
    the host, one matmul with attr "img2col"."""
    x, w = torch.zeros(2, 4, 9, 8), torch.zeros(6, 2, 3, 2)

    @pypto.jit
    def kern(x: ANY, w: ANY, out: ANY):
        out[:] = pypto.conv(x, w, pypto.DT_FP32, [2, 1], [1, 2], [2, 1], groups=2)

    def matmuls():
        ops = kern.trace(x, w, torch.zeros(2, 6, 4, 11)).ops
        return [op for op in ops if op.kind == "matmul"]

    monkeypatch.delenv("PYPTO_TARGET", raising=False)
    assert ["img2col" in op.attrs for op in matmuls()] == [True]
    monkeypatch.setenv("PYPTO_TARGET", "ascend-a2a3")
    assert ["img2col" in op.attrs for op in matmuls()] == [False]


def test_convs_run_on_the_ascend_cpu_simulation_as_torch(native, pto_isa, monkeypatch):
    """test_conv.py's plain 2-D cases (depthwise included) and its cases
    larger than one cube tile, FP32, in one kernel compiled for ascend-a2a3
    and run on the PTO-ISA CPU simulation, against torch."""
    monkeypatch.setenv("PYPTO_TARGET", "ascend-a2a3")
    g = torch.Generator().manual_seed(5)
    cases = [((2, 4, 9, 8), shape, s, p, d, groups)
             for shape, s, p, d, groups, _ in test_conv.CASES_2D] + test_conv.CASES_IMG2COL
    xs = [torch.randn(c[0], generator=g) for c in cases]
    ws = [torch.randn(c[1], generator=g) for c in cases]
    fns, wants = [], []
    for i, (_, _, s, p, d, groups) in enumerate(cases):
        fns.append(lambda *t, i=i, s=s, p=p, d=d, groups=groups: pypto.conv(
            t[i], t[len(cases) + i], pypto.DT_FP32, s, p, d, groups=groups))
        wants.append(test_conv._ref(F.conv2d, xs[i], ws[i], stride=s, padding=p,
                                    dilation=d, groups=groups))
    outs = [torch.zeros(w.shape) for w in wants]
    many_outputs.run_many(fns, xs + ws, outs, (8, 32))
    for got, want in zip(outs, wants):
        torch.testing.assert_close(got.double(), want, rtol=1e-5, atol=1e-5)


@pypto.jit(codegen_options={"target": "ascend-a2a3"}, host_options={"compile_timeout": 600})
def rank0(x: ANY, v: ANY, vs: ANY, twice: ANY, s: ANY, centered: ANY):
    pypto.set_vec_tile_shapes(16)
    total = v.sum(0)  # a rank-1 tensor without keepdim: rank 0
    vs[...] = total
    twice[()] = total * 2 - 1  # ops on a rank-0 tile, a 1x1 one on the target
    pypto.set_vec_tile_shapes(4, 8)
    s[...] = x.sum()  # every element
    centered[:] = x - x.amax()  # a rank-0 tensor broadcasts


def test_rank0_results_on_the_ascend_cpu_simulation_as_torch(native, pto_isa):
    x = torch.randn(9, 20, generator=torch.Generator().manual_seed(5))
    v = torch.randn(50, generator=torch.Generator().manual_seed(6))
    outs = dict(vs=torch.full((), 7.0), twice=torch.full((), 7.0), s=torch.full((), 7.0),
                centered=torch.zeros(9, 20))
    rank0(x, v, **outs)
    assert stored_target(rank0.last_compile.key) == "ascend-a2a3-cpusim"
    torch.testing.assert_close(outs["vs"], v.sum(), rtol=1e-6, atol=1e-5)
    torch.testing.assert_close(outs["twice"], v.sum() * 2 - 1, rtol=1e-6, atol=1e-5)
    torch.testing.assert_close(outs["s"], x.sum(), rtol=1e-6, atol=1e-5)
    torch.testing.assert_close(outs["centered"], x - x.amax(), rtol=0, atol=0)
