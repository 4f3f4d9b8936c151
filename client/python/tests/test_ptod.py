"""Compiling through a real ptod subprocess (PYPTO_COMPILE_SERVER)."""

import contextlib
import time

import numpy as np
import pytest

import pypto

ANY = pypto.Tensor[...]


def make():
    @pypto.jit
    def k(a: ANY, b: ANY, out: ANY):
        pypto.set_vec_tile_shapes(32, 64)
        out[:] = (a + b).exp() * 2 - a

    return k


def _free_port():
    import socket
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def scripted_server(compile_):
    """A gRPC server on loopback whose CompileService.Compile is `compile_`
    (request, context) -> CompileResponse; yields its port."""
    from concurrent import futures
    import grpc
    from pypto._proto import compile_service_pb2
    handler = grpc.method_handlers_generic_handler("pto.v1.CompileService", {
        "Compile": grpc.unary_unary_rpc_method_handler(
            compile_, request_deserializer=compile_service_pb2.CompileRequest.FromString,
            response_serializer=compile_service_pb2.CompileResponse.SerializeToString)})
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield port
    finally:
        server.stop(0)


def test_compile_through_ptod_then_hit(ptod, private_cache):
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (100, 200)).astype(np.float32)
    b = rng.uniform(-1, 1, (100, 200)).astype(np.float32)
    out = np.zeros_like(a)
    k = make()
    k(a, b, out)
    np.testing.assert_allclose(out, np.exp(a + b) * 2 - a, rtol=1e-5, atol=1e-6)
    assert k.last_compile.source == "ptod MISS"
    key = k.last_compile.key
    # A fresh function has an empty memory cache: the request reaches ptod again.
    k2 = make()
    out[:] = 0
    k2(a, b, out)
    np.testing.assert_allclose(out, np.exp(a + b) * 2 - a, rtol=1e-5, atol=1e-6)
    assert k2.last_compile.source == "ptod HIT" and k2.last_compile.key == key
    stats = pypto.compile_stats()
    assert stats["remote_misses"] == 1 and stats["remote_hits"] == 1
    assert stats["compiles"] == 0  # nothing compiled in this process
    assert not private_cache.exists() or not list(private_cache.iterdir())


def test_server_errors_carry_the_servers_message(ptod):
    from pypto import backend
    from pypto._proto import graph_pb2
    g = graph_pb2.Graph(schema_version=graph_pb2.SCHEMA_VERSION_1, name="bad")
    for vid in (1, 2):
        v = g.values.add(id=vid, name=f"v{vid}", dtype=graph_pb2.DT_FP32)
        v.shape.dims.add(size=4)
    g.params.add(name="x", role=graph_pb2.PARAM_ROLE_IN, value_id=1)
    g.params.add(name="y", role=graph_pb2.PARAM_ROLE_OUT, value_id=2)
    g.ops.add(kind="frobnicate", inputs=[1], outputs=[2]).vec_tile.dims.append(4)
    with pytest.raises(pypto.CompileError, match=f"ptod at {ptod}: INVALID_ARGUMENT: .*frobnicate"):
        backend.get_kernel(g, {}, None, "bad")


def test_unreachable_server_is_a_clear_error(native, monkeypatch):
    port = _free_port()
    monkeypatch.setenv("PYPTO_COMPILE_SERVER", f"127.0.0.1:{port}")
    monkeypatch.setenv("PYPTO_COMPILE_TIMEOUT", "5")
    monkeypatch.setenv("PYPTO_COMPILE_FALLBACK", "0")
    monkeypatch.setenv("PYPTO_CONNECT_TIMEOUT", "0.2")
    k = make()
    a = np.zeros((4, 4), np.float32)
    with pytest.raises(pypto.CompileError, match=f"ptod at 127.0.0.1:{port}: (UNAVAILABLE|DEADLINE_EXCEEDED)"):
        k(a, a, a.copy())


def test_unreachable_server_falls_back_to_embedded_compiles_warning_once(
        native, monkeypatch, private_cache):
    from pypto import backend
    server = f"127.0.0.1:{_free_port()}"
    monkeypatch.setenv("PYPTO_COMPILE_SERVER", server)
    monkeypatch.setenv("PYPTO_CONNECT_TIMEOUT", "0.2")
    monkeypatch.delenv("PYPTO_COMPILE_FALLBACK", raising=False)
    monkeypatch.setattr(backend, "_warned", set())
    monkeypatch.setattr(backend, "_clients", {})  # no fallback period from before
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, (16, 64)).astype(np.float32)
    b = rng.uniform(-1, 1, (16, 64)).astype(np.float32)
    with pytest.warns(RuntimeWarning, match=f"ptod at {server} cannot be reached") as record:
        for _ in range(3):
            k = make()
            out = np.zeros_like(a)
            k(a, b, out)
            np.testing.assert_allclose(out, np.exp(a + b) * 2 - a, rtol=1e-5, atol=1e-6)
            assert k.last_compile.source.endswith("(ptod unreachable)")
    assert sum("cannot be reached" in str(w.message) for w in record) == 1


def test_busy_server_is_retried_honouring_its_hint(native, monkeypatch):
    """A scripted server: RESOURCE_EXHAUSTED twice, then a non-retryable error."""
    import grpc
    calls, tokens = [], []

    def compile_(request, context):
        calls.append(time.monotonic())
        tokens.append(dict(context.invocation_metadata()).get("authorization"))
        if len(calls) <= 2:
            context.set_trailing_metadata((("retry-after-ms", "50"),))
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "queue full")
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "scripted answer")

    with scripted_server(compile_) as port:
        monkeypatch.setenv("PYPTO_COMPILE_SERVER", f"127.0.0.1:{port}")
        monkeypatch.setenv("PYPTO_COMPILE_TOKEN", "tok-0123456789abcdef")
        k = make()
        a = np.zeros((4, 4), np.float32)
        with pytest.raises(pypto.CompileError, match="INVALID_ARGUMENT: scripted answer"):
            k(a, a, a.copy())
        assert len(calls) == 3
        assert tokens == ["Bearer tok-0123456789abcdef"] * 3
        # Each retry waited at least the server's hint.
        assert calls[1] - calls[0] >= 0.05 and calls[2] - calls[1] >= 0.05


def test_a_binary_keyed_otherwise_than_the_request_is_refused(native, monkeypatch):
    """A server that answers with a real binary under another key (what a
    damaged or hostile cache would do) is refused, never loaded."""
    from pypto._proto import compile_service_pb2, kernel_pb2
    served = []

    def compile_(request, context):
        key, binary, _ = native.compile(request.graph.SerializeToString(), request.target,
                                        dict(request.options), 120)
        served.append(key)
        response = compile_service_pb2.CompileResponse(
            key="f" * 64, binary=kernel_pb2.KernelBinary.FromString(binary),
            cache_status=compile_service_pb2.CACHE_STATUS_HIT)
        return response

    with scripted_server(compile_) as port:
        monkeypatch.setenv("PYPTO_COMPILE_SERVER", f"127.0.0.1:{port}")
        monkeypatch.setenv("PYPTO_COMPILE_FALLBACK", "0")
        k = make()
        a = np.ones((4, 4), np.float32)
        out = np.zeros_like(a)
        with pytest.raises(pypto.CompileError, match="keyed '[0-9a-f]{64}', not 'f{64}'.*refused"):
            k(a, a, out)
        assert len(served) == 1 and served[0] != "f" * 64
        assert not out.any()  # nothing ran


_VERIFYING_JOB = """
import numpy as np, pypto
ANY = pypto.Tensor[...]
@pypto.jit
def k(a: ANY, out: ANY):
    pypto.set_vec_tile_shapes(8, 8)
    out[:] = a * 2
a = np.ones((8, 8), np.float32)
out = np.zeros_like(a)
try:
    k(a, out)
except Exception as e:
    print("REFUSED", e)
else:
    print("RAN", float(out.sum()))
"""


def test_a_job_with_a_verify_key_runs_only_kernels_ptod_signed(native, tmp_path):
    """PTO_KERNEL_VERIFY_KEY_FILE, as the deploy files set it for every job:
    kernels signed by ptod with that key load; unsigned ones are refused."""
    import subprocess
    import sys
    from conftest import python_env, running_ptod
    key = tmp_path / "signing.key"
    key.write_text("job-verify-key-0123456789abcdef-0123")
    key.chmod(0o600)
    env = python_env()
    env["PTO_KERNEL_VERIFY_KEY_FILE"] = str(key)
    env["PYPTO_CACHE_DIR"] = str(tmp_path / "kernels")
    env["PYPTO_COMPILE_FALLBACK"] = "0"
    env.pop("PYPTO_COMPILE_SERVER", None)

    def job():
        r = subprocess.run([sys.executable, "-c", _VERIFYING_JOB], env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return r.stdout

    embedded = job()  # compiled in-process: unsigned
    assert "REFUSED" in embedded and "unsigned" in embedded, embedded
    with running_ptod(tmp_path / "ptod-cache", f"--signing_key_file={key}") as address:
        env["PYPTO_COMPILE_SERVER"] = address
        assert job().strip() == "RAN 128.0"
    with running_ptod(tmp_path / "other-cache") as address:  # signs nothing
        env["PYPTO_COMPILE_SERVER"] = address
        assert "unsigned" in job()
