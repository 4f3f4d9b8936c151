"""A dynamic batch: pypto.DYNAMIC in the annotation lets dim 0 change between
calls while the other dims stay fixed (a wrong one is an error naming it).

    tools/pypto-python examples/dynamic_batch.py --run_mode sim

Prints how many compiles the batch sizes took (pypto.compile_stats()): one.
The DYNAMIC dim is a symbol, so a new batch size reuses the kernel
and the runtime expands its tasks for that size at launch.

The caller can mark the dim instead: a kernel whose annotation leaves the
shape to the call, given pypto.from_torch(t, dynamic_axis=0) arguments, also
traces once for every batch size.
"""

import argparse

import torch

import pypto

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--run_mode", choices=("sim", "npu"), default="sim")
args, _ = parser.parse_known_args()
mode = pypto.RunMode.SIM if args.run_mode == "sim" else pypto.RunMode.NPU

HIDDEN = 256


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def swish_bias_kernel(x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
                      bias: pypto.Tensor([HIDDEN], pypto.DT_FP32),
                      out: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, HIDDEN)
    y = x + bias
    out[:] = y * pypto.sigmoid(y)


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def swish_kernel(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, HIDDEN)
    out[:] = x * pypto.sigmoid(x)


def marked_by_the_caller():
    traces = pypto.compile_stats()["traces"]
    for batch in [3, 50, 3, 9]:
        x = torch.randn(batch, HIDDEN)
        out = torch.empty(batch, HIDDEN)
        swish_kernel(pypto.from_torch(x, "x", dynamic_axis=0),
                     pypto.from_torch(out, "out", dynamic_axis=0))
        torch.testing.assert_close(out, torch.nn.functional.silu(x))
    traces = pypto.compile_stats()["traces"] - traces
    assert traces == 1, f"{traces} traces for one kernel over 3 batch sizes"
    print(f"from_torch(dynamic_axis=0): 4 calls, 3 batch sizes, {traces} trace")


def main():
    torch.manual_seed(0)
    bias = torch.randn(HIDDEN)
    pypto.reset_compile_stats()
    for batch in [1, 7, 64, 7, 200, 1]:
        x = torch.randn(batch, HIDDEN)
        out = torch.empty(batch, HIDDEN)
        swish_bias_kernel(x, bias, out)
        torch.testing.assert_close(out, torch.nn.functional.silu(x + bias))
        print(f"batch {batch:4d}: {swish_bias_kernel.last_compile.source}")
    try:
        swish_bias_kernel(torch.randn(4, HIDDEN + 1), bias, torch.empty(4, HIDDEN + 1))
    except ValueError as e:
        print(f"as expected: {e}")
    stats = pypto.compile_stats()
    print(f"dynamic batch: 6 calls, 4 batch sizes, {stats['compiles']} compiles, "
          f"results match torch")
    marked_by_the_caller()


if __name__ == "__main__":
    main()
