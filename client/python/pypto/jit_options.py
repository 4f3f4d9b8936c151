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
Every other known key is accepted and has no effect here.
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
        "stitch_function_max_num", "stitch_cfgcache_size", "runtime_debug_mode",
        "enable_profiling", "trace_level",
    },
    "host_options": {"compile_timeout", "only_codegen", "compile_stage", "compile_monitor_enable",
                     "compile_timeout_stage", "compile_monitor_print_interval"},
    "codegen_options": {"opt_level", "support_dynamic_aligned", "soc_version", "enable_pmu_trace",
                        "vf_options"},
    "pass_options": {
        "pg_upper_bound", "pg_lower_bound", "pg_skip_partition", "vec_nbuffer_setting",
        "cube_l1_reuse_setting", "cube_nbuffer_setting", "mg_copyin_upper_bound",
        "sg_set_scope", "enable_slice",
    },
    "verify_options": {"enable_pass_verify", "pass_verify_save_tensor",
                       "pass_verify_save_tensor_dir", "pass_verify_error_tol"},
    "debug_options": {"compile_debug_mode", "runtime_debug_mode"},
}


def check_group(where, group, value):
    """A validated copy of option group `group` (a dict); `where` starts the
    message ("pypto.jit", "pypto.set_pass_options", ...)."""
    if group not in KNOWN_KEYS:
        raise TypeError(
            f"{where}: unknown keyword argument(s) {group}; known: "
            f"{', '.join(sorted(KNOWN_KEYS))}")
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise TypeError(f"{where}: {group} must be a dict, got {type(value).__name__}")
    bad = sorted(str(k) for k in value if k not in KNOWN_KEYS[group])
    if bad:
        raise ValueError(
            f"{where}: unknown key(s) in {group}: {', '.join(bad)}; known: "
            f"{', '.join(sorted(KNOWN_KEYS[group]))}")
    honoured(where, {group: value})  # the values this version acts on
    return dict(value)


def check_groups(where, groups):
    """Validated copies of option `groups` (the keyword arguments of
    pypto.jit or pypto.options): every unknown group named at once, then
    each group checked by check_group."""
    unknown = sorted(set(groups) - set(KNOWN_KEYS))
    if unknown:
        raise TypeError(
            f"{where}: unknown keyword argument(s) {', '.join(unknown)}; known: "
            f"{', '.join(sorted(KNOWN_KEYS))}")
    return {g: check_group(where, g, v) for g, v in groups.items()}


def honoured(where, groups):
    """(run_mode or None, compile options dict, compile timeout or None) of
    option `groups` after checking the values this version acts on."""
    run_mode = groups.get("runtime_options", {}).get("run_mode")
    if run_mode is not None and (isinstance(run_mode, bool)
                                 or run_mode not in (RunMode.NPU, RunMode.SIM)):
        raise ValueError(
            f"{where}: runtime_options['run_mode'] must be pypto.RunMode.NPU or "
            f"pypto.RunMode.SIM, got {run_mode!r}")
    compile_options = {}
    opt = groups.get("codegen_options", {}).get("opt_level")
    if opt is not None:
        if isinstance(opt, bool) or not isinstance(opt, numbers.Integral) or not 0 <= opt <= 3:
            raise ValueError(
                f"{where}: codegen_options['opt_level'] must be an int 0..3, got {opt!r}")
        compile_options["opt_level"] = str(int(opt))
    timeout = groups.get("host_options", {}).get("compile_timeout")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) or timeout <= 0:
            raise ValueError(
                f"{where}: host_options['compile_timeout'] must be a positive number of "
                f"seconds, got {timeout!r}")
        timeout = float(timeout)
    return (None if run_mode is None else RunMode(run_mode)), compile_options, timeout


class JitOptions:
    """The validated options of one jit function. Options set globally
    (pypto.set_*_options, pypto.options scopes: config.py) apply under the
    function's own, key by key, at each call."""

    def __init__(self, **groups):
        self.groups = check_groups("pypto.jit", groups)
        run_mode, self.compile_options, self.compile_timeout = honoured("pypto.jit", self.groups)
        self.run_mode = RunMode.SIM if run_mode is None else run_mode

    def effective(self):
        """(run_mode, compile options, compile timeout) in force now: this
        function's options over the global ones."""
        from . import config
        g_mode, g_opts, g_timeout = config.honoured_now()
        explicit_mode = self.groups.get("runtime_options", {}).get("run_mode")
        run_mode = self.run_mode if explicit_mode is not None or g_mode is None else g_mode
        compile_options = dict(g_opts)
        compile_options.update(self.compile_options)
        timeout = self.compile_timeout if self.compile_timeout is not None else g_timeout
        return run_mode, compile_options, timeout
