"""Build generated host-target C++ as the compiler does, for bench scripts.

    target, isa = host_build.target_flags("host")   # bazel build //bench:host_flags
    so = host_build.build(source_text, workdir, ["-O2"] + isa)

target_flags asks bench/host_flags (the compiler's own ResolveTarget and
runtime::HostTargetFlags) for the concrete target and its ISA flags, so
"host" and PTO_HOST_TARGET resolve here as they do when pypto compiles, and
a script builds what the compiler builds instead of a -march written into
it. build() writes the source beside the host headers and runs the C++
compiler with compiler/targets/host/host_backend.cc's other flags. Plain
Python, no pypto: bench/block_ab.py runs under any python3.
"""

import os
import shutil
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOST_FLAGS = os.path.join(REPO, "bazel-bin/bench/host_flags")
# What generated code includes (the backend writes its embedded copies).
HEADERS = [os.path.join(REPO, "compiler/targets/host/pto_tile.h"),
           os.path.join(REPO, "runtime/kernel_abi.h")]
CXX = os.environ.get("CXX", "g++")
# host_backend.cc's flags besides -O<opt_level> (2 by default) and the ISA's.
BASE_FLAGS = ["-std=c++17", "-fPIC", "-shared", "-fvisibility=hidden", "-ffp-contract=off",
              "-fno-math-errno"]
OPT_LEVEL = "-O2"


def target_flags(target="host", host_flags=HOST_FLAGS):
    """(concrete target, [ISA flags]) as the compiler resolves `target`; raises
    RuntimeError saying what to build, or with the compiler's message."""
    if not os.access(host_flags, os.X_OK):
        raise RuntimeError(f"{host_flags} not built (bazel build //bench:host_flags)")
    run = subprocess.run([host_flags, target], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"target {target!r}: {run.stderr.strip()}")
    words = run.stdout.split()
    return words[0], words[1:]


def build(source, workdir, flags, header=None, libs=()):
    """Builds `source` (C++ text) in `workdir` (made here) with `flags` (-O and
    the ISA's) as the host backend does, with `header` (text) in place of
    pto_tile.h when given; returns the shared object's path."""
    os.makedirs(workdir)
    for h in HEADERS:
        shutil.copy(h, workdir)
    if header is not None:
        with open(os.path.join(workdir, "pto_tile.h"), "w") as f:
            f.write(header)
    src = os.path.join(workdir, "kernel.cc")
    with open(src, "w") as f:
        f.write(source)
    so = os.path.join(workdir, "kernel.so")
    subprocess.run([CXX] + BASE_FLAGS + list(flags) + ["-o", so, src] + list(libs) + ["-lmvec"],
                   check=True, cwd=workdir)
    return so
