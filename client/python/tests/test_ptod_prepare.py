"""ptod's client made, and connecting, when a jit function is defined
(backend.prepare), ahead of the first compile."""

import os
import socket
import threading

import numpy as np
import pytest

import pypto
from pypto import backend

ANY = pypto.Tensor[...]


def make():
    @pypto.jit
    def k(a: ANY, b: ANY, out: ANY):
        pypto.set_vec_tile_shapes(32, 64)
        out[:] = (a + b).exp() * 2 - a

    return k


def preparing():
    return [t for t in threading.enumerate() if t.name == "pypto-ptod-prepare"]


@pytest.fixture
def fresh(monkeypatch):
    """No client and no preparation from earlier tests."""
    monkeypatch.setattr(backend, "_clients", {})
    monkeypatch.setattr(backend, "_prepared", set())
    monkeypatch.setattr(backend, "_warned", set())


def defined(monkeypatch, server):
    """A kernel defined with PYPTO_COMPILE_SERVER=server, once its client is
    prepared."""
    monkeypatch.setenv("PYPTO_COMPILE_SERVER", server)
    k = make()
    for thread in preparing():
        thread.join(timeout=60)
    return k


def run(k):
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (16, 64)).astype(np.float32)
    b = rng.uniform(-1, 1, (16, 64)).astype(np.float32)
    out = np.zeros_like(a)
    k(a, b, out)
    np.testing.assert_allclose(out, np.exp(a + b) * 2 - a, rtol=1e-5, atol=1e-6)
    return k.last_compile.source


def test_nothing_starts_without_a_server(native, fresh, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_SERVER", raising=False)
    make()
    assert backend.prepare() is None
    assert not preparing() and not backend._clients


def test_defining_a_kernel_connects_before_any_compile(native, fresh, monkeypatch):
    """A listening socket that speaks no gRPC: the connection it accepts was
    made by the definition alone."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        listener.settimeout(30)
        server = f"127.0.0.1:{listener.getsockname()[1]}"
        defined(monkeypatch, server)
        assert len(backend._clients) == 1
        connection, _ = listener.accept()
        connection.close()
        assert backend.prepare() is None  # once per settings


def test_the_first_compile_uses_the_prepared_client(ptod, fresh, monkeypatch):
    k = defined(monkeypatch, ptod)
    (client,) = backend._clients.values()
    assert run(k) == "ptod MISS"
    assert list(backend._clients.values()) == [client]


def test_an_unreachable_server_is_the_compiles_error_as_before(native, fresh, monkeypatch):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("PYPTO_COMPILE_FALLBACK", "0")
    monkeypatch.setenv("PYPTO_CONNECT_TIMEOUT", "0.2")
    monkeypatch.setenv("PYPTO_COMPILE_TIMEOUT", "5")
    k = defined(monkeypatch, f"127.0.0.1:{port}")  # its connection has failed by now
    with pytest.raises(pypto.CompileError,
                       match=f"ptod at 127.0.0.1:{port}: (UNAVAILABLE|DEADLINE_EXCEEDED)"):
        run(k)
    monkeypatch.delenv("PYPTO_COMPILE_FALLBACK")  # the default: compiled here, warned
    k = defined(monkeypatch, f"127.0.0.1:{port}")
    with pytest.warns(RuntimeWarning, match=f"ptod at 127.0.0.1:{port} cannot be reached"):
        assert run(k).endswith("(ptod unreachable)")


def test_a_bad_setting_is_the_compiles_error_as_before(native, fresh, monkeypatch):
    monkeypatch.setenv("PYPTO_CONNECT_TIMEOUT", "soon")
    k = defined(monkeypatch, "127.0.0.1:1")
    assert not backend._clients
    with pytest.raises(ValueError, match="PYPTO_CONNECT_TIMEOUT must be a number"):
        run(k)


def test_the_client_reconnects_after_ptod_restarts(native, fresh, monkeypatch, tmp_path):
    from conftest import running_ptod
    cache = tmp_path / "ptod-cache"
    with running_ptod(cache) as address:
        assert run(defined(monkeypatch, address)) == "ptod MISS"
    with running_ptod(cache, f"--address={address}"):  # the same port
        assert run(make()) == "ptod HIT"
    assert len(backend._clients) == 1


def test_a_fork_while_preparing_leaves_the_child_a_free_lock(native):
    with backend._clients_lock:
        pid = os.fork()
        if pid == 0:
            os._exit(0 if backend._clients_lock.acquire(timeout=5) else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
