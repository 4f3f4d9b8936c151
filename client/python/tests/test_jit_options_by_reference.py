"""pypto.frontend.jit options: runtime_options held by reference and read at
each call, the other groups copied; every key and keyword of PyPTO's jit page
accepted, and those without effect listed by pypto.debug.ignored_options."""

import numpy as np
import pytest
import torch

import pypto

ANY = pypto.Tensor[...]


def kernel(**options):
    @pypto.frontend.jit(**options)
    def k(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = a * 2 + 1

    return k


def run(k):
    a, out = torch.linspace(-1, 1, 8 * 16).reshape(8, 16), torch.zeros(8, 16)
    k(a, out)
    np.testing.assert_allclose(out.numpy(), a.numpy() * 2 + 1, rtol=1e-6)


def test_row_pypto_frontend_jit_runtime_options_read_at_call_time(native, clean_options):
    runtime_options = {"run_mode": pypto.RunMode.NPU}
    k = kernel(runtime_options=runtime_options)
    # PyPTO's _set_run_mode: the int value, written into the caller's dict.
    assert runtime_options["run_mode"] == 0 and type(runtime_options["run_mode"]) is int
    runtime_options["run_mode"] = pypto.RunMode.SIM
    run(k)
    run(k)  # the repeat-call fast path reads it too
    runtime_options["run_mode"] = pypto.RunMode.NPU
    with pytest.raises(pypto.UnsupportedTargetError, match="run_mode=pypto.RunMode.NPU needs an "
                                                           "accelerator"):
        run(k)
    runtime_options["run_mode"] = 1
    run(k)
    runtime_options["run_mode"] = "sim"
    with pytest.raises(ValueError, match=r"run_mode'\] must be pypto.RunMode.NPU, "
                                         r"pypto.RunMode.SIM or pypto.RunMode.EAGER, got 'sim'"):
        run(k)
    runtime_options.pop("run_mode")  # unset: the global options, then SIM
    run(k)


def test_row_pypto_frontend_jit_npu_fails_at_call_not_decoration(native):
    k = kernel(runtime_options={"run_mode": pypto.RunMode.NPU})
    with pytest.raises(pypto.UnsupportedTargetError, match="RunMode.NPU"):
        run(k)


def test_other_option_groups_are_copied_at_decoration(native):
    codegen = {"opt_level": 1}
    debug = {"runtime_debug_mode": 0}
    k = kernel(codegen_options=codegen, debug_options=debug)
    codegen["opt_level"] = 3
    debug["runtime_debug_mode"] = 1
    assert k.options.compile_options == {"opt_level": "1"}
    assert not k.options.swimlane_now({})


def test_row_pypto_frontend_jit_every_documented_key_and_keyword(native):
    options = dict(
        new_ir=True, create_new_logical_tensor=False,
        runtime_options={"run_mode": pypto.RunMode.SIM, "launch_sched_aicpu_num": 4,
                         "max_workspace_kb": 1024, "valid_shape_optimize": 1,
                         "device_sched_parallelism": 2, "device_sched_mode": 1,
                         "stitch_function_max_num": 128, "ready_on_host_tensors": ["a"],
                         "stitch_function_num_step": 2, "stitch_function_size": 8,
                         "cfgcache_device_task_num": 4},
        codegen_options={"soc_version": "Ascend910B", "enable_pmu_trace": True,
                         "support_dynamic_aligned": True},
        pass_options={"sg_set_tunevf_mode": 1, "vec_nbuffer_setting": {-1: 2}},
        host_options={"compile_stage": 0},
        verify_options={"enable_pass_verify": False},
        debug_options={"compile_debug_mode": 0, "dump_pass_graph": False})
    k = kernel(**options)
    run(k)
    ignored = pypto.debug.ignored_options(k)
    assert ignored["new_ir"] is True and ignored["create_new_logical_tensor"] is False
    assert ignored["runtime_options"] == sorted(set(options["runtime_options"]) - {"run_mode"})
    assert ignored["codegen_options"] == ["enable_pmu_trace", "soc_version",
                                          "support_dynamic_aligned"]
    assert ignored["pass_options"] == ["sg_set_tunevf_mode", "vec_nbuffer_setting"]
    assert ignored["host_options"] == ["compile_stage"]
    assert ignored["verify_options"] == ["enable_pass_verify"]
    assert ignored["debug_options"] == ["compile_debug_mode", "dump_pass_graph"]


def test_ignored_options_lists_nothing_for_honoured_options(clean_options):
    k = kernel(runtime_options={"run_mode": pypto.RunMode.SIM},
               codegen_options={"opt_level": 2}, host_options={"compile_timeout": 60},
               debug_options={"runtime_debug_mode": 1})
    assert pypto.debug.ignored_options(k) == {}
    with pypto.options(pass_options={"sg_set_scope": 1}):  # global ones in force count too
        assert pypto.debug.ignored_options(k) == {"pass_options": ["sg_set_scope"]}
    with pytest.raises(TypeError, match="pypto.debug.ignored_options: expected a @pypto.jit "
                                        "function, got function"):
        pypto.debug.ignored_options(lambda: None)


def test_unknown_keys_and_keywords_stay_errors():
    with pytest.raises(ValueError, match="unknown key\\(s\\) in runtime_options: bogus_key"):
        kernel(runtime_options={"bogus_key": 1})
    with pytest.raises(ValueError, match="unknown key\\(s\\) in codegen_options: soc"):
        kernel(codegen_options={"soc": "x"})
    with pytest.raises(TypeError, match="unknown keyword argument\\(s\\) new_irr"):
        kernel(new_irr=True)
