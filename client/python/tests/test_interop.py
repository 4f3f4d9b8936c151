"""Interop: zero-copy arguments (pointer identity of what the kernel reads
and writes), non-contiguous arguments, a torch.nn.Module calling a kernel."""

import numpy as np
import pytest
import torch

import pypto

ANY = pypto.Tensor[...]


class Recorder:
    """Stands in for a loaded kernel: records the data pointers it is given."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.calls = []

    def run(self, arrays, dtypes=()):
        self.calls.append([a.ctypes.data for a in arrays])
        self.kernel.run(arrays, list(dtypes))


def record(jit_function):
    """Swaps each compiled kernel of `jit_function` for a Recorder."""
    recorders = []
    for entry in jit_function._cache.values():
        if not isinstance(entry.compiled.kernel, Recorder):
            entry.compiled.kernel = Recorder(entry.compiled.kernel)
        recorders.append(entry.compiled.kernel)
    return recorders[0]


def ptr(x):
    if isinstance(x, torch.Tensor):
        return x.data_ptr()
    return x.ctypes.data


def make():
    @pypto.jit
    def k(a: ANY, b: ANY, out: ANY):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = a * b + 1

    return k


@pytest.mark.parametrize("kind", ["torch", "numpy", "bf16", "from_torch", "fp16_numpy"])
def test_contiguous_arguments_are_not_copied(native, kind):
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(16, 48, generator=g), torch.randn(16, 48, generator=g)
    if kind == "numpy":
        a, b = a.numpy(), b.numpy()
    elif kind == "fp16_numpy":
        a, b = a.numpy().astype(np.float16), b.numpy().astype(np.float16)
    elif kind == "bf16":
        a, b = a.bfloat16(), b.bfloat16()
    out = (np.zeros_like(a) if isinstance(a, np.ndarray) else torch.zeros_like(a))
    args = [a, b, out]
    if kind == "from_torch":
        args = [pypto.from_torch(a, "a"), pypto.from_torch(b, "b"), pypto.from_torch(out, "out")]
    k = make()
    k(*args)
    rec = record(k)
    k(*args)             # positional: the fast path
    k(*args[:2], out=args[2])  # keyword: the full path
    want = [ptr(a), ptr(b), ptr(out)]
    assert rec.calls == [want, want], "the kernel got copies, not the arguments' memory"
    expected = a * b + 1
    if isinstance(out, np.ndarray):
        np.testing.assert_array_equal(out, expected)
    else:
        assert torch.equal(out, expected)


def test_non_contiguous_arguments_are_copied_and_written_back(native):
    g = torch.Generator().manual_seed(2)
    big_a = torch.randn(16, 96, generator=g)
    a = big_a[:, ::2]                       # strided input: read through a copy
    b = torch.randn(48, 16, generator=g).t()  # transposed input
    out_big = torch.zeros(32, 48)
    out = out_big[::2]                      # strided output: computed aside, copied back
    k = make()
    k(a, b, out)
    rec = record(k)
    k(a, b, out)
    (pa, pb, pout), = rec.calls
    assert pa != a.data_ptr() and pb != b.data_ptr() and pout != out.data_ptr()
    torch.testing.assert_close(out, a * b + 1, rtol=0, atol=0)
    assert torch.count_nonzero(out_big[1::2]) == 0   # rows outside the view untouched


class Scale(torch.nn.Module):
    """y = x * weight + 1 with weight a Parameter; forward calls a kernel."""

    kernel = make()

    def __init__(self, cols):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.linspace(-1, 1, cols))

    def forward(self, x):
        out = torch.empty_like(x)
        self.kernel(x, self.weight.detach().expand_as(x), out)
        return out


def test_nn_module_forward_calls_a_kernel(native):
    m = Scale(48)
    x = torch.randn(16, 48)
    torch.testing.assert_close(m(x), x * m.weight.detach() + 1, rtol=0, atol=0)
    seq = torch.nn.Sequential(m, torch.nn.ReLU())
    torch.testing.assert_close(seq(x), torch.relu(x * m.weight.detach() + 1), rtol=0, atol=0)
    assert Scale.kernel.last_compile.source == "memory"
