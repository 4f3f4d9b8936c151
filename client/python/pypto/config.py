"""Global compile options: pypto.set_*_options, get_*_options, pypto.options.

PyPTO configures its toolchain through option groups (see jit_options.py for
the keys). Here they are process-wide, layered under each jit function's own
options key by key:

    pypto.set_host_options(compile_timeout=600)      # from now on
    with pypto.options(codegen_options={"opt_level": 3}):
        kernel(a, out)                               # opt_level 3 here only
    @pypto.options(pass_options={"enable_slice": False})
    def test_something(): ...                        # for each call of the function

A setter merges its keys into the current scope; `pypto.options(...)` opens a
scope (a `with` block or each call of a decorated function) and restores the
options in force before it on exit, exceptions included. Unknown keys are
errors naming them; the values this version honours (run_mode, opt_level,
compile_timeout) are checked when set. The honoured values are part of each
jit function's in-memory cache key, so changing opt_level recompiles and
changing anything else does not.

pypto.options and pypto.set_options also take tile shapes
(vec_tile_shapes, cube_tile_shapes, conv_tile_shapes) and matrix_size. The
global config, matrix size, semantic label, conv tile shapes and the
pass-config API (set_pass_config and friends) are recorded for their getters
and change no result here (this compiler has no NZ layout, profiler or
per-pass switches, and pypto.conv picks its own tiles).
"""

import enum
import functools
import re
import threading

from . import debug_switch, tiling
from .error import FeError, PassError
from .jit_options import KNOWN_KEYS, check_group, check_groups, honoured
from .tiling import _positive_int

_lock = threading.Lock()
_groups = {g: {} for g in KNOWN_KEYS}
# honoured(_groups), kept current by _set_all: replaced only when its value
# changes, so a jit function's repeat-call fast path can compare it by
# identity (jit_function.py).
_honoured = (None, {}, None)


def _set_all(groups):
    global _groups, _honoured
    h = honoured("pypto options", groups)
    with _lock:
        _groups = groups
        debug_switch.global_options(groups)
        if h != _honoured:
            _honoured = h


def _snapshot():
    with _lock:
        return {g: dict(v) for g, v in _groups.items()}


def honoured_now():
    """(run_mode or None, compile options, compile timeout or None) of the
    global options in force."""
    mode, opts, timeout = _honoured
    return mode, dict(opts), timeout


def cache_token(honoured_values=None):
    """What of the global options changes a compiled kernel (hashable); of
    `honoured_values` (a _honoured read earlier) when given."""
    return tuple(sorted((honoured_values or _honoured)[1].items()))


def _setter(group):
    where = f"pypto.set_{group}"

    def set_options(**kwargs):
        value = check_group(where, group, kwargs)
        groups = _snapshot()
        groups[group].update(value)
        _set_all(groups)

    def get_options():
        with _lock:
            return dict(_groups[group])

    set_options.__name__ = f"set_{group}"
    set_options.__doc__ = (f"Sets {group} keys in the current scope (unknown keys: ValueError "
                           f"naming them). Known: {', '.join(sorted(KNOWN_KEYS[group]))}.")
    get_options.__name__ = f"get_{group}"
    get_options.__doc__ = f"The {group} in force (a copy)."
    return set_options, get_options


set_runtime_options, get_runtime_options = _setter("runtime_options")
set_host_options, get_host_options = _setter("host_options")
set_codegen_options, get_codegen_options = _setter("codegen_options")
set_pass_options, get_pass_options = _setter("pass_options")
set_verify_options, get_verify_options = _setter("verify_options")
set_debug_options, get_debug_options = _setter("debug_options")


def reset_options():
    """Forgets every global option (jit functions' own options stay) and the
    recorded matrix size, conv tile shapes and semantic label."""
    _set_all({g: {} for g in KNOWN_KEYS})
    for k in _recorded:
        _recorded[k] = None


class options:  # noqa: N801 - PyPTO's name
    """pypto.options(name="", runtime_options=..., host_options=..., ...,
    vec_tile_shapes=, cube_tile_shapes=, conv_tile_shapes=, matrix_size=): a
    scope of global options and tile shapes, as a context manager or a
    decorator. Groups, keys and shapes are validated when the scope is
    created; on exit the options, tile shapes and matrix size in force
    before it are restored, exceptions included. cube_tile_shapes is
    [m, k, n] or [m, k, n, enable_split_k] (set_cube_tile_shapes' arguments),
    conv_tile_shapes (tile_l1_info, tile_l0_info) or just tile_l1_info.
    `name` names the scope (PyPTO's scope name; recorded only)."""

    def __init__(self, name="", codegen_options=None, host_options=None, pass_options=None,
                 runtime_options=None, verify_options=None, *, debug_options=None,
                 vec_tile_shapes=None, cube_tile_shapes=None, conv_tile_shapes=None,
                 matrix_size=None, **unknown):
        if not isinstance(name, str):
            raise FeError(TypeError(f"pypto.options: name must be a str, got {name!r}"))
        self.name = name
        given = {"codegen_options": codegen_options, "host_options": host_options,
                 "pass_options": pass_options, "runtime_options": runtime_options,
                 "verify_options": verify_options, "debug_options": debug_options}
        given.update(unknown)  # named in check_groups' error
        self._groups = check_groups(
            "pypto.options", {g: v for g, v in given.items() if v is not None})
        self._shapes = _resolve_shapes("pypto.options", vec_tile_shapes, cube_tile_shapes,
                                       conv_tile_shapes, matrix_size)
        self._saved = []

    def __enter__(self):
        saved = _snapshot()
        self._saved.append((saved, _save_shapes()))
        groups = {g: dict(v) for g, v in saved.items()}
        for g, v in self._groups.items():
            groups[g].update(v)
        _set_all(groups)
        _apply_shapes(self._shapes)
        return self

    def __exit__(self, *exc):
        groups, shapes = self._saved.pop()
        _set_all(groups)
        _restore_shapes(shapes)
        return False

    def __call__(self, fn):
        if not callable(fn):
            raise TypeError(f"pypto.options(...) decorates a function, got {type(fn).__name__}")
        with_options = getattr(fn, "with_options", None)  # a jit function scopes itself
        if with_options is not None:
            return with_options(self)
        if not self.name:
            self.name = getattr(fn, "__name__", "")
        scope = self

        @functools.wraps(fn)
        def scoped(*args, **kwargs):
            with scope:
                return fn(*args, **kwargs)

        return scoped


# Tile shapes and matrix size as scopes and set_options take them ------------


def _save_shapes():
    return tiling._save(), _recorded["matrix_size"], _recorded["conv_tile_shapes"]


def _restore_shapes(saved):
    tiles, matrix, conv = saved
    tiling._restore(tiles)
    _recorded["matrix_size"] = matrix
    _recorded["conv_tile_shapes"] = conv


def _resolve_shapes(where, vec_tile_shapes, cube_tile_shapes, conv_tile_shapes, matrix_size):
    """The tile state, matrix size and conv tiles that the given shapes set
    (None: nothing given), each validated by its setter; nothing changes."""
    if vec_tile_shapes is cube_tile_shapes is conv_tile_shapes is matrix_size is None:
        return None
    saved = _save_shapes()
    try:
        if vec_tile_shapes is not None:
            if not isinstance(vec_tile_shapes, (list, tuple)):
                raise FeError(TypeError(f"{where}: vec_tile_shapes must be a list of ints, "
                                        f"got {vec_tile_shapes!r}"))
            tiling.set_vec_tile_shapes(*vec_tile_shapes)
        if cube_tile_shapes is not None:
            if not isinstance(cube_tile_shapes, (list, tuple)) or \
                    len(cube_tile_shapes) not in (3, 4):
                raise FeError(ValueError(
                    f"{where}: cube_tile_shapes must be [m, k, n] or [m, k, n, "
                    f"enable_split_k], got {cube_tile_shapes!r}"))
            tiling.set_cube_tile_shapes(*cube_tile_shapes)
        if conv_tile_shapes is not None:
            conv = conv_tile_shapes if isinstance(conv_tile_shapes, (list, tuple)) \
                else (conv_tile_shapes,)
            set_conv_tile_shapes(*conv)
        if matrix_size is not None:
            set_matrix_size(matrix_size)
        return _save_shapes()
    finally:
        _restore_shapes(saved)


def _apply_shapes(resolved):
    """Puts shapes from _resolve_shapes in force (given ones only)."""
    if resolved is None:
        return
    tiles, matrix, conv = resolved
    vec, cube = tiling._save()
    tiling._restore((tiles[0] if tiles[0] is not None else vec,
                     tiles[1] if tiles[1] is not None else cube))
    if matrix is not None:
        _recorded["matrix_size"] = matrix
    if conv is not None:
        _recorded["conv_tile_shapes"] = conv


def set_options(codegen_options=None, host_options=None, pass_options=None,
                runtime_options=None, verify_options=None, debug_options=None, *,
                vec_tile_shapes=None, cube_tile_shapes=None, conv_tile_shapes=None,
                matrix_size=None, **unknown):
    """pypto.set_options(...): sets option groups (merged key by key, as the
    set_*_options functions do), tile shapes and the matrix size in the
    current scope, all validated before any is set."""
    given = {"codegen_options": codegen_options, "host_options": host_options,
             "pass_options": pass_options, "runtime_options": runtime_options,
             "verify_options": verify_options, "debug_options": debug_options}
    given.update(unknown)  # named in check_groups' error
    checked = check_groups("pypto.set_options", {g: v for g, v in given.items() if v is not None})
    shapes = _resolve_shapes("pypto.set_options", vec_tile_shapes, cube_tile_shapes,
                             conv_tile_shapes, matrix_size)
    groups = _snapshot()
    for g, v in checked.items():
        groups[g].update(v)
    _set_all(groups)
    _apply_shapes(shapes)


# Settings this version records without acting on them ------------------------
#
# Each is kept so that the matching get_* returns it; none changes a result.

_recorded = {"matrix_size": None, "conv_tile_shapes": None, "semantic_label": None}
_global_config = {}


def set_global_config(key, value):
    """pypto.set_global_config(key, value): a global setting such as
    "simulation.accuracy_level" (PyPTO's cost-model and platform settings).
    Recorded: none of them changes what a kernel computes here."""
    if not isinstance(key, str) or not key:
        raise FeError(TypeError(f"pypto.set_global_config: key must be a non-empty str, "
                                f"got {key!r}"))
    with _lock:
        _global_config[key] = value


def get_global_config(key):
    """The value pypto.set_global_config gave `key`; an unknown key is an
    FeError naming it."""
    with _lock:
        if key not in _global_config:
            raise FeError(KeyError(f"pypto.get_global_config: option not found: {key!r} "
                                   f"(set: {', '.join(sorted(_global_config)) or 'none'})"))
        return _global_config[key]


def _positive_ints(values, what, names=None):
    names = names or [f"[{i}]" for i in range(len(values))]
    return [_positive_int(v, f"{what}{n}") for n, v in zip(names, values)]


def set_matrix_size(size):
    """pypto.set_matrix_size([m, k, n]): the original m, k, n of an NZ-format
    operand reshaped before a matmul. Operands here are ND, so the hint is
    recorded (get_matrix_size) and changes nothing."""
    if not isinstance(size, (list, tuple)) or len(size) != 3:
        raise FeError(ValueError(f"pypto.set_matrix_size: expected [m, k, n], got {size!r}"))
    _recorded["matrix_size"] = _positive_ints(size, "pypto.set_matrix_size: size")


def get_matrix_size():
    """The [m, k, n] of the last pypto.set_matrix_size in force, or None."""
    m = _recorded["matrix_size"]
    return None if m is None else list(m)


def set_semantic_label(label):
    """pypto.set_semantic_label(label): tags the ops that follow for PyPTO's
    profiling toolkit. Recorded (get_semantic_label); no profiler reads it
    here. A label shaped like a function hash order ("func12_3") is an
    FeError, as in PyPTO."""
    if not isinstance(label, str):
        raise FeError(TypeError(f"pypto.set_semantic_label: label must be a str, got "
                                f"{label!r}"))
    if re.match(r"^func\d+_\d+$", label):
        raise FeError(ValueError(
            f"pypto.set_semantic_label: label {label!r} conflicts with the function hash "
            f"order format 'func<magic>_<order>'; use another label"))
    _recorded["semantic_label"] = label


def get_semantic_label():
    """The label of the last pypto.set_semantic_label, or None."""
    return _recorded["semantic_label"]


class TileL1Info:
    """Conv tile sizes at L1 (PyPTO's pypto_impl.TileL1Info)."""

    _FIELDS = ("tileHin", "tileHout", "tileWin", "tileWout", "tileCinFmap", "tileCinWeight",
               "tileN", "tileBatch")

    def __init__(self, tileHin=1, tileHout=1, tileWin=1, tileWout=1, tileCinFmap=1,  # noqa: N803
                 tileCinWeight=1, tileN=1, tileBatch=1):  # noqa: N803
        values = (tileHin, tileHout, tileWin, tileWout, tileCinFmap, tileCinWeight, tileN,
                  tileBatch)
        where = f"pypto.{type(self).__name__}: "
        for f, v in zip(self._FIELDS, _positive_ints(values, where, self._FIELDS)):
            setattr(self, f, v)

    def _values(self):
        return tuple(getattr(self, f) for f in self._FIELDS)

    def __eq__(self, other):
        return type(other) is type(self) and other._values() == self._values()

    def __hash__(self):
        return hash(self._values())

    def __repr__(self):
        return f"{type(self).__name__}(" + ", ".join(
            f"{f}={getattr(self, f)}" for f in self._FIELDS) + ")"


class TileL0Info(TileL1Info):
    """Conv tile sizes at L0 (PyPTO's pypto_impl.TileL0Info)."""

    _FIELDS = ("tileH", "tileW", "tileK", "tileN")

    def __init__(self, tileH=1, tileW=1, tileK=1, tileN=1):  # noqa: N803
        where = f"pypto.{type(self).__name__}: "
        for f, v in zip(self._FIELDS, _positive_ints((tileH, tileW, tileK, tileN), where,
                                                     self._FIELDS)):
            setattr(self, f, v)


def set_conv_tile_shapes(tile_l1_info, tile_l0_info=None):
    """pypto.set_conv_tile_shapes(tile_l1_info, tile_l0_info=None): conv
    tiling (a TileL0Info turns L0 tiling on). pypto.conv here picks its
    own tiles (its matmul's cube tile), so the shapes are recorded for
    get_conv_tile_shapes only."""
    if not isinstance(tile_l1_info, TileL1Info) or isinstance(tile_l1_info, TileL0Info):
        raise FeError(TypeError(f"pypto.set_conv_tile_shapes: tile_l1_info must be a "
                                f"pypto.TileL1Info, got {tile_l1_info!r}"))
    if tile_l0_info is not None and not isinstance(tile_l0_info, TileL0Info):
        raise FeError(TypeError(f"pypto.set_conv_tile_shapes: tile_l0_info must be a "
                                f"pypto.TileL0Info or None, got {tile_l0_info!r}"))
    enabled = tile_l0_info is not None
    _recorded["conv_tile_shapes"] = (tile_l1_info, tile_l0_info or TileL0Info(), enabled)


def get_conv_tile_shapes():
    """(TileL1Info, TileL0Info, l0_enabled) as last set, or None before any
    pypto.set_conv_tile_shapes."""
    return _recorded["conv_tile_shapes"]


# The pass-config API: per-pass switches by strategy and pass name --------


class PassConfigKey(enum.Enum):
    """A per-pass switch of pypto.set_pass_config (PyPTO's keys)."""
    KEY_PRINT_GRAPH = "printGraph"
    KEY_DUMP_GRAPH = "dumpGraph"
    KEY_DUMP_PASS_TIME_COST = "dumpPassTimeCost"
    KEY_PRE_CHECK = "preCheck"
    KEY_POST_CHECK = "postCheck"
    KEY_DISABLE_PASS = "disablePass"
    KEY_HEALTH_CHECK = "healthCheck"

    def __repr__(self):
        return f"pypto.PassConfigKey.{self.name}"


class PassConfigs:
    """One pass's switches (pypto.get_pass_configs): printGraph, dumpGraph,
    dumpPassTimeCost, preCheck, postCheck, disablePass, healthCheck (bools;
    read-only)."""

    def __init__(self, values):
        for key in PassConfigKey:
            object.__setattr__(self, key.value, bool(values[key]))

    def __setattr__(self, name, value):
        raise AttributeError(f"PassConfigs.{name} is read-only (use pypto.set_pass_config)")

    def __repr__(self):
        return "PassConfigs(" + ", ".join(
            f"{k.value}={getattr(self, k.value)}" for k in PassConfigKey) + ")"


_pass_defaults = {}
_pass_configs = {}


def _check_pass_key(where, key, value, value_name):
    if not isinstance(key, PassConfigKey):
        raise PassError(ValueError(f"{where}: key must be a member of pypto.PassConfigKey, "
                                   f"got {key!r}"))
    if not isinstance(value, bool):
        raise PassError(TypeError(f"{where}: {value_name} must be a bool, got "
                                  f"{type(value).__name__} {value!r}"))


def _check_pass_path(where, strategy, identifier):
    for name, v in (("strategy", strategy), ("identifier", identifier)):
        if not isinstance(v, str) or not v:
            raise PassError(TypeError(f"{where}: {name} must be a non-empty str, got {v!r}"))


def set_pass_default_config(key, value):
    """pypto.set_pass_default_config(key, value): the switch `key` for every
    pass without its own setting. This compiler's passes read none of the
    switches: they are recorded for the getters."""
    _check_pass_key("pypto.set_pass_default_config", key, value, "value")
    with _lock:
        _pass_defaults[key] = value


def get_pass_default_config(key, default_value):
    """The default of switch `key`, or `default_value` if none was set."""
    _check_pass_key("pypto.get_pass_default_config", key, default_value, "default_value")
    with _lock:
        return _pass_defaults.get(key, default_value)


def set_pass_config(strategy, identifier, key, value):
    """pypto.set_pass_config(strategy, identifier, key, value): switch `key`
    of pass `identifier` in `strategy` (e.g. "PVC2_OOO", "ExpandFunction",
    PassConfigKey.KEY_DUMP_GRAPH, True). Recorded for the getters."""
    _check_pass_path("pypto.set_pass_config", strategy, identifier)
    _check_pass_key("pypto.set_pass_config", key, value, "value")
    with _lock:
        _pass_configs[(strategy, identifier, key)] = value


def get_pass_config(strategy, identifier, key, default_value):
    """Switch `key` of the pass: its own setting, else the default set by
    set_pass_default_config, else `default_value`."""
    _check_pass_path("pypto.get_pass_config", strategy, identifier)
    _check_pass_key("pypto.get_pass_config", key, default_value, "default_value")
    with _lock:
        own = _pass_configs.get((strategy, identifier, key))
        return own if own is not None else _pass_defaults.get(key, default_value)


def get_pass_configs(strategy, identifier):
    """All switches of the pass as a PassConfigs (unset ones: their
    default, else False)."""
    _check_pass_path("pypto.get_pass_configs", strategy, identifier)
    return PassConfigs({k: get_pass_config(strategy, identifier, k, False)
                        for k in PassConfigKey})
