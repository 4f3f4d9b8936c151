"""Verification against eager runs (pypto/verify_run.py) and PyPTO's
pass_verify_print, pass_verify_save and set_verify_golden_data in eager
runs (pypto/verification.py)."""

import inspect
import os

import numpy as np
import pytest
import torch

import pypto
from pypto import eager, verify_run

F32 = pypto.DT_FP32


def _line_of(fn, marker):
    """The file line of `fn`'s source line containing `marker`."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, text in enumerate(lines) if marker in text)


@pytest.fixture
def no_goldens():
    pypto.set_verify_golden_data(None, None)
    yield
    pypto.set_verify_golden_data(None, None)


def _buggy_kernel():
    @pypto.jit(verify_options={"enable_pass_verify": True})
    def scale_rows(x: pypto.Tensor([], F32), out: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(1, 16)
        y = x.exp()
        for i in pypto.loop(0, x.shape[0], 1):
            row = y[i:i + 1, :]
            if i == 2:
                out[i:, :] = row * 3.0 + 1.0  # the bug: row 2 should be scaled by 2
            else:
                out[i:, :] = row * 2.0 + 1.0
    return scale_rows


def test_a_kernel_bug_is_reported_at_its_line(native, no_goldens):
    kernel = _buggy_kernel()
    x = torch.rand(4, 16)
    golden = x.exp() * 2 + 1
    out = torch.zeros(4, 16)
    pypto.set_verify_golden_data([x, out], [None, golden])
    with pytest.raises(verify_run.VerificationError) as e:
        kernel(x, out)
    message = str(e.value)
    line = _line_of(kernel.fn, "# the bug")
    assert f"'out' of the eager run differs from its golden at 16 of 64 elements" in message
    assert f"op that computed a differing element is pypto.adds at {__file__}:{line} (in " \
           f"scale_rows)" in message
    assert "element [2, 0]" in message
    # The compiled kernel agreed with the eager run: its output is there.
    torch.testing.assert_close(out[2], x[2].exp() * 3 + 1)


def test_a_verified_call_passes_and_keeps_the_compiled_outputs(native, no_goldens):
    kernel = _buggy_kernel()
    x, out = torch.rand(4, 16), torch.zeros(4, 16)
    kernel(x, out)
    assert kernel.last_compile.source != "eager"
    want = x.exp() * 2 + 1
    want[2] = x[2].exp() * 3 + 1
    torch.testing.assert_close(out, want)


def test_a_compiled_result_that_differs_from_eager_names_the_op(native, no_goldens,
                                                                 monkeypatch):
    """A wrong compiled value (here: the eager run's muls made to differ
    from the kernel's) is reported with the first op that computed it."""
    compute = eager.EagerBuilder._compute

    def skewed(self, op):
        compute(self, op)
        if op.kind == "muls":
            self.data[op.outputs[0]] = self.data[op.outputs[0]] + 0.5

    @pypto.jit(verify_options={"enable_pass_verify": True})
    def k(a: pypto.Tensor([], F32), out: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        t = a.exp()
        u = t * 2.0  # the op made to differ
        out[:] = u

    monkeypatch.setattr(eager.EagerBuilder, "_compute", skewed)
    with pytest.raises(verify_run.VerificationError) as e:
        k(torch.rand(4, 16), torch.zeros(4, 16))
    line = _line_of(k.fn, "# the op made to differ")
    assert "'out' of the compiled kernel differs from the eager run at 64 of 64" in str(e.value)
    assert f"pypto.muls at {__file__}:{line}" in str(e.value)


def _skew_eager(monkeypatch, kind, amount, when=lambda k: True):
    """Makes the eager run's `kind` ops compute `amount` more than the
    compiled kernel's (the k-th such op when `when(k)`), as a compiler bug
    in that op would."""
    compute = eager.EagerBuilder._compute
    seen = []

    def skewed(self, op):
        compute(self, op)
        if op.kind == kind:
            seen.append(op)
            if when(len(seen) - 1):
                self.data[op.outputs[0]] = self.data[op.outputs[0]] + amount

    monkeypatch.setattr(eager.EagerBuilder, "_compute", skewed)


def test_the_first_differing_op_is_named_not_the_last_writer(native, no_goldens,
                                                             monkeypatch):
    """exp differs; the muls and adds after it only carry the difference
    on: the op-by-op build names exp, where the output's last writer is
    adds."""
    @pypto.jit(verify_options={"enable_pass_verify": True})
    def k(a: pypto.Tensor([], F32), out: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        t = a.exp()  # the op made to differ
        u = t * 2.0
        out[:] = u + 1.0

    _skew_eager(monkeypatch, "exp", 0.25)
    with pytest.raises(verify_run.VerificationError) as e:
        k(torch.rand(4, 16), torch.zeros(4, 16))
    line = _line_of(k.fn, "# the op made to differ")
    message = str(e.value)
    assert "'out' of the compiled kernel differs from the eager run at 64 of 64" in message
    assert f"the first op whose compiled value differs is pypto.exp at {__file__}:{line}" \
        in message
    assert "pypto.adds" not in message and "pypto.muls" not in message


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_first_differing_op_inside_a_loop(native, no_goldens, monkeypatch, dtype):
    """In a loop the eager run holds one op per iteration: the second
    iteration's muls differs, and the op-by-op build names it (the first
    iteration's agrees), through views and assembles, FP32 and BF16."""
    @pypto.jit(verify_options={"enable_pass_verify": True})
    def rows(x: pypto.Tensor([], pypto.DT_FP32 if dtype == torch.float32 else pypto.DT_BF16),
             out: pypto.Tensor([], pypto.DT_FP32 if dtype == torch.float32 else pypto.DT_BF16)):
        pypto.set_vec_tile_shapes(1, 16)
        y = x + 1.0
        for i in pypto.loop(0, x.shape[0], 1):
            row = y[i:i + 1, :]
            z = row * 3.0  # the loop's op
            out[i:i + 1, :] = z.exp()

    _skew_eager(monkeypatch, "muls", 1.0, when=lambda k: k == 1)
    x = torch.rand(3, 16).to(dtype)
    with pytest.raises(verify_run.VerificationError) as e:
        rows(x, torch.zeros(3, 16, dtype=dtype))
    line = _line_of(rows.fn, "# the loop's op")
    message = str(e.value)
    assert "differs from the eager run at 16 of 48 elements" in message
    assert f"the first op whose compiled value differs is pypto.muls at {__file__}:{line}" \
        in message
    assert "element [1, 0]" in message


def test_when_the_op_by_op_build_fails_the_last_writer_is_named(native, no_goldens,
                                                                monkeypatch):
    from pypto import verify_probe
    from pypto.errors import CompileError

    def failing(*args):
        raise CompileError("no compiler here")

    @pypto.jit(verify_options={"enable_pass_verify": True})
    def k(a: pypto.Tensor([], F32), out: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        t = a.exp()
        out[:] = t * 2.0  # the last writer

    _skew_eager(monkeypatch, "exp", 0.25)
    monkeypatch.setattr(verify_probe, "_run_probes", failing)
    with pytest.raises(verify_run.VerificationError) as e:
        k(torch.rand(4, 16), torch.zeros(4, 16))
    line = _line_of(k.fn, "# the last writer")
    message = str(e.value)
    assert f"the earliest op that computed a differing element is pypto.muls at " \
           f"{__file__}:{line}" in message
    assert "(a build with each op's result as an output failed: no compiler here)" in message


def test_global_verify_options_verify_every_kernel(native, clean_options, no_goldens,
                                                   monkeypatch):
    calls = []
    monkeypatch.setattr(verify_run, "verified_call",
                        lambda fn, args, kwargs: calls.append(fn.name))

    @pypto.jit
    def k(a: pypto.Tensor([], F32), out: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = a + 1.0

    a, out = torch.rand(4, 16), torch.zeros(4, 16)
    k(a, out)
    assert calls == []
    pypto.set_verify_options(enable_pass_verify=True)
    k(a, out)
    assert calls == ["test_global_verify_options_verify_every_kernel.<locals>.k"]
    pypto.set_verify_options(enable_pass_verify=False)
    k(a, out)
    assert len(calls) == 1


def test_pass_verify_print_and_save_show_real_values(native, clean_options, tmp_path,
                                                    capsys):
    @pypto.jit
    def k(a: pypto.Tensor([], F32), out: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(2, 4)
        t = a * 2.0
        for i in pypto.loop(0, 2, 1):
            pypto.pass_verify_print("row", i, t[i:i + 1, :], cond=pypto.is_loop_end(i))
        pypto.pass_verify_save(t, "t_dump")
        out[:] = t

    a = torch.arange(8, dtype=torch.float32).reshape(2, 4)
    out = torch.zeros(2, 4)
    pypto.set_verify_options(pass_verify_save_tensor_dir=str(tmp_path))
    k(a, out)  # compiled: nothing printed, nothing saved
    assert capsys.readouterr().out == ""
    assert not os.path.exists(tmp_path / "t_dump.npy")
    with pypto.debug.eager():
        k(a, out)
    assert capsys.readouterr().out == "row 1 [[ 8. 10. 12. 14.]]\n"
    np.testing.assert_array_equal(np.load(tmp_path / "t_dump.npy"), (a * 2).numpy())


def test_goldens_must_match_the_kernels_parameters(native, no_goldens):
    kernel = _buggy_kernel()
    x, out = torch.rand(4, 16), torch.zeros(4, 16)
    pypto.set_verify_golden_data([x, out], [x, x, x])
    with pytest.raises(ValueError, match="gave 3 goldens, but the kernel has 2 tensor "
                                         "parameters and writes 1"):
        kernel(x, out)
