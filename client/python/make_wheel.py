"""Assembles the pypto wheel from Bazel outputs (//client/python:wheel runs it).

    make_wheel.py --out pypto-V-TAG.whl --version V --native _native.so \
        --srcs client/python/pypto/*.py --protos .../pto/v1/*_pb2.py

The wheel holds the `pypto` package (sources and the Bazel-built extension
_native.so) and the generated `pto.v1` protobuf modules, with the metadata pip
needs (PEP 427: WHEEL, METADATA, RECORD with SHA-256 digests). Entries are
sorted and dated 1980-01-01, so the same inputs give the same bytes.
"""

import argparse
import base64
import hashlib
import os
import sys
import zipfile

_DATE = (1980, 1, 1, 0, 0, 0)

_METADATA = """\
Metadata-Version: 2.1
Name: pypto
Version: {version}
Summary: PyPTO's programming model on the PTO tensor kernel compiler (embedded compiler and runtime)
Requires-Python: =={python}.*
Requires-Dist: numpy
Requires-Dist: protobuf

The native extension links the system libraries it was built against (gRPC,
protobuf, Abseil, OpenSSL of the build machine's distribution); install the
wheel on a machine with the same ones (docs/user-guide.md, "Installing").
"""

_WHEEL = """\
Wheel-Version: 1.0
Generator: pto make_wheel.py
Root-Is-Purelib: false
Tag: {tag}
"""


def _digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _add(zf, record, name, data, executable=False):
    info = zipfile.ZipInfo(name, _DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (0o755 if executable else 0o644) << 16
    zf.writestr(info, data)
    record.append(f"{name},{_digest(data)},{len(data)}")


def build(out, version, native, srcs, protos):
    name = os.path.basename(out)
    parts = name[:-len(".whl")].split("-")
    if not name.endswith(".whl") or len(parts) != 5 or parts[:2] != ["pypto", version]:
        raise SystemExit(f"make_wheel: output name {name!r} is not pypto-{version}-PY-ABI-PLATFORM.whl")
    tag = "-".join(parts[2:])
    python = parts[2][2:3] + "." + parts[2][3:]  # cp311 -> 3.11
    files = {}
    for src in srcs:
        rel = src.replace(os.sep, "/")
        at = rel.rfind("client/python/pypto/")
        if at < 0 or not rel.endswith(".py"):
            raise SystemExit(f"make_wheel: {src} is not a module of the pypto package")
        files[rel[at + len("client/python/"):]] = src  # pypto/..., subpackages kept
    files["pypto/_native.so"] = native
    files["pto/__init__.py"] = None
    files["pto/v1/__init__.py"] = None
    for proto in protos:
        files["pto/v1/" + os.path.basename(proto)] = proto
    dist_info = f"pypto-{version}.dist-info"
    record = []
    with zipfile.ZipFile(out + ".tmp", "w") as zf:
        for arcname in sorted(files):
            path = files[arcname]
            data = b"" if path is None else open(path, "rb").read()
            _add(zf, record, arcname, data, executable=arcname.endswith(".so"))
        _add(zf, record, f"{dist_info}/METADATA",
             _METADATA.format(version=version, python=python).encode())
        _add(zf, record, f"{dist_info}/WHEEL", _WHEEL.format(tag=tag).encode())
        _add(zf, record, f"{dist_info}/top_level.txt", b"pto\npypto\n")
        record.append(f"{dist_info}/RECORD,,")
        info = zipfile.ZipInfo(f"{dist_info}/RECORD", _DATE)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        zf.writestr(info, "\n".join(record) + "\n")
    os.replace(out + ".tmp", out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--version", required=True)
    p.add_argument("--native", required=True)
    p.add_argument("--srcs", nargs="+", required=True)
    p.add_argument("--protos", nargs="+", required=True)
    a = p.parse_args(argv)
    build(a.out, a.version, a.native, a.srcs, a.protos)
    return 0


if __name__ == "__main__":
    sys.exit(main())
