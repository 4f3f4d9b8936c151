"""Keyword options of @pypto.jit, validated when the kernel is decorated.

Each option group is a dict of known keys; an unknown group or key is a
TypeError/ValueError that names it. Keys PyPTO defines for its NPU toolchain
are accepted (so PyPTO kernels load unchanged) but have no effect here unless
listed as honoured below.

Honoured:
  runtime_options["run_mode"]: pypto.RunMode.SIM (the CPU host target, the
      default) or pypto.RunMode.NPU (fails: no accelerator target is built).
  codegen_options["opt_level"]: 0..3, the native compiler's -O level
      (part of the cache key).
  host_options["compile_timeout"]: seconds allowed for one compile.
"""

import enum
import numbers


class RunMode(enum.IntEnum):
    """Where a kernel runs. SIM: this machine's CPU, real results."""

    NPU = 0
    SIM = 1

    def __repr__(self):
        return "pypto.RunMode." + self.name


KNOWN_KEYS = {
    "runtime_options": {
        "run_mode", "device_sched_mode", "stitch_function_inner_memory",
        "stitch_function_outcast_memory", "stitch_function_num_initial",
        "stitch_function_max_num", "stitch_cfgcache_size",
    },
    "host_options": {"compile_timeout", "only_codegen"},
    "codegen_options": {"opt_level", "support_dynamic_aligned"},
    "pass_options": {
        "pg_upper_bound", "pg_lower_bound", "pg_skip_partition", "vec_nbuffer_setting",
        "cube_l1_reuse_setting", "cube_nbuffer_setting", "mg_copyin_upper_bound",
        "sg_set_scope",
    },
    "verify_options": {"enable_pass_verify", "pass_verify_save_tensor",
                       "pass_verify_save_tensor_dir", "pass_verify_error_tol"},
    "debug_options": {"compile_debug_mode", "runtime_debug_mode"},
}


class JitOptions:
    """The validated options of one jit function."""

    def __init__(self, **groups):
        unknown = sorted(set(groups) - set(KNOWN_KEYS))
        if unknown:
            raise TypeError(
                f"pypto.jit: unknown keyword argument(s) {', '.join(unknown)}; known: "
                f"{', '.join(sorted(KNOWN_KEYS))}")
        self.groups = {}
        for group, value in groups.items():
            if value is None:
                value = {}
            if not isinstance(value, dict):
                raise TypeError(f"pypto.jit: {group} must be a dict, got {type(value).__name__}")
            bad = sorted(str(k) for k in value if k not in KNOWN_KEYS[group])
            if bad:
                raise ValueError(
                    f"pypto.jit: unknown key(s) in {group}: {', '.join(bad)}; known: "
                    f"{', '.join(sorted(KNOWN_KEYS[group]))}")
            self.groups[group] = dict(value)

        run_mode = self.groups.get("runtime_options", {}).get("run_mode", RunMode.SIM)
        if isinstance(run_mode, bool) or run_mode not in (RunMode.NPU, RunMode.SIM):
            raise ValueError(
                f"pypto.jit: runtime_options['run_mode'] must be pypto.RunMode.NPU or "
                f"pypto.RunMode.SIM, got {run_mode!r}")
        self.run_mode = RunMode(run_mode)

        self.compile_options = {}
        opt = self.groups.get("codegen_options", {}).get("opt_level")
        if opt is not None:
            if isinstance(opt, bool) or not isinstance(opt, numbers.Integral) or not 0 <= opt <= 3:
                raise ValueError(
                    f"pypto.jit: codegen_options['opt_level'] must be an int 0..3, got {opt!r}")
            self.compile_options["opt_level"] = str(int(opt))

        self.compile_timeout = None
        timeout = self.groups.get("host_options", {}).get("compile_timeout")
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) or timeout <= 0:
                raise ValueError(
                    f"pypto.jit: host_options['compile_timeout'] must be a positive number of "
                    f"seconds, got {timeout!r}")
            self.compile_timeout = float(timeout)
