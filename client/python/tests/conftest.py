"""Shared fixtures: a private kernel cache per test, the native extension."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


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
