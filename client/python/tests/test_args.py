"""Calling convention and options: checks that happen before any compile."""

import numpy as np
import pytest
import torch

import pypto

F32 = pypto.Tensor([], pypto.DT_FP32)


def make_static():
    @pypto.jit
    def k(x: pypto.Tensor((32, 64), pypto.DT_FP16), out: pypto.Tensor((32, 64), pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(16, 32)
        out[:] = x + 1
    return k


def test_wrong_dtype_names_the_argument():
    k = make_static()
    x = np.zeros((32, 64), np.float32)
    out = np.zeros((32, 64), np.float16)
    with pytest.raises(TypeError, match=r"argument 'x': expected dtype DT_FP16 \(from the annotation\), got DT_FP32"):
        k(x, out)
    with pytest.raises(TypeError, match="argument 'out': expected dtype DT_FP16.*got DT_DOUBLE"):
        k(out, np.zeros((32, 64)))
    with pytest.raises(TypeError, match="argument 'x': expected dtype DT_FP16.*got DT_INT32"):
        k(torch.zeros(32, 64, dtype=torch.int32), out)
    with pytest.raises(TypeError, match="argument 'x': expected dtype DT_FP16.*got DT_BF16"):
        k(torch.zeros(32, 64, dtype=torch.bfloat16), out)


def test_wrong_shape_or_rank_names_the_argument():
    k = make_static()
    good = np.zeros((32, 64), np.float16)
    with pytest.raises(ValueError, match=r"argument 'x': dim 1 must be 64 \(annotation \[32, 64\]\), got shape \[32, 63\]"):
        k(np.zeros((32, 63), np.float16), good)
    with pytest.raises(ValueError, match=r"argument 'out': expected rank 2 \(annotation \[32, 64\]\), got shape \[2048\]"):
        k(good, np.zeros(2048, np.float16))
    with pytest.raises(ValueError, match=r"argument 'x': expected rank 2.*got shape \[1, 32, 64\]"):
        k(torch.zeros(1, 32, 64, dtype=torch.float16), good)


def test_inferred_annotations_check_what_the_compiler_can_take():
    @pypto.jit
    def k(x: pypto.Tensor[...], out: pypto.Tensor[...]):
        pypto.set_vec_tile_shapes(4)
        out[:] = x

    with pytest.raises(ValueError, match=r"argument 'x': rank 5 \(shape \[1, 1, 1, 1, 1\]\); kernels take tensors of rank 0 to 4"):
        k(np.zeros((1,) * 5, np.float32), np.zeros((1,) * 5, np.float32))
    with pytest.raises(ValueError, match=r"argument 'out': shape \[0\] has an empty dim"):
        k(np.zeros(1, np.float32), np.zeros(0, np.float32))
    with pytest.raises(TypeError, match="argument 'x': dtype torch.complex64 is not supported yet; this version takes arguments of DT_FP32"):
        k(torch.zeros(4, dtype=torch.complex64), np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="argument 'x': dtype DT_UINT16 is not supported yet"):
        k(np.zeros(4, np.uint16), np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="argument 'out': expected a numpy array or a torch tensor, got list"):
        k(np.zeros(4, np.float32), [0.0] * 4)
    with pytest.raises(TypeError, match="argument 'x': dtype .*>f4.* has no pypto equivalent"):
        k(np.zeros(4, ">f4"), np.zeros(4, np.float32))


def test_unsupported_dtype_in_annotation_fails_at_call(native):
    @pypto.jit
    def k(x: pypto.Tensor([], pypto.DT_BF16), out: pypto.Tensor([], pypto.DT_BF16)):
        out[:] = x

    with pytest.raises(TypeError, match="argument 'x': expected dtype DT_BF16"):
        k(np.zeros(4, np.float32), np.zeros(4, np.float32))

    @pypto.jit
    def i8(x: pypto.Tensor([], pypto.DT_INT8), out: pypto.Tensor([], pypto.DT_INT8)):
        out[:] = x

    # Integer dtypes compile: the copy runs.
    x, out = np.arange(-2, 2, dtype=np.int8), np.zeros(4, np.int8)
    i8(x, out)
    np.testing.assert_array_equal(out, x)


def test_bad_call_binding_names_the_function():
    k = make_static()
    with pytest.raises(TypeError, match="k: missing a required argument: 'out'"):
        k(np.zeros((32, 64), np.float16))


def test_tensor_parameter_after_a_compile_time_one_is_rejected_at_decoration():
    with pytest.raises(TypeError, match="tensor parameter 'out' follows the compile-time "
                                        "parameter 'n'; put the pypto.Tensor parameters first"):
        @pypto.jit
        def k(x: F32, n: str, out: F32):
            pass


def test_npu_run_mode_fails_clearly():
    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
    def k(x: F32, out: F32):
        pypto.set_vec_tile_shapes(4)
        out[:] = x + 1

    with pytest.raises(pypto.UnsupportedTargetError, match="RunMode.NPU needs an accelerator target, and none is built"):
        k(np.zeros(4, np.float32), np.zeros(4, np.float32))


def test_option_validation():
    # Accepted: every group of the API page, with PyPTO's keys.
    pypto.jit(runtime_options={"run_mode": pypto.RunMode.SIM, "device_sched_mode": 1},
              host_options={"compile_timeout": 60}, codegen_options={"opt_level": 3},
              pass_options={"pg_upper_bound": 1024}, verify_options={"enable_pass_verify": False},
              debug_options={"runtime_debug_mode": 0})(lambda x: None)
    with pytest.raises(ValueError, match=r"unknown key\(s\) in runtime_options: bogus, colour"):
        pypto.jit(runtime_options={"run_mode": pypto.RunMode.SIM, "bogus": 1, "colour": 2})
    with pytest.raises(TypeError, match=r"unknown keyword argument\(s\) fast_math"):
        pypto.frontend.jit(fast_math=True)
    with pytest.raises(ValueError, match="run_mode'\\] must be pypto.RunMode.NPU, pypto.RunMode.SIM or "
                                         "pypto.RunMode.EAGER, got 'sim'"):
        pypto.jit(runtime_options={"run_mode": "sim"})
    with pytest.raises(ValueError, match=r"opt_level'\] must be an int 0..3, got 7"):
        pypto.jit(codegen_options={"opt_level": 7})
    with pytest.raises(TypeError, match="pass_options must be a dict"):
        pypto.jit(pass_options=[1])
    assert pypto.jit(codegen_options={"opt_level": 1})(lambda x: None).options.compile_options == {"opt_level": "1"}


def test_bare_and_keyword_decorators_are_the_same_kind():
    def body(x: F32, out: F32):
        pass

    assert isinstance(pypto.jit(body), pypto.JitFunction)
    assert isinstance(pypto.jit()(body), pypto.JitFunction)
    assert isinstance(pypto.frontend.jit(body), pypto.JitFunction)
    assert pypto.jit(body).__name__ == "body"
