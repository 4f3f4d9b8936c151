"""Getting a kernel binary for a graph: disk cache, embedded compiler, or ptod.

Embedded (default): key = _native.cache_key(graph); the disk cache is tried
first, then _native.compile, whose result is stored on disk.
Remote (PYPTO_COMPILE_SERVER=host:port): a pto.v1.CompileRequest to ptod over
grpcio with a deadline of host_options["compile_timeout"] or else
PYPTO_COMPILE_TIMEOUT seconds (default 300); ptod is
the shared cache, so the local disk cache is not used. Either way the binary
runs in this process through _native.Kernel.
"""

import os
import threading
import warnings

from . import cache
from ._proto import compile_service_pb2, kernel_pb2
from .errors import CompileError


def native():
    """The _native extension, or an ImportError that says how to build it."""
    try:
        from . import _native
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
    """Returns a Compiled for `graph` (a pto.v1.Graph)."""
    server = os.environ.get("PYPTO_COMPILE_SERVER")
    if server:
        return _remote(server, graph, options, timeout, kernel_name)
    return _embedded(graph, options, timeout, kernel_name)


def _embedded(graph, options, timeout, kernel_name):
    nat = native()
    graph_bytes = graph.SerializeToString()
    what = f"compiling kernel '{kernel_name}'"
    try:
        key = nat.cache_key(graph_bytes, "host", options)
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
        key, binary, stages = nat.compile(graph_bytes, "host", options, **kwargs)
    except (ValueError, RuntimeError, NotImplementedError) as e:
        raise CompileError(f"{what} for the host target: {e}") from e
    cache.count("compiles")
    kernel = _load(binary, what)
    cache.store(key, binary)
    return Compiled(kernel, key, "embedded", stages, sum(s for _, s in stages))


_channels = {}
_channels_lock = threading.Lock()


def _channel(server):
    import grpc
    with _channels_lock:
        ch = _channels.get(server)
        if ch is None:
            ch = grpc.insecure_channel(server, options=[
                ("grpc.max_receive_message_length", 256 << 20),
                ("grpc.max_send_message_length", 256 << 20),
            ])
            _channels[server] = ch
        return ch


_STATUS = {
    compile_service_pb2.CACHE_STATUS_HIT: ("HIT", "remote_hits"),
    compile_service_pb2.CACHE_STATUS_MISS: ("MISS", "remote_misses"),
    compile_service_pb2.CACHE_STATUS_COALESCED: ("COALESCED", "remote_coalesced"),
}


def _remote(server, graph, options, timeout, kernel_name):
    import grpc
    if timeout is None:  # host_options["compile_timeout"] wins over the environment
        try:
            timeout = float(os.environ.get("PYPTO_COMPILE_TIMEOUT", "300"))
        except ValueError:
            raise ValueError("PYPTO_COMPILE_TIMEOUT must be a number of seconds, got "
                             f"{os.environ['PYPTO_COMPILE_TIMEOUT']!r}") from None
        if timeout <= 0:
            raise ValueError(f"PYPTO_COMPILE_TIMEOUT must be positive, got {timeout}")
    # Resolve "host" here: the binary must run on this machine, not the server's.
    target = native().resolve_target("host")
    request = compile_service_pb2.CompileRequest(graph=graph, target=target, options=options)
    call = _channel(server).unary_unary(
        "/pto.v1.CompileService/Compile",
        request_serializer=compile_service_pb2.CompileRequest.SerializeToString,
        response_deserializer=compile_service_pb2.CompileResponse.FromString)
    try:
        response = call(request, timeout=timeout)
    except grpc.RpcError as e:
        code = e.code().name if e.code() is not None else "UNKNOWN"
        raise CompileError(
            f"compiling kernel '{kernel_name}' on ptod at {server}: {code}: {e.details()}") from None
    status, counter = _STATUS.get(response.cache_status, ("UNSPECIFIED", None))
    if counter:
        cache.count(counter)
    kernel = _load(response.binary.SerializeToString(),
                   f"kernel '{kernel_name}' from ptod at {server}")
    stages = [(s.stage, s.seconds) for s in response.stages]
    return Compiled(kernel, response.key, "ptod " + status, stages, response.compile_seconds)
