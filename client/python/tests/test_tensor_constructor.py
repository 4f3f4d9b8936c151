"""pypto.Tensor's constructor (PyPTO's signature) and pypto.tensor, its alias."""

import inspect

import numpy as np
import pytest
import torch

import pypto

F32 = pypto.DT_FP32


def test_row_pypto_tensor_is_pypto_Tensor():
    assert pypto.tensor is pypto.Tensor
    t = pypto.tensor()  # all inferred: an annotation
    assert isinstance(t, pypto.Tensor) and t.shape is None and t.dtype is None


def test_row_pypto_tensor_all_inferred_annotation_in_a_kernel(native):
    @pypto.frontend.jit
    def k(a: pypto.tensor(), out: pypto.tensor()):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = a + 1

    a, out = torch.ones(4, 8), torch.zeros(4, 8)
    k(a, out)
    np.testing.assert_array_equal(out.numpy(), 2.0)


def test_row_pypto_Tensor_local_tensor_in_a_kernel(native):
    @pypto.frontend.jit
    def k(a: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        tmp = pypto.Tensor([4, 8], F32, "tmp")  # a local tensor, as pypto.tensor(...)
        tmp[:] = a * 3
        acc = pypto.tensor([4, 8], F32)
        acc[:] = tmp + 1
        out[:] = acc

    a, out = torch.linspace(0, 1, 32).reshape(4, 8), torch.zeros(4, 8)
    k(a, out)
    np.testing.assert_allclose(out.numpy(), a.numpy() * 3 + 1, rtol=1e-6)


def test_row_pypto_Tensor_local_tensor_needs_static_shape_and_dtype(native):
    @pypto.frontend.jit
    def k(a: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32)):
        tmp = pypto.Tensor([pypto.DYNAMIC, 8], F32)
        out[:] = tmp

    with pytest.raises(ValueError, match="pypto.tensor inside a kernel needs a static shape and "
                                         "a dtype"):
        k(torch.ones(4, 8), torch.zeros(4, 8))


def test_row_pypto_Tensor_signature():
    params = inspect.signature(pypto.Tensor).parameters
    assert list(params) == ["shape", "dtype", "name", "format", "data_ptr", "device",
                            "ori_shape"]
    assert params["name"].default == ""
    t = pypto.Tensor([4, 8], F32, "x", format=None, device="cpu", ori_shape=[2, 16])
    assert t.shape == [4, 8] and t.name == "x" and t.ori_shape == [2, 16]
    assert pypto.Tensor([4, 8], F32, device=torch.device("cpu")).ori_shape is None
    fmt = object()  # any value PyPTO's format takes is kept
    assert pypto.Tensor([4], F32, format=fmt).format is fmt


def test_row_pypto_Tensor_device_memory_is_a_clear_error():
    with pytest.raises(ValueError, match="pypto.Tensor: data_ptr=4096 wraps device memory, and "
                                         "this pypto runs on the host CPU only"):
        pypto.Tensor([4], F32, data_ptr=4096)
    with pytest.raises(ValueError, match="pypto.Tensor: device='npu:0'; this pypto runs on the "
                                         "host CPU only"):
        pypto.Tensor([4], F32, device="npu:0")
