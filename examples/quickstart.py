"""pypto quick start: one kernel, checked against torch.

    tools/pypto-python examples/quickstart.py                      # embedded compiler
    PYPTO_COMPILE_SERVER=127.0.0.1:50051 tools/pypto-python examples/quickstart.py

Prints where the kernel came from: "compiled: embedded" on a first run,
"compiled: disk" when an earlier process compiled it, "compiled: ptod MISS" /
"compiled: ptod HIT" through a ptod daemon. Exits non-zero on a wrong result.
"""

import sys

import torch

import pypto


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def quickstart_kernel(a: pypto.Tensor([], pypto.DT_FP32),
                      b: pypto.Tensor([], pypto.DT_FP32),
                      out: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(64, 128)
    out[:] = (a + b).exp() * 2 - a


def main():
    torch.manual_seed(0)
    a = torch.rand(256, 1000)
    b = torch.rand(256, 1000)
    out = torch.empty(256, 1000)
    quickstart_kernel(a, b, out)
    info = quickstart_kernel.last_compile
    print(f"compiled: {info.source} (key {info.key[:16]}..., {info.seconds:.3f} s)")
    expected = (a + b).exp() * 2 - a
    max_err = (out - expected).abs().max().item()
    if not torch.allclose(out, expected, rtol=1e-5, atol=1e-5):
        print(f"FAIL: result differs from torch (max abs error {max_err:.3g})")
        return 1
    print(f"result matches torch: 256x1000 FP32, max abs error {max_err:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
