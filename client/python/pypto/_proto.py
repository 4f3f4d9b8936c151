"""Imports the generated pto.v1 protobuf modules.

They are Bazel outputs (`bazel build //proto:pto_v1_py` writes
bazel-bin/proto/pto/v1/*_pb2.py). tools/pypto-python puts bazel-bin/proto on
sys.path; when it is not there we look for it relative to this source tree, so
that `import pypto` from a checkout works after a build.
"""

import os
import sys


def _import():
    try:
        from pto.v1 import compile_service_pb2, graph_pb2, kernel_pb2  # on sys.path?
        return graph_pb2, kernel_pb2, compile_service_pb2
    except ImportError:
        pass
    # client/python/pypto/_proto.py -> <repo>/bazel-bin/proto
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    candidate = os.path.join(repo, "bazel-bin", "proto")
    if os.path.isdir(os.path.join(candidate, "pto", "v1")) and candidate not in sys.path:
        sys.path.append(candidate)
        # A namespace package `pto` may already be cached without this path.
        sys.modules.pop("pto", None)
        sys.modules.pop("pto.v1", None)
    try:
        from pto.v1 import compile_service_pb2, graph_pb2, kernel_pb2  # from the checkout
        return graph_pb2, kernel_pb2, compile_service_pb2
    except ImportError as e:
        raise ImportError(
            "pypto needs the generated protobuf modules pto.v1.graph_pb2 etc.: "
            "run `bazel build //proto:pto_v1_py` and start Python through "
            "tools/pypto-python (or put bazel-bin/proto on PYTHONPATH)") from e


graph_pb2, kernel_pb2, compile_service_pb2 = _import()
