"""PYPTO_COMPILE_SERVER naming several ptod replicas: identical compiles from
several processes meet on one replica, and a stopped replica's compiles go to
another without an error."""

import contextlib
import subprocess
import sys

import pytest

import pypto
from conftest import python_env, running_ptod

_JOB = """
import numpy as np, pypto
ANY = pypto.Tensor[...]
@pypto.jit
def k(a: ANY, out: ANY):
    pypto.set_vec_tile_shapes(8, 16)
    out[:] = a * 5 + 1
a = np.linspace(-1, 1, 8 * 32, dtype=np.float32).reshape(8, 32)
out = np.zeros_like(a)
k(a, out)
np.testing.assert_array_equal(out, a * 5 + 1)
print(k.last_compile.source)
"""


def _requests(address):
    """Compile requests ptod at `address` has received (its Stats)."""
    import grpc
    from pypto._proto import compile_service_pb2
    with grpc.insecure_channel(address) as channel:
        stats = channel.unary_unary(
            "/pto.v1.CompileService/Stats",
            request_serializer=compile_service_pb2.StatsRequest.SerializeToString,
            response_deserializer=compile_service_pb2.StatsResponse.FromString)
        return stats(compile_service_pb2.StatsRequest(), timeout=30).requests


def _jobs(addresses, tmp_path):
    """Runs _JOB in one process per rotation of `addresses` (each rank lists
    the replicas in its own order); returns their compile sources."""
    sources = []
    for i in range(len(addresses)):
        env = python_env()
        env["PYPTO_COMPILE_SERVER"] = ",".join(addresses[i:] + addresses[:i])
        env["PYPTO_COMPILE_FALLBACK"] = "0"
        env["PYPTO_CACHE_DIR"] = str(tmp_path / "kernels")
        r = subprocess.run([sys.executable, "-c", _JOB], env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        sources.append(r.stdout.strip())
    return sources


def test_identical_compiles_meet_on_one_replica_and_fail_over(native, tmp_path):
    with contextlib.ExitStack() as stack:
        replicas = {}  # address -> its ExitStack (to stop it alone)
        for i in range(3):
            own = contextlib.ExitStack()
            address = own.enter_context(running_ptod(tmp_path / f"cache{i}"))
            stack.push(own.__exit__)
            replicas[address] = own
        addresses = sorted(replicas)
        assert _jobs(addresses, tmp_path) == ["ptod MISS", "ptod HIT", "ptod HIT"]
        counts = {a: _requests(a) for a in addresses}
        chosen = [a for a, n in counts.items() if n]
        assert len(chosen) == 1 and counts[chosen[0]] == 3, counts

        replicas[chosen[0]].close()  # SIGTERM: that replica is gone
        rest = [a for a in addresses if a != chosen[0]]
        sources = _jobs(addresses, tmp_path)
        assert sources == ["ptod MISS", "ptod HIT", "ptod HIT"], sources
        counts = {a: _requests(a) for a in rest}
        assert sorted(counts.values()) == [0, 3], counts


def test_an_address_list_that_does_not_parse_is_a_clear_error(native, monkeypatch):
    from pypto import backend
    from pypto._proto import graph_pb2
    monkeypatch.setenv("PYPTO_COMPILE_SERVER", "127.0.0.1:1,,127.0.0.1:2")
    monkeypatch.setenv("PYPTO_COMPILE_FALLBACK", "0")
    g = graph_pb2.Graph(schema_version=graph_pb2.SCHEMA_VERSION_1, name="k")
    with pytest.raises(pypto.CompileError,
                       match="PYPTO_COMPILE_SERVER='127.0.0.1:1,,127.0.0.1:2': "
                             "INVALID_ARGUMENT: .*empty entry"):
        backend.get_kernel(g, {}, None, "k")
