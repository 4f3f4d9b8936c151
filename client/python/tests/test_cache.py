"""The on-disk kernel cache: shared across processes, robust to bad files."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pypto
from conftest import python_env

ANY = pypto.Tensor[...]

KERNEL_SRC = textwrap.dedent("""
    import numpy as np
    import pypto

    @pypto.jit
    def k(a: pypto.Tensor[...], out: pypto.Tensor[...]):
        pypto.set_vec_tile_shapes(16, 16)
        out[:] = (a + 1).exp()

    a = np.linspace(-1, 1, 40 * 50, dtype=np.float32).reshape(40, 50)
    out = np.zeros_like(a)
    k(a, out)
    np.testing.assert_allclose(out, np.exp(a + 1), rtol=1e-5)
    s = pypto.compile_stats()
    print(k.last_compile.source, k.last_compile.key, s["compiles"], s["disk_hits"])
""")


def run_child(cache_dir):
    env = python_env()
    env["PYPTO_CACHE_DIR"] = str(cache_dir)
    env.pop("PYPTO_COMPILE_SERVER", None)
    r = subprocess.run([sys.executable, "-c", KERNEL_SRC], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    source, key, compiles, disk_hits = r.stdout.split()
    return source, key, int(compiles), int(disk_hits)


def test_a_new_process_hits_the_disk_cache(native, private_cache):
    first = run_child(private_cache)
    assert first[0] == "embedded" and first[2] == 1 and first[3] == 0
    assert os.path.exists(private_cache / (first[1] + ".kbin"))
    second = run_child(private_cache)
    assert second == ("disk", first[1], 0, 1)


def make():
    @pypto.jit
    def k(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = a * 3

    return k


@pytest.mark.parametrize("damage", ["truncate", "flip_last_byte", "garbage", "other_key"])
def test_a_corrupt_cache_file_is_ignored_and_replaced(native, private_cache, damage):
    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    out = np.zeros_like(a)
    k = make()
    k(a, out)
    key = k.last_compile.key
    path = private_cache / (key + ".kbin")
    good = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(good[: len(good) // 2])
    elif damage == "flip_last_byte":
        path.write_bytes(good[:-1] + bytes([good[-1] ^ 0xFF]))
    elif damage == "garbage":
        path.write_bytes(b"\x00not a kernel" * 10)
    else:  # a valid binary stored under the wrong name
        k2 = make()
        k2(np.zeros((8, 9), np.float32), np.zeros((8, 9), np.float32))
        path.write_bytes((private_cache / (k2.last_compile.key + ".kbin")).read_bytes())
    pypto.reset_compile_stats()

    fresh = make()
    out[:] = 0
    fresh(a, out)
    np.testing.assert_array_equal(out, a * 3)
    stats = pypto.compile_stats()
    assert fresh.last_compile.source == "embedded"
    assert stats["disk_corrupt"] == 1 and stats["compiles"] == 1
    # The rewritten entry is good again.
    again = make()
    again(a, out)
    assert again.last_compile.source == "disk"


def test_no_temporary_files_left_behind(native, private_cache):
    k = make()
    k(np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32))
    assert [p.suffix for p in private_cache.iterdir()] == [".kbin"]


def test_disk_cache_can_be_turned_off(native, private_cache, monkeypatch):
    monkeypatch.setenv("PYPTO_DISK_CACHE", "0")
    k = make()
    k(np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32))
    assert not private_cache.exists() or not list(private_cache.iterdir())


def test_concurrent_writers_publish_one_whole_entry(native, private_cache):
    """Several processes compile the same kernel at once into an empty cache:
    each gets a correct kernel, the cache ends with exactly one entry that
    loads, no temporary files, and the next process compiles nothing."""
    env = python_env()
    env["PYPTO_CACHE_DIR"] = str(private_cache)
    env.pop("PYPTO_COMPILE_SERVER", None)
    children = [subprocess.Popen([sys.executable, "-c", KERNEL_SRC], env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                for _ in range(4)]
    results = []
    for c in children:
        out, err = c.communicate(timeout=300)
        assert c.returncode == 0, err
        results.append(out.split())
    keys = {r[1] for r in results}
    assert len(keys) == 1
    (key,) = keys
    # Each compiled or loaded a whole entry: sources are only these two.
    assert {r[0] for r in results} <= {"embedded", "disk"}
    assert sorted(p.name for p in private_cache.iterdir()) == [key + ".kbin"]
    native.Kernel((private_cache / (key + ".kbin")).read_bytes())  # loads: not torn
    assert run_child(private_cache) == ("disk", key, 0, 1)


def test_new_static_shape_compiles_same_shape_does_not(native):
    k = make()
    for shape in [(8, 8), (8, 8), (16, 8), (8, 8), (16, 8)]:
        k(np.ones(shape, np.float32), np.zeros(shape, np.float32))
    s = pypto.compile_stats()
    assert (s["traces"], s["compiles"], s["memory_hits"]) == (2, 2, 3)


def test_clear_cache_and_cli(native, private_cache):
    k = make()
    k(np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32))
    (private_cache / ".0123456789abcdef.x.tmp").write_bytes(b"left by a killed writer")
    (private_cache / "notes.txt").write_text("not ours")
    assert pypto.cache_dir() == str(private_cache)
    env = python_env()
    env["PYPTO_CACHE_DIR"] = str(private_cache)
    info = subprocess.run([sys.executable, "-m", "pypto", "cache-info"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert info.returncode == 0, info.stderr
    assert info.stdout.startswith(f"{private_cache}: 1 kernels, ")
    assert pypto.clear_cache() == 1
    assert sorted(p.name for p in private_cache.iterdir()) == ["notes.txt"]
    k2 = make()  # a fresh function misses memory and disk: compiles again
    k2(np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32))
    assert k2.last_compile.source == "embedded"
    cli = subprocess.run([sys.executable, "-m", "pypto", "clear-cache"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout.strip() == f"{private_cache}: removed 1 kernels"
    assert pypto.clear_cache() == 0
    where = subprocess.run([sys.executable, "-m", "pypto", "cache-dir"], env=env,
                           capture_output=True, text=True, timeout=120)
    assert where.stdout.strip() == str(private_cache)


def test_an_embedded_compile_takes_at_most_the_compile_timeout(native, monkeypatch):
    """host_options["compile_timeout"], else PYPTO_COMPILE_TIMEOUT, bounds an
    embedded compile (backend.compile_timeout), as it does a remote one."""
    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    monkeypatch.setenv("PYPTO_COMPILE_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="PYPTO_COMPILE_TIMEOUT must be a number of seconds, "
                                         "got 'soon'"):
        make()(a, np.zeros_like(a))
    monkeypatch.setenv("PYPTO_COMPILE_TIMEOUT", "0.001")
    with pytest.raises(pypto.CompileError, match="DEADLINE_EXCEEDED"):
        make()(a, np.zeros_like(a))
    out = np.zeros_like(a)
    with pypto.options(host_options={"compile_timeout": 600}):
        make()(a, out)
    np.testing.assert_array_equal(out, a * 3)
