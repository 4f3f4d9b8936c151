"""The on-disk kernel cache and the process-wide compile counters.

Kernels are stored as serialized pto.v1.KernelBinary files named by the
compiler's cache key, under $PYPTO_CACHE_DIR (default
${XDG_CACHE_HOME:-~/.cache}/pypto/kernels), so a new process reuses what an
earlier one compiled. Files are written to a temporary name and renamed, so a
reader never sees half a file; a file that does not parse, belongs to another
key, or fails the runtime's checks is deleted and recompiled.
PYPTO_DISK_CACHE=0 turns the disk cache off.
"""

import os
import re
import sys
import tempfile
import threading

_lock = threading.Lock()
_stats = {
    "traces": 0,          # kernel functions traced into graphs
    "check_traces": 0,    # second traces at other placeholder sizes (trace_compare.py)
    "compiles": 0,        # compiles run in this process (embedded compiler)
    "memory_hits": 0,     # calls served by a jit function's in-memory cache
    "disk_hits": 0,       # kernels loaded from the disk cache
    "disk_corrupt": 0,    # disk entries rejected and recompiled
    "remote_hits": 0,     # ptod answered HIT
    "remote_misses": 0,   # ptod compiled for us
    "remote_coalesced": 0,  # ptod shared an in-flight compile
}


# Memory hits that run through a _native Launcher (a jit function's repeat
# calls) count themselves there, an atomic add per run instead of this lock
# per call; compile_stats adds the runs since the last reset.
_launcher_runs_at_reset = 0


def _launcher_runs():
    native = sys.modules.get(__package__ + "._native")  # none loaded: none ran
    return native.launcher_runs() if native is not None else 0


def count(name, n=1):
    with _lock:
        _stats[name] += n


def compile_stats():
    """Counters since the process started (or the last reset_compile_stats)."""
    with _lock:
        stats = dict(_stats)
        stats["memory_hits"] += _launcher_runs() - _launcher_runs_at_reset
        return stats


def reset_compile_stats():
    global _launcher_runs_at_reset
    with _lock:
        for k in _stats:
            _stats[k] = 0
        _launcher_runs_at_reset = _launcher_runs()


_KEY = re.compile(r"^[0-9a-f]{16,128}$")


def cache_dir():
    d = os.environ.get("PYPTO_CACHE_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pypto", "kernels")


def enabled():
    return os.environ.get("PYPTO_DISK_CACHE", "1") != "0"


def _path(key):
    if not _KEY.match(key):
        raise ValueError(f"malformed cache key {key!r}")
    return os.path.join(cache_dir(), key + ".kbin")


def load(key):
    """The stored binary bytes for `key`, or None."""
    if not enabled():
        return None
    try:
        with open(_path(key), "rb") as f:
            return f.read()
    except OSError:
        return None


def discard(key):
    """Removes a corrupt entry."""
    count("disk_corrupt")
    try:
        os.unlink(_path(key))
    except OSError:
        pass


def store(key, binary):
    """Writes `binary` for `key` atomically; failures only lose the cache entry."""
    if not enabled():
        return
    path = _path(key)
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="." + key[:16] + ".", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(binary)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        # A read-only or full cache directory must not fail the kernel.
        pass


def entries():
    """[(key, size in bytes)] of the kernels in the disk cache."""
    out = []
    try:
        names = os.listdir(cache_dir())
    except OSError:
        return out
    for name in sorted(names):
        key, ext = os.path.splitext(name)
        if ext == ".kbin" and _KEY.match(key):
            try:
                out.append((key, os.path.getsize(os.path.join(cache_dir(), name))))
            except OSError:
                pass  # removed meanwhile
    return out


def clear_cache():
    """Deletes every kernel in the disk cache ($PYPTO_CACHE_DIR) and any
    temporary file a killed writer left; returns how many kernels it deleted.
    Safe while other processes use the cache: a reader then misses and
    recompiles. In-memory caches of live jit functions are not affected."""
    directory = cache_dir()
    removed = 0
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    for name in names:
        key, ext = os.path.splitext(name)
        kernel = ext == ".kbin" and _KEY.match(key)
        if not (kernel or (name.startswith(".") and name.endswith(".tmp"))):
            continue  # not ours: leave it
        try:
            os.unlink(os.path.join(directory, name))
            removed += bool(kernel)
        except OSError:
            pass
    return removed
