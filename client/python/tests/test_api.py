"""The PyPTO API surface: every Tier-1 name, aliases, options, from_torch,
scalar arguments, bfloat16 arguments."""

import numpy as np
import pytest
import torch

import pypto

ANY = pypto.Tensor[...]

# /work/shared/PYPTO_API.md, Tier 1 (and the Tier-2 names this version has).
TIER1_FUNCTIONS = """
jit tensor symbolic_scalar from_torch set_vec_tile_shapes set_cube_tile_shapes
get_vec_tile_shapes get_cube_tile_shapes
add sub mul div pow maximum minimum eq ne lt le gt ge where
exp exp2 expm1 log log2 log10 log1p sqrt rsqrt reciprocal abs neg relu sigmoid tanh erf erfc sign
floor ceil round trunc sin cos clip cast sum amax amin prod argmax argmin matmul
view assemble reshape transpose permute concat unsqueeze clone softmax rms_norm
zeros full ones arange loop loop_unroll cond
""".split()
TIER1_OTHER = """
Tensor SymbolicScalar RunMode DYNAMIC DYN STATIC
DT_FP32 DT_FP16 DT_BF16 DT_INT8 DT_INT16 DT_INT32 DT_INT64 DT_UINT8 DT_BOOL DT_DOUBLE
DT_FP8E4M3 DT_FP8E5M2 DT_UINT16 DT_UINT32 DT_UINT64
""".split()
TIER2_FUNCTIONS = """
verify options set_pass_options set_host_options set_codegen_options set_debug_options
set_runtime_options set_verify_options get_pass_options get_host_options get_codegen_options
get_debug_options get_runtime_options get_verify_options
""".split()
TENSOR_MEMBERS = """
shape dtype name dim format exp sum amax amin prod argmax argmin softmax clip cast move
add sub mul div pow maximum minimum eq ne lt le gt ge reshape transpose permute view unsqueeze
clone matmul
""".split()


def is_placeholder(fn):
    return (fn.__doc__ or "").startswith("Not implemented yet")


@pytest.mark.parametrize("name", TIER1_FUNCTIONS + TIER2_FUNCTIONS)
def test_every_tier1_function_exists(name):
    fn = getattr(pypto, name)
    assert callable(fn), name
    if is_placeholder(fn):
        # A capability not built yet: a clear error saying what is missing.
        with pytest.raises(NotImplementedError, match=rf"pypto\.{name} is not implemented yet \("):
            fn()


@pytest.mark.parametrize("name", TIER1_OTHER)
def test_every_tier1_constant_exists(name):
    assert getattr(pypto, name) is not None


@pytest.mark.parametrize("name", TENSOR_MEMBERS)
def test_tensor_members_exist(name):
    assert hasattr(pypto.Tensor, name)


def test_aliases_and_values():
    assert pypto.frontend.jit is pypto.jit
    assert pypto.DYN is pypto.DYNAMIC
    assert pypto.RunMode.NPU == 0 and pypto.RunMode.SIM == 1
    assert isinstance(pypto.tensor([4, 8], pypto.DT_FP16), pypto.Tensor)
    t = pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32, name="x")
    assert (t.shape, t.dtype, t.name, t.dim, t.format) == (
        [pypto.DYNAMIC, 64], pypto.DT_FP32, "x", 2, "ND")
    assert pypto.Tensor[...].shape is None and pypto.Tensor[...].dtype is None
    # PyPTO's other argument order: Tensor(dtype, shape).
    t2 = pypto.Tensor(pypto.DT_FP16, [1024])
    assert (t2.dtype, t2.shape) == (pypto.DT_FP16, [1024])
    assert pypto.Tensor(pypto.DT_FP32).dtype == pypto.DT_FP32


# Options --------------------------------------------------------------------


def test_option_setters_validate_and_merge(clean_options):
    pypto.set_pass_options(enable_slice=False, sg_set_scope=1)
    pypto.set_pass_options(vec_nbuffer_setting={"DEFAULT": 4})
    assert pypto.get_pass_options() == {"enable_slice": False, "sg_set_scope": 1,
                                        "vec_nbuffer_setting": {"DEFAULT": 4}}
    with pytest.raises(ValueError, match=r"pypto.set_pass_options: unknown key\(s\) in "
                                         r"pass_options: bogus; known: .*enable_slice"):
        pypto.set_pass_options(bogus=1)
    with pytest.raises(ValueError, match=r"pypto.set_codegen_options: codegen_options\['opt_level'\] "
                                         r"must be an int 0..3, got 9"):
        pypto.set_codegen_options(opt_level=9)
    with pytest.raises(ValueError, match=r"compile_timeout'\] must be a positive number"):
        pypto.set_host_options(compile_timeout=-1)
    with pytest.raises(ValueError, match=r"run_mode'\] must be pypto.RunMode.NPU, pypto.RunMode.SIM or "
                                         r"pypto.RunMode.EAGER"):
        pypto.set_runtime_options(run_mode="npu")
    pypto.set_debug_options(runtime_debug_mode=1)
    pypto.set_verify_options(enable_pass_verify=False)
    assert pypto.get_debug_options() == {"runtime_debug_mode": 1}
    assert pypto.get_verify_options() == {"enable_pass_verify": False}


def test_options_as_context_manager_and_decorator(clean_options):
    pypto.set_host_options(compile_timeout=100)
    with pypto.options(host_options={"compile_timeout": 5}, pass_options={"enable_slice": True}):
        assert pypto.get_host_options() == {"compile_timeout": 5}
        assert pypto.get_pass_options() == {"enable_slice": True}
        with pytest.raises(RuntimeError):
            with pypto.options(codegen_options={"opt_level": 0}):
                raise RuntimeError("restored even on errors")
        assert pypto.get_codegen_options() == {}
    assert pypto.get_host_options() == {"compile_timeout": 100}
    assert pypto.get_pass_options() == {}

    @pypto.options(pass_options={"enable_slice": False})
    def scoped(x):
        return pypto.get_pass_options(), x

    assert scoped(3) == ({"enable_slice": False}, 3)
    assert pypto.get_pass_options() == {}
    with pytest.raises(TypeError, match=r"pypto.options: unknown keyword argument\(s\) colour"):
        pypto.options(colour={})
    with pytest.raises(ValueError, match=r"unknown key\(s\) in host_options: nope"):
        pypto.options(host_options={"nope": 1})


def test_global_opt_level_is_honoured_and_part_of_the_cache_key(native, clean_options):
    @pypto.jit
    def k(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = a + 1

    a, out = np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32)
    k(a, out)
    key0 = k.last_compile.key
    with pypto.options(codegen_options={"opt_level": 0}):
        k(a, out)
        assert k.last_compile.source == "embedded" and k.last_compile.key != key0
        k(a, out)
        assert k.last_compile.source == "memory"
    k(a, out)
    assert k.last_compile.key == key0
    pypto.set_pass_options(enable_slice=False)  # not honoured: no recompile
    k(a, out)
    assert k.last_compile.source == "memory"
    assert pypto.compile_stats()["compiles"] == 2
    np.testing.assert_array_equal(out, a + 1)


def test_global_npu_run_mode_applies_unless_the_kernel_says(native, clean_options):
    @pypto.jit
    def k(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4)
        out[:] = a * 2

    @pypto.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def sim(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4)
        out[:] = a * 2

    a, out = np.ones(4, np.float32), np.zeros(4, np.float32)
    with pypto.options(runtime_options={"run_mode": pypto.RunMode.NPU}):
        with pytest.raises(pypto.UnsupportedTargetError, match="RunMode.NPU"):
            k(a, out)
        sim(a, out)
    k(a, out)
    np.testing.assert_array_equal(out, 2 * a)


# from_torch -------------------------------------------------------------------


def test_from_torch_shares_memory_and_runs(native):
    @pypto.jit
    def k(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = a.exp()

    t = torch.rand(4, 8)
    out = torch.zeros(4, 8)
    x = pypto.from_torch(t, "x", dynamic_axis=0)
    assert (x.shape, x.dtype, x.name, x.dim, x.dynamic_axis) == ([4, 8], pypto.DT_FP32, "x", 2, (0,))
    assert x.torch() is t and pypto.to_torch(x) is t
    assert x.numpy().ctypes.data == t.data_ptr()
    y = pypto.from_torch(out, "y", dynamic_axis=0)
    k(x, y)
    torch.testing.assert_close(out, t.exp())
    assert pypto.from_torch(t, dtype=pypto.DT_FP32).dtype == pypto.DT_FP32


def test_from_torch_bad_input():
    with pytest.raises(TypeError, match=r"pypto.from_torch: dtype=pypto.DT_FP16 but the tensor's "
                                        r"dtype is pypto.DT_FP32; from_torch does not convert"):
        pypto.from_torch(torch.zeros(2), dtype=pypto.DT_FP16)
    with pytest.raises(ValueError, match=r"dynamic_axis 2 is not a dim of a rank-2 tensor \(valid: -2..1\)"):
        pypto.from_torch(torch.zeros(2, 3), dynamic_axis=2)
    with pytest.raises(TypeError, match="expected a torch tensor .*got list"):
        pypto.from_torch([1.0])
    with pytest.raises(TypeError, match="dtype torch.complex64 is not supported"):
        pypto.from_torch(torch.zeros(2, dtype=torch.complex64))


# Scalar arguments -------------------------------------------------------------


def test_scalar_arguments_are_compile_time_constants(native):
    @pypto.jit
    def k(a: ANY, out: ANY, scale: float, shift: int, flag: bool):
        pypto.set_vec_tile_shapes(8, 8)
        y = a * scale + shift
        out[:] = y.exp() if flag else y

    a, out = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8), np.zeros((8, 8), np.float32)
    k(a, out, 2.0, 1, False)
    np.testing.assert_allclose(out, a * 2 + 1, rtol=1e-6)
    k(a, out, 2.0, 1, True)
    np.testing.assert_allclose(out, np.exp(a * 2 + 1), rtol=2e-6)
    k(a, out, 2, 1, True)         # an int for a float: the same value, the same kernel
    k(a, out, scale=2.0, shift=1, flag=True)
    assert pypto.compile_stats()["compiles"] == 2
    k(a, out, 3.0, 1, True)       # a new value compiles once
    k(a, out, 3.0, 1, True)
    assert pypto.compile_stats()["compiles"] == 3
    assert pypto.compile_stats()["traces"] == 3
    with pytest.raises(TypeError, match=r"argument 'shift': expected a Python int \(the annotation\), got float 1.5"):
        k(a, out, 2.0, 1.5, True)
    with pytest.raises(TypeError, match=r"argument 'flag': expected a Python bool .*got int 1"):
        k(a, out, 2.0, 1, 1)
    with pytest.raises(TypeError, match=r"argument 'scale': expected a Python float .*got ndarray"):
        k(a, out, a, 1, True)


def test_unannotated_parameter_takes_a_scalar_or_a_tensor(native):
    @pypto.jit
    def k(a, out, eps):
        pypto.set_vec_tile_shapes(4)
        out[:] = a + eps

    a, out = np.ones(4, np.float32), np.zeros(4, np.float32)
    k(a, out, 0.5)
    np.testing.assert_array_equal(out, a + 0.5)
    k(a, out, np.full(4, 2, np.float32))
    np.testing.assert_array_equal(out, a + 2)


def test_number_for_a_tensor_parameter_says_what_to_change():
    @pypto.jit
    def k(a: ANY, out: ANY):
        out[:] = a

    with pytest.raises(TypeError, match=r"argument 'a': got the number 3 for a tensor parameter; "
                                        r"pass a tensor, or annotate the parameter with another type \(int, float, "
                                        r"tuple, ...\) to make it a compile-time parameter"):
        k(3, np.zeros(4, np.float32))


# bfloat16 -------------------------------------------------------------------


def test_bf16_torch_arguments(native):
    @pypto.jit
    def k(a: pypto.Tensor([], pypto.DT_BF16), b: pypto.Tensor([], pypto.DT_BF16),
          out: pypto.Tensor([], pypto.DT_BF16), out32: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        s = a * b + 1
        out[:] = s
        out32[:] = s.cast(pypto.DT_FP32)

    g = torch.Generator().manual_seed(0)
    a = torch.randn(8, 40, generator=g).to(torch.bfloat16)
    b = torch.randn(8, 40, generator=g).to(torch.bfloat16)
    out = torch.zeros(8, 40, dtype=torch.bfloat16)
    out32 = torch.zeros(8, 40)
    ptr = out.data_ptr()
    k(a, b, out, out32)
    # Each op computes in FP32 and rounds its result to BF16, as torch's bf16 ops.
    ref = a * b + 1
    assert torch.equal(out, ref) and out.data_ptr() == ptr
    torch.testing.assert_close(out32, ref.float())
    k(a, b, out, out32)  # the fast path takes bf16 too
    assert k.last_compile.source == "memory"
    # A non-contiguous bf16 output is computed aside and copied back.
    wide = torch.zeros(8, 80, dtype=torch.bfloat16)
    k(a, b, wide[:, ::2], out32)
    assert torch.equal(wide[:, ::2], ref) and torch.count_nonzero(wide[:, 1::2]) == 0
    with pytest.raises(TypeError, match=r"argument 'a': expected dtype DT_BF16 \(from the annotation\), got DT_FP32"):
        k(a.float(), b, out, out32)


def test_debug_save_graph_writes_the_graph_a_call_compiles(tmp_path):
    from google.protobuf import text_format
    from pypto._proto import graph_pb2

    @pypto.jit
    def k(a: ANY, out: ANY, scale: float):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = (a * scale).exp()

    a, out = np.ones((8, 40), np.float32), np.zeros((8, 40), np.float32)
    path = pypto.debug.save_graph(k, str(tmp_path / "k.pbtxt"), a, out, 2.0)
    g = text_format.Parse(open(path).read(), graph_pb2.Graph())
    assert g == k.trace(a, out, 2.0)
    assert [op.kind for op in g.ops] == ["muls", "exp"] and g.ops[0].attrs["scalar"].f == 2.0
    assert pypto.compile_stats()["compiles"] == 0
    with pytest.raises(TypeError, match="expected a @pypto.jit function, got function"):
        pypto.debug.graph_text(lambda x: x)


def test_string_annotations_are_evaluated(native, tmp_path):
    """Kernels in a module with `from __future__ import annotations`."""
    import importlib.util
    src = tmp_path / "future_kernels.py"
    src.write_text(
        "from __future__ import annotations\n"
        "import pypto\n"
        "@pypto.jit\n"
        "def k(a: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32), s: float):\n"
        "    pypto.set_vec_tile_shapes(4)\n"
        "    out[:] = a * s\n")
    spec = importlib.util.spec_from_file_location("future_kernels", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    a, out = np.ones(4, np.float32), np.zeros(4, np.float32)
    mod.k(a, out, 3)
    np.testing.assert_array_equal(out, 3 * a)
    with pytest.raises(TypeError, match=r"argument 'a': expected dtype DT_FP32 \(from the annotation\)"):
        mod.k(a.astype(np.float16), out, 3)
    with pytest.raises(TypeError, match="an annotation cannot be evaluated .*'Undefined'"):
        @pypto.jit
        def bad(a: "Undefined"):  # noqa: F821
            pass


def test_verify_runs_and_compares(native, clean_options):
    @pypto.jit
    def add(a: ANY, b: ANY, c: ANY):
        pypto.set_vec_tile_shapes(16, 16)
        c[:] = a + b

    a, b, c = torch.ones(64, 64), torch.rand(64, 64), torch.zeros(64, 64)
    assert pypto.verify(add, [a, b], [c], [a + b]) is True
    torch.testing.assert_close(c, a + b)
    assert pypto.verify(add, [a, b], [c], [a + b], host_options={"only_codegen": False},
                        verify_options={"pass_verify_error_tol": 1e-6})
    assert pypto.get_host_options() == {}  # the options were scoped to the call
    wrong = a + b
    wrong[3, 5] += 1
    with pytest.raises(AssertionError, match=r"outputs\[0\] differs from goldens\[0\] at 1 of 4096 "
                                             r"elements .*worst at \[3, 5\]"):
        pypto.verify(add, [a, b], [c], [wrong])
    with pytest.raises(ValueError, match="1 outputs but 2 goldens"):
        pypto.verify(add, [a, b], [c], [a, b])
    with pytest.raises(ValueError, match=r"unknown key\(s\) in verify_options: tol"):
        pypto.verify(add, [a, b], [c], [a + b], verify_options={"tol": 1})


def test_options_over_a_jit_function_keeps_its_attributes(native, clean_options):
    @pypto.options(codegen_options={"opt_level": 0})
    @pypto.jit
    def k(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4)
        out[:] = a + 1

    a, out = np.ones(4, np.float32), np.zeros(4, np.float32)
    k(a, out)
    assert k.last_compile.source == "embedded"
    k(a, out)
    assert k.last_compile.source == "memory"  # live, not a copy taken when decorating
    assert k.__name__ == "k" and pypto.get_codegen_options() == {}

    @pypto.jit
    def plain(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4)
        out[:] = a + 1

    plain(a, out)
    assert plain.last_compile.key != k.last_compile.key  # opt_level 0 made another kernel
    np.testing.assert_array_equal(out, a + 1)
