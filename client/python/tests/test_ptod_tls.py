"""Compiling through a ptod that serves TLS and asks for client certificates
(PYPTO_COMPILE_TLS_CA_FILE, _CERT_FILE, _KEY_FILE)."""

import os
import shutil
import subprocess

import numpy as np
import pytest

import pypto
from conftest import running_ptod

ANY = pypto.Tensor[...]
TLS_VARS = ("PYPTO_COMPILE_TLS", "PYPTO_COMPILE_TLS_CA_FILE", "PYPTO_COMPILE_TLS_CERT_FILE",
            "PYPTO_COMPILE_TLS_KEY_FILE")


def sh(cmd, cwd):
    subprocess.run(cmd, shell=True, cwd=cwd, check=True, capture_output=True, timeout=120)


@pytest.fixture
def certs(tmp_path):
    """A CA, a server certificate for 127.0.0.1 and a client certificate."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl CLI is not installed")
    d = tmp_path / "certs"
    d.mkdir()
    sh("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=test-ca "
       "-keyout ca.key -out ca.pem", d)
    sh("openssl req -newkey rsa:2048 -nodes -subj /CN=ptod -keyout server.key -out server.csr "
       "&& printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext "
       "&& openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 "
       "-extfile san.ext -out server.pem", d)
    sh("openssl req -newkey rsa:2048 -nodes -subj /CN=client -keyout client.key -out client.csr "
       "&& openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 "
       "-out client.pem", d)
    for f in ("ca.key", "server.key", "client.key"):
        os.chmod(d / f, 0o600)
    return d


@pytest.fixture
def tls_ptod(tmp_path, certs, native, monkeypatch):
    """A ptod serving TLS that asks for client certificates; the client
    starts with no TLS settings, no fallback and short timeouts."""
    with running_ptod(tmp_path / "ptod-cache",
                      f"--tls_cert_file={certs / 'server.pem'}",
                      f"--tls_key_file={certs / 'server.key'}",
                      f"--tls_client_ca_file={certs / 'ca.pem'}") as address:
        for name in TLS_VARS:
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("PYPTO_COMPILE_SERVER", address)
        monkeypatch.setenv("PYPTO_COMPILE_FALLBACK", "0")
        monkeypatch.setenv("PYPTO_CONNECT_TIMEOUT", "3")
        monkeypatch.setenv("PYPTO_COMPILE_TIMEOUT", "120")
        yield address


def make():
    @pypto.jit
    def k(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = a * 3 - 1

    return k


def call(k):
    a = np.linspace(-1, 1, 8 * 32, dtype=np.float32).reshape(8, 32)
    out = np.zeros_like(a)
    k(a, out)
    np.testing.assert_array_equal(out, a * 3 - 1)


def test_tls_with_a_client_certificate(tls_ptod, certs, monkeypatch):
    monkeypatch.setenv("PYPTO_COMPILE_TLS_CA_FILE", str(certs / "ca.pem"))
    monkeypatch.setenv("PYPTO_COMPILE_TLS_CERT_FILE", str(certs / "client.pem"))
    monkeypatch.setenv("PYPTO_COMPILE_TLS_KEY_FILE", str(certs / "client.key"))
    k = make()
    call(k)
    assert k.last_compile.source == "ptod MISS"
    k2 = make()
    call(k2)
    assert k2.last_compile.source == "ptod HIT"


def test_tls_refusals(tls_ptod, certs, monkeypatch):
    # Plaintext to a TLS port: no connection.
    with pytest.raises(pypto.CompileError, match=f"on ptod at {tls_ptod}: UNAVAILABLE"):
        call(make())
    # TLS without the client certificate ptod asks for.
    monkeypatch.setenv("PYPTO_COMPILE_TLS_CA_FILE", str(certs / "ca.pem"))
    with pytest.raises(pypto.CompileError, match="UNAVAILABLE"):
        call(make())
    # Half a client certificate, a missing file: errors naming the variable.
    monkeypatch.setenv("PYPTO_COMPILE_TLS_CERT_FILE", str(certs / "client.pem"))
    with pytest.raises(ValueError, match="PYPTO_COMPILE_TLS_KEY_FILE is not set"):
        call(make())
    monkeypatch.setenv("PYPTO_COMPILE_TLS_KEY_FILE", str(certs / "nope.key"))
    with pytest.raises(ValueError, match=r"PYPTO_COMPILE_TLS_KEY_FILE=.*nope.key: cannot read it"):
        call(make())
    monkeypatch.setenv("PYPTO_COMPILE_TLS", "yes")
    with pytest.raises(ValueError, match="PYPTO_COMPILE_TLS must be 0 or 1, got 'yes'"):
        call(make())
