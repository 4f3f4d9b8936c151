"""pypto's native extension, pypto/_native.so (client/python/native/): the
compiler, the runtime, the op registry, the reference evaluator, ptod's
client and the dimension arithmetic, embedded. It is a Bazel output that
joins the package from bazel-bin (pypto/__init__.py); native() loads it on
first use, or raises an ImportError that says how to build it."""


def native():
    """The _native extension module."""
    try:
        from . import _native  # a Bazel output, loaded on first use (error below)
    except ImportError as e:
        raise ImportError(
            "pypto's native extension pypto/_native.so is not built or not on the path: "
            "run `bazel build //client/python:pypto/_native.so` and start Python "
            "through tools/pypto-python") from e
    return _native
