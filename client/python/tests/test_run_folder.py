"""SIM runs write PyPTO's run folder (CostModelSimulationOutput/
merged_swimlane.json) when debug_options runtime_debug_mode is 1."""

import json
import os
import re
import socket

import numpy as np
import pytest

import pypto
from pypto import run_folder

ANY = pypto.Tensor[...]
FOLDER = re.compile(r"^output_\d{8}_\d{6}_\d{6}_(\d+)_(.+)$")


@pytest.fixture
def out_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("ASCEND_WORK_PATH", raising=False)
    monkeypatch.setenv("TILE_FWK_OUTPUT_DIR", str(tmp_path / "runs"))
    return tmp_path / "runs"


def kernel(**options):
    @pypto.frontend.jit(**options)
    def k(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(8, 16)  # 4 x 4 tiles of (32, 64)
        out[:] = (a * 2).exp()

    return k


def run(k):
    a = np.linspace(-1, 1, 32 * 64, dtype=np.float32).reshape(32, 64)
    out = np.zeros_like(a)
    k(a, out)
    np.testing.assert_allclose(out, np.exp(a * 2), rtol=1e-5)


def swimlanes(base):
    if not base.exists():
        return []
    return sorted(base.glob("output_*/CostModelSimulationOutput/merged_swimlane.json"))


def check_swimlane(path):
    name = path.parent.parent.name
    m = FOLDER.match(name)
    assert m, name
    assert int(m.group(1)) == os.getpid() and m.group(2) == socket.gethostname()
    trace = json.loads(path.read_text())
    tasks = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert tasks and all(e["dur"] >= 0 and "tid" in e and "ts" in e for e in tasks)
    assert len({e["name"] for e in tasks}) == len(tasks)  # one event per task
    names = [e for e in trace["traceEvents"] if e["ph"] == "M"]
    assert {e["tid"] for e in tasks} <= {e["tid"] for e in names}  # each worker's row named
    return tasks


def test_sim_run_writes_the_swimlane_when_asked(native, out_dir, clean_options):
    k = kernel(runtime_options={"run_mode": pypto.RunMode.SIM},
               debug_options={"runtime_debug_mode": 1})
    run(k)
    (path,) = swimlanes(out_dir)
    tasks = check_swimlane(path)
    # One event per task the run executed.
    (entry,) = k._cache.values()
    a = np.zeros((32, 64), np.float32)
    assert len(tasks) == entry.compiled.kernel.run_profiled([a, np.zeros_like(a)])["tasks"] > 1
    # A second run: another folder, the same count.
    run(k)
    paths = swimlanes(out_dir)
    assert len(paths) == 2
    assert len(check_swimlane(paths[1])) == len(tasks)


def test_global_debug_option_turns_it_on(native, out_dir, clean_options):
    k = kernel()
    run(k)
    run(k)  # fast path on: still no trace
    assert swimlanes(out_dir) == []
    pypto.set_debug_options(runtime_debug_mode=1)
    run(k)
    assert len(swimlanes(out_dir)) == 1
    pypto.set_debug_options(runtime_debug_mode=0)
    run(k)
    assert len(swimlanes(out_dir)) == 1


def test_nothing_written_without_the_switch(native, out_dir, clean_options):
    k = kernel(debug_options={"runtime_debug_mode": 0})
    for _ in range(3):
        run(k)
    assert not out_dir.exists()


def test_base_folder_order(tmp_path, monkeypatch):
    monkeypatch.setenv("TILE_FWK_OUTPUT_DIR", str(tmp_path / "a"))
    monkeypatch.setenv("ASCEND_WORK_PATH", str(tmp_path / "b"))
    assert run_folder.base_dir() == str(tmp_path / "a")
    monkeypatch.delenv("TILE_FWK_OUTPUT_DIR")
    assert run_folder.base_dir() == os.path.join(str(tmp_path / "b"), "pypto")
    monkeypatch.delenv("ASCEND_WORK_PATH")
    monkeypatch.chdir(tmp_path)
    assert run_folder.base_dir() == os.path.join(str(tmp_path), "output")
    assert FOLDER.match(run_folder.folder_name())


def test_unwritable_folder_is_a_clear_error(native, tmp_path, monkeypatch, clean_options):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("TILE_FWK_OUTPUT_DIR", str(blocker))
    k = kernel(debug_options={"runtime_debug_mode": 1})
    with pytest.raises(OSError, match="kernel 'kernel.<locals>.k': cannot write the run "
                                      "folder's swimlane under"):
        run(k)
