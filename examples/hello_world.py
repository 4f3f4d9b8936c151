"""Hello world: add two tensors.

    tools/pypto-python examples/hello_world.py --run_mode sim

The PyPTO shape of a program: the run mode comes from argv, the kernel is
decorated at module level, the data are torch CPU tensors and the result is
checked against torch.
"""

import argparse

import torch

import pypto

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--run_mode", choices=("sim", "npu"), default="sim",
                    help="sim: this CPU, real results; npu: the accelerator target")
args, _ = parser.parse_known_args()
mode = pypto.RunMode.SIM if args.run_mode == "sim" else pypto.RunMode.NPU


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def add_kernel(a: pypto.Tensor([], pypto.DT_FP32),
               b: pypto.Tensor([], pypto.DT_FP32),
               out: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(32, 64)
    out[:] = a + b


def main():
    torch.manual_seed(0)
    a = torch.rand(64, 256)
    b = torch.rand(64, 256)
    out = torch.empty(64, 256)
    add_kernel(a, b, out)
    torch.testing.assert_close(out, a + b)
    print(f"hello world: add of {list(a.shape)} matches torch ({add_kernel.last_compile.source})")


if __name__ == "__main__":
    main()
