"""A torch.nn.Module whose forward calls a pypto kernel: a residual block
x + rms_norm(x) * silu(gate), a drop-in for its torch version.

    tools/pypto-python examples/nn_module.py --run_mode sim

The module owns its parameters as torch tensors; forward allocates the output
with torch and lets the kernel write it (no copies of contiguous tensors).
"""

import argparse

import torch

import pypto

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--run_mode", choices=("sim", "npu"), default="sim")
args, _ = parser.parse_known_args()
mode = pypto.RunMode.SIM if args.run_mode == "sim" else pypto.RunMode.NPU


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def gated_rms_norm_kernel(x: pypto.Tensor([], pypto.DT_FP32),
                          gate: pypto.Tensor([], pypto.DT_FP32),
                          weight: pypto.Tensor([], pypto.DT_FP32),
                          out: pypto.Tensor([], pypto.DT_FP32),
                          eps: float):
    pypto.set_vec_tile_shapes(16, 256)
    normed = pypto.rms_norm(x, weight, epsilon=eps)
    out[:] = x + normed * (gate * pypto.sigmoid(gate))      # residual + SiLU-gated norm


class GatedRMSNorm(torch.nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x, gate):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])                # kernels see [tokens, hidden]
        out = torch.empty_like(x2)
        with torch.no_grad():
            gated_rms_norm_kernel(x2, gate.reshape(-1, shape[-1]), self.weight, out, self.eps)
        return out.reshape(shape)


def reference(module, x, gate):
    normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + module.eps) * module.weight
    return x + normed * torch.nn.functional.silu(gate)


def main():
    torch.manual_seed(0)
    block = GatedRMSNorm(512)
    with torch.no_grad():
        block.weight.copy_(torch.rand(512) + 0.5)
    x, gate = torch.randn(2, 64, 512), torch.randn(2, 64, 512)
    y = block(x, gate)
    torch.testing.assert_close(y, reference(block, x, gate), rtol=1e-5, atol=1e-5)
    y2 = block(torch.randn(3, 64, 512), torch.randn(3, 64, 512))   # new batch: compiles once
    assert y2.shape == (3, 64, 512)
    block(x, gate)
    assert gated_rms_norm_kernel.last_compile.source == "memory"
    print("nn.Module: GatedRMSNorm.forward through a pypto kernel matches torch")


if __name__ == "__main__":
    main()
