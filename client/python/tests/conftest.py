"""Shared fixtures: a private kernel cache per test, the native extension,
a private ptod."""

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def pytest_collection_modifyitems(config, items):
    """Bazel test sharding (shard_count in BUILD): shard k of n keeps every
    n-th test starting at k, so the suite's wall time splits across processes
    without a plugin (no pytest-xdist on Debian's python here)."""
    total = int(os.environ.get("TEST_TOTAL_SHARDS", "1"))
    index = int(os.environ.get("TEST_SHARD_INDEX", "0"))
    status = os.environ.get("TEST_SHARD_STATUS_FILE")
    if status:  # tells Bazel this runner understands sharding
        open(status, "w").close()
    if total > 1:
        kept = [t for k, t in enumerate(items) if k % total == index]
        config.hook.pytest_deselected(items=[t for t in items if t not in kept])
        items[:] = kept


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Every test gets an empty disk cache and no compile server."""
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "kernels"))
    monkeypatch.delenv("PYPTO_COMPILE_SERVER", raising=False)
    import pypto
    saved = (pypto.tiling._save())
    pypto.reset_compile_stats()
    yield tmp_path / "kernels"
    pypto.tiling._restore(saved)


@pytest.fixture
def clean_options():
    """No global options (pypto.set_*_options) before and after the test."""
    import pypto
    pypto.reset_options()
    yield
    pypto.reset_options()


@pytest.fixture
def native():
    """The _native extension; tests that need it skip when it is not built,
    except under `bazel test` (PYPTO_REQUIRE_NATIVE=1), where they fail."""
    try:
        from pypto import _native
    except ImportError as e:
        if os.environ.get("PYPTO_REQUIRE_NATIVE") == "1":
            raise
        pytest.skip(f"pypto._native not built (bazel build //client/python:pypto/_native.so): {e}")
    return _native


def python_env():
    """Environment for a child Python that imports pypto like this one."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def ptod_binary():
    """The ptod binary Bazel built (PYPTO_PTOD under `bazel test`)."""
    path = os.environ.get("PYPTO_PTOD") or os.path.join(REPO, "bazel-bin", "server", "ptod")
    if not os.access(path, os.X_OK):
        if os.environ.get("PYPTO_REQUIRE_NATIVE") == "1":
            pytest.fail(f"ptod not found at {path}")
        pytest.skip(f"ptod not built at {path} (bazel build //server:ptod)")
    return path


@contextlib.contextmanager
def running_ptod(cache_dir, *flags):
    """A ptod subprocess on a free loopback port (plus `flags`); yields its
    address once it listens, and stops it on exit."""
    proc = subprocess.Popen(
        [ptod_binary(), "--address=127.0.0.1:0", f"--cache_dir={cache_dir}",
         "--metrics_address=127.0.0.1:0", "--workers=1", *flags],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = queue.Queue()

    def pump():  # ptod's output, read on a thread so the wait below can time out
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    address, seen = None, []
    try:
        while address is None:
            line = lines.get(timeout=60)
            if line is None:
                pytest.fail("ptod exited before listening:\n" + "".join(seen))
            seen.append(line)
            if "ptod listening on " in line:
                address = line.split("ptod listening on ", 1)[1].split()[0]
        yield address
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def ptod(tmp_path, native, monkeypatch):
    """A ptod with a private cache that this test's kernels compile through
    (PYPTO_COMPILE_SERVER); yields its address."""
    with running_ptod(tmp_path / "ptod-cache") as address:
        monkeypatch.setenv("PYPTO_COMPILE_SERVER", address)
        yield address
