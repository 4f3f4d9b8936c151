"""Keyword options of @pypto.jit, validated when the kernel is decorated.

Each option group is a dict of known keys; an unknown group or key is a
TypeError/ValueError that names it. Keys PyPTO defines for its NPU toolchain
are accepted (so PyPTO kernels load unchanged) but have no effect here unless
listed as honoured below; pypto.debug.ignored_options(kernel) lists the keys
and keywords a kernel was given that have no effect.

Honoured:
  runtime_options["run_mode"]: pypto.RunMode.SIM (the CPU host target, the
      default) or pypto.RunMode.NPU (this pypto has no NPU launcher: a call
      fails with UnsupportedTargetError, unless PYPTO_NPU_CPUSIM=1 asks for
      the Ascend kernels on the PTO-ISA CPU simulation instead, warned once:
      npu_target below) or pypto.RunMode.EAGER (the kernel's Python runs op
      by op on real values, nothing compiled: eager.py). The kernel holds the caller's runtime_options dict
      itself and reads run_mode at each call; at decoration a RunMode value
      there is replaced by its int.
  codegen_options["opt_level"]: 0..3, the native compiler's -O level
      (part of the cache key).
  codegen_options["target"]: the target kernels are compiled for: "host"
      (the default: this machine's CPU), a concrete host target
      ("host-x86_64-v3", ...), "ascend-a2a3" (PTO-ISA code for Atlas A2/A3
      NPUs: a device object where CANN is installed, else its CPU
      simulation) or "ascend-a2a3-cpusim" (that code built against the
      PTO-ISA CPU simulation, runnable here). Unset, the environment
      variable PYPTO_TARGET names it, read at each call (target_env): a
      call after it changes runs the kernel for the new target.
  host_options["compile_timeout"]: seconds allowed for one compile.
  debug_options["runtime_debug_mode"]: 1 writes each SIM run's swimlane
      (Chrome trace-event JSON, one event per executed task) to the run
      folder (run_folder.py).
  verify_options["enable_pass_verify"]: true verifies each call against an
      eager run of it, and pass_verify_save_tensor_dir is where
      pypto.pass_verify_save writes in eager runs (verify_run.py).
  verify_options["pass_verify_error_tol"]: the tolerance of that check.
The codegen, host, pass, verify and debug groups are copied at decoration.

Accepted without effect (these configure PyPTO's NPU toolchain: scheduling
threads, workspace sizes, device scheduling, code generation for a SoC, pass
tuning, pass verification), so a result never depends on them:
  runtime_options: device_sched_mode, stitch_function_*, stitch_cfgcache_size,
      cfgcache_device_task_num, launch_sched_aicpu_num, max_workspace_kb,
      valid_shape_optimize, ready_on_host_tensors, device_sched_parallelism,
      runtime_debug_mode, enable_profiling, trace_level
  host_options: every key but compile_timeout
  codegen_options: support_dynamic_aligned, soc_version, enable_pmu_trace
  pass_options: every key
  verify_options: pass_verify_save_tensor, enable_pass_verify false
  debug_options: compile_debug_mode, dump_pass_graph, runtime_debug_mode
      other than 1
  the jit keywords new_ir (this front end always translates the kernel's
      control flow as PyPTO's new_ir=True does) and create_new_logical_tensor.
"""

import enum
import functools
import numbers
import os
import warnings


class RunMode(enum.IntEnum):
    """Where a kernel runs. SIM: this machine's CPU, real results."""

    NPU = 0
    SIM = 1
    EAGER = 2  # this project's: the kernel's Python runs op by op (eager.py)

    def __repr__(self):
        return "pypto.RunMode." + self.name


KNOWN_KEYS = {
    "runtime_options": {
        "run_mode", "device_sched_mode", "stitch_function_inner_memory",
        "stitch_function_outcast_memory", "stitch_function_num_initial",
        "stitch_function_max_num", "stitch_function_num_step", "stitch_function_size",
        "stitch_cfgcache_size", "cfgcache_device_task_num", "launch_sched_aicpu_num",
        "max_workspace_kb", "valid_shape_optimize", "ready_on_host_tensors",
        "device_sched_parallelism", "runtime_debug_mode", "enable_profiling", "trace_level",
    },
    "host_options": {"compile_timeout", "only_codegen", "compile_stage", "compile_monitor_enable",
                     "compile_timeout_stage", "compile_monitor_print_interval"},
    "codegen_options": {"opt_level", "target", "support_dynamic_aligned", "soc_version",
                        "enable_pmu_trace", "vf_options"},
    "pass_options": {
        "pg_upper_bound", "pg_lower_bound", "pg_skip_partition", "vec_nbuffer_setting",
        "cube_l1_reuse_setting", "cube_nbuffer_setting", "mg_copyin_upper_bound",
        "sg_set_scope", "enable_slice", "sg_set_tunevf_mode",
    },
    "verify_options": {"enable_pass_verify", "pass_verify_save_tensor",
                       "pass_verify_save_tensor_dir", "pass_verify_error_tol"},
    "debug_options": {"compile_debug_mode", "runtime_debug_mode", "dump_pass_graph"},
}

# Keyword arguments of @pypto.jit besides the option groups, with no effect
# here (module docstring).
NO_EFFECT_KEYWORDS = ("new_ir", "create_new_logical_tensor")

# (group, key) -> which values act here (a predicate); every other given key
# has no effect (ignored_keys).
_HONOURED = {
    ("runtime_options", "run_mode"): lambda v: True,
    ("codegen_options", "opt_level"): lambda v: True,
    ("codegen_options", "target"): lambda v: True,
    ("host_options", "compile_timeout"): lambda v: True,
    ("debug_options", "runtime_debug_mode"): lambda v: v == 1,
    ("verify_options", "enable_pass_verify"): lambda v: bool(v),
    ("verify_options", "pass_verify_error_tol"): lambda v: True,
    ("verify_options", "pass_verify_save_tensor_dir"): lambda v: True,
}


def ignored_keys(groups):
    """{group: sorted keys} of option `groups` that have no effect here."""
    out = {}
    for group, value in groups.items():
        keys = sorted(str(k) for k, v in value.items()
                      if not _HONOURED.get((group, k), lambda v: False)(v))
        if keys:
            out[group] = keys
    return out


def swimlane_on(debug_options):
    """Whether debug_options ask for the run's swimlane (runtime_debug_mode 1)."""
    return debug_options.get("runtime_debug_mode") == 1


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
                                 or run_mode not in (RunMode.NPU, RunMode.SIM, RunMode.EAGER)):
        raise ValueError(
            f"{where}: runtime_options['run_mode'] must be pypto.RunMode.NPU, "
            f"pypto.RunMode.SIM or pypto.RunMode.EAGER, got {run_mode!r}")
    compile_options = {}
    target = groups.get("codegen_options", {}).get("target")
    if target is not None:
        if not isinstance(target, str) or not target:
            raise ValueError(
                f"{where}: codegen_options['target'] must be a target name such as 'host' or "
                f"'ascend-a2a3', got {target!r}")
        compile_options["target"] = target
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


NPU_CPUSIM_ENV = "PYPTO_NPU_CPUSIM"
TARGET_ENV = "PYPTO_TARGET"
_npu_warned = [False]


def npu_target(name):
    """The target a RunMode.NPU call of kernel `name` compiles for:
    "ascend-a2a3-cpusim" when PYPTO_NPU_CPUSIM=1 (warned once per process),
    else None: the caller raises the UnsupportedTargetError."""
    flag = os.environ.get(NPU_CPUSIM_ENV, "")
    if flag not in ("", "0", "1"):
        raise ValueError(f"{NPU_CPUSIM_ENV} must be 0 or 1, got {flag!r}")
    if flag != "1":
        return None
    if not _npu_warned[0]:
        _npu_warned[0] = True
        warnings.warn(f"pypto: {name}: RunMode.NPU without an NPU: running the Ascend kernels "
                      f"on the PTO-ISA CPU simulation ({NPU_CPUSIM_ENV}=1)",
                      RuntimeWarning, stacklevel=4)
    return "ascend-a2a3-cpusim"


# target_env(): PYPTO_TARGET's value now, None when unset (bytes or str:
# target_of takes either). A jit call reads it once and keys its kernel by
# it, so it is one lookup in os.environ's own mapping where CPython has one
# (os.environ._data: encoded names to encoded values, which os.environ's
# setters write); os.environ.get of an unset variable raises and catches a
# KeyError inside.
_environ = getattr(os.environ, "_data", None)
if isinstance(_environ, dict):
    target_env = functools.partial(_environ.get, os.environ.encodekey(TARGET_ENV))
else:
    target_env = functools.partial(os.environ.get, TARGET_ENV)

_READ_NOW = object()


def target_of(compile_options, env=_READ_NOW):
    """The target `compile_options` (honoured()'s) name, else PYPTO_TARGET
    (`env`: its value as target_env() read it for this call; by default
    read now), else "host"."""
    target = compile_options.get("target")
    if target:
        return target
    if env is _READ_NOW:
        env = target_env()
    return os.fsdecode(env) if env else "host"


def _run_mode_of(where, runtime_options):
    """The RunMode in `runtime_options` (the caller's dict), or None; a bad
    value is the ValueError honoured() raises."""
    run_mode = runtime_options.get("run_mode")
    if run_mode is None:
        return None
    honoured(where, {"runtime_options": {"run_mode": run_mode}})
    return RunMode(run_mode)


class JitOptions:
    """The validated options of one jit function. Options set globally
    (pypto.set_*_options, pypto.options scopes: config.py) apply under the
    function's own, key by key, at each call.

    runtime_options is the caller's dict itself, read at each call (PyPTO
    holds it by reference): its run_mode may change between calls. The other
    groups are copies taken at decoration. Keywords in NO_EFFECT_KEYWORDS are
    recorded in `no_effect`."""

    def __init__(self, **kwargs):
        self.no_effect = {k: kwargs.pop(k) for k in NO_EFFECT_KEYWORDS if k in kwargs}
        runtime = kwargs.get("runtime_options")
        self.groups = check_groups("pypto.jit", kwargs)
        if isinstance(runtime, dict):
            self.runtime = runtime
            run_mode = _run_mode_of("pypto.jit", runtime)
            if run_mode is not None:  # PyPTO's _set_run_mode: the int, in the caller's dict
                runtime["run_mode"] = int(run_mode)
        else:
            self.runtime = self.groups.setdefault("runtime_options", {})
        self.groups["runtime_options"] = self.runtime
        _, self.compile_options, self.compile_timeout = honoured("pypto.jit", self.groups)
        # Whether this function's debug_options ask for the swimlane; None
        # when they leave runtime_debug_mode to the global options.
        debug = self.groups.get("debug_options", {})
        self.swimlane = swimlane_on(debug) if "runtime_debug_mode" in debug else None

    @property
    def run_mode(self):
        """This function's run_mode as its runtime_options say now (SIM when unset)."""
        run_mode = _run_mode_of("pypto.jit", self.runtime)
        return RunMode.SIM if run_mode is None else run_mode

    def effective(self, global_honoured):
        """(run_mode, compile options, compile timeout) in force now: this
        function's options over `global_honoured`, the global ones
        (config.honoured_now())."""
        g_mode, g_opts, g_timeout = global_honoured
        own_mode = _run_mode_of("pypto.jit", self.runtime)
        run_mode = own_mode if own_mode is not None else (
            g_mode if g_mode is not None else RunMode.SIM)
        compile_options = dict(g_opts)
        compile_options.update(self.compile_options)
        timeout = self.compile_timeout if self.compile_timeout is not None else g_timeout
        return run_mode, compile_options, timeout

    def swimlane_now(self, global_debug_options):
        """Whether this call writes the run's swimlane: this function's
        debug_options, else `global_debug_options` (config.py's), say
        runtime_debug_mode 1."""
        if self.swimlane is not None:
            return self.swimlane
        return swimlane_on(global_debug_options)

    def ignored(self):
        """{group or keyword: keys or value} this function was given that
        have no effect here (module docstring)."""
        out = ignored_keys(self.groups)
        out.update(self.no_effect)
        return out
