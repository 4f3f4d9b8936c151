"""Eager mode (pypto/eager.py): a kernel's own Python runs op by op on real
values. Each test runs the kernel eagerly and compiled and compares, or
looks at values only an eager run has."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import pypto
from conftest import python_env

F32 = pypto.DT_FP32


def _rows_kernel(seen):
    """A kernel with a loop over rows, a run-time branch on the index and an
    assemble per row; `seen` collects the index values its body sees."""

    @pypto.jit
    def rows(a: pypto.Tensor([], F32), b: pypto.Tensor([], F32), out: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        t = (a + b).exp() * 2 - a
        for i in pypto.loop(0, a.shape[0], 1, name="ROWS", idx_name="i"):
            seen.append(i)
            row = t[i:i + 1, :]
            if i == 1:
                out[i:, :] = row * 3.0
            elif pypto.is_loop_end(i):
                out[i:, :] = pypto.sigmoid(row)
            else:
                out[i:, :] = row
    return rows


def test_eager_run_equals_the_compiled_kernel_and_loops_over_real_indices(native):
    seen = []
    kernel = _rows_kernel(seen)
    a, b = torch.rand(4, 8), torch.rand(4, 8)
    eager_out, compiled_out = torch.zeros(4, 8), torch.zeros(4, 8)
    with pypto.debug.eager():
        kernel(a, b, eager_out)
    assert kernel.last_compile.source == "eager"
    assert seen == [0, 1, 2, 3]  # the body ran once per real index
    assert all(type(i) is not int and int(i) == k for k, i in enumerate(seen))
    seen.clear()
    kernel(a, b, compiled_out)
    assert kernel.last_compile.source != "eager"
    assert len(seen) == 1  # traced once, on a symbolic index
    torch.testing.assert_close(eager_out, compiled_out, rtol=1e-5, atol=1e-6)
    t = (a + b).exp() * 2 - a
    torch.testing.assert_close(eager_out[1], t[1] * 3)
    torch.testing.assert_close(eager_out[3], torch.sigmoid(t[3]))
    torch.testing.assert_close(eager_out[0], t[0])


def test_values_inside_the_kernel_are_real(native, capsys):
    got = {}

    @pypto.jit
    def k(a: pypto.Tensor([], F32), out: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(2, 4)
        t = a * 2 + 1
        got["numpy"] = t.numpy()
        got["torch"] = t.torch()
        print("value of t:", t)
        out[:] = t

    a = torch.arange(8, dtype=torch.float32).reshape(2, 4)
    out = torch.zeros(2, 4)
    with pypto.debug.eager():
        k(a, out)
    np.testing.assert_array_equal(got["numpy"], (a * 2 + 1).numpy())
    assert got["numpy"].dtype == np.float32
    assert got["torch"].dtype == torch.float32
    torch.testing.assert_close(got["torch"], a * 2 + 1)
    printed = capsys.readouterr().out
    assert "value of t: pypto.Tensor" in printed and "[2, 4] DT_FP32" in printed
    assert "[[ 1.  3.  5.  7.]" in printed and "[ 9. 11. 13. 15.]]" in printed
    torch.testing.assert_close(out, a * 2 + 1)


def test_values_are_an_error_naming_eager_mode_when_compiled(native):
    @pypto.jit
    def k(a: pypto.Tensor([], F32), out: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(2, 4)
        t = a + 1
        t.numpy()
        out[:] = t

    with pytest.raises(TypeError, match=r"Tensor.numpy\(\): .* only in eager mode: run the "
                                        r"kernel with pypto.debug.eager\(\)"):
        k(torch.rand(2, 4), torch.zeros(2, 4))
    with pytest.raises(TypeError, match=r"Tensor.torch\(\): a tensor has values outside a "
                                        r"kernel only in eager mode"):
        pypto.Tensor([2, 4], F32).torch()


def test_run_mode_eager_per_kernel_compiles_nothing(native):
    options = {"run_mode": pypto.RunMode.EAGER}

    @pypto.jit(runtime_options=options)
    def k(a: pypto.Tensor([], pypto.DT_FP16), out: pypto.Tensor([], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = a * a + a

    a = (torch.rand(4, 16) * 10).half()
    out = torch.zeros(4, 16, dtype=torch.float16)
    pypto.reset_compile_stats()
    k(a, out)
    assert k.last_compile.source == "eager"
    assert pypto.compile_stats()["traces"] == 0
    # FP16 rounds after each op, as the compiled kernel does: a * a is
    # rounded to half before + a (torch on half tensors does the same).
    assert torch.equal(out, a * a + a)
    options["run_mode"] = pypto.RunMode.SIM  # read at each call
    compiled = torch.zeros(4, 16, dtype=torch.float16)
    k(a, compiled)
    assert k.last_compile.source != "eager"
    assert torch.equal(out, compiled)


def test_global_run_mode_eager(native, clean_options):
    @pypto.jit
    def k(a: pypto.Tensor([], F32), out: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = pypto.exp(a)

    a, out = torch.rand(4, 16), torch.zeros(4, 16)
    pypto.set_runtime_options(run_mode=pypto.RunMode.EAGER)
    k(a, out)
    assert k.last_compile.source == "eager"
    torch.testing.assert_close(out, torch.exp(a))
    pypto.set_runtime_options(run_mode=pypto.RunMode.SIM)
    k(a, out)
    assert k.last_compile.source != "eager"


def test_run_time_branch_takes_the_real_branch(native):
    taken = []

    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 32], F32), out: pypto.Tensor([pypto.DYNAMIC, 32], F32)):
        pypto.set_vec_tile_shapes(4, 32)
        if x.shape[0] > 16:
            taken.append("softmax")
            out[:] = pypto.softmax(x, dim=-1)
        else:
            taken.append("sigmoid")
            out[:] = pypto.sigmoid(x)

    for rows, branch in ((8, "sigmoid"), (24, "softmax")):
        x = torch.randn(rows, 32)
        eager_out, compiled_out = torch.zeros(rows, 32), torch.zeros(rows, 32)
        taken.clear()
        with pypto.debug.eager():
            k(x, eager_out)
        assert taken == [branch]
        k(x, compiled_out)
        torch.testing.assert_close(eager_out, compiled_out, rtol=1e-5, atol=1e-6)


def test_views_valid_shape_and_assemble_act_on_real_data(native):
    @pypto.jit
    def k(x: pypto.Tensor([], F32), out: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        n = x.shape[0]
        for t in pypto.loop(0, (n + 7) // 8, 1):
            tile = pypto.view(x, [8, 16], [t * 8, 0], valid_shape=[pypto.min(8, n - t * 8), 16])
            pypto.assemble(tile.exp() + 1.0, [t * 8, 0], out)
        out[:, 0:4] = x[:, 4:8] * 10.0

    x = torch.rand(20, 16)
    eager_out, compiled_out = torch.zeros(20, 16), torch.zeros(20, 16)
    with pypto.debug.eager():
        k(x, eager_out)
    k(x, compiled_out)
    want = x.exp() + 1
    want[:, 0:4] = x[:, 4:8] * 10
    torch.testing.assert_close(eager_out, want)
    torch.testing.assert_close(eager_out, compiled_out, rtol=1e-5, atol=1e-6)


def test_outputs_are_written_to_the_callers_tensors_in_place(native):
    @pypto.jit
    def k(acc: pypto.Tensor([], F32), x: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        acc[1:3, :] = acc[1:3, :] + x[1:3, :]

    acc, x = torch.ones(4, 8), torch.rand(4, 8)
    numpy_acc = np.ones((4, 8), dtype=np.float32)
    want = acc.clone()
    want[1:3] += x[1:3]
    with pypto.debug.eager():
        k(acc, x)
        k(numpy_acc, x.numpy())
    torch.testing.assert_close(acc, want)
    np.testing.assert_allclose(numpy_acc, want.numpy())


def test_bf16_and_integer_values(native):
    @pypto.jit
    def k(a: pypto.Tensor([], pypto.DT_BF16), i: pypto.Tensor([], pypto.DT_INT32),
          out: pypto.Tensor([], pypto.DT_BF16), isum: pypto.Tensor([], pypto.DT_INT64)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = a * 3.0 + a
        isum[:] = pypto.sum(i, dim=-1, keepdim=True)

    a = torch.randn(4, 16).bfloat16()
    i = torch.randint(-1000, 1000, (4, 16), dtype=torch.int32)
    outs = [(torch.zeros(4, 16, dtype=torch.bfloat16), torch.zeros(4, 1, dtype=torch.int64))
            for _ in range(2)]
    with pypto.debug.eager():
        k(a, i, *outs[0])
    k(a, i, *outs[1])
    assert torch.equal(outs[0][0], outs[1][0])
    assert torch.equal(outs[0][1], i.sum(dim=-1, keepdim=True))
    assert torch.equal(outs[0][1], outs[1][1])


def test_errors_name_the_kernel_line(native):
    @pypto.jit
    def k(a: pypto.Tensor([], F32), out: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = a[0:2, :] + a  # shapes [2, 8] and [4, 8] do not broadcast

    with pytest.raises(ValueError, match="do not broadcast"):
        with pypto.debug.eager():
            k(torch.rand(4, 8), torch.zeros(4, 8))


def test_pypto_eager_environment_variable(native, tmp_path):
    script = tmp_path / "k.py"
    script.write_text(
        "import torch, pypto\n"
        "@pypto.jit\n"
        "def k(a: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):\n"
        "    pypto.set_vec_tile_shapes(2, 4)\n"
        "    t = a * 3\n"
        "    print('t[0]', t.numpy()[0].tolist())\n"
        "    out[:] = t\n"
        "a = torch.arange(8, dtype=torch.float32).reshape(2, 4)\n"
        "out = torch.zeros(2, 4)\n"
        "k(a, out)\n"
        "print('source', k.last_compile.source, out[1].tolist())\n")
    env = python_env()
    env["PYPTO_EAGER"] = "1"
    env["PYPTO_CACHE_DIR"] = str(tmp_path / "cache")
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert "t[0] [0.0, 3.0, 6.0, 9.0]" in r.stdout
    assert "source eager [12.0, 15.0, 18.0, 21.0]" in r.stdout
    assert not os.path.exists(tmp_path / "cache")  # nothing was compiled
