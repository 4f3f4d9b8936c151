"""PyPTO's configuration API, one test per row of the reference's
"Configuration" table (and the configuration names of its "Also part of
PyPTO's public surface" list), plus the tile-shape rules and matmul's
extend_params, checked against torch."""

import pytest
import torch

import pypto
from pypto import config, tiling

F32 = pypto.Tensor([], pypto.DT_FP32)


@pytest.fixture(autouse=True)
def clean(clean_options):
    yield


# Tile shapes --------------------------------------------------------------


def test_row_pypto_set_vec_tile_shapes_longer_tile_uses_leading_entries(native):
    """PyPTO's jit example tiles a 1-D tensor with set_vec_tile_shapes(2, 8):
    an op of rank r uses the first r entries."""
    @pypto.jit
    def k(a: F32, b: F32, out: F32):
        pypto.set_vec_tile_shapes(2, 8)
        out[:] = (a + b).exp() * 2

    a, b, out = torch.rand(37), torch.rand(37), torch.empty(37)
    k(a, b, out)
    torch.testing.assert_close(out, (a + b).exp() * 2)
    ops = [op for op in k.trace(a, b, out).ops if op.kind == "add"]
    assert [list(op.vec_tile.dims) for op in ops] == [[2]]

    @pypto.jit
    def k2(x: F32, out: F32):
        pypto.set_vec_tile_shapes(4, 16, 1, 1)
        out[:] = pypto.sum(x, dim=1, keepdim=True) + pypto.reshape(x, [6, 20])[:, :1]

    x, out2 = torch.rand(6, 20), torch.empty(6, 1)
    k2(x, out2)
    torch.testing.assert_close(out2, x.sum(1, keepdim=True) + x[:, :1])


def test_row_pypto_set_vec_tile_shapes_shorter_tile_is_an_error_naming_the_op():
    @pypto.jit
    def k(a: F32, out: F32):
        pypto.set_vec_tile_shapes(8)
        out[:] = a.exp()

    with pytest.raises(ValueError, match=r"pypto.exp: the vector tile shape \(8,\) has 1 dims "
                                         r"but the op's result has 2"):
        k.trace(torch.rand(4, 4), torch.empty(4, 4))


def test_row_pypto_get_vec_tile_shapes():
    assert isinstance(pypto.get_vec_tile_shapes(), list)
    pypto.set_vec_tile_shapes(1, 1, 8, 8)
    assert pypto.get_vec_tile_shapes() == [1, 1, 8, 8]
    with pytest.raises(pypto.error.FeError, match="expected 1 to 4 dims, got 5"):
        pypto.set_vec_tile_shapes(1, 1, 1, 8, 8)


def test_row_pypto_set_cube_tile_shapes_and_get_cube_tile_shapes_tuple():
    pypto.set_cube_tile_shapes([16, 32], [32, 64], [16, 64])
    got = pypto.get_cube_tile_shapes()
    assert isinstance(got, tuple)
    assert got == ([16, 32], [32, 64], [16, 64], False)
    pypto.set_cube_tile_shapes([16, 16], [256, 512, 128], [128, 128], True)
    assert pypto.get_cube_tile_shapes() == ([16, 16], [256, 512, 128], [128, 128], True)
    # The compiler stages K in chunks both operands' L1 sizes hold.
    assert tiling.current_cube_tile() == ((16, 16), (256, 512), (128, 128), True)
    for bad, msg in [(([16, 32], [32, 48, 64], [16, 64]), r"kL1a % kL0 == 0"),
                     (([16, 32], [32, 64, 0], [16, 64]), r"kL1b must be positive"),
                     (([16, 32], [32, 64, 64, 64], [16, 64]), r"k must be \[kL0, kL1\] or "
                                                              r"\[kL0, kL1a, kL1b\]"),
                     (([16, 32, 64], [32, 64], [16, 64]), r"m must be \[mL0, mL1\]")]:
        with pytest.raises(pypto.error.FeError, match=msg):
            pypto.set_cube_tile_shapes(*bad)


def test_row_pypto_set_cube_tile_shapes_three_entry_k_matmul(native):
    @pypto.jit
    def k(a: F32, b: F32, out: F32):
        pypto.set_cube_tile_shapes([16, 32], [16, 64, 32], [16, 32])
        out[:] = pypto.matmul(a, b, pypto.DT_FP32)

    a, b, out = torch.rand(40, 100) - 0.5, torch.rand(100, 24) - 0.5, torch.empty(40, 24)
    k(a, b, out)
    torch.testing.assert_close(out, a @ b, rtol=1e-5, atol=1e-5)


# Matmul's extend_params: part of the cube op ---------------------------------


def _mm_kernel(extend, vec_tile):
    @pypto.jit
    def k(a: F32, b: F32, row: F32, out: F32):
        pypto.set_cube_tile_shapes([16, 32], [16, 32], [16, 32])
        if vec_tile:
            pypto.set_vec_tile_shapes(8, 8)
        out[:] = pypto.matmul(a, b, pypto.DT_FP32, extend_params=extend(row))
    return k


@pytest.mark.parametrize("vec_tile", [False, True], ids=["no_vec_tile", "vec_tile_set"])
def test_matmul_bias_needs_only_the_cube_tile(native, vec_tile):
    a, b = torch.rand(40, 24) - 0.5, torch.rand(24, 36) - 0.5
    bias, out = torch.rand(1, 36) - 0.5, torch.empty(40, 36)
    _mm_kernel(lambda row: {"bias_tensor": row}, vec_tile)(a, b, bias, out)
    torch.testing.assert_close(out, a @ b + bias, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("vec_tile", [False, True], ids=["no_vec_tile", "vec_tile_set"])
def test_matmul_relu_type_and_scales(native, vec_tile):
    a, b = torch.rand(40, 24) - 0.5, torch.rand(24, 36) - 0.5
    row, out = torch.rand(1, 36) - 0.5, torch.empty(40, 36)
    relu = pypto.ReLuType.RELU
    _mm_kernel(lambda r: {"bias_tensor": r, "relu_type": relu}, vec_tile)(a, b, row, out)
    torch.testing.assert_close(out, torch.relu(a @ b + row), rtol=1e-5, atol=1e-5)
    _mm_kernel(lambda r: {"relu_type": pypto.ReLuType.NO_RELU}, vec_tile)(a, b, row, out)
    torch.testing.assert_close(out, a @ b, rtol=1e-5, atol=1e-5)
    # A per-tensor scale takes the cube unit's 10 mantissa bits: 0.2 -> 0.199951171875.
    _mm_kernel(lambda r: {"scale": 0.2, "relu_type": relu}, vec_tile)(a, b, row, out)
    torch.testing.assert_close(out, torch.relu((a @ b) * 0.199951171875), rtol=1e-5, atol=1e-6)
    _mm_kernel(lambda r: {"scale_tensor": r}, vec_tile)(a, b, row, out)
    torch.testing.assert_close(out, (a @ b) * row, rtol=1e-5, atol=1e-6)


def test_matmul_extend_params_batched_bias(native):
    @pypto.jit
    def k(a: F32, b: F32, bias: F32, out: F32):
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        out[:] = pypto.matmul(a, b, pypto.DT_FP32, extend_params={"bias_tensor": bias})

    @pypto.jit
    def method(a: F32, b: F32, bias: F32, out: F32):
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        out[:] = a.matmul(b, pypto.DT_FP32, extend_params={"bias_tensor": bias,
                                                           "relu_type": pypto.ReLuType.RELU})

    a, b = torch.rand(3, 20, 24) - 0.5, torch.rand(3, 24, 18) - 0.5
    bias, out = torch.rand(1, 18), torch.empty(3, 20, 18)
    k(a, b, bias, out)
    torch.testing.assert_close(out, a @ b + bias, rtol=1e-5, atol=1e-5)
    method(a, b, bias, out)
    torch.testing.assert_close(out, torch.relu(a @ b + bias), rtol=1e-5, atol=1e-5)


def test_matmul_extend_params_errors_name_the_key():
    a = torch.rand(16, 16)
    for extend, err, msg in [
            (lambda r: {"relu_type": 1}, TypeError, r"extend_params\['relu_type'\] must be "
                                                    r"pypto.ReLuType"),
            (lambda r: {"scale": "x"}, TypeError, r"extend_params\['scale'\] must be a float"),
            (lambda r: {"scale": 0.5, "scale_tensor": r}, ValueError, r"extend_params has both 'scale' and "
                                                                      r"'scale_tensor'"),
            (lambda r: {"bias_tensor": pypto.reshape(r, [16, 1])}, ValueError,
             r"extend_params\['bias_tensor'\] has shape \[16, 1\]; it must be \[1, N\]"),
            (lambda r: {"trans_mode": pypto.TransMode.CAST_ROUND}, ValueError,
             r"extend_params\['trans_mode'\] .* not supported")]:
        @pypto.jit
        def k(a: F32, b: F32, row: F32, out: F32):
            pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
            out[:] = pypto.matmul(a, b, pypto.DT_FP32, extend_params=extend(row))

        row = torch.rand(1, 16)
        with pytest.raises(err, match=r"pypto.matmul: " + msg):
            k.trace(a, a, row, torch.empty(16, 16))

    @pypto.jit
    def split(a: F32, b: F32, row: F32, out: F32):
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16], enable_split_k=True)
        out[:] = pypto.matmul(a, b, pypto.DT_FP32, extend_params={"bias_tensor": row})

    with pytest.raises(ValueError, match=r"enable_split_k=True"):
        split.trace(a, a, torch.rand(1, 16), torch.empty(16, 16))

    @pypto.jit
    def int_scale(a: F32, b: F32, s: pypto.Tensor([], pypto.DT_INT64), out: F32):
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        out[:] = pypto.matmul(a, b, pypto.DT_FP32, extend_params={"scale_tensor": s})

    with pytest.raises(TypeError, match=r"extend_params\['scale_tensor'\] has dtype DT_INT64"):
        int_scale.trace(a, a, torch.ones(1, 16, dtype=torch.int64), torch.empty(16, 16))


# Option groups ---------------------------------------------------------------


def test_row_pypto_frontend_jit():
    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def k(a: F32, out: F32, scale: float = 2.0):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = a * scale

    a, out = torch.rand(8, 8), torch.empty(8, 8)
    try:
        k(a, out, 3.0)
    except ImportError:
        pytest.skip("pypto._native not built")
    torch.testing.assert_close(out, a * 3.0)
    assert pypto.jit is pypto.frontend.jit


def test_row_pypto_set_codegen_options_get_codegen_options():
    pypto.set_codegen_options(support_dynamic_aligned=True, enable_pmu_trace=False,
                              soc_version="Ascend910B1")
    assert pypto.get_codegen_options() == {"support_dynamic_aligned": True,
                                           "enable_pmu_trace": False,
                                           "soc_version": "Ascend910B1"}
    with pytest.raises(ValueError, match=r"unknown key\(s\) in codegen_options: colour"):
        pypto.set_codegen_options(colour=1)


def test_row_pypto_set_host_options_get_host_options():
    pypto.set_host_options(compile_stage=pypto.CompStage.TENSOR_GRAPH, compile_timeout=60)
    assert pypto.get_host_options() == {"compile_stage": pypto.CompStage.TENSOR_GRAPH,
                                        "compile_timeout": 60}


def test_row_pypto_set_pass_options_get_pass_options():
    pypto.set_pass_options(vec_nbuffer_setting={-1: 2}, enable_slice=False)
    assert pypto.get_pass_options() == {"vec_nbuffer_setting": {-1: 2}, "enable_slice": False}


def test_row_pypto_set_debug_options_get_debug_options():
    pypto.set_debug_options(compile_debug_mode=0)
    assert pypto.get_debug_options() == {"compile_debug_mode": 0}


def test_row_pypto_set_verify_options_get_verify_options():
    pypto.set_verify_options(enable_pass_verify=False, pass_verify_error_tol=1e-3)
    assert pypto.get_verify_options() == {"enable_pass_verify": False,
                                          "pass_verify_error_tol": 1e-3}


def test_row_pypto_reset_options():
    pypto.set_codegen_options(opt_level=1)
    pypto.set_matrix_size([16, 32, 64])
    pypto.set_semantic_label("attention")
    pypto.reset_options()
    assert pypto.get_codegen_options() == {}
    assert config.get_matrix_size() is None and config.get_semantic_label() is None


def test_row_pypto_set_global_config_get_global_config():
    pypto.set_global_config("simulation.accuracy_level", 2)
    assert pypto.get_global_config("simulation.accuracy_level") == 2
    with pytest.raises(pypto.error.FeError, match=r"option not found: 'platform.nothing'"):
        pypto.get_global_config("platform.nothing")
    with pytest.raises(pypto.error.FeError, match=r"key must be a non-empty str"):
        pypto.set_global_config(3, 1)


def test_row_pypto_set_options_sets_groups_and_shapes():
    pypto.set_options(codegen_options={"opt_level": 2}, vec_tile_shapes=[4, 8],
                      cube_tile_shapes=[[16, 16], [256, 512, 128], [128, 128], True],
                      matrix_size=[16, 32, 64])
    assert pypto.get_codegen_options() == {"opt_level": 2}
    assert pypto.get_vec_tile_shapes() == [4, 8]
    assert pypto.get_cube_tile_shapes() == ([16, 16], [256, 512, 128], [128, 128], True)
    assert config.get_matrix_size() == [16, 32, 64]
    # Validated before anything is set.
    with pytest.raises(ValueError, match=r"dim 0 must be positive"):
        pypto.set_options(codegen_options={"opt_level": 0}, vec_tile_shapes=[0])
    assert pypto.get_codegen_options() == {"opt_level": 2}


def test_row_pypto_options_scope_with_tile_shapes_and_matrix_size(native):
    pypto.set_vec_tile_shapes(2, 2)
    cube_before = pypto.get_cube_tile_shapes()
    with pypto.options("scope", vec_tile_shapes=[8, 16],
                       cube_tile_shapes=[[16, 32], [16, 32], [16, 32]], matrix_size=[1, 2, 3],
                       codegen_options={"opt_level": 1}) as scope:
        assert scope.name == "scope"
        assert pypto.get_vec_tile_shapes() == [8, 16]
        assert pypto.get_cube_tile_shapes()[:3] == ([16, 32], [16, 32], [16, 32])
        assert config.get_matrix_size() == [1, 2, 3]
        assert pypto.get_codegen_options() == {"opt_level": 1}
    assert pypto.get_vec_tile_shapes() == [2, 2]
    assert pypto.get_cube_tile_shapes() == cube_before
    assert config.get_matrix_size() is None and pypto.get_codegen_options() == {}

    @pypto.jit
    def k(a: F32, b: F32, out: F32):
        out[:] = pypto.matmul(a, b, pypto.DT_FP32) + 1.0

    @pypto.options(vec_tile_shapes=[8, 8], cube_tile_shapes=[[16, 16], [16, 16], [16, 16]])
    def run(a, b, out):
        k(a, b, out)
        return pypto.get_vec_tile_shapes()

    a, b, out = torch.rand(16, 16), torch.rand(16, 16), torch.empty(16, 16)
    assert run(a, b, out) == [8, 8]
    torch.testing.assert_close(out, a @ b + 1.0, rtol=1e-5, atol=1e-5)
    assert pypto.get_vec_tile_shapes() == [2, 2]
    scoped_jit = pypto.options(vec_tile_shapes=[8, 8],
                               cube_tile_shapes=[[16, 16], [16, 16], [16, 16]])(k)
    out.zero_()
    scoped_jit(a, b, out)
    torch.testing.assert_close(out, a @ b + 1.0, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"cube_tile_shapes must be \[m, k, n\]"):
        pypto.options(cube_tile_shapes=[[16, 16]])
    with pytest.raises(TypeError, match=r"pypto.options: unknown keyword argument\(s\) colour"):
        pypto.options(colour=1)


def test_row_pypto_set_matrix_size():
    pypto.set_matrix_size([32, 64, 16])
    assert config.get_matrix_size() == [32, 64, 16]
    with pytest.raises(pypto.error.FeError, match=r"set_matrix_size: expected \[m, k, n\]"):
        pypto.set_matrix_size([32, 64])
    with pytest.raises(pypto.error.FeError, match=r"size\[1\] must be positive"):
        pypto.set_matrix_size([32, 0, 16])


def test_row_pypto_set_matrix_size_does_not_change_results(native):
    @pypto.jit
    def k(a: F32, b: F32, out: F32):
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        pypto.set_matrix_size([16, 16, 16])
        out[:] = pypto.matmul(a, b, pypto.DT_FP32)

    a, b, out = torch.rand(20, 16), torch.rand(16, 24), torch.empty(20, 24)
    k(a, b, out)
    torch.testing.assert_close(out, a @ b, rtol=1e-5, atol=1e-5)


def test_row_pypto_set_semantic_label():
    pypto.set_semantic_label("rope")
    assert config.get_semantic_label() == "rope"
    with pytest.raises(pypto.error.FeError, match=r"conflicts with the function hash order"):
        pypto.set_semantic_label("func12_3")
    with pytest.raises(pypto.error.FeError, match=r"label must be a str"):
        pypto.set_semantic_label(3)


def test_row_pypto_set_conv_tile_shapes_get_conv_tile_shapes():
    assert pypto.get_conv_tile_shapes() is None
    l1 = pypto.TileL1Info(tileHin=4, tileHout=4, tileWin=8, tileWout=8, tileCinFmap=16,
                          tileCinWeight=32, tileN=16, tileBatch=1)
    l0 = pypto.TileL0Info(tileH=2, tileW=8, tileK=32, tileN=16)
    pypto.set_conv_tile_shapes(tile_l1_info=l1, tile_l0_info=l0)
    assert pypto.get_conv_tile_shapes() == (l1, l0, True)
    pypto.set_conv_tile_shapes(l1)
    got_l1, got_l0, enabled = pypto.get_conv_tile_shapes()
    assert (got_l1, enabled) == (l1, False) and isinstance(got_l0, pypto.TileL0Info)
    with pytest.raises(pypto.error.FeError, match=r"tile_l1_info must be a pypto.TileL1Info"):
        pypto.set_conv_tile_shapes(l0)
    with pypto.options(conv_tile_shapes=(l1, l0)):
        assert pypto.get_conv_tile_shapes() == (l1, l0, True)
    assert pypto.get_conv_tile_shapes()[2] is False
    pypto.set_options(conv_tile_shapes=l1)
    assert pypto.get_conv_tile_shapes()[::2] == (l1, False)
    with pytest.raises(pypto.error.FeError, match=r"TileL0Info: tileK must be positive"):
        pypto.TileL0Info(tileH=2, tileW=8, tileK=0, tileN=16)


# The pass-config API -----------------------------------------------------------


def test_row_pypto_set_pass_config_get_pass_config_get_pass_configs_set_pass_default_config_get_pass_default_config():  # noqa: E501
    key = pypto.PassConfigKey.KEY_DUMP_GRAPH
    try:
        assert pypto.get_pass_default_config(key, False) is False
        assert pypto.get_pass_config("PVC2_OOO", "ExpandFunction", key, True) is True
        pypto.set_pass_config("PVC2_OOO", "ExpandFunction", key, True)
        assert pypto.get_pass_config("PVC2_OOO", "ExpandFunction", key, False) is True
        assert pypto.get_pass_config("PVC2_OOO", "OtherPass", key, False) is False
        pypto.set_pass_default_config(pypto.PassConfigKey.KEY_PRE_CHECK, True)
        assert pypto.get_pass_default_config(pypto.PassConfigKey.KEY_PRE_CHECK, False) is True
        assert pypto.get_pass_config("PVC2_OOO", "OtherPass", pypto.PassConfigKey.KEY_PRE_CHECK,
                                     False) is True
        configs = pypto.get_pass_configs("PVC2_OOO", "ExpandFunction")
        assert isinstance(configs, pypto.PassConfigs)
        assert (configs.dumpGraph, configs.preCheck, configs.printGraph) == (True, True, False)
        with pytest.raises(AttributeError, match="read-only"):
            configs.dumpGraph = False
        with pytest.raises(pypto.error.PassError, match=r"key must be a member of "
                                                        r"pypto.PassConfigKey"):
            pypto.set_pass_config("PVC2_OOO", "ExpandFunction", "KEY_DUMP_GRAPH", True)
        with pytest.raises(pypto.error.PassError, match=r"value must be a bool, got int"):
            pypto.set_pass_config("PVC2_OOO", "ExpandFunction", key, 1)
        with pytest.raises(pypto.error.PassError, match=r"strategy must be a non-empty str"):
            pypto.get_pass_configs("", "ExpandFunction")
    finally:
        config._pass_configs.clear()
        config._pass_defaults.clear()
