"""PyPTO's run folder: where a SIM run writes its swimlane.

A run with debug_options["runtime_debug_mode"] = 1 (the jit function's, or
pypto.set_debug_options(runtime_debug_mode=1)) writes

    <base>/output_<YYYYmmdd_HHMMSS_usec>_<pid>_<hostname>/
        CostModelSimulationOutput/merged_swimlane.json

where <base> is $TILE_FWK_OUTPUT_DIR, else $ASCEND_WORK_PATH/pypto, else
./output, as PyPTO does. merged_swimlane.json is Chrome trace-event JSON
({"traceEvents": [...]}): one complete event per executed task, on the row of
the worker thread that ran it; Perfetto (ui.perfetto.dev) and
chrome://tracing open it. Without that option nothing is written.
"""

import datetime
import os
import socket

SWIMLANE = os.path.join("CostModelSimulationOutput", "merged_swimlane.json")


def base_dir():
    """$TILE_FWK_OUTPUT_DIR, else $ASCEND_WORK_PATH/pypto, else ./output."""
    out = os.environ.get("TILE_FWK_OUTPUT_DIR")
    if out:
        return out
    work = os.environ.get("ASCEND_WORK_PATH")
    if work:
        return os.path.join(work, "pypto")
    return os.path.join(os.getcwd(), "output")


def folder_name(now=None):
    """output_<YYYYmmdd_HHMMSS_usec>_<pid>_<hostname>."""
    now = now or datetime.datetime.now()
    return f"output_{now.strftime('%Y%m%d_%H%M%S')}_{now.microsecond:06d}_" \
           f"{os.getpid()}_{socket.gethostname()}"


def write_swimlane(chrome_trace_json, kernel_name):
    """Writes one run's swimlane into a new run folder; returns the file's path."""
    base = base_dir()
    try:
        while True:  # two runs within one microsecond get two folders
            folder = os.path.join(base, folder_name())
            try:
                os.makedirs(folder)
                break
            except FileExistsError:
                continue
        path = os.path.join(folder, SWIMLANE)
        os.makedirs(os.path.dirname(path))
        with open(path, "w", encoding="utf-8") as f:
            f.write(chrome_trace_json)
    except OSError as e:
        raise OSError(e.errno, f"kernel '{kernel_name}': cannot write the run folder's "
                               f"swimlane under {base} (debug_options runtime_debug_mode=1; "
                               f"TILE_FWK_OUTPUT_DIR sets the folder): {e.strerror}",
                      e.filename) from None
    return path
