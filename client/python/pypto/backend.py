"""Getting a kernel binary for a graph: disk cache, embedded compiler, or ptod.

Embedded (default): key = _native.cache_key(graph); the disk cache is tried
first, then _native.compile, whose result is stored on disk.
Remote (PYPTO_COMPILE_SERVER): a compile request to ptod through the C++
client (client/cpp/compile_client.h, as _native.CompileClient); ptod is the
shared cache, so the local disk cache is not used. Either way one compile may
take host_options["compile_timeout"] or else PYPTO_COMPILE_TIMEOUT seconds
(default 300: compile_timeout), and the binary runs in this process through
_native.Kernel.

PYPTO_COMPILE_SERVER names one ptod ("host:port") or several replicas: a
comma-separated list ("a:7070,b:7070") or "dns:///name:7070" for every
address a DNS name resolves to. Each compile goes to the replica rendezvous
hashing of the request picks (identical compiles from every rank meet on one
replica) and fails over to the next on UNAVAILABLE (docs/operations.md,
"Routing for training jobs").

What is policy here, and what the C++ client does: this module turns the
environment into the client's options and its errors into CompileError; the
client does the routing, retries, back-off, TLS, tokens and the decision to
fall back.

TLS (ptod --tls_cert_file/--tls_key_file): PYPTO_COMPILE_TLS=1, or any of
PYPTO_COMPILE_TLS_CA_FILE (the CA that signed ptod's certificate; default the
system's roots), PYPTO_COMPILE_TLS_CERT_FILE + PYPTO_COMPILE_TLS_KEY_FILE (a
client certificate, for ptod --tls_client_ca_file) set: the client's
ClientOptions tls / tls_root_ca_pem / tls_cert_pem / tls_key_pem.

Remote calls send PYPTO_COMPILE_TOKEN (if set) as "authorization: Bearer",
retry UNAVAILABLE and RESOURCE_EXHAUSTED up to 4 attempts with jittered
exponential back-off (100 ms doubling to 5 s, never shorter than the server's
retry-after-ms) within the deadline, and give up on a connection after
PYPTO_CONNECT_TIMEOUT seconds (default 2). When ptod cannot be reached the
kernel is compiled embedded instead (warned once per server; for the next
30 s further calls go straight to the embedded compiler), unless
PYPTO_COMPILE_FALLBACK=0.

With PYPTO_COMPILE_SERVER set, defining a jit function (prepare(), from
pypto.jit) makes the client in a background thread and starts its
connections, so that the first compile finds gRPC started and ptod connected
instead of doing both on the call's path. Nothing is started without
PYPTO_COMPILE_SERVER, and nothing is raised there: a setting that is wrong,
or a ptod that cannot be reached, is the first compile's error (or
fallback), as without it.

A binary from ptod whose key is not the key ptod gave the request is refused
(CompileError). Loading checks the binary's signature whenever a verification
key is configured (PTO_KERNEL_VERIFY_KEY_FILE: docs/operations.md).
"""

import os
import threading
import warnings

from . import cache
from ._proto import compile_service_pb2, kernel_pb2
from .errors import CompileError
from .extension import native
from .jit_options import target_of


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


_resolved = {}  # target name -> the concrete target it stands for (resolved_target)


def resolved_target(target):
    """The concrete target `target` names (the compiler's ResolveTarget:
    "host" -> "host-x86_64-v4", ...), resolved once per process for each
    name: what "host" stands for (PTO_HOST_TARGET) and "ascend-a2a3" (CANN's
    variables) is read at the first compile for the name and kept, because
    a jit function holds its kernels by the target's name (jit_function.py).
    A name the compiler refuses is its ValueError or NotImplementedError,
    and is not kept."""
    concrete = _resolved.get(target)
    if concrete is None:
        concrete = _resolved.setdefault(target, native().resolve_target(target))
    return concrete


def get_kernel(graph, options, timeout, kernel_name):
    """Returns a Compiled for `graph` (a pto.v1.Graph). options["target"]
    or else $PYPTO_TARGET names the target (jit_options.target_of); "host"
    when neither does. Compiled here, it is compiled for resolved_target's
    concrete target; ptod gets "host" resolved so, and an Ascend name as
    given (ptod resolves it)."""
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
    named = target  # the user's name for it, in messages
    try:
        target = resolved_target(target)
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
    timeout = compile_timeout(timeout)
    try:
        key, binary, stages = nat.compile(graph_bytes, target, options, timeout_s=timeout)
    except (ValueError, RuntimeError, NotImplementedError) as e:
        raise CompileError(f"{what} for the {named} target: {e}") from e
    cache.count("compiles")
    kernel = _load(binary, what)
    cache.store(key, binary)
    return Compiled(kernel, key, "embedded", stages, sum(s for _, s in stages))


_TLS_FILES = (("PYPTO_COMPILE_TLS_CA_FILE", "tls_root_ca_pem"),
              ("PYPTO_COMPILE_TLS_KEY_FILE", "tls_key_pem"),
              ("PYPTO_COMPILE_TLS_CERT_FILE", "tls_cert_pem"))


def _tls_settings():
    """The TLS environment as a hashable tuple: (on, ca, key, cert paths)."""
    paths = tuple(os.environ.get(name) or None for name, _ in _TLS_FILES)
    flag = os.environ.get("PYPTO_COMPILE_TLS", "")
    if flag not in ("", "0", "1"):
        raise ValueError(f"PYPTO_COMPILE_TLS must be 0 or 1, got {flag!r}")
    on = flag == "1" or (flag == "" and any(paths))
    return (on,) + paths


def _tls_options(settings):
    """The client's TLS arguments for `settings` (see _tls_settings): the
    server is verified against PYPTO_COMPILE_TLS_CA_FILE (default: the
    system's roots); PYPTO_COMPILE_TLS_CERT_FILE and _KEY_FILE give the
    client certificate ptod asks for with --tls_client_ca_file."""
    on, ca, key, cert = settings
    if not on:
        return {"tls": False}
    if bool(key) != bool(cert):
        missing = "PYPTO_COMPILE_TLS_KEY_FILE" if cert else "PYPTO_COMPILE_TLS_CERT_FILE"
        raise ValueError(f"a client certificate needs both PYPTO_COMPILE_TLS_CERT_FILE and "
                         f"PYPTO_COMPILE_TLS_KEY_FILE; {missing} is not set")
    options = {"tls": True}
    for (name, arg), path in zip(_TLS_FILES, (ca, key, cert)):
        if path:
            try:
                with open(path, "rb") as f:
                    options[arg] = f.read()
            except OSError as e:
                raise ValueError(f"{name}={path}: cannot read it ({e.strerror})") from None
    return options


_STATUS = {
    compile_service_pb2.CACHE_STATUS_HIT: ("HIT", "remote_hits"),
    compile_service_pb2.CACHE_STATUS_MISS: ("MISS", "remote_misses"),
    compile_service_pb2.CACHE_STATUS_COALESCED: ("COALESCED", "remote_coalesced"),
}


_clients = {}         # settings -> _native.CompileClient (its fallback state with it)
_clients_lock = threading.Lock()
_warned = set()       # servers whose fallback was already warned about
_warned_lock = threading.Lock()


def _env_seconds(name, default):
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds, got {os.environ[name]!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return value


def compile_timeout(timeout):
    """Seconds one compile may take, embedded or on ptod: `timeout`
    (host_options["compile_timeout"]) when given, else PYPTO_COMPILE_TIMEOUT,
    else 300."""
    return timeout if timeout is not None else _env_seconds("PYPTO_COMPILE_TIMEOUT", "300")


def _fallback_enabled():
    return os.environ.get("PYPTO_COMPILE_FALLBACK", "1") != "0"


def _settings(server):
    """The environment's client settings for `server` (the key of _clients)."""
    return (server, _tls_settings(), os.environ.get("PYPTO_COMPILE_TOKEN") or "",
            _env_seconds("PYPTO_CONNECT_TIMEOUT", "2"), _fallback_enabled())


def _client(server):
    """The native CompileClient for `server` and the environment's settings
    (one per distinct settings, kept for the process: channels, and the
    fallback period, live in it)."""
    settings = _settings(server)
    tls = settings[1]
    with _clients_lock:
        client = _clients.get(settings)
        if client is None:
            client = native().CompileClient(
                server, token=settings[2], connect_timeout_s=settings[3],
                fallback=settings[4], **_tls_options(tls))
            _clients[settings] = client
        return client


_prepared = set()  # settings prepare() has started a client for


def prepare():
    """With PYPTO_COMPILE_SERVER set: makes the client for it (_client) in a
    background thread and starts connecting to its replicas, once per
    settings, unless that client exists. The first compile then waits only
    for what is left of it (holding _clients_lock, the thread makes the
    client the compile would have made). Errors are left to that compile:
    it makes the client again, and waits for or reports the connection, as
    it would have. Returns the thread, or None when nothing was started."""
    server = os.environ.get("PYPTO_COMPILE_SERVER")
    if not server:
        return None
    try:
        settings = _settings(server)
    except ValueError:
        return None  # the compile raises it
    with _clients_lock:
        if settings in _clients or settings in _prepared:
            return None
        _prepared.add(settings)

    def run():
        try:
            _client(server).start_connecting()
        except Exception:  # noqa: BLE001 - the first compile reports it
            pass

    thread = threading.Thread(target=run, name="pypto-ptod-prepare")
    thread.start()
    return thread


def _after_fork_in_child():
    # A prepare() thread may have held the lock at the fork: the child has
    # no such thread, so its lock starts free.
    global _clients_lock
    _clients_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _remote(server, graph, options, timeout, kernel_name, target="host"):
    nat = native()
    timeout = compile_timeout(timeout)
    client = _client(server)
    # Resolve "host" here: the binary must run on this machine, not the server's.
    # (An Ascend target goes as named: ptod resolves ascend-a2a3.)
    if target == "host":
        target = resolved_target("host")

    def local(reason):
        return _fall_back(server, graph, options, kernel_name, reason, target)

    try:
        result = client.compile(graph.SerializeToString(), target, dict(options), timeout, local)
    except nat.RemoteError as e:
        code, address, details = e.args
        where = f"on ptod at {address}" if address else f"with PYPTO_COMPILE_SERVER={server!r}"
        raise CompileError(f"compiling kernel '{kernel_name}' {where}: {code}: {details}") from None
    if isinstance(result, Compiled):
        return result
    key, cache_status, binary, stages, compile_seconds = result
    status, counter = _STATUS.get(cache_status, ("UNSPECIFIED", None))
    if counter:
        cache.count(counter)
    kernel = _load(binary, f"kernel '{kernel_name}' from ptod at {server}")
    return Compiled(kernel, key, "ptod " + status, stages, compile_seconds)


def _fall_back(server, graph, options, kernel_name, reason, target="host"):
    """Compiles embedded because ptod at `server` cannot be reached (`reason`:
    the last error, or None within the fallback period)."""
    if reason is not None:
        with _warned_lock:
            first = server not in _warned
            _warned.add(server)
        if first:
            warnings.warn(f"pypto: ptod at {server} cannot be reached ({reason}); compiling "
                          "locally (warned once; PYPTO_COMPILE_FALLBACK=0 turns this off)",
                          RuntimeWarning, stacklevel=4)
    compiled = _embedded(graph, options, None, kernel_name, target)
    compiled.source += " (ptod unreachable)"
    return compiled
