"""The Python client's ptod HIT in a fresh process, from the call to a loaded kernel, step by step.

    bazel build //server:ptod //client/python:pypto/_native.so //proto:pto_v1_py
    tools/pypto-python bench/ptod/python_hit.py --ptod=bazel-bin/server/ptod --runs=7

Starts ptod (a separate process, with a signing key) on a free loopback port, compiles the quick
start's kernel once through it (the MISS), then starts --runs fresh Python processes that each make
the first call of that kernel with PYPTO_COMPILE_SERVER set: a HIT. Each child is a script file (so
that the kernel's source is at hand, as a user's is) that defines the kernel, makes its arguments and
calls it. Its clock starts at its first statement (the interpreter's own start is not counted) and
the steps are timed by wrapping the client's functions (pypto.backend's get_kernel, _client, _load,
and the native CompileClient's compile), so the client is measured as it is:

  import pypto        the package and its protos
  import _native      pypto's native extension (the compiler, runtime and C++ ptod client)
  client made in the background
                      backend.prepare's thread, started by the kernel's definition: the native
                      CompileClient made (gRPC's start-up, its threads, the channels) and its
                      connection started; "ready, after the call began" is how much of it was left
                      when the call began (what the call may have had to wait for)
  graph build         from the call to pypto.backend.get_kernel: signature, source rewrite, trace,
                      graph checks
  client              on the call's path: the client looked up, or waited for, or made
  request build       get_kernel to the RPC: the target resolved, the graph serialized
  RPC                 CompileClient.compile: the replica chosen, the channel connected (unless the
                      background connection is up), the request sent, ptod's hit (the server
                      computes the key), the response parsed and the served binary's key checked
                      against the request's
  key check           back in Python: the result unpacked, bookkeeping
  load                _native.Kernel(binary): payload SHA-256, signature check (with
                      PTO_KERNEL_VERIFY_KEY_FILE), shared object written and dlopen'ed
  CPU                 the process's CPU time (every thread: gRPC's too) from the call, and from
                      the definition, to the end of the call's run
and the same load without a verification key in a second set of children, whose difference is the
signature check. The kernel's first run after the load is not counted in the wall-clock steps.
Medians over the runs. The server needs no tokens; the client retries nothing (a HIT answers at
once).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = r'''
import time
t0 = time.perf_counter()
import json, os, sys
marks = {}
import pypto
marks["import pypto"] = time.perf_counter()
from pypto import _native
marks["import _native"] = time.perf_counter()
import numpy as np
from pypto import backend

import threading
spans = {}  # label -> [(start, end)] on the calling thread; label + " (background)" on another

def record(label, start):
    if threading.current_thread() is not threading.main_thread():
        label += " (background)"
    spans.setdefault(label, []).append((start, time.perf_counter()))

def wrap(owner, name, label):
    inner = getattr(owner, name, None)
    if inner is None:
        return
    def wrapped(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            record(label, start)
    setattr(owner, name, wrapped)


class TimedClient:
    """The native CompileClient with its compile() timed."""

    def __init__(self, client):
        self._client = client

    def compile(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return self._client.compile(*args, **kwargs)
        finally:
            record("call", start)

    def __getattr__(self, name):
        return getattr(self._client, name)


wrap(backend, "get_kernel", "get_kernel")
wrap(backend, "_client", "client")
wrap(backend, "_load", "load")
made_client = backend._client
backend._client = lambda server: TimedClient(made_client(server))

@pypto.jit
def kernel(a: pypto.Tensor([], pypto.DT_FP32),
           b: pypto.Tensor([], pypto.DT_FP32),
           out: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(64, 128)
    out[:] = (a + b).exp() * 2 - a

marks["defined"] = time.perf_counter()
cpu = {"defined": time.process_time()}
a = np.random.rand(256, 1000).astype(np.float32)
b = np.random.rand(256, 1000).astype(np.float32)
out = np.empty_like(a)
marks["setup"] = time.perf_counter()
cpu["setup"] = time.process_time()
kernel(a, b, out)
marks["first call done"] = time.perf_counter()
cpu["first call done"] = time.process_time()
np.testing.assert_allclose(out, np.exp(a + b) * 2 - a, rtol=1e-5, atol=1e-5)
print(json.dumps({"t0": t0, "marks": marks, "spans": spans, "cpu": cpu,
                  "source": kernel.last_compile.source}))
'''


def start_ptod(path, cache_dir, key_file):
    proc = subprocess.Popen(
        [path, "--address=127.0.0.1:0", "--metrics_address=", f"--cache_dir={cache_dir}",
         f"--signing_key_file={key_file}", "--log_level=warn"],
        stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.search(r"listening on (\S+)", line)
        if m:
            return proc, m.group(1)
    proc.kill()
    raise SystemExit(f"python_hit: {path} did not start")


def run_child(env, script):
    done = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True,
                          timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"python_hit: the child failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def steps(result):
    """Step name -> seconds, from one child's marks and spans."""
    m, s, t0 = result["marks"], result["spans"], result["t0"]
    first = lambda label: s[label][0] if label in s else None  # noqa: E731
    get_kernel, call, load = first("get_kernel"), first("call"), first("load")
    client, background = first("client"), first("client (background)")
    out = {"import pypto": m["import pypto"] - t0,
           "import pypto._native": m["import _native"] - m["import pypto"]}
    if get_kernel is None or call is None or load is None:
        raise SystemExit("python_hit: pypto.backend no longer has the functions this bench wraps "
                         f"(seen: {sorted(s)}); update bench/ptod/python_hit.py")
    out["client made in the background (from the definition; not on the call's path)"] = (
        background[1] - background[0] if background else 0.0)
    out["background client ready, after the call began"] = (
        max(0.0, background[1] - m["setup"]) if background else 0.0)
    out["graph build"] = get_kernel[0] - m["setup"]
    out["client"] = client[1] - client[0] if client else 0.0
    out["request build"] = call[0] - get_kernel[0] - out["client"]
    out["RPC (connect, hit, key check)"] = call[1] - call[0]
    out["key check"] = load[0] - call[1]
    out["load (verify + dlopen)"] = load[1] - load[0]
    out["to loaded kernel"] = get_kernel[1] - t0
    out["call to loaded kernel (imports excluded)"] = get_kernel[1] - m["setup"]
    c = result["cpu"]
    out["CPU, all threads: the call to the end of its run"] = c["first call done"] - c["setup"]
    out["CPU, all threads: the definition to the end of the call's run"] = (
        c["first call done"] - c["defined"])
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ptod", default="bazel-bin/server/ptod")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="python_hit_") as tmp:
        key_file = os.path.join(tmp, "signing.key")
        with open(key_file, "w") as f:
            f.write("python-hit-bench-signing-key-0123456789")
        os.chmod(key_file, 0o600)
        script = os.path.join(tmp, "child.py")  # a file: the kernel's source is at hand
        with open(script, "w") as f:
            f.write(CHILD)
        proc, address = start_ptod(args.ptod, os.path.join(tmp, "cache"), key_file)
        try:
            env = dict(os.environ, PYPTO_COMPILE_SERVER=address, PYPTO_CACHE_DIR=os.path.join(tmp, "pc"))
            env.pop("PTO_KERNEL_VERIFY_KEY_FILE", None)
            warm = run_child(env, script)
            verify_env = dict(env, PTO_KERNEL_VERIFY_KEY_FILE=key_file)
            runs = {"with": [], "without": []}
            for _ in range(max(1, args.runs)):
                for name, e in (("with", verify_env), ("without", env)):
                    r = run_child(e, script)
                    if r["source"] != "ptod HIT":
                        raise SystemExit(f"python_hit: expected a ptod HIT, got {r['source']}")
                    runs[name].append(steps(r))
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    print(f"## The Python client's ptod HIT in a fresh process ({args.runs} runs, medians)\n")
    print(f"The warm-up call was a `{warm['source']}`; every measured call a `ptod HIT` "
          "(ptod signs, the child verifies with PTO_KERNEL_VERIFY_KEY_FILE).\n")
    print("| step | with signature check | without |\n|---|---|---|")
    for step in runs["with"][0]:
        med = lambda name: statistics.median(r[step] for r in runs[name])  # noqa: E731
        print(f"| {step} | {med('with') * 1e3:.2f} ms | {med('without') * 1e3:.2f} ms |")
    total = statistics.median(r["call to loaded kernel (imports excluded)"] for r in runs["with"])
    print(f"\nTarget: the call to a loaded kernel, imports excluded, < 10 ms: "
          f"{total * 1e3:.2f} ms, {'met' if total < 0.010 else '**not met**'}.")


if __name__ == "__main__":
    main()
