"""Getting a kernel binary for a graph: disk cache, embedded compiler, or ptod.

Embedded (default): key = _native.cache_key(graph); the disk cache is tried
first, then _native.compile, whose result is stored on disk.
Remote (PYPTO_COMPILE_SERVER=host:port): a pto.v1.CompileRequest to ptod over
grpcio with a deadline of host_options["compile_timeout"] or else
PYPTO_COMPILE_TIMEOUT seconds (default 300); ptod is
the shared cache, so the local disk cache is not used. Either way the binary
runs in this process through _native.Kernel.

TLS (ptod --tls_cert_file/--tls_key_file): PYPTO_COMPILE_TLS=1, or any of
PYPTO_COMPILE_TLS_CA_FILE (the CA that signed ptod's certificate; default the
system's roots), PYPTO_COMPILE_TLS_CERT_FILE + PYPTO_COMPILE_TLS_KEY_FILE (a
client certificate, for ptod --tls_client_ca_file) set, as the C++ client's
ClientOptions tls / tls_root_ca_pem / tls_cert_pem / tls_key_pem.

Remote calls send PYPTO_COMPILE_TOKEN (if set) as "authorization: Bearer",
retry UNAVAILABLE and RESOURCE_EXHAUSTED up to 4 attempts with jittered
exponential back-off (100 ms doubling to 5 s, never shorter than the server's
retry-after-ms) within the deadline, and give up on a connection after
PYPTO_CONNECT_TIMEOUT seconds (default 2). When ptod cannot be reached the
kernel is compiled embedded instead (warned once per server; for the next
30 s further calls go straight to the embedded compiler), unless
PYPTO_COMPILE_FALLBACK=0.

A binary from ptod whose key is not the key ptod gave the request is refused
(CompileError). Loading checks the binary's signature whenever a verification
key is configured (PTO_KERNEL_VERIFY_KEY_FILE: docs/operations.md).
"""

import os
import random
import threading
import time
import warnings

from . import cache
from ._proto import compile_service_pb2, kernel_pb2
from .errors import CompileError
from .jit_options import target_of


def native():
    """The _native extension, or an ImportError that says how to build it."""
    try:
        from . import _native  # a Bazel output, loaded on first use (error below)
    except ImportError as e:
        raise ImportError(
            "pypto's native extension pypto/_native.so is not built or not on the path: "
            "run `bazel build //client/python:pypto/_native.so` and start Python "
            "through tools/pypto-python") from e
    return _native


class Compiled:
    """A loaded kernel and where it came from."""

    def __init__(self, kernel, key, source, stages=(), seconds=0.0):
        self.kernel = kernel      # _native.Kernel
        self.key = key            # the compiler's cache key (hex)
        self.source = source      # "disk", "embedded", "ptod HIT" / "ptod MISS" / ...
        self.stages = list(stages)  # [(stage, seconds)]
        self.seconds = seconds


def _load(binary, what):
    try:
        return native().Kernel(binary)
    except (ValueError, RuntimeError, NotImplementedError) as e:
        raise CompileError(f"{what}: the runtime refused the kernel binary: {e}") from e


def get_kernel(graph, options, timeout, kernel_name):
    """Returns a Compiled for `graph` (a pto.v1.Graph). options["target"]
    or else $PYPTO_TARGET names the target (jit_options.target_of); "host"
    when neither does."""
    options = dict(options)
    target = target_of(options)
    options.pop("target", None)
    server = os.environ.get("PYPTO_COMPILE_SERVER")
    if server:
        return _remote(server, graph, options, timeout, kernel_name, target)
    return _embedded(graph, options, timeout, kernel_name, target)


def _embedded(graph, options, timeout, kernel_name, target="host"):
    nat = native()
    graph_bytes = graph.SerializeToString()
    what = f"compiling kernel '{kernel_name}'"
    try:
        key = nat.cache_key(graph_bytes, target, options)
    except (ValueError, RuntimeError, NotImplementedError) as e:
        raise CompileError(f"{what}: {e}") from e
    data = cache.load(key)
    if data is not None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # protobuf warns on some junk
                binary = kernel_pb2.KernelBinary.FromString(data)
            if binary.key != key:
                raise ValueError("key mismatch")
            kernel = nat.Kernel(data)
            cache.count("disk_hits")
            return Compiled(kernel, key, "disk")
        except Exception:  # any defect in a cache file means: recompile
            cache.discard(key)
    kwargs = {} if timeout is None else {"timeout_s": timeout}
    try:
        key, binary, stages = nat.compile(graph_bytes, target, options, **kwargs)
    except (ValueError, RuntimeError, NotImplementedError) as e:
        raise CompileError(f"{what} for the {target} target: {e}") from e
    cache.count("compiles")
    kernel = _load(binary, what)
    cache.store(key, binary)
    return Compiled(kernel, key, "embedded", stages, sum(s for _, s in stages))


_channels = {}
_channels_lock = threading.Lock()


_TLS_FILES = (("PYPTO_COMPILE_TLS_CA_FILE", "root_certificates"),
              ("PYPTO_COMPILE_TLS_KEY_FILE", "private_key"),
              ("PYPTO_COMPILE_TLS_CERT_FILE", "certificate_chain"))


def _tls_settings():
    """The TLS environment as a hashable tuple: (on, ca, key, cert paths)."""
    paths = tuple(os.environ.get(name) or None for name, _ in _TLS_FILES)
    flag = os.environ.get("PYPTO_COMPILE_TLS", "")
    if flag not in ("", "0", "1"):
        raise ValueError(f"PYPTO_COMPILE_TLS must be 0 or 1, got {flag!r}")
    on = flag == "1" or (flag == "" and any(paths))
    return (on,) + paths


def _credentials(settings):
    """grpc.ChannelCredentials for `settings` (see _tls_settings): the
    server is verified against PYPTO_COMPILE_TLS_CA_FILE (default: the
    system's roots); PYPTO_COMPILE_TLS_CERT_FILE and _KEY_FILE give the
    client certificate ptod asks for with --tls_client_ca_file."""
    import grpc  # only for a ptod (PYPTO_COMPILE_SERVER): grpcio is optional
    _, ca, key, cert = settings
    if bool(key) != bool(cert):
        missing = "PYPTO_COMPILE_TLS_KEY_FILE" if cert else "PYPTO_COMPILE_TLS_CERT_FILE"
        raise ValueError(f"a client certificate needs both PYPTO_COMPILE_TLS_CERT_FILE and "
                         f"PYPTO_COMPILE_TLS_KEY_FILE; {missing} is not set")
    pems = {}
    for (name, arg), path in zip(_TLS_FILES, (ca, key, cert)):
        if path:
            try:
                with open(path, "rb") as f:
                    pems[arg] = f.read()
            except OSError as e:
                raise ValueError(f"{name}={path}: cannot read it ({e.strerror})") from None
    return grpc.ssl_channel_credentials(**pems)


def _channel(server):
    import grpc  # only for a ptod (PYPTO_COMPILE_SERVER): grpcio is optional
    tls = _tls_settings()
    with _channels_lock:
        ch = _channels.get((server, tls))
        if ch is None:
            options = [
                ("grpc.max_receive_message_length", 256 << 20),
                ("grpc.max_send_message_length", 256 << 20),
            ]
            if tls[0]:
                ch = grpc.secure_channel(server, _credentials(tls), options=options)
            else:
                ch = grpc.insecure_channel(server, options=options)
            _channels[(server, tls)] = ch
        return ch


_STATUS = {
    compile_service_pb2.CACHE_STATUS_HIT: ("HIT", "remote_hits"),
    compile_service_pb2.CACHE_STATUS_MISS: ("MISS", "remote_misses"),
    compile_service_pb2.CACHE_STATUS_COALESCED: ("COALESCED", "remote_coalesced"),
}


_MAX_ATTEMPTS = 4
_INITIAL_BACKOFF_S = 0.1
_MAX_BACKOFF_S = 5.0
_FALLBACK_PERIOD_S = 30.0
_down_until = {}      # server -> time.monotonic() until which calls fall back
_warned = set()       # servers whose fallback was already warned about
_fallback_lock = threading.Lock()


def _env_seconds(name, default):
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds, got {os.environ[name]!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return value


def _fallback_enabled():
    return os.environ.get("PYPTO_COMPILE_FALLBACK", "1") != "0"


def _retry_after_s(error):
    """The server's retry-after-ms hint on a grpc.RpcError, in seconds."""
    try:
        for key, value in error.trailing_metadata() or ():
            if key == "retry-after-ms":
                return max(0.0, int(value) / 1000.0)
    except (AttributeError, ValueError, TypeError):
        pass
    return 0.0


def _call_with_retries(server, request, timeout, kernel_name):
    """One Compile with retries; returns the response or raises CompileError
    (with .unreachable set when ptod could not be reached)."""
    import grpc  # only for a ptod (PYPTO_COMPILE_SERVER): grpcio is optional
    channel = _channel(server)
    call = channel.unary_unary(
        "/pto.v1.CompileService/Compile",
        request_serializer=compile_service_pb2.CompileRequest.SerializeToString,
        response_deserializer=compile_service_pb2.CompileResponse.FromString)
    token = os.environ.get("PYPTO_COMPILE_TOKEN")
    metadata = (("authorization", f"Bearer {token}"),) if token else None
    connect_timeout = _env_seconds("PYPTO_CONNECT_TIMEOUT", "2")
    deadline = time.monotonic() + timeout
    last = None
    for attempt in range(1, _MAX_ATTEMPTS + 1):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            grpc.channel_ready_future(channel).result(timeout=min(connect_timeout, left))
        except grpc.FutureTimeoutError:
            last = ("UNAVAILABLE", f"no connection within {min(connect_timeout, left):g} s", 0.0)
        else:
            try:
                return call(request, timeout=max(deadline - time.monotonic(), 0.001),
                            metadata=metadata)
            except grpc.RpcError as e:
                code = e.code().name if e.code() is not None else "UNKNOWN"
                if code not in ("UNAVAILABLE", "RESOURCE_EXHAUSTED"):
                    raise CompileError(f"compiling kernel '{kernel_name}' on ptod at {server}: "
                                       f"{code}: {e.details()}") from None
                last = (code, e.details(), _retry_after_s(e))
        if attempt == _MAX_ATTEMPTS:
            break
        backoff = min(_MAX_BACKOFF_S, _INITIAL_BACKOFF_S * 2 ** (attempt - 1))
        wait = max(random.uniform(backoff / 2, backoff), last[2])
        if time.monotonic() + wait >= deadline:
            break
        time.sleep(wait)
    code, details = (last[0], last[1]) if last else ("DEADLINE_EXCEEDED", "deadline passed")
    error = CompileError(f"compiling kernel '{kernel_name}' on ptod at {server}: {code}: {details}")
    error.unreachable = code == "UNAVAILABLE"
    raise error


def _remote(server, graph, options, timeout, kernel_name, target="host"):
    import grpc  # only for a ptod (PYPTO_COMPILE_SERVER): grpcio is optional
    if _fallback_enabled():
        with _fallback_lock:
            down = time.monotonic() < _down_until.get(server, 0.0)
        if down:
            try:
                grpc.channel_ready_future(_channel(server)).result(timeout=0)
            except grpc.FutureTimeoutError:
                return _fall_back(server, graph, options, timeout, kernel_name, None, target)
    if timeout is None:  # host_options["compile_timeout"] wins over the environment
        try:
            timeout = float(os.environ.get("PYPTO_COMPILE_TIMEOUT", "300"))
        except ValueError:
            raise ValueError("PYPTO_COMPILE_TIMEOUT must be a number of seconds, got "
                             f"{os.environ['PYPTO_COMPILE_TIMEOUT']!r}") from None
        if timeout <= 0:
            raise ValueError(f"PYPTO_COMPILE_TIMEOUT must be positive, got {timeout}")
    # Resolve "host" here: the binary must run on this machine, not the server's.
    # (An Ascend target goes as named: ptod resolves ascend-a2a3.)
    if target == "host":
        target = native().resolve_target("host")
    request = compile_service_pb2.CompileRequest(graph=graph, target=target, options=options)
    try:
        response = _call_with_retries(server, request, timeout, kernel_name)
    except CompileError as e:
        if getattr(e, "unreachable", False) and _fallback_enabled():
            return _fall_back(server, graph, options, None, kernel_name, e, target)
        raise
    if not response.key or response.binary.key != response.key:
        raise CompileError(
            f"compiling kernel '{kernel_name}' on ptod at {server}: the binary served is keyed "
            f"{response.binary.key[:80]!r}, not {response.key[:80]!r} (the request's key): "
            "refused (a wrong kernel; the server's cache may be damaged)")
    status, counter = _STATUS.get(response.cache_status, ("UNSPECIFIED", None))
    if counter:
        cache.count(counter)
    kernel = _load(response.binary.SerializeToString(),
                   f"kernel '{kernel_name}' from ptod at {server}")
    stages = [(s.stage, s.seconds) for s in response.stages]
    return Compiled(kernel, response.key, "ptod " + status, stages, response.compile_seconds)


def _fall_back(server, graph, options, timeout, kernel_name, error, target="host"):
    """Compiles embedded because ptod at `server` cannot be reached."""
    with _fallback_lock:
        _down_until[server] = time.monotonic() + _FALLBACK_PERIOD_S
        first = server not in _warned
        _warned.add(server)
    if first:
        warnings.warn(f"pypto: ptod at {server} cannot be reached ({error}); compiling "
                      "locally (warned once; PYPTO_COMPILE_FALLBACK=0 turns this off)",
                      RuntimeWarning, stacklevel=3)
    compiled = _embedded(graph, options, timeout, kernel_name, target)
    compiled.source += " (ptod unreachable)"
    return compiled
