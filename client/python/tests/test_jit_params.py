"""pypto.frontend.jit parameters: any parameter not annotated pypto.Tensor is a
compile-time value, part of the kernel cache key (PyPTO's _make_hashable)."""

import dataclasses
import enum
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import pypto
from conftest import python_env

ANY = pypto.Tensor[...]


@dataclasses.dataclass
class Shift:
    by: float


class Mode(enum.Enum):
    PLAIN = 0
    DOUBLED = 1


def make():
    """A kernel with compile-time parameters of many types; each one changes
    the traced graph."""

    @pypto.frontend.jit
    def k(a: pypto.Tensor([], pypto.DT_FP32), out: ANY, tiles: tuple, cfg: dict,
          shift: Shift, dtype: pypto.DataType, mode=Mode.PLAIN, sizes: list = (1,), extra=0.5):
        pypto.set_vec_tile_shapes(*tiles)
        y = a * cfg["mul"] + shift.by + extra * len(sizes)
        if mode is Mode.DOUBLED:
            y = y * 2
        out[:] = pypto.cast(y, dtype)

    return k


def reference(a, tiles, cfg, shift, dtype, mode=Mode.PLAIN, sizes=(1,), extra=0.5):
    y = a * cfg["mul"] + shift.by + extra * len(sizes)
    if mode is Mode.DOUBLED:
        y = y * 2
    return y


def data():
    return torch.linspace(-2, 2, 8 * 16).reshape(8, 16)


def test_row_pypto_frontend_jit_non_tensor_parameters_of_any_type(native):
    k = make()
    a = data()
    out = torch.zeros(8, 16)
    k(a, out, (4, 8), {"mul": 3.0}, Shift(1.5), pypto.DT_FP32)
    np.testing.assert_allclose(out.numpy(), reference(a.numpy(), (4, 8), {"mul": 3.0},
                                                       Shift(1.5), pypto.DT_FP32), rtol=1e-6)
    # By keyword, with every default overridden; a list for `sizes`.
    k(a, out, tiles=[8, 8], cfg={"mul": -1.0}, shift=Shift(0.0), dtype=pypto.DT_FP32,
      mode=Mode.DOUBLED, sizes=[1, 2, 3], extra=1.0)
    want = reference(a.numpy(), None, {"mul": -1.0}, Shift(0.0), None, Mode.DOUBLED, [1, 2, 3], 1.0)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
    # A pypto.DT_* value: the output dtype.
    out16 = torch.zeros(8, 16, dtype=torch.float16)
    k(a, out16, (4, 8), {"mul": 3.0}, Shift(1.5), pypto.DT_FP16)
    np.testing.assert_allclose(out16.numpy(), reference(a.numpy(), None, {"mul": 3.0},
                                                         Shift(1.5), None).astype(np.float16),
                               rtol=1e-3)


def test_row_pypto_frontend_jit_tensor_parameters_come_first():
    with pytest.raises(TypeError, match="tensor parameter 'out' follows the compile-time "
                                        "parameter 'tiles'"):
        @pypto.frontend.jit
        def k(a: ANY, tiles: tuple, out: ANY):
            pass


def test_row_pypto_frontend_jit_tensor_parameter_takes_only_tensors(native):
    k = make()
    with pytest.raises(TypeError, match=r"argument 'out': expected a numpy array or a torch "
                                        r"tensor, got list \[0.0, 0.0\]"):
        k(data(), [0.0, 0.0], (4, 8), {"mul": 1.0}, Shift(0), pypto.DT_FP32)
    with pytest.raises(TypeError, match=r"argument 'a': got the number 3 for a tensor parameter"):
        k(3, torch.zeros(2), (4, 8), {"mul": 1.0}, Shift(0), pypto.DT_FP32)


def test_unannotated_parameter_is_a_value_unless_given_a_tensor(native):
    @pypto.jit
    def k(a, out, how):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = a + how["add"]

    a, out = data(), torch.zeros(8, 16)
    k(a, out, {"add": 2.0})
    np.testing.assert_allclose(out.numpy(), a.numpy() + 2.0)


def test_make_hashable_is_pyptos():
    from pypto.jit_function import _make_hashable
    assert _make_hashable({"a": [1, (2, 3)], "b": {"c": 4}}) == frozenset(
        {("a", ("1", ("2", "3"))), ("b", frozenset({("c", "4")}))})
    assert _make_hashable([1, 2]) == _make_hashable((1, 2)) == ("1", "2")
    assert _make_hashable(Shift(1.0)) == "Shift(by=1.0)"


def call(k, tiles=(4, 8), cfg=None, shift=None):
    a, out = data(), torch.zeros(8, 16)
    cfg = {"mul": 3.0} if cfg is None else cfg
    shift = Shift(1.5) if shift is None else shift
    k(a, out, tiles, cfg, shift, pypto.DT_FP32)
    np.testing.assert_allclose(out.numpy(), reference(a.numpy(), tiles, cfg, shift, None),
                               rtol=1e-6)
    return k.last_compile


def test_equal_values_compile_once_different_values_twice(native):
    k = make()
    first = call(k)
    assert first.source == "embedded"
    # Equal values, new objects (a tuple built anew; a dict in another order;
    # an equal dataclass): the in-memory cache.
    assert call(k, tiles=tuple([4, 8])).source == "memory"
    assert call(k, cfg=dict([("mul", 3.0)])).source == "memory"
    assert call(k, shift=Shift(1.5)).source == "memory"
    assert pypto.compile_stats()["compiles"] == 1
    # A list equal to the tuple is keyed apart (the key holds the value's
    # type too, so 1, 1.0, True and "1" stay apart): another kernel.
    info = call(k, tiles=[4, 8])
    assert info.source == "embedded" and info.key != first.key
    keys = {first.key, info.key}
    for kwargs in ({"tiles": (8, 8)}, {"cfg": {"mul": 2.0}}, {"shift": Shift(0.25)}):
        info = call(k, **kwargs)
        assert info.source == "embedded", kwargs
        keys.add(info.key)
        assert call(k, **kwargs).source == "memory"
    assert len(keys) == 5
    assert pypto.compile_stats()["compiles"] == 5


def test_values_key_the_kernel_even_where_the_graph_is_the_same(native):
    """PyPTO keys a kernel by its compile-time values: two values that trace
    to the same graph are two kernels, in memory and on disk (the values'
    digest is the compile option frontend_key); the same value again, in a
    new JitFunction, hits the disk cache."""
    def make():
        @pypto.jit
        def k(a: ANY, out: ANY, label: dict):
            pypto.set_vec_tile_shapes(8, 16)
            out[:] = a + 1
        return k

    a, out = data(), torch.zeros(8, 16)
    k = make()
    k(a, out, {"name": "x", "tags": [1, 2]})
    k(a, out, {"name": "y", "tags": [1, 2]})  # a new value: traced again, the same graph
    stats = pypto.compile_stats()
    assert stats["traces"] == 2 and stats["compiles"] == 2 and stats["disk_hits"] == 0
    make()(a, out, {"tags": [1, 2], "name": "y"})  # equal as PyPTO hashes it
    assert pypto.compile_stats()["disk_hits"] == 1


CHILD_SRC = textwrap.dedent("""
    import dataclasses, json, sys
    import torch
    import pypto

    @dataclasses.dataclass
    class Shift:
        by: float

    @pypto.jit
    def k(a: pypto.Tensor[...], out: pypto.Tensor[...], tiles: tuple, cfg: dict, shift: Shift):
        pypto.set_vec_tile_shapes(*tiles)
        out[:] = a * cfg["mul"] + shift.by

    a = torch.linspace(-2, 2, 8 * 16).reshape(8, 16)
    result = []
    for tiles, mul, by in json.loads(sys.argv[1]):
        out = torch.zeros(8, 16)
        k(a, out, tuple(tiles), {"mul": mul}, Shift(by))
        assert torch.allclose(out, a * mul + by)
        result.append([k.last_compile.source, k.last_compile.key])
    print(json.dumps(result))
""")


def run_child(cache_dir, calls):
    import json
    env = python_env()
    env["PYPTO_CACHE_DIR"] = str(cache_dir)
    env.pop("PYPTO_COMPILE_SERVER", None)
    r = subprocess.run([sys.executable, "-c", CHILD_SRC, json.dumps(calls)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_values_key_the_disk_cache_across_processes(native, private_cache):
    first = run_child(private_cache, [[[4, 8], 2.0, 1.0], [[8, 8], 2.0, 1.0],
                                      [[4, 8], 3.0, 1.0], [[4, 8], 2.0, 0.5],
                                      [[4, 8], 2.0, 1.0]])
    assert [s for s, _ in first] == ["embedded"] * 4 + ["memory"]
    assert len({key for _, key in first}) == 4
    second = run_child(private_cache, [[[8, 8], 2.0, 1.0], [[4, 8], 2.0, 0.5],
                                       [[4, 16], 2.0, 1.0]])
    assert second[0] == ["disk", first[1][1]]
    assert second[1] == ["disk", first[3][1]]
    assert second[2][0] == "embedded" and second[2][1] not in {key for _, key in first}


def test_values_key_ptod(ptod):
    k = make()
    a = call(k)
    b = call(k, tiles=(8, 8))
    c = call(k, cfg={"mul": -3.0})
    assert [a.source, b.source, c.source] == ["ptod MISS"] * 3
    assert len({a.key, b.key, c.key}) == 3
    assert call(k, tiles=tuple([8, 8])).source == "memory"
    k2 = make()  # an empty in-memory cache: ptod answers by key
    again = call(k2, tiles=(8, 8))
    assert again.source == "ptod HIT" and again.key == b.key
    stats = pypto.compile_stats()
    assert stats["remote_misses"] == 3 and stats["remote_hits"] == 1 and stats["compiles"] == 0


def test_scalar_parameters_keep_the_fast_path(native):
    @pypto.jit
    def k(a: ANY, out: ANY, s: float, n: int, flag: bool):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = a * s + n if flag else a

    a, out = np.ones((8, 16), np.float32), np.zeros((8, 16), np.float32)
    k(a, out, 2.0, 1, True)
    before = native.launcher_runs()
    for _ in range(3):
        k(a, out, 2.0, 1, True)
    assert native.launcher_runs() - before >= 2  # hits after the first run natively
    np.testing.assert_array_equal(out, 3.0)
    k(a, out, 2.0, 2, True)
    np.testing.assert_array_equal(out, 4.0)


def test_a_numpy_array_as_a_compile_time_value(native):
    @pypto.jit
    def k(a: ANY, out: ANY, table: np.ndarray):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = a * float(table[0]) + float(table[1])

    a, out = np.ones((8, 16), np.float32), np.zeros((8, 16), np.float32)
    for _ in range(3):  # repeat calls: the value, never read as a tensor argument
        k(a, out, np.array([2.0, 1.0]))
        np.testing.assert_array_equal(out, 3.0)
    k(a, out, np.array([3.0, 1.0]))
    np.testing.assert_array_equal(out, 4.0)
